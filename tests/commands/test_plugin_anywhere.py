"""The installed plugin is found by the bare `allennlp` command run from any directory, and
runs are quiet: no NLTK download attempts, no warning about the transformer layers a config
leaves out on purpose."""
import json
import os
import subprocess
import sys
from pathlib import Path

from tests.conftest import FIXTURES_ROOT, minilm_dir

ALLENNLP = str(Path(sys.executable).parent / "allennlp")
CONFIG = FIXTURES_ROOT / "span_parser" / "experiment.jsonnet"


def _run(args, cwd: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
    result = subprocess.run(args, cwd=cwd, capture_output=True, text=True, env=env)
    assert result.returncode == 0, f"{args} failed:\n{result.stdout}\n{result.stderr}"
    return result


def test_train_and_evaluate_from_a_directory_without_a_plugins_file(tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    assert not (elsewhere / ".allennlp_plugins").exists()
    overrides = {
        "train_data_path": str(FIXTURES_ROOT / "ptb" / "train"),
        "validation_data_path": str(FIXTURES_ROOT / "ptb" / "dev"),
        "trainer.num_epochs": 1,
    }
    trained = _run(
        [ALLENNLP, "train", str(CONFIG), "-s", "run", "-o", json.dumps(overrides)], elsewhere
    )
    metrics_file = elsewhere / "metrics.json"
    evaluated = _run(
        [ALLENNLP, "evaluate", "run/model.tar.gz", str(FIXTURES_ROOT / "ptb" / "dev"),
         "--output-file", str(metrics_file)],
        elsewhere,
    )
    assert "evalb_f1" in json.loads(metrics_file.read_text())
    for result in (trained, evaluated):
        assert "Plugin lal_allennlp available" in result.stderr
        assert "[nltk_data]" not in result.stderr
        assert "pkg_resources is deprecated" not in result.stderr
        assert "FutureWarning" not in result.stderr


def _load_minilm(layers: int) -> str:
    """stderr of a fresh interpreter that builds a MiniLM embedder with `layers` layers."""
    code = (
        "import lal_allennlp\n"
        "from allennlp.modules.token_embedders import PretrainedTransformerMismatchedEmbedder\n"
        f"PretrainedTransformerMismatchedEmbedder({minilm_dir()!r}, "
        f"transformer_kwargs={{'num_hidden_layers': {layers}}})\n"
    )
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True,
        env=dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1"),
    ).stderr


def test_loading_fewer_layers_on_purpose_is_quiet():
    assert "were not used" not in _load_minilm(2)
