"""Tests for the joint-span decoder (Zhou & Zhao 2019, sec. 3.3; used unchanged by LAL-Parser).

``joint_span_decode`` (O(n^4)) must agree bit for bit with the authors' O(n^5) recurrence
(``joint_span_decode_n5``, compiled) and with the pure-Python reference, and with brute-force
enumeration of every joint structure (binary bracketing x head assignment x labelling) on short
sentences.
"""

import itertools
from functools import lru_cache
from typing import Dict, List, Tuple

import numpy as np
import pytest

from lal_allennlp.decoding.joint_span import EMPTY, SUB_HEAD, joint_span_decode
from lal_allennlp.decoding.joint_span_tables import node_label
from tests.oracles.joint_span_n5 import joint_span_decode_n5
from tests.oracles.joint_span_reference import joint_span_decode_reference

# The library's decoder and the authors' O(n^5) recurrence.
DECODERS = [joint_span_decode, joint_span_decode_n5]
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
    fast = joint_span_decode(span_scores, arc_scores, lengths)
    _assert_same(fast, joint_span_decode_n5(span_scores, arc_scores, lengths))
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
def test_fast_equals_n5_on_thousands_of_charts(dtype, integer: bool) -> None:
    """~1000 sentences per case; the reference too on the first sentences of each batch."""
    rng = np.random.default_rng(40 + 2 * integer + (dtype == np.float64))
    count = 0
    for _ in range(16):
        lengths = rng.integers(1, 15, 64).tolist()
        num_labels = int(rng.integers(3, 9))
        span_scores, arc_scores = _random_batch(rng, lengths, num_labels, dtype, integer)
        fast = joint_span_decode(span_scores, arc_scores, np.array(lengths))
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
def test_fast_equals_n5_vector_labels_and_blocks(dtype, integer: bool) -> None:
    """704 sentences per case of up to 26 words (several blocks of 8 ends, head chunks of up to
    4 x 8 lanes) with 10 or more labels, so that the label maxima take the 8-lane row
    kernel (including a last chunk that overlaps the one before it)."""
    rng = np.random.default_rng(45 + 2 * integer + (dtype == np.float64))
    count = 0
    for num_labels in (10, 11, 17, 18, 25, 112):
        for _ in range(2 if num_labels == 112 else 4):
            lengths = rng.integers(1, 27, 32).tolist()
            span_scores, arc_scores = _random_batch(rng, lengths, num_labels, dtype, integer)
            if integer:  # ties between the best label and labels 0, 1 and the last ones too
                span_scores[..., -1] = span_scores[..., 2]
            fast = joint_span_decode(span_scores, arc_scores, np.array(lengths))
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


def test_longer_sentences_and_many_labels() -> None:
    rng = np.random.default_rng(50)
    lengths = [60, 33, 1, 47]
    span_scores, arc_scores = _random_batch(rng, lengths, 112, np.float32)
    fast = joint_span_decode(span_scores, arc_scores, np.array(lengths))
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


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_longer_sentences_with_ties(dtype) -> None:
    """Sentences of 33 to 48 words with small integer scores (many exact ties): spans and
    outside head ranges of up to 6 chunks of 8 heads; the trees must equal the O(n^5)
    recurrence's, ties included."""
    rng = np.random.default_rng(80 + (dtype == np.float64))
    lengths = rng.integers(33, 49, 6).tolist()
    span_scores, arc_scores = _random_batch(rng, lengths, 12, dtype, integer=True)
    fast = joint_span_decode(span_scores, arc_scores, np.array(lengths))
    _assert_same(fast, joint_span_decode_n5(span_scores, arc_scores, np.array(lengths)))
    for b, n in enumerate(lengths):
        _check_joint_tree(fast[0][b], fast[1][b], n, 12)


@pytest.mark.parametrize("n", [1, 2, 7, 8, 9, 15, 16, 17, 23, 40])
def test_s_and_e_cells_share_one_buffer_without_overlap(n) -> None:
    """S uses cells (a, b) with a < b for the heads h > a, E cells with a > b for the heads
    h <= a, of the same buffer: every such (cell, head), with the other lanes of its chunk, has
    its own index inside the buffer, a block's cells follow one another, and every cell b of
    every block lies inside the buffer (its margins)."""
    from lal_allennlp.decoding.joint_span_one import cell, row_length, se_layout

    size = n + 1
    chunks = row_length(size) // 8
    rows = np.empty(size * chunks, dtype=np.int64)
    total = se_layout(n, rows)
    used = [
        cell(a, b, h, rows, chunks)
        for a in range(size)
        for b in range(size)
        if a != b
        for c in range(chunks)
        # a chunk (heads 8 c + 1 .. 8 c + 8) with heads > a (S), <= a (E)
        if (c >= a // 8 if b > a else c <= (a - 1) // 8)
        for h in range(8 * c + 1, 8 * c + 9)
    ]
    assert len(set(used)) == len(used)
    every = [cell(a, b, h, rows, chunks) for a in range(size) for b in range(size) for h in (1,)]
    every += [cell(a, b, 8 * chunks, rows, chunks) for a in range(size) for b in range(size)]
    assert min(every) >= 0 and max(every) < total
    for a in range(size):  # the split point k is the contiguous axis, 8 lanes apart
        for h in range(1, 8 * chunks + 1):
            assert cell(a, 2, h, rows, chunks) - cell(a, 1, h, rows, chunks) == 8


def test_s_and_e_chart_leaves_out_the_cells_no_kernel_uses() -> None:
    """At 1,000 words the S/E chart holds about 2 n^3 / 3 numbers, not the n^3 of whole cells
    of n + 1 heads."""
    from lal_allennlp.decoding.joint_span_one import row_length, se_layout

    n = 1000
    chunks = row_length(n + 1) // 8
    whole = (n + 1) ** 2 * 8 * chunks
    total = se_layout(n, np.empty((n + 1) * chunks, dtype=np.int64))
    assert 2 / 3 * whole < total < 0.68 * whole


def test_150_words() -> None:
    rng = np.random.default_rng(70)
    n = 150
    span_scores, arc_scores = _random_batch(rng, [n], 20, np.float32)
    spans, heads, scores = joint_span_decode(span_scores, arc_scores, np.array([n]))
    _check_joint_tree(spans[0], heads[0], n, 20)
    recomputed = _tree_score(spans[0], heads[0], span_scores[0], arc_scores[0])
    assert scores[0] == pytest.approx(recomputed, rel=1e-5)


def test_a_baseline_x86_target_gives_the_same_bits(tmp_path) -> None:
    """Compiled for baseline x86-64 (SSE2: each 8-lane vector in two or four registers), in a
    fresh process with its own numba cache, the decoder returns the trees and scores of this
    process's build for the host CPU, float32 and float64."""
    import os
    import subprocess
    import sys

    rng = np.random.default_rng(7)
    lengths = [70, 40, 30, 29, 5]
    span_scores, arc_scores = _random_batch(rng, lengths, 6, np.float32)
    np.savez(tmp_path / "batch.npz", span=span_scores, arc=arc_scores, lengths=lengths)
    script = """
import sys
import numpy as np
from lal_allennlp.decoding import joint_span_decode
batch = np.load(sys.argv[1])
out = {}
for dtype in ("float32", "float64"):
    spans, heads, scores = joint_span_decode(
        batch["span"].astype(dtype), batch["arc"].astype(dtype), batch["lengths"]
    )
    out[f"{dtype}_spans"] = np.concatenate(spans)
    out[f"{dtype}_heads"] = np.concatenate(heads)
    out[f"{dtype}_scores"] = scores
np.savez(sys.argv[2], **out)
"""
    env = dict(os.environ, NUMBA_CPU_NAME="x86-64", NUMBA_CACHE_DIR=str(tmp_path / "numba_cache"))
    env.pop("NUMBA_CPU_FEATURES", None)
    subprocess.run(
        [sys.executable, "-c", script, str(tmp_path / "batch.npz"), str(tmp_path / "out.npz")],
        check=True,
        env=env,
        cwd=os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
    )
    baseline = np.load(tmp_path / "out.npz")
    for dtype in ("float32", "float64"):
        spans, heads, scores = joint_span_decode(
            span_scores.astype(dtype), arc_scores.astype(dtype), np.array(lengths)
        )
        np.testing.assert_array_equal(baseline[f"{dtype}_spans"], np.concatenate(spans))
        np.testing.assert_array_equal(baseline[f"{dtype}_heads"], np.concatenate(heads))
        np.testing.assert_array_equal(baseline[f"{dtype}_scores"], scores)


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
    """The traceback's label search returns the smallest maximiser wherever it lies (ties, rows
    of -inf), and the empty label when that scores at least as much (a ``multi`` role)."""
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
                got = node_label(row, first, one_value, use_one)
                assert got == expected, (row.tolist(), first, use_one)
