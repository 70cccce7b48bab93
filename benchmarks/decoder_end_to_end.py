"""
Whole parses with two (or more) versions of the code, alternated in one run: what a change to the
decoders is worth end to end.

Each variant is a checkout (its ``lal_allennlp`` put first on ``PYTHONPATH``) and, optionally,
environment variables. Every variant runs in a worker process of its own, which loads the model
archive once; the workers then take turns, one at a time, parsing the same sentences through the
``lal_parser`` predictor from gold tokens (batches of ``--batch-size`` sentences of similar
length, as ``lal-parse`` makes them). Each pass gives every variant one parse of every bucket;
the order of the variants is reversed from one pass to the next, so that a slower spell of the
machine hits both. Before timing, each worker parses each bucket once (numba's kernels, the
allocations); the trees and heads of every variant must be the same, or the run stops.

The sentences: the gold tokens of a treebank (``--treebank``, any path the ``lal_ptb`` reader
takes, e.g. a range ``DIR/wsj_0160-0179``; normalised as the reader does), all of them as the
bucket ``all``, then length buckets ``LO-HI`` (words, both included): the treebank's sentences of those lengths,
and where there are fewer than ``--per-bucket``, sentences made by joining consecutive sentences
of the treebank until the length falls in the bucket.

Per bucket, the table gives each variant's median time per pass, and the median over passes of
the time of each variant over the first's (below 1: faster than the first variant).

    python benchmarks/decoder_end_to_end.py /work/models/joint/model.tar.gz \\
        --variant before=/work/before --variant after=. \\
        [--treebank ../shared/data/ptb-sample/trees/wsj_0160-0179] \\
        [--buckets 10-20 20-40 40-64 65-100 101-150] [--passes 5]

A variant with environment variables: ``--variant 'name=PATH,KEY=VALUE,KEY=VALUE'``. Variants
that compile the same decoder sources differently (an environment switch read at import) need
``NUMBA_CACHE_DIR`` set apart for each, since numba's cache does not key on the environment.
"""

import argparse
import hashlib
import json
import os
import statistics
import subprocess
import sys
import time
from typing import Dict, List, Tuple

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from timing import treebank_sentences  # noqa: E402  (benchmarks/timing.py)

Sentence = List[str]


# ------------------------------------------------------------------------------------------
# The sentences.


def bucket_sentences(sentences: List[Sentence], low: int, high: int, count: int) -> List[Sentence]:
    """Up to ``count`` sentences of ``low`` to ``high`` words: the treebank's own first, then
    consecutive treebank sentences joined until the length falls in the range."""
    chosen = [words for words in sentences if low <= len(words) <= high][:count]
    start = 0
    while len(chosen) < count and start < len(sentences):
        joined: Sentence = []
        end = start
        while end < len(sentences) and len(joined) < low:
            joined = joined + sentences[end]
            end += 1
        if low <= len(joined) <= high:
            chosen.append(joined)
            start = end
        else:
            start += 1
    return chosen


# ------------------------------------------------------------------------------------------
# A worker: one variant's predictor, parsing buckets on request.


def time_decoders(seconds: List[float]) -> None:
    """Adds the wall time of every call of the package's decoders (``cky_decode``,
    ``joint_span_decode``) to ``seconds[0]``: each module of ``lal_allennlp`` that imported one
    of them gets a timed wrapper in its place."""
    from lal_allennlp import decoding

    def timed(decode):
        def wrapper(*args, **kwargs):
            start = time.perf_counter()
            try:
                return decode(*args, **kwargs)
            finally:
                seconds[0] += time.perf_counter() - start

        return wrapper

    originals = {id(getattr(decoding, name)) for name in ("cky_decode", "joint_span_decode")}
    for name, module in list(sys.modules.items()):
        if not name.startswith("lal_allennlp.") or name.startswith("lal_allennlp.decoding"):
            continue
        for attribute in ("cky_decode", "joint_span_decode"):
            function = getattr(module, attribute, None)
            if function is not None and id(function) in originals:
                setattr(module, attribute, timed(function))


def worker(archive: str, batch_size: int) -> None:
    """Reads JSON requests on stdin, one a line: ``{"bucket": name, "sentences": [...]}`` keeps
    a bucket, ``{"parse": name}`` parses it and answers ``{"seconds": ..., "decoder_seconds":
    ..., "digest": ...}`` (the wall time of the parse, of the decoders' calls within it, and a
    hash of the trees and heads)."""
    import torch
    from allennlp.models.archival import load_archive
    from allennlp.predictors import Predictor

    import lal_allennlp

    channel, sys.stdout = sys.stdout, sys.stderr  # whatever else prints stays off the answers

    def answer(message: dict) -> None:
        channel.write(json.dumps(message) + "\n")
        channel.flush()

    predictor = Predictor.from_archive(load_archive(archive), "lal_parser")
    decoder_seconds = [0.0]
    time_decoders(decoder_seconds)
    buckets: Dict[str, List[List[dict]]] = {}
    answer({"ready": os.path.dirname(os.path.dirname(lal_allennlp.__file__))})
    for line in sys.stdin:
        request = json.loads(line)
        if "bucket" in request:
            ordered = sorted(request["sentences"], key=len)  # batches of similar length
            inputs = [{"tokens": words} for words in ordered]
            batches = [inputs[i : i + batch_size] for i in range(0, len(inputs), batch_size)]
            buckets[request["bucket"]] = batches
            answer({"kept": request["bucket"]})
        else:
            digest = hashlib.sha256()
            decoder_seconds[0] = 0.0
            start = time.perf_counter()
            with torch.no_grad():
                outputs = [
                    predictor.predict_batch_json(batch) for batch in buckets[request["parse"]]
                ]
            seconds = time.perf_counter() - start
            for output in (item for batch in outputs for item in batch):
                digest.update(json.dumps([output["tree"], output.get("heads")]).encode())
            answer(
                {
                    "seconds": seconds,
                    "decoder_seconds": decoder_seconds[0],
                    "digest": digest.hexdigest(),
                }
            )


class Variant:
    """A worker process of one variant, spoken to over its stdin and stdout."""

    def __init__(self, spec: str, archive: str, batch_size: int) -> None:
        name, _, rest = spec.partition("=")
        path, *settings = rest.split(",")
        if not name or not path:
            raise SystemExit(f"--variant {spec!r}: give NAME=PATH[,KEY=VALUE...]")
        self.name, self.path = name, os.path.abspath(path)
        if not os.path.isdir(os.path.join(self.path, "lal_allennlp")):
            raise SystemExit(f"--variant {spec!r}: {self.path} has no lal_allennlp package")
        env = dict(os.environ, PYTHONPATH=self.path)
        env.setdefault("HF_HUB_OFFLINE", "1")
        env.setdefault("TRANSFORMERS_OFFLINE", "1")
        env.setdefault("TOKENIZERS_PARALLELISM", "false")
        self.settings = dict(setting.split("=", 1) for setting in settings)
        env.update(self.settings)
        command = [sys.executable, os.path.abspath(__file__), "--worker", archive]
        command += ["--batch-size", str(batch_size)]
        self.process = subprocess.Popen(
            command,
            env=env,
            cwd=self.path,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        ready = self._answer()
        if os.path.abspath(ready["ready"]) != self.path:
            raise SystemExit(f"variant {name}: imported lal_allennlp from {ready['ready']}")

    def _answer(self) -> dict:
        line = self.process.stdout.readline()
        if not line:
            raise SystemExit(f"variant {self.name}: the worker stopped (see its errors above)")
        return json.loads(line)

    def ask(self, request: dict) -> dict:
        self.process.stdin.write(json.dumps(request) + "\n")
        self.process.stdin.flush()
        return self._answer()

    def close(self) -> None:
        self.process.stdin.close()
        self.process.wait()


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("archive", help="a trained parser's model.tar.gz")
    parser.add_argument("--variant", action="append", default=[], help="NAME=PATH[,KEY=VALUE...]")
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    parser.add_argument(
        "--treebank",
        default=os.path.join(here, "..", "shared", "data", "ptb-sample", "trees", "wsj_0160-0179"),
    )
    parser.add_argument(
        "--buckets", nargs="*", default=["10-20", "20-40", "40-64", "65-100", "101-150"]
    )
    parser.add_argument("--per-bucket", type=int, default=64, help="sentences per length bucket")
    parser.add_argument("--passes", type=int, default=5)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args.archive, args.batch_size)
        return
    if len(args.variant) < 2:
        parser.error("give at least two --variant NAME=PATH")

    sentences = treebank_sentences(args.treebank)
    buckets: Dict[str, List[Sentence]] = {"all": sentences}
    for bucket in args.buckets:
        low, high = (int(x) for x in bucket.split("-"))
        buckets[bucket] = bucket_sentences(sentences, low, high, args.per_bucket)
    variants = [Variant(spec, args.archive, args.batch_size) for spec in args.variant]
    digests: Dict[Tuple[str, str], str] = {}
    for variant in variants:
        for name, chosen in buckets.items():
            variant.ask({"bucket": name, "sentences": chosen})
            digests[variant.name, name] = variant.ask({"parse": name})["digest"]  # warm-up
    for name in buckets:
        differ = [
            v.name for v in variants if digests[v.name, name] != digests[variants[0].name, name]
        ]
        if differ:
            raise SystemExit(
                f"bucket {name}: the trees of {differ} differ from {variants[0].name}'s"
            )

    seconds: Dict[Tuple[str, str], List[float]] = {key: [] for key in digests}
    decoder: Dict[Tuple[str, str], List[float]] = {key: [] for key in digests}
    for number in range(args.passes):
        turn = variants if number % 2 == 0 else variants[::-1]
        for name in buckets:
            for variant in turn:
                timing = variant.ask({"parse": name})
                seconds[variant.name, name].append(timing["seconds"])
                decoder[variant.name, name].append(timing["decoder_seconds"])
    for variant in variants:
        variant.close()

    first = variants[0].name
    print(f"{args.archive}; {args.treebank}; median of {args.passes} passes, alternated")
    for variant in variants:
        print(f"- {variant.name}: {variant.path} {variant.settings or ''}".rstrip())
    print()
    print(
        "Per variant: the whole parse's seconds per pass (the decoders' share of them). Then, "
        f"for each other variant against {first}: its parse time over {first}'s (median of the "
        "passes' ratios, and their range), and the change of the decoders' time as a share of "
        f"{first}'s parse time (negative: the variant's decoders take less)."
    )
    print()
    header = " | ".join(f"{v.name}: parse s (decoders s)" for v in variants)
    ratios = " | ".join(
        f"{v.name} / {first}: parse (range) | decoders' change" for v in variants[1:]
    )
    print(f"| bucket | sentences | words | {header} | {ratios} |")
    print("|---|---:|---:|" + "---:|" * (3 * len(variants) - 2))
    for name, chosen in buckets.items():
        cells = []
        for v in variants:
            parse = statistics.median(seconds[v.name, name])
            cells.append(f"{parse:.3f} ({statistics.median(decoder[v.name, name]):.3f})")
        base_parse = statistics.median(seconds[first, name])
        base_decoder = statistics.median(decoder[first, name])
        for v in variants[1:]:
            paired = [b / a for a, b in zip(seconds[first, name], seconds[v.name, name])]
            change = statistics.median(decoder[v.name, name]) - base_decoder
            cells.append(f"{statistics.median(paired):.3f} ({min(paired):.3f}-{max(paired):.3f})")
            cells.append(f"{100 * change / base_parse:+.1f} %")
        words = sum(len(words) for words in chosen)
        print(f"| {name} | {len(chosen)} | {words:,} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
