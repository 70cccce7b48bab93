"""
`lal-parse MODEL_ARCHIVE [INPUT] [-o OUTPUT] [--format tree|conllu|json|svg|html]
[--confidence] [--kbest K] [--decode viterbi|mbr]`: parse raw
sentences, one per line, into one bracketed tree per line, or (joint span models, dependency
parsers) into CoNLL-U sentences, or into pictures of the trees (`lal_allennlp/drawing.py`; a
joint span model's pictures show its dependencies too): with `svg`, `-o` names a directory that
gets one `line-0001.svg` ... per parsed line (numbered by input line; a line that gives no tree
gets no file); with `html`, one self-contained page shows every line in input order, a line
that gives no tree shown with the reason. A dependency parser trained with POS input needs
tags, which raw lines do not have: such a model gets a message per line; parse with one trained
without POS input. `--format json` writes the predictor's JSON of each line; `--confidence`
adds the model's probabilities (in JSON its confidence keys, in CoNLL-U `HeadProb=` and
`DeprelProb=` in the MISC column and a `# sentence_confidence` comment); `--kbest K` adds the K
best parses to the JSON; `--decode mbr` gives a tree CRF's minimum Bayes risk trees.

Sentences are read from a file or stdin and parsed through `lal_allennlp.api.Parser` (the parse
path of every way in) in batches of similar length; a progress bar goes to stderr. Output line
k always belongs to input line k (in CoNLL-U, sentence k; a line that gives no tree gives a
comment-only sentence). A line that cannot be parsed gets a message on stderr naming the line,
what was wrong and what to do, and an empty output line; the other lines are parsed:

* a line that is not valid in the input encoding (`--encoding`, UTF-8 by default): the input
  is read as bytes and each line decoded on its own;
* a line holding a control character (NUL, the ESC of terminal colour codes, ...; tab is white
  space): rejected, not stripped (see `lal_allennlp/predictors/inputs.py`);
* a line longer than `--max-words` words, or one the model fails on (a batch with a failing
  sentence is parsed again one sentence at a time by the predictor, so only that sentence is
  lost).

Empty and white-space-only lines get a message and an empty output line too, but are not
failures. In trees, brackets in the text are written `-LRB-`/`-RRB-` (and `-LSB-`, `-LCB-` ...)
as in the Penn Treebank, so every output tree reads back with one leaf per word.

The output is UTF-8. Exit status: 0 when every non-blank line was parsed, 1 when at least one
was not (2 for a usage error).
"""
import argparse
import codecs
import io
import json
import os
import re
import sys
from typing import IO, Dict, Iterator, List, NamedTuple, Optional, Sequence, Union

from allennlp.common.checks import ConfigurationError
from tqdm import tqdm

from lal_allennlp.api import Parser, ParseResult
from lal_allennlp.models.span_parser_base import EMBEDDER_PRECISIONS
from lal_allennlp.predictors.checked import CheckedPredictor
from lal_allennlp.predictors.inputs import (
    DEFAULT_MAX_WORDS,
    MAX_KBEST,
    InputError,
    check_length,
    check_text,
    find_bad_character,
)

# Line breaks of the input: \r\n, \n or a lone \r (the universal newlines of text files).
_LINE_BREAK = re.compile(rb"\r\n|\r|\n")
# How the limit on sentence length is raised with lal-parse.
_RAISE_LIMIT = "raise --max-words (0: no limit)"
# A message of `parse_all_lines` about one line.
_LINE_MESSAGE = re.compile(r"line (\d+): (.*)")


class ParsedLines(NamedTuple):
    """What `parse_all_lines` gives back, one entry per input line in `outputs` and `texts`."""

    outputs: List[str]
    """The tree (or CoNLL-U sentence) of each line, `""` for a line that gave none."""
    texts: List[str]
    """Each line as one line of text (for `# text` comments): undecodable bytes and control
    characters shown as U+FFFD."""
    failed: List[int]
    """The 1-based numbers of the non-blank lines that could not be parsed."""
    results: List[Optional[ParseResult]]
    """The parse of each line (`None` for a line that gave none): what the pictures of
    `--format svg|html` are drawn from (tree, heads, dependency labels)."""


def split_lines(data: bytes) -> List[bytes]:
    """The lines of `data` without their line breaks (`\\r\\n`, `\\n` or `\\r`); a line break
    at the very end ends the last line rather than starting an empty one."""
    lines = _LINE_BREAK.split(data)
    if lines and not lines[-1]:
        lines.pop()
    return lines


def _decode(raw: bytes, number: int, encoding: str) -> str:
    """A line decoded from `encoding` (a UTF-8 byte order mark dropped from line 1), or an
    `InputError` naming the first bad byte."""
    codec = encoding
    if number == 1 and codecs.lookup(encoding).name == "utf-8":
        codec = "utf-8-sig"
    try:
        return raw.decode(codec)
    except UnicodeDecodeError as error:
        raise InputError(
            f"not valid {encoding} (byte 0x{raw[error.start]:02x} at byte {error.start + 1} of "
            "the line): fix or remove the line, or give the file's encoding with --encoding "
            "(e.g. --encoding latin-1)"
        ) from None


def _shown(line: Union[str, bytes], encoding: str) -> str:
    """The line as one line of text for the output (a CoNLL-U `# text` comment): what cannot
    be decoded, and control characters, become U+FFFD; what a reader could take for a line
    break (form feed, U+2028 ...) becomes a space."""
    text = line.decode(encoding, errors="replace") if isinstance(line, bytes) else line
    text = text.removeprefix("\ufeff")  # a byte order mark
    while True:
        bad = find_bad_character(text)
        if bad is None:
            return " ".join(text.splitlines()).strip()
        text = text[: bad[0]] + "\ufffd" + text[bad[0] + 1 :]


def parse_all_lines(
    parser: Union[Parser, CheckedPredictor],
    lines: Sequence[Union[str, bytes]],
    batch_size: int,
    errors: IO[str],
    progress: bool = True,
    output_key: str = "tree",
    pretokenized: bool = False,
    encoding: str = "utf-8",
    max_words: Optional[int] = DEFAULT_MAX_WORDS,
    confidence: bool = False,
    kbest: int = 1,
) -> ParsedLines:
    """
    Parses every line with `parser` (a `Parser`, or a predictor of the package, which is
    parsed through a `Parser` around it) and returns its output (see `ParsedLines`); a line
    that cannot be parsed gets a message on `errors` naming it (`line K: ...`) and the output
    `""`. `output_key`: `"tree"` (bracketed trees), `"conllu"` or `"json"` (the predictor's
    JSON of each parse, one line); a model that gives none (`Parser.capabilities`) is a
    `ValueError` before anything is parsed. `confidence` and `kbest` are `Parser.parse_many`'s;
    in CoNLL-U the confidences go into the MISC column (`HeadProb`, `DeprelProb`) and
    comments (`# sentence_confidence`, `# tree_probability`).

    Lines are `str`, or `bytes` decoded one by one from `encoding`. With `pretokenized`, a
    line's words are the runs of characters between white space, kept as written (pre-segmented
    Chinese); otherwise `ptb_tokenize` splits the line into Penn Treebank tokens. (The
    predictors of tree-producing models write brackets in words as `-LRB-`, `-RRB-` ..., so
    that their trees read back.) Sentences longer than `max_words` (`None`: no limit) are not
    parsed. All lines are tokenised first, then parsed by `Parser.parse_many` in batches of
    `batch_size` sentences of similar length (sorted by length, which keeps padding small); a
    sentence the model fails on is isolated by the predictor (see `predictors/checked.py`), so
    that only the failing sentences are lost.
    """
    from lal_allennlp.syntax.tokenizer import ptb_tokenize

    if not isinstance(parser, Parser):
        parser = Parser(parser)
    _check_output(parser, output_key)
    tokenize = str.split if pretokenized else ptb_tokenize
    failed: List[int] = []

    def fail(index: int, message: str) -> None:
        print(f"line {index + 1}: {message}", file=errors)
        failed.append(index + 1)

    tokens: List[Optional[List[str]]] = []
    for index, line in enumerate(lines):
        words: Optional[List[str]] = None
        try:
            text = _decode(line, index + 1, encoding) if isinstance(line, bytes) else line
            text = text.rstrip("\r\n")
            check_text(text, "the line")
            words = tokenize(text)
            if words:
                check_length(len(words), max_words, _RAISE_LIMIT)
            else:
                print(f"line {index + 1}: empty line, nothing to parse", file=errors)
                words = None
        except InputError as error:
            fail(index, str(error))
            words = None
        except Exception as error:  # a tokenizer failure must not stop the run
            fail(index, f"could not tokenize ({error}); skipped")
            words = None
        tokens.append(words)

    order = sorted((i for i, words in enumerate(tokens) if words), key=lambda i: len(tokens[i]))
    outputs: List[str] = [""] * len(lines)
    kept: List[Optional[ParseResult]] = [None] * len(lines)
    bar = tqdm(total=len(order), unit="sent", file=sys.stderr, disable=not progress)
    results = parser.parse_many(
        [{"tokens": tokens[i]} for i in order],
        batch_size=batch_size,
        confidence=confidence,
        kbest=kbest,
    )
    for i, result in zip(order, results):
        if result.error is not None:
            fail(i, f"could not parse ({result.reason})")
        else:
            if output_key == "json":
                output = json.dumps(result.to_json(), ensure_ascii=False)
            elif output_key == "conllu" and confidence:
                output = conllu_with_confidences(result)
            else:
                output = result.tree_string if output_key == "tree" else result.conllu
            assert output is not None  # the model gives it (`_check_output`)
            outputs[i] = output
            kept[i] = result
        bar.update(1)
    bar.close()
    texts = [_shown(line, encoding) for line in lines]
    return ParsedLines(outputs, texts, sorted(failed), kept)


def conllu_with_confidences(result: ParseResult) -> str:
    """The CoNLL-U sentence of `result` with its confidences: `HeadProb=` and `DeprelProb=` in
    each word's MISC column (added to what is there), and `# sentence_confidence` and
    `# tree_probability` comments before the words."""
    lines = result.to_conllu().rstrip("\n").split("\n")
    heads = result.head_confidences or []
    labels = result.dependency_label_confidences or []
    rows, word = [], 0
    for line in lines:
        columns = line.split("\t")
        if len(columns) == 10 and columns[0].isdigit():
            misc = [] if columns[9] == "_" else columns[9].split("|")
            if word < len(heads):
                misc.append(f"HeadProb={heads[word]:.4f}")
            if word < len(labels):
                misc.append(f"DeprelProb={labels[word]:.4f}")
            columns[9] = "|".join(misc) or "_"
            word += 1
        rows.append("\t".join(columns))
    comments = [
        f"# {key} = {value:.6g}"
        for key, value in (
            ("sentence_confidence", result.sentence_confidence),
            ("tree_probability", result.tree_probability),
        )
        if value is not None
    ]
    return "\n".join(comments + rows) + "\n\n"


def _check_output(parser: Parser, output_key: str) -> None:
    """A `ValueError` unless the model of `parser` gives `output_key` (`tree`, `conllu` or
    `json`, which every model gives)."""
    if output_key not in ("tree", "conllu", "json"):
        raise ValueError(f"output_key must be 'tree', 'conllu' or 'json', got {output_key!r}")
    capabilities = parser.capabilities
    if output_key == "tree" and not capabilities.trees:
        raise ValueError(
            f"the model ({type(parser.model).__name__}) gives no 'tree' output: it is a "
            "dependency parser; use --format conllu"
        )
    if output_key == "conllu" and not capabilities.heads:
        raise ValueError(
            f"the model ({type(parser.model).__name__}) gives no 'conllu' output (CoNLL-U needs "
            "a joint span model, lal_joint_parser, or a dependency parser)"
        )


def parse_lines(
    parser: Union[Parser, CheckedPredictor],
    lines: Sequence[Union[str, bytes]],
    batch_size: int,
    errors: IO[str],
    progress: bool = True,
    output_key: str = "tree",
    pretokenized: bool = False,
    encoding: str = "utf-8",
    max_words: Optional[int] = DEFAULT_MAX_WORDS,
) -> Iterator[str]:
    """Yields one output per input line (`""` for lines that could not be parsed): the tree,
    or with `output_key="conllu"` the CoNLL-U sentence (several lines, ending in a blank one).
    The outputs of `parse_all_lines`, which also says which lines failed."""
    yield from parse_all_lines(
        parser,
        lines,
        batch_size,
        errors,
        progress,
        output_key,
        pretokenized,
        encoding,
        max_words,
    ).outputs


class _Messages(io.TextIOBase):
    """A text stream that passes what is written on to `stream` (stderr) and keeps the
    messages about lines (`line K: ...`, as `parse_all_lines` writes them) by line number,
    for the page of `--format html`."""

    def __init__(self, stream: IO[str]) -> None:
        super().__init__()
        self.stream = stream
        self.by_line: Dict[int, str] = {}
        self._pending = ""

    def write(self, text: str) -> int:
        self.stream.write(text)
        self._pending += text
        *complete, self._pending = self._pending.split("\n")
        for message in complete:
            found = _LINE_MESSAGE.match(message)
            if found:
                self.by_line.setdefault(int(found.group(1)), found.group(2))
        return len(text)

    def flush(self) -> None:
        self.stream.flush()


def _picture(result: ParseResult) -> str:
    """The SVG of one line's parse: its tree, and its dependencies if it has them (joint span
    models)."""
    from lal_allennlp.drawing import tree_svg

    return tree_svg(
        result.tree,
        heads=result.heads,
        dependency_labels=result.dependency_labels if result.heads is not None else None,
    )


def _write_svgs(parsed: ParsedLines, directory: str) -> None:
    """One `line-NNNN.svg` per line that gave a tree into `directory` (made if missing),
    numbered by input line with at least four digits; lines that gave none get no file."""
    os.makedirs(directory, exist_ok=True)
    digits = max(4, len(str(len(parsed.results))))
    for number, result in enumerate(parsed.results, start=1):
        if result is not None:
            path = os.path.join(directory, f"line-{number:0{digits}d}.svg")
            with open(path, "w", encoding="utf-8") as target:
                target.write(_picture(result) + "\n")


def _html_page(parsed: ParsedLines, messages: Dict[int, str]) -> str:
    """One page with the picture of every line in input order; a line that gave no tree is
    shown with its message (why it was not parsed)."""
    from lal_allennlp.drawing import html_page

    svgs = [None if result is None else _picture(result) for result in parsed.results]
    titles = [f"{number}. {text}" for number, text in enumerate(parsed.texts, start=1)]
    notes = [
        None if svg is not None else messages.get(number, "not parsed")
        for number, svg in enumerate(svgs, start=1)
    ]
    return html_page(svgs, titles, notes, page_title="lal-parse")


def _ascii_compatible(encoding: str) -> bool:
    """Whether `encoding` writes line breaks as the ASCII bytes (so that lines can be split
    before decoding): UTF-8, Latin-1, cp1252, GB18030, Shift-JIS ... but not UTF-16."""
    try:
        return "\r\n".encode(encoding) == b"\r\n" and "a(".encode(encoding) == b"a("
    except (LookupError, UnicodeError):
        return False


def main(argv: Optional[Sequence[str]] = None) -> int:
    cli = argparse.ArgumentParser(
        prog="lal-parse",
        description="Parse raw sentences (one per line) into trees. A line that cannot be "
        "parsed gets a message on stderr naming it and an empty output line.",
        epilog="Exit status: 0 if every non-blank line was parsed, 1 if any was not, 2 for a "
        "usage error.",
    )
    cli.add_argument("archive", help="a model.tar.gz written by `allennlp train`")
    cli.add_argument("input", nargs="?", default="-", help="input file (default: stdin)")
    cli.add_argument("-o", "--output", default="-", help="output file (default: stdout)")
    cli.add_argument(
        "--format",
        choices=("tree", "conllu", "json", "svg", "html"),
        default="tree",
        help="one bracketed tree per line (default), or CoNLL-U (joint span models and "
        "dependency parsers); in CoNLL-U an unparsed line gives a sentence-less comment line. "
        "json: one JSON object per line, as the predictor gives it ({} for a line not parsed). "
        "svg: a picture per line, line-0001.svg ... in the directory -o (required); html: one "
        "page with the pictures of all lines (joint span models: with the dependencies)",
    )
    cli.add_argument("--batch-size", type=int, default=32)
    cli.add_argument(
        "--pretokenized",
        action="store_true",
        help="the words of a line are separated by white space and kept as written (e.g. "
        "pre-segmented Chinese; in trees, brackets are written -LRB-, -RRB-, ... so that the "
        "trees read back); by default lines are split into Penn Treebank tokens",
    )
    cli.add_argument(
        "--encoding",
        default="utf-8",
        help="the encoding of the input (default: utf-8); each line is decoded on its own, so "
        "a line that is not valid is reported and skipped. It must write line breaks as ASCII "
        "does (utf-8, latin-1, cp1252, gb18030, shift_jis ...; not utf-16)",
    )
    cli.add_argument(
        "--max-words",
        type=int,
        default=DEFAULT_MAX_WORDS,
        help="longer lines are reported and not parsed (default: %(default)s; 0: no limit); "
        "a chart parser's memory grows with the square of the length",
    )
    cli.add_argument("--cuda-device", type=int, default=-1)
    cli.add_argument(
        "--precision",
        choices=EMBEDDER_PRECISIONS,
        help="run a span parser's transformer in this precision (default: the archive's "
        "embedder_precision); bfloat16 is faster on CPUs with AVX-512 BF16 or AMX, slower "
        "elsewhere; auto picks it only where it is native",
    )
    cli.add_argument(
        "--confidence",
        action="store_true",
        help="also the model's probabilities: with --format json the predictor's confidence "
        "keys (span_confidences, head_confidences, ..., sentence_confidence); with --format "
        "conllu HeadProb= and DeprelProb= in the MISC column and a # sentence_confidence "
        "comment (models trained as a tree CRF, joint and dependency models)",
    )
    cli.add_argument(
        "--kbest",
        type=int,
        default=1,
        help="with --format json, also the K best parses of each line (key kbest; "
        "span CKY parsers and the transition parser)",
    )
    cli.add_argument(
        "--decode",
        choices=("viterbi", "mbr"),
        help="a constituency parser trained as a tree CRF: its best tree (viterbi, the "
        "default) or the minimum Bayes risk tree of its span marginals (mbr)",
    )
    cli.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    args = cli.parse_args(argv)
    if args.confidence and args.format not in ("json", "conllu"):
        cli.error("--confidence needs --format json or --format conllu (a bracketed tree has "
                  "no place for the numbers)")
    if args.kbest != 1 and args.format != "json":
        cli.error("--kbest needs --format json (one line holds the K parses)")
    if not 1 <= args.kbest <= MAX_KBEST:
        cli.error(f"--kbest must be from 1 to {MAX_KBEST}")
    if not _ascii_compatible(args.encoding):
        cli.error(
            f"--encoding {args.encoding}: unknown, or not an encoding that writes line breaks "
            "as ASCII does; convert the file to UTF-8 first (iconv -f ENCODING -t utf-8)"
        )
    if args.max_words < 0:
        cli.error("--max-words must be 0 (no limit) or more")
    if args.batch_size < 1:
        cli.error("--batch-size must be at least 1")
    max_words = args.max_words or None
    if args.format == "svg" and args.output == "-":
        cli.error("--format svg writes one file per line: give a directory with -o")
    if args.format == "svg" and os.path.exists(args.output) and not os.path.isdir(args.output):
        cli.error(f"-o {args.output}: --format svg needs a directory, and this is a file")

    try:
        overrides = {} if args.decode is None else {"model.span_decoding": args.decode}
        parser = Parser.load(
            args.archive, cuda_device=args.cuda_device, max_words=max_words, overrides=overrides
        )
    except (FileNotFoundError, ValueError) as error:
        cli.error(str(error))
    except ConfigurationError as error:
        cli.error(f"--decode {args.decode}: {error}")
    if args.confidence and not parser.capabilities.confidences:
        cli.error(
            f"--confidence: {args.archive} holds a {type(parser.model).__name__} that gives no "
            'confidences (they need a model trained with span_loss: "crf", or a joint or '
            "dependency model)"
        )
    if args.precision is not None:
        from lal_allennlp.models.span_parser_base import set_embedder_precision

        try:
            set_embedder_precision(parser.model, args.precision, args.archive)
        except ValueError as error:
            cli.error(f"--precision: {error}")
    model_name = type(parser.model).__name__
    if args.format not in ("conllu", "json") and not parser.capabilities.trees:
        cli.error(
            f"{args.archive} is a dependency parser ({model_name}): it gives no bracketed trees "
            f"to write as {args.format}; use --format conllu"
        )
    if args.format == "conllu" and not parser.capabilities.heads:
        cli.error(
            f"{args.archive} holds a {model_name}, which gives constituency trees only: CoNLL-U "
            "needs heads, from a joint span model (lal_joint_parser) or a dependency parser; "
            "use --format tree"
        )
    parser.predictor.raise_limit = _RAISE_LIMIT
    if args.input == "-":
        data = sys.stdin.buffer.read()
    else:
        try:
            with open(args.input, "rb") as source:
                data = source.read()
        except OSError as error:
            cli.error(f"cannot read the input {args.input}: {error.strerror}")
    lines = split_lines(data)
    messages = _Messages(sys.stderr)
    parsed = parse_all_lines(
        parser,
        lines,
        args.batch_size,
        messages,
        not args.no_progress,
        args.format if args.format in ("conllu", "json") else "tree",
        pretokenized=args.pretokenized,
        encoding=args.encoding,
        max_words=max_words,
        confidence=args.confidence,
        kbest=args.kbest,
    )
    if args.format == "svg":
        _write_svgs(parsed, args.output)
    else:
        if args.output == "-":
            target = sys.stdout
            if hasattr(target, "reconfigure"):
                # As the output file: UTF-8 whatever the locale.
                target.reconfigure(encoding="utf-8")
        else:
            target = open(args.output, "w", encoding="utf-8")
        try:
            if args.format == "html":
                target.write(_html_page(parsed, messages.by_line))
            for number, (output, text) in enumerate(zip(parsed.outputs, parsed.texts), start=1):
                if args.format == "conllu":
                    output = f"# sent_id = {number}\n# text = {text}\n" + (
                        output or "# not parsed\n"
                    )
                    target.write(output if output.endswith("\n\n") else output + "\n")
                elif args.format == "tree":
                    target.write(output + "\n")
                elif args.format == "json":
                    target.write((output or "{}") + "\n")
            target.flush()
        finally:
            if target is not sys.stdout:
                target.close()
    if parsed.failed:
        shown = ", ".join(map(str, parsed.failed[:10]))
        shown += ", ..." if len(parsed.failed) > 10 else ""
        print(
            f"{len(parsed.failed)} of {len(lines)} line(s) not parsed (line {shown}); see the "
            "messages above",
            file=sys.stderr,
        )
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
