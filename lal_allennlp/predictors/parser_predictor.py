"""
The predictor of the parsers: JSON in, trees out.

Input: `{"sentence": "raw text"}` (split into Penn Treebank tokens by a rule-based
tokenizer that needs no downloaded model; brackets become `-LRB-`/`-RRB-`), or
`{"tokens": ["pre", "tokenised", "words"]}`; either may come with `"tags": [...]` (gold POS
tags, used in the output tree by a model that does not predict tags).

Output: `tree` (one-line bracketed tree), `words`, `pos_tags` (predicted, or given) and
`spans` (labelled constituents as `[start, end_exclusive, label]`, unary chains joined with
`+`).

Joint span models (`lal_joint_parser`) also return, per word, `heads` (1-based, 0 = root)
and `dependency_labels`, and `conllu`, the sentence in CoNLL-U. The `lal_conllu` predictor
writes that CoNLL-U text instead of JSON lines: `allennlp predict MODEL INPUT --predictor
lal_conllu --output-file out.conllu`.

With `"explain": true` (models with a label attention layer), also `label_attention` (per
head, the attention over `[START] words [STOP]`), `span_contributions` (per span of `spans`,
the share of each head, summing to 1) and `explanation_note` (whether the contributions are
exact); see `lal_allennlp/models/explanations.py`.
"""
from typing import List, Optional, Tuple

from allennlp.common.checks import ConfigurationError
from allennlp.common.util import JsonDict, sanitize
from allennlp.data import Instance
from allennlp.data.fields import MetadataField
from allennlp.predictors.predictor import Predictor

from lal_allennlp.syntax.tokenizer import ptb_tokenize

OUTPUT_KEYS = ("tree", "words", "pos_tags", "spans")
DEPENDENCY_KEYS = ("heads", "dependency_labels", "conllu")


@Predictor.register("lal_parser")
class ParserPredictor(Predictor):
    """
    Registered as a `Predictor` with name "lal_parser"; the default predictor of this
    package's models. The dataset reader's `text_to_instance(tokens, tags)` builds instances.
    """

    def predict(self, sentence: str) -> JsonDict:
        return self.predict_json({"sentence": sentence})

    def _json_to_instance(self, json_dict: JsonDict) -> Instance:
        tokens, tags = self._words_and_tags(json_dict)
        instance = self._text_to_instance(tokens, tags)
        # The request's own switch, read by the model's forward (`explain`); every instance
        # of a predictor carries it, so instances batch together.
        instance.add_field("explain", MetadataField(bool(json_dict.get("explain", False))))
        return instance

    def _text_to_instance(self, tokens: List[str], tags: Optional[List[str]]) -> Instance:
        return self._dataset_reader.text_to_instance(tokens, tags)  # type: ignore

    @staticmethod
    def _words_and_tags(json_dict: JsonDict) -> Tuple[List[str], Optional[List[str]]]:
        """The request's words (`tokens`, or `sentence` split into Penn Treebank tokens) and
        its `tags` (or `None`), checked."""
        if "tokens" in json_dict:
            tokens = json_dict["tokens"]
            if not isinstance(tokens, list) or not all(isinstance(t, str) for t in tokens):
                raise ConfigurationError(f'"tokens" must be a list of strings, got {tokens!r}')
        elif "sentence" in json_dict:
            tokens = ptb_tokenize(json_dict["sentence"])
        else:
            raise ConfigurationError(
                f'Each input needs "sentence" (raw text) or "tokens" (a list of words); got the '
                f"keys {sorted(json_dict)}."
            )
        if not tokens:
            raise ConfigurationError(f"Cannot parse an empty sentence: {json_dict!r}")
        tags = json_dict.get("tags")
        if tags is not None and len(tags) != len(tokens):
            raise ConfigurationError(
                f"Got {len(tags)} tags for {len(tokens)} tokens ({tokens!r}); give one tag per "
                "token, or none."
            )
        return tokens, tags

    def predict_json(self, inputs: JsonDict) -> JsonDict:
        return self.predict_batch_json([inputs])[0]

    def predict_batch_json(self, inputs: List[JsonDict]) -> List[JsonDict]:
        instances = self._batch_json_to_instances(inputs)
        outputs = self._model.forward_on_instances(instances)
        return [
            self._select(output, instance["explain"].metadata)
            for output, instance in zip(outputs, instances)
        ]

    def predict_instance(self, instance: Instance) -> JsonDict:
        return self._select(self._model.forward_on_instance(instance))

    def predict_batch_instance(self, instances: List[Instance]) -> List[JsonDict]:
        return [self._select(output) for output in self._model.forward_on_instances(instances)]

    @staticmethod
    def _select(output: JsonDict, explain: bool = False) -> JsonDict:
        result = {
            "tree": output["trees"],
            "words": output["words"],
            "pos_tags": output["pos_tags"],
            "spans": output["labelled_spans"],
        }
        for key in DEPENDENCY_KEYS:
            if key in output:
                result[key] = output[key]
        result = sanitize(result)
        if explain:
            # Already plain lists of Python floats (`tolist()` in the model), so they skip
            # `sanitize`, whose element-by-element walk over 112 x n numbers per sentence
            # was most of the cost of explanations.
            for key in ("label_attention", "span_contributions", "explanation_note"):
                if key in output:
                    result[key] = output[key]
        return result


@Predictor.register("lal_conllu")
class ConlluPredictor(ParserPredictor):
    """
    Registered as a `Predictor` with name "lal_conllu": the `lal_parser` predictor whose output
    lines (`allennlp predict --predictor lal_conllu`) are CoNLL-U sentences, for joint span
    models (`lal_joint_parser`).
    """

    def dump_line(self, outputs: JsonDict) -> str:
        if "conllu" not in outputs:
            raise ConfigurationError(
                "CoNLL-U output needs a model that predicts dependencies (lal_joint_parser); "
                "this model predicts constituency trees only: use the lal_parser predictor."
            )
        return outputs["conllu"]
