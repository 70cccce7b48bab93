"""Tests for the CKY chart decoders (Stern et al. 2017; Kitaev & Klein 2018, sec. 2).

``cky_decode`` (numba, batched) must agree exactly with ``cky_decode_reference`` (pure Python, one
sentence) and with brute-force enumeration of every binary tree.
"""

import itertools
from functools import lru_cache
from typing import FrozenSet, List, Optional, Tuple

import numpy as np
import pytest

from lal_allennlp.decoding import cky_decode
from tests.oracles.cky_reference import cky_decode_reference

Span = Tuple[int, int]


@lru_cache(maxsize=None)
def _all_trees(i: int, j: int) -> Tuple[FrozenSet[Span], ...]:
    """Every binary bracketing of fenceposts i..j, as the set of its 2(j - i) - 1 spans."""
    if j - i == 1:
        return (frozenset([(i, j)]),)
    trees = []
    for k in range(i + 1, j):
        for left in _all_trees(i, k):
            for right in _all_trees(k, j):
                trees.append(frozenset([(i, j)]) | left | right)
    return tuple(trees)


def _augmented(scores: np.ndarray, gold: Optional[np.ndarray]) -> np.ndarray:
    scores = scores.astype(np.float64)
    if gold is None:
        return scores
    cost = np.ones_like(scores)
    np.put_along_axis(cost, gold[..., None].astype(np.int64), 0.0, axis=-1)
    return scores + cost


def _brute_force(scores: np.ndarray, gold: Optional[np.ndarray]) -> Tuple[np.ndarray, float]:
    """Best tree by enumerating every tree, each span with its best (smallest-id) label."""
    n = scores.shape[0] - 1
    aug = _augmented(scores, gold)
    best_tree, best_score = None, -np.inf
    for tree in _all_trees(0, n):
        score = sum(float(aug[i, j].max()) for i, j in tree)
        if score > best_score:
            best_tree, best_score = tree, score
    spans = sorted(best_tree, key=lambda span: (span[0], -span[1]))
    rows = [(i, j, int(np.argmax(aug[i, j]))) for i, j in spans]
    return np.array(rows, dtype=np.int64), best_score


def _brute_force_every_labelling(scores: np.ndarray, gold: Optional[np.ndarray]) -> float:
    """Best score over every (tree, labelling) pair: no per-span independence assumed."""
    n, num_labels = scores.shape[0] - 1, scores.shape[2]
    aug = _augmented(scores, gold)
    best = -np.inf
    for tree in _all_trees(0, n):
        spans = sorted(tree)
        for labels in itertools.product(range(num_labels), repeat=len(spans)):
            best = max(best, sum(aug[i, j, l] for (i, j), l in zip(spans, labels)))
    return best


def _check_valid_tree(spans: np.ndarray, n: int, num_labels: int) -> None:
    assert spans.dtype == np.int64 and spans.shape == (2 * n - 1, 3)
    pairs = [(int(i), int(j)) for i, j, _ in spans]
    assert len(set(pairs)) == 2 * n - 1
    assert (0, n) in pairs and all((i, i + 1) in pairs for i in range(n))
    assert all(0 <= i < j <= n for i, j in pairs)
    assert np.all((spans[:, 2] >= 0) & (spans[:, 2] < num_labels))
    assert pairs == sorted(pairs, key=lambda span: (span[0], -span[1]))  # pre-order
    for (a, b), (c, d) in itertools.combinations(pairs, 2):  # nested or disjoint
        assert b <= c or d <= a or (a <= c and d <= b) or (c <= a and b <= d)


def _random_batch(rng, lengths: List[int], num_labels: int, dtype) -> Tuple[np.ndarray, np.ndarray]:
    max_len = max(lengths)
    scores = rng.standard_normal((len(lengths), max_len + 1, max_len + 1, num_labels)).astype(dtype)
    gold = rng.integers(0, num_labels, (len(lengths), max_len + 1, max_len + 1))
    gold[rng.random(gold.shape) < 0.7] = 0
    return scores, gold


def _assert_matches_reference(scores, lengths, gold, spans, tree_scores) -> None:
    for b, n in enumerate(lengths):
        ref_spans, ref_score = cky_decode_reference(
            scores[b, : n + 1, : n + 1], None if gold is None else gold[b, : n + 1, : n + 1]
        )
        np.testing.assert_array_equal(spans[b], ref_spans)
        assert tree_scores[b] == ref_score  # same float operations: bit-identical


@pytest.mark.parametrize("use_gold", [False, True])
@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 6])
def test_brute_force(n: int, use_gold: bool) -> None:
    rng = np.random.default_rng(100 * n + use_gold)
    for _ in range(5):
        scores, gold = _random_batch(rng, [n], 7, np.float64)
        gold = gold if use_gold else None
        spans, tree_scores = cky_decode(scores, np.array([n]), gold)
        ref_spans, ref_score = cky_decode_reference(scores[0], None if gold is None else gold[0])
        bf_spans, bf_score = _brute_force(scores[0], None if gold is None else gold[0])
        _check_valid_tree(spans[0], n, 7)
        np.testing.assert_array_equal(spans[0], bf_spans)
        np.testing.assert_array_equal(ref_spans, bf_spans)
        assert tree_scores.dtype == np.float64 and tree_scores.shape == (1,)
        assert tree_scores[0] == ref_score
        assert tree_scores[0] == pytest.approx(bf_score, rel=1e-9, abs=1e-12)


@pytest.mark.parametrize("use_gold", [False, True])
@pytest.mark.parametrize("n", [1, 2, 3])
def test_brute_force_every_labelling(n: int, use_gold: bool) -> None:
    rng = np.random.default_rng(7 * n + use_gold)
    scores, gold = _random_batch(rng, [n], 3, np.float32)
    gold = gold if use_gold else None
    spans, tree_scores = cky_decode(scores, np.array([n]), gold)
    expected = _brute_force_every_labelling(scores[0], None if gold is None else gold[0])
    assert tree_scores[0] == pytest.approx(expected, rel=1e-9, abs=1e-12)
    aug = _augmented(scores[0], None if gold is None else gold[0])
    assert sum(aug[i, j, l] for i, j, l in spans[0]) == pytest.approx(expected, rel=1e-9)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("use_gold", [False, True])
def test_random_batches_match_reference(dtype, use_gold: bool) -> None:
    rng = np.random.default_rng(1 if dtype == np.float32 else 2)
    for _ in range(8):
        lengths = rng.integers(1, 31, rng.integers(1, 9)).tolist()
        num_labels = int(rng.integers(1, 20))
        scores, gold = _random_batch(rng, lengths, num_labels, dtype)
        gold = gold if use_gold else None
        spans, tree_scores = cky_decode(scores, np.array(lengths), gold)
        assert len(spans) == len(lengths) and tree_scores.shape == (len(lengths),)
        for b, n in enumerate(lengths):
            _check_valid_tree(spans[b], n, num_labels)
        _assert_matches_reference(scores, lengths, gold, spans, tree_scores)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("use_gold", [False, True])
def test_ties_are_broken_identically(dtype, use_gold: bool) -> None:
    rng = np.random.default_rng(3)
    for _ in range(10):
        lengths = rng.integers(1, 16, 6).tolist()
        num_labels = int(rng.integers(1, 40))
        max_len = max(lengths)
        scores = rng.integers(0, 3, (6, max_len + 1, max_len + 1, num_labels)).astype(dtype)
        gold = rng.integers(0, num_labels, (6, max_len + 1, max_len + 1)) if use_gold else None
        spans, tree_scores = cky_decode(scores, np.array(lengths), gold)
        _assert_matches_reference(scores, lengths, gold, spans, tree_scores)


def test_all_equal_scores_pick_smallest_label_and_split() -> None:
    n = 5
    spans, tree_scores = cky_decode(np.zeros((1, n + 1, n + 1, 4)), np.array([n]))
    # Smallest split everywhere: right-branching (0,5) -> (0,1) + (1,5) -> (1,2) + (2,5) ...
    expected = [(0, 5), (0, 1), (1, 5), (1, 2), (2, 5), (2, 3), (3, 5), (3, 4), (4, 5)]
    assert [(i, j) for i, j, _ in spans[0]] == expected
    assert np.all(spans[0][:, 2] == 0) and tree_scores[0] == 0.0


def _gold_tree(rng, n: int, num_labels: int) -> List[Tuple[int, int, int]]:
    """A random binary tree with random non-zero labels, as (i, j, label) rows."""
    rows = []

    def build(i: int, j: int) -> None:
        rows.append((i, j, int(rng.integers(1, num_labels))))
        if j - i > 1:
            k = int(rng.integers(i + 1, j))
            build(i, k)
            build(k, j)

    build(0, n)
    return rows


@pytest.mark.parametrize("n", [1, 2, 7, 20])
def test_cost_augmentation_keeps_a_strongly_preferred_gold_tree(n: int) -> None:
    rng = np.random.default_rng(n)
    num_labels = 6
    rows = _gold_tree(rng, n, num_labels)
    gold = np.zeros((1, n + 1, n + 1), dtype=np.int64)
    scores = rng.uniform(-1.0, 1.0, (1, n + 1, n + 1, num_labels))
    margin = 4.0 * n + 10.0  # > 2n: no cost (<= 2n - 1) can make another tree or label win
    for i, j, label in rows:
        gold[0, i, j] = label
        scores[0, i, j, label] += margin
    gold_score = sum(scores[0, i, j, label] for i, j, label in rows)
    spans, tree_scores = cky_decode(scores, np.array([n]), gold)
    expected = sorted(rows, key=lambda r: (r[0], -r[1]))
    np.testing.assert_array_equal(spans[0], np.array(expected))
    assert tree_scores[0] == pytest.approx(gold_score, rel=1e-12)  # cost 0 on the gold tree
    plain_spans, plain_scores = cky_decode(scores, np.array([n]))
    np.testing.assert_array_equal(plain_spans[0], spans[0])
    assert plain_scores[0] == pytest.approx(gold_score, rel=1e-12)


@pytest.mark.parametrize("num_labels", [1, 2, 5])
@pytest.mark.parametrize("n", [1, 3, 8, 25])
def test_cost_augmentation_with_zero_scores_maximises_the_hamming_cost(
    n: int, num_labels: int
) -> None:
    rng = np.random.default_rng(n + 100 * num_labels)
    gold = rng.integers(0, num_labels, (1, n + 1, n + 1))
    spans, tree_scores = cky_decode(np.zeros((1, n + 1, n + 1, num_labels)), np.array([n]), gold)
    _check_valid_tree(spans[0], n, num_labels)
    disagreements = sum(int(label != gold[0, i, j]) for i, j, label in spans[0])
    assert tree_scores[0] == disagreements
    if num_labels > 1:  # every span can take a non-gold label
        assert disagreements == 2 * n - 1
    else:  # a single label: the cost is the number of tree spans whose gold label is not 0
        assert all(label == 0 for label in spans[0][:, 2])
    _assert_matches_reference(
        np.zeros((1, n + 1, n + 1, num_labels)), [n], gold, spans, tree_scores
    )


def test_one_word_sentence() -> None:
    scores = np.array([[[[0.0, 0.0], [3.0, 5.0]], [[0.0, 0.0], [0.0, 0.0]]]])  # (1, 2, 2, 2)
    spans, tree_scores = cky_decode(scores, np.array([1]))
    np.testing.assert_array_equal(spans[0], [[0, 1, 1]])
    assert tree_scores[0] == 5.0
    spans, tree_scores = cky_decode(scores, np.array([1]), np.array([[[0, 1], [0, 0]]]))
    np.testing.assert_array_equal(spans[0], [[0, 1, 1]])  # 5 + 0 > 3 + 1
    assert tree_scores[0] == 5.0


def test_long_sentences() -> None:
    rng = np.random.default_rng(4)
    scores = rng.standard_normal((1, 121, 121, 8)).astype(np.float32)
    gold = rng.integers(0, 8, (1, 121, 121))
    spans, tree_scores = cky_decode(scores, np.array([120]), gold)
    _check_valid_tree(spans[0], 120, 8)
    _assert_matches_reference(scores, [120], gold, spans, tree_scores)

    n = 420
    scores = rng.standard_normal((2, n + 1, n + 1, 16), dtype=np.float32)
    spans, tree_scores = cky_decode(scores, np.array([n, 399]))
    _check_valid_tree(spans[0], n, 16)
    assert spans[1].shape == (2 * 399 - 1, 3) and np.isfinite(tree_scores).all()


@pytest.mark.parametrize("use_gold", [False, True])
def test_padding_invariance(use_gold: bool) -> None:
    rng = np.random.default_rng(5)
    n, num_labels = 9, 11
    alone = rng.standard_normal((1, n + 1, n + 1, num_labels))
    alone_gold = rng.integers(0, num_labels, (1, n + 1, n + 1)) if use_gold else None
    lengths = np.array([17, n, 23, n])
    batch = rng.standard_normal((4, 24, 24, num_labels)) * 1e6  # garbage everywhere ...
    batch[rng.random(batch.shape) < 0.2] = np.nan
    batch[1, : n + 1, : n + 1] = alone[0]  # ... except the valid cells of sentences 1 and 3
    batch[3] = np.inf
    batch[3, : n + 1, : n + 1] = alone[0]
    batch[3, np.tril_indices(n + 1)[0], np.tril_indices(n + 1)[1]] = np.nan  # j <= i: ignored
    batch_gold = None
    if use_gold:
        batch_gold = rng.integers(-5, 50, (4, 24, 24))
        batch_gold[1, : n + 1, : n + 1] = alone_gold[0]
        batch_gold[3, : n + 1, : n + 1] = alone_gold[0]
    spans_alone, score_alone = cky_decode(alone, np.array([n]), alone_gold)
    for dtype in (np.float64, np.float32):
        spans, tree_scores = cky_decode(batch.astype(dtype), lengths, batch_gold)
        alone_spans, alone_score = cky_decode(alone.astype(dtype), np.array([n]), alone_gold)
        for b in (1, 3):
            np.testing.assert_array_equal(spans[b], alone_spans[0])
            assert tree_scores[b] == alone_score[0]
    np.testing.assert_array_equal(spans_alone[0], alone_spans[0])  # float32 rounding: same tree


def test_input_layouts_and_dtypes() -> None:
    rng = np.random.default_rng(6)
    lengths = np.array([5, 12, 1], dtype=np.int32)
    scores = rng.standard_normal((3, 13, 13, 9))
    expected_spans, expected_scores = cky_decode(scores, lengths)
    # Non-contiguous views (labels-first storage, strided label axis) give the same result.
    labels_first = np.ascontiguousarray(np.moveaxis(scores, 3, 1))  # (B, L, N + 1, N + 1)
    for view in (np.moveaxis(labels_first, 1, 3), np.repeat(scores, 2, axis=3)[..., ::2]):
        assert not view.flags.c_contiguous
        spans, tree_scores = cky_decode(view, lengths)
        for b in range(3):
            np.testing.assert_array_equal(spans[b], expected_spans[b])
        np.testing.assert_array_equal(tree_scores, expected_scores)
    # Integer and float16 scores are widened to float64.
    int_scores = rng.integers(-3, 4, (3, 13, 13, 9))
    spans, tree_scores = cky_decode(int_scores, lengths)
    _assert_matches_reference(int_scores, lengths.tolist(), None, spans, tree_scores)
    spans, tree_scores = cky_decode(scores.astype(np.float16), lengths.tolist())
    _assert_matches_reference(scores.astype(np.float16), lengths.tolist(), None, spans, tree_scores)
    # Masked (-inf) labels are never chosen while another label is finite.
    masked = scores.copy()
    masked[..., 1:] = -np.inf
    spans, _ = cky_decode(masked, lengths, np.zeros((3, 13, 13), dtype=np.int8))
    assert all(np.all(s[:, 2] == 0) for s in spans)


def test_empty_batch_and_bad_input() -> None:
    spans, tree_scores = cky_decode(np.zeros((0, 5, 5, 3)), np.zeros(0, dtype=np.int64))
    assert spans == [] and tree_scores.shape == (0,)
    with pytest.raises(ValueError):
        cky_decode(np.zeros((1, 5, 5, 3)), np.array([5]))  # longer than max_len
    with pytest.raises(ValueError):
        cky_decode(np.zeros((1, 5, 5, 3)), np.array([0]))
    with pytest.raises(ValueError):
        cky_decode(np.zeros((1, 5, 4, 3)), np.array([3]))
    with pytest.raises(ValueError):
        cky_decode(np.zeros((1, 5, 5, 3)), np.array([3]), np.zeros((1, 4, 4), dtype=np.int64))


def test_out_of_range_gold_labels_match_no_label() -> None:
    rng = np.random.default_rng(8)
    lengths = [6, 11]
    scores, _ = _random_batch(rng, lengths, 5, np.float32)
    gold = rng.integers(-3, 9, (2, 12, 12))  # ids outside [0, 5): every label gets the +1 cost
    spans, tree_scores = cky_decode(scores, np.array(lengths), gold)
    _assert_matches_reference(scores, lengths, gold, spans, tree_scores)
    all_cost = np.where((gold >= 0) & (gold < 5), -1, 99)  # all out of range: plain decode + 2n - 1
    spans, tree_scores = cky_decode(scores, np.array(lengths), all_cost)
    plain_spans, plain_scores = cky_decode(scores, np.array(lengths))
    for b, n in enumerate(lengths):
        np.testing.assert_array_equal(spans[b], plain_spans[b])
        assert tree_scores[b] == pytest.approx(plain_scores[b] + 2 * n - 1, rel=1e-12)
