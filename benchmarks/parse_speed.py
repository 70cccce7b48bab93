"""
Parse throughput of a trained model on a treebank's sentences, on this machine's CPU (model
loading excluded): sentences/second through the predictor, in batches, from gold tokens.
With `--explain`, the same sentences are parsed twice in one run, without and with label
attention explanations, and the ratio is reported (the cost of leaving explanations on).
With `--cast-weights`, passes alternate between the model's parse path and the same model with
its transformer's weights cast by autocast in every batch instead of cast once and kept
(`CastWeights`), for a model parsing in a lower `embedder_precision`: the gain of keeping them.
`--precision` overrides the archive's `embedder_precision`.

    python benchmarks/parse_speed.py runs/lal/model.tar.gz \
        ../shared/data/ptb-sample/trees/wsj_0160-0179 [--batch-size 32] [--explain] \
        [--cast-weights] [--precision bfloat16]
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
    parser.add_argument("--cast-weights", action="store_true")
    parser.add_argument("--precision", help="the span parsers' embedder_precision")
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args()
    if args.explain and args.cast_weights:
        parser.error("--explain and --cast-weights each compare two modes: give one")

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
    archive = load_archive(args.archive)
    model = archive.model
    if args.precision:
        from lal_allennlp.models.span_parser_base import set_embedder_precision

        set_embedder_precision(model, args.precision, args.archive)
    predictor = Predictor.from_archive(archive, "lal_parser")
    # Batches of similar length, as lal-parse makes them (the peers sort too).
    inputs = [{"tokens": words} for words in sorted(sentences, key=len)]
    predictor.predict_batch_json(inputs[: args.batch_size])  # warm-up (numba, allocations)

    from lal_allennlp.models.span_parser_base import transformer_embedders

    def plain_autocast(on: bool) -> None:
        """No kept weight copies when `on` (an empty set of them: the transformer's own
        weights, which autocast casts in every batch); the embedders' kept copies otherwise."""
        for embedder in transformer_embedders(model):
            if on:
                embedder._cast_weights.copies = lambda module, dtype: {}
            else:
                embedder._cast_weights.__dict__.pop("copies", None)

    if args.explain:
        column, modes = "explanations", {"off": False, "on": True}
    elif args.cast_weights:
        column, modes = "transformer weights", {"kept": False, "cast per batch": True}
    else:
        column, modes = "mode", {"parse": False}
    best = {name: float("inf") for name in modes}
    # The modes alternate pass by pass, so that a slower spell of the machine hits both.
    for _ in range(args.repeats):
        for name, switch in modes.items():
            batch_inputs = [dict(x, explain=switch and args.explain) for x in inputs]
            plain_autocast(switch and args.cast_weights)
            start = time.perf_counter()
            with torch.no_grad():
                for i in range(0, len(batch_inputs), args.batch_size):
                    predictor.predict_batch_json(batch_inputs[i : i + args.batch_size])
            best[name] = min(best[name], time.perf_counter() - start)
    plain_autocast(False)
    rates = {name: len(sentences) / seconds for name, seconds in best.items()}
    words = sum(len(s) for s in sentences)
    print(f"{len(sentences)} sentences, {words} words, batch size {args.batch_size}, "
          f"torch threads {torch.get_num_threads()}, embedder precision "
          f"{getattr(model, 'embedder_precision', 'n/a')}, best of {args.repeats}")
    print(f"| {column} | sentences/s |")
    print("|---|---|")
    for name, rate in rates.items():
        print(f"| {name} | {rate:.1f} |")
    if len(rates) == 2:
        (first, first_rate), (second, second_rate) = rates.items()
        print(f"{second} / {first} throughput: {second_rate / first_rate:.3f}")


if __name__ == "__main__":
    main()
