"""
Probabilities read off a span chart that is a tree CRF (`tree_crf.py`): the labelled marginals
and the log-partition from one inside pass (and one backward pass, the outside), a temperature
that rescales the chart before both (`lal-analyze calibrate` fits it), the log-probability of a
given tree, the minimum Bayes risk tree of the marginals, and the sentence score every family
reports (`sentence_confidence`).

The temperature divides every score: `P_T(tree) = exp(s(tree) / T) / Z_T`. `T > 1` flattens
the distribution (less confident), `T < 1` sharpens it; the best tree is the same for every
`T`, so calibrating changes the numbers a parse reports, never the parse.
"""
from typing import List, Optional, Sequence, Tuple

import numpy as np
import torch

from lal_allennlp.decoding import cky_decode
from lal_allennlp.structs.span_chart import EMPTY, SpanChart
from lal_allennlp.structs.tree_crf import tree_log_partition


def scaled(chart: SpanChart, temperature: float) -> SpanChart:
    """The chart with every score divided by `temperature` (detached, at least float32)."""
    scores = chart.scores.detach()
    scores = scores.to(torch.promote_types(scores.dtype, torch.float32))
    return SpanChart(scores if temperature == 1.0 else scores / temperature, chart.lengths)


def marginals_and_log_partition(chart: SpanChart) -> Tuple[torch.Tensor, torch.Tensor]:
    """
    The labelled marginals `P((i, j, c) in T)` (the shape of `chart.scores`) and `log Z` per
    sentence `(batch_size,)`, from one inside pass and its backward pass; gradients are switched
    on for this pass only (prediction runs under `torch.no_grad()`).
    """
    with torch.enable_grad():
        scores = chart.scores.detach().float().requires_grad_()
        log_z = tree_log_partition(scores, chart.lengths)
        (marginals,) = torch.autograd.grad(log_z.sum(), scores)
    return marginals, log_z.detach()


def tree_scores(chart: SpanChart, trees: Sequence[Sequence[Tuple[int, int, int]]]) -> List[float]:
    """Per sentence, the chart score of the tree whose labelled spans are `trees[b]` (rows
    `(i, j, column)`, `EMPTY` rows allowed: they score 0 in a parser's chart)."""
    counts = [len(rows) for rows in trees]
    flat = [row for rows in trees for row in rows]
    if not flat:
        return [0.0] * len(trees)
    index = torch.as_tensor(flat, dtype=torch.long, device=chart.scores.device).view(-1, 3)
    batch = torch.repeat_interleave(
        torch.arange(len(trees), device=index.device), torch.as_tensor(counts, device=index.device)
    )
    values = chart.scores.detach().float()[batch, index[:, 0], index[:, 1], index[:, 2]]
    sums = values.new_zeros(len(trees)).index_add(0, batch, values)
    return sums.tolist()


def mbr_trees(marginals: torch.Tensor, lengths: torch.Tensor, gain: float) -> List[np.ndarray]:
    """
    The minimum Bayes risk trees of labelled marginals: per sentence, the tree maximising
    `sum over its labelled spans (i, j, c) of P((i, j, c) in T) - gain`, found by the CKY on
    that chart (the empty label scoring 0). With `gain = 0` this is the expected number of
    correct labelled constituents (Goodman's labelled recall): every extra labelled span only
    adds, so the trees come out binary. With `gain = 0.5` a labelled span is kept only when it
    is more likely right than wrong, the expected correct minus the expected wrong constituents,
    which balances precision with recall as F1 does.

    # Returns

    Per sentence, int64 rows `(i, j, column)` of the decoded tree's labelled spans, in
    pre-order (as `SpanChart.decode` gives them, `EMPTY` rows left out).
    """
    chart = marginals.detach().float().clone()
    chart[..., EMPTY + 1 :] -= gain
    chart[..., EMPTY] = 0.0
    spans, _ = cky_decode(chart.cpu().numpy(), lengths.cpu().numpy())
    return [rows[rows[:, 2] != EMPTY] for rows in spans]


def sentence_confidence(
    confidences: Optional[Sequence[float]], log_probability: Optional[float]
) -> Optional[float]:
    """The mean of a parse's confidences (the expected fraction of its decisions that are
    right), or its probability when it has none; `None` when not asked."""
    if log_probability is None:
        return None
    if confidences:
        return float(sum(confidences) / len(confidences))
    return float(np.exp(log_probability))
