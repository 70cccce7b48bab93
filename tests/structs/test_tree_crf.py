"""
The tree CRF's log-partition against explicit enumeration: every labelled binary tree, kept
when it is the right-factored binarisation of its n-ary tree (no unlabelled multi-word span as
a left child), so that each labelled n-ary tree is counted exactly once.
"""
import itertools
import math

import pytest
import torch

from lal_allennlp.structs import tree_log_partition
from tests.oracles.tree_enumeration import (
    binary_trees,
    brute_force_log_partition,
    labelled_trees,
    n_ary_tree,
)


@pytest.mark.parametrize("length", [1, 2, 3, 4])
def test_log_partition_equals_enumeration(length):
    torch.manual_seed(length)
    chart = torch.randn(1, length + 1, length + 1, 3, dtype=torch.float64)
    log_z = tree_log_partition(chart, torch.tensor([length]))
    assert log_z.item() == pytest.approx(brute_force_log_partition(chart[0], length), rel=1e-10)


@pytest.mark.parametrize("length", [1, 2, 3, 4, 5])
def test_each_labelled_tree_is_counted_once(length):
    # All scores 0: Z is the number of distinct labelled n-ary trees (from all binary trees
    # and labellings, duplicates removed), and the kept binarisations are exactly one each.
    num_labels = 2
    distinct = {
        n_ary_tree(list(zip(spans, labels)))
        for spans, _ in binary_trees(0, length)
        for labels in itertools.product(range(num_labels), repeat=len(spans))
    }
    kept = [n_ary_tree(tree) for tree in labelled_trees(length, num_labels)]
    assert len(kept) == len(set(kept)) == len(distinct)
    chart = torch.zeros(1, length + 1, length + 1, num_labels, dtype=torch.float64)
    log_z = tree_log_partition(chart, torch.tensor([length]))
    assert math.exp(log_z.item()) == pytest.approx(len(distinct))


def test_number_of_unlabelled_trees():
    # One label per word (0) and one constituent label: Z counts the n-ary bracketings with
    # every node over two or more children, the little Schroeder numbers (root included).
    schroeder = [1, 1, 3, 11, 45, 197, 903]
    chart = torch.full((1, 8, 8, 2), -math.inf, dtype=torch.float64)
    chart[..., 1] = 0.0
    for n in range(2, 8):
        chart[0, :, :, 0] = 0.0
        chart[0, range(n), range(1, n + 1), 1] = -math.inf  # words: label 0 only
        chart[0, 0, n, 0] = -math.inf  # the root is a constituent
        log_z = tree_log_partition(chart[:, : n + 1, : n + 1], torch.tensor([n]))
        assert math.exp(log_z.item()) == pytest.approx(schroeder[n - 1])


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
    for tree in labelled_trees(n, 2):
        weight = math.exp(sum(chart[0, i, j, l].item() for (i, j), l in tree))
        total += weight
        for (i, j), l in tree:
            marginals[i, j, l] += weight
    assert torch.allclose(chart.grad[0], marginals / total, atol=1e-10)
    assert chart.grad.sum().item() == pytest.approx(2 * n - 1)


def test_rejects_lengths_outside_the_chart():
    with pytest.raises(ValueError, match="between 1 and the chart's 3 words"):
        tree_log_partition(torch.zeros(2, 4, 4, 2), torch.tensor([3, 4]))
