"""Tests for the joint-span decoder (Zhou & Zhao 2019, sec. 3.3; used unchanged by LAL-Parser).

``joint_span_decode`` (O(n^4)) must agree bit for bit with the authors' O(n^5) recurrence
(``joint_span_decode_n5``, compiled) and with the pure-Python reference, and with brute-force
enumeration of every joint structure (binary bracketing x head assignment x labelling) on short
sentences.
"""

import itertools
from functools import lru_cache, partial
from typing import Dict, List, Tuple

import numpy as np
import pytest

from lal_allennlp.decoding import joint_span_lanes
from lal_allennlp.decoding.joint_span import (
    EMPTY,
    LANE_MAX_LEN,
    SUB_HEAD,
    _TILE_AHEAD_FROM,
    _node_label,
    joint_span_decode,
)
from tests.oracles.joint_span_n5 import joint_span_decode_n5
from tests.oracles.joint_span_reference import joint_span_decode_reference

# The library's decoder, one sentence at a time and 8 sentences in vector lanes, and the authors'
# O(n^5) recurrence.
ALONE = partial(joint_span_decode, lanes=False)
IN_LANES = partial(joint_span_decode, lanes=True)
DECODERS = [ALONE, IN_LANES, joint_span_decode_n5]
# An internal node of a joint structure: span (i, j), split k, head h, dependent child's head d.
Node = Tuple[int, int, int, int, int]


@lru_cache(maxsize=None)
def _structures(i: int, j: int) -> Tuple[Tuple[int, Tuple[Node, ...]], ...]:
    """Every (head, internal nodes in pre-order) over span (i, j): each node's head is the head of
    one child, and the head of the other child attaches to it."""
    if j - i == 1:
        return ((j, ()),)
    result = []
    for k in range(i + 1, j):
        for left_head, left_nodes in _structures(i, k):
            for right_head, right_nodes in _structures(k, j):
                below = left_nodes + right_nodes
                result.append((right_head, ((i, j, k, right_head, left_head),) + below))
                result.append((left_head, ((i, j, k, left_head, right_head),) + below))
    return tuple(result)


def _allowed(i: int, j: int, n: int, role: str, num_labels: int) -> List[int]:
    """Labels a node may take: the root and longer dependents are non-empty, <H> never on a single
    word or on the whole sentence; head children and single-word dependents may be empty."""
    labels = list(range(num_labels))
    if j - i == 1 or j - i == n:
        labels.remove(SUB_HEAD)
    if role == "root" or (role == "dep" and j - i > 1):
        labels.remove(EMPTY)
    return labels


def _roles(n: int, root: int, nodes: Tuple[Node, ...]) -> Dict[Tuple[int, int], str]:
    roles = {(0, n): "root"}
    for i, j, k, h, _ in nodes:
        head_right = h > k
        roles[i, k] = "dep" if head_right else "head"
        roles[k, j] = "head" if head_right else "dep"
    return roles


def _brute_force(span_scores: np.ndarray, arc_scores: np.ndarray):
    """Best joint structure by enumeration; each span takes its best allowed label (smallest id).

    Ties go to the lexicographically smallest (root, k, d, k, d, ...) in pre-order, which is the
    decoders' rule (smallest root, then in each node smallest split k, then smallest dependent d).
    Exact for integer-valued scores; scores are summed in float64.
    """
    s = span_scores.astype(np.float64)
    arc = arc_scores.astype(np.float64)
    n, num_labels = s.shape[0] - 1, s.shape[2]
    best = None
    for root, nodes in _structures(0, n):
        roles = _roles(n, root, nodes)
        score = float(arc[0, root])
        for (i, j), role in roles.items():
            score += max(float(s[i, j, l]) for l in _allowed(i, j, n, role, num_labels))
        score += sum(float(arc[h, d]) for _, _, _, h, d in nodes)
        key = (root,) + tuple(x for _, _, k, _, d in nodes for x in (k, d))
        if best is None or score > best[0] or (score == best[0] and key < best[1]):
            best = (score, key, root, nodes, roles)
    score, _, root, nodes, roles = best
    spans = []
    for i, j in sorted(roles, key=lambda span: (span[0], -span[1])):  # pre-order
        allowed = _allowed(i, j, n, roles[i, j], num_labels)
        spans.append((i, j, max(allowed, key=lambda l: (s[i, j, l], -l))))  # smallest id on ties
    heads = np.zeros(n, dtype=np.int64)
    for _, _, _, h, d in nodes:
        heads[d - 1] = h
    return np.array(spans, dtype=np.int64), heads, score


def _brute_force_every_labelling(span_scores: np.ndarray, arc_scores: np.ndarray) -> float:
    """Best score over every (structure, labelling) pair: no per-span independence assumed."""
    s, arc = span_scores.astype(np.float64), arc_scores.astype(np.float64)
    n, num_labels = s.shape[0] - 1, s.shape[2]
    best = -np.inf
    for root, nodes in _structures(0, n):
        roles = _roles(n, root, nodes)
        spans = sorted(roles)
        arcs = float(arc[0, root]) + sum(float(arc[h, d]) for _, _, _, h, d in nodes)
        choices = [_allowed(i, j, n, roles[i, j], num_labels) for i, j in spans]
        for labels in itertools.product(*choices):
            total = arcs + sum(float(s[i, j, l]) for (i, j), l in zip(spans, labels))
            best = max(best, total)
    return best


def _check_joint_tree(spans: np.ndarray, heads: np.ndarray, n: int, num_labels: int) -> None:
    """A binary tree in pre-order whose head words make a projective dependency tree, with the
    joint-span label rules."""
    assert spans.dtype == np.int64 and spans.shape == (2 * n - 1, 3)
    assert heads.dtype == np.int64 and heads.shape == (n,)
    pairs = [(int(i), int(j)) for i, j, _ in spans]
    assert pairs == sorted(set(pairs), key=lambda span: (span[0], -span[1]))
    assert pairs[0] == (0, n) and all((w - 1, w) in pairs for w in range(1, n + 1))
    assert np.all((spans[:, 2] >= 0) & (spans[:, 2] < num_labels))
    assert np.count_nonzero(heads == 0) == 1 and np.all((heads >= 0) & (heads <= n))
    span_head = {}
    for i, j in pairs:  # the head of a span: its only word whose head lies outside it
        outside = [w for w in range(i + 1, j + 1) if not i < heads[w - 1] <= j]
        assert len(outside) == 1, f"span {(i, j)} has words {outside} attached outside"
        span_head[i, j] = outside[0]
    labels = {(int(i), int(j)): int(l) for i, j, l in spans}
    assert labels[0, n] not in (EMPTY, SUB_HEAD)
    for i, j in pairs:
        if j - i == 1:
            assert labels[i, j] != SUB_HEAD
            continue
        k = next(k for k in range(i + 1, j) if (i, k) in labels and (k, j) in labels)
        h, left, right = span_head[i, j], span_head[i, k], span_head[k, j]
        dep_span, dep = ((i, k), left) if h == right else ((k, j), right)
        assert h in (left, right) and heads[dep - 1] == h
        if dep_span[1] - dep_span[0] > 1:
            assert labels[dep_span] != EMPTY


def _tree_score(spans, heads, span_scores, arc_scores) -> float:
    total = sum(float(span_scores[i, j, l]) for i, j, l in spans)
    return total + sum(float(arc_scores[h, w + 1]) for w, h in enumerate(heads))


def _random_batch(rng, lengths: List[int], num_labels: int, dtype, integer: bool = False):
    shape = (len(lengths), max(lengths) + 1, max(lengths) + 1)
    if integer:  # few distinct values: many exact ties
        span_scores = rng.integers(-2, 3, shape + (num_labels,)).astype(dtype)
        arc_scores = rng.integers(-2, 3, shape).astype(dtype)
    else:
        span_scores = rng.standard_normal(shape + (num_labels,)).astype(dtype)
        arc_scores = rng.standard_normal(shape).astype(dtype)
    return span_scores, arc_scores


def _assert_same(result_a, result_b) -> None:
    (spans_a, heads_a, scores_a), (spans_b, heads_b, scores_b) = result_a, result_b
    assert len(spans_a) == len(spans_b) == len(heads_a) == len(heads_b)
    for b in range(len(spans_a)):
        np.testing.assert_array_equal(spans_a[b], spans_b[b])
        np.testing.assert_array_equal(heads_a[b], heads_b[b])
    np.testing.assert_array_equal(scores_a, scores_b)  # same float operations: bit-identical


def _decode_all(span_scores, arc_scores, lengths):
    """O(n^4), O(n^5) and reference results for a batch; asserts that all three are identical."""
    lengths = np.asarray(lengths)
    fast = ALONE(span_scores, arc_scores, lengths)
    _assert_same(fast, joint_span_decode_n5(span_scores, arc_scores, lengths))
    _assert_same(fast, IN_LANES(span_scores, arc_scores, lengths))
    reference = [
        joint_span_decode_reference(
            span_scores[b, : n + 1, : n + 1], arc_scores[b, : n + 1, : n + 1]
        )
        for b, n in enumerate(lengths)
    ]
    _assert_same(
        fast,
        ([r[0] for r in reference], [r[1] for r in reference], np.array([r[2] for r in reference])),
    )
    return fast


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 6])
def test_brute_force_random_scores(n: int) -> None:
    rng = np.random.default_rng(10 + n)
    for _ in range(4 if n < 6 else 2):
        span_scores, arc_scores = _random_batch(rng, [n], 5, np.float64)
        spans, heads, scores = _decode_all(span_scores, arc_scores, [n])
        bf_spans, bf_heads, bf_score = _brute_force(span_scores[0], arc_scores[0])
        _check_joint_tree(spans[0], heads[0], n, 5)
        np.testing.assert_array_equal(spans[0], bf_spans)
        np.testing.assert_array_equal(heads[0], bf_heads)
        assert scores.dtype == np.float64 and scores[0] == pytest.approx(bf_score, rel=1e-12)
        assert _tree_score(spans[0], heads[0], span_scores[0], arc_scores[0]) == pytest.approx(
            scores[0], rel=1e-12
        )


@pytest.mark.parametrize("n", [2, 3, 4, 5])
def test_brute_force_ties(n: int) -> None:
    """Integer scores (exact sums, many ties): the same structure as the brute force's tie rule."""
    rng = np.random.default_rng(20 + n)
    for _ in range(12):
        span_scores, arc_scores = _random_batch(rng, [n], 4, np.float32, integer=True)
        spans, heads, scores = _decode_all(span_scores, arc_scores, [n])
        bf_spans, bf_heads, bf_score = _brute_force(span_scores[0], arc_scores[0])
        np.testing.assert_array_equal(spans[0], bf_spans)
        np.testing.assert_array_equal(heads[0], bf_heads)
        assert scores[0] == bf_score


@pytest.mark.parametrize("n", [1, 2, 3])
def test_brute_force_every_labelling(n: int) -> None:
    rng = np.random.default_rng(30 + n)
    span_scores, arc_scores = _random_batch(rng, [n], 4, np.float64)
    spans, heads, scores = _decode_all(span_scores, arc_scores, [n])
    assert scores[0] == pytest.approx(
        _brute_force_every_labelling(span_scores[0], arc_scores[0]), rel=1e-12
    )


@pytest.mark.parametrize("integer", [False, True])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("lanes", [False, True])
def test_fast_equals_n5_on_thousands_of_charts(dtype, integer: bool, lanes: bool) -> None:
    """~1000 sentences per case; the reference too on the first sentences of each batch."""
    rng = np.random.default_rng(40 + 2 * integer + (dtype == np.float64))
    count = 0
    for _ in range(16):
        lengths = rng.integers(1, 15, 64).tolist()
        num_labels = int(rng.integers(3, 9))
        span_scores, arc_scores = _random_batch(rng, lengths, num_labels, dtype, integer)
        fast = joint_span_decode(span_scores, arc_scores, np.array(lengths), lanes=lanes)
        _assert_same(fast, joint_span_decode_n5(span_scores, arc_scores, np.array(lengths)))
        for b, n in enumerate(lengths[:4]):
            ref = joint_span_decode_reference(
                span_scores[b, : n + 1, : n + 1], arc_scores[b, : n + 1, : n + 1]
            )
            _assert_same(
                ([fast[0][b]], [fast[1][b]], fast[2][b : b + 1]),
                ([ref[0]], [ref[1]], np.array([ref[2]])),
            )
        for b, n in enumerate(lengths[:8]):
            _check_joint_tree(fast[0][b], fast[1][b], n, num_labels)
        count += len(lengths)
    assert count == 1024


@pytest.mark.parametrize("integer", [False, True])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("lanes", [False, True])
def test_fast_equals_n5_vector_labels_and_blocks(dtype, integer: bool, lanes: bool) -> None:
    """704 sentences per case of up to 26 words (several blocks of 4 starts per end, head chunks
    of up to 4 x 8 lanes) with 10 or more labels, so that the label maxima take the 8-lane row
    kernel (including a last chunk that overlaps the one before it)."""
    rng = np.random.default_rng(45 + 2 * integer + (dtype == np.float64))
    count = 0
    for num_labels in (10, 11, 17, 18, 25, 112):
        for _ in range(2 if num_labels == 112 else 4):
            lengths = rng.integers(1, 27, 32).tolist()
            span_scores, arc_scores = _random_batch(rng, lengths, num_labels, dtype, integer)
            if integer:  # ties between the best label and labels 0, 1 and the last ones too
                span_scores[..., -1] = span_scores[..., 2]
            fast = joint_span_decode(span_scores, arc_scores, np.array(lengths), lanes=lanes)
            n5 = joint_span_decode_n5(span_scores, arc_scores, np.array(lengths))
            _assert_same(fast, n5)
            for b, n in [(b, n) for b, n in enumerate(lengths) if n <= 14][:2]:
                ref = joint_span_decode_reference(
                    span_scores[b, : n + 1, : n + 1], arc_scores[b, : n + 1, : n + 1]
                )
                _assert_same(
                    ([fast[0][b]], [fast[1][b]], fast[2][b : b + 1]),
                    ([ref[0]], [ref[1]], np.array([ref[2]])),
                )
                _check_joint_tree(fast[0][b], fast[1][b], n, num_labels)
            count += len(lengths)
    assert count == 704


@pytest.mark.parametrize("lanes", [False, True])
def test_longer_sentences_and_many_labels(lanes: bool) -> None:
    rng = np.random.default_rng(50)
    lengths = [60, 33, 1, 47]
    span_scores, arc_scores = _random_batch(rng, lengths, 112, np.float32)
    fast = joint_span_decode(span_scores, arc_scores, np.array(lengths), lanes=lanes)
    _assert_same(fast, joint_span_decode_n5(span_scores, arc_scores, np.array(lengths)))
    for b, n in enumerate(lengths):
        _check_joint_tree(fast[0][b], fast[1][b], n, 112)


def test_minus_infinity_masks() -> None:
    """Forbidding arcs or labels with -inf (e.g. a masked head) keeps all decoders identical."""
    rng = np.random.default_rng(55)
    lengths = rng.integers(1, 12, 48).tolist()
    span_scores, arc_scores = _random_batch(rng, lengths, 5, np.float64, integer=True)
    arc_scores[rng.random(arc_scores.shape) < 0.5] = -np.inf
    span_scores[rng.random(span_scores.shape) < 0.2] = -np.inf
    spans, heads, scores = _decode_all(span_scores, arc_scores, lengths)
    for b, n in enumerate(lengths):
        if np.isfinite(scores[b]):  # then no forbidden arc or label was used
            _check_joint_tree(spans[b], heads[b], n, 5)
            assert _tree_score(spans[b], heads[b], span_scores[b], arc_scores[b]) == scores[b]


def test_padding_is_never_read() -> None:
    """Results do not depend on the batch, the padding, column 0 or the diagonal of the arcs."""
    rng = np.random.default_rng(60)
    lengths = [7, 3, 11, 1, 9]
    span_scores, arc_scores = _random_batch(rng, lengths, 6, np.float32)
    dirty_spans, dirty_arcs = span_scores.copy(), arc_scores.copy()
    for b, n in enumerate(lengths):
        lower = np.tril(np.ones((n + 1, n + 1), dtype=bool))  # j <= i
        dirty_spans[b, : n + 1, : n + 1][lower] = np.nan
        dirty_spans[b, n + 1 :], dirty_spans[b, :, n + 1 :] = np.nan, np.inf
        dirty_arcs[b, n + 1 :], dirty_arcs[b, :, n + 1 :] = np.nan, -np.inf
        dirty_arcs[b, :, 0] = np.nan
        np.fill_diagonal(dirty_arcs[b], np.inf)
    for decode in DECODERS:
        batch = decode(span_scores, arc_scores, np.array(lengths))
        dirty = decode(dirty_spans, dirty_arcs, np.array(lengths))
        _assert_same(batch, dirty)
        for b, n in enumerate(lengths):  # each sentence alone, unpadded
            alone = decode(
                span_scores[b : b + 1, : n + 1, : n + 1],
                arc_scores[b : b + 1, : n + 1, : n + 1],
                np.array([n]),
            )
            _assert_same(alone, ([batch[0][b]], [batch[1][b]], batch[2][b : b + 1]))


def test_one_word_sentence() -> None:
    """The single span is the whole sentence: non-empty, never <H>, headed by the root."""
    span_scores = np.zeros((1, 2, 2, 4))
    span_scores[0, 0, 1] = [9.0, 8.0, 1.0, 2.0]
    arc_scores = np.zeros((1, 2, 2))
    arc_scores[0, 0, 1] = 0.5
    for decode in DECODERS:
        spans, heads, scores = decode(span_scores, arc_scores, np.array([1]))
        np.testing.assert_array_equal(spans[0], [[0, 1, 3]])
        np.testing.assert_array_equal(heads[0], [0])
        assert scores[0] == 2.5
    assert joint_span_decode_reference(span_scores[0], arc_scores[0])[2] == 2.5


def test_hand_checked_two_words() -> None:
    span_scores = np.zeros((1, 3, 3, 3))
    span_scores[0, 0, 2] = [5.0, 9.0, 1.0]  # whole sentence: neither empty nor <H> allowed
    span_scores[0, 0, 1] = [0.5, 3.0, 0.25]  # single word: no <H>; empty beats label 2
    span_scores[0, 1, 2] = [0.0, 0.0, 0.75]
    arc_scores = np.zeros((1, 3, 3))
    arc_scores[0, 0, 2] = arc_scores[0, 2, 1] = 1.0  # root -> 2 -> 1
    for decode in DECODERS:
        spans, heads, scores = decode(span_scores, arc_scores, np.array([2]))
        np.testing.assert_array_equal(spans[0], [[0, 2, 2], [0, 1, 0], [1, 2, 2]])
        np.testing.assert_array_equal(heads[0], [2, 0])
        assert scores[0] == 1.0 + 0.5 + 0.75 + 2.0


def test_all_equal_scores_follow_the_tie_rule() -> None:
    """Everything ties: root 1, smallest split and dependent everywhere (a right-branching chain
    of left heads), smallest allowed label (root 2, dependents <H>, head words empty)."""
    n = 6
    expected = [(0, n, 2)]
    for i in range(n - 1):
        expected += [(i, i + 1, 0)] + ([(i + 1, n, 1)] if n - i - 1 > 1 else [(i + 1, n, 0)])
    for decode in DECODERS:
        spans, heads, scores = decode(
            np.zeros((1, n + 1, n + 1, 5)), np.zeros((1, n + 1, n + 1)), np.array([n])
        )
        np.testing.assert_array_equal(spans[0], expected)
        np.testing.assert_array_equal(heads[0], np.arange(n))
        assert scores[0] == 0.0


@pytest.mark.parametrize("lanes", [False, True])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_longer_sentences_with_ties(dtype, lanes: bool) -> None:
    """Sentences of 33 to 48 words with small integer scores (many exact ties): spans and
    outside head ranges of up to 6 chunks of 8 heads; the trees must equal the O(n^5)
    recurrence's, ties included."""
    rng = np.random.default_rng(80 + (dtype == np.float64))
    lengths = rng.integers(33, 49, 6).tolist()
    span_scores, arc_scores = _random_batch(rng, lengths, 12, dtype, integer=True)
    fast = joint_span_decode(span_scores, arc_scores, np.array(lengths), lanes=lanes)
    _assert_same(fast, joint_span_decode_n5(span_scores, arc_scores, np.array(lengths)))
    for b, n in enumerate(lengths):
        _check_joint_tree(fast[0][b], fast[1][b], n, 12)


@pytest.fixture
def decoded_in_lanes(monkeypatch) -> List[int]:
    """The sizes of the groups that the lane decoder is given, call after call."""
    sizes_seen: List[int] = []
    decode_groups = joint_span_lanes.decode_groups

    def counting(span_scores, arc_scores, lengths, groups, sizes, *rest):
        sizes_seen.extend(sizes.tolist())
        return decode_groups(span_scores, arc_scores, lengths, groups, sizes, *rest)

    monkeypatch.setattr(joint_span_lanes, "decode_groups", counting)
    return sizes_seen


@pytest.mark.parametrize("integer", [False, True])
def test_lane_groups_of_mixed_lengths_and_sizes(integer: bool, decoded_in_lanes) -> None:
    """Groups that pad sentences of 1 to LANE_MAX_LEN words to their longest, partial groups,
    and sentences just above the limit, which go one at a time: every tree and score equals the
    one-at-a-time decoder's, in the default dispatch and with every short sentence in lanes."""
    rng = np.random.default_rng(90 + integer)
    lengths = [LANE_MAX_LEN + 1, LANE_MAX_LEN + 3, LANE_MAX_LEN] + rng.integers(
        1, LANE_MAX_LEN + 1, 24
    ).tolist()
    span_scores, arc_scores = _random_batch(rng, lengths, 9, np.float32, integer)
    alone = ALONE(span_scores, arc_scores, np.array(lengths))
    for sizes in ([27], [8, 8, 8, 3], [5, 22]):  # 4 groups of 4 or more; a group of 3; ...
        starts = np.cumsum([0] + sizes)
        for lanes in (None, True):
            parts = [
                joint_span_decode(span_scores[a:b], arc_scores[a:b], np.array(lengths[a:b]), lanes)
                for a, b in zip(starts[:-1], starts[1:])
            ]
            joined = tuple(sum((list(part[m]) for part in parts), []) for m in range(2))
            _assert_same(alone, joined + (np.concatenate([part[2] for part in parts]),))
    # The 25 short sentences of each part in groups of 8 and a last smaller one (the first 2
    # sentences are too long for lanes). lanes=True decodes every group in lanes; lanes=None
    # leaves to the one-at-a-time decoder the groups whose sentences weigh too little for their
    # longest length (sum of (length / longest)^2), hand-checked: every group of the parts of 8,
    # 8, 8 and 3 (e.g. 64, 44, 42, 24, 15, 7: 2.11 < 8) and of the part of 5; of the part of 27,
    # 64, 63, 55, 54, 51, 45, 45, 45 (5.54 < 8) and 44, 42, 35, 34, 34, 31, 27, 27 (4.99 < 5);
    # of the part of 22, 63, 55, 54, 51, 45, 45, 45, 44 (5.17 < 8). With integer scores (other
    # lengths): 64, 59, 58, 58, 54, 54, 54, 54 (6.34 < 8) and 53, 53, 48, 37, 33, 28, 28, 26
    # (4.49 < 7) of the part of 27, and 53, 37, 33, 28, 28, 26, 23, 19 (2.99 < 7) of the part
    # of 22, whose 59, 58, 58, 54, 54, 54, 54, 53 (7.09 >= 7) goes to the lanes.
    by_default = ([8, 1], [8, 6])
    assert decoded_in_lanes == (
        by_default[0] + [8, 8, 8, 1]  # one part of 27: lanes=None, then lanes=True
        + [] + [6, 8, 8, 3]  # parts of 8, 8, 8 and 3
        + by_default[1] + [3, 8, 8, 6]  # parts of 5 and 22
    )


@pytest.mark.parametrize(
    "lengths, in_lanes",
    [
        ([20], True), ([21], False), ([24, 24], True), ([25, 25], False), ([36] * 4, True),
        ([37] * 4, False), ([44] * 5, True), ([45] * 5, False), ([52] * 6, True),
        ([53] * 6, False), ([60] * 7, True), ([61] * 7, False), ([64] * 8, True),
        ([LANE_MAX_LEN + 1] * 8, False),
        # mixed lengths weigh (length / longest)^2 each: 1.31 < 5, 2.22 < 4, then 4.0 >= 4
        ([40, 20, 10], False), ([30, 30, 10, 10], False), ([30, 30, 30, 30, 15, 15, 15, 15], True),
    ],
)
def test_default_dispatch_by_group_size_and_length(lengths, in_lanes, decoded_in_lanes) -> None:
    """By default a group goes to the lanes from 1 sentence of up to 20 words, 2 of up to 24,
    4 of up to 36, 5 of up to 44, 6 of up to 52, 7 of up to 60 and 8 of up to 64 words (where
    the lanes were faster than one at a time), shorter sentences counting for less; the trees
    are the same either way."""
    rng = np.random.default_rng(sum(lengths))
    span_scores, arc_scores = _random_batch(rng, lengths, 5, np.float32)
    fast = joint_span_decode(span_scores, arc_scores, np.array(lengths))
    _assert_same(fast, ALONE(span_scores, arc_scores, np.array(lengths)))
    assert decoded_in_lanes == ([len(lengths)] if in_lanes else [])


def test_plan_follows_the_dispatch_rule_as_numpy_writes_it() -> None:
    """The compiled ``plan`` of a batch against the rule written with numpy: the short
    sentences sorted longest first (stable) and cut into groups of 8; a group kept where
    sum((length / longest)^2) (numpy's row sum) reaches the minimum for its longest length; the
    rest longest first. Random batches, with lengths on and around the thresholds."""
    from lal_allennlp.decoding.joint_span import _LANE_GROUP_LEN, _LANE_MIN_GROUP, _worth_lanes

    def by_numpy(lengths: np.ndarray, by_weight: bool):
        short = np.arange(len(lengths))[lengths <= LANE_MAX_LEN]
        ordered = short[np.argsort(-lengths[short], kind="stable")]
        groups = np.full((-(-len(ordered) // 8), 8), -1)
        groups.reshape(-1)[: len(ordered)] = ordered
        sizes = (groups >= 0).sum(axis=1)
        keep = np.ones(len(groups), dtype=bool)
        if by_weight and len(groups):
            longest = lengths[groups[:, 0]]
            weight = ((np.where(groups >= 0, lengths[groups], 0) / longest[:, None]) ** 2).sum(1)
            keep = weight >= _LANE_MIN_GROUP[np.searchsorted(_LANE_GROUP_LEN, longest)]
        grouped = np.isin(np.arange(len(lengths)), groups[keep])
        others = np.arange(len(lengths))[~grouped]
        return groups[keep], sizes[keep], others[np.argsort(-lengths[others], kind="stable")]

    rng = np.random.default_rng(7)
    kept = dropped = 0
    for trial in range(400):
        size = int(rng.integers(1, 50))
        if trial % 2:
            lengths = rng.choice([5, 20, 21, 24, 25, 36, 37, 44, 45, 64, 65], size)
        else:
            lengths = rng.integers(1, LANE_MAX_LEN + 8, size)
        lengths = lengths.astype(np.int64)
        for by_weight in (True, False):
            got = joint_span_lanes.plan(
                lengths, LANE_MAX_LEN, by_weight, _LANE_GROUP_LEN, _LANE_MIN_GROUP
            )
            for part, expected in zip(got, by_numpy(lengths, by_weight)):
                np.testing.assert_array_equal(part, expected)
        groups, _ = joint_span_lanes.group_order(lengths, np.arange(size)[lengths <= LANE_MAX_LEN])
        worth = _worth_lanes(lengths, groups)
        kept, dropped = kept + int(worth.sum()), dropped + int((~worth).sum())
    assert kept > 100 and dropped > 100  # the batches reach both sides of the rule


@pytest.mark.parametrize("n", [1, 2, 7, 8, 9, 15, 16, 17, 23, 40])
def test_s_and_e_cells_share_one_buffer_without_overlap(n) -> None:
    """S uses cells (a, b) with a < b for the heads h > a, E cells with a > b for the heads
    h <= a, of the same buffer: every such (cell, head), with the other lanes of its chunk, has
    its own index inside the buffer, a block's cells follow one another, and every cell b of
    every block lies inside the buffer (the kernels read some that they ignore)."""
    from lal_allennlp.decoding.joint_span import _cell, _row_length, _se_layout

    size = n + 1
    chunks = _row_length(size) // 8
    rows = np.empty(size * chunks, dtype=np.int64)
    total = _se_layout(n, rows)
    used = [
        _cell(a, b, h, rows, chunks)
        for a in range(size)
        for b in range(size)
        if a != b
        for c in range(chunks)
        # a chunk (heads 8 c + 1 .. 8 c + 8) with heads > a (S), <= a (E)
        if (c >= a // 8 if b > a else c <= (a - 1) // 8)
        for h in range(8 * c + 1, 8 * c + 9)
    ]
    assert len(set(used)) == len(used)
    every = [_cell(a, b, h, rows, chunks) for a in range(size) for b in range(size) for h in (1,)]
    every += [_cell(a, b, 8 * chunks, rows, chunks) for a in range(size) for b in range(size)]
    assert min(every) >= 0 and max(every) < total
    for a in range(size):  # the split point k is the contiguous axis, 8 lanes apart
        for h in range(1, 8 * chunks + 1):
            assert _cell(a, 2, h, rows, chunks) - _cell(a, 1, h, rows, chunks) == 8


def test_s_and_e_chart_leaves_out_the_cells_no_kernel_uses() -> None:
    """At 1,000 words the S/E chart holds about 2 n^3 / 3 numbers, not the n^3 of whole cells
    of n + 1 heads (the chunks of margin add about 3 n^2)."""
    from lal_allennlp.decoding.joint_span import _row_length, _se_layout

    n = 1000
    chunks = _row_length(n + 1) // 8
    whole = (n + 1) ** 2 * 8 * chunks
    total = _se_layout(n, np.empty((n + 1) * chunks, dtype=np.int64))
    assert 2 / 3 * whole < total < 0.68 * whole


def test_150_words() -> None:
    rng = np.random.default_rng(70)
    n = 150
    span_scores, arc_scores = _random_batch(rng, [n], 20, np.float32)
    spans, heads, scores = joint_span_decode(span_scores, arc_scores, np.array([n]))
    _check_joint_tree(spans[0], heads[0], n, 20)
    recomputed = _tree_score(spans[0], heads[0], span_scores[0], arc_scores[0])
    assert scores[0] == pytest.approx(recomputed, rel=1e-5)


@pytest.mark.parametrize("device_id, features, reported", [
    ("0x0005", "0110010000", True),  # a memory balloon with free page reporting (bit 5)
    ("0x0005", "0110000000", False),  # a balloon without it
    ("0x0001", "0000010000", False),  # bit 5 of another device (a network card) means nothing
])
def test_free_page_reporting_is_read_from_the_virtio_devices(
    tmp_path, device_id: str, features: str, reported: bool
) -> None:
    from lal_allennlp.decoding.joint_span import _free_pages_reported

    (tmp_path / "virtio0").mkdir()  # a device whose files cannot be read is passed over
    (tmp_path / "virtio1").mkdir()
    (tmp_path / "virtio1" / "device").write_text(device_id + "\n")
    (tmp_path / "virtio1" / "features").write_text(features + "\n")
    assert _free_pages_reported(str(tmp_path)) is reported
    assert _free_pages_reported(str(tmp_path / "absent")) is False  # not a virtual machine


@pytest.mark.parametrize("choice", ["0", "1"])
def test_workspace_pages_are_zeroed_and_aligned_either_way(monkeypatch, choice: str) -> None:
    """``LAL_DECODER_HUGE_PAGES``: large workspaces come from numpy (huge pages) with 1, from an
    anonymous mapping of 4 KiB pages with 0; small ones always from numpy."""
    import mmap

    from lal_allennlp.decoding import joint_span
    from lal_allennlp.decoding.joint_span import _aligned_buffer_set

    monkeypatch.setenv("LAL_DECODER_HUGE_PAGES", choice)
    monkeypatch.setattr(joint_span, "_LARGE_WORKSPACE_BYTES", 1 << 20)  # "large": over 1 MiB
    count = (1 << 20) // 4 // 3 + 5
    first, buffers = _aligned_buffer_set(3, (17, count), np.float32)
    for view, cells in ((first, 17), (buffers, count)):
        assert view.shape[0] == 3 and view.shape[1] >= cells and view.flags.writeable
        assert view.ctypes.data % 64 == 0 and view.strides[0] % 64 == 0
        assert not view.any()
    first[:] = 1.0  # the views of the one allocation do not overlap
    assert not buffers.any()

    def memory_owner(array: np.ndarray):
        while isinstance(array.base, np.ndarray):
            array = array.base
        base = array.base  # None where numpy allocated the memory
        return base.obj if isinstance(base, memoryview) else base

    assert isinstance(memory_owner(buffers), mmap.mmap) is (choice == "0")
    buffers[-1, -1] = 1.0  # writable to the last element
    assert memory_owner(_aligned_buffer_set(2, (100,), np.float32)[0]) is None


def test_workspace_pages_do_not_change_the_trees(monkeypatch) -> None:
    """A sentence whose workspace is large enough for the choice of pages to apply decodes to the
    same bits with either."""
    from lal_allennlp.decoding import joint_span

    n = 140
    monkeypatch.setattr(joint_span, "_LARGE_WORKSPACE_BYTES", 1 << 20)
    assert joint_span.workspace_bytes(n, np.float32) > 4 << 20
    span_scores, arc_scores = _random_batch(np.random.default_rng(72), [n, n - 9], 7, np.float32)
    results = []
    for choice in ("0", "1"):
        monkeypatch.setenv("LAL_DECODER_HUGE_PAGES", choice)
        results.append(ALONE(span_scores, arc_scores, np.array([n, n - 9])))
    monkeypatch.setenv("LAL_DECODER_HUGE_PAGES", "yes")  # a typo: warned about, not fatal
    joint_span._page_choice.cache_clear()  # warned once per value and process
    with pytest.warns(UserWarning, match="LAL_DECODER_HUGE_PAGES='yes' is neither 0 nor 1"):
        results.append(ALONE(span_scores, arc_scores, np.array([n, n - 9])))
    _assert_same(results[0], results[1])
    _assert_same(results[0], results[2])


def test_long_sentences_whose_tiles_prefetch_equal_n5() -> None:
    """From ``_TILE_AHEAD_FROM`` words the split tiles prefetch their next operands (other code
    than the shorter sentences of the tests above): still bit-identical to the O(n^5)
    recurrence, on a length with full blocks of ends only and one with a partial last block."""
    rng = np.random.default_rng(71)
    lengths = [_TILE_AHEAD_FROM, _TILE_AHEAD_FROM + 7]
    span_scores, arc_scores = _random_batch(rng, lengths, 6, np.float32)
    fast = joint_span_decode(span_scores, arc_scores, np.array(lengths))
    _assert_same(fast, joint_span_decode_n5(span_scores, arc_scores, np.array(lengths)))


@pytest.mark.parametrize(
    "cpu_name, cpu_features, registers",
    [
        (None, "+avx,+avx2,+avx512f,+avx512vl", 32),
        (None, "+avx,+avx2,-avx512f,-avx512vl", 16),
        ("skylake-avx512", "+avx2,+avx512vl", 32),
        ("generic", None, 16),  # a named target without its features
    ],
)
def test_tile_shape_follows_the_target_cpu(monkeypatch, cpu_name, cpu_features, registers):
    """4 x 4 tiles need the 32 vector registers of AVX-512VL; the check reads numba's target."""
    import numba

    from lal_allennlp.decoding.joint_span import _vector_registers

    monkeypatch.setattr(numba.config, "CPU_NAME", cpu_name)
    monkeypatch.setattr(numba.config, "CPU_FEATURES", cpu_features)
    assert _vector_registers() == registers


@pytest.mark.parametrize(
    "cpu_name, cpu_features, by_fma",
    [
        (None, "+avx,+avx2,+fma", True),
        (None, "+avx,+avx2,-fma", False),
        ("znver4", "+avx,+avx2,+fma,+avx512vl", True),
        (None, "+neon,+fp-armv8", False),  # not x86
        ("generic", None, False),  # a named target without its features
    ],
)
def test_adds_by_fma_follow_the_target_cpu(monkeypatch, cpu_name, cpu_features, by_fma):
    import numba

    from lal_allennlp.decoding.joint_span import _sums_by_fma

    monkeypatch.setattr(numba.config, "CPU_NAME", cpu_name)
    monkeypatch.setattr(numba.config, "CPU_FEATURES", cpu_features)
    assert _sums_by_fma() == by_fma


def test_a_baseline_x86_target_gives_the_same_bits(tmp_path) -> None:
    """Compiled for baseline x86-64 (no FMA: plain adds; 16 vector registers: 4 x 2 tiles), in a
    fresh process with its own numba cache, the decoder returns the trees and scores of this
    process's build (with FMA adds and, with AVX-512, 4 x 4 tiles where the CPU has them), in
    both layouts, float32: a sentence long enough for tiled blocks, and a group for the lanes."""
    import os
    import subprocess
    import sys

    rng = np.random.default_rng(7)
    lengths = [70, 40, 30, 30, 29, 30, 28, 30, 30, 5]
    span_scores, arc_scores = _random_batch(rng, lengths, 6, np.float32)
    np.savez(tmp_path / "batch.npz", span=span_scores, arc=arc_scores, lengths=lengths)
    script = """
import sys
import numpy as np
from lal_allennlp.decoding import joint_span
assert not joint_span._SUMS_BY_FMA and joint_span._TILE_ENDS == 2
batch = np.load(sys.argv[1])
out = {}
for lanes in (False, True):
    spans, heads, scores = joint_span.joint_span_decode(
        batch["span"], batch["arc"], batch["lengths"], lanes
    )
    out[f"{lanes}_spans"] = np.concatenate(spans)
    out[f"{lanes}_heads"] = np.concatenate(heads)
    out[f"{lanes}_scores"] = scores
np.savez(sys.argv[2], **out)
"""
    env = dict(
        os.environ, NUMBA_CPU_NAME="x86-64", NUMBA_CACHE_DIR=str(tmp_path / "numba_cache")
    )
    env.pop("NUMBA_CPU_FEATURES", None)
    subprocess.run(
        [sys.executable, "-c", script, str(tmp_path / "batch.npz"), str(tmp_path / "out.npz")],
        check=True,
        env=env,
        cwd=os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
    )
    baseline = np.load(tmp_path / "out.npz")
    for lanes in (False, True):
        spans, heads, scores = joint_span_decode(span_scores, arc_scores, np.array(lengths), lanes)
        np.testing.assert_array_equal(baseline[f"{lanes}_spans"], np.concatenate(spans))
        np.testing.assert_array_equal(baseline[f"{lanes}_heads"], np.concatenate(heads))
        np.testing.assert_array_equal(baseline[f"{lanes}_scores"], scores)


def test_bad_inputs_are_reported() -> None:
    span_scores, arc_scores = np.zeros((1, 4, 4, 5)), np.zeros((1, 4, 4))
    with pytest.raises(ValueError, match="at least 3"):
        joint_span_decode(np.zeros((1, 4, 4, 2)), arc_scores, np.array([3]))
    with pytest.raises(ValueError, match="arc_scores"):
        joint_span_decode(span_scores, np.zeros((1, 4, 5)), np.array([3]))
    with pytest.raises(ValueError, match="lengths"):
        joint_span_decode(span_scores, arc_scores, np.array([4]))
    assert joint_span_decode(np.zeros((0, 4, 4, 5)), np.zeros((0, 4, 4)), np.zeros(0))[2].shape == (
        0,
    )


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_node_label_is_the_smallest_maximiser(dtype) -> None:
    """The traceback's label search skips whole blocks of labels: it must still return the
    smallest maximiser wherever it lies (ties within and across blocks, at a block's edge, in a
    last partial block, rows of -inf), and the empty label when that scores at least as much
    (a ``multi`` role)."""
    rng = np.random.default_rng(62)
    for num_labels in (3, 16, 17, 18, 19, 33, 112):
        for case in range(300):
            row = rng.integers(-4, 2, num_labels).astype(dtype)  # few values: many ties
            if case % 10 == 0:
                row[:] = -np.inf
            elif case % 10 == 1:  # one maximiser, anywhere
                row[rng.integers(0, num_labels)] = 5
            first = 1 + case % 2  # <H> allowed or not
            one_value = row[first:].max()
            for use_one in (True, False):
                if not use_one and row[EMPTY] >= one_value:
                    expected = EMPTY
                else:
                    expected = first + int(np.argmax(row[first:] == one_value))
                got = _node_label(row, first, one_value, use_one)
                assert got == expected, (row.tolist(), first, use_one)
