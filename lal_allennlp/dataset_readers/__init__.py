"""
AllenNLP dataset readers: the glue between treebank files and `Instance`s. The trees, formats
and conversions they use are the pure code of `lal_allennlp.syntax`; a reader only resolves
paths, reports bad trees and builds fields. Importing this package registers the readers.

- `ptb_reader`: `lal_ptb`, Penn Treebank trees (raw WSJ `.mrg` or one tree per line), with
  optional dependencies (files or head rules) as joint spans.
- `ctb_reader`: `lal_ctb`, the Penn Chinese Treebank as the LDC ships it.
- `dependency_reader`: `lal_dependencies`, dependency trees (CoNLL-X, CoNLL-U, Malt-TAB) with
  the fields of allennlp-models' `universal_dependencies` reader and the arc-standard
  transitions of each tree.
- `sentence_reader`: `lal_sentences`, the words of treebank, CoNLL-U or plain-text files
  (normalised for a word-level language model; gold trees kept for scoring), for the Tree
  Transformer's unsupervised parser.
"""
from lal_allennlp.dataset_readers.ctb_reader import ChineseTreebankReader
from lal_allennlp.dataset_readers.dependency_reader import DependencyTreebankReader
from lal_allennlp.dataset_readers.ptb_reader import (
    PennTreebankReader,
    TreebankPathError,
    resolve_treebank_paths,
)
from lal_allennlp.dataset_readers.sentence_reader import SentenceReader
from lal_allennlp.syntax.trees import TreebankFormatError

__all__ = [
    "ChineseTreebankReader",
    "DependencyTreebankReader",
    "PennTreebankReader",
    "SentenceReader",
    "TreebankFormatError",
    "TreebankPathError",
    "resolve_treebank_paths",
]
