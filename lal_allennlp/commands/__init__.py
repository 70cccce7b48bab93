"""
Console commands (entry points in `setup.py`):

- `parse`: `lal-parse`, raw or pre-tokenised sentences in, one tree (or CoNLL-U) per line out.
- `explain`: `lal-explain`, a picture or page of what a label attention parser attends to, or
  of a Tree Transformer's link probabilities by layer under its induced tree.
- `score_unsupervised`: `lal-score-unsupervised`, unlabelled bracket F1 (sentence and corpus
  level) of a file of trees against a treebank, with the trivial baselines beside it.
- `analyze`: `lal-analyze`, over a whole treebank: the head x label matrix of a label
  attention parser (`heads`), or an error analysis of any parser's predictions (`errors`).
"""
