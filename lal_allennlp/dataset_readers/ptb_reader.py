"""
Dataset reader for bracketed constituency treebanks (Penn Treebank WSJ `.mrg` files and
one-tree-per-line files) for span-based parsers (Stern et al. 2017; Kitaev & Klein 2018;
Mrini et al. 2020). Trees are normalised with `trees.normalise_tree` and turned into gold
labelled spans with `trees.tree_to_spans`.
"""

import codecs
import logging
import os
from typing import Dict, Iterable, Iterator, List, Optional, Sequence, Tuple, Union

import torch.distributed as dist
from allennlp.common import util
from allennlp.common.checks import ConfigurationError
from allennlp.data.dataset_readers.dataset_reader import DatasetReader
from allennlp.data.fields import Field, ListField, MetadataField, SequenceLabelField, SpanField
from allennlp.data.fields import TextField
from allennlp.data.instance import Instance
from allennlp.data.token_indexers import SingleIdTokenIndexer, TokenIndexer
from allennlp.data.tokenizers import Token
from nltk import Tree

from lal_allennlp.dataset_readers.fields import GoldLabelField
from lal_allennlp.syntax.dependencies import (
    DEPENDENCY_SUFFIXES,
    DependencyAligner,
    DependencyFormatError,
    DependencyPathError,
    DependencySentence,
)
from lal_allennlp.syntax.head_rules import HeadFinder, dependency_labels, head_rules_by_name
from lal_allennlp.syntax.joint_spans import JointSpanError, tree_and_heads_to_joint_spans
from lal_allennlp.syntax.paths import resolve_paths, split_tree_selection
from lal_allennlp.syntax.trees import TreebankFormatError, decode_treebank, normalise_tree
from lal_allennlp.syntax.trees import parse_trees
from lal_allennlp.syntax.trees import tree_to_spans

logger = logging.getLogger(__name__)

# Files read from a directory or a WSJ file-id range.
TREEBANK_SUFFIXES = (".mrg", ".tree", ".trees", ".txt")


class TreebankPathError(ConfigurationError, FileNotFoundError):
    """A treebank path names no file; both a `ConfigurationError` and a `FileNotFoundError`."""

    def __reduce__(self):  # type: ignore[no-untyped-def]
        return (self.__class__, (self.message,))


def resolve_treebank_paths(file_path: Union[str, "os.PathLike[str]"]) -> List[str]:
    """
    Turns a treebank path into the sorted list of files it names: an existing file; a
    directory (its `*.mrg`, `*.tree`, `*.trees` and `*.txt` files, sub-folders included); a
    glob; or a WSJ file-id range `DIR/wsj_0001-0159` (see `paths.resolve_paths`).

    # Raises

    `TreebankPathError` (a `ConfigurationError` and a `FileNotFoundError`) naming the path and
    what was tried, if nothing matches.
    """
    return resolve_paths(file_path, TREEBANK_SUFFIXES, "treebank", TreebankPathError)


def _decode(path: str, data: bytes, encoding: str = "utf-8", errors: str = "strict") -> str:
    """The text of a treebank file (see `trees.decode_treebank`)."""
    return decode_treebank(path, data, encoding, errors)


def check_encoding(reader: str, encoding: str) -> None:
    """A `ConfigurationError` naming the reader if `encoding` is not a Python codec."""
    try:
        codecs.lookup(encoding)
    except LookupError:
        raise ConfigurationError(
            f"{reader}: unknown encoding {encoding!r}; use a Python codec name such as "
            '"utf-8", "latin-1", "gbk" or "utf-16".'
        ) from None


@DatasetReader.register("lal_ptb")
class PennTreebankReader(DatasetReader):
    """
    Reads bracketed constituency trees (raw WSJ `.mrg` files with multi-line trees and an
    unlabelled outer bracket, or one tree per line) and makes one `Instance` per sentence with
    the gold labelled spans of the normalised tree: `-NONE-` empty elements and the
    constituents they leave empty removed, function tags and co-indices stripped, unary chains
    collapsed into joint labels such as `S+VP`.

    Registered as a `DatasetReader` with name "lal_ptb".

    `file_path` may be a file, a directory (its `*.mrg`, `*.tree`, `*.trees` and `*.txt`
    files, sub-folders included, sorted), a glob (`data/*.mrg`), or a directory plus a WSJ
    file-id range, `DIR/wsj_0001-0159`: the files `wsj_0001*` ... `wsj_0159*` in `DIR` (see
    `resolve_treebank_paths`).

    A path may end with a tree selection, a slice of its trees in reading order:
    `sinica.trees[:8000]` (the first 8,000 trees), `sinica.trees[8000:]` (the others),
    `DIR[100:200]` (see `paths.split_tree_selection`). Trees are counted as they are read,
    before normalisation and `max_length`; malformed input is reported wherever it stands.

    Instances are sharded over distributed workers and data-loader processes by tree.

    # Parameters

    token_indexers : `Optional[Dict[str, TokenIndexer]]`, optional (default = `None`)
        How the words are indexed; `None` means `{"tokens": SingleIdTokenIndexer()}`. POS tags
        can be an input too: the indexer `{"type": "single_id", "namespace": "pos_tokens",
        "feature_name": "tag_", "default_value": "@@UNKNOWN@@"}` reads the tree's tags (or
        the tags given to `text_to_instance` / the predictor; without tags, every word gets
        the unknown tag).
    max_length : `Optional[int]`, optional (default = `None`)
        Sentences with more words than this are skipped (for training); they are counted, and
        the count is logged at the end of reading. `None` keeps every sentence.
    on_error : `str`, optional (default = `"raise"`)
        What to do with a malformed file or tree (unbalanced brackets, text outside brackets, a
        tree with no words once `-NONE-` elements are removed, bytes that are not in the
        file's `encoding`, an empty file; with `joint_spans`, dependencies that the joint span
        representation cannot hold): `"raise"` raises a `TreebankFormatError` naming the file
        and line; `"skip"` logs a warning naming the file, line and reason, goes on with the
        next tree (or file), counts it in `stats["skipped_errors"]` and logs how many were
        skipped at the end of reading. Only the malformed tree is skipped: a tree with an
        undecodable byte, a tree closed too early by an extra `)` (with the pieces of it read
        after it), a tree left open by a missing `)` (reading goes on at the next line that
        starts a tree).
    encoding : `str`, optional (default = `"utf-8"`)
        The encoding of the treebank files (any Python codec name: `"latin-1"`, `"gbk"`,
        `"utf-16"` ...). A UTF-8 byte-order mark is dropped.
    joint_spans : `bool`, optional (default = `False`)
        Make instances for the joint span parser (`lal_joint_parser`, Zhou & Zhao 2019): the
        gold spans become the joint spans of the tree and its dependencies (with `<H>`
        sub-head spans and a `TOP` root span when no constituent covers the sentence, see
        `lal_allennlp.syntax.joint_spans`), and the instances get `gold_heads` and
        `gold_dependency_labels`. The dependencies come from `dependencies_dir` or
        `dependencies_path` when given (which imply `joint_spans`), else from the head rules.
    dependencies_dir : `Optional[str]`, optional (default = `None`)
        A folder of dependency files (CoNLL-X, CoNLL-U or Malt-TAB `word POS head`), one per
        treebank file with the same name stem (`trees/wsj_0001.mrg` goes with
        `DIR/wsj_0001.dp`), so any treebank path (train, dev, test) finds its dependencies.
    dependencies_path : `Optional[str]`, optional (default = `None`)
        Instead of `dependencies_dir`: dependency files (file, folder, glob or WSJ range)
        holding one sentence per tree of the treebank path, in the same order.
        In both cases the words must match the tree's words (`-LRB-` matches `(`); a mismatch
        raises an error naming the dependency file, the sentence number and the first
        differing token. Labels missing from the file (Malt-TAB) are made by
        `head_rules.dependency_labels`.
    head_rules : `str`, optional (default = `"collins"`)
        The head-rule table (`head_rules.HEAD_RULE_TABLES`) giving heads when no dependency
        files are given.
    **kwargs
        Passed to `DatasetReader` (e.g. `max_instances`).
    """

    def __init__(
        self,
        token_indexers: Optional[Dict[str, TokenIndexer]] = None,
        max_length: Optional[int] = None,
        on_error: str = "raise",
        joint_spans: bool = False,
        dependencies_dir: Optional[str] = None,
        dependencies_path: Optional[str] = None,
        head_rules: str = "collins",
        encoding: str = "utf-8",
        **kwargs,
    ) -> None:
        super().__init__(
            manual_distributed_sharding=True, manual_multiprocess_sharding=True, **kwargs
        )
        if on_error not in ("raise", "skip"):
            raise ConfigurationError(f'on_error must be "raise" or "skip", not {on_error!r}.')
        check_encoding("lal_ptb", encoding)
        self._file_encoding = encoding
        if max_length is not None and max_length < 1:
            raise ConfigurationError(f"max_length must be at least 1 (or null), not {max_length}.")
        self._token_indexers = token_indexers or {"tokens": SingleIdTokenIndexer()}
        self._max_length = max_length
        self._on_error = on_error
        if dependencies_dir is not None and dependencies_path is not None:
            raise ConfigurationError("Give dependencies_dir or dependencies_path, not both.")
        if dependencies_dir is not None and not os.path.isdir(dependencies_dir):
            raise ConfigurationError(f"dependencies_dir {dependencies_dir!r} is not a folder.")
        self._dependencies_dir = dependencies_dir
        self._dependencies_path = dependencies_path
        self._joint = joint_spans or dependencies_dir is not None or dependencies_path is not None
        try:
            self._head_finder = HeadFinder(head_rules_by_name(head_rules))
        except ValueError as error:
            raise ConfigurationError(str(error)) from None
        # Counts of the last `_read`: files, trees, skipped_errors and skipped_too_long over all
        # shards; instances made by this process.
        self.stats: Dict[str, int] = {}
        # The tree selection of the path being read (`FILE[start:stop]`), if any.
        self._selection: Optional[Tuple[int, Optional[int]]] = None

    def _resolve_paths(self, file_path: str) -> List[str]:
        """The files a data path (without its tree selection) names."""
        return resolve_treebank_paths(file_path)

    def _file_text(
        self, path: str, errors: Optional[List[TreebankFormatError]]
    ) -> Tuple[str, Sequence[int]]:
        """
        The bracketed text of the treebank file `path` and the offsets in it that no tree
        crosses (the `breaks` of `parse_trees`: none here, the `<S>` tags of CTB files); a
        `TreebankFormatError` naming the file (and line) if it holds nothing or, unless
        `errors` collects problems (`on_error` is "skip"), cannot be decoded. When collecting,
        undecodable bytes are kept as lone surrogates (see `trees.decode_treebank`) and
        `parse_trees` reports the trees that hold them; problems of the whole file found here
        are appended to `errors`.
        """
        with open(path, "rb") as treebank_file:
            data = treebank_file.read()
        try:
            text = _decode(path, data, self._file_encoding)
        except TreebankFormatError:
            if errors is None:
                raise
            text = _decode(path, data, self._file_encoding, "surrogateescape")
        if not text.strip():
            raise TreebankFormatError(
                path, None, "the file is empty", "remove it or point the reader elsewhere"
            )
        return text, ()

    def _items(
        self, paths: List[str]
    ) -> Iterator[Tuple[str, Optional[int], Optional[Tree], Optional[TreebankFormatError]]]:
        """
        Yields `(path, line, tree, None)` for each tree and `(path, line, None, error)` for each
        problem, in file order; raises at once if `on_error` is "raise". Only the trees of
        the path's tree selection are yielded, and reading stops at its end.
        """
        collect = self._on_error == "skip"
        start, stop = self._selection or (0, None)
        index = -1  # of the last tree read
        for path in paths:
            if stop is not None and index + 1 >= stop:
                return
            errors: Optional[List[TreebankFormatError]] = [] if collect else None
            try:
                text, breaks = self._file_text(path, errors)
            except TreebankFormatError as error:
                if not collect:
                    raise
                yield path, error.line, None, error
                continue
            for tree, line in parse_trees(text, path, errors, breaks):
                while errors:
                    error = errors.pop(0)
                    yield path, error.line, None, error
                index += 1
                if stop is not None and index >= stop:
                    break
                if index >= start:
                    yield path, line, tree, None
            for error in errors or []:
                yield path, error.line, None, error

    def _is_first_shard(self) -> bool:
        """Whether this process logs: every shard sees every tree, so only one of them logs."""
        if util.is_distributed() and dist.get_rank() != 0:
            return False
        return self._worker_info is None or self._worker_info.id == 0

    def _dependency_file(self, tree_path: str) -> str:
        """The file of `dependencies_dir` with the name stem of the treebank file `tree_path`."""
        assert self._dependencies_dir is not None
        stem = os.path.splitext(os.path.basename(tree_path))[0]
        for suffix in DEPENDENCY_SUFFIXES:
            candidate = os.path.join(self._dependencies_dir, stem + suffix)
            if os.path.isfile(candidate):
                return candidate
        raise DependencyPathError(
            f"No dependency file for the treebank file {tree_path!r}: looked for {stem}.* with "
            f"the suffixes {', '.join(DEPENDENCY_SUFFIXES)} in {self._dependencies_dir!r}. Give "
            "each treebank file a dependency file with the same name stem, or use "
            "dependencies_path."
        )

    def _dependencies(
        self, tree: Tree, given: Optional[DependencySentence]
    ) -> Tuple[List[int], List[str]]:
        """Heads and labels of a tree: those given (labels made if missing) or from head rules."""
        if given is None:
            heads = self._head_finder.heads(tree)
            return heads, dependency_labels(tree, heads)
        labels = given.labels or dependency_labels(tree, given.heads)
        return list(given.heads), list(labels)

    def _trees(self, paths: List[str]) -> Iterator[Tuple[Tree, tuple, Optional[tuple]]]:
        """
        Normalised, checked trees of `paths` with their spans (words, tags, spans) and, with
        `joint_spans`, their dependencies (heads, labels), before sharding: every shard reads all
        trees (it is cheap) so that errors and skips are handled and counted the same way
        everywhere.
        """
        stats = self.stats
        log = self._is_first_shard()
        aligner: Optional[DependencyAligner] = None
        if self._dependencies_path is not None:
            aligner = DependencyAligner(self._dependencies_path)
        aligned_path: Optional[str] = None
        for path, line, tree, error in self._items(paths):
            if self._dependencies_dir is not None and path != aligned_path:
                if aligner is not None:
                    aligner.finish()
                aligner, aligned_path = DependencyAligner(self._dependency_file(path)), path
            dependencies = None
            if tree is not None:
                stats["trees"] += 1
                try:
                    normalised = normalise_tree(tree)
                    if normalised is None:
                        raise TreebankFormatError(
                            path,
                            line,
                            "the tree has no words once -NONE- empty elements are removed",
                            "remove the tree or give it words",
                        )
                    # Also checks that the labels can be joined into unary-chain labels.
                    spans = tree_to_spans(normalised)
                    length = len(spans[0])
                    if self._joint:
                        given = aligner.next(spans[0], path, line) if aligner else None
                        heads, labels = self._dependencies(normalised, given)
                        joint = tree_and_heads_to_joint_spans(normalised, heads)
                        spans = (joint.words, joint.tags, joint.spans)
                        dependencies = (heads, labels)
                except DependencyFormatError:
                    raise  # misaligned dependency files: never skipped
                except TreebankFormatError as tree_error:
                    error = tree_error
                except (ValueError, JointSpanError) as value_error:
                    error = TreebankFormatError(path, line, str(value_error))
            elif aligner is not None and self._dependencies_path is not None:
                aligner.skip()  # the malformed tree's dependency sentence
            if error is not None:
                if self._on_error == "raise":
                    raise error
                stats["skipped_errors"] += 1
                if log:
                    logger.warning("Skipped (on_error='skip'): %s", error)
                continue
            if self._max_length is not None and length > self._max_length:
                stats["skipped_too_long"] += 1
                if log:
                    logger.debug(
                        "Skipped the %d-word sentence at %s, line %s (max_length=%d)",
                        length,
                        path,
                        line,
                        self._max_length,
                    )
                continue
            yield normalised, spans, dependencies
        if aligner is not None:
            aligner.finish()

    def _read(self, file_path) -> Iterable[Instance]:  # type: ignore[no-untyped-def]
        try:
            path, self._selection = split_tree_selection(file_path)
        except ValueError as error:
            raise TreebankPathError(str(error)) from None
        paths = self._resolve_paths(path)
        log = self._is_first_shard()
        if log:
            logger.info("Reading trees from %d file(s) at %s", len(paths), file_path)
        stats = {"files": len(paths), "trees": 0, "instances": 0}
        stats.update({"skipped_errors": 0, "skipped_too_long": 0})
        self.stats = stats
        for tree, (words, tags, spans), deps in self.shard_iterable(self._trees(paths)):
            stats["instances"] += 1
            yield self._make_instance(words, tags, spans, tree, deps)
        if not log:
            return
        logger.info(
            "Read %d tree(s) from %d file(s) at %s; this process made %d instance(s)",
            stats["trees"],
            stats["files"],
            file_path,
            stats["instances"],
        )
        if stats["skipped_too_long"]:
            logger.info(
                "Skipped %d sentence(s) longer than max_length=%d",
                stats["skipped_too_long"],
                self._max_length,
            )
        if stats["skipped_errors"]:
            logger.warning(
                "Skipped %d malformed tree(s) or file(s) in %s (on_error='skip'); each is logged "
                "above with its file and line",
                stats["skipped_errors"],
                file_path,
            )

    def text_to_instance(  # type: ignore[override]
        self,
        tokens: Optional[List[str]],
        tags: Optional[List[str]] = None,
        tree: Optional[Tree] = None,
        heads: Optional[List[int]] = None,
        dependency_labels: Optional[List[str]] = None,
    ) -> Instance:
        """
        Makes an instance from words, optional POS tags and an optional gold tree; no I/O.

        # Parameters

        tokens : `Optional[List[str]]`
            The words. May be `None` when `tree` is given; otherwise they must equal its words.
        tags : `Optional[List[str]]`, optional (default = `None`)
            One POS tag per word. When `None` and `tree` is given, the tree's tags are used.
        tree : `Optional[Tree]`, optional (default = `None`)
            A gold tree normalised by `normalise_tree` (rooted in `TOP`).
        heads : `Optional[List[int]]`, optional (default = `None`)
            With `joint_spans` and a tree: the gold heads (1-based, 0 = root); by default from
            the head rules.
        dependency_labels : `Optional[List[str]]`, optional (default = `None`)
            With `heads`: their labels; by default made by `head_rules.dependency_labels`.

        # Returns

        An `Instance` with the fields

        tokens : `TextField`
            The words.
        pos_tags : `GoldLabelField`, namespace "pos_tags"
            Only when tags are known. Here and in the label fields below, a tag or label the
            vocabulary lacks is indexed `fields.UNSEEN_LABEL` (-1): it scores as an error.
        gold_spans : `ListField[SpanField]`
            Only with a tree: its labelled spans, with INCLUSIVE ends (`SpanField(start,
            end_exclusive - 1)`), sorted by (start, -end). A tree without spans (one word
            straight under `TOP`) gets a single `(-1, -1)` span, exactly like batch padding,
            so mask spans with `gold_spans[..., 0] >= 0`.
        gold_span_labels : `GoldLabelField`, namespace "span_labels"
            Only with a tree: the joint labels (`S+VP`) of `gold_spans`; the `(-1, -1)` span
            gets index 0, like padding. With `joint_spans`, the spans and labels are the joint
            spans (with `<H>` and `TOP`).
        gold_heads : `SequenceLabelField` of ints (not indexed)
            Only with `joint_spans` and a tree: the head of each word, 0 for the root.
        gold_dependency_labels : `GoldLabelField`, namespace "dependency_labels"
            Only with `joint_spans` and a tree.
        metadata : `MetadataField`
            `{"words": tokens, "pos_tags": tags or None, "gold_tree": tree}`, plus
            `gold_heads` and `gold_dependency_labels` with `joint_spans` and a tree.
        """
        spans: List[Tuple[int, int, str]] = []
        if tree is not None:
            if isinstance(tree, str) or tree.label() != "TOP":
                raise ValueError(
                    "text_to_instance needs a tree normalised by normalise_tree (rooted in TOP)"
                )
            tree_words, tree_tags, spans = tree_to_spans(tree)
            if tokens is None:
                tokens = tree_words
            elif list(tokens) != tree_words:
                raise ValueError(f"the tokens {tokens} are not the words of the tree {tree_words}")
            if tags is None:
                tags = tree_tags
        dependencies = None
        if tree is not None and self._joint:
            if heads is None:
                heads, labels = self._dependencies(tree, None)
            else:
                given = DependencySentence(list(tree_words), list(tree_tags), list(heads))
                given.labels = list(dependency_labels) if dependency_labels else None
                heads, labels = self._dependencies(tree, given)
            spans = tree_and_heads_to_joint_spans(tree, heads).spans
            dependencies = (heads, labels)
        if tokens is None:
            raise ValueError("text_to_instance needs tokens or a tree")
        tokens = list(tokens)
        if not tokens:
            raise ValueError("cannot make an instance of an empty sentence")
        if tags is not None:
            tags = list(tags)
            if len(tags) != len(tokens):
                raise ValueError(f"{len(tokens)} tokens but {len(tags)} POS tags: {tags}")
        return self._make_instance(tokens, tags, spans, tree, dependencies)

    def _make_instance(
        self,
        tokens: List[str],
        tags: Optional[List[str]],
        spans: List[Tuple[int, int, str]],
        tree: Optional[Tree],
        dependencies: Optional[Tuple[List[int], List[str]]] = None,
    ) -> Instance:
        # Tags ride on the tokens too, for a POS input embedding (an indexer with
        # `feature_name: "tag_"`, as in Kitaev & Klein's and the LAL paper's inputs).
        words = [Token(w, tag_=t) for w, t in zip(tokens, tags)] if tags else map(Token, tokens)
        text_field = TextField(list(words), self._token_indexers)
        fields: Dict[str, Field] = {"tokens": text_field}
        if tags is not None:
            fields["pos_tags"] = GoldLabelField(tags, text_field, label_namespace="pos_tags")
        if tree is not None:
            if spans:
                span_fields = [SpanField(start, end - 1, text_field) for start, end, _ in spans]
                labels: Union[List[str], List[int]] = [label for _, _, label in spans]
            else:
                span_fields = [SpanField(-1, -1, text_field)]
                labels = [0]
            gold_spans = ListField(span_fields)
            fields["gold_spans"] = gold_spans
            fields["gold_span_labels"] = GoldLabelField(
                labels, gold_spans, label_namespace="span_labels"
            )
        metadata = {"words": tokens, "pos_tags": tags or None, "gold_tree": tree}
        if dependencies is not None:
            heads, labels = dependencies
            fields["gold_heads"] = SequenceLabelField(heads, text_field, "head_index_tags")
            fields["gold_dependency_labels"] = GoldLabelField(
                labels, text_field, label_namespace="dependency_labels"
            )
            metadata.update(gold_heads=heads, gold_dependency_labels=labels)
        fields["metadata"] = MetadataField(metadata)
        return Instance(fields)

    def apply_token_indexers(self, instance: Instance) -> None:
        instance.fields["tokens"]._token_indexers = self._token_indexers  # type: ignore
