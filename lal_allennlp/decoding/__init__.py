"""
Chart decoders: numpy in, numpy out (no torch, no vocabulary), each a numba kernel.

- `cky`: the span CKY of Stern et al. (2017) / Kitaev & Klein (2018), batched, optionally
  cost-augmented with the Hamming loss.
- `joint_span`: the exact joint span (HPSG) decoder of Zhou & Zhao (2019), a constituency
  tree and a projective dependency tree that agree; its label tables in `joint_span_tables`,
  its O(n^4) chart fill and traceback in `joint_span_one`.
- `inside_outside`: the tree CRF's inside and outside passes over spans (log Z and the
  derivatives from which the labelled marginals follow).
- `kbest`: the exact k-best trees of a span chart (lazy k-best of Huang & Chiang 2005, over
  the n-ary trees the CKY decodes, each once); pure Python, for the few sentences that ask.
- `kernels`: the numba helpers they share (vectorisable max, 8-lane vector code).
- `memory`: the workspaces' allocation and how many fit in the memory available.
- `_numba_cache`: numba's on-disk cache of these kernels, keyed on all of the package's sources
  (installed here, before any kernel is defined).

Their readable references, and the authors' O(n^5) joint-span recurrence, live in
`tests/oracles/`, where the tests compare the kernels with them and with brute force.
"""

from lal_allennlp.decoding import _numba_cache

_numba_cache.install()

from lal_allennlp.decoding.cky import cky_decode  # noqa: E402  (after the cache locators)
from lal_allennlp.decoding.joint_span import joint_span_decode  # noqa: E402
from lal_allennlp.decoding.inside_outside import inside_outside  # noqa: E402
from lal_allennlp.decoding.kbest import kbest_batch, kbest_trees  # noqa: E402

__all__ = ["cky_decode", "inside_outside", "joint_span_decode", "kbest_batch", "kbest_trees"]
