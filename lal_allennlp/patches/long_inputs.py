"""
AllenNLP 2.10.1's `PretrainedTransformerEmbedder` (inside `pretrained_transformer_mismatched`,
the embedder of every transformer config here) passes all of a sentence's word pieces to the
transformer at once. A transformer with learned positions (BERT, MiniLM: 512) then fails on a
longer sentence, unless the embedder was configured with `max_length`, which folds the input
into consecutive segments that do not overlap.

This patch encodes such a sentence in overlapping windows instead
(`lal_allennlp.modules.overlapping_windows`): when a batch has more word pieces than the
transformer has positions and the embedder folds nothing (`max_length` unset), each over-long
row is cut into windows of at most that many positions, each with the tokenizer's special
tokens around it (`[CLS] ... [SEP]` for BERT), as AllenNLP's folding does; windows overlap by
half a window, all windows of the batch go through the transformer (and its scalar mix, when
the embedder has one) as one batch, and each word piece takes its vector from the window in
which it is farthest from a cut. Rows that fit are one window each, as they are. Batches
within the limit go through AllenNLP's code unchanged, so models trained without this patch
give the same outputs on them, bit for bit, and need no configuration change for long inputs.

The windowed output is zero at the batch's padding (AllenNLP's path leaves the transformer's
vectors there; the mismatched embedder reads neither).
"""
from typing import Optional

import torch
from allennlp.modules.token_embedders.pretrained_transformer_embedder import (
    PretrainedTransformerEmbedder,
)

from lal_allennlp.modules.overlapping_windows import plan_windows
from lal_allennlp.modules.word_piece_limit import transformer_position_limit

original_forward = PretrainedTransformerEmbedder.forward


def embed_in_windows(
    embedder: PretrainedTransformerEmbedder,
    token_ids: torch.LongTensor,
    mask: torch.BoolTensor,
    type_ids: Optional[torch.LongTensor],
    window_length: int,
) -> torch.Tensor:
    """
    The embedder's output for `token_ids` `(batch_size, num_wordpieces)` encoded in
    overlapping windows of at most `window_length` word pieces (special tokens included),
    shape `(batch_size, num_wordpieces, embedding_size)`. Each row starts with the tokenizer's
    start tokens and ends with its end tokens; `mask` is true on every row's word pieces, all
    before its padding.
    """
    num_start = embedder._num_added_start_tokens
    num_end = embedder._num_added_end_tokens
    plan = plan_windows(mask, window_length, num_start, num_end)
    # shape (num_windows, window_positions)
    window_ids = plan.fold(token_ids)
    window_types = None if type_ids is None else plan.fold(type_ids)
    # shape (num_windows, window_positions, embedding_size)
    window_embeddings = original_forward(
        embedder, window_ids, plan.window_mask, type_ids=window_types
    )
    return plan.unfold(window_embeddings)


def window_limit(
    embedder: PretrainedTransformerEmbedder, token_ids: torch.LongTensor
) -> Optional[int]:
    """The transformer's number of positions when this patch encodes `token_ids` in windows
    (more word pieces than that, and no folding: `max_length` unset), else `None`."""
    if embedder._max_length is not None:
        return None
    limit = transformer_position_limit(embedder)
    return limit if limit is not None and token_ids.size(1) > limit else None


def _forward(
    self: PretrainedTransformerEmbedder,
    token_ids: torch.LongTensor,
    mask: torch.BoolTensor,
    type_ids: Optional[torch.LongTensor] = None,
    segment_concat_mask: Optional[torch.BoolTensor] = None,
) -> torch.Tensor:
    limit = window_limit(self, token_ids)
    if limit is not None:
        return embed_in_windows(self, token_ids, mask, type_ids, limit)
    return original_forward(self, token_ids, mask, type_ids, segment_concat_mask)


_forward.__doc__ = original_forward.__doc__


def encode_long_inputs_in_windows() -> None:
    """Patch `PretrainedTransformerEmbedder.forward` once."""
    PretrainedTransformerEmbedder.forward = _forward
