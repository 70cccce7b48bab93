"""The spaCy component `lal_parser` on a blank English pipeline with a sentencizer and tiny
archives: each sentence's tree and heads are those `Parser.parse` gives for its tokens, the
benepar-style span attributes agree with the tree, `nlp.pipe` equals one doc at a time, a
sentence that fails leaves the others parsed, and with `confidence` (a CRF-trained archive) each
constituent's `_.confidence` is the probability `Parser.parse` gives its labelled span."""
import logging
from typing import Dict, List, Tuple

import pytest
import spacy
from allennlp.common.checks import ConfigurationError
from nltk import Tree
from spacy.tokens import Doc, Span

from lal_allennlp.api import Parser, ParseResult
from lal_allennlp.spacy_component import LalParserComponent  # also registers the factory

# Two sentences, brackets in a token, and a white-space token (the double space).
TEXT = "The (old) cat sat  on the mat. Dogs bark."
TEXTS = [TEXT, "It rained. She gave him the book that he wanted.", "Dogs bark.", "The cat sat."]


@pytest.fixture(scope="module")
def archives(fixture_archive) -> Dict[str, str]:
    """One-epoch archives of the joint and dependency fixture configs."""
    return {family: fixture_archive(family) for family in ("joint_parser", "stack_attention")}


def _pipeline(archive: str, **config) -> spacy.language.Language:
    nlp = spacy.blank("en")
    nlp.add_pipe("sentencizer")
    nlp.add_pipe("lal_parser", config={"model": archive, **config})
    return nlp


@pytest.fixture(scope="module")
def nlp(archives) -> spacy.language.Language:
    return _pipeline(archives["joint_parser"])


@pytest.fixture(scope="module")
def parser(archives) -> Parser:
    return Parser.load(archives["joint_parser"])


def _words(sentence: Span) -> List[int]:
    """The doc positions of the sentence's words (its tokens that are not white space)."""
    return [token.i for token in sentence if not token.is_space]


def _without_top(tree_string: str) -> str:
    assert tree_string.startswith("(TOP ") and tree_string.endswith(")")
    return tree_string[len("(TOP ") : -1]


def _constituents(span: Span) -> List[Span]:
    """`span` and every constituent below it, through `_.children`."""
    found = [span]
    for child in span._.children:
        found.extend(_constituents(child))
    return found


def test_each_sentence_gets_the_tree_of_its_tokens(nlp, parser):
    doc = nlp(TEXT)
    sentences = list(doc.sents)
    assert [sentence.text for sentence in sentences] == [
        "The (old) cat sat  on the mat.",
        "Dogs bark.",
    ]
    assert doc[6].is_space
    for sentence in sentences:
        words = _words(sentence)
        result = parser.parse([doc[index].text for index in words])
        assert sentence._.parse_string == _without_top(result.tree_string)
        assert sentence._.parent is None
        assert [doc[index].tag_ for index in words] == result.pos_tags
        assert doc[6].tag_ == ""
    # The brackets are escaped in the tree and map back to their tokens by position.
    assert "-LRB-" in sentences[0]._.parse_string
    assert "(. -LRB-)" in doc[1]._.parse_string or " -LRB-)" in doc[1]._.parse_string


def test_span_attributes_agree_with_the_tree(nlp, parser):
    doc = nlp(TEXT)
    for sentence in doc.sents:
        words = _words(sentence)
        position = {index: word for word, index in enumerate(words)}
        result = parser.parse([doc[index].text for index in words])
        spans = set()
        for span in _constituents(sentence):
            children = list(span._.children)
            for child in children:
                assert child._.parent == span
            if children:  # the children tile the span, up to the white space between them
                assert children[0].start == span.start and children[-1].end == span.end
                for left, right in zip(children, children[1:]):
                    assert all(token.is_space for token in doc[left.end : right.start])
            else:  # a word: its preterminal
                assert len(span) == 1 and span[0]._.parse_string == span._.parse_string
                word = position[span.start]
                pos = Tree.fromstring(span._.parse_string).pos()
                assert pos == [(result.words[word], result.pos_tags[word])]
            assert Tree.fromstring(span._.parse_string).leaves() == [
                result.words[position[index]] for index in _words(span)
            ]
            if span._.labels:
                start, end = position[span.start], position[span.end - 1] + 1
                spans.add((start, end, "+".join(span._.labels)))
        assert spans == set(result.spans)


def test_a_span_that_is_not_a_constituent(nlp):
    doc = nlp("Dogs bark. The cat sat on the mat.")
    sentence = list(doc.sents)[1]
    size = len(sentence)
    spans = [sentence[i:j] for i in range(size) for j in range(i + 1, size + 1)]
    not_constituents = [span for span in spans if span not in _constituents(sentence)]
    assert not_constituents
    for span in not_constituents:
        assert span._.labels == ()
        with pytest.raises(ValueError, match="is not a constituent"):
            span._.parse_string


def test_heads_and_labels_are_the_parsers(nlp, parser):
    doc = nlp(TEXT)
    assert doc.has_annotation("DEP")
    assert len(list(doc.sents)) == 2
    for sentence in doc.sents:
        words = _words(sentence)
        result = parser.parse([doc[index].text for index in words])
        for index, head, label in zip(words, result.heads, result.dependency_labels):
            token = doc[index]
            assert token.head.i == (index if head == 0 else words[head - 1])
            assert token.dep_ == label
    # The white-space token hangs from the word before it.
    assert (doc[6].head.i, doc[6].dep_) == (5, "dep")


def _annotations(doc: Doc) -> Tuple:
    return (
        [sentence._.parse_string for sentence in doc.sents],
        [(token.head.i, token.dep_, token.tag_) for token in doc],
    )


@pytest.mark.parametrize("batch_size", [1, 3])
def test_pipe_equals_one_doc_at_a_time(nlp, batch_size, monkeypatch):
    one_by_one = [_annotations(nlp(text)) for text in TEXTS]
    parser = nlp.get_pipe("lal_parser").parser
    parse_many = parser.parse_many
    calls = []

    def counted(requests, batch_size):
        calls.append(len(requests))
        return parse_many(requests, batch_size=batch_size)

    monkeypatch.setattr(parser, "parse_many", counted)
    assert [_annotations(doc) for doc in nlp.pipe(TEXTS, batch_size=batch_size)] == one_by_one
    # The sentences of `batch_size` docs are parsed together.
    sentences = [2, 2, 1, 1]
    batches = [sentences[i : i + batch_size] for i in range(0, len(sentences), batch_size)]
    assert calls == [sum(batch) for batch in batches]


def test_a_sentence_that_fails_has_no_parse_and_the_others_do(archives, parser, caplog):
    nlp = _pipeline(archives["joint_parser"], max_words=4)
    with caplog.at_level(logging.WARNING, logger="lal_allennlp.spacy_component"):
        doc = nlp("Dogs bark. The cat sat on the mat. It rained.")
    first, second, third = doc.sents
    assert second._.parse_string is None and second._.labels == ()
    assert list(second._.children) == [] and second._.parent is None
    for sentence in (first, third):
        words = [token.text for token in sentence]
        assert sentence._.parse_string == _without_top(parser.parse(words).tree_string)
    # Heads only on some sentences would merge the failed one into its neighbour: none are set.
    assert not doc.has_annotation("DEP")
    assert len(list(doc.sents)) == 3
    warnings = [
        record.getMessage()
        for record in caplog.records
        if record.name == "lal_allennlp.spacy_component"
    ]
    assert len(warnings) == 1
    assert "sentence 1 of the doc, 'The cat sat on the mat.'" in warnings[0]
    assert "the sentence has 7 words, more than the limit of 4" in warnings[0]


def test_a_dependency_model_sets_heads_only_and_reads_the_tokens_tags(archives):
    nlp = _pipeline(archives["stack_attention"])
    dependency_parser = Parser.load(archives["stack_attention"])
    doc = nlp.make_doc("Dogs bark. It rained.")
    tags = ["NNS", "VBP", ".", "PRP", "VBD", "."]
    for token, tag in zip(doc, tags):
        token.tag_ = tag
    for name, component in nlp.pipeline:
        doc = component(doc)
    assert [token.tag_ for token in doc] == tags
    for sentence in doc.sents:
        assert sentence._.parse_string is None and sentence._.labels == ()
        result = dependency_parser.parse(
            [token.text for token in sentence], tags=[token.tag_ for token in sentence]
        )
        for token, head, label in zip(sentence, result.heads, result.dependency_labels):
            assert token.head.i == (token.i if head == 0 else sentence.start + head - 1)
            assert token.dep_ == label


def test_a_tagger_s_tags_are_kept(nlp):
    doc = nlp.make_doc("Dogs bark.")
    for token, tag in zip(doc, ["NNS", "VBP", "."]):
        token.tag_ = tag
    for name, component in nlp.pipeline:
        doc = component(doc)
    assert [token.tag_ for token in doc] == ["NNS", "VBP", "."]
    assert list(doc.sents)[0]._.parse_string is not None


def test_white_space_around_sentences(nlp, parser):
    doc = nlp("\n\nDogs bark. It rained.\n\n")
    first, second, blank = doc.sents
    assert doc[0].is_space and blank.text == "\n\n"
    # A span's white space at its ends is left out: the sentence is its words' constituent.
    expected = _without_top(parser.parse(["Dogs", "bark", "."]).tree_string)
    assert first._.parse_string == expected == doc[1:4]._.parse_string
    assert first._.labels == doc[1:4]._.labels != ()
    assert (doc[0].head.i, doc[0].dep_) == (1, "dep")  # the word after it, at a sentence's start
    # A sentence of white space only is not parsed; its token is its own root.
    assert blank._.parse_string is None and blank._.labels == ()
    assert (blank[0].head.i, blank[0].dep_) == (blank[0].i, "ROOT")


def test_a_doc_without_sentence_boundaries_is_one_sentence(archives, parser):
    nlp = spacy.blank("en")
    nlp.add_pipe("lal_parser", config={"model": archives["joint_parser"]})
    doc = nlp("Dogs bark. It rained.")
    (sentence,) = doc.sents
    words = [token.text for token in doc]
    assert sentence._.parse_string == _without_top(parser.parse(words).tree_string)


class _FixedParser:
    """A parser whose parse of every sentence is `result`, for trees the tiny models do not
    give (unary chains)."""

    def __init__(self, result: ParseResult) -> None:
        self.result = result

    def parse_many(self, requests: List[dict], batch_size: int) -> List[ParseResult]:
        return [self.result for _ in requests]


def test_unary_chains_give_several_labels_outermost_first():
    nlp = spacy.blank("en")
    nlp.add_pipe("sentencizer")
    result = ParseResult(
        words=["Go", "home"],
        pos_tags=["VB", "RB"],
        tree_string="(TOP (S (VP (VB Go) (ADVP (RB home)))))",
        heads=[0, 1],
        dependency_labels=["root", "advmod"],
    )
    component = LalParserComponent(nlp, "lal_parser", _FixedParser(result), batch_size=8)
    doc = component(nlp("Go home"))
    sentence = doc[:]
    assert sentence._.labels == ("S", "VP")
    assert sentence._.parse_string == "(S (VP (VB Go) (ADVP (RB home))))"
    assert [child.text for child in sentence._.children] == ["Go", "home"]
    go, home = sentence._.children
    assert (go._.labels, go._.parse_string, go._.parent) == ((), "(VB Go)", sentence)
    assert (home._.labels, home._.parse_string) == (("ADVP",), "(ADVP (RB home))")
    assert (doc[1]._.labels, doc[1]._.parse_string) == (("ADVP",), "(ADVP (RB home))")
    assert list(home._.children) == []
    # The root's label is the model's, and its head is itself.
    assert [(token.head.i, token.dep_, token.tag_) for token in doc] == [
        (0, "root", "VB"),
        (0, "advmod", "RB"),
    ]


def test_a_tree_without_the_punctuation_is_not_set(caplog):
    # As the Tree Transformer's: its leaves are not the sentence's tokens.
    nlp = spacy.blank("en")
    nlp.add_pipe("sentencizer")
    result = ParseResult(words=["Dogs", "bark"], tree_string="(X (X Dogs) (X bark))")
    component = LalParserComponent(nlp, "lal_parser", _FixedParser(result), batch_size=8)
    with caplog.at_level(logging.WARNING, logger="lal_allennlp.spacy_component"):
        doc = component(nlp("Dogs bark."))
    assert doc[:]._.parse_string is None and doc[:]._.labels == ()
    assert not doc.has_annotation("DEP")
    warnings = [record.getMessage() for record in caplog.records]
    assert warnings == [
        "lal_parser: the tree of sentence 0 of the doc, 'Dogs bark.', has 2 words for its 3 "
        "tokens (a model that leaves out punctuation?): its tree is not set"
    ]


@pytest.fixture(scope="module")
def crf_archive(fixture_archive) -> str:
    """A one-epoch `lal_span_parser` with a Label Attention Layer, trained as a tree CRF."""
    return fixture_archive("lal_parser")


def test_each_constituent_s_confidence_is_that_of_its_labelled_span(crf_archive):
    # One sentence per forward pass, as `Parser.parse`: the same numbers, to the last bit (in
    # batches, padding changes the float32 sums in the last digits).
    nlp = _pipeline(crf_archive, confidence=True, batch_size=1)
    parser = Parser.load(crf_archive)
    checked = 0
    for doc in nlp.pipe(TEXTS):
        for sentence in doc.sents:
            words = _words(sentence)
            position = {index: word for word, index in enumerate(words)}
            result = parser.parse([doc[index].text for index in words], confidence=True)
            assert sentence._.parse_string == _without_top(result.tree_string)
            expected = dict(zip(result.spans, result.span_confidences))
            found = set()
            for span in _constituents(sentence):
                span_words = _words(span)
                key = (
                    position[span_words[0]],
                    position[span_words[-1]] + 1,
                    "+".join(span._.labels),
                )
                if key in expected:
                    assert span._.confidence == expected[key]
                    assert 0.0 <= span._.confidence <= 1.0
                    found.add(key)
                else:  # a word with only its POS tag, or a sentence without a label of its own
                    assert span._.confidence is None
                    assert span._.labels in ((), ("TOP",))
                    assert span._.labels == () or span == sentence
            # The sentence: that of its labels under `TOP`, none when `TOP` is its only label.
            assert (sentence._.confidence is None) == (sentence._.labels == ("TOP",))
            # Every labelled span of the parse is a constituent with its confidence.
            assert found == set(result.spans)
            checked += len(found)
            # A span that is not a constituent (up to white space at its ends) has none.
            keys = {(_words(span)[0], _words(span)[-1]) for span in _constituents(sentence)}
            for i in range(len(sentence)):
                for j in range(i + 1, len(sentence) + 1):
                    span_words = _words(sentence[i:j])
                    if not span_words or (span_words[0], span_words[-1]) not in keys:
                        assert sentence[i:j]._.confidence is None
    assert checked


def test_without_confidence_there_are_none(crf_archive):
    doc = _pipeline(crf_archive)(TEXT)
    for sentence in doc.sents:
        assert sentence._.parse_string is not None
        assert all(span._.confidence is None for span in _constituents(sentence))


def test_confidence_with_a_model_not_trained_as_a_crf_is_refused(fixture_archive):
    # The span parser's fixture config keeps the default hinge loss.
    with pytest.raises(ConfigurationError, match=r'confidence=True .* span_loss: "crf"') as error:
        _pipeline(fixture_archive("span_parser"), confidence=True)
    assert "set the component's confidence to false" in str(error.value)
    assert 'span_loss: "hinge"' in str(error.value)


def test_a_unary_chain_s_confidence_is_that_of_its_joined_label():
    # Results with confidences as `Parser.parse_many(..., confidence=True)` gives them.
    nlp = spacy.blank("en")
    nlp.add_pipe("sentencizer")
    result = ParseResult(
        words=["Go", "home"],
        pos_tags=["VB", "RB"],
        tree_string="(TOP (S (VP (VB Go) (ADVP (RB home)))))",
        spans=[(0, 2, "S+VP"), (1, 2, "ADVP")],
        span_confidences=[0.75, 0.5],
    )
    component = LalParserComponent(nlp, "lal_parser", _FixedParser(result), batch_size=8)
    doc = component(nlp("Go home"))
    go, home = doc[:]._.children
    assert (doc[:]._.labels, doc[:]._.confidence) == (("S", "VP"), 0.75)
    assert (home._.labels, home._.confidence) == (("ADVP",), 0.5)
    assert (go._.labels, go._.confidence) == ((), None)
    # The whole tree under `TOP` when no label covers the sentence: no confidence.
    result = ParseResult(
        words=["Go", "home"],
        tree_string="(TOP (VB Go) (ADVP (RB home)))",
        spans=[(1, 2, "ADVP")],
        span_confidences=[0.5],
    )
    component = LalParserComponent(nlp, "lal_parser", _FixedParser(result), batch_size=8)
    doc = component(nlp("Go home"))
    assert (doc[:]._.labels, doc[:]._.confidence) == (("TOP",), None)
    assert doc[1:]._.confidence == 0.5
