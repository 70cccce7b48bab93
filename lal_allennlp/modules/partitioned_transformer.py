"""
The factored ("partitioned") self-attentive encoder of Kitaev & Klein (2018), "Constituency
Parsing with a Self-Attentive Encoder", sec. 2.1 (the transformer encoder with learned position
embeddings), sec. 3 (factoring content and position) and sec. 4.2 (windowed attention). It is
also the encoder below the Label Attention Layer in Mrini et al. (2020), "Rethinking
Self-Attention: Towards Interpretability in Neural Parsing", sec. 3.1.

Every vector is `x = [x_c ; x_p]`: a content half and a position half. Each token's input is
its content vector (the embedder's output projected to `d_model / 2` dimensions) concatenated
with a learned embedding of its position. All weight matrices are block-diagonal
(`W x = [W_c x_c ; W_p x_p]`), so in every head the query-key score has no cross terms,

    q . k = q_c . k_c + q_p . k_p,

and the feed-forward sublayers are partitioned the same way. With `partitioned=False` this is
the unfactored base model of sec. 2 (content and position embeddings added, full matrices);
with `partitioned=False, partition_input=True` the middle variant of sec. 3, factored only at
the input (content and position concatenated, full matrices in the layers).

Because the factored scores are a sum of a content term and a position term, either term can be
dropped from chosen layers at test time (`zero_content_attention`, `zero_position_attention`),
the ablation of sec. 3, Table 1.
"""
import math
from typing import FrozenSet, List, Optional, Sequence

import torch
from allennlp.common.checks import ConfigurationError
from allennlp.modules.seq2seq_encoders.seq2seq_encoder import Seq2SeqEncoder

from lal_allennlp.modules.fast_dropout import FastDropout, keep_mask
from lal_allennlp.modules.overlapping_windows import plan_windows

WINDOW_MODES = ("strict", "relaxed")


class FeatureDropout(torch.nn.Dropout):
    """
    Dropout of whole features (Kitaev & Klein 2018): one mask per sequence, shared by all of
    its positions. Inputs have shape `(..., sequence_length, dim)`; the mask has shape
    `(..., 1, dim)`.
    """

    def forward(self, inputs: torch.Tensor) -> torch.Tensor:
        if not self.training or self.p == 0.0:
            return inputs
        mask_shape = list(inputs.shape)
        mask_shape[-2] = 1
        return inputs * keep_mask(mask_shape, self.p, inputs)


def attention_key_mask(
    mask: torch.BoolTensor, attention_window: Optional[int], window_mode: str
) -> torch.BoolTensor:
    """
    Which keys each query may attend to (Kitaev & Klein 2018, sec. 4.2).

    # Parameters

    mask : `torch.BoolTensor`
        Shape `(batch_size, sequence_length)`, true on `[START] words [STOP]`.
    attention_window : `int`, optional
        With `None` every real position is visible. Otherwise query `i` sees key `j` only when
        `|i - j| <= attention_window` ("strict"); "relaxed" also always shows the START token,
        the first word, the last word and the STOP token.
    window_mode : `str`
        "strict" or "relaxed".

    # Returns

    `torch.BoolTensor` of shape `(batch_size, 1, sequence_length)` without a window, else
    `(batch_size, sequence_length, sequence_length)` (query, key).
    """
    # shape (batch_size, 1, sequence_length)
    allowed = mask.unsqueeze(1)
    if attention_window is None:
        return allowed
    positions = torch.arange(mask.size(1), device=mask.device)
    # shape (1, sequence_length, sequence_length)
    distance = (positions.unsqueeze(1) - positions.unsqueeze(0)).abs()
    near = (distance <= attention_window).unsqueeze(0)
    if window_mode == "relaxed":
        # shape (batch_size, 1): index of each sentence's STOP token
        stop = (mask.sum(dim=1) - 1).unsqueeze(1)
        # shape (batch_size, sequence_length): START, first word, last word, STOP
        first = (positions <= 1).unsqueeze(0)
        last = (positions.unsqueeze(0) >= stop - 1) & (positions.unsqueeze(0) <= stop)
        always = first | last
        near = near | always.unsqueeze(1)
    return near & allowed


class HeadwiseProjection(torch.nn.Module):
    """
    One bias-free linear map per attention head, block-diagonal over the content and position
    halves when `partitioned`: head `h` maps `[x_c ; x_p]` to `[W_hc x_c ; W_hp x_p]`.

    Input `(batch_size, sequence_length, input_dim)`, output
    `(batch_size, num_heads, sequence_length, output_dim)`.
    """

    def __init__(self, input_dim: int, output_dim: int, num_heads: int, partitioned: bool):
        super().__init__()
        self.partitioned = partitioned
        if partitioned:
            self.weight_content = torch.nn.Parameter(
                self._init(num_heads, input_dim // 2, output_dim // 2)
            )
            self.weight_position = torch.nn.Parameter(
                self._init(num_heads, input_dim // 2, output_dim // 2)
            )
        else:
            self.weight = torch.nn.Parameter(self._init(num_heads, input_dim, output_dim))

    @staticmethod
    def _init(num_heads: int, fan_in: int, fan_out: int) -> torch.Tensor:
        # Xavier-normal for each head's (fan_in, fan_out) matrix.
        return torch.randn(num_heads, fan_in, fan_out) * math.sqrt(2.0 / (fan_in + fan_out))

    def per_head(self, inputs: torch.Tensor) -> torch.Tensor:
        """Head `h`'s map applied to `inputs[:, h]` only: `(batch_size, num_heads, input_dim)`
        to `(batch_size, num_heads, output_dim)`."""
        return self._headwise("bhf,hfa->bha", inputs)

    def contract(self, vectors: torch.Tensor) -> torch.Tensor:
        """`W_h v_h` for one vector per head, `(num_heads, output_dim)`, as an
        `(input_dim, num_heads)` matrix: `x . (W_h v_h)` is `(W_h^T x) . v_h`, the head's
        projection of `x` dotted with `v_h`, for all heads in one product with `x`."""
        if not self.partitioned:
            return torch.einsum("hfa,ha->fh", self.weight, vectors)
        content, position = vectors.chunk(2, dim=-1)
        return torch.cat(
            [
                torch.einsum("hfa,ha->fh", self.weight_content, content),
                torch.einsum("hfa,ha->fh", self.weight_position, position),
            ],
            dim=0,
        )

    def forward(self, inputs: torch.Tensor) -> torch.Tensor:
        # shape (batch_size, num_heads, sequence_length, output_dim)
        return self._headwise("btf,hfa->bhta", inputs)

    def _headwise(self, equation: str, inputs: torch.Tensor) -> torch.Tensor:
        """`einsum(equation, inputs, weight)`, per half (then concatenated) when partitioned."""
        if not self.partitioned:
            return torch.einsum(equation, inputs, self.weight)
        content, position = inputs.chunk(2, dim=-1)
        return torch.cat(
            [
                torch.einsum(equation, content, self.weight_content),
                torch.einsum(equation, position, self.weight_position),
            ],
            dim=-1,
        )


class PartitionedSelfAttention(torch.nn.Module):
    """
    Multi-head scaled dot-product self-attention with block-diagonal (partitioned) query, key,
    value and output projections (Kitaev & Klein 2018, sec. 3). The softmax is scaled by
    `1 / sqrt(d_kv)` (Vaswani et al. 2017). The last forward's attention probabilities, before
    dropout, are kept in `last_attention`, shape `(batch_size, num_heads, query, key)`.

    `zero_content` and `zero_position` (partitioned only) drop the term `q_c . k_c`, resp.
    `q_p . k_p`, from the scores (Kitaev & Klein 2018, sec. 3, Table 1). The remaining term keeps
    its `1 / sqrt(d_kv)` scale, so it is exactly what the trained layer adds to the scores; with
    both dropped the scores are zero and each query attends uniformly to the keys it may see.
    They are plain attributes, not parameters or buffers: a trained model's weights load
    whatever they are.
    """

    def __init__(
        self,
        d_model: int,
        num_heads: int,
        d_kv: int,
        attention_dropout: float,
        partitioned: bool,
        zero_content: bool = False,
        zero_position: bool = False,
    ) -> None:
        super().__init__()
        if (zero_content or zero_position) and not partitioned:
            raise ConfigurationError(
                "PartitionedSelfAttention: zero_content and zero_position drop a half of the "
                "factored scores, which exist only with partitioned=True."
            )
        self.num_heads = num_heads
        self.d_kv = d_kv
        self.partitioned = partitioned
        self.zero_content = zero_content
        self.zero_position = zero_position
        self.query = HeadwiseProjection(d_model, d_kv, num_heads, partitioned)
        self.key = HeadwiseProjection(d_model, d_kv, num_heads, partitioned)
        self.value = HeadwiseProjection(d_model, d_kv, num_heads, partitioned)
        if partitioned:
            self.output_content = torch.nn.Linear(num_heads * d_kv // 2, d_model // 2, bias=False)
            self.output_position = torch.nn.Linear(num_heads * d_kv // 2, d_model // 2, bias=False)
        else:
            self.output = torch.nn.Linear(num_heads * d_kv, d_model, bias=False)
        self.dropout = FastDropout(attention_dropout)
        self.last_attention: Optional[torch.Tensor] = None

    def attention_logits(self, inputs: torch.Tensor) -> torch.Tensor:
        """Scaled scores `q . k / sqrt(d_kv)`, shape `(batch_size, num_heads, query, key)`;
        without the content or position term where `zero_content` or `zero_position` is set."""
        # shape (batch_size, num_heads, sequence_length, d_kv)
        queries = self.query(inputs)
        keys = self.key(inputs)
        if self.zero_content or self.zero_position:
            return self._ablated_logits(queries, keys)
        return torch.matmul(queries, keys.transpose(-1, -2)) / math.sqrt(self.d_kv)

    def _ablated_logits(self, queries: torch.Tensor, keys: torch.Tensor) -> torch.Tensor:
        """The scores from the halves of `queries` and `keys`
        (`(batch_size, num_heads, sequence_length, d_kv)`, `[content ; position]`) whose term is
        kept: `q_p . k_p / sqrt(d_kv)` without content, `q_c . k_c / sqrt(d_kv)` without
        position, zero without both."""
        if self.zero_content and self.zero_position:
            # shape (batch_size, num_heads, sequence_length, sequence_length)
            return queries.new_zeros(queries.shape[:-1] + keys.shape[-2:-1])
        kept = 1 if self.zero_content else 0
        # shape (batch_size, num_heads, sequence_length, d_kv / 2)
        queries = queries.chunk(2, dim=-1)[kept]
        keys = keys.chunk(2, dim=-1)[kept]
        return torch.matmul(queries, keys.transpose(-1, -2)) / math.sqrt(self.d_kv)

    def forward(self, inputs: torch.Tensor, allowed: torch.BoolTensor) -> torch.Tensor:
        """
        `inputs`: `(batch_size, sequence_length, d_model)`; `allowed`: the key mask from
        `attention_key_mask`. Returns `(batch_size, sequence_length, d_model)`.
        """
        batch_size, sequence_length, _ = inputs.shape
        # shape (batch_size, num_heads, sequence_length, sequence_length)
        logits = self.attention_logits(inputs)
        logits = logits.masked_fill(~allowed.unsqueeze(1), torch.finfo(logits.dtype).min)
        probabilities = torch.softmax(logits, dim=-1)
        self.last_attention = probabilities.detach()
        # shape (batch_size, num_heads, sequence_length, d_kv)
        context = torch.matmul(self.dropout(probabilities), self.value(inputs))
        # shape (batch_size, sequence_length, num_heads, d_kv)
        context = context.transpose(1, 2)
        if not self.partitioned:
            return self.output(context.reshape(batch_size, sequence_length, -1))
        content, position = context.chunk(2, dim=-1)
        # shape (batch_size, sequence_length, d_model)
        return torch.cat(
            [
                self.output_content(content.reshape(batch_size, sequence_length, -1)),
                self.output_position(position.reshape(batch_size, sequence_length, -1)),
            ],
            dim=-1,
        )


class FeedForwardSublayer(torch.nn.Module):
    """
    `LayerNorm(x + dropout(W_2 dropout(relu(W_1 x + b_1)) + b_2))`, partitioned into content
    and position halves when `partitioned` (Kitaev & Klein 2018, sec. 3). The dropouts are
    feature dropouts; the layer norm is over the whole vector, as in the authors' code.
    """

    def __init__(
        self,
        d_model: int,
        d_ff: int,
        relu_dropout: float,
        residual_dropout: float,
        partitioned: bool,
    ) -> None:
        super().__init__()
        self.partitioned = partitioned
        self.relu_dropout = FeatureDropout(relu_dropout)
        self.residual_dropout = FeatureDropout(residual_dropout)
        if partitioned:
            self.hidden_content = torch.nn.Linear(d_model // 2, d_ff // 2)
            self.hidden_position = torch.nn.Linear(d_model // 2, d_ff // 2)
            self.output_content = torch.nn.Linear(d_ff // 2, d_model // 2)
            self.output_position = torch.nn.Linear(d_ff // 2, d_model // 2)
        else:
            self.hidden = torch.nn.Linear(d_model, d_ff)
            self.output = torch.nn.Linear(d_ff, d_model)
        self.layer_norm = torch.nn.LayerNorm(d_model)

    def _feed_forward(
        self, inputs: torch.Tensor, hidden: torch.nn.Linear, output: torch.nn.Linear
    ) -> torch.Tensor:
        activated = torch.relu(hidden(inputs))
        return output(self.relu_dropout(activated))

    def forward(self, inputs: torch.Tensor) -> torch.Tensor:
        """`inputs` and output: `(batch_size, sequence_length, d_model)`."""
        if self.partitioned:
            content, position = inputs.chunk(2, dim=-1)
            residual = torch.cat(
                [
                    self._feed_forward(content, self.hidden_content, self.output_content),
                    self._feed_forward(position, self.hidden_position, self.output_position),
                ],
                dim=-1,
            )
        else:
            residual = self._feed_forward(inputs, self.hidden, self.output)
        residual = self.residual_dropout(residual)
        return self.layer_norm(inputs + residual)


class PartitionedTransformerLayer(torch.nn.Module):
    """One encoder layer: self-attention and feed-forward sublayers, each with a residual
    connection, feature dropout and layer normalisation (post-norm, as in the papers)."""

    def __init__(
        self,
        d_model: int,
        num_heads: int,
        d_kv: int,
        d_ff: int,
        attention_dropout: float,
        relu_dropout: float,
        residual_dropout: float,
        partitioned: bool,
        zero_content: bool = False,
        zero_position: bool = False,
    ) -> None:
        super().__init__()
        self.attention = PartitionedSelfAttention(
            d_model, num_heads, d_kv, attention_dropout, partitioned, zero_content, zero_position
        )
        self.residual_dropout = FeatureDropout(residual_dropout)
        self.attention_norm = torch.nn.LayerNorm(d_model)
        self.feed_forward = FeedForwardSublayer(
            d_model, d_ff, relu_dropout, residual_dropout, partitioned
        )

    def forward(self, inputs: torch.Tensor, allowed: torch.BoolTensor) -> torch.Tensor:
        residual = self.residual_dropout(self.attention(inputs, allowed))
        return self.feed_forward(self.attention_norm(inputs + residual))


@Seq2SeqEncoder.register("partitioned_transformer")
class PartitionedTransformerEncoder(Seq2SeqEncoder):
    """
    The factored self-attentive encoder of Kitaev & Klein (2018, sec. 3), with learned position
    embeddings and optional windowed attention (sec. 4.2).

    The input (for the span parser: the embedder's vectors for `[START] words [STOP]`) is
    projected by a bias-free linear layer to the content half (`d_model / 2`); a learned
    embedding of each position (0 is START) is the position half. The concatenation
    `[content ; position]` is layer-normalised and passed through `num_layers` layers. The output
    keeps that layout, `[content ; position]`, of dimension `d_model`, and is zero at padding.

    Sec. 3 compares three degrees of factoring (PTB dev F1, WSJ 22, no pretraining):

    | `partitioned` | `partition_input` | input                        | layers          | F1    |
    |---------------|-------------------|------------------------------|-----------------|-------|
    | `False`       | `False`           | content + position (summed)  | dense           | 92.67 |
    | `False`       | `True`            | [content ; position]         | dense           | 92.60 |
    | `True`        | `True`            | [content ; position]         | block-diagonal  | 93.15 |

    Concatenating at the input alone gains nothing (the dense layers mix the two halves in
    their first projection); the gain comes from keeping them apart in every layer.
    `partitioned=True, partition_input=False` does not exist (block-diagonal layers need the
    two halves) and is refused.

    The attention ablation of sec. 3, Table 1 (`zero_content_attention`,
    `zero_position_attention`) and the attention window of sec. 4.2 (`attention_window`,
    `window_mode`) have no parameters, so they can be set at test time on a model trained
    without them, through the archive's overrides (dotted keys: in AllenNLP's overrides a nested
    object replaces the whole section; a dotted key that the stored config lacks is added):

    ```bash
    allennlp evaluate model.tar.gz dev.trees \\
        --overrides '{"model.encoder.zero_content_attention": [1, 2]}'
    ```

    Registered as a `Seq2SeqEncoder` with name "partitioned_transformer".

    # Parameters

    input_dim : `int`
        Dimension of the input vectors (the embedder's output dimension).
    d_model : `int`, optional (default = `1024`)
        Dimension of every layer's vectors, content and position halves together (Kitaev &
        Klein and Mrini et al. use 1024: 512 content + 512 position).
    num_layers : `int`, optional (default = `8`)
        Kitaev & Klein use 8 (4 with ELMo); the Label Attention Layer paper uses 3.
    num_heads : `int`, optional (default = `8`)
    d_kv : `int`, optional (default = `64`)
        Dimension of each head's queries, keys and values (half content, half position when
        partitioned).
    d_ff : `int`, optional (default = `2048`)
        Hidden dimension of the feed-forward sublayers (half per partition).
    max_len : `int`, optional (default = `512`)
        Number of learned position embeddings. A longer input (START and STOP included) is
        encoded in overlapping windows of `max_len` positions, each `START words STOP` like a
        sentence within the limit, and each word takes its vector from the window in which it
        is farthest from a cut (`lal_allennlp.modules.overlapping_windows`): every position
        vector stays one the model learned, and a word sees at least a quarter of a window of
        context on each side. Inputs within the limit are encoded in one piece.
    attention_dropout : `float`, optional (default = `0.2`)
        Dropout on the attention probabilities.
    relu_dropout : `float`, optional (default = `0.1`)
        Feature dropout on the feed-forward hidden layer.
    residual_dropout : `float`, optional (default = `0.2`)
        Feature dropout on each sublayer's output before the residual addition.
    partitioned : `bool`, optional (default = `True`)
        Factor content and position in every layer (sec. 3): block-diagonal attention and
        feed-forward matrices. `False` gives dense layers; the input is then as
        `partition_input` says.
    partition_input : `bool`, optional (default = `None`)
        Whether the input is `[content ; position]` (each `d_model / 2`, concatenated) rather
        than their sum (each `d_model`, the unfactored model of sec. 2). `None` means the same
        as `partitioned`. `True` with `partitioned=False` is the model factored only at the
        input; `False` with `partitioned=True` is refused.
    attention_window : `int`, optional (default = `None`)
        If set, a query attends only to keys at most this many positions away (sec. 4.2). A
        window of at least the number of positions minus one (START and STOP included) is
        the same as none.
    window_mode : `str`, optional (default = `"strict"`)
        "strict", or "relaxed": the START token, the first word, the last word and the STOP
        token stay visible to every query (sec. 4.2).
    zero_content_attention : `List[int]`, optional (default = `()`)
        Layers, numbered from 1 as in the paper, whose attention scores lose their content term
        `q_c . k_c`: each of their queries then chooses keys by position alone (Table 1).
        Needs `partitioned=True`.
    zero_position_attention : `List[int]`, optional (default = `()`)
        Layers, numbered from 1, whose attention scores lose their position term `q_p . k_p`
        (Table 1). Needs `partitioned=True`. A layer in both lists attends uniformly to every
        key it may see.
    """

    def __init__(
        self,
        input_dim: int,
        d_model: int = 1024,
        num_layers: int = 8,
        num_heads: int = 8,
        d_kv: int = 64,
        d_ff: int = 2048,
        max_len: int = 512,
        attention_dropout: float = 0.2,
        relu_dropout: float = 0.1,
        residual_dropout: float = 0.2,
        partitioned: bool = True,
        partition_input: Optional[bool] = None,
        attention_window: Optional[int] = None,
        window_mode: str = "strict",
        zero_content_attention: List[int] = (),  # type: ignore[assignment]
        zero_position_attention: List[int] = (),  # type: ignore[assignment]
    ) -> None:
        super().__init__()
        if partition_input is None:
            partition_input = partitioned
        if partitioned and not partition_input:
            raise ConfigurationError(
                "partitioned_transformer: partitioned=True needs the input factored too; "
                "partition_input=False is only possible with partitioned=False (the unfactored "
                "model). Leave partition_input out, or set partitioned=False."
            )
        if partitioned and (d_model % 2 or d_kv % 2 or d_ff % 2):
            raise ConfigurationError(
                f"partitioned_transformer: with partitioned=True, d_model ({d_model}), d_kv "
                f"({d_kv}) and d_ff ({d_ff}) must be even (content and position halves)."
            )
        if partition_input and d_model % 2:
            raise ConfigurationError(
                f"partitioned_transformer: with partition_input=True, d_model ({d_model}) must "
                f"be even (content and position halves)."
            )
        zero_content = self._ablated_layers(
            "zero_content_attention", zero_content_attention, num_layers, partitioned
        )
        zero_position = self._ablated_layers(
            "zero_position_attention", zero_position_attention, num_layers, partitioned
        )
        if window_mode not in WINDOW_MODES:
            raise ConfigurationError(
                f"partitioned_transformer: window_mode must be one of {WINDOW_MODES}, "
                f"not {window_mode!r}."
            )
        if attention_window is not None and attention_window < 0:
            raise ConfigurationError(
                f"partitioned_transformer: attention_window must be >= 0 or null, "
                f"not {attention_window}."
            )
        self.input_dim = input_dim
        self.d_model = d_model
        self.max_len = max_len
        self.partitioned = partitioned
        self.partition_input = partition_input
        self.attention_window = attention_window
        self.window_mode = window_mode
        half_or_all = d_model // 2 if partition_input else d_model
        self.content_projection = torch.nn.Linear(input_dim, half_or_all, bias=False)
        self.position_embeddings = torch.nn.Parameter(torch.randn(max_len, half_or_all))
        self.input_norm = torch.nn.LayerNorm(d_model)
        self.layers = torch.nn.ModuleList(
            [
                PartitionedTransformerLayer(
                    d_model,
                    num_heads,
                    d_kv,
                    d_ff,
                    attention_dropout,
                    relu_dropout,
                    residual_dropout,
                    partitioned,
                    zero_content=number in zero_content,
                    zero_position=number in zero_position,
                )
                for number in range(1, num_layers + 1)
            ]
        )

    @staticmethod
    def _ablated_layers(
        name: str, layers: Sequence[int], num_layers: int, partitioned: bool
    ) -> FrozenSet[int]:
        """The layer numbers of an ablation argument, checked: 1 .. `num_layers`, and only for
        partitioned attention (the unfactored scores have no content and position terms)."""
        layers = frozenset(layers)
        if not layers:
            return layers
        if not partitioned:
            raise ConfigurationError(
                f"partitioned_transformer: {name} = {sorted(layers)} drops a term of the "
                f"factored attention scores q_c . k_c + q_p . k_p, which exist only with "
                f"partitioned=True; this encoder has partitioned=False. Remove {name}."
            )
        outside = sorted(k for k in layers if isinstance(k, bool) or not 1 <= k <= num_layers)
        if outside:
            raise ConfigurationError(
                f"partitioned_transformer: {name} names layer(s) {outside}, but the layers are "
                f"numbered 1 .. {num_layers} (num_layers = {num_layers}; the first is 1, as in "
                f"Kitaev & Klein 2018, Table 1)."
            )
        return layers

    def get_input_dim(self) -> int:
        return self.input_dim

    def get_output_dim(self) -> int:
        return self.d_model

    def is_bidirectional(self) -> bool:
        return False

    def embed(self, inputs: torch.Tensor) -> torch.Tensor:
        """Layer-normalised `[content ; position]` (or their sum when the input is not
        partitioned) for `inputs` of shape `(batch_size, sequence_length, input_dim)`."""
        batch_size, sequence_length, _ = inputs.shape
        if sequence_length > self.max_len:
            raise ValueError(
                f"partitioned_transformer: a batch has {sequence_length} positions (START and "
                f"STOP included) but only max_len = {self.max_len} position embeddings exist; "
                f"raise max_len in the encoder config or filter long sentences."
            )
        # shape (batch_size, sequence_length, d_model / 2), or d_model if not partition_input
        content = self.content_projection(inputs)
        position = self.position_embeddings[:sequence_length].unsqueeze(0)
        if self.partition_input:
            position = position.expand(batch_size, -1, -1)
            # shape (batch_size, sequence_length, d_model)
            return self.input_norm(torch.cat([content, position], dim=-1))
        return self.input_norm(content + position)

    def forward(self, inputs: torch.Tensor, mask: torch.BoolTensor) -> torch.Tensor:
        """
        # Parameters

        inputs : `torch.Tensor`
            Shape `(batch_size, sequence_length, input_dim)`.
        mask : `torch.BoolTensor`
            Shape `(batch_size, sequence_length)`.

        # Returns

        `torch.Tensor` of shape `(batch_size, sequence_length, d_model)`, `[content ; position]`
        when partitioned, zero at padded positions.
        """
        mask = mask.bool()
        if inputs.size(1) > self.max_len:
            return self._forward_in_windows(inputs, mask)
        allowed = attention_key_mask(mask, self.attention_window, self.window_mode)
        # shape (batch_size, sequence_length, d_model)
        encoded = self.embed(inputs)
        for layer in self.layers:
            encoded = layer(encoded, allowed)
        return encoded * mask.unsqueeze(-1)

    def _forward_in_windows(self, inputs: torch.Tensor, mask: torch.BoolTensor) -> torch.Tensor:
        """`forward` for inputs longer than `max_len`: each row's START and STOP around every
        window of its words, the windows encoded as one batch, then stitched back."""
        plan = plan_windows(mask, self.max_len, num_start=1, num_end=1)
        # shape (num_windows, window_positions, d_model)
        encoded = self.forward(plan.fold(inputs), plan.window_mask)
        # The attention weights are the windows', not the batch's.
        for layer in self.layers:
            layer.attention.last_attention = None
        # shape (batch_size, sequence_length, d_model), zero at padding
        return plan.unfold(encoded)

    def get_attention_weights(self) -> List[Optional[torch.Tensor]]:
        """Per layer, the last forward's attention probabilities (before dropout), each of shape
        `(batch_size, num_heads, query, key)`; `None` before the first forward and after a
        forward in windows (an input longer than `max_len`)."""
        return [layer.attention.last_attention for layer in self.layers]
