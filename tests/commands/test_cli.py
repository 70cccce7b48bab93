"""The bare `allennlp` CLI (train, evaluate, predict) and `lal-parse`, end to end."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import FIXTURES_ROOT, REPO_ROOT

BIN = Path(sys.executable).parent
CONFIG = FIXTURES_ROOT / "span_parser" / "experiment.jsonnet"


def _run(*args: str, stdin: str = None) -> subprocess.CompletedProcess:
    env = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
    result = subprocess.run(
        list(args), cwd=REPO_ROOT, input=stdin, capture_output=True, text=True, env=env
    )
    assert result.returncode == 0, f"{args} failed:\n{result.stdout}\n{result.stderr}"
    return result


@pytest.fixture(scope="module")
def archive(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("cli") / "run"
    # Found through .allennlp_plugins in the repository root: no --include-package.
    _run(str(BIN / "allennlp"), "train", str(CONFIG), "-s", str(out))
    return out / "model.tar.gz"


def test_evaluate_reports_evalb(archive, tmp_path):
    metrics_file = tmp_path / "metrics.json"
    _run(
        str(BIN / "allennlp"), "evaluate", str(archive), str(FIXTURES_ROOT / "ptb" / "dev"),
        "--output-file", str(metrics_file),
    )
    metrics = json.loads(metrics_file.read_text())
    for key in ("evalb_precision", "evalb_recall", "evalb_f1", "pos_accuracy"):
        assert 0.0 <= metrics[key] <= 1.0


def test_predict_json_lines_and_dataset_reader(archive, tmp_path):
    inputs = tmp_path / "in.jsonl"
    inputs.write_text(
        json.dumps({"sentence": "The dog (a terrier) barked."}) + "\n"
        + json.dumps({"tokens": ["Prices", "fell", "."]}) + "\n"
    )
    out = _run(str(BIN / "allennlp"), "predict", str(archive), str(inputs), "--silent",
               "--output-file", str(tmp_path / "out.jsonl"))
    lines = [json.loads(line) for line in (tmp_path / "out.jsonl").read_text().splitlines()]
    assert lines[0]["words"] == ["The", "dog", "-LRB-", "a", "terrier", "-RRB-", "barked", "."]
    assert lines[1]["words"] == ["Prices", "fell", "."]
    assert all(line["tree"].startswith("(TOP ") for line in lines)
    # With --use-dataset-reader on a treebank file.
    _run(str(BIN / "allennlp"), "predict", str(archive), str(FIXTURES_ROOT / "ptb" / "dev"),
         "--use-dataset-reader", "--silent", "--output-file", str(tmp_path / "dev.jsonl"))
    assert len((tmp_path / "dev.jsonl").read_text().splitlines()) > 0


def test_lal_parse_keeps_lines_aligned(archive):
    text = "The cat sat on the mat.\n\nPrices rose sharply .\n   \nDone.\n"
    result = _run(str(BIN / "lal-parse"), str(archive), "--batch-size", "2", stdin=text)
    lines = result.stdout.split("\n")
    assert lines[-1] == ""
    lines = lines[:-1]
    assert len(lines) == 5
    assert lines[0].startswith("(TOP ") and lines[2].startswith("(TOP ")
    assert lines[1] == "" and lines[3] == ""
    assert lines[4].startswith("(TOP ")
    assert "line 2: empty line" in result.stderr
    assert "line 4: empty line" in result.stderr
