"""The `lal_transformer` embedder: AllenNLP's mismatched embedder's word vectors (a word is the
mean of its pieces) from the same weights; its precision (autocast, parse-time weights cast once
and kept: the autocast output bit for bit); and an archive of a config written before it existed
(AllenNLP's type names, `embedder_precision` on the model) loading into it and parsing as
AllenNLP's own classes parse."""
import copy
from typing import Dict, List

import pytest
import torch
from allennlp.common.checks import ConfigurationError
from allennlp.data import Batch, Instance, Vocabulary
from allennlp.data.fields import TextField
from allennlp.data.token_indexers import PretrainedTransformerMismatchedIndexer
from allennlp.data.tokenizers import Token
from allennlp.models.archival import load_archive
from allennlp.modules.token_embedders import (
    PretrainedTransformerEmbedder,
    PretrainedTransformerMismatchedEmbedder,
    TokenEmbedder,
)

from lal_allennlp.modules.transformer_embedder import (
    AllenNLPNamedTransformerEmbedder,
    TransformerWordEmbedder,
    WordPieceTransformer,
    native_autocast_dtype,
)
from lal_allennlp.modules.fast_dropout import FastDropout
from lal_allennlp.modules.transformer_indexer import TransformerWordPieceIndexer
from lal_allennlp.patches import PATCHES
from lal_allennlp.predictors import ParserPredictor
from lal_allennlp.syntax.trees import parse_trees
from tests.conftest import FIXTURES_ROOT, minilm_dir

SENTENCES = [
    ["The", "cat", "sat", "on", "the", "mat", "."],
    ["Unaffordable", "naïve", "cafés", "closed", "."],
    ["Prices", "fell", "sharply", "in", "heavy", "trading", "on", "Friday", "afternoon", "."],
]


def make_embedder(**options) -> TransformerWordEmbedder:
    """MiniLM's first two layers, in eval mode."""
    torch.manual_seed(0)
    options.setdefault("transformer_kwargs", {"num_hidden_layers": 2})
    return TransformerWordEmbedder(minilm_dir(), **options).eval()


def tensors(sentences: List[List[str]]) -> Dict[str, torch.Tensor]:
    """The indexer's padded tensors for `sentences`, the embedder's keyword arguments."""
    indexer = TransformerWordPieceIndexer(minilm_dir())
    batch = Batch([
        Instance({"tokens": TextField([Token(w) for w in words], {"tokens": indexer})})
        for words in sentences
    ])
    batch.index_instances(Vocabulary())
    return batch.as_tensor_dict()["tokens"]["tokens"]


@pytest.fixture(scope="module")
def inputs() -> Dict[str, torch.Tensor]:
    return tensors(SENTENCES)


def first_linear(embedder: TransformerWordEmbedder) -> torch.nn.Linear:
    return next(m for m in embedder.modules() if isinstance(m, torch.nn.Linear))


def linear_dtype(embedder: TransformerWordEmbedder, inputs) -> torch.dtype:
    """The output dtype of the transformer's first linear layer in one call."""
    seen = []
    handle = first_linear(embedder).register_forward_hook(
        lambda module, arguments, output: seen.append(output.dtype)
    )
    try:
        embedder(**inputs)
    finally:
        handle.remove()
    return seen[0]


def test_both_names_build_this_embedder_and_allennlps_classes_stay_as_they_are():
    assert TokenEmbedder.by_name("lal_transformer") is TransformerWordEmbedder
    alias = TokenEmbedder.by_name("pretrained_transformer_mismatched")
    assert alias is AllenNLPNamedTransformerEmbedder
    assert issubclass(alias, TransformerWordEmbedder)
    for allennlp_class in (PretrainedTransformerEmbedder, PretrainedTransformerMismatchedEmbedder):
        assert allennlp_class.forward.__module__.startswith("allennlp."), allennlp_class
    # What importing the package still patches: AllenNLP's bugs only.
    assert [patch.__name__ for patch in PATCHES] == [
        "key_transformer_cache_by_arguments",
        "read_predict_input_per_line",
    ]


@pytest.mark.parametrize("last_layer_only", [True, False])
def test_the_word_vectors_of_allennlps_embedder_from_the_same_weights(inputs, last_layer_only):
    ours = make_embedder(last_layer_only=last_layer_only)
    if not last_layer_only:  # a scalar mix far from uniform, so that a wrong layer would show
        ours._matched_embedder._scalar_mix.scalar_parameters[0].data.fill_(2.0)
    theirs = PretrainedTransformerMismatchedEmbedder(
        minilm_dir(), last_layer_only=last_layer_only, transformer_kwargs={"num_hidden_layers": 2}
    ).eval()
    # The same parameter names: an archive saved from either loads into the other.
    assert ours.state_dict().keys() == theirs.state_dict().keys()
    theirs.load_state_dict(ours.state_dict())
    # With gradients on nothing is packed: AllenNLP's arithmetic, bit for bit.
    assert torch.equal(ours(**inputs), theirs(**inputs))
    with torch.no_grad():
        assert ours._matched_embedder.packs(
            inputs["token_ids"], inputs["wordpiece_mask"], inputs["type_ids"]
        )
        packed, padded = ours(**inputs), theirs(**inputs)
    assert packed.shape == padded.shape == (3, 10, 384)
    torch.testing.assert_close(packed, padded, rtol=1e-5, atol=1e-5)


def test_the_transformer_gets_fast_dropout_except_under_allennlps_name():
    embedder = make_embedder()
    assert isinstance(embedder._matched_embedder, WordPieceTransformer)
    dropouts = [m for m in embedder.modules() if isinstance(m, torch.nn.Dropout)]
    assert dropouts and all(type(m) is FastDropout for m in dropouts)
    # Other packages' models that name AllenNLP's embedder draw torch's masks, as with it.
    alias = AllenNLPNamedTransformerEmbedder(
        minilm_dir(), transformer_kwargs={"num_hidden_layers": 1}
    )
    dropouts = [m for m in alias.modules() if isinstance(m, torch.nn.Dropout)]
    assert dropouts and all(type(m) is torch.nn.Dropout for m in dropouts)


def test_bfloat16_runs_the_transformer_in_bfloat16_and_gives_float32(inputs):
    embedder = make_embedder(precision="bfloat16")
    with torch.no_grad():
        assert linear_dtype(embedder, inputs) == torch.bfloat16
        assert embedder(**inputs).dtype == torch.float32
    embedder.precision = "float32"
    with torch.no_grad():
        assert linear_dtype(embedder, inputs) == torch.float32


def test_float32_leaves_an_outer_autocast_to_the_transformer(inputs):
    """allennlp's `use_amp` wraps the whole model in an autocast: with the default float32 the
    transformer must run under it, not be switched back to float32."""
    embedder = make_embedder()
    with torch.no_grad(), torch.autocast("cpu", dtype=torch.bfloat16):
        assert linear_dtype(embedder, inputs) == torch.bfloat16


def test_an_unknown_precision_is_refused_with_the_choices():
    with pytest.raises(ConfigurationError, match='bfloat16.*float16.*float32.*not "fp8"'):
        make_embedder(precision="fp8")


def _kept_and_plain(embedder: TransformerWordEmbedder, inputs) -> List[torch.Tensor]:
    """The output at parse time in bfloat16 (kept weights), and under a plain bfloat16 autocast
    (the weights cast by autocast)."""
    embedder.precision = "bfloat16"
    with torch.no_grad():
        kept = embedder(**inputs)
    embedder.precision = "float32"
    with torch.no_grad(), torch.autocast("cpu", dtype=torch.bfloat16):
        plain = embedder(**inputs).float()
    return [kept, plain]


def test_kept_bfloat16_weights_give_the_autocast_output_bit_for_bit(inputs):
    embedder = make_embedder()
    kept, plain = _kept_and_plain(embedder, inputs)
    assert torch.equal(kept, plain)
    # The copies are made once and reused while no weight changes.
    matched = embedder._matched_embedder
    first = embedder._cast_weights.copies(matched, torch.bfloat16)
    assert embedder._cast_weights.copies(matched, torch.bfloat16) is first
    assert first and all(t.dtype == torch.bfloat16 for t in first.values())
    # A weight changed in place (as by an optimizer step) is cast again.
    with torch.no_grad():
        first_linear(embedder).weight.mul_(1.5)
    changed, plain_changed = _kept_and_plain(embedder, inputs)
    assert torch.equal(changed, plain_changed)
    assert not torch.equal(changed, kept)


def test_validation_after_a_fused_adamw_step_uses_the_new_weights(inputs):
    """torch's fused AdamW changes the weights without bumping their version counters, so the
    kept copies cannot see its steps; a trainer's model.train() before the steps drops them."""
    embedder = make_embedder()
    before, _ = _kept_and_plain(embedder, inputs)  # the copies are made here
    linear = [m for m in embedder.modules() if isinstance(m, torch.nn.Linear)]
    optimizer = torch.optim.AdamW([m.weight for m in linear], lr=0.1, fused=True)
    versions = [m.weight._version for m in linear]
    embedder.train()
    for m in linear:
        m.weight.grad = torch.ones_like(m.weight)
    optimizer.step()
    # the premise: the step changed the weights and left their versions as they were
    assert [m.weight._version for m in linear] == versions
    embedder.eval()
    after, plain = _kept_and_plain(embedder, inputs)
    assert torch.equal(after, plain)
    assert not torch.equal(after, before)


def test_training_and_gradients_use_the_weights_themselves(inputs):
    embedder = make_embedder(precision="bfloat16")
    embedder(**inputs).sum().backward()
    layer = embedder._matched_embedder.transformer_model.encoder.layer[0]
    assert layer.attention.self.query.weight.grad is not None
    assert layer.output.dense.weight.grad.abs().sum() > 0


@pytest.mark.parametrize("native", [True, False])
def test_auto_is_bfloat16_only_on_a_cpu_that_has_it(inputs, monkeypatch, native):
    monkeypatch.setattr(torch.cpu, "_is_avx512_bf16_supported", lambda: native)
    monkeypatch.setattr(torch.cpu, "_is_amx_tile_supported", lambda: False)
    assert native_autocast_dtype(torch.device("cpu")) == (torch.bfloat16 if native else None)
    embedder = make_embedder(precision="auto")
    with torch.no_grad():
        assert linear_dtype(embedder, inputs) == (torch.bfloat16 if native else torch.float32)


def _dev_sentences() -> List[List[str]]:
    path = FIXTURES_ROOT / "ptb" / "dev" / "wsj_9003.mrg"
    trees = parse_trees(path.read_text(encoding="utf-8"), source=str(path))
    return [[w for w, tag in tree.pos() if tag != "-NONE-"] for tree, _ in trees]


def test_an_archive_of_the_old_config_loads_into_this_embedder_and_parses_as_allennlps(
    fixture_archive, monkeypatch
):
    monkeypatch.setenv("MINILM_DIR", minilm_dir())  # the fixture config reads it
    archive = load_archive(fixture_archive("legacy_transformer"))
    model_config = archive.config["model"]
    assert model_config["text_field_embedder"]["token_embedders"]["tokens"]["type"] == (
        "pretrained_transformer_mismatched"
    )
    model = archive.model
    embedder = model.text_field_embedder.token_embedder_tokens
    assert isinstance(embedder, TransformerWordEmbedder)
    # The model-level precision of the old config reaches the embedder.
    assert model_config["embedder_precision"] == "auto"
    assert embedder.precision == model.embedder_precision == "auto"
    reader = archive.dataset_reader
    assert isinstance(reader._token_indexers["tokens"], TransformerWordPieceIndexer)

    # The same model and reader with AllenNLP's own embedder and indexer classes, as the
    # archive was read before (float32 both: AllenNLP's embedder has no precision).
    model.embedder_precision = "float32"
    reference = copy.deepcopy(model)
    allennlp_embedder = PretrainedTransformerMismatchedEmbedder(
        minilm_dir(), last_layer_only=False, transformer_kwargs={"num_hidden_layers": 1}
    )
    allennlp_embedder.load_state_dict(embedder.state_dict())
    reference.text_field_embedder._token_embedders["tokens"] = allennlp_embedder
    reference.text_field_embedder.token_embedder_tokens = allennlp_embedder
    reference.eval()
    reference_reader = copy.copy(reader)
    reference_reader._token_indexers = {
        "tokens": PretrainedTransformerMismatchedIndexer(minilm_dir())
    }

    requests = [{"tokens": words} for words in _dev_sentences()]
    assert len(requests) == 15
    ours = ParserPredictor(model, reader).predict_batch_json(requests)
    theirs = ParserPredictor(reference, reference_reader).predict_batch_json(requests)
    assert [o["tree"] for o in ours] == [o["tree"] for o in theirs]
    assert [o["pos_tags"] for o in ours] == [o["pos_tags"] for o in theirs]
