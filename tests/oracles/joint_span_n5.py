"""The authors' O(n^5) joint-span recurrence, compiled with numba: the oracle of the O(n^4) decoder.

Zhou & Zhao (2019), "Head-Driven Phrase Structure Grammar Parsing on Penn Treebank" (ACL),
sec. 3.3, decode with the recurrence of their ``hpsg_decoder.pyx``: for every span, loops over
split k, left head, right head, with value and back-pointer charts and strict ``>`` updates.
:func:`joint_span_decode_n5` runs that recurrence with the semantics, arithmetic order and tie
rules written out in :mod:`lal_allennlp.decoding.joint_span`, so it returns the same bits as
``joint_span_decode``. Being compiled and batched like the library decoder, it is fast enough to
compare the two on thousands of charts, and ``benchmarks/joint_span_speed.py`` times it as the
authors' baseline. The label tables and labels of the nodes are written here again, plainly,
rather than taken from the library.
"""

from typing import List, Tuple

import numpy as np
from numba import njit

from lal_allennlp.decoding.joint_span import EMPTY, SUB_HEAD

__all__ = ["joint_span_decode_n5"]

_ROLE_HEAD, _ROLE_DEP, _ROLE_ROOT = 0, 1, 2


@njit(cache=True)
def _first_label(i, j, n):  # pragma: no cover - compiled code
    """Smallest label id allowed for a non-empty span (i, j): no <H> on words or the sentence."""
    return SUB_HEAD + 1 if j - i == 1 or j - i == n else SUB_HEAD


@njit(cache=True)
def _label_tables(sent, n, label_one, label_multi):  # pragma: no cover - compiled code
    """label_one[i, j] = best allowed non-empty score; label_multi[i, j] = max(that, empty)."""
    for i in range(n):
        for j in range(i + 1, n + 1):
            first = _first_label(i, j, n)
            best = sent[i, j, first]
            for label in range(first + 1, sent.shape[2]):
                if sent[i, j, label] > best:
                    best = sent[i, j, label]
            label_one[i, j] = best
            label_multi[i, j] = sent[i, j, EMPTY] if sent[i, j, EMPTY] > best else best


@njit(cache=True)
def _node_label(sent, label_one, i, j, n, role):  # pragma: no cover - compiled code
    """Label of node (i, j) in its role: the root and longer dependents take the smallest best
    non-empty label; head children and single-word dependents may be empty, which wins ties."""
    use_one = role == _ROLE_ROOT or (role == _ROLE_DEP and j - i > 1)
    if not use_one and sent[i, j, EMPTY] >= label_one[i, j]:
        return EMPTY
    first = _first_label(i, j, n)
    for label in range(first, sent.shape[2]):
        if sent[i, j, label] == label_one[i, j]:
            return label
    return first  # unreachable for finite scores


@njit(cache=True)
def _fill_charts(arc, n, label_one, label_multi, one, multi, split, child_head):  # pragma: no cover
    """The authors' loops: one, multi (value charts) and split, child_head (back-pointers) of
    every (span, head), by increasing span length."""
    for length in range(1, n + 1):
        for left in range(0, n + 1 - length):
            right = left + length
            if length == 1:
                one[left, right, right] = label_one[left, right]
                multi[left, right, right] = label_multi[left, right]
                continue
            for h in range(left + 1, right + 1):
                one[left, right, h] = -np.inf
                # Back-pointers of the first candidate, kept if no candidate beats -inf.
                split[left, right, h] = left + 1
                child_head[left, right, h] = left + 1 if h > left + 1 else left + 2
            for k in range(left + 1, right):
                for head_l in range(left + 1, k + 1):
                    for head_r in range(k + 1, right + 1):
                        # Head on the right: the left part (head head_l) depends on head_r.
                        if k - left == 1:  # a single-word dependent may be empty
                            dep_value = multi[left, k, head_l]
                        else:
                            dep_value = one[left, k, head_l]
                        value = (dep_value + arc[head_r, head_l]) + multi[k, right, head_r]
                        if value > one[left, right, head_r]:
                            one[left, right, head_r] = value
                            split[left, right, head_r] = k
                            child_head[left, right, head_r] = head_l
                        # Head on the left: the right part (head head_r) depends on head_l.
                        if right - k == 1:
                            dep_value = multi[k, right, head_r]
                        else:
                            dep_value = one[k, right, head_r]
                        value = (dep_value + arc[head_l, head_r]) + multi[left, k, head_l]
                        if value > one[left, right, head_l]:
                            one[left, right, head_l] = value
                            split[left, right, head_l] = k
                            child_head[left, right, head_l] = head_r
            one_score = label_one[left, right]
            multi_score = label_multi[left, right]
            for h in range(left + 1, right + 1):
                multi[left, right, h] = one[left, right, h] + multi_score
                one[left, right, h] = one[left, right, h] + one_score


@njit(cache=True)
def _trace_back(
    sent, n, root, label_one, split, child_head, stack, out_spans, out_heads
):  # pragma: no cover - compiled code
    """Follow the back-pointers from the root in pre-order: spans to out_spans (2n - 1, 3),
    heads to out_heads (n,). stack: (>= n + 1, 4) int64 workspace of (i, j, head, role)."""
    out_heads[root - 1] = 0
    stack[0, 0], stack[0, 1], stack[0, 2], stack[0, 3] = 0, n, root, _ROLE_ROOT
    top = 1
    pos = 0
    while top > 0:
        top -= 1
        i, j, h, role = stack[top, 0], stack[top, 1], stack[top, 2], stack[top, 3]
        out_spans[pos, 0] = i
        out_spans[pos, 1] = j
        out_spans[pos, 2] = _node_label(sent, label_one, i, j, n, role)
        pos += 1
        if j - i == 1:
            continue
        k = split[i, j, h]
        d = child_head[i, j, h]
        out_heads[d - 1] = h
        if h > k:  # right child heads (i, j): pushed first, popped after the left subtree
            stack[top, 0], stack[top, 1], stack[top, 2], stack[top, 3] = k, j, h, _ROLE_HEAD
            stack[top + 1, 0], stack[top + 1, 1] = i, k
            stack[top + 1, 2], stack[top + 1, 3] = d, _ROLE_DEP
        else:
            stack[top, 0], stack[top, 1], stack[top, 2], stack[top, 3] = k, j, d, _ROLE_DEP
            stack[top + 1, 0], stack[top + 1, 1] = i, k
            stack[top + 1, 2], stack[top + 1, 3] = h, _ROLE_HEAD
        top += 2


@njit(cache=True)
def _decode_sentence(
    sent, arc, n, one, multi, split, child_head, label_one, label_multi, stack, out_spans, out_heads
):  # pragma: no cover - compiled code
    """One sentence; returns the tree score. one, multi: (n + 1)^3 value charts; split,
    child_head: (n + 1)^3 int32 back-pointers; label_one, label_multi: (n + 1, n + 1)."""
    _label_tables(sent, n, label_one, label_multi)
    _fill_charts(arc, n, label_one, label_multi, one, multi, split, child_head)
    root = 1
    score = one[0, n, 1] + arc[0, 1]
    for h in range(2, n + 1):
        value = one[0, n, h] + arc[0, h]
        if value > score:
            score = value
            root = h
    _trace_back(sent, n, root, label_one, split, child_head, stack, out_spans, out_heads)
    return score


@njit(cache=True)
def _decode_batch(
    span_scores, arc_scores, lengths, order, out_spans, out_heads, out_scores
):  # pragma: no cover - compiled code
    """Every sentence of the batch, one after the other, longest first, reusing one workspace.
    Serial: an oracle compiles faster without numba's parallel loops, and is timed on one
    thread."""
    batch_size = span_scores.shape[0]
    size = lengths[order[0]] + 1
    one_buf = np.empty(size**3, dtype=span_scores.dtype)
    multi_buf = np.empty(size**3, dtype=span_scores.dtype)
    split_buf = np.zeros(size**3, dtype=np.int32)
    head_buf = np.zeros(size**3, dtype=np.int32)
    lab_buf = np.empty(2 * size * size, dtype=span_scores.dtype)
    stack = np.empty((size + 1, 4), dtype=np.int64)
    for t in range(batch_size):
        b = order[t]
        n = lengths[b]
        m = n + 1
        out_scores[b] = _decode_sentence(
            span_scores[b],
            arc_scores[b],
            n,
            one_buf[: m**3].reshape((m, m, m)),
            multi_buf[: m**3].reshape((m, m, m)),
            split_buf[: m**3].reshape((m, m, m)),
            head_buf[: m**3].reshape((m, m, m)),
            lab_buf[: m * m].reshape((m, m)),
            lab_buf[m * m : 2 * m * m].reshape((m, m)),
            stack,
            out_spans[b],
            out_heads[b],
        )


def joint_span_decode_n5(
    span_scores: np.ndarray, arc_scores: np.ndarray, lengths: np.ndarray
) -> Tuple[List[np.ndarray], List[np.ndarray], np.ndarray]:
    """``joint_span_decode`` by the authors' O(n^5) recurrence: same arguments, same results.

    span_scores: (batch, max_len + 1, max_len + 1, L), L >= 3; arc_scores: (batch, max_len + 1,
    max_len + 1) [head, dependent]; lengths: (batch,) in [1, max_len]. Returns spans[b] int64
    (2 n - 1, 3) in pre-order, heads[b] int64 (n,) and the float64 scores (batch,), computed in
    float32 if both inputs are float32, else in float64.
    """
    span_scores = np.asarray(span_scores)
    arc_scores = np.asarray(arc_scores)
    dtype = np.float32 if span_scores.dtype == arc_scores.dtype == np.float32 else np.float64
    span_scores = np.ascontiguousarray(span_scores, dtype=dtype)
    arc_scores = np.ascontiguousarray(arc_scores, dtype=dtype)
    lengths = np.ascontiguousarray(lengths, dtype=np.int64).reshape(-1)
    batch_size = span_scores.shape[0]
    if batch_size == 0:
        return [], [], np.zeros(0, dtype=np.float64)
    order = np.argsort(-lengths, kind="stable")
    max_len = int(lengths.max())
    out_spans = np.zeros((batch_size, 2 * max_len - 1, 3), dtype=np.int64)
    out_heads = np.zeros((batch_size, max_len), dtype=np.int64)
    out_scores = np.empty(batch_size, dtype=np.float64)
    _decode_batch(span_scores, arc_scores, lengths, order, out_spans, out_heads, out_scores)
    spans = [out_spans[b, : 2 * n - 1] for b, n in enumerate(lengths.tolist())]
    heads = [out_heads[b, :n] for b, n in enumerate(lengths.tolist())]
    return spans, heads, out_scores
