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
maximises s(T) alone, would over-predict brackets (it did: recall 4-6 points above precision,
see benchmarks/README.md). So Z sums over the right-factored binarisations only: a node's
children c_1 .. c_k become c_1 + (c_2 + (... + c_k)), and the added spans ("rest" spans,
label 0) appear only as right children. With

    C(i, j)  the trees over (i, j) whose top span (i, j) is one word or a constituent,
    R(i, j)  the same, plus the sequences of two or more sibling subtrees covering (i, j),
    S(i, j)  = logsumexp_{i < k < j} [C(i, k) + R(k, j)]   (first child, then the rest),

the inside algorithm is

    C(i, i + 1) = R(i, i + 1) = logsumexp_l s(i, i + 1, l)
    C(i, j)     = logsumexp_{l > 0} s(i, j, l) + S(i, j)
    R(i, j)     = logsumexp_l s(i, j, l) + S(i, j)       (label 0: a sequence of siblings)
    log Z       = R(0, n)                                 (the root may be unlabelled),

in O(n^3), batched over sentences and vectorised over all spans of one width. The maximum of
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
    # shape (batch_size, max_length + 1, max_length + 1): log-sum over each span's labels,
    # all of them and the constituent labels (> 0) only
    any_label = chart.logsumexp(dim=-1)
    constituent = chart[..., 1:].logsumexp(dim=-1)
    # complete[w], rest[w]: shape (batch_size, max_length + 1 - w); [:, i] = C, R of (i, i + w)
    words = any_label.diagonal(offset=1, dim1=1, dim2=2)
    complete = [words.new_empty(0), words]
    rest = [words.new_empty(0), words]
    for width in range(2, max_length + 1):
        num_spans = max_length + 1 - width
        # First child (i, i + d), the rest (i + d, i + width).
        # shape (batch_size, width - 1, num_spans)
        first = torch.stack([complete[d][:, :num_spans] for d in range(1, width)], dim=1)
        others = torch.stack(
            [rest[width - d][:, d : d + num_spans] for d in range(1, width)], dim=1
        )
        splits = (first + others).logsumexp(dim=1)
        complete.append(constituent.diagonal(offset=width, dim1=1, dim2=2) + splits)
        rest.append(any_label.diagonal(offset=width, dim1=1, dim2=2) + splits)
    return torch.stack([rest[length][b, 0] for b, length in enumerate(lengths_list)])
