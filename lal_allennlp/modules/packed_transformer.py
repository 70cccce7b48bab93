"""
A BERT encoder run without its padding rows.

A batch of sentences goes through the transformer padded to its longest row of word pieces. In
a BERT layer only the self-attention mixes positions; the projections, the feed-forward layers
and the layer norms work on each position alone, and they are nearly all of the arithmetic.
`packed_hidden_states` therefore keeps only the real word pieces of the batch, one after the
other (`(word_pieces, hidden)` instead of `(batch, longest, hidden)`), for everything but the
attention, which gets the padded layout back for its queries, keys and values. Batches of
sentences of similar length in words still hold much padding, as their word piece counts
differ more than their word counts. The real positions' vectors are those of the padded
forward: the same operations on the same rows (`tests/modules/test_packed_transformer.py`).

Only plain BERT encoders (`BertModel`: BERT, MiniLM) with absolute positions, no decoder or
cross-attention and unchunked feed-forward layers qualify (`supports_packing`); other
transformers, and training, keep the padded forward.
"""
from typing import List, Optional

import torch
import torch.nn.functional as F
from transformers.models.bert.modeling_bert import BertLayer, BertModel, BertSelfAttention


def supports_packing(transformer: torch.nn.Module) -> bool:
    """Whether `packed_hidden_states` computes what `transformer`'s own forward does."""
    if type(transformer) is not BertModel:
        return False
    config = transformer.config
    if getattr(config, "position_embedding_type", "absolute") != "absolute":
        return False
    if config.is_decoder or getattr(config, "add_cross_attention", False):
        return False
    return all(
        type(layer) is BertLayer
        and layer.chunk_size_feed_forward == 0
        and isinstance(layer.attention.self, BertSelfAttention)
        for layer in transformer.encoder.layer
    )


def packed_hidden_states(
    transformer: BertModel,
    input_ids: torch.LongTensor,
    mask: torch.BoolTensor,
    token_type_ids: Optional[torch.LongTensor] = None,
) -> List[torch.Tensor]:
    """
    The hidden states of `transformer` (a `supports_packing` model, in eval mode) for
    `input_ids` `(batch, length)` with `mask` true on the real word pieces: the embeddings
    output, then each layer's output, each `(batch, length, hidden)`, as the model's
    `output_hidden_states` gives them, with zeros at the padding.
    """
    batch, length = input_ids.shape
    # shape (batch, length, hidden): positions and token types are per row, as unpacked
    embedded = transformer.embeddings(input_ids=input_ids, token_type_ids=token_type_ids)
    # the flat indices of the real word pieces in (batch * length)
    rows = mask.reshape(-1).nonzero().squeeze(1)

    def unpack(packed: torch.Tensor) -> torch.Tensor:
        # shape (batch * length, features), zeros at the padding
        padded = packed.new_zeros(batch * length, packed.size(-1))
        return padded.index_copy_(0, rows, packed)

    # shape (word_pieces, hidden)
    hidden = embedded.reshape(batch * length, -1).index_select(0, rows)
    states = [embedded.masked_fill(~mask.unsqueeze(-1), 0.0)]
    # shape (batch, 1, 1, length): every query may attend to the row's real word pieces
    key_mask = mask[:, None, None, :]
    for layer in transformer.encoder.layer:
        attention = layer.attention.self
        heads, head_size = attention.num_attention_heads, attention.attention_head_size

        def split_heads(projected: torch.Tensor) -> torch.Tensor:
            # shape (batch, heads, length, head_size)
            return unpack(projected).view(batch, length, heads, head_size).transpose(1, 2)

        query = split_heads(attention.query(hidden))
        key = split_heads(attention.key(hidden))
        value = split_heads(attention.value(hidden))
        context = F.scaled_dot_product_attention(query, key, value, attn_mask=key_mask)
        context = context.transpose(1, 2).reshape(batch * length, heads * head_size)
        context = context.index_select(0, rows)
        attention_output = layer.attention.output
        hidden = attention_output.LayerNorm(attention_output.dense(context) + hidden)
        intermediate = layer.intermediate.intermediate_act_fn(layer.intermediate.dense(hidden))
        output = layer.output
        hidden = output.LayerNorm(output.dense(intermediate) + hidden)
        states.append(unpack(hidden).view(batch, length, -1))
    return states
