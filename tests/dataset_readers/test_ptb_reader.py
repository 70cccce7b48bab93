import logging
from pathlib import Path

import pytest
import torch
from allennlp.common import Params
from allennlp.common.checks import ConfigurationError
from allennlp.data import Batch, DatasetReader, Vocabulary
from allennlp.data.dataset_readers.dataset_reader import WorkerInfo
from allennlp.data.token_indexers import TokenCharactersIndexer
from nltk import Tree

from lal_allennlp.dataset_readers import PennTreebankReader, TreebankFormatError, TreebankPathError
from lal_allennlp.syntax.trees import normalise_tree, parse_trees, spans_to_tree, tree_to_spans

REPO_ROOT = Path(__file__).resolve().parents[2]
FIXTURES = REPO_ROOT / "fixtures" / "ptb"
BAD = FIXTURES / "bad"
PTB_SAMPLE = REPO_ROOT.parent / "shared" / "data" / "ptb-sample" / "trees"


def read(path, **kwargs):
    reader = PennTreebankReader(**kwargs)
    return reader, list(reader.read(str(path)))


def spans_of(instance):
    return [(span.span_start, span.span_end) for span in instance["gold_spans"]]


def test_registered_and_built_from_params():
    reader = DatasetReader.from_params(
        Params({"type": "lal_ptb", "max_length": 12, "on_error": "skip", "max_instances": 7})
    )
    assert isinstance(reader, PennTreebankReader)
    assert len(list(reader.read(str(FIXTURES / "train")))) == 7


def test_first_fixture_instance_exactly():
    _, instances = read(FIXTURES / "train" / "wsj_9001.mrg")
    assert len(instances) == 30
    first = instances[0]
    words = "Maria Lopez , 52 years old , was named chief executive of Harbor Foods Inc. ."
    assert [token.text for token in first["tokens"]] == words.split()
    assert first["pos_tags"].labels[:6] == ["NNP", "NNP", ",", "CD", "NNS", "JJ"]
    # SpanField ends are inclusive. NP-SBJ-1 -> NP; the S whose subject was *-1 -> S+NP.
    assert list(zip(spans_of(first), first["gold_span_labels"].labels)) == [
        ((0, 15), "S"),
        ((0, 6), "NP"),
        ((0, 1), "NP"),
        ((3, 5), "ADJP"),
        ((3, 4), "NP"),
        ((7, 14), "VP"),
        ((8, 14), "VP"),
        ((9, 14), "S+NP"),
        ((9, 10), "NP"),
        ((11, 14), "PP"),
        ((12, 14), "NP"),
    ]
    metadata = first["metadata"].metadata
    assert metadata["words"] == words.split()
    assert metadata["pos_tags"] == first["pos_tags"].labels
    gold = metadata["gold_tree"]
    assert gold.label() == "TOP"
    assert spans_to_tree(*tree_to_spans(gold)) == gold


def test_one_word_and_unary_fixture_sentences():
    _, instances = read(FIXTURES / "train" / "wsj_9001.mrg")
    by_text = {" ".join(i["metadata"]["words"]): i for i in instances}
    correction = by_text["Correction"]
    assert spans_of(correction) == [(0, 0)]
    assert correction["gold_span_labels"].labels == ["FRAG+NP"]
    comment = by_text["Mr. Chen declined to comment ."]
    labels = dict(zip(spans_of(comment), comment["gold_span_labels"].labels))
    assert labels[(3, 4)] == "S+VP" and labels[(4, 4)] == "VP"
    back = by_text["The board also approved a plan to buy back as many as two million shares ."]
    assert "ADVP" in back["gold_span_labels"].labels  # from ADVP|PRT
    parenthesis = [i for t, i in by_text.items() if "-LRB-" in t][0]
    assert "PRN" in parenthesis["gold_span_labels"].labels
    assert "-LRB-" in parenthesis["pos_tags"].labels


@pytest.mark.parametrize(
    "path, count",
    [
        ("train/wsj_9001.mrg", 30),
        ("train", 60),
        ("dev", 15),
        ("train/*.mrg", 60),
        ("*/wsj_900[23].mrg", 45),
        ("train/wsj_9001-9002", 60),
        ("train/wsj_9002-9002", 30),
        ("train/wsj_9001-wsj_9001", 30),
        ("wsj_9002-9003", 45),  # a range searches sub-folders too
        ("one_per_line.trees", 5),
    ],
)
def test_path_forms(path, count):
    reader, instances = read(FIXTURES / path)
    assert len(instances) == count
    assert reader.stats["trees"] == count


def test_relative_paths_and_order():
    # The tests run from the repository root (tests/conftest.py).
    _, by_directory = read("fixtures/ptb/train")
    _, by_range = read("fixtures/ptb/train/wsj_9001-9002")
    _, first = read("fixtures/ptb/train/wsj_9001.mrg")
    words = [i["metadata"]["words"] for i in by_directory]
    assert words == [i["metadata"]["words"] for i in by_range]
    assert words[:30] == [i["metadata"]["words"] for i in first]


@pytest.mark.parametrize(
    "path, fragment",
    [
        ("no/such/file.mrg", "Tried it as a file; as a directory"),
        ("train/nothing*.mrg", "a glob pattern (it matched no files)"),
        ("train/wsj_0001-0159", "no .mrg/.tree/.trees/.txt file in"),
        ("train/wsj_9002-9001", "9002 is greater than 9001"),
        ("missing_dir/wsj_0001-0002", "does not exist"),
    ],
)
def test_missing_paths(path, fragment):
    with pytest.raises(TreebankPathError) as info:
        read(FIXTURES / path)
    assert isinstance(info.value, ConfigurationError)
    assert isinstance(info.value, FileNotFoundError)
    assert str(FIXTURES / path) in str(info.value)
    assert fragment in str(info.value)


def test_empty_directory(tmp_path):
    (tmp_path / "notes.md").write_text("not a treebank")
    with pytest.raises(TreebankPathError, match="holds no"):
        read(tmp_path)


@pytest.mark.parametrize(
    "name, line, fragment",
    [
        ("unbalanced.mrg", 9, "the tree starting on line 6 has one ')' too many"),
        ("unclosed.mrg", 5, "line 9 opens a bracket in its first column"),
        ("latin1.mrg", 3, "not valid UTF-8 at byte offset 64 (byte 0xe8)"),
        ("only_none.mrg", 5, "no words once -NONE- empty elements are removed"),
        ("empty.mrg", None, "the file is empty"),
    ],
)
def test_errors_name_file_and_line(name, line, fragment):
    with pytest.raises(TreebankFormatError) as info:
        read(BAD / name)
    error = info.value
    assert error.source == str(BAD / name)
    assert error.line == line
    where = f"{BAD / name}, line {line}: " if line else f"{BAD / name}: "
    assert str(error).startswith(where)
    assert fragment in str(error)


def test_on_error_skip_counts_and_logs_each_problem(caplog):
    with caplog.at_level(logging.WARNING, logger="lal_allennlp.dataset_readers.ptb_reader"):
        reader, instances = read(BAD, on_error="skip")
    # Good trees: unbalanced.mrg lines 2 and 10, unclosed.mrg lines 1 and 9 (the tree of line
    # 5 never closes; the next tree is recognised by its `( (S` at the first column),
    # only_none.mrg line 1.
    assert [i["metadata"]["words"] for i in instances] == [
        ["He", "left", "."],  # only_none.mrg
        ["He", "left", "."],  # unbalanced.mrg
        ["She", "stayed", "."],
        ["He", "left", "."],  # unclosed.mrg
        ["She", "stayed", "."],
    ]
    assert reader.stats == {
        "files": 5,
        "trees": 6,
        "instances": 5,
        "skipped_errors": 5,
        "skipped_too_long": 0,
    }
    skipped = [r.getMessage() for r in caplog.records if r.getMessage().startswith("Skipped (")]
    assert len(skipped) == 5
    for name, line in [
        ("empty.mrg", None),
        ("latin1.mrg", 3),
        ("only_none.mrg", 5),
        ("unbalanced.mrg", 9),
        ("unclosed.mrg", 5),
    ]:
        where = f"{BAD / name}, line {line}:" if line else f"{BAD / name}:"
        assert any(where in message for message in skipped), (name, skipped)
    assert any("Skipped 5 malformed tree(s) or file(s)" in r.getMessage() for r in caplog.records)


def test_unknown_on_error_value():
    with pytest.raises(ConfigurationError, match='"raise" or "skip"'):
        PennTreebankReader(on_error="ignore")


def test_max_length_skips_and_counts(caplog):
    with caplog.at_level(logging.INFO, logger="lal_allennlp.dataset_readers.ptb_reader"):
        reader, instances = read(FIXTURES / "train", max_length=10)
    _, everything = read(FIXTURES / "train")
    lengths = [len(i["tokens"]) for i in everything]
    assert len(instances) == sum(length <= 10 for length in lengths)
    assert 0 < len(instances) < 60
    assert all(len(i["tokens"]) <= 10 for i in instances)
    assert reader.stats["skipped_too_long"] == 60 - len(instances)
    assert any(
        f"Skipped {60 - len(instances)} sentence(s) longer than max_length=10" in r.getMessage()
        for r in caplog.records
    )


def test_text_to_instance_without_tree_or_tags():
    reader = PennTreebankReader()
    instance = reader.text_to_instance(["He", "left", "."])
    assert set(instance.fields) == {"tokens", "metadata"}
    assert instance["metadata"].metadata == {
        "words": ["He", "left", "."],
        "pos_tags": None,
        "gold_tree": None,
    }
    tagged = reader.text_to_instance(["He", "left", "."], ["PRP", "VBD", "."])
    assert set(tagged.fields) == {"tokens", "pos_tags", "metadata"}
    assert tagged["pos_tags"].labels == ["PRP", "VBD", "."]


def test_text_to_instance_with_tree_only():
    tree = Tree.fromstring("(TOP (S (NP (PRP He)) (VP (VBD left)) (. .)))")
    instance = PennTreebankReader().text_to_instance(None, tree=tree)
    assert [t.text for t in instance["tokens"]] == ["He", "left", "."]
    assert instance["pos_tags"].labels == ["PRP", "VBD", "."]
    assert spans_of(instance) == [(0, 2), (0, 0), (1, 1)]
    assert instance["gold_span_labels"].labels == ["S", "NP", "VP"]
    assert instance["metadata"]["gold_tree"] is tree


@pytest.mark.parametrize(
    "tokens, tags, tree, message",
    [
        (["She", "left", "."], None, "(TOP (S (NP (PRP He)) (VP (VBD left)) (. .)))", "not the"),
        (None, None, "( (S (NP (PRP He)) (VP (VBD left))))", "rooted in TOP"),
        (None, None, None, "needs tokens or a tree"),
        ([], None, None, "empty sentence"),
        (["a", "b"], ["X"], None, "2 tokens but 1 POS tags"),
    ],
)
def test_text_to_instance_errors(tokens, tags, tree, message):
    tree = Tree.fromstring(tree) if tree else None
    with pytest.raises(ValueError, match=message):
        PennTreebankReader().text_to_instance(tokens, tags, tree)


def test_batching_with_a_sentence_without_spans():
    reader = PennTreebankReader(
        token_indexers={"tokens": TokenCharactersIndexer(min_padding_length=3)}
    )
    trees = [
        "(TOP (NN Thanks))",
        "(TOP (S (NP (PRP He)) (VP (VBD left)) (. .)))",
        "(TOP (FRAG (NP (NN Correction))))",
    ]
    instances = [reader.text_to_instance(None, None, Tree.fromstring(t)) for t in trees]
    assert spans_of(instances[0]) == [(-1, -1)]
    vocab = Vocabulary.from_instances(instances)
    # The dummy span of the one-word sentence adds no label.
    assert set(vocab.get_token_to_index_vocabulary("span_labels")) == {"S", "NP", "VP", "FRAG+NP"}
    batch = Batch(instances)
    batch.index_instances(vocab)
    tensors = batch.as_tensor_dict()
    spans = tensors["gold_spans"]
    assert spans.shape == (3, 3, 2)
    assert spans[0].tolist() == [[-1, -1], [-1, -1], [-1, -1]]
    assert spans[1].tolist() == [[0, 2], [0, 0], [1, 1]]
    assert spans[2].tolist() == [[0, 0], [-1, -1], [-1, -1]]
    labels = tensors["gold_span_labels"]
    assert labels.shape == (3, 3)
    index = vocab.get_token_index
    assert labels[1].tolist() == [
        index("S", "span_labels"),
        index("NP", "span_labels"),
        index("VP", "span_labels"),
    ]
    assert labels[2, 0].item() == index("FRAG+NP", "span_labels")
    mask = spans[..., 0] >= 0
    assert mask.sum().item() == 4
    assert tensors["pos_tags"].shape == (3, 3)
    assert tensors["tokens"]["tokens"]["token_characters"].shape[:2] == (3, 3)
    assert [m["words"] for m in tensors["metadata"]] == [
        ["Thanks"],
        ["He", "left", "."],
        ["Correction"],
    ]


def test_batching_fixture_instances():
    _, instances = read(FIXTURES / "train")
    vocab = Vocabulary.from_instances(instances)
    assert "S+VP" in vocab.get_token_to_index_vocabulary("span_labels")
    assert "-NONE-" not in vocab.get_token_to_index_vocabulary("pos_tags")
    batch = Batch(instances[:8])
    batch.index_instances(vocab)
    tensors = batch.as_tensor_dict()
    lengths = [len(i["tokens"]) for i in instances[:8]]
    assert tensors["tokens"]["tokens"]["tokens"].shape == (8, max(lengths))
    number_of_spans = [len(i["gold_spans"]) for i in instances[:8]]
    assert tensors["gold_spans"].shape == (8, max(number_of_spans), 2)
    assert (tensors["gold_spans"][..., 0] >= 0).sum(dim=1).tolist() == number_of_spans
    assert torch.all(tensors["gold_spans"][..., 1] < torch.tensor(lengths)[:, None])


def test_sharding_over_workers_splits_instances_and_keeps_counts():
    reader = PennTreebankReader()
    shards = []
    for worker in range(2):
        reader._set_worker_info(WorkerInfo(num_workers=2, id=worker))
        shards.append([i["metadata"]["words"] for i in reader.read(str(FIXTURES / "train"))])
        assert reader.stats["trees"] == 60
        assert reader.stats["instances"] == 30
    reader._set_worker_info(None)
    everything = [i["metadata"]["words"] for i in reader.read(str(FIXTURES / "train"))]
    assert shards[0] == everything[0::2] and shards[1] == everything[1::2]


def test_multi_process_data_loader():
    from allennlp.data.data_loaders import MultiProcessDataLoader

    reader = PennTreebankReader()
    loader = MultiProcessDataLoader(
        reader, str(FIXTURES / "train"), batch_size=16, num_workers=2, max_instances_in_memory=32
    )
    loader.index_with(Vocabulary.from_instances(read(FIXTURES / "train")[1]))
    sentences = [tuple(m["words"]) for batch in loader for m in batch["metadata"]]
    expected = [tuple(i["metadata"]["words"]) for i in read(FIXTURES / "train")[1]]
    assert sorted(sentences) == sorted(expected)


@pytest.mark.skipif(not PTB_SAMPLE.is_dir(), reason="../shared/data/ptb-sample is not here")
def test_real_ptb_sample():
    reader = PennTreebankReader(on_error="raise")
    train = list(reader.read(str(PTB_SAMPLE / "wsj_0001-0159")))
    assert len(train) == 3396 and reader.stats["files"] == 159
    dev = list(reader.read(str(PTB_SAMPLE / "wsj_0160-0179")))
    assert len(dev) == 273 and reader.stats["files"] == 20
    everything = list(reader.read(str(PTB_SAMPLE)))
    assert len(everything) == 3669
    assert [i["metadata"]["words"] for i in everything] == [
        i["metadata"]["words"] for i in train + dev
    ]

    count = 0
    for path in sorted(PTB_SAMPLE.glob("wsj_*.mrg")):
        for tree, line in parse_trees(path.read_text(encoding="utf-8"), str(path)):
            gold = everything[count]["metadata"]
            normalised = normalise_tree(tree)
            assert normalised == gold["gold_tree"], (path, line)
            words, tags, spans = tree_to_spans(normalised)
            assert words == [w for w, p in tree.pos() if p != "-NONE-"], (path, line)
            assert tags == [p for _, p in tree.pos() if p != "-NONE-"], (path, line)
            assert spans_to_tree(words, tags, spans) == normalised, (path, line)
            count += 1
    assert count == 3669
