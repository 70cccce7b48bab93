"""
End-to-end parse speed of one model archive under two (or more) checkouts of this repository,
alternated pass by pass in one run: each checkout parses in its own worker process (its code
first on ``PYTHONPATH``, the model loaded once, a warm-up batch first), and the driver asks the
workers for one pass over all the sentences in turn, A B A B ..., so that a slower spell of the
machine hits every checkout. A pass is the ``lal_parser`` predictor's ``predict_batch_json`` on
batches of similar length from gold tokens, as ``lal-parse`` batches them; model loading is
excluded. Reports the median pass of each checkout, in sentences/s, and each rate over the
first checkout's.

    python benchmarks/parse_checkouts.py runs/joint/model.tar.gz \\
        ../shared/data/ptb-sample/trees/wsj_0160-0179 --checkouts ../before . --passes 7

``--min-words``/``--max-words`` keep the sentences of those lengths only. Give the same checkout
twice to see the noise of the measurement itself.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import List

SCRIPT = Path(__file__).resolve()


def worker(archive: str, treebank: str, batch_size: int, min_words: int, max_words: int) -> None:
    """Loads the model, then answers each line ``pass`` on stdin with the seconds of one pass."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    import torch
    from allennlp.models.archival import load_archive
    from allennlp.predictors import Predictor

    import lal_allennlp  # noqa: F401  (this checkout's, first on PYTHONPATH)
    from lal_allennlp.dataset_readers import resolve_treebank_paths
    from lal_allennlp.syntax.trees import normalise_tree, parse_trees, tree_to_spans

    sentences = []
    for path in resolve_treebank_paths(treebank):
        with open(path, encoding="utf-8") as file:
            for tree, _ in parse_trees(file.read(), source=path):
                normalised = normalise_tree(tree)
                if normalised is not None:
                    words = tree_to_spans(normalised)[0]
                    if min_words <= len(words) <= max_words:
                        sentences.append(words)
    predictor = Predictor.from_archive(load_archive(archive), "lal_parser")
    inputs = [{"tokens": words} for words in sorted(sentences, key=len)]
    with torch.no_grad():
        predictor.predict_batch_json(inputs[:batch_size])  # warm-up: numba, allocations
    print(json.dumps({"ready": lal_allennlp.__file__, "sentences": len(inputs),
                      "words": sum(map(len, sentences))}), flush=True)
    for line in sys.stdin:
        if line.strip() != "pass":
            break
        start = time.perf_counter()
        with torch.no_grad():
            for i in range(0, len(inputs), batch_size):
                predictor.predict_batch_json(inputs[i : i + batch_size])
        print(json.dumps({"seconds": time.perf_counter() - start}), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("archive")
    parser.add_argument("treebank", help="a treebank path in any form the lal_ptb reader takes")
    parser.add_argument("--checkouts", nargs="+", type=Path, required=True)
    parser.add_argument("--passes", type=int, default=7)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--min-words", type=int, default=1)
    parser.add_argument("--max-words", type=int, default=10**6)
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args.archive, args.treebank, args.batch_size, args.min_words, args.max_words)
        return

    workers: List[subprocess.Popen] = []
    for checkout in args.checkouts:
        env = dict(os.environ, PYTHONPATH=str(checkout.resolve()))
        command = [sys.executable, str(SCRIPT), str(Path(args.archive).resolve()),
                   str(Path(args.treebank).resolve()) if Path(args.treebank).exists()
                   else args.treebank, "--checkouts", str(checkout), "--worker",
                   "--batch-size", str(args.batch_size), "--min-words", str(args.min_words),
                   "--max-words", str(args.max_words)]
        workers.append(subprocess.Popen(command, cwd=checkout, env=env, text=True,
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE))
    infos = []
    for checkout, process in zip(args.checkouts, workers):
        line = process.stdout.readline()
        if not line:
            raise SystemExit(f"the worker of {checkout} stopped before it was ready")
        infos.append(json.loads(line))
        print(f"{checkout}: {infos[-1]['ready']}", file=sys.stderr)
    seconds: List[List[float]] = [[] for _ in workers]
    for _ in range(args.passes):
        for index, process in enumerate(workers):
            process.stdin.write("pass\n")
            process.stdin.flush()
            seconds[index].append(json.loads(process.stdout.readline())["seconds"])
    for process in workers:
        process.stdin.close()
        process.wait()

    count = infos[0]["sentences"]
    print(f"{count} sentences, {infos[0]['words']} words ({args.min_words}-"
          f"{min(args.max_words, 10**6)} words each), batch size {args.batch_size}, "
          f"{args.passes} alternated passes, median")
    print("| checkout | sentences/s (median) | passes (s) | / first |")
    print("|---|---:|---|---:|")
    first = count / statistics.median(seconds[0])
    for checkout, times in zip(args.checkouts, seconds):
        rate = count / statistics.median(times)
        shown = ", ".join(f"{t:.2f}" for t in times)
        print(f"| {checkout} | {rate:.1f} | {shown} | {rate / first:.3f} |")


if __name__ == "__main__":
    main()
