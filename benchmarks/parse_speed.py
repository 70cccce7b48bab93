"""
Parse throughput of a trained model on a treebank's sentences, on this machine's CPU (model
loading excluded): sentences/second through the predictor, in batches, from gold tokens.
With `--explain`, the same sentences are parsed twice in one run, without and with label
attention explanations, and the ratio is reported (the cost of leaving explanations on).

    python benchmarks/parse_speed.py runs/lal/model.tar.gz \
        ../shared/data/ptb-sample/trees/wsj_0160-0179 [--batch-size 32] [--explain]
"""
import argparse
import os
import time

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("archive")
    parser.add_argument("treebank", help="a treebank path in any form the lal_ptb reader takes")
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--explain", action="store_true")
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args()

    import torch

    import lal_allennlp  # noqa: F401
    from allennlp.models.archival import load_archive
    from allennlp.predictors import Predictor

    from lal_allennlp.dataset_readers import resolve_treebank_paths
    from lal_allennlp.syntax.trees import normalise_tree, parse_trees
    from lal_allennlp.syntax.trees import tree_to_spans

    sentences = []
    for path in resolve_treebank_paths(args.treebank):
        with open(path, encoding="utf-8") as treebank:
            for tree, _ in parse_trees(treebank.read(), source=path):
                normalised = normalise_tree(tree)
                if normalised is not None:
                    sentences.append(tree_to_spans(normalised)[0])
    predictor = Predictor.from_archive(load_archive(args.archive), "lal_parser")
    modes = [False, True] if args.explain else [False]
    # Batches of similar length, as lal-parse makes them (the peers sort too).
    inputs = [{"tokens": words} for words in sorted(sentences, key=len)]
    predictor.predict_batch_json(inputs[: args.batch_size])  # warm-up (numba, allocations)

    rates = {}
    for explain in modes:
        batch_inputs = [dict(x, explain=explain) for x in inputs]
        best = float("inf")
        for _ in range(args.repeats):
            start = time.perf_counter()
            with torch.no_grad():
                for i in range(0, len(batch_inputs), args.batch_size):
                    predictor.predict_batch_json(batch_inputs[i : i + args.batch_size])
            best = min(best, time.perf_counter() - start)
        rates[explain] = len(sentences) / best
    words = sum(len(s) for s in sentences)
    print(f"{len(sentences)} sentences, {words} words, batch size {args.batch_size}, "
          f"torch threads {torch.get_num_threads()}, best of {args.repeats}")
    print("| explanations | sentences/s |")
    print("|---|---|")
    for explain, rate in rates.items():
        print(f"| {'on' if explain else 'off'} | {rate:.1f} |")
    if args.explain:
        print(f"explanations on / off throughput: {rates[True] / rates[False]:.3f}")


if __name__ == "__main__":
    main()
