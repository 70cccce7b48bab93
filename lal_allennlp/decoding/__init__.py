"""
Chart decoders: numpy in, numpy out (no torch, no vocabulary), each a numba kernel.

- `cky`: the span CKY of Stern et al. (2017) / Kitaev & Klein (2018), batched, optionally
  cost-augmented with the Hamming loss.
- `joint_span`: the exact joint span (HPSG) decoder of Zhou & Zhao (2019), a constituency
  tree and a projective dependency tree that agree.
- `kernels`: the numba helpers both share (vectorisable max, prefetch).

Their readable references, and the authors' O(n^5) joint-span recurrence, live in
`tests/oracles/`, where the tests compare the kernels with them and with brute force.
"""
from lal_allennlp.decoding.cky import cky_decode
from lal_allennlp.decoding.joint_span import joint_span_decode

__all__ = ["cky_decode", "joint_span_decode"]
