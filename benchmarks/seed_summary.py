"""
Mean and spread of dev scores over training seeds, for configs and peers trained separately.

Each group is `NAME=DIR[,DIR...]`, one directory per seed:

* an allennlp serialization directory (`metrics.json`): the best epoch's dev EVALB F1, POS
  accuracy, UAS and LAS (joint parsers), and the number of epochs run;
* a system's directory of a `benchmarks/peers_accuracy.py` run (`result.json`, SuPar's too):
  its dev F1 (the project's EVALB on the prediction file) and epochs.

Both F1s are the same EVALB (COLLINS.prm, gold tags given to EVALB), so the groups compare.
Prints a markdown table: one row per group with each seed's F1, the mean, the sample standard
deviation and the range (for two seeds or more), and the difference of the mean to the first
group's (the last column). A missing or unreadable directory is an error that names it; no
group is dropped.

    python benchmarks/seed_summary.py \\
        "LAL bf16=runs/lal_bf16,runs/lal_bf16_seed2,runs/lal_bf16_seed3" \\
        "SuPar=runs/peers_e2e/supar,runs/peers_seed2/supar,runs/peers_seed3/supar"
"""
import argparse
import json
import os
import statistics
import sys
from typing import Dict, List, Optional, Tuple


def run_scores(run_dir: str) -> Dict[str, Optional[float]]:
    """Dev scores of one run, in percent (`f1`, `pos`, `uas`, `las`; None where the run has
    none) and `epochs`."""
    metrics_path = os.path.join(run_dir, "metrics.json")
    result_path = os.path.join(run_dir, "result.json")
    if os.path.exists(metrics_path):
        with open(metrics_path) as metrics_file:
            metrics = json.load(metrics_file)
        if "best_validation_evalb_f1" not in metrics:
            raise ValueError(f"{metrics_path} has no best_validation_evalb_f1 (not a parser run?)")

        def best(name: str) -> Optional[float]:
            value = metrics.get(f"best_validation_{name}")
            return None if value is None else 100 * value

        return {
            "f1": best("evalb_f1"),
            "pos": best("pos_accuracy"),
            "uas": best("UAS"),
            "las": best("LAS"),
            # allennlp's `epoch` is the last epoch run, counted from 0
            "epochs": metrics.get("training_epochs", metrics.get("epoch", -1)) + 1,
        }
    if os.path.exists(result_path):
        with open(result_path) as result_file:
            result = json.load(result_file)
        return {"f1": result["f1"], "pos": None, "uas": None, "las": None,
                "epochs": result["epochs"]}
    raise FileNotFoundError(
        f"{run_dir!r} holds neither metrics.json (allennlp train -s DIR) nor result.json "
        "(a system's directory of benchmarks/peers_accuracy.py)."
    )


def spread(values: List[float]) -> Tuple[float, float]:
    """Mean and sample standard deviation (0 for a single value)."""
    mean = statistics.fmean(values)
    return mean, statistics.stdev(values) if len(values) > 1 else 0.0


def parse_group(text: str) -> Tuple[str, List[str]]:
    name, separator, dirs = text.partition("=")
    if not separator or not name or not dirs:
        raise ValueError(f"A group is NAME=DIR[,DIR...], got {text!r}.")
    return name, [d for d in dirs.split(",") if d]


def _mean_text(values: List[Optional[float]]) -> str:
    """`mean ± sd` of the known values; a single value alone; "" if none."""
    known = [v for v in values if v is not None]
    if not known:
        return ""
    mean, deviation = spread(known)
    return f"{mean:.2f} ± {deviation:.2f}" if len(known) > 1 else f"{mean:.2f}"


def table(groups: List[Tuple[str, List[str]]]) -> str:
    lines = [
        "| config | seeds | dev F1 per seed | F1 mean ± sd | F1 range | epochs | POS mean "
        "| UAS mean | LAS mean | F1 mean minus first row's |",
        "|---|---:|---|---:|---:|---|---:|---:|---:|---:|",
    ]
    first_mean = None
    for name, dirs in groups:
        runs = [run_scores(d) for d in dirs]
        f1s = [run["f1"] for run in runs]
        mean, deviation = spread(f1s)
        first_mean = mean if first_mean is None else first_mean
        several = len(runs) > 1
        lines.append(
            f"| {name} | {len(runs)} | {' / '.join(f'{f:.2f}' for f in f1s)} "
            f"| **{mean:.2f}**{f' ± {deviation:.2f}' if several else ''} "
            f"| {f'{min(f1s):.2f}-{max(f1s):.2f}' if several else ''} "
            f"| {' / '.join(str(run['epochs']) for run in runs)} "
            f"| {_mean_text([run['pos'] for run in runs])} "
            f"| {_mean_text([run['uas'] for run in runs])} "
            f"| {_mean_text([run['las'] for run in runs])} | {mean - first_mean:+.2f} |"
        )
    return "\n".join(lines)


def main(argv: Optional[List[str]] = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("groups", nargs="+", help="NAME=DIR[,DIR...], one directory per seed")
    args = parser.parse_args(argv)
    try:
        groups = [parse_group(text) for text in args.groups]
        print(table(groups))
    except (ValueError, OSError, KeyError) as error:
        sys.exit(f"seed_summary: {error}")


if __name__ == "__main__":
    main()
