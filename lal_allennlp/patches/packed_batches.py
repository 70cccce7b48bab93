"""
At parse time on the CPU (no gradients, eval mode), AllenNLP's `PretrainedTransformerEmbedder`
runs a BERT encoder on the real word pieces of the batch only, not on its padding
(`lal_allennlp.modules.packed_transformer`): the same vectors at the real word pieces, less
arithmetic. The embedder's output is zero at the padding (AllenNLP's path leaves the
transformer's vectors there; the mismatched embedder reads neither).

Training, GPUs (not measured there yet), other transformers, folded inputs (`max_length`),
batches without padding and sentences longer than the transformer's positions go on to the
`long_inputs` patch's forward (its windows, or AllenNLP's forward).
"""
from typing import Optional

import torch
from allennlp.modules.token_embedders.pretrained_transformer_embedder import (
    PretrainedTransformerEmbedder,
)

from lal_allennlp.modules.packed_transformer import packed_hidden_states, supports_packing
from lal_allennlp.patches import long_inputs


def packs(
    embedder: PretrainedTransformerEmbedder,
    token_ids: torch.LongTensor,
    mask: torch.BoolTensor,
    type_ids: Optional[torch.LongTensor],
) -> bool:
    """Whether this call of the embedder runs packed (see the module docstring)."""
    if torch.is_grad_enabled() or embedder.training or embedder._max_length is not None:
        return False
    if token_ids.device.type != "cpu" or long_inputs.window_limit(embedder, token_ids) is not None:
        return False
    if bool(mask.all()) or (type_ids is not None and bool(type_ids.any())):
        return False
    return supports_packing(embedder.transformer_model)


def embed_packed(
    embedder: PretrainedTransformerEmbedder, token_ids: torch.LongTensor, mask: torch.BoolTensor
) -> torch.Tensor:
    """What AllenNLP's forward returns without folding (the scalar mix of the layers, or the
    last one), computed by `packed_hidden_states`: `(batch_size, num_wordpieces, dim)`."""
    hidden_states = packed_hidden_states(embedder.transformer_model, token_ids, mask)
    if embedder._scalar_mix is not None:
        # The embedding layer's output is not in the scalar mix, as in AllenNLP's forward.
        return embedder._scalar_mix(hidden_states[1:])
    return hidden_states[-1]


def _forward(
    self: PretrainedTransformerEmbedder,
    token_ids: torch.LongTensor,
    mask: torch.BoolTensor,
    type_ids: Optional[torch.LongTensor] = None,
    segment_concat_mask: Optional[torch.BoolTensor] = None,
) -> torch.Tensor:
    if packs(self, token_ids, mask, type_ids):
        return embed_packed(self, token_ids, mask)
    return long_inputs._forward(self, token_ids, mask, type_ids, segment_concat_mask)


_forward.__doc__ = long_inputs.original_forward.__doc__


def pack_inference_batches() -> None:
    """Patch `PretrainedTransformerEmbedder.forward` once. Its other calls go on to the
    `long_inputs` patch's forward, which it therefore replaces as the method."""
    PretrainedTransformerEmbedder.forward = _forward
