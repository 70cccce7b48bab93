"""Sentences longer than the transformer's positions parse, end to end (the transformer
embedder encodes them in overlapping windows); a failure on one names the sentence."""
import pytest
from allennlp.common import Params
from allennlp.data import DatasetReader, Vocabulary
from allennlp.models import Model
from allennlp.modules.token_embedders import PretrainedTransformerEmbedder
from nltk import Tree

from lal_allennlp.modules.transformer_embedder import TransformerWordEmbedder
from lal_allennlp.predictors import ParserPredictor
from lal_allennlp.syntax.trees import parse_trees
from tests.conftest import FIXTURES_ROOT, minilm_dir, minilm_parser_params

# A label attention stack as in the CPU LAL config (learned positions, max_len 512), small.
LAL_ENCODER = {
    "type": "lal_stack",
    "input_dim": 384,
    "self_attention": {"d_model": 16, "num_layers": 1, "num_heads": 2, "d_kv": 8, "d_ff": 16},
    "label_attention": {"num_heads": 4, "d_kv": 8, "d_proj": 4, "d_ff": 16},
}


def make_predictor(**overrides) -> ParserPredictor:
    reader = DatasetReader.from_params(Params({
        "type": "lal_ptb",
        "token_indexers": {
            "tokens": {"type": "pretrained_transformer_mismatched", "model_name": minilm_dir()}
        },
    }))
    vocab = Vocabulary.from_instances(reader.read(str(FIXTURES_ROOT / "ptb" / "train")))
    model = Model.from_params(vocab=vocab, params=Params(minilm_parser_params(**overrides)))
    model.eval()
    return ParserPredictor(model, reader)


@pytest.fixture(scope="module")
def predictor() -> ParserPredictor:
    return make_predictor()


@pytest.fixture(scope="module")
def long_words():
    """About 640 words of treebank text (the fixture sentences, repeated): more than 512 word
    pieces."""
    words = []
    for path in sorted((FIXTURES_ROOT / "ptb" / "train").glob("*.mrg")):
        text = path.read_text(encoding="utf-8")
        for tree, _ in parse_trees(text, source=str(path)):
            words += [w for w, tag in tree.pos() if tag != "-NONE-"]
    while len(words) < 640:
        words += words
    return words[:640]


def word_pieces(predictor: ParserPredictor, words) -> int:
    instance = predictor._dataset_reader.text_to_instance(words)
    instance.index_fields(predictor._model.vocab)
    return len(instance["tokens"].as_tensor(instance["tokens"].get_padding_lengths())
               ["tokens"]["token_ids"])


def tree_leaves(output) -> list:
    return Tree.fromstring(output["tree"]).leaves()


def test_a_sentence_longer_than_the_transformer_parses(predictor, long_words):
    assert word_pieces(predictor, long_words) > 600  # beyond MiniLM's 512 positions
    output = predictor.predict_json({"tokens": long_words})
    assert output["words"] == long_words
    assert tree_leaves(output) == long_words
    assert len(output["pos_tags"]) == len(long_words)


def test_a_short_sentence_parses_the_same_beside_a_long_one(predictor, long_words):
    short = ["Prices", "fell", "sharply", "in", "heavy", "trading", "."]
    alone = predictor.predict_json({"tokens": short})
    both = predictor.predict_batch_json([{"tokens": short}, {"tokens": long_words}])
    assert both[0]["tree"] == alone["tree"]
    assert tree_leaves(both[1]) == long_words


def test_the_label_attention_parser_parses_past_its_learned_positions(long_words):
    # 640 words + START and STOP: more than the encoder's 512 position embeddings too.
    lal = make_predictor(encoder=LAL_ENCODER)
    assert lal._model.encoder.self_attention.max_len == 512
    output = lal.predict_json({"tokens": long_words})
    assert tree_leaves(output) == long_words


def test_sentences_within_the_limit_parse(predictor):
    words = ["the", "company", "said", "profits", "rose", "."] * 85  # 510 words, 512 pieces
    assert word_pieces(predictor, words) == 512
    assert tree_leaves(predictor.predict_json({"tokens": words})) == words


def test_a_failure_on_an_over_long_sentence_names_it(predictor, long_words, monkeypatch):
    def out_of_memory(*args, **kwargs):
        raise RuntimeError("not enough memory: you tried to allocate 1 TB")

    # The transformer fails on whatever it is given (as on a sentence too long for memory): its
    # windows, and a short sentence alone (no padding, nothing packed), go to AllenNLP's forward.
    monkeypatch.setattr(PretrainedTransformerEmbedder, "forward", out_of_memory)
    embedder = predictor._model.text_field_embedder._token_embedders["tokens"]
    assert isinstance(embedder, TransformerWordEmbedder)
    with pytest.raises(ValueError) as error:
        predictor.predict_json({"tokens": long_words})
    message = str(error.value)
    assert ("sentence 1 of the batch (640 words, starting 'Maria Lopez , 52 years old') has "
            f"{word_pieces(predictor, long_words):,} word pieces, more than the transformer's 512 "
            "positions, so it was encoded in overlapping windows of 512 word pieces") in message
    assert "not enough memory" in message
    assert "Split the sentence" in message
    # Within the limit the transformer's own error comes through unchanged.
    with pytest.raises(RuntimeError, match="not enough memory"):
        predictor.predict_json({"tokens": ["Prices", "fell", "."]})
