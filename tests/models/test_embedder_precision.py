"""`embedder_precision`: the transformer runs under autocast in the chosen dtype while the
encoder, the scores and the decoder stay in float32; the setting can be changed on a loaded
archive (`Parser.load(precision=...)`, `lal-parse --precision`) and is refused, naming what is
wrong, for an unknown value or a model that has no such setting. The embedder's own side (kept
low-precision weights) is tested in tests/modules/test_transformer_embedder.py."""
from typing import List

import pytest
import torch
from allennlp.common import Params
from allennlp.common.checks import ConfigurationError
from allennlp.data import DatasetReader, Vocabulary
from allennlp.models import Model

from lal_allennlp.api import Parser
from lal_allennlp.commands.parse import main as parse_main
from lal_allennlp.predictors import ParserPredictor
from tests.conftest import FIXTURES_ROOT, minilm_dir, minilm_parser_params

SENTENCE = ["The", "cat", "sat", "on", "the", "mat", "."]


@pytest.fixture(scope="module")
def predictor() -> ParserPredictor:
    reader = DatasetReader.from_params(Params({
        "type": "lal_ptb",
        "token_indexers": {
            "tokens": {"type": "pretrained_transformer_mismatched", "model_name": minilm_dir()}
        },
    }))
    vocab = Vocabulary.from_instances(reader.read(str(FIXTURES_ROOT / "ptb" / "train")))
    model = Model.from_params(vocab=vocab, params=Params(minilm_parser_params()))
    model.eval()
    return ParserPredictor(model, reader)


def _dtypes_seen(predictor: ParserPredictor, precision: str) -> dict:
    """The output dtypes of the transformer's first linear layer and of the span scorer's
    hidden layer during one parse in `precision`, and the tree."""
    model = predictor._model
    transformer_linear = next(
        m for m in model.text_field_embedder.modules() if isinstance(m, torch.nn.Linear)
    )
    seen: dict = {}

    def recorder(name: str):
        def hook(module, inputs, output):
            seen[name] = output.dtype

        return hook

    handles = [
        transformer_linear.register_forward_hook(recorder("transformer")),
        model.span_label_scorer.hidden.register_forward_hook(recorder("span_scorer")),
    ]
    model.embedder_precision = precision
    try:
        with torch.no_grad():
            seen["tree"] = predictor.predict_json({"tokens": SENTENCE})["tree"]
    finally:
        model.embedder_precision = "float32"
        for handle in handles:
            handle.remove()
    return seen


def test_bfloat16_runs_only_the_transformer_in_bfloat16(predictor):
    seen = _dtypes_seen(predictor, "bfloat16")
    assert seen["transformer"] == torch.bfloat16
    assert seen["span_scorer"] == torch.float32
    assert seen["tree"].startswith("(")


def test_float32_uses_no_autocast(predictor):
    seen = _dtypes_seen(predictor, "float32")
    assert seen["transformer"] == torch.float32
    assert seen["span_scorer"] == torch.float32


def test_float32_leaves_an_outer_autocast_to_the_transformer(predictor):
    """allennlp's `use_amp` (and the GPU benchmark) wrap the whole model in an autocast: with
    the default float32 setting the transformer must run under it, not be switched back to
    float32 (GPU mixed precision would then skip the transformer)."""
    with torch.autocast("cpu", dtype=torch.bfloat16):
        seen = _dtypes_seen(predictor, "float32")
    assert seen["transformer"] == torch.bfloat16
    assert seen["span_scorer"] == torch.bfloat16


def test_bfloat16_scores_stay_close_to_float32(predictor):
    """Same model, same sentence: bfloat16 word vectors change the span scores only by about
    bfloat16's precision (8 bits of mantissa), not by a different computation."""
    model = predictor._model
    instance = predictor._json_to_instance({"tokens": SENTENCE})
    scores: List[torch.Tensor] = []
    handle = model.span_label_scorer.register_forward_hook(
        lambda module, inputs, output: scores.append(output)
    )
    try:
        for precision in ("float32", "bfloat16"):
            model.embedder_precision = precision
            model.forward_on_instances([instance])
    finally:
        model.embedder_precision = "float32"
        handle.remove()
    full, half = scores
    assert half.dtype == torch.float32
    assert not torch.equal(full, half)  # the autocast did change the arithmetic
    scale = full.abs().max()
    assert (full - half).abs().max() < 0.05 * scale


def test_an_unknown_precision_is_refused_with_the_choices():
    with pytest.raises(ConfigurationError, match="bfloat16.*float16.*float32.*not \"fp8\""):
        Model.from_params(
            vocab=Vocabulary(), params=Params(minilm_parser_params(embedder_precision="fp8"))
        )


def test_parser_load_sets_the_precision(fixture_archive):
    parser = Parser.load(fixture_archive("joint_parser"), precision="bfloat16")
    assert parser.predictor._model.embedder_precision == "bfloat16"
    assert Parser.load(fixture_archive("joint_parser")).predictor._model.embedder_precision == (
        "float32"
    )
    assert parser.parse("The cat sat .").tree_string.startswith("(")


def test_a_model_without_the_setting_is_named(fixture_archive):
    archive = fixture_archive("stack_attention")
    with pytest.raises(ValueError, match="StackAttentionParser.*no embedder precision"):
        Parser.load(archive, precision="bfloat16")


def test_lal_parse_precision_on_a_model_without_it_is_a_usage_error(
    fixture_archive, tmp_path, capsys
):
    text = tmp_path / "in.txt"
    text.write_text("The cat sat .\n", encoding="utf-8")
    with pytest.raises(SystemExit) as stop:
        parse_main([fixture_archive("stack_attention"), str(text), "--precision", "bfloat16"])
    assert stop.value.code == 2
    assert "--precision" in capsys.readouterr().err


def _cpu_bfloat16(monkeypatch, native: bool) -> None:
    """Make torch report a CPU with (or without) native bfloat16 arithmetic."""
    monkeypatch.setattr(torch.cpu, "_is_avx512_bf16_supported", lambda: native)
    monkeypatch.setattr(torch.cpu, "_is_amx_tile_supported", lambda: False)


@pytest.mark.parametrize("native, expected", [(True, torch.bfloat16), (False, torch.float32)])
def test_auto_is_bfloat16_only_on_a_cpu_that_has_it(predictor, monkeypatch, native, expected):
    _cpu_bfloat16(monkeypatch, native)
    seen = _dtypes_seen(predictor, "auto")
    assert seen["transformer"] == expected
    assert seen["span_scorer"] == torch.float32


def test_native_autocast_dtype_of_each_device(monkeypatch):
    from lal_allennlp.models.span_parser_base import native_autocast_dtype

    _cpu_bfloat16(monkeypatch, False)
    assert native_autocast_dtype(torch.device("cpu")) is None
    monkeypatch.setattr(torch.cpu, "_is_amx_tile_supported", lambda: True)
    assert native_autocast_dtype(torch.device("cpu")) == torch.bfloat16
    for bf16, expected in ((True, torch.bfloat16), (False, torch.float16)):
        monkeypatch.setattr(torch.cuda, "is_bf16_supported", lambda *args, **kw: bf16)
        assert native_autocast_dtype(torch.device("cuda")) == expected


def test_emulated_bfloat16_is_kept_with_one_warning(predictor, monkeypatch, caplog):
    _cpu_bfloat16(monkeypatch, False)
    logger_name = "lal_allennlp.modules.transformer_embedder"
    with caplog.at_level("WARNING", logger=logger_name):
        predictor._model.embedder_precision = "bfloat16"
        try:
            with torch.no_grad():
                for _ in range(2):  # the second batch: no new warning
                    predictor.predict_json({"tokens": SENTENCE})
        finally:
            predictor._model.embedder_precision = "float32"
        first = _dtypes_seen(predictor, "bfloat16")  # set again: warned again
    assert first["transformer"] == torch.bfloat16  # what was asked for is what runs
    warnings = [r.getMessage() for r in caplog.records if r.name == logger_name]
    assert len(warnings) == 2
    assert "no native bfloat16" in warnings[0] and '"auto"' in warnings[0]

    caplog.clear()
    _cpu_bfloat16(monkeypatch, True)
    with caplog.at_level("WARNING", logger=logger_name):
        _dtypes_seen(predictor, "bfloat16")
    assert not [r for r in caplog.records if r.name == logger_name]
