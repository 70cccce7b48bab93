"""Tests for the shared numba helpers of the decoders (`lal_allennlp.decoding.kernels`)."""

import numpy as np
import pytest
from numba import njit

from lal_allennlp.decoding.kernels import first_equal, maxnum, segment_max


@njit(cache=True)
def _pairwise_max(a, b):  # pragma: no cover - compiled code
    out = np.empty_like(a)
    for i in range(a.shape[0]):
        out[i] = maxnum(a[i], b[i])
    return out


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_segment_max_equals_numpy_max_at_every_length(dtype) -> None:
    """Lengths around the vector widths, with -inf entries and the maximum at every position."""
    rng = np.random.default_rng(0)
    for length in range(1, 70):
        values = rng.standard_normal(length).astype(dtype)
        values[rng.random(length) < 0.3] = -np.inf
        for position in {0, length // 2, length - 1}:
            row = values.copy()
            row[position] = 10.0
            assert segment_max(row) == 10.0
        assert segment_max(values) == values.max()
    assert segment_max(np.full(5, -np.inf, dtype=dtype)) == -np.inf


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_maxnum_is_the_larger_value(dtype) -> None:
    a = np.array([1.0, -2.0, -np.inf, 3.5, -np.inf], dtype=dtype)
    b = np.array([0.5, 7.0, 4.0, 3.5, -np.inf], dtype=dtype)
    result = _pairwise_max(a, b)
    assert result.dtype == dtype
    np.testing.assert_array_equal(result, [1.0, 7.0, 4.0, 3.5, -np.inf])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_first_equal_is_the_first_maximiser_from_start(dtype) -> None:
    """Tied maxima, -inf rows, every start; the row's length where the value is absent."""
    rng = np.random.default_rng(3)
    for length in (1, 2, 15, 16, 17, 53):
        for case in range(60):
            row = rng.integers(-3, 1, length).astype(dtype)  # few values: many ties
            if case % 6 == 0:
                row[:] = -np.inf
            for start in range(length):
                value = row[start:].max()
                expected = start + int(np.argmax(row[start:] == value))
                assert first_equal(row, start, value) == expected
            assert first_equal(row, 0, dtype(7)) == length
