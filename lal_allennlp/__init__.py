"""lal-allennlp (being assembled)."""
from lal_allennlp._compat import apply_shims

apply_shims()
