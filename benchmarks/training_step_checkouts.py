"""
Training steps of `training_config/lal_minilm_cpu.jsonnet` under two checkouts of this
repository (e.g. the previous commit and the working tree), alternating in one run.

Each round runs one worker process per checkout, in turn; a worker imports `lal_allennlp` from
its checkout (PYTHONPATH), builds the config's parser and optimizer with the same seed, reads
the same batches of 16 PTB sentences, runs two warm-up steps, then times `--batches` whole
training steps (forward, backward, gradient clipping, optimizer step). The report gives each
checkout's median milliseconds per step over the rounds and the ratio.

    git worktree add /tmp/before HEAD~1
    python benchmarks/training_step_checkouts.py /tmp/before . [--rounds 3] [--batches 20]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_TREES = os.path.join(
    os.path.dirname(os.path.dirname(HERE)), "shared", "data", "ptb-sample", "trees",
    "wsj_0001-0159",
)


def worker(root: str, trees: str, batches: int, threads: int) -> None:
    """Times training steps of the checkout at `root`; prints one JSON line."""
    import random

    import numpy
    import torch
    from allennlp.common import Params
    from allennlp.data import DatasetReader, Vocabulary
    from allennlp.data.data_loaders import MultiProcessDataLoader
    from allennlp.data.samplers import BucketBatchSampler
    from allennlp.models import Model
    from allennlp.training.optimizers import Optimizer

    import lal_allennlp

    assert os.path.realpath(lal_allennlp.__file__).startswith(os.path.realpath(root)), (
        f"imported {lal_allennlp.__file__}, not the checkout {root}"
    )
    sys.path.insert(0, HERE)
    from gpu_speed import default_tokenizer_dir  # benchmarks/gpu_speed.py

    torch.set_num_threads(threads)
    random.seed(0), numpy.random.seed(0), torch.manual_seed(0)
    config = os.path.join(root, "training_config", "lal_minilm_cpu.jsonnet")
    ext_vars = {"MINILM_DIR": default_tokenizer_dir(), "TRAIN_PATH": "", "DEV_PATH": ""}
    params = Params.from_file(config, ext_vars=ext_vars)
    reader = DatasetReader.from_params(params.pop("dataset_reader"))
    vocab = Vocabulary.from_instances(reader.read(trees))
    loader = MultiProcessDataLoader(
        reader, trees, batch_sampler=BucketBatchSampler(batch_size=16, sorting_keys=["tokens"])
    )
    loader.index_with(vocab)
    data = [batch for _, batch in zip(range(batches + 2), loader)]
    model = Model.from_params(vocab=vocab, params=params.pop("model"))
    optimizer = Optimizer.from_params(
        model_parameters=list(model.named_parameters()),
        params=params.pop("trainer").pop("optimizer"),
    )
    model.train()

    def step(batch) -> float:
        optimizer.zero_grad()
        loss = model(**batch)["loss"]
        loss.backward()
        torch.nn.utils.clip_grad_norm_([p for p in model.parameters() if p.requires_grad], 5.0)
        optimizer.step()
        return loss.item()

    for batch in data[:2]:
        step(batch)
    start = time.perf_counter()
    losses = [step(batch) for batch in data[2:]]
    seconds = time.perf_counter() - start
    print(json.dumps({"ms_per_step": seconds / len(losses) * 1e3, "losses": losses}))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("checkouts", nargs=2, help="two repository roots: before, after")
    parser.add_argument("--trees", default=DEFAULT_TREES)
    parser.add_argument("--batches", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args.worker, args.trees, args.batches, args.threads)
        return

    roots = [os.path.abspath(root) for root in args.checkouts]
    times = {root: [] for root in roots}
    losses = {}
    for _ in range(args.rounds):
        for root in roots:
            env = dict(os.environ, PYTHONPATH=root, HF_HUB_OFFLINE="1")
            env["NUMBA_CACHE_DIR"] = os.path.join(root, ".numba_cache_benchmark")
            command = [sys.executable, os.path.abspath(__file__), *roots, "--worker", root,
                       "--trees", args.trees, "--batches", str(args.batches),
                       "--threads", str(args.threads)]
            result = subprocess.run(command, env=env, cwd=root, capture_output=True, text=True)
            if result.returncode != 0:
                sys.exit(f"worker for {root} failed:\n{result.stderr[-3000:]}")
            report = json.loads(result.stdout.strip().splitlines()[-1])
            times[root].append(report["ms_per_step"])
            losses[root] = report["losses"]
    before, after = (statistics.median(times[root]) for root in roots)
    print(f"{args.batches} training steps of lal_minilm_cpu (16 sentences each), "
          f"{args.rounds} rounds, {args.threads} threads")
    for root in roots:
        print(f"{root:40s} median {statistics.median(times[root]):7.1f} ms/step  "
              f"rounds {[round(t, 1) for t in times[root]]}")
    print(f"after / before speed: {before / after:.3f}x")
    # torch's multi-threaded CPU kernels are not bit-reproducible from run to run, so the
    # losses of two checkouts may part by rounding after some steps even for identical code.
    pairs = list(zip(losses[roots[0]], losses[roots[1]]))
    equal = next((k for k, (a, b) in enumerate(pairs) if a != b), len(pairs))
    largest = max(abs(a - b) / max(abs(a), 1e-12) for a, b in pairs)
    print(f"losses identical for the first {equal} of {len(pairs)} steps; "
          f"largest relative difference {largest:.1e}")


if __name__ == "__main__":
    main()
