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
"""
import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import time
from itertools import count
from pathlib import Path
from typing import Dict, List

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


async def load(url: str, sentences: List[List[str]], clients: int, seconds: float) -> Dict:
    """`clients` loops sending one sentence per request until `seconds` have passed."""
    import aiohttp

    latencies: List[float] = []
    errors: List[str] = []
    next_sentence = count()
    stop_at = time.perf_counter() + seconds

    async def client(session: "aiohttp.ClientSession") -> None:
        while time.perf_counter() < stop_at:
            words = sentences[next(next_sentence) % len(sentences)]
            started = time.perf_counter()
            try:
                async with session.post(url, json={"sentences": [words]}) as answer:
                    body = await answer.json()
                    if answer.status != 200 or "tree" not in body["parses"][0]:
                        errors.append(f"{answer.status}: {str(body)[:200]}")
                        continue
            except Exception as error:  # a refused or dropped connection is an error too
                errors.append(f"{type(error).__name__}: {error}")
                continue
            latencies.append(time.perf_counter() - started)

    timeout = aiohttp.ClientTimeout(total=600)
    connector = aiohttp.TCPConnector(limit=clients)
    began = time.perf_counter()
    async with aiohttp.ClientSession(timeout=timeout, connector=connector) as session:
        await asyncio.gather(*(client(session) for _ in range(clients)))
    elapsed = time.perf_counter() - began
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
    }


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
    args = parser.parse_args()
    if not os.path.exists(args.archive):
        sys.exit(f"No model archive at {args.archive}: train one first, e.g. "
                 f"`allennlp train training_config/lal_minilm_cpu.jsonnet -s runs/lal_refactor`")

    sentences = treebank_sentences(args.treebank)
    max_words = max(len(words) for words in sentences)
    url = f"http://127.0.0.1:{args.port}/parse"
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


if __name__ == "__main__":
    main()
