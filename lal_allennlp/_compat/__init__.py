"""Compatibility with Python 3.11, torch 2.x and transformers 4.5x for AllenNLP 2.10.1."""
from lal_allennlp._compat.shims import apply_shims

__all__ = ["apply_shims"]
