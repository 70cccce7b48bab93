"""
Patches to AllenNLP 2.10.1 that change what it does, applied when `lal_allennlp` is imported
(unlike `_compat`, which only lets it run on Python 3.11 / torch 2.x / transformers 4.5x):

- `transformer_cache`: allennlp's transformer cache keyed by `transformer_kwargs` too, so a
  4-layer MiniLM is not handed the cached 6-layer one (a correctness fix).
- `word_pieces`: a fast tokenizer splits all of a sentence's words into word pieces in one
  call instead of one call per word (same pieces and offsets; a speed patch).
- `predict_input`: `allennlp predict` reads the JSON lines for our predictors so that a line
  that is not valid UTF-8 fails alone instead of stopping the run.
- `long_inputs`: a sentence with more word pieces than the transformer has positions is
  encoded in overlapping windows instead of failing (batches within the limit unchanged).
- `packed_batches`: at parse time on the CPU a BERT encoder runs on the batch's real word
  pieces only, not on its padding (the same vectors there; a speed patch).
"""
from lal_allennlp.patches.long_inputs import encode_long_inputs_in_windows
from lal_allennlp.patches.packed_batches import pack_inference_batches
from lal_allennlp.patches.transformer_cache import key_transformer_cache_by_arguments
from lal_allennlp.patches.word_pieces import tokenize_words_in_one_call
from lal_allennlp.patches.predict_input import read_predict_input_per_line


def apply_patches() -> None:
    """Applies every patch (each is idempotent)."""
    key_transformer_cache_by_arguments()
    tokenize_words_in_one_call()
    read_predict_input_per_line()
    encode_long_inputs_in_windows()
    pack_inference_batches()  # after long_inputs: it calls long_inputs' forward itself


__all__ = ["apply_patches"]
