"""
The span label classifier of Kitaev & Klein (2018, sec. 2.1):

    s(i, j, .) = W_2 ReLU(LayerNorm(W_1 v(i, j) + b_1)) + b_2,

over the non-empty labels; the chart adds the empty label's score, fixed at 0 (Stern et al.
2017), as its column 0 (`SpanChart.from_sentence_spans`).

`v(i, j) = g_j - g_i` is a difference of fencepost vectors (see `span_features.py`), so
`W_1 v(i, j) = W_1 g_j - W_1 g_i`: the first layer is applied to the n + 1 fenceposts, not to
the O(n^2) spans, which removes the largest matrix product of the parser (exactly the same
function, far less time and memory for long sentences).
"""
import torch
import torch.nn.functional as F

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
        # The weights of a span's two rows in `forward` (end row, start row).
        self.register_buffer("_signs", torch.tensor([[1.0, -1.0]]), persistent=False)

    def forward(
        self,
        fenceposts: torch.Tensor,
        batch: torch.Tensor,
        starts: torch.Tensor,
        ends: torch.Tensor,
    ) -> torch.Tensor:
        """
        `fenceposts`: `(batch_size, max_length + 1, input_dim)`; span `s` is `(starts[s],
        ends[s])` of sentence `batch[s]` (`modules.sentence_spans`: each sentence's own spans,
        none over the batch's padding). Returns `(num_spans, num_labels)`, the scores of the
        non-empty labels.
        """
        hidden_dim = self.hidden.out_features
        # shape (batch_size * (max_length + 1), hidden_dim)
        projected = self.hidden(fenceposts).reshape(-1, hidden_dim)
        fences = fenceposts.size(1)
        # W_1 g_j + b_1 - W_1 g_i, shape (num_spans, hidden_dim): the bias is added to the
        # n + 1 fenceposts, and each span sums two rows of a table of both, `1 * (W_1 g_j + b_1)
        # + (-1) * W_1 g_i` (exactly the difference), in one pass that writes each span's row
        # once (selecting both rows, then subtracting, wrote three (num_spans, hidden_dim)
        # tensors: the largest passes of the parser's span scoring).
        table = torch.cat([projected + self.hidden_bias, projected])
        # each span's sentence's first row in `projected`
        sentence_rows = batch * fences
        rows = torch.stack([sentence_rows + ends, sentence_rows + starts + projected.size(0)], 1)
        signs = self._signs.to(table.dtype).expand(rows.size(0), 2)
        hidden = F.embedding_bag(rows, table, mode="sum", per_sample_weights=signs)
        return self.score_hidden(hidden)

    def score_span_vectors(self, span_vectors: torch.Tensor) -> torch.Tensor:
        """The same scores from explicit span vectors `(..., input_dim)` (for checks)."""
        return self.score_hidden(self.hidden(span_vectors) + self.hidden_bias)

    def score_hidden(self, hidden: torch.Tensor) -> torch.Tensor:
        """The scores from `W_1 v(i, j) + b_1` (the ReLU in place, on the layer norm's own
        output)."""
        return self.output(self.dropout(torch.relu_(self.layer_norm(hidden))))
