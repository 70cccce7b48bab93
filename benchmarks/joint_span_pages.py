"""The joint span decoder's workspace in huge pages or in 4 KiB pages, on long sentences.

Every call of the decoder allocates its O(n^3) workspace afresh (2.5 GiB at 1,000 words in
float32) and the kernel faults it in as the fill first writes it. Transparent huge pages make
that 512 times fewer faults and the fill's scattered reads miss the TLB less; but on a virtual
machine whose memory balloon reports free pages to the host, the 2 MiB blocks that huge pages
are made of go back to the host a couple of seconds after they are freed, and each one touched
again is faulted in by the host afresh. The decoder chooses by the machine
(``lal_allennlp.decoding.joint_span._huge_pages_pay``) for workspace buffers over a size
(``_LARGE_WORKSPACE_BYTES``); this benchmark measures both choices, and where that size should
lie: its workers apply the choice from ``--large-from-mib`` (default 4 MiB, where numpy starts
asking for huge pages), not from the decoder's own size.

For each round, length and choice (``LAL_DECODER_HUGE_PAGES=1`` or ``=0``), a fresh process
decodes one seeded random float32 sentence (112 labels) ``--decodes`` times on one thread,
pausing ``--pause`` seconds between decodes (as a parser does while it encodes the next
batch), after a short sentence has compiled the kernels. Per decode it reports the wall time
and, from ``getrusage``, the user and system CPU time and the page faults; the scores must be
identical across choices.

    python benchmarks/joint_span_pages.py [--lengths 500 1000] [--decodes 3] [--pause 4]
        [--rounds 2] [--large-from-mib 4]
"""

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from typing import Dict, List

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CHOICES = {"huge": "1", "4k": "0"}


def worker(length: int, decodes: int, pause: float, large_from_mib: float) -> None:
    """One process: decode a random sentence of ``length`` words ``decodes`` times; a JSON
    line per decode on stdout."""
    import numpy as np

    sys.path.insert(0, ROOT)
    from lal_allennlp.decoding import joint_span

    joint_span._LARGE_WORKSPACE_BYTES = int(large_from_mib * 2**20)

    rng = np.random.default_rng(0)
    spans = rng.standard_normal((1, length + 1, length + 1, 112)).astype(np.float32)
    arcs = rng.standard_normal((1, length + 1, length + 1)).astype(np.float32)
    short = 8
    joint_span.joint_span_decode(  # compiles (or loads) the kernels outside the timing
        spans[:, : short + 1, : short + 1], arcs[:, : short + 1, : short + 1], np.array([short]),
        lanes=False,  # the one-sentence decoder, as for the long sentence
    )
    for index in range(decodes):
        if index:
            time.sleep(pause)
        before = resource.getrusage(resource.RUSAGE_SELF)
        start = time.perf_counter()
        _, _, scores = joint_span.joint_span_decode(spans, arcs, np.array([length]))
        wall = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_SELF)
        print(json.dumps({
            "wall": wall,
            "user": after.ru_utime - before.ru_utime,
            "sys": after.ru_stime - before.ru_stime,
            "faults": after.ru_minflt - before.ru_minflt,
            "score": float(scores[0]),
        }), flush=True)


def run_worker(length: int, choice: str, args: argparse.Namespace) -> List[Dict]:
    env = dict(os.environ, NUMBA_NUM_THREADS="1", OMP_NUM_THREADS="1")
    env["LAL_DECODER_HUGE_PAGES"] = CHOICES[choice]
    command = [
        sys.executable, os.path.abspath(__file__), "--worker", "--lengths", str(length),
        "--decodes", str(args.decodes), "--pause", str(args.pause),
        "--large-from-mib", str(args.large_from_mib),
    ]
    output = subprocess.run(command, env=env, check=True, capture_output=True, text=True).stdout
    return [json.loads(line) for line in output.splitlines() if line.startswith("{")]


def describe(decode: Dict) -> str:
    return f"{decode['wall']:.2f} ({decode['user']:.2f} / {decode['sys']:.2f})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lengths", type=int, nargs="+", default=[500, 1000])
    parser.add_argument("--decodes", type=int, default=3)
    parser.add_argument("--pause", type=float, default=4.0)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--large-from-mib", type=float, default=4.0)
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args.lengths[0], args.decodes, args.pause, args.large_from_mib)
        return

    sys.path.insert(0, ROOT)
    from lal_allennlp.decoding import joint_span

    reported = joint_span._free_pages_reported()
    large = joint_span._LARGE_WORKSPACE_BYTES / 2**20
    print(f"free page reporting on this machine: {reported}; the decoder's own choice for "
          f"buffers over {large:,.0f} MiB: {'huge' if not reported else '4k'} pages; measured "
          f"here from {args.large_from_mib:,.0f} MiB\n")
    results: Dict = {}
    for _ in range(args.rounds):
        for length in args.lengths:
            for choice in CHOICES:  # alternating, so that drifts of the machine hit both
                results.setdefault((length, choice), []).append(run_worker(length, choice, args))
    print("| words | pages | first decode of each process: wall s (user / sys) "
          "| later decodes | median of all | faults per decode |")
    print("|---:|---|---|---|---:|---:|")
    for length in args.lengths:
        scores = set()
        for choice in CHOICES:
            runs = results[(length, choice)]
            decodes = [decode for run in runs for decode in run]
            scores.update(decode["score"] for decode in decodes)
            first = ", ".join(describe(run[0]) for run in runs)
            later = ", ".join(describe(decode) for run in runs for decode in run[1:])
            median = statistics.median(decode["wall"] for decode in decodes)
            faults = statistics.median(decode["faults"] for decode in decodes)
            print(f"| {length:,} | {choice} | {first} | {later} | {median:.2f} | {faults:,.0f} |")
        if len(scores) != 1:
            raise SystemExit(f"different scores at {length} words: {sorted(scores)}")


if __name__ == "__main__":
    main()
