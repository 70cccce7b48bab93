"""
The stack-based multi-layer attention parser (Zhang et al. 2017), its ablations and a biaffine
graph-based parser, side by side on one dependency treebank: the same split, inputs (words
trained from scratch + POS), encoder size, optimiser and wall-clock training budget; UAS/LAS
without punctuation, all scored by one function, and parsing speed.

Systems (``--systems``, in this order by default; the configs are in ``training_config/``):

* ``paper``: ``stack_attention_ewt_cpu`` (3 attention layers, s and r vectors, POS),
* ``l1``, ``l2``, ``l4``: 1, 2 and 4 attention layers,
* ``no-s``, ``no-r``, ``no-pos``: without the pushed vector, the popped vector, POS input,
* ``seq2seq``: plain seq2seq attention (one layer, no stack vectors),
* ``biaffine``: allennlp-models' ``biaffine_parser`` (Dozat & Manning 2017),
  ``biaffine_ewt_cpu``.

For each, the script trains with ``allennlp train`` for ``--minutes`` (the ``time_budget``
callback; the epoch with the best dev LAS is kept), then, in this process, parses the dev file
with the archive (batches of 64 sentences of similar length; model loading and one warm-up batch
excluded from the time): the stack attention parsers greedily and with beam ``--beam``, the
biaffine parser with its own decoder (MST on the CPU). Every prediction is scored against the
gold file by ``attachment_scores`` below: the words whose gold tag is punctuation (UD ``PUNCT``
with ``--treebank ud``, the PTB tags `` `` '' , . : `` with ``--treebank ptb``) are left out,
with AllenNLP's ``AttachmentScores`` (the parsers' own metric). Writes a Markdown table.

    python benchmarks/dependency_side_by_side.py --minutes 10 \\
        --table benchmarks/dependency_side_by_side.md
    python benchmarks/dependency_side_by_side.py --treebank ptb --systems paper biaffine \\
        --train ../shared/data/ptb-sample/deps/wsj_0001-0159 \\
        --dev ../shared/data/ptb-sample/deps/wsj_0160-0179 --minutes 6

``--reuse`` skips training where a run's archive already exists in ``--work-dir``.
"""
import argparse
import datetime
import json
import os
import shlex
import subprocess
import sys
import time
from typing import Dict, List, Sequence

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, REPO)
sys.path.insert(0, HERE)

import torch  # noqa: E402
from allennlp.models.archival import load_archive  # noqa: E402
from allennlp.training.metrics import AttachmentScores  # noqa: E402

import lal_allennlp  # noqa: E402,F401  (registers the project's components)
from peers_accuracy import machine, run  # noqa: E402

SHARED = os.path.join(os.path.dirname(REPO), "shared")
EWT = os.path.join(SHARED, "data", "ud", "en_ewt")
PUNCTUATION = {"ud": ("PUNCT",), "ptb": ("``", "''", ",", ".", ":")}

SYSTEMS = {
    "paper": ("stack_attention_ewt_cpu", "stack attention, l = 3 (the paper's model)"),
    "l1": ("stack_attention_ewt_layers1", "stack attention, l = 1"),
    "l2": ("stack_attention_ewt_layers2", "stack attention, l = 2"),
    "l4": ("stack_attention_ewt_layers4", "stack attention, l = 4"),
    "no-s": ("stack_attention_ewt_no_pushed", "stack attention, l = 3, - s vector"),
    "no-r": ("stack_attention_ewt_no_popped", "stack attention, l = 3, - r vector"),
    "no-pos": ("stack_attention_ewt_no_pos", "stack attention, l = 3, - POS"),
    "seq2seq": ("stack_attention_ewt_seq2seq", "plain seq2seq attention"),
    "biaffine": ("biaffine_ewt_cpu", "biaffine (allennlp-models biaffine_parser)"),
}
# The paper's PTB-SD test UAS / LAS (tables 3 and 4) beside each system.
PAPER = {
    "paper": "93.71 / 91.60",
    "l1": "92.70 / 90.40",
    "l2": "93.21 / 90.98",
    "l4": "93.42 / 91.24",
    "no-s": "93.02 / 90.89",
    "no-r": "93.27 / 91.02",
    "no-pos": "92.57 / 90.05",
    "seq2seq": "91.84 / 88.84",
    "biaffine": "",
}


def attachment_scores(
    gold: Sequence[Dict], heads: Sequence[Sequence[int]], labels: Sequence[Sequence[str]],
    punctuation: Sequence[str],
) -> Dict[str, float]:
    """UAS / LAS (percent) of predicted `heads` / `labels` against the gold sentences
    (metadata of the reader: `heads`, `labels`, `pos`), words with a punctuation tag left out."""
    metric = AttachmentScores()
    for sentence, predicted_heads, predicted_labels in zip(gold, heads, labels):
        gold_labels = sentence["labels"] or ["_"] * len(sentence["heads"])
        names = {
            label: index
            for index, label in enumerate(sorted(set(gold_labels) | set(predicted_labels)))
        }
        mask = torch.tensor([[tag not in punctuation for tag in sentence["pos"]]])
        metric(
            torch.tensor([list(predicted_heads)]),
            torch.tensor([[names[label] for label in predicted_labels]]),
            torch.tensor([list(sentence["heads"])]),
            torch.tensor([[names[label] for label in gold_labels]]),
            mask,
        )
    scores = metric.get_metric(reset=True)
    return {"UAS": 100 * scores["UAS"], "LAS": 100 * scores["LAS"]}


def parse(archive_path: str, dev: str, beam: int) -> Dict:
    """Parses `dev` with the archive; heads, labels, the gold metadata and sentences/second."""
    archive = load_archive(archive_path)
    model = archive.model.eval()
    reader = archive.validation_dataset_reader
    instances = sorted(reader.read(dev), key=lambda instance: len(instance["words"]))
    if hasattr(model, "beam_size"):
        model.beam_size = beam
    batches = [instances[i : i + 64] for i in range(0, len(instances), 64)]
    with torch.no_grad():
        model.forward_on_instances(batches[len(batches) // 2])  # warm-up
        start = time.perf_counter()
        outputs = [output for batch in batches for output in model.forward_on_instances(batch)]
        seconds = time.perf_counter() - start
    if "predicted_heads" in outputs[0]:  # allennlp-models' biaffine_parser
        heads = [output["predicted_heads"] for output in outputs]
        labels = [output["predicted_dependencies"] for output in outputs]
    else:
        heads = [output["heads"] for output in outputs]
        labels = [output["dependency_labels"] for output in outputs]
    return {
        "gold": [instance["metadata"].metadata for instance in instances],
        "heads": heads,
        "labels": labels,
        "sentences_per_second": len(instances) / seconds,
    }


def train(system: str, args: argparse.Namespace) -> Dict:
    config, _ = SYSTEMS[system]
    out_dir = os.path.join(args.work_dir, system)
    archive = os.path.join(out_dir, "model.tar.gz")
    if not (args.reuse and os.path.exists(archive)):
        subprocess.run(["rm", "-rf", out_dir], check=True)
        # Dotted keys: AllenNLP replaces a nested dict of an override instead of merging it.
        overrides: Dict = {
            "trainer.callbacks": [
                {"type": "time_budget", "minutes": args.minutes, "cut_frac": 0.06}
            ],
        }
        if args.lr is not None:
            overrides["trainer.optimizer.lr"] = args.lr
        if args.treebank == "ptb":
            overrides["dataset_reader.coarse_tags"] = False
            overrides["validation_dataset_reader.coarse_tags"] = False
            if system != "biaffine":
                overrides["model.punctuation_tags"] = list(PUNCTUATION["ptb"])
        env = dict(os.environ, DEP_TRAIN=args.train, DEP_DEV=args.dev)
        allennlp = os.path.join(os.path.dirname(sys.executable), "allennlp")
        command = [sys.executable, allennlp, "train", f"training_config/{config}.jsonnet"]
        command += ["-s", out_dir, "-o", json.dumps(overrides)]
        run(command, out_dir + ".train.log", env)
    with open(os.path.join(out_dir, "metrics.json")) as metrics_file:
        metrics = json.load(metrics_file)
    return {
        "model": archive,
        "training_duration": metrics["training_duration"],
        "epochs": metrics.get("training_epochs", metrics.get("epoch", -1)) + 1,
        "best_epoch": metrics.get("best_epoch"),
    }


def dev_scores_after(system: str, epochs: int, args: argparse.Namespace) -> Dict[str, float]:
    """Dev UAS / LAS (greedy, percent) after `epochs` epochs, from the training run's
    per-epoch metrics (the model's own `AttachmentScores`, the same words left out)."""
    path = os.path.join(args.work_dir, system, f"metrics_epoch_{epochs - 1}.json")
    with open(path) as metrics_file:
        metrics = json.load(metrics_file)
    return {key: 100 * metrics[f"validation_{key}"] for key in ("UAS", "LAS")}


def format_table(rows: List[Dict], args: argparse.Namespace, command: str) -> str:
    # The budget buys fewer epochs for the slower systems; the same number of epochs for all
    # (the fewest any system ran) is the other view, closer to the paper's converged models.
    common = min(row["epochs"] for row in rows)
    lines = [
        f"# Dependency parsers side by side ({args.treebank}, {os.path.relpath(args.dev, REPO)})",
        "",
        f"{datetime.date.today().isoformat()}, {machine()}, torch {torch.__version__}; "
        f"`{command}`",
        "",
        f"Training: `{os.path.relpath(args.train, REPO)}`, {args.minutes} minutes each "
        "(`time_budget`), best dev LAS epoch kept. UAS/LAS without punctuation "
        f"({', '.join(PUNCTUATION[args.treebank])}). Speed: dev sentences per second, batches of "
        "64, 2 CPU cores.",
        "",
        f"| system | epochs (best) | UAS greedy | LAS greedy | UAS beam {args.beam} "
        f"| LAS beam {args.beam} | sent/s greedy | sent/s beam {args.beam} "
        f"| UAS / LAS after {common} epochs (greedy) | paper PTB-SD test UAS / LAS |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        greedy, beam = row["greedy"], row.get("beam")
        cells = [
            SYSTEMS[row["system"]][1],
            f"{row['epochs']} ({row['best_epoch'] + 1})",
            f"{greedy['UAS']:.2f}",
            f"{greedy['LAS']:.2f}",
            f"{beam['UAS']:.2f}" if beam else "-",
            f"{beam['LAS']:.2f}" if beam else "-",
            f"{greedy['sentences_per_second']:.0f}",
            f"{beam['sentences_per_second']:.0f}" if beam else "-",
            "{UAS:.2f} / {LAS:.2f}".format(**dev_scores_after(row["system"], common, args))
            + (" (its own metric)" if row["system"] == "biaffine" else ""),
            PAPER[row["system"]],
        ]
        lines.append("| " + " | ".join(cells) + " |")
    lines += [
        "",
        f"The column after {common} epochs is each run's validation during training (the model's"
        " own metric; the biaffine parser's also leaves out `SYM` and decodes with MST).",
    ]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--train", default=os.path.join(EWT, "en_ewt-ud-train.conllu"))
    parser.add_argument("--dev", default=os.path.join(EWT, "en_ewt-ud-dev.conllu"))
    parser.add_argument("--treebank", choices=sorted(PUNCTUATION), default="ud")
    parser.add_argument("--systems", nargs="+", choices=list(SYSTEMS), default=list(SYSTEMS))
    parser.add_argument("--minutes", type=float, default=10.0)
    parser.add_argument("--beam", type=int, default=8)
    parser.add_argument("--lr", type=float, help="override the configs' peak learning rate")
    parser.add_argument("--work-dir", default=os.path.join(REPO, "runs", "dependency_side_by_side"))
    parser.add_argument(
        "--reuse",
        action="store_true",
        help="keep the runs whose archive exists, and the results of the systems already parsed",
    )
    parser.add_argument("--table", help="also write the Markdown table here")
    args = parser.parse_args()
    args.train, args.dev = os.path.abspath(args.train), os.path.abspath(args.dev)
    os.makedirs(args.work_dir, exist_ok=True)
    command = "python benchmarks/dependency_side_by_side.py " + " ".join(
        shlex.quote(argument) for argument in sys.argv[1:]
    )
    rows = []
    for system in args.systems:
        saved = os.path.join(args.work_dir, f"{system}.json")
        if args.reuse and os.path.exists(saved):
            with open(saved) as saved_file:
                rows.append(json.load(saved_file))
            continue
        row: Dict = {"system": system, **train(system, args)}
        punctuation = PUNCTUATION[args.treebank]
        greedy = parse(row["model"], args.dev, 1)
        row["greedy"] = {
            **attachment_scores(greedy["gold"], greedy["heads"], greedy["labels"], punctuation),
            "sentences_per_second": greedy["sentences_per_second"],
        }
        if system != "biaffine":
            beam = parse(row["model"], args.dev, args.beam)
            row["beam"] = {
                **attachment_scores(beam["gold"], beam["heads"], beam["labels"], punctuation),
                "sentences_per_second": beam["sentences_per_second"],
            }
        print(json.dumps(row), flush=True)
        with open(saved, "w") as result_file:
            json.dump(row, result_file, indent=1)
        rows.append(row)
    table = format_table(rows, args, command)
    print(table)
    if args.table:
        with open(args.table, "w") as table_file:
            table_file.write(table)


if __name__ == "__main__":
    main()
