"""
Unlabelled bracket F1 of an unsupervised parser as an AllenNLP `Metric`, computed as ON-LSTM
(Shen et al. 2019) and the Tree Transformer (Wang et al. 2019) compute it: punctuation removed
from the gold trees, trivial brackets left out, sentence-level and corpus-level F1 (see
:class:`lal_allennlp.syntax.unsupervised.UnlabelledBracketScore`).
"""
from typing import Dict, List, Optional, Set, Tuple

import torch
from allennlp.common.util import is_distributed
from allennlp.nn.util import dist_reduce_sum
from allennlp.training.metrics.metric import Metric
from nltk import Tree

from lal_allennlp.syntax.unsupervised import UnlabelledBracketScore, gold_unlabelled_spans


@Metric.register("lal_unlabelled_f1")
class UnlabelledF1(Metric):
    """
    Sentence-level F1 (the number the unsupervised-parsing papers report) and corpus-level
    precision, recall and F1 of unlabelled brackets, over all sentences seen. The gold trees
    keep their punctuation and the metric removes it (`gold_unlabelled_spans`, Penn Treebank
    punctuation tags); the predicted brackets are over the words without punctuation, the
    words the parser sees. Pairs whose gold tree is `None` are left out. Scores are fractions
    in [0, 1].

    In distributed training the sums of each batch are added up over all workers when the
    metric is called, so every worker reports the scores of all sentences. Every worker must
    therefore call the metric the same number of times.

    Registered as a `Metric` with name "lal_unlabelled_f1".
    """

    supports_distributed = True

    def __init__(self) -> None:
        self._score = UnlabelledBracketScore()

    @property
    def score(self) -> UnlabelledBracketScore:
        """The sums accumulated so far (over all workers)."""
        return self._score

    def __call__(  # type: ignore[override]
        self, predicted_spans: List[Set[Tuple[int, int]]], gold_trees: List[Optional[Tree]]
    ) -> None:
        """
        # Parameters

        predicted_spans : `List[Set[Tuple[int, int]]]`
            Per sentence, the predicted brackets `(start, end_exclusive)` over its words without
            punctuation (whether they hold the whole sentence and single words does not matter).
        gold_trees : `List[Optional[Tree]]`
            The gold trees with their punctuation and `(tag word)` preterminals, in the same
            order; pairs whose gold tree is `None` are skipped.

        # Raises

        `ValueError` if the lists differ in length, or a predicted span reaches past the words
        of its gold sentence without punctuation (the parser saw other words).
        """
        if len(predicted_spans) != len(gold_trees):
            raise ValueError(
                f"UnlabelledF1 got {len(predicted_spans)} predicted span sets but "
                f"{len(gold_trees)} gold trees; they must be aligned one to one"
            )
        batch = UnlabelledBracketScore()
        for spans, gold in zip(predicted_spans, gold_trees):
            if gold is None:
                continue
            words, gold_spans = gold_unlabelled_spans(gold)
            for start, end in spans:
                if not 0 <= start < end <= len(words):
                    raise ValueError(
                        f"the predicted span ({start}, {end}) does not fit the {len(words)} "
                        f"words without punctuation of the gold sentence {' '.join(words)!r} "
                        f"(with punctuation: {' '.join(gold.leaves())!r}); predict over the "
                        "words without punctuation"
                    )
            batch.add(spans, gold_spans, len(words))
        if is_distributed():
            # shape (5,): sentences, sum of sentence F1s, matched, predicted, gold
            summed = dist_reduce_sum(torch.tensor(batch.to_list(), dtype=torch.float64))
            batch = UnlabelledBracketScore.from_list(summed.tolist())
        self._score += batch

    def get_metric(self, reset: bool = False) -> Dict[str, float]:
        """
        # Returns

        `Dict[str, float]`
            `sentence_f1`, `corpus_f1`, `corpus_precision` and `corpus_recall`, fractions in
            [0, 1] (0 when no sentence was added).
        """
        metrics = self._score.as_dict()
        if reset:
            self.reset()
        return metrics

    def reset(self) -> None:
        self._score = UnlabelledBracketScore()
