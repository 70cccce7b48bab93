"""Where the split tiles of the one-sentence joint decoder lose time on long sentences: their S
and E operands fresh from memory or from the caches.

The chart fill of :mod:`lal_allennlp.decoding.joint_span` takes most split maxima of a block of
8 ends in tiles of 4 starts (``_tile_bulk``): for every chunk of 8 heads, 4 runs of S cells (one
per start) against the E cells of the block's 8 ends, ``_TILE_ENDS`` at a time. Going down a
block,
each tile reads the S cells of 4 new starts (read once per block) and the same block's E cells
again. This script runs the tiles of one block, in the fill's order, on a chart of random
numbers (the values do not matter to the loads and the arithmetic), in six forms:

* **one tile, repeated**: the same tile again and again (its operands in the caches);
* **block**: every tile of the block as the fill runs them;
* **block, S cached**: the same loops, but every tile reads the S cells of starts 0..3 (cached
  after the first tile) instead of those of its own starts;
* **block, E cached**: every tile reads the E cells of chunk 0 from k = 1 instead of its own;
* **block, both cached**;
* **block, prefetching**: the fill's own ``_tile_bulk`` as it runs on long sentences, which
  prefetches each tile's next S and E cells.

The difference between the forms is the cost of each operand coming from memory. Nanoseconds
per 8-lane step (an add and a max of 8 floats), fastest of ``--repeats``, one thread.

    python benchmarks/joint_span_tiles.py [--lengths 500 1000] [--repeats 3]
"""

import argparse
import os
import sys

import numba
import numpy as np
from numba import njit

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from lal_allennlp.decoding import joint_span as js  # noqa: E402
from timing import fastest_in_turns, load_average  # noqa: E402  (benchmarks/timing.py)

_LANES = 8
_FORMS = {  # name: (S of starts 0..3, E of chunk 0, the fill's prefetching tiles)
    "block": (False, False, False),
    "block, S cached": (True, False, False),
    "block, E cached": (False, True, False),
    "block, both cached": (True, True, False),
    "block, prefetching": (False, False, True),
}


@njit(cache=True)
def _tile(top, j0, stride, rows, S, E, T, fixed_s, fixed_e):  # pragma: no cover - compiled
    """``js._tile_bulk`` for the starts top .. top - 3, with its S or E operands optionally
    replaced by cells that stay in the caches; returns the 8-lane steps."""
    chunks = stride // _LANES
    k0 = top + 1
    starts = (0, 1, 2, 3) if fixed_s else (top, top - 1, top - 2, top - 3)
    first = (top - 3) // _LANES  # the chunk of head top - 2 (head h in lane h - 1)
    last = (j0 + js._END_BLOCK - 2) // _LANES  # the chunk of head j0 + 7
    for c in range(first, last + 1):
        for q in range(0, js._END_BLOCK, js._TILE_ENDS):
            # E[end, k, chunk c] of the tile's ends (kept inside the block), or cached cells;
            # scalars, so that the timed loop allocates nothing
            chunk_e, first_e = (0, 1) if fixed_e else (c, k0)
            last_end = j0 + js._END_BLOCK - 1
            e0 = js._chunk_row(min(j0 + q, last_end), chunk_e, first_e, rows, chunks)
            e1 = js._chunk_row(min(j0 + q + 1, last_end), chunk_e, first_e, rows, chunks)
            e2 = js._chunk_row(min(j0 + q + 2, last_end), chunk_e, first_e, rows, chunks)
            e3 = js._chunk_row(min(j0 + q + 3, last_end), chunk_e, first_e, rows, chunks)
            js._split_max_tile(
                T,
                q * stride + c * _LANES,
                js._END_BLOCK * stride,
                stride,
                S,
                js._chunk_row(starts[0], c, k0, rows, chunks),
                js._chunk_row(starts[1], c, k0, rows, chunks),
                js._chunk_row(starts[2], c, k0, rows, chunks),
                js._chunk_row(starts[3], c, k0, rows, chunks),
                E,
                e0,
                e1,
                e2,
                e3,
                j0 - k0,
            )
    return (last - first + 1) * js._TILE_STARTS * js._END_BLOCK * (j0 - k0)


@njit(cache=True)
def _block(j0, stride, rows, S, E, T, fixed_s, fixed_e, ahead):  # pragma: no cover - compiled
    """The tiles of the block of ends from j0, as the fill runs them (starts going down by 4
    from the first with ``_TILE_MIN_SPLITS`` split points below j0); returns the steps. With
    ``ahead``, the fill's own prefetching tiles (same steps)."""
    steps = 0
    top = j0 - js._TILE_MIN_SPLITS - 1
    while top >= js._TILE_STARTS - 1:
        if ahead:
            js._tile_bulk(top, top - js._TILE_STARTS + 1, j0, stride, rows, S, E, T, True)
            chunks = (j0 + js._END_BLOCK - 2) // _LANES - (top - 3) // _LANES + 1
            steps += chunks * js._TILE_STARTS * js._END_BLOCK * (j0 - top - 1)
        else:
            steps += _tile(top, j0, stride, rows, S, E, T, fixed_s, fixed_e)
        top -= js._TILE_STARTS
    return steps


@njit(cache=True)
def _repeated(times, top, j0, stride, rows, S, E, T):  # pragma: no cover - compiled code
    steps = 0
    for _ in range(times):
        steps += _tile(top, j0, stride, rows, S, E, T, False, False)
    return steps


def ns_per_step(call, repeats: int) -> float:
    steps = call()  # also compiles and warms up
    return fastest_in_turns({"tiles": call}, repeats)["tiles"] / steps * 1e9


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--lengths", type=int, nargs="+", default=[500, 1000])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    numba.set_num_threads(1)
    print(f"float32, one thread, fastest of {args.repeats}; ns per 8-lane step\n")
    print("| words | block of ends | one tile, repeated | " + " | ".join(_FORMS) + " |")
    print("|---:|---|---:|" + "---:|" * len(_FORMS))
    for n in args.lengths:
        size = n + 1
        stride = js._row_length(size)
        se, _, _, tile = (buffer[0] for buffer in js._workspaces(n, np.float32, 1))
        se[:] = np.random.default_rng(0).standard_normal(se.shape[0], dtype=np.float32)
        rows = np.empty(size * (stride // _LANES), np.int64)
        js._se_layout(n, rows)
        last_block = (n - js._END_BLOCK) // js._END_BLOCK * js._END_BLOCK + 1
        for j0 in (last_block, last_block // 2 // js._END_BLOCK * js._END_BLOCK + 1):
            top = (j0 + js._TILE_STARTS) // 2  # a tile half way down the block
            times = max(1, int(2e7 / ((j0 // _LANES) * 32 * (j0 - top))))
            cells = [ns_per_step(lambda: _repeated(times, top, j0, stride, rows, se, se, tile),
                                 args.repeats)]
            for fixed_s, fixed_e, ahead in _FORMS.values():
                cells.append(ns_per_step(
                    lambda: _block(j0, stride, rows, se, se, tile, fixed_s, fixed_e, ahead),
                    args.repeats,
                ))
            print(f"| {n} | {j0}..{j0 + js._END_BLOCK - 1} | "
                  + " | ".join(f"{cell:.3f}" for cell in cells) + " |", flush=True)
    print(f"\nload average after the run: {load_average()} on {os.cpu_count()} CPUs")


if __name__ == "__main__":
    main()
