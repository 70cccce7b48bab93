"""
Dependency treebank files (no AllenNLP, no torch): reading CoNLL-X, CoNLL-U and Malt-TAB,
writing CoNLL-X and CoNLL-U, and aligning dependency sentences with the trees of a
constituency treebank.

The joint span parser of Zhou & Zhao (2019, section 3) and Mrini et al. (2020) is trained on a
constituency tree and a dependency tree of the same words. For the Penn Treebank the papers use
Stanford basic dependencies made from the trees with the Stanford parser's converter; this
module only reads what such a converter wrote:

* **CoNLL-X** (10 tab-separated columns: `ID FORM LEMMA CPOSTAG POSTAG FEATS HEAD DEPREL PHEAD
  PDEPREL`), one blank line between sentences;
* **CoNLL-U** (10 columns: `ID FORM LEMMA UPOS XPOS FEATS HEAD DEPREL DEPS MISC`): `#` comment
  lines, multi-word token lines (`3-4`) and empty nodes (`5.1`) are skipped;
* **Malt-TAB** (3 or 4 columns: `word POS head [label]`), as in the NLTK dependency treebank
  (`deps/*.dp` of the WSJ sample, `docs/data.md`).

The format is detected per file from its first token line. The POS tag is the fine-grained
column (POSTAG / XPOS) unless it is `_`, then the coarse one (CPOSTAG / UPOS); with
`coarse_tags` the other way round. A label `_` means "no label"; a sentence whose labels are all
missing gets `labels=None`.

A malformed sentence is reported with its file, its 1-based number in the file and its line;
`read_dependencies` raises, or with `on_error` reports it and goes on with the next sentence.
Besides the columns, three checks catch sentences that are cut short or merged, which could
otherwise still form a valid tree: a CoNLL-U sentence must spell its `# text =` comment (white
space aside); a CoNLL sentence followed by a block whose IDs do not start at 1 was probably cut
in two by the blank line between them (so each sentence is yielded only once the next block's
first line has been seen); and the last line of a file must end with a line break (a file that
does not was probably cut in the middle of that line).
"""

import os
import re
from dataclasses import dataclass, field
from typing import Callable, Iterator, List, Optional, Sequence, Tuple, Union

from lal_allennlp.syntax.paths import resolve_paths
from lal_allennlp.syntax.trees import BAD_CHARACTER_RE, TreebankFormatError, bad_character_problem
from lal_allennlp.syntax.trees import decode_treebank

# Files read from a directory or a file-id range.
DEPENDENCY_SUFFIXES = (".dp", ".conll", ".conllx", ".conllu", ".malt", ".tab", ".txt")
# CoNLL-U IDs that are not words: multi-word tokens `3-4` and empty nodes `5.1`.
_NON_WORD_ID_RE = re.compile(r"^\d+(-\d+|\.\d+)$")
# A multi-word token's range `3-4`.
_RANGE_ID_RE = re.compile(r"^(\d+)-(\d+)$")
# IDs and heads: ASCII digits only (`int` would also take "+3", " 3", "3_0" and other scripts'
# digits, which a byte error can make).
_NUMBER_RE = re.compile(r"[0-9]+")
# The CoNLL-U comment with the sentence's text.
_TEXT_COMMENT_RE = re.compile(r"^#\s*text\s*=(.*)$")
# Bracket escapes of the Penn Treebank: a tree word and a dependency word match if they are equal
# or one is the escape of the other (converters differ on whether they unescape brackets).
_PTB_ESCAPES = {
    "-LRB-": "(",
    "-RRB-": ")",
    "-LCB-": "{",
    "-RCB-": "}",
    "-LSB-": "[",
    "-RSB-": "]",
}

CONLL = "conll"
MALT_TAB = "malt-tab"


class DependencyFormatError(TreebankFormatError):
    """
    A dependency file could not be read, or does not fit its treebank. A `TreebankFormatError`
    (so a reader's `on_error` handling covers it) whose message names the file and the 1-based
    line, says what was wrong and what to do.
    """


class DependencyMismatchError(DependencyFormatError):
    """
    A dependency sentence does not have the words of the tree it is aligned with. Besides the
    file and line of the dependency sentence, it carries `sentence_number` (1-based, within the
    dependency file) and `token` (1-based position of the first differing token).
    """

    def __init__(
        self,
        source: str,
        line: Optional[int],
        problem: str,
        advice: str = "",
        sentence_number: Optional[int] = None,
        token: Optional[int] = None,
    ) -> None:
        super().__init__(source, line, problem, advice)
        self.sentence_number = sentence_number
        self.token = token

    def __reduce__(self):  # type: ignore[no-untyped-def]
        arguments = (self.source, self.line, self.problem, self.advice)
        return (self.__class__, arguments + (self.sentence_number, self.token))


class DependencyPathError(FileNotFoundError):
    """A dependency path names no file."""


@dataclass
class DependencySentence:
    """
    One sentence of a dependency treebank.

    # Parameters

    words : `List[str]`
    tags : `List[str]`
        One POS tag per word.
    heads : `List[int]`
        `heads[i]` is the head of word `i + 1`: 1-based, 0 for the root.
    labels : `Optional[List[str]]`, optional (default = `None`)
        One dependency label per word, or `None` if the file has none (Malt-TAB with three
        columns, or `_` everywhere).
    source : `Optional[str]`, optional (default = `None`)
        The file it was read from (not compared by `==`).
    line : `Optional[int]`, optional (default = `None`)
        The 1-based line of its first token (not compared by `==`).
    number : `Optional[int]`, optional (default = `None`)
        Its 1-based position in `source` (not compared by `==`).
    """

    words: List[str]
    tags: List[str]
    heads: List[int]
    labels: Optional[List[str]] = None
    source: Optional[str] = field(default=None, compare=False, repr=False)
    line: Optional[int] = field(default=None, compare=False, repr=False)
    number: Optional[int] = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        n = len(self.words)
        if len(self.tags) != n or len(self.heads) != n:
            raise ValueError(
                f"{n} words, {len(self.tags)} tags and {len(self.heads)} heads; one each per word"
            )
        if self.labels is not None and len(self.labels) != n:
            raise ValueError(f"{n} words but {len(self.labels)} dependency labels")


# ----------------------------------------------------------------------------------------------
# Paths
# ----------------------------------------------------------------------------------------------


def resolve_dependency_paths(file_path: Union[str, "os.PathLike[str]"]) -> List[str]:
    """
    Turns a dependency path into the sorted list of files it names, by the rules of
    `paths.resolve_paths` with the suffixes `DEPENDENCY_SUFFIXES`: an existing file (any
    name); a directory (its `*.dp`, `*.conll`, `*.conllx`, `*.conllu`, `*.malt`, `*.tab` and
    `*.txt` files, sub-folders included, sorted by relative path); a glob; a file-id range
    `DIR/wsj_0001-0159`.

    # Raises

    `DependencyPathError` (a `FileNotFoundError`) naming the path and what was tried.
    """
    return resolve_paths(file_path, DEPENDENCY_SUFFIXES, "dependency", DependencyPathError)


# ----------------------------------------------------------------------------------------------
# Reading
# ----------------------------------------------------------------------------------------------


def _fields(line: str) -> List[str]:
    fields = line.split("\t")
    if len(fields) == 1:
        fields = line.split()
    return fields


def _line_format(fields: List[str]) -> Optional[str]:
    """`CONLL` or `MALT_TAB` if a token line with these columns fits the format, else `None`."""
    if len(fields) == 10 and _NUMBER_RE.match(fields[0]):
        return CONLL
    if len(fields) in (3, 4) and _NUMBER_RE.fullmatch(fields[2]):
        return MALT_TAB
    return None


def _detect_format(source: str, lines: List[str]) -> Optional[str]:
    """
    `CONLL` or `MALT_TAB` from the first token line that fits one of them (a malformed line
    before it is reported in its sentence, not taken for the file's format); `None` for a file
    without token lines.
    """
    first: Optional[Tuple[int, int]] = None  # line and column count of the first token line
    for number, line in enumerate(lines, 1):
        line = line.rstrip("\r")
        if not line.strip():
            continue
        if line.startswith("#") and "\t" not in line:
            continue  # a CoNLL-U comment
        fields = _fields(line)
        file_format = _line_format(fields)
        if file_format is not None:
            return file_format
        if first is None and not line.startswith("#"):
            first = (number, len(fields))
    if first is None:
        return None
    raise DependencyFormatError(
        source,
        first[0],
        f"cannot tell the format from this line: it has {first[1]} columns",
        "expected CoNLL-X or CoNLL-U (10 tab-separated columns: an ID first) or Malt-TAB (word, "
        "POS, head and an optional label, tab-separated)",
    )


# CoNLL-X / CoNLL-U columns (0-based) of the coarse (CPOSTAG / UPOS) and the fine-grained
# (POSTAG / XPOS) POS tag.
_COARSE_TAG_COLUMN = 3
_FINE_TAG_COLUMN = 4
_HEAD_ADVICE = "heads are 1-based positions of words in the same sentence, 0 for the root"

ErrorHandler = Callable[[DependencyFormatError], None]
"""What `read_dependencies` calls with each malformed sentence or file it skips."""


def _sentence_error(
    source: str, number: int, line: int, problem: str, advice: str = ""
) -> DependencyFormatError:
    """A problem of the `number`-th (1-based) sentence of `source`: `sentence 12: problem`."""
    return DependencyFormatError(source, line, f"sentence {number}: {problem}", advice)


def _parse_int(source: str, number: int, line: int, text: str, what: str) -> int:
    if not _NUMBER_RE.fullmatch(text):
        raise _sentence_error(source, number, line, f"the {what} {text!r} is not a whole number")
    return int(text)


def _check_spelling(
    source: str, number: int, line: int, forms: List[str], text_comment: Tuple[int, str]
) -> None:
    """
    A `DependencyFormatError` unless the surface forms of a CoNLL-U sentence spell its
    `# text =` comment, white space aside: a sentence cut short or merged with the next one
    can still be a valid tree, but no longer spells its text.
    """
    spelled = re.sub(r"\s+", "", "".join(forms))
    text = re.sub(r"\s+", "", text_comment[1])
    if spelled == text:
        return
    position = next(
        (index for index, pair in enumerate(zip(spelled, text)) if pair[0] != pair[1]),
        min(len(spelled), len(text)),
    )
    raise _sentence_error(
        source,
        number,
        line,
        f"the words do not spell the sentence's `# text` (line {text_comment[0]}): from "
        f"character {position + 1} the words give {spelled[position:position + 20]!r} but the "
        f"text {text[position:position + 20]!r}",
        "the sentence was probably cut short or merged with another; every sentence ends with "
        "a blank line, and its words (multi-word tokens as written) spell its text",
    )


def _and_list(numbers: Sequence[int]) -> str:
    """`3`, `3 and 7`, `3, 5 and 7`."""
    names = [str(number) for number in numbers]
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def _check_heads(
    source: str, number: int, lines: Sequence[int], heads: List[int], single_root: bool
) -> None:
    """
    Heads in range, no word its own head, exactly one root word if `single_root`, no cycles
    (every word reaches the root).
    """
    n = len(heads)
    for index, head in enumerate(heads):
        if not 0 <= head <= n:
            raise _sentence_error(
                source,
                number,
                lines[index],
                f"the head {head} of word {index + 1} is not a word of the sentence "
                f"(it has {n} words; 0 is the root)",
                _HEAD_ADVICE,
            )
        if head == index + 1:
            raise _sentence_error(
                source, number, lines[index], f"word {index + 1} is its own head", _HEAD_ADVICE
            )
    if single_root:
        roots = [index + 1 for index, head in enumerate(heads) if head == 0]
        if not roots:
            raise _sentence_error(
                source,
                number,
                lines[0],
                "no word has head 0; a tree has exactly one root word",
                "give the main word of the sentence the head 0",
            )
        if len(roots) > 1:
            raise _sentence_error(
                source,
                number,
                lines[roots[1] - 1],
                f"words {_and_list(roots)} {'both' if len(roots) == 2 else 'all'} have head 0; "
                "a tree has exactly one root word",
                "attach all but one of them to another word, or split the sentence with a "
                "blank line",
            )
    state = [0] * (n + 1)  # 0 unvisited, 1 on the current path, 2 reaches the root
    state[0] = 2
    for start in range(1, n + 1):
        path = []
        word = start
        while state[word] == 0:
            state[word] = 1
            path.append(word)
            word = heads[word - 1]
        if state[word] == 1:
            cycle = path[path.index(word) :]
            raise _sentence_error(
                source,
                number,
                lines[0],
                "the heads form a cycle through words "
                + " -> ".join(str(w) for w in cycle + [word]),
                "every word must reach the root (head 0) by following heads",
            )
        for visited in path:
            state[visited] = 2


def _parse_sentence(
    source: str,
    file_format: str,
    rows: List[Tuple[int, List[str]]],
    number: int,
    coarse_tags: bool = False,
    single_root: bool = False,
    text_comment: Optional[Tuple[int, str]] = None,
    bad_line: Optional[Tuple[int, str]] = None,
) -> DependencySentence:
    """
    The `number`-th sentence of `source` from its token lines `(line, columns)`, with its
    CoNLL-U `# text` comment `(line, text)` if it has one, and the first of its lines that
    holds an undecodable byte or a NUL character `(line, problem)`, if any.
    """
    if bad_line is not None:
        raise _sentence_error(source, number, bad_line[0], bad_line[1], _ENCODING_ADVICE)
    words: List[str] = []
    tags: List[str] = []
    heads: List[int] = []
    labels: List[str] = []
    lines: List[int] = []
    forms: List[str] = []  # the surface forms: multi-word tokens as written
    covered = 0  # the last word covered by a multi-word token
    tag_column, other_tag_column = _FINE_TAG_COLUMN, _COARSE_TAG_COLUMN
    if coarse_tags:
        tag_column, other_tag_column = _COARSE_TAG_COLUMN, _FINE_TAG_COLUMN
    for line, fields in rows:
        if file_format == MALT_TAB:
            if len(fields) not in (3, 4):
                raise _sentence_error(
                    source,
                    number,
                    line,
                    f"{len(fields)} columns in a Malt-TAB file",
                    "each token line needs word, POS, head and an optional label, tab-separated",
                )
            word, tag, head_text = fields[0], fields[1], fields[2]
            label = fields[3] if len(fields) == 4 and fields[3] else "_"
        else:
            if len(fields) != 10:
                raise _sentence_error(
                    source,
                    number,
                    line,
                    f"{len(fields)} columns in a CoNLL file",
                    "each token line needs the 10 tab-separated CoNLL-X / CoNLL-U columns",
                )
            if _NON_WORD_ID_RE.match(fields[0]):
                token_range = _RANGE_ID_RE.match(fields[0])
                if token_range is not None:  # a multi-word token, not an empty node
                    forms.append(fields[1])
                    covered = int(token_range.group(2))
                continue
            token_id = _parse_int(source, number, line, fields[0], "token ID")
            if token_id != len(words) + 1:
                raise _sentence_error(
                    source,
                    number,
                    line,
                    f"token ID {token_id} where {len(words) + 1} was expected",
                    "IDs must count 1, 2, 3, ... within each sentence; separate sentences by "
                    "a blank line",
                )
            word, head_text, label = fields[1], fields[6], fields[7]
            tag = fields[tag_column] if fields[tag_column] != "_" else fields[other_tag_column]
            if token_id > covered:
                forms.append(word)
        for value, what in ((word, "word"), (tag, "POS tag"), (label, "dependency label")):
            if not value:
                raise _sentence_error(
                    source,
                    number,
                    line,
                    f"the {what} column is empty",
                    "write _ for a missing value; columns are separated by one tab",
                )
        words.append(word)
        tags.append(tag)
        heads.append(_parse_int(source, number, line, head_text, "head"))
        labels.append(label)
        lines.append(line)
    if not words:
        raise _sentence_error(source, number, rows[0][0], "a sentence without words")
    if text_comment is not None:
        _check_spelling(source, number, lines[0], forms, text_comment)
    _check_heads(source, number, lines, heads, single_root)
    return DependencySentence(
        words,
        tags,
        heads,
        None if all(label == "_" for label in labels) else labels,
        source=source,
        line=lines[0],
        number=number,
    )


_ENCODING_ADVICE = (
    "the file is not in the encoding it is read with: set the reader's `encoding` option to "
    'the file\'s encoding (e.g. "latin-1", "gbk", "utf-16"), or convert the file to UTF-8'
)


def _file_lines(path: str, encoding: str, lenient: bool) -> Tuple[str, List[str], bool]:
    """
    The format (`CONLL` or `MALT_TAB`), the lines of a dependency file and whether they may
    hold undecodable bytes; a `DependencyFormatError` if it cannot be decoded (unless
    `lenient`: then undecodable bytes are kept as lone surrogates, for the sentences that hold
    them to be reported), its format cannot be told or it holds nothing.
    """
    with open(path, "rb") as dependency_file:
        data = dependency_file.read()
    decode_error: Optional[DependencyFormatError] = None
    try:
        text = decode_treebank(path, data, encoding)
    except TreebankFormatError as error:
        decode_error = DependencyFormatError(error.source, error.line, error.problem, error.advice)
        if not lenient:
            raise decode_error from None
        try:
            text = decode_treebank(path, data, encoding, "surrogateescape")
        except TreebankFormatError:  # another encoding as a whole
            raise decode_error from None
    lines = text.split("\n")
    try:
        file_format = _detect_format(path, lines)
    except DependencyFormatError:
        if decode_error is not None:  # the encoding is the likelier cause
            raise decode_error from None
        raise
    if file_format is None:
        raise DependencyFormatError(path, None, "the file holds no sentences")
    return file_format, lines, decode_error is not None


def _read_file(
    path: str,
    coarse_tags: bool = False,
    single_root: bool = False,
    on_error: Optional[ErrorHandler] = None,
    encoding: str = "utf-8",
) -> Iterator[Tuple[DependencySentence, int]]:
    """
    The sentences of one file (see `read_dependencies`). `on_error` is called outside the
    `except` block, so that an error it raises is not chained to the one it was given.
    """
    problem: Optional[DependencyFormatError] = None
    try:
        file_format, lines, undecodable = _file_lines(path, encoding, on_error is not None)
    except DependencyFormatError as error:
        if on_error is None:
            raise
        problem = error
    if problem is not None:
        assert on_error is not None
        on_error(problem)
        return
    # A last line without a line break: the file was probably cut in the middle of it.
    cut_line = len(lines) if lines[-1].strip() else None
    rows: List[Tuple[int, List[str]]] = []
    text_comment: Optional[Tuple[int, str]] = None
    bad_line: Optional[Tuple[int, str]] = None
    number = 0
    # The last sentence read well, held back until the next block shows that a blank line did
    # not cut it in two (see `_split_sentence_error`), with the line of the blank line after it.
    held: Optional[Tuple[DependencySentence, int]] = None
    commented = False  # whether the block has a comment line (so it starts a sentence)
    for line_number, line in enumerate(lines + [""], 1):
        line = line.rstrip("\r\n")
        if line.strip():
            if undecodable and bad_line is None and BAD_CHARACTER_RE.search(line):
                bad_line = (line_number, bad_character_problem(line, encoding))
            if file_format == CONLL and line.startswith("#"):  # CoNLL-U comment
                commented = True
                text_match = _TEXT_COMMENT_RE.match(line)
                if text_match is not None:
                    text_comment = (line_number, text_match.group(1))
                continue
            if line_number == cut_line:
                bad_line = bad_line or (
                    line_number,
                    "the file ends in the middle of this line (no line break after it), so it "
                    "was probably cut short; if it is complete, end it with a line break",
                )
            rows.append((line_number, _fields(line)))
            continue
        if not rows and text_comment is None:
            continue
        number += 1
        if held is not None:
            split = None
            if file_format == CONLL and rows and not commented:
                split = _split_sentence_error(path, held[0], held[1], rows)
            if split is None:
                yield held[0], held[0].line  # type: ignore[misc]
            elif on_error is None:
                raise split
            else:
                on_error(split)
            held = None
        sentence: Optional[DependencySentence] = None
        try:
            if not rows:
                assert text_comment is not None
                raise _sentence_error(
                    path,
                    number,
                    text_comment[0],
                    "a `# text` comment with no token lines after it",
                    "the file was probably cut short, or the sentence's lines were lost",
                )
            sentence = _parse_sentence(
                path,
                file_format,
                rows,
                number,
                coarse_tags,
                single_root,
                text_comment,
                bad_line,
            )
        except DependencyFormatError as error:
            if on_error is None:
                raise
            problem = error
        rows, text_comment, bad_line, commented = [], None, None, False
        if sentence is not None:
            held = (sentence, line_number)
        else:
            assert on_error is not None and problem is not None
            on_error(problem)
    if held is not None:
        yield held[0], held[0].line  # type: ignore[misc]


def _split_sentence_error(
    source: str, sentence: DependencySentence, blank_line: int, rows: List[Tuple[int, List[str]]]
) -> Optional[DependencyFormatError]:
    """
    The error of a CoNLL sentence that the blank line `blank_line` probably cut short, or
    `None`: the block after it (`rows`, without comment lines) starts with a token ID
    other than 1 (or an empty node other than 0.1, 0.2 ...), so it is not a sentence of its
    own. A newline put into an ID (`16` -> a blank line, then `6`) cuts a sentence in two
    whose first part can still be a valid tree, and CoNLL-X has no `# text` to tell. The block
    may instead have lost its first lines; the sentence is given up all the same (in skip
    mode, one sentence more is lost, and counted), as it cannot be trusted.
    """
    token_id = rows[0][1][0]
    word = _NUMBER_RE.fullmatch(token_id) or _RANGE_ID_RE.match(token_id)
    if word is not None:
        first_word = int(word.group(1) if word.groups() else word.group())
        if first_word == 1:
            return None
    else:
        empty_node = re.fullmatch(r"(\d+)\.\d+", token_id)
        if empty_node is None or int(empty_node.group(1)) == 0:
            return None  # not an ID: that block is malformed by itself
    return _sentence_error(
        source,
        sentence.number,  # type: ignore[arg-type]
        blank_line,
        f"this blank line probably cuts it short: the sentence from line {sentence.line} "
        f"ends here after {len(sentence.words)} words, but the block after it starts with "
        f"token ID {token_id} on line {rows[0][0]}, not 1, so it goes on with this sentence "
        "or lost its first lines",
        "remove the blank line if the two blocks are one sentence; each sentence's IDs count "
        "from 1",
    )


def read_dependencies(
    file_path: Union[str, "os.PathLike[str]"],
    *,
    coarse_tags: bool = False,
    single_root: bool = False,
    on_error: Optional[ErrorHandler] = None,
    encoding: str = "utf-8",
) -> Iterator[Tuple[DependencySentence, int]]:
    """
    Yields `(sentence, line)` for every sentence of the dependency files at `file_path`, in
    file order; `line` is the 1-based line of the sentence's first token and
    `sentence.source` / `sentence.number` name its file and 1-based position in it (sentences
    are counted by the blank lines between them, malformed ones included).

    `file_path` may be a file, a directory, a glob or `DIR/wsj_0001-0159` (see
    `resolve_dependency_paths`). Each file's format (CoNLL-X, CoNLL-U or Malt-TAB) is detected
    from its first token line; CoNLL-U comments, multi-word token lines (`3-4`) and empty nodes
    (`5.1`) are skipped.

    # Parameters

    file_path : `Union[str, os.PathLike]`
        The dependency file(s).
    coarse_tags : `bool`, optional (default = `False`)
        In CoNLL-X / CoNLL-U files, take the POS tag from the coarse column (CPOSTAG / UPOS,
        the 4th) instead of the fine-grained one (POSTAG / XPOS, the 5th); the other column is
        used where the chosen one is `_`. Malt-TAB files have one tag column, always used.
    single_root : `bool`, optional (default = `False`)
        A sentence with more than one word whose head is 0, or none, is malformed (a tree has
        exactly one root word). By default several root words are allowed.
    on_error : `Optional[Callable[[DependencyFormatError], None]]`, optional (default = `None`)
        If `None`, the first malformed sentence or file raises. Otherwise each malformed
        sentence is passed to `on_error` and skipped, and reading goes on with the next
        sentence of the same file; a sentence with bytes that are not in the file's
        `encoding` is one of them. A file that cannot be read as a whole (format undetectable,
        no sentences) is passed to `on_error` and skipped. Whatever `on_error` raises goes to
        the caller.
    encoding : `str`, optional (default = `"utf-8"`)
        The encoding of the files (any Python codec name). A UTF-8 byte-order mark is dropped.

    # Raises

    `DependencyPathError` if the path names no file (even with `on_error`). Without `on_error`,
    `DependencyFormatError` naming the file, the line and, for a malformed sentence, its number
    (`sentence 12: ...`): a malformed line (wrong number of columns, an ID or head that is not a
    number, IDs not counting from 1, an empty word, tag or label), a head outside the sentence,
    a word that is its own head, heads that form a cycle, no or several root words with
    `single_root`, words that do not spell the CoNLL-U `# text`, a blank line followed by a
    block whose IDs do not start at 1 (it probably cuts the sentence before it short: that
    sentence is reported, on the blank line, and the block too), a last line without a line
    break, bytes that are not in `encoding`, an empty file.
    """
    for path in resolve_dependency_paths(file_path):
        yield from _read_file(path, coarse_tags, single_root, on_error, encoding)


# ----------------------------------------------------------------------------------------------
# Writing
# ----------------------------------------------------------------------------------------------


def _label(sentence: DependencySentence, index: int) -> str:
    return "_" if sentence.labels is None else sentence.labels[index]


def to_conllx(sentence: DependencySentence) -> str:
    """
    The sentence in CoNLL-X: one line per word, `ID FORM _ POS POS _ HEAD DEPREL _ _` (the tag
    in both POS columns, as the Stanford converter writes PTB tags; `_` for a missing label),
    each line ending in a newline, then one empty line, so that sentences can be concatenated.
    """
    lines = []
    for index, (word, tag, head) in enumerate(zip(sentence.words, sentence.tags, sentence.heads)):
        columns = [str(index + 1), word, "_", tag, tag, "_", str(head), _label(sentence, index)]
        lines.append("\t".join(columns + ["_", "_"]) + "\n")
    return "".join(lines) + "\n"


def to_conllu(sentence: DependencySentence) -> str:
    """
    The sentence in CoNLL-U: one line per word, `ID FORM _ _ XPOS _ HEAD DEPREL _ _` (the tag
    is a treebank-specific XPOS; UPOS is unknown, `_`), each line ending in a newline, then one
    empty line.
    """
    lines = []
    for index, (word, tag, head) in enumerate(zip(sentence.words, sentence.tags, sentence.heads)):
        columns = [str(index + 1), word, "_", "_", tag, "_", str(head), _label(sentence, index)]
        lines.append("\t".join(columns + ["_", "_"]) + "\n")
    return "".join(lines) + "\n"


# ----------------------------------------------------------------------------------------------
# Aligning with a constituency treebank
# ----------------------------------------------------------------------------------------------


def words_match(tree_word: str, dependency_word: str) -> bool:
    """Equal, or equal once PTB bracket escapes are undone (`-LRB-` matches `(`)."""
    if tree_word == dependency_word:
        return True
    return _PTB_ESCAPES.get(tree_word, tree_word) == _PTB_ESCAPES.get(
        dependency_word, dependency_word
    )


def check_words(
    tree_words: Sequence[str],
    sentence: DependencySentence,
    tree_source: Optional[str] = None,
    tree_line: Optional[int] = None,
) -> None:
    """
    Checks that `sentence` has the words of the (normalised) tree it is aligned with.

    # Raises

    `DependencyMismatchError` naming the dependency file, the sentence number in it and its
    line, the tree's file and line if given, and the first differing token.
    """
    words = sentence.words
    for index in range(max(len(words), len(tree_words))):
        tree_word = tree_words[index] if index < len(tree_words) else None
        word = words[index] if index < len(words) else None
        if tree_word is not None and word is not None and words_match(tree_word, word):
            continue
        shown_tree = "nothing (the tree ends)" if tree_word is None else repr(tree_word)
        shown_word = "nothing (the sentence ends)" if word is None else repr(word)
        where = ""
        if tree_source is not None:
            where = f" ({tree_source}" + (f", line {tree_line})" if tree_line else ")")
        number = sentence.number
        raise DependencyMismatchError(
            sentence.source or "<dependencies>",
            sentence.line,
            f"dependency sentence {number if number is not None else '?'} does not have the "
            f"words of its tree{where}: token {index + 1} is {shown_tree} in the tree but "
            f"{shown_word} in the dependencies",
            "the dependency files must hold the same sentences as the treebank, in the same "
            "order, with the same tokens once -NONE- empty elements are removed",
            sentence_number=number,
            token=index + 1,
        )


class DependencyAligner:
    """
    Hands out the sentences of a dependency treebank one per constituency tree, in order,
    checking that the words match (the n-th tree of the treebank files, in the order the reader
    reads them, goes with the n-th dependency sentence of the dependency files).

    # Parameters

    file_path : `str`
        A dependency file, directory, glob or `DIR/wsj_0001-0159` range.
    """

    def __init__(self, file_path: Union[str, "os.PathLike[str]"]) -> None:
        self.file_path = os.fspath(file_path)
        self._sentences = read_dependencies(file_path)
        self.count = 0  # sentences handed out or skipped

    def _next(self, tree_source: Optional[str], tree_line: Optional[int]) -> DependencySentence:
        item = next(self._sentences, None)
        if item is None:
            where = f"{tree_source}, line {tree_line}" if tree_source else "the treebank"
            raise DependencyFormatError(
                self.file_path,
                None,
                f"the dependency files end after {self.count} sentence(s), but {where} holds "
                f"tree {self.count + 1}",
                "give one dependency sentence per tree, in the same order",
            )
        self.count += 1
        return item[0]

    def next(
        self,
        tree_words: Sequence[str],
        tree_source: Optional[str] = None,
        tree_line: Optional[int] = None,
    ) -> DependencySentence:
        """The next dependency sentence, checked against the tree's words (see `check_words`)."""
        sentence = self._next(tree_source, tree_line)
        check_words(tree_words, sentence, tree_source, tree_line)
        return sentence

    def skip(self) -> None:
        """Passes over the next dependency sentence (its tree was dropped)."""
        self._next(None, None)

    def finish(self) -> None:
        """
        # Raises

        `DependencyFormatError` if the dependency files hold more sentences than were asked for.
        """
        item = next(self._sentences, None)
        if item is not None:
            sentence = item[0]
            raise DependencyFormatError(
                sentence.source or self.file_path,
                sentence.line,
                f"the dependency files hold more sentences than the treebank has trees "
                f"({self.count} trees; this is dependency sentence {self.count + 1})",
                "give one dependency sentence per tree, in the same order",
            )
