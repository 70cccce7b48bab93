"""
A grid's tables and picture, from its finished runs (`result.json` and the per-sentence
predictions of each run folder).

Per variant and evaluation file: each metric's mean and sample standard deviation over the
seeds, the epochs and training minutes, the reference (published) numbers beside; and a paired
significance test between the grid's reference variant and each other variant, over sentences
(approximate randomisation, as Bikel's compare.pl does for EVALB): EVALB's per-sentence bracket
counts for F1, the per-sentence attachment counts for UAS and LAS. Seeds are paired (seed k of
one variant with seed k of the other) and their sentences pooled, so the test sees every
prediction of both variants; the p-value of each seed alone is in the CSV.
"""

import csv
import math
import os
import statistics
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np

from lal_allennlp.experiments.grid_file import Grid, Run
from lal_allennlp.experiments.runner import RunFolder

# The metrics that have a per-sentence significance test, and what it needs.
TESTED = ("F1", "UAS", "LAS")
# The validation metrics drawn against training time (the first two a grid has).
CURVE_METRICS = ("F1", "LAS", "UAS", "sentence_F1", "perplexity")


def mean_sd(values: Sequence[float]) -> Tuple[float, Optional[float]]:
    """Mean and sample standard deviation (None for fewer than two values)."""
    mean = statistics.fmean(values)
    return mean, (statistics.stdev(values) if len(values) > 1 else None)


def format_mean_sd(values: Sequence[float]) -> str:
    if not values:
        return "–"
    mean, sd = mean_sd(values)
    return f"{mean:.2f}" if sd is None else f"{mean:.2f} ± {sd:.2f}"


def format_p(p: Optional[float]) -> str:
    if p is None:
        return "–"
    return "< 0.001" if p < 0.001 else f"{p:.3f}"


def _counts(predictions: List[Any], metric: str) -> Optional[np.ndarray]:
    from lal_allennlp.analysis import significance

    if metric == "F1":
        return significance.bracket_counts(
            [p.gold_tree for p in predictions], [p.predicted_tree for p in predictions]
        )
    if any(p.gold_heads is None or p.predicted_heads is None for p in predictions):
        return None
    # An unlabelled treebank (heads only): no LAS counts.
    labelled = all(
        p.gold_dependency_labels is not None and p.predicted_dependency_labels is not None
        for p in predictions
    )
    return significance.attachment_counts(
        [p.gold_heads for p in predictions],
        [p.predicted_heads for p in predictions],
        [p.gold_dependency_labels for p in predictions] if labelled else None,
        [p.predicted_dependency_labels for p in predictions] if labelled else None,
        [p.scored for p in predictions],
    )


def _metric_function(metric: str) -> Callable[[np.ndarray], Any]:
    from lal_allennlp.analysis import significance

    return {"F1": significance.f1_score, "UAS": significance.uas, "LAS": significance.las}[metric]


class GridReport:
    """The finished runs of a grid, summarised (see the module docstring)."""

    def __init__(self, grid: Grid, runs_dir: str, trials: int = 10000) -> None:
        self.grid = grid
        self.runs_dir = runs_dir
        self.trials = trials
        self.results: Dict[Tuple[str, int], Dict[str, Any]] = {}
        for run in grid.all_runs:
            folder = RunFolder(runs_dir, run)
            if folder.finished():
                self.results[(run.variant, run.seed)] = folder.result()
        self._predictions: Dict[Tuple[str, int, str], List[Any]] = {}
        # Per-sentence counts, by (variant, seed, file, metric): the reference variant's are
        # used by every row, and UAS and LAS share theirs.
        self._counts: Dict[Tuple[str, int, str, str], Optional[np.ndarray]] = {}

    def missing(self) -> List[Run]:
        return [run for run in self.grid.all_runs if (run.variant, run.seed) not in self.results]

    def variant_results(self, variant: str) -> List[Dict[str, Any]]:
        return [
            self.results[(run.variant, run.seed)]
            for run in self.grid.runs_of(variant)
            if (run.variant, run.seed) in self.results
        ]

    def values(self, variant: str, eval_name: str, metric: str) -> List[float]:
        return [
            r["metrics"][eval_name][metric]
            for r in self.variant_results(variant)
            if metric in r["metrics"].get(eval_name, {})
        ]

    def predictions(self, variant: str, seed: int, eval_name: str) -> List[Any]:
        from lal_allennlp.analysis.predictions import read_predictions

        key = (variant, seed, eval_name)
        if key not in self._predictions:
            run = next(r for r in self.grid.all_runs if r.variant == variant and r.seed == seed)
            self._predictions[key] = read_predictions(
                RunFolder(self.runs_dir, run).predictions_path(eval_name)
            )
        return self._predictions[key]

    def counts(self, variant: str, seed: int, eval_name: str, metric: str) -> Optional[np.ndarray]:
        kind = "brackets" if metric == "F1" else "attachment"
        key = (variant, seed, eval_name, kind)
        if key not in self._counts:
            self._counts[key] = _counts(self.predictions(variant, seed, eval_name), metric)
        return self._counts[key]

    def significance(
        self, variant: str, eval_name: str, metric: str
    ) -> Tuple[Optional[float], List[Optional[float]]]:
        """The pooled p-value of `variant` against the reference variant, and each seed's. An
        ensemble, one model, is paired with every seed of the reference."""
        from lal_allennlp.analysis import significance

        reference = self.grid.reference_variant
        if reference is None or variant == reference:
            return None, []
        own_seed = {run.seed for run in self.grid.runs_of(variant)}
        ensemble = [run.seed for run in self.grid.ensemble_runs if run.variant == variant]
        pairs = [
            (s, ensemble[0] if ensemble else s)
            for s in self.grid.seeds
            if (ensemble or s in own_seed)
            and (variant, ensemble[0] if ensemble else s) in self.results
            and (reference, s) in self.results
        ]
        if not pairs:
            return None, []
        metric_function = _metric_function(metric)
        pooled_a, pooled_b, per_seed = [], [], []
        for seed, variant_seed in pairs:
            a = self.counts(reference, seed, eval_name, metric)
            b = self.counts(variant, variant_seed, eval_name, metric)
            if a is None or b is None:
                return None, []
            pooled_a.append(a)
            pooled_b.append(b)
            result = significance.paired_permutation_test(
                a, b, metric_function, trials=self.trials, seed=seed
            )
            per_seed.append(result.p_value)
        pooled = significance.paired_permutation_test(
            np.concatenate(pooled_a), np.concatenate(pooled_b), metric_function, trials=self.trials
        )
        return pooled.p_value, per_seed

    def rows(self, eval_name: str) -> List[Dict[str, Any]]:
        """One row per variant: everything the Markdown and CSV tables show."""
        rows = []
        for variant in self.grid.variants:
            results = self.variant_results(variant.name)
            row: Dict[str, Any] = {
                "variant": variant.name,
                "seeds": len(results),
                # An ensemble is not trained: no epochs of its own (its minutes are its members').
                "epochs": [r["epochs"] for r in results if not r.get("members")],
                "train_minutes": [r["train_minutes"] for r in results],
                "reference": variant.reference,
                "values": {m: self.values(variant.name, eval_name, m) for m in self.grid.metrics},
                "p": {},
                "p_per_seed": {},
            }
            for metric in TESTED:
                if metric in self.grid.metrics and row["values"][metric]:
                    pooled, per_seed = self.significance(variant.name, eval_name, metric)
                    row["p"][metric] = pooled
                    row["p_per_seed"][metric] = per_seed
            rows.append(row)
        return rows

    def markdown(self, eval_name: str, rows: List[Dict[str, Any]]) -> str:
        grid = self.grid
        metrics = grid.metrics
        tested = [
            m for m in TESTED if m in metrics and any(r["p"].get(m) is not None for r in rows)
        ]
        referenced = [m for m in metrics if any(m in r["reference"] for r in rows)]
        header = ["variant", "seeds"] + metrics + ["epochs", "train min"]
        header += [f"p ({m})" for m in tested]
        source = f" ({grid.reference_source})" if grid.reference_source else ""
        header += [f"paper {m}" for m in referenced]
        lines = [
            f"### {grid.name}: {eval_name} ({grid.evaluate[eval_name]})",
            "",
            f"Means ± sample standard deviation over seeds {', '.join(map(str, grid.seeds))}; "
            + (f"budget {grid.budget_minutes:g} minutes per run; " if grid.budget_minutes else "")
            + (
                f"p: paired approximate randomisation over sentences against "
                f"**{grid.reference_variant}** ({self.trials:,} shuffles, seeds paired and "
                "pooled)"
                if grid.reference_variant
                else "no reference variant, no significance tests"
            )
            + (f"; paper numbers{source}." if referenced else "."),
            "",
            "| " + " | ".join(header) + " |",
            "|" + "|".join(["---"] + ["---:"] * (len(header) - 1)) + "|",
        ]
        for row in rows:
            cells = [row["variant"], str(row["seeds"])]
            cells += [format_mean_sd(row["values"][m]) for m in metrics]
            cells.append(" / ".join(map(str, row["epochs"])) or "–")
            cells.append(format_mean_sd(row["train_minutes"]) if row["train_minutes"] else "–")
            for metric in tested:
                cells.append(
                    "ref."
                    if row["variant"] == grid.reference_variant
                    else format_p(row["p"].get(metric))
                )
            for metric in referenced:
                value = row["reference"].get(metric)
                cells.append("–" if value is None else f"{value:.2f}")
            lines.append("| " + " | ".join(cells) + " |")
        missing = self.missing()
        if missing:
            lines += ["", f"Not finished yet: {', '.join(run.label for run in missing)}."]
        return "\n".join(lines) + "\n"

    def write_csv(self, path: str, eval_name: str, rows: List[Dict[str, Any]]) -> None:
        metrics = self.grid.metrics
        header = ["variant", "seeds", "epochs", "train_minutes_mean"]
        for metric in metrics:
            header += [f"{metric}_mean", f"{metric}_sd", f"{metric}_per_seed", f"{metric}_paper"]
        for metric in TESTED:
            if metric in metrics:
                header += [f"p_{metric}", f"p_{metric}_per_seed"]
        with open(path, "w", newline="", encoding="utf-8") as out:
            writer = csv.writer(out)
            writer.writerow(header)
            for row in rows:
                cells: List[Any] = [
                    row["variant"],
                    row["seeds"],
                    " ".join(map(str, row["epochs"])),
                    _round(statistics.fmean(row["train_minutes"])) if row["train_minutes"] else "",
                ]
                for metric in metrics:
                    values = row["values"][metric]
                    mean, sd = mean_sd(values) if values else (None, None)
                    reference = row["reference"].get(metric)
                    cells += [
                        _round(mean),
                        _round(sd),
                        " ".join(f"{v:.2f}" for v in values),
                        "" if reference is None else reference,
                    ]
                for metric in TESTED:
                    if metric in metrics:
                        cells += [
                            _round(row["p"].get(metric), 4),
                            " ".join(f"{p:.4f}" for p in row["p_per_seed"].get(metric, [])),
                        ]
                writer.writerow(cells)

    def write_curves(self, path: str) -> bool:
        """Dev metrics against training minutes, one line per run, one colour per variant;
        False (nothing written) for a grid with none of `CURVE_METRICS`."""
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        panels = [m for m in CURVE_METRICS if m in self.grid.metrics][:2]
        if not panels:
            return False
        figure, axes = plt.subplots(1, len(panels), figsize=(6.5 * len(panels), 4.6), squeeze=False)
        colours = plt.get_cmap("tab10")
        for axis, metric in zip(axes[0], panels):
            for index, variant in enumerate(self.grid.variants):
                for number, result in enumerate(self.variant_results(variant.name)):
                    points = [p for p in result["curve"] if metric in p]
                    if not points:
                        continue
                    axis.plot(
                        [p["minutes"] for p in points],
                        [p[metric] for p in points],
                        marker="o",
                        markersize=3,
                        color=colours(index % 10),
                        alpha=0.8,
                        label=variant.name if number == 0 else None,
                    )
            axis.set_xlabel("training minutes (wall clock)")
            axis.set_ylabel(f"validation {metric}")
            axis.grid(alpha=0.3)
        axes[0][0].legend(fontsize=8, loc="lower right")
        figure.suptitle(f"{self.grid.name}: validation metrics during training, every run")
        figure.tight_layout()
        figure.savefig(path, dpi=110)
        plt.close(figure)
        return True

    def write(self, out_dir: str) -> List[str]:
        """Writes `table.md`, `table_<eval>.csv` per evaluation file and `curves.png`;
        returns the paths written."""
        os.makedirs(out_dir, exist_ok=True)
        written = []
        sections = []
        for eval_name in self.grid.evaluate:
            rows = self.rows(eval_name)
            sections.append(self.markdown(eval_name, rows))
            csv_path = os.path.join(out_dir, f"table_{eval_name}.csv")
            self.write_csv(csv_path, eval_name, rows)
            written.append(csv_path)
        markdown_path = os.path.join(out_dir, "table.md")
        with open(markdown_path, "w", encoding="utf-8") as out:
            out.write("\n".join(sections))
        written.insert(0, markdown_path)
        if self.results:
            curves_path = os.path.join(out_dir, "curves.png")
            if self.write_curves(curves_path):
                written.append(curves_path)
        return written


def _round(value: Optional[float], digits: int = 3) -> Any:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    return round(value, digits)
