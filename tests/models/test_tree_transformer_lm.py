import json

import pytest
import torch
from allennlp.commands.train import train_model_from_file
from allennlp.data import Batch
from allennlp.models.archival import load_archive
from allennlp.predictors import Predictor

from lal_allennlp.commands.parse import main as lal_parse
from lal_allennlp.models.tree_transformer_lm import choose_masked_tokens
from lal_allennlp.syntax.unsupervised import induce_spans, unlabelled_spans
from nltk import Tree
from tests.conftest import FIXTURES_ROOT

CONFIG = FIXTURES_ROOT / "tree_transformer" / "experiment.jsonnet"


def test_words_are_masked_at_the_stated_rates():
    generator = torch.Generator().manual_seed(0)
    mask = torch.ones(400, 500, dtype=torch.bool)
    mask[:, 450:] = False  # padding
    chosen = choose_masked_tokens(mask, vocab_size=1000, probability=1 / 7, generator=generator)
    words = mask.sum().item()
    selected = chosen.selected.sum().item()
    # 180,000 words: the observed rates are within about 4 standard deviations of the stated.
    assert selected / words == pytest.approx(1 / 7, abs=0.004)
    assert chosen.to_mask.sum().item() / selected == pytest.approx(0.8, abs=0.01)
    assert chosen.to_random.sum().item() / selected == pytest.approx(0.1, abs=0.01)
    assert not (chosen.selected & ~mask).any()
    assert not (chosen.to_mask & chosen.to_random).any()
    assert ((chosen.to_mask | chosen.to_random) <= chosen.selected).all()
    # Random words are real words: never padding (0) or unknown (1).
    assert chosen.random_ids.min().item() >= 2 and chosen.random_ids.max().item() < 1000


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    serialization_dir = tmp_path_factory.mktemp("tree_transformer_lm")
    torch.manual_seed(0)
    model = train_model_from_file(str(CONFIG), str(serialization_dir))
    return model, serialization_dir


def test_a_small_model_trains(trained):
    _, serialization_dir = trained
    metrics = json.loads((serialization_dir / "metrics.json").read_text())
    first = json.loads((serialization_dir / "metrics_epoch_0.json").read_text())
    assert metrics["training_perplexity"] < first["training_perplexity"]
    # Every dev sentence has a gold tree, so the induced trees were scored.
    for key in ("validation_sentence_f1", "validation_corpus_f1"):
        assert 0.0 <= metrics[key] <= 1.0


def test_save_load_round_trip_gives_the_same_links_and_trees(trained):
    model, serialization_dir = trained
    loaded = load_archive(str(serialization_dir / "model.tar.gz")).model.eval()
    model.eval()
    reader_predictor = Predictor.from_archive(load_archive(str(serialization_dir / "model.tar.gz")))
    instances = [
        reader_predictor._json_to_instance({"sentence": text})
        for text in ("The cat sat on the mat .", "Stocks fell sharply in early trading .")
    ]
    before = model.forward_on_instances(instances)
    after = loaded.forward_on_instances(instances)
    for old, new in zip(before, after):
        assert old["trees"] == new["trees"]
        assert torch.allclose(torch.tensor(old["link_probabilities"]),
                              torch.tensor(new["link_probabilities"]), atol=1e-6)


def test_trees_follow_the_links_and_batches_equal_single_sentences(trained):
    model, serialization_dir = trained
    model.eval()
    predictor = Predictor.from_archive(load_archive(str(serialization_dir / "model.tar.gz")))
    requests = [
        {"tokens": "The company said it expects profits to rise next year .".split()},
        {"tokens": ["Yes", "."]},
        {"sentence": "Mr. Smith ( the chairman ) declined to comment ."},
    ]
    together = predictor.predict_batch_json([dict(r, explain=True) for r in requests])
    for request, result in zip(requests, together):
        alone = predictor.predict_json(dict(request, explain=True))
        assert alone["tree"] == result["tree"]
        assert torch.allclose(torch.tensor(alone["link_probabilities"]),
                              torch.tensor(result["link_probabilities"]), atol=1e-5)
        # Punctuation is gone from the words; the tree covers them, and is the one the
        # authors' procedure reads from the links.
        assert not any(word in {".", "-LRB-", "-RRB-"} for word in result["words"])
        tree = Tree.fromstring(result["tree"])
        assert tree.leaves() == result["words"]
        spans = induce_spans(result["link_probabilities"])
        assert unlabelled_spans(tree) == spans
        assert sorted(map(tuple, result["spans"])) == sorted(spans)
    assert together[2]["words"] == "Mr. Smith the chairman declined to comment".split()
    assert set(together[0]) == {"tree", "words", "spans", "link_probabilities"}
    assert set(predictor.predict_json(requests[0])) == {"tree", "words", "spans"}


def test_lal_parse_writes_one_unlabelled_tree_per_line(trained, tmp_path, capsys):
    _, serialization_dir = trained
    source = tmp_path / "input.txt"
    source.write_text("The cat sat on the mat .\n\n, .\nDogs bark .\n", encoding="utf-8")
    output = tmp_path / "trees.txt"
    status = lal_parse(
        [str(serialization_dir / "model.tar.gz"), str(source), "-o", str(output),
         "--no-progress"]
    )
    lines = output.read_text(encoding="utf-8").split("\n")[:-1]
    assert status == 1  # line 3 could not be parsed (an empty line is not a failure)
    assert len(lines) == 4
    assert Tree.fromstring(lines[0]).leaves() == ["The", "cat", "sat", "on", "the", "mat"]
    assert lines[1] == "" and lines[2] == ""  # empty line, punctuation only: no tree
    assert Tree.fromstring(lines[3]).leaves() == ["Dogs", "bark"]
    errors = capsys.readouterr().err
    assert "line 2" in errors and "line 3" in errors


PLAIN_ENCODERS = {
    "PytorchTransformer": {
        "type": "pytorch_transformer", "input_dim": 16, "num_layers": 2,
        "feedforward_hidden_dim": 32, "num_attention_heads": 2,
        "positional_encoding": "sinusoidal",
    },
    "TreeTransformerEncoder": {
        "type": "tree_transformer", "input_dim": 16, "d_model": 16, "num_layers": 2,
        "num_heads": 2, "d_ff": 32, "constituent_prior": False,
    },
}


@pytest.mark.parametrize("encoder", sorted(PLAIN_ENCODERS))
def test_the_lm_over_a_plain_transformer_trains_saves_loads_and_parses_nothing(tmp_path, encoder):
    """The perplexity baselines of the Tree Transformer: the same masked language model over
    AllenNLP's `pytorch_transformer`, or over the Tree Transformer without its prior (no
    links, so no trees)."""
    from allennlp.common.checks import ConfigurationError

    from lal_allennlp import Parser

    plain = {"model.encoder": PLAIN_ENCODERS[encoder]}
    torch.manual_seed(0)
    model = train_model_from_file(str(CONFIG), str(tmp_path), overrides=json.dumps(plain))
    metrics = json.loads((tmp_path / "metrics.json").read_text())
    first = json.loads((tmp_path / "metrics_epoch_0.json").read_text())
    assert metrics["training_perplexity"] < first["training_perplexity"]
    assert "validation_perplexity" in metrics and "validation_sentence_f1" not in metrics
    assert not model.capabilities.trees and not model.capabilities.explanations

    # Saved and loaded, the same masked-LM loss on the same (fixed-seed) masks.
    loaded = load_archive(str(tmp_path / "model.tar.gz")).model.eval()
    model.eval()
    predictor = Predictor.from_archive(load_archive(str(tmp_path / "model.tar.gz")))
    instances = [predictor._json_to_instance({"sentence": "The cat sat on the mat ."})]
    batch = Batch(instances)
    batch.index_instances(model.vocab)
    with torch.no_grad():
        before = model(**batch.as_tensor_dict())["loss"]
        after = loaded(**batch.as_tensor_dict())["loss"]
    assert torch.equal(before, after) and before > 0

    parser = Parser.load(str(tmp_path / "model.tar.gz"))
    assert not parser.capabilities.trees
    with pytest.raises(ConfigurationError, match=f"{encoder} encoder: a masked language"):
        parser.parse("The cat sat on the mat .")


def minilm_sized(initial_weights=None, layers=2) -> dict:
    overrides = {
        "model.text_field_embedder.token_embedders.tokens.embedding_dim": 384,
        "model.encoder": {
            "type": "tree_transformer", "input_dim": 384, "d_model": 384, "num_layers": layers,
            "num_heads": 12, "d_ff": 1536,
        },
    }
    if initial_weights is not None:
        overrides["model.initial_weights"] = initial_weights
    return overrides


def build(overrides: dict):
    from allennlp.common import Params
    from allennlp.data import DatasetReader, Vocabulary
    from allennlp.models import Model

    params = Params.from_file(str(CONFIG), json.dumps(overrides))
    reader = DatasetReader.from_params(params.pop("dataset_reader"))
    vocab = Vocabulary.from_instances(reader.read(str(FIXTURES_ROOT / "ptb" / "train")))
    return Model.from_params(vocab=vocab, params=params.pop("model")), vocab


def test_the_lm_starts_from_a_pretrained_model_s_weights():
    """Slide 15's experiment: words start as their first word piece's embedding, [MASK] as
    BERT's, and every layer's attention, feed-forward and norms as the pretrained layer's."""
    from transformers import AutoModel, AutoTokenizer

    from tests.conftest import minilm_dir

    torch.manual_seed(0)
    model, vocab = build(minilm_sized(minilm_dir()))
    bert = AutoModel.from_pretrained(minilm_dir())
    tokenizer = AutoTokenizer.from_pretrained(minilm_dir())
    table = bert.get_input_embeddings().weight
    ours = model.text_field_embedder._token_embedders["tokens"].weight
    for word in ("the", "market", "investors"):
        index = vocab.get_token_index(word, "tokens")
        assert index > 1, word
        first_piece = tokenizer(word, add_special_tokens=False).input_ids[0]
        assert torch.equal(ours[index], table[first_piece])
    assert torch.equal(ours[1], table[tokenizer.unk_token_id])
    assert torch.equal(model.mask_embedding, table[tokenizer.mask_token_id])
    for ours_layer, bert_layer in zip(model.encoder.layers, bert.encoder.layer):
        attention = bert_layer.attention.self
        assert torch.equal(ours_layer.attention.qkv.weight[:384], attention.query.weight)
        assert torch.equal(ours_layer.attention.qkv.weight[768:], attention.value.weight)
        assert torch.equal(ours_layer.attention.qkv.bias[384:768], attention.key.bias)
        assert torch.equal(ours_layer.feed_forward[3].weight, bert_layer.output.dense.weight)
        assert torch.equal(ours_layer.attention_norm.weight, bert_layer.attention.output.LayerNorm.weight)
    # The link scorers have no pretrained counterpart: the same as a model from scratch.
    torch.manual_seed(0)
    scratch, _ = build(minilm_sized())
    assert torch.equal(
        scratch.encoder.layers[1].constituents.query.weight,
        model.encoder.layers[1].constituents.query.weight,
    )
    assert not torch.equal(scratch.encoder.layers[1].attention.qkv.weight, model.encoder.layers[1].attention.qkv.weight)


def test_starting_from_a_pretrained_model_of_other_sizes_is_refused():
    from allennlp.common.checks import ConfigurationError

    from tests.conftest import minilm_dir

    overrides = minilm_sized(minilm_dir(), layers=7)
    with pytest.raises(ConfigurationError, match="6 layers vs num_layers 7"):
        build(overrides)
    overrides = minilm_sized(minilm_dir())
    overrides["model.encoder"]["d_ff"] = 1024
    with pytest.raises(ConfigurationError, match="feed-forward size 1536 vs d_ff 1024"):
        build(overrides)


def test_bfloat16_autocast_gives_the_float32_loss_closely():
    torch.manual_seed(0)
    model, vocab = build({})
    model.eval()
    from lal_allennlp.dataset_readers.sentence_reader import SentenceReader

    instances = list(SentenceReader().read(str(FIXTURES_ROOT / "ptb" / "dev")))
    batch = Batch(instances)
    batch.index_instances(vocab)
    tensors = batch.as_tensor_dict()
    with torch.no_grad():
        full = model(**tensors)["loss"]
        model.precision, model._autocast_dtypes = "bfloat16", {}
        low = model(**tensors)["loss"]
    assert low.dtype == torch.float32
    assert low.item() == pytest.approx(full.item(), rel=0.02) and low.item() != full.item()
