"""
Reading treebanks: tree utilities (`trees`), a raw-text tokenizer (`tokenizer`), the `lal_ptb`
dataset reader (`ptb_reader`), the `lal_ctb` Chinese Treebank reader (`ctb_reader`, with the
file format in `ctb_format`) and per-language tables (`languages`). Importing this package
registers the readers.
"""

from lal_allennlp.data.ctb_reader import ChineseTreebankReader
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
    "ChineseTreebankReader",
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
