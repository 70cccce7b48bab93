"""
The parsers from Python: `Parser.load("model.tar.gz")`, then `parse` one sentence or
`parse_many` a stream of them, each giving a `ParseResult` (words, tags, tree, spans, heads).

    from lal_allennlp import Parser

    parser = Parser.load("model.tar.gz")
    result = parser.parse("The cat sat.")          # or a list of words: ["The", "cat", ...]
    result.tree.pretty_print()
    for result in parser.parse_many(open("sentences.txt"), batch_size=32, progress=True):
        print(result.error or result.tree_string)

A thin layer over the predictors of `lal_allennlp.predictors` (which check each request, see
`inputs.py`, and parse a batch together unless one of its sentences fails, see `checked.py`):
the parser is the archive's default predictor, so a result holds what that predictor's JSON
output holds for the same request, in Python types. It is the one parse path of the package's
ways in: `lal-parse`, `lal-serve`, `lal-explain` and the spaCy component all parse through it.
It serves every model family of the package: constituency parsers (`lal_span_parser`), joint
parsers (`lal_joint_parser`, also heads and CoNLL-U), the unsupervised Tree Transformer
(`tree_transformer_lm`, unlabelled trees over the words without punctuation) and the
transition-based dependency parser (`stack_attention_parser`, heads only, no tree). What a
loaded model gives is `Parser.capabilities`, which the model declares
(`lal_allennlp.models.capabilities`).

Bad input: `parse` raises the predictors' `InputError` (a `ValueError`) saying what is wrong;
`parse_many` never stops at one sentence: a sentence that cannot be parsed gets a result whose
`error` says why, naming its 0-based position in the input, and the others are parsed.
"""
import os
import re
import tarfile
from dataclasses import dataclass, field
from itertools import islice
from typing import Any, Dict, Iterable, Iterator, List, Mapping, Optional, Sequence, Tuple, Union

from nltk import Tree

from lal_allennlp.models.capabilities import ParseCapabilities
from lal_allennlp.predictors.checked import CheckedPredictor
from lal_allennlp.predictors.inputs import DEFAULT_MAX_WORDS, InputError, refuse_kbest, shorten

Sentence = Union[str, Sequence[str], Mapping[str, Any]]
"""What `parse_many` takes per sentence: raw text, a list of words, or a predictor request
(`{"tokens": [...], "tags": [...]}`, see `lal_allennlp.predictors.parser_predictor`)."""

Span = Tuple[int, int, str]

# The keys of a predictor's output that `explain=True` adds: label attention parsers, then the
# Tree Transformer.
_EXPLANATION_KEYS = (
    "label_attention",
    "span_contributions",
    "explanation_note",
    "link_probabilities",
)
# The label of the unlabelled constituents of the Tree Transformer's trees.
_UNLABELLED = "X"
_ARCHIVE = "a model.tar.gz written by `allennlp train` (a tar archive holding config.json)"
# The "sentence K: " that names a failed sentence's position in the input of `parse_many`.
_POSITION = re.compile(r"^sentence \d+: ")


@dataclass(frozen=True)
class ParseResult:
    """
    The parse of one sentence. Fields the model does not predict are `None`.

    # Parameters

    words : `List[str]`
        The words parsed: the tokens given, or those of the sentence's text (Penn Treebank
        tokenisation; brackets written `-LRB-`, `-RRB-` by the constituency parsers); the Tree
        Transformer leaves out punctuation. Empty in a failed result.
    pos_tags : `Optional[List[str]]`
        Per word: predicted by a constituency parser (or the tags given, for a model that does
        not predict them); the dependency parser gives back the tags it was given, `None`
        without. `None` for the Tree Transformer.
    tree_string : `Optional[str]`
        The constituency tree, one-line bracketed (`(TOP (S ...))`; the Tree Transformer's
        constituents are labelled `X`). `None` for the dependency parser.
    spans : `Optional[List[Tuple[int, int, str]]]`
        The labelled constituents `(start, end_exclusive, label)` (unary chains joined with `+`;
        `X` for the Tree Transformer, whose whole-sentence span is included).
    heads : `Optional[List[int]]`
        Per word, the 1-based position of its head (0: the root); joint and dependency models.
    dependency_labels : `Optional[List[str]]`
        Per word, the label of the arc to its head; joint and dependency models.
    explanation : `Optional[Dict[str, Any]]`
        With `explain=True`: the predictor's explanation keys (`label_attention`,
        `span_contributions`, `explanation_note` for label attention parsers;
        `link_probabilities` for the Tree Transformer).
    span_confidences : `Optional[List[float]]`
        With `confidence=True` (models trained with `span_loss: "crf"`): per span of `spans`, in
        its order, the probability under the tree CRF that the tree holds that span with exactly
        that label.
    head_confidences : `Optional[List[float]]`
        With `confidence=True` (joint and dependency models): per word, the model's probability
        of its head (the joint parser's `P(head | word)`; for the transition parser, that of the
        transition that attached the word, given the decoded history).
    dependency_label_confidences : `Optional[List[float]]`
        With `confidence=True` (joint and dependency models): per word, the probability of its
        label given its head.
    tree_probability : `Optional[float]`
        With `confidence=True`: the model's probability of the whole parse (see the model's
        `_confidences`).
    sentence_confidence : `Optional[float]`
        With `confidence=True`: the mean of the parse's confidences, the expected fraction of
        its decisions that are right; unlike `tree_probability` it does not shrink with the
        sentence's length, so it is the number to rank or filter parses by.
    kbest : `Optional[List[Dict[str, Any]]]`
        With `kbest=k` (span CKY parsers and the transition parser): the k best parses,
        best first, as the predictor gives them (`tree`, `spans`, `score`, and `probability`
        for a CRF; `heads`, `dependency_labels`, `score` for the transition parser).
    error : `Optional[str]`
        In a result of `parse_many`, why the sentence could not be parsed (every other field
        then empty or `None`).
    """

    words: List[str]
    pos_tags: Optional[List[str]] = None
    tree_string: Optional[str] = None
    spans: Optional[List[Span]] = None
    heads: Optional[List[int]] = None
    dependency_labels: Optional[List[str]] = None
    explanation: Optional[Dict[str, Any]] = None
    error: Optional[str] = None
    span_confidences: Optional[List[float]] = None
    head_confidences: Optional[List[float]] = None
    dependency_label_confidences: Optional[List[float]] = None
    tree_probability: Optional[float] = None
    sentence_confidence: Optional[float] = None
    kbest: Optional[List[Dict[str, Any]]] = None
    # The predictor's CoNLL-U text of the sentence, for `to_conllu`.
    conllu: Optional[str] = field(default=None, repr=False)

    @property
    def reason(self) -> Optional[str]:
        """`error` without the `sentence K: ` that names the position in `parse_many`'s input:
        what was wrong, for callers that name the sentence their own way (a line of
        `lal-parse`, `sentences[K]` of `lal-serve`, a doc's sentence in spaCy)."""
        return None if self.error is None else _POSITION.sub("", self.error, count=1)

    @property
    def tree(self) -> Optional[Tree]:
        """The constituency tree as an `nltk.Tree` (a new one on each access, so that changing
        it leaves the result as it is); `None` where `tree_string` is."""
        return None if self.tree_string is None else Tree.fromstring(self.tree_string)

    def to_conllu(self) -> str:
        """The sentence in CoNLL-U (one row per word, with the predicted heads and labels, and
        a blank line after it); models that predict heads only."""
        if self.error is not None:
            raise ValueError(f"No CoNLL-U for a sentence that was not parsed: {self.error}")
        if self.conllu is None:
            raise ValueError(
                "CoNLL-U needs heads, and this model predicts constituency trees only: use a "
                "joint (lal_joint_parser) or dependency (stack_attention_parser) model"
            )
        return self.conllu

    def to_json(self) -> Dict[str, Any]:
        """The result as the predictor's JSON output names it (`tree` for `tree_string`, the
        explanation's keys at the top level, `conllu` for models with heads), leaving out what
        the model does not give; a failed result is `{"error": ...}`."""
        if self.error is not None:
            return {"error": self.error}
        output: Dict[str, Any] = {"words": self.words}
        for key, value in (
            ("pos_tags", self.pos_tags),
            ("tree", self.tree_string),
            ("spans", None if self.spans is None else [list(span) for span in self.spans]),
            ("heads", self.heads),
            ("dependency_labels", self.dependency_labels),
            ("conllu", self.conllu),
            ("span_confidences", self.span_confidences),
            ("head_confidences", self.head_confidences),
            ("dependency_label_confidences", self.dependency_label_confidences),
            ("tree_probability", self.tree_probability),
            ("sentence_confidence", self.sentence_confidence),
            ("kbest", self.kbest),
        ):
            if value is not None:
                output[key] = value
        output.update(self.explanation or {})
        return output

    @classmethod
    def from_output(cls, output: Mapping[str, Any], tags_given: bool = False) -> "ParseResult":
        """The result of a predictor's JSON `output`; `tags_given`: whether the request had
        `tags` (the dependency parser's `pos` holds `_` for each word otherwise)."""
        if "tree" in output:
            pos_tags = output.get("pos_tags")
        else:
            pos_tags = output["pos"] if tags_given else None
        spans = None
        if "spans" in output:
            spans = [
                (span[0], span[1], span[2] if len(span) == 3 else _UNLABELLED)
                for span in output["spans"]
            ]
        explanation = {key: output[key] for key in _EXPLANATION_KEYS if key in output}
        return cls(
            words=list(output["words"]),
            pos_tags=None if pos_tags is None else list(pos_tags),
            tree_string=output.get("tree"),
            spans=spans,
            heads=output.get("heads"),
            dependency_labels=output.get("dependency_labels"),
            explanation=explanation or None,
            span_confidences=output.get("span_confidences"),
            head_confidences=output.get("head_confidences"),
            dependency_label_confidences=output.get("dependency_label_confidences"),
            tree_probability=output.get("tree_probability"),
            sentence_confidence=output.get("sentence_confidence"),
            kbest=output.get("kbest"),
            conllu=output.get("conllu"),
        )


class Parser:
    """
    A trained parser of this package, loaded once and called on sentences: `Parser.load(path)`.
    See the module docstring.

    # Parameters

    predictor : `CheckedPredictor`
        One of the package's predictors (`lal_parser`, `lal_unsupervised_parser`,
        `lal_dependency_parser`) around the model.
    """

    def __init__(self, predictor: CheckedPredictor) -> None:
        self.predictor = predictor

    @property
    def model(self) -> Any:
        """The AllenNLP model parsing."""
        return self.predictor._model

    @property
    def capabilities(self) -> ParseCapabilities:
        """What the model gives (trees, heads, tags, explanations, confidences), as the model
        declares it for its configuration."""
        return self.model.capabilities

    def check(self, sentence: Sentence) -> None:
        """Raises the `InputError` that parsing `sentence` (as `parse_many` takes it) would
        raise for a bad sentence (wrong type, empty, control characters, too long, tags that
        do not fit), without parsing it: for callers that refuse a whole request up front."""
        request = as_request(sentence, False)
        try:
            self.predictor._json_to_instance(request)
        except InputError:
            raise
        except (TypeError, ValueError, KeyError) as error:
            raise InputError(str(error)) from error

    @classmethod
    def load(
        cls,
        path: Union[str, "os.PathLike[str]"],
        cuda_device: int = -1,
        max_words: Optional[int] = DEFAULT_MAX_WORDS,
        precision: Optional[str] = None,
        overrides: Optional[Mapping[str, Any]] = None,
    ) -> "Parser":
        """
        The parser of a model archive (`model.tar.gz` of `allennlp train`, or the serialization
        directory holding its `config.json`), on the GPU `cuda_device` (-1: the CPU). Longer
        sentences than `max_words` words are refused with an `InputError` (`None`: no limit).
        `precision` (`"float32"`, `"bfloat16"`, `"float16"`, `"auto"`) overrides the span parsers'
        `embedder_precision` (`None`: the archive's own setting). `overrides`: settings of the
        archive's config to change, as `allennlp evaluate -o` takes them (e.g.
        `{"model.span_decoding": "mbr"}`).
        A missing path raises `FileNotFoundError`; a file that is not a model archive, or an
        archive of a model that is not one of this package's parsers, `ValueError`.
        """
        from allennlp.models.archival import load_archive
        from allennlp.predictors.predictor import Predictor

        path = os.fspath(path)
        _check_archive(path)
        try:
            archive = load_archive(
                path, cuda_device=cuda_device, overrides=dict(overrides or {})
            )
        except (tarfile.TarError, EOFError) as error:  # such as a truncated archive
            problem = str(error).splitlines()[0] if str(error) else type(error).__name__
            raise ValueError(
                f"{path} is not a readable model archive ({problem}): expected {_ARCHIVE}"
            ) from error
        if precision is not None:
            from lal_allennlp.models.span_parser_base import set_embedder_precision

            set_embedder_precision(archive.model, precision, path)
        predictor = Predictor.from_archive(archive)
        if not isinstance(predictor, CheckedPredictor):
            raise ValueError(
                f"{path} holds a {type(archive.model).__name__} model, not one of lal_allennlp's "
                f"parsers: load it with allennlp's Predictor.from_archive instead"
            )
        predictor.max_words = max_words
        predictor.raise_limit = "load the parser with a higher max_words (None: no limit)"
        return cls(predictor)

    def parse(
        self,
        sentence: Union[str, Sequence[str]],
        tags: Optional[Sequence[str]] = None,
        explain: bool = False,
        confidence: bool = False,
        kbest: int = 1,
    ) -> ParseResult:
        """
        The parse of `sentence`, raw text (split into Penn Treebank tokens) or a list of words,
        with `tags` (one POS tag per word; a dependency model trained with tags needs them).
        `explain`: also the model's explanation (`ParseResult.explanation`; label attention
        parsers and the Tree Transformer). `confidence`: also the model's probabilities
        (`span_confidences` of a model trained with `span_loss: "crf"`, `head_confidences` and
        `dependency_label_confidences` of joint and dependency models, `tree_probability`,
        `sentence_confidence`; a model without them raises a `ConfigurationError`). `kbest`:
        also the `kbest` best parses (`ParseResult.kbest`; span CKY parsers and the transition
        parser, another model raises an `InputError`). A sentence that cannot be parsed raises
        the error: `InputError` for a bad sentence (empty, control characters, too long, ...).
        """
        request = _request(sentence, tags, explain, confidence, kbest)
        return ParseResult.from_output(self.predictor.predict_json(request), "tags" in request)

    def parse_many(
        self,
        sentences: Iterable[Sentence],
        batch_size: int = 32,
        progress: bool = False,
        explain: bool = False,
        confidence: bool = False,
        kbest: int = 1,
    ) -> Iterator[ParseResult]:
        """
        The parses of `sentences` (each raw text, a list of words or a request such as
        `{"tokens": [...], "tags": [...]}`), one result per sentence in the input's order,
        parsed `batch_size` at a time: the iterable is read one batch ahead of the results, so
        a file or a generator streams. `progress`: a tqdm progress bar on stderr. A sentence
        that cannot be parsed does not stop the others: its result has `error` set to
        `"sentence K: what was wrong"`, K its 0-based position in `sentences`. A batch with such
        a sentence is parsed again one sentence at a time, so that only that one is lost.
        `explain`, `confidence` and `kbest` as for `parse`, for every sentence.
        """
        if isinstance(sentences, (str, Mapping)):
            raise TypeError(
                "parse_many takes an iterable of sentences (such as a list of strings); for one "
                "sentence use parse"
            )
        if batch_size < 1:
            raise ValueError(f"batch_size must be at least 1, got {batch_size}")
        refuse_kbest(kbest, self.model)  # once here, not as an error on every sentence
        iterator = iter(sentences)
        bar = None
        if progress:
            from tqdm import tqdm

            total = len(sentences) if isinstance(sentences, Sequence) else None
            bar = tqdm(total=total, unit=" sentences", desc="Parsing")
        try:
            start = 0
            while True:
                batch = list(islice(iterator, batch_size))
                if not batch:
                    return
                results = self._parse_batch(batch, start, explain, confidence, kbest)
                if bar is not None:
                    bar.update(len(batch))
                yield from results
                start += len(batch)
        finally:
            if bar is not None:
                bar.close()

    def _parse_batch(
        self,
        batch: List[Sentence],
        start: int,
        explain: bool,
        confidence: bool = False,
        kbest: int = 1,
    ) -> List[ParseResult]:
        """The results of the sentences `batch`, the first at position `start` of the input.
        The predictor parses them together and, if that fails, each once more on its own
        (`CheckedPredictor.predict_batch_outcomes`): a failing sentence costs only itself."""
        results: List[Optional[ParseResult]] = [None] * len(batch)
        requests: List[Tuple[int, Dict[str, Any]]] = []
        for offset, sentence in enumerate(batch):
            try:
                requests.append((offset, as_request(sentence, explain, confidence, kbest)))
            except InputError as error:
                results[offset] = _failed(start + offset, error)
        outcomes = self.predictor.predict_batch_outcomes([request for _, request in requests])
        for (offset, request), outcome in zip(requests, outcomes):
            if isinstance(outcome, Exception):
                results[offset] = _failed(start + offset, outcome)
            else:
                results[offset] = ParseResult.from_output(outcome, "tags" in request)
        return results  # type: ignore[return-value]


def _check_archive(path: str) -> None:
    """Raises `FileNotFoundError` for a missing `path` and `ValueError` for one that is not a
    model archive (or serialization directory) holding `config.json`."""
    if not os.path.exists(path):
        raise FileNotFoundError(f"No model archive at {path}: expected {_ARCHIVE}")
    if os.path.isdir(path):
        if not os.path.isfile(os.path.join(path, "config.json")):
            raise ValueError(
                f"{path} is a directory without config.json, not a serialization directory of "
                f"`allennlp train`: give its model.tar.gz, {_ARCHIVE}"
            )
        return
    try:
        # `allennlp train` writes config.json first, so this reads only the archive's start.
        with tarfile.open(path, "r:*") as archive:
            member = archive.next()
            while member is not None and member.name.lstrip("./") != "config.json":
                member = archive.next()
    except (tarfile.TarError, EOFError, OSError):
        raise ValueError(
            f"{path} is not a model archive (not a tar file, compressed or not): expected "
            f"{_ARCHIVE}"
        ) from None
    if member is None:
        raise ValueError(f"{path} is a tar archive without config.json: expected {_ARCHIVE}")


def _request(
    sentence: Any,
    tags: Optional[Sequence[str]],
    explain: bool,
    confidence: bool = False,
    kbest: int = 1,
) -> Dict[str, Any]:
    """The predictor request of a sentence given as text or a list of words (and tags)."""
    if isinstance(sentence, str):
        request: Dict[str, Any] = {"sentence": sentence}
    elif isinstance(sentence, Sequence):
        request = {"tokens": list(sentence)}
    else:
        raise InputError(
            f"a sentence must be a string or a list of words, got {shorten(sentence)}"
        )
    if tags is not None:
        request["tags"] = list(tags) if isinstance(tags, (list, tuple)) else tags
    if explain:
        request["explain"] = True
    if confidence:
        request["confidence"] = True
    if kbest != 1:
        request["kbest"] = kbest
    return request


def as_request(
    sentence: Sentence, explain: bool, confidence: bool = False, kbest: int = 1
) -> Dict[str, Any]:
    """The predictor request of one item of `parse_many`: a request as given (a copy, with
    `explain` and `confidence` when true and `kbest` when not 1), or that of a text or list of
    words. Callers that batch sentences of different requests (`lal-serve`) give each its own
    switches this way."""
    if isinstance(sentence, Mapping):
        request = dict(sentence)
        if explain:
            request["explain"] = True
        if confidence:
            request["confidence"] = True
        if kbest != 1:
            request["kbest"] = kbest
        return request
    return _request(sentence, None, explain, confidence, kbest)


def _failed(position: int, error: Exception) -> ParseResult:
    """The result of the sentence at `position` of `parse_many` that failed with `error`."""
    return ParseResult(words=[], error=f"sentence {position}: {error}")
