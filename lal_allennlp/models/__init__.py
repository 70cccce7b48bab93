"""
Parsing models, one registered class per file:

- `span_parser_base`: `SpanParserBase`, what the span parsers share (encode -> chart -> loss ->
  decode -> metrics; trees built once per sentence).
- `span_parser`: `lal_span_parser`, constituency trees by CKY over a `SpanChart`, with label
  attention explanations (`explanations`).
- `joint_parser`: `lal_joint_parser`, constituency and dependency trees at once over a
  `JointSpanChart` (Zhou & Zhao 2019).

The other families of parsers (a transition-based dependency parser, an unsupervised tree
inducer) get their own files here, on their own structures in `lal_allennlp.structs`.
"""
from lal_allennlp.models.span_parser_base import SpanParserBase
from lal_allennlp.models.span_parser import SpanConstituencyParser
from lal_allennlp.models.joint_parser import JointSpanParser
