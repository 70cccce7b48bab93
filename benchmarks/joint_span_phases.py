"""Where the joint span decoder's time goes, phase by phase, against the work its loops do.

For each length, on seeded random float32 charts (112 labels, standard-normal span and arc
scores), one thread, fastest of ``--repeats`` passes over the batch, microseconds per sentence:

* **CKY**: the plain span CKY (``cky_decode``) on the same span scores: the issue's scale;
* **labels**: the label tables and the transposed arcs (``_label_tables``, ``_transpose_arcs``);
  the CKY reads the same label scores;
* **fill**: the chart fill as the decoder runs it (``_fill_charts``: blocks of 8 ends, tiles);
* **split only** / **attach only**: the same spans in the same order without tiles, with only
  the split maxima (``_span_value``) or only the outside attachments (``_attach_outside``). The
  charts' values are then wrong; the loops, loads and stores are those of the decoder;
* **whole**: ``joint_span_decode`` (also the root, the traceback and the workspace);

and the work: the 8-lane steps that the split maxima and the attachments run (each step two
vector loads or a load and a broadcast, an add and a max; whole chunks of 8 heads, as the kernels
go), against the recurrence's own count (heads x split points, dependents x outside heads, over
8 lanes), and the time per step.

Then, for the lengths that the lane decoder takes (``joint_span_lanes``, 8 sentences to a
group), the same batch through its phases, all taking turns, fastest of ``--repeats``:

* **labels**: each group's label tables and arcs in lanes (``_load_group``, with ``_layout``);
* **fill** and **traceback**: what the group fill (``_fill``) and the 8 tracebacks
  (``_trace_lane``, node labels included) add to it;
* **groups**: ``decode_groups`` on every sentence in groups of 8 (the last one smaller), with
  a workspace allocated once: what the phases sum to;
* **whole**: ``joint_span_decode`` as it runs by default, which also allocates the workspace
  and converts the results, and decodes a last group one sentence at a time where it is too
  small for the lanes (``_worth_lanes``).

    python benchmarks/joint_span_phases.py [--lengths 40 80 160] [--repeats 5]
        [--lane-batches 100]
"""

import argparse
import os
import sys
import time
from typing import Callable, Dict, Tuple

import numba
import numpy as np
from numba import njit

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from lal_allennlp.decoding import joint_span as js  # noqa: E402
from lal_allennlp.decoding import joint_span_lanes as lanes  # noqa: E402
from lal_allennlp.decoding.cky import cky_decode  # noqa: E402
from timing import fastest_in_turns, load_average  # noqa: E402  (benchmarks/timing.py)

_LANES = 8


@njit(cache=True)
def _label_pass(spans, arcs, n, lab_buf, arc_t):  # pragma: no cover - compiled code
    size = n + 1
    stride = js._row_length_jit(size)
    for b in range(spans.shape[0]):
        js._transpose_arcs(arcs[b], n, stride, arc_t)
        label_one = lab_buf[: size * size].reshape((size, size))
        label_multi = lab_buf[size * size :].reshape((size, size))
        js._label_tables(spans[b], n, label_one, label_multi)


@njit(cache=True)
def _fill_pass(
    spans, arcs, n, lab_buf, arc_t, se, rows, x, tile, mode
):  # pragma: no cover - compiled code
    """The label pass, then per sentence the fill: mode 0 as the decoder runs it, 1 the split
    maxima alone, 2 the attachments alone (both untiled, in the decoder's span order)."""
    size = n + 1
    stride = js._row_length_jit(size)
    label_one = lab_buf[: size * size].reshape((size, size))
    label_multi = lab_buf[size * size :].reshape((size, size))
    for b in range(spans.shape[0]):
        js._transpose_arcs(arcs[b], n, stride, arc_t)
        js._label_tables(spans[b], n, label_one, label_multi)
        if mode == 0:
            js._fill_charts(n, se, se, rows, x, tile, label_one, label_multi, arc_t)
            continue
        for j0 in range(1, n + 1, js._END_BLOCK):
            j1 = min(j0 + js._END_BLOCK, n + 1)
            for i in range(j1 - 2, -1, -1):
                for j in range(max(j0, i + 1), j1):
                    x_row = (j - j0) * stride  # X[i, j, h] at x_row + h - 1, as the fill keeps it
                    if mode == 1 and j - i > 1:
                        one, multi = label_one[i, j], label_multi[i, j]
                        js._span_value(i, j, stride, rows, se, se, x, x_row, one, multi)
                    elif mode == 2 and j - i < n:
                        js._attach_outside(i, j, n, size, stride, rows, se, se, x, x_row, arc_t)


@njit(cache=True)
def _lane_pass(
    spans, arcs, lengths, groups, group_sizes, workspace, out_spans, out_heads, out_scores, stage
):  # pragma: no cover - compiled code
    """``decode_groups`` on one worker, up to a stage: 0 the label tables, 1 also the fill,
    2 also the tracebacks."""
    se_all, x_all, lab_all, arc_all, tile_all = workspace
    se, x, lab, arc, tile = se_all[0], x_all[0], lab_all[0], arc_all[0], tile_all[0]
    size = lengths[groups[0, 0]] + 1
    s_off = np.empty(size, np.int64)
    e_off = np.empty(size, np.int64)
    x_off = np.empty(size * size, np.int64)
    stack = np.empty((size + 1, 4), np.int64)
    for g in range(groups.shape[0]):
        members = groups[g, : group_sizes[g]]
        n = lengths[members[0]]
        lanes._layout(n, s_off, e_off, x_off)
        lanes._load_group(spans, arcs, lengths, members, n, lab, arc)
        if stage >= 1:
            lanes._fill(n, lab, arc, se, x, s_off, e_off, x_off, tile)
        if stage >= 2:
            for lane in range(members.shape[0]):
                b = members[lane]
                out_scores[b] = lanes._trace_lane(
                    lane, lengths[b], n, spans[b], arcs[b], lab, se, x, s_off, e_off, x_off,
                    stack, out_spans[b], out_heads[b],
                )


def lane_phases(n: int, batch: int, repeats: int, seed: int, labels: int) -> str:
    """One row of the lane decoder's table (us per sentence)."""
    rng = np.random.default_rng(seed + n)
    spans = rng.standard_normal((batch, n + 1, n + 1, labels), dtype=np.float32)
    arcs = rng.standard_normal((batch, n + 1, n + 1), dtype=np.float32)
    lengths = np.full(batch, n, dtype=np.int64)
    groups, sizes = lanes.group_order(lengths, np.arange(batch))
    workspace = lanes.workspaces(n, np.float32, 1)
    out_spans = np.zeros((batch, 2 * n - 1, 3), np.int64)
    out_heads = np.zeros((batch, n), np.int64)
    out_scores = np.zeros(batch)
    outputs = (out_spans, out_heads, out_scores)
    calls: Dict[str, Callable[[], object]] = {
        f"stage {stage}": (
            lambda stage=stage: _lane_pass(
                spans, arcs, lengths, groups, sizes, workspace, *outputs, stage
            )
        )
        for stage in range(3)
    }
    calls["groups"] = lambda: lanes.decode_groups(
        spans, arcs, lengths, groups, sizes, workspace, *outputs
    )
    calls["whole"] = lambda: js.joint_span_decode(spans, arcs, lengths)
    calls["cky"] = lambda: cky_decode(spans, lengths)
    for call in calls.values():  # compile or load, and warm up
        call()
    us = {name: t / batch * 1e6 for name, t in fastest_in_turns(calls, repeats).items()}
    in_lanes = int(js._worth_lanes(lengths, groups).sum())
    return (
        f"| {n} | {batch} ({len(groups)} groups, {in_lanes} in lanes by default) "
        f"| {us['cky']:,.1f} | {us['stage 0']:,.1f} | {us['stage 1'] - us['stage 0']:,.1f} "
        f"| {us['stage 2'] - us['stage 1']:,.1f} | {us['groups']:,.1f} | {us['whole']:,.1f} "
        f"| {us['groups'] / us['cky']:.2f}x | {us['whole'] / us['cky']:.2f}x |"
    )


def kernel_steps(n: int) -> Tuple[int, int, float, float]:
    """8-lane steps of the split maxima and of the attachments as the kernels run them (whole
    chunks of heads), and the recurrence's counts over 8 lanes."""
    split = attach = 0
    for i in range(n):
        for j in range(i + 1, n + 1):
            length = j - i
            # head h in lane h - 1 of chunk (h - 1) // 8
            if length > 1:
                split += ((j - 1) // _LANES - i // _LANES + 1) * (length - 1)
            if j < n:
                attach += ((n - 1) // _LANES - j // _LANES + 1) * length
            if i > 0:
                attach += ((i - 1) // _LANES + 1) * length
    ideal_split = sum((n + 1 - m) * m * (m - 1) for m in range(2, n + 1)) / _LANES
    ideal_attach = sum((n + 1 - m) * m * (n - m) for m in range(1, n)) / _LANES
    return split, attach, ideal_split, ideal_attach


def best_of(fn: Callable[[], object], repeats: int) -> float:
    fn()
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--lengths", type=int, nargs="+", default=[40, 80, 160])
    parser.add_argument("--labels", type=int, default=112)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--lane-batches",
        type=int,
        nargs="+",
        default=[100],
        help="batch sizes of the lane table (96 and 100 show what a last group of 4 costs)",
    )
    args = parser.parse_args()
    numba.set_num_threads(1)
    print(f"{args.labels} labels, float32, one thread, best of {args.repeats}; us per sentence\n")
    print(
        "| words | sentences | CKY | labels | fill | split only | attach only | whole "
        "| whole / CKY | split steps (/ recurrence) | attach steps (/ recurrence) "
        "| ns per step (split only, attach only) |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|---|")
    for n in args.lengths:
        batch = 100 if n <= 80 else 10
        rng = np.random.default_rng(args.seed + n)
        spans = rng.standard_normal((batch, n + 1, n + 1, args.labels), dtype=np.float32)
        arcs = rng.standard_normal((batch, n + 1, n + 1), dtype=np.float32)
        lengths = np.full(batch, n, dtype=np.int64)
        size = n + 1
        stride = js._row_length(size)
        # the decoder's workspaces of one worker, and the layout tables of this length
        se, x, arc_t, tile = (buffer[0] for buffer in js._workspaces(n, np.float32, 1))
        rows = np.empty(size * (stride // _LANES), np.int64)
        js._se_layout(n, rows)
        lab = np.empty(2 * size * size, np.float32)

        def per_sentence(fn: Callable[[], object]) -> float:
            return best_of(fn, args.repeats) / batch * 1e6

        cky = per_sentence(lambda: cky_decode(spans, lengths))
        labels = per_sentence(lambda: _label_pass(spans, arcs, n, lab, arc_t))
        fill, split_only, attach_only = (
            per_sentence(
                lambda m=mode: _fill_pass(
                    spans, arcs, n, lab, arc_t, se, rows, x, tile, m
                )
            )
            - labels
            for mode in (0, 1, 2)
        )
        whole = per_sentence(lambda: js.joint_span_decode(spans, arcs, lengths))
        split, attach, ideal_split, ideal_attach = kernel_steps(n)
        print(
            f"| {n} | {batch} | {cky:,.1f} | {labels:,.1f} | {fill:,.1f} | {split_only:,.1f} "
            f"| {attach_only:,.1f} | {whole:,.1f} | {whole / cky:.1f}x "
            f"| {split:,} ({split / ideal_split:.2f}) | {attach:,} ({attach / ideal_attach:.2f}) "
            f"| {split_only * 1e3 / split:.2f}, {attach_only * 1e3 / attach:.2f} |"
        )
    lane_lengths = [n for n in args.lengths if n <= js.LANE_MAX_LEN]
    if lane_lengths:
        print(
            "\nThe lane decoder (8 sentences to a group), phases taking turns, us per sentence:\n"
        )
        print(
            "| words | sentences | CKY | labels | fill | traceback | groups | whole "
            "| groups / CKY | whole / CKY |"
        )
        print("|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|")
        for n in lane_lengths:
            for batch in args.lane_batches:
                print(lane_phases(n, batch, args.repeats, args.seed, args.labels))
    print(f"\nload average after the run: {load_average()} on {os.cpu_count()} CPUs")


if __name__ == "__main__":
    main()
