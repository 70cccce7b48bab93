"""
EVALB bracketing scores as an AllenNLP `Metric`, computed in-process by the pure-Python scorer
of :mod:`lal_allennlp.metrics.evalb` (no compiled EVALB binary, no temporary files), so it can
run on every validation batch and in distributed training.
"""

import dataclasses
from typing import Dict, List, Optional

import torch
from allennlp.common.util import is_distributed
from allennlp.nn.util import dist_reduce_sum
from allennlp.training.metrics.metric import Metric
from nltk import Tree

from lal_allennlp.metrics.evalb import (
    COLLINS,
    NK,
    EvalbCounts,
    EvalbParams,
    EvalbResult,
    evalb_sentence,
)

# COLLINS.prm with the Chinese Treebank's punctuation tag (`PU`) deleted like English
# punctuation. (Published CTB scores usually keep PU: COLLINS.prm does not list it.)
CTB_PUNCTUATION = dataclasses.replace(COLLINS, delete_labels=("TOP", "-NONE-", "PU"))

_PRESETS = {"collins": COLLINS, "nk": NK, "ctb_punctuation": CTB_PUNCTUATION}


def with_gold_tags(predicted: Tree, gold: Tree) -> Tree:
    """A copy of `predicted` with the gold tree's POS tags, when both trees have the same
    words (else `predicted` itself, which EVALB then reports as an error sentence)."""
    if predicted.leaves() != gold.leaves():
        return predicted
    tagged = predicted.copy(deep=True)
    for position, (_, tag) in zip(tagged.treepositions("leaves"), gold.pos()):
        tagged[position[:-1]].set_label(tag)
    return tagged


@Metric.register("lal_evalb")
class EvalbMetric(Metric):
    """
    Labelled bracketing precision, recall and F1, complete match and tagging accuracy, exactly
    as EVALB computes them over all sentences seen (see :mod:`lal_allennlp.metrics.evalb`).
    Reported as fractions in [0, 1]. A predicted tree that is `None` or has no words counts as
    a parser failure (no predicted bracket, no correct tag); pairs whose gold tree is `None`
    are left out. Error sentences (gold and predicted words differ) are not scored, as in
    EVALB, but unlike EVALB the metric never gives up after `MAX_ERROR` of them.

    In distributed training the counts of each batch are summed over all workers when the
    metric is called, so every worker reports the scores of all sentences. Every worker must
    therefore call the metric the same number of times.

    Registered as a `Metric` with name "lal_evalb".

    # Parameters

    preset : `str`, optional (default = `"collins"`)
        The EVALB parameter set: `"collins"` (COLLINS.prm, the standard for English and as
        usually used for the CTB), `"nk"` (benepar's nk.prm, which also deletes `S1`, `?` and
        `!`) or `"ctb_punctuation"` (COLLINS.prm deleting the CTB punctuation tag `PU` instead
        of the English ones).
    parameter_file : `Optional[str]`, optional (default = `None`)
        An EVALB `.prm` file to read instead of `preset` (e.g. another language's punctuation).
    gold_tags : `bool`, optional (default = `False`)
        Give each predicted tree the gold tree's POS tags (when both have the same words)
        before scoring: bracket scores then do not depend on the tagger. EVALB deletes
        punctuation by each tree's own tags, so a mistagged punctuation word (or a word tagged
        as punctuation) makes the sentence an error sentence, left out of every count; with a
        weak tagger that leaves out different sentences for different models. The scores
        then match those of parsers that predict no tags (SuPar) scored with gold tags, and
        `evalb_tagging_accuracy` is 1 (the parsers report `pos_accuracy` separately).
    """

    supports_distributed = True

    def __init__(
        self, preset: str = "collins", parameter_file: Optional[str] = None, gold_tags: bool = False
    ) -> None:
        self.gold_tags = gold_tags
        if parameter_file is not None:
            self._params = EvalbParams.from_prm_file(parameter_file)
        elif preset.lower() in _PRESETS:
            self._params = _PRESETS[preset.lower()]
        else:
            raise ValueError(
                f"unknown EVALB preset {preset!r}: use one of {sorted(_PRESETS)} or give a "
                "parameter_file"
            )
        self._counts = EvalbCounts()

    @property
    def params(self) -> EvalbParams:
        """The EVALB settings in use."""
        return self._params

    @property
    def counts(self) -> EvalbCounts:
        """The counts accumulated so far (summed over workers)."""
        return self._counts

    def __call__(  # type: ignore[override]
        self, predicted_trees: List[Optional[Tree]], gold_trees: List[Optional[Tree]]
    ) -> None:
        """
        # Parameters

        predicted_trees : `List[Optional[Tree]]`
            The parser's trees; `None` (or a tree without words) for a parser failure.
        gold_trees : `List[Optional[Tree]]`
            The gold trees, in the same order; pairs whose gold tree is `None` are skipped.
        """
        if len(predicted_trees) != len(gold_trees):
            raise ValueError(
                f"EvalbMetric got {len(predicted_trees)} predicted trees but "
                f"{len(gold_trees)} gold trees; they must be aligned one to one"
            )
        batch = EvalbCounts()
        for predicted, gold in zip(predicted_trees, gold_trees):
            if gold is not None:
                if self.gold_tags and predicted is not None:
                    predicted = with_gold_tags(predicted, gold)
                batch += evalb_sentence(gold, predicted, self._params)
        if is_distributed():
            # shape (num_fields,); summed over workers on the process group's device
            reduced = dist_reduce_sum(torch.tensor(batch.to_list(), dtype=torch.long))
            batch = EvalbCounts.from_list(reduced.tolist())
        self._counts += batch

    def get_metric(self, reset: bool = False) -> Dict[str, float]:
        """
        # Returns

        `Dict[str, float]`
            `evalb_precision`, `evalb_recall`, `evalb_f1`, `evalb_complete_match` and
            `evalb_tagging_accuracy`, fractions in [0, 1] (0 when nothing was counted), and
            `evalb_left_out`, the number of sentences EVALB did not score (error and skipped
            sentences): with the parser's own tags, a mistagged punctuation word leaves its
            sentence out of every other figure, so the scores are over fewer sentences.
        """
        result = EvalbResult.from_counts(self._counts)
        metrics = {
            "evalb_precision": result.precision,
            "evalb_recall": result.recall,
            "evalb_f1": result.f1,
            "evalb_complete_match": result.complete_match,
            "evalb_tagging_accuracy": result.tagging_accuracy,
            "evalb_left_out": float(self._counts.errors + self._counts.skipped),
        }
        if reset:
            self.reset()
        return metrics

    def reset(self) -> None:
        self._counts = EvalbCounts()
