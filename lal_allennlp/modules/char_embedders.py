"""
Character-level word representations of Kitaev & Klein (2018), "Constituency Parsing with a
Self-Attentive Encoder", sec. 5 (lexical models), which replace the POS-tag embeddings of
their base model:

- CharLSTM: a bidirectional LSTM over each word's characters, with learned start-of-word and
  end-of-word markers around them; the word vector is the final forward state concatenated
  with the final backward state (Ling et al. 2015).
- CharConcat: the embeddings of the first 8 and the last 8 characters of the word,
  concatenated (16 x 32 = 512 dimensions), after Hall et al. (2014)'s use of frequent
  suffixes. Words shorter than 8 characters are padded.

Sizes follow the paper's released code (benepar `parse_nk.py` and `main.py`: `d_char_emb`
32, LSTM hidden size `d_content // 2` = 256 per direction for `d_model` 1024, character
dropout `char_lstm_input_dropout` 0.2).

Both read the tensor of allennlp's `TokenCharactersIndexer` (`{"type": "characters"}`):
`token_characters`, shape `(batch_size, num_words, num_characters)`, character ids in the
vocabulary namespace `token_characters` with 0 for padding. A word's characters come first
and its padding after, so a word's length is its number of non-zero ids. Each word's vector
depends only on its own characters: neither the padding allennlp adds to reach the longest
word of the batch (or `min_padding_length`) nor padded words change it, and padded words
(no characters) get a zero vector.
"""
from typing import Optional

import torch
from allennlp.common.checks import ConfigurationError
from allennlp.data import Vocabulary
from allennlp.modules.token_embedders.token_embedder import TokenEmbedder

from lal_allennlp.modules.fast_dropout import FastDropout


def _character_vocab_size(vocab: Vocabulary, vocab_namespace: str, name: str) -> int:
    # A padded namespace always holds the padding (0) and OOV (1) entries.
    size = vocab.get_vocab_size(vocab_namespace)
    if size <= 2:
        raise ConfigurationError(
            f"{name}: the vocabulary namespace {vocab_namespace!r} has no characters. Add a "
            f'characters token indexer ({{"type": "characters", "namespace": '
            f'"{vocab_namespace}"}}) to the dataset reader\'s token_indexers, under the same '
            f"key as this embedder, or set vocab_namespace to the indexer's namespace."
        )
    return size


def _flatten_words(token_characters: torch.LongTensor):
    """`(..., num_characters)` ids -> `(num_words, num_characters)` ids and word lengths."""
    # shape (num_words, num_characters)
    characters = token_characters.reshape(-1, token_characters.size(-1))
    # shape (num_words,)
    lengths = (characters != 0).sum(dim=-1)
    return characters, lengths


@TokenEmbedder.register("char_lstm")
class CharLSTMTokenEmbedder(TokenEmbedder):
    """
    Kitaev & Klein (2018)'s CharLSTM: each word is the sequence
    `[start-of-word] c_1 ... c_n [end-of-word]` of character embeddings, run through a
    one-layer bidirectional LSTM; the word vector is `[h_forward(last) ; h_backward(first)]`
    (`2 * hidden_dim`), optionally projected to `output_dim` by a bias-free linear layer.

    The LSTM runs on packed sequences of the real words only, so character padding and padded
    words never reach it; padded words get zeros.

    Registered as a `TokenEmbedder` with name "char_lstm".

    # Parameters

    vocab : `Vocabulary`
        Supplies the number of characters in `vocab_namespace`.
    embedding_dim : `int`, optional (default = `32`)
        Character embedding size (`d_char_emb` = 32 in Kitaev & Klein's 2018 code, whose
        comment says a larger value may be better for the CharLSTM; benepar's later code
        uses 64).
    hidden_dim : `int`, optional (default = `256`)
        LSTM hidden size per direction. Kitaev & Klein use `d_content / 2`, so that the word
        vector fills the content half of their partitioned model: 256 for `d_model` 1024.
    output_dim : `int`, optional (default = `None`)
        If set, the `2 * hidden_dim` word vector is projected to this size (no bias). Kitaev &
        Klein do not project (`None`); the `partitioned_transformer` projects its input to
        `d_model / 2` anyway.
    dropout : `float`, optional (default = `0.2`)
        Dropout on the character embeddings fed to the LSTM (`char_lstm_input_dropout` in
        Kitaev & Klein's code).
    vocab_namespace : `str`, optional (default = `"token_characters"`)
        The namespace of the characters indexer (allennlp's default).
    """

    def __init__(
        self,
        vocab: Vocabulary,
        embedding_dim: int = 32,
        hidden_dim: int = 256,
        output_dim: Optional[int] = None,
        dropout: float = 0.2,
        vocab_namespace: str = "token_characters",
    ) -> None:
        super().__init__()
        num_characters = _character_vocab_size(vocab, vocab_namespace, "char_lstm")
        # Rows 0 .. num_characters - 1 are the vocabulary's characters; the two rows after
        # them are the start-of-word and end-of-word markers.
        self._start_of_word = num_characters
        self._end_of_word = num_characters + 1
        self.character_embedding = torch.nn.Embedding(num_characters + 2, embedding_dim)
        self.dropout = FastDropout(dropout)
        self.lstm = torch.nn.LSTM(
            embedding_dim, hidden_dim, num_layers=1, bidirectional=True, batch_first=True
        )
        self.projection: Optional[torch.nn.Linear] = None
        if output_dim is not None:
            self.projection = torch.nn.Linear(2 * hidden_dim, output_dim, bias=False)
        self._output_dim = output_dim if output_dim is not None else 2 * hidden_dim

    def get_output_dim(self) -> int:
        return self._output_dim

    def forward(self, token_characters: torch.LongTensor) -> torch.Tensor:  # type: ignore
        """
        # Parameters

        token_characters : `torch.LongTensor`
            Shape `(batch_size, num_words, num_characters)` (any leading dimensions), 0 for
            padding.

        # Returns

        `torch.Tensor` of shape `(batch_size, num_words, output_dim)`, zero for padded words.
        """
        leading_shape = token_characters.shape[:-1]
        characters, lengths = _flatten_words(token_characters)
        # shape (num_real_words,): indices of the words that have characters
        real = lengths.nonzero(as_tuple=True)[0]
        output = characters.new_zeros((characters.size(0), self._output_dim), dtype=torch.float)
        if real.numel() == 0:
            return output.view(*leading_shape, self._output_dim)
        characters = characters[real]
        lengths = lengths[real]
        # Word-boundary markers: start at column 0, the characters at 1 .. n, end at n + 1.
        # shape (num_real_words, num_characters + 2)
        bounded = torch.cat(
            [
                characters.new_full((characters.size(0), 1), self._start_of_word),
                characters,
                characters.new_zeros((characters.size(0), 1)),
            ],
            dim=1,
        )
        end_markers = characters.new_full((characters.size(0), 1), self._end_of_word)
        bounded.scatter_(1, (lengths + 1).unsqueeze(1), end_markers)
        # shape (num_real_words, num_characters + 2, embedding_dim)
        embedded = self.dropout(self.character_embedding(bounded))
        packed = torch.nn.utils.rnn.pack_padded_sequence(
            embedded, (lengths + 2).cpu(), batch_first=True, enforce_sorted=False
        )
        # final_states shape (2, num_real_words, hidden_dim): forward, backward
        _, (final_states, _) = self.lstm(packed)
        # shape (num_real_words, 2 * hidden_dim)
        words = torch.cat([final_states[0], final_states[1]], dim=-1)
        if self.projection is not None:
            words = self.projection(words)
        output = output.to(words.dtype).index_copy(0, real, words)
        return output.view(*leading_shape, self._output_dim)


@TokenEmbedder.register("char_concat")
class CharConcatTokenEmbedder(TokenEmbedder):
    """
    Kitaev & Klein (2018)'s CharConcat: the embeddings of a word's first `num_characters` and
    last `num_characters` characters, concatenated, in reading order:

        [e(c_1) ; ... ; e(c_8) ; e(c_{n-7}) ; ... ; e(c_n)]

    A word shorter than `num_characters` fills its missing prefix slots (after its last
    character) with a learned end-of-word marker and its missing suffix slots (before its first
    character) with a learned start-of-word marker, so the prefix is padded on the right and the
    suffix on the left: slot `k` of the prefix is always the `k`-th character and slot `k` of
    the suffix always the `(num_characters - k)`-th from the end. For words of at most
    `num_characters` characters the two halves overlap (both hold the whole word). Kitaev &
    Klein's code pads the same way with the same two markers, storing the suffix last
    character first, which only permutes the output dimensions.

    Registered as a `TokenEmbedder` with name "char_concat".

    # Parameters

    vocab : `Vocabulary`
        Supplies the number of characters in `vocab_namespace`.
    num_characters : `int`, optional (default = `8`)
        Characters taken from each end (Kitaev & Klein: 8).
    embedding_dim : `int`, optional (default = `32`)
        Character embedding size (Kitaev & Klein: 32, so the word vector has
        `2 * 8 * 32 = 512` dimensions, the content half of their `d_model` 1024).
    vocab_namespace : `str`, optional (default = `"token_characters"`)
        The namespace of the characters indexer (allennlp's default).
    """

    def __init__(
        self,
        vocab: Vocabulary,
        num_characters: int = 8,
        embedding_dim: int = 32,
        vocab_namespace: str = "token_characters",
    ) -> None:
        super().__init__()
        if num_characters < 1:
            raise ConfigurationError(
                f"char_concat: num_characters must be at least 1, not {num_characters}."
            )
        vocab_size = _character_vocab_size(vocab, vocab_namespace, "char_concat")
        self.num_characters = num_characters
        # Rows 0 .. vocab_size - 1 are the vocabulary's characters; the two rows after them
        # are the start-of-word and end-of-word markers used as padding.
        self._start_of_word = vocab_size
        self._end_of_word = vocab_size + 1
        self.character_embedding = torch.nn.Embedding(vocab_size + 2, embedding_dim)
        self._output_dim = 2 * num_characters * embedding_dim

    def get_output_dim(self) -> int:
        return self._output_dim

    def character_slots(self, token_characters: torch.LongTensor) -> torch.LongTensor:
        """
        The character ids (markers included) whose embeddings are concatenated.

        # Parameters

        token_characters : `torch.LongTensor`
            Shape `(..., num_characters_padded)`, 0 for padding.

        # Returns

        `torch.LongTensor` of shape `(..., 2 * num_characters)`: the prefix slots, then the
        suffix slots. Padded words (no characters) are all markers.
        """
        leading_shape = token_characters.shape[:-1]
        characters, lengths = _flatten_words(token_characters)
        n = self.num_characters
        if characters.size(1) < n:
            # allennlp pads only to the longest word of the batch (or min_padding_length).
            characters = torch.nn.functional.pad(characters, (0, n - characters.size(1)))
        # shape (1, n)
        slots = torch.arange(n, device=characters.device).unsqueeze(0)
        lengths = lengths.unsqueeze(1)
        # shape (num_words, n): c_1 .. c_n, then end-of-word markers
        prefix = characters[:, :n].masked_fill(slots >= lengths, self._end_of_word)
        # shape (num_words, n): index of the character in suffix slot k is length - n + k
        suffix_index = lengths - n + slots
        suffix = characters.gather(1, suffix_index.clamp(min=0)).masked_fill(
            suffix_index < 0, self._start_of_word
        )
        return torch.cat([prefix, suffix], dim=1).view(*leading_shape, 2 * n)

    def forward(self, token_characters: torch.LongTensor) -> torch.Tensor:  # type: ignore
        """
        # Parameters

        token_characters : `torch.LongTensor`
            Shape `(batch_size, num_words, num_characters)` (any leading dimensions), 0 for
            padding.

        # Returns

        `torch.Tensor` of shape `(batch_size, num_words, 2 * num_characters * embedding_dim)`,
        zero for padded words.
        """
        # shape (..., 2 * num_characters)
        slots = self.character_slots(token_characters)
        # shape (..., 2 * num_characters, embedding_dim)
        embedded = self.character_embedding(slots)
        words = embedded.reshape(*slots.shape[:-1], self._output_dim)
        # shape (..., 1): padded words (no characters) are zero
        is_word = (token_characters != 0).any(dim=-1, keepdim=True)
        return words * is_word.to(words.dtype)
