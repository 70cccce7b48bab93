"""Parsing models."""
from lal_allennlp.models.span_parser import SpanConstituencyParser
