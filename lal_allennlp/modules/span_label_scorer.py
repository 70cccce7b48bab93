"""
The span label classifier of Kitaev & Klein (2018, sec. 2.1):

    s(i, j, .) = W_2 ReLU(LayerNorm(W_1 v(i, j) + b_1)) + b_2,

with the score of the empty label fixed at 0 (Stern et al. 2017), so label index 0 of the
output is "no constituent" and indices 1.. are the vocabulary's span labels.

`v(i, j) = g_j - g_i` is a difference of fencepost vectors (see `span_features.py`), so
`W_1 v(i, j) = W_1 g_j - W_1 g_i`: the first layer is applied to the n + 1 fenceposts, not to
the O(n^2) spans, which removes the largest matrix product of the parser (exactly the same
function, far less time and memory for long sentences).
"""
import torch

from lal_allennlp.modules.fast_dropout import FastDropout


class SpanLabelScorer(torch.nn.Module):
    """
    # Parameters

    input_dim : `int`
        Dimension of the span (and fencepost) vectors.
    hidden_dim : `int`
        Hidden size of the two-layer classifier.
    num_labels : `int`
        Number of non-empty labels.
    dropout : `float`, optional (default = `0.0`)
        Dropout after the ReLU.
    """

    def __init__(self, input_dim: int, hidden_dim: int, num_labels: int, dropout: float = 0.0):
        super().__init__()
        # b_1 is its own parameter: it must be added per span, after the difference of
        # fenceposts (it would cancel out inside W_1 g_j - W_1 g_i).
        self.hidden = torch.nn.Linear(input_dim, hidden_dim, bias=False)
        self.hidden_bias = torch.nn.Parameter(torch.zeros(hidden_dim))
        self.layer_norm = torch.nn.LayerNorm(hidden_dim)
        self.dropout = FastDropout(dropout)
        self.output = torch.nn.Linear(hidden_dim, num_labels)

    def forward(
        self, fenceposts: torch.Tensor, starts: torch.Tensor, ends: torch.Tensor
    ) -> torch.Tensor:
        """
        `fenceposts`: `(batch_size, max_length + 1, input_dim)`; `starts`, `ends`:
        `(num_spans,)`. Returns `(batch_size, num_spans, num_labels + 1)`, index 0 being
        the empty label (score 0).
        """
        # shape (batch_size, max_length + 1, hidden_dim)
        projected = self.hidden(fenceposts)
        # shape (batch_size, num_spans, hidden_dim)
        hidden = projected[:, ends] - projected[:, starts] + self.hidden_bias
        return self.score_hidden(hidden)

    def score_span_vectors(self, span_vectors: torch.Tensor) -> torch.Tensor:
        """The same scores from explicit span vectors `(..., input_dim)` (for checks)."""
        return self.score_hidden(self.hidden(span_vectors) + self.hidden_bias)

    def score_hidden(self, hidden: torch.Tensor) -> torch.Tensor:
        hidden = self.dropout(torch.relu(self.layer_norm(hidden)))
        return torch.nn.functional.pad(self.output(hidden), (1, 0))
