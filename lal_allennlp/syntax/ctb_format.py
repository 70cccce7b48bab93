"""
The files of the Penn Chinese Treebank as the LDC distributes it (Xue et al. 2005, "The Penn
Chinese TreeBank: Phrase structure annotation of a large corpus"; releases 5.1 to 9.0); no
allennlp or torch import.

* One file per document, named after its file id: `chtb_001.fid` (CTB 5.1), `chtb_0001.mrg`,
  `chtb_3001.bn`, `chtb_0001.nw` ... (later releases, which name the genre in the suffix).
* Trees in Penn Treebank brackets (`( (IP (NP-SBJ ...) ...) )`, `-NONE-` empty elements,
  function tags) inside SGML-like markup: `<DOC>`, `<HEADER>`, `<HEADLINE>`, `<TEXT>`, `<P>`
  and one `<S ID=...>` ... `</S>` element per sentence.
* GB2312/GBK in the older releases, UTF-8 in the newer ones.

`decode_ctb` decodes (detecting UTF-8 or GB18030, the superset of GB2312 and GBK),
`strip_markup` blanks the markup so that `trees.parse_trees` reads the trees with their true
line numbers, `ctb_file_id` / `parse_file_id_ranges` / `CTB51_SPLITS` select files by id.
"""

import os
import re
from typing import Dict, Iterator, List, Optional, Sequence, Tuple

from lal_allennlp.syntax.trees import BAD_CHARACTER_RE, TreebankFormatError, encoding_advice
from lal_allennlp.syntax.trees import mostly_undecodable

# Suffixes of CTB files (all releases), and of bracketed files generally.
CTB_SUFFIXES = (".fid", ".mrg", ".nw", ".bn", ".mz", ".bc", ".wb", ".df", ".sc", ".sm")
CTB_SUFFIXES += (".tree", ".trees", ".txt")

FileIdRanges = Tuple[Tuple[int, int], ...]

CTB51_SPLITS: Dict[str, str] = {
    "train": "1-270,440-1151",
    "dev": "301-325",
    "test": "271-300",
}
"""
The standard CTB 5.1 split by file id (Zhang & Clark 2008; used by Kitaev & Klein, Zhou & Zhao
and Mrini et al.): 18,104 training, 352 development and 348 test sentences.
"""

# `chtb_0001.fid`, `chtb_001.fid`, `CHTB_0001.nw.mrg`: the file id is the number.
_FILE_ID_RE = re.compile(r"^chtb_(\d+)(?!\d)", re.IGNORECASE)
# `1-270`, `301`
_RANGE_RE = re.compile(r"^\s*(\d+)\s*(?:-\s*(\d+)\s*)?$")
# A markup tag: `<S ID=1>`, `</S>`, `<P>`, `<DOC DOCID="...">`. The name must start with a
# letter, so words such as `<` or `<=` inside trees are never taken for markup.
_TAG_RE = re.compile(r"<(/?)([A-Za-z][A-Za-z0-9_.-]*)((?:\s[^<>\n]*)?)>")
# Elements whose text is metadata rather than trees (used only in files without `<S>`).
METADATA_ELEMENTS = frozenset(
    {"DOCID", "DOCNO", "DOCTYPE", "DATE", "DATETIME", "DATE_TIME", "HEADER", "ENDTIME"}
    | {"AUTHOR", "POSTER", "POSTDATE", "SPEAKER", "SOURCE", "TITLE", "URL", "SU"}
)


def ctb_file_id(path: str) -> Optional[int]:
    """The file id of a CTB file (`.../chtb_0301.fid` -> 301), or `None` for other names."""
    match = _FILE_ID_RE.match(os.path.basename(path))
    return int(match.group(1)) if match else None


def parse_file_id_ranges(spec: str) -> FileIdRanges:
    """
    `"1-270,440-1151"` -> `((1, 270), (440, 1151))`; a single id `"301"` is `(301, 301)`.

    # Raises

    `ValueError` naming the bad part.
    """
    ranges = []
    for part in spec.split(","):
        match = _RANGE_RE.match(part)
        if match is None:
            raise ValueError(
                f"{part.strip()!r} in the file-id ranges {spec!r} is not a file id or a range "
                "such as 1-270"
            )
        low = int(match.group(1))
        high = int(match.group(2)) if match.group(2) is not None else low
        if low > high:
            raise ValueError(f"the file-id range {part.strip()!r} is empty ({low} > {high})")
        ranges.append((low, high))
    return tuple(ranges)


def select_by_file_id(paths: Sequence[str], ranges: FileIdRanges) -> List[str]:
    """The CTB files among `paths` whose file id lies in one of `ranges`, sorted by file id."""
    chosen = []
    for path in paths:
        file_id = ctb_file_id(path)
        if file_id is not None and any(low <= file_id <= high for low, high in ranges):
            chosen.append((file_id, path))
    return [path for _, path in sorted(chosen)]


def _line_of(data: bytes, offset: int) -> int:
    return data.count(b"\n", 0, offset) + 1


def decode_ctb(
    path: str, data: bytes, encoding: Optional[str] = None, errors: str = "strict"
) -> str:
    """
    Decodes the bytes of a treebank file. With `encoding` `None`, UTF-8 (a byte-order mark is
    dropped) is tried first and GB18030 (which reads GB2312 and GBK) second: text in one of the
    GB encodings is almost never valid UTF-8. Otherwise `encoding` is used (any Python codec
    name: `gbk`, `gb2312`, `utf-8`, `big5` ...). A NUL character counts as undecodable (UTF-16
    text read as UTF-8 or GB18030 is full of them).

    With `errors="surrogateescape"` nothing is raised: undecodable bytes become lone surrogates,
    which `trees.parse_trees` reports in the trees that hold them (when detecting, the
    encoding that leaves fewer of them is taken).

    # Raises

    `TreebankFormatError` naming the file, the line and the byte that could not be decoded.
    """
    lenient = errors != "strict"
    if encoding is not None:
        try:
            if lenient:
                text = data.decode(encoding, errors)
                if not mostly_undecodable(text):
                    return text
            text = data.decode(encoding)
        except UnicodeDecodeError as error:
            raise TreebankFormatError(
                path,
                _line_of(data, error.start),
                f"not valid {encoding} at byte offset {error.start} (byte "
                f"0x{data[error.start]:02x})",
                "check the reader's `encoding` option, or leave it out to detect UTF-8 or GBK",
            ) from None
        except LookupError:
            raise TreebankFormatError(
                path, None, f"unknown encoding {encoding!r}", "use a Python codec name, e.g. gbk"
            ) from None
        return _without_nul(path, data, text)
    if lenient:
        candidates = [data.decode("utf-8-sig", errors)]
        gb_text = data.decode("gb18030", errors)
        if not _PRIVATE_USE_RE.search(gb_text):
            candidates.append(gb_text)
        text = min(candidates, key=_undecodable_count)
        if not mostly_undecodable(text):
            return text
    try:
        return _without_nul(path, data, data.decode("utf-8-sig"))
    except UnicodeDecodeError as utf8_error:
        problem = (
            f"neither UTF-8 nor GB18030/GBK/GB2312: byte 0x{data[utf8_error.start]:02x} at "
            f"offset {utf8_error.start} is not valid UTF-8 and the file is not valid GB18030"
        )
        advice = (
            "convert the file to UTF-8, or name its encoding with the reader's `encoding` option"
        )
        try:
            text = data.decode("gb18030")
        except UnicodeDecodeError:
            raise TreebankFormatError(
                path, _line_of(data, utf8_error.start), problem, advice
            ) from None
        private = _PRIVATE_USE_RE.search(text)
        if private is not None:
            # GB18030 decodes Big5 and other double-byte encodings too, but into characters of
            # GBK's user-defined areas (private use) that no treebank holds.
            raise TreebankFormatError(
                path,
                text.count("\n", 0, private.start()) + 1,
                problem.replace("is not valid GB18030", "decodes as GB18030 only to private-use "
                                "characters (U+E000-U+F8FF), as Big5 text does"),
                advice + ' (e.g. "big5")',
            )
        return _without_nul(path, data, text)


def _undecodable_count(text: str) -> int:
    """How many bytes `errors="surrogateescape"` could not decode, plus NUL characters."""
    return len(BAD_CHARACTER_RE.findall(text))


# Characters of the Private Use Area: GBK's user-defined areas decode to them.
_PRIVATE_USE_RE = re.compile("[\ue000-\uf8ff]")


def _without_nul(path: str, data: bytes, text: str) -> str:
    """`text`, or a `TreebankFormatError` at its first NUL character."""
    position = text.find("\x00")
    if position < 0:
        return text
    raise TreebankFormatError(
        path,
        text.count("\n", 0, position) + 1,
        "a NUL character (byte 0x00): the file is probably UTF-16, not text in its encoding",
        encoding_advice(data),
    )


# Every character but the line break, for blanking text with its lines and offsets kept.
_NOT_A_LINE_BREAK_RE = re.compile("[^\n]")


def _tags(text: str) -> Iterator[Tuple[re.Match, int]]:
    """Markup tags of `text` with their 1-based line."""
    line = 1
    position = 0
    for match in _TAG_RE.finditer(text):
        line += text.count("\n", position, match.start())
        position = match.start()
        yield match, line


def strip_markup(
    text: str,
    source: str = "<string>",
    errors: Optional[List[TreebankFormatError]] = None,
    breaks: Optional[List[int]] = None,
) -> str:
    """
    Returns `text` with the CTB markup blanked and every line break kept, so that the line
    numbers of the trees do not change.

    If the text has `<S ...>` elements, only their contents are kept (headers, dates and other
    text outside sentences are dropped). Otherwise every tag is removed, and so is the text of
    metadata elements (`METADATA_ELEMENTS`: `<DATE>`, `<HEADER>`, `<DOCID>` ...); files with no
    markup at all come back unchanged.

    # Parameters

    text : `str`
    source : `str`, optional (default = `"<string>"`)
        Named in error messages, normally the file name.
    errors : `Optional[List[TreebankFormatError]]`, optional (default = `None`)
        If `None`, the first problem raises. Otherwise problems are appended to this list and
        the contents of a sentence whose `</S>` is missing are blanked (so its tree is dropped,
        reported here, rather than read with whatever follows it); a `</S>` that closes
        nothing is reported and passed over.
    breaks : `Optional[List[int]]`, optional (default = `None`)
        If given, the offset in the returned text of every `<S ...>` and `</S>` tag is
        appended to it, in order: the `breaks` of `trees.parse_trees`, so that a tree broken
        inside one sentence never costs another sentence's tree.

    # Raises

    `TreebankFormatError` naming the source and line for an `<S>` opened inside another one
    (a `</S>` is missing), a `</S>` that closes nothing, or an `<S>` still open at the end.
    """
    with_sentences = any(
        match.group(2).upper() == "S" and not match.group(1) for match, _ in _tags(text)
    )
    pieces: List[str] = []
    position = 0
    open_sentence: Optional[Tuple[int, str]] = None  # (line, the tag) of the open <S>
    sentence_start = 0  # the first of `pieces` inside the open <S>
    metadata_depth = 0

    def keep(segment: str) -> None:
        if (open_sentence is not None) if with_sentences else metadata_depth == 0:
            pieces.append(segment)
        else:
            pieces.append("\n" * segment.count("\n"))

    def report(line: int, problem: str, advice: str) -> None:
        error = TreebankFormatError(source, line, problem, advice)
        if errors is None:
            raise error
        errors.append(error)

    def drop_open_sentence() -> None:
        # Blanked with spaces, not removed, so that the offsets in `breaks` stay right.
        for index in range(sentence_start, len(pieces)):
            pieces[index] = _NOT_A_LINE_BREAK_RE.sub(" ", pieces[index])

    length = 0  # of the returned text so far
    for match, line in _tags(text):
        keep(text[position : match.start()])
        length += len(pieces[-1])
        position = match.end()
        closing, name = bool(match.group(1)), match.group(2).upper()
        if name == "S":
            if breaks is not None and with_sentences:
                breaks.append(length)
            if not closing and open_sentence is not None:
                report(
                    line,
                    f"{match.group()} opens a sentence inside {open_sentence[1]} of line "
                    f"{open_sentence[0]}" + ("" if errors is None else ", which is dropped"),
                    "a </S> is probably missing before it",
                )
                drop_open_sentence()
            if closing and open_sentence is None:
                report(line, "</S> closes no <S>", "remove it")
                continue
            open_sentence = None if closing else (line, match.group())
            sentence_start = len(pieces)
        elif name in METADATA_ELEMENTS:
            metadata_depth = max(0, metadata_depth + (-1 if closing else 1))
    keep(text[position:])
    if open_sentence is not None:
        report(
            open_sentence[0],
            f"{open_sentence[1]} is not closed at the end of the file"
            + ("" if errors is None else ", so its sentence is dropped"),
            "add the missing </S>",
        )
        drop_open_sentence()
    return "".join(pieces)
