"""
Pure Python syntax: no torch, no AllenNLP. Trees and the treebank formats they come in,
turned into the structures the parsers predict and back. Everything here can be used (and is
tested) without a model.

- `trees`: reading bracketed trees (raw WSJ `.mrg` or one per line), PTB/CTB normalisation,
  spans <-> trees, unary chains as joint labels.
- `tokenizer`: raw text -> Penn Treebank tokens, by rules.
- `ctb_format`: the Chinese Treebank's files (markup, encodings, file ids, splits).
- `paths`: treebank paths (files, folders, globs, WSJ file-id ranges, tree selections).
- `dependencies`: dependency trees (CoNLL-X, CoNLL-U, Malt-TAB) aligned with the trees.
- `head_rules`: heads and dependency labels derived from head rules (Collins 1999).
- `languages`: per-language tables (CTB head rules, punctuation tags).
- `joint_spans`: Zhou & Zhao's (2019) joint span representation of a constituency tree and a
  dependency tree, both ways.
- `unsupervised`: unlabelled trees: the Tree Transformer's induction from link probabilities,
  the right/left-branching, balanced and random baselines, and unlabelled bracket F1 as the
  unsupervised-parsing literature computes it (punctuation removed, sentence and corpus F1).

- `arc_standard`: the arc-standard transition system with a root word (configurations, legal
  transitions, the static oracle, projectivity), for the transition-based parser.
"""
from lal_allennlp.syntax.tokenizer import ptb_tokenize
from lal_allennlp.syntax.trees import (
    TreebankFormatError,
    collapse_label,
    expand_label,
    is_preterminal,
    normalise_tree,
    parse_trees,
    spans_to_tree,
    tree_to_spans,
    tree_to_string,
)

__all__ = [
    "TreebankFormatError",
    "collapse_label",
    "expand_label",
    "is_preterminal",
    "normalise_tree",
    "parse_trees",
    "ptb_tokenize",
    "spans_to_tree",
    "tree_to_spans",
    "tree_to_string",
]
