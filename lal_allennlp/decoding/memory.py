"""Memory policy of the decoders' workspaces: aligned buffers, and how many workers fit.

The joint span decoder's workspace grows as n^3 (10 MiB at 150 words, 2.5 GiB at 1,000 words in
float32). Its buffers are allocated here, by numpy, rather than inside the compiled code: numpy
asks the kernel for transparent huge pages on arrays of 4 MiB and more (``madvise``), so a large
chart is faulted in 2 MiB at a time instead of 4 KiB, and its scattered reads miss the TLB less.

Before allocating, the decoder checks that its workspaces fit in the memory available: it runs
fewer workers in parallel when only some fit, and refuses a sentence whose workspace alone does
not fit with a ``MemoryError`` that says so, rather than being killed by the system for running
out.
"""

from typing import Optional, Sequence, Tuple

import numpy as np

__all__ = ["ALIGN_BYTES", "aligned_buffers", "available_memory_bytes", "workers_that_fit"]

ALIGN_BYTES = 64  # a cache line: aligned vector loads never straddle two lines
UNCHECKED_BYTES = 64 << 20  # workspaces up to this size are allocated without a memory check
_GIB = 2**30


def aligned_buffers(workers: int, counts: Sequence[int], dtype) -> Tuple[np.ndarray, ...]:
    """``np.zeros((workers, >= count), dtype)`` for each count, whose rows each start on a
    64-byte boundary: views of one allocation, which costs a call less than one per buffer."""
    itemsize = np.dtype(dtype).itemsize
    spare = ALIGN_BYTES // itemsize
    rows = [-(-count // spare) * spare for count in counts]
    buffer = np.zeros(workers * sum(rows) + spare, dtype)
    offset = (-buffer.__array_interface__["data"][0]) % ALIGN_BYTES // itemsize
    views = []
    for row in rows:
        views.append(buffer[offset : offset + workers * row].reshape(workers, row))
        offset += workers * row
    return tuple(views)


def available_memory_bytes() -> Optional[int]:
    """The memory this process may still take: the system's available memory (Linux
    ``MemAvailable``), or less under a cgroup (v2) memory limit; ``None`` when unknown."""
    available = None
    try:
        with open("/proc/meminfo", encoding="ascii") as meminfo:
            for line in meminfo:
                if line.startswith("MemAvailable:"):
                    available = int(line.split()[1]) * 1024
                    break
    except OSError:
        return None
    try:
        with open("/sys/fs/cgroup/memory.max", encoding="ascii") as limit_file:
            limit = limit_file.read().strip()
        with open("/sys/fs/cgroup/memory.current", encoding="ascii") as current_file:
            current = int(current_file.read().strip())
        if limit != "max":
            left = int(limit) - current
            available = left if available is None else min(available, left)
    except (OSError, ValueError):
        pass
    return available


def workers_that_fit(needed: int, num_workers: int, who: str, detail: str) -> int:
    """At most ``num_workers`` parallel workers, as many as have room for a workspace of
    ``needed`` bytes; when not even one has, a ``MemoryError`` that says so: "``who`` needs ...
    GiB of workspace ``detail``, but only ... is available"."""
    if needed * num_workers <= UNCHECKED_BYTES:
        return max(1, num_workers)  # small: not worth reading the system's figures every call
    available = available_memory_bytes()
    if available is None:
        return max(1, num_workers)
    fit = available // needed
    if fit < 1:
        raise MemoryError(
            f"{who} needs {needed / _GIB:.1f} GiB of workspace {detail}, but only "
            f"{available / _GIB:.1f} GiB of memory is available. Split the sentence, or parse it "
            "on a machine with more memory."
        )
    return int(max(1, min(num_workers, fit)))
