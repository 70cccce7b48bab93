"""
What confidences cost: whole-parse time of the same sentences with `confidence` off and on,
side by side in one run (alternating, so that the machine's drift hits both), as a ratio.

    python benchmarks/confidence_cost.py MODEL.tar.gz TREEBANK [--repeats 3] [--batch-size 32]

TREEBANK gives the sentences (its words; the trees are not read further). With confidences on,
a parse adds one inside pass and its backward pass over the span chart (span and joint
parsers), and the softmaxes of the heads and labels (joint parsers).
"""
import argparse
import statistics
import sys
import time


def main() -> int:
    from allennlp.models.archival import load_archive

    from lal_allennlp import Parser

    cli = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    cli.add_argument("archive")
    cli.add_argument("treebank")
    cli.add_argument("--repeats", type=int, default=3)
    cli.add_argument("--batch-size", type=int, default=32)
    args = cli.parse_args()

    reader = load_archive(args.archive).validation_dataset_reader
    sentences = [list(i["metadata"].metadata["words"]) for i in reader.read(args.treebank)]
    parser = Parser.load(args.archive, max_words=None)
    words = sum(len(s) for s in sentences)

    def run(confidence: bool) -> float:
        start = time.perf_counter()
        for result in parser.parse_many(sentences, batch_size=args.batch_size, confidence=confidence):
            assert result.error is None, result.error
        return time.perf_counter() - start

    run(True)  # warm-up: numba kernels, allocator
    times = {False: [], True: []}
    for _ in range(args.repeats):
        for confidence in (False, True):
            times[confidence].append(run(confidence))
    off, on = statistics.median(times[False]), statistics.median(times[True])
    print(
        f"{type(parser.model).__name__}, {len(sentences)} sentences ({words} words), batch "
        f"{args.batch_size}, median of {args.repeats}: confidence off {off:.2f} s "
        f"({len(sentences) / off:.1f} sent/s), on {on:.2f} s ({len(sentences) / on:.1f} sent/s), "
        f"on/off = {on / off:.3f}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
