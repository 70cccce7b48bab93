"""Where the joint span decoder's time goes, phase by phase, against the work its loops do.

For each length, on seeded random float32 charts (112 labels, standard-normal span and arc
scores), one thread, the calls taking turns, fastest of ``--repeats``, microseconds per sentence:

* **CKY**: the plain span CKY (``cky_decode``) on the same span scores: the issue's scale;
* **labels**: the label tables and the transposed arcs (the ``labels`` phase of
  ``joint_span_one.decode_phases``); the CKY reads the same label scores;
* **fill**: what the chart fill adds to them (the ``fill`` phase);
* **traceback**: what the root and the traceback add (the ``traceback`` phase);
* **whole**: ``joint_span_decode`` (also the checks of the inputs and the workspace);

and the work: the 8-lane steps that the split maxima and the attachments run (each step two
vector loads or a load and a broadcast, an add and a max; whole chunks of 8 heads, as the kernels
go), against the recurrence's own count (heads x split points, dependents x outside heads, over
8 lanes), and the fill's time per step.

    python benchmarks/joint_span_phases.py [--lengths 40 80 160] [--repeats 5]
"""

import argparse
import os
import sys
from typing import Tuple

import numba
import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from lal_allennlp.decoding import joint_span_one  # noqa: E402
from lal_allennlp.decoding.cky import cky_decode  # noqa: E402
from lal_allennlp.decoding.joint_span import joint_span_decode  # noqa: E402
from timing import fastest_in_turns, load_average  # noqa: E402  (benchmarks/timing.py)

_LANES = 8


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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--lengths", type=int, nargs="+", default=[40, 80, 160])
    parser.add_argument("--labels", type=int, default=112)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    numba.set_num_threads(1)
    print(f"{args.labels} labels, float32, one thread, best of {args.repeats}; us per sentence\n")
    print(
        "| words | sentences | CKY | labels | fill | traceback | whole | whole / CKY "
        "| split steps (/ recurrence) | attach steps (/ recurrence) | ns per step of the fill |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---|---|---:|")
    for n in args.lengths:
        batch = 100 if n <= 80 else 10
        rng = np.random.default_rng(args.seed + n)
        spans = rng.standard_normal((batch, n + 1, n + 1, args.labels), dtype=np.float32)
        arcs = rng.standard_normal((batch, n + 1, n + 1), dtype=np.float32)
        lengths = np.full(batch, n, dtype=np.int64)
        workspace = joint_span_one.workspaces(n, np.float32, 1)
        calls = {
            phase: (
                lambda phase=phase: joint_span_one.decode_phases(
                    spans, arcs, lengths, workspace, phase
                )
            )
            for phase in joint_span_one.PHASES
        }
        calls["whole"] = lambda: joint_span_decode(spans, arcs, lengths)
        calls["cky"] = lambda: cky_decode(spans, lengths)
        for call in calls.values():  # compile or load, and warm up
            call()
        us = {name: t / batch * 1e6 for name, t in fastest_in_turns(calls, args.repeats).items()}
        fill = us["fill"] - us["labels"]
        split, attach, ideal_split, ideal_attach = kernel_steps(n)
        print(
            f"| {n} | {batch} | {us['cky']:,.1f} | {us['labels']:,.1f} | {fill:,.1f} "
            f"| {us['traceback'] - us['fill']:,.1f} | {us['whole']:,.1f} "
            f"| {us['whole'] / us['cky']:.1f}x "
            f"| {split:,} ({split / ideal_split:.2f}) | {attach:,} ({attach / ideal_attach:.2f}) "
            f"| {fill * 1e3 / (split + attach):.2f} |"
        )
    print(f"\nload average after the run: {load_average()} on {os.cpu_count()} CPUs")


if __name__ == "__main__":
    main()
