"""
The log-partition function of a conditional random field over labelled constituency trees,
for training a span parser by likelihood instead of the margin (the objective of Zhang, Zhou
& Li 2020, "Fast and Accurate Neural CRF Constituency Parsing", here over the labelled chart
that the CKY decoder maximises).

A tree of n words is a set of labelled spans: every word is a span (label 0 = "no
constituent" allowed), every constituent over two or more words carries a label > 0 and has
two or more children. Its score is the sum of its span-label scores (label 0 scores 0 in the
parser's chart, so only constituents count) and `P(T) = exp(s(T)) / Z`.

Each tree must be counted once in Z. Summing over all labelled *binary* trees, with the
spans that a binarisation adds taking label 0, would count an n-ary tree once per
binarisation (a node with k children has Catalan(k - 1) of them): the model would then learn
P(T) proportional to (number of binarisations of T) x exp(s(T)), and the CKY decoder, which
maximises s(T) alone, would over-predict brackets. So Z sums over the right-factored
binarisations only: a node's children c_1 .. c_k become c_1 + (c_2 + (... + c_k)), and the
added spans ("rest" spans, label 0) appear only as right children. With

    C(i, j)  the trees over (i, j) whose top span (i, j) is one word or a constituent,
    R(i, j)  the same, plus the sequences of two or more sibling subtrees covering (i, j),
    S(i, j)  = logsumexp_{i < k < j} [C(i, k) + R(k, j)]   (first child, then the rest),

the inside algorithm is

    C(i, i + 1) = R(i, i + 1) = logsumexp_l s(i, i + 1, l)
    C(i, j)     = logsumexp_{l > 0} s(i, j, l) + S(i, j)
    R(i, j)     = logsumexp_l s(i, j, l) + S(i, j)       (label 0: a sequence of siblings)
    log Z       = R(0, n)                                 (the root may be unlabelled),

in O(n^3), batched over sentences and vectorised over all spans of one width (one strided
view of each table per width, as SuPar's inside algorithm does). The maximum of
s(T) over these trees is the maximum over all labelled binary trees, so the CKY decoder
(`cky.py`) is unchanged; the gradient of log Z with respect to the scores is the span-label
marginals (autograd does the outside pass). The loss `log Z - s(T*)` is the negative
log-likelihood of the gold tree.
"""
import torch


def tree_log_partition(chart: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
    """
    # Parameters

    chart : `torch.Tensor`
        Shape `(batch_size, max_length + 1, max_length + 1, num_labels)`: `chart[b, i, j, l]`
        is the score of span `(i, j)` (fenceposts, `i < j`) with label `l`, label 0 being "no
        constituent". Cells outside a sentence's length are never read for that sentence.
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
    batch_size, num_posts = chart.size(0), max_length + 1
    # Charts of shape (max_length + 1, max_length + 1, batch_size), sentences last: the split
    # points of all spans of one width are then one strided view (below). Log-sum over each
    # span's labels, all of them and the constituent labels (> 0) only:
    any_label = chart.logsumexp(dim=-1).permute(1, 2, 0).contiguous()
    constituent = chart[..., 1:].logsumexp(dim=-1).permute(1, 2, 0).contiguous()
    # complete[i, j] = C(i, j), rest[i, j] = R(i, j), filled one width (diagonal) at a time
    complete = any_label.new_full(any_label.shape, float("-inf"))
    rest = any_label.new_full(any_label.shape, float("-inf"))
    for table in (complete, rest):
        table.diagonal(offset=1).copy_(any_label.diagonal(offset=1))
    # Element strides of the (i, j, b) tables: next start i (down the diagonal), next end j,
    # next row.
    along_diagonal = (num_posts + 1) * batch_size
    next_end, next_row = batch_size, num_posts * batch_size
    for width in range(2, num_posts):
        num_spans = num_posts - width
        # shape (num_spans, width - 1, batch_size): for span (i, i + width) and split
        # k = i + d (d = 1 .. width - 1), the first child C(i, i + d) (row i, ends i + 1 ..)
        # and the rest R(i + d, i + width) (column i + width, rows i + 1 ..).
        first = complete.as_strided(
            (num_spans, width - 1, batch_size), (along_diagonal, next_end, 1), next_end
        )
        others = rest.as_strided(
            (num_spans, width - 1, batch_size),
            (along_diagonal, next_row, 1),
            next_row + width * next_end,
        )
        # shape (batch_size, num_spans)
        splits = (first + others).logsumexp(dim=1).t()
        complete.diagonal(offset=width).copy_(constituent.diagonal(offset=width) + splits)
        rest.diagonal(offset=width).copy_(any_label.diagonal(offset=width) + splits)
    return rest[0, lengths.to(chart.device), torch.arange(batch_size, device=chart.device)]
