"""
MBR decoding against Viterbi on the same CRF-trained span parsers: labelled F1 (EVALB, the
models' own setting) of each model with `span_decoding: "viterbi"` and `"mbr"` at several
gains, the gain chosen on one file (a split of train) and reported on another (dev), with a
paired permutation test of MBR against Viterbi over the sentences of every model.

    python benchmarks/mbr_vs_viterbi.py --choose-on CALIBRATION_PATH --report-on DEV_PATH \\
        --models runs/grid_runs/*/model/model.tar.gz -o docs/reports/mbr.md

Only `lal_span_parser` archives trained with `span_loss: "crf"` are used (others are skipped,
with a message).
"""
import argparse
import statistics
import sys
from typing import Dict, List

import numpy as np
import torch

GAINS = (0.0, 0.3, 0.4, 0.5, 0.6)


def evaluate(model, instances, decoding: str, gain: float):
    """EVALB F1 (percent) and per-sentence bracket counts of `model` decoding as told."""
    from lal_allennlp.analysis.predictions import _prediction
    from lal_allennlp.analysis.significance import bracket_counts

    model.span_decoding, model.mbr_gain = decoding, gain
    model.get_metrics(reset=True)
    gold_trees, predicted = [], []
    gold_tags = bool(getattr(model.evalb, "gold_tags", False))
    with torch.no_grad():
        for start in range(0, len(instances), 32):
            batch = instances[start : start + 32]
            for instance, output in zip(batch, model.forward_on_instances(batch)):
                prediction = _prediction(instance["metadata"].metadata, output, gold_tags)
                gold_trees.append(prediction.gold_tree)
                predicted.append(prediction.predicted_tree)
    f1 = 100 * model.get_metrics(reset=True)["evalb_f1"]
    return f1, bracket_counts(gold_trees, predicted)


def main() -> int:
    from allennlp.models.archival import load_archive

    from lal_allennlp.analysis.significance import f1_score, paired_permutation_test
    from lal_allennlp.models.span_parser import SpanConstituencyParser

    cli = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    cli.add_argument("--choose-on", required=True)
    cli.add_argument("--report-on", required=True)
    cli.add_argument("--models", nargs="+", required=True)
    cli.add_argument("-o", "--output", required=True, help="a Markdown file")
    args = cli.parse_args()

    rows: Dict[str, Dict[str, List[float]]] = {}
    counts: Dict[str, List[np.ndarray]] = {"viterbi": [], "mbr": []}
    chosen_gains = []
    used = []
    for path in args.models:
        archive = load_archive(path)
        model = archive.model
        if not isinstance(model, SpanConstituencyParser) or model.span_loss != "crf":
            print(f"skipped {path}: not a lal_span_parser trained as a CRF", file=sys.stderr)
            continue
        used.append(path)
        model.eval()
        reader = archive.validation_dataset_reader
        choose = list(reader.read(args.choose_on))
        report = list(reader.read(args.report_on))
        on_choose = {g: evaluate(model, choose, "mbr", g)[0] for g in GAINS}
        gain = max(GAINS, key=lambda g: on_choose[g])
        chosen_gains.append(gain)
        viterbi_f1, viterbi_counts = evaluate(model, report, "viterbi", 0.0)
        rows.setdefault("Viterbi", {}).setdefault("report", []).append(viterbi_f1)
        rows["Viterbi"].setdefault("choose", []).append(evaluate(model, choose, "viterbi", 0.0)[0])
        counts["viterbi"].append(viterbi_counts)
        for g in GAINS:
            f1, c = evaluate(model, report, "mbr", g)
            name = f"MBR, gain {g}"
            rows.setdefault(name, {}).setdefault("report", []).append(f1)
            rows[name].setdefault("choose", []).append(on_choose[g])
            if g == gain:
                counts["mbr"].append(c)
                rows.setdefault("MBR, gain chosen", {}).setdefault("report", []).append(f1)
                rows["MBR, gain chosen"].setdefault("choose", []).append(on_choose[g])
        print(f"{path}: gain {gain} chosen; {on_choose}", file=sys.stderr)
    if len(used) < 1:
        print("no CRF span parser among --models", file=sys.stderr)
        return 1
    test = paired_permutation_test(
        np.concatenate(counts["mbr"]), np.concatenate(counts["viterbi"]), f1_score
    )

    def cell(values: List[float]) -> str:
        if len(values) < 2:
            return f"{values[0]:.2f}"
        return f"{statistics.mean(values):.2f} ± {statistics.stdev(values):.2f}"

    lines = [
        "| decoding | F1, choose-on file | F1, report file |",
        "|---|---:|---:|",
    ]
    for name, values in rows.items():
        lines.append(f"| {name} | {cell(values['choose'])} | {cell(values['report'])} |")
    lines += [
        "",
        f"Models: {len(used)} ({', '.join(used)}). Choose-on: `{args.choose_on}`; report: "
        f"`{args.report_on}`. Gains chosen per model: {chosen_gains}. MBR (chosen gain) "
        f"against Viterbi on the report file, paired permutation test over the sentences of all "
        f"models pooled: difference {100 * test.difference:+.2f} F1, p = {test.p_value:.3g}.",
    ]
    with open(args.output, "w", encoding="utf-8") as out:
        out.write("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
