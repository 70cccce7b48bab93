"""
`benchmarks/seed_summary.py`: the scores it reads from allennlp and peers-harness run
directories, and the mean, spread and difference it prints, on hand-computed cases.
"""

import importlib.util
import json
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"
_spec = importlib.util.spec_from_file_location("seed_summary", BENCHMARKS / "seed_summary.py")
seed_summary = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(seed_summary)


def _allennlp_run(directory: Path, f1: float, pos: float, epoch: int, uas=None) -> str:
    directory.mkdir()
    metrics = {"epoch": epoch, "best_validation_evalb_f1": f1,
               "best_validation_pos_accuracy": pos}
    if uas is not None:
        metrics["best_validation_UAS"] = uas
        metrics["best_validation_LAS"] = uas - 0.05
    (directory / "metrics.json").write_text(json.dumps(metrics))
    return str(directory)


def _harness_run(directory: Path, f1: float) -> str:
    directory.mkdir()
    (directory / "result.json").write_text(json.dumps({"f1": f1, "epochs": 7}))
    return str(directory)


def test_run_scores_reads_percentages_and_one_based_epochs(tmp_path):
    run = seed_summary.run_scores(_allennlp_run(tmp_path / "a", 0.9, 0.95, 15, uas=0.9))
    assert run["f1"] == pytest.approx(90.0)
    assert run["pos"] == pytest.approx(95.0)
    assert run["uas"] == pytest.approx(90.0)
    assert run["las"] == pytest.approx(85.0)
    assert run["epochs"] == 16
    peer = seed_summary.run_scores(_harness_run(tmp_path / "b", 89.5))
    assert peer == {"f1": 89.5, "pos": None, "uas": None, "las": None, "epochs": 7}


def test_table_gives_mean_sample_deviation_and_difference_to_the_first_group(tmp_path):
    ours = [_allennlp_run(tmp_path / f"ours{i}", f1, 0.93, 15)
            for i, f1 in enumerate([0.90, 0.91, 0.92])]
    peers = [_harness_run(tmp_path / f"peer{i}", f1) for i, f1 in enumerate([89.0, 89.5])]
    text = seed_summary.table([("ours", ours), ("peer", peers)])
    rows = text.splitlines()[2:]
    # 90, 91, 92: mean 91, sample sd 1; 89, 89.5: mean 89.25, sd 0.354
    assert "| ours | 3 | 90.00 / 91.00 / 92.00 | **91.00** ± 1.00 | 90.00-92.00 | 16 / 16 / 16" \
        in rows[0]
    assert rows[0].endswith("| +0.00 |")
    assert "| peer | 2 | 89.00 / 89.50 | **89.25** ± 0.35 |" in rows[1]
    assert rows[1].endswith("| -1.75 |")


def test_a_single_seed_has_no_spread(tmp_path):
    text = seed_summary.table([("one", [_allennlp_run(tmp_path / "one", 0.9, 0.95, 3, uas=0.9)])])
    assert "| one | 1 | 90.00 | **90.00** |  | 4 | 95.00 | 90.00 | 85.00 | +0.00 |" in text


def test_a_directory_without_scores_is_an_error_naming_it(tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(FileNotFoundError, match="empty"):
        seed_summary.run_scores(str(empty))
    with pytest.raises(SystemExit, match="NAME=DIR"):
        seed_summary.main(["no-equals-sign"])
