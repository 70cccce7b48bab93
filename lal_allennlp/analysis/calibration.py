"""
Calibration of a parser's confidences: temperature scaling (Guo et al. 2017, "On Calibration
of Modern Neural Networks") fitted on held-out trees, stored in the model archive, and measured
on other trees by expected calibration error, reliability diagrams and how well the sentence
score ranks sentences by their F1.

One temperature per distribution the model defines (`SpanParserBase.confidence_temperatures`):

- `"spans"`: the span chart divided by T is a tree CRF; T minimises the held-out gold trees'
  negative log-likelihood `sum log Z(s / T) - s(gold) / T` (the structured analogue of
  temperature scaling on a softmax, one inside pass per evaluation);
- `"heads"`: the arc scorer's softmax over each word's possible heads, T minimising the gold
  heads' NLL;
- `"dependency_labels"`: the label classifier's softmax given the gold head, T minimising the
  gold labels' NLL.

That is the `"gold"` objective. The default, `"output"`, fits what a user reads instead: the
confidences of the parser's own output (its constituents, its decoded heads, its labels of the
words whose head is right), T minimising their binary cross-entropy against whether each item
is right. The two differ where the output is not the distribution's own argmax: the joint
decoder picks heads with the span scores' help, so a decoded head of low `P(head | word)` is
right more often than that probability says, and the gold NLL cannot see it.

The `"ece"` objective minimises instead the expected calibration error (below) of the output's
confidences on the held-out trees, T taken from a log-spaced grid: the cross-entropy weighs most
the few items of low confidence that are right (the joint parser's decoded heads that are not
their softmax's argmax), and can pull T where the bulk of the items is worse calibrated.

A golden-section search over log T finds each minimum of the first two (they are unimodal). The
best parse is the same for every T: calibrating changes the numbers, never the trees.

What is measured, per kind of confidence, over the items of the predicted parses: a
constituent (its span confidence; right when the gold tree has that labelled span, unary chains
joined as the parser writes them), a word's head (right when it is the gold head), a word's
label (over the words whose head is right; right when it is the gold label). ECE: the items are
put in `bins` equal-width bins of confidence, and ECE is the mean over items of
|accuracy of the bin - mean confidence of the bin|.
"""
from dataclasses import dataclass, field
from functools import partial
import json
import math
import os
import shutil
import tarfile
import tempfile
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np
import torch

from lal_allennlp.dataset_readers.fields import UNSEEN_LABEL
from lal_allennlp.syntax.trees import tree_to_spans

KINDS = ("spans", "heads", "dependency_labels")
"""The kinds of confidence, as the temperatures name them."""

_OUTPUT_KEYS = {
    "spans": "span_confidences",
    "heads": "head_confidences",
    "dependency_labels": "dependency_label_confidences",
}


def fit_temperature(
    nll: Callable[[float], float], low: float = 0.05, high: float = 20.0, steps: int = 40
) -> float:
    """The temperature in `[low, high]` minimising `nll(T)`, by golden-section search over
    log T (the NLLs here are convex in 1 / T, so unimodal in log T)."""
    ratio = (math.sqrt(5.0) - 1.0) / 2.0
    a, b = math.log(low), math.log(high)
    c, d = b - ratio * (b - a), a + ratio * (b - a)
    fc, fd = nll(math.exp(c)), nll(math.exp(d))
    for _ in range(steps):
        if fc <= fd:
            b, d, fd = d, c, fc
            c = b - ratio * (b - a)
            fc = nll(math.exp(c))
        else:
            a, c, fc = c, d, fd
            d = a + ratio * (b - a)
            fd = nll(math.exp(d))
    return math.exp((a + b) / 2.0)


def softmax_nll(
    logits: Sequence[torch.Tensor], gold: Sequence[torch.Tensor]
) -> Callable[[float], float]:
    """The NLL of `gold[i]` (`(items,)`) under `softmax(logits[i] / T)` (`(items, classes)`,
    -inf for impossible classes), summed over the pairs (batches of different widths), as a
    function of T."""
    pairs = [(x.detach().float(), y.view(-1, 1)) for x, y in zip(logits, gold)]

    def nll(temperature: float) -> float:
        total = 0.0
        for x, y in pairs:
            total -= float(torch.log_softmax(x / temperature, dim=-1).gather(1, y).sum())
        return total

    return nll


@dataclass
class HeldOut:
    """What the temperatures are fitted on, collected by `collect_held_out`: per batch, the
    span chart (`SpanChart`) with the gold chart columns, and over all words the head logits
    with the gold heads and the label logits at the gold heads with the gold labels."""

    span_charts: List[Tuple[Any, torch.Tensor]] = field(default_factory=list)
    head_logits: List[torch.Tensor] = field(default_factory=list)
    heads: List[torch.Tensor] = field(default_factory=list)
    label_logits: List[torch.Tensor] = field(default_factory=list)
    labels: List[torch.Tensor] = field(default_factory=list)
    # The parser's output: per batch its constituents' chart rows (b, i, j, column) and whether
    # each is right; over the words the decoded heads and labels, and whether each is right.
    output_spans: List[Tuple[torch.Tensor, torch.Tensor]] = field(default_factory=list)
    output_heads: List[Tuple[torch.Tensor, torch.Tensor, torch.Tensor]] = field(
        default_factory=list
    )
    output_labels: List[Tuple[torch.Tensor, torch.Tensor, torch.Tensor]] = field(
        default_factory=list
    )

    def output_span_probabilities(self, temperature: float) -> Tuple[torch.Tensor, torch.Tensor]:
        """The output constituents' marginals under the charts divided by `temperature`, and
        whether each constituent is right."""
        from lal_allennlp.structs.confidence import marginals_and_log_partition, scaled

        probabilities, rights = [], []
        for (chart, _), (rows, right) in zip(self.span_charts, self.output_spans):
            marginals, _ = marginals_and_log_partition(scaled(chart, temperature))
            probabilities.append(marginals[rows[:, 0], rows[:, 1], rows[:, 2], rows[:, 3]])
            rights.append(right)
        return torch.cat(probabilities), torch.cat(rights)

    def span_nll(self) -> Callable[[float], float]:
        """The gold trees' NLL under the span CRF of the charts divided by T."""
        from lal_allennlp.structs.confidence import scaled

        gold_scores = [chart.score(gold).float() for chart, gold in self.span_charts]

        def nll(temperature: float) -> float:
            total = 0.0
            for (chart, _), gold_score in zip(self.span_charts, gold_scores):
                log_z = scaled(chart, temperature).log_partition
                total += float((log_z - gold_score / temperature).sum())
            return total

        return nll


def _bce(p: torch.Tensor, right: torch.Tensor) -> float:
    """The binary cross-entropy of probabilities `p` against the booleans `right`."""
    p = p.clamp(1e-7, 1 - 1e-7)
    return float(-torch.where(right, p.log(), (1 - p).log()).sum())


def output_softmax_probabilities(
    items: Sequence[Tuple[torch.Tensor, torch.Tensor, torch.Tensor]], temperature: float
) -> Tuple[torch.Tensor, torch.Tensor]:
    """`softmax(logits / temperature)[chosen]` and `right`, over the `(logits, chosen, right)`
    of `items`."""
    probabilities = [
        torch.softmax(logits / temperature, -1).gather(1, chosen.view(-1, 1)).squeeze(1)
        for logits, chosen, _ in items
    ]
    return torch.cat(probabilities), torch.cat([right for _, _, right in items])


def output_softmax_bce(
    items: Sequence[Tuple[torch.Tensor, torch.Tensor, torch.Tensor]]
) -> Callable[[float], float]:
    """The binary cross-entropy of `softmax(logits / T)[chosen]` against `right`, summed over
    the `(logits, chosen, right)` of `items`, as a function of T."""
    return lambda temperature: _bce(*output_softmax_probabilities(items, temperature))


def ece_of(
    probabilities: Callable[[float], Tuple[torch.Tensor, torch.Tensor]], bins: int = 10
) -> Callable[[float], float]:
    """The expected calibration error of the items that `probabilities(T)` gives, as a
    function of T (the `"ece"` objective)."""

    def ece(temperature: float) -> float:
        p, right = probabilities(temperature)
        return Reliability(p.double().numpy(), right.numpy()).ece(bins)

    return ece


def fit_temperature_on_grid(
    loss: Callable[[float], float], low: float = 0.25, high: float = 4.0, points: int = 49
) -> float:
    """The temperature of `points` log-spaced ones in `[low, high]` minimising `loss`: for
    the ECE, which is piecewise constant in T and not unimodal, so no line search."""
    grid = np.exp(np.linspace(math.log(low), math.log(high), points))
    return float(min(grid, key=loss))


def collect_held_out(model: Any, instances: Sequence[Any], batch_size: int = 16) -> HeldOut:
    """Runs `model` (a span or joint parser) over `instances` (read by its validation reader,
    gold trees and dependencies included) and keeps what `fit_temperatures` needs."""
    from allennlp.data import Batch
    from allennlp.nn import util

    from lal_allennlp.modules import fencepost_features
    from lal_allennlp.structs import SpanChart

    held = HeldOut()
    joint = "heads" in model.confidence_temperatures
    model.eval()
    with torch.no_grad():
        for start in range(0, len(instances), batch_size):
            batch = Batch(list(instances[start : start + batch_size]))
            batch.index_instances(model.vocab)
            tensors = util.move_to_device(batch.as_tensor_dict(), model._get_prediction_device())
            words = [m["words"] for m in tensors["metadata"]]
            mask, encoded, embedded = model._encode(tensors["tokens"], words)
            fenceposts = fencepost_features(encoded, model.span_partitions)
            chart = model._chart(encoded, fenceposts, mask, embedded)
            spans = chart.spans if joint else chart
            gold_labels = tensors["gold_span_labels"]
            gold_spans = tensors["gold_spans"].masked_fill(
                (gold_labels == UNSEEN_LABEL).unsqueeze(-1), -1
            )
            gold = SpanChart.gold(gold_spans, gold_labels.clamp(min=0), mask.size(1))
            held.span_charts.append((SpanChart(spans.scores.detach(), spans.lengths), gold))
            unknown = [["UNK"] * len(w) for w in words]
            output = model._decode(chart, encoded, mask, words, unknown)
            rows, right = [], []
            for b, (labelled, metadata) in enumerate(zip(output["labelled_spans"], tensors["metadata"])):
                gold_spans_of = set(tree_to_spans(metadata["gold_tree"])[2])
                for i, j, label in labelled:
                    rows.append((b, i, j, model.span_labels.column(label)))
                    right.append((i, j, label) in gold_spans_of)
            held.output_spans.append(
                (torch.tensor(rows, dtype=torch.long).view(-1, 4), torch.tensor(right, dtype=torch.bool))
            )
            if joint:
                _collect_dependencies(model, chart, mask, tensors, held, output)
    return held


def _collect_dependencies(
    model: Any, chart: Any, mask: torch.Tensor, tensors: Any, held: HeldOut, output: Any
) -> None:
    """The joint parser's head logits (its log-probabilities: a softmax of them divided by T is
    that of the logits divided by T) and label logits at the gold heads, over the words."""
    gold_heads = tensors["gold_heads"]
    gold_labels = tensors["gold_dependency_labels"]
    log_probs = chart.arc_log_probs.detach().float()
    lengths = mask.sum(dim=1)
    positions = torch.arange(log_probs.size(2), device=log_probs.device)
    words = torch.arange(log_probs.size(1), device=log_probs.device)
    allowed = (positions.view(1, 1, -1) <= lengths.view(-1, 1, 1)) & (
        positions.view(1, 1, -1) != words.view(1, -1, 1) + 1
    )
    log_probs = log_probs.masked_fill(~allowed, float("-inf"))
    held.head_logits.append(log_probs[mask])
    held.heads.append(gold_heads[mask])
    label_logits = model._label_logits(chart.word_features, gold_heads).detach().float()
    known = mask & (gold_labels != UNSEEN_LABEL)
    held.label_logits.append(label_logits[known])
    held.labels.append(gold_labels[known])
    heads = output["heads"]
    right_head = (heads == gold_heads) & mask
    held.output_heads.append((log_probs[mask], heads[mask], right_head[mask]))
    chosen_logits = output["dependency_label_logits"].detach().float()
    labels = output["dependency_label_ids"]
    held.output_labels.append(
        (chosen_logits[right_head], labels[right_head], (labels == gold_labels)[right_head])
    )


OBJECTIVES = ("output", "gold", "ece")
"""What `fit_temperatures` minimises (the module docstring)."""


def fit_temperatures(held: HeldOut, objective: str = "output") -> Dict[str, float]:
    """The temperature of each distribution collected in `held`, minimising `objective`."""
    if objective not in OBJECTIVES:
        raise ValueError(f"objective must be one of {OBJECTIVES}, got {objective!r}")
    if objective in ("output", "ece"):
        # Per kind, the output's confidences at T and whether each item is right.
        kinds = {"spans": held.output_span_probabilities}
        if held.output_heads:
            kinds["heads"] = partial(output_softmax_probabilities, held.output_heads)
            kinds["dependency_labels"] = partial(output_softmax_probabilities, held.output_labels)
        if objective == "ece":
            return {name: fit_temperature_on_grid(ece_of(p)) for name, p in kinds.items()}
        return {name: fit_temperature(lambda t, p=p: _bce(*p(t))) for name, p in kinds.items()}
    temperatures = {"spans": fit_temperature(held.span_nll())}
    if held.head_logits:
        temperatures["heads"] = fit_temperature(softmax_nll(held.head_logits, held.heads))
        temperatures["dependency_labels"] = fit_temperature(
            softmax_nll(held.label_logits, held.labels)
        )
    return temperatures


# ---------------------------------------------------------------------------------------------
# Measuring
# ---------------------------------------------------------------------------------------------


@dataclass
class Reliability:
    """One kind of confidence over a treebank: each item's confidence and whether it is right."""

    confidences: np.ndarray
    correct: np.ndarray

    def bins(self, bins: int = 10) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Per equal-width bin of confidence: the number of items, their mean confidence and
        their accuracy (NaN for an empty bin)."""
        which = np.minimum((self.confidences * bins).astype(int), bins - 1)
        counts = np.bincount(which, minlength=bins)
        with np.errstate(invalid="ignore", divide="ignore"):
            mean = np.bincount(which, self.confidences, bins) / counts
            accuracy = np.bincount(which, self.correct.astype(float), bins) / counts
        return counts, mean, accuracy

    def ece(self, bins: int = 10) -> float:
        """Expected calibration error: the item-weighted mean over bins of |accuracy - mean
        confidence|."""
        counts, mean, accuracy = self.bins(bins)
        filled = counts > 0
        return float((counts[filled] * np.abs(accuracy[filled] - mean[filled])).sum() / counts.sum())


def spearman(x: Sequence[float], y: Sequence[float]) -> float:
    """Spearman's rank correlation (ties get their mean rank)."""

    def ranks(values: Sequence[float]) -> np.ndarray:
        values = np.asarray(values, dtype=float)
        order = np.argsort(values, kind="mergesort")
        result = np.empty(len(values))
        sorted_values = values[order]
        start = 0
        while start < len(values):
            end = start
            while end + 1 < len(values) and sorted_values[end + 1] == sorted_values[start]:
                end += 1
            result[order[start : end + 1]] = (start + end) / 2.0
            start = end + 1
        return result

    rx, ry = ranks(x), ranks(y)
    if rx.std() == 0 or ry.std() == 0:
        return float("nan")
    return float(np.corrcoef(rx, ry)[0, 1])


@dataclass
class ConfidenceReport:
    """What `measure` finds on one treebank: a `Reliability` per kind of confidence, and per
    sentence its F1 (labelled, EVALB), UAS where there are heads, `sentence_confidence` and
    `tree_probability`."""

    reliability: Dict[str, Reliability]
    sentence_f1: np.ndarray
    sentence_uas: Optional[np.ndarray]
    sentence_confidence: np.ndarray
    tree_probability: np.ndarray

    def summary(self, bins: int = 10) -> Dict[str, Any]:
        """ECE, mean confidence and accuracy per kind; Spearman of the sentence scores with
        the sentence F1 (and UAS)."""
        result: Dict[str, Any] = {}
        for kind, reliability in self.reliability.items():
            result[kind] = {
                "items": int(len(reliability.confidences)),
                "ece": reliability.ece(bins),
                "mean_confidence": float(reliability.confidences.mean()),
                "accuracy": float(reliability.correct.mean()),
            }
        ranking = {
            "sentence_confidence_vs_f1": spearman(self.sentence_confidence, self.sentence_f1),
            "tree_probability_vs_f1": spearman(self.tree_probability, self.sentence_f1),
        }
        if self.sentence_uas is not None:
            ranking["sentence_confidence_vs_uas"] = spearman(
                self.sentence_confidence, self.sentence_uas
            )
        result["ranking"] = ranking
        return result


def measure(model: Any, instances: Sequence[Any], batch_size: int = 32) -> ConfidenceReport:
    """Parses `instances` (gold trees, and heads for a joint model, in their metadata) with
    `confidence` on, at the model's current temperatures, and scores each confidence."""
    from lal_allennlp.analysis.significance import bracket_counts
    from lal_allennlp.analysis.predictions import _prediction

    items: Dict[str, Tuple[List[float], List[bool]]] = {}
    gold_trees, predicted_trees, uas = [], [], []
    sentence_scores, tree_probabilities = [], []
    evalb = getattr(model, "evalb", None)
    gold_tags = bool(getattr(evalb, "gold_tags", False))
    model.eval()
    with torch.no_grad():
        for start in range(0, len(instances), batch_size):
            batch = list(instances[start : start + batch_size])
            for instance in batch:
                instance["metadata"].metadata["confidence"] = True
            for instance, output in zip(batch, model.forward_on_instances(batch)):
                metadata = instance["metadata"].metadata
                prediction = _prediction(metadata, output, gold_tags)
                gold_trees.append(prediction.gold_tree)
                predicted_trees.append(prediction.predicted_tree)
                sentence_scores.append(output["sentence_confidence"])
                tree_probabilities.append(output["tree_probability"])
                _score_items(output, prediction, items)
                if prediction.gold_heads is not None:
                    right = [p == g for p, g in zip(prediction.predicted_heads, prediction.gold_heads)]
                    uas.append(float(np.mean(right)))
    counts = bracket_counts(gold_trees, predicted_trees)
    with np.errstate(invalid="ignore", divide="ignore"):
        precision = counts[:, 0] / counts[:, 2]
        recall = counts[:, 0] / counts[:, 1]
        f1 = np.where(counts[:, 0] > 0, 2 * precision * recall / (precision + recall), 0.0)
    # a sentence without brackets on either side is parsed perfectly
    f1 = np.where((counts[:, 1] == 0) & (counts[:, 2] == 0), 1.0, f1)
    return ConfidenceReport(
        {kind: Reliability(np.array(c), np.array(r)) for kind, (c, r) in items.items()},
        f1,
        np.array(uas) if uas else None,
        np.array(sentence_scores, dtype=float),
        np.array(tree_probabilities, dtype=float),
    )


def _score_items(output: Dict[str, Any], prediction: Any, items: Dict[str, Any]) -> None:
    """Adds each confidence of one parse with whether its item is right."""
    spans = output.get("span_confidences")
    if spans is not None:
        _, _, gold_spans = tree_to_spans(prediction.gold_tree)
        gold = set(gold_spans)
        confidences, correct = items.setdefault("spans", ([], []))
        for (i, j, label), confidence in zip(output["labelled_spans"], spans):
            confidences.append(confidence)
            correct.append((i, j, label) in gold)
    heads = output.get("head_confidences")
    if heads is not None and prediction.gold_heads is not None:
        confidences, correct = items.setdefault("heads", ([], []))
        right_head = [p == g for p, g in zip(prediction.predicted_heads, prediction.gold_heads)]
        confidences.extend(heads)
        correct.extend(right_head)
        labels = output.get("dependency_label_confidences")
        if labels is not None and prediction.gold_dependency_labels is not None:
            confidences, correct = items.setdefault("dependency_labels", ([], []))
            for w, right in enumerate(right_head):
                if right:
                    confidences.append(labels[w])
                    correct.append(
                        prediction.predicted_dependency_labels[w]
                        == prediction.gold_dependency_labels[w]
                    )


def reliability_diagram(
    reports: Dict[str, Dict[str, Reliability]], path: str, bins: int = 10, title: str = ""
) -> None:
    """A PNG of reliability diagrams: one panel per kind of confidence, one line per report
    (e.g. "before" and "after"), accuracy against mean confidence per bin, with the diagonal
    and the ECE in the legend."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    kinds = [k for k in KINDS if any(k in r for r in reports.values())]
    figure, axes = plt.subplots(1, len(kinds), figsize=(4.2 * len(kinds), 4.2), squeeze=False)
    for axis, kind in zip(axes[0], kinds):
        axis.plot([0, 1], [0, 1], color="grey", linestyle=":", linewidth=1)
        for name, by_kind in reports.items():
            if kind not in by_kind:
                continue
            reliability = by_kind[kind]
            counts, mean, accuracy = reliability.bins(bins)
            filled = counts > 0
            axis.plot(
                mean[filled],
                accuracy[filled],
                marker="o",
                label=f"{name} (ECE {100 * reliability.ece(bins):.1f})",
            )
        axis.set_xlim(0, 1)
        axis.set_ylim(0, 1)
        axis.set_xlabel("confidence (bin mean)")
        axis.set_ylabel("accuracy")
        axis.set_title(kind.replace("_", " "))
        axis.legend(loc="upper left", fontsize=8)
    if title:
        figure.suptitle(title, fontsize=10)
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)


# ---------------------------------------------------------------------------------------------
# The archive
# ---------------------------------------------------------------------------------------------


def write_calibrated_archive(source: str, target: str, temperatures: Dict[str, float]) -> None:
    """Copies the model archive `source` to `target` with `temperatures` as the model's
    `confidence_temperatures` in its `config.json` (every other member unchanged), so that
    every way of loading it (`allennlp evaluate`, `Parser.load`, `lal-serve`, spaCy) reports
    calibrated confidences."""
    with tempfile.TemporaryDirectory() as directory:
        with tarfile.open(source, "r:*") as archive:
            archive.extractall(directory, filter="data")
        config_path = os.path.join(directory, "config.json")
        with open(config_path, encoding="utf-8") as handle:
            config = json.load(handle)
        config["model"]["confidence_temperatures"] = {
            name: float(value) for name, value in temperatures.items()
        }
        with open(config_path, "w", encoding="utf-8") as handle:
            json.dump(config, handle, indent=2)
        partial = target + ".partial"
        with tarfile.open(partial, "w:gz") as archive:
            # config.json first, as `allennlp train` writes it (`Parser.load` checks it there)
            archive.add(config_path, arcname="config.json")
            for name in sorted(os.listdir(directory)):
                if name != "config.json":
                    archive.add(os.path.join(directory, name), arcname=name)
        shutil.move(partial, target)
