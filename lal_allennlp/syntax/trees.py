"""
Pure tree utilities for bracketed treebanks in the Penn Treebank style (Marcus et al. 1993,
"Building a Large Annotated Corpus of English: The Penn Treebank"); no AllenNLP, no torch.

Trees are `nltk.Tree` objects: internal nodes carry a string label, preterminals are
`Tree(POS, [word])` (`is_preterminal`) and leaves are word strings.

* `parse_trees` reads one or many bracketed trees from a string (raw WSJ `.mrg` files with
  multi-line trees and an unlabelled outer bracket, or one tree per line) and yields each tree
  with the line where it starts. Malformed input raises `TreebankFormatError` naming the source
  and the line.
* `decode_treebank` turns a file's bytes into text, naming the file and line of bytes that are
  not in the expected encoding; read in `"surrogateescape"` mode, such bytes become lone
  surrogates that `parse_trees` reports in the tree that holds them.
* `normalise_tree` applies the usual evaluation normalisation (Collins 1997; the `evalb`
  setting used by Stern et al. 2017, Kitaev & Klein 2018 and Mrini et al. 2020): empty elements
  (`-NONE-`) and constituents left empty are removed, function tags and co-indices are stripped
  (`NP-SBJ-1` -> `NP`) and the result is always rooted in `TOP`.
* `tree_to_spans` / `spans_to_tree` convert between a normalised tree and the labelled spans a
  span-based parser scores, with unary chains collapsed into joint labels (`S+VP`) as in
  Stern et al. (2017, section 3) and Kitaev & Klein (2018, section 2).
"""

import codecs
import re
from typing import Iterator, List, Optional, Sequence, Tuple

from nltk import Tree

# Labels of a root bracket that carries no constituent of its own.
ROOT_LABELS = frozenset({"", "TOP", "ROOT"})
# The POS tag of empty elements (traces, null complementisers, `*U*` ...).
EMPTY_ELEMENT_TAG = "-NONE-"
# Separator of the labels of a collapsed unary chain, top to bottom: `S+VP`.
UNARY_JOIN = "+"

# A whole preterminal `(POS word)` on one line (the fast path; group 1 the tag, group 2 the
# word), a bracket, or a maximal run of characters that are neither space nor bracket.
_TOKEN_RE = re.compile(r"\(\s*([^\s()]+)\s+([^\s()]+)\s*\)|[()]|[^\s()]+")
# Where a function tag / co-index starts: `NP-SBJ-1`, `NP-SBJ=2`, `NP=2`.
_FUNCTION_TAG_RE = re.compile(r"[-=]")


class TreebankFormatError(ValueError):
    """
    A bracketed treebank could not be read. The message names the source (usually a file)
    and the 1-based line, says what was wrong and what to do about it.

    # Parameters

    source : `str`
        The file (or other source) being read.
    line : `Optional[int]`
        The 1-based line of the problem, if it is known.
    problem : `str`
        What was wrong.
    advice : `str`, optional (default = `""`)
        What the user can do about it.
    """

    def __init__(self, source: str, line: Optional[int], problem: str, advice: str = "") -> None:
        self.source = source
        self.line = line
        self.problem = problem
        self.advice = advice
        where = f"{source}, line {line}" if line is not None else source
        message = f"{where}: {problem}"
        if advice:
            message += f" ({advice})"
        super().__init__(message)

    def __reduce__(self):  # type: ignore[no-untyped-def]
        # Keeps the exception picklable (multi-process data loading sends it between processes).
        return (self.__class__, (self.source, self.line, self.problem, self.advice))


# Characters that never stand in a treebank: NUL (UTF-16 text read as UTF-8 is full of them)
# and the lone surrogates U+DC80..U+DCFF that stand for undecodable bytes after decoding with
# errors="surrogateescape".
BAD_CHARACTER_RE = re.compile("[\x00\udc80-\udcff]")
_UTF16_BOMS = (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)


def encoding_advice(data: bytes) -> str:
    """What to tell a user whose file is not in the encoding it was read with."""
    if data.startswith(_UTF16_BOMS):
        return (
            "the file starts with a UTF-16 byte-order mark: set the reader's `encoding` option "
            'to "utf-16"'
        )
    return (
        "set the reader's `encoding` option to the file's encoding (e.g. \"latin-1\", "
        "\"gbk\", \"utf-16\"), or convert the file to UTF-8 (`iconv -f ENCODING -t UTF-8`)"
    )


def _is_utf8(encoding: str) -> bool:
    try:
        return codecs.lookup(encoding).name == "utf-8"
    except LookupError:
        return False


def bad_character_problem(text: str, encoding: Optional[str] = None) -> str:
    """
    The problem the first bad character (see `BAD_CHARACTER_RE`) of `text` is, for error
    messages (`""` if there is none); `encoding`, if known, is named.
    """
    match = BAD_CHARACTER_RE.search(text)
    if match is None:
        return ""
    character = match.group()
    if character == "\x00":
        return "a NUL character (byte 0x00): the file is probably UTF-16, not text in its encoding"
    byte = f"the byte 0x{ord(character) - 0xDC00:02x}"
    if encoding is None:
        return f"{byte} cannot be decoded"
    return f"{byte} is not valid {'UTF-8' if _is_utf8(encoding) else encoding}"


def _shown(token: str) -> str:
    """A token with undecodable bytes shown as `\\xe8`, NUL as `\\x00`."""
    return repr(token.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace"))


def mostly_undecodable(text: str) -> bool:
    """
    Whether undecodable bytes (lone surrogates, see `decode_treebank`) or NUL characters stand
    on at least 3 lines and on more than half of the lines that are not plain ASCII. That is a
    file in another encoding (GBK read as UTF-8, UTF-16), whose lines that happen to decode are
    wrong too, rather than a UTF-8 file with a few damaged bytes.
    """
    bad = other = 0
    for line in text.split("\n"):
        if BAD_CHARACTER_RE.search(line):
            bad += 1
        elif not line.isascii():
            other += 1
    return bad >= 3 and bad > other


def decode_treebank(
    source: str, data: bytes, encoding: str = "utf-8", errors: str = "strict"
) -> str:
    """
    Decodes the bytes of a treebank file. With UTF-8 (the default) a leading byte-order mark
    is dropped; a NUL character counts as undecodable, since no treebank holds one and UTF-16
    text read as UTF-8 is full of them.

    # Parameters

    source : `str`
        Named in error messages, normally the file name.
    data : `bytes`
    encoding : `str`, optional (default = `"utf-8"`)
        Any Python codec name.
    errors : `str`, optional (default = `"strict"`)
        `"strict"` raises on the first undecodable byte. `"surrogateescape"` turns undecodable
        bytes into lone surrogates and keeps NUL characters: `parse_trees` and the dependency
        reader report the trees and sentences that hold them and read the others. A file that
        is `mostly_undecodable` is in another encoding as a whole (its other lines cannot be
        trusted either): it raises as with `"strict"`.

    # Raises

    `TreebankFormatError` naming the file, the line and the byte, with what to do.
    """
    utf8 = _is_utf8(encoding)
    if errors != "strict":
        text = data.decode("utf-8-sig" if utf8 else encoding, errors)
        if not mostly_undecodable(text):
            return text
        errors = "strict"  # the whole file is in another encoding: raise its first error
    try:
        text = data.decode("utf-8-sig" if utf8 else encoding, errors)
    except UnicodeDecodeError as error:
        before = data[: error.start].decode(encoding, "replace")
        raise TreebankFormatError(
            source,
            before.count("\n") + 1,
            f"not valid {'UTF-8' if utf8 else encoding} at byte offset {error.start} "
            f"(byte 0x{data[error.start]:02x})",
            encoding_advice(data),
        ) from None
    if errors == "strict" and "\x00" in text:
        raise TreebankFormatError(
            source,
            text.count("\n", 0, text.index("\x00")) + 1,
            bad_character_problem("\x00"),
            encoding_advice(data),
        )
    return text



# Advice shared by the errors about words outside preterminals.
_ONE_WORD_PER_PRETERMINAL = "each word must be inside its own (POS word) preterminal"
# Brackets nested deeper than this are an error: the tree functions below (and nltk's) recurse
# once per level, within Python's default limit of 1,000 frames. The deepest tree of the WSJ
# sample has 30 levels; a parser's tree of a sentence of a few hundred words can have more.
MAX_DEPTH = 500

# What `_TreeBuilder.read` returns for a token after which no tree is complete.
_NO_TREES: Tuple[Tuple[Tree, int], ...] = ()


class _Node:
    """
    A bracket being read: its label, children, the line it starts on, and whether it opens its
    line at the column where the text's trees start (see `_TreeBuilder`).
    """

    __slots__ = ("label", "children", "line", "has_word", "has_tree", "at_boundary")

    def __init__(self, label: Optional[str], line: int, at_boundary: bool) -> None:
        self.label = label  # None until the token after "(" has been seen
        self.children: List = []
        self.line = line
        self.has_word = False
        self.has_tree = False
        self.at_boundary = at_boundary

    def add_tree(self, tree: Tree) -> None:
        self.has_tree = True
        self.children.append(tree)

    def add_word(self, word: str) -> None:
        self.has_word = True
        self.children.append(word)


def parse_trees(
    text: str,
    source: str = "<string>",
    errors: Optional[List[TreebankFormatError]] = None,
    breaks: Sequence[int] = (),
) -> Iterator[Tuple[Tree, int]]:
    """
    Reads bracketed trees from `text` and yields `(tree, line)` pairs, where `line` is the
    1-based line on which the tree's opening bracket stands.

    Trees may span many lines (raw WSJ `.mrg` files) or stand one per line. The token after an
    opening bracket is the node's label; the outermost bracket of a tree may be unlabelled, as
    in `( (S ...) )` of the WSJ files: it gets the label `""`. Words and labels are any runs of
    characters other than white space and round brackets. A node holds either exactly one word
    (a preterminal) or one or more bracketed children.

    # Parameters

    text : `str`
        The treebank text.
    source : `str`, optional (default = `"<string>"`)
        Named in error messages, normally the file name.
    errors : `Optional[List[TreebankFormatError]]`, optional (default = `None`)
        If `None`, the first problem raises a `TreebankFormatError`. Otherwise problems are
        appended to this list and reading goes on: a malformed tree is dropped whole, and so
        is a tree that an extra `)` closed too early together with the pieces of it read after
        it; a stray `)` or text outside brackets is passed over; a tree still open at the end
        of the text is dropped, and reading starts again at the line inside it that opens a
        bracket where trees start (its first column, in WSJ files), which is where the next
        tree most likely begins. Each dropped tree is reported, so no tree is lost unreported.
    breaks : `Sequence[int]`, optional (default = `()`)
        Sorted offsets in `text` where markup stood that no tree crosses (the `<S>` and `</S>`
        tags of CTB files, see `ctb_format.strip_markup`). The text between two breaks is read
        as a text of its own: a tree still open at a break is not closed (and dropped), and a
        problem between two breaks never costs a tree outside them.

    # Raises

    `TreebankFormatError` on a `)` that closes nothing, text outside brackets, a bracket with
    no children, an unlabelled bracket inside a tree, a node mixing words and brackets or
    holding several words, brackets nested more than `MAX_DEPTH` deep, or a tree still open at
    the end of the text (or at a break).
    """
    lines = text.split("\n")
    boundary_column: Optional[int] = None
    # Undecodable bytes (see `decode_treebank`) are looked for only in a text that has some.
    check_characters = BAD_CHARACTER_RE.search(text) is not None
    for start, end, last_line in _segments(text, breaks):
        first = start
        while True:
            builder = _TreeBuilder(source, errors is not None, boundary_column)
            builder.check_characters = check_characters
            for line, token, first_on_line in _bracket_tokens(lines, first, end):
                complete = builder.read(line, token, first_on_line)
                if errors is not None:
                    builder.flush_errors(errors)
                yield from complete
            complete, restart = builder.finish(last_line, None if end is None else end[0])
            if errors is not None:
                builder.flush_errors(errors)
            yield from complete
            boundary_column = builder.boundary_column
            if restart is None:
                break
            # The restart line is inside this segment (its first token opened a bracket), so
            # reading it from its first column reads no token of the segment before.
            first = max(start, (restart, 0))


# A position in a text: its 1-based line and 0-based column.
_Position = Tuple[int, int]


def _segments(
    text: str, breaks: Sequence[int]
) -> Iterator[Tuple[_Position, Optional[_Position], int]]:
    """
    The parts of `text` between `breaks` as `(start, end, last_line)`: `end` is `None` for the
    end of the text; `last_line` is the line of the part's last character that is not white
    space (its first line if it has none), which messages about a tree left open name.
    """
    offset, line, line_start = 0, 1, 0
    for limit in list(breaks) + [len(text)]:
        limit = min(max(limit, offset), len(text))
        content_end = offset + len(text[offset:limit].rstrip())
        last_line = line + text.count("\n", offset, content_end)
        start = (line, offset - line_start)
        newlines = text.count("\n", offset, limit)
        if newlines:
            line += newlines
            line_start = text.rindex("\n", offset, limit) + 1
        end = (line, limit - line_start) if limit < len(text) else None
        yield start, end, last_line
        offset = limit


def _bracket_tokens(
    lines: List[str], start: _Position, end: Optional[_Position] = None
) -> Iterator[Tuple[int, re.Match, bool]]:
    """
    The tokens of `lines` from the position `start` up to `end` (`None`: the end), each with
    its 1-based line and whether it is the first token of its line: a whole one-line
    preterminal `(POS word)` (group 1 the tag, group 2 the word), `(`, `)`, or a label or word.
    """
    first_line, column = start
    last_line = len(lines) if end is None else end[0]
    for line_index in range(first_line - 1, last_line):
        text = lines[line_index]
        begin = column if line_index == first_line - 1 else 0
        stop = end[1] if end is not None and line_index == last_line - 1 else len(text)
        # A segment can start in the middle of a line (markup was blanked there): its first
        # token is first on the line only if nothing but white space stands before it.
        first_on_line = not text[:begin].strip()
        for token in _TOKEN_RE.finditer(text, begin, stop):
            yield line_index + 1, token, first_on_line
            first_on_line = False


class _TreeBuilder:
    """
    Builds trees from the tokens of `_bracket_tokens`, one token at a time, and reports what is
    malformed (see `parse_trees`).

    The *boundary column* is the column of the first tree's opening bracket, if that bracket
    begins its line (column 0 in WSJ files and one-tree-per-line files). A token that begins a
    line at that column outside any tree is a *boundary*: a new tree (or junk) certainly starts
    there. Complete trees are held back (`held`) until the next boundary: a stray `)` before it
    means that an extra `)` closed the first held tree too early and the others are pieces of
    it, so all of them are dropped rather than yielded as silently wrong trees.

    Errors are raised at once, or (when collecting) buffered and handed to the caller's list by
    `flush_errors` between trees, so that the errors found inside a tree left open at the end
    of the text can be discarded when reading starts again inside it.
    """

    def __init__(self, source: str, collect: bool, boundary_column: Optional[int]) -> None:
        self.source = source
        self.collect = collect
        self.boundary_column = boundary_column
        # Problems not yet handed to the caller (only when collecting).
        self.errors: List[TreebankFormatError] = []
        # The open brackets of the tree being read, outermost first.
        self.stack: List[_Node] = []
        # The tree being read has an error: it is dropped when it closes.
        self.tree_broken = False
        # Complete trees and their lines since the last boundary, not yet yielded.
        self.held: List[Tuple[Tree, int]] = []
        # A line inside the open tree that opens a bracket at the boundary column: a ")" is
        # probably missing before it. With the number of errors buffered before that line.
        self.suspicious_line: Optional[int] = None
        self.errors_before_suspicious_line = 0
        # Set on text outside brackets, so that a run of such text is reported once.
        self.stray_text_line: Optional[int] = None
        # Whether tokens may hold undecodable bytes or NUL characters.
        self.check_characters = False

    def read(self, line: int, token: re.Match, first_on_line: bool) -> Sequence[Tuple[Tree, int]]:
        """Reads one token; returns the held trees if this token is a boundary."""
        tag = token.group(1)
        text = token.group()
        complete: Sequence[Tuple[Tree, int]] = _NO_TREES
        opens = tag is not None or text == "("
        at_boundary = first_on_line and self._at_boundary_column(token.start(), opens)
        if not self.stack and at_boundary and self.held:
            complete, self.held = self.held, []
        if self.check_characters and BAD_CHARACTER_RE.search(text):
            self._read_bad_token(line, text)
        elif tag is not None:
            self._read_preterminal(line, tag, token.group(2))
        elif text == "(":
            self._open_bracket(line, at_boundary)
        elif text == ")":
            self._close_bracket(line)
        elif not self.stack:
            self._read_text_outside_brackets(line, text)
        else:
            self._read_label_or_word(line, text)
        return complete

    def _at_boundary_column(self, column: int, may_set: bool) -> bool:
        if self.boundary_column is None:
            if not may_set or self.stack:
                return False
            self.boundary_column = column
        return column == self.boundary_column

    def _read_bad_token(self, line: int, text: str) -> None:
        """A label, word or preterminal holding an undecodable byte: its tree is dropped."""
        problem = f"{bad_character_problem(text)} in {_shown(text)}"
        advice = "the file is not in the encoding it is read with; " + encoding_advice(b"")
        if not self.stack:
            self._report(line, problem, advice)
            return
        node = self.stack[-1]
        if node.label is None:
            node.label = text
        if not self.tree_broken:
            self._break_tree(line, problem, advice)

    def _read_preterminal(self, line: int, tag: str, word: str) -> None:
        self.stray_text_line = None
        preterminal = Tree(tag, [word])
        if not self.stack:
            # A whole tree of one preterminal.
            self.held.append((preterminal, line))
            return
        parent = self.stack[-1]
        self._recognise_outer_bracket(parent)
        if self.tree_broken:
            return
        if parent.has_word:
            self._break_tree(
                line, f"({parent.label} ...) mixes words and brackets", _ONE_WORD_PER_PRETERMINAL
            )
            return
        parent.add_tree(preterminal)

    def _recognise_outer_bracket(self, node: _Node) -> None:
        """
        A bracket whose first token opens another bracket has no label. That is allowed for the
        outermost bracket of a tree (`( (S ...) )` of raw WSJ files), which gets the label `""`,
        and for a bracket at the boundary column: the start of the next tree inside a tree left
        open, reported when the text ends. Anywhere else a `(` is probably extra; it is
        reported on its own line, which can be far before its first child's (a `)` at the end
        of a line that became a `(` takes the next line's bracket as its child).
        """
        if node.label is not None:
            return
        node.label = ""
        if node is not self.stack[0] and not node.at_boundary and not self.tree_broken:
            self._break_tree(
                node.line,
                "a bracket without a label inside a tree",
                "only the outermost bracket of a tree may be unlabelled, as in ( (S ...) ); "
                "a '(' is probably extra here",
            )

    def _open_bracket(self, line: int, at_boundary: bool) -> None:
        self.stray_text_line = None
        if self.stack:
            self._recognise_outer_bracket(self.stack[-1])
            if at_boundary and self.suspicious_line is None:
                self.suspicious_line = line
                self.errors_before_suspicious_line = len(self.errors)
            if len(self.stack) >= MAX_DEPTH and not self.tree_broken:
                self._break_tree(
                    line,
                    f"brackets nested more than {MAX_DEPTH} deep",
                    "a '(' is probably extra or a ')' missing before this line",
                )
        self.stack.append(_Node(None, line, at_boundary))

    def _close_bracket(self, line: int) -> None:
        self.stray_text_line = None
        if not self.stack:
            self._report_extra_close_bracket(line)
            return
        node = self.stack.pop()
        if not self.tree_broken and (node.label is None or not node.children):
            shown = "()" if node.label is None else f"({node.label})"
            self._break_tree(
                node.line,
                f"the bracket {shown} has no words or children",
                "every constituent needs a label and at least one child; "
                "a tree needs at least one word",
            )
        if self.stack:
            self._attach_to_parent(node)
        else:
            self._finish_tree(node)

    def _attach_to_parent(self, node: _Node) -> None:
        if self.tree_broken:
            return
        parent = self.stack[-1]
        if parent.has_word:
            self._break_tree(
                node.line,
                f"({parent.label} ...) mixes words and brackets",
                _ONE_WORD_PER_PRETERMINAL,
            )
        else:
            parent.add_tree(Tree(node.label, node.children))

    def _finish_tree(self, root: _Node) -> None:
        if not self.tree_broken:
            self.held.append((Tree(root.label, root.children), root.line))
        self.tree_broken = False
        self.suspicious_line = None

    def _read_label_or_word(self, line: int, text: str) -> None:
        node = self.stack[-1]
        if node.label is None:
            node.label = text
        elif self.tree_broken:
            return
        elif node.has_tree:
            self._break_tree(
                line,
                f"({node.label} ...) mixes words and brackets at {text!r}",
                _ONE_WORD_PER_PRETERMINAL,
            )
        elif node.has_word:
            self._break_tree(
                line,
                f"({node.label} ...) holds more than one word: {node.children[0]!r} and {text!r}",
                _ONE_WORD_PER_PRETERMINAL,
            )
        else:
            node.add_word(text)

    def _read_text_outside_brackets(self, line: int, text: str) -> None:
        if self.stray_text_line is None:
            self._report(
                line,
                f"text outside brackets: {text!r}",
                "every word must be inside a bracketed tree",
            )
            self.stray_text_line = line

    def _report_extra_close_bracket(self, line: int) -> None:
        if not self.held:
            self._report(line, "')' closes no open bracket", "remove it")
            return
        pieces = len(self.held) - 1
        dropped = "it is dropped" + (
            f", with the {pieces} bracketed piece(s) read after it" if pieces else ""
        )
        self._report(
            line,
            "')' closes no open bracket, so the tree starting on line "
            f"{self.held[0][1]} has one ')' too many ({dropped})",
            "remove the extra ')' inside that tree",
        )
        self.held = []

    def finish(
        self, last_line: int, break_line: Optional[int] = None
    ) -> Tuple[List[Tuple[Tree, int]], Optional[int]]:
        """
        At the end of the text, or at a break (markup no tree crosses, on `break_line`): the
        trees still held, and the line to read again from if a tree is left open and errors
        are collected (`None` if there is nothing to read again).
        """
        complete, self.held = self.held, []
        if not self.stack:
            return complete, None
        root = self.stack[0]
        start = root.line
        if break_line is None:
            problem = f"the tree starting on line {start} is not closed at the end of the text"
            advice = "add the missing ')'; the open tree runs to the end of the text on line "
        else:
            problem = (
                f"the tree starting on line {start} is not closed where its sentence's markup "
                f"ends (line {break_line})"
            )
            advice = "add the missing ')'; the open tree runs to line "
        advice += str(last_line)
        if complete and not root.at_boundary:
            # The open tree does not start at a boundary, so it is a piece of the held trees.
            problem += f" (it is dropped with the tree starting on line {complete[0][1]})"
            complete = []
        restart = self.suspicious_line if self.suspicious_line != start else None
        if restart is not None:
            advice += (
                f"; line {restart} opens a bracket in its first column while this "
                "tree is still open, so a ')' is probably missing just before it"
            )
            # The errors found after that line are found again when it is read again.
            del self.errors[self.errors_before_suspicious_line :]
        self._report(start, problem, advice)
        self.stack = []
        return complete, restart if self.collect else None

    def flush_errors(self, errors: List[TreebankFormatError]) -> None:
        """Hands the buffered errors to `errors`, except inside a tree that is still open."""
        if self.errors and not self.stack:
            errors.extend(self.errors)
            self.errors.clear()

    def _break_tree(self, line: int, problem: str, advice: str) -> None:
        """Reports a problem inside the tree being read, which is then dropped."""
        self._report(line, problem, advice)
        self.tree_broken = True

    def _report(self, line: int, problem: str, advice: str) -> None:
        """Raises the problem, or buffers it if errors are collected."""
        error = TreebankFormatError(self.source, line, problem, advice)
        if not self.collect:
            raise error
        self.errors.append(error)


def _strip_function_tags(label: str) -> str:
    """`NP-SBJ-1` -> `NP`, `NP-SBJ=2` -> `NP`, `ADVP|PRT` -> `ADVP`; `-NONE-` etc. unchanged."""
    if not label or label.startswith("-"):
        return label
    label = label.split("|", 1)[0]
    stripped = _FUNCTION_TAG_RE.split(label, 1)[0]
    return stripped or label


def is_preterminal(node: Tree) -> bool:
    """Whether `node` is a preterminal `(POS word)`: a tree whose only child is a word."""
    # list.__getitem__ skips nltk's Tree.__getitem__ (this runs for every node of a treebank).
    return len(node) == 1 and isinstance(list.__getitem__(node, 0), str)


def _normalise_node(node: Tree) -> Optional[Tree]:
    if is_preterminal(node):
        if node.label() == EMPTY_ELEMENT_TAG:
            return None
        return Tree(node.label(), [list.__getitem__(node, 0)])
    children = []
    for child in node:
        if isinstance(child, str):
            raise ValueError(
                f"({node.label()} ...) mixes words and constituents; each word must be inside "
                "its own (POS word) preterminal"
            )
        normalised = _normalise_node(child)
        if normalised is not None:
            children.append(normalised)
    if not children:
        return None
    return Tree(_strip_function_tags(node.label()), children)


def normalise_tree(tree: Tree) -> Optional[Tree]:
    """
    Returns a normalised copy of `tree` (the input is not changed), or `None` if no words are
    left.

    * `-NONE-` preterminals are removed, then every constituent left without children,
      recursively.
    * Function tags and co-indices are stripped from constituent labels: `NP-SBJ-1`, `NP-SBJ=2`
      and `NP=2` become `NP`, `S-TPC-2` becomes `S`; of `A|B` the first is kept (`ADVP|PRT` ->
      `ADVP`). Labels that start with `-` are kept as they are. POS tags are never changed.
    * A root bracket that is unlabelled or labelled `TOP`/`ROOT` is dropped, and the result is
      always `Tree("TOP", [top-level constituents...])`. Any other root label is a top-level
      constituent: `(S ...)` becomes `(TOP (S ...))`.
    * Unary chains are kept.

    # Raises

    `ValueError` if the tree has a node mixing words and constituents, or the root bracket is
    itself a preterminal such as `(TOP word)`.
    """
    if isinstance(tree, str):
        raise ValueError(f"expected a tree, got the word {tree!r}")
    if tree.label() in ROOT_LABELS:
        if is_preterminal(tree):
            raise ValueError(
                f"the root bracket ({tree.label()} {tree[0]}) holds a word directly; "
                "the word needs a POS preterminal: (TOP (POS word))"
            )
        top_level = list(tree)
    else:
        top_level = [tree]
    children = []
    for child in top_level:
        if isinstance(child, str):
            raise ValueError(
                f"the root bracket mixes words and constituents at {child!r}; each word must be "
                "inside its own (POS word) preterminal"
            )
        normalised = _normalise_node(child)
        if normalised is not None:
            children.append(normalised)
    if not children:
        return None
    return Tree("TOP", children)


def _split_top_level_plus(label: str) -> List[str]:
    """Splits on `+` outside square brackets, so `S+NP[+theme]` -> `["S", "NP[+theme]"]`."""
    if "[" not in label:
        return label.split(UNARY_JOIN)
    parts = []
    depth = 0
    current = []
    for char in label:
        if char == "[":
            depth += 1
        elif char == "]":
            depth = max(depth - 1, 0)
        if char == UNARY_JOIN and depth == 0:
            parts.append("".join(current))
            current = []
        else:
            current.append(char)
    parts.append("".join(current))
    return parts


def _joinable(label: str) -> bool:
    if UNARY_JOIN not in label:
        return bool(label)
    return len(_split_top_level_plus(label)) == 1


def collapse_label(labels: Sequence[str]) -> str:
    """
    Joins the labels of a unary chain, top to bottom: `["S", "VP"]` -> `"S+VP"`.

    # Raises

    `ValueError` if a label is empty or itself contains `+` (outside square brackets, so
    Sinica labels like `NP[+theme]` are fine), because the joint label could not be split back.
    """
    if not labels:
        raise ValueError("cannot collapse an empty chain of labels")
    for label in labels:
        if not _joinable(label):
            raise ValueError(
                f"the constituent label {label!r} cannot be part of a joint label: it is empty or "
                f"contains {UNARY_JOIN!r}, which joins the labels of unary chains"
            )
    return UNARY_JOIN.join(labels)


def expand_label(label: str) -> List[str]:
    """The inverse of `collapse_label`: `"S+VP"` -> `["S", "VP"]`, `"NP"` -> `["NP"]`."""
    if UNARY_JOIN not in label and label:
        return [label]
    parts = _split_top_level_plus(label)
    if any(not part for part in parts):
        raise ValueError(f"malformed joint label {label!r}")
    return parts


def tree_to_spans(tree: Tree) -> Tuple[List[str], List[str], List[Tuple[int, int, str]]]:
    """
    Returns the words, the POS tags and the labelled spans of a normalised `TOP` tree.

    Spans are `(start, end_exclusive, label)`. Every constituent below the root is a span,
    including constituents over one word (`(NP (PRP he))` -> `(i, i + 1, "NP")`); preterminals
    and the root are not. A unary chain over one span gives one span whose label joins the
    chain's labels from top to bottom (`(S (VP ...))` -> `"S+VP"`). Spans are sorted by
    `(start, -end)`, i.e. parents before their children.

    # Raises

    `ValueError` if a constituent label cannot be joined (see `collapse_label`) or the tree
    mixes words and constituents in one node.
    """
    words: List[str] = []
    tags: List[str] = []
    spans: List[Tuple[int, int, str]] = []

    def visit(node: Tree, chain: List[str]) -> None:
        # `chain` holds the labels of the unary ancestors sharing this node's span.
        if is_preterminal(node):
            if chain:
                spans.append((len(words), len(words) + 1, collapse_label(chain)))
            words.append(list.__getitem__(node, 0))
            tags.append(node.label())
            return
        if len(node) == 1:
            only = list.__getitem__(node, 0)
            if isinstance(only, str):
                raise ValueError(f"({node.label()} {only}) is not a preterminal")
            visit(only, chain + [node.label()])
            return
        start = len(words)
        position = len(spans)
        spans.append((0, 0, ""))  # filled in below, so that parents precede their children
        for child in node:
            if isinstance(child, str):
                raise ValueError(
                    f"({node.label()} ...) mixes words and constituents at {child!r}; each word "
                    "must be inside its own (POS word) preterminal"
                )
            visit(child, [])
        spans[position] = (start, len(words), collapse_label(chain + [node.label()]))

    if isinstance(tree, str):
        raise ValueError(f"expected a tree, got the word {tree!r}")
    for child in tree:
        if isinstance(child, str):
            raise ValueError(f"the root ({tree.label()} ...) holds the word {child!r} directly")
        visit(child, [])
    return words, tags, spans


def _build(labels: Sequence[str], children: List) -> Tree:
    node = Tree(labels[-1], children)
    for label in reversed(labels[:-1]):
        node = Tree(label, [node])
    return node


def spans_to_tree(
    words: Sequence[str],
    tags: Sequence[str],
    spans: Sequence[Tuple[int, int, str]],
    root_label: str = "TOP",
) -> Tree:
    """
    Builds a tree from labelled spans: the inverse of `tree_to_spans`, so
    `spans_to_tree(*tree_to_spans(t)) == t` for every normalised tree `t`.

    Joint labels (`S+VP`) are expanded back into unary chains; a word whose own one-word span
    is not given attaches to the smallest span enclosing it (or to the root). Spans may come in
    any order; the work is O(m log m + n) for m spans and n words.

    # Parameters

    words : `Sequence[str]`
    tags : `Sequence[str]`
        One POS tag per word.
    spans : `Sequence[Tuple[int, int, str]]`
        `(start, end_exclusive, label)` triples; ints from numpy are accepted.
    root_label : `str`, optional (default = `"TOP"`)

    # Raises

    `ValueError` if the lengths of `words` and `tags` differ, a span is empty or out of range,
    two spans cross, the same span is given twice, or a label is empty.
    """
    n = len(words)
    if len(tags) != n:
        raise ValueError(f"{n} words but {len(tags)} POS tags")
    ordered = []
    for span in spans:
        start, end, label = int(span[0]), int(span[1]), span[2]
        if not 0 <= start < end <= n:
            raise ValueError(f"span ({start}, {end}, {label!r}) is out of range for {n} words")
        ordered.append((start, -end, label))
    ordered.sort(key=lambda item: (item[0], item[1]))

    preterminals = [Tree(tag, [word]) for word, tag in zip(words, tags)]
    # Open constituents: (start, end, labels, children). The root spans everything.
    stack: List[Tuple[int, int, List[str], List]] = [(0, n, [root_label], [])]
    position = 0  # the next word to attach

    def close() -> None:
        nonlocal position
        start, end, labels, children = stack.pop()
        children.extend(preterminals[position:end])
        position = max(position, end)
        stack[-1][3].append(_build(labels, children))

    for start, negative_end, label in ordered:
        end = -negative_end
        while stack[-1][1] <= start:
            close()
        top_start, top_end, top_labels, top_children = stack[-1]
        if end > top_end:
            raise ValueError(
                f"span ({start}, {end}, {label!r}) crosses span "
                f"({top_start}, {top_end}, {UNARY_JOIN.join(top_labels)!r})"
            )
        if len(stack) > 1 and (start, end) == (top_start, top_end):
            raise ValueError(
                f"span ({start}, {end}) is given twice: {UNARY_JOIN.join(top_labels)!r} and "
                f"{label!r} (join a unary chain into one label instead)"
            )
        top_children.extend(preterminals[position:start])
        position = max(position, start)
        stack.append((start, end, expand_label(label), []))
    while len(stack) > 1:
        close()
    root_children = stack[0][3]
    root_children.extend(preterminals[position:])
    return Tree(root_label, root_children)


def tree_pos(tree: Tree) -> List[Tuple[str, str]]:
    """`(word, tag)` of each preterminal from left to right, as nltk's `Tree.pos()`, with an
    explicit stack instead of recursion (see `tree_to_string`)."""
    pairs: List[Tuple[str, str]] = []
    stack: List = [tree]
    while stack:
        node = stack.pop()
        if is_preterminal(node):
            pairs.append((list.__getitem__(node, 0), node.label()))
        else:
            stack.extend(child for child in reversed(node) if isinstance(child, Tree))
    return pairs


def tree_to_string(tree: Tree) -> str:
    """One-line bracketed string: `(TOP (S (NP (PRP He)) (VP (VBD left)) (. .)))`.

    Written with an explicit stack, not recursion: a parser's tree of a long sentence can be
    nested deeper than Python's recursion limit."""
    if isinstance(tree, str):
        return tree
    parts: List[str] = []
    # Items: a node to open, or the text to write when its children are done.
    stack: List = [tree]
    while stack:
        item = stack.pop()
        if isinstance(item, Tree):
            parts.append("(" + str(item.label()))
            stack.append(")")
            for child in reversed(item):
                stack.append(child if isinstance(child, Tree) else " " + child)
                if isinstance(child, Tree):
                    stack.append(" ")
        else:
            parts.append(item)
    return "".join(parts)
