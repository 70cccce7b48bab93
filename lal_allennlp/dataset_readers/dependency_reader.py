"""
Dataset reader of dependency treebanks (CoNLL-X, CoNLL-U, Malt-TAB) for dependency parsers: the
instances of allennlp-models' `universal_dependencies` reader (so its `biaffine_parser`, Dozat &
Manning 2017, trains on them unchanged) plus, for the sequence-to-sequence arc-standard parser of
Zhang et al. (2017, "Stack-based Multi-layer Attention for Transition-based Dependency Parsing",
section 3.1), the gold transition sequence from the static oracle of
`lal_allennlp.syntax.arc_standard`.

Files are read by `lal_allennlp.syntax.dependencies.read_dependencies`; this reader only resolves
paths, reports skipped sentences and builds fields.
"""

import logging
from typing import Dict, Iterable, Iterator, List, Optional, Tuple

import torch.distributed as dist
from allennlp.common import util
from allennlp.common.checks import ConfigurationError
from allennlp.data.dataset_readers.dataset_reader import DatasetReader
from allennlp.data.fields import Field, LabelField, ListField, MetadataField, SequenceLabelField
from allennlp.data.fields import TextField
from allennlp.data.instance import Instance
from allennlp.data.token_indexers import SingleIdTokenIndexer, TokenIndexer
from allennlp.data.tokenizers import Token

from lal_allennlp.dataset_readers.fields import GoldLabelField
from lal_allennlp.dataset_readers.ptb_reader import check_encoding
from lal_allennlp.syntax.arc_standard import NonProjectiveError, Transition, oracle
from lal_allennlp.syntax.arc_standard import transition_name
from lal_allennlp.syntax.dependencies import (
    DEPENDENCY_SUFFIXES,
    DependencyFormatError,
    DependencyPathError,
    DependencySentence,
    ErrorHandler,
    read_dependencies,
)
from lal_allennlp.syntax.paths import resolve_path_list, split_tree_selection

logger = logging.getLogger(__name__)

# The POS input tags ("pos") and the transitions are kept in namespaces that have an unknown
# entry on purpose (an unseen tag or transition maps to it), which AllenNLP warns about on
# every run ("Your label namespace was 'pos'. We recommend ..."): marked as already warned.
SequenceLabelField._already_warned_namespaces.add("pos")
LabelField._already_warned_namespaces.add("transitions")

# The label of every arc of a file without dependency labels (Malt-TAB with three columns).
NO_LABEL = "_"
# How many sentence numbers / errors a per-file summary of skipped sentences shows.
_SHOWN_SKIPS = 5
_SKIP_ADVICE = "or set skip_bad_sentences to pass over such sentences"


def _with_skip_advice(error: DependencyFormatError) -> DependencyFormatError:
    """The same error, with the advice to set `skip_bad_sentences` added."""
    advice = f"{error.advice}; {_SKIP_ADVICE}" if error.advice else _SKIP_ADVICE
    return DependencyFormatError(error.source, error.line, error.problem, advice)


def _first(items: List[str], separator: str = ", ") -> str:
    """The first `_SHOWN_SKIPS` items joined by `separator`, then `...` if there are more."""
    shown = separator.join(items[:_SHOWN_SKIPS])
    return shown + (f"{separator}..." if len(items) > _SHOWN_SKIPS else "")


@DatasetReader.register("lal_dependencies")
class DependencyTreebankReader(DatasetReader):
    """
    Reads dependency trees and makes one `Instance` per sentence with the fields of
    allennlp-models' `universal_dependencies` reader (`words`, `pos_tags`, `head_tags`,
    `head_indices`, `metadata`) and, with `transitions`, the arc-standard transitions that build
    the tree (see `text_to_instance`).

    Registered as a `DatasetReader` with name "lal_dependencies".

    `file_path` is one data path or several joined by commas, read in order
    (`"ud/en_ewt-ud-train.conllu,more/"`). Each is a file, a directory (its `*.dp`, `*.conll`,
    `*.conllx`, `*.conllu`, `*.malt`, `*.tab` and `*.txt` files, sub-folders included, sorted),
    a glob, or a file-id range `DIR/wsj_0001-0159` (see `resolve_dependency_paths`). The whole
    path may end with a sentence selection, a slice of its sentences in reading order, counted
    before any is skipped: `zh_gsd-ud-dev.conllu[:400]`, `...conllu[400:]`
    (`paths.split_tree_selection`). The format
    of each file (CoNLL-X, CoNLL-U or Malt-TAB `word POS head [label]`) is detected from its
    first token line; CoNLL-U comments, multi-word token lines (`3-4`) and empty nodes (`5.1`)
    are skipped. Every tree must have exactly one root word.

    Instances are sharded over distributed workers and data-loader processes by sentence. Every
    shard reads and checks all sentences, so the counts of the last `read` over all files are
    the same in every shard: `stats` (`files`, `sentences` read well-formed, `instances` made by
    this process, `skipped_errors`, `skipped_non_projective`), as for `lal_ptb`, and the
    attributes `skipped_bad` (= `stats["skipped_errors"]`) and `skipped_non_projective` (of each
    worker's copy of the reader, with data-loader worker processes).

    # Parameters

    token_indexers : `Optional[Dict[str, TokenIndexer]]`, optional (default = `None`)
        How the words are indexed; `None` means `{"tokens": SingleIdTokenIndexer()}`. The
        tokens carry their POS tag as `tag_`, for an indexer with `feature_name: "tag_"`.
    coarse_tags : `bool`, optional (default = `False`)
        Take the POS tags of CoNLL-X / CoNLL-U files from the coarse column (CPOSTAG / UPOS)
        instead of the fine-grained one (POSTAG / XPOS), as allennlp-models'
        `universal_dependencies` reader does by default (see `read_dependencies`).
    transitions : `bool`, optional (default = `True`)
        Give each instance a `transitions` field, the static oracle's arc-standard transitions
        (for the stack-attention parser of Zhang et al. 2017). Non-projective trees have none:
        they are skipped, counted in `skipped_non_projective` and logged per file, never
        raised. With `False` every tree is kept, non-projective ones included (for evaluation,
        and for models such as `biaffine_parser` that take no `transitions` argument).
    on_error : `str`, optional (default = `"raise"`)
        What to do with a malformed sentence (wrong number of columns, an ID or head that is
        not a number, a head outside the sentence, a cycle, no or several root words, words
        that do not spell the CoNLL-U `# text`, a sentence cut in two by a blank line, bytes
        not in `encoding`, a last line cut short)
        or a file that cannot be read (no sentences, format unknown), as in `lal_ptb`:
        `"raise"` raises a `DependencyFormatError` naming the file, the sentence number and
        the line; `"skip"` skips that sentence (or file) only, counts it in
        `stats["skipped_errors"]` and logs a warning per file with the count and the first
        errors.
    skip_bad_sentences : `bool`, optional (default = `False`)
        `True` is the same as `on_error="skip"` (the older name of the option).
    encoding : `str`, optional (default = `"utf-8"`)
        The encoding of the files (any Python codec name: `"latin-1"`, `"gbk"`, `"utf-16"`
        ...). A UTF-8 byte-order mark is dropped.
    **kwargs
        Passed to `DatasetReader` (e.g. `max_instances`).
    """

    def __init__(
        self,
        token_indexers: Optional[Dict[str, TokenIndexer]] = None,
        coarse_tags: bool = False,
        transitions: bool = True,
        on_error: str = "raise",
        skip_bad_sentences: bool = False,
        encoding: str = "utf-8",
        **kwargs,
    ) -> None:
        super().__init__(
            manual_distributed_sharding=True, manual_multiprocess_sharding=True, **kwargs
        )
        if on_error not in ("raise", "skip"):
            raise ConfigurationError(f'on_error must be "raise" or "skip", not {on_error!r}.')
        check_encoding("lal_dependencies", encoding)
        self._token_indexers = token_indexers or {"tokens": SingleIdTokenIndexer()}
        self._coarse_tags = coarse_tags
        # The sentence selection of the path being read (`FILE[start:stop]`), if any.
        self._selection: Optional[Tuple[int, Optional[int]]] = None
        self._transitions = transitions
        self._skip_bad = skip_bad_sentences or on_error == "skip"
        self._encoding = encoding
        # Counts of the last `_read` over all shards (`instances`: made by this process), and
        # the sentences (and files) it skipped.
        self.stats: Dict[str, int] = {}
        self.skipped_non_projective = 0
        self.skipped_bad = 0

    def _resolve_paths(self, file_path: str) -> List[str]:
        """The files of a comma-separated list of data paths, in order."""
        return resolve_path_list(file_path, DEPENDENCY_SUFFIXES, "dependency", DependencyPathError)

    def _is_first_shard(self) -> bool:
        """Whether this process logs: every shard reads every sentence, so only one logs."""
        if util.is_distributed() and dist.get_rank() != 0:
            return False
        return self._worker_info is None or self._worker_info.id == 0

    def _error_handler(self, bad: List[DependencyFormatError]) -> ErrorHandler:
        """What `read_dependencies` calls with a malformed sentence or file."""

        def handle(error: DependencyFormatError) -> None:
            if not self._skip_bad:
                raise _with_skip_advice(error) from None
            bad.append(error)

        return handle

    def _sentences(
        self, paths: List[str]
    ) -> Iterator[Tuple[DependencySentence, Optional[List[Transition]]]]:
        """
        The kept sentences of `paths` with their transitions (`None` without `transitions`),
        before sharding: every shard reads and checks all sentences so that errors and skips are
        handled and counted the same way everywhere. Skips are logged once per file.
        """
        log = self._is_first_shard()
        start, stop = self._selection or (0, None)
        index = -1  # of the last sentence read, over all files
        for path in paths:
            if stop is not None and index + 1 >= stop:
                return
            bad: List[DependencyFormatError] = []
            non_projective: List[int] = []
            sentences = read_dependencies(
                path,
                coarse_tags=self._coarse_tags,
                single_root=True,
                on_error=self._error_handler(bad),
                encoding=self._encoding,
            )
            for sentence, _ in sentences:
                index += 1
                if index < start:
                    continue
                if stop is not None and index >= stop:
                    break
                self.stats["sentences"] += 1
                transitions = None
                if self._transitions:
                    try:
                        transitions = oracle(sentence.heads, sentence.labels)
                    except NonProjectiveError:
                        non_projective.append(sentence.number)  # type: ignore[arg-type]
                        continue
                yield sentence, transitions
            self.skipped_bad += len(bad)
            self.skipped_non_projective += len(non_projective)
            self.stats["skipped_errors"] = self.skipped_bad
            self.stats["skipped_non_projective"] = self.skipped_non_projective
            if log:
                self._log_skipped(path, bad, non_projective)

    def _log_skipped(
        self, path: str, bad: List[DependencyFormatError], non_projective: List[int]
    ) -> None:
        if non_projective:
            logger.info(
                "Skipped %d non-projective sentence(s) in %s (no arc-standard derivation builds "
                "them; set transitions to false to keep them): sentence(s) %s",
                len(non_projective),
                path,
                _first([str(number) for number in non_projective]),
            )
        if bad:
            logger.warning(
                "Skipped %d malformed sentence(s) or file(s) in %s (skip_bad_sentences): %s",
                len(bad),
                path,
                _first([str(error) for error in bad], "; "),
            )

    def _read(self, file_path) -> Iterable[Instance]:  # type: ignore[no-untyped-def]
        self.skipped_non_projective = 0
        self.skipped_bad = 0
        file_path, self._selection = split_tree_selection(file_path)
        paths = self._resolve_paths(file_path)
        self.stats = {"files": len(paths), "sentences": 0, "instances": 0}
        self.stats.update({"skipped_errors": 0, "skipped_non_projective": 0})
        if self._is_first_shard():
            logger.info("Reading dependency trees from %d file(s) at %s", len(paths), file_path)
        for sentence, transitions in self.shard_iterable(self._sentences(paths)):
            self.stats["instances"] += 1
            metadata = {"source": sentence.source, "number": sentence.number}
            yield self._make_instance(
                sentence.words,
                sentence.tags,
                sentence.heads,
                sentence.labels,
                transitions,
                metadata,
            )

    def text_to_instance(  # type: ignore[override]
        self,
        words: List[str],
        pos_tags: Optional[List[str]] = None,
        heads: Optional[List[int]] = None,
        labels: Optional[List[str]] = None,
    ) -> Instance:
        """
        Makes an instance from the words of a sentence and, optionally, its POS tags and gold
        tree; no I/O.

        # Parameters

        words : `List[str]`
            The words.
        pos_tags : `Optional[List[str]]`, optional (default = `None`)
            One POS tag per word.
        heads : `Optional[List[int]]`, optional (default = `None`)
            The gold tree: the head of each word, 1-based, 0 for the root.
        labels : `Optional[List[str]]`, optional (default = `None`)
            With `heads`: the dependency label of each word; `None` labels every arc `_`.

        # Returns

        An `Instance` with the fields

        words : `TextField`
            The words.
        pos_tags : `SequenceLabelField`, namespace "pos"
            Only when `pos_tags` are given. An input: a tag the vocabulary lacks gets the
            unknown tag.
        head_tags : `GoldLabelField`, namespace "head_tags"
            Only with `heads`: the labels, or `_` for every word; a label the vocabulary lacks
            is indexed `fields.UNSEEN_LABEL` (-1), which scores as an error.
        head_indices : `SequenceLabelField` of ints, namespace "head_index_tags"
            Only with `heads`.
        transitions : `ListField[LabelField]`, namespace "transitions"
            Only with `heads` and the reader's `transitions`: the static oracle's arc-standard
            transitions (`SHIFT`, `LEFT-ARC:nsubj`, `RIGHT-ARC:root`, see
            `arc_standard.transition_name`), two per word. In a batch, the padding
            transitions of shorter sentences are -1.
        metadata : `MetadataField`
            `{"words": words, "pos": pos_tags, "heads": heads, "labels": labels}` (`None` where
            not given); instances read from a file also have `"source"` (the file) and
            `"number"` (the 1-based sentence number in it).

        # Raises

        `ValueError` for an empty sentence, tags, heads or labels of the wrong length, a head
        outside the sentence; `arc_standard.NonProjectiveError` (a `ValueError`) if the reader
        makes transitions and the tree has none (it is not projective or has several roots).
        """
        words = list(words)
        if not words:
            raise ValueError("cannot make an instance of an empty sentence")
        for name, values in (("POS tags", pos_tags), ("heads", heads), ("labels", labels)):
            if values is not None and len(values) != len(words):
                raise ValueError(f"{len(words)} words but {len(values)} {name}: {values}")
        if labels is not None and heads is None:
            raise ValueError("labels without heads: give the heads of the tree too")
        transitions = None
        if heads is not None:
            heads = list(heads)
            if not all(0 <= head <= len(words) for head in heads):
                raise ValueError(
                    f"heads {heads}: each must be a word of the sentence (1 to {len(words)}) or "
                    "0 for the root"
                )
            if self._transitions:
                transitions = oracle(heads, labels)
        return self._make_instance(
            words,
            None if pos_tags is None else list(pos_tags),
            heads,
            None if labels is None else list(labels),
            transitions,
        )

    def _make_instance(
        self,
        words: List[str],
        tags: Optional[List[str]],
        heads: Optional[List[int]],
        labels: Optional[List[str]],
        transitions: Optional[List[Transition]],
        metadata: Optional[Dict[str, object]] = None,
    ) -> Instance:
        if tags is None:
            tokens = [Token(word) for word in words]
        else:
            tokens = [Token(word, tag_=tag) for word, tag in zip(words, tags)]
        text_field = TextField(tokens, self._token_indexers)
        fields: Dict[str, Field] = {"words": text_field}
        if tags is not None:
            fields["pos_tags"] = SequenceLabelField(tags, text_field, label_namespace="pos")
        if heads is not None:
            head_tags = labels if labels is not None else [NO_LABEL] * len(words)
            fields["head_tags"] = GoldLabelField(
                head_tags, text_field, label_namespace="head_tags"
            )
            fields["head_indices"] = SequenceLabelField(
                heads, text_field, label_namespace="head_index_tags"
            )
        if transitions is not None:
            fields["transitions"] = ListField(
                [
                    LabelField(transition_name(action, label), label_namespace="transitions")
                    for action, label in transitions
                ]
            )
        fields["metadata"] = MetadataField(
            {"words": words, "pos": tags, "heads": heads, "labels": labels, **(metadata or {})}
        )
        return Instance(fields)

    def apply_token_indexers(self, instance: Instance) -> None:
        instance.fields["words"]._token_indexers = self._token_indexers  # type: ignore
