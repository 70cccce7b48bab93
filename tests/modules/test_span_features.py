import torch

from lal_allennlp.modules import (
    SentenceBoundaries,
    SpanLabelScorer,
    fencepost_features,
    fencepost_span_features,
    sentence_spans,
    span_indices,
)
from lal_allennlp.structs import SpanChart


def test_span_vector_by_hand_one_partition():
    # 2 words -> positions START, w1, w2, STOP; dim 4 = forward (2) + backward (2).
    encoded = torch.arange(16, dtype=torch.float).view(1, 4, 4)
    starts, ends = torch.tensor([0]), torch.tensor([2])
    span = fencepost_span_features(encoded, starts, ends)[0, 0]
    # f_2 - f_0 = fwd(w2) - fwd(START); b_0 - b_2 = bwd(w1) - bwd(STOP)
    expected = torch.cat([encoded[0, 2, :2] - encoded[0, 0, :2], encoded[0, 1, 2:] - encoded[0, 3, 2:]])
    assert torch.equal(span, expected)


def test_span_vector_splits_each_partition():
    encoded = torch.randn(1, 5, 8)
    starts, ends = torch.tensor([1]), torch.tensor([3])
    span = fencepost_span_features(encoded, starts, ends, num_partitions=2)[0, 0]
    pieces = []
    for p in range(2):
        slice_ = encoded[0, :, 4 * p : 4 * p + 4]
        pieces.append(slice_[3, :2] - slice_[1, :2])
        pieces.append(slice_[2, 2:] - slice_[4, 2:])
    assert torch.allclose(span, torch.cat(pieces))


def test_fencepost_scoring_equals_scoring_explicit_span_vectors():
    torch.manual_seed(0)
    encoded = torch.randn(3, 9, 12)
    starts, ends = span_indices(7, encoded.device)
    batch = torch.arange(3).repeat_interleave(len(starts))
    scorer = SpanLabelScorer(12, 10, 5).eval()
    fast = scorer(fencepost_features(encoded, 3), batch, starts.repeat(3), ends.repeat(3))
    slow = scorer.score_span_vectors(fencepost_span_features(encoded, starts, ends, 3))
    assert fast.shape == (3 * 28, 5)
    assert torch.allclose(fast, slow.reshape(-1, 5), atol=1e-5)


def test_sentence_spans_are_each_sentences_own():
    lengths = torch.tensor([3, 1, 0, 2])
    batch, starts, ends = sentence_spans(lengths, 3)
    expected = [
        (b, i, j) for b, n in enumerate(lengths.tolist())
        for i in range(n + 1) for j in range(i + 1, n + 1)
    ]
    assert list(zip(batch.tolist(), starts.tolist(), ends.tolist())) == expected
    assert len(expected) == 6 + 1 + 0 + 3


def test_chart_of_sentence_spans_is_zero_outside_them():
    lengths = torch.tensor([2, 1])
    batch, starts, ends = sentence_spans(lengths, 2)
    scores = torch.arange(1.0, 1.0 + 2 * len(batch)).reshape(-1, 2)
    chart = SpanChart.from_sentence_spans(scores, batch, starts, ends, lengths, 2).scores
    assert chart.shape == (2, 3, 3, 3)
    expected = torch.zeros(2, 3, 3, 3)
    for (b, i, j), row in zip(zip(batch.tolist(), starts.tolist(), ends.tolist()), scores):
        expected[b, i, j, 1:] = row
    assert torch.equal(chart, expected)
    assert torch.all(chart[1, :, 2] == 0)  # sentence 1 has one word: no span ends at 2


def test_sentence_boundaries_place_start_and_stop():
    boundaries = SentenceBoundaries(3)
    embedded = torch.ones(2, 4, 3)
    mask = torch.tensor([[True, True, True, True], [True, True, False, False]])
    padded, new_mask = boundaries(embedded, mask)
    assert padded.shape == (2, 6, 3)
    assert torch.allclose(padded[1, 0], boundaries.start)
    assert torch.allclose(padded[1, 3], boundaries.stop)
    assert torch.allclose(padded[0, 5], boundaries.stop)
    assert torch.equal(padded[1, 4:], torch.zeros(2, 3))
    assert new_mask.tolist() == [[True] * 6, [True] * 4 + [False] * 2]


def test_span_hidden_is_exactly_the_difference_of_fencepost_rows_and_has_gradients():
    """The span's first layer, W_1 g_j + b_1 - W_1 g_i, is the exact difference (the scorer
    sums the two rows with weights 1 and -1), and training gets gradients through it."""
    torch.manual_seed(0)
    fenceposts = torch.randn(2, 6, 12, requires_grad=True)
    batch, starts, ends = sentence_spans(torch.tensor([5, 3]), 5)
    scorer = SpanLabelScorer(12, 10, 5)
    seen = []
    handle = scorer.layer_norm.register_forward_hook(lambda m, args, out: seen.append(args[0]))
    scores = scorer(fenceposts, batch, starts, ends)
    handle.remove()
    projected = scorer.hidden(fenceposts)
    expected = (projected + scorer.hidden_bias)[batch, ends] - projected[batch, starts]
    assert torch.equal(seen[0], expected)
    scores.sum().backward()
    reference = fenceposts.detach().clone().requires_grad_(True)
    projected = scorer.hidden(reference)
    difference = (projected + scorer.hidden_bias)[batch, ends] - projected[batch, starts]
    scorer.zero_grad()
    scorer.score_hidden(difference).sum().backward()
    assert torch.allclose(fenceposts.grad, reference.grad, atol=1e-6)
    assert fenceposts.grad.abs().sum() > 0
