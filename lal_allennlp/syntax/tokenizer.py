"""
Raw text to Penn Treebank tokens, with no downloaded model.

`ptb_tokenize` uses the regular expressions of nltk's `NLTKWordTokenizer` (the Treebank
tokenizer with nltk's improvements; it needs no data download), then applies the conventions
the words of the Penn Treebank (Marcus et al. 1993) follow: brackets escaped as
`-LRB-`/`-RRB-`, `-LSB-`/`-RSB-`, `-LCB-`/`-RCB-`; double quotes as `` and ''; typographic
quotes, ellipses and dashes written the ASCII PTB way; clitics split (`can't` -> `ca n't`).

The input should be one sentence: a period inside the text is split off only after a lowercase
word that is followed by a capitalised token (`left. She`), so abbreviations such as `Mr.` and
`U.S.` keep their period.
"""

import re
from typing import List

from nltk.tokenize.destructive import NLTKWordTokenizer

_TOKENIZER = NLTKWordTokenizer()

# Typographic characters rewritten before tokenising: an apostrophe inside a word, ellipses
# and dashes. NLTKWordTokenizer splits typographic quotes off as tokens of their own, which
# `_QUOTE_TOKENS` then writes the PTB way.
_TYPOGRAPHIC = [
    (re.compile(r"(?<=\w)\u2019(?=\w)"), "'"),  # don’t, O’Brien
    (re.compile("\u2026"), " ... "),  # …
    (re.compile(r"[\u2014\u2013]"), " -- "),  # — –
]
_QUOTE_TOKENS = {
    "\u201c": "``",  # “
    "\u201e": "``",  # „
    "\u00ab": "``",  # «
    "\u201d": "''",  # ”
    "\u00bb": "''",  # »
    "\u2018": "`",  # ‘
    "\u201a": "`",  # ‚
    "\u2019": "'",  # ’
}

# Tokens after which a quote opens: sentence start, brackets, opening quotes, some punctuation.
_OPENERS = frozenset({"``", "`", "-LRB-", "-LSB-", "-LCB-", ",", ":", ";", "--"})
# Clitics and contractions that start with an apostrophe and are words of their own in PTB.
_CLITICS = frozenset({"'s", "'m", "'d", "'ll", "'re", "'ve", "'t", "'em", "'n", "'til", "'cause"})
# Lowercase abbreviations whose period stays even before a capitalised word.
_ABBREVIATIONS = frozenset({"etc", "vs", "approx", "esp", "incl", "no", "cf", "viz"})


def _split_sentence_internal_period(tokens: List[str]) -> List[str]:
    result: List[str] = []
    for index, token in enumerate(tokens):
        following = tokens[index + 1] if index + 1 < len(tokens) else ""
        stem = token[:-1]
        if (
            len(token) > 2
            and token.endswith(".")
            and stem.isalpha()
            and stem.islower()
            and stem not in _ABBREVIATIONS
            and following[:1].isupper()
        ):
            result.extend([stem, "."])
        else:
            result.append(token)
    return result


def _split_opening_single_quotes(tokens: List[str]) -> List[str]:
    result: List[str] = []
    for token in tokens:
        previous = result[-1] if result else None
        if (
            len(token) > 1
            and token[0] == "'"
            and token[1].isalpha()
            and token.lower() not in _CLITICS
            and (previous is None or previous in _OPENERS)
        ):
            result.extend(["`", token[1:]])
        else:
            result.append(token)
    return result


def ptb_tokenize(text: str) -> List[str]:
    """
    Splits one raw English sentence into Penn Treebank tokens.

    ```
    >>> ptb_tokenize('He said, "I can\\'t (really)."')
    ['He', 'said', ',', '``', 'I', 'ca', "n't", '-LRB-', 'really', '-RRB-', '.', "''"]
    ```

    Returns `[]` for empty or all-space text.
    """
    for pattern, replacement in _TYPOGRAPHIC:
        text = pattern.sub(replacement, text)
    if not text.strip():
        return []
    tokens = _TOKENIZER.tokenize(text, convert_parentheses=True)
    tokens = [_QUOTE_TOKENS.get(token, token) for token in tokens]
    tokens = _split_sentence_internal_period(tokens)
    return _split_opening_single_quotes(tokens)
