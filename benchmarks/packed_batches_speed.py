"""
Parsing with the transformer run on the real word pieces only (the packing of the
``lal_transformer`` embedder, ``WordPieceTransformer.packs``) against the padded forward, in one
process, alternating.

Parses gold-token sentences (one bracketed tree per line, e.g. ``benchmarks/peers_accuracy.py``'s
``WORK_DIR/data/dev.trees``) through the predictor as ``benchmarks/peers_worker.py parse-ours``
does (batches of 32 similar-length sentences, a warm-up batch first), ``--passes`` times each
way, packed and padded in turn; the trees of every packed pass must equal those of the padded
pass before it. Reports the median pass of each way and of its time in the text field embedder
(the transformer), the ratios, and the share of the batches' word piece positions that are
padding.

    python benchmarks/packed_batches_speed.py runs/joint_posw20/model.tar.gz \\
        runs/peers_e2e_avx2/data/dev.trees
"""
import argparse
import os
import statistics
import sys
import time
from typing import List

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("archive")
    parser.add_argument("gold", help="gold trees, one per line")
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--passes", type=int, default=5)
    args = parser.parse_args()

    from peers_worker import WARM_UP, _by_length, load_ours

    predictor, sentences, inputs = load_ours(args.archive, args.gold)
    import torch

    from lal_allennlp.modules.transformer_embedder import WordPieceTransformer

    batches = _by_length(sentences, args.batch_size)
    positions = [0, 0]  # word piece positions of the padded batches, and the real ones

    real_packs = WordPieceTransformer.packs

    def counting_packs(embedder, token_ids, mask, type_ids):  # type: ignore[no-untyped-def]
        positions[0] += mask.numel()
        positions[1] += int(mask.sum())
        return real_packs(embedder, token_ids, mask, type_ids)

    def parse(packed: bool) -> List[str]:
        WordPieceTransformer.packs = real_packs if packed else (lambda *arguments: False)
        trees = [""] * len(sentences)
        for batch in batches:
            outputs = predictor.predict_batch_json([inputs[i] for i in batch])
            for i, output in zip(batch, outputs):
                trees[i] = output["tree"]
        return trees

    embedder = predictor._model.text_field_embedder
    embed = embedder.forward
    embedding = [0.0]

    def timed_embed(*arguments, **keywords):  # type: ignore[no-untyped-def]
        start = time.perf_counter()
        try:
            return embed(*arguments, **keywords)
        finally:
            embedding[0] += time.perf_counter() - start

    embedder.forward = timed_embed
    times = {"padded": [], "packed": []}
    embedder_times = {"padded": [], "packed": []}
    with torch.no_grad():
        predictor.predict_batch_json(inputs[:WARM_UP])
        WordPieceTransformer.packs = counting_packs
        for batch in batches:
            predictor.predict_batch_json([inputs[i] for i in batch])
        for _ in range(args.passes):
            for way in ("padded", "packed"):
                embedding[0] = 0.0
                start = time.perf_counter()
                trees = parse(way == "packed")
                times[way].append(time.perf_counter() - start)
                embedder_times[way].append(embedding[0])
                if way == "padded":
                    expected = trees
                elif trees != expected:
                    raise AssertionError("the packed pass gave other trees than the padded one")
    WordPieceTransformer.packs = real_packs
    padded, packed = (statistics.median(times[way]) for way in ("padded", "packed"))
    padded_embedder, packed_embedder = (
        statistics.median(embedder_times[way]) for way in ("padded", "packed")
    )
    print(
        f"{args.archive}, {len(sentences)} sentences in batches of {args.batch_size}: "
        f"{100 * (1 - positions[1] / positions[0]):.0f} % of the word piece positions are padding"
    )
    for way in ("padded", "packed"):
        print(f"{way}: " + ", ".join(f"{t:.3f}" for t in times[way]) + " s per pass")
    print(
        f"median pass: padded {padded:.3f} s, packed {packed:.3f} s, padded / packed "
        f"{padded / packed:.2f}x; trees identical"
    )
    print(
        f"median time in the embedder: padded {padded_embedder:.3f} s, packed "
        f"{packed_embedder:.3f} s, padded / packed {padded_embedder / packed_embedder:.2f}x"
    )


if __name__ == "__main__":
    main()
