"""The request checks' one-search fast path against the character-by-character rules."""
import sys
import unicodedata

import pytest

from lal_allennlp.predictors.inputs import (
    _SUSPECT,
    _WHITE_SPACE_CONTROLS,
    InputError,
    check_tags,
    check_words,
)


def test_the_pattern_flags_exactly_the_characters_the_rules_reject_or_treat_as_space():
    """Over every code point: `_SUSPECT` matches a character iff it is white space or of
    category Cc or Cs (the union of what a word or tag may not hold)."""
    for code in range(sys.maxunicode + 1):
        character = chr(code)
        rejected = character.isspace() or unicodedata.category(character) in ("Cc", "Cs")
        assert (_SUSPECT.match(character) is not None) == rejected, hex(code)
    assert all(_SUSPECT.match(c) for c in _WHITE_SPACE_CONTROLS)


@pytest.mark.parametrize(
    "bad, message",
    [
        ("a\u00a0b", "word 2 of \"tokens\", 'a\\xa0b', is empty or holds white space"),
        ("", "word 2 of \"tokens\", '', is empty or holds white space"),
        ("a\x1b[0m", "word 2 of \"tokens\" holds the control character U+001B at "
                     "character 2"),
        ("x\udcff", "word 2 of \"tokens\" holds the lone surrogate U+DCFF (not a character) at "
                    "character 2"),
    ],
)
def test_a_flagged_request_gets_the_item_by_item_message(bad, message):
    with pytest.raises(InputError) as error:
        check_words(["fine", bad, "words"])
    assert message in str(error.value)
    with pytest.raises(InputError) as error:
        check_tags(["NN", bad, "VB"], 3)
    assert str(error.value).startswith("tag 2")


def test_clean_requests_pass_unchanged():
    words = ["Café", "naïve", "3,000", "-LRB-", "日本語", "\U0001F600"]
    assert check_words(words) is words
    assert check_tags(["NNP"] * 6, 6) == ["NNP"] * 6
    assert check_tags(None, 6) is None
