"""
Fixes of AllenNLP 2.10.1 bugs that no component of this package can route around, applied when
`lal_allennlp` is imported (unlike `_compat`, which only lets AllenNLP run on Python 3.11 /
torch 2.x / transformers 4.5x). Each module names the bug it fixes:

- `transformer_cache`: allennlp's transformer cache is keyed by the model name only, so a
  4-layer MiniLM is handed a cached 6-layer one (and the other way round); it is keyed by
  `transformer_kwargs` too.
- `predict_input`: `allennlp predict` reads its JSON lines as strict UTF-8, so one line that is
  not valid UTF-8 stops the whole run and loses the outputs before it; for our predictors that
  line fails alone.

What this package adds around the transformer (precision, packing, long inputs, fast dropout,
the one-call word-piece split) is not a patch: it is the `lal_transformer` embedder and indexer
(`lal_allennlp.modules.transformer_embedder`, `transformer_indexer`).
"""
from lal_allennlp.patches.predict_input import read_predict_input_per_line
from lal_allennlp.patches.transformer_cache import key_transformer_cache_by_arguments

PATCHES = (key_transformer_cache_by_arguments, read_predict_input_per_line)
"""The patches `apply_patches` applies, in order."""


def apply_patches() -> None:
    """Applies every patch (each is idempotent)."""
    for patch in PATCHES:
        patch()


__all__ = ["PATCHES", "apply_patches"]
