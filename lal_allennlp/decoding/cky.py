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

Speed notes (measured, see ``benchmarks/cky_speed.py``):

* One numba call decodes the whole batch; workers are parallel over sentences (``prange``), the
  sentences are dealt out longest-first, and each worker reuses one O(max_len^2) workspace.
* The chart only needs ``max_l s[i, j, l]``, not the argmax, so the label pass is a pure max
  reduction over each span's L contiguous scores, read once in row-major (streaming) order. It
  uses ``llvm.maxnum`` so that LLVM vectorises it (a plain ``if x > m`` loop stays scalar). Argmax
  labels and split points are recovered only for the 2n - 1 spans of the best tree when tracing
  back, by finding the first index that reaches the max: no backpointer chart is kept at all.
  The label pass is memory-bound at realistic sizes; a software prefetch a few spans ahead helps.
* The best-score chart is stored symmetrically, ``chart[i, j] == chart[j, i]``, so for span (i, j)
  both operands of ``chart[i, k] + chart[k, j]`` are contiguous rows (``chart[i, i+1:j]`` and
  ``chart[j, i+1:j]``) and the split max vectorises too.
* Maxima are exact whatever the reduction order, so fastmath (no-NaN / no-signed-zero only) does
  not change results or tie-breaking; NaN scores in the cells that are read are not supported
  (-inf is fine). Chart sums are float64 whatever the input dtype.
"""

from typing import List, Optional, Tuple

import numba
import numpy as np
from llvmlite import binding as llvm_binding
from llvmlite import ir
from numba import njit, prange
from numba.core import cgutils
from numba.extending import intrinsic

__all__ = ["cky_decode"]

# Only the flags that the max reductions need to vectorise; both are exact for finite inputs.
_FASTMATH = {"nnan", "nsz"}
_BLOCK = 16  # labels per block when searching for the argmax label
_PREFETCH_AHEAD = 4  # the label pass prefetches the span this many spans ahead (in memory order)
_OPAQUE_POINTERS = llvm_binding.llvm_version_info[0] >= 15
_PREFETCH_NAME = "llvm.prefetch.p0" if _OPAQUE_POINTERS else "llvm.prefetch.p0i8"


@intrinsic
def _maxnum(typingctx, a, b):  # pragma: no cover - compiled code
    """``llvm.maxnum`` on two floats of the same type (vectorisable max reduction)."""
    if a != b or not isinstance(a, numba.types.Float):
        return None
    sig = a(a, b)

    def codegen(context, builder, signature, args):
        llvm_type = args[0].type
        name = "llvm.maxnum.f32" if llvm_type == ir.FloatType() else "llvm.maxnum.f64"
        fn_type = ir.FunctionType(llvm_type, [llvm_type, llvm_type])
        fn = cgutils.get_or_insert_function(builder.module, fn_type, name)
        return builder.call(fn, args)

    return sig, codegen


@intrinsic
def _prefetch(typingctx, array, index):  # pragma: no cover - compiled code
    """Software prefetch (read, keep in all cache levels) of ``array[index]``; array: 1-d."""
    if not isinstance(array, numba.types.Array) or array.ndim != 1:
        return None
    sig = numba.types.void(array, index)

    def codegen(context, builder, signature, args):
        array_type = signature.args[0]
        array_struct = context.make_array(array_type)(context, builder, args[0])
        pointer = cgutils.get_item_pointer(
            context, builder, array_type, array_struct, [args[1]], wraparound=False
        )
        i8_ptr = ir.IntType(8).as_pointer()
        i32 = ir.IntType(32)
        fn_type = ir.FunctionType(ir.VoidType(), [i8_ptr, i32, i32, i32])
        fn = cgutils.get_or_insert_function(builder.module, fn_type, _PREFETCH_NAME)
        # (address, rw = read, locality = 3 (keep), cache type = data)
        args = [builder.bitcast(pointer, i8_ptr), ir.Constant(i32, 0), ir.Constant(i32, 3)]
        builder.call(fn, args + [ir.Constant(i32, 1)])
        return context.get_dummy_value()

    return sig, codegen


@njit(cache=True)
def _prefetch_row(row):  # pragma: no cover - compiled code
    """Prefetch every 64-byte cache line of a 1-d C-contiguous row."""
    for c in range(0, row.shape[0], max(1, 64 // row.itemsize)):
        _prefetch(row, c)


@njit(cache=True, fastmath=_FASTMATH)
def _seg_max(seg):  # pragma: no cover - compiled code
    """max(seg) in the segment's dtype; seg: non-empty 1-d C array (loop from 0 vectorises)."""
    m = seg[0]
    for l in range(1, seg.shape[0]):
        m = _maxnum(m, seg[l])
    return m


@njit(cache=True, fastmath=_FASTMATH)
def _label_max(row, gold_label, use_gold):  # pragma: no cover - compiled code
    """max_l of the (cost-augmented) score of one span, as float64. row: (num_labels,)."""
    num_labels = row.shape[0]
    if not use_gold:
        return np.float64(_seg_max(row))
    if gold_label < 0 or gold_label >= num_labels:
        return np.float64(_seg_max(row)) + 1.0
    # fl(max(x) + 1) == max(fl(x + 1)) since rounding is monotone: same value as the reference.
    m = np.float64(row[gold_label])
    if gold_label > 0:
        m = max(m, np.float64(_seg_max(row[:gold_label])) + 1.0)
    if gold_label + 1 < num_labels:
        m = max(m, np.float64(_seg_max(row[gold_label + 1 :])) + 1.0)
    return m


@njit(cache=True, fastmath=_FASTMATH)
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
    start = 0
    # Skip whole blocks whose (vectorised) max is below the target, then scan one block.
    while start + _BLOCK <= num_labels and _seg_max(row[start : start + _BLOCK]) != native_target:
        start += _BLOCK
    for l in range(start, num_labels):
        if row[l] == native_target:
            return l
    return 0  # unreachable for finite scores


@njit(cache=True, parallel=True, fastmath=_FASTMATH)
def _cky_batch(
    scores, lengths, gold, use_gold, order, num_workers, offsets, out_spans, out_scores
):  # pragma: no cover - compiled code
    """Decode every sentence: fills out_spans (sum(2 * lengths - 1), 3) and out_scores (B,).

    scores: (B, max_len + 1, max_len + 1, L) float32/float64, C-contiguous; lengths: (B,) int64;
    gold: (B, max_len + 1, max_len + 1) int64 (ignored unless use_gold); order: (B,) sentence ids,
    longest first; worker w decodes order[w], order[w + num_workers], ...; sentence b's spans go
    to out_spans[offsets[b] : offsets[b] + 2 * lengths[b] - 1].
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
            # chart[i, j] == chart[j, i] == best[i, j] (symmetric: both split operands contiguous)
            chart = chart_buf[: (n + 1) * (n + 1)].reshape((n + 1, n + 1))
            # label_max[i, j] = max_l (augmented) s[i, j, l], upper triangle only
            label_max = label_buf[: (n + 1) * (n + 1)].reshape((n + 1, n + 1))

            # 1. Label pass: stream every span's L scores once, in memory order.
            for i in range(n):
                for j in range(i + 1, n + 1):
                    # Prefetch the span _PREFETCH_AHEAD places further in this order: the rest
                    # of row i, then row i + 1 from (i + 1, i + 2). ~5-10% faster (measured).
                    ahead = j + _PREFETCH_AHEAD
                    if ahead <= n:
                        _prefetch_row(sent[i, ahead])
                    elif i + 1 + ahead - n <= n:
                        _prefetch_row(sent[i + 1, i + 1 + ahead - n])
                    g = gold[b, i, j] if use_gold else -1
                    label_max[i, j] = _label_max(sent[i, j], g, use_gold)

            # 2. CKY over the best scores only (no backpointers), by increasing span length.
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
                        split = _maxnum(split, left[k] + right[k])
                    value = label_max[i, j] + split
                    chart[i, j] = value
                    chart[j, i] = value
            out_scores[b] = chart[0, n]

            # 3. Trace back the 2n - 1 spans in pre-order, recovering argmaxes on the fly.
            stack[0, 0] = 0
            stack[0, 1] = n
            top = 1
            pos = offsets[b]
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
                    left = chart[i, i + 1 : j]
                    right = chart[j, i + 1 : j]
                    best_k = 0
                    best_split = left[0] + right[0]
                    for k in range(1, j - i - 1):
                        value = left[k] + right[k]
                        if value > best_split:  # strict: smallest k among ties
                            best_split = value
                            best_k = k
                    best_k += i + 1
                    stack[top, 0] = best_k  # right child popped after the whole left subtree
                    stack[top, 1] = j
                    stack[top + 1, 0] = i
                    stack[top + 1, 1] = best_k
                    top += 2


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
    ends = np.cumsum(
        2 * lengths - 1
    )  # (batch,) sentence b's spans end at ends[b] in the packed output
    starts = ends - (2 * lengths - 1)
    out_spans = np.empty((int(ends[-1]), 3), dtype=np.int64)  # all sentences' spans, packed
    out_scores = np.empty(batch_size, dtype=np.float64)
    _cky_batch(
        label_scores, lengths, gold, use_gold, order, num_workers, starts, out_spans, out_scores
    )
    spans = [out_spans[start:end] for start, end in zip(starts.tolist(), ends.tolist())]
    return spans, out_scores
