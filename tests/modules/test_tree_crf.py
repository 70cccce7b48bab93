"""The tree CRF's log-partition against explicit enumeration of labelled binary trees."""
import itertools
import math

import pytest
import torch

from lal_allennlp.modules import tree_log_partition


def binary_trees(i, j):
    """Every binary bracketing of fenceposts i..j, as a list of spans (all 2n - 1 of them)."""
    if j - i == 1:
        return [[(i, j)]]
    trees = []
    for k in range(i + 1, j):
        for left in binary_trees(i, k):
            for right in binary_trees(k, j):
                trees.append([(i, j)] + left + right)
    return trees


def brute_force_log_partition(chart, length):
    """log sum over every bracketing and every labelling of exp(sum of span-label scores)."""
    num_labels = chart.size(-1)
    total = 0.0
    for spans in binary_trees(0, length):
        for labels in itertools.product(range(num_labels), repeat=len(spans)):
            total += math.exp(sum(chart[i, j, l].item() for (i, j), l in zip(spans, labels)))
    return math.log(total)


@pytest.mark.parametrize("length", [1, 2, 3, 4])
def test_log_partition_equals_enumeration(length):
    torch.manual_seed(length)
    chart = torch.randn(1, length + 1, length + 1, 3, dtype=torch.float64)
    log_z = tree_log_partition(chart, torch.tensor([length]))
    assert log_z.item() == pytest.approx(brute_force_log_partition(chart[0], length), rel=1e-10)


def test_number_of_trees_with_zero_scores():
    # All scores 0, one label: Z counts the bracketings, the Catalan number C(n - 1).
    catalan = [1, 1, 2, 5, 14, 42, 132, 429]
    chart = torch.zeros(1, 9, 9, 1, dtype=torch.float64)
    for n in range(1, 9):
        log_z = tree_log_partition(chart[:, : n + 1, : n + 1], torch.tensor([n]))
        assert math.exp(log_z.item()) == pytest.approx(catalan[n - 1])


def test_padding_invariance():
    torch.manual_seed(0)
    lengths = [5, 2, 7]
    charts = [torch.randn(1, n + 1, n + 1, 4, dtype=torch.float64) for n in lengths]
    padded = torch.randn(len(lengths), 8, 8, 4, dtype=torch.float64) * 50
    for b, chart in enumerate(charts):
        padded[b, : chart.size(1), : chart.size(2)] = chart[0]
    batched = tree_log_partition(padded, torch.tensor(lengths))
    for b, (chart, n) in enumerate(zip(charts, lengths)):
        assert batched[b].item() == pytest.approx(
            tree_log_partition(chart, torch.tensor([n])).item(), rel=1e-12
        )


def test_gradient_is_the_span_label_marginals():
    # d log Z / d s(i, j, l) = P(span (i, j) is in the tree with label l); checked against the
    # marginals from enumeration, and the marginals of each tree's spans sum to 2n - 1.
    torch.manual_seed(3)
    n = 4
    chart = torch.randn(1, n + 1, n + 1, 2, dtype=torch.float64, requires_grad=True)
    tree_log_partition(chart, torch.tensor([n])).sum().backward()
    marginals = torch.zeros(n + 1, n + 1, 2, dtype=torch.float64)
    total = 0.0
    for spans in binary_trees(0, n):
        for labels in itertools.product(range(2), repeat=len(spans)):
            weight = math.exp(sum(chart[0, i, j, l].item() for (i, j), l in zip(spans, labels)))
            total += weight
            for (i, j), l in zip(spans, labels):
                marginals[i, j, l] += weight
    assert torch.allclose(chart.grad[0], marginals / total, atol=1e-10)
    assert chart.grad.sum().item() == pytest.approx(2 * n - 1)


def test_rejects_lengths_outside_the_chart():
    with pytest.raises(ValueError, match="between 1 and the chart's 3 words"):
        tree_log_partition(torch.zeros(2, 4, 4, 2), torch.tensor([3, 4]))
