"""The joint span decoder for short sentences: eight sentences at a time, one in each vector lane.

Same recurrence, same results bit for bit, as :mod:`lal_allennlp.decoding.joint_span` (whose
docstring defines the charts ``S``, ``E``, ``X``, the tie rules and the arithmetic); only the
layout and the loops differ. That decoder puts 8 *heads* of one sentence in a vector; here a
vector holds one chart cell of 8 *sentences* (a group, padded to its longest sentence).

Why: on short sentences most loops of the one-sentence layout are short and many of their lanes
are wasted. A span of m words has m heads, so for m < 8 most of a chunk of 8 heads is computed
and thrown away, and the chunks that straddle a span's own heads are masked. With sentences in
the lanes every lane does work the recurrence needs (a padded sentence's lanes excepted), and
every loop of a span has the same trip count for all its heads. The price is a workspace 8 times
larger per call, which leaves the caches sooner: ``joint_span_decode`` uses this layout for
groups of short sentences only (``benchmarks/README.md`` has the crossover).

Layout of a group whose longest sentence has n words (fenceposts 0..n, N = n + 1); every cell
is 8 lanes, one per sentence, and consecutive cells are consecutive vectors:

* ``S[i][h][k]`` for h, k in (i, n]: ``multi[i, k, h]`` (h <= k) or ``DL[i, k, h]`` (h > k);
* ``E[j][h][k]`` for h in [1, j], k in [0, j): ``DR[k, j, h]`` (h <= k) or ``multi[k, j, h]``;
* ``X[i, j][d]`` for d in (i, j]: the value of (i, j, d) as a dependent;
* the label tables ``one[i, j]``, ``multi[i, j]`` and the arcs ``arc[h][d]``, by lanes.

So the split maximum of span (i, j) and head h reads two contiguous runs, ``S[i][h][i+1..j-1]``
and ``E[j][h][i+1..j-1]``; the outside attachment of span (i, j) to head h reads ``X[i, j][.]``
and ``arc[h][i+1..j]``, also contiguous; the attachments go 8 heads to a loop, each ``X``
vector loaded once for the 8 (:func:`_attach_heads`). Spans are filled in blocks of 16 ends;
within a block, for a start far enough below it, 4 consecutive ends share the split points
below the first of them, and each ``S`` run is loaded once for the 4 (:func:`_split_tile`);
below the block, two starts also share the ``E`` runs (:func:`_split_tile_pair`). Every span
then adds its own split points and writes its values (:func:`_split_heads`), and the 4 spans
attach to the heads outside all of them together, each arc vector loaded once for the 4
(:func:`_attach_tile`).

Lanes of a sentence shorter than n hold values computed from zero scores for spans past its
end. No cell of the sentence's own tree reads them: a span (i, j) only reads cells of spans
inside it and arcs between its words and heads in the sentence.
"""

import numpy as np
from llvmlite import ir
from numba import njit, prange, types
from numba.core import cgutils
from numba.extending import intrinsic

from lal_allennlp.decoding.joint_span import (
    _ROLE_DEP,
    _ROLE_HEAD,
    _ROLE_ROOT,
    EMPTY,
    _first_label,
    _label_nodes,
    _VectorCode,
    _aligned_buffer_set,
    _best_root,
    _check_flat_arrays,
    _pop_node,
    _push,
    _weighs_enough,
)
from lal_allennlp.decoding.kernels import FASTMATH, maxnum, prefetch_row, segment_max

LANES = 8  # sentences per group: one 8-lane vector of float32 (two of float64)
_GROUP_HEADS = 4  # heads per loop of :func:`_split_heads` (:func:`_attach_heads`: 8, 4, 1)
_TILE_ENDS = 4  # ends per :func:`_split_tile`
_TILE_MIN_SPLITS = 4  # tiles only where the 4 ends share at least this many split points
_END_BLOCK = 16  # spans are filled in blocks of this many ends
_PREFETCH_AHEAD = 8  # the label pass prefetches the scores of the span this many spans ahead


# ----------------------------------------------------------------------------------------------
# Vector kernels (8 lanes = 8 sentences). Offsets are in elements of the flat arrays.
# ----------------------------------------------------------------------------------------------


def _split_heads_codegen(heads: int, seeded: bool):
    """Code of :func:`_split_heads`: ``heads`` heads in one loop, one accumulator each."""

    def codegen(context, builder, signature, args):  # pragma: no cover - compiled code
        (x_v, x_off, se_v, s_off, s_step, e_off, e_step, lab_v, one_off, multi_off,
         a_off, a_step, b_off, b_step, count, seed_v, seed_off, a_off2, b_off2, count2) = args
        x_t, se_t, lab_t, seed_t = (signature.args[m] for m in (0, 2, 7, 15))
        code = _VectorCode(context, builder, x_t.dtype)

        def const(value):
            return ir.Constant(count.type, value)

        def term_maker(a_first, b_first):
            a_offs = [builder.add(a_first, builder.mul(const(m), a_step)) for m in range(heads)]
            b_offs = [builder.add(b_first, builder.mul(const(m), b_step)) for m in range(heads)]

            def terms(r):
                shift = builder.mul(r, const(LANES))
                return [
                    code.add(
                        code.load(se_t, se_v, builder.add(a, shift)),
                        code.load(se_t, se_v, builder.add(b, shift)),
                    )
                    for a, b in zip(a_offs, b_offs)
                ]

            return terms

        if seeded:  # the seed, then the split points of two ranges
            accs = [
                cgutils.alloca_once_value(
                    builder, code.load(seed_t, seed_v, builder.add(seed_off, const(LANES * m)))
                )
                for m in range(heads)
            ]
            for terms, number in ((term_maker(a_off, b_off), count),
                                  (term_maker(a_off2, b_off2), count2)):
                with cgutils.for_range(builder, number) as loop:
                    for acc, value in zip(accs, terms(loop.index)):
                        builder.store(code.max(builder.load(acc), value), acc)
        else:
            accs = code.max_over(term_maker(a_off, b_off), count)
        one = code.load(lab_t, lab_v, one_off)
        multi = code.load(lab_t, lab_v, multi_off)
        for m, acc in enumerate(accs):
            raw = builder.load(acc)
            code.store(x_t, x_v, builder.add(x_off, const(LANES * m)), code.add(raw, one))
            value = code.add(raw, multi)
            code.store(se_t, se_v, builder.add(s_off, builder.mul(const(m), s_step)), value)
            code.store(se_t, se_v, builder.add(e_off, builder.mul(const(m), e_step)), value)
        return context.get_dummy_value()

    return codegen


def _split_heads_kernel(heads: int, seeded: bool):
    @intrinsic
    def kernel(
        typingctx, x, x_off, se, s_off, s_step, e_off, e_step, lab, one_off, multi_off,
        a_off, a_step, b_off, b_step, count, seed, seed_off, a_off2, b_off2, count2,
    ):
        if not _check_flat_arrays(x, se, lab, seed):
            return None
        intp = types.intp
        sig = types.void(
            x, intp, se, intp, intp, intp, intp, lab, intp, intp,
            intp, intp, intp, intp, intp, seed, intp, intp, intp, intp,
        )
        return sig, _split_heads_codegen(heads, seeded)

    return kernel


_split_4 = _split_heads_kernel(_GROUP_HEADS, seeded=False)
_split_1 = _split_heads_kernel(1, seeded=False)
_split_4_seeded = _split_heads_kernel(_GROUP_HEADS, seeded=True)
_split_1_seeded = _split_heads_kernel(1, seeded=True)


@njit(cache=True, fastmath=FASTMATH, inline="always")
def _split_heads(
    seeded, heads, x, x_off, se, s_off, s_step, e_off, e_step, lab, one_off, multi_off,
    a_off, a_step, b_off, b_step, count, seed, seed_off, a_off2=0, b_off2=0, count2=0,
):  # pragma: no cover - compiled code
    """The split maxima of ``heads`` consecutive heads of one span, and their values::

        raw_m = max_{r < count} S_m(a_off)[r] + E_m(b_off)[r]                      (not seeded)
        raw_m = max(seed[seed_off + 8 m], max_{r < count} S_m(a_off)[r] + E_m(b_off)[r],
                    max_{r < count2} S_m(a_off2)[r] + E_m(b_off2)[r])              (seeded)
        S_m(a)[r] = se[a + m a_step + 8 r], E_m(b)[r] = se[b + m b_step + 8 r]
        x[x_off + 8 m] = raw_m + one;  se[s_off + m s_step] = se[e_off + m e_step] = raw_m + multi

    (one, multi: the span's label tables at ``lab[one_off]``, ``lab[multi_off]``; every term a
    vector of 8 sentences; count >= 1 unless seeded). Heads go 4 to a loop.
    """
    m = 0
    while m < heads:
        if heads - m >= _GROUP_HEADS:
            kernel_4 = _split_4_seeded if seeded else _split_4
            kernel_4(
                x, x_off + LANES * m, se, s_off + m * s_step, s_step, e_off + m * e_step, e_step,
                lab, one_off, multi_off, a_off + m * a_step, a_step, b_off + m * b_step, b_step,
                count, seed, seed_off + LANES * m, a_off2 + m * a_step, b_off2 + m * b_step,
                count2,
            )
            m += _GROUP_HEADS
        else:
            kernel_1 = _split_1_seeded if seeded else _split_1
            kernel_1(
                x, x_off + LANES * m, se, s_off + m * s_step, s_step, e_off + m * e_step, e_step,
                lab, one_off, multi_off, a_off + m * a_step, a_step, b_off + m * b_step, b_step,
                count, seed, seed_off + LANES * m, a_off2 + m * a_step, b_off2 + m * b_step,
                count2,
            )
            m += 1


def _split_tile_kernel(starts: int):
    """:func:`_split_tile` (one start) or :func:`_split_tile_pair` (two)."""

    @intrinsic
    def kernel(typingctx, t, t_off, t_step, t_low, se, a_off, a_low, b0, b1, b2, b3, count):
        if not _check_flat_arrays(t, se):
            return None
        intp = types.intp
        sig = types.void(t, intp, intp, intp, se, intp, intp, intp, intp, intp, intp, intp)

        def codegen(context, builder, signature, args):  # pragma: no cover - compiled code
            t_v, t_off_v, t_step_v, t_low_v, se_v = args[:5]
            a_offs, b_offs, count_v = args[5 : 5 + starts], args[7:11], args[11]
            t_t, se_t = signature.args[0], signature.args[4]
            code = _VectorCode(context, builder, t_t.dtype)
            step = ir.Constant(count_v.type, LANES)

            def terms(r):
                shift = builder.mul(r, step)
                rows = [code.load(se_t, se_v, builder.add(b, shift)) for b in b_offs]
                sums = []
                for a in a_offs:
                    start_row = code.load(se_t, se_v, builder.add(a, shift))
                    sums += [code.add(start_row, row) for row in rows]
                return sums

            for index, acc in enumerate(code.max_over(terms, count_v)):
                lower, q = divmod(index, _TILE_ENDS)
                first = t_low_v if lower else t_off_v
                target = builder.add(first, builder.mul(ir.Constant(t_off_v.type, q), t_step_v))
                code.store(t_t, t_v, target, builder.load(acc))
            return context.get_dummy_value()

        return sig, codegen

    return kernel


# The split points that 4 spans (i, j), ..., (i, j + 3) share, for one head:
#     t[t_off + q t_step] = max_{r < count} se[a_off + 8 r] + se[b_q + 8 r]      (q < 4)
# (a_off: the head's S run of start i, b_q: its E run of end j + q; count >= 1). Each S vector
# is loaded once for the 4 ends; 4 accumulators. t_low and a_low are not used.
_split_tile = _split_tile_kernel(1)
# The same for starts i (a_off, into t_off) and i - 1 (a_low, into t_low) over the same split
# points: 8 accumulators, each E vector loaded once for the 2 starts.
_split_tile_pair = _split_tile_kernel(2)


def _attach_codegen(spans: int, heads: int):
    """Code of the attachment kernels: ``spans`` spans of one start (ends j, j + 1, ...) by
    ``heads`` heads, one accumulator each. Arguments: dst, the spans' first targets, their steps
    from one head to the next, x, the spans' X rows, arc, arc_off, arc_step, count."""

    def codegen(context, builder, signature, args):  # pragma: no cover - compiled code
        dst_v, dst_offs, dst_steps = args[0], args[1 : 1 + spans], args[1 + spans : 1 + 2 * spans]
        x_v, x_offs = args[1 + 2 * spans], args[2 + 2 * spans : 2 + 3 * spans]
        arc_v, arc_off, arc_step, count = args[2 + 3 * spans :]
        dst_t, x_t = signature.args[0], signature.args[1 + 2 * spans]
        arc_t = signature.args[2 + 3 * spans]
        code = _VectorCode(context, builder, dst_t.dtype)

        def const(value):
            return ir.Constant(count.type, value)

        arc_offs = [builder.add(arc_off, builder.mul(const(m), arc_step)) for m in range(heads)]

        def arcs_at(r):
            shift = builder.mul(r, const(LANES))
            return [code.load(arc_t, arc_v, builder.add(a, shift)) for a in arc_offs]

        def dependent(q, r):
            return code.load(x_t, x_v, builder.add(x_offs[q], builder.mul(r, const(LANES))))

        def terms(r):
            rows = arcs_at(r)
            return [code.add(dependent(q, r), row) for q in range(spans) for row in rows]

        accs = code.max_over(terms, count)
        # span q's own dependents past the common ones: r = count, ..., count + q - 1
        extra = [arcs_at(builder.add(count, const(e))) for e in range(spans - 1)]
        for q in range(1, spans):
            for e in range(q):
                value = dependent(q, builder.add(count, const(e)))
                for m, row in enumerate(extra[e]):
                    acc = accs[q * heads + m]
                    builder.store(code.max(builder.load(acc), code.add(value, row)), acc)
        for index, acc in enumerate(accs):
            q, m = divmod(index, heads)
            target = builder.add(dst_offs[q], builder.mul(const(m), dst_steps[q]))
            code.store(dst_t, dst_v, target, builder.load(acc))
        return context.get_dummy_value()

    return codegen


def _attach_kernel(heads: int):
    @intrinsic
    def kernel(typingctx, dst, dst_off, dst_step, x, x_off, arc, arc_off, arc_step, count):
        if not _check_flat_arrays(dst, x, arc):
            return None
        intp = types.intp
        sig = types.void(dst, intp, intp, x, intp, arc, intp, intp, intp)
        return sig, _attach_codegen(1, heads)

    return kernel


_attach_8 = _attach_kernel(2 * _GROUP_HEADS)
_attach_4 = _attach_kernel(_GROUP_HEADS)
_attach_3 = _attach_kernel(3)
_attach_2 = _attach_kernel(2)
_attach_1 = _attach_kernel(1)


@njit(cache=True, fastmath=FASTMATH, inline="always")
def _attach_heads(
    heads, dst, dst_off, dst_step, x, x_off, arc, arc_off, arc_step, count
):  # pragma: no cover - compiled code
    """Outside attachments of one span to ``heads`` consecutive heads::

        dst[dst_off + m dst_step] = max_{r < count} x[x_off + 8 r] + arc[arc_off + m arc_step + 8 r]

    (x: the span's X row, its dependents d; arc: head m's row of arcs at those d; count >= 1).
    Each X vector is loaded once for 8 or 4 heads.
    """
    m = 0
    while m < heads:
        if heads - m >= 2 * _GROUP_HEADS:
            _attach_8(dst, dst_off + m * dst_step, dst_step, x, x_off, arc,
                      arc_off + m * arc_step, arc_step, count)
            m += 2 * _GROUP_HEADS
        elif heads - m >= _GROUP_HEADS:
            _attach_4(dst, dst_off + m * dst_step, dst_step, x, x_off, arc,
                      arc_off + m * arc_step, arc_step, count)
            m += _GROUP_HEADS
        else:
            _attach_1(dst, dst_off + m * dst_step, dst_step, x, x_off, arc,
                      arc_off + m * arc_step, arc_step, count)
            m += 1


@njit(cache=True, fastmath=FASTMATH, inline="always")
def _attach_few(
    heads, dst, dst_off, dst_step, x, x_off, arc, arc_off, arc_step, count
):  # pragma: no cover - compiled code
    """:func:`_attach_heads` for 1 to 3 heads, in one loop with an accumulator each: a loop
    per head would wait on the latency of its one chain of maxima. Only for a tile's spans and
    the few heads between their ends; in :func:`_attach_heads`, whose remainders follow 8 or 4
    heads at every call site, the extra kernels cost more code than they save
    (``benchmarks/README.md``)."""
    if heads == 3:
        _attach_3(dst, dst_off, dst_step, x, x_off, arc, arc_off, arc_step, count)
    elif heads == 2:
        _attach_2(dst, dst_off, dst_step, x, x_off, arc, arc_off, arc_step, count)
    else:
        _attach_1(dst, dst_off, dst_step, x, x_off, arc, arc_off, arc_step, count)


def _attach_tile_kernel(heads: int):
    @intrinsic
    def kernel(
        typingctx, dst, d0, d1, d2, d3, t0, t1, t2, t3, x, x0, x1, x2, x3, arc, arc_off,
        arc_step, count,
    ):
        if not _check_flat_arrays(dst, x, arc):
            return None
        intp = types.intp
        sig = types.void(dst, *[intp] * 8, x, *[intp] * 4, arc, intp, intp, intp)
        return sig, _attach_codegen(_TILE_ENDS, heads)

    return kernel


_attach_tile_4 = _attach_tile_kernel(_GROUP_HEADS)
_attach_tile_1 = _attach_tile_kernel(1)


@njit(cache=True, fastmath=FASTMATH, inline="always")
def _attach_tile(
    heads, dst, d0, d1, d2, d3, t0, t1, t2, t3, x, x0, x1, x2, x3, arc, arc_off, arc_step, count
):  # pragma: no cover - compiled code
    """Outside attachments of the 4 spans (i, j), ..., (i, j + 3) of one start to ``heads``
    consecutive heads that lie outside all 4::

        dst[d_q + m t_q] = max_{r < count + q} x[x_q + 8 r] + arc[arc_off + m arc_step + 8 r]

    (x_q: span q's X row, its dependents d = i + 1, ...; the 4 spans share the first count =
    j - i of them, and span q has q more; count >= 1). Each arc vector is loaded once for the 4
    spans, and each X vector once for 4 heads.
    """
    m = 0
    while m < heads:
        if heads - m >= _GROUP_HEADS:
            _attach_tile_4(
                dst, d0 + m * t0, d1 + m * t1, d2 + m * t2, d3 + m * t3, t0, t1, t2, t3, x, x0,
                x1, x2, x3, arc, arc_off + m * arc_step, arc_step, count,
            )
            m += _GROUP_HEADS
        else:
            _attach_tile_1(
                dst, d0 + m * t0, d1 + m * t1, d2 + m * t2, d3 + m * t3, t0, t1, t2, t3, x, x0,
                x1, x2, x3, arc, arc_off + m * arc_step, arc_step, count,
            )
            m += 1


# ----------------------------------------------------------------------------------------------
# Layout, inputs by lanes, the fill.
# ----------------------------------------------------------------------------------------------


@njit(cache=True)
def _layout(n, s_off, e_off, x_off):  # pragma: no cover - compiled code
    """Offsets of the S blocks (by start), the E blocks (by end), both in one buffer, and of the
    X rows (by span, ``x_off[i * (n + 1) + j]``); returns the cells of both buffers."""
    size = n + 1
    cells = 0
    for i in range(size):
        s_off[i] = cells
        cells += (n - i) * (n - i) * LANES
    for j in range(size):
        e_off[j] = cells
        cells += j * j * LANES
    se_cells = cells
    cells = 0
    for i in range(size):
        for j in range(i + 1, size):
            x_off[i * size + j] = cells
            cells += (j - i) * LANES
    return se_cells, cells


@njit(cache=True, fastmath=FASTMATH)
def _load_group(span_scores, arc_scores, lengths, members, n, lab, arc):  # pragma: no cover
    """Label tables and arcs of the group's sentences into their lanes; zeros in the lanes of
    spans and arcs outside a sentence (and in unused lanes), which are never read back."""
    size = n + 1
    half = size * size * LANES  # lab: one-label table, then multi-label table
    lab[: 2 * half] = 0
    arc[: half] = 0
    for lane in range(members.shape[0]):
        b = members[lane]
        m = lengths[b]
        sent = span_scores[b]
        for i in range(m):
            for j in range(i + 1, m + 1):
                # as the CKY's label pass: prefetch the scores of a span further on in memory order
                if j + _PREFETCH_AHEAD <= m:
                    prefetch_row(sent[i, j + _PREFETCH_AHEAD])
                elif i + 1 + j + _PREFETCH_AHEAD - m <= m:
                    prefetch_row(sent[i + 1, i + 1 + j + _PREFETCH_AHEAD - m])
                row = sent[i, j]
                best = segment_max(row[_first_label(i, j, m) :])
                cell = (i * size + j) * LANES + lane
                lab[cell] = best
                lab[half + cell] = maxnum(row[EMPTY], best)
        scores = arc_scores[b]
        for h in range(1, m + 1):
            for d in range(1, m + 1):
                arc[(h * size + d) * LANES + lane] = scores[h, d]


@njit(cache=True, fastmath=FASTMATH, inline="always")
def _span_values(
    i, j, n, lab, se, x, s_off, e_off, x_off, tile, tile_off, top, first_split
):  # pragma: no cover - compiled code
    """Values of span (i, j) for all its heads: X, and multi into S and E.

    The heads h in (top, first_split] start from a tile's maxima over the split points k in
    (top, first_split) (``tile[tile_off + 8 (h - top - 1)]``) and add k in (i, top] and
    [first_split, j); the other heads take all of (i, j). Untiled: top = first_split = i.
    """
    size = n + 1
    w = j - i
    one_off = (i * size + j) * LANES
    multi_off = size * size * LANES + one_off
    x_row = x_off[i * size + j]
    s_row = s_off[i]
    e_row = e_off[j]
    s_step = (n - i) * LANES  # from head h to h + 1 in S[i]
    e_step = j * LANES  # from head h to h + 1 in E[j]
    s_here = s_row + (j - i - 1) * LANES  # S[i][i + 1][j]
    e_here = e_row + (i * j + i) * LANES  # E[j][i + 1][i]
    if w == 1:  # a single word: one = one_label, multi = X = multi_label
        for u in range(LANES):
            value = lab[multi_off + u]
            x[x_row + u] = value
            se[s_here + u] = value
            se[e_here + u] = value
    else:
        m = top - i  # the first seeded head, top + 1, is the span's (m + 1)-th
        _split_heads(  # heads (top, first_split]: the seed and the split points outside it
            True, first_split - top, x, x_row + m * LANES, se, s_here + m * s_step, s_step,
            e_here + m * e_step, e_step, lab, one_off, multi_off, s_row + m * s_step, s_step,
            e_row + (top * j + i + 1) * LANES, e_step, top - i, tile, tile_off,
            s_row + m * s_step + (first_split - i - 1) * LANES,
            e_row + (top * j + first_split) * LANES, j - first_split,
        )
        _split_heads(  # heads (i, top]: all split points
            False, top - i, x, x_row, se, s_here, s_step, e_here, e_step, lab, one_off,
            multi_off, s_row, s_step, e_row + (i * j + i + 1) * LANES, e_step, w - 1, tile, 0,
        )
        m = first_split - i
        _split_heads(  # heads (first_split, j]: all split points
            False, j - first_split, x, x_row + m * LANES, se, s_here + m * s_step, s_step,
            e_here + m * e_step, e_step, lab, one_off, multi_off, s_row + m * s_step, s_step,
            e_row + (first_split * j + i + 1) * LANES, e_step, w - 1, tile, 0,
        )


@njit(cache=True, fastmath=FASTMATH, inline="always")
def _finish_span(
    i, j, n, lab, arc, se, x, s_off, e_off, x_off, tile, tile_off, top, first_split
):  # pragma: no cover - compiled code
    """:func:`_span_values` of span (i, j), then its outside attachments (DL, DR)."""
    _span_values(i, j, n, lab, se, x, s_off, e_off, x_off, tile, tile_off, top, first_split)
    size = n + 1
    w = j - i
    x_row = x_off[i * size + j]
    s_step = (n - i) * LANES
    s_here = s_off[i] + (j - i - 1) * LANES  # S[i][i + 1][j]
    arc_step = size * LANES
    if j < n:  # DL[i, j, h] for h in (j, n], into S[i][h][j]
        _attach_heads(
            n - j, se, s_here + w * s_step, s_step, x, x_row, arc,
            ((j + 1) * size + i + 1) * LANES, arc_step, w,
        )
    if i > 0:  # DR[i, j, h] for h in [1, i], into E[j][h][i]
        _attach_heads(
            i, se, e_off[j] + i * LANES, j * LANES, x, x_row, arc, (size + i + 1) * LANES,
            arc_step, w,
        )


@njit(cache=True, fastmath=FASTMATH, inline="always")
def _finish_tile(
    i, j, n, lab, arc, se, x, s_off, e_off, x_off, tile, tile_off, tile_step, top, first_split
):  # pragma: no cover - compiled code
    """:func:`_finish_span` of the 4 spans (i, j), ..., (i, j + 3) of a tile (their tile rows
    from ``tile_off``, ``tile_step`` apart). Each span's values first, with its attachments to
    the heads (j + q, j + 3], which the tile's later spans read; then the attachments of the 4
    spans to the heads outside all of them, together (:func:`_attach_tile`)."""
    size = n + 1
    arc_step = size * LANES
    s_step = (n - i) * LANES
    for q in range(_TILE_ENDS):
        end = j + q
        _span_values(
            i, end, n, lab, se, x, s_off, e_off, x_off, tile, tile_off + q * tile_step, top,
            first_split,
        )
        if q < _TILE_ENDS - 1:  # DL[i, end, h] for h in (end, j + 3], into S[i][h][end]
            w = end - i
            _attach_few(
                _TILE_ENDS - 1 - q, se, s_off[i] + (w - 1) * LANES + w * s_step, s_step, x,
                x_off[i * size + end], arc, ((end + 1) * size + i + 1) * LANES, arc_step, w,
            )
    x0, x1 = x_off[i * size + j], x_off[i * size + j + 1]
    x2, x3 = x_off[i * size + j + 2], x_off[i * size + j + 3]
    far = j + _TILE_ENDS  # DL[i, j + q, h] for h in [far, n], into S[i][h][j + q]
    if far <= n:
        d0 = s_off[i] + (j - i - 1) * LANES + (far - i - 1) * s_step  # S[i][far][j]
        _attach_tile(
            n + 1 - far, se, d0, d0 + LANES, d0 + 2 * LANES, d0 + 3 * LANES, s_step, s_step,
            s_step, s_step, x, x0, x1, x2, x3, arc, (far * size + i + 1) * LANES, arc_step,
            j - i,
        )
    if i > 0:  # DR[i, j + q, h] for h in [1, i], into E[j + q][h][i]
        _attach_tile(
            i, se, e_off[j] + i * LANES, e_off[j + 1] + i * LANES, e_off[j + 2] + i * LANES,
            e_off[j + 3] + i * LANES, j * LANES, (j + 1) * LANES, (j + 2) * LANES,
            (j + 3) * LANES, x, x0, x1, x2, x3, arc, (size + i + 1) * LANES, arc_step, j - i,
        )


@njit(cache=True, fastmath=FASTMATH, inline="always")
def _tile(pair, i, j, n, se, s_off, e_off, tile, tile_step):  # pragma: no cover - compiled code
    """The maxima that spans (i, j), ..., (i, j + 3) share, heads (i, j] and split points (i, j),
    into tile rows 0-3 (:func:`_split_tile`); with ``pair``, also those of (i - 1, j), ...,
    (i - 1, j + 3) over the same heads and split points, into rows 4-7 (:func:`_split_tile_pair`).
    """
    low = _TILE_ENDS * tile_step
    for m in range(j - i):
        h = i + 1 + m
        a_off = s_off[i] + (h - i - 1) * (n - i) * LANES  # S[i][h][i + 1]
        b0 = e_off[j] + ((h - 1) * j + i + 1) * LANES  # E[j][h][i + 1]
        b1 = e_off[j + 1] + ((h - 1) * (j + 1) + i + 1) * LANES
        b2 = e_off[j + 2] + ((h - 1) * (j + 2) + i + 1) * LANES
        b3 = e_off[j + 3] + ((h - 1) * (j + 3) + i + 1) * LANES
        if pair:
            a_low = s_off[i - 1] + ((h - i) * (n - i + 1) + 1) * LANES  # S[i - 1][h][i + 1]
            _split_tile_pair(
                tile, m * LANES, tile_step, low + m * LANES, se, a_off, a_low, b0, b1, b2, b3,
                j - i - 1,
            )
        else:
            _split_tile(tile, m * LANES, tile_step, 0, se, a_off, 0, b0, b1, b2, b3, j - i - 1)


@njit(cache=True, fastmath=FASTMATH)
def _fill(n, lab, arc, se, x, s_off, e_off, x_off, tile):  # pragma: no cover - compiled code
    """Every span's values, in blocks of ends, starts from the top down.

    4 consecutive ends j..j + 3 of a start i share the heads (i, j] and split points (i, j)
    when there are at least ``_TILE_MIN_SPLITS`` of them: their maxima are taken together
    (:func:`_tile`), and each span adds the rest (:func:`_finish_tile`). Starts below the
    block go in pairs (i, i - 1), taking turns by groups of 4 ends: the lower start's spans
    (i - 1, j + q) need the upper start's (i, j + q) and their own at smaller ends, and the
    two share each E vector of their tiles (:func:`_tile`). tile: 8 rows of n + 1 vectors.
    """
    tile_step = (n + 1) * LANES
    low = _TILE_ENDS * tile_step
    for j0 in range(1, n + 1, _END_BLOCK):
        j1 = min(j0 + _END_BLOCK, n + 1)
        i = j1 - 2
        while i >= 0:
            if i >= 1 and j0 - i - 1 >= _TILE_MIN_SPLITS:  # a pair below the block
                j = j0
                while j < j1:
                    if j + _TILE_ENDS <= j1:
                        _tile(True, i, j, n, se, s_off, e_off, tile, tile_step)
                        _finish_tile(
                            i, j, n, lab, arc, se, x, s_off, e_off, x_off, tile, 0, tile_step, i, j
                        )
                        _finish_tile(  # split point i and heads (i - 1, i] too
                            i - 1, j, n, lab, arc, se, x, s_off, e_off, x_off, tile, low,
                            tile_step, i, j,
                        )
                        j += _TILE_ENDS
                    else:
                        for start in (i, i - 1):
                            _finish_span(
                                start, j, n, lab, arc, se, x, s_off, e_off, x_off, tile, 0,
                                start, start,
                            )
                        j += 1
                i -= 2
                continue
            j = max(j0, i + 1)
            while j < j1:
                if j + _TILE_ENDS <= j1 and j - i - 1 >= _TILE_MIN_SPLITS:
                    _tile(False, i, j, n, se, s_off, e_off, tile, tile_step)
                    _finish_tile(
                        i, j, n, lab, arc, se, x, s_off, e_off, x_off, tile, 0, tile_step, i, j
                    )
                    j += _TILE_ENDS
                else:
                    _finish_span(i, j, n, lab, arc, se, x, s_off, e_off, x_off, tile, 0, i, i)
                    j += 1
            i -= 1


# ----------------------------------------------------------------------------------------------
# Root and traceback, one sentence (lane) at a time.
# ----------------------------------------------------------------------------------------------


@njit(cache=True, fastmath=FASTMATH)
def _trace_lane(
    lane, m, n, sent, arc, lab, se, x, s_off, e_off, x_off, stack, out_spans, out_heads
):  # pragma: no cover - compiled code
    """Root, score and tree of the sentence in ``lane`` (m words; arc: its own arc scores), as
    :func:`~lal_allennlp.decoding.joint_span._trace_back` recovers them (same tie rules)."""
    size = n + 1
    # X[0, m][h] at x_off[m] + lane + 8 (h - 1); one_label(0, m), read for a single word
    root, score = _best_root(x, x_off[m] + lane, LANES, lab[m * LANES + lane], arc, m)
    out_heads[root - 1] = 0
    _push(stack, 0, 0, m, root, _ROLE_ROOT)
    top = 1
    pos = 0
    while top > 0:
        top, i, j, h = _pop_node(stack, top, pos, out_spans, sent)
        pos += 1
        if j - i == 1:
            continue
        s_run = s_off[i] + (h - i - 1) * (n - i) * LANES + lane  # S[i][h][k] at + 8 (k - i - 1)
        e_run = e_off[j] + (h - 1) * j * LANES + lane  # E[j][h][k] at + 8 k
        k = i + 1  # the first split reaching the maximum
        raw = se[s_run] + se[e_run + k * LANES]
        for split in range(i + 2, j):
            value = se[s_run + (split - i - 1) * LANES] + se[e_run + split * LANES]
            if value > raw:
                raw = value
                k = split
        if h > k:  # head right: dependent (i, k) with head d in (i, k]
            head_value = se[e_run + k * LANES]  # multi[k, j, h]
            dep_row = x_off[i * size + k] + lane
            d = i + 1
            while d < k and (x[dep_row + (d - i - 1) * LANES] + arc[h, d]) + head_value != raw:
                d += 1
            _push(stack, top, k, j, h, _ROLE_HEAD)
            _push(stack, top + 1, i, k, d, _ROLE_DEP)
        else:  # head left: dependent (k, j) with head d in (k, j]
            head_value = se[s_run + (k - i - 1) * LANES]  # multi[i, k, h]
            dep_row = x_off[k * size + j] + lane
            d = k + 1
            while d < j and (x[dep_row + (d - k - 1) * LANES] + arc[h, d]) + head_value != raw:
                d += 1
            _push(stack, top, k, j, d, _ROLE_DEP)
            _push(stack, top + 1, i, k, h, _ROLE_HEAD)
        out_heads[d - 1] = h
        top += 2
    # The labels last, when the prefetched label scores of all nodes have had time to arrive.
    one_label = lab[: size * size * LANES].reshape((size, size, LANES))[:, :, lane]
    _label_nodes(out_spans, m, sent, one_label)
    return score


@njit(cache=True, parallel=True, fastmath=FASTMATH)
def decode_groups(
    span_scores, arc_scores, lengths, groups, group_sizes, workspaces, out_spans, out_heads,
    out_scores,
):  # pragma: no cover - compiled code
    """Decode groups of up to 8 sentences (``groups[g, :group_sizes[g]]``, longest first, the
    groups longest first); workers parallel over groups, each with its own workspace
    (se, x, lab, arc, tile: (workers, ...) arrays sized for the longest sentence)."""
    se_all, x_all, lab_all, arc_all, tile_all = workspaces
    num_workers = se_all.shape[0]
    num_groups = groups.shape[0]
    size = lengths[groups[0, 0]] + 1
    for worker in prange(num_workers):
        s_off = np.empty(size, np.int64)
        e_off = np.empty(size, np.int64)
        x_off = np.empty(size * size, np.int64)
        stack = np.empty((size + 1, 4), np.int64)
        for g in range(worker, num_groups, num_workers):
            members = groups[g, : group_sizes[g]]
            n = lengths[members[0]]
            lab, arc = lab_all[worker], arc_all[worker]
            se, x, tile = se_all[worker], x_all[worker], tile_all[worker]
            _layout(n, s_off, e_off, x_off)
            _load_group(span_scores, arc_scores, lengths, members, n, lab, arc)
            _fill(n, lab, arc, se, x, s_off, e_off, x_off, tile)
            for lane in range(members.shape[0]):
                b = members[lane]
                out_scores[b] = _trace_lane(
                    lane, lengths[b], n, span_scores[b], arc_scores[b], lab, se, x, s_off, e_off,
                    x_off, stack, out_spans[b], out_heads[b],
                )


def workspaces(max_len: int, dtype, num_workers: int):
    """Each worker's S/E, X, label tables, arcs and tile rows for groups of at most max_len
    words, aligned to 64 bytes (zeros: no lane is read before it is written, but the padding
    lanes of shorter sentences are then finite)."""
    size = max_len + 1
    se_cells, x_cells = _layout(  # the cells of the longest group's layout
        max_len, np.empty(size, np.int64), np.empty(size, np.int64), np.empty(size * size, np.int64)
    )
    cells = (se_cells, x_cells, 2 * size * size * LANES, size * size * LANES,
             2 * _TILE_ENDS * size * LANES)
    return _aligned_buffer_set(num_workers, tuple(c + LANES for c in cells), dtype)


@njit(cache=True)
def _group_order(lengths, indices):  # pragma: no cover - compiled code
    """:func:`group_order` (int64 arrays)."""
    ordered = indices[np.argsort(-lengths[indices], kind="mergesort")]  # stable
    count = (ordered.shape[0] + LANES - 1) // LANES
    groups = np.full((count, LANES), -1, dtype=np.int64)
    sizes = np.empty(count, dtype=np.int64)
    for g in range(count):
        sizes[g] = min(LANES, ordered.shape[0] - LANES * g)
        groups[g, : sizes[g]] = ordered[LANES * g : LANES * g + sizes[g]]
    return groups, sizes


def group_order(lengths: np.ndarray, indices: np.ndarray):
    """Groups of up to 8 of ``indices``, longest sentences first (ties in the order given):
    (groups (G, 8) int64, padded with -1; sizes (G,))."""
    return _group_order(
        np.ascontiguousarray(lengths, dtype=np.int64), np.ascontiguousarray(indices, dtype=np.int64)
    )


@njit(cache=True)
def plan(lengths, max_len, by_weight, group_len, min_group):  # pragma: no cover - compiled code
    """Which sentences of a batch go to the lanes, and how: the groups of the sentences of at
    most ``max_len`` words (:func:`group_order`), keeping only those that weigh enough
    (:func:`~lal_allennlp.decoding.joint_span._weighs_enough`) if ``by_weight``; and the other
    sentences, longest first (ties in batch order). Returns (groups, sizes, others)."""
    batch_size = lengths.shape[0]
    short = np.arange(batch_size)[lengths <= max_len]
    groups, sizes = _group_order(lengths, short)
    keep = np.ones(groups.shape[0], dtype=np.bool_)
    grouped = np.zeros(batch_size, dtype=np.bool_)
    for g in range(groups.shape[0]):
        if by_weight:
            keep[g] = _weighs_enough(lengths, groups[g], group_len, min_group)
        if keep[g]:
            for lane in range(sizes[g]):
                grouped[groups[g, lane]] = True
    others = np.arange(batch_size)[~grouped]
    others = others[np.argsort(-lengths[others], kind="mergesort")]
    return groups[keep], sizes[keep], others
