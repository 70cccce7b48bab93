"""
The tree CRF's inside and outside passes on span-level tables (numba, CPU, float64): `log Z`
and the derivatives of `log Z` with respect to each span's two label log-sums, from which
`structs.confidence.marginals_and_log_partition` builds the labelled marginals.

The grammar is that of `structs/tree_crf.py` (right-factored binarisations, each n-ary tree
once). With `A(i, j) = logsumexp_l s(i, j, l)` and `K(i, j) = logsumexp_{l > 0} s(i, j, l)`:

    C(i, i + 1) = R(i, i + 1) = A(i, i + 1)
    S(i, j)     = logsumexp_{i < k < j} [C(i, k) + R(k, j)]
    C(i, j)     = K(i, j) + S(i, j),   R(i, j) = A(i, j) + S(i, j)       (j - i >= 2)
    log Z       = R(0, n)

The outside pass runs the same recurrences backwards, widest spans first, in probability
space: `dC(i, j)` and `dR(i, j)` are the derivatives of log Z with respect to C and R (the
probability that (i, j) is a node of that kind), and each split k of (i, j) passes
`(dC(i, j) + dR(i, j)) * exp(C(i, k) + R(k, j) - S(i, j))` down to its two children. Then
`d log Z / d K(i, j) = dC(i, j)` and `d log Z / d A(i, j) = dR(i, j)` (plus `dC(i, j)` for a
word, whose C is its A). A labelled span's marginal follows by the chain rule through the two
log-sums (`structs.confidence`).

This is the gradient that autograd computes through `tree_log_partition`, in one compiled pass
per sentence instead of a tensor operation per span width and its backward.
"""
import numpy as np
from numba import njit, prange

__all__ = ["inside_outside"]


@njit(cache=True, parallel=True)
def _inside_outside_batch(any_label, constituent, lengths, log_z, d_any, d_constituent):
    """Per sentence b (in parallel): log_z[b], and d_any[b, i, j], d_constituent[b, i, j] for
    0 <= i < j <= lengths[b] (the rest left as given, zeros). All arrays float64 but lengths;
    any_label, constituent, d_any, d_constituent of shape (B, max_len + 1, max_len + 1)."""
    for b in prange(any_label.shape[0]):  # pragma: no cover - compiled code
        n = lengths[b]
        complete = np.full((n + 1, n + 1), -np.inf)
        rest = np.full((n + 1, n + 1), -np.inf)
        splits = np.full((n + 1, n + 1), -np.inf)
        for i in range(n):
            complete[i, i + 1] = any_label[b, i, i + 1]
            rest[i, i + 1] = any_label[b, i, i + 1]
        for width in range(2, n + 1):
            for i in range(n - width + 1):
                j = i + width
                best = -np.inf
                for k in range(i + 1, j):
                    best = max(best, complete[i, k] + rest[k, j])
                total = 0.0
                for k in range(i + 1, j):
                    total += np.exp(complete[i, k] + rest[k, j] - best)
                s = best + np.log(total)
                splits[i, j] = s
                complete[i, j] = constituent[b, i, j] + s
                rest[i, j] = any_label[b, i, j] + s
        log_z[b] = rest[0, n]
        d_complete = np.zeros((n + 1, n + 1))
        d_rest = np.zeros((n + 1, n + 1))
        d_rest[0, n] = 1.0
        for width in range(n, 1, -1):
            for i in range(n - width + 1):
                j = i + width
                d_constituent[b, i, j] = d_complete[i, j]
                d_any[b, i, j] = d_rest[i, j]
                d_split = d_complete[i, j] + d_rest[i, j]
                if d_split == 0.0:
                    continue
                for k in range(i + 1, j):
                    p = d_split * np.exp(complete[i, k] + rest[k, j] - splits[i, j])
                    d_complete[i, k] += p
                    d_rest[k, j] += p
        for i in range(n):
            d_any[b, i, i + 1] = d_complete[i, i + 1] + d_rest[i, i + 1]


def inside_outside(any_label: np.ndarray, constituent: np.ndarray, lengths: np.ndarray):
    """
    `log Z` per sentence and the derivatives of `log Z` with respect to `any_label` (A) and
    `constituent` (K), each `(batch_size, max_length + 1, max_length + 1)` (cells outside a
    sentence, and K of single words, get 0).

    any_label, constituent : float arrays `(batch_size, max_length + 1, max_length + 1)`, the
        log-sums over each span's labels (all of them; those > 0), at `[b, i, j]` for i < j.
    lengths : int array `(batch_size,)`, each sentence's number of words (1 to max_length).
    """
    any_label = np.ascontiguousarray(any_label, dtype=np.float64)
    constituent = np.ascontiguousarray(constituent, dtype=np.float64)
    lengths = np.ascontiguousarray(lengths, dtype=np.int64)
    max_length = any_label.shape[1] - 1
    if any_label.shape != constituent.shape or any_label.shape[2] != max_length + 1:
        raise ValueError(
            f"any_label and constituent must both be (batch, n + 1, n + 1), got "
            f"{any_label.shape} and {constituent.shape}"
        )
    if lengths.shape != (any_label.shape[0],) or (
        len(lengths) and (lengths.min() < 1 or lengths.max() > max_length)
    ):
        raise ValueError(
            f"lengths must be one per sentence, between 1 and {max_length}, got {lengths}"
        )
    log_z = np.empty(len(lengths))
    d_any = np.zeros_like(any_label)
    d_constituent = np.zeros_like(any_label)
    _inside_outside_batch(any_label, constituent, lengths, log_z, d_any, d_constituent)
    return log_z, d_any, d_constituent
