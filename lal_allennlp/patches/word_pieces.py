"""
AllenNLP 2.10.1 splits pre-tokenised words into word pieces
(`PretrainedTransformerTokenizer._intra_word_tokenize`, used by the
`pretrained_transformer_mismatched` indexer) with one `encode_plus` call per word, and each
call carries a fixed Python overhead that, for a small transformer on a CPU, is a noticeable
part of parsing. A fast (Rust) tokenizer splits all of a sentence's words in one call, each
word still on its own (one sequence per word), so the word pieces and offsets are the same.
Slow (Python) tokenizers keep AllenNLP's loop.
"""
from typing import List, Optional, Tuple

from allennlp.data.tokenizers import Token
from allennlp.data.tokenizers.pretrained_transformer_tokenizer import PretrainedTransformerTokenizer

original_intra_word_tokenize = PretrainedTransformerTokenizer._intra_word_tokenize


def _intra_word_tokenize(
    self: PretrainedTransformerTokenizer, string_tokens: List[str]
) -> Tuple[List[Token], List[Optional[Tuple[int, int]]]]:
    if not string_tokens or not getattr(self.tokenizer, "is_fast", False):
        return original_intra_word_tokenize(self, string_tokens)
    # One sequence per word: each word is split on its own, as in the per-word loop.
    per_word = self.tokenizer(
        string_tokens,
        add_special_tokens=False,
        return_attention_mask=False,
        return_token_type_ids=False,
    )["input_ids"]
    ids = [wp_id for word_ids in per_word for wp_id in word_ids]
    texts = self.tokenizer.convert_ids_to_tokens(ids)
    tokens = [Token(text=text, text_id=wp_id) for wp_id, text in zip(ids, texts)]
    offsets: List[Optional[Tuple[int, int]]] = []
    start = 0
    for word_ids in per_word:
        offsets.append((start, start + len(word_ids) - 1) if word_ids else None)
        start += len(word_ids)
    return tokens, offsets


def tokenize_words_in_one_call() -> None:
    """Patch `PretrainedTransformerTokenizer._intra_word_tokenize` once."""
    PretrainedTransformerTokenizer._intra_word_tokenize = _intra_word_tokenize
