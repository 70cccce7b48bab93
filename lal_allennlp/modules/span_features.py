"""
Span representations from fenceposts, as in Stern, Andreas & Klein (2017, sec. 3) and
Kitaev & Klein (2018, "Constituency Parsing with a Self-Attentive Encoder", sec. 2.1).

The encoder runs over `[START] w_1 ... w_n [STOP]`. Each position's vector is split into a
forward half and a backward half. Fencepost k (between words k and k+1, 0 <= k <= n) takes the
forward half of the token on its left and the backward half of the token on its right, and
span (i, j) is represented by the differences

    s(i, j) = [f_j - f_i ; b_i - b_j].

With `num_partitions > 1` the vector is first cut into that many equal slices (one per label
attention head, Mrini et al. 2020, sec. 3) and the forward/backward split is made inside each
slice; the span vector is the concatenation of the per-slice differences.

Because `s(i, j) = g_j - g_i` with the fencepost vector `g_k = [f_k ; -b_k]` (laid out like the
span vector), any linear map of a span vector is a difference of the same map applied to two
fenceposts: `W s(i, j) = W g_j - W g_i`. `SpanLabelScorer` uses this to apply its first layer
to the n + 1 fenceposts instead of the n (n + 1) / 2 spans.
"""
from typing import Tuple

import torch


def span_indices(max_length: int, device: torch.device) -> Tuple[torch.Tensor, torch.Tensor]:
    """All spans `(i, j)` with `0 <= i < j <= max_length`, ordered by `i` then `j`.

    Returns two `LongTensor`s of shape `(num_spans,)`, `num_spans = n (n + 1) / 2`.
    """
    starts, ends = torch.triu_indices(max_length + 1, max_length + 1, offset=1, device=device)
    return starts, ends


def sentence_spans(
    lengths: torch.Tensor, max_length: int
) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """The spans of each sentence alone, `(i, j)` with `0 <= i < j <= lengths[b]`, without the
    spans of the batch's padding: their sentence `b`, start `i` and end `j`, three `LongTensor`s
    of shape `(num_spans,)`, sentence by sentence and within one in `span_indices` order."""
    starts, ends = span_indices(max_length, lengths.device)
    # shape (batch_size, max_length (max_length + 1) / 2)
    inside = ends.unsqueeze(0) <= lengths.unsqueeze(1)
    batch, span = inside.nonzero(as_tuple=True)
    return batch, starts[span], ends[span]


def fencepost_features(encoded: torch.Tensor, num_partitions: int = 1) -> torch.Tensor:
    """
    # Parameters

    encoded : `torch.Tensor`
        Shape `(batch_size, max_length + 2, dim)`: the encoder output over
        `[START] words [STOP]` (sentences shorter than `max_length` are padded after their
        STOP token; the padded positions only ever feed spans that the decoder ignores).
    num_partitions : `int`, optional (default = `1`)
        Number of equal slices of `dim` that are each split into forward/backward halves.

    # Returns

    `torch.Tensor` of shape `(batch_size, max_length + 1, dim)`: `g_k = [f_k ; -b_k]` per
    slice, so that the span vector of `(i, j)` is `g_j - g_i`.
    """
    batch_size, num_positions, dim = encoded.shape
    if dim % (2 * num_partitions) != 0:
        raise ValueError(
            f"Span features split each of {num_partitions} slice(s) of the encoder output into "
            f"forward/backward halves, so its dimension ({dim}) must be divisible by "
            f"{2 * num_partitions}."
        )
    half = dim // (2 * num_partitions)
    # shape (batch_size, max_length + 2, num_partitions, 2, half)
    parts = encoded.view(batch_size, num_positions, num_partitions, 2, half)
    # Fencepost k: forward half of token k, backward half of token k + 1 (token 0 is START).
    # shape (batch_size, max_length + 1, num_partitions, half)
    forward = parts[:, :-1, :, 0]
    backward = parts[:, 1:, :, 1]
    # shape (batch_size, max_length + 1, dim)
    return torch.stack([forward, -backward], dim=3).reshape(batch_size, num_positions - 1, dim)


def fencepost_span_features(
    encoded: torch.Tensor, starts: torch.Tensor, ends: torch.Tensor, num_partitions: int = 1
) -> torch.Tensor:
    """
    The span vectors `s(i, j)` themselves, for the spans `(starts[m], ends[m])`.

    # Returns

    `torch.Tensor` of shape `(batch_size, num_spans, dim)`.
    """
    fenceposts = fencepost_features(encoded, num_partitions)
    return fenceposts[:, ends] - fenceposts[:, starts]
