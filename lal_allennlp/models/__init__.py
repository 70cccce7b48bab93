"""
Parsing models, one registered class per file:

- `span_parser_base`: `SpanParserBase`, what the span parsers share (encode -> chart -> loss ->
  decode -> metrics; trees built once per sentence).
- `span_parser`: `lal_span_parser`, constituency trees by CKY over a `SpanChart`, with label
  attention explanations (`explanations`).
- `joint_parser`: `lal_joint_parser`, constituency and dependency trees at once over a
  `JointSpanChart` (Zhou & Zhao 2019).

- `tree_transformer_lm`: the Tree Transformer's masked language model (Wang et al. 2019), whose
  link probabilities give unsupervised trees.
- `transition_parser_base`: `TransitionParserBase`, what the arc-standard dependency parsers
  share (the output vocabulary, greedy and beam search stepping a `TransitionScorer`, the
  outputs and UAS/LAS).
- `stack_attention_parser`: a sequence-to-sequence arc-standard dependency parser with
  stack-based multi-layer attention (Zhang et al. 2017).
- `stack_attention_ensemble`: trained stack attention parsers decoding together with their
  averaged transition probabilities (`build_ensemble_archive` writes one archive of them).

Each model declares what its parses hold (trees, heads, tags, explanations, confidences) as a
`capabilities.ParseCapabilities`, which the ways in (`lal_allennlp.api.Parser` and the
commands) ask instead of testing its class.
"""
from lal_allennlp.models.capabilities import ParseCapabilities
from lal_allennlp.models.span_parser_base import SpanParserBase
from lal_allennlp.models.span_parser import SpanConstituencyParser
from lal_allennlp.models.joint_parser import JointSpanParser
from lal_allennlp.models.tree_transformer_lm import TreeTransformerLanguageModel
from lal_allennlp.models.transition_parser_base import TransitionParserBase
from lal_allennlp.models.stack_attention_parser import StackAttentionParser
from lal_allennlp.models.stack_attention_ensemble import StackAttentionEnsemble
