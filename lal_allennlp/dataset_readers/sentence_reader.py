"""
Dataset reader of plain sentences for the Tree Transformer (Wang, Lee & Chen 2019, "Tree
Transformer: Integrating Tree Structures into Self-Attention"): a masked language model over
words whose attention induces constituency trees without supervision. It learns from words
alone, so the reader takes sentences from several kinds of corpora (bracketed treebanks, CoNLL-U
files, plain text with one tokenised sentence per line) and keeps the gold tree, where the input
has one, for evaluation only.

Words are normalised for the vocabulary as the Tree Transformer authors do (lower case, every
digit replaced by `N`), and punctuation is removed before training and before trees are induced
and scored, as in the unsupervised-parsing literature (see `lal_allennlp.syntax.unsupervised`).
"""

import codecs
import logging
import re
from collections import Counter
from itertools import chain
from typing import Dict, Iterable, Iterator, List, NamedTuple, Optional, Sequence, Tuple

import torch.distributed as dist
from allennlp.common import util
from allennlp.common.checks import ConfigurationError
from allennlp.data.dataset_readers.dataset_reader import DatasetReader
from allennlp.data.fields import Field, MetadataField, TextField
from allennlp.data.instance import Instance
from allennlp.data.token_indexers import SingleIdTokenIndexer, TokenIndexer
from allennlp.data.tokenizers import Token
from nltk import Tree

from lal_allennlp.dataset_readers.ptb_reader import (
    TREEBANK_SUFFIXES,
    TreebankPathError,
    _decode,
)
from lal_allennlp.syntax.dependencies import _NON_WORD_ID_RE, DependencyFormatError
from lal_allennlp.syntax.paths import resolve_path_list
from lal_allennlp.syntax.trees import TreebankFormatError, normalise_tree, parse_trees
from lal_allennlp.syntax.unsupervised import (
    PUNCTUATION_TAGS,
    UD_PUNCTUATION_TAG,
    is_punctuation_word,
)

logger = logging.getLogger(__name__)

# What every digit of a word becomes with `digits_to_n`, as in the Penn Treebank language
# modelling data (Mikolov et al. 2010) the Tree Transformer vocabulary follows: "1.5" -> "N.N".
DIGIT_REPLACEMENT = "N"
# Unicode decimal digits (category Nd), not only 0-9.
_DIGIT_RE = re.compile(r"\d")

# Files read from a directory: those of the treebank reader and CoNLL-U files.
CONLLU_SUFFIX = ".conllu"
SENTENCE_SUFFIXES = TREEBANK_SUFFIXES + (CONLLU_SUFFIX,)
# The formats of `_file_format`.
TREEBANK = "treebank"
CONLLU = "CoNLL-U"
PLAIN_TEXT = "plain text"
# CoNLL-U columns: ID FORM LEMMA UPOS XPOS FEATS HEAD DEPREL DEPS MISC.
_CONLLU_COLUMNS = 10
_UPOS_COLUMN = 3

_UTF8_ADVICE = "convert the file to UTF-8, e.g. `iconv -f latin1 -t utf-8`"
_SKIP_ADVICE = "or set skip_bad_sentences to pass over such sentences"


def normalise_word(word: str, lowercase: bool = True, digits_to_n: bool = True) -> str:
    """
    The vocabulary form of a word: lower-cased if `lowercase`, then every digit (any Unicode
    decimal digit) replaced by `DIGIT_REPLACEMENT` if `digits_to_n`, so that `"1.5"` becomes
    `"N.N"` and `"1960s"` becomes `"NNNNs"` (the `N` itself stays upper case, apart from the
    word `"n"`).
    """
    if lowercase:
        word = word.lower()
    if digits_to_n:
        word = _DIGIT_RE.sub(DIGIT_REPLACEMENT, word)
    return word


class _Sentence(NamedTuple):
    """A sentence as read: all its words, which of them are punctuation, its gold tree."""

    words: List[str]
    punctuation: List[bool]
    tree: Optional[Tree]


# What the file readers yield: the 1-based line where a sentence starts and the sentence, or the
# line and the problem of a malformed one.
_Item = Tuple[Optional[int], Optional[_Sentence], Optional[TreebankFormatError]]


def _file_format(path: str, data: bytes) -> str:
    """`CONLLU` for a `.conllu` file, `TREEBANK` if the first non-blank character is `(`, else
    `PLAIN_TEXT`."""
    if path.endswith(CONLLU_SUFFIX):
        return CONLLU
    if data.removeprefix(codecs.BOM_UTF8).lstrip().startswith(b"("):
        return TREEBANK
    return PLAIN_TEXT


def _decoded_lines(
    path: str, data: bytes
) -> Iterator[Tuple[int, Optional[str], Optional[TreebankFormatError]]]:
    """
    The lines of `data` (split at `\\n`, a trailing `\\r` dropped) with their 1-based numbers,
    each decoded from UTF-8 on its own so that one bad line does not lose the file: `(number,
    text, None)`, or `(number, None, error)` for a line that is not valid UTF-8.
    """
    lines = data.split(b"\n")
    if lines and not lines[-1]:
        lines.pop()  # the newline at the end of the file
    for number, raw in enumerate(lines, 1):
        try:
            text = raw.decode("utf-8-sig" if number == 1 else "utf-8")
        except UnicodeDecodeError as error:
            problem = (
                f"not valid UTF-8: byte 0x{raw[error.start]:02x} at position {error.start + 1} "
                "of the line"
            )
            yield number, None, TreebankFormatError(
                path, number, problem, f"{_UTF8_ADVICE}, {_SKIP_ADVICE}"
            )
            continue
        yield number, text.rstrip("\r"), None


def _treebank_items(path: str, data: bytes, collect: bool) -> Iterator[_Item]:
    """
    The trees of a bracketed treebank file, normalised by `normalise_tree` (`-NONE-` empty
    elements removed, punctuation kept); punctuation is judged by the POS tag
    (`PUNCTUATION_TAGS`). With `collect`, malformed trees are yielded as errors instead of
    raised.
    """
    try:
        text = _decode(path, data)
    except TreebankFormatError as error:
        if not collect:
            raise
        yield error.line, None, error
        return
    errors: Optional[List[TreebankFormatError]] = [] if collect else None
    for tree, line in parse_trees(text, path, errors):
        while errors:
            error = errors.pop(0)
            yield error.line, None, error
        try:
            normalised = normalise_tree(tree)
        except ValueError as value_error:
            normalised_error = TreebankFormatError(path, line, str(value_error))
            if not collect:
                raise normalised_error from None
            yield line, None, normalised_error
            continue
        if normalised is None:
            empty_error = TreebankFormatError(
                path,
                line,
                "the tree has no words once -NONE- empty elements are removed",
                "remove the tree or give it words",
            )
            if not collect:
                raise empty_error
            yield line, None, empty_error
            continue
        words, tags = zip(*normalised.pos())
        punctuation = [tag in PUNCTUATION_TAGS for tag in tags]
        yield line, _Sentence(list(words), punctuation, normalised), None
    for error in errors or []:
        yield error.line, None, error


def _conllu_items(path: str, data: bytes) -> Iterator[_Item]:
    """
    The sentences of a CoNLL-U file: the FORM of each word, punctuation judged by its UPOS
    (`UD_PUNCTUATION_TAG`). Comment lines, multi-word token lines (`3-4`, whose words follow as
    their own lines) and empty nodes (`5.1`) are skipped. A sentence with a line that cannot be
    read is yielded as one error, at that line; the caller raises or skips it.
    """
    words: List[str] = []
    punctuation: List[bool] = []
    start: Optional[int] = None  # the sentence's first line (a comment or a token)
    error: Optional[TreebankFormatError] = None  # the sentence's first problem
    # A blank line after the last one ends the last sentence.
    lines = chain(_decoded_lines(path, data), [(0, "", None)])
    for number, line, decode_error in lines:
        if decode_error is None and not line.strip():  # type: ignore[union-attr]
            if error is not None:
                yield error.line, None, error
            elif words:
                yield start, _Sentence(words, punctuation, None), None
            words, punctuation, start, error = [], [], None, None
            continue
        if start is None:
            start = number
        if error is not None:
            continue  # the rest of a broken sentence
        if decode_error is not None:
            error = decode_error
            continue
        assert line is not None
        if line.startswith("#"):
            continue
        columns = line.split("\t")
        if len(columns) != _CONLLU_COLUMNS:
            error = DependencyFormatError(
                path,
                number,
                f"{len(columns)} tab-separated columns in a CoNLL-U token line",
                f"each token line needs the {_CONLLU_COLUMNS} CoNLL-U columns, separated by "
                f"tabs; {_SKIP_ADVICE}",
            )
            continue
        token_id = columns[0]
        if _NON_WORD_ID_RE.match(token_id):
            continue
        if token_id != str(len(words) + 1):
            error = DependencyFormatError(
                path,
                number,
                f"token ID {token_id!r} where {len(words) + 1} was expected",
                "IDs must count 1, 2, 3, ... within each sentence; separate sentences by a "
                f"blank line; {_SKIP_ADVICE}",
            )
            continue
        words.append(columns[1])
        punctuation.append(columns[_UPOS_COLUMN] == UD_PUNCTUATION_TAG)


def _plain_text_items(path: str, data: bytes) -> Iterator[_Item]:
    """
    The sentences of a plain-text file, one per line, words separated by white space (the text
    is taken as tokenised already); punctuation is judged by `is_punctuation_word`. A blank line
    is an empty sentence; a line that is not valid UTF-8 is an error.
    """
    for number, line, error in _decoded_lines(path, data):
        if error is not None:
            yield number, None, error
            continue
        assert line is not None
        words = line.split()
        yield number, _Sentence(words, [is_punctuation_word(w) for w in words], None), None


@DatasetReader.register("lal_sentences")
class SentenceReader(DatasetReader):
    """
    Reads sentences for a language model over words that induces trees (the Tree Transformer,
    Wang, Lee & Chen 2019) and makes one `Instance` per sentence: the normalised words, and the
    gold tree where the input has one (for evaluation against the trees induced).

    Registered as a `DatasetReader` with name "lal_sentences".

    `file_path` is one data path or several joined by commas, read in order
    (`"ptb/wsj_0001-0159,ud/en_ewt-ud-train.conllu,news.txt"`). Each is a file, a directory
    (its `*.mrg`, `*.tree`, `*.trees`, `*.txt` and `*.conllu` files, sub-folders included,
    sorted), a glob, or a WSJ file-id range `DIR/wsj_0001-0159` (see `paths.resolve_paths`). The
    format is decided per file:

    * a `.conllu` file is CoNLL-U: the words are the FORM column; multi-word token lines
      (`3-4`) and empty nodes (`5.1`) are skipped; punctuation is UPOS `PUNCT`;
    * a file whose first non-blank character is `(` is a bracketed treebank (raw WSJ `.mrg` or
      one tree per line), read like the `lal_ptb` reader does: `-NONE-` empty elements removed,
      function tags stripped (`normalise_tree`); punctuation is the POS tags of
      `unsupervised.PUNCTUATION_TAGS`;
    * any other file is plain text, one tokenised sentence per line, words separated by white
      space; punctuation is a word of punctuation characters only (`is_punctuation_word`).

    Instances are sharded over distributed workers and data-loader processes by sentence.

    # Parameters

    token_indexers : `Optional[Dict[str, TokenIndexer]]`, optional (default = `None`)
        How the normalised words are indexed; `None` means `{"tokens": SingleIdTokenIndexer()}`
        (which must not lower-case again: the words already are).
    lowercase : `bool`, optional (default = `True`)
        Lower-case the words (`normalise_word`).
    digits_to_n : `bool`, optional (default = `True`)
        Replace every digit by `N` (`normalise_word`): `"1.5"` -> `"N.N"`.
    remove_punctuation : `bool`, optional (default = `True`)
        Remove punctuation words (judged per format, see above) from the sentences, as the
        Tree Transformer and the unsupervised-parsing literature do for training and scoring.
        The gold tree keeps them.
    max_length : `Optional[int]`, optional (default = `None`)
        Sentences with more words than this (after punctuation removal) are skipped; they are
        counted, and the count is logged for each file. `None` keeps every sentence. Empty
        sentences (blank lines, only punctuation) are always skipped, counted and logged.
    skip_bad_sentences : `bool`, optional (default = `False`)
        What to do with a malformed tree or CoNLL-U sentence, a line that is not valid UTF-8 (a
        whole treebank file, whose trees span lines), or an empty file: `False` raises a
        `TreebankFormatError` (`DependencyFormatError` for CoNLL-U) naming the file and line;
        `True` logs a warning naming the file, line and problem, goes on with the next sentence
        (or file), and logs how many were skipped in each file.
    **kwargs
        Passed to `DatasetReader` (e.g. `max_instances`).
    """

    def __init__(
        self,
        token_indexers: Optional[Dict[str, TokenIndexer]] = None,
        lowercase: bool = True,
        digits_to_n: bool = True,
        remove_punctuation: bool = True,
        max_length: Optional[int] = None,
        skip_bad_sentences: bool = False,
        **kwargs,
    ) -> None:
        super().__init__(
            manual_distributed_sharding=True, manual_multiprocess_sharding=True, **kwargs
        )
        if max_length is not None and max_length < 1:
            raise ConfigurationError(f"max_length must be at least 1 (or null), not {max_length}.")
        self._token_indexers = token_indexers or {"tokens": SingleIdTokenIndexer()}
        self._lowercase = lowercase
        self._digits_to_n = digits_to_n
        self._remove_punctuation = remove_punctuation
        self._max_length = max_length
        self._skip_bad = skip_bad_sentences
        # Counts of the last `_read` over all shards: files, sentences (well-formed ones read),
        # skipped_errors, skipped_empty, skipped_too_long; and instances made by this process.
        self.stats: Dict[str, int] = {}

    def _resolve_paths(self, file_path: str) -> List[str]:
        """The files of a comma-separated list of data paths, in order."""
        return resolve_path_list(file_path, SENTENCE_SUFFIXES, "sentence", TreebankPathError)

    def _is_first_shard(self) -> bool:
        """Whether this process logs: every shard reads every sentence, so only one logs."""
        if util.is_distributed() and dist.get_rank() != 0:
            return False
        return self._worker_info is None or self._worker_info.id == 0

    def _file_items(self, path: str) -> Iterator[_Item]:
        """The sentences and problems of one file, in order (problems raised unless skipped)."""
        with open(path, "rb") as data_file:
            data = data_file.read()
        if not data.strip():
            yield None, None, TreebankFormatError(
                path, None, "the file is empty", "remove it or point the reader elsewhere"
            )
            return
        file_format = _file_format(path, data)
        if file_format == TREEBANK:
            yield from _treebank_items(path, data, collect=self._skip_bad)
        elif file_format == CONLLU:
            yield from _conllu_items(path, data)
        else:
            yield from _plain_text_items(path, data)

    def _sentences(self, paths: List[str]) -> Iterator[Tuple[List[str], Optional[Tree]]]:
        """
        The kept words (punctuation removed, not yet normalised) and gold tree of each sentence
        of `paths` that is well-formed, not empty and not too long, before sharding: every shard
        reads all sentences so that errors and skips are handled and counted the same way
        everywhere. Skips are logged once per file.
        """
        stats = self.stats
        log = self._is_first_shard()
        for path in paths:
            skipped: Counter = Counter()
            for line, sentence, error in self._file_items(path):
                if error is not None:
                    if not self._skip_bad:
                        raise error
                    skipped["errors"] += 1
                    if log:
                        logger.warning("Skipped (skip_bad_sentences): %s", error)
                    continue
                assert sentence is not None
                stats["sentences"] += 1
                words = self._kept_words(sentence.words, sentence.punctuation)
                if not words:
                    skipped["empty"] += 1
                elif self._max_length is not None and len(words) > self._max_length:
                    skipped["too_long"] += 1
                else:
                    yield words, sentence.tree
            for kind in ("errors", "empty", "too_long"):
                stats[f"skipped_{kind}"] += skipped[kind]
            if log:
                self._log_skipped(path, skipped)

    def _log_skipped(self, path: str, skipped: Counter) -> None:
        if skipped["too_long"]:
            logger.info(
                "Skipped %d sentence(s) longer than %d words in %s (max_length)",
                skipped["too_long"],
                self._max_length,
                path,
            )
        if skipped["empty"]:
            what = "once punctuation is removed" if self._remove_punctuation else "at all"
            logger.info(
                "Skipped %d empty sentence(s) in %s (no words %s)", skipped["empty"], path, what
            )
        if skipped["errors"]:
            logger.warning(
                "Skipped %d malformed sentence(s) or file(s) in %s (skip_bad_sentences); each is "
                "logged above with its line",
                skipped["errors"],
                path,
            )

    def _read(self, file_path) -> Iterable[Instance]:  # type: ignore[no-untyped-def]
        paths = self._resolve_paths(file_path)
        log = self._is_first_shard()
        if log:
            logger.info("Reading sentences from %d file(s) at %s", len(paths), file_path)
        stats = {"files": len(paths), "sentences": 0, "instances": 0, "skipped_errors": 0}
        stats.update({"skipped_empty": 0, "skipped_too_long": 0})
        self.stats = stats
        for words, tree in self.shard_iterable(self._sentences(paths)):
            stats["instances"] += 1
            yield self._make_instance(words, tree)
        if log:
            logger.info(
                "Read %d sentence(s) from %d file(s) at %s; this process made %d instance(s)",
                stats["sentences"],
                stats["files"],
                file_path,
                stats["instances"],
            )

    def _kept_words(self, words: Sequence[str], punctuation: Sequence[bool]) -> List[str]:
        """The words without the punctuation ones if `remove_punctuation`."""
        if not self._remove_punctuation:
            return list(words)
        return [word for word, is_punctuation in zip(words, punctuation) if not is_punctuation]

    def text_to_instance(  # type: ignore[override]
        self, words: List[str], gold_tree: Optional[Tree] = None
    ) -> Instance:
        """
        Makes an instance from the raw words of a sentence (punctuation still in them); no I/O.

        # Parameters

        words : `List[str]`
            The words, tokenised, not normalised. With `remove_punctuation`, the punctuation
            words are removed: by the POS tags of `gold_tree` if it is given
            (`PUNCTUATION_TAGS`), else by `is_punctuation_word`.
        gold_tree : `Optional[Tree]`, optional (default = `None`)
            A gold tree normalised by `normalise_tree` (rooted in `TOP`, punctuation kept)
            whose words are `words`.

        # Returns

        An `Instance` with the fields

        tokens : `TextField`
            The words without punctuation, normalised by `normalise_word`.
        metadata : `MetadataField`
            `{"words": the words without punctuation, not normalised, "gold_tree": gold_tree}`.

        # Raises

        `ValueError` if no words are left (an empty sentence, or only punctuation), or the words
        are not those of `gold_tree`.
        """
        words = list(words)
        if gold_tree is not None:
            if isinstance(gold_tree, str) or gold_tree.label() != "TOP":
                raise ValueError(
                    "text_to_instance needs a gold tree normalised by normalise_tree (rooted in "
                    "TOP)"
                )
            tree_words = gold_tree.leaves()
            if tree_words != words:
                raise ValueError(
                    f"the words {words} are not the words of the gold tree {tree_words}"
                )
            punctuation = [tag in PUNCTUATION_TAGS for _, tag in gold_tree.pos()]
        else:
            punctuation = [is_punctuation_word(word) for word in words]
        kept = self._kept_words(words, punctuation)
        if not kept:
            shown = words if len(words) <= 10 else words[:10] + ["..."]
            reason = (
                " once punctuation is removed (the unsupervised parser reads no punctuation, so "
                "there is nothing to parse)"
                if words
                else ""
            )
            raise ValueError(
                f"cannot make an instance of an empty sentence: {shown} has no words{reason}"
            )
        return self._make_instance(kept, gold_tree)

    def _make_instance(self, words: List[str], tree: Optional[Tree]) -> Instance:
        tokens = [
            Token(normalise_word(word, self._lowercase, self._digits_to_n)) for word in words
        ]
        fields: Dict[str, Field] = {
            "tokens": TextField(tokens, self._token_indexers),
            "metadata": MetadataField({"words": words, "gold_tree": tree}),
        }
        return Instance(fields)

    def apply_token_indexers(self, instance: Instance) -> None:
        instance.fields["tokens"]._token_indexers = self._token_indexers  # type: ignore
