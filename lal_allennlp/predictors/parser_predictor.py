"""
The predictor of the parsers: JSON in, trees out.

Input: `{"sentence": "raw text"}` (split into Penn Treebank tokens by a rule-based
tokenizer that needs no downloaded model; brackets become `-LRB-`/`-RRB-`), or
`{"tokens": ["pre", "tokenised", "words"]}` (brackets in them are written `-LRB-`/`-RRB-` too,
so that the output tree reads back with one leaf per word); either may come with `"tags":
[...]` (gold POS tags, used in the output tree by a model that does not predict tags; a tag the
model never saw is the unknown tag). What is checked, and what a bad request or a failing
sentence gives (an exception in Python, an `"error"` output line with `allennlp predict`), is
described in `checked.py` and `inputs.py`.

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

With `"confidence": true`, also the model's probabilities (`SpanParserBase._confidences`,
`JointSpanParser._confidences`): `span_confidences` (per span of `spans`, in its order, the
probability under the tree CRF that the tree holds that span with exactly that label, its
labelled marginal; models trained with `span_loss: "crf"`), for joint models
`head_confidences` and `dependency_label_confidences` (per word), and per sentence
`tree_probability` and `sentence_confidence`. A constituency model trained with the hinge loss
has no such probabilities: the request fails with a `ConfigurationError` saying so.

With `"kbest": k` (2 to 100, `lal_span_parser` models), also `kbest`: the k best trees, best
first, each `{"tree", "spans", "score"}` and, for a CRF, `"probability"`.
"""
from typing import List, Optional

from allennlp.common.checks import ConfigurationError
from allennlp.common.util import JsonDict
from allennlp.data import Instance
from allennlp.data.fields import MetadataField
from allennlp.predictors.predictor import Predictor

from lal_allennlp.predictors.checked import CheckedPredictor, error_comment
from lal_allennlp.predictors.inputs import check_kbest, escape_brackets, refuse_kbest, words_and_tags

OUTPUT_KEYS = ("tree", "words", "pos_tags", "spans")
CONFIDENCE_KEYS = (
    "span_confidences",
    "head_confidences",
    "dependency_label_confidences",
    "tree_probability",
    "sentence_confidence",
)
"""What `"confidence": true` adds to a parse, where the model gives it."""
DEPENDENCY_KEYS = ("heads", "dependency_labels", "conllu")


@Predictor.register("lal_parser")
class ParserPredictor(CheckedPredictor):
    """
    Registered as a `Predictor` with name "lal_parser"; the default predictor of this
    package's models. The dataset reader's `text_to_instance(tokens, tags)` builds instances.
    Requests are checked and failures handled as `CheckedPredictor` describes; the words of
    `tokens` have their brackets written the treebank way (`escape_brackets`), so that every
    output tree reads back with one leaf per word.

    # Parameters

    model : `Model`
    dataset_reader : `DatasetReader`
    frozen : `bool`, optional (default = `True`)
    max_words : `Optional[int]`, optional (default = `inputs.DEFAULT_MAX_WORDS`)
        Longer sentences are refused (see `CheckedPredictor`).
    """

    def predict(self, sentence: str) -> JsonDict:
        return self.predict_json({"sentence": sentence})

    def _json_to_instance(self, json_dict: JsonDict) -> Instance:
        tokens, tags = words_and_tags(json_dict)
        tokens = [escape_brackets(token) for token in tokens]
        if tags is not None:
            tags = [escape_brackets(tag) for tag in tags]
        self._check_length(tokens)
        instance = self._text_to_instance(tokens, tags)
        # The request's own switch, read by the model's forward (`explain`); every instance
        # of a predictor carries it, so instances batch together.
        instance.add_field("explain", MetadataField(bool(json_dict.get("explain", False))))
        # `"confidence"` travels in the sentence's metadata, which the forward of every parser
        # takes; `SpanParserBase._parse` reads it.
        instance["metadata"].metadata["confidence"] = bool(json_dict.get("confidence", False))
        instance["metadata"].metadata["kbest"] = kbest = check_kbest(json_dict)
        refuse_kbest(kbest, self._model)
        return instance

    def _text_to_instance(self, tokens: List[str], tags: Optional[List[str]]) -> Instance:
        return self._dataset_reader.text_to_instance(tokens, tags)  # type: ignore

    def _output(self, output: JsonDict, instance: Instance) -> JsonDict:
        explain = "explain" in instance.fields and instance["explain"].metadata
        result = self._select(output, explain)
        if instance["metadata"].metadata.get("confidence", False):
            given = {key: output[key] for key in CONFIDENCE_KEYS if output.get(key) is not None}
            if not given:
                raise ConfigurationError(
                    f"This {type(self._model).__name__} gives no confidences (they are the "
                    'probabilities of a model trained with span_loss: "crf", or of a joint '
                    'model\'s heads). Leave out "confidence".'
                )
            # Plain Python floats already (`tolist()` in the model), as explanations are.
            result.update(given)
        if output.get("kbest") is not None:
            result["kbest"] = output["kbest"]
        return result

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
        # No `sanitize`: the span parsers' human-readable output is plain Python already
        # (strings, and lists of them and of ints made by `tolist()`), and its element-by-element
        # walk cost about 2 % of a parse (the predictor tests check every value's exact type).
        if explain:
            # Already plain lists of Python floats (`tolist()` in the model) too.
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
        if "error" in outputs:
            return error_comment(outputs)
        if "conllu" not in outputs:
            raise ConfigurationError(
                "CoNLL-U output needs a model that predicts dependencies (lal_joint_parser); "
                "this model predicts constituency trees only: use the lal_parser predictor."
            )
        return outputs["conllu"]
