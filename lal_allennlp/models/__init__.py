"""Parsing models."""
from lal_allennlp.models.span_parser import SpanConstituencyParser
from lal_allennlp.models.joint_parser import JointSpanParser
