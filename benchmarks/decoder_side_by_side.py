"""
Chart decoders side by side: our numba CKY against benepar 0.2's batched decoder (torch-struct)
and SuPar's CKY, on identical random charts, in one run.

The charts are seeded float32 span-label scores of shape (batch, n + 1, n + 1, labels), every
sentence of the batch n words long, label 0 (the empty label) scoring 0 everywhere, as in
benepar's and Kitaev & Klein's models (benepar subtracts the empty label's score itself; with it
at 0 the three decoders solve the same problem: the binary tree maximising the sum of its spans'
best label scores). Each chart is saved once as ``.npy``; each decoder runs in a worker process
(``benchmarks/decoder_worker.py``) under the Python of its own virtual environment, with the same
number of threads, loads the same file, converts it untimed to its native layout, is warmed up
once and timed over ``--repeats`` calls, or more until they took ``--min-time`` seconds
(the fastest call counts: the one least disturbed by other jobs). The driver then checks the outputs: every
decoder's tree must score, on the chart, what ours scores (float64 sums; trees may differ only
where two trees tie), and reports sentences/s, ours / peer speed ratios, the peak resident
memory added by the timed calls, and the growth exponent of time with length (least-squares
slope of log time over log n).

benepar's decoder is called with ``force_root_constituent=False`` (the root may be empty, as in
the others); SuPar's is timed as its CRF constituency model decodes: label max over the chart,
``CRFConstituencyModel.decode`` (CKY by ``ConstituencyCRF(...).argmax``) over the
maxima, labels of the chosen spans.

    python benchmarks/decoder_side_by_side.py [--lengths 10 20 40 80 160] [--threads 1 2] \
        [--benepar-python /work/peers/benepar-venv/bin/python] \
        [--supar-python /work/peers/supar-venv/bin/python] [--out benchmarks/decoders.md]

Peer environments: ``python3 -m venv DIR && DIR/bin/pip install torch==2.13.0 benepar`` (or
``supar``); pin torch, or pip fetches a multi-GB CUDA build.
"""

import argparse
import datetime
import json
import math
import os
import platform
import subprocess
import sys
import tempfile
from typing import Dict, List, Optional, Sequence

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from timing import growth_exponent, load_average  # noqa: E402  (benchmarks/timing.py)

WORKER = os.path.join(HERE, "decoder_worker.py")
DEFAULT_PEERS = os.path.join(os.path.dirname(os.path.dirname(HERE)), "peers")
NAMES = {
    "ours": "ours (numba CKY)",
    "ours-joint": "ours (numba joint span)",
    "benepar": "benepar 0.2 (torch-struct)",
    "supar": "SuPar CKY",
}
# Ours, not compared tree by tree with the CKY (it also decodes dependency heads).
JOINT = "ours-joint"


def make_charts(length: int, batch: int, labels: int, seed: int) -> np.ndarray:
    """Seeded float32 charts, shape (batch, length + 1, length + 1, labels), label 0 scoring 0."""
    rng = np.random.default_rng([seed, length])
    scores = rng.standard_normal((batch, length + 1, length + 1, labels), dtype=np.float32)
    scores[..., 0] = 0.0
    return scores


def tree_score(scores: np.ndarray, spans: Sequence[Sequence[int]]) -> float:
    """Sum, in float64, of the chart scores of labelled spans ``(i, j, label)`` of one sentence."""
    return float(sum(float(scores[i, j, label]) for i, j, label in spans))


def check_tree(spans: Sequence[Sequence[int]], length: int) -> Optional[str]:
    """None if the spans are distinct, inside [0, length] and pairwise nested or disjoint."""
    seen = set()
    for i, j, _ in spans:
        if not 0 <= i < j <= length:
            return f"span ({i}, {j}) outside the sentence of {length} words"
        if (i, j) in seen:
            return f"span ({i}, {j}) twice"
        seen.add((i, j))
    ordered = sorted(seen, key=lambda s: (s[0], -s[1]))
    stack: List[tuple] = []
    for i, j in ordered:
        while stack and stack[-1][1] <= i:
            stack.pop()
        if stack and j > stack[-1][1]:
            return f"spans {stack[-1]} and ({i}, {j}) cross"
        stack.append((i, j))
    return None


def run_worker(
    python: str,
    decoder: str,
    charts: str,
    repeats: int,
    min_time: float,
    threads: int,
    workdir: str,
) -> Dict:
    out = os.path.join(workdir, f"{decoder}.json")
    env = dict(os.environ)
    for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
        env[var] = str(threads)
    env.pop("PYTHONPATH", None)
    env["PYTHONWARNINGS"] = "ignore::UserWarning"  # torch-struct's distribution warnings
    command = [python, WORKER, decoder, charts, out, "--repeats", str(repeats)]
    command += ["--threads", str(threads), "--min-time", str(min_time)]
    subprocess.run(command, check=True, env=env)
    with open(out) as result:
        return json.load(result)


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as cpuinfo:
            for line in cpuinfo:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return f"{cpu}, {os.cpu_count()} cores, Python {platform.python_version()}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lengths", type=int, nargs="+", default=[10, 20, 40, 80, 160])
    parser.add_argument("--labels", type=int, default=112)
    parser.add_argument("--batch", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--min-time", type=float, default=2.0)
    parser.add_argument("--threads", type=int, nargs="+", default=[1])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--decoders", nargs="+", choices=list(NAMES), default=["ours", "benepar", "supar", JOINT]
    )
    parser.add_argument("--python", default=sys.executable, help="Python that runs ours")
    parser.add_argument(
        "--benepar-python", default=os.path.join(DEFAULT_PEERS, "benepar-venv", "bin", "python")
    )
    parser.add_argument(
        "--supar-python", default=os.path.join(DEFAULT_PEERS, "supar-venv", "bin", "python")
    )
    parser.add_argument("--out", help="also write the Markdown report to this file")
    args = parser.parse_args()
    if args.decoders[0] != "ours":
        parser.error("--decoders must start with ours (the others are checked against it)")
    pythons = {
        "ours": args.python,
        JOINT: args.python,
        "benepar": args.benepar_python,
        "supar": args.supar_python,
    }
    for decoder in args.decoders:
        if not os.path.exists(pythons[decoder]):
            parser.error(f"{pythons[decoder]} does not exist: make the {decoder} environment")

    # results[threads][length][decoder] = worker JSON (+ checks)
    results: Dict[int, Dict[int, Dict[str, Dict]]] = {t: {} for t in args.threads}
    problems: List[str] = []
    ties: Dict[str, int] = {d: 0 for d in args.decoders}
    with tempfile.TemporaryDirectory(prefix="decoders-") as workdir:
        for length in args.lengths:
            scores = make_charts(length, args.batch, args.labels, args.seed)
            charts = os.path.join(workdir, f"charts_{length}.npy")
            np.save(charts, scores)
            for threads in args.threads:
                row: Dict[str, Dict] = {}
                for decoder in args.decoders:
                    print(f"n={length}, {threads} thread(s): {decoder}", file=sys.stderr, flush=True)
                    result = run_worker(
                        pythons[decoder],
                        decoder,
                        charts,
                        args.repeats,
                        args.min_time,
                        threads,
                        workdir,
                    )
                    spans = result.pop("spans")
                    result["scores"] = [tree_score(scores[b], s) for b, s in enumerate(spans)]
                    for b, sentence_spans in enumerate(spans):
                        problem = check_tree(sentence_spans, length)
                        if problem:
                            problems.append(f"{decoder}, n={length}, sentence {b}: {problem}")
                    if decoder not in ("ours", JOINT):
                        ours = row["ours"]
                        for b, (mine, theirs) in enumerate(zip(ours["scores"], result["scores"])):
                            if abs(mine - theirs) > 1e-4 * max(1.0, abs(mine)):
                                problems.append(
                                    f"{decoder}, n={length}, sentence {b}: tree score {theirs:.6f}"
                                    f" != ours {mine:.6f}"
                                )
                            elif sorted(map(tuple, spans[b])) != sorted(ours["spans"][b]):
                                ties[decoder] += 1
                    elif decoder == "ours":
                        result["spans"] = [sorted(map(tuple, s)) for s in spans]
                    row[decoder] = result
                row["ours"].pop("spans", None)
                results[threads][length] = row
            os.remove(charts)
            del scores

    report = format_report(args, results, problems, ties)
    print(report)
    if args.out:
        with open(args.out, "w") as out:
            out.write(report)
    if problems:
        sys.exit(1)


def format_report(args, results, problems: List[str], ties: Dict[str, int]) -> str:
    def rate(result: Dict) -> float:
        return args.batch / min(result["times"])

    def peak_mib(result: Dict) -> str:
        if not result["peak_reset"]:
            return "n/a"
        return f"{max(0, result['peak_kib'] - result['rss_before_kib']) / 1024:,.0f}"

    peers = [d for d in args.decoders if d not in ("ours", JOINT)]
    joint_ratios = peers if JOINT in args.decoders else []  # ours joint / each peer
    lines = [
        "# Chart decoders side by side",
        "",
        f"{datetime.date.today().isoformat()}, {machine()}, load average "
        f"{load_average()} at the end.",
        "",
        "```bash",
        "python benchmarks/decoder_side_by_side.py " + " ".join(sys.argv[1:]),
        "```",
        "",
        f"Batch of {args.batch} sentences of n words, {args.labels} labels (label 0 empty, "
        f"scoring 0), float32, seed {args.seed}; the fastest of at least {args.repeats} timed "
        f"calls (more until they took {args.min_time:g} s) after one warm-up (the least disturbed "
        "by other jobs on a shared machine), each decoder in its own process. Peak memory: the most resident memory the "
        "timed calls added (MiB) over the process before them (the chart itself, "
        f"{args.batch} x (n+1)^2 x {args.labels} x 4 bytes, is not counted).",
        "",
    ]
    header = "| n | threads | " + " | ".join(f"{NAMES[d]} sent/s" for d in args.decoders)
    header += " | " + " | ".join(f"ours / {d}" for d in peers)
    header += "".join(f" | ours joint / {d}" for d in joint_ratios)
    header += " | " + " | ".join(f"peak MiB {d}" for d in args.decoders) + " |"
    columns = 2 + len(args.decoders) + len(peers) + len(joint_ratios) + len(args.decoders)
    lines += [header, "|" + "---:|" * columns]
    for threads, by_length in results.items():
        for length, row in by_length.items():
            cells = [str(length), str(threads)]
            cells += [f"{rate(row[d]):,.0f}" if rate(row[d]) >= 10 else f"{rate(row[d]):.2f}"
                      for d in args.decoders]
            cells += [f"{rate(row['ours']) / rate(row[d]):,.0f}x" for d in peers]
            cells += [f"{rate(row[JOINT]) / rate(row[d]):,.1f}x" for d in joint_ratios]
            cells += [peak_mib(row[d]) for d in args.decoders]
            lines.append("| " + " | ".join(cells) + " |")
    lines.append("")
    lengths = list(args.lengths)
    if len(lengths) >= 2:
        lines += [
            "Growth of time with length (exponent k of time ~ n^k; least squares over all "
            f"lengths, and between {lengths[-2]} and {lengths[-1]} words):",
            "",
            "| threads | " + " | ".join(NAMES[d] for d in args.decoders) + " |",
            "|---:|" + "---|" * len(args.decoders),
        ]
        for threads, by_length in results.items():
            cells = [str(threads)]
            for d in args.decoders:
                times = [min(by_length[n][d]["times"]) for n in lengths]
                last = math.log(times[-1] / times[-2]) / math.log(lengths[-1] / lengths[-2])
                cells.append(f"n^{growth_exponent(lengths, times):.2f} (n^{last:.2f})")
            lines.append("| " + " | ".join(cells) + " |")
        lines.append("")
    checked = sum(len(by_length) for by_length in results.values()) * args.batch
    if problems:
        lines += ["**Check failed:**", ""] + [f"- {p}" for p in problems[:20]] + [""]
    else:
        lines.append(
            f"Check: on all {checked} sentence decodes per decoder, every tree is well formed "
            "and (the CKY decoders) scores on the chart what ours scores (to 1e-4 relative); "
            "the joint span decoder also decodes dependency heads (seeded random arc scores), "
            "so its trees are checked for form only; trees that differ "
            "from ours with the same score (ties): "
            + ", ".join(f"{d} {ties[d]}" for d in peers)
            + "."
        )
        lines.append("")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
