"""
Worker for ``benchmarks/decoder_side_by_side.py``: times one chart decoder on saved charts.

Runs in the virtual environment of the decoder it times (ours in the project's ``.venv``,
benepar 0.2 and SuPar in their own), so it imports nothing from the project unless it times
ours. It loads the charts that the driver saved (``scores``: float32, shape
(batch, n + 1, n + 1, labels), span (i, j) of fenceposts at ``[:, i, j]``; label 0 is the empty
label and scores 0 in every cell), converts them, untimed, to the layout the decoder takes from
its own model, calls the decoder once to warm up, then times ``--repeats`` calls (more, up to
1000, until they took ``--min-time`` seconds) and writes JSON:
the times, the peak resident memory of the timed calls (peak VmHWM after resetting it, minus
the resident memory before the calls) and the labelled non-empty spans ``[i, j, label]``
(fenceposts) of each sentence, which the driver scores on the chart. Only the decoder call is
timed, up to its own output (our span arrays, benepar's label charts, SuPar's labelled span
lists); turning that into span lists is not.

The joint span decoders (``ours-joint``, ``supar-joint``) also load the arc scores that the
driver saved (``--arcs``: float32, (batch, n + 1, n + 1), ``[:, h, d]`` the score of head h ->
word d, h = 0 the root) and decode a binary tree whose every span has a head word together with
the dependency heads, maximising ``lambda * (span scores) + (1 - lambda) * (arc scores)``
(``--span-weight`` lambda, applied untimed to the inputs as our model does). They write every
node of the tree ``[i, j, label]`` (the empty label included) and the heads of each sentence
(``heads[w - 1]``, 0 = root). ``supar-joint`` is SuPar's ``BiLexicalizedConstituencyCRF``
(exact, O(n^4), max semiring and autograd), which is on SuPar's GitHub master but in no PyPI
release (1.1.4): install master into SuPar's venv (``pip install
git+https://github.com/yzhangcs/parser@7c0f2fabe9891123a230d80480925768fa103cb2``), or put a
``supar_bilex`` overlay package on ``PYTHONPATH`` (the driver's ``--supar-bilex-path``; made by
``benchmarks/peer_configs/supar_bilex/make.sh``).

    python benchmarks/decoder_worker.py {ours,ours-joint,benepar,supar,supar-joint} CHARTS.npy \
        OUT.json [--arcs ARCS.npy] [--span-weight 0.5] [--sentences K] [--repeats 3] \
        [--min-time 1.0] [--threads 1]
"""

import argparse
import json
import os
import sys
import time
from typing import Any, Callable, Dict, List, Tuple

import numpy as np

Spans = List[List[Tuple[int, int, int]]]
Heads = List[List[int]]
# A decoder: a timed call returning the decoder's own output, and an untimed conversion of
# that output to spans (the joint decoders: to spans and heads).
Decoder = Tuple[Callable[[], Any], Callable[[Any], Any]]

# Label ids of the charts (as in lal_allennlp.decoding.joint_span, which the peers' Pythons do not
# import): the empty label and the joint span decoder's <H>.
EMPTY, SUB_HEAD = 0, 1


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


def _ours_joint(scores: np.ndarray, arcs: np.ndarray, span_weight: float, threads: int) -> Decoder:
    """Our joint span (HPSG) decoder: a constituency tree and dependency heads together
    (label 1 plays ``<H>``), on lambda-weighted inputs as ``JointSpanChart.decode`` makes them."""
    lengths = _our_setup(scores, threads)
    from lal_allennlp.decoding.joint_span import joint_span_decode

    weight = np.float32(span_weight)
    span_scores = weight * scores
    arc_scores = (np.float32(1.0) - weight) * arcs

    def decode() -> Tuple[List[np.ndarray], List[np.ndarray]]:
        return joint_span_decode(span_scores, arc_scores, lengths)[:2]

    def convert(output: Tuple[List[np.ndarray], List[np.ndarray]]) -> Tuple[Spans, Heads]:
        spans, heads = output
        return [s.tolist() for s in spans], [h.tolist() for h in heads]

    return decode, convert


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


def _import_bilexicalized_crf():
    """SuPar master's class: from the ``supar_bilex`` overlay if it is on the path, else from
    an installed SuPar master."""
    try:
        from supar_bilex import BiLexicalizedConstituencyCRF
    except ImportError:
        try:
            from supar.structs import BiLexicalizedConstituencyCRF
        except ImportError:
            sys.exit(
                "supar-joint: this SuPar has no BiLexicalizedConstituencyCRF (PyPI's 1.1.4 has "
                "none). Install SuPar master into its venv (pip install git+https://github.com/"
                "yzhangcs/parser@7c0f2fabe9891123a230d80480925768fa103cb2) or give the driver "
                "--supar-bilex-path (an overlay made by "
                "benchmarks/peer_configs/supar_bilex/make.sh)."
            )
    return BiLexicalizedConstituencyCRF


def _supar_joint(scores: np.ndarray, arcs: np.ndarray, span_weight: float, threads: int) -> Decoder:
    """SuPar's exact bilexicalized constituency decoder (``BiLexicalizedConstituencyCRF(...)
    .argmax``: Eisner-Satta, max semiring, the tree from autograd) on the objective of ours.

    Its tree scores each of its 2n - 1 spans (single words included) by one score per span,
    whatever the span's role, plus one arc per word (the root's from position 0), as ours does.
    The span score is the best label that ours allows on the span (empty, ``<H>`` except on
    single words and the whole sentence, the phrase labels), weighted by lambda: the label
    maximum is timed, as the label maximum of SuPar's CRF constituency model and our decoder's
    label tables are. Ours only takes the empty label on head children and single-word
    dependents, so the objectives are the same where every span has a non-empty label scoring
    at least as much as empty (the driver checks that on the charts).
    """
    import torch

    BiLexicalizedConstituencyCRF = _import_bilexicalized_crf()
    torch.set_num_threads(threads)
    batch, fences = scores.shape[:2]
    n = fences - 1
    chart = torch.from_numpy(scores)
    # SuPar's s_dep: (batch, n + 1, n + 1), [b, m, h] for head h -> word m; ours is [b, h, m].
    s_dep = torch.from_numpy((np.float32(1.0) - np.float32(span_weight)) * arcs).transpose(1, 2)
    s_dep = s_dep.contiguous()
    # <H> is not allowed on single words and on the whole sentence.
    no_sub_head = torch.zeros(fences, fences, dtype=torch.bool)
    no_sub_head[range(n), range(1, fences)] = True
    no_sub_head[0, n] = True
    lens = torch.full((batch,), n, dtype=torch.long)
    weight = torch.tensor(span_weight, dtype=torch.float32)

    def decode() -> Tuple[torch.Tensor, List[List[List[int]]], torch.Tensor]:
        with torch.no_grad():
            # shape (batch, n + 1, n + 1): best phrase label, then <H> and empty (ties: the
            # smallest label id, as ours)
            value, label = chart[..., SUB_HEAD + 1 :].max(-1)
            label += SUB_HEAD + 1
            sub_head = (chart[..., SUB_HEAD] >= value) & ~no_sub_head
            value = torch.where(sub_head, chart[..., SUB_HEAD], value)
            label = torch.where(sub_head, SUB_HEAD, label)
            empty = chart[..., EMPTY] >= value
            value = torch.where(empty, chart[..., EMPTY], value)
            label = torch.where(empty, EMPTY, label)
            s_con = weight * value
        heads, spans = BiLexicalizedConstituencyCRF(torch.stack((s_dep, s_con)), lens).argmax
        return heads, spans, label

    def convert(output: Tuple[torch.Tensor, List[List[List[int]]], torch.Tensor]):
        heads, spans, label = output
        labels = label.numpy()
        trees = [[(i, j, int(labels[b, i, j])) for i, j in tree] for b, tree in enumerate(spans)]
        return trees, heads[:, 1:].tolist()

    return decode, convert


DECODERS: Dict[str, Callable[[np.ndarray, int], Decoder]] = {
    "ours": _ours,
    "benepar": _benepar,
    "supar": _supar,
}
# The joint span decoders also take the arc scores and lambda.
JOINT_DECODERS: Dict[str, Callable[[np.ndarray, np.ndarray, float, int], Decoder]] = {
    "ours-joint": _ours_joint,
    "supar-joint": _supar_joint,
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("decoder", choices=sorted({**DECODERS, **JOINT_DECODERS}))
    parser.add_argument("charts", help=".npy file of float32 charts (batch, n + 1, n + 1, labels)")
    parser.add_argument("out", help="JSON file to write")
    parser.add_argument("--arcs", help="joint decoders: .npy of float32 arcs (batch, n + 1, n + 1)")
    parser.add_argument("--span-weight", type=float, default=0.5, help="joint decoders: lambda")
    parser.add_argument("--sentences", type=int, help="decode only the first ones of the batch")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument(
        "--min-time", type=float, default=1.0, help="repeat until the calls took this long (s)"
    )
    args = parser.parse_args()

    scores = np.load(args.charts)[: args.sentences]
    if args.decoder in JOINT_DECODERS:
        if args.arcs is None:
            parser.error(f"{args.decoder} needs --arcs")
        arcs = np.load(args.arcs)[: args.sentences]
        factory = JOINT_DECODERS[args.decoder]
        decode, convert = factory(scores, arcs, args.span_weight, args.threads)
    else:
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
    result = {
        "decoder": args.decoder,
        "threads": args.threads,
        "batch": int(scores.shape[0]),
        "times": times,
        "warmup": warmup,
        "rss_before_kib": before_kib,
        "peak_kib": peak_kib,
        "peak_reset": reset,
    }
    if args.decoder in JOINT_DECODERS:
        result["spans"], result["heads"] = convert(output)
    else:
        result["spans"] = convert(output)
    with open(args.out, "w") as out:
        json.dump(result, out)


if __name__ == "__main__":
    main()
