import logging
from pathlib import Path

import pytest
import torch
from allennlp.common import Params
from allennlp.data import Batch, DatasetReader, Vocabulary
from allennlp.data.dataset_readers.dataset_reader import WorkerInfo

from lal_allennlp.dataset_readers import DependencyTreebankReader
from lal_allennlp.syntax.arc_standard import NonProjectiveError, follow, parse_transition_name
from lal_allennlp.syntax.dependencies import DependencyFormatError, DependencyPathError

REPO_ROOT = Path(__file__).resolve().parents[2]
SHARED_DATA = REPO_ROOT.parent / "shared" / "data"
EWT_TRAIN = SHARED_DATA / "ud" / "en_ewt" / "en_ewt-ud-train.conllu"
PTB_DEPS = SHARED_DATA / "ptb-sample" / "deps"
LOGGER = "lal_allennlp.dataset_readers.dependency_reader"

# Line 3: sentence 1 (a multi-word token line and an empty node among its words); line 12:
# sentence 2.
CONLLU = (
    "# sent_id = 1\n"
    "# text = They don't sleep.\n"
    "1\tThey\tthey\tPRON\tPRP\t_\t4\tnsubj\t_\t_\n"
    "2-3\tdon't\t_\t_\t_\t_\t_\t_\t_\t_\n"
    "2\tdo\tdo\tAUX\tVBP\t_\t4\taux\t_\t_\n"
    "3\tn't\tnot\tPART\tRB\t_\t4\tadvmod\t_\t_\n"
    "4\tsleep\tsleep\tVERB\tVB\t_\t0\troot\t_\t_\n"
    "4.1\tslept\tsleep\tVERB\tVBD\t_\t_\t_\t4:conj\t_\n"
    "5\t.\t.\tPUNCT\t.\t_\t4\tpunct\t_\t_\n"
    "\n"
    "# sent_id = 2\n"
    "1\tShe\tshe\tPRON\tPRP\t_\t2\tnsubj\t_\t_\n"
    "2\treads\tread\tVERB\tVBZ\t_\t0\troot\t_\t_\n"
    "3\told\told\tADJ\tJJ\t_\t4\tamod\t_\t_\n"
    "4\tbooks\tbook\tNOUN\tNNS\t_\t2\tobj\t_\t_\n"
    "\n"
)
# The static oracle's transitions, derived by hand: left arcs as soon as the top heads the word
# under it, right arcs once the top has all its dependents.
THEY_DONT_SLEEP = [
    "SHIFT",  # They
    "SHIFT",  # do
    "SHIFT",  # n't
    "SHIFT",  # sleep
    "LEFT-ARC:advmod",  # sleep -> n't
    "LEFT-ARC:aux",  # sleep -> do
    "LEFT-ARC:nsubj",  # sleep -> They
    "SHIFT",  # .
    "RIGHT-ARC:punct",  # sleep -> .
    "RIGHT-ARC:root",  # ROOT -> sleep
]
SHE_READS_OLD_BOOKS = [
    "SHIFT",  # She
    "SHIFT",  # reads
    "LEFT-ARC:nsubj",  # reads -> She
    "SHIFT",  # old
    "SHIFT",  # books
    "LEFT-ARC:amod",  # books -> old
    "RIGHT-ARC:obj",  # reads -> books
    "RIGHT-ARC:root",  # ROOT -> reads
]
# Malt-TAB without labels.
MALT = "John\tNNP\t2\nsaw\tVBD\t0\nMary\tNNP\t2\n.\t.\t2\n"
JOHN_SAW_MARY = [
    "SHIFT",
    "SHIFT",
    "LEFT-ARC:_",  # saw -> John
    "SHIFT",
    "RIGHT-ARC:_",  # saw -> Mary
    "SHIFT",
    "RIGHT-ARC:_",  # saw -> .
    "RIGHT-ARC:_",  # ROOT -> saw
]
# Sentences 2 and 4 are not projective: the arcs 3 -> 1 and 4 -> 2 cross.
NON_PROJECTIVE = (
    "a\tX\t0\n\n"
    "b\tX\t3\nc\tX\t4\nd\tX\t0\ne\tX\t3\n\n"
    "f\tX\t0\n\n"
    "b\tX\t3\nc\tX\t4\nd\tX\t0\ne\tX\t3\n"
)


def write(path, text):
    path.write_text(text, encoding="utf-8")
    return path


def read(path, **kwargs):
    reader = DependencyTreebankReader(**kwargs)
    return reader, list(reader.read(str(path)))


def words(instance):
    return [token.text for token in instance["words"].tokens]


def transitions(instance):
    return [field.label for field in instance["transitions"].field_list]


def test_registered_and_built_from_params(tmp_path):
    path = write(tmp_path / "a.conllu", CONLLU)
    params = Params({"type": "lal_dependencies", "coarse_tags": True, "transitions": False})
    reader = DatasetReader.from_params(params)
    assert isinstance(reader, DependencyTreebankReader)
    instances = list(reader.read(str(path)))
    assert [i["pos_tags"].labels for i in instances] == [
        ["PRON", "AUX", "PART", "VERB", "PUNCT"],
        ["PRON", "VERB", "ADJ", "NOUN"],
    ]
    assert all("transitions" not in i.fields for i in instances)


def test_conllu_fields_exactly(tmp_path):
    path = write(tmp_path / "a.conllu", CONLLU)
    reader, [first, second] = read(path)
    assert set(first.fields) == {
        "words",
        "pos_tags",
        "head_tags",
        "head_indices",
        "transitions",
        "metadata",
    }
    assert words(first) == ["They", "do", "n't", "sleep", "."]
    assert [token.tag_ for token in first["words"].tokens] == ["PRP", "VBP", "RB", "VB", "."]
    assert first["pos_tags"].labels == ["PRP", "VBP", "RB", "VB", "."]
    assert first["pos_tags"]._label_namespace == "pos"
    assert first["head_tags"].labels == ["nsubj", "aux", "advmod", "root", "punct"]
    assert first["head_tags"]._label_namespace == "head_tags"
    assert first["head_indices"].labels == [4, 4, 4, 0, 4]
    assert first["head_indices"]._label_namespace == "head_index_tags"
    assert transitions(first) == THEY_DONT_SLEEP
    assert {f._label_namespace for f in first["transitions"].field_list} == {"transitions"}
    assert first["metadata"].metadata == {
        "words": ["They", "do", "n't", "sleep", "."],
        "pos": ["PRP", "VBP", "RB", "VB", "."],
        "heads": [4, 4, 4, 0, 4],
        "labels": ["nsubj", "aux", "advmod", "root", "punct"],
        "source": str(path),
        "number": 1,
    }
    assert words(second) == ["She", "reads", "old", "books"]
    assert second["head_indices"].labels == [2, 0, 4, 2]
    assert transitions(second) == SHE_READS_OLD_BOOKS
    assert second["metadata"]["number"] == 2
    assert (reader.skipped_non_projective, reader.skipped_bad) == (0, 0)


def test_malt_tab_without_labels(tmp_path):
    path = write(tmp_path / "wsj_0001.dp", MALT)
    _, [instance] = read(path)
    assert words(instance) == ["John", "saw", "Mary", "."]
    assert instance["pos_tags"].labels == ["NNP", "VBD", "NNP", "."]
    assert instance["head_tags"].labels == ["_", "_", "_", "_"]
    assert instance["head_indices"].labels == [2, 0, 2, 2]
    assert transitions(instance) == JOHN_SAW_MARY
    assert instance["metadata"]["labels"] is None
    assert (instance["metadata"]["source"], instance["metadata"]["number"]) == (str(path), 1)


def test_comma_joined_paths_directories_and_ranges(tmp_path):
    write(tmp_path / "wsj_0001.dp", MALT)
    write(tmp_path / "wsj_0002.dp", "Yes\tUH\t0\n")
    conllu = write(tmp_path / "b.conllu", CONLLU)
    _, instances = read(f"{conllu}, {tmp_path / 'wsj_0001-0002'}")
    assert [words(i)[0] for i in instances] == ["They", "She", "John", "Yes"]
    _, instances = read(tmp_path)
    assert [Path(i["metadata"]["source"]).name for i in instances] == [
        "b.conllu",
        "b.conllu",
        "wsj_0001.dp",
        "wsj_0002.dp",
    ]
    with pytest.raises(DependencyPathError, match="has an empty part"):
        read(f"{conllu},,{conllu}")
    with pytest.raises(DependencyPathError):
        read(tmp_path / "missing.conllu")


def test_a_sentence_selection_counts_sentences_before_skips_and_across_files(tmp_path):
    write(tmp_path / "wsj_0001.dp", MALT)
    write(tmp_path / "wsj_0002.dp", "Yes\tUH\t0\n")
    conllu = write(tmp_path / "b.conllu", CONLLU)
    everything = f"{conllu},{tmp_path / 'wsj_0001-0002'}"
    assert [words(i)[0] for i in read(everything)[1]] == ["They", "She", "John", "Yes"]
    assert [words(i)[0] for i in read(everything + "[1:3]")[1]] == ["She", "John"]
    assert [words(i)[0] for i in read(everything + "[:1]")[1]] == ["They"]
    assert [words(i)[0] for i in read(everything + "[3:]")[1]] == ["Yes"]
    # Sentences are counted as they are read: a skipped non-projective one takes its place.
    crossing = write(tmp_path / "crossing.dp", NON_PROJECTIVE)
    reader, instances = read(f"{crossing}[1:3]")
    assert [words(i) for i in instances] == [["f"]] and reader.skipped_non_projective == 1
    assert reader.stats["sentences"] == 2


def test_non_projective_trees_are_skipped_only_with_transitions(tmp_path, caplog):
    path = write(tmp_path / "crossing.dp", NON_PROJECTIVE)
    with caplog.at_level(logging.INFO, logger=LOGGER):
        reader, instances = read(path)
    assert [words(i) for i in instances] == [["a"], ["f"]]
    assert [i["metadata"]["number"] for i in instances] == [1, 3]
    assert (reader.skipped_non_projective, reader.skipped_bad) == (2, 0)
    assert (
        f"Skipped 2 non-projective sentence(s) in {path} (no arc-standard derivation builds "
        "them; set transitions to false to keep them): sentence(s) 2, 4"
    ) in caplog.messages
    # The counts start again at each read.
    assert len(list(reader.read(str(path)))) == 2 and reader.skipped_non_projective == 2

    reader, instances = read(path, transitions=False)
    assert [words(i) for i in instances] == [["a"], ["b", "c", "d", "e"], ["f"], list("bcde")]
    assert instances[1]["head_indices"].labels == [3, 4, 0, 3]
    assert all("transitions" not in i.fields for i in instances)
    assert reader.skipped_non_projective == 0


def test_bad_sentences_raise_or_are_counted(tmp_path, caplog):
    # Sentence 2 (lines 6-8): a cycle; sentence 3 (lines 10-11): two roots.
    text = MALT + "\nx\tX\t2\ny\tX\t1\nz\tX\t0\n\nu\tX\t0\nv\tX\t0\n\n" + MALT
    path = write(tmp_path / "bad.dp", text)
    with pytest.raises(DependencyFormatError) as info:
        read(path)
    assert str(info.value) == (
        f"{path}, line 6: sentence 2: the heads form a cycle through words 1 -> 2 -> 1 (every "
        "word must reach the root (head 0) by following heads; or set skip_bad_sentences to "
        "pass over such sentences)"
    )
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        reader, instances = read(path, skip_bad_sentences=True)
    assert [i["metadata"]["number"] for i in instances] == [1, 4]
    assert (reader.skipped_bad, reader.skipped_non_projective) == (2, 0)
    # (caplog.records holds the whole test's records; earlier tests may leave INFO enabled.)
    [warning] = [
        record.getMessage() for record in caplog.records
        if record.name == LOGGER and record.levelno >= logging.WARNING
    ]
    assert warning.startswith(f"Skipped 2 malformed sentence(s) or file(s) in {path} ")
    assert f"{path}, line 6: sentence 2: the heads form a cycle" in warning
    assert f"{path}, line 11: sentence 3: words 1 and 2 both have head 0" in warning

    # A whole file that cannot be read.
    empty = write(tmp_path / "empty.dp", "\n")
    with pytest.raises(DependencyFormatError, match="empty.dp: the file holds no sentences"):
        read(empty)
    reader, instances = read(f"{empty},{path}", skip_bad_sentences=True)
    assert (len(instances), reader.skipped_bad) == (2, 3)


def test_text_to_instance_does_no_io():
    reader = DependencyTreebankReader()
    instance = reader.text_to_instance(["She", "reads"], ["PRP", "VBZ"])
    assert set(instance.fields) == {"words", "pos_tags", "metadata"}
    assert instance["metadata"].metadata == {
        "words": ["She", "reads"],
        "pos": ["PRP", "VBZ"],
        "heads": None,
        "labels": None,
    }
    assert set(reader.text_to_instance(["Hi"]).fields) == {"words", "metadata"}
    gold = reader.text_to_instance(
        "She reads old books".split(), heads=[2, 0, 4, 2], labels=["nsubj", "root", "amod", "obj"]
    )
    assert set(gold.fields) == {"words", "head_tags", "head_indices", "transitions", "metadata"}
    assert transitions(gold) == SHE_READS_OLD_BOOKS
    unlabelled = reader.text_to_instance(["John", "saw", "Mary", "."], heads=[2, 0, 2, 2])
    assert transitions(unlabelled) == JOHN_SAW_MARY
    assert unlabelled["head_tags"].labels == ["_"] * 4
    with pytest.raises(NonProjectiveError):
        reader.text_to_instance(list("bcde"), heads=[3, 4, 0, 3])
    without = DependencyTreebankReader(transitions=False)
    kept = without.text_to_instance(list("bcde"), heads=[3, 4, 0, 3])
    assert kept["head_indices"].labels == [3, 4, 0, 3]
    with pytest.raises(ValueError, match="2 words but 1 POS tags"):
        reader.text_to_instance(["a", "b"], ["X"])
    with pytest.raises(ValueError, match="each must be a word of the sentence"):
        reader.text_to_instance(["a", "b"], heads=[0, 3])
    with pytest.raises(ValueError, match="empty sentence"):
        reader.text_to_instance([])


def test_instances_index_and_batch(tmp_path):
    write(tmp_path / "a.conllu", CONLLU)
    write(tmp_path / "b.dp", MALT)
    _, instances = read(tmp_path)
    vocab = Vocabulary.from_instances(instances)
    for namespace in ("pos", "head_tags", "transitions"):
        assert vocab.get_vocab_size(namespace) > 0
    assert vocab.get_token_index("RIGHT-ARC:root", "transitions") > 1  # after padding, unknown
    assert "nsubj" in vocab.get_token_to_index_vocabulary("head_tags")
    assert vocab.get_vocab_size("head_index_tags") == 0  # integer labels are not counted
    batch = Batch(instances)
    batch.index_instances(vocab)
    tensors = batch.as_tensor_dict()
    assert tensors["words"]["tokens"]["tokens"].shape == (3, 5)
    assert tensors["head_indices"].tolist() == [[4, 4, 4, 0, 4], [2, 0, 4, 2, 0], [2, 0, 2, 2, 0]]
    assert tensors["transitions"].shape == (3, 10)
    # Padding transitions are -1 (empty `LabelField`s of a `ListField`).
    assert tensors["transitions"][1:, 8:].tolist() == [[-1, -1], [-1, -1]]
    names = [
        [vocab.get_token_from_index(int(index), "transitions") for index in row if index >= 0]
        for row in tensors["transitions"]
    ]
    assert names == [THEY_DONT_SLEEP, SHE_READS_OLD_BOOKS, JOHN_SAW_MARY]
    assert [vocab.get_token_from_index(int(i), "head_tags") for i in tensors["head_tags"][2]] == [
        "_",
        "_",
        "_",
        "_",
        vocab.get_token_from_index(0, "head_tags"),  # padding
    ]
    assert tensors["pos_tags"].shape == (3, 5)


def test_biaffine_parser_takes_the_instances_unchanged(tmp_path):
    from allennlp.models import Model

    import allennlp_models.structured_prediction  # noqa: F401  (registers biaffine_parser)

    write(tmp_path / "a.conllu", CONLLU)
    _, instances = read(tmp_path, transitions=False)
    vocab = Vocabulary.from_instances(instances)
    model = Model.from_params(
        vocab=vocab,
        params=Params(
            {
                "type": "biaffine_parser",
                "text_field_embedder": {
                    "token_embedders": {"tokens": {"type": "embedding", "embedding_dim": 4}}
                },
                "pos_tag_embedding": {"embedding_dim": 2, "vocab_namespace": "pos"},
                "encoder": {"type": "lstm", "input_size": 6, "hidden_size": 4},
                "arc_representation_dim": 3,
                "tag_representation_dim": 3,
            }
        ),
    )
    batch = Batch(instances)
    batch.index_instances(vocab)
    torch.manual_seed(0)
    output = model(**batch.as_tensor_dict())
    assert output["loss"].requires_grad and torch.isfinite(output["loss"])
    assert output["heads"].shape == (2, 6)  # the root and five words


def test_sharding_over_workers_splits_instances_and_keeps_counts(tmp_path):
    path = write(tmp_path / "crossing.dp", NON_PROJECTIVE + "\n" + MALT + "\ng\tX\t0\n")
    reader = DependencyTreebankReader()
    shards = []
    for worker in range(2):
        reader._set_worker_info(WorkerInfo(num_workers=2, id=worker))
        shards.append([i["metadata"]["number"] for i in reader.read(str(path))])
        assert reader.skipped_non_projective == 2
    reader._set_worker_info(None)
    assert shards == [[1, 5], [3, 6]]


@pytest.fixture(scope="module")
def ewt_train():
    if not EWT_TRAIN.is_file():
        pytest.skip("../shared/data/ud/en_ewt is not here")
    reader = DependencyTreebankReader()
    return reader, list(reader.read(str(EWT_TRAIN)))


def test_real_ewt_projective_trees_and_their_transitions(ewt_train):
    reader, instances = ewt_train
    assert len(instances) == 12256
    assert (reader.skipped_non_projective, reader.skipped_bad) == (288, 0)
    for instance in instances:
        heads = instance["head_indices"].labels
        names = transitions(instance)
        assert len(names) == 2 * len(heads)
        built = follow(len(heads), [parse_transition_name(name) for name in names])
        assert built.heads[1:] == heads
        assert built.labels[1:] == instance["head_tags"].labels
    first = instances[0]
    assert words(first)[:3] == ["Al", "-", "Zaman"]
    assert first["pos_tags"].labels[:3] == ["NNP", "HYPH", "NNP"]
    assert first["metadata"]["number"] == 1


def test_real_ptb_sample_malt_tab():
    if not PTB_DEPS.is_dir():
        pytest.skip("../shared/data/ptb-sample is not here")
    reader, instances = read(PTB_DEPS / "wsj_0001-0159")
    assert len(instances) == 3396
    assert (reader.skipped_non_projective, reader.skipped_bad) == (0, 0)
    first = instances[0]
    assert words(first)[:3] == ["Pierre", "Vinken", ","]
    heads = [2, 8, 2, 5, 6, 2, 2, 0, 8, 11, 9, 9, 15, 15, 12, 9, 16, 8]
    assert first["head_indices"].labels == heads
    assert set(first["head_tags"].labels) == {"_"}
    # Vinken -> Pierre, then Vinken -> "," as soon as "," is shifted.
    assert transitions(first)[:5] == ["SHIFT", "SHIFT", "LEFT-ARC:_", "SHIFT", "RIGHT-ARC:_"]
