"""
lal-allennlp: neural syntactic parsers for AllenNLP, around the Label Attention Layer.

Importing this package applies the AllenNLP compatibility shims (`_compat`) and the fixes of
AllenNLP bugs (`patches`), and registers every dataset reader, model, module, metric and
predictor with AllenNLP. The folders follow the flow of data:

    syntax (pure trees and formats) -> dataset_readers (instances) -> modules (encoders,
    scorers) -> structs (charts as distributions: loss, marginals, decode) -> decoding (numba
    kernels) -> models -> metrics -> predictors / commands; analysis and experiments (the
    `allennlp grid` subcommand) on top
"""
from lal_allennlp._compat import apply_shims

apply_shims()

from lal_allennlp.patches import apply_patches  # noqa: E402

apply_patches()

from lal_allennlp import syntax, dataset_readers, decoding, metrics, modules  # noqa: E402
from lal_allennlp import structs, models, predictors, training  # noqa: E402
from lal_allennlp import experiments  # noqa: E402  (registers `allennlp grid`)
from lal_allennlp.api import Parser, ParseResult  # noqa: E402
