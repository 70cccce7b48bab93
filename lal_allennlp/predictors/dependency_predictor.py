"""
The predictor of the transition-based dependency parsers (`stack_attention_parser` and its
ensemble `stack_attention_ensemble`): JSON in, dependency trees out.

Input: `{"sentence": "raw text"}` or `{"tokens": [...]}`, as for `lal_parser`, with `"tags":
[...]` (one POS tag per word), which a model trained with POS embeddings needs.

Output: `words`, `pos` (the given tags, `_` without), `heads` (1-based, 0 the root),
`dependency_labels`, `conllu` (the sentence in CoNLL-U), `transitions` (the decoded arc-standard
transitions, `SHIFT`, `LEFT-ARC:label`, `RIGHT-ARC:label`) and `score` (their summed
log-probability). `--predictor lal_dependency_conllu` writes the
CoNLL-U text instead of JSON lines. Bad requests and failing sentences: see `checked.py`.

With `"confidence": true`, also `head_confidences` and `dependency_label_confidences` (per word),
`tree_probability` and `sentence_confidence`: the decoder's step probabilities
(`TransitionParserBase._confidences` says what each number is). With `"kbest": k` (2 to 100),
also `kbest`: the distinct trees of the final beam, best first, at most `beam_size` of them
(`heads`, `dependency_labels`, `score`, `probability`).
"""
from typing import List, Optional

from allennlp.common.util import JsonDict, sanitize
from allennlp.data import Instance
from allennlp.predictors.predictor import Predictor

from lal_allennlp.models.transition_parser_base import CONFIDENCE_KEYS
from lal_allennlp.predictors.checked import CheckedPredictor, error_comment
from lal_allennlp.predictors.inputs import check_kbest, words_and_tags

OUTPUT_KEYS = ("words", "pos", "heads", "dependency_labels", "conllu", "transitions", "score")


@Predictor.register("lal_dependency_parser")
class DependencyParserPredictor(CheckedPredictor):
    """
    Registered as a `Predictor` with name "lal_dependency_parser"; the default predictor of
    `stack_attention_parser` and `stack_attention_ensemble`. The `lal_dependencies` reader's
    `text_to_instance(words, tags)` builds instances. Requests are checked and failures
    handled as `CheckedPredictor` describes; words are kept as given (CoNLL-U output holds
    brackets as they are).

    # Parameters

    model : `Model`
    dataset_reader : `DatasetReader`
    frozen : `bool`, optional (default = `True`)
    max_words : `Optional[int]`, optional (default = `inputs.DEFAULT_MAX_WORDS`)
        Longer sentences are refused (see `CheckedPredictor`).
    """

    def predict(self, sentence: str, tags: Optional[List[str]] = None) -> JsonDict:
        request: JsonDict = {"sentence": sentence}
        if tags is not None:
            request["tags"] = tags
        return self.predict_json(request)

    def _json_to_instance(self, json_dict: JsonDict) -> Instance:
        tokens, tags = words_and_tags(json_dict)
        self._check_length(tokens)
        instance = self._dataset_reader.text_to_instance(tokens, tags)  # type: ignore
        # The request's switches travel in the sentence's metadata, which the model reads.
        instance["metadata"].metadata["confidence"] = bool(json_dict.get("confidence", False))
        instance["metadata"].metadata["kbest"] = check_kbest(json_dict)
        return instance

    def _output(self, output: JsonDict, instance: Instance) -> JsonDict:
        result = self._select(output)
        if instance["metadata"].metadata.get("confidence", False):
            result.update(sanitize({key: output[key] for key in CONFIDENCE_KEYS}))
        if output.get("kbest") is not None:
            result["kbest"] = sanitize(output["kbest"])
        return result

    @staticmethod
    def _select(output: JsonDict) -> JsonDict:
        return sanitize({key: output[key] for key in OUTPUT_KEYS})


@Predictor.register("lal_dependency_conllu")
class DependencyConlluPredictor(DependencyParserPredictor):
    """
    Registered as a `Predictor` with name "lal_dependency_conllu": `lal_dependency_parser`
    whose output lines are CoNLL-U sentences (`# error = ...` for a JSON line that failed).
    """

    def dump_line(self, outputs: JsonDict) -> str:
        if "error" in outputs:
            return error_comment(outputs)
        return outputs["conllu"]
