"""
Same trees and metrics from two checkouts: runs each checkout's code on the same model archives
and data, and compares what they write.

For every archive and checkout, in a subprocess whose ``PYTHONPATH`` starts with the checkout
(so that ``import lal_allennlp`` takes that checkout's code):

1. ``allennlp evaluate ARCHIVE DATA`` writes the metrics and the model's per-sentence outputs
   (trees, heads, labels, tags) as JSON lines;
2. ``lal-parse ARCHIVE`` parses the same sentences as raw text (their words, one sentence a
   line, ``--pretokenized``), in bracketed trees and, for models with heads, CoNLL-U.

The outputs of the two checkouts must be equal: metrics key by key (timing keys aside), each
prediction line field by field (floats to ``--tolerance``, everything else exactly), and the
``lal-parse`` files byte for byte. Exit status 0 when everything is equal, 1 otherwise, with the
first differences printed.

    python benchmarks/compare_checkouts.py --before ../before --after . \\
        --archive runs/joint/model.tar.gz --archive runs/span/model.tar.gz \\
        --data ../shared/data/ptb-sample/trees/wsj_0160-0179

``--fixtures`` also trains the fixture span and joint parsers (``fixtures/*/experiment.jsonnet``,
seed fixed) with the *before* checkout and compares them the same way.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any, Dict, List, Optional

REPO_ROOT = Path(__file__).resolve().parent.parent
# Metrics that measure time, not results.
_TIMING_KEYS = ("time", "speed", "per_second", "seconds")
_FIXTURE_FAMILIES = ("span_parser", "joint_parser")
# Enough epochs for the fixture parsers to give varied trees (after 2 they give flat ones).
FIXTURE_EPOCHS = 20


def _env(checkout: Path) -> Dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(checkout) + os.pathsep + env.get("PYTHONPATH", "")
    env.update(HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", TOKENIZERS_PARALLELISM="false")
    return env


def _run(command: List[str], checkout: Path, stdin: Optional[str] = None) -> None:
    result = subprocess.run(
        command, cwd=checkout, env=_env(checkout), input=stdin, text=True, capture_output=True
    )
    if result.returncode != 0:
        raise SystemExit(
            f"{' '.join(command)} failed in {checkout} (exit {result.returncode}):\n"
            f"{result.stderr[-3000:]}"
        )


def _sentences(predictions: Path) -> str:
    """The words of every evaluated sentence (the ``words`` of ``allennlp evaluate``'s batch
    outputs), one sentence a line."""
    lines = []
    for line in predictions.read_text().splitlines():
        lines.extend(" ".join(words) for words in json.loads(line)["words"])
    return "\n".join(lines) + "\n"


def evaluate(checkout: Path, archive: str, data: str, out: Path) -> None:
    """``metrics.json`` and ``predictions.jsonl`` of ``allennlp evaluate`` with ``checkout``'s
    code in ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    _run(
        [sys.executable, "-m", "allennlp", "evaluate", archive, data,
         "--include-package", "lal_allennlp", "--output-file", str(out / "metrics.json"),
         "--predictions-output-file", str(out / "predictions.jsonl"), "--cuda-device", "-1"],
        checkout,
    )


def parse(checkout: Path, archive: str, sentences: str, out: Path) -> None:
    """``parses.trees`` and ``parses.conllu`` of ``lal-parse`` with ``checkout``'s code in
    ``out`` (a span-only model has no CoNLL-U: the file then says so)."""
    command = [sys.executable, "-m", "lal_allennlp.commands.parse", archive, "--pretokenized",
               "--no-progress"]
    _run(command + ["-o", str(out / "parses.trees")], checkout, stdin=sentences)
    conllu = subprocess.run(
        command + ["--format", "conllu", "-o", str(out / "parses.conllu")], cwd=checkout,
        env=_env(checkout), input=sentences, text=True, capture_output=True,
    )
    if conllu.returncode != 0:  # refused (exit 1 at c297811, a usage error, 2, since)
        (out / "parses.conllu").write_text("(no CoNLL-U from this model)\n")


def _differences(before: Any, after: Any, where: str, tolerance: float, found: List[str]) -> None:
    if isinstance(before, dict) and isinstance(after, dict):
        for key in sorted(set(before) | set(after)):
            if key not in before or key not in after:
                found.append(f"{where}.{key}: only in {'after' if key in after else 'before'}")
            else:
                _differences(before[key], after[key], f"{where}.{key}", tolerance, found)
    elif isinstance(before, list) and isinstance(after, list):
        if len(before) != len(after):
            found.append(f"{where}: {len(before)} items before, {len(after)} after")
        for index, (left, right) in enumerate(zip(before, after)):
            _differences(left, right, f"{where}[{index}]", tolerance, found)
    elif isinstance(before, float) or isinstance(after, float):
        if not isinstance(before, (int, float)) or not isinstance(after, (int, float)):
            found.append(f"{where}: {before!r} != {after!r}")
        elif abs(before - after) > tolerance * max(1.0, abs(before)):
            found.append(f"{where}: {before!r} != {after!r}")
    elif before != after:
        found.append(f"{where}: {str(before)[:200]!r} != {str(after)[:200]!r}")


def compare(before: Path, after: Path, tolerance: float) -> List[str]:
    """The differences between two output folders of :func:`evaluate` and :func:`parse`."""
    found: List[str] = []
    metrics = [json.loads((folder / "metrics.json").read_text()) for folder in (before, after)]
    for values in metrics:
        for key in [k for k in values if any(t in k for t in _TIMING_KEYS)]:
            del values[key]
    _differences(metrics[0], metrics[1], "metrics", tolerance, found)
    lines = [(folder / "predictions.jsonl").read_text().splitlines() for folder in (before, after)]
    if len(lines[0]) != len(lines[1]):
        found.append(f"predictions: {len(lines[0])} lines before, {len(lines[1])} after")
    for number, (left, right) in enumerate(zip(*lines), start=1):
        _differences(json.loads(left), json.loads(right), f"prediction {number}", tolerance, found)
    for name in ("parses.trees", "parses.conllu"):
        left, right = ((folder / name).read_text() for folder in (before, after))
        if left != right:
            first = next(
                i for i, (a, b) in enumerate(zip(left.splitlines(), right.splitlines()) , 1)
                if a != b
            ) if left.splitlines() != right.splitlines() else "end"
            found.append(f"{name}: differs (first at line {first})")
    return found


def train_fixtures(checkout: Path, work: Path) -> List[str]:
    """The fixture span and joint parsers trained with ``checkout``'s code (``FIXTURE_EPOCHS``
    epochs, the configs' seeds), as archive paths."""
    archives = []
    for family in _FIXTURE_FAMILIES:
        serialization = work / f"fixture_{family}"
        if not (serialization / "model.tar.gz").is_file():
            shutil.rmtree(serialization, ignore_errors=True)
            _run(
                [sys.executable, "-m", "allennlp", "train",
                 str(checkout / "fixtures" / family / "experiment.jsonnet"),
                 "-s", str(serialization), "--include-package", "lal_allennlp",
                 "-o", json.dumps({"trainer.num_epochs": FIXTURE_EPOCHS})],
                checkout,
            )
        archives.append(str(serialization / "model.tar.gz"))
    return archives


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--before", type=Path, required=True, help="the reference checkout")
    parser.add_argument("--after", type=Path, default=REPO_ROOT, help="the checkout to check")
    parser.add_argument("--archive", action="append", default=[], help="model.tar.gz (repeat)")
    parser.add_argument("--data", default=None, help="evaluation trees for --archive")
    parser.add_argument("--fixtures", action="store_true",
                        help="also train and compare the fixture span and joint parsers")
    parser.add_argument("--tolerance", type=float, default=0.0,
                        help="relative tolerance for float outputs (default: exact)")
    parser.add_argument("--work-dir", type=Path, default=None)
    args = parser.parse_args()
    work = args.work_dir or Path(tempfile.mkdtemp(prefix="compare_checkouts_"))
    work.mkdir(parents=True, exist_ok=True)
    before, after = args.before.resolve(), args.after.resolve()

    jobs = [(archive, args.data) for archive in args.archive]
    if args.fixtures:
        dev = str(before / "fixtures" / "ptb" / "dev")
        jobs += [(archive, dev) for archive in train_fixtures(before, work)]
    if not jobs:
        parser.error("nothing to compare: give --archive (with --data) or --fixtures")
    failures = 0
    for index, (archive, data) in enumerate(jobs):
        if data is None:
            parser.error(f"--archive {archive} needs --data")
        archive = str(Path(archive).resolve())
        folders = [work / f"{index}_{name}" for name in ("before", "after")]
        for checkout, folder in zip((before, after), folders):
            evaluate(checkout, archive, data, folder)
        sentences = _sentences(folders[0] / "predictions.jsonl")
        for checkout, folder in zip((before, after), folders):
            parse(checkout, archive, sentences, folder)
        found = compare(*folders, tolerance=args.tolerance)
        metrics = json.loads((folders[1] / "metrics.json").read_text())
        shown = {k: round(v, 4) for k, v in metrics.items()
                 if isinstance(v, float) and not any(t in k for t in _TIMING_KEYS)}
        status = "same" if not found else f"{len(found)} differences"
        print(f"{archive} on {data}: {status}; {sentences.count(chr(10))} sentences; {shown}")
        for line in found[:20]:
            print("   ", line)
        failures += bool(found)
    print(f"outputs in {work}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
