"""
`lal-parse MODEL_ARCHIVE [INPUT] [-o OUTPUT] [--format tree|conllu]`: parse raw sentences, one
per line, into one bracketed tree per line, or (joint span models, dependency parsers) into
CoNLL-U sentences. A dependency parser trained with POS input needs tags, which raw lines do not
have: such a model gets a message per line; parse with one trained without POS input.

Sentences are read from a file or stdin and parsed in batches of similar length; a
progress bar goes to stderr. An empty or unparseable line gets a message on stderr naming the line and an empty
output line, so that output line k always belongs to input line k.
"""
import argparse
import sys
from typing import IO, Iterator, List, Optional, Sequence

from tqdm import tqdm


def parse_lines(
    predictor,
    lines: Sequence[str],
    batch_size: int,
    errors: IO[str],
    progress: bool = True,
    output_key: str = "tree",
    pretokenized: bool = False,
) -> Iterator[str]:
    """Yields one output per input line (`""` for lines that could not be parsed): the tree,
    or with `output_key="conllu"` the CoNLL-U sentence (several lines, ending in a blank one).

    With `pretokenized`, a line's words are the runs of characters between white space, kept
    exactly as written (pre-segmented Chinese); otherwise `ptb_tokenize` splits the line into
    Penn Treebank tokens. All lines are tokenised first, then parsed in batches of sentences
    of similar length (sorted by length, which keeps padding small), and the trees are given
    back in input order.
    """
    from lal_allennlp.syntax.tokenizer import ptb_tokenize

    tokenize = str.split if pretokenized else ptb_tokenize

    tokens: List[Optional[List[str]]] = []
    for number, line in enumerate(lines, start=1):
        text = line.rstrip("\n")
        try:
            words = tokenize(text)
        except Exception as error:  # a tokenizer failure must not stop the run
            print(f"line {number}: could not tokenize ({error}); skipped", file=errors)
            words = None
        else:
            if not words:
                print(f"line {number}: empty line, nothing to parse", file=errors)
                words = None
        tokens.append(words)

    order = sorted((i for i, words in enumerate(tokens) if words), key=lambda i: len(tokens[i]))
    trees: List[str] = [""] * len(lines)
    bar = tqdm(total=len(order), unit="sent", file=sys.stderr, disable=not progress)
    for start in range(0, len(order), batch_size):
        batch = order[start : start + batch_size]
        try:
            results = predictor.predict_batch_json([{"tokens": tokens[i]} for i in batch])
        except Exception:
            # Find the culprit(s): parse one sentence at a time.
            results = []
            for i in batch:
                try:
                    results.append(predictor.predict_json({"tokens": tokens[i]}))
                except Exception as error:
                    print(f"line {i + 1}: could not parse ({error})", file=errors)
                    results.append(None)
        for i, result in zip(batch, results):
            if result is not None:
                if output_key not in result:
                    raise ValueError(
                        f"the model gives no {output_key!r} output (CoNLL-U needs a joint span "
                        "model, lal_joint_parser)"
                    )
                trees[i] = result[output_key]
        bar.update(len(batch))
    bar.close()
    yield from trees


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(
        prog="lal-parse", description="Parse raw sentences (one per line) into trees."
    )
    parser.add_argument("archive", help="a model.tar.gz written by `allennlp train`")
    parser.add_argument("input", nargs="?", default="-", help="input file (default: stdin)")
    parser.add_argument("-o", "--output", default="-", help="output file (default: stdout)")
    parser.add_argument(
        "--format",
        choices=("tree", "conllu"),
        default="tree",
        help="one bracketed tree per line (default), or CoNLL-U (joint span models and "
        "dependency parsers); in CoNLL-U an unparsed line gives a sentence-less comment line",
    )
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument(
        "--pretokenized",
        action="store_true",
        help="the words of a line are separated by white space and kept exactly as written "
        "(e.g. pre-segmented Chinese); by default lines are split into Penn Treebank tokens",
    )
    parser.add_argument("--cuda-device", type=int, default=-1)
    parser.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    args = parser.parse_args(argv)

    import lal_allennlp  # noqa: F401  (applies the shims, registers the models)
    from allennlp.models.archival import load_archive
    from allennlp.predictors import Predictor

    from lal_allennlp.predictors import DependencyParserPredictor

    archive = load_archive(args.archive, cuda_device=args.cuda_device)
    predictor = Predictor.from_archive(archive)
    if args.format == "tree" and isinstance(predictor, DependencyParserPredictor):
        parser.error(
            f"{args.archive} is a dependency parser ({type(archive.model).__name__}): it gives "
            "no bracketed trees; use --format conllu"
        )
    source = sys.stdin if args.input == "-" else open(args.input, encoding="utf-8")
    with source:
        lines = source.readlines()
    target = sys.stdout if args.output == "-" else open(args.output, "w", encoding="utf-8")
    try:
        outputs = parse_lines(
            predictor,
            lines,
            args.batch_size,
            sys.stderr,
            not args.no_progress,
            args.format,
            pretokenized=args.pretokenized,
        )
        for number, line in enumerate(outputs, start=1):
            if args.format == "conllu":
                text = lines[number - 1].strip()
                line = f"# sent_id = {number}\n# text = {text}\n" + (line or "# not parsed\n")
                target.write(line if line.endswith("\n\n") else line + "\n")
            else:
                target.write(line + "\n")
            target.flush() if target is sys.stdout else None
    finally:
        if target is not sys.stdout:
            target.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
