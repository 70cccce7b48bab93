"""
Predictors: JSON in, trees out. `parser_predictor` registers `lal_parser` (JSON lines) and
`lal_conllu` (CoNLL-U), the predictors of every parser of the package; they only turn JSON
into instances (through the dataset reader's `text_to_instance`) and model outputs back.
`unsupervised_predictor` registers `lal_unsupervised_parser`, the Tree Transformer's (unlabelled
trees, and link probabilities on request). `dependency_predictor` registers
`lal_dependency_parser` and `lal_dependency_conllu`, the transition-based dependency parser's.
All of them check each request (`inputs`: words, tags, control characters, length) and keep a
failing request from stopping the others (`checked`: in `allennlp predict`, a bad JSON line gets
an `"error"` output line instead of ending the run).
"""
from lal_allennlp.predictors.parser_predictor import ConlluPredictor, ParserPredictor
from lal_allennlp.predictors.unsupervised_predictor import UnsupervisedParserPredictor
from lal_allennlp.predictors.dependency_predictor import (
    DependencyConlluPredictor,
    DependencyParserPredictor,
)
