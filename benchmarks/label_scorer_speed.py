"""
The joint parser's dependency label scorer, side by side in one run: `torch.einsum` and torch's
`bilinear` kernel (the two implementations before) against the scorer's single matrix product
of outer products (`_PairLabelScorer`; the same formula and weights).

With one label per dependency label of the training set (the WSJ sample's `P_M` labels: 378
on wsj_0001-0159), the biaffine label scores are the largest product of a joint parse. Timed on
the joint config (`training_config/lal_minilm_cpu_joint.jsonnet`, its initial weights, the
vocabulary of `--train`):

- the scorer alone on `--pairs` random (dependent, head) pairs of the config's label MLP size:
  forward (as in parsing) and forward + backward (as in training), median of `--repeats`;
- whole training steps and whole parses of the config (`config_timing.py`), with the model's
  scorer running one way or the other; the two alternate round by round.

    python benchmarks/label_scorer_speed.py [--train ../shared/data/ptb-sample/trees/wsj_0001-0159]
        [--batches 6] [--rounds 2] [--pairs 960] [--repeats 20]
"""
import argparse
import statistics
import time
import types

from config_timing import TREES, ConfigTiming, add_arguments  # benchmarks/config_timing.py


def _with_ones(dependents, heads):
    import torch

    ones = dependents.new_ones(dependents.shape[:-1] + (1,))
    return torch.cat([dependents, ones], -1), torch.cat([heads, ones], -1)


def einsum_forward(scorer, dependents, heads):
    """The scorer's formula by `torch.einsum` (the first implementation)."""
    import torch

    dependents, heads = _with_ones(dependents, heads)
    return torch.einsum("...i,lij,...j->...l", dependents, scorer.weight, heads)


def bilinear_forward(scorer, dependents, heads):
    """The scorer's formula by torch's `bilinear` kernel (the implementation before)."""
    import torch

    dependents, heads = _with_ones(dependents, heads)
    return torch.nn.functional.bilinear(dependents, heads, scorer.weight)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_arguments(parser)
    parser.set_defaults(train=f"{TREES}/wsj_0001-0159")
    parser.add_argument("--pairs", type=int, default=960)
    parser.add_argument("--repeats", type=int, default=20)
    args = parser.parse_args()

    import torch

    from timing import load_average  # benchmarks/timing.py

    bench = ConfigTiming(args)
    scorer = bench.model.label_scorer
    num_labels, dim = scorer.weight.shape[0], scorer.weight.shape[1] - 1
    ways = {
        "torch einsum": types.MethodType(einsum_forward, scorer),
        "torch bilinear": types.MethodType(bilinear_forward, scorer),
        "outer products x weights (ours)": scorer.forward,
    }
    print(f"{bench.config}: {num_labels} dependency labels, label MLP size {dim}; "
          f"{args.threads} threads; load {load_average()}\n")

    # The scorer alone.
    dependents = torch.randn(args.pairs, dim, requires_grad=True)
    heads = torch.randn(args.pairs, dim, requires_grad=True)
    with torch.no_grad():
        scores = [forward(dependents, heads) for forward in ways.values()]
        same = all(torch.allclose(scores[0], other, rtol=1e-4, atol=1e-3) for other in scores)
    alone = {}
    for name, forward in ways.items():
        times = {"forward": [], "forward + backward": []}
        for _ in range(args.repeats + 2):
            start = time.perf_counter()
            with torch.no_grad():
                forward(dependents, heads)
            times["forward"].append(time.perf_counter() - start)
            start = time.perf_counter()
            forward(dependents, heads).sum().backward()
            times["forward + backward"].append(time.perf_counter() - start)
        alone[name] = {k: statistics.median(v[2:]) for k, v in times.items()}
    print(f"The scorer alone, {args.pairs} pairs (median of {args.repeats}; same scores: {same}):\n")
    print("| scorer | forward (ms) | forward + backward (ms) |")
    print("|---|---:|---:|")
    for name, t in alone.items():
        print(f"| {name} | {1000 * t['forward']:.1f} | {1000 * t['forward + backward']:.1f} |")

    # Whole training steps and parses.
    def setter(forward):
        def setup():
            scorer.forward = forward

        return setup

    seconds = bench.alternate({name: setter(f) for name, f in ways.items()}, args.rounds)
    print(f"\nThe whole config: {bench.summary(args.rounds)}; load {load_average()}\n")
    print("| scorer | training sentences/s | parse sentences/s |")
    print("|---|---:|---:|")
    for name in ways:
        train_rate = bench.rates(seconds["train", name], "train", args.rounds)
        parse_rate = bench.rates(seconds["parse", name], "parse", args.rounds)
        print(f"| {name} | {train_rate:.1f} | {parse_rate:.1f} |")
    ours = list(ways)[-1]
    for base in list(ways)[:-1]:
        print(f"\nours / {base}: training "
              f"{seconds['train', base] / seconds['train', ours]:.2f}x, parsing "
              f"{seconds['parse', base] / seconds['parse', ours]:.2f}x")


if __name__ == "__main__":
    main()
