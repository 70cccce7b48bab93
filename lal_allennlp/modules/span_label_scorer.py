"""
The span label classifier of Kitaev & Klein (2018, sec. 2.1):

    s(i, j, .) = W_2 ReLU(LayerNorm(W_1 v(i, j) + b_1)) + b_2,

with the score of the empty label fixed at 0 (Stern et al. 2017), so label index 0 of the
output is "no constituent" and indices 1.. are the vocabulary's span labels.
"""
import torch


class SpanLabelScorer(torch.nn.Module):
    """
    # Parameters

    input_dim : `int`
        Dimension of the span vectors.
    hidden_dim : `int`
        Hidden dimension of the two-layer classifier.
    num_labels : `int`
        Number of non-empty labels.
    dropout : `float`, optional (default = `0.0`)
        Dropout after the ReLU.
    """

    def __init__(self, input_dim: int, hidden_dim: int, num_labels: int, dropout: float = 0.0):
        super().__init__()
        # b_1 is kept as its own parameter: AllenNLP's NormalizationBiasVerification check
        # flags any biased Linear followed by a normalisation layer as redundant, which holds
        # for BatchNorm but not for LayerNorm (a per-feature shift changes the normalised
        # values), so `Linear(bias=True)` would stop training at its first batch.
        self.hidden = torch.nn.Linear(input_dim, hidden_dim, bias=False)
        self.hidden_bias = torch.nn.Parameter(torch.zeros(hidden_dim))
        self.layer_norm = torch.nn.LayerNorm(hidden_dim)
        self.dropout = torch.nn.Dropout(dropout)
        self.output = torch.nn.Linear(hidden_dim, num_labels)

    def forward(self, span_vectors: torch.Tensor) -> torch.Tensor:
        """`(..., input_dim)` -> `(..., num_labels + 1)`, index 0 being the empty label (0)."""
        hidden = self.dropout(torch.relu(self.layer_norm(self.hidden(span_vectors) + self.hidden_bias)))
        scores = self.output(hidden)
        return torch.nn.functional.pad(scores, (1, 0))
