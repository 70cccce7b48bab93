"""The numba inside-outside (`decoding/inside_outside.py`) behind the CPU marginals
(`structs.confidence.marginals_and_log_partition`): equal to enumerating every tree, and to
autograd through the torch inside pass (`SpanChart.marginals`) on padded batches, padding and
-inf scores included."""
import math

import numpy as np
import pytest
import torch

from lal_allennlp.decoding import inside_outside
from lal_allennlp.structs import EMPTY, SpanChart
from lal_allennlp.structs.confidence import marginals_and_log_partition
from tests.oracles.tree_enumeration import labelled_trees


def _chart(lengths, num_columns, seed, dtype=torch.float64):
    generator = torch.Generator().manual_seed(seed)
    n = max(lengths)
    scores = torch.randn(len(lengths), n + 1, n + 1, num_columns, generator=generator, dtype=dtype)
    scores[..., EMPTY] = 0.0
    return SpanChart(scores, torch.tensor(lengths))


@pytest.mark.parametrize("length", [1, 2, 3, 4, 5])
def test_marginals_equal_enumeration(length):
    chart = _chart([length], 3, seed=length)
    marginals, log_z = marginals_and_log_partition(chart)
    scores = chart.scores[0].tolist()
    expected = torch.zeros_like(marginals[0])
    total = 0.0
    for tree in labelled_trees(length, 3):
        weight = math.exp(sum(scores[i][j][label] for (i, j), label in tree))
        total += weight
        for (i, j), label in tree:
            expected[i, j, label] += weight
    assert torch.allclose(marginals[0], expected / total, atol=1e-10)
    assert log_z[0].item() == pytest.approx(math.log(total), rel=1e-12)


def test_a_padded_batch_equals_autograd_through_the_torch_inside_pass():
    chart = _chart([1, 7, 12, 3, 12], 6, seed=0)
    marginals, log_z = marginals_and_log_partition(chart)
    # Padding cells of -inf, as a masked chart may hold, change nothing (autograd gives NaN
    # there, so the comparison with it is on the finite chart).
    masked = SpanChart(chart.scores.clone(), chart.lengths)
    masked.scores[3, 4:, :, :] = float("-inf")
    masked.scores[3, :, 4:, :] = float("-inf")
    assert torch.equal(marginals_and_log_partition(masked)[0], marginals)
    assert torch.allclose(log_z, chart.log_partition, atol=1e-10)
    expected = chart.marginals()
    for b, n in enumerate(chart.lengths.tolist()):
        assert torch.allclose(marginals[b, : n + 1, : n + 1], expected[b, : n + 1, : n + 1],
                              atol=1e-10)
        # everything outside the sentence, the lower triangle included, is 0
        inside = torch.zeros_like(marginals[b], dtype=torch.bool)
        inside[: n + 1, : n + 1] = torch.ones(n + 1, n + 1).triu(1).bool().unsqueeze(-1)
        assert not marginals[b][~inside].any()
        # each word is one span of the tree, and so is the whole sentence
        words = marginals[b, torch.arange(n), torch.arange(1, n + 1)].sum(-1)
        assert torch.allclose(words, torch.ones(n, dtype=words.dtype), atol=1e-10)
        assert marginals[b, 0, n].sum().item() == pytest.approx(1.0, abs=1e-10)


def test_float32_charts_give_float32_marginals_close_to_float64():
    chart = _chart([9, 4], 5, seed=3)
    single = SpanChart(chart.scores.float(), chart.lengths)
    marginals, _ = marginals_and_log_partition(single)
    assert marginals.dtype == torch.float32
    assert torch.allclose(marginals.double(), chart.marginals(), atol=1e-5)


def test_bad_arguments():
    tables = np.zeros((2, 4, 4))
    with pytest.raises(ValueError, match="between 1 and 3"):
        inside_outside(tables, tables, np.array([0, 3]))
    with pytest.raises(ValueError, match="between 1 and 3"):
        inside_outside(tables, tables, np.array([4, 3]))
    with pytest.raises(ValueError, match=r"both be \(batch, n \+ 1, n \+ 1\)"):
        inside_outside(tables, np.zeros((2, 4, 3)), np.array([3, 3]))
