"""
The calibration of several seeds of a model, as mean ± sd over the seeds: per kind of
confidence (spans, heads, dependency labels) the fitted temperature, the expected calibration
error before and after, the accuracy of the items; and how well the sentence score ranks the
sentences (Spearman with sentence F1 and UAS). Reads the `calibration.json` that
`lal-analyze calibrate ... --report FILE` writes, one per seed.

    python benchmarks/calibration_seeds.py \
        --model joint runs/calibration/joint-{1,2,3}/calibration.json \
        --model span runs/calibration/span-{1,2,3}/calibration.json
"""
import argparse
import json
import statistics
from typing import Dict, List, Sequence

KINDS = ("spans", "heads", "dependency_labels")
RANKINGS = ("sentence_confidence_vs_f1", "tree_probability_vs_f1", "sentence_confidence_vs_uas")


def mean_sd(values: Sequence[float], scale: float = 1.0, digits: int = 2) -> str:
    values = [v * scale for v in values]
    sd = statistics.stdev(values) if len(values) > 1 else float("nan")
    return f"{statistics.fmean(values):.{digits}f} ± {sd:.{digits}f}"


def main() -> None:
    cli = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    cli.add_argument("--model", nargs="+", action="append", required=True,
                     metavar=("NAME", "CALIBRATION_JSON"),
                     help="a name, then the calibration.json of each seed")
    args = cli.parse_args()
    runs: Dict[str, List[dict]] = {}
    for name, *paths in args.model:
        if not paths:
            cli.error(f"--model {name}: give the calibration.json of each seed after the name")
        runs[name] = []
        for path in paths:
            with open(path, encoding="utf-8") as handle:
                summary = json.load(handle)
            if "before" not in summary:
                cli.error(f"{path} has no report: run lal-analyze calibrate with --report")
            runs[name].append(summary)

    print("| model | confidence | seeds | temperature | ECE before (%) | ECE after (%) | "
          "accuracy (%) | mean confidence after (%) |")
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    for name, summaries in runs.items():
        for kind in KINDS:
            if kind not in summaries[0]["before"]:
                continue
            print(f"| {name} | {kind} | {len(summaries)} | "
                  f"{mean_sd([s['temperatures'][kind] for s in summaries], digits=3)} | "
                  f"{mean_sd([s['before'][kind]['ece'] for s in summaries], 100)} | "
                  f"{mean_sd([s['after'][kind]['ece'] for s in summaries], 100)} | "
                  f"{mean_sd([s['after'][kind]['accuracy'] for s in summaries], 100, 1)} | "
                  f"{mean_sd([s['after'][kind]['mean_confidence'] for s in summaries], 100, 1)} |")

    print("\n| model | Spearman | before calibration | after |")
    print("|---|---|---:|---:|")
    for name, summaries in runs.items():
        for ranking in RANKINGS:
            if ranking not in summaries[0]["before"]["ranking"]:
                continue
            before = [s["before"]["ranking"][ranking] for s in summaries]
            after = [s["after"]["ranking"][ranking] for s in summaries]
            print(f"| {name} | {ranking.replace('_vs_', ' vs sentence ').replace('_', ' ')} | "
                  f"{mean_sd(before, digits=3)} | {mean_sd(after, digits=3)} |")
    reports = {s.get("report") for summaries in runs.values() for s in summaries}
    held = {s.get("held_out") for summaries in runs.values() for s in summaries}
    print(f"\nFitted on {', '.join(sorted(held))}; measured on {', '.join(sorted(reports))}.")


if __name__ == "__main__":
    main()
