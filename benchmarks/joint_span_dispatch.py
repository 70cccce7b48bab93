"""Which sentences the joint span decoder should decode 8 at a time in vector lanes.

``joint_span_decode`` decodes sentences of up to ``LANE_MAX_LEN`` words either one at a time or
in groups of up to 8, one sentence per vector lane (:mod:`lal_allennlp.decoding.joint_span_lanes`).
A group costs the lanes about what 8 sentences of its longest length cost, so a small group, or
one of very different lengths, can be slower in lanes. By default (``lanes=None``) a group goes to
the lanes when its sentences weigh enough for its longest length (``_worth_lanes``). This script
measures the two layouts on such groups, so that the rule can be checked or re-fitted on another
machine:

1. groups of 1 to 8 sentences of one length (``--lengths``, ``--sizes``);
2. groups of mixed lengths (``--mixed``, fixed examples of a sorted batch's groups);
3. whole batches of WSJ-like random lengths (gamma-distributed, mean about 25 words), the default
   dispatch of this checkout against every group in lanes and every sentence alone.

For each case, the time one at a time over the time in lanes (``lanes=False`` over
``lanes=True``, above 1 where the lanes are faster), each call repeated so that it takes a few
milliseconds, the layouts taking turns ``--repeats`` times, fastest kept; and what the default
dispatch picks. Seeded random float32 charts, 112 labels, one thread.

    python benchmarks/joint_span_dispatch.py [--lengths 10 20 30 40 48 56 64] [--sizes 1 2 3 4 5 6]
        [--batches 8 32 100] [--repeats 7]
"""

import argparse
import os
import sys
from typing import Callable, Dict, List, Sequence

import numba
import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from lal_allennlp.decoding import joint_span_lanes  # noqa: E402
from lal_allennlp.decoding.joint_span import _worth_lanes, joint_span_decode  # noqa: E402
from timing import fastest_in_turns, load_average  # noqa: E402  (benchmarks/timing.py)

_MIXED = [
    [64, 63, 55, 54, 51, 45, 45, 45],
    [64, 44, 42, 24, 15, 7],
    [63, 55, 51, 45, 27, 21, 6, 1],
    [55, 41, 35, 34, 31, 27, 27, 27],
    [45, 35, 34, 34, 31, 27, 21, 9],
    [35, 30, 28],
    [30, 30, 10, 10],
    [40, 20, 10],
    [25, 22],
]


def _charts(lengths: Sequence[int], labels: int, seed: int):
    rng = np.random.default_rng(seed)
    fence = max(lengths) + 1
    spans = rng.standard_normal((len(lengths), fence, fence, labels), dtype=np.float32)
    arcs = rng.standard_normal((len(lengths), fence, fence), dtype=np.float32)
    return spans, arcs, np.array(lengths)


def _ratio(lengths: Sequence[int], labels: int, repeats: int, seed: int) -> Dict[str, float]:
    """Times (seconds per call) of the three dispatches on one batch, trees checked equal."""
    spans, arcs, lengths_array = _charts(lengths, labels, seed)
    calls = max(1, 400_000 // sum(n**3 // 10 + 2_000 for n in lengths))  # a few ms per call

    def run(lanes) -> Callable[[], object]:
        def fn() -> None:
            for _ in range(calls):
                joint_span_decode(spans, arcs, lengths_array, lanes=lanes)

        return fn

    fns = {"alone": run(False), "lanes": run(True), "default": run(None)}
    outputs = [joint_span_decode(spans, arcs, lengths_array, lanes=x) for x in (False, True)]
    for a, b in zip(outputs[0][:2], outputs[1][:2]):
        assert all(np.array_equal(x, y) for x, y in zip(a, b)), "layouts disagree"
    for fn in fns.values():
        fn()
    return {name: t / calls for name, t in fastest_in_turns(fns, repeats).items()}


def _in_lanes(lengths: Sequence[int]) -> np.ndarray:
    """Which groups of these sentences (all of at most LANE_MAX_LEN words) the default
    dispatch decodes in lanes."""
    lengths_array = np.array(lengths)
    groups, _ = joint_span_lanes.group_order(lengths_array, np.arange(len(lengths)))
    return _worth_lanes(lengths_array, groups)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--lengths", type=int, nargs="+", default=[10, 20, 30, 40, 48, 56, 64])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1, 2, 3, 4, 5, 6])
    parser.add_argument("--batches", type=int, nargs="+", default=[8, 32, 100])
    parser.add_argument("--labels", type=int, default=112)
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()
    numba.set_num_threads(1)

    print("One length: time one at a time / time in lanes (default dispatch in brackets)\n")
    print("| words | " + " | ".join(f"{s} sentences" for s in args.sizes) + " |")
    print("|---:|" + "---:|" * len(args.sizes))
    for n in args.lengths:
        cells: List[str] = []
        for size in args.sizes:
            times = _ratio([n] * size, args.labels, args.repeats, seed=n * 10 + size)
            lanes = "lanes" if _in_lanes([n] * size).all() else "alone"
            cells.append(f"{times['alone'] / times['lanes']:.2f}x ({lanes})")
        print(f"| {n} | " + " | ".join(cells) + " |")

    print("\nMixed lengths (one group each)\n")
    print("| lengths | weight | alone / lanes | default |")
    print("|---|---:|---:|---|")
    for lengths in _MIXED:
        times = _ratio(lengths, args.labels, args.repeats, seed=len(lengths))
        weight = sum((n / max(lengths)) ** 2 for n in lengths)
        lanes = "lanes" if _in_lanes(lengths).all() else "alone"
        print(f"| {lengths} | {weight:.2f} | {times['alone'] / times['lanes']:.2f}x | {lanes} |")

    print("\nWSJ-like batches (lengths 1 to 64, mean about 25): us per sentence\n")
    print(
        "| sentences | default picks | default | all in lanes | all alone "
        "| faster of the two / default |"
    )
    print("|---:|---|---:|---:|---:|---:|")
    for count in args.batches:
        rng = np.random.default_rng(count)
        lengths = np.clip(rng.gamma(4.0, 6.3, count).astype(int) + 1, 1, 64).tolist()
        times = _ratio(lengths, args.labels, args.repeats, seed=count)
        us = {name: t / count * 1e6 for name, t in times.items()}
        best = min(us["lanes"], us["alone"])
        keep = _in_lanes(lengths)
        print(
            f"| {count} | {keep.sum()} of {len(keep)} groups in lanes | {us['default']:.1f} | "
            f"{us['lanes']:.1f} | "
            f"{us['alone']:.1f} | {best / us['default']:.2f}x |"
        )
    print(f"\nload average after the run: {load_average()} on {os.cpu_count()} CPUs")


if __name__ == "__main__":
    main()
