"""
The helpers of the side-by-side benchmarks that decide what a number means: the tree checks and
scores of `benchmarks/decoder_side_by_side.py` and the prediction clean-up and EVALB report
comparison of `benchmarks/peers_accuracy.py`.
"""

import importlib.util
import math
from pathlib import Path

import numpy as np
from nltk import Tree

from lal_allennlp.metrics.evalb import COLLINS, evalb_score, format_report

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


def _load(name: str):
    spec = importlib.util.spec_from_file_location(name, BENCHMARKS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


decoders = _load("decoder_side_by_side")
peers = _load("peers_accuracy")


def test_check_tree_accepts_nested_spans_and_rejects_crossing_ones():
    assert decoders.check_tree([(0, 4, 1), (0, 2, 3), (2, 4, 2), (3, 4, 5)], 4) is None
    assert "cross" in decoders.check_tree([(0, 3, 1), (2, 4, 1)], 4)
    assert "twice" in decoders.check_tree([(0, 2, 1), (0, 2, 3)], 4)
    assert "outside" in decoders.check_tree([(0, 5, 1)], 4)


def test_tree_score_sums_the_labelled_cells_in_float64():
    scores = np.zeros((4, 4, 3), dtype=np.float32)
    scores[0, 3, 2] = 1.5
    scores[1, 3, 1] = -0.25
    assert decoders.tree_score(scores, [(0, 3, 2), (1, 3, 1)]) == 1.25


def test_make_charts_is_seeded_and_scores_the_empty_label_zero():
    first = decoders.make_charts(5, 2, 7, seed=3)
    assert first.shape == (2, 6, 6, 7) and first.dtype == np.float32
    assert np.array_equal(first, decoders.make_charts(5, 2, 7, seed=3))
    assert not first[..., 0].any() and first[..., 1:].std() > 0.5


def test_growth_exponent_of_a_cubic():
    lengths = [10, 20, 40, 80]
    assert math.isclose(decoders.growth_exponent(lengths, [n**3 * 1e-7 for n in lengths]), 3.0)


def test_with_gold_tags_puts_gold_tags_and_a_top_root():
    gold = Tree.fromstring("(TOP (S (NP (DT The) (NN cat)) (VP (VBD sat)) (. .)))")
    predicted = "(S (NP (XX The) (XX cat)) (VP (XX sat)) (XX .))"
    assert peers.with_gold_tags(predicted, gold) == (
        "(TOP (S (NP (DT The) (NN cat)) (VP (VBD sat)) (. .)))"
    )
    assert peers.with_gold_tags("(ROOT (S (X The) (X cat) (X sat) (X .)))", gold) == (
        "(TOP (S (DT The) (NN cat) (VBD sat) (. .)))"
    )
    # Other words: left as they are (EVALB then counts an error sentence); unreadable: empty.
    assert peers.with_gold_tags("(TOP (S (X A) (X dog)))", gold) == "(TOP (S (X A) (X dog)))"
    assert peers.with_gold_tags("(TOP (S (X A)", gold) == ""


def test_summary_compares_the_report_blocks_whatever_the_spacing():
    gold = [Tree.fromstring("(TOP (S (NP (DT The) (NN cat)) (VP (VBD sat)) (. .)))")]
    right = [Tree.fromstring("(TOP (S (NP (DT The) (NN cat)) (VP (VBD sat)) (. .)))")]
    wrong = [Tree.fromstring("(TOP (S (DT The) (VP (NN cat) (VBD sat)) (. .)))")]
    report = format_report(evalb_score(gold, right, COLLINS))
    lines = peers.summary(report)
    assert lines[0] == "=== Summary ==="
    assert "Bracketing FMeasure = 100.00" in lines
    assert peers.summary(report.replace(" = ", "   =  ")) == lines
    assert peers.summary(format_report(evalb_score(gold, wrong, COLLINS))) != lines


def test_longest_names_the_last_sentence_parsed_and_what_stopped_the_probe():
    ok = {"length": 300, "ok": True, "peak_mib": 1500.4, "error": None}
    failed = {"length": 400, "ok": False, "peak_mib": 1600.0, "error": "IndexError: index out"}
    assert peers.longest([]) == "not probed"
    assert peers.longest([ok]) == ">= 300 (1,500 MiB)"
    assert peers.longest([ok, failed]) == "300 (1,500 MiB); 400: IndexError: index out"
    assert peers.longest([failed]) == "none; 400: IndexError: index out"


def test_dependency_benchmark_scores_leave_out_punctuation_by_gold_tag():
    dependencies = _load("dependency_side_by_side")
    gold = [
        # I saw her .   (saw root; I, her <- saw; . <- saw)
        {"heads": [2, 0, 2, 2], "labels": ["nsubj", "root", "obj", "punct"],
         "pos": ["PRON", "VERB", "PRON", "PUNCT"]},
        # Go !  (labels missing in the file: every arc is "_")
        {"heads": [0, 1], "labels": None, "pos": ["VERB", "PUNCT"]},
    ]
    heads = [[2, 0, 1, 1], [0, 2]]
    labels = [["nsubj", "root", "obj", "punct"], ["_", "_"]]
    scores = dependencies.attachment_scores(gold, heads, labels, ["PUNCT"])
    # Scored words: I, saw, her, Go; heads right: I, saw, Go (her's head is wrong);
    # labels right on all three of those. The wrong heads of the two punctuation marks count
    # for nothing.
    assert scores == {"UAS": 75.0, "LAS": 75.0}
    labels[0][0] = "obj"
    assert dependencies.attachment_scores(gold, heads, labels, ["PUNCT"]) == {
        "UAS": 75.0, "LAS": 50.0
    }


def test_reused_run_reads_an_earlier_harness_row_or_an_allennlp_run(tmp_path):
    harness = tmp_path / "supar"
    harness.mkdir()
    (harness / "result.json").write_text(
        '{"train_seconds": 714.0, "epochs": 7, "model": "m/model", "f1": 89.0}'
    )
    assert peers.reused_run(str(harness)) == {
        "train_seconds": 714.0, "epochs": 7, "model": "m/model", "reused": str(harness)
    }
    allennlp_run = tmp_path / "lal"
    allennlp_run.mkdir()
    (allennlp_run / "metrics.json").write_text(
        '{"training_duration": "0:14:07.5", "training_epochs": 15, "best_epoch": 15}'
    )
    row = peers.reused_run(str(allennlp_run))
    assert (row["train_seconds"], row["epochs"], row["best_epoch"]) == (847.5, 16, 15)
    assert row["model"] == str(allennlp_run / "model.tar.gz")


class _FakeClock:
    """perf_counter that moves only when told to: pass k takes durations[k] seconds."""

    def __init__(self, durations):
        self.now, self.durations = 0.0, list(durations)

    def perf_counter(self):
        return self.now

    def run_pass(self):
        self.now += self.durations.pop(0)


def test_worker_times_the_median_pass(monkeypatch):
    worker = _load("peers_worker")
    clock = _FakeClock([3.0, 1.0, 2.0, 9.0, 1.5])
    monkeypatch.setattr(worker.time, "perf_counter", clock.perf_counter)
    assert worker._timed(clock.run_pass, 5) == 2.0
    assert clock.durations == []  # every pass ran


def test_profile_timer_counts_a_stage_once_when_it_calls_itself(monkeypatch):
    profile = _load("parse_profile")
    clock = _FakeClock([])
    monkeypatch.setattr(profile.time, "perf_counter", clock.perf_counter)

    class Stage:
        def work(self, depth):
            clock.now += 1.0
            return self.work(depth - 1) + 1 if depth else 0

    stage, totals = Stage(), {"decode": 0.0}
    profile._timed(stage, "work", "decode", totals)
    assert stage.work(2) == 2  # three nested calls, each one second
    assert totals == {"decode": 3.0}  # timed once, by the outermost call
