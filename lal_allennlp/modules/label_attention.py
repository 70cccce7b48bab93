"""
The Label Attention Layer of Mrini et al. (2020), "Rethinking Self-Attention: Towards
Interpretability in Neural Parsing", sec. 2 (the layer), sec. 3.1 (its place on top of
partitioned self-attention) and sec. 4.2 (the ablations, each a constructor argument here).

Head `i` (one per label, `d_l` of them) has a learned query vector `q_i` instead of a query
matrix, and its own key and value matrices. Over the words `X` of a sentence:

    a_i = softmax(q_i K_i / sqrt(d)),  K_i = W_i^K X,  V_i = W_i^V X,  c_i = a_i V_i,

one attention distribution and one context vector per head and sentence. Each head's context
vector, projected back to the input dimension by a matrix shared by the heads, is added to every
word vector (one residual connection per head); the result is projected to `d_proj` by a shared
matrix and layer-normalised, and the heads are concatenated, so a word becomes
`d_l * d_proj` numbers whose `i`-th slice comes from head `i` (Figure 4). A position-wise
feed-forward layer may follow. With `partitioned=True` the keys, values and the context
projection are block-diagonal over the content and position halves of the input, as in Kitaev &
Klein (2018, sec. 3).
"""
import math
from typing import Optional

import torch
from allennlp.common.checks import ConfigurationError
from allennlp.modules.seq2seq_encoders.seq2seq_encoder import Seq2SeqEncoder

from lal_allennlp.modules.partitioned_transformer import (
    FeatureDropout,
    FeedForwardSublayer,
    HeadwiseProjection,
)
from lal_allennlp.modules.fast_dropout import FastDropout


@Seq2SeqEncoder.register("label_attention")
class LabelAttentionLayer(Seq2SeqEncoder):
    """
    A Label Attention Layer (Mrini et al. 2020, sec. 2). The defaults are the paper's best
    English setting: 112 heads, `d_kv = d_proj = 128`, query vectors, concatenated heads,
    position-wise feed-forward layer kept, no residual dropout on the heads, partitioned.

    The attention of every head is a softmax over all unmasked positions (for the span parser
    `[START] words [STOP]`, as in the authors' code). The last forward's attention
    probabilities (before dropout) are kept in `last_attention`: shape
    `(batch_size, num_heads, sequence_length)` with query vectors, zero at padding; with a
    query matrix `(batch_size, num_heads, query, key)`.

    Registered as a `Seq2SeqEncoder` with name "label_attention".

    # Parameters

    input_dim : `int`
        Dimension of the input word vectors (`d_model`; with `partitioned`, the first half is
        content and the second position, as `partitioned_transformer` produces).
    num_heads : `int`, optional (default = `112`)
        Number of label attention heads `d_l` (112 for English, one per syntactic category;
        64 for Chinese).
    d_kv : `int`, optional (default = `128`)
        Dimension of each head's query, key and value vectors.
    d_proj : `int`, optional (default = `128`)
        Dimension each head's word vectors are projected to before concatenation.
    query_vectors : `bool`, optional (default = `True`)
        One learned query vector per head. `False` is the ablation with a query matrix `W^Q_i`
        applied to every word as in self-attention: each word then gets its own context vector
        per head, added to that word only (Table 2, "QV").
    concatenate_heads : `bool`, optional (default = `True`)
        Concatenate the per-head word vectors (output `num_heads * d_proj`). `False` is the
        ablation that combines the heads as in self-attention (Table 2, "Conc."): the heads'
        context vectors are concatenated, projected to `input_dim` by one matrix, added to the
        input with one residual connection and layer-normalised (output `input_dim`; `d_proj`
        is unused).
    use_feed_forward : `bool`, optional (default = `True`)
        Add the position-wise feed-forward sublayer (Table 1, "PFL"). Without it, each head's
        slice of the output comes from that head only, which makes head contributions
        computable (Figure 6).
    d_ff : `int`, optional (default = `2048`)
        Hidden dimension of the feed-forward sublayer.
    partitioned : `bool`, optional (default = `True`)
        Compute keys, values and the context projection separately on the content and position
        halves of the input (Kitaev & Klein 2018, sec. 3), so `q . k = q_c . k_c + q_p . k_p`.
    attention_dropout : `float`, optional (default = `0.2`)
        Dropout on the attention probabilities.
    residual_dropout : `float`, optional (default = `0.0`)
        Feature dropout applied to each head's projected context vector before its residual
        addition (Table 1, "RD"); off in the best model. Zhou & Zhao (2019) use 0.2.
    relu_dropout : `float`, optional (default = `0.1`)
        Feature dropout on the feed-forward hidden layer.
    feed_forward_dropout : `float`, optional (default = `0.2`)
        Feature dropout on the feed-forward sublayer's output before its residual addition
        (the authors' code keeps it even when the heads' residual dropout is off).
    """

    def __init__(
        self,
        input_dim: int,
        num_heads: int = 112,
        d_kv: int = 128,
        d_proj: int = 128,
        query_vectors: bool = True,
        concatenate_heads: bool = True,
        use_feed_forward: bool = True,
        d_ff: int = 2048,
        partitioned: bool = True,
        attention_dropout: float = 0.2,
        residual_dropout: float = 0.0,
        relu_dropout: float = 0.1,
        feed_forward_dropout: float = 0.2,
    ) -> None:
        super().__init__()
        if partitioned and (input_dim % 2 or d_kv % 2):
            raise ConfigurationError(
                f"label_attention: with partitioned=True, input_dim ({input_dim}) and d_kv "
                f"({d_kv}) must be even (content and position halves)."
            )
        self.input_dim = input_dim
        self.num_heads = num_heads
        self.d_kv = d_kv
        self.d_proj = d_proj
        self.query_vectors = query_vectors
        self.concatenate_heads = concatenate_heads
        self.partitioned = partitioned
        self.residual_dropout = FeatureDropout(residual_dropout)
        self.output_dim = num_heads * d_proj if concatenate_heads else input_dim

        if query_vectors:
            # One query vector per head; [q_c ; q_p] when partitioned, so no separate halves.
            # shape (num_heads, d_kv)
            self.query = torch.nn.Parameter(torch.randn(num_heads, d_kv) / math.sqrt(d_kv))
        else:
            self.query_projection = HeadwiseProjection(input_dim, d_kv, num_heads, partitioned)
        self.key = HeadwiseProjection(input_dim, d_kv, num_heads, partitioned)
        self.value = HeadwiseProjection(input_dim, d_kv, num_heads, partitioned)
        self.dropout = FastDropout(attention_dropout)

        # Projection of the context vectors back to input_dim: shared by the heads when they
        # are concatenated, one matrix over all heads when combined as in self-attention.
        heads_in = 1 if concatenate_heads else num_heads
        if partitioned:
            self.context_content = torch.nn.Linear(
                heads_in * d_kv // 2, input_dim // 2, bias=False
            )
            self.context_position = torch.nn.Linear(
                heads_in * d_kv // 2, input_dim // 2, bias=False
            )
        else:
            self.context_projection = torch.nn.Linear(heads_in * d_kv, input_dim, bias=False)
        if concatenate_heads:
            self.reduce = torch.nn.Linear(input_dim, d_proj, bias=False)
            self.layer_norm = torch.nn.LayerNorm(d_proj)
        else:
            self.layer_norm = torch.nn.LayerNorm(input_dim)

        # After concatenation the content/position layout is gone, so the feed-forward layer
        # is never partitioned.
        self.feed_forward: Optional[FeedForwardSublayer] = None
        if use_feed_forward:
            self.feed_forward = FeedForwardSublayer(
                self.output_dim, d_ff, relu_dropout, feed_forward_dropout, partitioned=False
            )
        self.last_attention: Optional[torch.Tensor] = None

    def get_input_dim(self) -> int:
        return self.input_dim

    def get_output_dim(self) -> int:
        return self.output_dim

    def is_bidirectional(self) -> bool:
        return False

    @property
    def output_partitions(self) -> int:
        """Number of per-head slices in the output: the `span_partitions` a span parser should
        use (`num_heads` when the heads are concatenated, else 1)."""
        return self.num_heads if self.concatenate_heads else 1

    def attention_logits(self, inputs: torch.Tensor) -> torch.Tensor:
        """
        Scaled scores `q_i . k / sqrt(d_kv)` for `inputs` of shape
        `(batch_size, sequence_length, input_dim)`. Returns
        `(batch_size, num_heads, num_queries, sequence_length)`, `num_queries` being 1 with
        query vectors and `sequence_length` with a query matrix.
        """
        # shape (batch_size, num_heads, sequence_length, d_kv)
        keys = self.key(inputs)
        if self.query_vectors:
            # shape (1, num_heads, 1, d_kv)
            queries = self.query.unsqueeze(0).unsqueeze(2)
        else:
            # shape (batch_size, num_heads, sequence_length, d_kv)
            queries = self.query_projection(inputs)
        return torch.matmul(queries, keys.transpose(-1, -2)) / math.sqrt(self.d_kv)

    def _project_context(self, context: torch.Tensor) -> torch.Tensor:
        """`(..., heads_in * d_kv)` (the content and position halves of each head's context
        vector contiguous inside its slice) to `(..., input_dim)`."""
        if not self.partitioned:
            return self.context_projection(context)
        # shape (..., heads_in, d_kv)
        per_head = context.unflatten(-1, (-1, self.d_kv))
        content, position = per_head.chunk(2, dim=-1)
        return torch.cat(
            [
                self.context_content(content.flatten(-2)),
                self.context_position(position.flatten(-2)),
            ],
            dim=-1,
        )

    def forward(self, inputs: torch.Tensor, mask: torch.BoolTensor) -> torch.Tensor:
        """
        # Parameters

        inputs : `torch.Tensor`
            Shape `(batch_size, sequence_length, input_dim)`.
        mask : `torch.BoolTensor`
            Shape `(batch_size, sequence_length)`.

        # Returns

        `torch.Tensor` of shape `(batch_size, sequence_length, get_output_dim())`, zero at
        padded positions. With concatenated heads, `[..., i * d_proj:(i + 1) * d_proj]` is head
        `i`'s slice.
        """
        mask = mask.bool()
        batch_size, sequence_length, _ = inputs.shape
        if self.query_vectors:
            # The same attention and context vectors without any per-word keys or values:
            # q_i . (W_i^K x) = x . (W_i^K^T q_i), one column per head, and
            # sum_t a_it W_i^V x_t = W_i^V (sum_t a_it x_t). Per word this costs
            # input_dim * num_heads instead of 2 * input_dim * num_heads * d_kv.
            # shape (batch_size, num_heads, 1, sequence_length)
            logits = (
                torch.matmul(inputs, self.key.contract(self.query)) / math.sqrt(self.d_kv)
            ).transpose(1, 2).unsqueeze(2)
        else:
            # shape (batch_size, num_heads, sequence_length, sequence_length)
            logits = self.attention_logits(inputs)
        logits = logits.masked_fill(~mask[:, None, None, :], torch.finfo(logits.dtype).min)
        probabilities = torch.softmax(logits, dim=-1)
        self.last_attention = (
            probabilities.squeeze(2) if self.query_vectors else probabilities
        ).detach()
        if self.query_vectors:
            # shape (batch_size, num_heads, input_dim): each head's attention-weighted input
            pooled = torch.matmul(self.dropout(probabilities).squeeze(2), inputs)
            # shape (batch_size, num_heads, 1, d_kv)
            context = self.value.per_head(pooled).unsqueeze(2)
        else:
            # shape (batch_size, num_heads, sequence_length, d_kv)
            context = torch.matmul(self.dropout(probabilities), self.value(inputs))

        if self.concatenate_heads:
            # Per head: LayerNorm(W_reduce (x + dropout(W_context c_i))). W_reduce is linear and
            # bias-free, so it is applied to x and to the context separately; this avoids a
            # (batch, heads, length, input_dim) tensor.
            # shape (batch_size, num_heads, num_queries, input_dim)
            projected = self.residual_dropout(self._project_context(context))
            # shape (batch_size, num_heads, sequence_length, d_proj)
            per_head = self.reduce(inputs).unsqueeze(1) + self.reduce(projected)
            per_head = self.layer_norm(per_head)
            # shape (batch_size, sequence_length, num_heads * d_proj)
            output = per_head.transpose(1, 2).reshape(batch_size, sequence_length, -1)
        else:
            # shape (batch_size, num_queries, num_heads * d_kv)
            combined = context.transpose(1, 2).flatten(-2)
            # shape (batch_size, num_queries, input_dim)
            projected = self.residual_dropout(self._project_context(combined))
            # shape (batch_size, sequence_length, input_dim)
            output = self.layer_norm(inputs + projected)

        if self.feed_forward is not None:
            output = self.feed_forward(output)
        return output * mask.unsqueeze(-1)
