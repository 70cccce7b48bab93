"""The joint span decoder's O(n^4) chart fill and traceback, one sentence at a time.

The recurrence, the charts ``S``, ``E``, ``X`` and the tie rules are those of
:mod:`~lal_allennlp.decoding.joint_span` (its docstring); this module lays the charts out in
memory and fills them with the 8-lane vector kernels of :mod:`~lal_allennlp.decoding.kernels`.

Layout. The charts are stored by chunks of 8 heads (:func:`chunk_row`): for a start i (S) or an
end j (E) and a chunk of heads, the 8 lanes of k = 0, 1, ..., n follow one another, so the split
maximum of a chunk of heads is an 8-lane loop over k that reads two contiguous runs of memory.
Head h is in lane h - 1 (the root, h = 0, has no cells). Every kernel works on whole chunks, and
the workspaces start on a 64-byte boundary, so the vector loads and stores are aligned; lanes
outside a span's range are computed and never read, or, where an attachment shares a chunk with
a span's own heads, masked out of the store. ``S`` only uses cells (a, b) with a < b and ``E``
cells with a > b, so the two share one buffer, which holds only the cells some head of a chunk
uses (:func:`se_layout`): about 2 n^3 / 3 numbers. X, the value of a span as a dependent, is only
read by the span's own attachments, right after its split maxima, and by the traceback for the
n - 1 arcs of the best tree, which recomputes those few values; so X holds only the rows of one
start's spans in a block of 8 ends.

Order. Spans are filled in blocks of 8 consecutive ends (:func:`fill_charts`), within a block by
decreasing start, then increasing end: the S cells of one start are read for the 8 ends in a row
while the E cells of the block's ends stay in cache. Each span takes its split maxima
(:func:`span_value`), then attaches, as a dependent, to every head outside it
(:func:`attach_outside`).

Phases. :data:`PHASES` names the steps of a sentence: the label tables and the transposed arcs
(``labels``), the chart fill (``fill``), the root and the traceback (``traceback``);
:func:`decode_phases` runs a batch up to one of them, for benchmarks that time each.
"""

import functools
from typing import Tuple

import numpy as np
from numba import njit, prange

from lal_allennlp.decoding.joint_span_tables import (
    ROLE_DEP,
    ROLE_HEAD,
    ROLE_ROOT,
    best_root,
    label_nodes,
    label_tables,
    pop_node,
    push,
)
from lal_allennlp.decoding.kernels import FASTMATH, LANES, max_of_broadcast_sums, split_max
from lal_allennlp.decoding.memory import aligned_buffers

__all__ = ["PHASES", "decode_phases", "decode_sentences", "workspace_bytes", "workspaces"]

PHASES = ("labels", "fill", "traceback")
_END_BLOCK = 8  # spans are filled in blocks of this many ends (:func:`fill_charts`)


def row_length(size: int) -> int:
    """Elements per row of X and per cell of the S/E chart: heads 1..n (n = size - 1) in whole
    chunks of 8, head h in lane h - 1 (:func:`cell`)."""
    return max(1, (size - 1 + LANES - 1) // LANES) * LANES


_row_length = njit(cache=True)(row_length)


@njit(cache=True, inline="always")
def chunk_row(a, c, b, rows, chunks):  # pragma: no cover - compiled code
    """Index of cell (a, b), heads chunk c (heads 8 c + 1 .. 8 c + 8), in the S/E chart
    (``rows`` from :func:`se_layout`, ``chunks`` chunks of heads per cell).

    For each a and chunk, the cells b lie one after the other, 8 lanes each, so that a loop over
    b (the split point k) reads contiguous memory.
    """
    return rows[a * chunks + c] + b * LANES


@njit(cache=True, inline="always")
def cell(a, b, h, rows, chunks):  # pragma: no cover - compiled code
    """Index of (a, b, h) in the S/E chart: lane h - 1 of chunk (h - 1) // 8."""
    return chunk_row(a, (h - 1) // LANES, b, rows, chunks) + (h - 1) % LANES


@njit(cache=True)
def se_layout(n, rows):  # pragma: no cover - compiled code
    """Fills ``rows`` ((n + 1) * chunks entries) for :func:`chunk_row` and returns the size of
    the S/E chart in elements.

    For each a and chunk c, one block of cells b, 8 lanes each. S only uses cells (a, b) with
    b > a, for the heads h > a, and E cells (a, b) with b < a, for the heads h <= a. So a
    block holds the cells b > a only if its chunk has heads above a, and the cells b < a only
    if it has heads up to a. A margin of one block of n + 1 cells before and after keeps every
    b in [0, n] of every block inside the buffer.
    """
    size = n + 1
    chunks = _row_length(size) // LANES
    total = size * LANES  # the margin before
    for a in range(size):
        first_s = a // LANES  # the chunks with heads > a: first_s, ...
        last_e = (a - 1) // LANES  # the chunks with heads <= a: ..., last_e
        for c in range(chunks):
            low = 0 if c <= last_e else a + 1
            high = n if c >= first_s else a - 1
            rows[a * chunks + c] = total - low * LANES
            total += (high - low + 1) * LANES
    return total + size * LANES  # and the margin after


@njit(cache=True, inline="always")
def _arc_row(c, d, size):  # pragma: no cover - compiled code
    """Index of the arcs from the heads of chunk c into dependent d in the transposed arcs
    (:func:`_transpose_arcs`): for each chunk, d = 0, 1, ... one after the other."""
    return (c * size + d) * LANES


@njit(cache=True, fastmath=FASTMATH)
def _transpose_arcs(arc, n, arc_t):  # pragma: no cover - compiled code
    """arc_t[_arc_row((h - 1) // 8, d) + (h - 1) % 8] = arc[h, d] for h in [1, n], d in
    [0, n]: for each chunk of 8 heads, the arcs into d = 0, 1, ... one after the other (8 lanes
    each). The root's arcs, h = 0, are read from arc itself."""
    size = n + 1
    for h in range(1, n + 1):
        for d in range(n + 1):
            arc_t[_arc_row((h - 1) // LANES, d, size) + (h - 1) % LANES] = arc[h, d]


@njit(cache=True, fastmath=FASTMATH)
def span_value(
    i, j, stride, rows, S, E, X, x_row, one_score, multi_score
):  # pragma: no cover - compiled code
    """Span (i, j), j - i >= 2, for every head h in (i, j], 8 lanes at a time::

        raw[i, j, h] = max_{k in (i, j)} S[i, k, h] + E[j, k, h]
        X[i, j, h] = raw + one_score;  S[i, j, h] = E[j, i, h] = raw + multi_score (multi)

    Lanes past j land in parts of the cells that are written later or never read.
    """
    chunks = stride // LANES
    # Whole chunks of 8 heads (the lanes h <= i of the first are computed and ignored), so that
    # every vector load and store is aligned: the buffers are aligned to 64 bytes.
    for c in range(i // LANES, (j - 1) // LANES + 1):
        split_max(
            X,
            S,
            E,
            x_row + c * LANES,
            chunk_row(i, c, j, rows, chunks),  # S[i, j, chunk c]
            chunk_row(j, c, i, rows, chunks),  # E[j, i, chunk c]
            one_score,
            multi_score,
            S,
            chunk_row(i, c, i + 1, rows, chunks),  # S[i, k, chunk c] for k = i + 1, ...
            E,
            chunk_row(j, c, i + 1, rows, chunks),  # E[j, k, chunk c] for k = i + 1, ...
            j - i - 1,
        )


@njit(cache=True, fastmath=FASTMATH)
def attach_outside(i, j, n, stride, rows, S, E, X, x_row, arc_t):  # pragma: no cover
    """Best attachment of span (i, j), as a dependent, to every head outside it::

        DL[i, j, h] = max_{d in (i, j]} X[i, j, d] + arc[h, d]   for h in (j, n]  (into S)
        DR[i, j, h] = the same                                   for h in [1, i]  (into E)

    By whole chunks of 8 heads. The chunk that holds j + 1 (into S) or i (into E) also holds
    heads of the span itself, whose multi values :func:`span_value` wrote there: those lanes
    keep their values.
    """
    size = n + 1
    chunks = stride // LANES
    row_x = x_row + i  # X[i, j, i + 1]
    for c in range(j // LANES, (n - 1) // LANES + 1):  # none for the whole sentence (j = n)
        max_of_broadcast_sums(
            S,
            chunk_row(i, c, j, rows, chunks),  # S[i, j, chunk c]
            X,
            row_x,
            arc_t,
            _arc_row(c, i + 1, size),  # arcs into d = i + 1, ...
            j - i,
            max(0, j - c * LANES),
            LANES,
        )
    for c in range(0, (i - 1) // LANES + 1 if i > 0 else 0):
        max_of_broadcast_sums(
            E,
            chunk_row(j, c, i, rows, chunks),  # E[j, i, chunk c]
            X,
            row_x,
            arc_t,
            _arc_row(c, i + 1, size),
            j - i,
            0,
            min(LANES, i - c * LANES),
        )


@njit(cache=True, fastmath=FASTMATH)
def fill_charts(n, S, E, rows, X, label_one, label_multi, arc_t):  # pragma: no cover
    """Fill S, E and X for every span; returns the index of X[0, n, 1], where the whole
    sentence's row starts.

    Spans in blocks of 8 consecutive ends j; within a block by decreasing start i, then
    increasing end j. All sub-spans are ready when needed: (i, k) with k < j comes from an
    earlier block or earlier in the same i, (k, j) with k > i from an earlier i. X has one row
    per end of the block, (j - j0) stride: the spans of one start overwrite those of the start
    before, whose attachments are done. After the fill it holds the spans (0, j) of the last
    block, the whole sentence among them.
    """
    stride = _row_length(n + 1)
    chunks = stride // LANES
    for j0 in range(1, n + 1, _END_BLOCK):
        j1 = min(j0 + _END_BLOCK, n + 1)
        for i in range(j1 - 2, -1, -1):
            for j in range(max(j0, i + 1), j1):
                x_row = (j - j0) * stride  # X[i, j, h] at x_row + h - 1
                if j - i == 1:  # a single word: one = multi = X = multi_label
                    value = label_multi[i, j]
                    X[x_row + j - 1] = value
                    S[cell(i, j, j, rows, chunks)] = value
                    E[cell(j, i, j, rows, chunks)] = value
                else:
                    span_value(
                        i, j, stride, rows, S, E, X, x_row, label_one[i, j], label_multi[i, j]
                    )
                if j - i < n:
                    attach_outside(i, j, n, stride, rows, S, E, X, x_row, arc_t)
    return (n - (n - 1) // _END_BLOCK * _END_BLOCK - 1) * stride  # end n in the last block


@njit(cache=True, fastmath=FASTMATH)
def _best_split(S, E, i, j, h, stride, rows):  # pragma: no cover - compiled code
    """(k, raw): raw = raw[i, j, h] = max_k S[i, k, h] + E[j, k, h], k the first split reaching
    it (strict comparison: the first split among ties)."""
    chunks = stride // LANES
    s_row = cell(i, 0, h, rows, chunks)  # S[i, k, h] = s_row + 8 k
    e_row = cell(j, 0, h, rows, chunks)  # E[j, k, h] = e_row + 8 k
    k = i + 1
    raw = S[s_row + k * LANES] + E[e_row + k * LANES]
    for split in range(i + 2, j):
        value = S[s_row + split * LANES] + E[e_row + split * LANES]
        if value > raw:
            raw = value
            k = split
    return k, raw


@njit(cache=True, fastmath=FASTMATH)
def _best_dependent(
    S, E, rows, stride, scratch, label_one, arc, a, b, h, head_value, raw
):  # pragma: no cover - compiled code
    """The first dependent head d in (a, b] of the dependent child (a, b) with
    (X[a, b, d] + arc[h, d]) + head_value == raw (the last, b, if none before it).

    X is not kept after the fill (:func:`fill_charts`), so X[a, b, d] is recomputed from the
    charts for every d at once, by the fill's own vector kernel, into the first row of
    ``scratch`` (2 rows): raw[a, b, d] + one_label(a, b), the same bits as the fill's. A single
    word has one candidate and needs none. For the n - 1 arcs of the best tree only.
    """
    if b - a == 1:
        return b
    chunks = stride // LANES
    one = label_one[a, b]
    spare = stride  # the second row takes the kernel's multi values, which are not needed
    for c in range(a // LANES, (b - 1) // LANES + 1):
        split_max(
            scratch,
            scratch,
            scratch,
            c * LANES,  # X[a, b, 8 c + 1 ...] at scratch[8 c]: X[a, b, d] at scratch[d - 1]
            spare,
            spare,
            one,
            one,
            S,
            chunk_row(a, c, a + 1, rows, chunks),  # S[a, k, chunk c] for k = a + 1, ...
            E,
            chunk_row(b, c, a + 1, rows, chunks),  # E[b, k, chunk c] for k = a + 1, ...
            b - a - 1,
        )
    d = a + 1
    while d < b:
        if (scratch[d - 1] + arc[h, d]) + head_value == raw:
            break
        d += 1
    return d


@njit(cache=True, fastmath=FASTMATH)
def trace_back(
    sent, arc, n, S, E, rows, scratch, label_one, root, stack, out_spans, out_heads
):  # pragma: no cover - compiled code
    """Write the 2n - 1 nodes of the best tree in pre-order to out_spans (2n - 1, 3) and the
    heads to out_heads (n,), recovering the split k and dependent head d of each node from the
    charts. stack: (>= n + 1, 4) int64 workspace of pending (i, j, head, role); scratch: 2
    rows of X, free after the root is chosen, where :func:`_best_dependent` recomputes X."""
    stride = _row_length(n + 1)
    chunks = stride // LANES
    out_heads[root - 1] = 0
    push(stack, 0, 0, n, root, ROLE_ROOT)
    top = 1
    pos = 0
    while top > 0:
        top, i, j, h = pop_node(stack, top, pos, out_spans)
        pos += 1
        if j - i == 1:
            continue
        k, raw = _best_split(S, E, i, j, h, stride, rows)
        if h > k:  # head right: dependent head d in (i, k]
            head_value = E[cell(j, k, h, rows, chunks)]  # multi[k, j, h]
            d = _best_dependent(
                S, E, rows, stride, scratch, label_one, arc, i, k, h, head_value, raw
            )
            push(stack, top, k, j, h, ROLE_HEAD)  # right child, popped after the left subtree
            push(stack, top + 1, i, k, d, ROLE_DEP)
        else:  # head left: dependent head d in (k, j]
            head_value = S[cell(i, k, h, rows, chunks)]  # multi[i, k, h]
            d = _best_dependent(
                S, E, rows, stride, scratch, label_one, arc, k, j, h, head_value, raw
            )
            push(stack, top, k, j, d, ROLE_DEP)
            push(stack, top + 1, i, k, h, ROLE_HEAD)
        out_heads[d - 1] = h
        top += 2
    label_nodes(out_spans, n, sent, label_one)


@njit(cache=True, fastmath=FASTMATH)
def _decode_sentence(
    sent, arc, n, se, rows, X, lab_buf, arc_t, stack, out_spans, out_heads, last_phase
):  # pragma: no cover - compiled code
    """Decode one sentence up to phase ``last_phase`` (an index into :data:`PHASES`; all of
    them: 2); returns the tree score (working dtype) after the traceback, else 0.

    sent: (>= n + 1, >= n + 1, L); arc: (>= n + 1, >= n + 1) [head, dependent]; se, X and
    arc_t: a worker's rows of :func:`workspaces` (the S/E chart, X, the transposed arcs);
    rows: (n + 1) x chunks int64, for :func:`se_layout`; lab_buf: 2 (n + 1)^2 for the label
    tables; stack: (>= n + 1, 4) int64. X is free once the root is chosen: the traceback uses
    it as its scratch rows.
    """
    size = n + 1
    label_one = lab_buf[: size * size].reshape((size, size))
    label_multi = lab_buf[size * size : 2 * size * size].reshape((size, size))
    _transpose_arcs(arc, n, arc_t)
    label_tables(sent, n, label_one, label_multi)
    if last_phase < 1:
        return 0.0
    se_layout(n, rows)
    row_root = fill_charts(n, se, se, rows, X, label_one, label_multi, arc_t)
    if last_phase < 2:
        return 0.0
    root, score = best_root(X, row_root, 1, label_one[0, 1], arc, n)  # X[0, n, h], h = 1, ...
    trace_back(sent, arc, n, se, se, rows, X, label_one, root, stack, out_spans, out_heads)
    return score


@njit(cache=True, parallel=True, fastmath=FASTMATH)
def _decode_batch(
    span_scores, arc_scores, lengths, order, workspace, out_spans, out_heads, out_scores, last_phase
):  # pragma: no cover - compiled code
    """Decode the sentences ``order`` (longest first) of the batch, workers parallel over
    sentences: worker w decodes order[w], order[w + num_workers], ... with its own row of each
    workspace buffer (:func:`workspaces`)."""
    se_all, x_all, arc_all = workspace
    count = order.shape[0]
    num_workers = se_all.shape[0]
    size = lengths[order[0]] + 1  # longest sentence + 1
    for worker in prange(num_workers):
        rows = np.empty(size * (_row_length(size) // LANES), dtype=np.int64)
        lab_buf = np.empty(2 * size * size, dtype=span_scores.dtype)
        stack = np.empty((size + 1, 4), dtype=np.int64)
        for t in range(worker, count, num_workers):
            b = order[t]
            out_scores[b] = _decode_sentence(
                span_scores[b],
                arc_scores[b],
                lengths[b],
                se_all[worker],
                rows,
                x_all[worker],
                lab_buf,
                arc_all[worker],
                stack,
                out_spans[b],
                out_heads[b],
                last_phase,
            )


def decode_sentences(
    span_scores: np.ndarray,
    arc_scores: np.ndarray,
    lengths: np.ndarray,
    order: np.ndarray,
    workspace: Tuple[np.ndarray, ...],
    out_spans: np.ndarray,
    out_heads: np.ndarray,
    out_scores: np.ndarray,
) -> None:
    """Decode the sentences ``order`` (ids into the batch, longest first) into the outputs, in
    parallel over as many workers as ``workspace`` has rows (:func:`workspaces`, sized for the
    longest). Inputs as ``joint_span_decode`` takes them, C-contiguous, of the working dtype."""
    _decode_batch(
        span_scores, arc_scores, lengths, order, workspace, out_spans, out_heads, out_scores, 2
    )


def decode_phases(
    span_scores: np.ndarray,
    arc_scores: np.ndarray,
    lengths: np.ndarray,
    workspace: Tuple[np.ndarray, ...],
    last_phase: str,
) -> None:
    """Run every sentence of a batch, in batch order, through the phases up to ``last_phase``
    (one of :data:`PHASES`), one worker (``workspace`` with one row); for benchmarks that time
    each phase. Inputs as :func:`decode_sentences`."""
    batch, max_len = len(lengths), int(np.max(lengths))
    _decode_batch(
        span_scores,
        arc_scores,
        lengths,
        np.arange(batch),
        workspace,
        np.zeros((batch, 2 * max_len - 1, 3), dtype=np.int64),
        np.zeros((batch, max_len), dtype=np.int64),
        np.zeros(batch),
        PHASES.index(last_phase),
    )


@functools.lru_cache(maxsize=64)
def _buffer_cells(max_len: int) -> Tuple[int, int, int]:
    """Elements of each worker's buffers for sentences of at most ``max_len`` words (the longest
    of a batch: shorter ones use less of the same buffers): the S/E chart, X and the transposed
    arcs, each with a vector of spare lanes at its end, which the kernels read past the valid
    range."""
    size = max_len + 1
    stride = row_length(size)
    se_cells = se_layout(max_len, np.empty(size * (stride // LANES), dtype=np.int64))
    return tuple(cells + LANES for cells in (se_cells, _END_BLOCK * stride, size * stride))


def workspace_bytes(max_len: int, dtype) -> int:
    """Bytes of one worker's workspace for sentences of at most ``max_len`` words: the S/E and X
    charts, the transposed arcs, the label tables and the traceback stack."""
    size = max_len + 1
    itemsize = np.dtype(dtype).itemsize
    charts = sum(_buffer_cells(max_len)) + 2 * size * size  # the buffers, the label tables
    tables = (size + 1) * 4 + size * row_length(size) // LANES  # the stack, the S/E rows
    return charts * itemsize + tables * 8


def workspaces(max_len: int, dtype, num_workers: int) -> Tuple[np.ndarray, ...]:
    """Each worker's S/E chart, X and transposed arcs, ``(num_workers, cells)`` each, zero-filled
    (the vector kernels also read, and ignore, lanes past the valid range), 64-byte aligned."""
    return aligned_buffers(num_workers, _buffer_cells(max_len), dtype)
