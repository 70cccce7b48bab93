"""Paired significance tests: hand-computed p-values, EVALB agreement, count matrices, errors."""

import itertools

import numpy as np
import pytest
from nltk import Tree

from lal_allennlp.analysis.significance import (
    SignificanceResult,
    attachment_counts,
    bracket_counts,
    f1_score,
    las,
    paired_bootstrap_test,
    paired_permutation_test,
    uas,
)
from lal_allennlp.metrics.evalb import evalb_score

METRICS = [f1_score, uas, las]
TESTS = [paired_permutation_test, paired_bootstrap_test]

GOLD = "(TOP (S (NP (DT The) (NN cat)) (VP (VBD sat)) (. .)))"


def t(text: str) -> Tree:
    return Tree.fromstring(text)


def random_counts(rng: np.random.Generator, n: int, noise: int = 3) -> np.ndarray:
    """(n, 3) counts that are valid for all three metrics: c0 >= c1 >= c2 >= 0 per row."""
    total = rng.integers(5, 30, size=n)
    first = np.maximum(total - rng.integers(0, noise + 1, size=n), 0)
    second = np.maximum(first - rng.integers(0, noise + 1, size=n), 0)
    return np.stack([total, first, second], axis=1)


# ------------------------------------------------------------------------------------------------
# Hand-computed and limiting cases
# ------------------------------------------------------------------------------------------------


def test_exact_permutation_p_value_by_hand():
    # Three sentences of 10 scored words; correct heads A = (9, 7, 5), B = (7, 6, 6).
    # UAS_A = 21/30, UAS_B = 19/30: observed difference 2/30. Swapping sentence i flips the
    # sign of d_i = A_i - B_i, d = (+2, +1, -1); the 8 patterns (swapped sentences) give
    # A - B in thirtieths:
    #   none: +2+1-1 = +2    {1}: -2+1-1 = -2    {2}: +2-1-1 =  0    {3}:     +2+1+1 = +4
    #   {1,2}: -2-1-1 = -4   {1,3}: -2+1+1 = 0   {2,3}: +2-1+1 = +2  {1,2,3}: -2-1+1 = -2
    # |difference| >= 2 in 6 of the 8 patterns: p = 6/8 = 0.75, exactly.
    a = np.array([[10, 9, 9], [10, 7, 7], [10, 5, 5]])
    b = np.array([[10, 7, 7], [10, 6, 6], [10, 6, 6]])
    result = paired_permutation_test(a, b, uas, trials=8)
    assert result == SignificanceResult(
        metric_a=pytest.approx(0.7),
        metric_b=pytest.approx(19 / 30),
        difference=pytest.approx(2 / 30),
        p_value=0.75,
        test="permutation",
        trials=8,
        exact=True,
    )
    assert result.p_value == 0.75
    # With fewer trials than patterns it samples instead: p = (r + 1) / (trials + 1).
    sampled = paired_permutation_test(a, b, uas, trials=7)
    assert not sampled.exact and sampled.trials == 7
    assert sampled.p_value in {(r + 1) / 8 for r in range(8)}


def test_exact_enumeration_equals_brute_force():
    rng = np.random.default_rng(1)
    a, b = random_counts(rng, 6), random_counts(rng, 6)
    observed = abs(f1_score(a.sum(0)) - f1_score(b.sum(0)))
    extreme = 0
    for pattern in itertools.product([False, True], repeat=6):
        swap = np.array(pattern)[:, None]
        new_a, new_b = np.where(swap, b, a), np.where(swap, a, b)
        extreme += abs(f1_score(new_a.sum(0)) - f1_score(new_b.sum(0))) >= observed - 1e-12
    result = paired_permutation_test(a, b, f1_score)
    assert result.exact and result.trials == 64
    assert result.p_value == extreme / 64


def test_sampled_permutation_approaches_exact_p_value():
    rng = np.random.default_rng(2)
    a, b = random_counts(rng, 16), random_counts(rng, 16)
    exact = paired_permutation_test(a, b, uas, trials=2**16)
    sampled = paired_permutation_test(a, b, uas, trials=20000)  # fewer than the 2 ** 16 patterns
    assert exact.exact and not sampled.exact
    assert 0.05 < exact.p_value < 0.95
    assert sampled.p_value == pytest.approx(exact.p_value, abs=0.02)


@pytest.mark.parametrize("test", TESTS)
@pytest.mark.parametrize("metric", METRICS)
def test_identical_systems_give_p_one(test, metric):
    counts = random_counts(np.random.default_rng(3), 50)
    for n in (3, 50):  # exact enumeration and sampling
        result = test(counts[:n], counts[:n].copy(), metric)
        assert result.p_value == 1.0
        assert result.difference == 0.0 and result.metric_a == result.metric_b


def test_dominating_system_is_significant():
    rng = np.random.default_rng(4)
    scored = rng.integers(5, 30, size=200)
    better = np.stack([scored, scored, scored - 1], axis=1)
    worse = np.stack([scored, scored - 1, scored - 2], axis=1)
    for metric in (uas, las):
        permutation = paired_permutation_test(better, worse, metric)
        assert not permutation.exact and permutation.trials == 10000
        assert permutation.p_value < 0.01
        assert permutation.p_value == 1 / 10001  # no swap pattern reaches the observed gap
        bootstrap = paired_bootstrap_test(better, worse, metric)
        assert bootstrap.p_value < 0.01 and bootstrap.difference > 0
        # The other way round: a negative difference, equally significant.
        reverse = paired_bootstrap_test(worse, better, metric)
        assert reverse.difference < 0 and reverse.p_value < 0.01


def test_bootstrap_of_one_sentence_never_changes_sign():
    # Every resample is that sentence n times: no sample disagrees with the observed sign.
    a, b = np.array([[10, 8, 7]]), np.array([[10, 6, 6]])
    assert paired_bootstrap_test(a, b, uas).p_value == 0.0
    assert paired_bootstrap_test(b, a, uas).p_value == 0.0


@pytest.mark.parametrize("test", TESTS)
def test_same_seed_same_p_and_symmetry(test):
    rng = np.random.default_rng(5)
    a, b = random_counts(rng, 300, noise=5), random_counts(rng, 300, noise=5)
    first = test(a, b, uas, 2000, seed=7)
    assert 0.0 < first.p_value < 1.0
    assert test(a, b, uas, 2000, seed=7) == first
    # Exchanging the systems negates every difference, with the same random draws.
    swapped = test(b, a, uas, 2000, seed=7)
    assert swapped.p_value == first.p_value
    assert swapped.difference == pytest.approx(-first.difference)
    assert first.test == ("permutation" if test is paired_permutation_test else "bootstrap")


# ------------------------------------------------------------------------------------------------
# Metrics and count matrices
# ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("metric", METRICS)
def test_vectorised_metrics_equal_scalar_ones(metric):
    sums = random_counts(np.random.default_rng(6), 20)
    sums[0] = 0  # undefined ratios are 0
    values = metric(sums)
    assert isinstance(values, np.ndarray) and values.shape == (20,)
    for row, value in zip(sums, values):
        scalar = metric(row)
        assert isinstance(scalar, float) and scalar == value
    assert metric(sums[0]) == 0.0


def test_metric_formulas():
    assert f1_score(np.array([3, 4, 5])) == 6 / 9
    assert uas(np.array([10, 7, 5])) == 0.7
    assert las(np.array([10, 7, 5])) == 0.5


def test_bracket_counts_f1_equals_evalb():
    gold = [t(GOLD)] * 5 + [t("(TOP (S (NN Yes) (. .)))")]
    predicted = [
        t(GOLD),
        t("(TOP (S (NP (DT The)) (VP (NN cat) (VBD sat)) (. .)))"),  # 1 of 3 brackets right
        None,  # parser failure: 3 gold brackets, none predicted
        t(GOLD.replace("cat", "dog")),  # error sentence: counts nothing
        t("(TOP (X (S (NP (DT The) (NN cat)) (VP (VBD sat)) (. .))))"),  # one extra bracket
        t("(TOP (S (. Yes) (. .)))"),  # skipped: no word left after deletion
    ]
    counts = bracket_counts(gold, predicted)
    assert counts.dtype == np.int64
    assert counts.tolist() == [[3, 3, 3], [1, 3, 3], [0, 3, 0], [0, 0, 0], [3, 3, 4], [0, 0, 0]]
    for n in range(1, len(gold) + 1):
        result = evalb_score(gold[:n], predicted[:n])
        assert f1_score(counts[:n].sum(0)) == result.f1
    assert result.f1 == 14 / 22
    assert bracket_counts([], []).shape == (0, 3)


def test_attachment_counts_leave_out_punctuation():
    # "The cat sat ." : the wrong label of "cat" costs LAS; the wrong head of "." is not scored.
    # "Dogs bark , loudly ." : "loudly" has the wrong head; both punctuation marks are left out.
    # "!" alone: nothing scored.
    gold_heads = [[2, 3, 0, 3], [2, 0, 2, 2, 2], [0]]
    predicted_heads = [[2, 3, 0, 2], [2, 0, 4, 4, 2], [0]]
    gold_labels = [
        ["det", "nsubj", "root", "punct"],
        ["nsubj", "root", "punct", "advmod", "punct"],
        ["root"],
    ]
    predicted_labels = [
        ["det", "obj", "root", "punct"],
        ["nsubj", "root", "punct", "advmod", "punct"],
        ["punct"],
    ]
    scored = [[True, True, True, False], [True, True, False, True, False], [False]]
    counts = attachment_counts(gold_heads, predicted_heads, gold_labels, predicted_labels, scored)
    assert counts.tolist() == [[3, 3, 2], [3, 2, 2], [0, 0, 0]]
    assert (uas(counts.sum(0)), las(counts.sum(0))) == (5 / 6, 4 / 6)
    unlabelled = attachment_counts(gold_heads, predicted_heads, None, None, scored)
    assert unlabelled.tolist() == [[3, 3, 0], [3, 2, 0], [0, 0, 0]]
    assert las(unlabelled.sum(0)) == 0.0
    assert attachment_counts([], [], None, None, []).shape == (0, 3)


# ------------------------------------------------------------------------------------------------
# Errors
# ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("test", TESTS)
def test_invalid_counts_are_refused(test):
    good = np.array([[3, 2, 1], [4, 4, 4]])
    cases = [
        (good, good[:, :2], "shape"),
        (good, good[:1], "2 sentences but counts_b has 1"),
        (good[:0], good[:0], "zero sentences"),
        (good, good + 0.5, "non-integer"),
        (good, -good, "non-negative"),
        (good.ravel(), good.ravel(), "2-D"),
        (good, good.astype(str), "dtype"),
    ]
    for a, b, message in cases:
        with pytest.raises(ValueError, match=message):
            test(a, b, uas)
    # Whole-valued floats are accepted (e.g. counts summed in a float tensor).
    assert test(good, good.astype(float), uas).p_value == 1.0
    with pytest.raises(ValueError, match="positive integer"):
        test(good, good, uas, 0)
    with pytest.raises(ValueError, match="vectorised"):
        test(good, good, lambda sums: float(sums[0, 1] / sums[0, 0]))


def test_invalid_count_inputs_are_refused():
    with pytest.raises(ValueError, match="2 gold trees but 1 predicted"):
        bracket_counts([t(GOLD), t(GOLD)], [t(GOLD)])
    with pytest.raises(ValueError, match="only gold_labels"):
        attachment_counts([[0]], [[0]], [["root"]], None, [[True]])
    with pytest.raises(ValueError, match="only predicted_labels"):
        attachment_counts([[0]], [[0]], None, [["root"]], [[True]])
    with pytest.raises(ValueError, match="2 sentences of gold_heads but 1 of predicted_heads"):
        attachment_counts([[0], [0]], [[0]], None, None, [[True], [True]])
    with pytest.raises(ValueError, match="sentence 0: 2 words in gold_heads but 1 in scored"):
        attachment_counts([[0, 1]], [[0, 1]], None, None, [[True]])
    with pytest.raises(ValueError, match="predicted_labels"):
        attachment_counts([[0, 1]], [[0, 1]], [["a", "b"]], [["a"]], [[True, True]])
    with pytest.raises(ValueError, match="shape"):
        f1_score(np.array([1, 2]))
