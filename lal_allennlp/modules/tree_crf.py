"""
The log-partition function of a conditional random field over labelled binary trees, for
training a span parser by likelihood instead of the margin (the objective of Zhang, Zhou & Li
2020, "Fast and Accurate Neural CRF Constituency Parsing", here over the labelled chart that the
CKY decoder maximises).

A tree of n words is a binary bracketing (all 2n - 1 spans, as in `cky.py`) whose every span
carries one label, label 0 being "no constituent"; its score is the sum of its span-label
scores, and `P(T) = exp(s(T)) / Z`. Because a span's labels are independent given the
bracketing, the sum over labellings factors per span, and the inside algorithm gives

    I(i, i + 1) = logsumexp_l s(i, i + 1, l)
    I(i, j)     = logsumexp_l s(i, j, l) + logsumexp_{i < k < j} [I(i, k) + I(k, j)]
    log Z       = I(0, n),

in O(n^3), batched over sentences and vectorised over all spans of one width. Its gradient
with respect to the scores is the span-label marginals (autograd does the outside pass).

A gold n-ary tree is scored as one of its binarisations (its extra spans take label 0, score
0 in the parser's chart), so `log Z - s(T*)` is the negative log-likelihood of that labelled
binary tree, the same quantity SuPar minimises for its fixed binarisation.
"""
import torch


def tree_log_partition(chart: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
    """
    # Parameters

    chart : `torch.Tensor`
        Shape `(batch_size, max_length + 1, max_length + 1, num_labels)`: `chart[b, i, j, l]`
        is the score of span `(i, j)` (fenceposts, `i < j`) with label `l`. Cells outside a
        sentence's length are never read for that sentence.
    lengths : `torch.Tensor`
        Shape `(batch_size,)`, the number of words of each sentence (at least 1).

    # Returns

    `torch.Tensor` of shape `(batch_size,)`: `log Z` per sentence, differentiable.
    """
    max_length = chart.size(1) - 1
    lengths_list = lengths.tolist()
    if min(lengths_list) < 1 or max(lengths_list) > max_length:
        raise ValueError(
            f"Sentence lengths must be between 1 and the chart's {max_length} words, "
            f"got {lengths_list}."
        )
    # shape (batch_size, max_length + 1, max_length + 1): log-sum over each span's labels
    span = chart.logsumexp(dim=-1)
    # inside[w]: shape (batch_size, max_length + 1 - w), inside[w][:, i] = I(i, i + w)
    inside = [span.new_empty(0), span.diagonal(offset=1, dim1=1, dim2=2)]
    for width in range(2, max_length + 1):
        num_spans = max_length + 1 - width
        # Split (i, i + width) at k = i + d: left (i, i + d), right (i + d, i + width).
        # shape (batch_size, width - 1, num_spans)
        left = torch.stack([inside[d][:, :num_spans] for d in range(1, width)], dim=1)
        right = torch.stack(
            [inside[width - d][:, d : d + num_spans] for d in range(1, width)], dim=1
        )
        inside.append(
            span.diagonal(offset=width, dim1=1, dim2=2) + (left + right).logsumexp(dim=1)
        )
    return torch.stack([inside[length][b, 0] for b, length in enumerate(lengths_list)])
