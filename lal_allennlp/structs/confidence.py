"""
Probabilities read off a span chart that is a tree CRF (`tree_crf.py`): the labelled marginals
and the log-partition from one inside and one outside pass, a temperature
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

from lal_allennlp.decoding import cky_decode, inside_outside
from lal_allennlp.structs.span_chart import EMPTY, SpanChart
from lal_allennlp.structs.tree_crf import tree_log_partition


def scaled(chart: SpanChart, temperature: float) -> SpanChart:
    """The chart with every score divided by `temperature` (detached, at least float32)."""
    scores = chart.scores.detach()
    scores = scores.to(torch.promote_types(scores.dtype, torch.float32))
    return SpanChart(scores if temperature == 1.0 else scores / temperature, chart.lengths)


def marginals_and_log_partition(chart: SpanChart) -> Tuple[torch.Tensor, torch.Tensor]:
    """
    The labelled marginals `P((i, j, c) in T)` (the shape of `chart.scores`, float32 at least)
    and `log Z` per sentence `(batch_size,)`. On the CPU: the log-sums over each span's labels
    in torch, the inside and outside passes over spans in numba (`decoding/inside_outside.py`),
    and each label's share of its span by the chain rule through the log-sums. Elsewhere: one
    inside pass and its backward pass in torch (gradients on for this pass only, as prediction
    runs under `torch.no_grad()`).
    """
    scores = chart.scores.detach()
    scores = scores.to(torch.promote_types(scores.dtype, torch.float32))
    if scores.device.type != "cpu":
        with torch.enable_grad():
            scores = scores.requires_grad_()
            log_z = tree_log_partition(scores, chart.lengths)
            (marginals,) = torch.autograd.grad(log_z.sum(), scores)
        return marginals, log_z.detach()
    # shape (batch_size, max_length + 1, max_length + 1): log-sums over the constituent labels
    # (K) and over all labels (A)
    constituent = scores[..., 1:].logsumexp(dim=-1)
    any_label = torch.logaddexp(constituent, scores[..., EMPTY])
    log_z, d_any, d_constituent = inside_outside(
        any_label.numpy(), constituent.numpy(), chart.lengths.cpu().numpy()
    )
    # By the chain rule through the two log-sums, with p = softmax over all of a span's labels:
    #   P((i, j, 0)) = dA p_0,   P((i, j, c > 0)) = (dA + dK exp(A - K)) p_c
    # (exp(A - K) = 1 / (1 - p_0)). A cell of -inf scores (padding) has p = 0 and weight 0.
    finite = torch.isfinite(any_label)
    any_label = torch.where(finite, any_label, torch.zeros_like(any_label))
    gap = torch.where(finite, any_label - constituent, torch.zeros_like(any_label))
    d_any_t = torch.from_numpy(d_any)
    weight = d_any_t + torch.from_numpy(d_constituent) * gap.double().clamp(max=80.0).exp()
    marginals = torch.exp(scores - any_label.unsqueeze(-1))
    marginals[..., EMPTY] *= d_any_t.to(scores.dtype)
    marginals[..., EMPTY + 1 :] *= weight.to(scores.dtype).unsqueeze(-1)
    return marginals, torch.from_numpy(log_z)


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
