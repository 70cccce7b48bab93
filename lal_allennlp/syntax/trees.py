"""
Pure tree utilities for bracketed treebanks in the Penn Treebank style (Marcus et al. 1993,
"Building a Large Annotated Corpus of English: The Penn Treebank"); no AllenNLP, no torch.

Trees are `nltk.Tree` objects: internal nodes carry a string label, preterminals are
`Tree(POS, [word])` (`is_preterminal`) and leaves are word strings.

* `parse_trees` reads one or many bracketed trees from a string (raw WSJ `.mrg` files with
  multi-line trees and an unlabelled outer bracket, or one tree per line) and yields each tree
  with the line where it starts. Malformed input raises `TreebankFormatError` naming the source
  and the line.
* `normalise_tree` applies the usual evaluation normalisation (Collins 1997; the `evalb`
  setting used by Stern et al. 2017, Kitaev & Klein 2018 and Mrini et al. 2020): empty elements
  (`-NONE-`) and constituents left empty are removed, function tags and co-indices are stripped
  (`NP-SBJ-1` -> `NP`) and the result is always rooted in `TOP`.
* `tree_to_spans` / `spans_to_tree` convert between a normalised tree and the labelled spans a
  span-based parser scores, with unary chains collapsed into joint labels (`S+VP`) as in
  Stern et al. (2017, section 3) and Kitaev & Klein (2018, section 2).
"""

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


# Advice shared by the errors about words outside preterminals.
_ONE_WORD_PER_PRETERMINAL = "each word must be inside its own (POS word) preterminal"


class _Node:
    """A bracket being read: its label, children and the line it starts on."""

    __slots__ = ("label", "children", "line", "has_word", "has_tree")

    def __init__(self, label: Optional[str], line: int) -> None:
        self.label = label  # None until the token after "(" has been seen
        self.children: List = []
        self.line = line
        self.has_word = False
        self.has_tree = False

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
) -> Iterator[Tuple[Tree, int]]:
    """
    Reads bracketed trees from `text` and yields `(tree, line)` pairs, where `line` is the
    1-based line on which the tree's opening bracket stands.

    Trees may span many lines (raw WSJ `.mrg` files) or stand one per line. The token after an
    opening bracket is the node's label; an opening bracket directly followed by another one
    gets the label `""` (the unlabelled outer bracket `( (S ...) )` of the WSJ files). Words and
    labels are any runs of characters other than white space and round brackets. A node holds
    either exactly one word (a preterminal) or one or more bracketed children.

    # Parameters

    text : `str`
        The treebank text.
    source : `str`, optional (default = `"<string>"`)
        Named in error messages, normally the file name.
    errors : `Optional[List[TreebankFormatError]]`, optional (default = `None`)
        If `None`, the first problem raises a `TreebankFormatError`. Otherwise problems are
        appended to this list and reading goes on: a malformed tree is dropped whole, a stray
        `)` or text outside brackets is passed over.

    # Raises

    `TreebankFormatError` on a `)` that closes nothing, text outside brackets, a bracket with
    no label or no children, a node mixing words and brackets or holding several words, or a
    tree still open at the end of the text.
    """
    # Tokens with their lines -> trees, each yielded once the next one starts -> a tree left
    # open at the end is an error.
    builder = _TreeBuilder(source, errors)
    for line, token in _bracket_tokens(text):
        complete = builder.read(line, token)
        if complete is not None:
            yield complete
    if builder.pending is not None:
        yield builder.pending
    builder.check_all_closed(text)


def _bracket_tokens(text: str) -> Iterator[Tuple[int, re.Match[str]]]:
    """
    The tokens of `text` with their 1-based lines: a whole one-line preterminal `(POS word)`
    (group 1 the tag, group 2 the word), `(`, `)`, or a label or word.
    """
    for line_index, line_text in enumerate(text.split("\n")):
        for token in _TOKEN_RE.finditer(line_text):
            yield line_index + 1, token


def _recognise_outer_bracket(node: _Node) -> None:
    """
    A bracket whose first token opens another bracket has no label: it is the outer bracket
    `( (S ...) )` of raw WSJ files, and gets the label `""`.
    """
    if node.label is None:
        node.label = ""


class _TreeBuilder:
    """
    Builds trees from the tokens of `_bracket_tokens`, one token at a time, and reports what is
    malformed (see `parse_trees`).

    A complete tree is held back (`pending`) until the next tree starts: a stray `)` right
    after a tree means that tree closed too early, so it is dropped rather than yielded.
    """

    def __init__(self, source: str, errors: Optional[List[TreebankFormatError]]) -> None:
        self.source = source
        self.errors = errors
        # The open brackets of the tree being read, outermost first.
        self.stack: List[_Node] = []
        # The tree being read has an error: it is dropped when it closes.
        self.tree_broken = False
        # The last complete tree and its line, not yet yielded.
        self.pending: Optional[Tuple[Tree, int]] = None
        # A line inside the open tree whose first character is "(": in multi-line files that
        # usually starts the next tree, so a ")" is probably missing before it.
        self.suspicious_line: Optional[int] = None
        # Set on text outside brackets, so that a run of such text is reported once.
        self.stray_text_line: Optional[int] = None

    def read(self, line: int, token: re.Match[str]) -> Optional[Tuple[Tree, int]]:
        """Reads one token; returns the previous tree if this token starts a new one."""
        tag = token.group(1)
        if tag is not None:
            return self._read_preterminal(line, tag, token.group(2))
        text = token.group()
        if text == "(":
            return self._open_bracket(line, at_line_start=token.start() == 0)
        if text == ")":
            self._close_bracket(line)
        elif not self.stack:
            self._read_text_outside_brackets(line, text)
        else:
            self._read_label_or_word(line, text)
        return None

    def _read_preterminal(self, line: int, tag: str, word: str) -> Optional[Tuple[Tree, int]]:
        self.stray_text_line = None
        preterminal = Tree(tag, [word])
        if not self.stack:
            # A whole tree of one preterminal.
            previous, self.pending = self.pending, (preterminal, line)
            return previous
        parent = self.stack[-1]
        _recognise_outer_bracket(parent)
        if self.tree_broken:
            return None
        if parent.has_word:
            self._break_tree(
                line, f"({parent.label} ...) mixes words and brackets", _ONE_WORD_PER_PRETERMINAL
            )
            return None
        parent.add_tree(preterminal)
        return None

    def _open_bracket(self, line: int, at_line_start: bool) -> Optional[Tuple[Tree, int]]:
        self.stray_text_line = None
        previous = None
        if self.stack:
            _recognise_outer_bracket(self.stack[-1])
            if at_line_start and self.suspicious_line is None:
                self.suspicious_line = line
        else:
            previous, self.pending = self.pending, None
        self.stack.append(_Node(None, line))
        return previous

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
            self.pending = (Tree(root.label, root.children), root.line)
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
        if self.pending is None:
            self._report(line, "')' closes no open bracket", "remove it")
            return
        self._report(
            line,
            "')' closes no open bracket, so the tree starting on line "
            f"{self.pending[1]} has one ')' too many (it is dropped)",
            "remove the extra ')' inside that tree",
        )
        self.pending = None

    def check_all_closed(self, text: str) -> None:
        """Reports a tree still open at the end of `text`."""
        if not self.stack:
            return
        start = self.stack[0].line
        last = len(text.rstrip().split("\n"))
        advice = f"add the missing ')'; the open tree runs to the end of the text on line {last}"
        if self.suspicious_line is not None and self.suspicious_line != start:
            advice += (
                f"; line {self.suspicious_line} opens a bracket in its first column while this "
                "tree is still open, so a ')' is probably missing just before it"
            )
        self._report(
            start, f"the tree starting on line {start} is not closed at the end of the text", advice
        )

    def _break_tree(self, line: int, problem: str, advice: str) -> None:
        """Reports a problem inside the tree being read, which is then dropped."""
        self._report(line, problem, advice)
        self.tree_broken = True

    def _report(self, line: int, problem: str, advice: str) -> None:
        """Raises the problem, or appends it to `errors` if a list was given."""
        error = TreebankFormatError(self.source, line, problem, advice)
        if self.errors is None:
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


def tree_to_string(tree: Tree) -> str:
    """One-line bracketed string: `(TOP (S (NP (PRP He)) (VP (VBD left)) (. .)))`."""
    parts: List[str] = []

    def visit(node: Tree) -> None:
        parts.append("(")
        parts.append(node.label())
        for child in node:
            parts.append(" ")
            if isinstance(child, str):
                parts.append(child)
            else:
                visit(child)
        parts.append(")")

    if isinstance(tree, str):
        return tree
    visit(tree)
    return "".join(parts)
