"""
Metrics: an EVALB-compatible bracket scorer in pure Python (`evalb`) and the AllenNLP `Metric`
built on it (`evalb_metric`, registered as `"lal_evalb"`); the unlabelled bracket F1 of
unsupervised parsers (`unlabelled_f1`, registered as `"lal_unlabelled_f1"`); UAS/LAS without
punctuation (`attachment_scores`).
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
from lal_allennlp.metrics.unlabelled_f1 import UnlabelledF1
from lal_allennlp.metrics.attachment_scores import (
    PTB_PUNCTUATION_TAGS,
    PunctuationFreeAttachmentScores,
)

__all__ = [
    "COLLINS",
    "NK",
    "PTB_PUNCTUATION_TAGS",
    "PunctuationFreeAttachmentScores",
    "EvalbCounts",
    "EvalbError",
    "EvalbMetric",
    "EvalbParams",
    "EvalbResult",
    "UnlabelledF1",
    "evalb_files",
    "evalb_score",
    "evalb_sentence",
    "format_report",
]
