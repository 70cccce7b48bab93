"""
Interpretability of the Label Attention Layer (Mrini et al. 2020, sec. 5): per sentence, the
attention distribution of every label attention head over the words, and per predicted span,
the contribution of every head to that span's representation.

Without the position-wise feed-forward layer (the paper's "PFL" ablation) a word vector is the
concatenation of one slice per head, and so is a span vector `s(i, j) = g_j - g_i` (see
`modules/span_features.py`): head `h`'s slice of the span vector is computed from head `h`'s
attention alone. The contribution of head `h` to span `(i, j)` is the share of the
span vector's norm that lies in that head's slice:

    c_h(i, j) = || s_h(i, j) ||_2 / sum_h' || s_h'(i, j) ||_2,

which is non-negative and sums to 1 over the heads. (The paper's figures average the slices;
the authors' code applies min-max normalisation then a softmax. Norm shares keep the
contributions independent of the sign conventions of the slices and comparable across spans.)
With the feed-forward layer on, the heads are mixed after the concatenation, so a slice no
longer belongs to one head: the contributions are then still returned but are only an
approximation, and the output says so.

All of it is a handful of tensor operations over the whole batch, with no Python loops over
spans or heads, so explanations are cheap enough to ask for on every sentence.
"""
from typing import Optional

import torch

from lal_allennlp.modules.label_attention import LabelAttentionLayer


def find_label_attention(module: torch.nn.Module) -> Optional[LabelAttentionLayer]:
    """The (last) label attention layer inside `module`, or None."""
    found = None
    for submodule in module.modules():
        if isinstance(submodule, LabelAttentionLayer):
            found = submodule
    return found


def contributions_are_exact(layer: LabelAttentionLayer) -> bool:
    """Head slices belong to single heads only with concatenated heads and no feed-forward."""
    return layer.concatenate_heads and getattr(layer, "feed_forward", None) is None


def head_contributions(
    fenceposts: torch.Tensor,
    batch_index: torch.Tensor,
    starts: torch.Tensor,
    ends: torch.Tensor,
    num_heads: int,
) -> torch.Tensor:
    """
    # Parameters

    fenceposts : `torch.Tensor`
        Shape `(batch_size, max_length + 1, num_heads * d)`, from `fencepost_features` with
        one partition per head.
    batch_index, starts, ends : `torch.LongTensor`
        Shape `(num_spans,)`: the sentence and fenceposts of each span.

    # Returns

    `torch.Tensor` of shape `(num_spans, num_heads)`, rows summing to 1.
    """
    # shape (num_spans, num_heads * d)
    spans = fenceposts[batch_index, ends] - fenceposts[batch_index, starts]
    # shape (num_spans, num_heads)
    norms = spans.view(spans.size(0), num_heads, -1).norm(dim=-1)
    return norms / norms.sum(dim=-1, keepdim=True).clamp_min(torch.finfo(norms.dtype).tiny)
