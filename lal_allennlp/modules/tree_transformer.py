"""
The Tree Transformer encoder (Wang, Lee & Chen 2019): self-attention whose probabilities are
multiplied by a constituent prior, `E = C ⊙ softmax(QK^T / √d_k)`.

Each layer first computes link probabilities `a_k`, the probability that words `k` and `k+1`
are in the same constituent, from a "neighbouring attention" in which a word's query meets only
its two neighbours' keys. Links only grow with depth (the hierarchical constraint), so lower
layers see small constituents and higher layers large ones; the prior `C[i, j]` is the product
of the links between `i` and `j`. The links of every layer are what an unsupervised parser reads
trees from (`lal_allennlp.syntax.unsupervised.induce_spans`).
"""
import math
from typing import List, Optional, Tuple

import torch
from allennlp.common.checks import ConfigurationError
from allennlp.modules.seq2seq_encoders.seq2seq_encoder import Seq2SeqEncoder

# Added under the square root of the new links (whose gradient is infinite at 0), and the floor
# of links before their logarithm is taken: a link of 0 (between a word and padding) would
# otherwise make the prior's log-space sums -inf - -inf.
LINK_FLOOR = 1e-9

POSITIONAL_ENCODINGS = ("sinusoidal", "none")


def constituent_prior(links: torch.Tensor, diagonal: float = 1.0) -> torch.Tensor:
    """
    `C[i, j] = Π_{k=min(i,j)}^{max(i,j)-1} a_k` for link probabilities `a` of shape
    `(batch_size, sequence_length - 1)`; returns shape `(batch_size, sequence_length,
    sequence_length)`, symmetric, with `C[i, i] = diagonal` (the empty product is 1).

    Computed in log space without an `n × n × n` tensor: with `L_j = Σ_{k<j} log a_k`, a
    non-increasing cumulative sum, `C[i, j] = exp(-|L_i - L_j|)`.
    """
    log_links = links.float().clamp(min=LINK_FLOOR).log()
    # shape (batch_size, sequence_length): L_0 = 0, L_j = log a_0 + ... + log a_{j-1}
    cumulative = torch.nn.functional.pad(log_links.cumsum(-1), (1, 0))
    prior = torch.exp(-(cumulative.unsqueeze(-1) - cumulative.unsqueeze(-2)).abs())
    if diagonal != 1.0:
        eye = torch.eye(prior.size(-1), dtype=torch.bool, device=prior.device)
        prior = prior.masked_fill(eye, diagonal)
    return prior.to(links.dtype)


class ConstituentAttention(torch.nn.Module):
    """
    One layer's link probabilities (the paper's "constituent attention module", sec. 3.1).

    Each word `i` scores its right and left neighbours, `s_{i,i±1} = q_i · k_{i±1} / scale`,
    and a softmax over those two gives `p_{i,i+1}` and `p_{i,i-1}` (a word with one neighbour,
    the first or the last, gives it probability 1). The new link between `i` and `i+1` is
    `â_i = sqrt(p_{i,i+1} · p_{i+1,i})`: both words must want each other. With the previous
    layer's links `a^{l-1}` (zero below the first layer), `a^l = a^{l-1} + (1 - a^{l-1}) â^l`.
    Only the `n - 1` neighbour scores are computed, not an `n × n` score matrix.
    """

    def __init__(self, d_model: int, score_scale: Optional[float], link_layer_norm: bool):
        super().__init__()
        self.query = torch.nn.Linear(d_model, d_model)
        self.key = torch.nn.Linear(d_model, d_model)
        self.norm = torch.nn.LayerNorm(d_model) if link_layer_norm else None
        self.score_scale = score_scale if score_scale is not None else d_model / 2

    def forward(
        self, inputs: torch.Tensor, mask: torch.BoolTensor, previous_links: torch.Tensor
    ) -> torch.Tensor:
        """`inputs` `(batch, n, d_model)`, `mask` `(batch, n)`, `previous_links` `(batch,
        n - 1)`; returns this layer's links `(batch, n - 1)`, zero wherever either word of the
        pair is padding."""
        if self.norm is not None:
            inputs = self.norm(inputs)
        query = self.query(inputs)
        key = self.key(inputs)
        # shape (batch, n - 1): word i's score for i+1, and word i+1's score for i
        right = (query[:, :-1] * key[:, 1:]).sum(-1) / self.score_scale
        left = (query[:, 1:] * key[:, :-1]).sum(-1) / self.score_scale
        # Word i chooses between i+1 (score right[i]) and i-1 (score left[i-1]); a missing
        # neighbour (before the first word, or padding after the last) gets -inf.
        pair_mask = mask[:, 1:] & mask[:, :-1]
        blocked = torch.full_like(right[:, :1], -math.inf)
        right_choice = torch.cat([right.masked_fill(~pair_mask, -math.inf), blocked], dim=-1)
        left_choice = torch.cat([blocked, left.masked_fill(~pair_mask, -math.inf)], dim=-1)
        # shape (batch, n, 2); a word with no neighbour at all (a one-word sentence, padding)
        # has two -inf scores: its probabilities are set to zero instead of NaN.
        choice = torch.stack([right_choice, left_choice], dim=-1)
        alone = torch.isinf(choice).all(-1, keepdim=True)
        probabilities = torch.softmax(choice.masked_fill(alone, 0.0), dim=-1)
        probabilities = probabilities.masked_fill(alone, 0.0)
        # p_{i,i+1} of word i and p_{i+1,i} of word i+1
        to_right = probabilities[:, :-1, 0]
        to_left = probabilities[:, 1:, 1]
        # The floor keeps the square root's gradient finite where a probability is 0.
        new_links = torch.sqrt(to_right * to_left + LINK_FLOOR)
        links = previous_links + (1.0 - previous_links) * new_links
        return links * pair_mask


class TreeAttention(torch.nn.Module):
    """Multi-head self-attention whose probabilities are multiplied by the constituent prior
    (the same prior for every head)."""

    def __init__(
        self, d_model: int, num_heads: int, dropout: float, renormalise: bool
    ) -> None:
        super().__init__()
        if d_model % num_heads:
            raise ConfigurationError(
                f"tree_transformer: d_model ({d_model}) must be a multiple of num_heads "
                f"({num_heads})."
            )
        self.num_heads = num_heads
        self.d_k = d_model // num_heads
        self.qkv = torch.nn.Linear(d_model, 3 * d_model)
        self.output = torch.nn.Linear(d_model, d_model)
        self.dropout = torch.nn.Dropout(dropout)
        self.renormalise = renormalise

    def forward(
        self, inputs: torch.Tensor, mask: torch.BoolTensor, prior: Optional[torch.Tensor]
    ) -> torch.Tensor:
        """`prior` `(batch, n, n)`, or None for plain self-attention."""
        batch_size, length, d_model = inputs.shape
        # shape (3, batch, heads, n, d_k)
        qkv = self.qkv(inputs).view(batch_size, length, 3, self.num_heads, self.d_k)
        query, key, value = qkv.permute(2, 0, 3, 1, 4)
        scores = query @ key.transpose(-1, -2) / math.sqrt(self.d_k)
        scores = scores.masked_fill(~mask[:, None, None, :], -math.inf)
        # shape (batch, heads, n, n)
        attention = torch.softmax(scores, dim=-1)
        if prior is not None:
            attention = attention * prior.unsqueeze(1)
        if self.renormalise:
            attention = attention / attention.sum(-1, keepdim=True).clamp(min=LINK_FLOOR)
        context = self.dropout(attention) @ value
        return self.output(context.transpose(1, 2).reshape(batch_size, length, d_model))


class TreeTransformerLayer(torch.nn.Module):
    """Pre-norm layer: links → prior → tree attention, then a GELU feed-forward; each sublayer
    is added to its input after dropout. Without `constituent_prior` the layer has no link
    scorer and its attention is plain self-attention; the links pass through unchanged."""

    def __init__(
        self,
        d_model: int,
        num_heads: int,
        d_ff: int,
        dropout: float,
        score_scale: Optional[float],
        link_layer_norm: bool,
        diagonal: float,
        renormalise: bool,
        constituent_prior: bool = True,
    ) -> None:
        super().__init__()
        self.constituents = (
            ConstituentAttention(d_model, score_scale, link_layer_norm)
            if constituent_prior
            else None
        )
        self.attention = TreeAttention(d_model, num_heads, dropout, renormalise)
        self.feed_forward = torch.nn.Sequential(
            torch.nn.Linear(d_model, d_ff),
            torch.nn.GELU(),
            torch.nn.Dropout(dropout),
            torch.nn.Linear(d_ff, d_model),
        )
        self.attention_norm = torch.nn.LayerNorm(d_model)
        self.feed_forward_norm = torch.nn.LayerNorm(d_model)
        self.dropout = torch.nn.Dropout(dropout)
        self.diagonal = diagonal

    def forward(
        self, inputs: torch.Tensor, mask: torch.BoolTensor, previous_links: torch.Tensor
    ) -> Tuple[torch.Tensor, torch.Tensor]:
        normed = self.attention_norm(inputs)
        links, prior = previous_links, None
        if self.constituents is not None:
            # The link scorer reads the attention's pre-normed input, or with its own LayerNorm
            # (`link_layer_norm`, as the authors' code) the layer's raw input.
            own_norm = self.constituents.norm is not None
            links = self.constituents(inputs if own_norm else normed, mask, previous_links)
            prior = constituent_prior(links, self.diagonal)
        outputs = inputs + self.dropout(self.attention(normed, mask, prior))
        outputs = outputs + self.dropout(self.feed_forward(self.feed_forward_norm(outputs)))
        return outputs, links


def sinusoidal_positions(length: int, dim: int, device: torch.device) -> torch.Tensor:
    """The fixed sine/cosine position encoding of Vaswani et al. (2017), shape `(length,
    dim)`; it has no maximum length."""
    position = torch.arange(length, device=device, dtype=torch.float).unsqueeze(1)
    rates = torch.exp(
        torch.arange(0, dim, 2, device=device, dtype=torch.float) * (-math.log(10000.0) / dim)
    )
    encoding = torch.zeros(length, dim, device=device)
    encoding[:, 0::2] = torch.sin(position * rates)
    encoding[:, 1::2] = torch.cos(position * rates)[:, : dim // 2]
    return encoding


@Seq2SeqEncoder.register("tree_transformer")
class TreeTransformerEncoder(Seq2SeqEncoder):
    """
    The Tree Transformer encoder (Wang, Lee & Chen 2019): a pre-norm transformer whose every
    layer multiplies its attention probabilities by a constituent prior built from link
    probabilities between neighbouring words (see `ConstituentAttention`). Usable wherever a
    `Seq2SeqEncoder` is (the span parsers included); `forward_with_links` also returns every
    layer's links, for tree induction and pictures.

    The input is projected to `d_model` when `input_dim` differs, scaled by `sqrt(d_model)` and
    given sinusoidal positions (`positional_encoding="sinusoidal"`, as the authors' code), or
    none (`"none"`: an embedder that already encodes positions, e.g. a pretrained transformer).
    A final LayerNorm closes the stack; padded positions are zero in the output.

    Registered as a `Seq2SeqEncoder` with name "tree_transformer".

    # Parameters

    input_dim : `int`
    d_model : `int`, optional (default = `512`)
    num_layers : `int`, optional (default = `10`)
    num_heads : `int`, optional (default = `8`)
    d_ff : `int`, optional (default = `2048`)
    dropout : `float`, optional (default = `0.1`)
        On the attention probabilities, the feed-forward hidden layer and every sublayer output.
    positional_encoding : `str`, optional (default = `"sinusoidal"`)
    score_scale : `float`, optional (default = `None`, i.e. `d_model / 2`)
        The divisor of the neighbour scores `q_i · k_{i±1}` (the paper: `d/2`). The authors'
        code divides by a hard-coded 256, which equals `d/2` only for their `d_model = 512`.
    link_layer_norm : `bool`, optional (default = `False`)
        Give the link scorer its own LayerNorm of the layer's input, as the authors' code does;
        by default it reads the input as normalised for the attention sublayer (the layers are
        pre-norm; the paper scores links from the layer input and says nothing of a norm).
    prior_diagonal : `float`, optional (default = `1.0`)
        `C[i, i]`, the prior of a word attending to itself. The paper's product over an empty
        range is 1; in the authors' code the diagonal stays near 0 (about `3e-5` times the
        layer number), so a word barely attends to itself: `0.0` reproduces that.
    renormalise : `bool`, optional (default = `False`)
        Divide `C ⊙ softmax(·)` by its row sums. Neither the paper's equation nor the authors'
        code does; the rows then sum to less than 1.
    constituent_prior : `bool`, optional (default = `True`)
        `False` removes the link scorers and the prior: a plain pre-norm Transformer that is
        otherwise this encoder (the same embedding scale, positions, GELU and norms), the
        baseline that isolates what the prior does. Its links are all zero and give no trees.
    """

    def __init__(
        self,
        input_dim: int,
        d_model: int = 512,
        num_layers: int = 10,
        num_heads: int = 8,
        d_ff: int = 2048,
        dropout: float = 0.1,
        positional_encoding: str = "sinusoidal",
        score_scale: Optional[float] = None,
        link_layer_norm: bool = False,
        prior_diagonal: float = 1.0,
        renormalise: bool = False,
        constituent_prior: bool = True,
    ) -> None:
        super().__init__()
        if positional_encoding not in POSITIONAL_ENCODINGS:
            raise ConfigurationError(
                f"tree_transformer: positional_encoding must be one of {POSITIONAL_ENCODINGS}, "
                f"not {positional_encoding!r}."
            )
        if num_layers < 1:
            raise ConfigurationError(f"tree_transformer: num_layers must be >= 1, not {num_layers}")
        self.input_dim = input_dim
        self.d_model = d_model
        self.positional_encoding = positional_encoding
        self.constituent_prior = constituent_prior
        self.projection = (
            torch.nn.Linear(input_dim, d_model) if input_dim != d_model else torch.nn.Identity()
        )
        self.input_dropout = torch.nn.Dropout(dropout)
        self.layers = torch.nn.ModuleList(
            [
                TreeTransformerLayer(
                    d_model,
                    num_heads,
                    d_ff,
                    dropout,
                    score_scale,
                    link_layer_norm,
                    prior_diagonal,
                    renormalise,
                    constituent_prior,
                )
                for _ in range(num_layers)
            ]
        )
        self.output_norm = torch.nn.LayerNorm(d_model)

    def get_input_dim(self) -> int:
        return self.input_dim

    def get_output_dim(self) -> int:
        return self.d_model

    def is_bidirectional(self) -> bool:
        return False

    def forward(self, inputs: torch.Tensor, mask: torch.BoolTensor) -> torch.Tensor:
        """`inputs` `(batch, n, input_dim)`, `mask` `(batch, n)` → `(batch, n, d_model)`."""
        return self.forward_with_links(inputs, mask)[0]

    def forward_with_links(
        self, inputs: torch.Tensor, mask: torch.BoolTensor
    ) -> Tuple[torch.Tensor, torch.Tensor]:
        """
        The encoding and every layer's link probabilities.

        # Returns

        `(outputs, links)`: `outputs` of shape `(batch, n, d_model)`, zero at padding, and
        `links` of shape `(batch, num_layers, n - 1)`, `links[b, l, k]` the probability at layer
        `l` (0 the lowest) that words `k` and `k + 1` are in one constituent; zero where either
        word is padding. Links never decrease from one layer to the next.
        """
        mask = mask.bool()
        encoded = self.projection(inputs)
        if self.positional_encoding == "sinusoidal":
            encoded = encoded * math.sqrt(self.d_model) + sinusoidal_positions(
                encoded.size(1), self.d_model, encoded.device
            ).to(encoded.dtype)
        encoded = self.input_dropout(encoded)
        links = encoded.new_zeros(encoded.size(0), max(encoded.size(1) - 1, 0))
        all_links: List[torch.Tensor] = []
        for layer in self.layers:
            encoded, links = layer(encoded, mask, links)
            all_links.append(links)
        outputs = self.output_norm(encoded) * mask.unsqueeze(-1)
        return outputs, torch.stack(all_links, dim=1)


def copy_bert_layers(encoder: TreeTransformerEncoder, bert: torch.nn.Module) -> None:
    """
    Starts `encoder`'s layers from a BERT-style model's (`transformers`' `BertModel` and its
    kin: `bert.encoder.layer[i]` with `attention.self.{query,key,value}`,
    `attention.output.{dense,LayerNorm}`, `intermediate.dense`, `output.{dense,LayerNorm}`):
    layer `i` of the encoder gets layer `i`'s attention, feed-forward and LayerNorm weights.
    The link scorers (`constituents`), which BERT has no counterpart of, keep their random
    initialisation, and so does the final LayerNorm. BERT's layers are post-norm and these are
    pre-norm: each LayerNorm is copied to the sublayer it belongs to, so the copy starts from
    BERT's weights, not from BERT's function (as in the Tree Transformer paper's experiment,
    which found that starting there made the trees much worse).
    """
    config = bert.config
    layers = bert.encoder.layer
    problems = []
    if config.hidden_size != encoder.d_model:
        problems.append(f"hidden size {config.hidden_size} vs d_model {encoder.d_model}")
    if len(layers) < len(encoder.layers):
        problems.append(f"{len(layers)} layers vs num_layers {len(encoder.layers)}")
    first = encoder.layers[0]
    if config.num_attention_heads != first.attention.num_heads:
        problems.append(
            f"{config.num_attention_heads} heads vs num_heads {first.attention.num_heads}"
        )
    if config.intermediate_size != first.feed_forward[0].out_features:
        problems.append(
            f"feed-forward size {config.intermediate_size} vs d_ff "
            f"{first.feed_forward[0].out_features}"
        )
    if problems:
        raise ConfigurationError(
            "tree_transformer: cannot start from the pretrained model's layers, the shapes "
            f"differ ({'; '.join(problems)}): give the encoder the pretrained model's sizes"
        )
    with torch.no_grad():
        for ours, theirs in zip(encoder.layers, layers):
            attention = theirs.attention.self
            ours.attention.qkv.weight.copy_(
                torch.cat([attention.query.weight, attention.key.weight, attention.value.weight])
            )
            ours.attention.qkv.bias.copy_(
                torch.cat([attention.query.bias, attention.key.bias, attention.value.bias])
            )
            pairs = [
                (ours.attention.output, theirs.attention.output.dense),
                (ours.attention_norm, theirs.attention.output.LayerNorm),
                (ours.feed_forward[0], theirs.intermediate.dense),
                (ours.feed_forward[3], theirs.output.dense),
                (ours.feed_forward_norm, theirs.output.LayerNorm),
            ]
            for target, source in pairs:
                target.weight.copy_(source.weight)
                target.bias.copy_(source.bias)
