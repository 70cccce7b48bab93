"""
Compatibility with Python 3.11, torch 2.x and transformers 4.5x for AllenNLP 2.10.1: only what
lets AllenNLP import and run unchanged (`shims`), and the import hook that applies the shims
before AllenNLP is first imported (`import_hook`, loaded by `lal_allennlp_compat.pth`; it also
loads the MKL vendor override, only when `LAL_MKL_VENDOR_OVERRIDE=1` asks for it). Fixes of
AllenNLP bugs live in `lal_allennlp.patches`.
"""
from lal_allennlp._compat.shims import apply_shims

__all__ = ["apply_shims"]
