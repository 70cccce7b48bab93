"""
Chart decoders (numpy in, numpy out; no torch, no vocabulary): the span CKY of Stern et al.
(2017) / Kitaev & Klein (2018), and the joint-span HPSG decoder of Zhou & Zhao (2019), each a
numba kernel with a pure-Python reference beside it.
"""
from lal_allennlp.decoding.cky import cky_decode
from lal_allennlp.decoding.cky_reference import cky_decode_reference
from lal_allennlp.decoding.joint_span import joint_span_decode
from lal_allennlp.decoding.joint_span_reference import joint_span_decode_reference

__all__ = [
    "cky_decode",
    "cky_decode_reference",
    "joint_span_decode",
    "joint_span_decode_reference",
]
