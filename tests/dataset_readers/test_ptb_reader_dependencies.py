"""The `lal_ptb` reader with dependencies: joint spans, heads and labels for `lal_joint_parser`."""
import shutil

import pytest
from allennlp.common import Params
from allennlp.common.checks import ConfigurationError
from allennlp.data import DatasetReader

from lal_allennlp.syntax.dependencies import (
    DependencyFormatError,
    DependencyMismatchError,
    DependencyPathError,
    read_dependencies,
)
from lal_allennlp.syntax.head_rules import HeadFinder, dependency_labels
from lal_allennlp.syntax.joint_spans import joint_spans_to_tree_and_heads
from lal_allennlp.dataset_readers.ptb_reader import PennTreebankReader
from lal_allennlp.syntax.trees import TreebankFormatError
from tests.conftest import FIXTURES_ROOT, SHARED_DATA

PTB = FIXTURES_ROOT / "ptb"
DEPS = PTB / "deps"


def _read(reader, path):
    return list(reader.read(str(path)))


def _sentences(path):
    return [sentence for sentence, _ in read_dependencies(str(path))]


def test_dependencies_dir_pairs_files_by_stem_in_all_three_formats():
    reader = PennTreebankReader(dependencies_dir=str(DEPS))
    instances = _read(reader, PTB / "train") + _read(reader, PTB / "dev")
    files = ["wsj_9001.conllu", "wsj_9002.conll", "wsj_9003.dp"]
    expected = [sentence for name in files for sentence in _sentences(DEPS / name)]
    assert len(instances) == len(expected) == 75
    for instance, sentence in zip(instances, expected):
        meta = instance["metadata"].metadata
        assert meta["words"] == sentence.words
        assert meta["gold_heads"] == sentence.heads
        assert instance["gold_heads"].labels == sentence.heads
        if sentence.labels is not None:  # CoNLL: the file's labels
            assert meta["gold_dependency_labels"] == sentence.labels
        else:  # Malt-TAB has none: made from the tree
            assert meta["gold_dependency_labels"] == dependency_labels(
                meta["gold_tree"], sentence.heads
            )
    # The hand edits of the fixtures (see fixtures/ptb/deps/README.md) are read, not the rules.
    first = instances[0]["metadata"].metadata
    assert first["words"][0] == "Maria" and first["gold_dependency_labels"][0] == "compound"
    dev = _read(reader, PTB / "dev")[0]["metadata"].metadata
    rules = HeadFinder().heads(dev["gold_tree"])
    assert dev["words"][9:12] == ["the", "second", "quarter"]
    assert dev["gold_heads"][9:12] == [11, 9, 11] != rules[9:12]


def test_joint_spans_round_trip_to_the_tree_and_heads():
    reader = PennTreebankReader(dependencies_dir=str(DEPS))
    for instance in _read(reader, PTB / "dev"):
        meta = instance["metadata"].metadata
        spans = [
            (span.span_start, span.span_end + 1, label)
            for span, label in zip(instance["gold_spans"], instance["gold_span_labels"].labels)
        ]
        tags = instance["pos_tags"].labels
        tree, heads = joint_spans_to_tree_and_heads(meta["words"], tags, spans, meta["gold_heads"])
        assert tree == meta["gold_tree"]
        assert heads == meta["gold_heads"]


def test_sub_head_and_root_spans_in_the_gold_spans():
    # "the" depends on "big", a non-head sibling of "dog": "the big" becomes a <H> span. When
    # no constituent covers the sentence (TOP has two children) the root span is labelled TOP.
    from nltk import Tree

    reader = PennTreebankReader(joint_spans=True)
    tree = Tree.fromstring("(TOP (S (NP (DT the) (JJ big) (NN dog)) (VP (VBD barked))))")
    instance = reader.text_to_instance(None, None, tree, heads=[2, 3, 4, 0])
    spans = [(s.span_start, s.span_end + 1) for s in instance["gold_spans"]]
    labelled = dict(zip(spans, instance["gold_span_labels"].labels))
    assert labelled[(0, 2)] == "<H>" and labelled[(0, 4)] == "S"
    tree = Tree.fromstring("(TOP (NP (NN Yes)) (. .))")
    instance = reader.text_to_instance(None, None, tree)
    spans = [(s.span_start, s.span_end + 1) for s in instance["gold_spans"]]
    assert dict(zip(spans, instance["gold_span_labels"].labels))[(0, 2)] == "TOP"


def test_head_rules_without_dependency_files():
    reader = PennTreebankReader(joint_spans=True)
    finder = HeadFinder()
    for instance in _read(reader, PTB / "train"):
        meta = instance["metadata"].metadata
        heads = finder.heads(meta["gold_tree"])
        assert meta["gold_heads"] == heads
        assert meta["gold_dependency_labels"] == dependency_labels(meta["gold_tree"], heads)


def test_dependencies_path_aligns_in_order(tmp_path):
    # One file with the sentences of both train files, in reading order.
    joined = tmp_path / "train.conllu"
    sentences = _sentences(DEPS / "wsj_9001.conllu") + _sentences(DEPS / "wsj_9002.conll")
    from lal_allennlp.syntax.dependencies import to_conllu

    joined.write_text("".join(to_conllu(s) for s in sentences))
    reader = PennTreebankReader(dependencies_path=str(joined))
    instances = _read(reader, PTB / "train")
    assert [i["metadata"]["gold_heads"] for i in instances] == [s.heads for s in sentences]
    # Too long sentences are skipped without losing the alignment.
    reader = PennTreebankReader(dependencies_path=str(joined), max_length=10)
    kept = _read(reader, PTB / "train")
    assert reader.stats["skipped_too_long"] > 0
    by_words = {tuple(s.words): s.heads for s in sentences}
    assert all(by_words[tuple(i["metadata"]["words"])] == i["metadata"]["gold_heads"] for i in kept)


def test_word_mismatch_names_file_sentence_and_token(tmp_path):
    deps = tmp_path / "deps"
    shutil.copytree(DEPS, deps)
    lines = (deps / "wsj_9003.dp").read_text().splitlines(keepends=True)
    lines[3] = lines[3].replace("its", "his")  # sentence 1, token 4
    (deps / "wsj_9003.dp").write_text("".join(lines))
    reader = PennTreebankReader(dependencies_dir=str(deps), on_error="skip")
    with pytest.raises(DependencyMismatchError) as info:  # never skipped: the files disagree
        _read(reader, PTB / "dev")
    message = str(info.value)
    assert "wsj_9003.dp" in message and "sentence 1" in message and "token 4" in message
    assert "'its'" in message and "'his'" in message


def test_missing_dependency_file_and_extra_sentences(tmp_path):
    deps = tmp_path / "deps"
    deps.mkdir()
    shutil.copy(DEPS / "wsj_9003.dp", deps / "wsj_9003.dp")
    with pytest.raises(DependencyPathError, match="wsj_9001"):
        _read(PennTreebankReader(dependencies_dir=str(deps)), PTB / "train")
    with (deps / "wsj_9003.dp").open("a") as extra:
        extra.write("Extra\tNN\t0\n\n")
    with pytest.raises(DependencyFormatError, match="more sentences than the treebank"):
        _read(PennTreebankReader(dependencies_dir=str(deps)), PTB / "dev")


def test_non_projective_heads_are_a_tree_error_that_can_be_skipped(tmp_path, caplog):
    deps = tmp_path / "deps"
    shutil.copytree(DEPS, deps)
    text = (deps / "wsj_9003.dp").read_text()
    # "The company said ...": attach "The" to "rose" (outside its NP): breaks the constituents.
    (deps / "wsj_9003.dp").write_text(text.replace("The\tDT\t2\n", "The\tDT\t6\n", 1))
    with pytest.raises(TreebankFormatError, match=r"wsj_9003.mrg, line \d+: the sentence .The company"):
        _read(PennTreebankReader(dependencies_dir=str(deps)), PTB / "dev")
    reader = PennTreebankReader(dependencies_dir=str(deps), on_error="skip")
    instances = _read(reader, PTB / "dev")
    assert reader.stats["skipped_errors"] == 1 and len(instances) == 14


def test_configuration_errors(tmp_path):
    with pytest.raises(ConfigurationError, match="not both"):
        PennTreebankReader(dependencies_dir=str(DEPS), dependencies_path=str(DEPS))
    with pytest.raises(ConfigurationError, match="not a folder"):
        PennTreebankReader(dependencies_dir=str(tmp_path / "nowhere"))
    with pytest.raises(ConfigurationError, match="known: collins"):
        PennTreebankReader(joint_spans=True, head_rules="klingon")
    reader = DatasetReader.from_params(
        Params({"type": "lal_ptb", "dependencies_dir": str(DEPS)})
    )
    assert len(_read(reader, PTB / "dev")) == 15


def test_text_to_instance_with_given_heads():
    reader = PennTreebankReader(joint_spans=True)
    tree = _read(reader, PTB / "dev")[0]["metadata"]["gold_tree"]
    given = _sentences(DEPS / "wsj_9003.dp")[0]
    instance = reader.text_to_instance(None, None, tree, heads=given.heads)
    assert instance["metadata"]["gold_heads"] == given.heads
    assert instance["metadata"]["gold_dependency_labels"] == dependency_labels(tree, given.heads)
    plain = reader.text_to_instance(given.words)
    assert "gold_heads" not in plain.fields
