"""Speed of the joint-span decoders (Zhou & Zhao 2019, sec. 3.3; used unchanged by LAL-Parser).

Compares, on the same seeded random float32 charts (batch of sentences of one length, L labels
including empty and ``<H>``, standard-normal span and arc scores):

(a) ``lal_allennlp.decoding.joint_span_decode``: the O(n^4) decoder (8-lane vector kernels),
(b) ``tests.oracles.joint_span_n5.joint_span_decode_n5``: the authors' O(n^5) recurrence (their
    loop order, value and back-pointer charts), compiled with numba, sentences one after the
    other on one thread (the oracle is serial),

for 1 thread and for all threads (``numba.set_num_threads``; the O(n^5) recurrence only at 1
thread), after a warm-up call. The O(n^4) decoder and the CKY take turns,
``--repeats`` calls each, and the fastest call of each counts, so that a slow spell of a shared
machine does not fall on one decoder's only calls. It prints a
Markdown table of sentences/second and the speed-up, then the growth exponent of the time per
sentence, fitted by least squares on log(time) against log(length). The O(n^5) decoder is timed on
fewer sentences where it is slow (the number is shown); both decoders' outputs are checked to be
identical on those sentences. For scale, the table also gives the plain span CKY
(``cky_decode``, O(n^3)) on the same span scores: it reads the same L scores per span, so its
rate is roughly the ceiling of any decoder of these charts on this machine.

Usage: python benchmarks/joint_span_speed.py [--lengths 10 20 40 80] [--labels 112] [--batch 100]
       [--threads N] [--repeats 5] [--n5-seconds 2.0]
"""

import argparse
import os
import sys
import time
from typing import Dict, List, Tuple

import numba
import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from lal_allennlp.decoding.cky import cky_decode  # noqa: E402
from lal_allennlp.decoding.joint_span import joint_span_decode  # noqa: E402
from tests.oracles.joint_span_n5 import joint_span_decode_n5  # noqa: E402
from timing import fastest_in_turns, growth_exponent  # noqa: E402  (benchmarks/timing.py)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--lengths", type=int, nargs="+", default=[10, 20, 40, 80])
    parser.add_argument("--labels", type=int, default=112)
    parser.add_argument("--batch", type=int, default=100)
    parser.add_argument("--threads", type=int, default=numba.config.NUMBA_NUM_THREADS)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument(
        "--n5-seconds",
        type=float,
        default=2.0,
        help="rough time budget of one O(n^5) measurement (sets its sentence count)",
    )
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    all_threads = max(1, min(args.threads, numba.config.NUMBA_NUM_THREADS))
    thread_counts = sorted({1, all_threads})

    # Compile (or load from the on-disk cache) once, and report how long that took.
    rng = np.random.default_rng(args.seed)
    tiny_spans = rng.standard_normal((2, 4, 4, args.labels), dtype=np.float32)
    tiny_arcs = rng.standard_normal((2, 4, 4), dtype=np.float32)
    first_call = {}
    for name, decode in (("O(n^4)", joint_span_decode), ("O(n^5)", joint_span_decode_n5)):
        start = time.perf_counter()
        decode(tiny_spans, tiny_arcs, np.array([3, 2]))
        first_call[name] = time.perf_counter() - start
    cky_decode(tiny_spans, np.array([3, 2]))
    print(
        f"first call (JIT compile or cache load), float32: O(n^4) {first_call['O(n^4)']:.2f} s, "
        f"O(n^5) {first_call['O(n^5)']:.2f} s"
    )
    print(
        f"batch {args.batch}, {args.labels} labels, float32, seed {args.seed}, threads "
        f"{thread_counts}, fastest of {args.repeats} calls each, the O(n^4) decoder and the CKY "
        "taking turns (O(n^5): 1 run on the sentence count shown)\n"
    )

    rows = []
    per_sentence: Dict[Tuple[str, int], List[float]] = {}
    n5_estimate = 2e-9  # seconds per O(n^5) candidate, refined after each measurement
    for n in args.lengths:
        rng = np.random.default_rng(args.seed + n)
        span_scores = rng.standard_normal((args.batch, n + 1, n + 1, args.labels), dtype=np.float32)
        arc_scores = rng.standard_normal((args.batch, n + 1, n + 1), dtype=np.float32)
        lengths = np.full(args.batch, n, dtype=np.int64)
        candidates = 2 * (n + 1) * n**4 / 120  # ~ number of O(n^5) candidate updates per sentence
        n5_rate, num_n5 = None, 0
        for threads in thread_counts:
            numba.set_num_threads(threads)
            n4 = joint_span_decode(span_scores, arc_scores, lengths)  # warm-up
            cky_decode(span_scores, lengths)
            # the two take turns; the fastest call of each counts
            seconds = fastest_in_turns(
                {
                    "joint": lambda: joint_span_decode(span_scores, arc_scores, lengths),
                    "cky": lambda: cky_decode(span_scores, lengths),
                },
                args.repeats,
            )
            n4_seconds = seconds["joint"]
            if threads == 1:  # the serial O(n^5) oracle, timed once per length
                num_n5 = int(min(args.batch, max(1, args.n5_seconds // (n5_estimate * candidates))))
                sub = (span_scores[:num_n5], arc_scores[:num_n5], lengths[:num_n5])
                start = time.perf_counter()
                n5 = joint_span_decode_n5(*sub)
                n5_seconds = time.perf_counter() - start
                for b in range(num_n5):  # sanity: identical results
                    assert np.array_equal(n4[0][b], n5[0][b])
                    assert np.array_equal(n4[1][b], n5[1][b]) and n4[2][b] == n5[2][b]
                n5_estimate = n5_seconds / num_n5 / candidates
                n5_rate = num_n5 / n5_seconds
                per_sentence.setdefault(("O(n^5)", 1), []).append(1.0 / n5_rate)
            n4_rate = args.batch / n4_seconds
            cky_rate = args.batch / seconds["cky"]
            per_sentence.setdefault(("O(n^4)", threads), []).append(1.0 / n4_rate)
            rows.append((n, threads, n4_rate, n5_rate, num_n5, cky_rate))
        del span_scores, arc_scores

    print(
        "| length | threads | O(n^4) (sent/s) | O(n^5) (sent/s, sentences timed) "
        "| O(n^4) / O(n^5) (1 thread) | span CKY alone (sent/s) | CKY / O(n^5) "
        "| O(n^4) time / CKY time |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|---:|")
    for n, threads, n4_rate, n5_rate, num_n5, cky_rate in rows:
        if threads == 1:
            n5_cells = f"{n5_rate:,.1f} ({num_n5}) | {n4_rate / n5_rate:,.1f}x"
            cky_ratio = f"{cky_rate / n5_rate:,.0f}x"
        else:
            n5_cells, cky_ratio = "- | -", "-"
        print(
            f"| {n} | {threads} | {n4_rate:,.0f} | {n5_cells} | {cky_rate:,.0f} | {cky_ratio} "
            f"| {cky_rate / n4_rate:.2f}x |"
        )
    if len(args.lengths) >= 2:
        print("\nGrowth of the time per sentence, t ~ n^p (least squares on log t vs log n):\n")
        print("| decoder | threads | p over all lengths | p between the two longest |")
        print("|---|---:|---:|---:|")
        for (decoder, threads), seconds in sorted(per_sentence.items()):
            last = growth_exponent(args.lengths[-2:], seconds[-2:])
            print(
                f"| {decoder} | {threads} | {growth_exponent(args.lengths, seconds):.2f} "
                f"| {last:.2f} |"
            )

    load = os.getloadavg()
    print(
        f"\nload average after the run: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} "
        f"on {os.cpu_count()} CPUs (a shared machine makes all rates noisy)"
    )


if __name__ == "__main__":
    main()
