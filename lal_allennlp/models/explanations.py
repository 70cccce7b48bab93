"""
Interpretability of the Label Attention Layer (Mrini et al. 2020, sec. 5): per sentence, the
attention distribution of every label attention head over the words, and per predicted span,
the contribution of every head to that span's representation.

Without the position-wise feed-forward layer (the paper's "PFL" ablation) a word vector is the
concatenation of one slice per head, and so is a span vector `s(i, j) = g_j - g_i` (see
`modules/span_features.py`): head `h`'s slice of the span vector (`head_slices`) is computed
from head `h`'s attention alone. With the feed-forward layer on, the heads are mixed after the
concatenation, so a slice no longer belongs to one head: contributions are then still computed
but are only an approximation (`contributions_are_exact`), and the output says so.

Three measures turn the slices of a span into one number per head, each non-negative and
summing to 1 over the heads:

- `head_contributions` (what `explain` returns): the share of the span vector's norm that lies
  in each head's slice, `c_h = ||s_h|| / sum_h' ||s_h'||`; independent of the sign conventions
  of the slices.
- `averaged_contributions` ("normalise and average", the paper's sec. 2 and Figure 6): the
  span vector is min-max normalised to [0, 1] over all its dimensions, each head's slice is
  averaged, and the averages are divided by their sum.
- `softmax_contributions` (the authors' code, `label_scores_from_annotations` in
  `src_joint/KM_parser.py` of KhalilMrini/LAL-Parser): each head's slice is summed, the sums
  are min-max normalised over the heads, then a softmax over the heads is taken.

The last two depend on the signs of the span vector's entries, so they are computed on the
span vector as the authors lay it out, `[f_j - f_i ; b_j - b_i]` per head, whose backward half
is the negation of this package's `[f_j - f_i ; b_i - b_j]` (`paper_layout`).

All of it is a handful of tensor operations over the whole batch, with no Python loops over
spans or heads, so explanations are cheap enough to ask for on every sentence.
"""
from typing import Optional, Tuple

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


CONTRIBUTION_MEASURES: Tuple[str, ...] = ("average", "softmax")
"""The measures of `contribution_measure`: the paper's Figure 6, the authors' code."""


def head_slices(
    fenceposts: torch.Tensor,
    batch_index: torch.Tensor,
    starts: torch.Tensor,
    ends: torch.Tensor,
    num_heads: int,
) -> torch.Tensor:
    """
    Each head's slice of the span vectors `s(i, j) = g_j - g_i`, in this package's layout
    (`[f_j - f_i ; b_i - b_j]` per head, see `modules/span_features.py`).

    # Parameters

    fenceposts : `torch.Tensor`
        Shape `(batch_size, max_length + 1, num_heads * d)`, from `fencepost_features` with
        one partition per head.
    batch_index, starts, ends : `torch.LongTensor`
        Shape `(num_spans,)`: the sentence and fenceposts of each span.
    num_heads : `int`

    # Returns

    `torch.Tensor` of shape `(num_spans, num_heads, d)`: the forward half of each head's slice,
    then its backward half.
    """
    # shape (num_spans, num_heads * d)
    spans = fenceposts[batch_index, ends] - fenceposts[batch_index, starts]
    return spans.view(spans.size(0), num_heads, -1)


def head_contributions(
    fenceposts: torch.Tensor,
    batch_index: torch.Tensor,
    starts: torch.Tensor,
    ends: torch.Tensor,
    num_heads: int,
) -> torch.Tensor:
    """
    Norm shares `||s_h(i, j)|| / sum_h' ||s_h'(i, j)||`.

    # Parameters

    fenceposts : `torch.Tensor`
        Shape `(batch_size, max_length + 1, num_heads * d)`, from `fencepost_features` with
        one partition per head.
    batch_index, starts, ends : `torch.LongTensor`
        Shape `(num_spans,)`: the sentence and fenceposts of each span.

    # Returns

    `torch.Tensor` of shape `(num_spans, num_heads)`, rows summing to 1.
    """
    # shape (num_spans, num_heads)
    norms = head_slices(fenceposts, batch_index, starts, ends, num_heads).norm(dim=-1)
    return norms / norms.sum(dim=-1, keepdim=True).clamp_min(torch.finfo(norms.dtype).tiny)


def paper_layout(slices: torch.Tensor) -> torch.Tensor:
    """
    Head slices `(num_spans, num_heads, d)` of this package's layout `[f_j - f_i ; b_i - b_j]`
    in the authors' layout `[f_j - f_i ; b_j - b_i]`: the backward half negated. (The authors'
    code concatenates the forward halves of all heads, then their backward halves; per head
    the numbers are the same.)
    """
    half = slices.size(-1) // 2
    return torch.cat([slices[..., :half], -slices[..., half:]], dim=-1)


def averaged_contributions(slices: torch.Tensor) -> torch.Tensor:
    """
    "Normalise and average" (Mrini et al. 2020, Figure 6). With `v` the span vector in the
    authors' layout (`paper_layout`) and `v_h` head `h`'s slice of it:

        z = (v - min(v)) / (max(v) - min(v)),   m_h = mean(z_h),   c_h = m_h / sum_h' m_h',

    min and max taken over all the dimensions of the span vector. A constant span vector
    (`max = min`) gets the uniform `1 / num_heads`.

    # Parameters

    slices : `torch.Tensor`
        Shape `(num_spans, num_heads, d)`, from `head_slices`.

    # Returns

    `torch.Tensor` of shape `(num_spans, num_heads)`, non-negative, rows summing to 1.
    """
    # shape (num_spans, num_heads, d)
    vectors = paper_layout(slices)
    flat = vectors.reshape(vectors.size(0), -1)
    tiny = torch.finfo(vectors.dtype).tiny
    # shape (num_spans, 1, 1)
    low = flat.min(dim=-1).values.view(-1, 1, 1)
    spread = (flat.max(dim=-1).values.view(-1, 1, 1) - low).clamp_min(tiny)
    # shape (num_spans, num_heads)
    means = ((vectors - low) / spread).mean(dim=-1)
    total = means.sum(dim=-1, keepdim=True)
    uniform = torch.full_like(means, 1.0 / means.size(-1))
    return torch.where(total > 0, means / total.clamp_min(tiny), uniform)


def softmax_contributions(slices: torch.Tensor) -> torch.Tensor:
    """
    The authors' contributions (`ChartParser.label_scores_from_annotations`,
    `src_joint/KM_parser.py`, KhalilMrini/LAL-Parser): with `v_h` head `h`'s slice of the span
    vector in their layout (`paper_layout`),

        a_h = sum(v_h),   u_h = (a_h - min_h' a_h') / (max_h' a_h' - min_h' a_h'),
        c = softmax(u)   (over the heads).

    `u` lies in [0, 1], so a head's contribution is at most `e` times another's. Where all the
    `a_h` are equal (0 / 0 in the authors' code) `u` is taken as 0: uniform contributions.

    # Parameters

    slices : `torch.Tensor`
        Shape `(num_spans, num_heads, d)`, from `head_slices`.

    # Returns

    `torch.Tensor` of shape `(num_spans, num_heads)`, positive, rows summing to 1.
    """
    # shape (num_spans, num_heads)
    sums = paper_layout(slices).sum(dim=-1)
    shifted = sums - sums.min(dim=-1, keepdim=True).values
    spread = shifted.max(dim=-1, keepdim=True).values
    scaled = shifted / spread.clamp_min(torch.finfo(sums.dtype).tiny)
    return torch.softmax(scaled, dim=-1)


def contribution_measure(slices: torch.Tensor, measure: str) -> torch.Tensor:
    """The contributions `(num_spans, num_heads)` of head slices `(num_spans, num_heads, d)`
    under `measure`, one of `CONTRIBUTION_MEASURES` (`"average"`: `averaged_contributions`,
    `"softmax"`: `softmax_contributions`)."""
    if measure == "average":
        return averaged_contributions(slices)
    if measure == "softmax":
        return softmax_contributions(slices)
    raise ValueError(
        f"unknown contribution measure {measure!r}: use one of {', '.join(CONTRIBUTION_MEASURES)}"
    )
