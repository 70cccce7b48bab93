"""
lal-allennlp: Label Attention Layer and span-based constituency parsers for AllenNLP.

Importing this package applies the AllenNLP compatibility shims (see `_compat/`) and
registers every dataset reader, model, module, metric and predictor with AllenNLP.
The flow of the package follows its folders: `data` (readers, trees) -> `modules`
(encoders, span features and scorers) -> `models` -> `decoding` (numba CKY) -> `metrics`
(EVALB) -> `predictors`.
"""
from lal_allennlp._compat import apply_shims

apply_shims()

from lal_allennlp._compat.transformer_cache import key_transformer_cache_by_arguments  # noqa: E402

key_transformer_cache_by_arguments()

from lal_allennlp._compat.word_pieces import tokenize_words_in_one_call  # noqa: E402

tokenize_words_in_one_call()

from lal_allennlp import data, decoding, metrics, modules, models, training  # noqa: E402
from lal_allennlp import predictors  # noqa: E402  (installed from the top-level predictors/)
