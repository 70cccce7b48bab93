"""The bare `allennlp` CLI (train, evaluate, predict) and `lal-parse`, end to end."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from allennlp.common import Params
from allennlp.data import DatasetReader
from nltk import Tree

from tests.conftest import FIXTURES_ROOT, REPO_ROOT

BIN = Path(sys.executable).parent
CONFIG = FIXTURES_ROOT / "span_parser" / "experiment.jsonnet"
DEV = FIXTURES_ROOT / "ptb" / "dev"
# The fixture parser trained for 30 epochs (a few seconds) on the 59 training sentences.
# Trained with AllenNLP's fixed seeds it scores, on the 15 dev sentences, EVALB F1 0.717 and
# POS accuracy 0.530; untrained, or after the config's own 2 epochs, F1 0 (its tags are so
# wrong that EVALB deletes words as punctuation) and after 10 epochs F1 0.36.
EPOCHS = 30
MIN_DEV_F1 = 0.5
MIN_DEV_POS_ACCURACY = 0.4


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
    _run(
        str(BIN / "allennlp"), "train", str(CONFIG), "-s", str(out),
        "-o", json.dumps({"trainer.num_epochs": EPOCHS}),
    )
    return out / "model.tar.gz"


def _leaves(tree: str) -> list:
    return Tree.fromstring(tree).leaves()


def _dev_words() -> list:
    reader = DatasetReader.from_params(Params({"type": "lal_ptb"}))
    return [[token.text for token in instance["tokens"]] for instance in reader.read(str(DEV))]


def test_evaluate_reports_evalb_of_a_trained_parser(archive, tmp_path):
    metrics_file = tmp_path / "metrics.json"
    _run(str(BIN / "allennlp"), "evaluate", str(archive), str(DEV), "--output-file",
         str(metrics_file))
    metrics = json.loads(metrics_file.read_text())
    assert metrics["evalb_f1"] >= MIN_DEV_F1, metrics
    assert metrics["pos_accuracy"] >= MIN_DEV_POS_ACCURACY, metrics
    precision, recall = metrics["evalb_precision"], metrics["evalb_recall"]
    assert metrics["evalb_f1"] == pytest.approx(2 * precision * recall / (precision + recall))


def test_predict_json_lines_and_dataset_reader(archive, tmp_path):
    inputs = tmp_path / "in.jsonl"
    inputs.write_text(
        json.dumps({"sentence": "The dog (a terrier) barked."}) + "\n"
        + json.dumps({"tokens": ["Prices", "fell", "."]}) + "\n"
    )
    out = _run(str(BIN / "allennlp"), "predict", str(archive), str(inputs), "--silent",
               "--output-file", str(tmp_path / "out.jsonl"))
    lines = [json.loads(line) for line in (tmp_path / "out.jsonl").read_text().splitlines()]
    assert [line["words"] for line in lines] == [
        ["The", "dog", "-LRB-", "a", "terrier", "-RRB-", "barked", "."],
        ["Prices", "fell", "."],
    ]
    for line in lines:
        assert Tree.fromstring(line["tree"]).label() == "TOP"
        assert _leaves(line["tree"]) == line["words"]
    # With --use-dataset-reader on a treebank file: one tree per sentence, in order, over the
    # sentence's words.
    _run(str(BIN / "allennlp"), "predict", str(archive), str(DEV),
         "--use-dataset-reader", "--silent", "--output-file", str(tmp_path / "dev.jsonl"))
    dev = [json.loads(line) for line in (tmp_path / "dev.jsonl").read_text().splitlines()]
    assert len(dev) == 15
    assert [_leaves(line["tree"]) for line in dev] == _dev_words()


def test_lal_parse_keeps_lines_aligned(archive):
    text = "The cat sat on the mat.\n\nPrices rose sharply .\n   \nDone.\n"
    result = _run(str(BIN / "lal-parse"), str(archive), "--batch-size", "2", stdin=text)
    lines = result.stdout.split("\n")
    assert lines[-1] == ""
    lines = lines[:-1]
    assert len(lines) == 5
    assert lines[1] == "" and lines[3] == ""
    assert [_leaves(lines[i]) for i in (0, 2, 4)] == [
        ["The", "cat", "sat", "on", "the", "mat", "."],
        ["Prices", "rose", "sharply", "."],
        ["Done", "."],
    ]
    assert all(Tree.fromstring(lines[i]).label() == "TOP" for i in (0, 2, 4))
    assert "line 2: empty line" in result.stderr
    assert "line 4: empty line" in result.stderr
