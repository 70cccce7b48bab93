"""
Brute-force enumeration of binary and labelled trees over a few words, the oracle of the tree
CRF and of `SpanChart` (log-partition, marginals, argmax, hinge loss).
"""
import itertools
import math


def binary_trees(i, j):
    """Every binary bracketing of fenceposts i..j, as (spans, the spans that are left children)."""
    if j - i == 1:
        return [([(i, j)], set())]
    trees = []
    for k in range(i + 1, j):
        for left, left_children in binary_trees(i, k):
            for right, right_left_children in binary_trees(k, j):
                children = left_children | right_left_children | {(i, k)}
                trees.append(([(i, j)] + left + right, children))
    return trees


def labelled_trees(length, num_labels):
    """
    The right-factored labelled binary trees over `length` words, as lists of
    `((i, j), label)`: multi-word spans labelled 0 are the spans a binarisation adds, and only
    the right-factored binarisation (they are never a left child) is kept.
    """
    for spans, left_children in binary_trees(0, length):
        for labels in itertools.product(range(num_labels), repeat=len(spans)):
            added = {(i, j) for (i, j), l in zip(spans, labels) if l == 0 and j - i > 1}
            if not added & left_children:
                yield list(zip(spans, labels))


def brute_force_log_partition(chart, length):
    """log sum over every labelled tree of exp(sum of its span-label scores)."""
    total = 0.0
    for tree in labelled_trees(length, chart.size(-1)):
        total += math.exp(sum(chart[i, j, l].item() for (i, j), l in tree))
    return math.log(total)


def n_ary_tree(tree):
    """The labelled n-ary tree of a labelled binary tree: its words and its constituents."""
    return frozenset(((i, j), l) for (i, j), l in tree if l > 0 or j - i == 1)
