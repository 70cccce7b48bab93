"""Readable pure-Python reference for the joint-span decoder (one sentence, O(n^5)).

This is the exact dynamic programme of Zhou & Zhao (2019), "Head-Driven Phrase Structure Grammar
Parsing on Penn Treebank" (ACL), sec. 3.3 (decoder), used unchanged by Mrini et al. (2020),
"Rethinking Self-Attention: Towards Interpretability in Neural Parsing" (LAL-Parser). The precise
semantics (inputs, label rules, roles, arithmetic order, tie-breaking) are written out in
:mod:`lal_allennlp.decoding.joint_span`; in short:

* ``one[i, j, h]``: best subtree over span (i, j) with head word h whose own span carries a
  non-empty label (a dependent, or the whole sentence); ``multi[i, j, h]``: the same when the span
  may also be empty (a head child). A dependent that is a single word uses ``multi``.
* For a span longer than one word, over every split k, dependent head d and head h on the other
  side::

      head right (i < d <= k < h <= j):  X[i, k, d] + arc[h, d] + multi[k, j, h]
      head left  (i < h <= k < d <= j):  X[k, j, d] + arc[h, d] + multi[i, k, h]

  where X is ``one`` unless the dependent side is a single word (then ``multi``); the span's own
  label score is then added (``one``: best non-empty label; ``multi``: best of that and empty).
* ``<H>`` (label 1) is never allowed on a single word or on the whole sentence.
* Root: the best ``one[0, n, h] + arc[0, h]``.

It is written for clarity and checks the compiled decoder of
:mod:`lal_allennlp.decoding.joint_span` and the compiled O(n^5) recurrence of
:mod:`tests.oracles.joint_span_n5`, which must return bit-identical results: all arithmetic is
done in the working dtype (float32 if both inputs are float32, else float64) with the additions in
the order shown below, and ties go to the smallest root head, then the smallest split k, then the
smallest dependent head d; among labels, the smallest label id.
"""

from typing import List, Tuple

import numpy as np

from lal_allennlp.decoding.joint_span import EMPTY, SUB_HEAD


def _working_dtype(*arrays: np.ndarray) -> np.dtype:
    """float32 if every array is float32, float64 otherwise."""
    if all(np.asarray(a).dtype == np.float32 for a in arrays):
        return np.dtype(np.float32)
    return np.dtype(np.float64)


def _best_label(row: np.ndarray, first: int) -> Tuple[int, np.floating]:
    """Smallest label id in [first, L) with the highest score, and that score."""
    label = first + int(np.argmax(row[first:]))  # np.argmax returns the first maximiser
    return label, row[label]


def joint_span_decode_reference(
    span_scores_2d: np.ndarray, arc_scores_2d: np.ndarray
) -> Tuple[np.ndarray, np.ndarray, float]:
    """Decode the best joint-span tree of one sentence of n words.

    Parameters
    ----------
    span_scores_2d : ``np.ndarray``, shape (n + 1, n + 1, L), L >= 3
        ``[i, j, l]`` is the score of fencepost span (i, j) with label l (0 = empty, 1 = ``<H>``);
        only cells with i < j are read.
    arc_scores_2d : ``np.ndarray``, shape (n + 1, n + 1)
        ``[h, d]`` is the score of head h -> dependent word d (words 1..n, h = 0 is the root);
        column 0 and the diagonal are never read.

    Returns
    -------
    spans : ``np.ndarray``, int64, shape (2n - 1, 3)
        Rows (i, j, label) in pre-order (parent, left subtree, right subtree).
    heads : ``np.ndarray``, int64, shape (n,)
        ``heads[w - 1]`` is the head of word w (1-based; 0 = root).
    score : ``float``
        Sum of the chosen span-label scores and arc scores (computed in the working dtype).
    """
    span_scores_2d = np.asarray(span_scores_2d)
    arc_scores_2d = np.asarray(arc_scores_2d)
    dtype = _working_dtype(span_scores_2d, arc_scores_2d)
    s = span_scores_2d.astype(dtype)  # (n + 1, n + 1, L)
    arc = arc_scores_2d.astype(dtype)  # (n + 1, n + 1), [head, dependent]
    if s.ndim != 3 or s.shape[0] < 2 or s.shape[1] != s.shape[0] or s.shape[2] < 3:
        raise ValueError(
            f"span_scores_2d must be (n + 1, n + 1, L) with n >= 1, L >= 3; got {s.shape}"
        )
    n = s.shape[0] - 1
    if arc.shape != (n + 1, n + 1):
        raise ValueError(f"arc_scores_2d must be ({n + 1}, {n + 1}), got {arc.shape}")

    # Span-label tables: label_one = best non-empty label allowed for (i, j) (no <H> on single words
    # or on the whole sentence), label_multi = best of that and the empty label (empty wins ties).
    label_one = {}  # (i, j) -> (label, score)
    label_multi = {}
    for i in range(n):
        for j in range(i + 1, n + 1):
            first = SUB_HEAD + 1 if j - i == 1 or j - i == n else SUB_HEAD
            label, value = _best_label(s[i, j], first)
            label_one[i, j] = (label, value)
            label_multi[i, j] = (
                (EMPTY, s[i, j, EMPTY]) if s[i, j, EMPTY] >= value else (label, value)
            )

    # Charts keyed by (i, j, h); back[i, j, h] = (k, d) of the best split.
    one = {}
    multi = {}
    dep = {}  # X: the value of (i, j, h) as a dependent (one, or multi for single words)
    back = {}
    for w in range(1, n + 1):  # single words: head is the word itself
        one[w - 1, w, w] = label_one[w - 1, w][1]
        multi[w - 1, w, w] = label_multi[w - 1, w][1]
        dep[w - 1, w, w] = multi[w - 1, w, w]
    for length in range(2, n + 1):
        for i in range(n - length + 1):
            j = i + length
            for h in range(i + 1, j + 1):
                best, best_back = None, None
                for k in range(i + 1, j):  # smallest k first ...
                    if h > k:  # head on the right, dependent head d in the left part
                        candidates = [
                            (dep[i, k, d] + arc[h, d]) + multi[k, j, h] for d in range(i + 1, k + 1)
                        ]
                        first_d = i + 1
                    else:  # head on the left, dependent head d in the right part
                        candidates = [
                            (dep[k, j, d] + arc[h, d]) + multi[i, k, h] for d in range(k + 1, j + 1)
                        ]
                        first_d = k + 1
                    for offset, value in enumerate(candidates):  # ... then the smallest d
                        if best is None or value > best:  # strict: the first maximiser is kept
                            best, best_back = value, (k, first_d + offset)
                one[i, j, h] = best + label_one[i, j][1]
                multi[i, j, h] = best + label_multi[i, j][1]
                dep[i, j, h] = one[i, j, h]
                back[i, j, h] = best_back

    root, score = None, None
    for h in range(1, n + 1):  # the whole sentence is a `one` span
        value = one[0, n, h] + arc[0, h]
        if score is None or value > score:
            root, score = h, value

    # Trace back in pre-order. Roles: "root", "head" (head child: multi), "dep" (dependent: one).
    spans: List[Tuple[int, int, int]] = []
    heads = np.zeros(n, dtype=np.int64)
    heads[root - 1] = 0
    stack = [(0, n, root, "root")]
    while stack:
        i, j, h, role = stack.pop()
        if role == "root" or (role == "dep" and j - i > 1):
            label = label_one[i, j][0]
        else:  # head children, and single-word dependents
            label = label_multi[i, j][0]
        spans.append((i, j, label))
        if j - i == 1:
            continue
        k, d = back[i, j, h]
        heads[d - 1] = h
        if h > k:
            left, right = (i, k, d, "dep"), (k, j, h, "head")
        else:
            left, right = (i, k, h, "head"), (k, j, d, "dep")
        stack.append(right)
        stack.append(left)
    return np.array(spans, dtype=np.int64).reshape(2 * n - 1, 3), heads, float(score)
