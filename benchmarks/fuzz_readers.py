"""
Long fuzzing run of the treebank readers: the cases of `tests/fuzz/test_fuzz_readers.py`
(slices of the real treebanks, mutated, read with `on_error="raise"` and `"skip"`, checked by
`tests/fuzz/reader_properties.check_case`), by the hundred thousand.

Case `i` of corpus `c` is drawn from `random.Random(f"{seed}-{c}-{i}")`, so any case can be
run again alone: every failure is printed with the `--replay` command that shows it, and
`--save DIR` writes its mutated file.

    python benchmarks/fuzz_readers.py                       # 100,000 cases, seed 0
    python benchmarks/fuzz_readers.py --cases 2000 --table benchmarks/fuzz_readers.md
    python benchmarks/fuzz_readers.py --replay ewt:1234 --seed 0 --save /tmp/case
"""

import argparse
import collections
import datetime
import logging
import multiprocessing
import os
import platform
import random
import shlex
import sys
import time
from typing import Dict, List, Optional, Sequence, Tuple

REPO_ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
sys.path.insert(0, REPO_ROOT)

from tests.fuzz.reader_properties import CaseResult, load_corpora, random_case  # noqa: E402

# A case: (corpus name, index).
Case = Tuple[str, int]
# The corpora, loaded once per process.
_CORPORA: Dict = {}


def _corpora() -> Dict:
    if not _CORPORA:
        logging.disable(logging.WARNING)  # skip mode logs every skipped sentence
        _CORPORA.update(load_corpora())
    return _CORPORA


def run_case(seed: int, case: Case) -> Tuple[Case, str, CaseResult]:
    """One case: the mutation's name and the checked result."""
    name, index = case
    corpus = _corpora()[name]
    mutated, result = random_case(corpus, random.Random(f"{seed}-{name}-{index}"))
    return case, mutated.name, result


def _run_chunk(arguments: Tuple[int, List[Case]]) -> List[Tuple[Case, str, CaseResult]]:
    seed, cases = arguments
    return [run_case(seed, case) for case in cases]


def run_all(
    names: Sequence[str], cases: int, seed: int, jobs: int
) -> List[Tuple[Case, str, CaseResult]]:
    """`cases` cases over the corpora `names`, round robin, on `jobs` processes."""
    todo = [(names[i % len(names)], i // len(names)) for i in range(cases)]
    chunks = [(seed, todo[start : start + 200]) for start in range(0, len(todo), 200)]
    results: List[Tuple[Case, str, CaseResult]] = []
    done = 0
    started = time.perf_counter()
    if jobs > 1:
        with multiprocessing.get_context("fork").Pool(jobs) as pool:
            iterator = pool.imap_unordered(_run_chunk, chunks)
            for chunk in iterator:
                results.extend(chunk)
                done = _progress(done, len(chunk), cases, started)
    else:
        for chunk in chunks:
            results.extend(_run_chunk(chunk))
            done = _progress(done, len(chunk[1]), cases, started)
    return sorted(results, key=lambda item: (item[0][0], item[0][1]))


def _progress(done: int, more: int, total: int, started: float) -> int:
    done += more
    if done % 5000 < more or done == total:
        rate = done / max(time.perf_counter() - started, 1e-9)
        print(f"  {done:,} / {total:,} cases ({rate:.0f} cases/s)", file=sys.stderr, flush=True)
    return done


def summarise(
    results: List[Tuple[Case, str, CaseResult]], names: Sequence[str]
) -> Tuple[List[List[str]], List[List[str]]]:
    """Rows per corpus and rows per mutation: cases, read OK, project error, skips, failures."""
    by_corpus: Dict[str, collections.Counter] = {name: collections.Counter() for name in names}
    by_mutation: Dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    for (name, _), mutation, result in results:
        for counter in (by_corpus[name], by_mutation[mutation]):
            counter["cases"] += 1
            counter["error" if result.raised else "ok"] += 1
            counter["skipping"] += result.skipped > 0
            counter["skips"] += result.skipped
            counter["failures"] += result.failure is not None

    def row(label: str, counter: collections.Counter) -> List[str]:
        return [
            label,
            f"{counter['cases']:,}",
            f"{counter['ok']:,}",
            f"{counter['error']:,}",
            f"{counter['skipping']:,}",
            f"{counter['skips']:,}",
            f"{counter['failures']:,}",
        ]

    corpus_rows = [row(name, by_corpus[name]) for name in names]
    total = sum(by_corpus.values(), collections.Counter())
    corpus_rows.append(row("**all**", total))
    mutation_rows = [row(name, by_mutation[name]) for name in sorted(by_mutation)]
    return corpus_rows, mutation_rows


HEADER = [
    "",
    "cases",
    "read OK",
    "project error",
    "cases with skips",
    "sentences/files skipped",
    "failures",
]
CORPUS_READERS = {
    "wsj": "`lal_ptb`, WSJ `.mrg` (12 trees of wsj_0001-0005)",
    "sinica": "`lal_ctb`, Sinica, one tree per line (12)",
    "ctb-markup": "`lal_ctb`, 12 Sinica trees in CTB `<S>` markup",
    "ewt": "`lal_dependencies`, EWT dev CoNLL-U (12 sentences)",
    "gsd": "`lal_dependencies`, GSD dev CoNLL-U (6 sentences)",
    "malt-tab": "`lal_dependencies`, WSJ `.dp` Malt-TAB (12)",
    "conllx": "`lal_dependencies`, WSJ `.dp` as CoNLL-X (12)",
}


def _markdown(rows: List[List[str]], first: str) -> str:
    header = [first] + HEADER[1:]
    lines = ["| " + " | ".join(header) + " |", "|---|" + "---:|" * (len(header) - 1)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def _failure_lines(results: List[Tuple[Case, str, CaseResult]], seed: int) -> List[str]:
    lines = []
    for (name, index), mutation, result in results:
        if result.failure is None:
            continue
        command = f"python benchmarks/fuzz_readers.py --seed {seed} --replay {name}:{index}"
        lines.append(f"- {name} case {index}, {mutation} ({result.description}): "
                     f"{result.failure.splitlines()[0][:300]}\n  reproduce: `{command}`")
    return lines


def replay(seed: int, case: str, save: Optional[str]) -> int:
    """Runs one case alone and shows everything about it."""
    name, index_text = case.split(":")
    corpus = _corpora()[name]
    mutated, result = random_case(corpus, random.Random(f"{seed}-{name}-{index_text}"))
    print(f"{name} case {index_text}: {mutated.name}: {mutated.description}")
    print(f"encoding option: {mutated.encoding}; keeps the content: {mutated.same}")
    print(f"strict read raised: {result.raised}; skips counted in skip mode: {result.skipped}")
    if save:
        os.makedirs(save, exist_ok=True)
        path = os.path.join(save, f"{name}-{index_text}{corpus.suffix}")
        with open(path, "wb") as case_file:
            case_file.write(mutated.data)
        print(f"mutated file: {path}")
    print("failure:", result.failure or "none")
    return 1 if result.failure else 0


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", type=int, default=100_000, help="cases in all (round robin)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--corpora", nargs="*", default=None, help="default: all")
    parser.add_argument("--jobs", type=int, default=1, help="worker processes")
    parser.add_argument("--table", default=None, help="write the results as markdown here")
    parser.add_argument("--replay", default=None, metavar="CORPUS:INDEX")
    parser.add_argument("--save", default=None, help="with --replay: folder for the file")
    args = parser.parse_args(argv)
    if args.replay:
        return replay(args.seed, args.replay, args.save)
    names = args.corpora or list(_corpora())
    started = time.perf_counter()
    results = run_all(names, args.cases, args.seed, args.jobs)
    seconds = time.perf_counter() - started
    corpus_rows, mutation_rows = summarise(results, names)
    failures = _failure_lines(results, args.seed)
    report = "\n\n".join([
        _markdown(corpus_rows, "corpus"),
        _markdown(mutation_rows, "mutation"),
        "Failures:\n\n" + ("\n".join(failures) if failures else "none"),
    ])
    print(report)
    print(f"\n{len(results):,} cases in {seconds:.0f} s")
    if args.table:
        command = "python benchmarks/fuzz_readers.py " + " ".join(
            shlex.quote(a) for a in (argv if argv is not None else sys.argv[1:])
        )
        machine = (
            f"{platform.machine()}, {os.cpu_count()} cores, {platform.system()} "
            f"{platform.release()}, Python {platform.python_version()}"
        )
        corpora = "\n".join(f"- `{name}`: {CORPUS_READERS.get(name, name)}" for name in names)
        with open(args.table, "w", encoding="utf-8") as table:
            table.write(
                "# Reader fuzzing\n\n"
                f"When: {datetime.datetime.now():%Y-%m-%d %H:%M}. Machine: {machine}.\n"
                f"Command: `{command}` ({len(results):,} cases in {seconds:.0f} s, "
                f"{args.jobs} process(es)).\n\n"
                "A case mutates one slice and reads it with `on_error=\"raise\"` (read OK or "
                "the project's error) and `\"skip\"` (cases with skips, skips counted); a "
                "failure is a case that broke a property of `tests/fuzz/reader_properties.py`."
                f"\n\nSlices:\n\n{corpora}\n\n{report}\n"
            )
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
