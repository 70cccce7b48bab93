"""
Neural building blocks (torch modules registered with AllenNLP where a config names them):

- encoders: `partitioned_transformer` (Kitaev & Klein 2018), `label_attention` (Mrini et al.
  2020), `lal_stack` (both, the LAL paper's encoder);
- token embedders: `transformer_embedder` (`lal_transformer`: a pretrained transformer's word
  vectors, with its precision, packing, windows for long inputs and fast dropout; its indexer
  is `transformer_indexer`), `char_embedders` (`char_lstm`, `char_concat`);
- span scoring: `sentinels` (the [START]/[STOP] boundaries), `span_features` (fencepost
  differences), `span_label_scorer` (the label classifier, empty label fixed at 0);
- `tree_transformer`: the Tree Transformer's encoder (Wang et al. 2019), attention times a
  constituent prior, with every layer's link probabilities for unsupervised trees;
- what the transformer embedder is built from: `cast_weights` (parse-time low-precision
  weights), `packed_transformer` (BERT without its padding), `overlapping_windows`,
  `word_piece_limit` (the transformer's positions, and a clear error for a sentence that fails
  all the same), `fast_dropout` (dropout masks from fewer random bits);
- `stack_attention`: the stack-based multi-layer attention of the transition decoder (Zhang et
  al. 2017), told which words are on the stack.
"""
from lal_allennlp.modules.sentinels import SentenceBoundaries
from lal_allennlp.modules.span_features import (
    fencepost_features,
    fencepost_span_features,
    sentence_spans,
    span_indices,
)
from lal_allennlp.modules.span_label_scorer import SpanLabelScorer
from lal_allennlp.modules.partitioned_transformer import PartitionedTransformerEncoder
from lal_allennlp.modules.label_attention import LabelAttentionLayer
from lal_allennlp.modules.lal_stack import LabelAttentionStack
from lal_allennlp.modules.transformer_embedder import TransformerWordEmbedder
from lal_allennlp.modules.transformer_indexer import TransformerWordPieceIndexer
from lal_allennlp.modules.char_embedders import CharConcatTokenEmbedder, CharLSTMTokenEmbedder
from lal_allennlp.modules.tree_transformer import TreeTransformerEncoder
from lal_allennlp.modules.stack_attention import StackAttention
