"""Exact batched decoder for the joint span (HPSG-style) representation (numba, CPU).

Implements the decoder of Zhou & Zhao (2019), "Head-Driven Phrase Structure Grammar Parsing on Penn
Treebank" (ACL), sec. 3.3, used unchanged by Mrini et al. (2020), "Rethinking Self-Attention:
Towards Interpretability in Neural Parsing" (Findings of EMNLP, LAL-Parser): one binary tree over
the words whose every span has a head word, so that a constituency tree and a dependency tree are
decoded together. The authors' recurrence is O(n^5); this decoder computes the same maximum and
the same tree in O(n^4) (below), bit for bit. The authors' recurrence, compiled the same way, is
the oracle of the tests (:mod:`tests.oracles.joint_span_n5`).

Semantics (one sentence of n words, fenceposts 0..n, word w is span (w - 1, w))
-------------------------------------------------------------------------------
Inputs, combined exactly as given (the caller applies the lambda / 1 - lambda weights):

* ``span_scores[i, j, l]``, i < j: score of span (i, j) with label l; l = ``EMPTY`` (0) is "not a
  constituent", l = ``SUB_HEAD`` (1) is ``<H>`` (the sub-head node), 2..L-1 are phrase labels;
  L >= 3.
* ``arc_scores[h, d]``: score of the arc head h -> dependent word d, for d in 1..n and h in 0..n
  (h = 0 is the root). Column 0 and the diagonal are never read.

Label tables. ``one_label(i, j)`` is the best *non-empty* label of (i, j), where ``<H>`` is not
allowed on a single word (j - i == 1) nor on the whole sentence (j - i == n); ``multi_label(i, j)``
is the best of that and the empty label. Charts, for i < h <= j:

* ``one[i, j, h]``: best subtree over (i, j) headed by word h whose span takes ``one_label``;
* ``multi[i, j, h]``: the same whose span takes ``multi_label`` (may be empty);
* ``X[i, j, h]``: the value of (i, j, h) as a *dependent*: ``one``, except for a single word,
  where it is ``multi`` (a single-word dependent may be empty).

Single words: ``one[w-1, w, w] = one_label``, ``multi[w-1, w, w] = multi_label``. A longer span
(i, j) is split at i < k < j into two children; one child contains the head h (the *head child*,
``multi``), the head d of the other child (the *dependent child*, ``X``) attaches to h::

    raw[i, j, h] = max over k in (i, j) of
        if h > k:  max_{d in (i, k]}  (X[i, k, d] + arc[h, d]) + multi[k, j, h]    (head right)
        if h <= k: max_{d in (k, j]}  (X[k, j, d] + arc[h, d]) + multi[i, k, h]    (head left)
    one[i, j, h]   = raw[i, j, h] + score(one_label(i, j))
    multi[i, j, h] = raw[i, j, h] + score(multi_label(i, j))

Root: ``score = max_h one[0, n, h] + arc[0, h]`` (for n = 1, ``one[0, 1, 1] = one_label(0, 1)``).
The tree score is therefore the sum of the 2n - 1 chosen span-label scores and the n arc scores:
the whole sentence takes ``one_label``, every head child and every single-word dependent
``multi_label``, every longer dependent ``one_label``.

Arithmetic and ties (identical in the oracles :mod:`tests.oracles.joint_span_reference` and
:mod:`tests.oracles.joint_span_n5`):

* Everything is computed in the working dtype: float32 if both inputs are float32, else float64,
  with the additions grouped exactly as written above, so all implementations return the same
  bits. (The authors add ``X + multi`` first, then the arc; we add the arc first because the
  O(n^4) algorithm needs ``max_d (X + arc)`` as a unit. Exact values are the same; only the
  rounding of near-ties can differ from the authors' float32 code.)
* Ties: smallest root head h; then, in every span, smallest split k, then smallest dependent head
  d (this is the order of the authors' loops ``for k: for hl: for hr`` with strict ``>``); among
  labels the smallest label id, so empty beats an equal non-empty label (the authors do that for
  single words but prefer the non-empty label on longer spans; only exact ties are affected).
* For n = 1 the single span is the whole sentence and takes ``one_label`` (the authors' traceback
  prints the ``multi`` label there although their score uses ``one``).

Outputs: ``spans[b]`` int64 (2n - 1, 3) rows (i, j, label) in pre-order (parent, left subtree,
right subtree); ``heads[b]`` int64 (n,), ``heads[b][w - 1]`` = head of word w (0 = root);
``scores`` float64 (batch,), the tree scores (as computed in the working dtype).

The algorithm, O(n^4), exact
----------------------------
The O(n^5) recurrence maximises over (k, d) jointly. Since the split k fixes the dependent
child's span and the arc term only needs its head d, the max over d can be taken first, once per
(dependent span, outside head h) pair, and reused for every enclosing span::

    DL[i, k, h] = max_{d in (i, k]} X[i, k, d] + arc[h, d]    for h in (k, n]   (left dependent)
    DR[k, j, h] = max_{d in (k, j]} X[k, j, d] + arc[h, d]    for h in [1, k]   (right dependent)
    raw[i, j, h] = max_{k in (i, j)} (DL[i, k, h] + multi[k, j, h]  if h > k  else
                                      DR[k, j, h] + multi[i, k, h])

Computing DL/DR costs sum over spans of (j - i)(n - (j - i)) ~ n^4 / 12 and the split maximum
sum over spans of (j - i)(j - i - 1) ~ n^4 / 12 (the O(n^5) loop does 2 * n^5 / 120 candidate
updates). It is exact bit for bit because rounding is monotone: ``fl(fl(a) + c)`` is
non-decreasing in ``a``, so ``fl(max_d fl(X + arc) + multi) == max_d fl(fl(X + arc) + multi)``.

Layout: ``DL`` and ``multi`` of a span are stored in the free parts of two charts, ``S[i, k, h]``
(indexed by start: ``multi[i, k, h]`` for h in (i, k], ``DL[i, k, h]`` for h > k) and
``E[j, k, h]`` (indexed by end: ``DR[k, j, h]`` for h <= k, ``multi[k, j, h]`` for h in (k, j]),
so that for every h in (i, j]::

    raw[i, j, h] = max_{k in (i, j)} S[i, k, h] + E[j, k, h].

No back-pointers are kept: the traceback recomputes, for the 2n - 1 nodes of the best tree only,
the first (k, d) whose candidate equals the node's maximum (O(n) per node), which is the tie rule
above. Maxima are exact in any order, and the fastmath flags used (no-NaN, no-signed-zero) change
no result. ``-inf`` scores (masked labels or arcs) are supported; NaN and ``+inf`` are not.

Where the code is
-----------------
* :mod:`~lal_allennlp.decoding.joint_span_tables`: the label tables, the labels of the tree's
  nodes and the traceback's bookkeeping;
* :mod:`~lal_allennlp.decoding.joint_span_one`: the charts' memory layout, the O(n^4) fill with
  8-lane vector kernels (:mod:`~lal_allennlp.decoding.kernels`) and the traceback, one sentence
  at a time, in parallel over the sentences of a batch;
* :mod:`~lal_allennlp.decoding.memory`: the workspaces (O(n^3): 10 MiB at 150 words, 2.5 GiB at
  1,000 words in float32), and how many fit in the memory available;
* this module: the entry point, which checks the inputs and deals the sentences out.

``benchmarks/joint_span_speed.py`` times the decoder against the O(n^5) recurrence and the span
CKY, ``benchmarks/joint_span_phases.py`` phase by phase, and ``benchmarks/decoder_end_to_end.py``
a trained parser's whole parse with two versions of the decoder.
"""

from typing import List, Tuple

import numba
import numpy as np

from lal_allennlp.decoding import joint_span_one
from lal_allennlp.decoding.joint_span_one import workspace_bytes
from lal_allennlp.decoding.joint_span_tables import EMPTY, SUB_HEAD
from lal_allennlp.decoding.memory import workers_that_fit

__all__ = ["joint_span_decode", "workspace_bytes", "EMPTY", "SUB_HEAD"]


def joint_span_decode(
    span_scores: np.ndarray,
    arc_scores: np.ndarray,
    lengths: np.ndarray,
) -> Tuple[List[np.ndarray], List[np.ndarray], np.ndarray]:
    """Decode the best joint-span tree (labelled binary tree + dependency heads) of every sentence.

    Parameters
    ----------
    span_scores : ``np.ndarray``, float, shape (batch, max_len + 1, max_len + 1, L), L >= 3
        ``[b, i, j, l]``: score of span (i, j) with label l (0 = empty, 1 = ``<H>``). Cells with
        j <= i or j > lengths[b] are never read.
    arc_scores : ``np.ndarray``, float, shape (batch, max_len + 1, max_len + 1)
        ``[b, h, d]``: score of head h -> dependent word d (words 1..n, h = 0 is the root).
        Column 0, the diagonal and rows/columns past lengths[b] are never read.
    lengths : ``np.ndarray``, int, shape (batch,)
        Sentence lengths in words, each in [1, max_len].

    Returns
    -------
    spans : ``List[np.ndarray]``
        ``spans[b]``, int64 (2 n - 1, 3): rows (i, j, label) in pre-order.
    heads : ``List[np.ndarray]``
        ``heads[b]``, int64 (n,): ``heads[b][w - 1]`` is the head of word w, 0 for the root.
    scores : ``np.ndarray``, float64, shape (batch,)
        Tree scores: chosen span-label scores plus arc scores (see the module docstring).

    Both scores are computed in float32 if both inputs are float32, else in float64.

    Raises
    ------
    MemoryError
        When the workspace of the longest sentence (``workspace_bytes``, O(n^3)) is larger than
        the memory available.
    """
    span_scores = np.asarray(span_scores)
    arc_scores = np.asarray(arc_scores)
    if span_scores.ndim != 4 or span_scores.shape[1] != span_scores.shape[2]:
        raise ValueError(f"span_scores must be (B, N + 1, N + 1, L), got {span_scores.shape}")
    batch_size, max_fence, _, num_labels = span_scores.shape
    if num_labels < 3:
        raise ValueError(
            f"span_scores has {num_labels} labels; the joint span decoder needs at least 3 "
            "(0 = empty, 1 = <H>, then phrase labels)"
        )
    if arc_scores.shape != (batch_size, max_fence, max_fence):
        expected = (batch_size, max_fence, max_fence)
        raise ValueError(f"arc_scores has shape {arc_scores.shape}, expected {expected}")
    dtype = np.float32 if span_scores.dtype == arc_scores.dtype == np.float32 else np.float64
    span_scores = np.ascontiguousarray(span_scores, dtype=dtype)
    arc_scores = np.ascontiguousarray(arc_scores, dtype=dtype)
    lengths = np.ascontiguousarray(lengths, dtype=np.int64).reshape(-1)
    if lengths.shape[0] != batch_size:
        raise ValueError(f"lengths has shape {lengths.shape}, expected ({batch_size},)")
    if batch_size == 0:
        return [], [], np.zeros(0, dtype=np.float64)
    if lengths.min() < 1 or lengths.max() > max_fence - 1:
        raise ValueError(f"lengths must be in [1, {max_fence - 1}], got {lengths}")

    max_len = int(lengths.max())
    out_spans = np.zeros((batch_size, 2 * max_len - 1, 3), dtype=np.int64)
    out_heads = np.zeros((batch_size, max_len), dtype=np.int64)
    out_scores = np.empty(batch_size, dtype=np.float64)
    # Longest first, dealt out round-robin, so that the workers finish together.
    order = np.argsort(-lengths, kind="stable")
    num_workers = workers_that_fit(
        workspace_bytes(max_len, dtype),
        min(numba.get_num_threads(), batch_size),
        "The joint span decoder",
        f"for a sentence of {max_len} words (it grows with the cube of the length)",
    )
    joint_span_one.decode_sentences(
        span_scores,
        arc_scores,
        lengths,
        order,
        joint_span_one.workspaces(max_len, dtype, num_workers),
        out_spans,
        out_heads,
        out_scores,
    )
    sentence_lengths = lengths.tolist()
    spans = [out_spans[b, : 2 * n - 1] for b, n in enumerate(sentence_lengths)]
    heads = [out_heads[b, :n] for b, n in enumerate(sentence_lengths)]
    return spans, heads, out_scores
