"""
Evaluation data with a POS tag, constituent label or dependency label the training data never
had: evaluation runs, an unseen gold label counts as an error, an unseen input tag is the
unknown tag.

Each parser is trained until it reproduces two hand-made sentences exactly; its inputs are the
words only, so on the evaluation copies of those sentences (same words, one label changed to an
unseen one) it predicts the training trees, and every metric below is counted by hand.
"""
import copy
from pathlib import Path
from typing import Callable, Dict, List

import pytest
import torch
from allennlp.common import Params
from allennlp.data import Batch, DatasetReader, Instance, Vocabulary
from allennlp.models import Model

from lal_allennlp.dataset_readers.fields import UNSEEN_LABEL

TRAIN_TREES = """\
(TOP (S (NP (DT The) (NN dog)) (VP (VBD barked)) (. .)))
(TOP (S (NP (PRP She)) (VP (VBD saw) (NP (DT a) (NN cat))) (. .)))
"""
# The first tree's NP is an unseen XP, the second's VBD an unseen ZZ.
EVAL_TREES = """\
(TOP (S (XP (DT The) (NN dog)) (VP (VBD barked)) (. .)))
(TOP (S (NP (PRP She)) (VP (ZZ saw) (NP (DT a) (NN cat))) (. .)))
"""


def _conllu(rows: List[List[tuple]]) -> str:
    """CoNLL-U sentences from rows `(word, upos, xpos, head, label)`."""
    sentences = []
    for sentence in rows:
        lines = [
            f"{i}\t{word}\t_\t{upos}\t{xpos}\t_\t{head}\t{label}\t_\t_"
            for i, (word, upos, xpos, head, label) in enumerate(sentence, 1)
        ]
        sentences.append("\n".join(lines) + "\n")
    return "\n".join(sentences) + "\n"


DOG = [
    ("The", "DET", "DT", 2, "det"),
    ("dog", "NOUN", "NN", 3, "nsubj"),
    ("barked", "VERB", "VBD", 0, "root"),
    (".", "PUNCT", ".", 3, "punct"),
]
CAT = [
    ("She", "PRON", "PRP", 2, "nsubj"),
    ("saw", "VERB", "VBD", 0, "root"),
    ("a", "DET", "DT", 4, "det"),
    ("cat", "NOUN", "NN", 2, "obj"),
    (".", "PUNCT", ".", 2, "punct"),
]
TRAIN_DEPENDENCIES = _conllu([DOG, CAT])
# "dog" gets an unseen UPOS (an input), "cat" an unseen dependency label (gold only).
EVAL_DEPENDENCIES = _conllu(
    [
        [row if row[0] != "dog" else ("dog", "XYZ", "XYZ", 3, "nsubj") for row in DOG],
        [row if row[0] != "cat" else ("cat", "NOUN", "NN", 2, "zobj") for row in CAT],
    ]
)

LSTM_ENCODER = {"type": "lstm", "input_size": 16, "hidden_size": 16, "bidirectional": True}
WORDS_ONLY = {"token_embedders": {"tokens": {"type": "embedding", "embedding_dim": 16}}}


def _write(directory: Path, name: str, text: str) -> str:
    path = directory / name
    path.write_text(text)
    return str(path)


def _tensors(instances: List[Instance], vocab: Vocabulary) -> Dict:
    batch = Batch(instances)
    batch.index_instances(vocab)
    return batch.as_tensor_dict()


def _evaluate(model: Model, tensors: Dict) -> Dict[str, float]:
    model.eval()
    model.get_metrics(reset=True)
    with torch.no_grad():
        output = model(**tensors)
    if "loss" in output:
        assert torch.isfinite(output["loss"]), output["loss"]
    return model.get_metrics(reset=True)


def _overfit(model: Model, tensors: Dict, fitted: Callable[[Dict[str, float]], bool]) -> None:
    """Trains `model` on `tensors` until `fitted(metrics)` holds on them (or fails)."""
    optimizer = torch.optim.Adam(model.parameters(), lr=0.02)
    for step in range(400):
        model.train()
        optimizer.zero_grad()
        model(**tensors)["loss"].backward()
        optimizer.step()
        if step % 20 == 19 and fitted(_evaluate(model, tensors)):
            return
    pytest.fail(f"the model did not fit the training sentences: {_evaluate(model, tensors)}")


def _model(vocab: Vocabulary, params: Dict) -> Model:
    torch.manual_seed(0)
    return Model.from_params(vocab=vocab, params=Params(copy.deepcopy(params)))


def test_span_parser_scores_an_unseen_label_and_tag_as_errors(tmp_path):
    reader = DatasetReader.from_params(Params({"type": "lal_ptb"}))
    train = list(reader.read(_write(tmp_path, "train.mrg", TRAIN_TREES)))
    vocab = Vocabulary.from_instances(train)
    assert "XP" not in vocab.get_token_to_index_vocabulary("span_labels")
    model = _model(vocab, {
        "type": "lal_span_parser", "text_field_embedder": WORDS_ONLY, "encoder": LSTM_ENCODER,
        "span_hidden_dim": 32, "dropout": 0.0,
    })
    _overfit(model, _tensors(train, vocab),
             lambda m: m["evalb_f1"] == 1.0 and m["pos_accuracy"] == 1.0)

    evaluation = list(reader.read(_write(tmp_path, "eval.mrg", EVAL_TREES)))
    tensors = _tensors(evaluation, vocab)
    # The unseen label and tag are indexed UNSEEN_LABEL, not the id of a real label.
    labels = vocab.get_index_to_token_vocabulary("span_labels")
    # (The first sentence's 3 spans; a fourth column pads it to the second's 4.)
    assert [labels.get(i) for i in tensors["gold_span_labels"][0, :3].tolist()] == [
        "S", None, "VP"
    ]
    assert tensors["gold_span_labels"][0, 1] == UNSEEN_LABEL
    assert tensors["pos_tags"][1, 1] == UNSEEN_LABEL
    metrics = _evaluate(model, tensors)
    # Gold brackets (EVALB leaves out TOP and the final "."): S, XP, VP; S, NP, VP, NP.
    # The parser predicts NP for XP: 6 of its 7 brackets match 6 of the 7 gold ones.
    assert metrics["evalb_recall"] == pytest.approx(6 / 7)
    assert metrics["evalb_precision"] == pytest.approx(6 / 7)
    assert metrics["evalb_f1"] == pytest.approx(6 / 7)
    assert metrics["evalb_complete_match"] == pytest.approx(1 / 2)
    # Tags: all 9 words count, "saw" (gold ZZ, predicted VBD) is wrong; EVALB leaves out "."
    # (7 words).
    assert metrics["pos_accuracy"] == pytest.approx(8 / 9)
    assert metrics["evalb_tagging_accuracy"] == pytest.approx(6 / 7)


@pytest.mark.parametrize("span_loss", ["hinge", "crf"])
def test_span_loss_of_an_unseen_bracket_is_that_of_the_tree_without_it(tmp_path, span_loss):
    # The gold tree with the unseen XP and the same tree without that bracket give the same
    # loss (same words and tags), through one untrained model.
    reader = DatasetReader.from_params(Params({"type": "lal_ptb"}))
    vocab = Vocabulary.from_instances(reader.read(_write(tmp_path, "train.mrg", TRAIN_TREES)))
    model = _model(vocab, {
        "type": "lal_span_parser", "text_field_embedder": WORDS_ONLY, "encoder": LSTM_ENCODER,
        "span_hidden_dim": 32, "dropout": 0.0, "span_loss": span_loss,
    }).eval()
    with_xp = EVAL_TREES.splitlines()[0]
    without = "(TOP (S (DT The) (NN dog) (VP (VBD barked)) (. .)))"
    losses = []
    for name, tree in (("xp.mrg", with_xp), ("flat.mrg", without)):
        instances = list(reader.read(_write(tmp_path, name, tree)))
        with torch.no_grad():
            losses.append(model(**_tensors(instances, vocab))["loss"].item())
    assert losses[0] == pytest.approx(losses[1])
    assert losses[0] > 0


def test_joint_parser_scores_unseen_labels_as_errors(tmp_path):
    train_reader = DatasetReader.from_params(Params({
        "type": "lal_ptb",
        "dependencies_path": _write(tmp_path, "train.conllu", TRAIN_DEPENDENCIES),
    }))
    train = list(train_reader.read(_write(tmp_path, "train.mrg", TRAIN_TREES)))
    vocab = Vocabulary.from_instances(train)
    model = _model(vocab, {
        "type": "lal_joint_parser", "text_field_embedder": WORDS_ONLY, "encoder": LSTM_ENCODER,
        "span_hidden_dim": 32, "arc_dim": 16, "dependency_label_dim": 16, "dropout": 0.0,
    })
    _overfit(model, _tensors(train, vocab),
             lambda m: m["evalb_f1"] == 1.0 and m["LAS"] == 1.0 and m["pos_accuracy"] == 1.0)

    eval_reader = DatasetReader.from_params(Params({
        "type": "lal_ptb",
        "dependencies_path": _write(tmp_path, "eval.conllu", EVAL_DEPENDENCIES),
    }))
    evaluation = list(eval_reader.read(_write(tmp_path, "eval.mrg", EVAL_TREES)))
    tensors = _tensors(evaluation, vocab)
    assert tensors["gold_dependency_labels"][1, 3] == UNSEEN_LABEL
    metrics = _evaluate(model, tensors)
    assert metrics["evalb_recall"] == pytest.approx(6 / 7)
    assert metrics["evalb_precision"] == pytest.approx(6 / 7)
    assert metrics["pos_accuracy"] == pytest.approx(8 / 9)
    # The 7 words that are not "." (the unseen ZZ is not a punctuation tag): every head is
    # right; the label of "cat" (gold zobj) is wrong.
    assert metrics["UAS"] == pytest.approx(1.0)
    assert metrics["LAS"] == pytest.approx(6 / 7)


def _dependency_data(tmp_path: Path, reader_params: Dict):
    reader = DatasetReader.from_params(Params(dict(reader_params)))
    train = list(reader.read(_write(tmp_path, "train.conllu", TRAIN_DEPENDENCIES)))
    vocab = Vocabulary.from_instances(train)
    eval_reader = DatasetReader.from_params(Params(dict(reader_params, transitions=False)))
    evaluation = list(eval_reader.read(_write(tmp_path, "eval.conllu", EVAL_DEPENDENCIES)))
    return train, evaluation, vocab


def _check_dependency_tensors(tensors: Dict, vocab: Vocabulary) -> None:
    # The unseen UPOS of "dog" is an input: the unknown tag. The unseen label of "cat" is gold
    # only: UNSEEN_LABEL.
    assert tensors["pos_tags"][0, 1] == vocab.get_token_index("@@UNKNOWN@@", "pos")
    assert tensors["head_tags"][1, 3] == UNSEEN_LABEL


STACK_ATTENTION = {
    "type": "stack_attention_parser", "text_field_embedder": WORDS_ONLY,
    "encoder": LSTM_ENCODER, "decoder_hidden_dim": 16, "decoder_layers": 1,
    "transition_embedding_dim": 8, "attention_dim": 16, "attention_layers": 1, "dropout": 0.0,
    "beam_size": 1, "punctuation_tags": ["PUNCT"],
}


def test_stack_attention_parser_scores_an_unseen_label_as_an_error(tmp_path):
    reader_params = {"type": "lal_dependencies", "coarse_tags": True}
    train, evaluation, vocab = _dependency_data(tmp_path, reader_params)
    model = _model(vocab, STACK_ATTENTION)
    _overfit(model, _tensors(train, vocab), lambda m: m["LAS"] == 1.0)
    tensors = _tensors(evaluation, vocab)
    _check_dependency_tensors(tensors, vocab)
    metrics = _evaluate(model, tensors)
    # 7 words that are not PUNCT ("dog", tagged XYZ, among them): all heads right, the label
    # of "cat" wrong.
    assert metrics["UAS"] == pytest.approx(1.0)
    assert metrics["LAS"] == pytest.approx(6 / 7)


def test_stack_attention_parser_with_pos_input_reads_an_unseen_tag_as_unknown(tmp_path):
    # With POS embeddings the unknown tag changes the input, so the trees are not known in
    # advance; what is: evaluation runs and counts the 7 words that are not PUNCT.
    reader_params = {"type": "lal_dependencies", "coarse_tags": True}
    _, evaluation, vocab = _dependency_data(tmp_path, reader_params)
    model = _model(vocab, dict(
        STACK_ATTENTION,
        pos_tag_embedding={"embedding_dim": 8, "vocab_namespace": "pos"},
        encoder=dict(LSTM_ENCODER, input_size=24),
    ))
    tensors = _tensors(evaluation, vocab)
    _check_dependency_tensors(tensors, vocab)
    model.eval()
    with torch.no_grad():
        model(**tensors)
    assert model.attachment_scores._total_words == 7


def test_biaffine_parser_scores_an_unseen_label_as_an_error(tmp_path):
    # allennlp-models' biaffine_parser on our reader (training_config/biaffine_ewt_cpu.jsonnet).
    reader_params = {"type": "lal_dependencies", "coarse_tags": True, "transitions": False}
    train, evaluation, vocab = _dependency_data(tmp_path, reader_params)
    model = _model(vocab, {
        "type": "allennlp_models.structured_prediction.models.biaffine_dependency_parser."
                "BiaffineDependencyParser",
        "text_field_embedder": WORDS_ONLY, "encoder": LSTM_ENCODER,
        "arc_representation_dim": 16, "tag_representation_dim": 16, "dropout": 0.0,
        "input_dropout": 0.0,
    })
    _overfit(model, _tensors(train, vocab), lambda m: m["LAS"] == 1.0)
    tensors = _tensors(evaluation, vocab)
    _check_dependency_tensors(tensors, vocab)
    metrics = _evaluate(model, tensors)
    assert metrics["UAS"] == pytest.approx(1.0)
    assert metrics["LAS"] == pytest.approx(6 / 7)
