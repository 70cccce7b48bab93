"""
The indexer of `TransformerWordEmbedder` (`transformer_embedder`): a sentence's words split
into word pieces, with the lists of AllenNLP's `pretrained_transformer_mismatched` indexer
(which `TransformerWordPieceIndexer` extends), made faster with a fast (Rust) tokenizer.

AllenNLP 2.10.1 splits the words with one `encode_plus` call per word
(`PretrainedTransformerTokenizer._intra_word_tokenize`), and each call carries a fixed Python
overhead that, for a small transformer on a CPU, is a noticeable part of parsing; it then makes
a `Token` per word piece, copies each one again to set its type id (`add_special_tokens`), and
reads the ids back out of them. With a fast tokenizer, this indexer splits all of a sentence's
words in one call, each word still on its own (one sequence per word), so the word pieces and
offsets are the same, and builds the same lists from the ids directly. Slow (Python) tokenizers
keep AllenNLP's code.
"""
from typing import List, Optional, Tuple

from allennlp.data import Vocabulary
from allennlp.data.token_indexers import PretrainedTransformerMismatchedIndexer, TokenIndexer
from allennlp.data.token_indexers.token_indexer import IndexedTokenList
from allennlp.data.tokenizers import Token
from allennlp.data.tokenizers.pretrained_transformer_tokenizer import PretrainedTransformerTokenizer

Offsets = List[Optional[Tuple[int, int]]]


def word_piece_ids(
    tokenizer: PretrainedTransformerTokenizer, words: List[str]
) -> Tuple[List[int], Offsets]:
    """The word piece ids of `words` (a fast tokenizer, one call) without special tokens, and
    each word's inclusive `(first, last)` piece, `None` for a word without pieces: what
    AllenNLP's per-word `_intra_word_tokenize` gives."""
    # One sequence per word: each word is split on its own, as in the per-word loop.
    backend = tokenizer.tokenizer.backend_tokenizer
    settings = (backend.truncation, backend.padding, backend.encode_special_tokens)
    if settings == (None, None, False):
        # What transformers' wrapper calls with these settings (it first resets truncation,
        # padding and special-token splitting when they are set), without its conversion of
        # every word's encoding to a Python dict: a fifth of a small parser's tokenisation.
        encodings = backend.encode_batch(words, add_special_tokens=False)
        per_word = [encoding.ids for encoding in encodings]
    else:
        per_word = tokenizer.tokenizer(
            words,
            add_special_tokens=False,
            return_attention_mask=False,
            return_token_type_ids=False,
        )["input_ids"]
    ids = [wp_id for word_ids in per_word for wp_id in word_ids]
    offsets: Offsets = []
    start = 0
    for word_ids in per_word:
        offsets.append((start, start + len(word_ids) - 1) if word_ids else None)
        start += len(word_ids)
    return ids, offsets


@TokenIndexer.register("lal_transformer")
class TransformerWordPieceIndexer(PretrainedTransformerMismatchedIndexer):
    """
    AllenNLP's `pretrained_transformer_mismatched` indexer (same arguments: `model_name`,
    `namespace`, `max_length`, `tokenizer_kwargs`; same lists), splitting a sentence's words in
    one call with a fast tokenizer (see the module docstring).

    Registered as a `TokenIndexer` with name "lal_transformer", and under AllenNLP's
    "pretrained_transformer_mismatched" in processes that import `lal_allennlp`.
    """

    def tokens_to_indices(self, tokens: List[Token], vocabulary: Vocabulary) -> IndexedTokenList:
        """AllenNLP's `tokens_to_indices` (`intra_word_tokenize`, special tokens, offsets shifted
        past them, `(-1, -1)` for a word without pieces) without the `Token` per word piece."""
        tokenizer = self._allennlp_tokenizer
        words = [t.ensure_text() for t in tokens]
        if not words or not getattr(tokenizer.tokenizer, "is_fast", False):
            return super().tokens_to_indices(tokens, vocabulary)
        self._matched_indexer._add_encoding_to_vocabulary_if_needed(vocabulary)
        ids, offsets = word_piece_ids(tokenizer, words)
        start, end = tokenizer.single_sequence_start_tokens, tokenizer.single_sequence_end_tokens
        shift = len(start)
        output: IndexedTokenList = {
            "token_ids": [t.text_id for t in start] + ids + [t.text_id for t in end],
            "mask": [True] * len(words),
            "type_ids": [t.type_id for t in start]
            + [tokenizer.single_sequence_token_type_id] * len(ids)
            + [t.type_id for t in end],
            "offsets": [(-1, -1) if o is None else (o[0] + shift, o[1] + shift) for o in offsets],
            "wordpiece_mask": [True] * (len(start) + len(ids) + len(end)),
        }
        return self._matched_indexer._postprocess_output(output)


# Archives and configs written before this indexer existed name AllenNLP's indexer: the same
# lists, so they read their input as they did, as fast as when this was a patch of AllenNLP's
# class. AllenNLP's class itself is left as it is.
TokenIndexer.register("pretrained_transformer_mismatched", exist_ok=True)(
    TransformerWordPieceIndexer
)
