"""Neural building blocks: encoders (partitioned transformer, label attention), sentence
boundaries, span features, span label scoring."""
from lal_allennlp.modules.sentinels import SentenceBoundaries
from lal_allennlp.modules.span_features import (
    fencepost_features,
    fencepost_span_features,
    span_indices,
)
from lal_allennlp.modules.span_label_scorer import SpanLabelScorer
from lal_allennlp.modules.partitioned_transformer import PartitionedTransformerEncoder
from lal_allennlp.modules.label_attention import LabelAttentionLayer
from lal_allennlp.modules.lal_stack import LabelAttentionStack
from lal_allennlp.modules.char_embedders import CharConcatTokenEmbedder, CharLSTMTokenEmbedder
