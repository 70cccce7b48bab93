"""
Error analysis of a constituency parser's predictions on a treebank, and of a joint parser's
dependencies, in the spirit of the error analysis of Mrini et al. (2020, sec. 5, "show pathways
to analyze errors") and of Kummerfeld et al. (2012): where the labelled F1 is lost.

Brackets are read and scored exactly as `lal_allennlp.metrics.evalb` scores them with the
given parameters (COLLINS.prm by default): the same words are deleted (punctuation, `-NONE-`),
labels are cleaned the same way (`NP-SBJ-1` -> `NP`), `TOP` is not scored, `ADVP` and `PRT`
are equal, and each gold bracket, in pre-order, takes the first unmatched predicted bracket
with its span and an equal label. So the matched, gold and predicted totals here are EVALB's,
and the per-label, per-span-length and per-sentence-length counts add up to them. As in the
package's EVALB, a predicted tree that is `None` (a parser failure) counts as predicting no
bracket; error sentences (different words) and skipped ones (no word left after deletion)
are counted in the summary and left out of the bracket figures (not of the dependency figures,
which compare heads word by word with the gold words); unlike the C program the analysis never
gives up after `max_error` error sentences.

What is computed (`analyze_errors`, or `analyze_predictions` over the records of
`lal_allennlp.analysis.predictions`):

- labelled precision, recall and F1 per (cleaned) label, with gold, predicted and matched
  counts; labels that EVALB's `equivalent_labels` make equal are one row, named by joining
  them with `/` (`ADVP/PRT` with COLLINS.prm), so that a match always falls in one row;
- F1 by span length, in words that EVALB keeps (punctuation deleted), in the buckets
  `SPAN_LENGTH_BUCKETS`: 1 (a constituent over one word, such as `(NP (PRP it))`; the
  preterminals themselves are never brackets), 2, 3, 4-5, 6-10, 11-20, 21+;
- F1 by sentence length (EVALB's length: the gold words that are not `-NONE-`, punctuation
  included, as for its 40-word cut-off) in `SENTENCE_LENGTH_BUCKETS`: 1-10 ... 41+;
- label confusions: an unmatched gold bracket and an unmatched predicted bracket over the same
  span (paired in pre-order), counted as `gold label -> predicted label`; the unmatched gold
  brackets left over are *missing* (no predicted bracket over that span is left), the
  unmatched predicted ones left over are *extra*;
- with gold and predicted heads (joint models): UAS and LAS over the scored words (`scored`,
  False for punctuation; by default the words whose gold tag is not in
  `metrics.attachment_scores.PTB_PUNCTUATION_TAGS`), by gold dependency label, by the
  dependent's gold POS tag and by the distance to the gold head (`HEAD_DISTANCE_BUCKETS`, and
  `root` for the words whose gold head is the root); the most frequent wrong heads as
  `dependent tag, gold head tag -> predicted head tag` (`ROOT` for the root), and the most
  frequent label errors on a correct head. A sentence without predicted heads (a failure)
  counts all its scored words as wrong.

`ErrorAnalysis` holds the numbers and writes them: `to_json`, `to_markdown` (tables) and
`write_plots` (F1 by span length, by sentence length, per label).
"""
from collections import Counter
from dataclasses import dataclass, field
import os
from typing import Any, Dict, List, Optional, Sequence, Tuple

from nltk import Tree

from lal_allennlp.metrics.attachment_scores import PTB_PUNCTUATION_TAGS
from lal_allennlp.metrics.evalb import (
    COLLINS,
    EvalbCounts,
    EvalbParams,
    EvalbResult,
    _Bracket,
    _is_failure,
    _ratio,
    _read_tree,
    _scored_brackets,
    _sentence_counts,
)

Bucket = Tuple[int, Optional[int]]

SPAN_LENGTH_BUCKETS: Tuple[Bucket, ...] = (
    (1, 1),
    (2, 2),
    (3, 3),
    (4, 5),
    (6, 10),
    (11, 20),
    (21, None),
)
"""Span lengths in EVALB words (inclusive ranges; `None`: no upper bound)."""
SENTENCE_LENGTH_BUCKETS: Tuple[Bucket, ...] = ((1, 10), (11, 20), (21, 30), (31, 40), (41, None))
"""Sentence lengths in EVALB's gold length (inclusive ranges)."""
HEAD_DISTANCE_BUCKETS: Tuple[Bucket, ...] = ((1, 1), (2, 2), (3, 5), (6, 10), (11, None))
"""`|dependent - gold head|` in words; words whose gold head is the root are the `root` row."""
ROOT = "ROOT"
"""The tag of the root in the wrong-head cases."""
EMPTY_LABEL = "(empty)"
"""How a bracket whose cleaned label is empty (EVALB's `-X-` or a bare root) is shown."""
_MAX_GROUP_ROWS = 40
"""Rows of the report's attachment tables by label and by tag (all of them in the JSON)."""


def bucket_name(bucket: Bucket) -> str:
    """`(4, 5)` -> `"4-5"`, `(2, 2)` -> `"2"`, `(21, None)` -> `"21+"`."""
    low, high = bucket
    if high is None:
        return f"{low}+"
    return str(low) if low == high else f"{low}-{high}"


def bucket_index(value: int, buckets: Sequence[Bucket]) -> Optional[int]:
    """The index of the bucket holding `value`, or `None` if none does (such as 0)."""
    for index, (low, high) in enumerate(buckets):
        if value >= low and (high is None or value <= high):
            return index
    return None


@dataclass
class BracketCounts:
    """
    Brackets of one label or bucket.

    # Parameters

    gold : `int`
        Scored gold brackets.
    predicted : `int`
        Scored predicted brackets.
    matched : `int`
        Gold brackets matched by a predicted one (a match pairs two brackets of the same span,
        so of the same length and, with `by_label`, of the same row).
    """

    gold: int = 0
    predicted: int = 0
    matched: int = 0

    @property
    def precision(self) -> float:
        return _ratio(self.matched, self.predicted)

    @property
    def recall(self) -> float:
        return _ratio(self.matched, self.gold)

    @property
    def f1(self) -> float:
        """`2 m / (g + p)`, 0 without brackets."""
        return _ratio(2 * self.matched, self.gold + self.predicted)

    def to_json(self) -> Dict[str, Any]:
        return {
            "gold": self.gold,
            "predicted": self.predicted,
            "matched": self.matched,
            "precision": self.precision,
            "recall": self.recall,
            "f1": self.f1,
        }


@dataclass
class AttachmentCounts:
    """Scored words of one group, with a correct head (UAS) and also a correct label (LAS)."""

    words: int = 0
    correct_heads: int = 0
    correct_labelled: int = 0

    @property
    def uas(self) -> float:
        return _ratio(self.correct_heads, self.words)

    @property
    def las(self) -> float:
        return _ratio(self.correct_labelled, self.words)

    def add(self, head_correct: bool, label_correct: bool) -> None:
        self.words += 1
        self.correct_heads += int(head_correct)
        self.correct_labelled += int(head_correct and label_correct)

    def to_json(self) -> Dict[str, Any]:
        return {
            "words": self.words,
            "correct_heads": self.correct_heads,
            "correct_labelled": self.correct_labelled,
            "uas": self.uas,
            "las": self.las,
        }


@dataclass
class AttachmentAnalysis:
    """
    Dependency errors of a joint model (see the module docstring).

    # Parameters

    total : `AttachmentCounts`
    by_label : `Dict[str, AttachmentCounts]`
        By gold dependency label.
    by_tag : `Dict[str, AttachmentCounts]`
        By the dependent's gold POS tag.
    by_distance : `Dict[str, AttachmentCounts]`
        By `bucket_name` of the gold head distance, and `root`.
    wrong_heads : `Counter`
        `(dependent tag, gold head tag, predicted head tag)` -> words.
    label_errors : `Counter`
        `(gold label, predicted label)` -> words with a correct head and a wrong label.
    failed_sentences : `int`
        Sentences with gold heads but no predicted heads.
    """

    total: AttachmentCounts = field(default_factory=AttachmentCounts)
    by_label: Dict[str, AttachmentCounts] = field(default_factory=dict)
    by_tag: Dict[str, AttachmentCounts] = field(default_factory=dict)
    by_distance: Dict[str, AttachmentCounts] = field(default_factory=dict)
    wrong_heads: Counter = field(default_factory=Counter)
    label_errors: Counter = field(default_factory=Counter)
    failed_sentences: int = 0


@dataclass
class ErrorAnalysis:
    """
    The numbers of `analyze_errors`.

    # Parameters

    evalb : `EvalbResult`
        The EVALB summary over all sentences (equal to `evalb_score` on the same pairs).
    failures : `int`
        Sentences without a predicted tree (scored as predicting no bracket).
    by_label : `Dict[str, BracketCounts]`
        By cleaned label (`EMPTY_LABEL` for an empty one; equivalent labels joined, see
        `label_classes`).
    by_span_length : `List[BracketCounts]`
        One per `SPAN_LENGTH_BUCKETS`.
    by_sentence_length : `List[BracketCounts]`
        One per `SENTENCE_LENGTH_BUCKETS`.
    sentences_by_length : `List[int]`
        Valid sentences per `SENTENCE_LENGTH_BUCKETS`.
    confusions : `Counter`
        `(gold label, predicted label)` -> brackets with the right span and the wrong label.
    missing : `Counter`
        Label -> unmatched gold brackets whose span no unmatched predicted bracket has.
    extra : `Counter`
        Label -> unmatched predicted brackets whose span no unmatched gold bracket has.
    attachment : `Optional[AttachmentAnalysis]`
        With gold heads.
    top : `int`
        How many rows the lists of the report show.
    """

    evalb: EvalbResult
    failures: int
    by_label: Dict[str, BracketCounts]
    by_span_length: List[BracketCounts]
    by_sentence_length: List[BracketCounts]
    sentences_by_length: List[int]
    confusions: Counter
    missing: Counter
    extra: Counter
    attachment: Optional[AttachmentAnalysis] = None
    top: int = 15

    def labels_by_frequency(self) -> List[str]:
        """The labels, most frequent in the gold trees first (then in the predictions)."""
        return sorted(
            self.by_label,
            key=lambda label: (-self.by_label[label].gold, -self.by_label[label].predicted, label),
        )

    def to_json(self) -> Dict[str, Any]:
        """All the numbers as plain JSON (fractions in [0, 1]); lists of cases complete, most
        frequent first."""
        counts = self.evalb.counts
        result: Dict[str, Any] = {
            "summary": {
                "sentences": self.evalb.sentences,
                "valid_sentences": self.evalb.valid_sentences,
                "error_sentences": self.evalb.errors,
                "skipped_sentences": self.evalb.skipped,
                "failures": self.failures,
                "gold": counts.gold,
                "predicted": counts.predicted,
                "matched": counts.matched,
                "precision": self.evalb.precision,
                "recall": self.evalb.recall,
                "f1": self.evalb.f1,
                "complete_match": self.evalb.complete_match,
                "tagging_accuracy": self.evalb.tagging_accuracy,
            },
            "by_label": {
                label: self.by_label[label].to_json() for label in self.labels_by_frequency()
            },
            "by_span_length": [
                {"span_length": bucket_name(bucket), **row.to_json()}
                for bucket, row in zip(SPAN_LENGTH_BUCKETS, self.by_span_length)
            ],
            "by_sentence_length": [
                {"sentence_length": bucket_name(bucket), "sentences": sentences, **row.to_json()}
                for bucket, sentences, row in zip(
                    SENTENCE_LENGTH_BUCKETS, self.sentences_by_length, self.by_sentence_length
                )
            ],
            "confusions": [
                {"gold": gold, "predicted": predicted, "count": count}
                for (gold, predicted), count in _most_common(self.confusions)
            ],
            "missing": [{"label": k, "count": n} for k, n in _most_common(self.missing)],
            "extra": [{"label": k, "count": n} for k, n in _most_common(self.extra)],
        }
        if self.attachment is not None:
            attachment = self.attachment
            result["attachment"] = {
                "total": attachment.total.to_json(),
                "failed_sentences": attachment.failed_sentences,
                "by_label": _group_json(attachment.by_label),
                "by_tag": _group_json(attachment.by_tag),
                "by_distance": {
                    name: attachment.by_distance[name].to_json()
                    for name in _distance_names()
                    if name in attachment.by_distance
                },
                "wrong_heads": [
                    {"dependent": d, "gold_head": g, "predicted_head": p, "count": n}
                    for (d, g, p), n in _most_common(attachment.wrong_heads)
                ],
                "label_errors": [
                    {"gold": g, "predicted": p, "count": n}
                    for (g, p), n in _most_common(attachment.label_errors)
                ],
            }
        return result

    def to_markdown(self, title: str = "Error analysis") -> str:
        """The report: summary, then one table per view (the lists cut at `top` rows)."""
        evalb, counts = self.evalb, self.evalb.counts
        lines = [f"# {title}", ""]
        lines.append(
            f"{evalb.sentences} sentences: {evalb.valid_sentences} scored ({self.failures} of "
            "them without a tree, scored as predicting no bracket); "
            f"{evalb.errors} error sentences (different words) and {evalb.skipped} skipped (no "
            "word left after deletion), left out of the bracket figures. Brackets as EVALB scores "
            "them (punctuation deleted, labels cleaned, TOP not scored)."
        )
        lines.append("")
        lines.append(
            f"Labelled F1 **{100 * evalb.f1:.2f}** (precision {100 * evalb.precision:.2f}, "
            f"recall {100 * evalb.recall:.2f}; {counts.matched} matched of {counts.gold} gold "
            f"and {counts.predicted} predicted brackets); complete match "
            f"{100 * evalb.complete_match:.2f}, tagging accuracy "
            f"{100 * evalb.tagging_accuracy:.2f}."
        )
        lines += ["", "## F1 by label", ""]
        lines += _bracket_table(
            "label", [(label, self.by_label[label]) for label in self.labels_by_frequency()]
        )
        lines += ["", "## F1 by span length (words, punctuation deleted)", ""]
        lines += _bracket_table(
            "span length",
            [(bucket_name(b), row) for b, row in zip(SPAN_LENGTH_BUCKETS, self.by_span_length)],
        )
        lines += ["", "## F1 by sentence length (gold words)", ""]
        lines += _bracket_table(
            "sentence length",
            [
                (bucket_name(b), row)
                for b, row in zip(SENTENCE_LENGTH_BUCKETS, self.by_sentence_length)
            ],
            sentences=self.sentences_by_length,
        )
        lines += ["", f"## Label confusions (right span, wrong label; top {self.top})", ""]
        lines += _count_table(
            ("gold label", "predicted label"), _most_common(self.confusions, self.top)
        )
        lines += [
            "",
            f"## Missing brackets (no predicted bracket over the span; top {self.top})",
            "",
        ]
        lines += _count_table(("gold label",), _most_common(self.missing, self.top))
        lines += ["", f"## Extra brackets (no gold bracket over the span; top {self.top})", ""]
        lines += _count_table(("predicted label",), _most_common(self.extra, self.top))
        if self.attachment is not None:
            lines += ["", *_attachment_markdown(self.attachment, self.top)]
        return "\n".join(lines) + "\n"

    def write_plots(self, directory: str) -> List[str]:
        """`errors_span_length.png`, `errors_sentence_length.png` and `errors_labels.png` in
        `directory`; returns their paths."""
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        paths = []
        for name, title, xlabel, buckets, rows in (
            (
                "errors_span_length.png",
                "Labelled F1 by span length",
                "span length (words, punctuation deleted)",
                SPAN_LENGTH_BUCKETS,
                self.by_span_length,
            ),
            (
                "errors_sentence_length.png",
                "Labelled F1 by sentence length",
                "sentence length (gold words)",
                SENTENCE_LENGTH_BUCKETS,
                self.by_sentence_length,
            ),
        ):
            figure, axes = plt.subplots(figsize=(7, 4))
            names = [bucket_name(bucket) for bucket in buckets]
            positions = range(len(names))
            bars = axes.bar(positions, [100 * row.f1 for row in rows], color="#4c72b0", label="F1")
            # Precision and recall where they are defined (no marker over an empty bucket).
            nan = float("nan")
            precision = [100 * row.precision if row.predicted else nan for row in rows]
            recall = [100 * row.recall if row.gold else nan for row in rows]
            axes.plot(positions, precision, "o--", color="#dd8452", label="precision")
            axes.plot(positions, recall, "s:", color="#55a868", label="recall")
            for bar, row in zip(bars, rows):
                axes.annotate(
                    f"n={row.gold}",
                    (bar.get_x() + bar.get_width() / 2, 1),
                    ha="center",
                    va="bottom",
                    fontsize=8,
                    color="white" if row.f1 > 0.1 else "black",
                )
            axes.set_xticks(list(positions), names)
            axes.set_ylim(0, 118)
            axes.set_xlabel(xlabel)
            axes.set_ylabel("F1 (%); n = gold brackets")
            axes.set_title(title)
            axes.legend(loc="upper left", fontsize=8, ncol=3)
            figure.tight_layout()
            path = os.path.join(directory, name)
            figure.savefig(path, dpi=110)
            plt.close(figure)
            paths.append(path)

        labels = [label for label in self.labels_by_frequency() if self.by_label[label].gold][:40]
        figure, axes = plt.subplots(figsize=(7, max(2.5, 0.28 * len(labels) + 1.2)))
        scores = [100 * self.by_label[label].f1 for label in labels]
        axes.barh(range(len(labels)), scores, color="#55a868")
        axes.set_yticks(
            range(len(labels)),
            [f"{label} ({self.by_label[label].gold})" for label in labels],
            fontsize=8,
        )
        axes.invert_yaxis()
        axes.set_xlim(0, 100)
        axes.set_xlabel("labelled F1 (%)")
        axes.set_title("F1 per label (gold brackets in brackets), most frequent first")
        figure.tight_layout()
        path = os.path.join(directory, "errors_labels.png")
        figure.savefig(path, dpi=110)
        plt.close(figure)
        paths.append(path)
        return paths


def _most_common(counter: Counter, top: Optional[int] = None) -> List[Tuple[Any, int]]:
    """Most frequent first, ties in key order (so that reports do not depend on input order)."""
    ranked = sorted(counter.items(), key=lambda item: (-item[1], item[0]))
    return ranked if top is None else ranked[:top]


def _distance_names() -> List[str]:
    return ["root"] + [bucket_name(bucket) for bucket in HEAD_DISTANCE_BUCKETS]


def _group_json(groups: Dict[str, AttachmentCounts]) -> Dict[str, Any]:
    ordered = sorted(groups, key=lambda name: (-groups[name].words, name))
    return {name: groups[name].to_json() for name in ordered}


def _percent(value: float) -> str:
    return f"{100 * value:.2f}"


def _bracket_table(
    key: str, rows: Sequence[Tuple[str, BracketCounts]], sentences: Optional[List[int]] = None
) -> List[str]:
    head = f"| {key} |" + (" sentences |" if sentences is not None else "")
    lines = [
        head + " gold | predicted | matched | precision | recall | F1 |",
        "|---|" + ("---:|" if sentences is not None else "") + "---:|---:|---:|---:|---:|---:|",
    ]
    for index, (name, row) in enumerate(rows):
        extra = f" {sentences[index]} |" if sentences is not None else ""
        lines.append(
            f"| {name} |{extra} {row.gold} | {row.predicted} | {row.matched} | "
            f"{_percent(row.precision)} | {_percent(row.recall)} | {_percent(row.f1)} |"
        )
    return lines


def _count_table(keys: Tuple[str, ...], rows: List[Tuple[Any, int]]) -> List[str]:
    if not rows:
        return ["(none)"]
    lines = ["| " + " | ".join(keys) + " | count |", "|" + "---|" * len(keys) + "---:|"]
    for key, count in rows:
        parts = key if isinstance(key, tuple) else (key,)
        lines.append("| " + " | ".join(parts) + f" | {count} |")
    return lines


def _attachment_markdown(attachment: AttachmentAnalysis, top: int) -> List[str]:
    total = attachment.total
    lines = [
        "## Dependencies",
        "",
        f"UAS **{_percent(total.uas)}**, LAS **{_percent(total.las)}** over {total.words} scored "
        f"words (punctuation left out; {attachment.failed_sentences} sentences without "
        "predicted heads count as wrong).",
    ]

    def table(key: str, groups: Dict[str, AttachmentCounts], names: Sequence[str]) -> List[str]:
        rows = [f"| {key} | words | UAS | LAS |", "|---|---:|---:|---:|"]
        for name in names:
            group = groups[name]
            rows.append(
                f"| {name} | {group.words} | {_percent(group.uas)} | {_percent(group.las)} |"
            )
        return rows

    def by_size(groups: Dict[str, AttachmentCounts]) -> List[str]:
        return sorted(groups, key=lambda name: (-groups[name].words, name))[:_MAX_GROUP_ROWS]

    def more(groups: Dict[str, AttachmentCounts]) -> List[str]:
        left = len(groups) - _MAX_GROUP_ROWS
        return ["", f"({left} less frequent ones in errors.json)"] if left > 0 else []

    lines += ["", "### By gold dependency label", ""]
    lines += table("label", attachment.by_label, by_size(attachment.by_label))
    lines += more(attachment.by_label)
    lines += ["", "### By the dependent's gold POS tag", ""]
    lines += table("tag", attachment.by_tag, by_size(attachment.by_tag))
    lines += more(attachment.by_tag)
    lines += ["", "### By the distance to the gold head (words)", ""]
    names = [name for name in _distance_names() if name in attachment.by_distance]
    lines += table("distance", attachment.by_distance, names)
    lines += ["", f"### Wrong heads (top {top})", ""]
    lines += _count_table(
        ("dependent tag", "gold head tag", "predicted head tag"),
        _most_common(attachment.wrong_heads, top),
    )
    lines += ["", f"### Wrong labels on a correct head (top {top})", ""]
    lines += _count_table(
        ("gold label", "predicted label"), _most_common(attachment.label_errors, top)
    )
    return lines


def label_classes(params: EvalbParams) -> Dict[str, str]:
    """The row name of each label that `params.equivalent_labels` makes equal to another: the
    labels of its class (pairs chained together) sorted and joined by `/`
    (`{"ADVP": "ADVP/PRT", "PRT": "ADVP/PRT"}` for COLLINS.prm)."""
    classes: List[set] = []
    for first, second in params.equivalent_labels:
        joined = {first, second}
        for existing in [c for c in classes if c & joined]:
            joined |= existing
            classes.remove(existing)
        classes.append(joined)
    return {label: "/".join(sorted(c)) for c in classes for label in c}


def _row_name(label: str, classes: Dict[str, str]) -> str:
    return classes.get(label, label) or EMPTY_LABEL


def _match(
    gold: List[_Bracket], predicted: List[_Bracket], params: EvalbParams
) -> Tuple[List[Optional[int]], List[bool]]:
    """EVALB's matching (`calc_result`): each gold bracket in pre-order takes the first
    unmatched predicted bracket with the same span and an equal label. Returns, per gold
    bracket, the index of its predicted bracket (or `None`), and per predicted bracket
    whether it was taken."""
    by_span: Dict[Tuple[int, int], List[int]] = {}
    for index, bracket in enumerate(predicted):
        by_span.setdefault((bracket.start, bracket.end), []).append(index)
    used = [False] * len(predicted)
    partner: List[Optional[int]] = []
    for bracket in gold:
        found = None
        for index in by_span.get((bracket.start, bracket.end), ()):
            if not used[index] and (
                not params.labeled or params.labels_equal(bracket.label, predicted[index].label)
            ):
                used[index] = True
                found = index
                break
        partner.append(found)
    return partner, used


def _add_attachment(
    attachment: AttachmentAnalysis,
    number: int,
    tags: List[str],
    gold_heads: Sequence[int],
    predicted_heads: Optional[Sequence[int]],
    gold_labels: Optional[Sequence[str]],
    predicted_labels: Optional[Sequence[str]],
    scored: Optional[Sequence[bool]],
) -> None:
    """Adds one sentence's dependencies (heads 1-based, 0 the root; `tags` the gold tags)."""
    length = len(tags)
    for name, values in (
        ("gold heads", gold_heads),
        ("predicted heads", predicted_heads),
        ("gold dependency labels", gold_labels),
        ("predicted dependency labels", predicted_labels),
        ("scored", scored),
    ):
        if values is not None and len(values) != length:
            raise ValueError(
                f"sentence {number}: {len(values)} {name} for the {length} words of its gold tree"
            )
    if scored is None:
        scored = [tag not in PTB_PUNCTUATION_TAGS for tag in tags]
    if predicted_heads is None:
        attachment.failed_sentences += 1
    for word in range(length):
        if not scored[word]:
            continue
        gold_head = int(gold_heads[word])
        gold_label = gold_labels[word] if gold_labels is not None else "_"
        if predicted_heads is None:
            head_correct = label_correct = False
        else:
            predicted_head = int(predicted_heads[word])
            head_correct = predicted_head == gold_head
            label_correct = (
                gold_labels is not None
                and predicted_labels is not None
                and predicted_labels[word] == gold_labels[word]
            )
            if not head_correct:
                attachment.wrong_heads[
                    (
                        tags[word],
                        ROOT if gold_head == 0 else tags[gold_head - 1],
                        ROOT if predicted_head == 0 else tags[predicted_head - 1],
                    )
                ] += 1
            elif not label_correct and predicted_labels is not None:
                attachment.label_errors[(gold_label, predicted_labels[word])] += 1
        if gold_head == 0:
            distance = "root"
        else:
            index = bucket_index(abs(gold_head - (word + 1)), HEAD_DISTANCE_BUCKETS)
            distance = bucket_name(HEAD_DISTANCE_BUCKETS[index or 0])
        for groups, key in (
            (attachment.by_label, gold_label),
            (attachment.by_tag, tags[word]),
            (attachment.by_distance, distance),
        ):
            groups.setdefault(key, AttachmentCounts()).add(head_correct, label_correct)
        attachment.total.add(head_correct, label_correct)


def analyze_errors(
    gold_trees: Sequence[Tree],
    predicted_trees: Sequence[Optional[Tree]],
    gold_heads: Optional[Sequence[Optional[Sequence[int]]]] = None,
    predicted_heads: Optional[Sequence[Optional[Sequence[int]]]] = None,
    gold_dependency_labels: Optional[Sequence[Optional[Sequence[str]]]] = None,
    predicted_dependency_labels: Optional[Sequence[Optional[Sequence[str]]]] = None,
    scored: Optional[Sequence[Optional[Sequence[bool]]]] = None,
    params: EvalbParams = COLLINS,
    top: int = 15,
) -> ErrorAnalysis:
    """
    The error analysis of `predicted_trees` against `gold_trees` (same order and number; `None`
    for a sentence the parser failed on), see the module docstring.

    # Parameters

    gold_trees : `Sequence[Tree]`
    predicted_trees : `Sequence[Optional[Tree]]`
    gold_heads, predicted_heads : `Sequence[Optional[Sequence[int]]]`, optional
        Per sentence, per word of its gold tree, the 1-based head (0: the root); a sentence's
        entry may be `None` (no gold heads: not in the dependency figures; no predicted heads:
        all its scored words wrong). Without `gold_heads` there are no dependency figures.
    gold_dependency_labels, predicted_dependency_labels : `Sequence[Optional[Sequence[str]]]`
        Optional: per sentence, per word, the label of the arc to its head (for LAS).
    scored : `Sequence[Optional[Sequence[bool]]]`, optional
        Per sentence, per word, whether UAS/LAS count it (False for punctuation); by default
        the words whose gold tag is not in `PTB_PUNCTUATION_TAGS`.
    params : `EvalbParams`, optional (default = `COLLINS`)
    top : `int`, optional (default = `15`)
        How many rows the report's lists of cases show.
    """
    if len(gold_trees) != len(predicted_trees):
        raise ValueError(
            f"{len(gold_trees)} gold trees but {len(predicted_trees)} predicted trees: give one "
            "prediction per gold tree, in the same order (None for a sentence not parsed)"
        )

    def per_sentence(values: Optional[Sequence[Any]], name: str) -> List[Any]:
        if values is None:
            return [None] * len(gold_trees)
        if len(values) != len(gold_trees):
            raise ValueError(f"{len(values)} entries of {name} for {len(gold_trees)} sentences")
        return list(values)

    heads = per_sentence(gold_heads, "gold_heads")
    predicted = per_sentence(predicted_heads, "predicted_heads")
    labels = per_sentence(gold_dependency_labels, "gold_dependency_labels")
    predicted_labels = per_sentence(predicted_dependency_labels, "predicted_dependency_labels")
    scored_words = per_sentence(scored, "scored")

    total, cutoff_total = EvalbCounts(), EvalbCounts()
    counts_per_sentence: List[EvalbCounts] = []
    by_label: Dict[str, BracketCounts] = {}
    by_span = [BracketCounts() for _ in SPAN_LENGTH_BUCKETS]
    by_sentence = [BracketCounts() for _ in SENTENCE_LENGTH_BUCKETS]
    sentences_by_length = [0] * len(SENTENCE_LENGTH_BUCKETS)
    confusions: Counter = Counter()
    missing: Counter = Counter()
    extra: Counter = Counter()
    attachment = None if all(h is None for h in heads) else AttachmentAnalysis()
    classes = label_classes(params)
    failures = 0
    for number, (gold_tree, predicted_tree) in enumerate(zip(gold_trees, predicted_trees)):
        if not isinstance(gold_tree, Tree):
            raise TypeError(f"gold tree {number} is not an nltk.Tree: {gold_tree!r}")
        failed = _is_failure(predicted_tree)
        failures += int(failed)
        gold_read = _read_tree(gold_tree, params)
        test_read = None if failed else _read_tree(predicted_tree, params)
        # EVALB's counts (this also re-inserts quote terms in place, as EVALB does).
        counts = _sentence_counts(gold_read, test_read, params)
        total += counts
        if counts.within_cutoff:
            cutoff_total += counts
        counts_per_sentence.append(counts)
        # Dependencies are aligned with the gold words, whatever EVALB makes of the brackets.
        if attachment is not None and heads[number] is not None:
            _add_attachment(
                attachment,
                number,
                [tag for _, tag in gold_tree.pos()],
                heads[number],
                predicted[number],
                labels[number],
                predicted_labels[number],
                scored_words[number],
            )
        if counts.errors or counts.skipped:
            continue
        gold_brackets = _scored_brackets(gold_read, params)
        test_brackets = [] if test_read is None else _scored_brackets(test_read, params)
        partner, used = _match(gold_brackets, test_brackets, params)
        if sum(used) != counts.matched:  # the same rule as EVALB's, so never
            raise AssertionError(f"sentence {number}: matching differs from EVALB's")
        sentence_bucket = bucket_index(counts.length, SENTENCE_LENGTH_BUCKETS)
        sentence_row = by_sentence[sentence_bucket] if sentence_bucket is not None else None
        if sentence_bucket is not None:
            sentences_by_length[sentence_bucket] += 1
        for index, bracket in enumerate(gold_brackets):
            matched = partner[index] is not None
            row = by_label.setdefault(_row_name(bracket.label, classes), BracketCounts())
            span_row = by_span[bucket_index(bracket.end - bracket.start, SPAN_LENGTH_BUCKETS) or 0]
            for counted in (row, span_row, sentence_row):
                if counted is not None:
                    counted.gold += 1
                    counted.matched += int(matched)
        for bracket in test_brackets:
            row = by_label.setdefault(_row_name(bracket.label, classes), BracketCounts())
            span_row = by_span[bucket_index(bracket.end - bracket.start, SPAN_LENGTH_BUCKETS) or 0]
            for counted in (row, span_row, sentence_row):
                if counted is not None:
                    counted.predicted += 1
        # Unmatched brackets: same span -> a confusion, else missing / extra.
        unmatched_test: Dict[Tuple[int, int], List[_Bracket]] = {}
        for index, bracket in enumerate(test_brackets):
            if not used[index]:
                unmatched_test.setdefault((bracket.start, bracket.end), []).append(bracket)
        for index, bracket in enumerate(gold_brackets):
            if partner[index] is not None:
                continue
            candidates = unmatched_test.get((bracket.start, bracket.end))
            if candidates:
                confusions[
                    (_row_name(bracket.label, classes), _row_name(candidates.pop(0).label, classes))
                ] += 1
            else:
                missing[_row_name(bracket.label, classes)] += 1
        for candidates in unmatched_test.values():
            for bracket in candidates:
                extra[_row_name(bracket.label, classes)] += 1

    evalb = EvalbResult.from_counts(total, cutoff_total, params.cutoff_length, counts_per_sentence)
    return ErrorAnalysis(
        evalb=evalb,
        failures=failures,
        by_label=by_label,
        by_span_length=by_span,
        by_sentence_length=by_sentence,
        sentences_by_length=sentences_by_length,
        confusions=confusions,
        missing=missing,
        extra=extra,
        attachment=attachment,
        top=top,
    )


def analyze_predictions(
    predictions: Sequence[Any], params: EvalbParams = COLLINS, top: int = 15
) -> ErrorAnalysis:
    """`analyze_errors` over records with the fields of
    `lal_allennlp.analysis.predictions.SentencePrediction` (`gold_tree`, `predicted_tree`,
    `gold_heads`, `predicted_heads`, `gold_dependency_labels`, `predicted_dependency_labels`,
    `scored`)."""

    def column(name: str) -> Optional[List[Any]]:
        values = [getattr(record, name, None) for record in predictions]
        return None if all(value is None for value in values) else values

    return analyze_errors(
        [record.gold_tree for record in predictions],
        [record.predicted_tree for record in predictions],
        gold_heads=column("gold_heads"),
        predicted_heads=column("predicted_heads"),
        gold_dependency_labels=column("gold_dependency_labels"),
        predicted_dependency_labels=column("predicted_dependency_labels"),
        scored=column("scored"),
        params=params,
        top=top,
    )
