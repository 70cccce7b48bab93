"""
Structures over score charts, in torch, each a distribution object in the manner of SuPar's
`structs/` and torch-struct: built from a model's scores, it gives the gold structure's score,
the log-partition and marginals, the losses, and the best structure (through a numba kernel of
`lal_allennlp.decoding`, the one place where numpy is used).

- `span_chart`: `SpanChart`, labelled span scores as a distribution over constituency trees
  (hinge and CRF losses, CKY decode), and `ChartLabels`, its label axis.
- `joint_span_chart`: `JointSpanChart`, span scores plus head log-probabilities, decoded into a
  constituency tree and a dependency tree that agree (Zhou & Zhao 2019).
- `tree_crf`: the inside algorithm over labelled trees (log-partition of `SpanChart`).
- `arc_standard`: `ArcStandardBatch`, arc-standard configurations of a batch as tensors (legal
  transitions, the stack vectors), for the transition-based parser; the pure reference is
  `lal_allennlp.syntax.arc_standard`.
"""
from lal_allennlp.structs.joint_span_chart import JointSpanChart, decoder_columns
from lal_allennlp.structs.span_chart import EMPTY, ChartLabels, SpanChart
from lal_allennlp.structs.tree_crf import tree_log_partition
from lal_allennlp.structs.arc_standard import ArcStandardBatch

__all__ = [
    "ArcStandardBatch",
    "EMPTY",
    "ChartLabels",
    "JointSpanChart",
    "SpanChart",
    "decoder_columns",
    "tree_log_partition",
]
