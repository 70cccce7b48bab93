"""Timing helpers shared by the benchmark scripts of this folder."""
import os
import time
from typing import Callable, List, Sequence

import numpy as np


def timed(fn: Callable[[], object], repeats: int) -> float:
    """Median wall time of ``repeats`` calls (the caller has already warmed ``fn`` up)."""
    times: List[float] = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return float(np.median(times))


def growth_exponent(lengths: Sequence[int], times: Sequence[float]) -> float:
    """Least-squares slope of log(time) over log(length): time ~ length^k."""
    return float(np.polyfit(np.log(lengths), np.log(times), 1)[0])


def load_average() -> str:
    """The 1, 5 and 15 minute load averages, for reports from a shared machine."""
    return " ".join(f"{x:.2f}" for x in os.getloadavg())
