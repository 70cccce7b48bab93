"""The `lal_transformer` indexer's one-call word-piece split against AllenNLP's per-word loop and
AllenNLP's indexer, on real treebank words: the same word pieces, offsets and lists."""
import pytest
from allennlp.data import Vocabulary
from allennlp.data.token_indexers import PretrainedTransformerMismatchedIndexer, TokenIndexer
from allennlp.data.tokenizers import Token
from allennlp.data.tokenizers.pretrained_transformer_tokenizer import PretrainedTransformerTokenizer

from lal_allennlp.modules.transformer_indexer import TransformerWordPieceIndexer, word_piece_ids
from lal_allennlp.syntax.trees import parse_trees
from tests.conftest import SHARED_DATA, minilm_dir

PTB_TREES = SHARED_DATA / "ptb-sample" / "trees"
ODD_WORDS = [
    ["Unaffordable", "café", "naïve", "ÉCOLE", "3,000", "-LRB-", "``", "''", "--"],
    ["", "a", " ", "b"],  # empty and whitespace words have no word pieces
    ["word"],
]


def treebank_sentences():
    sentences = []
    for name in ["wsj_0003.mrg", "wsj_0039.mrg", "wsj_0118.mrg"]:
        with open(PTB_TREES / name, encoding="utf-8") as treebank:
            sentences += [tree.leaves() for tree, _ in parse_trees(treebank.read(), source=name)]
    return sentences


def test_both_names_build_this_indexer():
    for name in ("lal_transformer", "pretrained_transformer_mismatched"):
        assert TokenIndexer.by_name(name) is TransformerWordPieceIndexer
    # AllenNLP's own class is left as it is.
    assert "tokens_to_indices" in vars(TransformerWordPieceIndexer)
    assert PretrainedTransformerMismatchedIndexer.tokens_to_indices.__module__.startswith(
        "allennlp."
    )
    assert PretrainedTransformerTokenizer._intra_word_tokenize.__module__.startswith("allennlp.")


@pytest.mark.skipif(not PTB_TREES.is_dir(), reason="../shared/data/ptb-sample is not here")
def test_same_word_pieces_and_offsets_as_the_per_word_loop():
    tokenizer = PretrainedTransformerTokenizer(minilm_dir())
    assert tokenizer.tokenizer.is_fast
    for words in treebank_sentences() + ODD_WORDS:
        pieces, offsets = tokenizer._intra_word_tokenize(words)  # AllenNLP's loop
        assert word_piece_ids(tokenizer, words) == ([t.text_id for t in pieces], offsets)
    assert word_piece_ids(tokenizer, ["", " "]) == ([], [None, None])


@pytest.mark.parametrize("setting", ["truncation", "padding", "special tokens"])
def test_backend_settings_do_not_change_the_word_pieces(setting):
    """The backend tokenizer is called directly only when it has none of the settings that
    transformers' wrapper resets before each call; otherwise the wrapper is called (and resets
    them), so the pieces are those of the per-word loop either way."""
    tokenizer = PretrainedTransformerTokenizer(minilm_dir())
    backend = tokenizer.tokenizer.backend_tokenizer
    words = ["Unaffordable", "[SEP]", "naïve", "a"]
    expected = tokenizer._intra_word_tokenize(words)
    if setting == "truncation":
        backend.enable_truncation(max_length=1)
    elif setting == "padding":
        backend.enable_padding(length=5)
    else:
        backend.encode_special_tokens = True  # would split "[SEP]" into "[", "sep", "]"
    ids, offsets = word_piece_ids(tokenizer, words)
    assert ids == [t.text_id for t in expected[0]]
    assert offsets == expected[1]
    assert len(offsets[0]) == 2 and offsets[0][1] > offsets[0][0]  # several pieces, not cut
    assert word_piece_ids(tokenizer, words) == (ids, offsets)  # now called directly


@pytest.mark.skipif(not PTB_TREES.is_dir(), reason="../shared/data/ptb-sample is not here")
@pytest.mark.parametrize("max_length", [None, 8])
def test_indexer_gives_what_allennlp_gives(max_length):
    """The indexer's lists (ids, type ids, offsets, masks; split into windows of `max_length`
    pieces when set) equal those of AllenNLP's own indexer code and per-word loop."""
    indexer = TransformerWordPieceIndexer(minilm_dir(), max_length=max_length)
    sentences = treebank_sentences()[:60] + ODD_WORDS + [[]]
    for words in sentences:
        ours = indexer.tokens_to_indices([Token(w) for w in words], Vocabulary())
        theirs = PretrainedTransformerMismatchedIndexer.tokens_to_indices(
            indexer, [Token(w) for w in words], Vocabulary()
        )
        assert ours == theirs
    indexed = indexer.tokens_to_indices([Token(w) for w in ODD_WORDS[1]], Vocabulary())
    assert indexed["offsets"] == [(-1, -1), (1, 1), (-1, -1), (2, 2)]
