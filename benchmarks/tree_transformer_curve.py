"""
The Tree Transformer's learning curve on a CPU, and where it stands against right-branching:
the dev perplexity and the dev trees' sentence F1 of one long training
(`training_config/tree_transformer_lm_cpu_curve.jsonnet`, validated every `batches_per_epoch`
steps) against its steps, beside the trivial trees' scores on the same sentences, and the trees
of each layer of the last step's model.

Per layer: the tree of that layer's links alone, split top-down at the weakest link until
every bracket has two words (`induce_spans` on that one layer with no threshold); the row
"all layers" is the authors' procedure (`induce_spans` with its thresholds, what the model's
`trees` are). All scored as the paper scores them: punctuation removed, trivial brackets left
out, sentence F1 the mean over sentences.

    python benchmarks/tree_transformer_curve.py runs/tt_curve $DEV_PATH \
        --png docs/img/tree_transformer_curve.png [--json runs/tt_curve/curve.json]
"""
import argparse
import glob
import json
import os
import re
import sys
from typing import Any, Dict, List

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if REPO_ROOT not in sys.path:
    sys.path.insert(0, REPO_ROOT)


def _seconds(text: str) -> float:
    hours, minutes, seconds = text.split(":")
    return int(hours) * 3600 + int(minutes) * 60 + float(seconds)


def read_curve(serialization_dir: str) -> List[Dict[str, float]]:
    """One point per validation: steps, minutes, dev perplexity and tree scores."""
    with open(os.path.join(serialization_dir, "config.json"), encoding="utf-8") as config_file:
        config = json.load(config_file)
    steps_per_epoch = config["data_loader"].get("batches_per_epoch")
    if steps_per_epoch is None:
        raise SystemExit(
            f"{serialization_dir}: the config validates once per pass over the data; train with "
            "data_loader.batches_per_epoch set (tree_transformer_lm_cpu_curve.jsonnet) for a curve"
        )
    points = []
    paths = glob.glob(os.path.join(serialization_dir, "metrics_epoch_*.json"))
    for path in sorted(paths, key=lambda p: int(re.findall(r"(\d+)\.json$", p)[0])):
        with open(path, encoding="utf-8") as metrics_file:
            metrics = json.load(metrics_file)
        points.append(
            {
                "steps": (metrics["epoch"] + 1) * steps_per_epoch,
                "minutes": _seconds(metrics["training_duration"]) / 60,
                "perplexity": metrics["validation_perplexity"],
                "sentence_f1": 100 * metrics["validation_sentence_f1"],
                "corpus_f1": 100 * metrics["validation_corpus_f1"],
            }
        )
    return points


def last_weights(serialization_dir: str) -> str:
    """The weights of the last epoch (the archive's are the best by dev perplexity)."""
    paths = glob.glob(os.path.join(serialization_dir, "model_state_e*.th"))
    paths += glob.glob(os.path.join(serialization_dir, "model_state_epoch_*.th"))
    if not paths:
        raise SystemExit(f"{serialization_dir}: no model_state_*.th checkpoint")
    return max(paths, key=lambda p: int(re.findall(r"(\d+)", os.path.basename(p))[0]))


def layer_scores(serialization_dir: str, dev_path: str) -> Dict[str, Any]:
    """Sentence and corpus F1 of each layer's trees and of the model's own trees, and the
    trivial trees' scores, on the dev sentences."""
    import torch
    from allennlp.models.archival import load_archive

    from lal_allennlp.syntax.unsupervised import (
        UnlabelledBracketScore,
        baseline_scores,
        gold_unlabelled_spans,
        induce_spans,
        mean_and_std,
    )

    # The serialization folder itself (config, vocabulary) loads as an archive does, also
    # while the training is still going.
    archive = load_archive(serialization_dir, weights_file=last_weights(serialization_dir))
    model = archive.model.eval()
    instances = list(archive.validation_dataset_reader.read(dev_path))
    layers = len(model.encoder.layers)
    scores = {f"layer {l + 1}": UnlabelledBracketScore() for l in range(layers)}
    scores["all layers (the model's trees)"] = UnlabelledBracketScore()
    gold = []
    with torch.no_grad():
        for start in range(0, len(instances), 64):
            batch = instances[start : start + 64]
            for instance, output in zip(batch, model.forward_on_instances(batch)):
                words, gold_spans = gold_unlabelled_spans(instance["metadata"]["gold_tree"])
                n = len(words)
                gold.append((n, gold_spans))
                links = output["link_probabilities"]
                for layer in range(layers):
                    spans = (
                        induce_spans([links[layer]], split_threshold=2.0, min_layer=0)
                        if n > 1
                        else set()
                    )
                    scores[f"layer {layer + 1}"].add(spans, gold_spans, n)
                scores["all layers (the model's trees)"].add(
                    {tuple(span) for span in output["spans"]}, gold_spans, n
                )
    baselines = baseline_scores(gold)
    table = {name: score.as_dict() for name, score in scores.items()}
    for name, runs in baselines.items():  # random: the mean over its seeds
        summary = mean_and_std(runs)
        table[name.replace("_", "-")] = {
            "sentence_f1": summary["sentence_f1"][0],
            "corpus_f1": summary["corpus_f1"][0],
        }
    return {"sentences": len(instances), "trees": table}


def plot(points: List[Dict[str, float]], trees: Dict[str, Any], path: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    steps = [p["steps"] for p in points]
    figure, (f1_axis, ppl_axis) = plt.subplots(1, 2, figsize=(12, 4.4))
    f1_axis.plot(steps, [p["sentence_f1"] for p in points], marker="o", markersize=2,
                 label="Tree Transformer (dev trees)")
    for name, style in (("right-branching", "--"), ("random", ":"), ("balanced", "-.")):
        f1_axis.axhline(100 * trees[name]["sentence_f1"], linestyle=style, color="grey",
                        label=name)
    f1_axis.set_xlabel("training steps (batches of 64 sentences)")
    f1_axis.set_ylabel("dev sentence F1")
    f1_axis.legend(fontsize=8, loc="lower right")
    f1_axis.grid(alpha=0.3)
    ppl_axis.plot(steps, [p["perplexity"] for p in points], marker="o", markersize=2)
    ppl_axis.set_yscale("log")
    ppl_axis.set_xlabel("training steps")
    ppl_axis.set_ylabel("dev masked-LM perplexity (log scale)")
    ppl_axis.grid(alpha=0.3, which="both")
    minutes = points[-1]["minutes"] if points else 0
    figure.suptitle(
        f"Tree Transformer, CPU config, one run of {minutes:.0f} minutes on one core "
        "(WSJ sample + EWT train; dev wsj_0160-0179)"
    )
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("serialization_dir")
    parser.add_argument("dev_path")
    parser.add_argument("--png", default=None)
    parser.add_argument("--json", default=None)
    args = parser.parse_args()

    import lal_allennlp  # noqa: F401  (registers the model and reader)

    points = read_curve(args.serialization_dir)
    trees = layer_scores(args.serialization_dir, args.dev_path)
    print(f"{len(points)} validations, {points[-1]['steps']} steps, "
          f"{points[-1]['minutes']:.1f} training minutes\n")
    print("| steps | minutes | dev perplexity | dev sentence F1 | dev corpus F1 |")
    print("|---:|---:|---:|---:|---:|")
    every = max(1, len(points) // 12)
    for point in points[every - 1 :: every] + ([] if len(points) % every == 0 else points[-1:]):
        print(f"| {point['steps']:,} | {point['minutes']:.1f} | {point['perplexity']:.1f} | "
              f"{point['sentence_f1']:.1f} | {point['corpus_f1']:.1f} |")
    print(f"\nTrees of the last step's model, dev ({trees['sentences']} sentences):\n")
    print("| trees | sentence F1 | corpus F1 |")
    print("|---|---:|---:|")
    for name, score in trees["trees"].items():
        print(f"| {name} | {100 * score['sentence_f1']:.1f} | {100 * score['corpus_f1']:.1f} |")
    if args.png:
        plot(points, trees["trees"], args.png)
        print(f"\n{args.png}")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as out:
            json.dump({"curve": points, **trees}, out, indent=2)


if __name__ == "__main__":
    main()
