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


def _joint_chart() -> np.ndarray:
    """Three words; labels: empty, <H>, A, B. Values by hand: (0, 3) the sentence, no <H>: 3;
    (0, 2) <H> allowed: 4; (0, 1) a word, no <H>: 1; (1, 2) every allowed label below empty: 0;
    (2, 3) a word, no <H>: 0.25."""
    scores = np.zeros((4, 4, 4), dtype=np.float32)
    scores[0, 3] = [0, 7, 2, 3]
    scores[0, 2] = [0, 4, 1, 2]
    scores[0, 1] = [0, 9, 1, -2]
    scores[1, 2] = [0, 5, -1, -3]
    scores[2, 3] = [0, 0.5, 0.25, -1]
    return scores


def test_joint_span_values_take_the_labels_the_joint_decoder_allows():
    values = decoders.joint_span_values(_joint_chart())
    assert values.dtype == np.float64
    assert [values[0, 3], values[0, 2], values[0, 1], values[1, 2], values[2, 3]] == [
        3.0, 4.0, 1.0, 0.0, 0.25
    ]


def test_joint_tree_score_weights_the_spans_and_the_arcs():
    # Word 2 heads the sentence; word 1 depends on it inside (0, 2), word 3 from (2, 3).
    spans = [(0, 3, 3), (0, 2, 1), (0, 1, 2), (1, 2, 0), (2, 3, 2)]
    heads = [2, 0, 2]
    arcs = np.full((4, 4), 100.0, dtype=np.float32)  # arcs not in the tree must not count
    arcs[2, 1], arcs[0, 2], arcs[2, 3] = 0.5, -1.0, 2.0
    values = decoders.joint_span_values(_joint_chart())
    # spans 3 + 4 + 1 + 0 + 0.25 = 8.25, arcs 0.5 - 1 + 2 = 1.5
    assert decoders.joint_tree_score(values, arcs, spans, heads) == 0.5 * 8.25 + 0.5 * 1.5
    assert decoders.joint_tree_score(values, arcs, spans, heads, 0.25) == 0.25 * 8.25 + 0.75 * 1.5
    assert decoders.check_joint_tree(spans, heads, 3) is None
    assert decoders.check_joint_labels(_joint_chart(), spans) is None
    with_sub_head = spans[:4] + [(2, 3, 1)]
    assert "<H> on span (2, 3)" in decoders.check_joint_labels(_joint_chart(), with_sub_head)
    assert "not a best label" in decoders.check_joint_labels(
        _joint_chart(), [(0, 3, 3), (0, 2, 3)] + spans[2:]
    )


def test_joint_objective_problem_names_a_span_whose_allowed_labels_all_lose_to_empty():
    scores = _joint_chart()
    assert "span (1, 2)" in decoders.joint_objective_problem(scores)
    scores[1, 2, 2] = 0.0  # a tie with empty is enough
    assert decoders.joint_objective_problem(scores) is None
    scores[0, 3] = [0, 7, -2, -3]  # <H> does not count on the whole sentence
    assert "span (0, 3)" in decoders.joint_objective_problem(scores)


def test_check_joint_tree_rejects_heads_that_disagree_with_the_spans():
    spans = [(0, 3, 3), (0, 2, 1), (0, 1, 2), (1, 2, 0), (2, 3, 2)]
    assert "2 words headed from outside" in decoders.check_joint_tree(spans, [0, 0, 2], 3)
    assert "not 3 heads" in decoders.check_joint_tree(spans, [2, 0, 3], 3)
    assert "binary tree" in decoders.check_joint_tree(spans[:4], [2, 0, 2], 3)
    assert "cross" in decoders.check_joint_tree(spans[:4] + [(1, 3, 2)], [2, 0, 2], 3)
    # ((0 1)(2 3)) over four words, word 2 the root, 3 heads (2, 4) but depends on word 1, which
    # does not head (0, 2): each span still has one word headed from outside.
    four = [(0, 4, 2), (0, 2, 2), (0, 1, 2), (1, 2, 2), (2, 4, 2), (2, 3, 2), (3, 4, 2)]
    assert decoders.check_joint_tree(four, [2, 0, 2, 3], 4) is None
    assert "not head and dependent" in decoders.check_joint_tree(four, [2, 0, 1, 3], 4)


def test_joint_tree_score_is_what_our_joint_decoder_maximises():
    from lal_allennlp.decoding.joint_span import joint_span_decode

    rng = np.random.default_rng(7)
    scores = rng.standard_normal((2, 7, 7, 30))
    scores[..., 0] = 0.0
    arcs = rng.standard_normal((2, 7, 7))
    assert all(decoders.joint_objective_problem(s) is None for s in scores)
    weight = decoders.SPAN_WEIGHT
    spans, heads, best = joint_span_decode(weight * scores, (1 - weight) * arcs, np.array([6, 6]))
    for b in range(2):
        values = decoders.joint_span_values(scores[b])
        tree = spans[b].tolist()
        assert decoders.check_joint_tree(tree, heads[b].tolist(), 6) is None
        assert decoders.check_joint_labels(scores[b], tree) is None
        score = decoders.joint_tree_score(values, arcs[b], tree, heads[b].tolist())
        assert math.isclose(score, best[b], rel_tol=1e-12)


def test_compare_scores_flags_a_different_score_and_counts_ties():
    different, ties = decoders.compare_scores(
        [1.0, 2.0, 3.0, 1000.0], [1.0, 2.00001, 2.5, 1000.05], [True, False, True, True]
    )
    # 2.00001 and 1000.05 are equal to 1e-4 relative; the first with another tree: a tie.
    assert different == [2]
    assert ties == 1


def test_supar_joint_batch_caps_hold_from_their_length_on():
    caps = decoders.parse_batch_caps(["80=20", "160=2"])
    assert caps == {80: 20, 160: 2}
    assert [decoders.capped_batch(caps, n, 100) for n in (40, 80, 120, 160, 320)] == [
        100, 20, 20, 2, 2
    ]
    assert decoders.capped_batch(caps, 80, 10) == 10
    assert decoders.capped_batch({}, 160, 100) == 100
    for wrong in ("80:20", "80=0", "x=2"):
        try:
            decoders.parse_batch_caps([wrong])
        except ValueError as error:
            assert "LENGTH=BATCH" in str(error)
        else:
            raise AssertionError(f"{wrong} accepted")


def test_make_arcs_is_seeded_and_apart_from_the_charts():
    arcs = decoders.make_arcs(5, 2, seed=3)
    assert arcs.shape == (2, 6, 6) and arcs.dtype == np.float32
    assert np.array_equal(arcs, decoders.make_arcs(5, 2, seed=3))
    assert not np.array_equal(arcs, decoders.make_arcs(5, 2, seed=4))


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


def test_rounds_take_turns_and_give_each_system_its_median_and_ratios(monkeypatch, tmp_path):
    """Rounds 2..R parse every system again, in turn (no probe), and each row's rate becomes
    the median of its rounds; the ratio lines divide round by round."""
    rates = {"lal-joint": [100.0, 120.0, 110.0], "supar": [50.0, 80.0, 55.0]}
    calls = []

    def fake_parse(system, model, data, args, out_dir, probe=True):
        calls.append((system, probe, Path(out_dir).name))
        return {"sentences_per_s": rates[system][len([c for c in calls if c[0] == system])]}

    monkeypatch.setattr(peers, "parse", fake_parse)
    rows = [{"system": s, "model": s, "sentences_per_s": rates[s][0]} for s in rates]
    args = type("Args", (), {"rounds": 3, "work_dir": str(tmp_path)})()
    peers.time_again(rows, {}, args)
    assert calls == [("lal-joint", False, "round2"), ("supar", False, "round2"),
                     ("lal-joint", False, "round3"), ("supar", False, "round3")]
    assert [row["sentences_per_s"] for row in rows] == [110.0, 55.0]
    assert rows[0]["rates"] == [100.0, 120.0, 110.0]
    lines = peers.rate_ratios(rows)
    assert "2.00x, 1.50x, 2.00x (median 2.00x" in lines[2]


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
