"""Readable pure-Python reference for the span-based CKY chart decoder.

This is the decoder of Stern, Andreas & Klein (2017), "A Minimal Span-Based Neural Constituency
Parser" (ACL), as used by Kitaev & Klein (2018), "Constituency Parsing with a Self-Attentive
Encoder" (ACL), sec. 2: a tree is a set of 2n - 1 labelled spans (i, j) over fenceposts 0..n, the
score of a tree is the sum of its span-label scores, label 0 is the "empty" label and is scored like
any other one, and because every span picks its label independently the best tree is found by

    best[i, j] = max_l s[i, j, l] + (0 if j - i == 1 else max_{i < k < j} best[i, k] + best[k, j]).

With gold labels the decoder is cost-augmented with the Hamming loss used for margin training:
every span-label pair whose label differs from ``gold[i, j]`` gets +1.

It decodes one sentence at a time, with no numba, and exists to check the fast decoder in
:mod:`lal_allennlp.decoding.cky` (which must return bit-identical results). Ties are broken the
same way in both: the smallest label id among the maxima, then the smallest split point k.
"""

from typing import List, Optional, Tuple

import numpy as np


def _span_scores(scores: np.ndarray, gold: Optional[np.ndarray], i: int, j: int) -> np.ndarray:
    """The (possibly cost-augmented) float64 label scores of span (i, j), shape (num_labels,)."""
    span_scores = scores[i, j]  # (num_labels,)
    if gold is None:
        return span_scores
    cost = np.ones(span_scores.shape[0])  # Hamming cost: +1 for every label but the gold one
    gold_label = int(gold[i, j])
    if 0 <= gold_label < span_scores.shape[0]:
        cost[gold_label] = 0.0
    return span_scores + cost


def cky_decode_reference(
    label_scores_2d: np.ndarray, gold_labels_2d: Optional[np.ndarray] = None
) -> Tuple[np.ndarray, float]:
    """Decode the best binary tree of one sentence.

    Parameters
    ----------
    label_scores_2d : ``np.ndarray``, shape (n + 1, n + 1, num_labels)
        ``[i, j, l]`` is the score of span (i, j) with label l; only cells with i < j are read.
    gold_labels_2d : ``np.ndarray``, optional, int, shape (n + 1, n + 1)
        Gold label ids (0 where (i, j) is not a gold constituent). If given, every span-label pair
        with ``l != gold[i, j]`` scores +1 (cost-augmented decoding).

    Returns
    -------
    spans : ``np.ndarray``, int64, shape (2n - 1, 3)
        Rows (i, j, label) in pre-order (sorted by (i, -j)).
    score : ``float``
        The (cost-augmented) score of the best tree.
    """
    scores = np.asarray(label_scores_2d, dtype=np.float64)  # (n + 1, n + 1, num_labels)
    gold = None if gold_labels_2d is None else np.asarray(gold_labels_2d)
    n = scores.shape[0] - 1
    if scores.ndim != 3 or n < 1 or scores.shape[1] != n + 1 or scores.shape[2] < 1:
        raise ValueError(
            f"label_scores_2d must be (n + 1, n + 1, L) with n >= 1, got {scores.shape}"
        )

    best = np.zeros((n + 1, n + 1))  # best[i, j]: score of the best subtree over span (i, j)
    best_split = np.zeros((n + 1, n + 1), dtype=np.int64)
    for length in range(1, n + 1):
        for i in range(0, n - length + 1):
            j = i + length
            label_best = float(np.max(_span_scores(scores, gold, i, j)))
            if length == 1:
                best[i, j] = label_best
                continue
            split_best, k_best = 0.0, -1
            for k in range(i + 1, j):
                value = best[i, k] + best[k, j]
                if k_best < 0 or value > split_best:  # strict: keeps the smallest k among ties
                    split_best, k_best = value, k
            best[i, j] = label_best + split_best
            best_split[i, j] = k_best

    spans: List[Tuple[int, int, int]] = []
    stack = [(0, n)]
    while stack:  # pre-order: parent, then left subtree, then right subtree
        i, j = stack.pop()
        label = int(np.argmax(_span_scores(scores, gold, i, j)))  # first (smallest) maximiser
        spans.append((i, j, label))
        if j - i > 1:
            k = int(best_split[i, j])
            stack.append((k, j))
            stack.append((i, k))
    return np.array(spans, dtype=np.int64).reshape(2 * n - 1, 3), float(best[0, n])
