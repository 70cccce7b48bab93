"""
The parsers in a spaCy pipeline: the factory `lal_parser`, a component that parses each sentence
of a `Doc` with a model archive of this package (through `lal_allennlp.api.Parser`).

    import spacy
    import lal_allennlp.spacy_component  # registers the factory (or the package's entry point)

    nlp = spacy.blank("en")
    nlp.add_pipe("sentencizer")
    nlp.add_pipe("lal_parser", config={"model": "model.tar.gz"})
    doc = nlp("The cat sat on the mat. It purred.")
    for sentence in doc.sents:
        print(sentence._.parse_string)       # (S (NP (DT The) (NN cat)) (VP ...) (. .))
        for child in sentence._.children:    # constituents, as benepar's users know them
            print(child._.labels, child.text)

What is set, per sentence (`doc.sents`; a doc without sentence boundaries is one sentence):

- Constituency models (`lal_span_parser`, `lal_joint_parser`): on spans,
  `span._.parse_string` (the bracketed subtree of the constituent the span is; for a sentence
  the whole tree without its `TOP` wrapper, as benepar writes it), `span._.labels` (the labels
  of the constituents exactly covering the span, outermost first, several for a unary chain;
  `()` for a span that is not a constituent or is one word with only its POS tag),
  `span._.children` (the child constituents, one-word spans of preterminals included) and
  `span._.parent` (the enclosing constituent, `None` for the sentence); on tokens,
  `token._.parse_string` and `token._.labels` (those of the one-token span). White-space tokens
  at a span's ends are not part of it here (a sentence may begin with a newline). `parse_string`,
  `children` and `parent` of a span of a parsed sentence that is not a constituent raise
  `ValueError`, as benepar's do.
- With `config={"confidence": True}` (models that give confidences, see below), the model's
  probabilities (`ParseResult`'s confidence fields):
  - `span._.confidence` on each constituent (models trained with `span_loss: "crf"`), the
    probability under the model's tree CRF that the tree holds that span with exactly its
    labels (`ParseResult.span_confidences`, the labelled marginal; a unary chain such as `S+VP`
    is one labelled span, so its spaCy span has one number). It is `None` for a span with no
    labelled span of its own (a word with only its POS tag; a sentence whose tree has no label
    over all its words, the `TOP` wrapper being no label), for a span that is not a
    constituent, and always without `confidence`;
  - `token._.head_confidence` and `token._.dep_confidence` (joint and dependency models): the
    probability of the token's head and of its label given the head (`None` for white space);
  - `span._.sentence_confidence` and `span._.tree_probability` on each sentence of
    `doc.sents` (`ParseResult.sentence_confidence`, the number to rank or filter sentences by,
    and `tree_probability`); `None` on other spans.
- Joint and dependency models: spaCy's own `token.head` (within the sentence; the root's head
  is itself) and `token.dep_`, the model's label for every token, the root's included (the
  joint parsers trained with head rules call it `ROOT`).
- Models that predict POS tags: `token.tag_`, on tokens without one only: a tagger earlier in
  the pipeline wins. Tags the tokens already have are given to the parser when every word of
  the sentence has one (a dependency model trained with tags needs them).

spaCy's tokens are the parser's words, never re-split; brackets are written `-LRB-` etc. in the
parse strings (the predictor does that) and the tree's leaves are mapped back to the tokens by
position. White-space tokens (`token.is_space`, such as a double space or a newline) are not
words: they are left out of the sentence given to the parser, lie inside the constituents around
them, and for dependencies hang from the word before them (the one after, at a sentence's start)
with the label `dep`. A sentence of white space only (a trailing newline, say) is not parsed and
gets no warning; for dependencies its first token is its root (`ROOT`), the others hang from it.

`confidence` needs a model that defines these probabilities (`Parser.capabilities.confidences`:
constituency parsers trained with `span_loss: "crf"`, joint and dependency parsers): with any
other model the component is not created (a `ConfigurationError` says what to train or to set
`confidence` false).

The Tree Transformer (`tree_transformer_lm`) leaves punctuation out of its trees, whose leaves
then are not the sentence's tokens: its trees are not set (a warning says so).

A sentence that cannot be parsed (too long for `max_words`, say) has no parse
(`span._.parse_string` is `None`) and a warning names it; the others are parsed. spaCy derives
sentence boundaries from the heads, so a doc with such a sentence gets no heads at all (heads
set on the other sentences only would merge that one into its neighbour); its constituency
attributes are still set.
"""
import logging
from typing import Any, Dict, Iterable, Iterator, List, Optional, Sequence, Tuple

import numpy
from allennlp.common.checks import ConfigurationError
from nltk import Tree
from spacy.attrs import DEP, HEAD
from spacy.language import Language
from spacy.tokens import Doc, Span, Token
from spacy.util import minibatch

from lal_allennlp.api import Parser, ParseResult
from lal_allennlp.predictors.inputs import DEFAULT_MAX_WORDS

logger = logging.getLogger(__name__)

# The label of the arc from a white-space token to the word it hangs from.
SPACE_LABEL = "dep"
# The label of the tree's root that benepar leaves out of its parse strings.
_TOP = "TOP"

# A constituent of a sentence, keyed by its tokens `(start, end_exclusive)` in the doc.
Key = Tuple[int, int]


class _Constituent:
    """The constituent(s) of a sentence covering one span of tokens: `labels` of the phrases
    there (outermost first), `parse_string` of the outermost subtree, the `parent` key (`None`
    for the sentence), the `children` keys (those of the innermost subtree) and the
    `confidence` of the labelled span (`None` unless asked for and the span has labels)."""

    __slots__ = ("labels", "parse_string", "parent", "children", "confidence")

    def __init__(self, labels: Tuple[str, ...], parse_string: str, parent: Optional[Key]):
        self.labels = labels
        self.parse_string = parse_string
        self.parent = parent
        self.children: List[Key] = []
        self.confidence: Optional[float] = None


def _register_extensions() -> None:
    """The extension attributes the component sets (once, so that importing twice is fine)."""
    if not Doc.has_extension("lal_constituents"):
        # Per doc, every constituent of its parsed sentences; `None` before the component ran.
        Doc.set_extension("lal_constituents", default=None)
    if not Doc.has_extension("lal_sentence_confidences"):
        # Per doc, (sentence_confidence, tree_probability) of each parsed sentence's words.
        Doc.set_extension("lal_sentence_confidences", default=None)
    for name in ("head_confidence", "dep_confidence"):
        if not Token.has_extension(name):
            Token.set_extension(name, default=None)
    for name, getter in (
        ("sentence_confidence", _sentence_number(0)),
        ("tree_probability", _sentence_number(1)),
    ):
        if not Span.has_extension(name):
            Span.set_extension(name, getter=getter)
    for name, getter in (
        ("parse_string", _span_parse_string),
        ("labels", _span_labels),
        ("children", _span_children),
        ("parent", _span_parent),
        ("confidence", _span_confidence),
    ):
        if not Span.has_extension(name):
            Span.set_extension(name, getter=getter)
    for name, getter in (("parse_string", _token_parse_string), ("labels", _token_labels)):
        if not Token.has_extension(name):
            Token.set_extension(name, getter=getter)


def _constituent(span: Span) -> Optional[_Constituent]:
    """The constituent that `span` is, white space at its ends left out; `None` where its
    sentence has no parse. `ValueError` for a span of a parsed sentence that is not one."""
    constituents = span.doc._.lal_constituents
    if constituents is None:
        return None
    found = constituents.get(_words_span(span))
    if found is None and _sentence_parsed(span):
        raise ValueError(
            f"{span.text!r} (tokens {span.start} to {span.end - 1}) is not a constituent of its "
            f"sentence's parse: `span._.labels` is () for such a span; use it to test first"
        )
    return found


def _sentence_parsed(span: Span) -> bool:
    """Whether the sentence of `span` has a parse: its words are a constituent."""
    doc = span.doc
    if not len(span) or not (doc.has_annotation("SENT_START") or doc.has_annotation("DEP")):
        sentence = doc[:]
    else:
        sentence = span.sent
    return _words_span(sentence) in doc._.lal_constituents


def _words_span(span: Span) -> Key:
    """The tokens of `span` without the white space at its ends, as a key."""
    start, end = span.start, span.end
    while start < end and span.doc[start].is_space:
        start += 1
    while end > start and span.doc[end - 1].is_space:
        end -= 1
    return start, end


def _span_parse_string(span: Span) -> Optional[str]:
    constituent = _constituent(span)
    return None if constituent is None else constituent.parse_string


def _span_labels(span: Span) -> Tuple[str, ...]:
    constituents = span.doc._.lal_constituents
    constituent = None if constituents is None else constituents.get(_words_span(span))
    return () if constituent is None else constituent.labels


def _span_confidence(span: Span) -> Optional[float]:
    constituents = span.doc._.lal_constituents
    constituent = None if constituents is None else constituents.get(_words_span(span))
    return None if constituent is None else constituent.confidence


def _sentence_number(which: int) -> Any:
    """The getter of a sentence-level confidence: entry `which` of the doc's pair for the
    sentence that `span` is (white space at its ends left out), `None` for other spans."""

    def getter(span: Span) -> Optional[float]:
        numbers = span.doc._.lal_sentence_confidences
        pair = None if numbers is None else numbers.get(_words_span(span))
        return None if pair is None else pair[which]

    return getter


def _span_children(span: Span) -> Iterator[Span]:
    constituent = _constituent(span)
    children = [] if constituent is None else constituent.children
    return (span.doc[start:end] for start, end in children)


def _span_parent(span: Span) -> Optional[Span]:
    constituent = _constituent(span)
    if constituent is None or constituent.parent is None:
        return None
    start, end = constituent.parent
    return span.doc[start:end]


def _token_parse_string(token: Token) -> Optional[str]:
    return _span_parse_string(token.doc[token.i : token.i + 1])


def _token_labels(token: Token) -> Tuple[str, ...]:
    return _span_labels(token.doc[token.i : token.i + 1])


class LalParserComponent:
    """
    The spaCy component of the factory `lal_parser` (see the module docstring).

    # Parameters

    nlp : `Language`
        The pipeline (for its vocabulary).
    name : `str`
        The component's name in the pipeline.
    parser : `Parser`
        The loaded parser.
    batch_size : `int`
        Sentences per forward pass of the model (of one doc, or of the docs of one batch of
        `nlp.pipe`).
    confidence : `bool`, optional (default = `False`)
        Whether to set the confidences (`span._.confidence`, `token._.head_confidence`,
        `token._.dep_confidence`, `span._.sentence_confidence`; for a model that gives none a
        `ConfigurationError` here, as parsing every sentence would fail).
    """

    def __init__(
        self, nlp: Language, name: str, parser: Parser, batch_size: int, confidence: bool = False
    ) -> None:
        _register_extensions()
        if confidence:
            _check_confidences(parser)
        self.name = name
        self.parser = parser
        self.batch_size = batch_size
        self.confidence = confidence

    def __call__(self, doc: Doc) -> Doc:
        self._parse_docs([doc])
        return doc

    def pipe(self, stream: Iterable[Doc], batch_size: int = 128) -> Iterator[Doc]:
        """The docs of `stream`, `batch_size` docs at a time, the sentences of them all parsed
        together (`self.batch_size` per forward pass)."""
        for docs in minibatch(stream, size=batch_size):
            self._parse_docs(docs)
            yield from docs

    def _parse_docs(self, docs: Sequence[Doc]) -> None:
        """Parses the sentences of `docs` together and sets their attributes."""
        sentences = [(doc, sentence) for doc in docs for sentence in _sentences(doc)]
        requests = []
        for _, sentence in sentences:
            words = [token for token in sentence if not token.is_space]
            request: Dict[str, Any] = {"tokens": [token.text for token in words]}
            if words and all(token.tag_ for token in words):
                request["tags"] = [token.tag_ for token in words]
            requests.append(request)
        # Sentences of white space only are not given to the parser.
        to_parse = [index for index, request in enumerate(requests) if request["tokens"]]
        # `confidence` only when asked for: `Parser`s of other kinds (and the tests' stand-ins)
        # need not take it.
        options = {"confidence": True} if self.confidence else {}
        parsed = self.parser.parse_many(
            [requests[index] for index in to_parse], batch_size=self.batch_size, **options
        )
        results: List[Optional[ParseResult]] = [None] * len(sentences)
        for index, result in zip(to_parse, parsed):
            results[index] = result
        by_doc: Dict[int, List[Tuple[Span, Optional[ParseResult]]]] = {}
        for (doc, sentence), result in zip(sentences, results):
            by_doc.setdefault(id(doc), []).append((sentence, result))
        for doc in docs:
            _annotate(doc, by_doc.get(id(doc), []))


def _check_confidences(parser: Parser) -> None:
    """A `ConfigurationError` unless `parser` gives confidences (constituency parsers trained
    as a tree CRF, joint and dependency parsers)."""
    if parser.capabilities.confidences:
        return
    model = parser.model
    span_loss = getattr(model, "span_loss", None)
    trained = f' trained with span_loss: "{span_loss}"' if span_loss is not None else ""
    raise ConfigurationError(
        f"lal_parser: confidence=True needs a model that gives probabilities: a constituency "
        f"parser trained with span_loss: \"crf\", a joint or a dependency parser; this model "
        f"is a {type(model).__name__}{trained}. Train with span_loss: \"crf\", or set the "
        f"component's confidence to false."
    )


def _sentences(doc: Doc) -> List[Span]:
    """The sentences of `doc`: `doc.sents`, or the whole doc without sentence boundaries."""
    if doc.has_annotation("SENT_START") or doc.has_annotation("DEP"):
        return list(doc.sents)
    return [doc[:]] if len(doc) else []


def _annotate(doc: Doc, parses: List[Tuple[Span, Optional[ParseResult]]]) -> None:
    """Sets the attributes of `doc` from the parses of its sentences (`None` for a sentence of
    white space only)."""
    constituents: Dict[Key, _Constituent] = {}
    sentence_numbers: Dict[Key, Tuple[Optional[float], Optional[float]]] = {}
    heads = list(range(len(doc)))
    labels = [""] * len(doc)
    all_heads = True
    for position, (sentence, result) in enumerate(parses):
        words = [token.i for token in sentence if not token.is_space]
        if result is not None and result.error is not None:
            logger.warning(
                "lal_parser could not parse sentence %d of the doc, %r: %s (it has no parse)",
                position,
                sentence.text[:80],
                result.reason,
            )
            all_heads = False
            continue
        if result is None:  # white space only: the first token is its root
            for token in sentence:
                heads[token.i] = sentence.start
                labels[token.i] = SPACE_LABEL if token.i > sentence.start else "ROOT"
            continue
        if result.tree_string is not None and len(result.words) != len(words):
            logger.warning(
                "lal_parser: the tree of sentence %d of the doc, %r, has %d words for its %d "
                "tokens (a model that leaves out punctuation?): its tree is not set",
                position,
                sentence.text[:80],
                len(result.words),
                len(words),
            )
        elif result.tree_string is not None:
            _add_constituents(Tree.fromstring(result.tree_string), words, constituents)
            if result.span_confidences is not None and result.spans is not None:
                _add_confidences(result, words, constituents)
        if result.sentence_confidence is not None and words:
            key = (words[0], words[-1] + 1)
            sentence_numbers[key] = (result.sentence_confidence, result.tree_probability)
        for name, numbers in (
            ("head_confidence", result.head_confidences),
            ("dep_confidence", result.dependency_label_confidences),
        ):
            for index, number in zip(words, numbers or []):
                doc[index]._.set(name, number)
        if result.pos_tags is not None:
            for index, tag in zip(words, result.pos_tags):
                if not doc[index].tag_:
                    doc[index].tag_ = tag
        if result.heads is None or result.dependency_labels is None:
            all_heads = False
            continue
        for index, head, label in zip(words, result.heads, result.dependency_labels):
            heads[index] = index if head == 0 else words[head - 1]
            labels[index] = label
        for token in sentence:
            if token.is_space:
                before = [index for index in words if index < token.i]
                heads[token.i] = before[-1] if before else words[0]
                labels[token.i] = SPACE_LABEL
    doc._.lal_constituents = constituents
    doc._.lal_sentence_confidences = sentence_numbers
    if all_heads and parses:
        # shape (len(doc), 2): per token, the head's offset from it and the label's string id
        array = numpy.zeros((len(doc), 2), dtype="uint64")
        offsets = [head - index for index, head in enumerate(heads)]
        array[:, 0] = numpy.array(offsets, dtype="int64").astype("uint64")  # as spaCy stores them
        array[:, 1] = [doc.vocab.strings.add(label) for label in labels]
        doc.from_array([HEAD, DEP], array)


def _add_constituents(tree: Tree, words: List[int], constituents: Dict[Key, _Constituent]) -> None:
    """Adds the constituents of a sentence's `tree` (leaves the words, whose tokens in the doc
    are `words`) to `constituents`, the sentence's without the `TOP` wrapper."""
    if tree.label() == _TOP and len(tree) == 1 and isinstance(tree[0], Tree):
        tree = tree[0]

    def visit(subtree: Tree, start: int, parent: Optional[Key], chain: Optional[Key]) -> int:
        """Adds `subtree`, whose first word is the `start`-th, and returns its end; `chain`: the
        key of the subtree above when it spans the same words (a unary chain)."""
        if isinstance(subtree[0], str):  # a preterminal: (TAG word)
            end = start + 1
        else:
            end = start + len(subtree.leaves())
        key = (words[start], words[end - 1] + 1)
        preterminal = isinstance(subtree[0], str)
        if chain == key:  # below a phrase over the same words: one constituent, labels added
            constituent = constituents[key]
            if not preterminal:
                constituent.labels += (subtree.label(),)
                constituent.children = []
        else:
            labels = () if preterminal else (subtree.label(),)
            constituent = _Constituent(labels, _one_line(subtree), parent)
            constituents[key] = constituent
            if parent is not None:
                constituents[parent].children.append(key)
        if not preterminal:
            child_start = start
            for child in subtree:
                child_start = visit(child, child_start, key, key)
        return end

    visit(tree, 0, None, None)


def _add_confidences(
    result: ParseResult, words: List[int], constituents: Dict[Key, _Constituent]
) -> None:
    """Gives each constituent of the sentence of `result` (its words' tokens in the doc are
    `words`) the confidence of its labelled span: the entry of `result.spans` over the same
    words whose label is its labels joined with "+" (how `spans` writes a unary chain). The
    sentence's constituent is the tree without `TOP`, whose span has no `TOP` entry: it gets
    that of its own labels; one labelled `TOP` (no label over all the words) gets none."""
    for (start, end, label), confidence in zip(result.spans, result.span_confidences):
        constituent = constituents.get((words[start], words[end - 1] + 1))
        if constituent is not None and "+".join(constituent.labels) == label:
            constituent.confidence = confidence


def _one_line(tree: Tree) -> str:
    """`tree` bracketed on one line, as the predictor writes it."""
    return " ".join(str(tree).split())


@Language.factory(
    "lal_parser",
    default_config={"batch_size": 32, "max_words": DEFAULT_MAX_WORDS, "confidence": False},
)
def make_lal_parser(
    nlp: Language,
    name: str,
    model: str,
    batch_size: int,
    max_words: Optional[int],
    confidence: bool = False,
) -> LalParserComponent:
    """
    The `lal_parser` component: the parser of the model archive `model` (a `model.tar.gz` of
    `allennlp train`, or its serialization directory) on the CPU, parsing `batch_size`
    sentences per forward pass; a sentence longer than `max_words` words (`None`: no limit)
    is not parsed. `confidence`: also set the confidences (models that give them; for others
    a `ConfigurationError`).
    """
    parser = Parser.load(model, max_words=max_words)
    return LalParserComponent(nlp, name, parser, batch_size, confidence=confidence)
