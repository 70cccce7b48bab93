"""Timing helpers shared by the benchmark scripts of this folder."""
import os
import time
from typing import Callable, Dict, List, Sequence

import numpy as np


def timed(fn: Callable[[], object], repeats: int) -> float:
    """Median wall time of ``repeats`` calls (the caller has already warmed ``fn`` up)."""
    times: List[float] = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return float(np.median(times))


def fastest_in_turns(fns: Dict[str, Callable[[], object]], repeats: int) -> Dict[str, float]:
    """Fastest wall time of each function over ``repeats`` rounds in which they take turns (the
    caller has warmed them up). A slow spell of a shared machine then falls on one call of each
    rather than on all calls of one, and the minimum ignores it."""
    best = {name: float("inf") for name in fns}
    for _ in range(repeats):
        for name, fn in fns.items():
            start = time.perf_counter()
            fn()
            best[name] = min(best[name], time.perf_counter() - start)
    return best


def growth_exponent(lengths: Sequence[int], times: Sequence[float]) -> float:
    """Least-squares slope of log(time) over log(length): time ~ length^k."""
    return float(np.polyfit(np.log(lengths), np.log(times), 1)[0])


def load_average() -> str:
    """The 1, 5 and 15 minute load averages, for reports from a shared machine."""
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def treebank_sentences(path: str) -> List[List[str]]:
    """The gold words of every tree at ``path`` (any path the ``lal_ptb`` reader takes: a file,
    folder, glob or WSJ range), read and normalised as the reader does, for timing parses."""
    from lal_allennlp.dataset_readers import resolve_treebank_paths
    from lal_allennlp.syntax.trees import normalise_tree, parse_trees, tree_to_spans

    sentences = []
    for file in resolve_treebank_paths(path):
        with open(file, encoding="utf-8") as treebank:
            for tree, _ in parse_trees(treebank.read(), source=file):
                normalised = normalise_tree(tree)
                if normalised is not None:
                    sentences.append(tree_to_spans(normalised)[0])
    return sentences
