"""
A pure-Python port of EVALB (Sekine & Collins, 1997), the standard bracket scorer for
constituency parsing, with the 2006 Brown update (F-measure, quote-term re-insertion).

It reproduces, figure for figure, what the C program shipped with AllenNLP
(`allennlp/tools/EVALB/evalb.c`) prints with a given parameter file, but works on `nltk.Tree`
objects in memory, needs no compiler and no temporary files. The rules below are read from
`evalb.c`; the names in brackets are the C functions.

* **Words** (`read_line`). A node with exactly one child that is a string is a preterminal
  `(TAG word)`; every other node is a bracket, whatever its label (the root included, so a
  Penn Treebank `( (S ...) )` line has a scored bracket with the empty label). Preterminals
  whose tag is in `delete_labels` (exact string comparison) are removed together with their
  word *before* span boundaries are counted, so `(NP (DT a) (NN b) (, ,))` spans the same words
  as `(NP (DT a) (NN b))`. Preterminals are never brackets.
* **Sentence length** for the cut-off summary is the number of *gold* preterminals whose tag is
  not in `delete_labels_for_length`. With COLLINS.prm that removes `-NONE-` only, so
  punctuation *does* count towards the 40 words.
* **Brackets** (`massage_data`). A bracket spanning no remaining word is dropped. Other labels
  are cut at their first `-` or `=` (`NP-SBJ-1` and `NP=2` become `NP`; the cut also applies at
  position 0, so a phrase label `-X-` becomes the empty label); then a bracket whose cleaned
  label equals a delete label (or one declared equivalent to it) is not scored, its children
  are. Tags are *not* cleaned: tagging accuracy compares the raw tags.
* **Matching** (`calc_result`). Brackets are compared as a multiset of (label, start, end):
  each gold bracket, in pre-order, takes the first still unmatched predicted bracket with the
  same span and an equal or `equivalent_labels` label (`ADVP` = `PRT`). Two gold `(NP (NP x))`
  brackets against one predicted NP give 1 match out of 2.
* **Crossing**: the number of predicted brackets that cross at least one gold bracket.
* **Tagging accuracy**: tags of the remaining words compared position by position.
* **Complete match**: a valid sentence whose matched, gold and predicted counts are equal.
* **Skipped sentence** (status 2): the prediction has no word left after deletion.
* **Error sentence** (status 1): the numbers of remaining words differ (after the quote-term
  repair below) or a word differs; nothing of it is counted but the sentence itself (it still
  counts in the cut-off block when the gold length is within the cut-off). EVALB gives up when
  an error occurs after more than `max_error` earlier ones, i.e. at error `max_error + 2`;
  :func:`evalb_score` then raises :class:`EvalbError`.
* **Quote terms** (`fix_quote`, only with `quote_labels`, as in nk.prm/new.prm): when the word
  counts differ and a `'`, `"` or `/` word is deleted on one side (e.g. tagged `''`) but kept
  on the other (e.g. `POS`) at the same position, it is put back on the side that deleted it,
  and the brackets around and after it are widened or shifted.

One deliberate difference from the C program: a predicted tree that is `None` or has no words
(a parser failure, or an empty line in :func:`evalb_files`) is **not** skipped, which would hide
the failure, but scored as a valid sentence with no predicted bracket and no correct tag: its
gold brackets and words count against recall and tagging accuracy, and it is never a complete
match. (When the gold tree has no word left either, the sentence is skipped, as EVALB does.)
Other differences only concern inputs the C program cannot read: trees longer than its
fixed buffers (200 words or brackets, 5000 characters per line), a bracket mixing words and
sub-trees (counted here as an error sentence), or gold and predicted files with different
numbers of lines (refused here with a `ValueError`).

Ratios in :class:`EvalbResult` are fractions in [0, 1]; :func:`format_report` prints EVALB's
percentages, computed from the integer counts with the same arithmetic as the C code.
"""

from dataclasses import dataclass, field
from functools import cached_property
import os
from typing import Dict, FrozenSet, Iterable, List, Optional, Sequence, Tuple, Union

from nltk import Tree

# Words EVALB treats as possible quote terms (`is_quote_term`).
_QUOTE_WORDS = frozenset(["'", '"', "/"])

_STATUS_OK, _STATUS_ERROR, _STATUS_SKIP = 0, 1, 2


class EvalbError(ValueError):
    """Raised where the C EVALB would give up: too many error sentences (see `max_error`)."""


@dataclass(frozen=True)
class EvalbParams:
    """
    The settings of an EVALB parameter (`.prm`) file. The defaults are those of COLLINS.prm,
    the standard for English (`COLLINS`); `NK` is benepar's nk.prm. For another language,
    replace the punctuation tags, e.g.
    `dataclasses.replace(COLLINS, delete_labels=("TOP", "-NONE-", "PU"))`, or read a `.prm`
    file with :meth:`from_prm_file`.

    # Parameters

    delete_labels : `Tuple[str, ...]`, optional (default = COLLINS.prm's)
        `DELETE_LABEL`: preterminals with these tags are removed with their word; brackets
        with these (cleaned) labels are not scored.
    delete_labels_for_length : `Tuple[str, ...]`, optional (default = `("-NONE-",)`)
        `DELETE_LABEL_FOR_LENGTH`: tags whose words do not count towards the sentence length
        used for the cut-off summary.
    equivalent_labels : `Tuple[Tuple[str, str], ...]`, optional (default = `(("ADVP", "PRT"),)`)
        `EQ_LABEL`: pairs of labels that count as equal (in both directions).
    equivalent_words : `Tuple[Tuple[str, str], ...]`, optional (default = `()`)
        `EQ_WORD`: pairs of words that count as equal when gold and predicted words are compared.
    quote_labels : `Tuple[str, ...]`, optional (default = `()`)
        `QUOTE_LABEL`: tags of `'`, `"` and `/` words that may be put back when the word
        counts differ (see the module docstring).
    labeled : `bool`, optional (default = `True`)
        `LABELED`: compare labels; `False` gives unlabelled bracketing scores.
    cutoff_length : `int`, optional (default = `40`)
        `CUTOFF_LEN`: the second summary covers sentences of at most this many words.
    max_error : `Optional[int]`, optional (default = `10`)
        `MAX_ERROR`: :func:`evalb_score` raises :class:`EvalbError` at error number
        `max_error + 2`, where the C program exits. `None` never gives up.
    """

    delete_labels: Tuple[str, ...] = ("TOP", "-NONE-", ",", ":", "``", "''", ".")
    delete_labels_for_length: Tuple[str, ...] = ("-NONE-",)
    equivalent_labels: Tuple[Tuple[str, str], ...] = (("ADVP", "PRT"),)
    equivalent_words: Tuple[Tuple[str, str], ...] = ()
    quote_labels: Tuple[str, ...] = ()
    labeled: bool = True
    cutoff_length: int = 40
    max_error: Optional[int] = 10

    @cached_property
    def _delete_set(self) -> FrozenSet[str]:
        return frozenset(self.delete_labels)

    @cached_property
    def _delete_for_length_set(self) -> FrozenSet[str]:
        return frozenset(self.delete_labels_for_length)

    @cached_property
    def _quote_set(self) -> FrozenSet[str]:
        return frozenset(self.quote_labels)

    @cached_property
    def _label_pairs(self) -> FrozenSet[Tuple[str, str]]:
        return frozenset(self.equivalent_labels) | frozenset(
            (b, a) for a, b in self.equivalent_labels
        )

    @cached_property
    def _word_pairs(self) -> FrozenSet[Tuple[str, str]]:
        return frozenset(self.equivalent_words) | frozenset(
            (b, a) for a, b in self.equivalent_words
        )

    def labels_equal(self, label1: str, label2: str) -> bool:
        """EVALB's `label_comp`: equal strings, or a pair declared in `equivalent_labels`."""
        return label1 == label2 or (label1, label2) in self._label_pairs

    def words_equal(self, word1: str, word2: str) -> bool:
        """EVALB's `word_comp`: equal strings, or a pair declared in `equivalent_words`."""
        return word1 == word2 or (word1, word2) in self._word_pairs

    @cached_property
    def _deleted_bracket_labels(self) -> FrozenSet[str]:
        # Labels equal (`label_comp`) to a delete label: the label itself or an equivalent.
        deleted = self._delete_set
        return deleted | frozenset(a for a, b in self._label_pairs if b in deleted)

    def is_deleted_bracket_label(self, cleaned_label: str) -> bool:
        """Whether a bracket with this (already cleaned) label is left out of the scores."""
        return cleaned_label in self._deleted_bracket_labels

    @classmethod
    def from_prm_file(cls, path: Union[str, os.PathLike]) -> "EvalbParams":
        """
        Reads an EVALB parameter file the way `read_parameter_file` in `evalb.c` does. Keys a
        file leaves out get the C program's built-in defaults (no deleted or equivalent labels,
        `MAX_ERROR 10`, `CUTOFF_LEN 40`, `LABELED 1`), not COLLINS.prm's. `DEBUG` is ignored.
        """
        with open(path, encoding="utf-8") as prm_file:
            return cls.from_prm_text(prm_file.read(), source=str(path))

    @classmethod
    def from_prm_text(cls, text: str, source: str = "<prm text>") -> "EvalbParams":
        """Parses the text of an EVALB parameter file (see :meth:`from_prm_file`)."""
        lists: Dict[str, List] = {
            "DELETE_LABEL": [],
            "DELETE_LABEL_FOR_LENGTH": [],
            "QUOTE_LABEL": [],
            "EQ_LABEL": [],
            "EQ_WORD": [],
        }
        scalars: Dict[str, int] = {"MAX_ERROR": 10, "CUTOFF_LEN": 40, "LABELED": 1}
        for line_number, line in enumerate(text.splitlines(), start=1):
            line = line.rstrip()
            if line.startswith("#") or len(line) < 3:
                continue
            parts = line.split(None, 1)
            key = parts[0]
            value = parts[1].strip() if len(parts) > 1 else ""
            where = f"{source}, line {line_number}"
            if key == "DEBUG":
                continue
            if key in scalars:
                try:
                    scalars[key] = int(value)
                except ValueError:
                    raise ValueError(f"{where}: {key} needs an integer, got {value!r}")
            elif key in ("EQ_LABEL", "EQ_WORD"):
                pair = value.split()
                if len(pair) != 2:
                    raise ValueError(f"{where}: {key} needs two values, got {value!r}")
                lists[key].append((pair[0], pair[1]))
            elif key in lists:
                if not value:
                    raise ValueError(f"{where}: {key} has no value")
                lists[key].append(value)
            else:
                raise ValueError(f"{where}: unknown EVALB parameter {key!r}")
        return cls(
            delete_labels=tuple(lists["DELETE_LABEL"]),
            delete_labels_for_length=tuple(lists["DELETE_LABEL_FOR_LENGTH"]),
            equivalent_labels=tuple(lists["EQ_LABEL"]),
            equivalent_words=tuple(lists["EQ_WORD"]),
            quote_labels=tuple(lists["QUOTE_LABEL"]),
            labeled=scalars["LABELED"] != 0,
            cutoff_length=scalars["CUTOFF_LEN"],
            max_error=scalars["MAX_ERROR"],
        )

    def to_prm_text(self) -> str:
        """These settings as the text of an EVALB parameter file (for the C program)."""
        lines = [
            f"MAX_ERROR {self.max_error if self.max_error is not None else 2**31 - 1}",
            f"CUTOFF_LEN {self.cutoff_length}",
            f"LABELED {int(self.labeled)}",
        ]
        lines += [f"DELETE_LABEL {label}" for label in self.delete_labels]
        lines += [f"DELETE_LABEL_FOR_LENGTH {label}" for label in self.delete_labels_for_length]
        lines += [f"QUOTE_LABEL {label}" for label in self.quote_labels]
        lines += [f"EQ_LABEL {a} {b}" for a, b in self.equivalent_labels]
        lines += [f"EQ_WORD {a} {b}" for a, b in self.equivalent_words]
        return "\n".join(lines) + "\n"


COLLINS = EvalbParams()
"""COLLINS.prm, the standard setting for English (Collins 1997)."""

NK = EvalbParams(
    delete_labels=("TOP", "S1", "-NONE-", ",", ":", "``", "''", ".", "?", "!"),
    quote_labels=("``", "''", "POS", "NN", "CD", "VBZ", ":"),
    max_error=10000,
)
"""benepar's nk.prm: new.prm (COLLINS.prm plus `S1`, `?`, `!` and quote terms), MAX_ERROR 10000."""


@dataclass
class EvalbCounts:
    """
    The integer counts EVALB sums over sentences. They add up with `+`, and
    :meth:`to_list`/:meth:`from_list` turn them into a flat list (in the order of `FIELDS`) for
    a distributed sum. For one sentence (from :func:`evalb_sentence`), `sentences` is 1 and
    `length`/`within_cutoff` say how long it is and whether it counts in the cut-off summary.

    # Parameters

    sentences : `int`
        Sentences seen, including error and skipped ones.
    errors : `int`
        Error sentences (different words or numbers of words); nothing else of them is counted.
    skipped : `int`
        Skipped sentences (a prediction with no word left after deletion).
    matched : `int`
        Gold brackets matched by a predicted bracket.
    gold : `int`
        Scored gold brackets.
    predicted : `int`
        Scored predicted brackets.
    complete_match : `int`
        Valid sentences with `matched == gold == predicted`.
    crossing : `int`
        Predicted brackets crossing a gold bracket.
    no_crossing : `int`
        Valid sentences with no crossing bracket.
    two_or_less_crossing : `int`
        Valid sentences with at most two crossing brackets.
    tags_correct : `int`
        Words whose predicted tag equals the gold tag.
    tags_total : `int`
        Words of valid sentences, after deletion.
    length : `int`
        Total gold length as used for the cut-off (words whose tag is not in
        `delete_labels_for_length`), over all sentences.
    within_cutoff : `int`
        Sentences whose `length` is at most `cutoff_length`.
    """

    sentences: int = 0
    errors: int = 0
    skipped: int = 0
    matched: int = 0
    gold: int = 0
    predicted: int = 0
    complete_match: int = 0
    crossing: int = 0
    no_crossing: int = 0
    two_or_less_crossing: int = 0
    tags_correct: int = 0
    tags_total: int = 0
    length: int = 0
    within_cutoff: int = 0

    FIELDS = (
        "sentences",
        "errors",
        "skipped",
        "matched",
        "gold",
        "predicted",
        "complete_match",
        "crossing",
        "no_crossing",
        "two_or_less_crossing",
        "tags_correct",
        "tags_total",
        "length",
        "within_cutoff",
    )

    def __add__(self, other: "EvalbCounts") -> "EvalbCounts":
        if not isinstance(other, EvalbCounts):
            return NotImplemented
        return EvalbCounts(*(a + b for a, b in zip(self.to_list(), other.to_list())))

    @property
    def valid_sentences(self) -> int:
        """Sentences that are neither errors nor skipped."""
        return self.sentences - self.errors - self.skipped

    @property
    def status(self) -> int:
        """EVALB's status column for a single sentence: 0 valid, 1 error, 2 skipped."""
        return _STATUS_ERROR if self.errors else (_STATUS_SKIP if self.skipped else _STATUS_OK)

    def to_list(self) -> List[int]:
        """The counts in the order of `FIELDS`."""
        return [getattr(self, name) for name in self.FIELDS]

    @classmethod
    def from_list(cls, values: Iterable[Union[int, float]]) -> "EvalbCounts":
        """The inverse of :meth:`to_list` (accepts the floats or ints of a reduced tensor)."""
        values = [int(round(value)) for value in values]
        if len(values) != len(cls.FIELDS):
            raise ValueError(f"expected {len(cls.FIELDS)} counts {cls.FIELDS}, got {len(values)}")
        return cls(*values)


@dataclass
class EvalbResult:
    """
    EVALB's summary for a set of sentences. Ratios are fractions in [0, 1] (0 when undefined);
    `average_crossing` is crossing brackets per valid sentence.

    # Parameters

    precision : `float`
        Matched / predicted brackets.
    recall : `float`
        Matched / gold brackets.
    f1 : `float`
        Harmonic mean of precision and recall.
    complete_match : `float`
        Fraction of valid sentences matched completely.
    tagging_accuracy : `float`
        Correct tags / words of valid sentences.
    average_crossing : `float`
        Crossing brackets per valid sentence.
    no_crossing : `float`
        Fraction of valid sentences without crossing brackets.
    two_or_less_crossing : `float`
        Fraction of valid sentences with at most two crossing brackets.
    sentences : `int`
        All sentences.
    errors : `int`
        Error sentences.
    skipped : `int`
        Skipped sentences.
    valid_sentences : `int`
        `sentences - errors - skipped`.
    counts : `EvalbCounts`
        The counts all of the above come from.
    cutoff : `Optional[EvalbResult]`
        The same for sentences of at most `cutoff_length` words (`None` inside `cutoff`).
    cutoff_length : `int`
        The cut-off length of the `cutoff` block.
    per_sentence : `List[EvalbCounts]`
        The counts of each sentence, in input order (empty inside `cutoff`).
    """

    precision: float
    recall: float
    f1: float
    complete_match: float
    tagging_accuracy: float
    average_crossing: float
    no_crossing: float
    two_or_less_crossing: float
    sentences: int
    errors: int
    skipped: int
    valid_sentences: int
    counts: EvalbCounts
    cutoff: Optional["EvalbResult"] = None
    cutoff_length: int = 40
    per_sentence: List[EvalbCounts] = field(default_factory=list)

    @classmethod
    def from_counts(
        cls,
        counts: EvalbCounts,
        cutoff_counts: Optional[EvalbCounts] = None,
        cutoff_length: int = 40,
        per_sentence: Optional[List[EvalbCounts]] = None,
    ) -> "EvalbResult":
        """Computes the ratios of `counts` (and of `cutoff_counts` for the `cutoff` block)."""
        precision = _ratio(counts.matched, counts.predicted)
        recall = _ratio(counts.matched, counts.gold)
        valid = counts.valid_sentences
        return cls(
            precision=precision,
            recall=recall,
            f1=_ratio(2 * counts.matched, counts.gold + counts.predicted),
            complete_match=_ratio(counts.complete_match, valid),
            tagging_accuracy=_ratio(counts.tags_correct, counts.tags_total),
            average_crossing=_ratio(counts.crossing, valid),
            no_crossing=_ratio(counts.no_crossing, valid),
            two_or_less_crossing=_ratio(counts.two_or_less_crossing, valid),
            sentences=counts.sentences,
            errors=counts.errors,
            skipped=counts.skipped,
            valid_sentences=valid,
            counts=counts,
            cutoff=(
                None
                if cutoff_counts is None
                else cls.from_counts(cutoff_counts, cutoff_length=cutoff_length)
            ),
            cutoff_length=cutoff_length,
            per_sentence=list(per_sentence or []),
        )


def _ratio(numerator: int, denominator: int) -> float:
    return numerator / denominator if denominator > 0 else 0.0


# ------------------------------------------------------------------------------------------------
# Reading a tree (`read_line`)
# ------------------------------------------------------------------------------------------------


@dataclass
class _Terminal:
    word: str
    tag: str


@dataclass
class _Bracket:
    start: int
    end: int
    label: str


@dataclass
class _QuoteTerm:
    word: str
    tag: str
    index: int  # number of kept words before it
    bracket: int  # number of brackets opened before it
    ends: List[int]  # brackets open around it


@dataclass
class _ReadTree:
    terminals: List[_Terminal] = field(default_factory=list)
    num_words: int = 0  # `wn`; equals len(terminals) except after odd quote re-insertions
    brackets: List[_Bracket] = field(default_factory=list)  # in pre-order
    quote_terms: List[_QuoteTerm] = field(default_factory=list)
    length: int = 0  # words not in delete_labels_for_length (`r_wn`)
    malformed: Optional[str] = None


def _read_tree(tree: Union[Tree, Sequence[Tree]], params: EvalbParams) -> _ReadTree:
    """
    The words, tags and brackets EVALB reads from the bracketed string of `tree`, or of a
    sequence of trees written side by side on one line (EVALB reads `(P a) (Q b)` as two words
    and no bracket).
    """
    read = _ReadTree()
    open_brackets: List[int] = []

    def visit(node: Union[Tree, str]) -> None:
        if not isinstance(node, Tree):
            read.malformed = f"a word ({node!r}) next to sub-trees in one bracket"
            return
        label = str(node.label())
        if len(node) == 1 and not isinstance(node[0], Tree):
            word = str(node[0])
            if label not in params._delete_for_length_set:
                read.length += 1
            if label in params._quote_set and word in _QUOTE_WORDS:
                read.quote_terms.append(
                    _QuoteTerm(
                        word, label, len(read.terminals), len(read.brackets), list(open_brackets)
                    )
                )
            if label not in params._delete_set:
                read.terminals.append(_Terminal(word, label))
            return
        bracket = _Bracket(len(read.terminals), -1, label)
        open_brackets.append(len(read.brackets))
        read.brackets.append(bracket)
        for child in node:
            visit(child)
        open_brackets.pop()
        bracket.end = len(read.terminals)

    for top_level in [tree] if isinstance(tree, Tree) else tree:
        visit(top_level)
    read.num_words = len(read.terminals)
    return read


def _reinsert_term(quote: _QuoteTerm, read: _ReadTree) -> None:
    """`reinsert_term`: puts a deleted quote word back, shifting the brackets after it."""
    while len(read.terminals) < quote.index:
        read.terminals.append(_Terminal("", ""))
    read.terminals.insert(quote.index, _Terminal(quote.word, quote.tag))
    read.num_words += 1
    for k, bracket in enumerate(read.brackets):
        if k >= quote.bracket:
            bracket.start += 1
            bracket.end += 1
    for k in quote.ends:
        read.brackets[k].end += 1


def _fix_quote(gold: _ReadTree, test: _ReadTree, params: EvalbParams) -> None:
    """`fix_quote`, loop for loop (including its index bookkeeping)."""
    deleted = params._delete_set
    for i, test_quote in enumerate(test.quote_terms):
        index = test_quote.index
        for j, gold_quote in enumerate(gold.quote_terms):
            if gold_quote.index != index or gold_quote.tag == test_quote.tag:
                continue
            if gold_quote.tag in deleted and test_quote.tag not in deleted:
                _reinsert_term(gold_quote, gold)
                for later in gold.quote_terms[j:]:
                    later.index += 1
            elif test_quote.tag in deleted and gold_quote.tag not in deleted:
                _reinsert_term(test_quote, test)
                for later in test.quote_terms[i:]:
                    later.index += 1


def _scored_brackets(read: _ReadTree, params: EvalbParams) -> List[_Bracket]:
    """`massage_data`: the brackets that are scored, labels cleaned, in pre-order."""
    scored = []
    for bracket in read.brackets:
        if bracket.start == bracket.end:
            continue
        label = _clean_label(bracket.label)
        if params.is_deleted_bracket_label(label):
            continue
        scored.append(_Bracket(bracket.start, bracket.end, label))
    return scored


def _clean_label(label: str) -> str:
    """`modify_label`: cuts the label at its first `-` or `=` (function tags, indices)."""
    for position, character in enumerate(label):
        if character in "-=":
            return label[:position]
    return label


# ------------------------------------------------------------------------------------------------
# Scoring one sentence (`calc_result`)
# ------------------------------------------------------------------------------------------------


def _sentence_counts(
    gold: _ReadTree, test: Optional[_ReadTree], params: EvalbParams
) -> EvalbCounts:
    counts = EvalbCounts(
        sentences=1,
        length=gold.length,
        within_cutoff=int(gold.length <= params.cutoff_length),
    )
    if gold.malformed is not None or (test is not None and test.malformed is not None):
        counts.errors = 1
        return counts
    if test is None:  # parser failure: no prediction at all
        if gold.num_words == 0:
            counts.skipped = 1
            return counts
        counts.gold = len(_scored_brackets(gold, params))
        counts.no_crossing = counts.two_or_less_crossing = 1
        counts.tags_total = gold.num_words
        return counts
    if test.num_words == 0:
        counts.skipped = 1
        return counts
    if gold.num_words != test.num_words:
        _fix_quote(gold, test, params)
        if gold.num_words != test.num_words:
            counts.errors = 1
            return counts
    for position in range(gold.num_words):
        if not params.words_equal(gold.terminals[position].word, test.terminals[position].word):
            counts.errors = 1
            return counts

    gold_brackets = _scored_brackets(gold, params)
    test_brackets = _scored_brackets(test, params)

    # Each gold bracket in pre-order takes the first unmatched predicted one with its span.
    test_by_span: Dict[Tuple[int, int], List[int]] = {}
    for j, bracket in enumerate(test_brackets):
        test_by_span.setdefault((bracket.start, bracket.end), []).append(j)
    test_used = [False] * len(test_brackets)
    matched = 0
    for bracket in gold_brackets:
        for j in test_by_span.get((bracket.start, bracket.end), ()):
            if not test_used[j] and (
                not params.labeled or params.labels_equal(bracket.label, test_brackets[j].label)
            ):
                test_used[j] = True
                matched += 1
                break

    gold_spans = {(bracket.start, bracket.end) for bracket in gold_brackets}
    crossing = 0
    for bracket in test_brackets:
        start, end = bracket.start, bracket.end
        for gold_start, gold_end in gold_spans:
            if (gold_start < start < gold_end < end) or (start < gold_start < end < gold_end):
                crossing += 1
                break

    tags_correct = sum(
        params.labels_equal(gold.terminals[position].tag, test.terminals[position].tag)
        for position in range(gold.num_words)
    )

    counts.matched = matched
    counts.gold = len(gold_brackets)
    counts.predicted = len(test_brackets)
    counts.complete_match = int(counts.gold == counts.predicted == matched)
    counts.crossing = crossing
    counts.no_crossing = int(crossing == 0)
    counts.two_or_less_crossing = int(crossing <= 2)
    counts.tags_correct = tags_correct
    counts.tags_total = gold.num_words
    return counts


def _is_failure(predicted: Optional[Tree]) -> bool:
    if predicted is None:
        return True
    if not isinstance(predicted, Tree):
        raise TypeError(f"expected an nltk.Tree or None as predicted tree, got {predicted!r}")
    return len(predicted.leaves()) == 0


def evalb_sentence(
    gold: Tree, predicted: Optional[Tree], params: EvalbParams = COLLINS
) -> EvalbCounts:
    """
    EVALB's counts for one sentence. `predicted` may be `None` or a tree without words (a
    parser failure, scored as a valid sentence with no predicted bracket; see the module
    docstring). The result's `within_cutoff` is 1 when the sentence belongs to the cut-off
    summary, `status` is EVALB's status column.
    """
    if not isinstance(gold, Tree):
        raise TypeError(f"expected an nltk.Tree as gold tree, got {gold!r}")
    test = None if _is_failure(predicted) else _read_tree(predicted, params)
    return _sentence_counts(_read_tree(gold, params), test, params)


def evalb_score(
    gold_trees: Sequence[Tree],
    predicted_trees: Sequence[Optional[Tree]],
    params: EvalbParams = COLLINS,
) -> EvalbResult:
    """
    Scores `predicted_trees` against `gold_trees` (same order, same number) as EVALB does.
    Raises :class:`EvalbError` where EVALB would give up (more than `params.max_error`
    earlier error sentences).
    """
    if len(gold_trees) != len(predicted_trees):
        raise ValueError(
            f"{len(gold_trees)} gold trees but {len(predicted_trees)} predicted trees: "
            "EVALB needs one prediction per gold tree, in the same order (use None for a "
            "sentence the parser failed on)"
        )
    pairs = []
    for number, (gold, predicted) in enumerate(zip(gold_trees, predicted_trees), start=1):
        if not isinstance(gold, Tree):
            raise TypeError(f"gold tree {number} is not an nltk.Tree: {gold!r}")
        pairs.append((gold, None if _is_failure(predicted) else predicted))
    return _score_pairs(pairs, params)


def _score_pairs(
    pairs: Iterable[Tuple[Union[Tree, _ReadTree], Optional[Union[Tree, _ReadTree]]]],
    params: EvalbParams,
) -> EvalbResult:
    total, cutoff_total = EvalbCounts(), EvalbCounts()
    per_sentence = []
    for number, (gold, predicted) in enumerate(pairs, start=1):
        gold_read = gold if isinstance(gold, _ReadTree) else _read_tree(gold, params)
        test_read = (
            predicted
            if predicted is None or isinstance(predicted, _ReadTree)
            else _read_tree(predicted, params)
        )
        counts = _sentence_counts(gold_read, test_read, params)
        if counts.errors and params.max_error is not None and total.errors > params.max_error:
            raise EvalbError(
                f"sentence {number} is error sentence number {total.errors + 1} (different "
                f"words or numbers of words); EVALB gives up after {params.max_error + 1} "
                "errors (MAX_ERROR). Check that gold and predicted trees are aligned and "
                "tokenised the same way, or raise max_error."
            )
        total += counts
        if counts.within_cutoff:
            cutoff_total += counts
        per_sentence.append(counts)
    return EvalbResult.from_counts(total, cutoff_total, params.cutoff_length, per_sentence)


def _read_line(line: str, path: str, line_number: int, params: EvalbParams) -> Optional[_ReadTree]:
    if not line.strip():
        return None
    try:
        tree = Tree.fromstring(line)
    except ValueError as error:
        problem = error
    else:
        return None if _is_failure(tree) else _read_tree(tree, params)
    try:  # several trees side by side: `(P a) (Q b)`
        forest = Tree.fromstring(f"({line})")
    except ValueError:
        forest = None
    if forest is not None and len(forest) > 1 and all(isinstance(t, Tree) for t in forest):
        return _read_tree(list(forest), params)
    read = _ReadTree()
    read.malformed = f"{path}, line {line_number}: cannot read the tree ({problem})"
    return read


def evalb_files(
    gold_path: Union[str, os.PathLike],
    predicted_path: Union[str, os.PathLike],
    params: EvalbParams = COLLINS,
) -> EvalbResult:
    """
    Scores two files of one bracketed tree per line, EVALB's input format (UTF-8). An empty
    line in the predicted file is a parser failure (see the module docstring); an empty gold
    line is a sentence without words; several trees side by side on a line, `(P a) (Q b)`, are
    read as EVALB reads them (words, no enclosing bracket). A line that cannot be read as a
    tree is an error sentence. Raises `ValueError` if the files have different numbers of lines.
    """
    with open(gold_path, encoding="utf-8") as gold_file:
        gold_lines = gold_file.read().splitlines()
    with open(predicted_path, encoding="utf-8") as predicted_file:
        predicted_lines = predicted_file.read().splitlines()
    if len(gold_lines) != len(predicted_lines):
        raise ValueError(
            f"{gold_path} has {len(gold_lines)} lines but {predicted_path} has "
            f"{len(predicted_lines)}: EVALB needs one tree per line in both, in the same order"
        )
    pairs = []
    for number, (gold_line, predicted_line) in enumerate(zip(gold_lines, predicted_lines), 1):
        gold = _read_line(gold_line, str(gold_path), number, params) or _ReadTree()
        predicted = _read_line(predicted_line, str(predicted_path), number, params)
        pairs.append((gold, predicted))
    return _score_pairs(pairs, params)


# ------------------------------------------------------------------------------------------------
# Printing (`individual_result`, `print_total`)
# ------------------------------------------------------------------------------------------------


def _percent(numerator: int, denominator: int) -> float:
    return 100.0 * numerator / denominator if denominator > 0 else 0.0


def _summary_block(counts: EvalbCounts) -> List[str]:
    valid = counts.valid_sentences
    recall = _percent(counts.matched, counts.gold)
    precision = _percent(counts.matched, counts.predicted)
    # EVALB prints nan when both are 0; this prints 0.00.
    f_measure = 2 * precision * recall / (precision + recall) if precision + recall > 0 else 0.0
    return [
        "Number of sentence        = %6d" % counts.sentences,
        "Number of Error sentence  = %6d" % counts.errors,
        "Number of Skip  sentence  = %6d" % counts.skipped,
        "Number of Valid sentence  = %6d" % valid,
        "Bracketing Recall         = %6.2f" % recall,
        "Bracketing Precision      = %6.2f" % precision,
        "Bracketing FMeasure       = %6.2f" % f_measure,
        "Complete match            = %6.2f" % _percent(counts.complete_match, valid),
        "Average crossing          = %6.2f" % (1.0 * counts.crossing / valid if valid > 0 else 0.0),
        "No crossing               = %6.2f" % _percent(counts.no_crossing, valid),
        "2 or less crossing        = %6.2f" % _percent(counts.two_or_less_crossing, valid),
        "Tagging accuracy          = %6.2f" % _percent(counts.tags_correct, counts.tags_total),
    ]


def format_report(result: EvalbResult, per_sentence: bool = False) -> str:
    """
    EVALB's printed summary ("-- All --" and "-- len<=40 --" blocks, in percentages), preceded,
    with `per_sentence`, by its table of sentences and totals: then the text is what the C
    program prints to standard output for the same input (except `nan` F-measures, printed 0.00).
    """
    lines = []
    if per_sentence:
        lines += [
            "  Sent.                        Matched  Bracket   Cross        Correct Tag",
            " ID  Len.  Stat. Recal  Prec.  Bracket gold test Bracket Words  Tags Accracy",
            "=" * 76,
        ]
        for number, counts in enumerate(result.per_sentence, start=1):
            lines.append(
                "%4d  %3d    %d  " % (number, counts.length, counts.status)
                + "%6.2f %6.2f   %3d    %3d  %3d    %3d"
                % (
                    _percent(counts.matched, counts.gold),
                    _percent(counts.matched, counts.predicted),
                    counts.matched,
                    counts.gold,
                    counts.predicted,
                    counts.crossing,
                )
                + "   %4d  %4d   %6.2f"
                % (
                    counts.tags_total,
                    counts.tags_correct,
                    _percent(counts.tags_correct, counts.tags_total),
                )
            )
        total = result.counts
        lines.append("=" * 76)
        totals = ""
        if total.gold > 0 and total.predicted > 0:
            totals = "                %6.2f %6.2f %6d %5d %5d  %5d" % (
                _percent(total.matched, total.gold),
                _percent(total.matched, total.predicted),
                total.matched,
                total.gold,
                total.predicted,
                total.crossing,
            )
        totals += "  %5d %5d   %6.2f" % (
            total.tags_total,
            total.tags_correct,
            _percent(total.tags_correct, total.tags_total),
        )
        lines.append(totals)
    lines += ["=== Summary ===", "", "-- All --"]
    lines += _summary_block(result.counts)
    if result.cutoff is not None:
        lines += ["", "-- len<=%d --" % result.cutoff_length]
        lines += _summary_block(result.cutoff.counts)
    return "\n".join(lines) + "\n"


__all__ = [
    "COLLINS",
    "NK",
    "EvalbCounts",
    "EvalbError",
    "EvalbParams",
    "EvalbResult",
    "evalb_files",
    "evalb_score",
    "evalb_sentence",
    "format_report",
]
