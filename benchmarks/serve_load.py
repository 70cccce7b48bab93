"""
Load on `lal-serve` over loopback (127.0.0.1 only): 1, 8 and 32 concurrent clients, each
sending one sentence per `POST /parse` and the next as soon as the answer comes, for
`--seconds` each; the server with batching (the default) and without (`--no-batching`), side by
side in one run. Reports requests/s, p50/p99 latency, errors (anything but a 200 answer with a
parse) and the server's resident memory at its start and after each load.

    python benchmarks/serve_load.py runs/lal_refactor/model.tar.gz \
        [--treebank ../shared/data/ptb-sample/trees/wsj_0160-0179] [--seconds 60] \
        [--clients 1 8 32] [--json results.json]

The sentences are those of the treebank (PTB dev split by default), given as gold tokens, in
the treebank's order, round robin over all clients. The clients run in this process (asyncio +
aiohttp), so on a small machine they take CPU from the server: the figures are a lower bound
of what the server does with the machine to itself.

Soak (`--soak SECONDS`): the batched server only, the first of `--clients` clients asking for
confidences (`"confidence": true`) for SECONDS, the server's resident memory sampled every
`--sample-every` seconds; a table per minute (requests, errors, p50/p95 latency, memory) and
the memory growth from the end of the first minute (warm-up) to the end.

    python benchmarks/serve_load.py MODEL --soak 600 --clients 32
"""
import argparse
import asyncio
import json
import math
import os
import statistics
import subprocess
import sys
import time
from itertools import count
from pathlib import Path
from typing import Dict, List, Optional, Tuple

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT))
DEFAULT_TREEBANK = str(REPO_ROOT.parent / "shared/data/ptb-sample/trees/wsj_0160-0179")
sys.path.insert(0, str(Path(__file__).resolve().parent))
from timing import treebank_sentences  # noqa: E402  (benchmarks/timing.py)


def resident_mib(pid: int) -> float:
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    raise RuntimeError(f"no VmRSS for process {pid}")


def start_server(
    archive: str, port: int, batching: bool, max_words: int, window_ms: float
) -> subprocess.Popen:
    command = [
        str(Path(sys.executable).parent / "lal-serve"), archive, "--port", str(port),
        "--max-words", str(max_words), "--batch-window-ms", str(window_ms),
    ]
    if not batching:
        command.append("--no-batching")
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    import requests

    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"lal-serve exited: {process.stderr.read().decode()[-2000:]}")
        try:
            if requests.get(f"http://127.0.0.1:{port}/health", timeout=2).ok:
                return process
        except requests.ConnectionError:
            time.sleep(0.3)
    process.kill()
    raise RuntimeError("lal-serve did not start within 300 s")


async def load(
    url: str,
    sentences: List[List[str]],
    clients: int,
    seconds: float,
    confidence: bool = False,
    sample_pid: Optional[int] = None,
    sample_every: float = 10.0,
) -> Dict:
    """`clients` loops sending one sentence per request until `seconds` have passed; with
    `confidence`, each asks for the parse's confidences (an answer without them is an error).
    With `sample_pid`, that process's resident memory every `sample_every` seconds, and each
    request's finishing time, under `"timeline"`."""
    import aiohttp

    latencies: List[float] = []
    finished: List[Tuple[float, float, bool]] = []  # (seconds since start, latency, error)
    errors: List[str] = []
    memory: List[Tuple[float, float]] = []
    next_sentence = count()
    began = time.perf_counter()
    stop_at = began + seconds
    wanted = "sentence_confidence" if confidence else "tree"

    async def client(session: "aiohttp.ClientSession") -> None:
        while time.perf_counter() < stop_at:
            words = sentences[next(next_sentence) % len(sentences)]
            started = time.perf_counter()
            error = None
            try:
                request = {"sentences": [words], "confidence": confidence}
                async with session.post(url, json=request) as answer:
                    body = await answer.json()
                    if answer.status != 200 or wanted not in body["parses"][0]:
                        error = f"{answer.status}: {str(body)[:200]}"
            except Exception as failure:  # a refused or dropped connection is an error too
                error = f"{type(failure).__name__}: {failure}"
            done = time.perf_counter()
            finished.append((done - began, done - started, error is not None))
            if error is not None:
                errors.append(error)
            else:
                latencies.append(done - started)

    async def sampler() -> None:
        while sample_pid is not None and time.perf_counter() < stop_at:
            memory.append((time.perf_counter() - began, resident_mib(sample_pid)))
            await asyncio.sleep(sample_every)

    timeout = aiohttp.ClientTimeout(total=600)
    connector = aiohttp.TCPConnector(limit=clients)
    async with aiohttp.ClientSession(timeout=timeout, connector=connector) as session:
        await asyncio.gather(sampler(), *(client(session) for _ in range(clients)))
    elapsed = time.perf_counter() - began
    if sample_pid is not None:
        memory.append((elapsed, resident_mib(sample_pid)))
    latencies.sort()

    def quantile(q: float) -> float:
        return latencies[min(len(latencies) - 1, int(q * len(latencies)))] * 1000

    return {
        "clients": clients,
        "requests": len(latencies),
        "requests_per_s": len(latencies) / elapsed,
        "p50_ms": quantile(0.50) if latencies else float("nan"),
        "p99_ms": quantile(0.99) if latencies else float("nan"),
        "mean_ms": statistics.fmean(latencies) * 1000 if latencies else float("nan"),
        "errors": len(errors),
        "first_errors": errors[:3],
        **({"timeline": {"requests": finished, "memory": memory}} if sample_pid else {}),
    }


def soak_report(row: Dict, seconds: float) -> None:
    """Per minute of the soak: requests, errors, p50/p95 latency, memory at its end; then the
    memory growth after warm-up (the first minute)."""
    requests, memory = row["timeline"]["requests"], row["timeline"]["memory"]
    print("\n| minute | requests | errors | p50 (ms) | p95 (ms) | server RSS at its end (MiB) |")
    print("|---:|---:|---:|---:|---:|---:|")
    for minute in range(int(math.ceil(seconds / 60))):
        inside = [r for r in requests if minute * 60 <= r[0] < (minute + 1) * 60]
        times = sorted(latency * 1000 for _, latency, failed in inside if not failed)
        rss = [mib for t, mib in memory if t <= (minute + 1) * 60][-1]

        def at(q: float) -> str:
            return f"{times[min(len(times) - 1, int(q * len(times)))]:.0f}" if times else "-"

        print(f"| {minute + 1} | {len(inside)} | {sum(f for _, _, f in inside)} | {at(0.5)} | "
              f"{at(0.95)} | {rss:.0f} |")
    warm = [mib for t, mib in memory if t <= 60][-1]
    after = [mib for t, mib in memory if t > 60]
    print(f"\nServer RSS after the first minute {warm:.0f} MiB, at the end {memory[-1][1]:.0f} "
          f"MiB (growth {memory[-1][1] - warm:+.0f} MiB; highest after warm-up "
          f"{max(after, default=warm):.0f} MiB); {row['requests']} requests, {row['errors']} "
          f"errors {row['first_errors']}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("archive")
    parser.add_argument("--treebank", default=DEFAULT_TREEBANK)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--clients", type=int, nargs="+", default=[1, 8, 32])
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--batch-window-ms", type=float, default=5.0,
                        help="the batched server's collection window (lal-serve's default: 5)")
    parser.add_argument("--json", help="also write the results here")
    parser.add_argument("--soak", type=float, metavar="SECONDS",
                        help="one long load with confidences on instead (see the module's doc)")
    parser.add_argument("--sample-every", type=float, default=10.0,
                        help="seconds between samples of the server's memory in a soak")
    args = parser.parse_args()
    if not os.path.exists(args.archive):
        sys.exit(f"No model archive at {args.archive}: train one first, e.g. "
                 f"`allennlp train training_config/lal_minilm_cpu.jsonnet -s runs/lal_refactor`")

    sentences = treebank_sentences(args.treebank)
    max_words = max(len(words) for words in sentences)
    url = f"http://127.0.0.1:{args.port}/parse"
    if args.soak:
        soak(args, sentences, max_words, url)
        return
    results = []
    for batching in (True, False):
        server = start_server(
            args.archive, args.port, batching, max_words, args.batch_window_ms
        )
        try:
            memory_start = resident_mib(server.pid)
            asyncio.run(load(url, sentences, 2, 5.0))  # warm-up: numba, allocator, sockets
            for clients in args.clients:
                row = asyncio.run(load(url, sentences, clients, args.seconds))
                row.update(batching=batching, rss_start_mib=memory_start,
                           rss_end_mib=resident_mib(server.pid))
                results.append(row)
                print(json.dumps(row), file=sys.stderr, flush=True)
        finally:
            server.terminate()
            server.wait(60)

    print(f"{len(sentences)} sentences of {args.treebank}, {args.seconds:.0f} s per row, "
          f"model {args.archive}, batch window {args.batch_window_ms} ms, load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print("\n| server | clients | requests/s | p50 (ms) | p99 (ms) | errors | RSS start / end (MiB) |")
    print("|---|---:|---:|---:|---:|---:|---|")
    for row in results:
        print(f"| {'batched' if row['batching'] else 'unbatched'} | {row['clients']} | "
              f"{row['requests_per_s']:.1f} | {row['p50_ms']:.0f} | {row['p99_ms']:.0f} | "
              f"{row['errors']} | {row['rss_start_mib']:.0f} / {row['rss_end_mib']:.0f} |")
    print("\n| clients | batched / unbatched requests/s |")
    print("|---:|---:|")
    for clients in args.clients:
        on, off = (next(r for r in results if r["clients"] == clients and r["batching"] is b)
                   for b in (True, False))
        print(f"| {clients} | {on['requests_per_s'] / off['requests_per_s']:.2f} |")
    if args.json:
        with open(args.json, "w") as output:
            json.dump(results, output, indent=1)


def soak(args: argparse.Namespace, sentences: List[List[str]], max_words: int, url: str) -> None:
    server = start_server(args.archive, args.port, True, max_words, args.batch_window_ms)
    try:
        memory_start = resident_mib(server.pid)
        row = asyncio.run(load(url, sentences, args.clients[0], args.soak, confidence=True,
                               sample_pid=server.pid, sample_every=args.sample_every))
    finally:
        server.terminate()
        server.wait(60)
    print(f"Soak: {args.clients[0]} clients, {args.soak:.0f} s, confidences on, batched server "
          f"(window {args.batch_window_ms} ms), {len(sentences)} sentences of {args.treebank} "
          f"round robin, model {args.archive}; server RSS at start {memory_start:.0f} MiB")
    soak_report(row, args.soak)
    if args.json:
        with open(args.json, "w") as output:
            json.dump(row, output, indent=1)


if __name__ == "__main__":
    main()
