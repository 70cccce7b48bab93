"""Neural building blocks: sentence boundaries, span features, span label scoring."""
from lal_allennlp.modules.sentinels import SentenceBoundaries
from lal_allennlp.modules.span_features import (
    fencepost_features,
    fencepost_span_features,
    span_indices,
)
from lal_allennlp.modules.span_label_scorer import SpanLabelScorer
