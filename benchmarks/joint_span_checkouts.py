"""The joint span decoder and the span CKY of an earlier version against the working tree's,
alternating in one process.

The decoder package of ``--baseline`` (a git revision, or a checkout's folder) and that of the
working tree (``lal_allennlp/decoding/*.py``) are copied to a temporary folder, as the packages
``baseline_decoding`` and ``current_decoding`` (their imports of ``lal_allennlp.decoding``
rewritten to their own copy), and imported from there, so that numba compiles both the same way.
For each length, both versions decode the same seeded random float32 charts (112 labels,
standard-normal span and arc scores; 100 sentences up to 80 words, fewer above, one from 300
words), on one thread, in turn, ``--repeats`` times; the trees, heads and scores must be
identical. The plain span CKY reads the same label scores, so its time is the scale the issue's
goals use (the joint decoder's time at most 2x the CKY's at 40 words).

Per decoder and length the report gives the fastest call's wall time per sentence, and for that
call the user and system CPU time and the page faults (``getrusage``): every call allocates its
workspace afresh (O(n^3), 0.7 GB at 500 words), and on a virtual machine the system time of
faulting it in can be as large as the decoding itself.

    python benchmarks/joint_span_checkouts.py --baseline HEAD~1 [--lengths 40 80 160 300 500]
        [--repeats 5]
    python benchmarks/joint_span_checkouts.py --baseline ../before
"""

import argparse
import importlib
import os
import resource
import subprocess
import sys
import tempfile
import time
from typing import Callable, Dict, List, Optional, Tuple

import numba
import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

PACKAGE = "lal_allennlp.decoding"
FOLDER = os.path.join("lal_allennlp", "decoding")


def _sources(version: Optional[str]) -> Dict[str, str]:
    """The ``.py`` files of ``lal_allennlp/decoding`` (name: source) of ``version``: ``None``
    for the working tree, a folder for a checkout there, else a git revision."""
    if version is None or os.path.isdir(version):
        folder = os.path.join(version or ROOT, FOLDER)
        names = [name for name in sorted(os.listdir(folder)) if name.endswith(".py")]
        sources = {}
        for name in names:
            with open(os.path.join(folder, name), encoding="utf-8") as source_file:
                sources[name] = source_file.read()
        return sources
    listing = subprocess.run(
        ["git", "-C", ROOT, "ls-tree", "--name-only", f"{version}:{FOLDER}"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.split()
    return {
        name: subprocess.run(
            ["git", "-C", ROOT, "show", f"{version}:{FOLDER}/{name}"],
            check=True,
            capture_output=True,
            text=True,
        ).stdout
        for name in listing
        if name.endswith(".py")
    }


def load_version(version: Optional[str], folder: str, prefix: str):
    """The decoder package of ``version`` (see :func:`_sources`), imported as
    ``<prefix>_decoding`` from a copy in ``folder``.

    Both sides of a comparison are loaded this way, so that numba compiles both afresh in the
    same process: a module imported normally comes from numba's on-disk cache, and that alone
    can change the timing of identical code at 40 words (``benchmarks/README.md``).
    """
    package = os.path.join(folder, f"{prefix}_decoding")
    os.makedirs(package)
    for name, source in _sources(version).items():
        with open(os.path.join(package, name), "w", encoding="utf-8") as module_file:
            module_file.write(source.replace(PACKAGE, f"{prefix}_decoding"))
    return importlib.import_module(f"{prefix}_decoding")


def batch_size(length: int) -> int:
    """100 sentences up to 80 words, then about constant work per call."""
    return 100 if length <= 80 else max(1, int(100 * (80 / length) ** 3.3))


def measured(call: Callable[[], object]) -> Tuple[float, float, float, int]:
    """(wall, user, system seconds, minor page faults) of one call."""
    before = resource.getrusage(resource.RUSAGE_SELF)
    start = time.perf_counter()
    call()
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_SELF)
    return (
        wall,
        after.ru_utime - before.ru_utime,
        after.ru_stime - before.ru_stime,
        after.ru_minflt - before.ru_minflt,
    )


def assert_same(first, second, length: int) -> None:
    spans_a, heads_a, scores_a = first
    spans_b, heads_b, scores_b = second
    same = np.array_equal(scores_a, scores_b)
    same = same and all(np.array_equal(a, b) for a, b in zip(spans_a, spans_b))
    same = same and all(np.array_equal(a, b) for a, b in zip(heads_a, heads_b))
    if not same:
        raise SystemExit(f"the two decoders' trees differ at {length} words")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument(
        "--baseline", default="HEAD~1", help="git revision, or checkout folder, to compare against"
    )
    parser.add_argument("--lengths", type=int, nargs="+", default=[40, 80, 160, 300, 500])
    parser.add_argument("--labels", type=int, default=112)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    numba.set_num_threads(1)
    rng = np.random.default_rng(args.seed)
    print(f"baseline {args.baseline} against the working tree; one thread; best of {args.repeats}")
    print()
    print(
        "| words | sentences | joint, baseline: ms/sentence (user / sys s, faults) "
        "| joint, working tree | baseline / working tree "
        "| CKY ms/sentence, baseline / working tree "
        "| joint time / CKY time, baseline / working tree |"
    )
    print("|---:|---:|---|---|---:|---|---|")
    with tempfile.TemporaryDirectory() as folder:
        sys.path.insert(0, folder)
        baseline_package = load_version(args.baseline, folder, "baseline")
        current_package = load_version(None, folder, "current")
        baseline, current = baseline_package.joint_span, current_package.joint_span
        baseline_cky, current_cky = baseline_package.cky, current_package.cky
        for length in args.lengths:
            batch = batch_size(length)
            shape = (batch, length + 1, length + 1)
            span = rng.standard_normal(shape + (args.labels,), dtype=np.float32)
            arc = rng.standard_normal(shape, dtype=np.float32)
            lengths = np.full(batch, length)
            decoders: Dict[str, Callable[[], object]] = {
                "baseline": lambda: baseline.joint_span_decode(span, arc, lengths),
                "current": lambda: current.joint_span_decode(span, arc, lengths),
                "cky baseline": lambda: baseline_cky.cky_decode(span, lengths),
                "cky": lambda: current_cky.cky_decode(span, lengths),
            }
            assert_same(decoders["baseline"](), decoders["current"](), length)  # also warm-up
            _, cky_scores = decoders["cky"]()
            _, baseline_cky_scores = decoders["cky baseline"]()
            if not np.array_equal(cky_scores, baseline_cky_scores):
                raise SystemExit(f"the two CKY decoders' scores differ at {length} words")
            runs: Dict[str, List[Tuple[float, float, float, int]]] = {k: [] for k in decoders}
            for _ in range(args.repeats):
                for name, call in decoders.items():
                    runs[name].append(measured(call))
            best = {name: min(values) for name, values in runs.items()}

            def cell(name: str) -> str:
                wall, user, system, faults = best[name]
                return f"{wall / batch * 1e3:,.3f} ({user:.2f} / {system:.2f}, {faults:,})"

            ratio = best["baseline"][0] / best["current"][0]
            cky_ms = [best[name][0] / batch * 1e3 for name in ("cky baseline", "cky")]
            pairs = (("baseline", "cky baseline"), ("current", "cky"))
            to_cky = [best[joint][0] / best[cky][0] for joint, cky in pairs]
            print(
                f"| {length} | {batch} | {cell('baseline')} | {cell('current')} | {ratio:.2f}x "
                f"| {cky_ms[0]:,.3f} / {cky_ms[1]:,.3f} | {to_cky[0]:.1f}x / {to_cky[1]:.1f}x |",
                flush=True,
            )


if __name__ == "__main__":
    main()
