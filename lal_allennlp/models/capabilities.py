"""
What a model's parses hold. Every model of the package declares it (its `capabilities`
property), so that the ways in (`lal_allennlp.api.Parser`, `lal-parse`, `lal-serve`,
`lal-explain`, the spaCy component) ask the model instead of testing its class.
"""
from dataclasses import dataclass


@dataclass(frozen=True)
class ParseCapabilities:
    """
    What a model gives for a sentence, for its configuration (a label attention layer in the
    encoder, the span loss it was trained with, a tagging head).

    # Parameters

    trees : `bool`
        Constituency trees (`tree` and `spans` of the predictor's output): every family but
        the transition-based dependency parser.
    heads : `bool`
        Dependencies (`heads`, `dependency_labels`) and CoNLL-U (`conllu`): the joint span
        parser and the dependency parser.
    pos_tags : `bool`
        Predicted POS tags (a tagging head trained with the parser); without one, the
        `pos_tags` of a span parser's output are the tags given with the words (or `UNK`).
    explanations : `bool`
        Whether `explain` gives explanations: label attention and head contributions (span
        parsers whose encoder holds a Label Attention Layer), link probabilities (the Tree
        Transformer).
    confidences : `bool`
        Whether `confidence` gives the model's probabilities: span marginals (span parsers
        trained with `span_loss: "crf"`), head and label probabilities (the joint parser, and
        its span marginals when trained as a CRF; the dependency parser's step probabilities).
        The Tree Transformer defines no probability over trees and gives none.
    kbest : `bool`
        Whether `kbest` gives the k best parses: the span CKY parsers (exact k-best) and the
        dependency parser (its beam's trees); the joint decoder and the Tree Transformer have
        none.
    """

    trees: bool
    heads: bool
    pos_tags: bool
    explanations: bool
    confidences: bool
    kbest: bool
