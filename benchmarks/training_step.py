"""
What makes a training step of the CPU LAL parser cheaper, side by side in one run.

1. The dropout mask alone, on the shapes of the parser's dropout layers (MiniLM's hidden
   states, the LAL's attention, the encoder output, the span classifier's hidden layer over
   all spans of a 52-word batch): torch's `torch.nn.functional.dropout` against this
   package's `fast_dropout`, median of `--repeats`. (MiniLM's dropout on its attention
   probabilities happens inside torch's scaled_dot_product_attention and stays torch's.)
2. Whole training steps (forward, backward, gradient clipping, optimizer step) of the parser of
   `training_config/lal_minilm_cpu.jsonnet` on `--batches` real batches of 16 PTB sentences,
   three copies with the same initial weights:
   - "torch dropout, all trained": torch's dropout layers, every MiniLM weight trained (the
     config before FastDropout and `frozen_layers`);
   - "FastDropout, all trained";
   - "FastDropout, frozen_layers 1": the config as it is (MiniLM's embeddings and layer 0
     fixed).
   They alternate for `--rounds` rounds over the same batches; the totals give the ratios.

    python benchmarks/training_step.py [--trees ../shared/data/ptb-sample/trees/wsj_0001-0159]
        [--threads 2] [--batches 30] [--rounds 2] [--repeats 20]
"""
import argparse
import copy
import json
import os
import sys
import time

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if REPO_ROOT not in sys.path:
    sys.path.insert(0, REPO_ROOT)

CONFIG = os.path.join(REPO_ROOT, "training_config", "lal_minilm_cpu.jsonnet")
DEFAULT_TREES = os.path.join(REPO_ROOT, "..", "shared", "data", "ptb-sample", "trees", "wsj_0001-0159")

# (name, shape, p) of the dropout layers of the CPU LAL parser on a batch of 16 sentences of
# 52 words (66 word pieces).
MASK_SHAPES = [
    ("MiniLM hidden states", (16, 66, 384), 0.1),
    ("LAL attention probabilities", (16, 112, 1, 54), 0.2),
    ("parser encoder output", (16, 54, 1792), 0.2),
    ("span classifier hidden layer", (16, 1378, 250), 0.2),
]


def torch_dropout_copy(model):
    """A copy of `model` whose FastDropout layers are torch.nn.Dropout layers again."""
    import torch

    from lal_allennlp.modules.fast_dropout import FastDropout

    model = copy.deepcopy(model)
    for parent in model.modules():
        for name, child in list(parent.named_children()):
            if type(child) is FastDropout:
                setattr(parent, name, torch.nn.Dropout(child.p))
    return model


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trees", default=DEFAULT_TREES)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--batches", type=int, default=30)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=20)
    args = parser.parse_args()

    import _jsonnet
    import torch
    from allennlp.common import Params
    from allennlp.data import DatasetReader, Vocabulary
    from allennlp.data.data_loaders import MultiProcessDataLoader
    from allennlp.data.samplers import BucketBatchSampler
    from allennlp.models import Model
    from allennlp.training.optimizers import Optimizer

    import lal_allennlp  # noqa: F401
    from lal_allennlp.modules.fast_dropout import fast_dropout
    from gpu_speed import default_tokenizer_dir  # benchmarks/gpu_speed.py
    from timing import load_average, timed  # benchmarks/timing.py

    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    print(f"{args.threads} threads, load {load_average()}")
    print(f"{'mask and multiply':32s} {'shape':>20s} {'torch ms':>9s} {'fast ms':>8s} {'ratio':>6s}")
    for name, shape, p in MASK_SHAPES:
        inputs = torch.randn(shape)
        native = lambda: torch.nn.functional.dropout(inputs, p, training=True)  # noqa: E731
        fast = lambda: fast_dropout(inputs, p)  # noqa: E731
        native(), fast()
        native_s, fast_s = timed(native, args.repeats), timed(fast, args.repeats)
        print(f"{name:32s} {str(tuple(shape)):>20s} {native_s * 1e3:9.2f} {fast_s * 1e3:8.2f} "
              f"{native_s / fast_s:6.1f}")

    ext_vars = {"MINILM_DIR": default_tokenizer_dir(), "TRAIN_PATH": "", "DEV_PATH": ""}
    params = Params.from_file(CONFIG, ext_vars=ext_vars)
    reader = DatasetReader.from_params(params.pop("dataset_reader"))
    vocab = Vocabulary.from_instances(reader.read(args.trees))
    loader = MultiProcessDataLoader(
        reader, args.trees, batch_sampler=BucketBatchSampler(batch_size=16, sorting_keys=["tokens"])
    )
    loader.index_with(vocab)
    batches = [batch for _, batch in zip(range(args.batches + 2), loader)]
    warm_up, batches = batches[:2], batches[2:]
    fast_model = Model.from_params(vocab=vocab, params=params.pop("model"))
    configured = params["trainer"]["optimizer"].as_dict()
    all_trained = json.loads(_jsonnet.evaluate_snippet(
        "optimizer",
        "(import 'parsers.libsonnet').optimizer(%r, %r)"
        % (configured["lr"], configured["parameter_groups"][-1][1]["lr"]),
        jpathdir=os.path.dirname(CONFIG),
    ))
    systems = {
        "torch dropout, all trained": (torch_dropout_copy(fast_model), all_trained),
        "FastDropout, all trained": (copy.deepcopy(fast_model), all_trained),
        "FastDropout, frozen_layers 1": (fast_model, configured),
    }
    optimizers = {
        name: Optimizer.from_params(
            model_parameters=list(model.named_parameters()), params=Params(copy.deepcopy(options))
        )
        for name, (model, options) in systems.items()
    }

    def train(name, batch_list):
        model, optimizer = systems[name][0], optimizers[name]
        model.train()
        for batch in batch_list:
            optimizer.zero_grad()
            model(**batch)["loss"].backward()
            torch.nn.utils.clip_grad_norm_([p for p in model.parameters() if p.requires_grad], 5.0)
            optimizer.step()

    seconds = {name: 0.0 for name in systems}
    for name in systems:
        train(name, warm_up)
    for _ in range(args.rounds):
        for name in systems:
            start = time.perf_counter()
            train(name, batches)
            seconds[name] += time.perf_counter() - start
    steps = args.rounds * len(batches)
    words = sum(int(b["tokens"]["tokens"]["mask"].sum()) for b in batches) / len(batches)
    print(f"\ntraining steps of {os.path.basename(CONFIG)}: {len(batches)} batches of 16 "
          f"sentences ({words:.0f} words per batch) x {args.rounds} rounds, load {load_average()}")
    baseline = seconds["torch dropout, all trained"]
    for name, total in seconds.items():
        print(f"{name:30s} {total / steps * 1e3:7.1f} ms/step  {baseline / total:5.2f}x")


if __name__ == "__main__":
    main()
