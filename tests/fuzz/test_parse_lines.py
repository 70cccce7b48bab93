"""
Generated input lines through `lal-parse`'s `parse_all_lines` and a real (untrained, tiny) span
parser: arbitrary Unicode text (control characters and lone surrogates included), arbitrary
bytes, bracket-heavy text and very long tokens. Whatever the lines, no exception escapes, there
is one output per line, and every output is `""` or a tree that reads back (with the package's
PTB reader) with one leaf per token of its line.
"""
import io
from typing import List, Union

import pytest
from allennlp.common import Params
from allennlp.data import DatasetReader, Vocabulary
from allennlp.models import Model
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from lal_allennlp.commands.parse import parse_all_lines
from lal_allennlp.predictors import ParserPredictor
from lal_allennlp.predictors.inputs import escape_brackets, find_bad_character
from lal_allennlp.syntax.tokenizer import ptb_tokenize
from lal_allennlp.syntax.trees import parse_trees
from tests.conftest import FIXTURES_ROOT

# Every line is parsed by the real model: a handful of short sentences per example takes a few
# milliseconds. Derandomized, so that CI runs the same examples every time.
SETTINGS = settings(
    max_examples=120,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


@pytest.fixture(scope="module")
def predictor() -> ParserPredictor:
    params = Params.from_file(str(FIXTURES_ROOT / "span_parser" / "experiment.jsonnet"))
    reader = DatasetReader.from_params(params.pop("dataset_reader"))
    vocab = Vocabulary.from_instances(reader.read(str(FIXTURES_ROOT / "ptb" / "train")))
    model = Model.from_params(vocab=vocab, params=params.pop("model"))
    return ParserPredictor(model, reader)


# Any character at all, lone surrogates and control characters included.
any_character = st.characters(exclude_categories=())
brackets_and_friends = st.sampled_from(
    ["(", ")", "[", "]", "{", "}", "-LRB-", "((", "f(x)", ":-)", "\x00", "\x1b[0m", "\u2028",
     "\t", " ", "\u00a0", "\ufeff", "'", '"', "...", "\u200b", "日本", "\udcff"]
)
word = st.text(st.characters(codec="utf-8", exclude_categories=("Z", "C")), min_size=1,
               max_size=8)
# A very long token, with a bracket in it or not. Lines give at most a few dozen tokens: the
# PTB reader refuses trees nested deeper than `trees.MAX_DEPTH`, which the parse of a few
# hundred words can be, and long sentences are slow through the chart.
long_token = st.tuples(
    st.integers(100, 3000), st.sampled_from(["", "(", ")", "[", "\x00"]), st.integers(0, 50)
).map(lambda parts: "a" * parts[0] + parts[1] + "é" * parts[2])
piece = st.one_of(word, brackets_and_friends, long_token)
bracket_text = st.lists(piece, max_size=12).map(" ".join)
text_line = st.one_of(st.text(any_character, max_size=40), bracket_text)
byte_line = st.one_of(
    st.binary(max_size=40),
    text_line.map(lambda text: text.encode("utf-8", errors="surrogatepass")),
)
lines_strategy = st.lists(st.one_of(text_line, byte_line), min_size=1, max_size=6)


def _text(line: Union[str, bytes], number: int) -> str:
    """A line as text: bytes decoded from UTF-8, a byte order mark dropped from line 1."""
    if isinstance(line, str):
        return line
    return line.decode("utf-8-sig" if number == 1 else "utf-8")


def _tokens(line: Union[str, bytes], number: int, pretokenized: bool) -> List[str]:
    """What a line that parses must give: its tokens, brackets escaped."""
    text = _text(line, number)
    words = text.split() if pretokenized else ptb_tokenize(text)
    return [escape_brackets(w) for w in words]


def _decodes_cleanly(line: Union[str, bytes], number: int) -> bool:
    """Whether a line is text without control characters (else it cannot give a tree)."""
    try:
        return find_bad_character(_text(line, number)) is None
    except UnicodeDecodeError:
        return False


@SETTINGS
@given(lines=lines_strategy, pretokenized=st.booleans(), batch_size=st.integers(1, 4))
@example(lines=["The (cat) sat .", b"f(x) [y] {z}", "Yes"], pretokenized=False, batch_size=2)
@example(lines=["f(x) ( ) [", "\x1b[0m", "a\u2028b\x0cc"], pretokenized=True, batch_size=3)
def test_every_line_gives_one_readable_output(predictor, lines, pretokenized, batch_size):
    errors = io.StringIO()
    parsed = parse_all_lines(
        predictor, lines, batch_size, errors, progress=False, pretokenized=pretokenized
    )
    assert len(parsed.outputs) == len(lines) == len(parsed.texts)
    for number, (line, output) in enumerate(zip(lines, parsed.outputs), 1):
        assert "\n" not in parsed.texts[number - 1]
        clean = _decodes_cleanly(line, number)
        tokens = _tokens(line, number, pretokenized) if clean else []
        if tokens:
            # Clean text with words: the real model parses it, one leaf per token.
            assert number not in parsed.failed
            (tree, _), = list(parse_trees(output))
            assert tree.label() == "TOP"
            assert tree.leaves() == tokens
        else:
            # Undecodable, control characters or no words: no tree, and a message; only the
            # first two are failures.
            assert output == ""
            assert (number in parsed.failed) == (not clean)
            assert f"line {number}: " in errors.getvalue()


@settings(SETTINGS, max_examples=60)
@given(lines=st.lists(st.binary(max_size=30), min_size=1, max_size=8))
def test_bytes_are_decoded_line_by_line(predictor, lines):
    # A line that is not UTF-8 fails alone, reported by its number; the others are decoded.
    errors = io.StringIO()
    lines = [line.replace(b"\n", b" ").replace(b"\r", b" ") for line in lines]
    parsed = parse_all_lines(predictor, lines, 4, errors, progress=False)
    for number, line in enumerate(lines, 1):
        try:
            _text(line, number)
        except UnicodeDecodeError:
            assert number in parsed.failed
            assert f"line {number}: not valid utf-8" in errors.getvalue()
