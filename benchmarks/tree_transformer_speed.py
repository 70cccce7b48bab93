"""
Training steps of the Tree Transformer's CPU config, side by side in one run: float32 against
bfloat16 autocast (the config's `precision: 'auto'` on a CPU with AVX-512 BF16 or AMX), and
length-bucketed batches (what the config trains on: sentences of similar length together, so
that little of a batch is padding) against batches drawn in reading order.

The same initial weights, optimizer and batches for each setting; the settings take turns
round by round, so that a slower spell of the machine hits each. Reported: milliseconds per
step, steps per second relative to float32 with buckets, and the share of padded positions.

    python benchmarks/tree_transformer_speed.py [--threads 1] [--batches 8] [--rounds 2]
        [--config training_config/tree_transformer_lm_cpu.jsonnet]
        [--train ../shared/data/ptb-sample/trees/wsj_0001-0139]
"""
import argparse
import os
import sys
import time

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if REPO_ROOT not in sys.path:
    sys.path.insert(0, REPO_ROOT)
TREES = os.path.join(REPO_ROOT, "..", "shared", "data", "ptb-sample", "trees")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--config",
        default=os.path.join(REPO_ROOT, "training_config", "tree_transformer_lm_cpu.jsonnet"),
    )
    parser.add_argument("--train", default=os.path.join(TREES, "wsj_0001-0139"))
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--batches", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()

    import torch
    from allennlp.common import Params
    from allennlp.data import DatasetReader, Vocabulary
    from allennlp.data.data_loaders import MultiProcessDataLoader
    from allennlp.data.samplers import BucketBatchSampler
    from allennlp.models import Model

    import lal_allennlp  # noqa: F401  (registers the model and reader)
    from timing import load_average  # benchmarks/timing.py

    torch.set_num_threads(args.threads)
    params = Params.from_file(
        args.config, ext_vars={"TRAIN_PATHS": args.train, "DEV_PATH": args.train}
    )
    reader = DatasetReader.from_params(params.pop("dataset_reader"))
    vocab = Vocabulary.from_instances(reader.read(args.train), min_count={"tokens": 2})
    batch_size = params["data_loader"]["batch_sampler"]["batch_size"]
    batches, padding = {}, {}
    for name in ("buckets", "reading order"):
        torch.manual_seed(0)
        if name == "buckets":
            sampler = BucketBatchSampler(batch_size=batch_size, sorting_keys=["tokens"])
            loader = MultiProcessDataLoader(reader, args.train, batch_sampler=sampler)
        else:
            loader = MultiProcessDataLoader(reader, args.train, batch_size=batch_size)
        loader.index_with(vocab)
        batches[name] = [batch for _, batch in zip(range(args.batches), loader)]
        ids = [batch["tokens"]["tokens"]["tokens"] for batch in batches[name]]
        padding[name] = sum((t == 0).sum().item() for t in ids) / sum(t.numel() for t in ids)
    model_params = params.pop("model")
    torch.manual_seed(0)
    initial = Model.from_params(vocab=vocab, params=model_params.duplicate()).state_dict()

    settings = [
        ("float32", "buckets"), ("bfloat16", "buckets"),
        ("float32", "reading order"), ("bfloat16", "reading order"),
    ]
    seconds = {setting: 0.0 for setting in settings}
    sentences = {name: sum(len(b["metadata"]) for b in batches[name]) for name in batches}
    for _ in range(args.rounds):
        for precision, sampling in settings:
            model = Model.from_params(vocab=vocab, params=model_params.duplicate())
            model.load_state_dict(initial)
            model.precision, model._autocast_dtypes = precision, {}
            model.train()
            optimizer = torch.optim.Adam(model.parameters(), lr=5e-4, betas=(0.9, 0.98))
            # One step first: allocations and oneDNN's kernel choice are not timed.
            model(**batches[sampling][0])["loss"].backward()
            optimizer.zero_grad()
            start = time.perf_counter()
            for batch in batches[sampling]:
                model(**batch)["loss"].backward()
                torch.nn.utils.clip_grad_norm_(model.parameters(), 1.5)
                optimizer.step()
                optimizer.zero_grad()
            seconds[precision, sampling] += time.perf_counter() - start

    print(f"CPU capability {torch.backends.cpu.get_cpu_capability()}; {args.threads} thread(s); "
          f"{args.batches} batches of {batch_size} x {args.rounds} rounds; load {load_average()}\n")
    print("| precision | batches | padded positions | ms per step | sentences/s | "
          "/ float32, buckets |")
    print("|---|---|---:|---:|---:|---:|")
    base = sentences["buckets"] * args.rounds / seconds["float32", "buckets"]
    for precision, sampling in settings:
        steps = args.batches * args.rounds
        rate = sentences[sampling] * args.rounds / seconds[precision, sampling]
        print(f"| {precision} | {sampling} | {100 * padding[sampling]:.0f} % | "
              f"{1000 * seconds[precision, sampling] / steps:.0f} | {rate:.0f} | "
              f"{rate / base:.2f}x |")


if __name__ == "__main__":
    main()
