"""
Metrics: an EVALB-compatible bracket scorer in pure Python (`evalb`) and the AllenNLP `Metric`
built on it (`evalb_metric`, registered as `"lal_evalb"`).
"""

from lal_allennlp.metrics.evalb import (
    COLLINS,
    NK,
    EvalbCounts,
    EvalbError,
    EvalbParams,
    EvalbResult,
    evalb_files,
    evalb_score,
    evalb_sentence,
    format_report,
)
from lal_allennlp.metrics.evalb_metric import EvalbMetric

__all__ = [
    "COLLINS",
    "NK",
    "EvalbCounts",
    "EvalbError",
    "EvalbMetric",
    "EvalbParams",
    "EvalbResult",
    "evalb_files",
    "evalb_score",
    "evalb_sentence",
    "format_report",
]
