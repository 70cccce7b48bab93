"""
Patches to AllenNLP 2.10.1 that change what it does, applied when `lal_allennlp` is imported
(unlike `_compat`, which only lets it run on Python 3.11 / torch 2.x / transformers 4.5x):

- `transformer_cache`: allennlp's transformer cache keyed by `transformer_kwargs` too, so a
  4-layer MiniLM is not handed the cached 6-layer one (a correctness fix).
- `word_pieces`: a fast tokenizer splits all of a sentence's words into word pieces in one
  call instead of one call per word (same pieces and offsets; a speed patch).
"""
from lal_allennlp.patches.transformer_cache import key_transformer_cache_by_arguments
from lal_allennlp.patches.word_pieces import tokenize_words_in_one_call


def apply_patches() -> None:
    """Applies both patches (each is idempotent)."""
    key_transformer_cache_by_arguments()
    tokenize_words_in_one_call()


__all__ = ["apply_patches"]
