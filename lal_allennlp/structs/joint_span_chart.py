"""
The joint span structure of Zhou & Zhao (2019), "Head-Driven Phrase Structure Grammar Parsing
on Penn Treebank": a span chart over the joint span labels (the constituents, `<H>` sub-head
spans, `TOP`) and the log-probability of every head for every word, decoded together into a
constituency tree and a projective dependency tree that agree (`decoding/joint_span.py`),
maximising `lambda * s(spans) + (1 - lambda) * sum_w log P(head(w) | w)`.

The decoder numbers its labels differently from the chart: decoder label 0 is empty, 1 is
`<H>`, then the other labels. `decoder_columns` maps one to the other.
"""
from typing import List, Optional, Sequence, Tuple

import numpy as np
import torch

from lal_allennlp.decoding import joint_span_decode
from lal_allennlp.structs.span_chart import (
    EMPTY,
    ChartLabels,
    SpanChart,
    best_labels,
    reduce_labels_on_device,
    relabel,
)
from lal_allennlp.syntax.joint_spans import SUB_HEAD_LABEL

MISSING = -1
"""A decoder label with no chart column (scored -inf, never chosen)."""
FIRST_PHRASE = 2
"""The first phrase label of the decoder (after empty and `<H>`)."""


def decoder_columns(labels: ChartLabels) -> List[int]:
    """
    The chart column of each decoder label: `EMPTY` for label 0, `<H>`'s column for label 1
    (`MISSING` when the vocabulary has no `<H>`), then the other labels' columns in vocabulary
    order. The decoder needs a phrase label, so the list has at least 3 entries.
    """
    sub_head = labels.column(SUB_HEAD_LABEL)
    others = [c for c in range(EMPTY + 1, len(labels)) if c != sub_head]
    order = [EMPTY, MISSING if sub_head is None else sub_head] + others
    while len(order) < 3:
        order.append(MISSING)
    return order


def decoder_label_names(labels: ChartLabels, columns: Sequence[int]) -> List[str]:
    """The label string of each decoder label (`""` for the empty and missing ones)."""
    names = ["", SUB_HEAD_LABEL]
    for column in columns[2:]:
        names.append("" if column == MISSING else labels.name(column))
    return names


class JointSpanChart:
    """
    # Parameters

    spans : `SpanChart`
        The joint span labels' scores (its losses are the span parser's).
    arc_log_probs : `torch.Tensor`
        Shape `(batch_size, max_length, max_length + 1)`: `[b, d - 1, h]` is
        `log P(head(d) = h)` for word `d` (1-based), head 0 being the root.
    columns : `Sequence[int]`
        `decoder_columns` of the chart's labels.
    span_weight : `float`
        The decoder's lambda.
    word_features : `Optional[torch.Tensor]`, optional (default = `None`)
        Shape `(batch_size, max_length + 2, dim)`: the per-position vectors the arcs were
        scored from, kept for the dependency label classifier of the chosen heads.
    """

    def __init__(
        self,
        spans: SpanChart,
        arc_log_probs: torch.Tensor,
        columns: Sequence[int],
        span_weight: float,
        word_features: Optional[torch.Tensor] = None,
    ) -> None:
        self.spans = spans
        self.word_features = word_features
        self.arc_log_probs = arc_log_probs
        self.columns = np.asarray(columns)
        self.span_weight = span_weight

    def arc_loss(self, gold_heads: torch.LongTensor, mask: torch.BoolTensor) -> torch.Tensor:
        """The mean over the batch's words of `-log P(gold head)`; `gold_heads` is
        `(batch_size, max_length)`, 0 for the root."""
        # shape (batch_size, max_length)
        nll = -self.arc_log_probs.gather(2, gold_heads.unsqueeze(2)).squeeze(2)
        return (nll * mask).sum() / mask.sum().clamp(min=1)

    def decode(
        self, reduce_labels: Optional[bool] = None
    ) -> Tuple[List[np.ndarray], List[np.ndarray]]:
        """
        # Parameters

        reduce_labels : `Optional[bool]`, optional (default = `None`)
            Whether the phrase labels are reduced to their best one on the scores' device
            before the decoder (`reduce_labels_on_device`; None: on a GPU).

        # Returns

        `(spans, heads)`: per sentence, the `(i, j, decoder_label)` rows of every node of the
        decoded binary tree, and the head of each word (`heads[b][w - 1]`, 0 = root).
        """
        # float32 throughout, the precision of the model's scores (and of the authors'
        # decoder): the decoder's O(n^3) workspace and its memory traffic are half those of
        # float64, which is most of its time on long sentences.
        reduce = reduce_labels_on_device(self.spans.scores, reduce_labels)
        span_scores, phrases = self._reduced_scores() if reduce else (self._scores(), None)
        batch_size, fences = span_scores.shape[:2]
        # shape (batch_size, max_length + 1, max_length + 1): [b, h, d], column 0 unused
        arcs = np.zeros((batch_size, fences, fences), dtype=np.float32)
        arcs[:, :, 1:] = self.arc_log_probs.detach().float().cpu().numpy().transpose(0, 2, 1)
        arcs *= np.float32(1.0) - np.float32(self.span_weight)
        lengths = self.spans.lengths.cpu().numpy()
        spans, heads, _ = joint_span_decode(span_scores, arcs, lengths)
        if phrases is not None:
            relabel(spans, phrases, which=FIRST_PHRASE, offset=FIRST_PHRASE)
        return spans, heads

    def _scores(self) -> np.ndarray:
        """Every decoder label's score times lambda, `(batch_size, max_length + 1, max_length +
        1, decoder labels)` float32 numpy."""
        chart, _ = self.spans.as_numpy()
        # `np.take`: a fancy index along the last axis is several times slower
        span_scores = np.take(chart, np.maximum(self.columns, 0), axis=-1)
        span_scores *= np.float32(self.span_weight)
        span_scores[..., self.columns == MISSING] = -np.inf
        return span_scores

    def _reduced_scores(self) -> Tuple[np.ndarray, np.ndarray]:
        """
        The decoder compares the phrase labels only with each other, through their maximum
        (`one_label`: the best non-empty label, `<H>` first among equals). So it can be given
        the empty, `<H>` and best phrase scores of each span (times lambda, as `_scores`), and
        the first phrase label that reaches the maximum, `(batch_size, max_length + 1,
        max_length + 1)` (decoder label minus `FIRST_PHRASE`), goes back into the rows of the
        decoded tree: the same trees, computed on the scores' device.
        """
        scores = self.spans.scores.detach().float()
        device = scores.device
        weight = torch.tensor(self.span_weight, dtype=torch.float32, device=device)
        columns = torch.as_tensor(np.maximum(self.columns, 0), device=device)
        span_scores = scores.index_select(-1, columns) * weight
        span_scores[..., torch.as_tensor(self.columns == MISSING, device=device)] = -np.inf
        best_phrase, phrases = best_labels(span_scores[..., FIRST_PHRASE:])
        fixed = span_scores[..., :FIRST_PHRASE].cpu().numpy()
        return np.concatenate([fixed, best_phrase], axis=-1), phrases
