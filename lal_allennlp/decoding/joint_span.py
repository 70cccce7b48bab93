"""Exact batched decoder for the joint span (HPSG-style) representation (numba, CPU).

Implements the decoder of Zhou & Zhao (2019), "Head-Driven Phrase Structure Grammar Parsing on Penn
Treebank" (ACL), sec. 3.3, used unchanged by Mrini et al. (2020), "Rethinking Self-Attention:
Towards Interpretability in Neural Parsing" (Findings of EMNLP, LAL-Parser): one binary tree over
the words whose every span has a head word, so that a constituency tree and a dependency tree are
decoded together. The authors' recurrence is O(n^5); this decoder computes the same maximum and
the same tree in O(n^4) (below), bit for bit. The authors' recurrence, compiled the same way, is
the oracle of the tests (:mod:`tests.oracles.joint_span_n5`).

Semantics (one sentence of n words, fenceposts 0..n, word w is span (w - 1, w))
-------------------------------------------------------------------------------
Inputs, combined exactly as given (the caller applies the lambda / 1 - lambda weights):

* ``span_scores[i, j, l]``, i < j: score of span (i, j) with label l; l = ``EMPTY`` (0) is "not a
  constituent", l = ``SUB_HEAD`` (1) is ``<H>`` (the sub-head node), 2..L-1 are phrase labels;
  L >= 3.
* ``arc_scores[h, d]``: score of the arc head h -> dependent word d, for d in 1..n and h in 0..n
  (h = 0 is the root). Column 0 and the diagonal are never read.

Label tables. ``one_label(i, j)`` is the best *non-empty* label of (i, j), where ``<H>`` is not
allowed on a single word (j - i == 1) nor on the whole sentence (j - i == n); ``multi_label(i, j)``
is the best of that and the empty label. Charts, for i < h <= j:

* ``one[i, j, h]``: best subtree over (i, j) headed by word h whose span takes ``one_label``;
* ``multi[i, j, h]``: the same whose span takes ``multi_label`` (may be empty);
* ``X[i, j, h]``: the value of (i, j, h) as a *dependent*: ``one``, except for a single word,
  where it is ``multi`` (a single-word dependent may be empty).

Single words: ``one[w-1, w, w] = one_label``, ``multi[w-1, w, w] = multi_label``. A longer span
(i, j) is split at i < k < j into two children; one child contains the head h (the *head child*,
``multi``), the head d of the other child (the *dependent child*, ``X``) attaches to h::

    raw[i, j, h] = max over k in (i, j) of
        if h > k:  max_{d in (i, k]}  (X[i, k, d] + arc[h, d]) + multi[k, j, h]    (head right)
        if h <= k: max_{d in (k, j]}  (X[k, j, d] + arc[h, d]) + multi[i, k, h]    (head left)
    one[i, j, h]   = raw[i, j, h] + score(one_label(i, j))
    multi[i, j, h] = raw[i, j, h] + score(multi_label(i, j))

Root: ``score = max_h one[0, n, h] + arc[0, h]`` (for n = 1, ``one[0, 1, 1] = one_label(0, 1)``).
The tree score is therefore the sum of the 2n - 1 chosen span-label scores and the n arc scores:
the whole sentence takes ``one_label``, every head child and every single-word dependent
``multi_label``, every longer dependent ``one_label``.

Arithmetic and ties (identical in the oracles :mod:`tests.oracles.joint_span_reference` and
:mod:`tests.oracles.joint_span_n5`):

* Everything is computed in the working dtype: float32 if both inputs are float32, else float64,
  with the additions grouped exactly as written above, so all implementations return the same
  bits. (The authors add ``X + multi`` first, then the arc; we add the arc first because the
  O(n^4) algorithm needs ``max_d (X + arc)`` as a unit. Exact values are the same; only the
  rounding of near-ties can differ from the authors' float32 code.)
* Ties: smallest root head h; then, in every span, smallest split k, then smallest dependent head
  d (this is the order of the authors' loops ``for k: for hl: for hr`` with strict ``>``); among
  labels the smallest label id, so empty beats an equal non-empty label (the authors do that for
  single words but prefer the non-empty label on longer spans; only exact ties are affected).
* For n = 1 the single span is the whole sentence and takes ``one_label`` (the authors' traceback
  prints the ``multi`` label there although their score uses ``one``).

Outputs: ``spans[b]`` int64 (2n - 1, 3) rows (i, j, label) in pre-order (parent, left subtree,
right subtree); ``heads[b]`` int64 (n,), ``heads[b][w - 1]`` = head of word w (0 = root);
``scores`` float64 (batch,), the tree scores (as computed in the working dtype).

The algorithm, O(n^4), exact
----------------------------
The O(n^5) recurrence maximises over (k, d) jointly. Since the split k fixes the dependent
child's span and the arc term only needs its head d, the max over d can be taken first, once per
(dependent span, outside head h) pair, and reused for every enclosing span::

    DL[i, k, h] = max_{d in (i, k]} X[i, k, d] + arc[h, d]    for h in (k, n]   (left dependent)
    DR[k, j, h] = max_{d in (k, j]} X[k, j, d] + arc[h, d]    for h in [1, k]   (right dependent)
    raw[i, j, h] = max_{k in (i, j)} (DL[i, k, h] + multi[k, j, h]  if h > k  else
                                      DR[k, j, h] + multi[i, k, h])

Computing DL/DR costs sum over spans of (j - i)(n - (j - i)) ~ n^4 / 12 and the split maximum
sum over spans of (j - i)(j - i - 1) ~ n^4 / 12 (the O(n^5) loop does 2 * n^5 / 120 candidate
updates). It is exact bit for bit because rounding is monotone: ``fl(fl(a) + c)`` is
non-decreasing in ``a``, so ``fl(max_d fl(X + arc) + multi) == max_d fl(fl(X + arc) + multi)``.

Layout: ``DL`` and ``multi`` of a span are stored in the free parts of two charts, ``S[i, k, h]``
(indexed by start: ``multi[i, k, h]`` for h in (i, k], ``DL[i, k, h]`` for h > k) and
``E[j, k, h]`` (indexed by end: ``DR[k, j, h]`` for h <= k, ``multi[k, j, h]`` for h in (k, j]),
so that for every h in (i, j]::

    raw[i, j, h] = max_{k in (i, j)} S[i, k, h] + E[j, k, h].

The charts are stored by chunks of 8 heads (:func:`_chunk_row`): for a start i (S) or an end j
(E) and a chunk of heads, the 8 lanes of k = 0, 1, ..., n follow one another. The split maximum
of a chunk of heads is then an 8-lane vector loop over k that reads two contiguous runs of
memory.

No back-pointers are kept: the traceback recomputes, for the 2n - 1 nodes of the best tree only,
the first (k, d) whose candidate equals the node's maximum (O(n) per node), which is the tie rule
above. Maxima are exact in any order, and the fastmath flags used (no-NaN, no-signed-zero) change
no result. ``-inf`` scores (masked labels or arcs) are supported; NaN and ``+inf`` are not.

Design (the benchmark is ``benchmarks/joint_span_speed.py``)
------------------------------------------------------------
* Each sentence goes through four phases: the label tables (:func:`_label_tables`), the chart
  fill (:func:`_fill_charts`: per span, :func:`_span_value` then :func:`_attach_outside`), the
  root (:func:`_best_root`) and the traceback (:func:`_trace_back`).
* Both hot loops (split maximum, DL/DR) are 8-lane ``<8 x float>`` LLVM vector code with the
  accumulator in a register (:func:`_split_max`, :func:`_max_of_broadcast_sums`): LLVM's own loop
  vectoriser only enters its vector body for 32 or more iterations, and most loops here are
  shorter. The maxima carry the no-NaN flag, so that LLVM emits one ``vmaxps`` each (``maxnum``
  without it adds a compare and a blend to handle NaN).
* Every kernel works on whole chunks of 8 heads, 8 c + 1 .. 8 c + 8 (head h in lane h - 1:
  the root, h = 0, has no cells), and the workspaces start on a 64-byte boundary, so the vector
  loads and stores are aligned and never straddle two cache lines. The heads of a chunk outside
  the range are computed and never read, or, where DL/DR share a chunk with a span's own heads,
  masked out of the store. With the chunks starting at word 1, the heads of a sentence of a
  multiple of 8 words fill whole chunks, and the 8 ends of a block (:func:`_fill_charts`) lie in
  one chunk, so no loop runs over a chunk that holds a single head.
* The chunked layout is for long sentences. With one row of heads per (start or end, k), the
  split maximum reads one chunk from each of j - i rows, a row (4 KB at 1,000 words) apart, and
  on long sentences that costs several times the arithmetic (``benchmarks/README.md``). Writes
  are the other way round: a span's values go to one chunk in each of (n + 1) / 8 places, but
  there are O(n^3) writes against O(n^4) reads. On short sentences, where the charts fit in
  the caches, the chunked layout costs a little: the outside attachments then go by whole
  chunks, which often takes one more 8-lane step than groups of 8 heads from j + 1 would
  (about a tenth of the time at 40 words, nothing measurable at 80).
* Spans are filled in blocks of 8 consecutive ends (:func:`_fill_charts`): the S cells of one
  start are then read for 8 spans in a row while the E cells of the block's ends stay in cache.
* Within a block, starts far enough below it go by 4 (:func:`_tile_bulk`): the split points
  that 4 starts x 8 ends have in common are maximised together in tiles of 4 x 4 register
  accumulators (4 x 2 on CPUs with 16 vector registers; :func:`_split_max_tile`), which read
  each E row chunk once for the 4 starts and each S row chunk once for the tile's ends; each
  span then adds its own few split points: for the chunks of heads below the block's own, the 8
  spans of a start in one call (:func:`_split_max_block`, each span's value passed to the later
  ones in a register), for the block's own chunk span by span (:func:`_split_max_seeded`).
  Maxima are exact in any order, so the result is the same.
  On long sentences (``_TILE_AHEAD_FROM`` words and more) a tile's S cells come from memory
  (they are read once per block) and so do a block's E cells once they outgrow the caches; the
  tiles then prefetch the next chunk's S cells and the next tile's E cells while they work on
  their own (:func:`_split_max_tile_ahead`).
* The outside attachments of the starts below a full block go by its 8 ends, one call per
  chunk of heads (:func:`_broadcast_sums_block` from :func:`_attach_block`): the dependents
  that the 8 spans of one start have in common are maximised together, each chunk of arcs read
  once for the 8 spans, then each span's own, then the 8 stores. Only the chunks of heads that
  the block's own later spans read are done span by span (:func:`_attach_right_heads`). On
  short sentences this saves the calls (each a short loop); on long ones, where the arcs do not
  stay in the L1 cache, most of the reads of the arcs.
* The kernels add by ``fma(a, 1, b)`` where the CPU has FMA (:func:`_sums_by_fma`): the same
  bits, but on AMD's Zen cores off the add pipes, which the maxima need.
* The label tables read every span's L scores once, which is bound by memory bandwidth; the
  O(n^4) arithmetic is the rest. The plain span CKY (:mod:`~lal_allennlp.decoding.cky`) reads the
  same scores, so it bounds the speed of any decoder of these charts from above.
* Short sentences (up to ``LANE_MAX_LEN`` words, in groups of similar lengths, large enough for
  their length: :func:`_worth_lanes`) go to :mod:`~lal_allennlp.decoding.joint_span_lanes`,
  which runs the same recurrence with 8 sentences in the vector lanes instead of 8 heads: no
  lane is wasted on a short span, and every loop of a span serves all its heads. Its workspace
  is 8 sentences', so longer sentences, and the few left over, are decoded here one at a time.
* One numba call decodes the batch; workers are parallel over sentences (``prange``), dealt out
  longest first, each reusing one workspace. ``S`` only uses cells (a, b) with a < b and ``E``
  cells (j, k) with j > k, so the two share one buffer, which holds for each start or end and
  chunk of heads only the cells that some head of the chunk uses (:func:`_se_layout`). X, the
  value of each span as a dependent, is only read by the span's own attachments, right after
  its split maxima, and by the traceback for the n - 1 arcs of the best tree, which recomputes
  those few values from S and E; so X holds only the rows of one start's spans in a block of
  ends. numpy allocates both, so
  that large ones get transparent huge pages (:func:`_workspaces`). The workspace grows
  as n^3 (10 MiB at 150 words, 2.5 GiB at 1,000 words in float32), so the decoder first checks
  that it fits in the memory available, runs fewer workers in parallel when only some fit, and
  refuses a sentence whose workspace alone does not fit with a ``MemoryError`` that says so
  (rather than being killed by the system for running out).
"""

import functools
import glob
import mmap
import os
import sys
import warnings
from typing import List, Optional, Tuple

import numba
import numpy as np
from llvmlite import binding as llvm_binding
from llvmlite import ir
from numba import njit, prange, types
from numba.core import cgutils
from numba.extending import intrinsic

from lal_allennlp.decoding.kernels import (
    FASTMATH,
    MAX_FLAGS,
    emit_prefetch,
    first_equal,
    maxnum,
    prefetch_row,
    segment_max,
)

__all__ = ["joint_span_decode", "EMPTY", "SUB_HEAD"]

EMPTY = 0  # label id of "no constituent"
SUB_HEAD = 1  # label id of <H>
_ROLE_HEAD, _ROLE_DEP, _ROLE_ROOT = 0, 1, 2


# ----------------------------------------------------------------------------------------------
# Label tables, label ids, output of one node.
# ----------------------------------------------------------------------------------------------


@njit(cache=True, fastmath=FASTMATH, inline="always")
def _first_label(i, j, n):  # pragma: no cover - compiled code
    """Smallest label id allowed for a non-empty span (i, j): no <H> on words or the sentence."""
    return SUB_HEAD + 1 if j - i == 1 or j - i == n else SUB_HEAD


@njit(cache=True, fastmath=FASTMATH)
def _label_tables(sent, n, label_one, label_multi):  # pragma: no cover - compiled code
    """label_one[i, j] = best allowed non-empty score; label_multi[i, j] = max(that, empty)."""
    for i in range(n):
        for j in range(i + 1, n + 1):
            row = sent[i, j]  # (L,)
            best = segment_max(row[_first_label(i, j, n) :])
            label_one[i, j] = best
            label_multi[i, j] = maxnum(row[EMPTY], best)


@njit(cache=True, fastmath=FASTMATH)
def _node_label(row, first, one_value, use_one):  # pragma: no cover - compiled code
    """Label id of a node: smallest maximiser among the allowed non-empty labels (use_one), or
    empty if it scores at least as much (multi)."""
    if not use_one and row[EMPTY] >= one_value:
        return EMPTY
    label = first_equal(row, first, one_value)
    if label < row.shape[0]:
        return label
    return first  # unreachable for finite scores


@njit(cache=True, fastmath=FASTMATH)
def _label_nodes(out_spans, n, sent, label_one):  # pragma: no cover - compiled code
    """Replace the role in column 2 of each of the 2n - 1 rows (i, j, role) of out_spans by the
    label that the node takes in that role (label_one: 2-d, ``label_one[i, j]``).

    The tracebacks run this after the whole tree is traced, having prefetched each node's label
    scores when they met it: the scores are long out of the caches after the chart fill, and
    this way the misses overlap instead of stalling each node in turn."""
    for pos in range(2 * n - 1):
        i = out_spans[pos, 0]
        j = out_spans[pos, 1]
        role = out_spans[pos, 2]
        use_one = role == _ROLE_ROOT or (role == _ROLE_DEP and j - i > 1)
        out_spans[pos, 2] = _node_label(
            sent[i, j], _first_label(i, j, n), label_one[i, j], use_one
        )


# ----------------------------------------------------------------------------------------------
# Explicit 8-lane vector kernels. LLVM's loop vectoriser only enters its vector body for loops of
# 32 or more iterations here (4 x 8 lanes), and most loops of this decoder are shorter, so the two
# hot loops are written directly as LLVM vector code. They read and write whole chunks of 8 heads,
# some of whose lanes may lie outside the range the caller needs.
# ----------------------------------------------------------------------------------------------

_LANES = 8


def _vector_pointer(context, builder, array_type, array_value, offset, vector_type):
    """Pointer to ``vector_type`` at element ``offset`` of a 1-d array."""
    data = context.make_array(array_type)(context, builder, array_value).data
    return builder.bitcast(builder.gep(data, [offset]), vector_type.as_pointer())


def _check_flat_arrays(*array_types) -> bool:
    """Typing guard of the kernels: 1-d C-contiguous float arrays of one dtype."""
    first = array_types[0]
    return all(
        isinstance(t, types.Array) and t.ndim == 1 and t.layout == "C" and t.dtype == first.dtype
        for t in array_types
    ) and isinstance(first.dtype, types.Float)


def _maxnum_vector(builder, vector_type, bits):
    """The ``llvm.maxnum`` intrinsic on ``vector_type`` (whose elements have ``bits`` bits)."""
    return cgutils.get_or_insert_function(
        builder.module,
        ir.FunctionType(vector_type, [vector_type, vector_type]),
        f"llvm.maxnum.v{_LANES}f{bits}",
    )


def _broadcast(builder, vector_type, scalar):
    """``scalar`` in every lane of ``vector_type``."""
    undefined = ir.Constant(vector_type, ir.Undefined)
    lane0 = builder.insert_element(undefined, scalar, ir.Constant(ir.IntType(32), 0))
    zeros = ir.Constant(ir.VectorType(ir.IntType(32), _LANES), [0] * _LANES)
    return builder.shuffle_vector(lane0, undefined, zeros)


def _target_features() -> List[str]:
    """The features (``+avx2``, ...) of the CPU that numba compiles for: the host's, unless
    ``NUMBA_CPU_NAME`` / ``NUMBA_CPU_FEATURES`` name another target (portable caches); none
    for a named CPU without its features."""
    features = numba.config.CPU_FEATURES
    if features is None:
        if numba.config.CPU_NAME not in (None, "host"):
            return []
        features = llvm_binding.get_host_cpu_features().flatten()
    return features.split(",")


def _sums_by_fma() -> bool:
    """Whether the kernels add by fused multiply-add, ``fma(a, 1, b)``: on x86 CPUs with FMA
    (FMA3 comes with AVX; the check of both keeps other architectures out).

    ``a * 1`` is exact and an FMA rounds once, so ``fma(a, 1, b)`` is ``a + b`` to the bit,
    infinities and signed zeros included. The point is where it runs: on AMD's Zen cores the
    adds and the maxima share the two FP add pipes, which bound the kernels at one add and one
    max per cycle, while FMAs go to the two FP multiply pipes, so the tiles run faster
    (``benchmarks/README.md``). On Intel cores adds, FMAs and maxima share the same ports, so it
    should change nothing there."""
    features = _target_features()
    return "+fma" in features and "+avx" in features


_SUMS_BY_FMA = _sums_by_fma()


class _VectorCode:
    """LLVM vector code on 1-d arrays of one float dtype, 8 lanes at a time (for the kernels)."""

    def __init__(self, context, builder, dtype) -> None:
        self.context, self.builder = context, builder
        scalar_type = context.get_data_type(dtype)
        self.vector_type = ir.VectorType(scalar_type, _LANES)
        self.align = context.get_abi_sizeof(scalar_type)
        self._max = _maxnum_vector(builder, self.vector_type, 8 * self.align)
        self._fma = self._ones = None
        if _SUMS_BY_FMA:
            bits = 8 * self.align
            self._fma = cgutils.get_or_insert_function(
                builder.module,
                ir.FunctionType(self.vector_type, [self.vector_type] * 3),
                f"llvm.fma.v{_LANES}f{bits}",
            )
            # 1.0 through an empty asm statement, which LLVM cannot see through: with a known
            # 1.0 it would turn the FMA back into an add. Emitted where the kernel's code begins,
            # so it dominates every use.
            one = builder.asm(
                ir.FunctionType(scalar_type, [scalar_type]),
                "",
                "=x,0",
                [ir.Constant(scalar_type, 1.0)],
                side_effect=False,
            )
            self._ones = _broadcast(builder, self.vector_type, one)

    def pointer(self, array_type, array_value, offset):
        return _vector_pointer(
            self.context, self.builder, array_type, array_value, offset, self.vector_type
        )

    def load(self, array_type, array_value, offset):
        return self.builder.load(self.pointer(array_type, array_value, offset), align=self.align)

    def store(self, array_type, array_value, offset, value) -> None:
        self.builder.store(value, self.pointer(array_type, array_value, offset), align=self.align)

    def max(self, a, b):
        # With the no-NaN flag, LLVM emits one max instruction instead of max, compare and blend
        # (the NaN handling of ``maxnum``) for every maximum of the hot loops.
        return self.builder.call(self._max, [a, b], fastmath=MAX_FLAGS)

    def load_scalar(self, array_type, array_value, index):
        """Element ``index`` of a 1-d array."""
        data = self.context.make_array(array_type)(self.context, self.builder, array_value).data
        return self.builder.load(self.builder.gep(data, [index]))

    def store_lanes(self, array_type, array_value, stores, lo, hi) -> None:
        """Each ``(offset, vector)`` of ``stores`` into the lanes lo <= t < hi of the 8 at
        ``offset``; the other lanes keep their values. Where the range covers all 8, plain
        stores (no need to read the lines first)."""
        builder = self.builder
        whole = builder.and_(
            builder.icmp_signed("<=", lo, ir.Constant(lo.type, 0)),
            builder.icmp_signed(">=", hi, ir.Constant(hi.type, _LANES)),
        )
        with builder.if_else(whole) as (all_lanes, some_lanes):
            with all_lanes:
                for offset, value in stores:
                    self.store(array_type, array_value, offset, value)
            with some_lanes:
                lanes = ir.Constant(ir.VectorType(lo.type, _LANES), list(range(_LANES)))
                inside = builder.and_(
                    builder.icmp_signed(">=", lanes, _broadcast(builder, lanes.type, lo)),
                    builder.icmp_signed("<", lanes, _broadcast(builder, lanes.type, hi)),
                )
                for offset, value in stores:
                    old = self.load(array_type, array_value, offset)
                    self.store(array_type, array_value, offset, builder.select(inside, value, old))

    def add(self, a, b):
        """a + b, lane by lane (as ``fma(a, 1, b)`` where :func:`_sums_by_fma`: the same bits)."""
        if self._fma is None:
            return self.builder.fadd(a, b)
        return self.builder.call(self._fma, [a, self._ones, b], fastmath=MAX_FLAGS)

    def add_scalar(self, vector, scalar):
        return self.add(vector, _broadcast(self.builder, self.vector_type, scalar))

    def max_over(self, terms, count):
        """Accumulators (allocas) of ``max_{r < count} terms(r)[m]`` for every m, kept in
        registers by LLVM; ``terms(r)`` returns vectors for an index r; count >= 1."""
        builder = self.builder
        one = ir.Constant(count.type, 1)
        zero = ir.Constant(count.type, 0)
        accs = [cgutils.alloca_once_value(builder, value) for value in terms(zero)]
        with cgutils.for_range(builder, builder.sub(count, one)) as loop:
            for acc, value in zip(accs, terms(builder.add(loop.index, one))):
                builder.store(self.max(builder.load(acc), value), acc)
        return accs


def _split_max_codegen(ranges: int):
    """Code of :func:`_split_max` (``ranges=0``: the first term starts the maximum) and of
    :func:`_split_max_seeded` (``ranges=2``: a seed starts it, then two ranges of terms)."""

    def codegen(context, builder, signature, args):  # pragma: no cover - compiled code
        x_v, s_v, e_v, x_off_v, s_off_v, e_off_v, one_v, multi_v = args[:8]
        x_t, s_t, e_t = signature.args[:3]
        code = _VectorCode(context, builder, x_t.dtype)
        intp_one = ir.Constant(x_off_v.type, 1)
        step = ir.Constant(x_off_v.type, _LANES)  # the terms are consecutive chunks

        def term(a_t, a_v, a_off, b_t, b_v, b_off, r):
            shift = builder.mul(r, step)
            return code.add(
                code.load(a_t, a_v, builder.add(a_off, shift)),
                code.load(b_t, b_v, builder.add(b_off, shift)),
            )

        def accumulate(acc, a_t, a_v, a_off, b_t, b_v, b_off, first, count):
            with cgutils.for_range(builder, count) as loop:
                r = builder.add(loop.index, first)
                value = term(a_t, a_v, a_off, b_t, b_v, b_off, r)
                builder.store(code.max(builder.load(acc), value), acc)

        if ranges == 0:  # a[a_off + 8 r] + b[b_off + 8 r], r < count (count >= 1)
            a_v, a_off_v, b_v, b_off_v, count_v = args[8:13]
            a_t, b_t = signature.args[8], signature.args[10]
            first = term(a_t, a_v, a_off_v, b_t, b_v, b_off_v, ir.Constant(x_off_v.type, 0))
            acc = cgutils.alloca_once_value(builder, first)
            rest = builder.sub(count_v, intp_one)
            accumulate(acc, a_t, a_v, a_off_v, b_t, b_v, b_off_v, intp_one, rest)
        else:  # seed[seed_off], then each range (a_off, b_off, count >= 0) of a and b chunks
            seed_t, a_t, b_t = signature.args[8], signature.args[10], signature.args[11]
            seed_v, seed_off_v, a_v, b_v = args[8:12]
            acc = cgutils.alloca_once_value(builder, code.load(seed_t, seed_v, seed_off_v))
            zero = ir.Constant(x_off_v.type, 0)
            for r in range(ranges):
                a_off_v, b_off_v, count_v = args[12 + 3 * r : 15 + 3 * r]
                accumulate(acc, a_t, a_v, a_off_v, b_t, b_v, b_off_v, zero, count_v)
        raw = builder.load(acc)
        code.store(x_t, x_v, x_off_v, code.add_scalar(raw, one_v))
        multi = code.add_scalar(raw, multi_v)
        code.store(s_t, s_v, s_off_v, multi)
        code.store(e_t, e_v, e_off_v, multi)
        return context.get_dummy_value()

    return codegen


@intrinsic
def _split_max(
    typingctx, x, s, e, x_off, s_off, e_off, one_score, multi_score, a, a_off, b, b_off, count
):
    """One 8-lane chunk of a span's split maximum, written out three times::

        raw[t] = max_{r < count} a[a_off + 8 r + t] + b[b_off + 8 r + t]   (t = 0..7)
        x[x_off + t] = raw[t] + one_score
        s[s_off + t] = e[e_off + t] = raw[t] + multi_score

    The terms are consecutive chunks of a and b (the chart's cells of k, k + 1, ...). The
    accumulator stays in a register; count >= 1.
    """
    if not _check_flat_arrays(x, s, e, a, b) or one_score != x.dtype or multi_score != x.dtype:
        return None
    intp = types.intp
    sig = types.void(x, s, e, intp, intp, intp, one_score, multi_score, a, intp, b, intp, intp)
    return sig, _split_max_codegen(ranges=0)


@intrinsic
def _split_max_seeded(
    typingctx,
    x,
    s,
    e,
    x_off,
    s_off,
    e_off,
    one_score,
    multi_score,
    seed,
    seed_off,
    a,
    b,
    a_off1,
    b_off1,
    count1,
    a_off2,
    b_off2,
    count2,
):
    """:func:`_split_max` whose maximum starts from ``seed[seed_off + t]`` (the part of the split
    maximum that :func:`_split_max_tile` computed) and takes the terms of two ranges::

        raw[t] = max(seed[seed_off + t],
                     max_{r < count1} a[a_off1 + 8 r + t] + b[b_off1 + 8 r + t],
                     max_{r < count2} a[a_off2 + 8 r + t] + b[b_off2 + 8 r + t])

    (count1, count2 >= 0), written out as :func:`_split_max` does.
    """
    if not _check_flat_arrays(x, s, e, seed, a, b):
        return None
    if one_score != x.dtype or multi_score != x.dtype:
        return None
    intp = types.intp
    sig = types.void(
        x, s, e, intp, intp, intp, one_score, multi_score, seed, intp, a, b,
        intp, intp, intp, intp, intp, intp,
    )
    return sig, _split_max_codegen(ranges=2)


_TILE_STARTS = 4  # starts of a tile of :func:`_split_max_tile`
_TILE_ENDS_MAX = 4  # the tile kernels take this many runs of E cells; the first _TILE_ENDS count


def _vector_registers() -> int:
    """Vector registers of the CPU that numba compiles for: 32 with AVX-512 (its VL extension
    gives 256-bit code 32 registers too), else 16 (AVX2; also for a named CPU without its
    features: the smaller register file)."""
    return 32 if "+avx512vl" in _target_features() else 16


# Ends of a tile: 4 x 4 accumulators need 16 registers besides the loaded runs, which only a CPU
# with 32 has; with 16, tiles of 4 x 2 (``benchmarks/README.md``).
_TILE_ENDS = 4 if _vector_registers() >= 32 else 2
_TILE_MIN_SPLITS = 16  # tiles only where the starts share at least this many split points
_TILE_AHEAD_FROM = 160  # tiles prefetch their next operands in sentences of this many words


def _split_max_tile_codegen(next_a: int, next_b: int):
    """Code of :func:`_split_max_tile` and its prefetching forms: the arguments after ``count``
    are ``next_a`` offsets into a and ``next_b`` into b whose runs are prefetched (into the L2
    cache) alongside the runs that the tile reads, one chunk per term."""

    def codegen(context, builder, signature, args):  # pragma: no cover - compiled code
        t_v, t_off_v, t_step_start_v, t_step_end_v, a_v = args[:5]
        a_offs, b_v = args[5 : 5 + _TILE_STARTS], args[5 + _TILE_STARTS]
        rest = args[6 + _TILE_STARTS :]  # b0.., count, then the runs to prefetch
        b_offs, count_v = rest[:_TILE_ENDS], rest[_TILE_ENDS_MAX]
        next_a_offs = rest[_TILE_ENDS_MAX + 1 : _TILE_ENDS_MAX + 1 + next_a]
        # of the next_b slots, the runs of the next tile's ends
        next_b_offs = rest[_TILE_ENDS_MAX + 1 + next_a :][: min(next_b, _TILE_ENDS)]
        t_t, a_t, b_t = signature.args[0], signature.args[4], signature.args[5 + _TILE_STARTS]
        code = _VectorCode(context, builder, t_t.dtype)
        step_v = ir.Constant(count_v.type, _LANES)  # the terms are consecutive chunks

        def terms(r):
            shift = builder.mul(r, step_v)
            for array_t, array_v, offs in ((a_t, a_v, next_a_offs), (b_t, b_v, next_b_offs)):
                for off in offs:
                    pointer = code.pointer(array_t, array_v, builder.add(off, shift))
                    emit_prefetch(builder, pointer, locality=2)
            rows_a = [code.load(a_t, a_v, builder.add(off, shift)) for off in a_offs]
            rows_b = [code.load(b_t, b_v, builder.add(off, shift)) for off in b_offs]
            return [code.add(ra, rb) for ra in rows_a for rb in rows_b]

        accs = code.max_over(terms, count_v)
        for index, acc in enumerate(accs):
            m, p = divmod(index, _TILE_ENDS)
            target = builder.add(
                t_off_v,
                builder.add(
                    builder.mul(ir.Constant(t_off_v.type, m), t_step_start_v),
                    builder.mul(ir.Constant(t_off_v.type, p), t_step_end_v),
                ),
            )
            code.store(t_t, t_v, target, builder.load(acc))
        return context.get_dummy_value()

    return codegen


def _split_max_tile_typed(t, a, b, next_a: int, next_b: int):
    """Signature and code of a :func:`_split_max_tile` form that prefetches ``next_a`` runs of a
    and ``next_b`` of b (their offsets follow ``count``), or None if the arrays do not fit."""
    if not _check_flat_arrays(t, a, b):
        return None
    intp = types.intp
    prefetched = [intp] * (next_a + next_b)
    sig = types.void(
        t, intp, intp, intp, a, *([intp] * _TILE_STARTS), b, *([intp] * _TILE_ENDS_MAX), intp,
        *prefetched,
    )
    return sig, _split_max_tile_codegen(next_a, next_b)


@intrinsic
def _split_max_tile(
    typingctx, t, t_off, t_step_start, t_step_end, a, a0, a1, a2, a3, b, b0, b1, b2, b3, count
):
    """The common part of the split maxima of 4 x ``_TILE_ENDS`` spans, one 8-lane chunk each:
    4 starts (runs from ``a0..a3`` in the S chart, one per start) by 4 or 2 ends (runs from
    ``b0..b3`` in the E chart; with 2, b2 and b3 are not read)::

        t[t_off + m t_step_start + p t_step_end + u]
            = max_{r < count} a[a_m + 8 r + u] + b[b_p + 8 r + u]

    (m < 4, p < _TILE_ENDS, lanes u < 8; count >= 1). The accumulators stay in registers; each
    loaded chunk serves several of them, so each S chunk is read once for the tile's ends and
    each E chunk once for its 4 starts.
    """
    return _split_max_tile_typed(t, a, b, 0, 0)


@intrinsic
def _split_max_tile_ahead(
    typingctx, t, t_off, t_step_start, t_step_end, a, a0, a1, a2, a3, b, b0, b1, b2, b3, count,
    next_a0, next_a1, next_a2, next_a3, next_b0, next_b1, next_b2, next_b3,
):
    """:func:`_split_max_tile` that also prefetches 4 runs of a (the next chunk's S cells of the
    4 starts) and ``_TILE_ENDS`` runs of b (the next ends' E cells), as long as its own."""
    return _split_max_tile_typed(t, a, b, 4, _TILE_ENDS_MAX)


@intrinsic
def _split_max_tile_ahead_b(
    typingctx, t, t_off, t_step_start, t_step_end, a, a0, a1, a2, a3, b, b0, b1, b2, b3, count,
    next_b0, next_b1, next_b2, next_b3,
):
    """:func:`_split_max_tile` that also prefetches ``_TILE_ENDS`` runs of b (the next ends' E
    cells), as long as its own."""
    return _split_max_tile_typed(t, a, b, 0, _TILE_ENDS_MAX)


def _broadcast_sums_codegen():
    """Code of :func:`_max_of_broadcast_sums`."""

    def codegen(context, builder, signature, args):  # pragma: no cover - compiled code
        dst_v, dst_off_v, x_v, x_off_v, a_v, a_off_v, count_v, lo_v, hi_v = args
        dst_t, _, x_t, _, a_t = signature.args[:5]
        code = _VectorCode(context, builder, dst_t.dtype)

        def term(r):
            scalar = code.load_scalar(x_t, x_v, builder.add(x_off_v, r))
            shift = builder.mul(r, ir.Constant(r.type, _LANES))  # consecutive chunks of a
            row = code.load(a_t, a_v, builder.add(a_off_v, shift))
            return code.add_scalar(row, scalar)

        (acc,) = code.max_over(lambda r: [term(r)], count_v)
        code.store_lanes(dst_t, dst_v, [(dst_off_v, builder.load(acc))], lo_v, hi_v)
        return context.get_dummy_value()

    return codegen


@intrinsic
def _max_of_broadcast_sums(typingctx, dst, dst_off, x, x_off, a, a_off, count, lo, hi):
    """``dst[dst_off + t] = max_{r < count} x[x_off + r] + a[a_off + 8 r + t]`` for the
    lanes lo <= t < hi of 8 (x[.] broadcast to all lanes), accumulated in a register
    (count >= 1). The other lanes of dst keep their values."""
    if not _check_flat_arrays(dst, x, a):
        return None
    intp = types.intp
    sig = types.void(dst, intp, x, intp, a, intp, intp, intp, intp)
    return sig, _broadcast_sums_codegen()


@intrinsic
def _split_max_block(
    typingctx, x, s, e, x_off, x_step, s_base, e0, e1, e2, e3, e4, e5, e6, e7, seed, seed_off,
    seed_step, one, multi, first, count, j0,
):
    """One 8-lane chunk of heads of the split maxima of the 8 spans (i, j0), ..., (i, j0 + 7) of
    a start i in a tiled block (:func:`_fill_charts`), for a chunk below the block's own, whose
    heads are all below j0. With S[i, k] at ``s_base + 8 k`` and E[j0 + q, k] at ``e_q + 8 k``::

        raw_q = max(seed[seed_off + q seed_step],                        (k in (top, j0), tiles)
                    max_{k in [first, first + count)} S[i, k] + E[j0 + q, k],  (k in (i, top])
                    max_{r < q} S[i, j0 + r] + E[j0 + q, j0 + r])             (this block)
        x[x_off + q x_step] = raw_q + one[j0 + q]
        S[i, j0 + q] = E[j0 + q, i] = raw_q + multi[j0 + q]

    (one, multi: the start's rows of the label tables, by end). The spans go in order of their
    ends: S[i, j0 + r] of the last line is span r's multi value, which the chunk's heads (all
    below j0 + r) take without an attachment, so it comes from a register, not from memory. S
    cells of the common split points are loaded once for the 8 ends. As :func:`_split_max`, but
    one call for 8 spans instead of 8 calls of short loops.
    """
    if not _check_flat_arrays(x, s, e, seed, one, multi):
        return None
    intp = types.intp
    sig = types.void(
        x, s, e, intp, intp, intp, *([intp] * _END_BLOCK), seed, intp, intp, one, multi,
        intp, intp, intp,
    )

    def codegen(context, builder, signature, args):  # pragma: no cover - compiled code
        x_v, s_v, e_v, x_off_v, x_step_v, s_base_v = args[:6]
        e_bases = args[6 : 6 + _END_BLOCK]
        rest = args[6 + _END_BLOCK :]
        seed_v, seed_off_v, seed_step_v, one_v, multi_v = rest[:5]
        first_v, count_v, j0_v = rest[5:]
        x_t, s_t, e_t = signature.args[:3]
        seed_t = signature.args[6 + _END_BLOCK]
        one_t, multi_t = signature.args[9 + _END_BLOCK : 11 + _END_BLOCK]
        code = _VectorCode(context, builder, x_t.dtype)
        intp_t = x_off_v.type
        lanes = ir.Constant(intp_t, _LANES)

        def constant(value):
            return ir.Constant(intp_t, value)

        def cell(base, k):  # index of cell k of a run of cells
            return builder.add(base, builder.mul(k, lanes))

        accs = [
            cgutils.alloca_once_value(
                builder,
                code.load(
                    seed_t, seed_v, builder.add(seed_off_v, builder.mul(constant(q), seed_step_v))
                ),
            )
            for q in range(_END_BLOCK)
        ]
        with cgutils.for_range(builder, count_v) as loop:  # k in (i, top]: 0 to 3 split points
            k = builder.add(first_v, loop.index)
            left = code.load(s_t, s_v, cell(s_base_v, k))
            for acc, e_base in zip(accs, e_bases):
                value = code.add(left, code.load(e_t, e_v, cell(e_base, k)))
                builder.store(code.max(builder.load(acc), value), acc)
        start = builder.sub(first_v, constant(1))  # i
        for q in range(_END_BLOCK):
            raw = builder.load(accs[q])
            end = builder.add(j0_v, constant(q))
            x_index = builder.add(x_off_v, builder.mul(constant(q), x_step_v))
            one_score = code.load_scalar(one_t, one_v, end)
            code.store(x_t, x_v, x_index, code.add_scalar(raw, one_score))
            value = code.add_scalar(raw, code.load_scalar(multi_t, multi_v, end))
            code.store(s_t, s_v, cell(s_base_v, end), value)
            code.store(e_t, e_v, cell(e_bases[q], start), value)  # E[j0 + q, i]
            for later in range(q + 1, _END_BLOCK):  # split point j0 + q of the later spans
                term = code.add(value, code.load(e_t, e_v, cell(e_bases[later], end)))
                builder.store(code.max(builder.load(accs[later]), term), accs[later])
        return context.get_dummy_value()

    return sig, codegen


@intrinsic
def _broadcast_sums_block(
    typingctx, dst, d0, d1, d2, d3, d4, d5, d6, d7, hi, x, x_first, x_step, a, a_off, count
):
    """The outside attachments of the 8 spans (i, j0), ..., (i, j0 + 7) of one start and a block
    of ends (:func:`_attach_block`), one 8-lane chunk of heads each::

        dst[d_q + u] = max_{r < count + q} x[x_first + q x_step + r] + a[a_off + 8 r + u]

    for q < 8 and the lanes u < hi (the others keep their values; count >= 1). Row q of x holds
    the dependents of span q, i + 1, ..., j0 + q, and a the arcs from the chunk's heads into them.
    The first ``count`` terms (the dependents d in (i, j0]) are common to the 8 spans: a loop
    loads each arc chunk once for the 8, into 8 accumulators. Span q then has q more (d in
    (j0, j0 + q]): straight-line code, each of those 7 arc chunks loaded once for the spans that
    take it. One call per chunk of heads, instead of one for the common part and one per span.
    """
    if not _check_flat_arrays(dst, x, a):
        return None
    intp = types.intp
    sig = types.void(dst, *([intp] * _END_BLOCK), intp, x, intp, intp, a, intp, intp)

    def codegen(context, builder, signature, args):  # pragma: no cover - compiled code
        dst_v = args[0]
        dst_offs = args[1 : 1 + _END_BLOCK]
        hi_v, x_v, x_first_v, x_step_v, a_v, a_off_v, count_v = args[1 + _END_BLOCK :]
        dst_t, x_t, a_t = signature.args[0], signature.args[2 + _END_BLOCK], signature.args[-3]
        code = _VectorCode(context, builder, dst_t.dtype)
        x_rows = [
            builder.add(x_first_v, builder.mul(ir.Constant(x_step_v.type, q), x_step_v))
            for q in range(_END_BLOCK)
        ]

        def arc_chunk(r):  # the arcs into dependent r: consecutive chunks of a
            shift = builder.mul(r, ir.Constant(r.type, _LANES))
            return code.load(a_t, a_v, builder.add(a_off_v, shift))

        def dependent(q, r):
            return code.load_scalar(x_t, x_v, builder.add(x_rows[q], r))

        def terms(r):
            row = arc_chunk(r)
            return [code.add_scalar(row, dependent(q, r)) for q in range(_END_BLOCK)]

        accs = code.max_over(terms, count_v)
        for extra in range(1, _END_BLOCK):  # d = j0 + extra, a dependent of the spans q >= extra
            r = builder.add(count_v, ir.Constant(count_v.type, extra - 1))
            row = arc_chunk(r)
            for q in range(extra, _END_BLOCK):
                value = code.add_scalar(row, dependent(q, r))
                builder.store(code.max(builder.load(accs[q]), value), accs[q])
        stores = [(offset, builder.load(acc)) for offset, acc in zip(dst_offs, accs)]
        code.store_lanes(dst_t, dst_v, stores, ir.Constant(hi_v.type, 0), hi_v)
        return context.get_dummy_value()

    return sig, codegen


_ALIGN_BYTES = 64  # a cache line: aligned vector loads never straddle two lines


# Where free pages are reported to the host (:func:`_free_pages_reported`), workspace buffers
# larger than this (the S/E chart from about 460 words) take 4 KiB pages instead of huge pages.
# Smaller ones keep huge pages there too: they have fewer 2 MiB blocks for the host to take back
# in a pause, and below glibc's 32 MiB mmap limit they are reused from the heap with no page
# faults at all when the decoder runs back to back (``benchmarks/README.md``, "Huge pages and
# free page reporting", has the crossing point).
_LARGE_WORKSPACE_BYTES = 256 << 20
# "1": huge pages for large workspaces, "0": 4 KiB pages, unset: decide by the machine
# (:func:`_huge_pages_pay`).
HUGE_PAGES_ENV = "LAL_DECODER_HUGE_PAGES"
_MADV_POPULATE_WRITE = getattr(mmap, "MADV_POPULATE_WRITE", 23)  # Linux's value, from 5.14
_VIRTIO_BALLOON = "0x0005"  # virtio device id of a memory balloon
_BALLOON_F_REPORTING = 5  # its feature bit: free page reporting


@functools.lru_cache(maxsize=None)
def _free_pages_reported(devices: str = "/sys/bus/virtio/devices") -> bool:
    """Whether this is a virtual machine whose memory balloon reports free pages to the host.

    Free page reporting hands free blocks of 2 MiB and more back to the host a couple of seconds
    after they are freed; touching such a block again makes the host fault it in afresh. Huge
    pages are taken from exactly those blocks, so there every large workspace allocated after a
    pause pays that again, several times what its 4 KiB pages would cost: those come from
    smaller free blocks, which the host keeps (``benchmarks/README.md``, "Huge pages and free
    page reporting").
    """
    for device in glob.glob(os.path.join(devices, "*")):
        try:
            with open(os.path.join(device, "device"), encoding="ascii") as device_file:
                if device_file.read().strip() != _VIRTIO_BALLOON:
                    continue
            with open(os.path.join(device, "features"), encoding="ascii") as features_file:
                features = features_file.read().strip()  # one "0"/"1" per bit, bit 0 first
        except OSError:
            continue
        if len(features) > _BALLOON_F_REPORTING and features[_BALLOON_F_REPORTING] == "1":
            return True
    return False


def _huge_pages_pay() -> bool:
    """Whether workspaces over ``_LARGE_WORKSPACE_BYTES`` should have transparent huge pages:
    they cost fewer TLB misses and page faults, except where free page reporting makes each
    fresh huge page a fault on the host (:func:`_free_pages_reported`).
    ``LAL_DECODER_HUGE_PAGES=1`` or ``=0`` overrides it."""
    choice = _page_choice(os.environ.get(HUGE_PAGES_ENV, ""))
    return not _free_pages_reported() if choice is None else choice


@functools.lru_cache(maxsize=8)
def _page_choice(value: str) -> Optional[bool]:
    """``LAL_DECODER_HUGE_PAGES`` read: True, False or None (the machine decides). Any other
    value is warned about once and ignored, so that a typo never stops a parse."""
    value = value.strip()
    if value in ("0", "1"):
        return value == "1"
    if value:
        warnings.warn(
            f"{HUGE_PAGES_ENV}={value!r} is neither 0 nor 1; ignored (the decoder chooses the "
            "pages of large workspaces by the machine). Set it to 1 for huge pages, 0 for 4 KiB "
            "pages, or unset it.",
            stacklevel=2,
        )
    return None


def _zeros(count: int, dtype) -> np.ndarray:
    """np.zeros(count, dtype), which numpy asks the kernel to back with transparent huge pages
    from 4 MiB; over ``_LARGE_WORKSPACE_BYTES`` where huge pages do not pay
    (:func:`_huge_pages_pay`), an anonymous mapping marked for 4 KiB pages instead (zero-filled
    by the kernel, page aligned, unmapped when the array is freed)."""
    dtype = np.dtype(dtype)
    nbytes = count * dtype.itemsize
    if nbytes <= _LARGE_WORKSPACE_BYTES or _huge_pages_pay():
        return np.zeros(count, dtype)
    # private: a shared anonymous mapping would be shmem, whose page faults cost more
    mapping = mmap.mmap(-1, nbytes, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    if hasattr(mmap, "MADV_NOHUGEPAGE"):  # also where the system's THP setting is "always"
        mapping.madvise(mmap.MADV_NOHUGEPAGE)
    if sys.platform.startswith("linux"):
        try:  # fault every page in with one call rather than one trap per page
            mapping.madvise(_MADV_POPULATE_WRITE)
        except OSError:  # before Linux 5.14: faulted in as the fill first writes each page
            pass
    return np.frombuffer(mapping, dtype, count)


def _aligned_buffer_set(workers: int, counts: Tuple[int, ...], dtype) -> Tuple[np.ndarray, ...]:
    """np.zeros((workers, >= count), dtype) for each count, whose rows each start on a 64-byte
    boundary, in huge pages where they pay (:func:`_zeros`): views of one allocation, which
    costs a call less than one per buffer."""
    itemsize = np.dtype(dtype).itemsize
    spare = _ALIGN_BYTES // itemsize
    rows = [-(-count // spare) * spare for count in counts]
    buffer = _zeros(workers * sum(rows) + spare, dtype)
    offset = (-buffer.__array_interface__["data"][0]) % _ALIGN_BYTES // itemsize
    views = []
    for row in rows:
        views.append(buffer[offset : offset + workers * row].reshape(workers, row))
        offset += workers * row
    return tuple(views)


def _row_length(size: int) -> int:
    """Elements per row of X and per cell of the S/E chart: heads 1..n (n = size - 1) in whole
    chunks of 8, head h in lane h - 1 (:func:`_cell`)."""
    return max(1, (size - 1 + _LANES - 1) // _LANES) * _LANES


_row_length_jit = njit(cache=True)(_row_length)


@njit(cache=True, inline="always")
def _chunk_row(a, c, b, rows, chunks):  # pragma: no cover - compiled code
    """Index of cell (a, b), heads chunk c (heads 8 c + 1 .. 8 c + 8), in the S/E chart
    (``rows`` from :func:`_se_layout`, ``chunks`` chunks of heads per cell).

    For each a and chunk, the cells b lie one after the other, 8 lanes each, so that a loop over
    b (the split point k) reads contiguous memory.
    """
    return rows[a * chunks + c] + b * _LANES


@njit(cache=True)
def _se_layout(n, rows):  # pragma: no cover - compiled code
    """Fills ``rows`` ((n + 1) * chunks entries) for :func:`_chunk_row` and returns the size of
    the S/E chart in elements.

    For each a and chunk c, one block of cells b, 8 lanes each. S only uses cells (a, b) with
    b > a, for the heads h > a, and E cells (a, b) with b < a, for the heads h <= a. So a
    block holds the cells b > a only if its chunk has heads above a, and the cells b < a only
    if it has heads up to a: about 2 n^3 / 3 numbers instead of n^3. The kernels also read
    (and ignore) the chunk next to those ranges (a tile's 4 starts share their first chunk, a
    block's 8 ends their last), so each range gets one more chunk. A margin of one block of
    n + 1 cells before and after keeps every b in [0, n] of every block inside the buffer.
    """
    size = n + 1
    chunks = _row_length_jit(size) // _LANES
    total = size * _LANES  # the margin before
    for a in range(size):
        first_s = a // _LANES - 1  # the chunks with cells b > a (heads > a): first_s, ...
        last_e = (a - 1) // _LANES + 1  # the chunks with cells b < a (heads <= a): ..., last_e
        for c in range(chunks):
            low = 0 if c <= last_e else a + 1
            high = n if c >= first_s else a - 1
            rows[a * chunks + c] = total - low * _LANES
            total += (high - low + 1) * _LANES
    return total + size * _LANES  # and the margin after


@njit(cache=True, inline="always")
def _arc_row(c, d, size):  # pragma: no cover - compiled code
    """Index of the arcs from the heads of chunk c into dependent d in the transposed arcs
    (:func:`_transpose_arcs`): for each chunk, d = 0, 1, ... one after the other."""
    return (c * size + d) * _LANES


@njit(cache=True, inline="always")
def _cell(a, b, h, rows, chunks):  # pragma: no cover - compiled code
    """Index of (a, b, h) in the S/E chart (see :func:`_chunk_row`): head h in lane h - 1, so
    that the chunks of the heads 1..n are whole where n is a multiple of 8, and a block of ends
    j0 = 8 m + 1 .. 8 m + 8 (:func:`_fill_charts`) has its heads in one chunk."""
    return _chunk_row(a, (h - 1) // _LANES, b, rows, chunks) + (h - 1) % _LANES

_END_BLOCK = 8  # spans filled in blocks of this many ends (:func:`_fill_charts`)
# Rows of the tile workspace T: the split maxima of 4 starts x 8 ends (:func:`_tile_bulk`).
_TILE_ROWS = _TILE_STARTS * _END_BLOCK


# ----------------------------------------------------------------------------------------------
# The O(n^4) decoder, phase by phase.
# ----------------------------------------------------------------------------------------------


@njit(cache=True, fastmath=FASTMATH)
def _transpose_arcs(arc, n, stride, arc_t):  # pragma: no cover - compiled code
    """arc_t[_arc_row((h - 1) // 8, d) + (h - 1) % 8] = arc[h, d] for h in [1, n], d in
    [0, n]: for each chunk of 8 heads, the arcs into d = 0, 1, ... one after the other (8 lanes
    each). The root's arcs, h = 0, are read from arc itself."""
    size = n + 1
    for h in range(1, n + 1):
        for d in range(n + 1):
            arc_t[_arc_row((h - 1) // _LANES, d, size) + (h - 1) % _LANES] = arc[h, d]


@njit(cache=True, fastmath=FASTMATH)
def _span_value(
    i, j, stride, rows, S, E, X, x_row, one_score, multi_score
):  # pragma: no cover - compiled code
    """Span (i, j), j - i >= 2, for every head h in (i, j], 8 lanes at a time:

        raw[i, j, h] = max_{k in (i, j)} S[i, k, h] + E[j, k, h]
        X[i, j, h] = raw + one_score;  S[i, j, h] = E[j, i, h] = raw + multi_score (multi)

    Lanes past j land in parts of the cells that are written later or never read.
    """
    chunks = stride // _LANES
    # Whole chunks of 8 heads (the lanes h <= i of the first are computed and ignored), so that
    # every vector load and store is aligned: the buffers are aligned to 64 bytes.
    for c in range(i // _LANES, (j - 1) // _LANES + 1):
        _split_max(
            X,
            S,
            E,
            x_row + c * _LANES,
            _chunk_row(i, c, j, rows, chunks),  # S[i, j, chunk c]
            _chunk_row(j, c, i, rows, chunks),  # E[j, i, chunk c]
            one_score,
            multi_score,
            S,
            _chunk_row(i, c, i + 1, rows, chunks),  # S[i, k, chunk c] for k = i + 1, ...
            E,
            _chunk_row(j, c, i + 1, rows, chunks),  # E[j, k, chunk c] for k = i + 1, ...
            j - i - 1,
        )


@njit(cache=True, fastmath=FASTMATH)
def _tile_bulk(top, bottom, j0, stride, rows, S, E, T, ahead):  # pragma: no cover - compiled
    """The split points that the spans (i, j) of the starts i in [bottom, top] (at most 4) and
    the 8 ends j of the block from j0 have in common, k in (top, j0), for every head h in
    (bottom, j0 + 7], 8 lanes at a time::

        T[((top - i) 8 + j - j0) stride + h - 1] = max_{k in (top, j0)} S[i, k, h] + E[j, k, h]

    (top + 1 < j0). These spans (i, k) end in earlier blocks and the spans (k, j) begin after
    top, so all are ready. Chunk by chunk, the 4 starts' S cells are read for the block's ends
    ``_TILE_ENDS`` at a time (4 where the CPU has 32 vector registers, else 2), and every E cell
    chunk is read once for the 4 starts.

    With ``ahead`` (long sentences), each tile prefetches the E cells of the next tile's ends,
    and the first tile of a chunk also the next chunk's S cells of the 4 starts: on long
    sentences those come from memory (a tile's S cells are read once per block, and a block's
    E cells outgrow the caches), and without the prefetch the loads wait on them.
    """
    chunks = stride // _LANES
    k0 = top + 1
    count = j0 - k0
    # The starts top, top - 1, ...; a start below bottom repeats bottom, and its results in T are
    # never read.
    s1, s2, s3 = max(top - 1, bottom), max(top - 2, bottom), max(top - 3, bottom)
    last_end = j0 + _END_BLOCK - 1
    last = (last_end - 1) // _LANES
    step = _END_BLOCK * stride  # from the T rows of one start to the next
    for c in range(bottom // _LANES, last + 1):
        a0 = _chunk_row(top, c, k0, rows, chunks)  # S[start, k, chunk c], k = k0, ...
        a1 = _chunk_row(s1, c, k0, rows, chunks)
        a2 = _chunk_row(s2, c, k0, rows, chunks)
        a3 = _chunk_row(s3, c, k0, rows, chunks)
        following = min(c + 1, last)
        for q in range(0, _END_BLOCK, _TILE_ENDS):
            t_off = q * stride + c * _LANES
            # E[end, k, chunk c], k = k0, ...; with tiles of 2 ends, b2 and b3 are not read (the
            # min keeps them inside the block)
            b0 = _chunk_row(j0 + q, c, k0, rows, chunks)
            b1 = _chunk_row(j0 + q + 1, c, k0, rows, chunks)
            b2 = _chunk_row(min(j0 + q + 2, last_end), c, k0, rows, chunks)
            b3 = _chunk_row(min(j0 + q + 3, last_end), c, k0, rows, chunks)
            if not ahead:
                _split_max_tile(T, t_off, step, stride, S, a0, a1, a2, a3, E, b0, b1, b2, b3, count)
                continue
            # the next tile's ends in this chunk, or the first ones of the next chunk
            later, cn = (q + _TILE_ENDS, c) if q + _TILE_ENDS < _END_BLOCK else (0, following)
            next_b0 = _chunk_row(j0 + later, cn, k0, rows, chunks)
            next_b1 = _chunk_row(j0 + later + 1, cn, k0, rows, chunks)
            next_b2 = _chunk_row(min(j0 + later + 2, last_end), cn, k0, rows, chunks)
            next_b3 = _chunk_row(min(j0 + later + 3, last_end), cn, k0, rows, chunks)
            if q == 0:
                _split_max_tile_ahead(
                    T, t_off, step, stride, S, a0, a1, a2, a3, E, b0, b1, b2, b3, count,
                    _chunk_row(top, following, k0, rows, chunks),
                    _chunk_row(s1, following, k0, rows, chunks),
                    _chunk_row(s2, following, k0, rows, chunks),
                    _chunk_row(s3, following, k0, rows, chunks),
                    next_b0, next_b1, next_b2, next_b3,
                )
            else:
                _split_max_tile_ahead_b(
                    T, t_off, step, stride, S, a0, a1, a2, a3, E, b0, b1, b2, b3, count,
                    next_b0, next_b1, next_b2, next_b3,
                )


@njit(cache=True, fastmath=FASTMATH)
def _block_values(
    i, top, j0, stride, rows, S, E, X, T, label_one, label_multi
):  # pragma: no cover - compiled code
    """The split maxima of the 8 spans (i, j0), ..., (i, j0 + 7) of a tile's start i
    (:func:`_tile_bulk`) for the chunks of heads below the block's own (:func:`_split_max_block`:
    one call per chunk for the 8 spans). Those heads are below j0, so the spans' values there
    need no attachment of the block's own spans: the last chunk is left to
    :func:`_span_value_seeded`, span by span."""
    chunks = stride // _LANES
    seed = (top - i) * _END_BLOCK * stride  # T row of the span (i, j0)
    for c in range(i // _LANES, (j0 - 1) // _LANES):
        _split_max_block(
            X, S, E,
            c * _LANES,  # X[i, j0 + q, chunk c] at q stride + 8 c
            stride,
            _chunk_row(i, c, 0, rows, chunks),  # S[i, k, chunk c] at this + 8 k
            _chunk_row(j0, c, 0, rows, chunks),  # E[j0 + q, k, chunk c] at these + 8 k
            _chunk_row(j0 + 1, c, 0, rows, chunks),
            _chunk_row(j0 + 2, c, 0, rows, chunks),
            _chunk_row(j0 + 3, c, 0, rows, chunks),
            _chunk_row(j0 + 4, c, 0, rows, chunks),
            _chunk_row(j0 + 5, c, 0, rows, chunks),
            _chunk_row(j0 + 6, c, 0, rows, chunks),
            _chunk_row(j0 + 7, c, 0, rows, chunks),
            T,
            seed + c * _LANES,
            stride,
            label_one[i],
            label_multi[i],
            i + 1,  # k in (i, top]
            top - i,
            j0,
        )


@njit(cache=True, fastmath=FASTMATH)
def _span_value_seeded(
    i, j, top, j0, first, stride, rows, S, E, X, x_row, T, one_score, multi_score
):  # pragma: no cover - compiled code
    """:func:`_span_value` for a span (i, j) of a tile (:func:`_tile_bulk`), from the chunk of
    heads ``first`` on, whose split points k in (top, j0) are in T: adds the others, k in
    (i, top] (spans (k, j) of the tile's starts above i, filled just before) and k in [j0, j)
    (spans (i, k) of this block)."""
    chunks = stride // _LANES
    seed = ((top - i) * _END_BLOCK + j - j0) * stride
    for c in range(first, (j - 1) // _LANES + 1):
        _split_max_seeded(
            X,
            S,
            E,
            x_row + c * _LANES,
            _chunk_row(i, c, j, rows, chunks),  # S[i, j, chunk c]
            _chunk_row(j, c, i, rows, chunks),  # E[j, i, chunk c]
            one_score,
            multi_score,
            T,
            seed + c * _LANES,
            S,
            E,
            _chunk_row(i, c, i + 1, rows, chunks),  # k in (i, top]
            _chunk_row(j, c, i + 1, rows, chunks),
            top - i,
            _chunk_row(i, c, j0, rows, chunks),  # k in [j0, j)
            _chunk_row(j, c, j0, rows, chunks),
            j - j0,
        )


@njit(cache=True, fastmath=FASTMATH, inline="always")
def _attach_right_heads(i, j, n, last, size, stride, rows, S, X, x_row, arc_t):  # pragma: no cover
    """DL[i, j, h] = max_{d in (i, j]} X[i, j, d] + arc[h, d] for the heads h > j of the chunks
    up to ``last`` (into S; the lanes h <= j of the first chunk keep their values). Nothing for
    the whole sentence (j = n)."""
    if j >= n:
        return
    chunks = stride // _LANES
    row_x = x_row + i  # X[i, j, i + 1]
    for c in range(j // _LANES, last + 1):
        _max_of_broadcast_sums(
            S,
            _chunk_row(i, c, j, rows, chunks),  # S[i, j, chunk c]
            X,
            row_x,
            arc_t,
            _arc_row(c, i + 1, size),  # arcs into d = i + 1, ...
            j - i,
            max(0, j - c * _LANES),
            _LANES,
        )


@njit(cache=True, fastmath=FASTMATH)
def _attach_outside(i, j, n, size, stride, rows, S, E, X, x_row, arc_t):  # pragma: no cover
    """Best attachment of span (i, j), as a dependent, to every head outside it:

        DL[i, j, h] = max_{d in (i, j]} X[i, j, d] + arc[h, d]   for h in (j, n]  (into S)
        DR[i, j, h] = the same                                   for h in [1, i]  (into E)

    By whole chunks of 8 heads. The chunk that holds j + 1 (into S) or i (into E) also holds
    heads of the span itself, whose multi values :func:`_span_value` wrote there: those lanes
    keep their values.
    """
    chunks = stride // _LANES
    row_x = x_row + i  # X[i, j, i + 1]
    length = j - i
    _attach_right_heads(i, j, n, (n - 1) // _LANES, size, stride, rows, S, X, x_row, arc_t)
    if i > 0:
        for c in range(0, (i - 1) // _LANES + 1):
            _max_of_broadcast_sums(
                E,
                _chunk_row(j, c, i, rows, chunks),  # E[j, i, chunk c]
                X,
                row_x,
                arc_t,
                _arc_row(c, i + 1, size),
                length,
                0,
                min(_LANES, i - c * _LANES),
            )


@njit(cache=True, fastmath=FASTMATH)
def _attach_block(i, j0, n, size, stride, rows, S, E, X, arc_t):  # pragma: no cover
    """The rest of :func:`_attach_outside` for the 8 spans (i, j0), ..., (i, j0 + 7) of a tiled
    block, after :func:`_attach_right_heads` up to the chunk of j0 + 7: DR into E (heads
    h <= i) and DL into S for the heads past that chunk. Nothing reads these before the block's
    start i is done.

    The dependents d in (i, j0] are common to the 8 spans: for each chunk of heads,
    :func:`_broadcast_sums_block` maximises over them for the 8 spans at once (each arc chunk read
    once, not 8 times), then adds each span's own dependents d in (j0, j] and stores the 8.
    """
    chunks = stride // _LANES
    arcs = _arc_row(0, i + 1, size)  # arcs into d = i + 1, ..., chunk 0
    chunk = size * _LANES  # from one chunk of heads of the arcs to the next
    near = (j0 + _END_BLOCK - 2) // _LANES  # the chunk of the block's last end
    for c in range(0, (n - 1) // _LANES + 1):
        if i > 0 and c <= (i - 1) // _LANES:  # heads <= i: DR into E[j, i, chunk c]
            target = E
            d0 = _chunk_row(j0, c, i, rows, chunks)
            d1 = _chunk_row(j0 + 1, c, i, rows, chunks)
            d2 = _chunk_row(j0 + 2, c, i, rows, chunks)
            d3 = _chunk_row(j0 + 3, c, i, rows, chunks)
            d4 = _chunk_row(j0 + 4, c, i, rows, chunks)
            d5 = _chunk_row(j0 + 5, c, i, rows, chunks)
            d6 = _chunk_row(j0 + 6, c, i, rows, chunks)
            d7 = _chunk_row(j0 + 7, c, i, rows, chunks)
            hi = i - c * _LANES  # the lanes above are heads of the spans themselves
        elif c > near:  # heads past the block: DL into S[i, j, chunk c], cells j0, j0 + 1, ...
            target = S
            d0 = _chunk_row(i, c, j0, rows, chunks)
            d1, d2, d3 = d0 + _LANES, d0 + 2 * _LANES, d0 + 3 * _LANES
            d4, d5, d6, d7 = d0 + 4 * _LANES, d0 + 5 * _LANES, d0 + 6 * _LANES, d0 + 7 * _LANES
            hi = _LANES
        else:
            continue
        _broadcast_sums_block(
            target, d0, d1, d2, d3, d4, d5, d6, d7, hi,
            X,
            i,  # X[i, j0 + q, i + 1] for row q (X has one row per end of the block)
            stride,
            arc_t,
            arcs + c * chunk,
            j0 - i,
        )


@njit(cache=True, fastmath=FASTMATH)
def _fill_charts(n, S, E, rows, X, T, label_one, label_multi, arc_t):  # pragma: no cover
    """Fill S, E and X (layout in :func:`_decode_sentence`) for every span; returns the index
    of X[0, n, 1], where the whole sentence's row starts.

    Spans in blocks of 8 consecutive ends j; within a block by decreasing start i, then
    increasing end j. All sub-spans are ready when needed: (i, k) with k < j comes from an
    earlier block or earlier in the same i, (k, j) with k > i from an earlier i. The order is
    for the caches: the split maximum of (i, j) reads cells (i, k) of S and (j, k) of E for
    every k in (i, j), so the S cells of one start are read for the 8 ends in a row while the E
    cells of the block's ends stay in cache, instead of reading a new start's S cells for every
    span.

    In a full block, the starts with at least ``_TILE_MIN_SPLITS`` split points below j0 go by
    4: the split points that their spans have in common, k in (top start, j0), are maximised
    first for all 4 x 8 spans together (:func:`_tile_bulk`), then each span adds its own: the 8
    spans of a start together for the chunks of heads below the block's own
    (:func:`_block_values`), one by one for the block's chunk (:func:`_span_value_seeded`).
    Nearer the block, where the common part is short, the spans go one by one. Every start below
    a full block attaches its 8 spans to the heads outside the block's chunk together
    (:func:`_attach_block`).

    X has one row per end of the block, (j - j0) stride: the spans of one start overwrite those
    of the start before, whose attachments are done. After the fill it holds the spans (0, j)
    of the last block, the whole sentence among them.
    """
    size = n + 1
    stride = _row_length_jit(size)
    chunks = stride // _LANES
    ahead = n >= _TILE_AHEAD_FROM
    for j0 in range(1, n + 1, _END_BLOCK):
        j1 = min(j0 + _END_BLOCK, n + 1)
        full = j1 - j0 == _END_BLOCK
        near = (j0 + _END_BLOCK - 2) // _LANES  # the chunk of the block's last end
        i = j1 - 2
        while i >= 0:
            if full and i + _TILE_MIN_SPLITS < j0:
                bottom = max(0, i - _TILE_STARTS + 1)
                _tile_bulk(i, bottom, j0, stride, rows, S, E, T, ahead)
                for start in range(i, bottom - 1, -1):
                    # the chunks below the block's own for the 8 ends together, then the
                    # block's chunk span by span, with the attachments that the later spans read
                    _block_values(start, i, j0, stride, rows, S, E, X, T, label_one, label_multi)
                    for j in range(j0, j1):
                        one_score, multi_score = label_one[start, j], label_multi[start, j]
                        x_row = (j - j0) * stride  # X[start, j, h] at x_row + h - 1
                        _span_value_seeded(
                            start, j, i, j0, near, stride, rows, S, E, X, x_row, T, one_score,
                            multi_score,
                        )
                        # the chunks of heads that this block's later spans read
                        _attach_right_heads(
                            start, j, n, near, size, stride, rows, S, X, x_row, arc_t
                        )
                    _attach_block(start, j0, n, size, stride, rows, S, E, X, arc_t)
                i = bottom - 1
                continue
            # A start below a full block attaches its 8 spans to the heads outside the block's
            # chunks together, as the tiled starts do; the others go span by span.
            by_block = full and i < j0
            for j in range(max(j0, i + 1), j1):
                x_row = (j - j0) * stride  # X[i, j, h] at x_row + h - 1
                if j - i == 1:  # a single word: one = multi = X = multi_label
                    value = label_multi[i, j]
                    X[x_row + j - 1] = value
                    S[_cell(i, j, j, rows, chunks)] = value
                    E[_cell(j, i, j, rows, chunks)] = value
                else:
                    _span_value(
                        i, j, stride, rows, S, E, X, x_row, label_one[i, j], label_multi[i, j]
                    )
                if by_block:
                    _attach_right_heads(i, j, n, near, size, stride, rows, S, X, x_row, arc_t)
                elif j - i < n:
                    _attach_outside(i, j, n, size, stride, rows, S, E, X, x_row, arc_t)
            if by_block:
                _attach_block(i, j0, n, size, stride, rows, S, E, X, arc_t)
            i -= 1
    return (n - (n - 1) // _END_BLOCK * _END_BLOCK - 1) * stride  # end n in the last block


@njit(cache=True, fastmath=FASTMATH, inline="always")
def _best_root(x, first, step, one_word, arc, n):  # pragma: no cover - compiled code
    """(root, score): the smallest h maximising one[0, n, h] + arc[0, h] (the whole sentence is a
    ``one`` span; for n = 1, ``one_word``, the one_label of the single word). one[0, n, h] is
    ``x[first + (h - 1) step]`` (the sentence's X row, which either layout addresses)."""
    root = 1
    score = (one_word if n == 1 else x[first]) + arc[0, 1]
    for h in range(2, n + 1):
        value = x[first + (h - 1) * step] + arc[0, h]
        if value > score:  # strict: smallest h among ties
            score = value
            root = h
    return root, score


@njit(cache=True, fastmath=FASTMATH)
def _best_split(S, E, i, j, h, stride, rows):  # pragma: no cover - compiled code
    """(k, raw): raw = raw[i, j, h] = max_k S[i, k, h] + E[j, k, h], k the first split reaching it.

    (The bound on k only matters for NaN scores, which are not supported.)
    """
    chunks = stride // _LANES
    s_row = _cell(i, 0, h, rows, chunks)  # S[i, k, h] = s_row + 8 k
    e_row = _cell(j, 0, h, rows, chunks)  # E[j, k, h] = e_row + 8 k
    k = i + 1
    raw = S[s_row + k * _LANES] + E[e_row + k * _LANES]
    for split in range(i + 2, j):  # one pass; strict: the first split among ties
        value = S[s_row + split * _LANES] + E[e_row + split * _LANES]
        if value > raw:
            raw = value
            k = split
    return k, raw


@njit(cache=True, fastmath=FASTMATH)
def _best_dependent(
    S, E, rows, stride, T, label_one, arc, a, b, h, head_value, raw
):  # pragma: no cover - compiled code
    """The first dependent head d in (a, b] of the dependent child (a, b) with
    (X[a, b, d] + arc[h, d]) + head_value == raw (the last, b, if none before it).

    X is not kept after the fill (:func:`_fill_charts`), so X[a, b, d] is recomputed from the
    charts for every d at once, by the fill's own vector kernel, into the first row of T (free
    after the fill): raw[a, b, d] + one_label(a, b), the same bits as the fill's. A single word
    has one candidate and needs none. For the n - 1 arcs of the best tree only.
    """
    if b - a == 1:
        return b
    chunks = stride // _LANES
    one = label_one[a, b]
    spare = stride  # T's second row takes the kernel's multi values, which are not needed
    for c in range(a // _LANES, (b - 1) // _LANES + 1):
        _split_max(
            T,
            T,
            T,
            c * _LANES,  # X[a, b, 8 c + 1 ...] at T[8 c]: X[a, b, d] at T[d - 1]
            spare,
            spare,
            one,
            one,
            S,
            _chunk_row(a, c, a + 1, rows, chunks),  # S[a, k, chunk c] for k = a + 1, ...
            E,
            _chunk_row(b, c, a + 1, rows, chunks),  # E[b, k, chunk c] for k = a + 1, ...
            b - a - 1,
        )
    d = a + 1
    while d < b:
        if (T[d - 1] + arc[h, d]) + head_value == raw:
            break
        d += 1
    return d


@njit(cache=True, fastmath=FASTMATH, inline="always")
def _push(stack, top, i, j, h, role):  # pragma: no cover - compiled code
    stack[top, 0] = i
    stack[top, 1] = j
    stack[top, 2] = h
    stack[top, 3] = role


@njit(cache=True, fastmath=FASTMATH, inline="always")
def _pop_node(stack, top, pos, out_spans, sent):  # pragma: no cover - compiled code
    """Pop the traceback's next node (i, j, head, role) off ``stack`` (``top`` entries) and write
    (i, j, role) at row ``pos`` of out_spans: the role for now, the label at the end
    (:func:`_label_nodes`), whose label scores this prefetches. Returns (top, i, j, head)."""
    top -= 1
    i = stack[top, 0]
    j = stack[top, 1]
    out_spans[pos, 0] = i
    out_spans[pos, 1] = j
    out_spans[pos, 2] = stack[top, 3]
    prefetch_row(sent[i, j])  # long out of the caches after the chart fill
    return top, i, j, stack[top, 2]


@njit(cache=True, fastmath=FASTMATH)
def _trace_back(
    sent, arc, n, S, E, rows, T, label_one, root, stack, out_spans, out_heads
):  # pragma: no cover - compiled code
    """Write the 2n - 1 nodes of the best tree in pre-order to out_spans (2n - 1, 3) and the
    heads to out_heads (n,), recovering the split k and dependent head d of each node from the
    charts. stack: (>= n + 1, 4) int64 workspace of pending (i, j, head, role); T: the tile
    workspace, free after the fill, where :func:`_best_dependent` recomputes X rows."""
    size = n + 1
    stride = _row_length_jit(size)
    chunks = stride // _LANES
    out_heads[root - 1] = 0
    _push(stack, 0, 0, n, root, _ROLE_ROOT)
    top = 1
    pos = 0
    while top > 0:
        top, i, j, h = _pop_node(stack, top, pos, out_spans, sent)
        pos += 1
        if j - i == 1:
            continue
        k, raw = _best_split(S, E, i, j, h, stride, rows)
        if h > k:  # head right: dependent head d in (i, k]
            head_value = E[_cell(j, k, h, rows, chunks)]  # multi[k, j, h]
            d = _best_dependent(
                S, E, rows, stride, T, label_one, arc, i, k, h, head_value, raw
            )
            _push(stack, top, k, j, h, _ROLE_HEAD)  # right child, popped after the left subtree
            _push(stack, top + 1, i, k, d, _ROLE_DEP)
        else:  # head left: dependent head d in (k, j]
            head_value = S[_cell(i, k, h, rows, chunks)]  # multi[i, k, h]
            d = _best_dependent(
                S, E, rows, stride, T, label_one, arc, k, j, h, head_value, raw
            )
            _push(stack, top, k, j, d, _ROLE_DEP)
            _push(stack, top + 1, i, k, h, _ROLE_HEAD)
        out_heads[d - 1] = h
        top += 2
    _label_nodes(out_spans, n, sent, label_one)


@njit(cache=True, fastmath=FASTMATH)
def _decode_sentence(
    sent, arc, n, S, E, rows, X, T, lab_buf, arc_t, stack, out_spans, out_heads
):  # pragma: no cover - compiled code
    """Decode one sentence; returns the tree score (working dtype).

    sent: (>= n + 1, >= n + 1, L); arc: (>= n + 1, >= n + 1) [head, dependent]. S, E, X: flat
    workspaces, zero-filled once. X holds ``_END_BLOCK`` rows of ``stride`` (the heads 1..n in
    whole chunks of 8, head h at h - 1): those of the
    spans of the start being filled in the current block of ends (:func:`_fill_charts`), S
    and E blocks of cells, one per start or end and chunk of heads
    (:func:`_se_layout`, whose table goes to ``rows``); S and E may be one buffer, as S only
    uses cells with a < b and E cells with a > b. arc_t: (n + 1) x stride, by chunks of heads
    (:func:`_transpose_arcs`); lab_buf: 2 (n + 1)^2. Chart contents (see the module
    docstring), for cell (a, b): S: multi[a, b, h] for h in (a, b], DL[a, b, h] for h > b;
    E (cell (j, k)): DR[k, j, h] for h <= k, multi[k, j, h] for h in (k, j]; X: the value of
    (a, b, h) as a dependent, while the attachments of (a, b) read it.
    """
    size = n + 1
    stride = _row_length_jit(size)
    label_one = lab_buf[: size * size].reshape((size, size))
    label_multi = lab_buf[size * size : 2 * size * size].reshape((size, size))
    _transpose_arcs(arc, n, stride, arc_t)
    _label_tables(sent, n, label_one, label_multi)
    _se_layout(n, rows)
    row_root = _fill_charts(n, S, E, rows, X, T, label_one, label_multi, arc_t)
    # X[0, n, h] for h = 1, ..., n
    root, score = _best_root(X, row_root, 1, label_one[0, 1], arc, n)
    _trace_back(sent, arc, n, S, E, rows, T, label_one, root, stack, out_spans, out_heads)
    return score


@njit(cache=True, parallel=True, fastmath=FASTMATH)
def _decode_batch(
    span_scores, arc_scores, lengths, order, workspaces, out_spans, out_heads, out_scores
):  # pragma: no cover - compiled code
    """Decode every sentence of the batch (workers parallel over sentences).

    order: the ids of the sentences to decode, longest first; worker w decodes order[w],
    order[w + num_workers], ...
    workspaces: the S/E, X, transposed arc and tile buffers, (num_workers, ...) each
    (:func:`_workspaces`).
    """
    se_all, x_all, arc_all, tile_all = workspaces
    count = order.shape[0]
    num_workers = se_all.shape[0]
    size = lengths[order[0]] + 1  # longest sentence + 1
    stride = _row_length_jit(size)
    for worker in prange(num_workers):
        # S and E in one buffer: S cells (a, b) have a < b, E cells (j, k) have j > k.
        se_buf = se_all[worker]
        se_rows = np.empty(size * (stride // _LANES), dtype=np.int64)
        x_buf = x_all[worker]
        arc_t = arc_all[worker]
        tile = tile_all[worker]
        lab_buf = np.empty(2 * size * size, dtype=span_scores.dtype)
        stack = np.empty((size + 1, 4), dtype=np.int64)
        for t in range(worker, count, num_workers):
            b = order[t]
            out_scores[b] = _decode_sentence(
                span_scores[b],
                arc_scores[b],
                lengths[b],
                se_buf,
                se_buf,
                se_rows,
                x_buf,
                tile,
                lab_buf,
                arc_t,
                stack,
                out_spans[b],
                out_heads[b],
            )


# ----------------------------------------------------------------------------------------------
# Public entry point.
# ----------------------------------------------------------------------------------------------


def workspace_bytes(max_len: int, dtype) -> int:
    """Bytes of one worker's workspace for sentences of at most ``max_len`` words: the S/E and X
    charts, the transposed arcs and the tiles' rows (:func:`_buffer_cells`), the label tables
    and the traceback stack."""
    size = max_len + 1
    stride = _row_length(size)
    itemsize = np.dtype(dtype).itemsize
    charts = sum(_buffer_cells(max_len)) + 2 * size * size  # the buffers, the label tables
    tables = (size + 1) * 4 + size * stride // _LANES  # the stack, the S/E rows
    return charts * itemsize + tables * 8


@functools.lru_cache(maxsize=64)
def _buffer_cells(max_len: int) -> Tuple[int, int, int, int]:
    """Elements of each worker's aligned buffers for sentences of at most ``max_len`` words (the
    longest of a batch: shorter ones use less of the same buffers): the S/E chart, X, the
    transposed arcs and the tiles' common maxima, each with a vector of spare lanes at its end,
    which the kernels read past the valid range."""
    size = max_len + 1
    stride = _row_length(size)
    se_rows = np.empty(size * (stride // _LANES), dtype=np.int64)
    se_cells = _se_layout(max_len, se_rows)
    x_cells = _END_BLOCK * stride  # the rows of one start's spans in a block of ends
    return tuple(  # type: ignore[return-value]
        cells + _LANES for cells in (se_cells, x_cells, size * stride, _TILE_ROWS * stride)
    )


def _workspaces(max_len: int, dtype, num_workers: int) -> Tuple[np.ndarray, ...]:
    """Each worker's S/E chart, X, transposed arcs and tile rows (:func:`_decode_sentence`),
    zero-filled: the vector kernels also read (and ignore) lanes past the valid range.

    They are allocated here rather than inside the compiled code, so that the choice of pages
    is ours (:func:`_zeros`): numpy asks the kernel for transparent huge pages on large arrays
    (``madvise``), so a chart of gigabytes is faulted in 2 MiB at a time instead of 4 KiB, and
    its scattered reads miss the TLB less, except on VMs where that costs more than it saves.
    """
    return _aligned_buffer_set(num_workers, _buffer_cells(max_len), dtype)


def _available_memory_bytes() -> Optional[int]:
    """The memory this process may still take: the system's available memory (Linux
    ``MemAvailable``), or less under a cgroup (v2) memory limit; ``None`` when unknown."""
    available = None
    try:
        with open("/proc/meminfo", encoding="ascii") as meminfo:
            for line in meminfo:
                if line.startswith("MemAvailable:"):
                    available = int(line.split()[1]) * 1024
                    break
    except OSError:
        return None
    try:
        with open("/sys/fs/cgroup/memory.max", encoding="ascii") as limit_file:
            limit = limit_file.read().strip()
        with open("/sys/fs/cgroup/memory.current", encoding="ascii") as current_file:
            current = int(current_file.read().strip())
        if limit != "max":
            left = int(limit) - current
            available = left if available is None else min(available, left)
    except (OSError, ValueError):
        pass
    return available


_UNCHECKED_BYTES = 64 << 20  # workspaces up to this size are allocated without a memory check


def _workers_that_fit(max_len: int, dtype, num_workers: int) -> int:
    """At most ``num_workers`` parallel workers, as many as have room for a workspace; raises a
    ``MemoryError`` when not even one has."""
    needed = workspace_bytes(max_len, dtype)
    if needed * num_workers <= _UNCHECKED_BYTES:
        return max(1, num_workers)  # small: not worth reading the system's figures every call
    available = _available_memory_bytes()
    if available is None:
        return max(1, num_workers)
    fit = available // needed
    if fit < 1:
        gib = 2**30
        raise MemoryError(
            f"The joint span decoder needs {needed / gib:.1f} GiB of workspace for a sentence of "
            f"{max_len} words (it grows with the cube of the length), but only "
            f"{available / gib:.1f} GiB of memory is available. Split the sentence, or parse it "
            "on a machine with more memory."
        )
    return int(max(1, min(num_workers, fit)))


# Sentences of at most this many words are decoded 8 at a time, one per vector lane
# (:mod:`~lal_allennlp.decoding.joint_span_lanes`); longer ones one at a time. Both give the same
# bits; the limit is where the lanes stop being faster (``benchmarks/README.md``).
LANE_MAX_LEN = 64
# A group costs the lanes about what 8 sentences of its longest length cost them, whatever its
# size and the lengths of the others; one at a time, a sentence of up to 64 words costs about the
# square of its length (the label pass and the call's overheads weigh as much as the O(n^4)
# fill there). So a group goes to the lanes only if its sentences weigh, in sentences of its
# longest length (sum of (length / longest)^2), at least _LANE_MIN_GROUP[t], where its longest
# sentence has at most _LANE_GROUP_LEN[t] words: where groups of that many sentences of one
# length were faster in lanes than one at a time (``benchmarks/README.md``).
_LANE_GROUP_LEN = np.array([20, 24, 36, 44, 52, 60, LANE_MAX_LEN])
_LANE_MIN_GROUP = np.array([1, 2, 4, 5, 6, 7, 8])


@njit(cache=True)
def _weighs_enough(lengths, group, group_len, min_group):  # pragma: no cover - compiled code
    """Whether one group (8 sentence ids, longest first, padded with -1) weighs enough for the
    lanes: the sum of (length / longest)^2, added in pairs as numpy adds a row of 8, at least
    ``min_group[t]`` for the first ``group_len[t]`` not below its longest length."""
    longest = lengths[group[0]]
    terms = np.zeros(8)  # a group's 8 lanes
    for lane in range(8):
        if group[lane] >= 0:
            terms[lane] = (lengths[group[lane]] / longest) ** 2
    weight = ((terms[0] + terms[1]) + (terms[2] + terms[3])) + (
        (terms[4] + terms[5]) + (terms[6] + terms[7])
    )
    return weight >= min_group[np.searchsorted(group_len, longest)]


def _worth_lanes(lengths: np.ndarray, groups: np.ndarray) -> np.ndarray:
    """Which groups (rows of ``groups``, longest first, padded with -1) to decode in lanes."""
    lengths = np.ascontiguousarray(lengths, dtype=np.int64)
    return np.array(
        [_weighs_enough(lengths, group, _LANE_GROUP_LEN, _LANE_MIN_GROUP) for group in groups],
        dtype=bool,
    )


def joint_span_decode(
    span_scores: np.ndarray,
    arc_scores: np.ndarray,
    lengths: np.ndarray,
    lanes: Optional[bool] = None,
) -> Tuple[List[np.ndarray], List[np.ndarray], np.ndarray]:
    """Decode the best joint-span tree (labelled binary tree + dependency heads) of every sentence.

    Parameters
    ----------
    span_scores : ``np.ndarray``, float, shape (batch, max_len + 1, max_len + 1, L), L >= 3
        ``[b, i, j, l]``: score of span (i, j) with label l (0 = empty, 1 = ``<H>``). Cells with
        j <= i or j > lengths[b] are never read.
    arc_scores : ``np.ndarray``, float, shape (batch, max_len + 1, max_len + 1)
        ``[b, h, d]``: score of head h -> dependent word d (words 1..n, h = 0 is the root).
        Column 0, the diagonal and rows/columns past lengths[b] are never read.
    lengths : ``np.ndarray``, int, shape (batch,)
        Sentence lengths in words, each in [1, max_len].
    lanes : ``bool``, optional
        How sentences of at most ``LANE_MAX_LEN`` words are decoded: ``None`` (default) 8 at a
        time in vector lanes where a group (of similar lengths) is large enough for its length
        (from 1 sentence of up to 20 words to 5 of up to 64), else one at a time; ``True`` always
        in lanes; ``False`` always one at a time. The results are the same; only the speed
        differs.

    Returns
    -------
    spans : ``List[np.ndarray]``
        ``spans[b]``, int64 (2 n - 1, 3): rows (i, j, label) in pre-order.
    heads : ``List[np.ndarray]``
        ``heads[b]``, int64 (n,): ``heads[b][w - 1]`` is the head of word w, 0 for the root.
    scores : ``np.ndarray``, float64, shape (batch,)
        Tree scores: chosen span-label scores plus arc scores (see the module docstring).

    Both scores are computed in float32 if both inputs are float32, else in float64.

    Raises
    ------
    MemoryError
        When the workspace of the longest sentence (``workspace_bytes``, O(n^3)) is larger than
        the memory available.
    """
    span_scores = np.asarray(span_scores)
    arc_scores = np.asarray(arc_scores)
    if span_scores.ndim != 4 or span_scores.shape[1] != span_scores.shape[2]:
        raise ValueError(f"span_scores must be (B, N + 1, N + 1, L), got {span_scores.shape}")
    batch_size, max_fence, _, num_labels = span_scores.shape
    if num_labels < 3:
        raise ValueError(
            f"span_scores has {num_labels} labels; the joint span decoder needs at least 3 "
            "(0 = empty, 1 = <H>, then phrase labels)"
        )
    if arc_scores.shape != (batch_size, max_fence, max_fence):
        expected = (batch_size, max_fence, max_fence)
        raise ValueError(f"arc_scores has shape {arc_scores.shape}, expected {expected}")
    dtype = np.float32 if span_scores.dtype == arc_scores.dtype == np.float32 else np.float64
    span_scores = np.ascontiguousarray(span_scores, dtype=dtype)
    arc_scores = np.ascontiguousarray(arc_scores, dtype=dtype)
    lengths = np.ascontiguousarray(lengths, dtype=np.int64).reshape(-1)
    if lengths.shape[0] != batch_size:
        raise ValueError(f"lengths has shape {lengths.shape}, expected ({batch_size},)")
    if batch_size == 0:
        return [], [], np.zeros(0, dtype=np.float64)
    if lengths.min() < 1 or lengths.max() > max_fence - 1:
        raise ValueError(f"lengths must be in [1, {max_fence - 1}], got {lengths}")

    max_len = int(lengths.max())
    out_spans = np.zeros((batch_size, 2 * max_len - 1, 3), dtype=np.int64)
    out_heads = np.zeros((batch_size, max_len), dtype=np.int64)
    out_scores = np.empty(batch_size, dtype=np.float64)
    from lal_allennlp.decoding import joint_span_lanes  # it imports this module's kernels

    # One compiled call sorts the batch into groups for the lanes and the rest (``order``,
    # longest first, dealt round-robin to workers), rather than a dozen numpy calls on small
    # arrays, whose overhead every batch would pay (with the caches cold after the encoder).
    groups, sizes, order = joint_span_lanes.plan(
        lengths, 0 if lanes is False else LANE_MAX_LEN, lanes is None, _LANE_GROUP_LEN,
        _LANE_MIN_GROUP,
    )
    if len(groups):
        lane_len = int(lengths[groups[0, 0]])
        workers = min(numba.get_num_threads(), len(groups))
        joint_span_lanes.decode_groups(
            span_scores, arc_scores, lengths, groups, sizes,
            joint_span_lanes.workspaces(lane_len, dtype, workers),
            out_spans, out_heads, out_scores,
        )
    if len(order):
        alone_len = int(lengths[order[0]])
        num_workers = _workers_that_fit(alone_len, dtype, min(numba.get_num_threads(), len(order)))
        workspaces = _workspaces(alone_len, dtype, num_workers)
        _decode_batch(
            span_scores, arc_scores, lengths, order, workspaces, out_spans, out_heads, out_scores
        )
    sentence_lengths = lengths.tolist()
    spans = [out_spans[b, : 2 * n - 1] for b, n in enumerate(sentence_lengths)]
    heads = [out_heads[b, :n] for b, n in enumerate(sentence_lengths)]
    return spans, heads, out_scores
