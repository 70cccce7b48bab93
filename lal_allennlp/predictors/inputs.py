"""
What a user gives a parser, checked before it reaches a model: the requests of the predictors
(`{"sentence": ...}`, `{"tokens": [...], "tags": [...]}`) and the lines of `lal-parse`. Every
problem is an `InputError` whose message says what is wrong with the request and what to do,
so that the callers can report it for that one sentence and go on with the others.

Choices, applied everywhere:

* Control characters (Unicode category Cc, such as NUL or the ESC of terminal colour codes,
  except the white space tab, line feed, carriage return, form feed and vertical tab) and lone
  surrogates (what Python makes of undecodable bytes, or `\\udcff` escapes in JSON) are
  rejected, not stripped: they are not text, a word holding one is not a word the model knows,
  and silently dropping them would parse something other than what was given.
* A token must be a non-empty string without white space: a tree or a CoNLL-U line could not
  hold it as one word.
* Round brackets inside words (and tags) are written as the Penn Treebank writes them, `-LRB-`
  and `-RRB-` (`escape_brackets`), by the predictors whose output is a bracketed tree, so that
  the tree reads back with one leaf per word; `sentence` text gets this from the tokenizer
  already.
* A sentence longer than a predictor's `max_words` (`DEFAULT_MAX_WORDS`) is refused: a chart
  parser's memory grows with the square of the length and its decoder's time with the cube, so
  a few thousand words (usually a document without sentence breaks) would run for a very long
  time or exhaust memory instead of failing.
"""
import re
import unicodedata
from typing import Any, List, Optional, Tuple

from allennlp.common.checks import ConfigurationError

from lal_allennlp.syntax.tokenizer import ptb_tokenize

DEFAULT_MAX_WORDS = 1000
"""The longest sentence (in words) the predictors and `lal-parse` parse by default."""

# Control characters that are white space in text: tab, line feed, vertical tab, form feed,
# carriage return.
_WHITE_SPACE_CONTROLS = frozenset("\t\n\v\f\r")
# Every character that a word or tag may not hold: white space (`str.isspace`, the same test
# as the pattern's `\s`), control characters (category Cc) and lone surrogates (Cs). One search
# over a whole request clears the usual clean one; only a request it flags is checked item by
# item, for the message.
_SUSPECT = re.compile("[\\s\x00-\x1f\x7f-\x9f\ud800-\udfff]")
# A word that is one of these brackets is written as the Penn Treebank writes it.
_BRACKET_WORDS = {
    "(": "-LRB-",
    ")": "-RRB-",
    "[": "-LSB-",
    "]": "-RSB-",
    "{": "-LCB-",
    "}": "-RCB-",
}
# Round brackets are also replaced inside words: the bracketed tree format cannot hold them.
_ROUND_BRACKETS = str.maketrans({"(": "-LRB-", ")": "-RRB-"})
# How much of a long value an error message shows.
_SHOWN_CHARACTERS = 60


class InputError(ConfigurationError, ValueError):
    """A request or input line that cannot be parsed; the message says why and what to do.
    A `ConfigurationError` (as AllenNLP's predictors raise for bad requests) and a
    `ValueError`."""

    def __reduce__(self):  # type: ignore[no-untyped-def]
        return (self.__class__, (self.message,))


def shorten(value: Any) -> str:
    """`repr(value)`, cut to about `_SHOWN_CHARACTERS` characters for an error message."""
    text = repr(value)
    if len(text) <= _SHOWN_CHARACTERS:
        return text
    return text[: _SHOWN_CHARACTERS - 5] + " ...' (cut)"


def find_bad_character(text: str) -> Optional[Tuple[int, str]]:
    """The 0-based position and a description of the first control character (other than
    white space) or lone surrogate in `text`, or `None`."""
    for position, character in enumerate(text):
        category = unicodedata.category(character)
        if category == "Cc" and character not in _WHITE_SPACE_CONTROLS:
            name = unicodedata.name(character, "")
            described = f"the control character U+{ord(character):04X}"
            return position, described + (f" ({name})" if name else "")
        if category == "Cs":
            return position, f"the lone surrogate U+{ord(character):04X} (not a character)"
    return None


def check_text(text: str, what: str) -> None:
    """Raises an `InputError` if `text` (described as `what` in the message) holds a control
    character or a lone surrogate."""
    bad = find_bad_character(text)
    if bad is not None:
        position, described = bad
        if "surrogate" in described:  # undecodable bytes read with errors="surrogateescape"
            advice = (
                "the input is not valid UTF-8 there; convert it to UTF-8, e.g. with "
                "`iconv -f LATIN1 -t UTF-8` (name the file's real encoding)"
            )
        else:
            advice = (
                "remove control characters from the input (they are not text), e.g. with "
                "`tr -d '\\000-\\010\\016-\\037\\177'`"
            )
        raise InputError(f"{what} holds {described} at character {position + 1}: {advice}")


def escape_brackets(word: str) -> str:
    """The word as the Penn Treebank writes it in a tree: `(` -> `-LRB-`, `[` -> `-LSB-`,
    `{` -> `-LCB-` (and the closing ones) as whole words; round brackets inside a word too
    (`f(x)` -> `f-LRB-x-RRB-`), which a bracketed tree could not hold."""
    return _BRACKET_WORDS.get(word) or word.translate(_ROUND_BRACKETS)


def _plainly_clean(strings: List[str]) -> bool:
    """Whether no string is empty or holds a character `_SUSPECT` matches."""
    return all(strings) and _SUSPECT.search("".join(strings)) is None


def check_words(words: Any, what: str = '"tokens"') -> List[str]:
    """The words of a request, checked: a non-empty list of non-empty strings without white
    space, control characters or lone surrogates."""
    if not isinstance(words, list) or not all(isinstance(word, str) for word in words):
        raise InputError(f"{what} must be a list of strings, got {shorten(words)}")
    if not words:
        raise InputError(f"{what} is empty: give at least one word")
    if _plainly_clean(words):
        return words
    for number, word in enumerate(words, 1):
        if not word or any(character.isspace() for character in word):
            raise InputError(
                f"word {number} of {what}, {shorten(word)}, is empty or holds white space: a "
                "token is one word (split it into several tokens, or drop it)"
            )
        check_text(word, f"word {number} of {what}")
    return words


def check_tags(tags: Any, num_words: int) -> Optional[List[str]]:
    """The `tags` of a request (or `None`), checked: one non-empty string without white space
    per word."""
    if tags is None:
        return None
    if not isinstance(tags, list) or not all(isinstance(tag, str) for tag in tags):
        raise InputError(f'"tags" must be a list of strings, got {shorten(tags)}')
    if len(tags) != num_words:
        raise InputError(
            f"Got {len(tags)} tags for {num_words} tokens; give one tag per token, or none."
        )
    if _plainly_clean(tags):
        return tags
    for number, tag in enumerate(tags, 1):
        if not tag or any(character.isspace() for character in tag):
            raise InputError(
                f"tag {number}, {shorten(tag)}, is empty or holds white space: give one tag per "
                "word, such as NN"
            )
        check_text(tag, f"tag {number}")
    return tags


def words_and_tags(request: Any) -> Tuple[List[str], Optional[List[str]]]:
    """
    The words of a request (`tokens`, or `sentence` split into Penn Treebank tokens by
    `ptb_tokenize`) and its `tags` (or `None`), checked as described in the module docstring.
    """
    if not isinstance(request, dict):
        raise InputError(
            f"a request must be a JSON object such as {{\"sentence\": \"...\"}}, got "
            f"{shorten(request)}"
        )
    if "tokens" in request:
        words = check_words(request["tokens"])
    elif "sentence" in request:
        sentence = request["sentence"]
        if not isinstance(sentence, str):
            raise InputError(f'"sentence" must be a string, got {shorten(sentence)}')
        check_text(sentence, '"sentence"')
        words = ptb_tokenize(sentence)
        if not words:
            raise InputError(
                f"Cannot parse an empty sentence: {shorten(sentence)} has no words"
            )
    else:
        raise InputError(
            'Each input needs "sentence" (raw text) or "tokens" (a list of words); got the '
            f"keys {sorted(request)}."
        )
    return words, check_tags(request.get("tags"), len(words))


MAX_KBEST = 100
"""The most trees a request may ask for with `"kbest"`."""


def check_kbest(request: Any) -> int:
    """The request's `"kbest"` (how many best parses it wants; 1 when absent), or an
    `InputError` for a value that is not a whole number from 1 to `MAX_KBEST`."""
    value = request.get("kbest", 1)
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_KBEST:
        raise InputError(
            f'"kbest" must be a whole number from 1 to {MAX_KBEST} (how many of the best '
            f"parses to return), got {shorten(value)}"
        )
    return value


def refuse_kbest(kbest: int, model: Any) -> None:
    """Raises an `InputError` when `kbest` asks for several parses of a model without a k-best
    decoder (`ParseCapabilities.kbest`)."""
    if kbest > 1 and not model.capabilities.kbest:
        raise InputError(
            f'"kbest" needs a model with a k-best decoder (a span CKY parser, the dependency '
            f"parser); this {type(model).__name__} has none: leave it out"
        )


def check_length(num_words: int, max_words: Optional[int], raise_it: str) -> None:
    """Raises an `InputError` if a sentence of `num_words` words is longer than `max_words`
    (`None`: no limit); `raise_it` says how the user raises the limit."""
    if max_words is not None and num_words > max_words:
        raise InputError(
            f"the sentence has {num_words} words, more than the limit of {max_words}: split "
            f"it into sentences, or {raise_it}"
        )
