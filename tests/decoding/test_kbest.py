"""The exact k-best trees (`decoding/kbest.py`) against enumeration of every tree: the k best
scores and trees in order, each tree once, the first the CKY's best, ties in the stated order,
and a batch equal to its sentences alone."""
import numpy as np
import pytest

from lal_allennlp.decoding import cky_decode, kbest_batch, kbest_trees
from tests.oracles.tree_enumeration import labelled_trees


def _all_trees(scores, length, num_labels):
    """Every tree as (score, frozenset of its labelled spans (i, j, label > 0)), best first."""
    trees = []
    for tree in labelled_trees(length, num_labels):
        score = sum(float(scores[i, j, label]) for (i, j), label in tree)
        trees.append((score, frozenset((i, j, label) for (i, j), label in tree if label > 0)))
    return sorted(trees, key=lambda t: -t[0])


@pytest.mark.parametrize("length", [1, 2, 3, 4, 5])
@pytest.mark.parametrize("num_labels", [2, 3])
def test_the_k_best_are_those_of_enumeration(length, num_labels):
    rng = np.random.default_rng(10 * length + num_labels)
    scores = rng.normal(size=(length + 1, length + 1, num_labels)).astype(np.float32)
    scores[..., 0] = 0.0  # the parser's chart: the empty label scores 0
    everything = _all_trees(scores, length, num_labels)
    score_of = {tree: score for score, tree in everything}
    assert len(score_of) == len(everything)  # the oracle lists each tree once
    for k in (1, 3, 10, 200, len(everything) + 5):
        found = kbest_trees(scores, length, k)
        expected = everything[:k]
        assert len(found) == len(expected)
        assert [s for s, _ in found] == pytest.approx([s for s, _ in expected], abs=1e-5)
        trees = [frozenset(spans) for _, spans in found]
        assert len(set(trees)) == len(found)  # each tree once
        # each tree with its own score; in the enumeration's order where no two scores tie
        assert [score_of[t] for t in trees] == pytest.approx([s for s, _ in found], abs=1e-5)
        if k <= 10:
            assert trees == [t for _, t in expected]
    best_spans, best_scores = cky_decode(scores[None], np.array([length]))
    assert found[0][0] == pytest.approx(best_scores[0], abs=1e-5)
    assert found[0][1] == [tuple(r) for r in best_spans[0].tolist() if r[2] != 0]


def test_spans_are_in_pre_order():
    rng = np.random.default_rng(0)
    scores = rng.normal(size=(6, 6, 3))
    for _, spans in kbest_trees(scores, 5, 20):
        assert spans == sorted(spans, key=lambda s: (s[0], -s[1]))


def test_ties_come_in_the_stated_order():
    # Two words, every score 0: eight trees of score 0 (two root labels, two labels per word).
    # Ranks compare as tuples, the root's label rank first: the words' labels change first.
    scores = np.zeros((3, 3, 2))
    trees = kbest_trees(scores, 2, 10)
    assert [s for s, _ in trees] == [0.0] * 8
    assert trees[0][1] == []  # labels 0 everywhere: the flat tree
    assert trees[1][1] == [(1, 2, 1)]  # the second word's next label
    assert trees[2][1] == [(0, 1, 1)]  # then the first word's
    assert trees[3][1] == [(0, 1, 1), (1, 2, 1)]
    assert trees[4][1] == [(0, 2, 1)]  # then the root's


def test_a_batch_is_its_sentences_alone():
    rng = np.random.default_rng(1)
    scores = rng.normal(size=(3, 6, 6, 3))
    lengths = [5, 2, 4]
    batch = kbest_batch(scores, lengths, 7)
    for b, n in enumerate(lengths):
        # padding cells hold other numbers: they are never read
        alone = kbest_trees(scores[b, : n + 1, : n + 1].copy(), n, 7)
        assert batch[b] == alone


def test_bad_arguments():
    with pytest.raises(ValueError, match="k must be at least 1"):
        kbest_trees(np.zeros((2, 2, 2)), 1, 0)
