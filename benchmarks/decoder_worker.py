"""
Worker for ``benchmarks/decoder_side_by_side.py``: times one chart decoder on saved charts.

Runs in the virtual environment of the decoder it times (ours in the project's ``.venv``,
benepar 0.2 and SuPar in their own), so it imports nothing from the project unless it times
``ours``. It loads the charts that the driver saved (``scores``: float32, shape
(batch, n + 1, n + 1, labels), span (i, j) of fenceposts at ``[:, i, j]``; label 0 is the empty
label and scores 0 in every cell), converts them, untimed, to the layout the decoder takes from
its own model, calls the decoder once to warm up, then times ``--repeats`` calls (more, up to
1000, until they took ``--min-time`` seconds) and writes JSON:
the times, the peak resident memory of the timed calls (peak VmHWM after resetting it, minus
the resident memory before the calls) and the labelled non-empty spans ``[i, j, label]``
(fenceposts) of each sentence, which the driver scores on the chart. Only the decoder call is
timed, up to its own output (our span arrays, benepar's label charts, SuPar's labelled span
lists); turning that into span lists is not.

    python benchmarks/decoder_worker.py {ours,ours-joint,benepar,supar} CHARTS.npy OUT.json \
        [--repeats 3] [--min-time 1.0] [--threads 1]
"""

import argparse
import json
import os
import sys
import time
from typing import Any, Callable, Dict, List, Tuple

import numpy as np

Spans = List[List[Tuple[int, int, int]]]
# A decoder: a timed call returning the decoder's own output, and an untimed conversion of
# that output to spans.
Decoder = Tuple[Callable[[], Any], Callable[[Any], Spans]]


def _status_kib(field: str) -> int:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise RuntimeError(f"{field} not in /proc/self/status")


def _reset_peak() -> bool:
    """Resets the peak resident size (VmHWM) to the current one (Linux >= 4.0)."""
    try:
        with open("/proc/self/clear_refs", "w") as clear_refs:
            clear_refs.write("5")
        return True
    except OSError:
        return False


def _our_setup(scores: np.ndarray, threads: int) -> np.ndarray:
    """Puts the project on the path and sets numba's threads; the (full) sentence lengths."""
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    import numba

    numba.set_num_threads(threads)
    batch, fences = scores.shape[:2]
    return np.full(batch, fences - 1, dtype=np.int64)


def _our_spans(spans: List[np.ndarray]) -> Spans:
    """Our decoders' (i, j, label) rows, the non-empty ones."""
    return [[(i, j, l) for i, j, l in s.tolist() if l != 0] for s in spans]


def _ours(scores: np.ndarray, threads: int) -> Decoder:
    lengths = _our_setup(scores, threads)
    from lal_allennlp.decoding.cky import cky_decode

    def decode() -> List[np.ndarray]:
        return cky_decode(scores, lengths)[0]

    return decode, _our_spans


def _ours_joint(scores: np.ndarray, threads: int) -> Decoder:
    """Our joint span (HPSG) decoder on the same span charts plus seeded random arc scores:
    it decodes a constituency tree and dependency heads together (label 1 plays `<H>`), a
    larger problem than the peers' CKY; timed for comparison, its trees are not expected to
    score what the CKY trees score."""
    lengths = _our_setup(scores, threads)
    from lal_allennlp.decoding.joint_span import joint_span_decode

    batch, fences = scores.shape[:2]
    arcs = np.random.default_rng(0).standard_normal((batch, fences, fences)).astype(np.float32)

    def decode() -> List[np.ndarray]:
        return joint_span_decode(scores, arcs, lengths)[0]

    return decode, _our_spans


def _benepar(scores: np.ndarray, threads: int) -> Decoder:
    import torch
    from benepar.decode_chart import ChartDecoder

    torch.set_num_threads(threads)
    batch, fences, _, num_labels = scores.shape
    n = fences - 1
    # benepar's charts are indexed by first and last word (closed interval): [i, j] = ours[i, j+1].
    chart = torch.from_numpy(np.ascontiguousarray(scores[:, :-1, 1:, :]))
    lengths = torch.full((batch,), n, dtype=torch.long)
    # force_root_constituent=False: the root may take the empty label, as in the other decoders.
    decoder = ChartDecoder({str(l): l for l in range(num_labels)}, force_root_constituent=False)

    def decode() -> List[np.ndarray]:
        with torch.no_grad():
            return decoder.charts_from_pytorch_scores_batched(chart, lengths)

    def convert(charts: List[np.ndarray]) -> Spans:
        out = []
        for labels in charts:
            starts, ends = np.nonzero(labels)
            out.append([(int(i), int(j) + 1, int(labels[i, j])) for i, j in zip(starts, ends)])
        return out

    return decode, convert


def _supar(scores: np.ndarray, threads: int) -> Decoder:
    import torch
    from supar.models.const import CRFConstituencyModel

    torch.set_num_threads(threads)
    batch, fences = scores.shape[:2]
    chart = torch.from_numpy(scores)
    # SuPar's constituency mask: (batch, n + 1, n + 1), True on the spans i < j <= length.
    mask = torch.ones(batch, fences, fences, dtype=torch.bool).triu_(1)

    def decode() -> List[List[Tuple[int, int, int]]]:
        # SuPar's CRF constituency model scores spans and labels apart and decodes with
        # ``CRFConstituencyModel.decode``: CKY (``ConstituencyCRF(...).argmax``, max semiring
        # and autograd) over the span scores, then each span's best label. On one labelled
        # chart the span score of that problem is the best label score: one max over labels.
        with torch.no_grad():
            span_scores = chart.max(-1)[0]
        return CRFConstituencyModel.decode(None, span_scores, chart, mask)

    def convert(trees: List[List[Tuple[int, int, int]]]) -> Spans:
        return [[(i, j, label) for i, j, label in tree if label != 0] for tree in trees]

    return decode, convert


DECODERS: Dict[str, Callable[[np.ndarray, int], Decoder]] = {
    "ours": _ours,
    "ours-joint": _ours_joint,
    "benepar": _benepar,
    "supar": _supar,
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("decoder", choices=sorted(DECODERS))
    parser.add_argument("charts", help=".npy file of float32 charts (batch, n + 1, n + 1, labels)")
    parser.add_argument("out", help="JSON file to write")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument(
        "--min-time", type=float, default=1.0, help="repeat until the calls took this long (s)"
    )
    args = parser.parse_args()

    scores = np.load(args.charts)
    decode, convert = DECODERS[args.decoder](scores, args.threads)
    start = time.perf_counter()
    decode()  # warm-up: numba cache load / compile, torch allocations
    warmup = time.perf_counter() - start

    reset = _reset_peak()
    before_kib = _status_kib("VmRSS")
    times: List[float] = []
    while len(times) < args.repeats or (sum(times) < args.min_time and len(times) < 1000):
        start = time.perf_counter()
        output = decode()
        times.append(time.perf_counter() - start)
    peak_kib = _status_kib("VmHWM")
    with open(args.out, "w") as out:
        json.dump(
            {
                "decoder": args.decoder,
                "threads": args.threads,
                "times": times,
                "warmup": warmup,
                "rss_before_kib": before_kib,
                "peak_kib": peak_kib,
                "peak_reset": reset,
                "spans": convert(output),
            },
            out,
        )


if __name__ == "__main__":
    main()
