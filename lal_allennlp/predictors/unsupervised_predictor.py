"""
The predictor of the unsupervised parser (`tree_transformer_lm`): JSON in, unlabelled trees out.

Input: `{"sentence": "raw text"}` or `{"tokens": [...]}`, as for `lal_parser`. The reader drops
punctuation (the model is trained and scored without it), so the tree covers the remaining
words.

Output: `tree` (one-line bracketed, constituents labelled `X`), `words` (the words of the
tree) and `spans` (`[start, end_exclusive]`, the whole sentence included); with `"explain":
true`, also `link_probabilities` (per layer, lowest first, the probability that each pair of
neighbouring words is in one constituent).
"""
from typing import List, Optional

from allennlp.common.util import JsonDict
from allennlp.data import Instance
from allennlp.predictors.predictor import Predictor

from lal_allennlp.predictors.parser_predictor import ParserPredictor


@Predictor.register("lal_unsupervised_parser")
class UnsupervisedParserPredictor(ParserPredictor):
    """
    Registered as a `Predictor` with name "lal_unsupervised_parser"; the default predictor of
    `tree_transformer_lm`. The `lal_sentences` reader's `text_to_instance(words)` builds
    instances; `tags` in a request are checked for length and otherwise not used. A sentence
    of punctuation only has no words left to parse: a `ValueError` (an error output for a JSON
    line of `allennlp predict`, see `CheckedPredictor`).
    """

    def _text_to_instance(self, tokens: List[str], tags: Optional[List[str]]) -> Instance:
        return self._dataset_reader.text_to_instance(tokens)  # type: ignore

    @staticmethod
    def _select(output: JsonDict, explain: bool = False) -> JsonDict:
        result = {"tree": output["trees"], "words": output["words"], "spans": output["spans"]}
        if explain:
            result["link_probabilities"] = output["link_probabilities"]
        return result
