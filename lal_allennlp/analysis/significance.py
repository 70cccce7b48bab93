"""
Paired significance tests between two parsers run on the same sentences, as parsing papers
report them.

Both tests work on per-sentence *count matrices*: one `(n_sentences, k)` array of non-negative
integers per system, the same sentences in the same order, such that the corpus metric is a
function of the column sums (bracket F1 of matched/gold/predicted brackets, UAS/LAS of
scored words/correct heads/correct heads and labels). :func:`bracket_counts` and
:func:`attachment_counts` build them; :func:`f1_score`, :func:`uas` and :func:`las` are the
metrics.

* :func:`paired_permutation_test`: approximate randomisation (Noreen 1989, *Computer-Intensive
  Methods for Testing Hypotheses*), the stratified shuffling over sentences of Dan Bikel's
  Randomized Parsing Evaluation Comparator (`compare.pl`, for EVALB output): each trial swaps
  the two systems' outputs of each sentence with probability 1/2 and recomputes the difference
  of the corpus metrics. Two-sided; exact (all `2 ** n` swap patterns) for small corpora.
* :func:`paired_bootstrap_test`: paired bootstrap resampling of sentences (Koehn 2004,
  *Statistical Significance Tests for Machine Translation Evaluation*; Berg-Kirkpatrick,
  Burkett & Klein 2012, *An Empirical Investigation of Statistical Significance in NLP*).
  One-sided: how often a resampled test set does not show the observed sign of the difference.

Everything is vectorised with numpy (no torch): the metric is computed on `(R, k)` arrays of
summed counts, and the sums of `R` trials are matrix products, so 10,000 trials over 2,000
sentences take a fraction of a second.
"""

from dataclasses import dataclass
from typing import Callable, List, Optional, Sequence, Union

import numpy as np
from nltk import Tree

from lal_allennlp.metrics.evalb import COLLINS, EvalbParams, evalb_sentence

Metric = Callable[[np.ndarray], Union[np.ndarray, float]]
"""A metric of summed counts: given an `(R, k)` array of sums, returns the `R` values."""

_TOLERANCE = 1e-12
"""Metric differences closer than this are equal (float noise of the metric arithmetic)."""

_CHUNK = 1000
"""Trials (or bootstrap samples) computed at once: a `(_CHUNK, n_sentences)` matrix."""

_MAX_EXACT_SUM = 2**53
"""Column sums must stay below this for the float64 matrix products to be exact."""


@dataclass(frozen=True)
class SignificanceResult:
    """
    The outcome of a paired significance test between systems A and B.

    # Parameters

    metric_a : `float`
        The corpus metric of system A (on all sentences).
    metric_b : `float`
        The corpus metric of system B.
    difference : `float`
        `metric_a - metric_b`.
    p_value : `float`
        The p-value of the test (see :func:`paired_permutation_test` and
        :func:`paired_bootstrap_test` for what it measures).
    test : `str`
        `"permutation"` or `"bootstrap"`.
    trials : `int`
        The number of swap patterns (permutation test; `2 ** n_sentences` when exact) or
        bootstrap samples the p-value comes from.
    exact : `bool`
        Whether the p-value is exact (all swap patterns enumerated) rather than estimated.
    """

    metric_a: float
    metric_b: float
    difference: float
    p_value: float
    test: str
    trials: int
    exact: bool


# ------------------------------------------------------------------------------------------------
# Count matrices
# ------------------------------------------------------------------------------------------------


def bracket_counts(
    gold_trees: Sequence[Tree],
    predicted_trees: Sequence[Optional[Tree]],
    params: EvalbParams = COLLINS,
) -> np.ndarray:
    """
    EVALB's bracket counts of each sentence, from
    :func:`lal_allennlp.metrics.evalb.evalb_sentence`: the counts that `evalb_score` sums for
    its "all" block, so that `f1_score(bracket_counts(gold, predicted).sum(0))` equals
    `evalb_score(gold, predicted).f1` exactly (and likewise precision and recall). Error and
    skipped sentences count 0 everywhere, as in EVALB; a `None` (or word-less) prediction is a
    parser failure whose gold brackets count against recall. Unlike `evalb_score`, this never
    gives up after `params.max_error` error sentences.

    # Parameters

    gold_trees : `Sequence[Tree]`
        The gold trees.
    predicted_trees : `Sequence[Optional[Tree]]`
        One prediction per gold tree, in the same order; `None` for a parser failure.
    params : `EvalbParams`, optional (default = `COLLINS`)
        The EVALB parameters (deleted labels, labelled or not, ...).

    # Returns

    `np.ndarray`
        An `(n_sentences, 3)` int64 array with columns `matched, gold, predicted`.
    """
    if len(gold_trees) != len(predicted_trees):
        raise ValueError(
            f"{len(gold_trees)} gold trees but {len(predicted_trees)} predicted trees: "
            "one prediction per gold tree is needed, in the same order (None for a failure)"
        )
    rows = []
    for gold, predicted in zip(gold_trees, predicted_trees):
        counts = evalb_sentence(gold, predicted, params)
        rows.append((counts.matched, counts.gold, counts.predicted))
    return np.array(rows, dtype=np.int64).reshape(len(rows), 3)


def attachment_counts(
    gold_heads: Sequence[Sequence[int]],
    predicted_heads: Sequence[Sequence[int]],
    gold_labels: Optional[Sequence[Sequence[str]]],
    predicted_labels: Optional[Sequence[Sequence[str]]],
    scored: Sequence[Sequence[bool]],
) -> np.ndarray:
    """
    The attachment counts of each sentence, over the words that UAS/LAS score (usually all but
    punctuation).

    # Parameters

    gold_heads : `Sequence[Sequence[int]]`
        The gold head of each word, per sentence (any convention, e.g. 0 for the root, as long
        as both sides use the same).
    predicted_heads : `Sequence[Sequence[int]]`
        The predicted heads, same sentences and words.
    gold_labels : `Optional[Sequence[Sequence[str]]]`
        The gold dependency labels, or `None` for unlabelled parses.
    predicted_labels : `Optional[Sequence[Sequence[str]]]`
        The predicted labels, or `None`. Either both label arguments are given or neither;
        when neither is, LAS is undefined and the third column is 0 (so `las` gives 0.0).
    scored : `Sequence[Sequence[bool]]`
        Per sentence, whether each word is scored (`False` for punctuation).

    # Returns

    `np.ndarray`
        An `(n_sentences, 3)` int64 array with columns
        `scored_words, correct_heads, correct_heads_and_labels`.
    """
    if (gold_labels is None) != (predicted_labels is None):
        given = "gold_labels" if gold_labels is not None else "predicted_labels"
        raise ValueError(
            f"only {given} was given: pass both gold and predicted labels (for LAS) or neither"
        )
    labelled = gold_labels is not None
    n = len(gold_heads)
    others = {"predicted_heads": predicted_heads, "scored": scored}
    if labelled:
        others.update(gold_labels=gold_labels, predicted_labels=predicted_labels)
    for name, values in others.items():
        if len(values) != n:
            raise ValueError(
                f"{n} sentences of gold_heads but {len(values)} of {name}: "
                "all arguments need the same sentences in the same order"
            )
    rows = []
    for i in range(n):
        sentence = {"gold_heads": gold_heads[i], **{name: v[i] for name, v in others.items()}}
        length = len(gold_heads[i])
        for name, values in sentence.items():
            if len(values) != length:
                raise ValueError(
                    f"sentence {i}: {length} words in gold_heads but {len(values)} in {name}"
                )
        scored_words = correct_heads = correct_labelled = 0
        for j in range(length):
            if not scored[i][j]:
                continue
            scored_words += 1
            if gold_heads[i][j] == predicted_heads[i][j]:
                correct_heads += 1
                if labelled and gold_labels[i][j] == predicted_labels[i][j]:
                    correct_labelled += 1
        rows.append((scored_words, correct_heads, correct_labelled))
    return np.array(rows, dtype=np.int64).reshape(n, 3)


# ------------------------------------------------------------------------------------------------
# Metrics of summed counts
# ------------------------------------------------------------------------------------------------


def _columns(counts_sum: np.ndarray, names: str) -> np.ndarray:
    array = np.asarray(counts_sum, dtype=np.float64)
    if array.ndim not in (1, 2) or array.shape[-1] != 3:
        raise ValueError(
            f"expected summed counts of shape (3,) or (R, 3) with columns {names}, "
            f"got shape {array.shape}"
        )
    return array


def _ratio(numerator: np.ndarray, denominator: np.ndarray) -> np.ndarray:
    result = np.zeros(np.broadcast(numerator, denominator).shape, dtype=np.float64)
    np.divide(numerator, denominator, out=result, where=denominator > 0)
    return result


def _scalar_or_array(values: np.ndarray, ndim: int) -> Union[float, np.ndarray]:
    return float(values) if ndim == 1 else values


def f1_score(counts_sum: np.ndarray) -> Union[float, np.ndarray]:
    """
    Bracketing F1, `2 * matched / (gold + predicted)` (0 when both are 0), as `evalb_score`.

    # Parameters

    counts_sum : `np.ndarray`
        Summed :func:`bracket_counts`: shape `(3,)`, or `(R, 3)` for `R` sums at once.

    # Returns

    `float` for one sum, an `(R,)` array for `R` sums.
    """
    array = _columns(counts_sum, "matched, gold, predicted")
    matched, gold, predicted = array[..., 0], array[..., 1], array[..., 2]
    return _scalar_or_array(_ratio(2 * matched, gold + predicted), array.ndim)


def uas(counts_sum: np.ndarray) -> Union[float, np.ndarray]:
    """
    Unlabelled attachment score, `correct_heads / scored_words` (0 when no word is scored).

    # Parameters

    counts_sum : `np.ndarray`
        Summed :func:`attachment_counts`: shape `(3,)`, or `(R, 3)` for `R` sums at once.

    # Returns

    `float` for one sum, an `(R,)` array for `R` sums.
    """
    array = _columns(counts_sum, "scored_words, correct_heads, correct_heads_and_labels")
    return _scalar_or_array(_ratio(array[..., 1], array[..., 0]), array.ndim)


def las(counts_sum: np.ndarray) -> Union[float, np.ndarray]:
    """
    Labelled attachment score, `correct_heads_and_labels / scored_words` (0 when no word is
    scored, and always 0 for counts built without labels).

    # Parameters

    counts_sum : `np.ndarray`
        Summed :func:`attachment_counts`: shape `(3,)`, or `(R, 3)` for `R` sums at once.

    # Returns

    `float` for one sum, an `(R,)` array for `R` sums.
    """
    array = _columns(counts_sum, "scored_words, correct_heads, correct_heads_and_labels")
    return _scalar_or_array(_ratio(array[..., 2], array[..., 0]), array.ndim)


# ------------------------------------------------------------------------------------------------
# Tests
# ------------------------------------------------------------------------------------------------


def _check_counts(counts: np.ndarray, name: str) -> np.ndarray:
    array = np.asarray(counts)
    if array.ndim != 2:
        raise ValueError(
            f"{name} must be a 2-D (n_sentences, k) array of counts, got shape {array.shape}"
        )
    if array.dtype.kind == "f":
        if not np.all(np.isfinite(array)) or not np.all(array == np.round(array)):
            raise ValueError(f"{name} must hold integer counts, got non-integer values")
    elif array.dtype.kind not in "biu":
        raise ValueError(f"{name} must hold integer counts, got dtype {array.dtype}")
    if np.any(array < 0):
        raise ValueError(f"{name} must hold non-negative counts, got negative values")
    if array.size and np.any(array.sum(axis=0, dtype=np.float64) >= _MAX_EXACT_SUM):
        raise ValueError(f"the column sums of {name} are too large (2 ** 53 or more)")
    return array.astype(np.float64)


def _check_pair(counts_a: np.ndarray, counts_b: np.ndarray):
    a = _check_counts(counts_a, "counts_a")
    b = _check_counts(counts_b, "counts_b")
    if a.shape[0] != b.shape[0]:
        raise ValueError(
            f"counts_a has {a.shape[0]} sentences but counts_b has {b.shape[0]}: a paired test "
            "needs both systems' counts for the same sentences, in the same order"
        )
    if a.shape != b.shape:
        raise ValueError(
            f"counts_a has shape {a.shape} but counts_b has shape {b.shape}: both need the "
            "same count columns"
        )
    if a.shape[0] == 0:
        raise ValueError("counts_a and counts_b have zero sentences: nothing to test")
    return a, b


def _check_positive(value: int, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f"{name} must be a positive integer, got {value!r}")
    return int(value)


def _evaluate(metric: Metric, sums: np.ndarray) -> np.ndarray:
    values = np.asarray(metric(sums), dtype=np.float64)
    if values.shape != (sums.shape[0],):
        raise ValueError(
            f"the metric must be vectorised: given summed counts of shape {sums.shape} it "
            f"must return shape ({sums.shape[0]},), got shape {values.shape}"
        )
    return values


def paired_permutation_test(
    counts_a: np.ndarray,
    counts_b: np.ndarray,
    metric: Metric,
    trials: int = 10000,
    seed: int = 0,
) -> SignificanceResult:
    """
    Approximate randomisation (Noreen 1989), the stratified shuffling of Bikel's `compare.pl`:
    under the null hypothesis that the two systems are interchangeable, the output of either
    could have come from the other on each sentence. Each trial swaps the rows of
    `counts_a` and `counts_b` of each sentence independently with probability 1/2 and
    recomputes `metric(sum_a) - metric(sum_b)`. The two-sided p-value is
    `(r + 1) / (trials + 1)`, where `r` counts the trials whose absolute difference is at least
    the observed one (up to a 1e-12 tolerance). When `2 ** n_sentences <= trials`, all swap
    patterns are enumerated instead, and the p-value `r / 2 ** n_sentences` is exact.
    Identical systems give p = 1.

    # Parameters

    counts_a : `np.ndarray`
        `(n_sentences, k)` non-negative integer counts of system A, e.g. from
        :func:`bracket_counts` or :func:`attachment_counts`.
    counts_b : `np.ndarray`
        The counts of system B, same shape, same sentences in the same order.
    metric : `Callable[[np.ndarray], np.ndarray]`
        A vectorised metric of summed counts: given an `(R, k)` array of column sums, returns
        the `R` metric values (:func:`f1_score`, :func:`uas`, :func:`las`).
    trials : `int`, optional (default = `10000`)
        The number of random swap patterns (an upper bound when enumerating exactly).
    seed : `int`, optional (default = `0`)
        The seed of the `numpy.random.default_rng` that draws the swaps.

    # Returns

    `SignificanceResult`
        With `test="permutation"`; `difference` is `metric_a - metric_b`.
    """
    a, b = _check_pair(counts_a, counts_b)
    trials = _check_positive(trials, "trials")
    n = a.shape[0]
    sum_a, sum_b = a.sum(axis=0), b.sum(axis=0)
    observed = _evaluate(metric, np.stack([sum_a, sum_b]))
    metric_a, metric_b = float(observed[0]), float(observed[1])
    threshold = abs(metric_a - metric_b) - _TOLERANCE
    # Swapping sentence i moves d_i = b_i - a_i from B's sum to A's.
    delta = b - a

    def count_extreme(swaps: np.ndarray) -> int:
        moved = swaps.astype(np.float64) @ delta
        differences = _evaluate(metric, sum_a + moved) - _evaluate(metric, sum_b - moved)
        return int(np.count_nonzero(np.abs(differences) >= threshold))

    exact = n < 64 and 2**n <= trials
    extreme = 0
    if exact:
        total = 2**n
        bits = np.arange(n, dtype=np.int64)
        for start in range(0, total, _CHUNK):
            patterns = np.arange(start, min(start + _CHUNK, total), dtype=np.int64)
            extreme += count_extreme(((patterns[:, None] >> bits) & 1).astype(bool))
        p_value = extreme / total
    else:
        total = trials
        rng = np.random.default_rng(seed)
        for start in range(0, total, _CHUNK):
            size = min(_CHUNK, total - start)
            extreme += count_extreme(rng.random((size, n)) < 0.5)
        p_value = (extreme + 1) / (total + 1)
    return SignificanceResult(
        metric_a=metric_a,
        metric_b=metric_b,
        difference=metric_a - metric_b,
        p_value=p_value,
        test="permutation",
        trials=total,
        exact=exact,
    )


def paired_bootstrap_test(
    counts_a: np.ndarray,
    counts_b: np.ndarray,
    metric: Metric,
    samples: int = 10000,
    seed: int = 0,
) -> SignificanceResult:
    """
    Paired bootstrap resampling (Koehn 2004; Berg-Kirkpatrick, Burkett & Klein 2012): draws
    `samples` test sets of `n_sentences` sentences with replacement (the same sentences for
    both systems) and recomputes `metric(sum_a) - metric(sum_b)` on each. The p-value is
    **one-sided, in the direction of the observed difference**: the fraction of samples whose
    difference does not have the observed sign (`<= 0` when A is observed better, `>= 0` when
    B is; up to a 1e-12 tolerance), i.e. Koehn's "system A is better in x % of the samples"
    turned into `p = 1 - x / 100`. This is the sign variant; it is close to, but not the same
    as, Berg-Kirkpatrick et al.'s null-centred variant (the fraction of samples whose
    difference exceeds twice the observed one). An observed difference of 0 gives p = 1.

    # Parameters

    counts_a : `np.ndarray`
        `(n_sentences, k)` non-negative integer counts of system A, e.g. from
        :func:`bracket_counts` or :func:`attachment_counts`.
    counts_b : `np.ndarray`
        The counts of system B, same shape, same sentences in the same order.
    metric : `Callable[[np.ndarray], np.ndarray]`
        A vectorised metric of summed counts: given an `(R, k)` array of column sums, returns
        the `R` metric values (:func:`f1_score`, :func:`uas`, :func:`las`).
    samples : `int`, optional (default = `10000`)
        The number of bootstrap samples.
    seed : `int`, optional (default = `0`)
        The seed of the `numpy.random.default_rng` that draws the samples.

    # Returns

    `SignificanceResult`
        With `test="bootstrap"`, `exact=False`; `difference` is `metric_a - metric_b`.
    """
    a, b = _check_pair(counts_a, counts_b)
    samples = _check_positive(samples, "samples")
    n = a.shape[0]
    observed = _evaluate(metric, np.stack([a.sum(axis=0), b.sum(axis=0)]))
    metric_a, metric_b = float(observed[0]), float(observed[1])
    difference = metric_a - metric_b

    if abs(difference) <= _TOLERANCE:
        p_value = 1.0
    else:
        sign = 1.0 if difference > 0 else -1.0
        rng = np.random.default_rng(seed)
        against = 0
        for start in range(0, samples, _CHUNK):
            size = min(_CHUNK, samples - start)
            indices = rng.integers(0, n, size=(size, n))
            # How often each sentence is drawn in each sample: sums are then matrix products.
            flat = (indices + n * np.arange(size)[:, None]).ravel()
            weights = np.bincount(flat, minlength=size * n).reshape(size, n).astype(np.float64)
            differences = _evaluate(metric, weights @ a) - _evaluate(metric, weights @ b)
            against += int(np.count_nonzero(sign * differences <= _TOLERANCE))
        p_value = against / samples
    return SignificanceResult(
        metric_a=metric_a,
        metric_b=metric_b,
        difference=difference,
        p_value=p_value,
        test="bootstrap",
        trials=samples,
        exact=False,
    )


__all__: List[str] = [
    "SignificanceResult",
    "attachment_counts",
    "bracket_counts",
    "f1_score",
    "las",
    "paired_bootstrap_test",
    "paired_permutation_test",
    "uas",
]
