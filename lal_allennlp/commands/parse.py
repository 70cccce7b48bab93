"""
`lal-parse MODEL_ARCHIVE [INPUT] [-o OUTPUT]`: parse raw sentences, one per line, into one
bracketed tree per line.

Sentences are read from a file or stdin and parsed in batches; a progress bar goes to
stderr. An empty or unparseable line gets a message on stderr naming the line and an empty
output line, so that output line k always belongs to input line k.
"""
import argparse
import sys
from typing import IO, Iterator, List, Optional, Sequence, Tuple

from tqdm import tqdm


def _batches(lines: Sequence[str], batch_size: int) -> Iterator[List[Tuple[int, str]]]:
    batch: List[Tuple[int, str]] = []
    for number, line in enumerate(lines, start=1):
        batch.append((number, line.rstrip("\n")))
        if len(batch) == batch_size:
            yield batch
            batch = []
    if batch:
        yield batch


def parse_lines(
    predictor, lines: Sequence[str], batch_size: int, errors: IO[str], progress: bool = True
) -> Iterator[str]:
    """Yields one output line per input line (`""` for lines that could not be parsed)."""
    from lal_allennlp.data.tokenizer import ptb_tokenize

    bar = tqdm(total=len(lines), unit="sent", file=sys.stderr, disable=not progress)
    for batch in _batches(lines, batch_size):
        outputs: List[Optional[str]] = [None] * len(batch)
        ready: List[Tuple[int, List[str]]] = []
        for position, (number, text) in enumerate(batch):
            try:
                tokens = ptb_tokenize(text)
            except Exception as error:  # a tokenizer failure must not stop the run
                print(f"line {number}: could not tokenize ({error}); skipped", file=errors)
                continue
            if not tokens:
                print(f"line {number}: empty line, nothing to parse", file=errors)
                continue
            ready.append((position, tokens))
        if ready:
            try:
                results = predictor.predict_batch_json([{"tokens": t} for _, t in ready])
            except Exception:
                # Find the culprit(s): parse one sentence at a time.
                results = []
                for position, tokens in ready:
                    try:
                        results.append(predictor.predict_json({"tokens": tokens}))
                    except Exception as error:
                        number = batch[position][0]
                        print(f"line {number}: could not parse ({error})", file=errors)
                        results.append(None)
            for (position, _), result in zip(ready, results):
                if result is not None:
                    outputs[position] = result["tree"]
        for output in outputs:
            yield output or ""
        bar.update(len(batch))
    bar.close()


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(
        prog="lal-parse", description="Parse raw sentences (one per line) into trees."
    )
    parser.add_argument("archive", help="a model.tar.gz written by `allennlp train`")
    parser.add_argument("input", nargs="?", default="-", help="input file (default: stdin)")
    parser.add_argument("-o", "--output", default="-", help="output file (default: stdout)")
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--cuda-device", type=int, default=-1)
    parser.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    args = parser.parse_args(argv)

    import lal_allennlp  # noqa: F401  (applies the shims, registers the models)
    from allennlp.models.archival import load_archive
    from allennlp.predictors import Predictor

    archive = load_archive(args.archive, cuda_device=args.cuda_device)
    predictor = Predictor.from_archive(archive, "lal_parser")
    source = sys.stdin if args.input == "-" else open(args.input, encoding="utf-8")
    with source:
        lines = source.readlines()
    target = sys.stdout if args.output == "-" else open(args.output, "w", encoding="utf-8")
    try:
        for line in parse_lines(predictor, lines, args.batch_size, sys.stderr, not args.no_progress):
            target.write(line + "\n")
            target.flush() if target is sys.stdout else None
    finally:
        if target is not sys.stdout:
            target.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
