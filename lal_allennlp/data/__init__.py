"""
Reading treebanks: tree utilities (`trees`), a raw-text tokenizer (`tokenizer`) and the
`lal_ptb` dataset reader (`ptb_reader`). Importing this package registers the reader.
"""

from lal_allennlp.data.ptb_reader import PennTreebankReader, TreebankPathError
from lal_allennlp.data.ptb_reader import resolve_treebank_paths
from lal_allennlp.data.tokenizer import ptb_tokenize
from lal_allennlp.data.trees import (
    TreebankFormatError,
    collapse_label,
    expand_label,
    normalise_tree,
    parse_trees,
    spans_to_tree,
    tree_to_spans,
    tree_to_string,
)

__all__ = [
    "PennTreebankReader",
    "TreebankFormatError",
    "TreebankPathError",
    "collapse_label",
    "expand_label",
    "normalise_tree",
    "parse_trees",
    "ptb_tokenize",
    "resolve_treebank_paths",
    "spans_to_tree",
    "tree_to_spans",
    "tree_to_string",
]
