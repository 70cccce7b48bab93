"""Chart decoders for span-based constituency parsing (numpy in, numpy out; no torch)."""

from lal_allennlp.decoding.cky import cky_decode
from lal_allennlp.decoding.cky_reference import cky_decode_reference

__all__ = ["cky_decode", "cky_decode_reference"]
