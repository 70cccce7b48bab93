"""
Mutations of treebank files for fuzzing the readers: the damage real files suffer (cut short,
a bracket lost or doubled, a flipped byte, the wrong encoding, tabs turned into spaces, a
column lost or swapped, blank lines lost or doubled) applied to the text of a real file.

Every mutation is a function `(text, family, rng) -> Mutated` drawing its choices from a
`random.Random`: the hypothesis tests pass one whose draws hypothesis controls
(`st.randoms(use_true_random=False)`), the benchmark a seeded one, so both run the same code.
A `Mutated` carries the new bytes and what an oracle needs to know beyond them: whether the
mutation keeps the file's content (`same`), the reader's `encoding` option to use, and where
a truncation cut the text.

`family` is `"brackets"` (PTB/CTB trees) or `"tabular"` (CoNLL-X, CoNLL-U, Malt-TAB).
"""

import random
import re
from dataclasses import dataclass
from typing import Callable, Dict, List, Optional, Sequence, Tuple

BRACKETS = "brackets"
TABULAR = "tabular"

# Bytes a flip prefers: those that structure the formats, then anything.
_STRUCTURAL_BYTES = b"()\t\n\r #_-0123456789<>/=\x00\xff"


@dataclass
class Mutated:
    """
    A mutated file.

    # Parameters

    name : `str`
        The mutation's name (counted by the benchmark).
    description : `str`
        What was done, precisely enough to redo it by hand.
    data : `bytes`
        The file's new bytes.
    encoding : `Optional[str]`, optional (default = `None`)
        The `encoding` option to read it with; `None` leaves the reader's default.
    same : `bool`, optional (default = `False`)
        The file still holds exactly the original sentences: reading must give them all.
    cut : `Optional[int]`, optional (default = `None`)
        For a truncation, the character offset in the original text where it was cut.
    """

    name: str
    description: str
    data: bytes
    encoding: Optional[str] = None
    same: bool = False
    cut: Optional[int] = None


Mutation = Callable[[str, str, random.Random], Mutated]


def _utf8(text: str) -> bytes:
    return text.encode("utf-8", "surrogateescape")


def _position(text: str, rng: random.Random, pattern: str) -> Optional[int]:
    """A random offset of a match of `pattern` in `text`, or `None` if it has none."""
    matches = [match.start() for match in re.finditer(pattern, text)]
    return rng.choice(matches) if matches else None


def _token_lines(text: str) -> List[int]:
    """The 0-based numbers of the lines that hold columns (not blank, not `#` comments)."""
    return [
        number
        for number, line in enumerate(text.split("\n"))
        if line.strip() and "\t" in line and not line.startswith("# ")
    ]


# ----------------------------------------------------------------------------------------------
# Local edits: the oracle finds the sentence(s) they touch by comparing texts
# ----------------------------------------------------------------------------------------------


def truncate(text: str, family: str, rng: random.Random) -> Mutated:
    """The file cut at any character (as by an interrupted copy)."""
    cut = rng.randint(0, len(text))
    return Mutated("truncate", f"cut after character {cut}", _utf8(text[:cut]), cut=cut)


def insert_bracket(text: str, family: str, rng: random.Random) -> Mutated:
    position = rng.randint(0, len(text))
    bracket = rng.choice("()")
    new = text[:position] + bracket + text[position:]
    return Mutated("insert_bracket", f"{bracket!r} inserted at character {position}", _utf8(new))


def delete_bracket(text: str, family: str, rng: random.Random) -> Mutated:
    position = _position(text, rng, r"[()]")
    if position is None:
        return delete_character(text, family, rng)
    new = text[:position] + text[position + 1 :]
    shown = repr(text[position])
    return Mutated("delete_bracket", f"{shown} deleted at character {position}", _utf8(new))


def delete_character(text: str, family: str, rng: random.Random) -> Mutated:
    if not text:
        return Mutated("delete_character", "nothing to delete", b"", same=True)
    position = rng.randrange(len(text))
    new = text[:position] + text[position + 1 :]
    shown = repr(text[position])
    return Mutated("delete_character", f"{shown} deleted at character {position}", _utf8(new))


def flip_byte(text: str, family: str, rng: random.Random) -> Mutated:
    """One byte of the UTF-8 file replaced, often by a byte that structures the formats."""
    data = bytearray(_utf8(text))
    if not data:
        return Mutated("flip_byte", "nothing to flip", b"", same=True)
    position = rng.randrange(len(data))
    if rng.random() < 0.5:
        new = rng.choice(_STRUCTURAL_BYTES)
    else:
        new = rng.randrange(256)
    old = data[position]
    data[position] = new
    description = f"byte {position} changed from 0x{old:02x} to 0x{new:02x}"
    return Mutated("flip_byte", description, bytes(data), same=old == new)


def remove_blank_line(text: str, family: str, rng: random.Random) -> Mutated:
    """One blank line removed (tabular: two sentences run together), or a line break (trees)."""
    pattern = r"\n(?=\n)" if family == TABULAR else r"\n"
    position = _position(text, rng, pattern)
    if position is None:
        return delete_character(text, family, rng)
    new = text[:position] + text[position + 1 :]
    description = f"the line break at character {position} removed"
    # Trees do not depend on line breaks.
    return Mutated("remove_blank_line", description, _utf8(new), same=family == BRACKETS)


def duplicate_blank_line(text: str, family: str, rng: random.Random) -> Mutated:
    """A blank line doubled (tabular), or a blank line inserted after any line (trees)."""
    pattern = r"\n(?=\n)" if family == TABULAR else r"\n"
    position = _position(text, rng, pattern)
    if position is None:
        return Mutated("duplicate_blank_line", "no blank line", _utf8(text), same=True)
    new = text[:position] + "\n" + text[position:]
    description = f"a blank line inserted at character {position}"
    return Mutated("duplicate_blank_line", description, _utf8(new), same=True)


def reindent_line(text: str, family: str, rng: random.Random) -> Mutated:
    """The indentation of one line removed or deepened (layout only, for trees)."""
    lines = text.split("\n")
    number = rng.randrange(len(lines))
    stripped = lines[number].lstrip(" \t")
    indented = stripped if stripped != lines[number] else "    " + stripped
    lines[number] = indented
    description = f"line {number + 1} re-indented"
    return Mutated("reindent_line", description, _utf8("\n".join(lines)), same=family == BRACKETS)


def one_tab_to_space(text: str, family: str, rng: random.Random) -> Mutated:
    """One tab of the file turned into a space (a column split lost)."""
    position = _position(text, rng, "\t")
    if position is None:
        position = _position(text, rng, " ")
        if position is None:
            return delete_character(text, family, rng)
        new = text[:position] + "\t" + text[position + 1 :]
        return Mutated("one_tab_to_space", f"space {position} -> tab", _utf8(new))
    new = text[:position] + " " + text[position + 1 :]
    return Mutated("one_tab_to_space", f"tab {position} -> space", _utf8(new))


# ----------------------------------------------------------------------------------------------
# Whole-file changes
# ----------------------------------------------------------------------------------------------


def tabs_to_spaces(text: str, family: str, rng: random.Random) -> Mutated:
    """Every tab of the file a space, or every space a tab (on one line or all of them)."""
    old, new = rng.choice([("\t", " "), (" ", "\t")])
    lines = text.split("\n")
    if rng.random() < 0.5:
        number = rng.randrange(len(lines))
        lines[number] = lines[number].replace(old, new)
        where = f"on line {number + 1}"
    else:
        lines = [line.replace(old, new) for line in lines]
        where = "everywhere"
    description = f"{old!r} -> {new!r} {where}"
    # The slices' columns hold no spaces (`reader_properties` checks), so the columns of a
    # line survive either way; trees and comment lines do not depend on the kind of space.
    return Mutated("tabs_to_spaces", description, _utf8("\n".join(lines)), same=True)


def crlf(text: str, family: str, rng: random.Random) -> Mutated:
    """Windows line breaks."""
    return Mutated("crlf", "\\n -> \\r\\n everywhere", _utf8(text.replace("\n", "\r\n")), same=True)


def add_bom(text: str, family: str, rng: random.Random) -> Mutated:
    """A UTF-8 byte-order mark in front."""
    data = b"\xef\xbb\xbf" + _utf8(text)
    return Mutated("add_bom", "UTF-8 byte-order mark added", data, same=True)


def reencode(
    text: str, family: str, rng: random.Random, codecs: Sequence[str] = ()
) -> Mutated:
    """
    The file in another encoding, read either with the matching `encoding` option (the same
    sentences must come back) or without it (an error naming the encoding option, unless the
    bytes do not change or the reader detects the encoding).
    """
    candidates = list(codecs) or ["latin-1", "cp1252", "gbk", "big5", "utf-16", "utf-16-le"]
    rng.shuffle(candidates)
    for codec in candidates:
        try:
            data = text.encode(codec)
        except UnicodeEncodeError:
            continue
        if rng.random() < 0.5:
            return Mutated("reencode_with_option", f"encoded as {codec}, read as {codec}", data,
                           encoding=codec, same=True)
        same = data == _utf8(text)
        return Mutated("reencode", f"encoded as {codec}, read with the default", data, same=same)
    return Mutated("reencode", "no codec encodes the text", _utf8(text), same=True)


# ----------------------------------------------------------------------------------------------
# Columns (tabular files)
# ----------------------------------------------------------------------------------------------


def _line_scope(text: str, rng: random.Random) -> Tuple[List[str], List[int], str]:
    """The lines of `text` and the token lines to change: one, one sentence's or all."""
    lines = text.split("\n")
    token_lines = _token_lines(text)
    if not token_lines:
        return lines, [], "no token line"
    scope = rng.choice(["line", "sentence", "file"])
    if scope == "line":
        chosen = [rng.choice(token_lines)]
        return lines, chosen, f"on line {chosen[0] + 1}"
    if scope == "sentence":
        start = rng.choice(token_lines)
        chosen = [start]
        for number in range(start + 1, len(lines)):
            if not lines[number].strip():
                break
            if number in token_lines:
                chosen.append(number)
        return lines, chosen, f"on lines {chosen[0] + 1}-{chosen[-1] + 1}"
    return lines, token_lines, "on every token line"


def swap_columns(text: str, family: str, rng: random.Random) -> Mutated:
    lines, chosen, where = _line_scope(text, rng)
    width = max((len(lines[n].split("\t")) for n in chosen), default=0)
    if width < 2:
        return one_tab_to_space(text, family, rng)
    first, second = rng.sample(range(width), 2)
    for number in chosen:
        columns = lines[number].split("\t")
        if max(first, second) < len(columns):
            columns[first], columns[second] = columns[second], columns[first]
            lines[number] = "\t".join(columns)
    description = f"columns {first + 1} and {second + 1} swapped {where}"
    return Mutated("swap_columns", description, _utf8("\n".join(lines)))


def delete_column(text: str, family: str, rng: random.Random) -> Mutated:
    lines, chosen, where = _line_scope(text, rng)
    width = max((len(lines[n].split("\t")) for n in chosen), default=0)
    if width < 1:
        return one_tab_to_space(text, family, rng)
    column = rng.randrange(width)
    for number in chosen:
        columns = lines[number].split("\t")
        if column < len(columns):
            del columns[column]
            lines[number] = "\t".join(columns)
    description = f"column {column + 1} deleted {where}"
    return Mutated("delete_column", description, _utf8("\n".join(lines)))


# ----------------------------------------------------------------------------------------------
# Choosing one
# ----------------------------------------------------------------------------------------------

COMMON: Dict[str, Mutation] = {
    "truncate": truncate,
    "insert_bracket": insert_bracket,
    "delete_bracket": delete_bracket,
    "delete_character": delete_character,
    "flip_byte": flip_byte,
    "remove_blank_line": remove_blank_line,
    "duplicate_blank_line": duplicate_blank_line,
    "tabs_to_spaces": tabs_to_spaces,
    "crlf": crlf,
    "add_bom": add_bom,
}
BRACKET_ONLY: Dict[str, Mutation] = {"reindent_line": reindent_line}
TABULAR_ONLY: Dict[str, Mutation] = {
    "one_tab_to_space": one_tab_to_space,
    "swap_columns": swap_columns,
    "delete_column": delete_column,
}


def mutations_for(family: str) -> Dict[str, Mutation]:
    """The mutations that make sense for a family of formats (`reencode` aside)."""
    extra = BRACKET_ONLY if family == BRACKETS else TABULAR_ONLY
    return {**COMMON, **extra}


def mutate(
    text: str, family: str, rng: random.Random, codecs: Sequence[str] = ()
) -> Mutated:
    """
    One random mutation of `text` (one of `mutations_for(family)` or `reencode` with one of
    `codecs`). Local edits, which find most bugs, are drawn more often than whole-file ones.
    """
    table = mutations_for(family)
    names = sorted(table) + ["reencode"]
    weights = [1 if name in ("crlf", "add_bom", "duplicate_blank_line") else 3 for name in names]
    name = rng.choices(names, weights)[0]
    if name == "reencode":
        return reencode(text, family, rng, codecs)
    return table[name](text, family, rng)
