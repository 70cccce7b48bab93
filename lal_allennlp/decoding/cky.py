"""Fast batched CKY chart decoder for span-based constituency parsing (numba, CPU).

Implements the chart decoder of Stern, Andreas & Klein (2017), "A Minimal Span-Based Neural
Constituency Parser" (ACL), in the form used by Kitaev & Klein (2018), "Constituency Parsing with
a Self-Attentive Encoder" (ACL), sec. 2. A sentence of n words has fenceposts 0..n; a binary tree
is a set of 2n - 1 spans (i, j) (all length-1 spans and (0, n) included), each with a label id in
[0, L) where label 0 means "no constituent" and is scored like any other label. The tree score is
the sum of its span-label scores, so the best tree is

    best[i, j] = max_l s[i, j, l] + (0 if j - i == 1 else max_{i < k < j} best[i, k] + best[k, j]).

With gold labels the decode is cost-augmented with the Hamming loss used for margin training
(Stern et al. 2017; Kitaev & Klein 2018, sec. 2): every span-label pair with
``l != gold[i, j]`` scores +1. Ties are broken deterministically: smallest label id, then smallest
split k, identically to the readable reference :mod:`tests.oracles.cky_reference`.

Design (the benchmark is ``benchmarks/cky_speed.py``):

* One numba call decodes the whole batch; workers are parallel over sentences (``prange``), the
  sentences are dealt out longest-first so that the workers finish together, and each worker
  reuses one O(max_len^2) workspace.
* Each sentence goes through three phases: the label pass (:func:`_label_pass`), the chart fill
  (:func:`_fill_chart`) and the traceback (:func:`_trace_back`), inlined into the batch kernel.
* The chart only needs ``max_l s[i, j, l]``, not the argmax, so the label pass is a pure max
  reduction over each span's L contiguous scores, read once in row-major (streaming) order with
  the vectorisable max of :mod:`~lal_allennlp.decoding.kernels`. Argmax labels and split points
  are recovered only for the 2n - 1 spans of the best tree when tracing back, by finding the first
  index that reaches the max: no backpointer chart is kept at all.
* The best-score chart is stored symmetrically, ``chart[i, j] == chart[j, i]``, so for span (i, j)
  both operands of ``chart[i, k] + chart[k, j]`` are contiguous rows (``chart[i, i+1:j]`` and
  ``chart[j, i+1:j]``) and the split max vectorises too.
* Maxima are exact whatever the reduction order, so the fastmath flags (no-NaN / no-signed-zero
  only) do not change results or tie-breaking; NaN scores in the cells that are read are not
  supported (-inf is fine). Chart sums are float64 whatever the input dtype.
"""

from typing import List, Optional, Tuple

import numba
import numpy as np
from numba import njit, prange

from lal_allennlp.decoding.kernels import FASTMATH, first_equal, maxnum, segment_max

__all__ = ["cky_decode"]


@njit(cache=True, fastmath=FASTMATH)
def _label_max(row, gold_label, use_gold):  # pragma: no cover - compiled code
    """max_l of the (cost-augmented) score of one span, as float64. row: (num_labels,)."""
    num_labels = row.shape[0]
    if not use_gold:
        return np.float64(segment_max(row))
    if gold_label < 0 or gold_label >= num_labels:
        return np.float64(segment_max(row)) + 1.0
    # fl(max(x) + 1) == max(fl(x + 1)) since rounding is monotone: same value as the reference.
    m = np.float64(row[gold_label])
    if gold_label > 0:
        m = max(m, np.float64(segment_max(row[:gold_label])) + 1.0)
    if gold_label + 1 < num_labels:
        m = max(m, np.float64(segment_max(row[gold_label + 1 :])) + 1.0)
    return m


@njit(cache=True, fastmath=FASTMATH)
def _label_argmax(row, gold_label, use_gold, target):  # pragma: no cover - compiled code
    """Smallest label whose (cost-augmented) float64 score equals ``target`` (the max)."""
    num_labels = row.shape[0]
    if use_gold:
        for l in range(num_labels):
            value = np.float64(row[l])
            if l != gold_label:
                value += 1.0
            if value == target:
                return l
        return 0  # unreachable for finite scores
    native_target = row.dtype.type(target)  # exact: target is a row value widened to float64
    label = first_equal(row, 0, native_target)
    if label < num_labels:
        return label
    return 0  # unreachable for finite scores


@njit(cache=True, fastmath=FASTMATH, inline="always")
def _label_pass(sent, gold, b, use_gold, n, label_max):  # pragma: no cover - compiled code
    """label_max[i, j] = max_l (cost-augmented) sent[i, j, l] for 0 <= i < j <= n.

    sent: (>= n + 1, >= n + 1, L); gold: (B, >= n + 1, >= n + 1), sentence b's read only if
    use_gold; label_max: (n + 1, n + 1), upper triangle written. Streams every span's L
    scores once, in memory order.
    """
    for i in range(n):
        for j in range(i + 1, n + 1):
            g = gold[b, i, j] if use_gold else -1
            label_max[i, j] = _label_max(sent[i, j], g, use_gold)


@njit(cache=True, fastmath=FASTMATH, inline="always")
def _fill_chart(label_max, n, chart):  # pragma: no cover - compiled code
    """CKY over the best scores only (no backpointers), by increasing span length.

    label_max: (n + 1, n + 1) from the label pass; chart: (n + 1, n + 1), filled symmetrically,
    chart[i, j] == chart[j, i] == best[i, j] for i < j. Returns best[0, n].
    """
    for i in range(n):
        chart[i, i + 1] = label_max[i, i + 1]
        chart[i + 1, i] = label_max[i, i + 1]
    for length in range(2, n + 1):
        for i in range(n - length + 1):
            j = i + length
            # Zero-based slices: a loop from 0 vectorises, one from i + 2 does not.
            left = chart[i, i + 1 : j]  # left[k - i - 1] = best[i, k]
            right = chart[j, i + 1 : j]  # right[k - i - 1] = best[k, j]
            split = left[0] + right[0]
            for k in range(1, length - 1):
                split = maxnum(split, left[k] + right[k])
            value = label_max[i, j] + split
            chart[i, j] = value
            chart[j, i] = value
    return chart[0, n]


@njit(cache=True, fastmath=FASTMATH, inline="always")
def _best_split(chart, i, j):  # pragma: no cover - compiled code
    """The smallest split k in (i, j) that maximises best[i, k] + best[k, j] (j - i >= 2)."""
    left = chart[i, i + 1 : j]  # left[k - i - 1] = best[i, k]
    right = chart[j, i + 1 : j]  # right[k - i - 1] = best[k, j]
    best_k = 0
    best_split = left[0] + right[0]
    for k in range(1, j - i - 1):
        value = left[k] + right[k]
        if value > best_split:  # strict: smallest k among ties
            best_split = value
            best_k = k
    return best_k + i + 1


@njit(cache=True, fastmath=FASTMATH, inline="always")
def _trace_back(
    sent, gold, b, use_gold, label_max, chart, n, stack, out_spans, pos
):  # pragma: no cover - compiled code
    """Write the 2n - 1 spans of the best tree to out_spans[pos : pos + 2n - 1], rows
    (i, j, label) in pre-order, recovering each span's label and split from label_max and the
    chart. gold: as for `_label_pass`.

    stack: (>= n + 1, 2) int64 workspace of pending (i, j).
    """
    stack[0, 0] = 0
    stack[0, 1] = n
    top = 1
    while top > 0:
        top -= 1
        i = stack[top, 0]
        j = stack[top, 1]
        g = gold[b, i, j] if use_gold else -1
        out_spans[pos, 0] = i
        out_spans[pos, 1] = j
        out_spans[pos, 2] = _label_argmax(sent[i, j], g, use_gold, label_max[i, j])
        pos += 1
        if j - i > 1:
            k = _best_split(chart, i, j)
            stack[top, 0] = k  # right child popped after the whole left subtree
            stack[top, 1] = j
            stack[top + 1, 0] = i
            stack[top + 1, 1] = k
            top += 2


@njit(cache=True, parallel=True, fastmath=FASTMATH)
def _cky_batch(
    scores, lengths, gold, use_gold, order, num_workers, offsets, out_spans, out_scores
):  # pragma: no cover - compiled code
    """Decode every sentence: fills out_spans (sum(2 * lengths - 1), 3) and out_scores (B,).

    scores: (B, max_len + 1, max_len + 1, L) float32/float64, C-contiguous; lengths: (B,) int64;
    gold: (B, max_len + 1, max_len + 1) int64 (a dummy (1, 1, 1) unless use_gold); order: (B,)
    sentence ids, longest first; worker w decodes order[w], order[w + num_workers], ...;
    sentence b's spans go to out_spans[offsets[b] : offsets[b] + 2 * lengths[b] - 1].
    """
    batch_size = scores.shape[0]
    max_fence = scores.shape[1]  # max_len + 1
    for worker in prange(num_workers):
        chart_buf = np.empty(max_fence * max_fence, dtype=np.float64)
        label_buf = np.empty(max_fence * max_fence, dtype=np.float64)
        stack = np.empty((max_fence + 1, 2), dtype=np.int64)
        for t in range(worker, batch_size, num_workers):
            b = order[t]
            n = lengths[b]
            sent = scores[b]  # (max_len + 1, max_len + 1, L)
            # Compact (n + 1, n + 1) views so short sentences stay cache-resident.
            chart = chart_buf[: (n + 1) * (n + 1)].reshape((n + 1, n + 1))
            label_max = label_buf[: (n + 1) * (n + 1)].reshape((n + 1, n + 1))
            _label_pass(sent, gold, b, use_gold, n, label_max)
            out_scores[b] = _fill_chart(label_max, n, chart)
            # sentence b's 2n - 1 spans from out_spans[offsets[b]] on
            _trace_back(sent, gold, b, use_gold, label_max, chart, n, stack, out_spans, offsets[b])


def cky_decode(
    label_scores: np.ndarray,
    lengths: np.ndarray,
    gold_labels: Optional[np.ndarray] = None,
) -> Tuple[List[np.ndarray], np.ndarray]:
    """Decode the best (optionally cost-augmented) binary tree of every sentence in a batch.

    Parameters
    ----------
    label_scores : ``np.ndarray``, float32 or float64, shape (batch, max_len + 1, max_len + 1, L)
        ``[b, i, j, l]`` is the score of span (i, j) with label l. Cells with j <= i or
        j > lengths[b] are never read (may hold garbage). Other float dtypes are cast to float64;
        non-contiguous input is copied.
    lengths : ``np.ndarray``, int, shape (batch,)
        Sentence lengths in words, each in [1, max_len].
    gold_labels : ``np.ndarray``, optional, int, shape (batch, max_len + 1, max_len + 1)
        Gold label ids (0 for non-constituents). If given, the decode is cost-augmented: every
        span-label pair with ``l != gold_labels[b, i, j]`` scores +1.

    Returns
    -------
    spans : ``List[np.ndarray]``
        ``spans[b]`` is int64 of shape (2 * lengths[b] - 1, 3), rows (i, j, label) sorted by
        (i, -j), i.e. pre-order (parent before children). Label 0 may appear. (The arrays are
        views of one packed (sum(2 * lengths - 1), 3) buffer.)
    scores : ``np.ndarray``, float64, shape (batch,)
        The (cost-augmented) score of each best tree.
    """
    label_scores = np.asarray(label_scores)
    if label_scores.dtype != np.float32 and label_scores.dtype != np.float64:
        label_scores = label_scores.astype(np.float64)
    label_scores = np.ascontiguousarray(label_scores)
    if label_scores.ndim != 4 or label_scores.shape[1] != label_scores.shape[2]:
        raise ValueError(f"label_scores must be (B, N + 1, N + 1, L), got {label_scores.shape}")
    batch_size, max_fence, _, num_labels = label_scores.shape
    if num_labels < 1:
        raise ValueError("label_scores needs at least one label")
    lengths = np.ascontiguousarray(lengths, dtype=np.int64).reshape(-1)
    if lengths.shape[0] != batch_size:
        raise ValueError(f"lengths has shape {lengths.shape}, expected ({batch_size},)")
    if batch_size == 0:
        return [], np.zeros(0, dtype=np.float64)
    if lengths.min() < 1 or lengths.max() > max_fence - 1:
        raise ValueError(f"lengths must be in [1, {max_fence - 1}], got {lengths}")
    if gold_labels is None:
        use_gold = False
        gold = np.zeros((1, 1, 1), dtype=np.int64)
    else:
        use_gold = True
        gold = np.ascontiguousarray(gold_labels, dtype=np.int64)
        if gold.shape != (batch_size, max_fence, max_fence):
            raise ValueError(
                f"gold_labels has shape {gold.shape}, expected {(batch_size, max_fence, max_fence)}"
            )

    order = np.argsort(-lengths, kind="stable")  # longest first, dealt round-robin to workers
    num_workers = max(1, min(numba.get_num_threads(), batch_size))
    # (batch,) sentence b's spans are out_spans[starts[b] : ends[b]] in the packed output
    ends = np.cumsum(2 * lengths - 1)
    starts = ends - (2 * lengths - 1)
    out_spans = np.empty((int(ends[-1]), 3), dtype=np.int64)  # all sentences' spans, packed
    out_scores = np.empty(batch_size, dtype=np.float64)
    _cky_batch(
        label_scores, lengths, gold, use_gold, order, num_workers, starts, out_spans, out_scores
    )
    spans = [out_spans[start:end] for start, end in zip(starts.tolist(), ends.tolist())]
    return spans, out_scores
