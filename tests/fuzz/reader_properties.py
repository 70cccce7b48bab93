"""
The oracle of the reader fuzzing: real treebank slices (`Corpus`), and `check_case`, which
reads a mutated slice with a reader twice (`on_error="raise"` and `"skip"`) and checks:

1. No exception but the project's own: a `TreebankFormatError` (`DependencyFormatError` is
   one) whose message names the file and a line of the mutated file (no line only for a file
   with nothing to read), and, for a local edit, a line of the sentences the edit touched.
2. No silently wrong sentence. Each original sentence is *kept* (the edit is not near it),
   *touched* or *gone* (a truncation removed it). Reading must give, in order, every kept
   sentence exactly, each touched one as it was or as a reference reading of its mutated text
   says it now is (an independent parser: nltk's `Tree.fromstring` for trees, a plain column
   split for the tabular formats), and nothing else: no merged or split sentence, no
   fragment. With `"raise"`, either that list comes out whole (touched sentences included) or
   the error is raised; with `"skip"`, touched sentences may be missing, but then at least one
   skip is counted, and a read that raised must count at least one skip.
3. A mutation that keeps the content (`Mutated.same`: white space, blank lines, a byte-order
   mark, another encoding read with the matching `encoding` option) gives exactly the
   original sentences, with nothing skipped.

The first file read of each corpus, unmutated, gives the original sentences; the readers'
own tests check that reading.
"""

import os
import random
import re
import tempfile
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple

from nltk import Tree

from lal_allennlp.dataset_readers.ctb_reader import ChineseTreebankReader
from lal_allennlp.dataset_readers.dependency_reader import DependencyTreebankReader
from lal_allennlp.dataset_readers.ptb_reader import PennTreebankReader
from lal_allennlp.syntax.dependencies import read_dependencies, to_conllx
from lal_allennlp.syntax.trees import TreebankFormatError, normalise_tree, tree_to_string
from tests.fuzz.reader_mutations import BRACKETS, TABULAR, Mutated, mutate

SHARED_DATA = Path(__file__).resolve().parents[3] / "shared" / "data"

Value = Any  # a tree's string, or a dependency sentence's (words, tags, heads, labels)

# Characters that no decoded treebank holds: undecodable bytes and NUL.
_BAD_CHARACTER_RE = re.compile("[\\x00\\udc80-\\udcff]")


class PropertyFailure(AssertionError):
    """A case broke a property; the message says which and how to see it again."""


# ----------------------------------------------------------------------------------------------
# Corpora: slices of the real treebanks
# ----------------------------------------------------------------------------------------------


@dataclass
class Corpus:
    """
    A slice of a real treebank as one file's text, with its sentences' regions.

    `regions[i]` is `(start, first, content_end, end)`: the characters of sentence `i` from
    `start` (0 for the first) to `end` (the next sentence's start, or the end of the text), its
    own content from `first` (its first `(`, `<S`, or token line) to `content_end` (after its
    last `)` or `</S>`, or after the line break of its last token line).
    """

    name: str
    family: str
    reader: str  # "ptb", "ctb" or "dependencies"
    suffix: str
    text: str
    codecs: Tuple[str, ...]  # encodings for `reencode`
    regions: List[Tuple[int, int, int, int]] = field(default_factory=list)
    values: List[Value] = field(default_factory=list)


def _bracket_regions(text: str, markup: bool) -> List[Tuple[int, int, int, int]]:
    """Sentence regions of a valid bracketed (or CTB-markup) text."""
    starts, ends = [], []
    firsts = None
    if markup:
        starts = [match.start() for match in re.finditer(r"<S ID", text)]
        firsts = [text.index("(", start) for start in starts]
        ends = [match.end() for match in re.finditer(r"</S>", text)]
    else:
        depth = 0
        for index, character in enumerate(text):
            if character == "(":
                if depth == 0:
                    starts.append(index)
                depth += 1
            elif character == ")":
                depth -= 1
                if depth == 0:
                    ends.append(index + 1)
    return _regions(starts, ends, len(text), firsts)


def _tabular_regions(text: str) -> List[Tuple[int, int, int, int]]:
    """Sentence regions of a valid tabular text: blocks of lines between blank lines."""
    starts, firsts, ends = [], [], []
    offset = 0
    inside = False
    for line in text.split("\n"):
        if line.strip() and not inside:
            starts.append(offset)
            inside = True
        if inside and len(firsts) < len(starts) and not line.startswith("#"):
            firsts.append(offset)
        if not line.strip() and inside:
            ends.append(offset)  # after the line break of the block's last line
            inside = False
        offset += len(line) + 1
    if inside:
        ends.append(min(offset, len(text)))
    return _regions(starts, ends, len(text), firsts)


def _regions(
    starts: List[int], ends: List[int], length: int, firsts: Optional[List[int]] = None
) -> List[Tuple[int, int, int, int]]:
    assert len(starts) == len(ends), (len(starts), len(ends))
    firsts = firsts or starts
    bounds = [0] + starts[1:] + [length]
    return [(bounds[i], firsts[i], ends[i], bounds[i + 1]) for i in range(len(starts))]


def _first_trees(paths: Sequence[Path], count: int) -> str:
    """The raw text of the files, cut after the `count`-th tree's line."""
    text = "".join(path.read_text(encoding="utf-8") for path in paths)
    regions = _bracket_regions(text, markup=False)
    end = text.index("\n", regions[count - 1][2]) + 1
    return text[:end]


def _first_blocks(text: str, count: int, start: int = 0) -> str:
    """Sentences `start` ... `start + count - 1` of a tabular text, blank line after each."""
    blocks = [block for block in text.split("\n\n") if block.strip()]
    return "".join(block.strip("\n") + "\n\n" for block in blocks[start : start + count])


def load_corpora(size: int = 12) -> Dict[str, Corpus]:
    """
    The fuzzed slices, about `size` sentences each: WSJ `.mrg` trees (PTB reader), Sinica
    trees one per line and the same trees in CTB markup (CTB reader), EWT and GSD CoNLL-U,
    WSJ Malt-TAB and the same sentences in CoNLL-X (dependency reader).
    """
    trees = SHARED_DATA / "ptb-sample" / "trees"
    deps = SHARED_DATA / "ptb-sample" / "deps"
    sinica = (SHARED_DATA / "sinica" / "sinica-train-dev.trees").read_text(encoding="utf-8")
    sinica_lines = sinica.split("\n")
    markup_trees = sinica_lines[size : 2 * size]
    markup = "<DOC>\n<DOCID>sinica</DOCID>\n<TEXT>\n<P>\n" + "".join(
        f"<S ID={number}>\n{tree}\n</S>\n" for number, tree in enumerate(markup_trees, 1)
    ) + "</P>\n</TEXT>\n</DOC>\n"
    ewt = (SHARED_DATA / "ud" / "en_ewt" / "en_ewt-ud-dev.conllu").read_text(encoding="utf-8")
    gsd = (SHARED_DATA / "ud" / "zh_gsd" / "zh_gsd-ud-dev.conllu").read_text(encoding="utf-8")
    # Start EWT at the first sentence with a multi-word token line.
    ewt_blocks = [block for block in ewt.split("\n\n") if block.strip()]
    ewt_start = next(i for i, b in enumerate(ewt_blocks) if re.search(r"\n\d+-\d+\t", b))
    dp_paths = sorted(deps.glob("wsj_00*.dp"))[:4]
    wsj_paths = sorted(trees.glob("wsj_00*.mrg"))[:5]
    dp = _first_blocks("".join(p.read_text(encoding="utf-8") + "\n" for p in dp_paths), size)
    conllx_sentences = [s for s, _ in read_dependencies(deps / "wsj_0003.dp")][:size]
    corpora = [
        Corpus("wsj", BRACKETS, "ptb", ".mrg", _first_trees(wsj_paths, size),
               ("latin-1", "utf-16", "utf-16-le")),
        Corpus("sinica", BRACKETS, "ctb", ".trees", "\n".join(sinica_lines[:size]) + "\n",
               ("gbk", "big5", "utf-16", "gb18030")),
        Corpus("ctb-markup", BRACKETS, "ctb", ".fid", markup, ("gbk", "utf-16", "big5")),
        Corpus("ewt", TABULAR, "dependencies", ".conllu", _first_blocks(ewt, size, ewt_start),
               ("cp1252", "latin-1", "utf-16")),
        Corpus("gsd", TABULAR, "dependencies", ".conllu", _first_blocks(gsd, size // 2),
               ("gbk", "gb18030", "utf-16")),
        Corpus("malt-tab", TABULAR, "dependencies", ".dp", dp, ("latin-1", "utf-16")),
        Corpus("conllx", TABULAR, "dependencies", ".conll",
               "".join(to_conllx(s) for s in conllx_sentences), ("latin-1", "utf-16")),
    ]
    for corpus in corpora:
        markup_corpus = corpus.name == "ctb-markup"
        if corpus.family == BRACKETS:
            corpus.regions = _bracket_regions(corpus.text, markup_corpus)
        else:
            corpus.regions = _tabular_regions(corpus.text)
            assert not re.search(r"[^\t\n]* [^\t\n]*\t|\t[^\t\n]* ", corpus.text), corpus.name
        outcome = read_file(corpus, corpus.text.encode("utf-8"), None, "raise")
        assert outcome.error is None, (corpus.name, outcome.error)
        corpus.values = outcome.values
        assert len(corpus.values) == len(corpus.regions), (corpus.name, len(corpus.values))
    return {corpus.name: corpus for corpus in corpora}


# ----------------------------------------------------------------------------------------------
# Reading
# ----------------------------------------------------------------------------------------------


@dataclass
class ReadOutcome:
    values: List[Value]
    skipped: int = 0
    error: Optional[BaseException] = None
    trace: str = ""


def make_reader(corpus: Corpus, on_error: str, encoding: Optional[str]):  # type: ignore
    options: Dict[str, Any] = {"on_error": on_error}
    if encoding is not None:
        options["encoding"] = encoding
    if corpus.reader == "ptb":
        return PennTreebankReader(**options)
    if corpus.reader == "ctb":
        return ChineseTreebankReader(**options)
    return DependencyTreebankReader(transitions=False, **options)


def _value(corpus: Corpus, instance) -> Value:  # type: ignore[no-untyped-def]
    metadata = instance["metadata"].metadata
    if corpus.family == BRACKETS:
        return tree_to_string(metadata["gold_tree"])
    labels = metadata["labels"]
    return (
        tuple(metadata["words"]),
        tuple(metadata["pos"]),
        tuple(metadata["heads"]),
        None if labels is None else tuple(labels),
    )


def read_file(corpus: Corpus, data: bytes, encoding: Optional[str], on_error: str) -> ReadOutcome:
    """Writes `data` to a temporary file and reads it; the values read and what happened."""
    with tempfile.TemporaryDirectory() as directory:
        path = os.path.join(directory, "slice" + corpus.suffix)
        with open(path, "wb") as slice_file:
            slice_file.write(data)
        reader = make_reader(corpus, on_error, encoding)
        outcome = ReadOutcome([])
        try:
            for instance in reader.read(path):
                outcome.values.append(_value(corpus, instance))
        except Exception as error:  # every exception is looked at by the properties
            outcome.error = error
            outcome.trace = traceback.format_exc()
        outcome.skipped = reader.stats.get("skipped_errors", 0)
        return outcome


# ----------------------------------------------------------------------------------------------
# Reference readings of one sentence's text
# ----------------------------------------------------------------------------------------------


def reference_tree(text: str, markup: bool) -> Optional[str]:
    """
    The normalised tree of one bracketed sentence by nltk's parser; with `markup`, of the one
    `<S ...>` element of `text`.
    """
    if markup:
        elements = re.findall(r"<S\b[^<>]*>(.*?)</S>", text, re.DOTALL | re.IGNORECASE)
        if len(elements) != 1 or re.search(r"<S\b", elements[0], re.IGNORECASE):
            return None
        text = elements[0]
    try:
        tree = normalise_tree(Tree.fromstring(text))
        return None if tree is None else tree_to_string(tree)
    except (ValueError, IndexError):
        return None


_NUMBER = re.compile(r"[0-9]+")


def reference_dependencies(text: str, conll: bool, last: bool) -> Optional[Value]:
    """
    One tabular sentence read by the formats' rules (the dependency reader's settings: fine
    POS tags, one root), or `None` if the text is not exactly one well-formed sentence. `last`:
    it ends the file, which must end with a line break.
    """
    if last and text and not text.endswith("\n"):
        return None
    lines = [line.rstrip("\r") for line in text.split("\n")]
    while lines and not lines[-1].strip():
        lines.pop()
    if not lines or any(not line.strip() for line in lines):
        return None
    words, tags, heads, labels, forms = [], [], [], [], []
    spelled_text = None
    covered = 0
    for line in lines:
        if conll and line.startswith("#"):
            match = re.match(r"^#\s*text\s*=(.*)$", line)
            if match:
                spelled_text = match.group(1)
            continue
        columns = line.split("\t") if "\t" in line else line.split()
        if conll:
            if len(columns) != 10:
                return None
            multiword = re.fullmatch(r"(\d+)-(\d+)", columns[0])
            if multiword:
                forms.append(columns[1])
                covered = int(multiword.group(2))
                continue
            if re.fullmatch(r"\d+\.\d+", columns[0]):
                continue
            if columns[0] != str(len(words) + 1):
                return None
            word, head, label = columns[1], columns[6], columns[7]
            tag = columns[4] if columns[4] != "_" else columns[3]
            if len(words) + 1 > covered:
                forms.append(word)
        else:
            if len(columns) not in (3, 4):
                return None
            word, tag, head = columns[:3]
            label = columns[3] if len(columns) == 4 and columns[3] else "_"
        if not (word and tag and label and _NUMBER.fullmatch(head)):
            return None
        words.append(word)
        tags.append(tag)
        heads.append(int(head))
        labels.append(label)
    n = len(words)
    if n == 0 or any(not 0 <= h <= n or h == i + 1 for i, h in enumerate(heads)):
        return None
    if heads.count(0) != 1:
        return None
    for start in range(1, n + 1):  # every word reaches the root
        seen, word = set(), start
        while word != 0:
            if word in seen:
                return None
            seen.add(word)
            word = heads[word - 1]
    if spelled_text is not None:
        if re.sub(r"\s+", "", "".join(forms)) != re.sub(r"\s+", "", spelled_text):
            return None
    return (tuple(words), tuple(tags), tuple(heads),
            None if all(label == "_" for label in labels) else tuple(labels))


def reference(corpus: Corpus, text: str, last: bool) -> Optional[Value]:
    if _BAD_CHARACTER_RE.search(text) or "\ufeff" in text:
        return None
    if corpus.family == BRACKETS:
        return reference_tree(text, corpus.suffix == ".fid")
    return reference_dependencies(text, corpus.suffix != ".dp", last)


# ----------------------------------------------------------------------------------------------
# What each sentence may become
# ----------------------------------------------------------------------------------------------

KEPT, TOUCHED, GONE = "kept", "touched", "gone"


@dataclass
class Expectation:
    """Per original sentence: its status and, if touched, what it may now read as."""

    status: List[str]
    allowed: List[List[Value]]
    # Lines of the mutated file an error may name (`None`: any line).
    error_lines: Optional[Tuple[int, int]]
    mutated_text: str


def _decode_leniently(data: bytes, encoding: Optional[str]) -> str:
    codec = encoding or "utf-8"
    if codec.replace("_", "-").lower() in ("utf-8", "utf8"):
        codec = "utf-8-sig"
    return data.decode(codec, "surrogateescape")


def expect(corpus: Corpus, mutated: Mutated) -> Expectation:
    """What reading `mutated` may give (see the module's docstring)."""
    text = corpus.text
    values = corpus.values
    count = len(values)
    new = _decode_leniently(mutated.data, mutated.encoding)
    if mutated.same:
        return Expectation([KEPT] * count, [[v] for v in values], None, new)
    status = [KEPT] * count
    allowed = [[v] for v in values]
    if mutated.cut is not None:
        cut = mutated.cut
        for index, (start, first, content_end, end) in enumerate(corpus.regions):
            if content_end <= cut:
                continue
            if first >= cut:
                status[index] = GONE
                allowed[index] = []
                continue
            status[index] = TOUCHED
            variant = reference(corpus, new[start:], last=True)
            allowed[index] = [v for v in (values[index], variant) if v is not None]
        touched = [i for i, s in enumerate(status) if s == TOUCHED]
        lines = _line_span(new, corpus, touched, 0) if touched else None
        return Expectation(status, allowed, lines, new)
    # A local edit: text[prefix : len(text) - suffix] became new[prefix : len(new) - suffix].
    prefix = 0
    limit = min(len(text), len(new))
    while prefix < limit and text[prefix] == new[prefix]:
        prefix += 1
    suffix = 0
    while suffix < limit - prefix and text[-1 - suffix] == new[-1 - suffix]:
        suffix += 1
    edit_start, edit_end = prefix, len(text) - suffix
    delta = len(new) - len(text)
    # Touched: the sentences holding a changed character or one right beside the edit; in the
    # tabular formats also those beyond a blank line that the edit may have filled.
    reach = 2 if corpus.family == TABULAR else 1
    low, high = max(edit_start - reach, 0), min(edit_end + reach - 1, len(text) - 1)
    touched = [
        index
        for index, (start, _, _, end) in enumerate(corpus.regions)
        if start <= high and low < end
    ]
    new_regions = _same_line_regions(corpus, new)
    for index in touched:
        start, _, _, end = corpus.regions[index]
        status[index] = TOUCHED
        if new_regions is not None:
            region = new[new_regions[index][0] : new_regions[index][1]]
        elif start <= edit_start and edit_end <= end:
            region = new[start : end + delta]
        else:
            continue
        variant = reference(corpus, region, index == count - 1)
        if variant is not None and variant not in allowed[index]:
            allowed[index].append(variant)
    return Expectation(status, allowed, _line_span(new, corpus, touched, delta), new)


def _same_line_regions(corpus: Corpus, new: str) -> Optional[List[Tuple[int, int]]]:
    """
    For a tabular text whose lines changed but not their number nor which ones are blank
    (column and tab changes), each sentence's `(start, end)` in the new text.
    """
    if corpus.family != TABULAR:
        return None
    old_lines, new_lines = corpus.text.split("\n"), new.split("\n")
    if len(old_lines) != len(new_lines) or any(
        bool(a.strip()) != bool(b.strip()) for a, b in zip(old_lines, new_lines)
    ):
        return None
    offsets = [0]
    for line in new_lines:
        offsets.append(offsets[-1] + len(line) + 1)
    regions = []
    for start, _, _, end in corpus.regions:
        first_line = corpus.text.count("\n", 0, start)
        last_line = corpus.text.count("\n", 0, end)
        regions.append((offsets[first_line], min(offsets[last_line], len(new))))
    return regions


def _line_span(
    new: str, corpus: Corpus, touched: List[int], delta: int
) -> Optional[Tuple[int, int]]:
    """The lines of the mutated text from the first touched region to the last one's end."""
    if not touched or len(touched) > 3:
        return None
    start = corpus.regions[touched[0]][0]
    end = min(len(new), max(corpus.regions[touched[-1]][3] + delta, 0))
    return new.count("\n", 0, start) + 1, new.count("\n", 0, end) + 1


# ----------------------------------------------------------------------------------------------
# The properties
# ----------------------------------------------------------------------------------------------


def _check_error(error: BaseException, trace: str, path_hint: str, exp: Expectation) -> None:
    if not isinstance(error, TreebankFormatError):
        raise PropertyFailure(f"a foreign exception escaped the reader:\n{trace}")
    message = str(error)
    if path_hint not in message:
        raise PropertyFailure(f"the error does not name the file: {message}")
    if error.line is None:
        if not re.search(r"is empty|holds no", message):
            raise PropertyFailure(f"the error names no line: {message}")
        return
    if f"line {error.line}" not in message:
        raise PropertyFailure(f"the message does not show line {error.line}: {message}")
    lines = exp.mutated_text.count("\n") + 1
    if not 1 <= error.line <= lines:
        raise PropertyFailure(f"line {error.line} is not in the {lines}-line file: {message}")
    if exp.error_lines is not None:
        first, last = exp.error_lines
        if not first <= error.line <= last:
            raise PropertyFailure(
                f"the error names line {error.line}, outside the edited sentences (lines "
                f"{first}-{last}): {message}"
            )


def _match(values: List[Value], exp: Expectation, whole: bool) -> int:
    """
    Matches the values read with the expectation, in order, and returns how many touched
    sentences are missing, or raises. `whole`: touched sentences must all be there.
    """
    position = 0
    missing = 0
    for index, status in enumerate(exp.status):
        here = values[position] if position < len(values) else None
        if status == GONE:
            continue
        if position < len(values) and here in exp.allowed[index]:
            position += 1
            continue
        if status == KEPT or whole:
            what = "kept" if status == KEPT else "touched"
            raise PropertyFailure(
                f"sentence {index + 1} ({what}) is missing or wrong: read {here!r}, expected one "
                f"of {exp.allowed[index]!r}"
            )
        missing += 1
    if position != len(values):
        raise PropertyFailure(
            f"{len(values) - position} sentence(s) read that are none of the originals (a "
            f"silently wrong, merged or split sentence): {values[position:]!r}"
        )
    return missing


def _match_prefix(values: List[Value], exp: Expectation) -> None:
    """The values read before an error are the expected ones, in order, none left out."""
    expected = [allowed for allowed, status in zip(exp.allowed, exp.status) if status != GONE]
    for index, value in enumerate(values):
        if index >= len(expected) or value not in expected[index]:
            raise PropertyFailure(
                f"before the error, sentence {index + 1} was read as {value!r}, expected one of "
                f"{expected[index] if index < len(expected) else 'nothing'!r}"
            )


@dataclass
class CaseResult:
    corpus: str
    mutation: str
    description: str
    raised: bool  # on_error="raise" raised the project's error
    skipped: int  # skips counted with on_error="skip"
    failure: Optional[str] = None


def check_case(corpus: Corpus, mutated: Mutated) -> CaseResult:
    """Runs both readings of one mutated file and checks every property."""
    exp = expect(corpus, mutated)
    result = CaseResult(corpus.name, mutated.name, mutated.description, False, 0)
    try:
        strict = read_file(corpus, mutated.data, mutated.encoding, "raise")
        if strict.error is not None:
            result.raised = True
            _check_error(strict.error, strict.trace, "slice" + corpus.suffix, exp)
            if mutated.same:
                raise PropertyFailure(f"a mutation that keeps the content raised: {strict.error}")
            _match_prefix(strict.values, exp)
        else:
            _match(strict.values, exp, whole=True)
        lenient = read_file(corpus, mutated.data, mutated.encoding, "skip")
        result.skipped = lenient.skipped
        if lenient.error is not None:
            raise PropertyFailure(f"on_error='skip' still raised:\n{lenient.trace}")
        missing = _match(lenient.values, exp, whole=False)
        if (missing or strict.error is not None) and lenient.skipped == 0:
            raise PropertyFailure(
                f"{missing} sentence(s) missing (or the strict read raised) but no skip counted"
            )
        if strict.error is None and (lenient.values != strict.values or lenient.skipped):
            raise PropertyFailure(
                f"on_error='skip' read differently from a clean strict read ({lenient.skipped} "
                "skipped)"
            )
    except PropertyFailure as failure:
        result.failure = str(failure)
    return result


def random_case(corpus: Corpus, rng: random.Random) -> Tuple[Mutated, CaseResult]:
    """One random mutation of `corpus`, checked."""
    mutated = mutate(corpus.text, corpus.family, rng, corpus.codecs)
    return mutated, check_case(corpus, mutated)
