import pytest

from lal_allennlp.syntax.tokenizer import ptb_tokenize


@pytest.mark.parametrize(
    "text, tokens",
    [
        (
            "Pierre Vinken, 61 years old, will join the board as a nonexecutive director Nov. 29.",
            "Pierre Vinken , 61 years old , will join the board as a nonexecutive director "
            "Nov. 29 .",
        ),
        (
            'He said, "I can\'t go (today) [or] {ever}."',
            "He said , `` I ca n't go -LRB- today -RRB- -LSB- or -RSB- -LCB- ever -RCB- . ''",
        ),
        (
            "Mr. Smith paid $5.50 for 10% of U.S. stocks; wasn't it 3:00 p.m.?",
            "Mr. Smith paid $ 5.50 for 10 % of U.S. stocks ; was n't it 3:00 p.m. ?",
        ),
        ("I'm gonna do it -- really!", "I 'm gon na do it -- really !"),
        (
            "\u201cSmart quotes\u201d and \u2018single\u2019 ones\u2026 don\u2019t \u2014 ok",
            "`` Smart quotes '' and ` single ' ones ... do n't -- ok",
        ),
        ("'Hello,' he said.", "` Hello , ' he said ."),
        ("The '90s were the company's best years.", "The '90s were the company 's best years ."),
        ("He left. She stayed at the U.S. office.", "He left . She stayed at the U.S. office ."),
        ("Ça coûte 5 euros à Zürich.", "Ça coûte 5 euros à Zürich ."),
    ],
)
def test_ptb_tokenize(text, tokens):
    assert ptb_tokenize(text) == tokens.split(" ")


@pytest.mark.parametrize("text", ["", "   ", "\n\t"])
def test_empty_text_gives_no_tokens(text):
    assert ptb_tokenize(text) == []


def test_tokens_are_never_brackets_or_spaces():
    # The tokens go into bracketed trees, so they must not contain brackets or white space.
    tokens = ptb_tokenize("(a) [b] {c} ((d)) e\u00a0f")
    assert (
        tokens == "-LRB- a -RRB- -LSB- b -RSB- -LCB- c -RCB- -LRB- -LRB- d -RRB- -RRB- e f".split()
    )
    assert all("(" not in token and ")" not in token and token.strip() == token for token in tokens)
