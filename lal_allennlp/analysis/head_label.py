"""
Which label attention heads contribute to which syntactic categories, over a whole treebank:
the head x label matrix of Mrini et al. (2020), "Rethinking Self-Attention: Towards
Interpretability in Neural Parsing", sec. 2 (Figure 6, computing head contributions) and
sec. 5 (the heads' contributions to the correctly predicted constituents of each category).

Every sentence of the treebank is parsed from its gold words and gold POS tags (the instances
of the archive's validation reader, as `allennlp evaluate` reads them). For each predicted
constituent that is also a gold constituent, the contributions of the heads to its span vector
are added to its label's row, and the matrix holds the mean per label: row `l`, column `h` is
the mean contribution of head `h` over the correct constituents labelled `l`. A row is a mean
of distributions over the heads, so it sums to 1, and `1 / num_heads` is what a head with no
preference gets.

- **Correct constituents** (`correct_constituents`): the model predicts unary chains as one
  label (`S+VP`, see `syntax/trees.tree_to_spans`); here a chain is split into its labels, a
  constituent is `(start, end, label)` for each label of the chain, and it is correct when the
  gold tree has it too (a multiset intersection, as EVALB matches brackets, but on the model's
  own labels: no label cleaning, no punctuation deletion). Each label of a correct chain gets
  the span's contributions, so `S` and `VP` of a correct `S+VP` both count it.
- **Measures** (`lal_allennlp.models.explanations`): `"average"` (normalise and average, the
  paper's Figure 6: the span vector min-max normalised, each head's slice averaged, the
  averages divided by their sum) and `"softmax"` (the authors' code: each head's slice summed,
  min-max normalised over the heads, softmax over the heads).
- **Exactness**: a head's slice of the span vector comes from that head alone only without the
  label attention layer's position-wise feed-forward layer (PFL) (`contributions_are_exact`).
  For a model with the PFL the numbers are computed the same way, but they are an
  approximation: the feed-forward layer mixes the heads.

The span vectors are those the model scores: the encoder's output is taken with a forward hook
on the model's encoder while the model parses a batch (`forward_on_instances`), and the
correct constituents of the whole batch go through one gather and one measure, with no loop
over heads or spans.

Outputs (`write_head_label_outputs`): `head_label.csv` (rows: labels with their counts, most
frequent first; columns: heads `head_1` ...; each row sums to 1), `head_label.png` (the
heatmap) and `head_label.md` (which heads specialise in which labels, in numbers). With both
measures the CSV and PNG of each get the measure in their name (`head_label_average.csv`, ...).
"""
from collections import Counter
import csv
from dataclasses import dataclass, field
import os
from typing import Any, Callable, Dict, Iterable, Iterator, List, Optional, Sequence, Tuple

import numpy
import torch

from lal_allennlp.models.explanations import (
    CONTRIBUTION_MEASURES,
    contribution_measure,
    contributions_are_exact,
    find_label_attention,
    head_slices,
)
from lal_allennlp.modules.label_attention import LabelAttentionLayer
from lal_allennlp.modules.span_features import fencepost_features
from lal_allennlp.syntax.trees import expand_label, tree_to_spans

DEFAULT_MIN_COUNT = 20
"""Labels with fewer correct constituents are left out of the summary's tables."""

Span = Tuple[int, int, str]

MEASURE_DESCRIPTIONS = {
    "average": "normalise and average (the paper's Figure 6): the span vector min-max "
    "normalised to [0, 1], each head's slice averaged, the averages divided by their sum",
    "softmax": "softmax (the authors' code): each head's slice summed, the sums min-max "
    "normalised over the heads, then a softmax over the heads",
}


def correct_constituents(
    predicted: Iterable[Sequence[Any]], gold: Iterable[Sequence[Any]]
) -> List[Span]:
    """
    The predicted constituents that the gold tree has, unary chains split into their labels:
    `(0, 2, "S+VP")` is `(0, 2, "S")` and `(0, 2, "VP")`. A multiset intersection, in the
    order of `predicted` (a chain's labels top to bottom).

    # Parameters

    predicted, gold : `Iterable[Sequence]`
        `(start, end_exclusive, label)` spans, labels as the model writes them (`S+VP`).
    """
    remaining = Counter(
        (int(start), int(end), part) for start, end, label in gold for part in expand_label(label)
    )
    correct = []
    for start, end, label in predicted:
        for part in expand_label(label):
            key = (int(start), int(end), part)
            if remaining[key] > 0:
                remaining[key] -= 1
                correct.append(key)
    return correct


class HeadLabelAccumulator:
    """
    Sums of contributions per label, for the means of the head x label matrix.

    # Parameters

    num_heads : `int`
    """

    def __init__(self, num_heads: int) -> None:
        self.num_heads = num_heads
        self.label_ids: Dict[str, int] = {}
        # shape (num_labels, num_heads)
        self.sums = torch.zeros(0, num_heads, dtype=torch.float64)
        # shape (num_labels,)
        self.counts = torch.zeros(0, dtype=torch.long)

    def add(self, contributions: torch.Tensor, labels: Sequence[str]) -> None:
        """Adds one row of `contributions` `(len(labels), num_heads)` to each label's sum."""
        if contributions.shape != (len(labels), self.num_heads):
            raise ValueError(
                f"contributions of shape {tuple(contributions.shape)} for {len(labels)} labels "
                f"and {self.num_heads} heads"
            )
        for label in labels:
            if label not in self.label_ids:
                self.label_ids[label] = len(self.label_ids)
        grow = len(self.label_ids) - self.sums.size(0)
        if grow > 0:
            self.sums = torch.cat([self.sums, self.sums.new_zeros(grow, self.num_heads)])
            self.counts = torch.cat([self.counts, self.counts.new_zeros(grow)])
        ids = torch.tensor([self.label_ids[label] for label in labels], dtype=torch.long)
        self.sums.index_add_(0, ids, contributions.detach().to("cpu", torch.float64))
        self.counts += torch.bincount(ids, minlength=self.counts.size(0))

    def result(self, measure: str) -> "HeadLabelMatrix":
        """The means, labels sorted by count (most first), then by name."""
        names = sorted(self.label_ids, key=lambda l: (-int(self.counts[self.label_ids[l]]), l))
        order = torch.tensor([self.label_ids[name] for name in names], dtype=torch.long)
        counts = self.counts[order]
        sums = self.sums[order]
        total = int(counts.sum())
        return HeadLabelMatrix(
            measure=measure,
            labels=names,
            counts=counts.numpy(),
            means=(sums / counts.clamp_min(1).unsqueeze(1)).numpy(),
            head_means=(sums.sum(dim=0) / max(total, 1)).numpy(),
        )


@dataclass
class HeadLabelMatrix:
    """
    The head x label matrix of one measure.

    # Parameters

    measure : `str`
        One of `CONTRIBUTION_MEASURES`.
    labels : `List[str]`
        The labels, most correct constituents first.
    counts : `numpy.ndarray`
        Shape `(num_labels,)`: correct constituents per label.
    means : `numpy.ndarray`
        Shape `(num_labels, num_heads)`: mean contribution of each head per label (rows sum
        to 1).
    head_means : `numpy.ndarray`
        Shape `(num_heads,)`: each head's mean contribution over all the correct constituents
        (the count-weighted mean of the rows).
    """

    measure: str
    labels: List[str]
    counts: numpy.ndarray
    means: numpy.ndarray
    head_means: numpy.ndarray

    @property
    def num_heads(self) -> int:
        return int(self.means.shape[1])

    def top_heads(self, label: str, k: int = 3) -> List[Tuple[int, float]]:
        """The `k` heads (0-based) contributing most to `label`, with their means."""
        row = self.means[self.labels.index(label)]
        order = numpy.argsort(-row, kind="stable")[:k]
        return [(int(h), float(row[h])) for h in order]

    def specialisation(self, min_count: int = 1) -> List[Tuple[int, str, float, float]]:
        """Per head (0-based): the label, among those with at least `min_count` correct
        constituents, where its mean contribution is highest relative to its overall mean;
        `(head, label, mean on that label, mean / overall mean)`. Empty without such labels."""
        rows = [index for index, count in enumerate(self.counts) if count >= min_count]
        if not rows:
            return []
        # shape (len(rows), num_heads)
        ratios = self.means[rows] / numpy.maximum(self.head_means, numpy.finfo(float).tiny)
        best = ratios.argmax(axis=0)
        return [
            (
                h,
                self.labels[rows[best[h]]],
                float(self.means[rows[best[h]], h]),
                float(ratios[best[h], h]),
            )
            for h in range(self.num_heads)
        ]

    def column_order(self, min_count: int = 1) -> List[int]:
        """The heads grouped by the label they specialise in (`specialisation`), in the row
        order of the labels, the strongest first within a label: a block diagonal shows."""
        special = self.specialisation(min_count) or self.specialisation(1)
        if not special:
            return list(range(self.num_heads))
        row = {label: index for index, label in enumerate(self.labels)}
        return [h for h, *_ in sorted(special, key=lambda s: (row[s[1]], -s[3], s[0]))]

    def write_csv(self, path: str) -> None:
        """`label,count,head_1,...`: one row per label, most frequent first; the head
        columns of a row sum to 1."""
        with open(path, "w", encoding="utf-8", newline="") as out:
            writer = csv.writer(out)
            writer.writerow(["label", "count"] + [f"head_{h + 1}" for h in range(self.num_heads)])
            for label, count, row in zip(self.labels, self.counts, self.means):
                writer.writerow([label, int(count)] + [repr(float(value)) for value in row])

    def write_png(self, path: str, title: str = "", min_count: int = 1) -> None:
        """The heatmap: labels (most frequent on top, with their counts) by heads (grouped by
        `column_order`), coloured by mean contribution x number of heads (1: uniform)."""
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        from matplotlib.colors import TwoSlopeNorm

        columns = self.column_order(min_count)
        values = self.means[:, columns] * self.num_heads
        low, high = float(values.min(initial=1.0)), float(values.max(initial=1.0))
        norm = TwoSlopeNorm(vmin=min(low, 1.0 - 1e-6), vcenter=1.0, vmax=max(high, 1.0 + 1e-6))
        width = min(40.0, max(8.0, 0.22 * len(columns) + 4.0))
        height = min(40.0, max(3.0, 0.3 * len(self.labels) + 1.8))
        figure, axes = plt.subplots(figsize=(width, height))
        image = axes.imshow(
            values, aspect="auto", cmap="RdBu_r", norm=norm, interpolation="nearest"
        )
        axes.set_yticks(
            range(len(self.labels)),
            [f"{label} ({int(count)})" for label, count in zip(self.labels, self.counts)],
            fontsize=8,
        )
        step = max(1, len(columns) // 60)
        axes.set_xticks(
            range(0, len(columns), step),
            [str(h + 1) for h in columns[::step]],
            fontsize=7,
            rotation=90,
        )
        axes.set_xlabel("label attention head (grouped by the label it specialises in)")
        axes.set_ylabel("label (correct constituents)")
        axes.set_title(
            title or f"Mean head contributions per label ({self.measure})", fontsize=10, wrap=True
        )
        bar = figure.colorbar(image, ax=axes, fraction=0.03, pad=0.01)
        bar.set_label("mean x number of heads (1 = uniform)")
        figure.tight_layout()
        figure.savefig(path, dpi=110)
        plt.close(figure)


@dataclass
class HeadLabelAnalysis:
    """
    The head x label matrices of a treebank and what they were computed from.

    # Parameters

    matrices : `Dict[str, HeadLabelMatrix]`
        One per measure asked for.
    exact : `bool`
        Whether the contributions are exact (no PFL, concatenated heads).
    sentences : `int`
        Sentences read.
    failures : `List[str]`
        `"sentence K: why"` for each sentence the model could not parse (0-based K).
    predicted : `int`, gold : `int`, correct : `int`
        Constituents (unary chains split) predicted, in the gold trees, and in both.
    metrics : `Dict[str, float]`
        The model's metrics over the parsed sentences (EVALB F1 ...).
    """

    matrices: Dict[str, HeadLabelMatrix]
    exact: bool
    sentences: int = 0
    failures: List[str] = field(default_factory=list)
    predicted: int = 0
    gold: int = 0
    correct: int = 0
    metrics: Dict[str, float] = field(default_factory=dict)


def explainable_layer(model: torch.nn.Module) -> LabelAttentionLayer:
    """
    The label attention layer whose heads own the slices of `model`'s span vectors.

    # Raises

    `ValueError` saying why for a model without one (no label attention layer, heads combined
    as in self-attention, or span features not split per head).
    """
    layer = find_label_attention(getattr(model, "encoder", model))
    name = type(model).__name__
    if layer is None or not hasattr(model, "span_partitions"):
        raise ValueError(
            f"a {name} has no label attention layer in its encoder: head contributions need a "
            "lal_span_parser or lal_joint_parser whose encoder ends in a label attention layer (label_attention or "
            "lal_stack)"
        )
    if not layer.concatenate_heads or model.span_partitions != layer.num_heads:
        raise ValueError(
            f"the label attention layer of this {name} combines its heads as self-attention does "
            f"(concatenate_heads: false) or its span features are not split per head "
            f"(span_partitions {model.span_partitions}, {layer.num_heads} heads): no slice of "
            "the span vector belongs to one head"
        )
    return layer


def correct_constituent_slices(
    model: Any,
    instances: Sequence[Any],
    batch_size: int = 32,
    analysis: Optional[HeadLabelAnalysis] = None,
    progress: Optional[Callable[[int], None]] = None,
) -> Iterator[Tuple[List[Tuple[int, int, int, str]], torch.Tensor]]:
    """
    Parses `instances` (of the model's dataset reader, each with its gold tree in
    `metadata["gold_tree"]`) `batch_size` at a time, and yields per batch its correct
    constituents `(sentence, start, end, label)` (`sentence` the position in `instances`;
    `correct_constituents`) with each head's slice of their span vectors, a tensor
    `(num_correct, num_heads, d)` (`explanations.head_slices`). A batch that fails is parsed
    again one sentence at a time, so that only the failing sentences are lost. With
    `analysis`, its counts (`sentences`, `failures`, `predicted`, `gold`, `correct`,
    `metrics`) are filled in; `progress`, if given, is called with the size of each batch.
    """
    layer = explainable_layer(model)
    if analysis is None:
        analysis = HeadLabelAnalysis(matrices={}, exact=contributions_are_exact(layer))
    analysis.sentences = len(instances)
    # Similar lengths together: less padding, the same sums.
    order = sorted(range(len(instances)), key=lambda k: len(instances[k]["tokens"]))
    encoded: List[torch.Tensor] = []
    # The encoder's output over [START] words [STOP] (no dropout in eval mode), which the
    # model turns into its fenceposts: the span vectors it scores.
    handle = model.encoder.register_forward_hook(
        lambda module, inputs, output: encoded.append(output)
    )
    model.eval()
    model.get_metrics(reset=True)
    try:
        with torch.no_grad():
            for start in range(0, len(order), batch_size):
                batch = order[start : start + batch_size]
                for positions, outputs in _parse(model, instances, batch, encoded, analysis):
                    found = _correct(instances, positions, outputs, analysis)
                    if found:
                        yield found, _slices(model, layer.num_heads, encoded[-1], positions, found)
                if progress is not None:
                    progress(len(batch))
    finally:
        handle.remove()
    analysis.metrics = model.get_metrics(reset=True)


def head_label_analysis(
    model: Any,
    instances: Sequence[Any],
    measures: Sequence[str] = CONTRIBUTION_MEASURES,
    batch_size: int = 32,
    progress: Optional[Callable[[int], None]] = None,
) -> HeadLabelAnalysis:
    """
    The head x label matrix of each of `measures` over `instances`: the contributions of the
    heads to the correct constituents of every batch (`correct_constituent_slices`), one
    measure over the whole batch at a time, summed per label.
    """
    for measure in measures:
        if measure not in CONTRIBUTION_MEASURES:
            raise ValueError(f"unknown measure {measure!r}: use {', '.join(CONTRIBUTION_MEASURES)}")
    layer = explainable_layer(model)
    analysis = HeadLabelAnalysis(matrices={}, exact=contributions_are_exact(layer))
    accumulators = {measure: HeadLabelAccumulator(layer.num_heads) for measure in measures}
    for constituents, slices in correct_constituent_slices(
        model, instances, batch_size, analysis, progress
    ):
        labels = [label for _, _, _, label in constituents]
        slices = slices.double()
        for measure, accumulator in accumulators.items():
            accumulator.add(contribution_measure(slices, measure), labels)
    analysis.matrices = {m: accumulators[m].result(m) for m in measures}
    return analysis


def _parse(
    model: Any,
    instances: Sequence[Any],
    batch: List[int],
    encoded: List[torch.Tensor],
    analysis: HeadLabelAnalysis,
) -> Iterator[Tuple[List[int], List[Dict[str, Any]]]]:
    """The model's outputs on the batch, or sentence by sentence if the batch fails; after
    each yield `encoded[-1]` is the encoder output of the sentences yielded."""
    try:
        encoded.clear()
        outputs = model.forward_on_instances([instances[k] for k in batch])
    except (RuntimeError, ValueError, IndexError):
        for k in batch:
            try:
                encoded.clear()
                outputs = model.forward_on_instances([instances[k]])
            except (RuntimeError, ValueError, IndexError) as error:
                problem = " ".join(str(error).split())
                analysis.failures.append(f"sentence {k}: {problem}")
                continue
            yield [k], outputs
        return
    yield batch, outputs


def _correct(
    instances: Sequence[Any],
    positions: List[int],
    outputs: List[Dict[str, Any]],
    analysis: HeadLabelAnalysis,
) -> List[Tuple[int, int, int, str]]:
    """The correct constituents `(sentence, start, end, label)` of one parsed batch."""
    found = []
    for k, output in zip(positions, outputs):
        gold_tree = instances[k]["metadata"].metadata.get("gold_tree")
        if gold_tree is None:
            raise ValueError(f"sentence {k} has no gold tree: head contributions need a treebank")
        gold = tree_to_spans(gold_tree)[2]
        predicted = output["labelled_spans"]
        analysis.gold += sum(len(expand_label(label)) for _, _, label in gold)
        analysis.predicted += sum(len(expand_label(label)) for _, _, label in predicted)
        found += [
            (k, start, end, label) for start, end, label in correct_constituents(predicted, gold)
        ]
    analysis.correct += len(found)
    return found


def _slices(
    model: Any,
    num_heads: int,
    encoded: torch.Tensor,
    positions: List[int],
    constituents: List[Tuple[int, int, int, str]],
) -> torch.Tensor:
    """The head slices `(len(constituents), num_heads, d)` of the constituents' span vectors;
    `encoded` is the encoder output of the sentences `positions`, in that order."""
    row = {k: b for b, k in enumerate(positions)}
    # shape (num_correct, 3): row of the batch, start fencepost, end fencepost
    index = torch.tensor(
        [(row[k], start, end) for k, start, end, _ in constituents],
        dtype=torch.long,
        device=encoded.device,
    )
    # shape (batch_size, max_length + 1, num_heads * d)
    fenceposts = fencepost_features(encoded, model.span_partitions)
    # shape (num_correct, num_heads, d)
    return head_slices(fenceposts, index[:, 0], index[:, 1], index[:, 2], num_heads)


def _head(h: int) -> str:
    return f"head {h + 1}"


def summary_markdown(
    analysis: HeadLabelAnalysis, min_count: int = DEFAULT_MIN_COUNT, source: str = ""
) -> str:
    """`head_label.md`: per measure, the top 3 heads of each label with at least `min_count`
    correct constituents (vs the uniform `1 / num_heads`), and per head the label where it
    contributes most relative to its own mean."""
    lines = ["# Head contributions by label", ""]
    if source:
        lines += [source, ""]
    f1 = analysis.metrics.get("evalb_f1")
    left_out = int(analysis.metrics.get("evalb_left_out", 0))
    evalb = ""
    if f1 is not None:
        evalb = f" (EVALB F1 {100 * f1:.2f}" + (
            f", {left_out} sentences left out by EVALB)" if left_out else ")"
        )
    parsed = analysis.sentences - len(analysis.failures)
    lines.append(
        f"{analysis.sentences} sentences, {parsed} parsed{evalb}"
        + f"; {analysis.correct} correct constituents of {analysis.predicted} predicted and "
        f"{analysis.gold} gold (unary chains such as S+VP split into their labels, each label "
        "counted with the span's contributions)."
    )
    lines.append("")
    if analysis.exact:
        lines.append(
            "Contributions are **exact**: the label attention layer has no position-wise "
            "feed-forward layer, so each slice of a span vector comes from one head."
        )
    else:
        lines.append(
            "**Warning**: this model's label attention layer has a position-wise feed-forward "
            "layer (PFL), which mixes the heads: the contributions are an approximation "
            "(exact only without the PFL, Mrini et al. 2020, sec. 2)."
        )
    for failure in analysis.failures[:10]:
        lines.append(f"- not parsed: {failure}")
    for measure, matrix in analysis.matrices.items():
        uniform = 1.0 / matrix.num_heads
        lines += ["", f"## Measure: {measure}", "", MEASURE_DESCRIPTIONS[measure] + ".", ""]
        lines.append(
            f"A row of means sums to 1 over the {matrix.num_heads} heads; a head without "
            f"preference gets the uniform {uniform:.4f}. `x` is the mean over the uniform."
        )
        frequent = [
            label for label, count in zip(matrix.labels, matrix.counts) if count >= min_count
        ]
        lines += [
            "",
            f"### Top heads per label (labels with at least {min_count} correct constituents)",
            "",
        ]
        if not frequent:
            lines.append(f"(no label has {min_count} correct constituents; lower --min-count)")
        else:
            lines += [
                "| label | correct | 1st head | 2nd head | 3rd head |",
                "|---|---:|---|---|---|",
            ]
            for label in frequent:
                cells = [
                    f"{_head(h)}: {mean:.4f} ({mean / uniform:.2f}x)"
                    for h, mean in matrix.top_heads(label, 3)
                ]
                count = int(matrix.counts[matrix.labels.index(label)])
                lines.append(f"| {label} | {count} | " + " | ".join(cells) + " |")
        lines += [
            "",
            "### Where each head contributes most, relative to its own mean",
            "",
        ]
        special = matrix.specialisation(min_count)
        if not special:
            lines.append(f"(no label has {min_count} correct constituents; lower --min-count)")
        else:
            lines += [
                "| head | mean over all | label | mean on it | x its mean |",
                "|---|---:|---|---:|---:|",
            ]
            for h, label, mean, ratio in sorted(special, key=lambda s: (-s[3], s[0])):
                lines.append(
                    f"| {_head(h)} | {matrix.head_means[h]:.4f} | {label} | {mean:.4f} | "
                    f"{ratio:.2f} |"
                )
    return "\n".join(lines) + "\n"


def write_head_label_outputs(
    analysis: HeadLabelAnalysis,
    directory: str,
    min_count: int = DEFAULT_MIN_COUNT,
    source: str = "",
) -> List[str]:
    """Writes the CSV and PNG of each measure (`head_label.csv`, `head_label.png` for one
    measure; `head_label_average.csv` ... for several) and `head_label.md` into `directory`
    (made if missing); returns the paths written."""
    os.makedirs(directory, exist_ok=True)
    paths = []
    several = len(analysis.matrices) > 1
    for measure, matrix in analysis.matrices.items():
        stem = os.path.join(directory, f"head_label_{measure}" if several else "head_label")
        matrix.write_csv(stem + ".csv")
        note = "exact" if analysis.exact else "approximate: the model has a PFL"
        matrix.write_png(
            stem + ".png",
            title=f"Mean head contributions to correct constituents\n({measure}; {note})",
            min_count=min_count,
        )
        paths += [stem + ".csv", stem + ".png"]
    summary = os.path.join(directory, "head_label.md")
    with open(summary, "w", encoding="utf-8") as out:
        out.write(summary_markdown(analysis, min_count, source))
    paths.append(summary)
    return paths


def read_head_label_csv(path: str) -> Tuple[List[str], List[int], numpy.ndarray]:
    """The labels, counts and means `(num_labels, num_heads)` of a `write_csv` file."""
    with open(path, encoding="utf-8", newline="") as lines:
        rows = list(csv.reader(lines))
    labels = [row[0] for row in rows[1:]]
    counts = [int(row[1]) for row in rows[1:]]
    means = numpy.array([[float(value) for value in row[2:]] for row in rows[1:]], dtype=float)
    return labels, counts, means.reshape(len(labels), len(rows[0]) - 2)
