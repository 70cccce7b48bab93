"""
The transformer's precision on this CPU, side by side in one run: training steps and parsing of
a span parser config with the transformer embedder's `precision` float32, bfloat16 and auto.

bfloat16 autocast pays only on CPUs with native bfloat16 arithmetic (AVX-512 BF16 or AMX);
elsewhere torch emulates it. This script says which kind of CPU it runs on and what `auto`
resolves to there, then times, on the same model weights and the same batches:

- training steps (forward, backward, gradient clipping, the config's optimizer step) on
  `--batches` batches of 16 training sentences (bucketed by length, as the config trains);
- parsing the first `--parse-sentences` dev sentences through the predictor from gold tokens,
  in batches of 32 similar-length sentences.

The precisions alternate round by round, so that a slower spell of the machine hits each; the
report gives the total time of each and the ratio to float32. The parser's weights are the
config's initial ones (random parser layers, pretrained MiniLM): the arithmetic, not the
accuracy, is measured.

    python benchmarks/precision_speed.py [--config training_config/lal_minilm_cpu_joint.jsonnet]
        [--train ../shared/data/ptb-sample/trees/wsj_0001-0019]
        [--dev ../shared/data/ptb-sample/trees/wsj_0160-0179] [--batches 6] [--rounds 2]
"""
import argparse

from config_timing import ConfigTiming, add_arguments  # benchmarks/config_timing.py

PRECISIONS = ("float32", "bfloat16", "auto")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_arguments(parser)
    args = parser.parse_args()

    import torch

    from lal_allennlp.modules.transformer_embedder import native_autocast_dtype
    from timing import load_average  # benchmarks/timing.py

    bench = ConfigTiming(args)
    native = native_autocast_dtype(torch.device("cpu"))
    print(f"CPU capability {torch.backends.cpu.get_cpu_capability()}; auto resolves to "
          f"{native or 'float32'}; {args.threads} threads; load {load_average()}")

    def setter(precision):
        def setup():
            bench.model.embedder_precision = precision

        return setup

    seconds = bench.alternate({p: setter(p) for p in PRECISIONS}, args.rounds)
    print(f"\n{bench.summary(args.rounds)}; load {load_average()}\n")
    print("| precision | training sentences/s | / float32 | parse sentences/s | / float32 |")
    print("|---|---:|---:|---:|---:|")
    train_rate = {p: bench.rates(seconds["train", p], "train", args.rounds) for p in PRECISIONS}
    parse_rate = {p: bench.rates(seconds["parse", p], "parse", args.rounds) for p in PRECISIONS}
    for p in PRECISIONS:
        name = f"auto ({native or 'float32'})" if p == "auto" else p
        print(f"| {name} | {train_rate[p]:.1f} | {train_rate[p] / train_rate['float32']:.2f}x "
              f"| {parse_rate[p]:.1f} | {parse_rate[p] / parse_rate['float32']:.2f}x |")


if __name__ == "__main__":
    main()
