"""
Stack-based multi-layer attention (Zhang et al. 2017, "Stack-based Multi-layer Attention for
Transition-based Dependency Parsing", section 3.2): the attention of a transition decoder over
the encoded words, told which words are on the stack.

Two binary vectors describe the stack after `i - 1` transitions: `s_t = 1` once word `t` has
been pushed, `r_t = 1` once it has been popped. Layer 1 scores

    e_{i,t} = v^T tanh(W^1 z_{i-1} + U h_t + S s_t),    alpha_{i,t} ∝ exp(e_{i,t}) (1 - r_t)

so a popped word gets no attention, and its context is `c^1_i = sum_t alpha_{i,t} h_t`. Layer
`m > 1` scores with `W^m [z_{i-1}; c^{m-1}_i]` in place of `W^1 z_{i-1}`: it looks again with
what the layer below found. `U`, `S` and `v` are shared by the layers, as in the paper's
equations; the last layer's context is the decoder's `c_i`.

With `use_pushed=False` the `S s_t` term is left out, with `use_popped=False` popped words keep
their attention (the paper's "- s vector" / "- r vector" ablations); one layer and neither
vector is the plain seq2seq attention of Bahdanau et al. (2015).
"""
from typing import List, Tuple

import torch


class StackAttention(torch.nn.Module):
    """
    # Parameters

    query_dim : `int`
        Size of the decoder state `z`.
    value_dim : `int`
        Size of the encoded words `h`.
    attention_dim : `int`
        Size of the scoring space (rows of `W^m`, `U`, `S`).
    num_layers : `int`, optional (default = `3`)
        Attention layers (the paper's best: 3).
    use_pushed : `bool`, optional (default = `True`)
        Add `S s_t` to the scores.
    use_popped : `bool`, optional (default = `True`)
        Give popped words (`r_t = 1`) no attention.
    """

    def __init__(
        self,
        query_dim: int,
        value_dim: int,
        attention_dim: int,
        num_layers: int = 3,
        use_pushed: bool = True,
        use_popped: bool = True,
    ) -> None:
        super().__init__()
        if num_layers < 1:
            raise ValueError(f"num_layers must be at least 1, got {num_layers}")
        self.num_layers = num_layers
        self.use_pushed = use_pushed
        self.use_popped = use_popped
        # W^1 reads z; W^m (m > 1) reads [z; c^{m-1}].
        self.query_projections = torch.nn.ModuleList(
            torch.nn.Linear(query_dim + (value_dim if layer else 0), attention_dim)
            for layer in range(num_layers)
        )
        self.key_projection = torch.nn.Linear(value_dim, attention_dim, bias=False)
        self.pushed_vector = torch.nn.Parameter(torch.empty(attention_dim))
        torch.nn.init.normal_(self.pushed_vector, std=attention_dim**-0.5)
        self.scorer = torch.nn.Linear(attention_dim, 1, bias=False)

    def project_keys(self, values: torch.Tensor) -> torch.Tensor:
        """`U h_t` for every word, once per sentence: `(batch, words, value_dim)` to
        `(batch, words, attention_dim)`."""
        return self.key_projection(values)

    def forward(
        self,
        query: torch.Tensor,
        keys: torch.Tensor,
        values: torch.Tensor,
        mask: torch.Tensor,
        pushed: torch.Tensor,
        popped: torch.Tensor,
    ) -> Tuple[torch.Tensor, List[torch.Tensor]]:
        """
        # Parameters

        query : `(batch, query_dim)`, the decoder state `z_{i-1}`.
        keys : `(batch, words, attention_dim)`, `project_keys(values)`.
        values : `(batch, words, value_dim)`, the encoded words `h`.
        mask : `(batch, words)` bool, the real words (padding `False`).
        pushed, popped : `(batch, words)` bool, `s` and `r`.

        # Returns

        The last layer's context `(batch, value_dim)` and every layer's attention weights
        (`(batch, words)` each, lowest layer first). At least one word must stay attendable in
        each row (the parsers keep the root, which is never popped).
        """
        attendable = mask & ~popped if self.use_popped else mask
        if self.use_pushed:
            # shape (batch, words, attention_dim): S s_t with s binary is a vector added where s = 1
            keys = keys + pushed.unsqueeze(-1).to(keys.dtype) * self.pushed_vector
        weights: List[torch.Tensor] = []
        layer_input = query
        context = query.new_zeros(values.size(0), values.size(-1))
        for layer, projection in enumerate(self.query_projections):
            # shape (batch, 1, attention_dim)
            projected = projection(layer_input).unsqueeze(1)
            # shape (batch, words)
            scores = self.scorer(torch.tanh(projected + keys)).squeeze(-1)
            scores = scores.masked_fill(~attendable, float("-inf"))
            alpha = torch.softmax(scores, dim=-1)
            # shape (batch, value_dim)
            context = torch.bmm(alpha.unsqueeze(1), values).squeeze(1)
            weights.append(alpha)
            if layer + 1 < self.num_layers:
                layer_input = torch.cat([query, context], dim=-1)
        return context, weights
