import string
from typing import List

import pytest
import torch
from allennlp.common import Params
from allennlp.common.checks import ConfigurationError
from allennlp.data import Batch, Instance, Token, Vocabulary
from allennlp.data.fields import TextField
from allennlp.data.token_indexers import SingleIdTokenIndexer, TokenCharactersIndexer
from allennlp.modules import TextFieldEmbedder, TokenEmbedder

import tests.conftest  # noqa: F401  (registers the plugin)
from lal_allennlp.modules.char_embedders import (  # noqa: F401  (registers the embedders)
    CharConcatTokenEmbedder,
    CharLSTMTokenEmbedder,
)

# 20 distinct characters, then a short word, a one-character word and a word of 12.
LONG_WORD = string.ascii_lowercase[:20]
WORDS = [LONG_WORD, "cat", "x", "internationa"]
EMBEDDERS = ["char_lstm", "char_concat"]
SMALL = {"char_lstm": {"embedding_dim": 6, "hidden_dim": 5}, "char_concat": {"embedding_dim": 4}}


def character_vocab(words: List[str] = WORDS) -> Vocabulary:
    vocab = Vocabulary()
    for word in words:
        for character in word:
            vocab.add_token_to_namespace(character, "token_characters")
    return vocab


def character_ids(vocab: Vocabulary, sentences: List[List[str]], width: int) -> torch.Tensor:
    """`(num_sentences, max_words, width)` ids, 0-padded like `TokenCharactersIndexer`."""
    ids = torch.zeros(len(sentences), max(len(s) for s in sentences), width, dtype=torch.long)
    for i, sentence in enumerate(sentences):
        for j, word in enumerate(sentence):
            for k, character in enumerate(word):
                ids[i, j, k] = vocab.get_token_index(character, "token_characters")
    return ids


def build(name: str, vocab: Vocabulary, **params) -> TokenEmbedder:
    torch.manual_seed(0)
    embedder = TokenEmbedder.from_params(Params({"type": name, **params}), vocab=vocab)
    embedder.eval()
    return embedder


def test_output_dimensions_follow_kitaev_and_klein_defaults():
    vocab = character_vocab()
    # CharLSTM: 2 x 256 (content half of d_model 1024); CharConcat: 16 x 32.
    for name, params, dim in [
        ("char_lstm", {}, 512),
        ("char_lstm", {"embedding_dim": 8, "hidden_dim": 5}, 10),
        ("char_lstm", {"embedding_dim": 8, "hidden_dim": 5, "output_dim": 7}, 7),
        ("char_concat", {}, 512),
        ("char_concat", {"num_characters": 3, "embedding_dim": 4}, 24),
    ]:
        embedder = build(name, vocab, **params)
        assert embedder.get_output_dim() == dim
        ids = character_ids(vocab, [WORDS, WORDS[:2]], 20)
        assert embedder(ids).shape == (2, 4, dim)
        # Extra leading dimensions (a ListField of TextFields) are kept.
        assert embedder(ids.unsqueeze(0)).shape == (1, 2, 4, dim)


@pytest.mark.parametrize("name", EMBEDDERS)
def test_vectors_ignore_character_and_word_padding(name):
    vocab = character_vocab()
    embedder = build(name, vocab, **SMALL[name])
    sentence = ["cat", "x", "internationa"]
    alone = embedder(character_ids(vocab, [sentence], 12))[0]
    # Much more character padding (min_padding_length), and a batch with a much longer word
    # and a longer sentence.
    wide = embedder(character_ids(vocab, [sentence], 50))[0]
    batched = embedder(character_ids(vocab, [[LONG_WORD, "cat", "x", "x", "cat"], sentence], 20))
    torch.testing.assert_close(wide, alone)
    torch.testing.assert_close(batched[1, :3], alone)
    # Padded words are zero.
    assert batched[1, 3:].abs().sum() == 0
    # The same word gets the same vector wherever it is.
    torch.testing.assert_close(batched[0, 1], alone[0])
    torch.testing.assert_close(batched[0, 2], alone[1])


def test_char_lstm_is_the_final_states_of_a_bilstm_over_the_marked_word():
    vocab = character_vocab()
    embedder = build("char_lstm", vocab, embedding_dim=6, hidden_dim=5)
    vectors = embedder(character_ids(vocab, [["cat", LONG_WORD]], 30))[0]
    for vector, word in zip(vectors, ["cat", LONG_WORD]):
        ids = [embedder._start_of_word]
        ids += [vocab.get_token_index(c, "token_characters") for c in word]
        ids += [embedder._end_of_word]
        # One unpadded word: no packing at all.
        embedded = embedder.character_embedding(torch.tensor([ids]))
        outputs, (final, _) = embedder.lstm(embedded)
        torch.testing.assert_close(vector, torch.cat([final[0, 0], final[1, 0]]))
        # Forward state after the end marker, backward state after the start marker.
        torch.testing.assert_close(vector[:5], outputs[0, -1, :5])
        torch.testing.assert_close(vector[5:], outputs[0, 0, 5:])


def test_char_concat_takes_exactly_the_first_and_last_characters():
    vocab = character_vocab()
    size = vocab.get_vocab_size("token_characters") + 2
    # With an identity embedding matrix, each 'size'-dim block is the one-hot of its id.
    embedder = build("char_concat", vocab, embedding_dim=size)
    with torch.no_grad():
        embedder.character_embedding.weight.copy_(torch.eye(size))
    ids = character_ids(vocab, [[LONG_WORD, "cat"]], 25)
    vectors = embedder(ids)[0]
    used = vectors.view(2, 16, size).argmax(dim=-1)
    assert torch.equal(vectors.view(2, 16, size).sum(dim=-1), torch.ones(2, 16))

    def index(characters: str) -> List[int]:
        return [vocab.get_token_index(c, "token_characters") for c in characters]

    start, end = embedder._start_of_word, embedder._end_of_word
    # First 8 of "abcdefghijklmnopqrst", then its last 8.
    assert used[0].tolist() == index("abcdefgh") + index("mnopqrst")
    # A short word: prefix padded on the right with end-of-word markers, suffix on the left
    # with start-of-word markers.
    assert used[1].tolist() == index("cat") + [end] * 5 + [start] * 5 + index("cat")
    assert embedder.character_slots(ids)[0].tolist() == used.tolist()


def test_char_concat_words_of_exactly_num_characters_fill_both_halves():
    vocab = character_vocab()
    embedder = build("char_concat", vocab, num_characters=3, embedding_dim=2)
    ids = character_ids(vocab, [["cat", "x"]], 3)
    cat = [vocab.get_token_index(c, "token_characters") for c in "cat"]
    x = vocab.get_token_index("x", "token_characters")
    start, end = embedder._start_of_word, embedder._end_of_word
    assert embedder.character_slots(ids)[0].tolist() == [
        cat + cat,
        [x, end, end, start, start, x],
    ]


@pytest.mark.parametrize(
    "name, params",
    [("char_lstm", {"embedding_dim": 6, "hidden_dim": 5, "output_dim": 4}), ("char_concat", {})],
)
def test_gradients_reach_every_parameter(name, params):
    vocab = character_vocab()
    embedder = build(name, vocab, **params)
    embedder.train()
    ids = character_ids(vocab, [WORDS, ["cat"]], 20)
    (embedder(ids) ** 2).sum().backward()
    for parameter_name, parameter in embedder.named_parameters():
        assert parameter.grad is not None, parameter_name
        assert parameter.grad.abs().sum() > 0, parameter_name
    # Every character read and both markers get a gradient; the padding row does not. (The
    # CharConcat reads only the first and last 8 characters: not "ijkl" of LONG_WORD.)
    grad = embedder.character_embedding.weight.grad
    read = WORDS if name == "char_lstm" else [word[:8] + word[-8:] for word in WORDS]
    used = {vocab.get_token_index(c, "token_characters") for word in read for c in word}
    for row in used | {embedder._start_of_word, embedder._end_of_word}:
        assert grad[row].abs().sum() > 0, row
    assert grad[0].abs().sum() == 0


def test_an_empty_character_namespace_is_a_configuration_error():
    for name in EMBEDDERS:
        with pytest.raises(ConfigurationError, match="characters token indexer"):
            build(name, Vocabulary())


@pytest.mark.parametrize(
    "name, params",
    list(SMALL.items()),
)
def test_end_to_end_from_params_in_a_text_field_embedder(name, params):
    indexers = {
        "tokens": SingleIdTokenIndexer(),
        "token_characters": TokenCharactersIndexer(min_padding_length=3),
    }
    sentences = [["The", "cat", "sat", "."], ["Internationalization", "!"]]
    instances = [
        Instance({"tokens": TextField([Token(w) for w in words], indexers)})
        for words in sentences
    ]
    vocab = Vocabulary.from_instances(instances)
    torch.manual_seed(0)
    embedder = TextFieldEmbedder.from_params(
        Params(
            {
                "token_embedders": {
                    "tokens": {"type": "embedding", "embedding_dim": 3},
                    "token_characters": {"type": name, **params},
                }
            }
        ),
        vocab=vocab,
    )
    embedder.eval()
    characters_dim = embedder._token_embedders["token_characters"].get_output_dim()
    assert embedder.get_output_dim() == 3 + characters_dim

    batch = Batch(instances)
    batch.index_instances(vocab)
    tensors = batch.as_tensor_dict()["tokens"]
    # What the indexer produces: (batch_size, num_words, longest word), 0-padded.
    token_characters = tensors["token_characters"]["token_characters"]
    assert token_characters.shape == (2, 4, len("Internationalization"))
    embedded = embedder(tensors)
    assert embedded.shape == (2, 4, embedder.get_output_dim())
    # The embedders' outputs are concatenated in sorted key order: "token_characters" first.
    # The character part of a sentence does not depend on the batch, and is 0 at padding.
    for i, instance in enumerate(instances):
        single = Batch([instance])
        single.index_instances(vocab)
        alone = embedder(single.as_tensor_dict()["tokens"])[0]
        length = len(sentences[i])
        torch.testing.assert_close(embedded[i, :length], alone[:length])
        assert embedded[i, length:, :characters_dim].abs().sum() == 0
