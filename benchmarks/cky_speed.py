"""Speed of the numba CKY chart decoder (Stern et al. 2017; Kitaev & Klein 2018, sec. 2).

Compares, on the same seeded random float32 charts (all sentences of the given length):

(a) ``lal_allennlp.decoding.cky_decode`` (the fast decoder),
(b) a straightforward numba CKY written below (label argmax per span inside the CKY loop, triple
    loop with backpointers, no tricks, same batching: one ``prange`` call over the batch),
(c) the pure-Python reference ``cky_decode_reference`` (fewer sentences at long lengths),

for 1 thread and for all threads (``numba.set_num_threads``), excluding the first (compile) call,
median of a few repeats, and prints a Markdown table. benepar 0.2's batched torch decoder is quoted
(540 sentences/s at 40 words, from the project notes), not measured.

Usage:
    python benchmarks/cky_speed.py [--lengths 10 40 160] [--labels 112] [--batch 100] [--threads N]
"""

import argparse
import os
import sys
import time

import numba
import numpy as np
from numba import njit, prange

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from lal_allennlp.decoding.cky import cky_decode  # noqa: E402
from tests.oracles.cky_reference import cky_decode_reference  # noqa: E402
from timing import load_average, timed  # noqa: E402  (benchmarks/timing.py)

BENEPAR_SENTS_PER_S_AT_40 = 540.0  # quoted from the notes (benepar 0.2 batched torch decoder)


@njit(cache=True, parallel=True)
def _baseline_batch(scores, lengths, out_spans, out_scores):
    """Straightforward CKY: per-span label argmax inside the chart loop, backpointers, no tricks."""
    batch_size = scores.shape[0]
    num_labels = scores.shape[3]
    for b in prange(batch_size):
        n = lengths[b]
        best = np.zeros((n + 1, n + 1))
        best_label = np.zeros((n + 1, n + 1), dtype=np.int64)
        best_split = np.zeros((n + 1, n + 1), dtype=np.int64)
        for length in range(1, n + 1):
            for i in range(n - length + 1):
                j = i + length
                label = 0
                label_score = np.float64(scores[b, i, j, 0])
                for l in range(1, num_labels):
                    if scores[b, i, j, l] > label_score:
                        label_score = np.float64(scores[b, i, j, l])
                        label = l
                best_label[i, j] = label
                if length == 1:
                    best[i, j] = label_score
                    continue
                split_score = best[i, i + 1] + best[i + 1, j]
                split = i + 1
                for k in range(i + 2, j):
                    value = best[i, k] + best[k, j]
                    if value > split_score:
                        split_score = value
                        split = k
                best[i, j] = label_score + split_score
                best_split[i, j] = split
        out_scores[b] = best[0, n]
        stack = np.empty((n + 1, 2), dtype=np.int64)
        stack[0, 0] = 0
        stack[0, 1] = n
        top = 1
        pos = 0
        while top > 0:
            top -= 1
            i = stack[top, 0]
            j = stack[top, 1]
            out_spans[b, pos, 0] = i
            out_spans[b, pos, 1] = j
            out_spans[b, pos, 2] = best_label[i, j]
            pos += 1
            if j - i > 1:
                k = best_split[i, j]
                stack[top, 0] = k
                stack[top, 1] = j
                stack[top + 1, 0] = i
                stack[top + 1, 1] = k
                top += 2


def baseline_decode(label_scores: np.ndarray, lengths: np.ndarray):
    lengths = np.ascontiguousarray(lengths, dtype=np.int64)
    max_len = int(lengths.max())
    out_spans = np.empty((len(lengths), 2 * max_len - 1, 3), dtype=np.int64)
    out_scores = np.empty(len(lengths))
    _baseline_batch(np.ascontiguousarray(label_scores), lengths, out_spans, out_scores)
    return [out_spans[b, : 2 * n - 1] for b, n in enumerate(lengths.tolist())], out_scores


def reference_decode(label_scores: np.ndarray, lengths: np.ndarray):
    results = [
        cky_decode_reference(label_scores[b, : n + 1, : n + 1]) for b, n in enumerate(lengths)
    ]
    return [r[0] for r in results], np.array([r[1] for r in results])


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--lengths", type=int, nargs="+", default=[10, 40, 160])
    parser.add_argument("--labels", type=int, default=112)
    parser.add_argument("--batch", type=int, default=100)
    parser.add_argument("--threads", type=int, default=numba.config.NUMBA_NUM_THREADS)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    all_threads = max(1, min(args.threads, numba.config.NUMBA_NUM_THREADS))
    thread_counts = sorted({1, all_threads})

    load_before = load_average()
    # Compile (or load from the on-disk cache) once, and report how long that took.
    tiny = np.random.default_rng(0).standard_normal((2, 4, 4, args.labels)).astype(np.float32)
    tiny_lengths = np.array([3, 2])
    start = time.perf_counter()
    cky_decode(tiny, tiny_lengths)
    first_call = time.perf_counter() - start
    start = time.perf_counter()
    baseline_decode(tiny, tiny_lengths)
    baseline_first = time.perf_counter() - start
    print(
        f"first call (JIT compile or cache load), float32: fast {first_call:.2f} s, "
        f"baseline {baseline_first:.2f} s"
    )
    print(
        f"batch {args.batch}, {args.labels} labels, float32, seed {args.seed}, threads "
        f"{thread_counts}, median of {args.repeats}\n"
    )

    rows = []
    fast_at_40 = {}
    for n in args.lengths:
        rng = np.random.default_rng(args.seed + n)
        scores = rng.standard_normal((args.batch, n + 1, n + 1, args.labels), dtype=np.float32)
        lengths = np.full(args.batch, n, dtype=np.int64)
        # Reference on a prefix of the batch, sized to finish in a few seconds.
        num_ref = max(1, min(args.batch, int(2e5 // (n**3 / 6 + n * n * 6))))
        start = time.perf_counter()
        ref_spans, ref_scores = reference_decode(scores[:num_ref], lengths[:num_ref])
        ref_rate = num_ref / (time.perf_counter() - start)
        for threads in thread_counts:
            numba.set_num_threads(threads)
            fast_spans, fast_scores = cky_decode(scores, lengths)  # warm-up
            base_spans, base_scores = baseline_decode(scores, lengths)
            for b in range(num_ref):  # sanity: all three decoders agree
                assert (
                    np.array_equal(fast_spans[b], ref_spans[b]) and fast_scores[b] == ref_scores[b]
                )
            for b in range(args.batch):
                assert np.array_equal(fast_spans[b], base_spans[b])
            fast_rate = args.batch / timed(lambda: cky_decode(scores, lengths), args.repeats)
            base_rate = args.batch / timed(lambda: baseline_decode(scores, lengths), args.repeats)
            if n == 40:
                fast_at_40[threads] = fast_rate
            rows.append((n, threads, fast_rate, base_rate, ref_rate, num_ref))
        del scores

    header = ["length", "threads", "fast (sent/s)", "baseline numba (sent/s)"]
    header += ["reference (sent/s) [sents]", "fast / baseline", "fast / reference"]
    print("| " + " | ".join(header) + " |")
    print("|" + "---:|" * len(header))
    for n, threads, fast_rate, base_rate, ref_rate, num_ref in rows:
        cells = [f"{n}", f"{threads}", f"{fast_rate:,.0f}", f"{base_rate:,.0f}"]
        cells += [f"{ref_rate:,.2f} [{num_ref}]", f"{fast_rate / base_rate:.1f}x"]
        cells += [f"{fast_rate / ref_rate:,.0f}x"]
        print("| " + " | ".join(cells) + " |")
    print(
        f"\nbenepar 0.2 batched torch decoder at 40 words: {BENEPAR_SENTS_PER_S_AT_40:.0f} sent/s "
        "(quoted from the notes, not measured here)"
    )
    for threads, rate in sorted(fast_at_40.items()):
        ratio = rate / BENEPAR_SENTS_PER_S_AT_40
        print(f"fast / benepar at 40 words, {threads} thread(s): {ratio:.1f}x")
    print(f"load average before / after: {load_before} / {load_average()} (shared machine: noisy)")


if __name__ == "__main__":
    main()
