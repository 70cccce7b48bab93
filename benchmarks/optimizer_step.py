"""
One optimizer step of the CPU LAL parser, AllenNLP's `adamw` against this package's
`fused_adamw`, side by side in one run: the parser is built from
`training_config/lal_minilm_cpu.jsonnet` (MiniLM's first 4 layers + the LAL stack, 22.6 M
trained parameters, the config's parameter groups), every parameter gets the same random gradient,
and each optimizer's `step()` is timed (median of `--repeats` after warm-up steps). Both
start from the same weights; the largest difference between their weights after the timed
steps is printed as a check that they compute the same update.

    python benchmarks/optimizer_step.py [--threads 2] [--repeats 20]
"""
import argparse
import copy
import os
import sys

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if REPO_ROOT not in sys.path:
    sys.path.insert(0, REPO_ROOT)

CONFIG = os.path.join(REPO_ROOT, "training_config", "lal_minilm_cpu.jsonnet")
FIXTURE_TREES = os.path.join(REPO_ROOT, "fixtures", "ptb", "train")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=20)
    args = parser.parse_args()

    import torch
    from allennlp.common import Params
    from allennlp.data import DatasetReader, Vocabulary
    from allennlp.models import Model
    from allennlp.training.optimizers import Optimizer

    import lal_allennlp  # noqa: F401
    from gpu_speed import default_tokenizer_dir  # benchmarks/gpu_speed.py
    from timing import load_average, timed  # benchmarks/timing.py

    torch.set_num_threads(args.threads)
    ext_vars = {"MINILM_DIR": default_tokenizer_dir(), "TRAIN_PATH": "", "DEV_PATH": ""}
    params = Params.from_file(CONFIG, ext_vars=ext_vars)
    reader = DatasetReader.from_params(params.pop("dataset_reader"))
    vocab = Vocabulary.from_instances(reader.read(FIXTURE_TREES))
    model = Model.from_params(vocab=vocab, params=params.pop("model"))
    optimizer_params = params["trainer"]["optimizer"].as_dict()
    n_parameters = sum(p.numel() for p in model.parameters() if p.requires_grad)

    generator = torch.Generator().manual_seed(0)
    gradients = [torch.randn(p.shape, generator=generator) for p in model.parameters()]
    results = {}
    final_weights = {}
    for name in ("adamw", "fused_adamw"):
        copy_ = copy.deepcopy(model)
        for parameter, gradient in zip(copy_.parameters(), gradients):
            parameter.grad = gradient.clone()
        optimizer = Optimizer.from_params(
            model_parameters=list(copy_.named_parameters()),
            params=Params({**copy.deepcopy(optimizer_params), "type": name}),
        )
        for _ in range(3):
            optimizer.step()
        results[name] = timed(optimizer.step, args.repeats)
        final_weights[name] = [p.detach() for p in copy_.parameters()]
    difference = max(
        (a - b).abs().max().item() for a, b in zip(final_weights["adamw"], final_weights["fused_adamw"])
    )
    print(f"{n_parameters / 1e6:.1f} M trained parameters, {args.threads} threads, load {load_average()}")
    for name, seconds in results.items():
        print(f"{name:12s} {seconds * 1000:8.1f} ms/step")
    print(f"fused_adamw is {results['adamw'] / results['fused_adamw']:.1f}x faster")
    print(f"largest weight difference after {args.repeats + 3} steps: {difference:.2e}")


if __name__ == "__main__":
    main()
