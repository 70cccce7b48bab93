"""The one-call word-piece split against AllenNLP's per-word loop, on real treebank words."""
import pytest
from allennlp.data.tokenizers.pretrained_transformer_tokenizer import PretrainedTransformerTokenizer

from lal_allennlp.patches.word_pieces import original_intra_word_tokenize, word_piece_ids
from lal_allennlp.syntax.trees import parse_trees
from tests.conftest import SHARED_DATA, minilm_dir

PTB_TREES = SHARED_DATA / "ptb-sample" / "trees"


def treebank_sentences():
    sentences = []
    for name in ["wsj_0003.mrg", "wsj_0039.mrg", "wsj_0118.mrg"]:
        with open(PTB_TREES / name, encoding="utf-8") as treebank:
            sentences += [tree.leaves() for tree, _ in parse_trees(treebank.read(), source=name)]
    return sentences


@pytest.mark.skipif(not PTB_TREES.is_dir(), reason="../shared/data/ptb-sample is not here")
def test_same_word_pieces_and_offsets_as_the_per_word_loop():
    tokenizer = PretrainedTransformerTokenizer(minilm_dir())
    assert tokenizer.tokenizer.is_fast
    assert PretrainedTransformerTokenizer._intra_word_tokenize is not original_intra_word_tokenize
    sentences = treebank_sentences() + [
        ["Unaffordable", "café", "naïve", "ÉCOLE", "3,000", "-LRB-", "``", "''", "--"],
        ["", "a", " ", "b"],  # empty and whitespace words have no word pieces: offset None
        ["word"],
    ]
    for words in sentences:
        fast = tokenizer.intra_word_tokenize(words)
        original = original_intra_word_tokenize(tokenizer, words)
        expected = (tokenizer.add_special_tokens(original[0]),
                    tokenizer._increment_offsets(original[1], 1))
        assert [(t.text, t.text_id) for t in fast[0]] == [(t.text, t.text_id) for t in expected[0]]
        assert fast[1] == expected[1]
    assert tokenizer.intra_word_tokenize(["", " "])[1] == [None, None]


@pytest.mark.parametrize("setting", ["truncation", "padding", "special tokens"])
def test_backend_settings_do_not_change_the_word_pieces(setting):
    """The backend tokenizer is called directly only when it has none of the settings that
    transformers' wrapper resets before each call; otherwise the wrapper is called (and resets
    them), so the pieces are those of the per-word loop either way."""
    tokenizer = PretrainedTransformerTokenizer(minilm_dir())
    backend = tokenizer.tokenizer.backend_tokenizer
    words = ["Unaffordable", "[SEP]", "naïve", "a"]
    expected = original_intra_word_tokenize(tokenizer, words)
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
def test_indexer_gives_what_allennlp_gives(monkeypatch, max_length):
    """The mismatched indexer's lists (ids, type ids, offsets, masks; split into windows of
    `max_length` pieces when set) equal those of AllenNLP's own code and per-word loop."""
    from allennlp.data import Vocabulary
    from allennlp.data.token_indexers import PretrainedTransformerMismatchedIndexer
    from allennlp.data.tokenizers import Token

    from lal_allennlp.patches.word_pieces import original_tokens_to_indices

    indexer = PretrainedTransformerMismatchedIndexer(minilm_dir(), max_length=max_length)
    assert PretrainedTransformerMismatchedIndexer.tokens_to_indices is not (
        original_tokens_to_indices
    )
    sentences = treebank_sentences()[:60] + [
        ["Unaffordable", "café", "naïve", "ÉCOLE", "3,000", "-LRB-", "``", "''", "--"],
        ["", "a", " ", "b"],
        ["word"],
        [],
    ]
    indexed = [indexer.tokens_to_indices([Token(w) for w in words], Vocabulary())
               for words in sentences]
    monkeypatch.setattr(
        PretrainedTransformerTokenizer, "_intra_word_tokenize", original_intra_word_tokenize
    )
    for words, ours in zip(sentences, indexed):
        theirs = original_tokens_to_indices(indexer, [Token(w) for w in words], Vocabulary())
        assert ours == theirs
    assert indexed[-3]["offsets"] == [(-1, -1), (1, 1), (-1, -1), (2, 2)]
