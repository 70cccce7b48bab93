"""
A chart of labelled span scores as a distribution over labelled constituency trees: the
structure behind the span parsers of Stern, Andreas & Klein (2017) and Kitaev & Klein (2018),
trained either by their structured margin loss or as a tree CRF (Zhang, Zhou & Li 2020).

A sentence of n words has fenceposts 0..n. A tree is a set of labelled spans `(i, j, c)`,
`i < j`, and its score is the sum of their chart scores. Column `c` of the label axis is a
`ChartLabels` column: column `EMPTY` (0) is "no constituent", fixed at score 0 by the span
label scorer, and column `1 + v` is label `v` of the vocabulary's `span_labels`.

`SpanChart` owns everything computed from the chart: the gold tree's score, the log-partition
and marginals (one inside pass, `tree_crf.py`), both losses, and the decode (numba CKY). Gold
charts are torch tensors from the start; numpy appears only inside `decode`, whose kernel
reads it.
"""
from typing import List, Optional, Tuple

import numpy as np
import torch
from allennlp.data import Vocabulary

from lal_allennlp.decoding import cky_decode, kbest_batch
from lal_allennlp.structs.tree_crf import tree_log_partition

EMPTY = 0
"""The chart column of the empty label ("no constituent"); its score is 0."""


class ChartLabels:
    """
    The label axis of a span chart: column `EMPTY` is the empty label and column `1 + v` the
    label with id `v` in the vocabulary namespace. The one place where label ids and chart
    columns meet.
    """

    def __init__(self, vocab: Vocabulary, namespace: str = "span_labels") -> None:
        self.vocab = vocab
        self.namespace = namespace

    def __len__(self) -> int:
        """The number of columns: the vocabulary's labels and the empty label."""
        return self.vocab.get_vocab_size(self.namespace) + 1

    @staticmethod
    def columns(label_ids: torch.Tensor) -> torch.Tensor:
        """The chart columns of vocabulary label ids."""
        return label_ids + 1

    def column(self, label: str) -> Optional[int]:
        """The chart column of a label string, or None when the vocabulary lacks it."""
        index = self.vocab.get_token_to_index_vocabulary(self.namespace).get(label)
        return None if index is None else index + 1

    def name(self, column: int) -> str:
        """The label of a chart column (`""` for the empty label)."""
        if column == EMPTY:
            return ""
        return self.vocab.get_token_from_index(column - 1, self.namespace)


class SpanChart:
    """
    # Parameters

    scores : `torch.Tensor`
        Shape `(batch_size, max_length + 1, max_length + 1, num_columns)`: `[b, i, j, c]` is
        the score of span `(i, j)` with label column `c`. Cells with `j <= i` or
        `j > lengths[b]` are never read.
    lengths : `torch.LongTensor`
        Shape `(batch_size,)`, the number of words of each sentence (at least 1).
    """

    def __init__(self, scores: torch.Tensor, lengths: torch.LongTensor) -> None:
        self.scores = scores
        self.lengths = lengths
        self._numpy: Optional[Tuple[np.ndarray, np.ndarray]] = None

    @classmethod
    def from_sentence_spans(
        cls,
        label_scores: torch.Tensor,
        batch: torch.LongTensor,
        starts: torch.LongTensor,
        ends: torch.LongTensor,
        lengths: torch.LongTensor,
        max_length: int,
    ) -> "SpanChart":
        """
        The chart of the spans `(starts[s], ends[s])` of sentences `batch[s]`
        (`modules.sentence_spans`), `label_scores` `(num_spans, num_columns - 1)` being the
        scores of every column but `EMPTY`'s. The other cells, the empty column and the spans
        over padding among them, are 0.
        """
        # shape (batch_size, max_length + 1, max_length + 1, num_columns)
        scores = label_scores.new_zeros(
            lengths.size(0), max_length + 1, max_length + 1, label_scores.size(-1) + 1
        )
        scores[:, :, :, EMPTY + 1 :][batch, starts, ends] = label_scores
        return cls(scores, lengths)

    @staticmethod
    def gold(
        gold_spans: torch.LongTensor, gold_span_labels: torch.LongTensor, max_length: int
    ) -> torch.LongTensor:
        """
        The gold chart column of every span, `EMPTY` where there is no gold constituent.

        # Parameters

        gold_spans : `torch.LongTensor`
            Shape `(batch_size, num_gold_spans, 2)`: inclusive word indices, -1 for padding
            (the readers' `SpanField`s).
        gold_span_labels : `torch.LongTensor`
            Shape `(batch_size, num_gold_spans)`: vocabulary ids in `span_labels`.

        # Returns

        `torch.LongTensor` of shape `(batch_size, max_length + 1, max_length + 1)`.
        """
        gold = gold_spans.new_full(
            (gold_spans.size(0), max_length + 1, max_length + 1), EMPTY
        )
        batch_index, span_index = (gold_spans[:, :, 0] >= 0).nonzero(as_tuple=True)
        starts = gold_spans[batch_index, span_index, 0]
        ends = gold_spans[batch_index, span_index, 1] + 1
        labels = gold_span_labels[batch_index, span_index]
        gold[batch_index, starts, ends] = ChartLabels.columns(labels)
        return gold

    def score(self, gold: torch.LongTensor) -> torch.Tensor:
        """
        Per sentence, the score of the tree whose labelled spans are the non-`EMPTY` cells of
        `gold` (`(batch_size, max_length + 1, max_length + 1)`, from `SpanChart.gold`): the
        empty label scores 0, so only its constituents count. Shape `(batch_size,)`.
        """
        batch_index, starts, ends = gold.nonzero(as_tuple=True)
        return self._sum(batch_index, starts, ends, gold[batch_index, starts, ends])

    def _sum(
        self,
        batch_index: torch.LongTensor,
        starts: torch.LongTensor,
        ends: torch.LongTensor,
        columns: torch.LongTensor,
    ) -> torch.Tensor:
        """Per sentence, the sum of `scores[b, i, j, c]` over the given cells."""
        values = self.scores[batch_index, starts, ends, columns]
        return self.scores.new_zeros(self.scores.size(0)).index_add(0, batch_index, values)

    @property
    def log_partition(self) -> torch.Tensor:
        """
        `log Z` per sentence, `(batch_size,)`, over labelled trees each counted once (the
        inside algorithm of `tree_crf.py`, in float32 at least).
        """
        return tree_log_partition(_at_least_float32(self.scores), self.lengths)

    def marginals(self) -> torch.Tensor:
        """
        The probability of every labelled span, `P((i, j, c) in T)`, shape of `scores`: the
        gradient of `log Z` with respect to the scores (autograd is the outside pass).
        """
        scores = _at_least_float32(self.scores.detach()).requires_grad_()
        log_z = tree_log_partition(scores, self.lengths)
        (marginals,) = torch.autograd.grad(log_z.sum(), scores)
        return marginals

    def crf_loss(self, gold: torch.LongTensor) -> torch.Tensor:
        """The mean over sentences of the gold tree's negative log-likelihood,
        `log Z - s(T*)` (both in float32 at least)."""
        scores = _at_least_float32(self.scores)
        chart = self if scores is self.scores else SpanChart(scores, self.lengths)
        return (chart.log_partition - chart.score(gold)).mean()

    def hinge_loss(self, gold: torch.LongTensor) -> torch.Tensor:
        """
        The structured margin loss of Stern et al. (2017): the mean over sentences of
        `max(0, max_T [s(T) + Hamming(T, T*)] - s(T*))`, the inner max found by the
        cost-augmented CKY (every span whose label differs from the gold one costs 1).
        """
        predicted, _ = self.decode(gold)
        # shape (num_predicted_spans, 4): sentence, start, end, column
        sentence_rows = [
            np.concatenate([np.full((len(s), 1), b), s], axis=1) for b, s in enumerate(predicted)
        ]
        rows = torch.as_tensor(np.concatenate(sentence_rows), device=self.scores.device)
        batch_index, starts, ends, columns = rows.unbind(1)
        wrong = (columns != gold[batch_index, starts, ends]).to(self.scores.dtype)
        cost = self.scores.new_zeros(self.scores.size(0)).index_add(0, batch_index, wrong)
        augmented = self._sum(batch_index, starts, ends, columns) + cost
        return torch.relu(augmented - self.score(gold)).mean()

    def decode(
        self, gold: Optional[torch.LongTensor] = None, reduce_labels: Optional[bool] = None
    ) -> Tuple[List[np.ndarray], np.ndarray]:
        """
        The best binary tree of every sentence by the numba CKY (`decoding/cky.py`);
        cost-augmented when `gold` is given. Without `gold`, `reduce_labels` (None: on a GPU,
        `reduce_labels_on_device`) gives the CKY each span's best label only.

        # Returns

        `(spans, scores)`: `spans[b]`, int64 `(2 * lengths[b] - 1, 3)`, rows `(i, j, column)`
        in pre-order, `EMPTY` columns included; `scores` `(batch_size,)` float64.
        """
        if gold is not None or not reduce_labels_on_device(self.scores, reduce_labels):
            chart, lengths = self.as_numpy()
            return cky_decode(chart, lengths, None if gold is None else gold.cpu().numpy())
        # Without costs the CKY needs only each span's best score and, for the spans of the
        # best tree, the first label that reaches it.
        best, labels = best_labels(self.scores.detach().float())
        spans, scores = cky_decode(best, self.lengths.cpu().numpy())
        relabel(spans, labels)
        return spans, scores

    def argmax(self) -> List[List[Tuple[int, int, int]]]:
        """Per sentence, the labelled spans `(i, j, column)` of the best tree (no `EMPTY`)."""
        spans, _ = self.decode()
        return [[tuple(row) for row in s[s[:, 2] != EMPTY].tolist()] for s in spans]

    def kbest(self, k: int) -> List[List[Tuple[float, List[Tuple[int, int, int]]]]]:
        """Per sentence, its `k` best trees, best first (`decoding/kbest.py`, exact): each its
        score and labelled spans `(i, j, column)` in pre-order, no `EMPTY` row (as `argmax`)."""
        chart, lengths = self.as_numpy()
        return kbest_batch(chart, lengths.tolist(), k)

    def as_numpy(self) -> Tuple[np.ndarray, np.ndarray]:
        """The chart as float32 numpy (numpy has no bfloat16) and the lengths, made once."""
        if self._numpy is None:
            self._numpy = (
                self.scores.detach().float().cpu().numpy(),
                self.lengths.cpu().numpy(),
            )
        return self._numpy


def reduce_labels_on_device(scores: torch.Tensor, reduce_labels: Optional[bool]) -> bool:
    """
    Whether a decode reduces the label axis on the scores' device before the numba decoder
    reads it (`reduce_labels`, or by default: on a GPU). There, copying every label's score
    to the host and reordering it there were the largest steps of a parse after the
    transformer, and the reduction is a few GPU kernels. On the CPU the decoders' own label
    pass reads the scores where they are, several times faster than torch's `max` with
    indices.
    """
    return scores.device.type != "cpu" if reduce_labels is None else reduce_labels


def best_labels(scores: torch.Tensor) -> Tuple[np.ndarray, np.ndarray]:
    """
    Per span, the best score over the label axis, as numpy `(..., 1)` (a chart of one label),
    and the first label that reaches it (the decoders' own tie rule: the smallest label id),
    int32 numpy `(...)`. Reduced on the scores' device, so that on a GPU two numbers per span
    cross to the host instead of every label's score (`benchmarks/README.md`, GPU section).
    """
    values, labels = scores.max(dim=-1)  # torch: the first index of equal maxima
    return values.unsqueeze(-1).cpu().numpy(), labels.to(torch.int32).cpu().numpy()


def relabel(
    spans: List[np.ndarray], labels: np.ndarray, which: Optional[int] = None, offset: int = 0
) -> None:
    """Sets, in place, the label of each decoded row `(i, j, label)` of sentence `b` to
    `labels[b, i, j] + offset`; only the rows labelled `which`, when it is given."""
    for b, rows in enumerate(spans):
        chosen = slice(None) if which is None else rows[:, 2] == which
        rows[chosen, 2] = labels[b, rows[chosen, 0], rows[chosen, 1]] + offset


def _at_least_float32(scores: torch.Tensor) -> torch.Tensor:
    """float32 for half-precision scores (the inside algorithm's sums need the range)."""
    return scores.to(torch.promote_types(scores.dtype, torch.float32))
