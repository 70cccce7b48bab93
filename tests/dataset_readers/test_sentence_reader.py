import logging

import pytest
from allennlp.common import Params
from allennlp.common.checks import ConfigurationError
from allennlp.data import DatasetReader
from allennlp.data.dataset_readers.dataset_reader import WorkerInfo
from allennlp.data.token_indexers import SingleIdTokenIndexer

from lal_allennlp.dataset_readers import TreebankFormatError, TreebankPathError
from lal_allennlp.dataset_readers.sentence_reader import SentenceReader, normalise_word
from lal_allennlp.syntax.dependencies import DependencyFormatError
from lal_allennlp.syntax.trees import normalise_tree, parse_trees
from tests.conftest import SHARED_DATA

PTB_SAMPLE = SHARED_DATA / "ptb-sample" / "trees"
EWT = SHARED_DATA / "ud" / "en_ewt"
needs_ptb = pytest.mark.skipif(not PTB_SAMPLE.is_dir(), reason="../shared/data/ptb-sample absent")
needs_ewt = pytest.mark.skipif(not EWT.is_dir(), reason="../shared/data/ud/en_ewt absent")

# wsj_0001's first sentence without "," and ".", as read and as normalised.
FIRST_WSJ_WORDS = (
    "Pierre Vinken 61 years old will join the board as a nonexecutive director Nov. 29"
)
FIRST_WSJ_TOKENS = (
    "pierre vinken NN years old will join the board as a nonexecutive director nov. NN"
)


def read(path, **kwargs):
    reader = SentenceReader(**kwargs)
    return reader, list(reader.read(str(path)))


def tokens(instance):
    return [token.text for token in instance["tokens"]]


def write(path, data: bytes):
    path.write_bytes(data)
    return path


def test_registered_and_built_from_params(tmp_path):
    text = write(tmp_path / "text.txt", b"a b c\nd e\nf\n")
    reader = DatasetReader.from_params(
        Params({"type": "lal_sentences", "max_length": 2, "max_instances": 1})
    )
    assert isinstance(reader, SentenceReader)
    instances = list(reader.read(str(text)))
    assert [tokens(i) for i in instances] == [["d", "e"]]
    indexers = instances[0]["tokens"].token_indexers
    assert list(indexers) == ["tokens"] and isinstance(indexers["tokens"], SingleIdTokenIndexer)
    assert not indexers["tokens"].lowercase_tokens


def test_normalise_word_exactly():
    assert normalise_word("1.5") == "N.N"
    assert normalise_word("1960s") == "NNNNs"
    assert normalise_word("Nov.") == "nov."
    assert normalise_word("NASDAQ") == "nasdaq"
    assert normalise_word("\u0663\u0664") == "NN"  # Arabic-Indic digits are digits too
    assert normalise_word("Abc1", lowercase=False) == "AbcN"
    assert normalise_word("Abc1", digits_to_n=False) == "abc1"
    assert normalise_word("Abc1", lowercase=False, digits_to_n=False) == "Abc1"


def test_reader_normalisation_switches(tmp_path):
    # `$` goes with the punctuation (the Penn Treebank's `$` tag is removed too); `%` stays.
    text = write(tmp_path / "text.txt", b"The 2 Cats , 3.5 $ %\n")
    _, [default] = read(text)
    assert tokens(default) == ["the", "N", "cats", "N.N", "%"]
    assert default["metadata"]["words"] == ["The", "2", "Cats", "3.5", "%"]
    assert default["metadata"]["gold_tree"] is None
    _, [as_is] = read(text, lowercase=False, digits_to_n=False, remove_punctuation=False)
    assert tokens(as_is) == ["The", "2", "Cats", ",", "3.5", "$", "%"]


@needs_ptb
def test_first_ptb_sentence_exactly():
    reader, instances = read(PTB_SAMPLE / "wsj_0001.mrg")
    assert len(instances) == 2 and reader.stats["sentences"] == 2
    first = instances[0]
    assert tokens(first) == FIRST_WSJ_TOKENS.split()
    assert first["metadata"]["words"] == FIRST_WSJ_WORDS.split()
    gold = first["metadata"]["gold_tree"]
    # The gold tree is normalised (TOP, no function tags) and keeps the punctuation.
    assert gold.label() == "TOP" and gold[0].label() == "S" and gold[0][0].label() == "NP"
    assert gold.leaves()[:3] == ["Pierre", "Vinken", ","] and gold.leaves()[-1] == "."


@needs_ptb
def test_ptb_traces_are_not_words():
    _, instances = read(PTB_SAMPLE / "wsj_0002.mrg")
    assert instances[0]["metadata"]["words"] == (
        "Rudolph Agnew 55 years old and former chairman of Consolidated Gold Fields PLC was "
        "named a nonexecutive director of this British industrial conglomerate"
    ).split()
    assert "*-1" not in instances[0]["metadata"]["gold_tree"].leaves()


@needs_ptb
def test_wsj_range_and_punctuation_kept_when_asked():
    reader, instances = read(PTB_SAMPLE / "wsj_0001-0003", remove_punctuation=False)
    assert reader.stats["files"] == 3
    assert instances[0]["metadata"]["words"] == instances[0]["metadata"]["gold_tree"].leaves()
    assert tokens(instances[0])[:3] == ["pierre", "vinken", ","]


@needs_ewt
def test_ewt_multi_word_tokens_and_empty_nodes():
    _, instances = read(EWT / "en_ewt-ud-train.conllu", max_instances=80)
    by_words = {" ".join(i["metadata"]["words"]): i for i in instances}
    # `19-20 don't` is a multi-word token line; its words `do` and `n't` follow it.
    dont = [i for w, i in by_words.items() if w.startswith("Although the announcement")][0]
    assert tokens(dont)[15:20] == ["cells", "i", "do", "n't", "find"]
    assert "don't" not in dont["metadata"]["words"]
    # `8.1 reported` is an empty node: not a word.
    over = by_words["Over 300 Iraqis are reported dead and 500 wounded in Fallujah alone"]
    assert tokens(over) == [
        "over", "NNN", "iraqis", "are", "reported", "dead", "and", "NNN", "wounded", "in",
        "fallujah", "alone",
    ]
    # UPOS PUNCT words (the hyphen of Al-Zaman, ":" and ",") are removed.
    assert tokens(instances[0])[:6] == ["al", "zaman", "american", "forces", "killed", "shaikh"]


@needs_ptb
@needs_ewt
def test_comma_joined_paths_are_read_in_order():
    path = f"{PTB_SAMPLE / 'wsj_0001.mrg'},{EWT / 'en_ewt-ud-dev.conllu'}"
    reader, instances = read(path)
    assert reader.stats["files"] == 2
    assert reader.stats["sentences"] == 2 + 2001
    assert len(instances) == 2 + 2001 - reader.stats["skipped_empty"]
    assert tokens(instances[0]) == FIRST_WSJ_TOKENS.split()
    assert instances[1]["metadata"]["gold_tree"] is not None
    assert instances[2]["metadata"]["words"] == "From the AP comes this story".split()
    assert instances[2]["metadata"]["gold_tree"] is None


def test_plain_text_blank_punctuation_and_undecodable_lines(tmp_path, caplog):
    data = b"The cat sat on 2 mats .\n\n... !\ncaf\xe9 au lait\nPrices rose 1.5 points .\n"
    text = write(tmp_path / "news.txt", data)
    with pytest.raises(TreebankFormatError, match=r"news\.txt, line 4: not valid UTF-8"):
        read(text)
    with caplog.at_level(logging.INFO):
        reader, instances = read(text, skip_bad_sentences=True)
    assert [tokens(i) for i in instances] == [
        ["the", "cat", "sat", "on", "N", "mats"],
        ["prices", "rose", "N.N", "points"],
    ]
    assert reader.stats == {
        "files": 1,
        "sentences": 4,
        "instances": 2,
        "skipped_errors": 1,
        "skipped_empty": 2,
        "skipped_too_long": 0,
    }
    messages = [record.getMessage() for record in caplog.records]
    assert any(m.startswith("Skipped (skip_bad_sentences)") and "line 4" in m for m in messages)
    assert f"Skipped 2 empty sentence(s) in {text} (no words once punctuation is removed)" in (
        messages
    )


def test_bad_trees_and_files(tmp_path, caplog):
    trees = write(tmp_path / "trees.mrg", b"(S (NN a) (VB b))\n(S (NN c) ())\n(S (NN d) (VB e))\n")
    with pytest.raises(TreebankFormatError, match=r"trees\.mrg, line 2: the bracket \(\)"):
        read(trees)
    latin1 = write(tmp_path / "latin1.mrg", b"(S (NN a))\n(S (NN caf\xe9))\n")
    with pytest.raises(TreebankFormatError, match=r"latin1\.mrg, line 2: not valid UTF-8"):
        read(latin1)
    empty = write(tmp_path / "empty.txt", b"\n  \n")
    with pytest.raises(TreebankFormatError, match=r"empty\.txt: the file is empty"):
        read(empty)
    with caplog.at_level(logging.WARNING):
        reader, instances = read(f"{trees},{latin1},{empty}", skip_bad_sentences=True)
    assert [i["metadata"]["words"] for i in instances] == [["a", "b"], ["d", "e"]]
    assert reader.stats["skipped_errors"] == 3
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert sum(m.startswith("Skipped (skip_bad_sentences)") for m in warnings) == 3


def test_bad_conllu_sentences(tmp_path):
    rows = [
        "# sent_id = 1",
        "1\tHello\thello\tINTJ\tUH\t_\t0\troot\t_\t_",
        "2\t!\t!\tPUNCT\t.\t_\t1\tpunct\t_\t_",
        "",
        "1\tBroken\tbroken\tADJ\tJJ\t_\t0\troot\t_",
        "",
        "1\tGone\tgo\tVERB\tVBN\t_\t0\troot\t_\t_",
        "3\tmissing\tmiss\tVERB\tVBG\t_\t1\txcomp\t_\t_",
        "",
        "1-2\tdon't\t_\t_\t_\t_\t_\t_\t_\t_",
        "1\tdo\tdo\tAUX\tVBP\t_\t3\taux\t_\t_",
        "2\tn't\tnot\tPART\tRB\t_\t3\tadvmod\t_\t_",
        "3\tgo\tgo\tVERB\tVB\t_\t0\troot\t_\t_",
        "3.1\tgo\tgo\tVERB\tVB\t_\t_\t_\t_\t_",
        "4\t1,000\t1,000\tNUM\tCD\t_\t3\tobj\t_\t_",
    ]
    conllu = write(tmp_path / "bad.conllu", ("\n".join(rows) + "\n").encode())
    with pytest.raises(DependencyFormatError, match=r"bad\.conllu, line 5: 9 tab-separated"):
        read(conllu)
    reader, instances = read(conllu, skip_bad_sentences=True)
    assert [tokens(i) for i in instances] == [["hello"], ["do", "n't", "go", "N,NNN"]]
    assert reader.stats["skipped_errors"] == 2
    # Only the third sentence, on the lines it had: its IDs skip 2.
    part = write(tmp_path / "part.conllu", ("\n" * 6 + "\n".join(rows[6:9])).encode())
    with pytest.raises(DependencyFormatError, match=r"part\.conllu, line 8: token ID '3' where 2"):
        read(part)


@needs_ptb
def test_max_length_skips_count_and_log_per_file(caplog):
    _, everything = read(PTB_SAMPLE / "wsj_0001-0010")
    lengths = [len(i["metadata"]["words"]) for i in everything]
    with caplog.at_level(logging.INFO):
        reader, kept = read(PTB_SAMPLE / "wsj_0001-0010", max_length=10)
    assert [len(i["metadata"]["words"]) for i in kept] == [n for n in lengths if n <= 10]
    too_long = sum(n > 10 for n in lengths)
    assert reader.stats["skipped_too_long"] == too_long > 0
    logged = [r.getMessage() for r in caplog.records if "longer than 10 words" in r.getMessage()]
    assert sum(int(message.split()[1]) for message in logged) == too_long
    assert f"Skipped 2 sentence(s) longer than 10 words in {PTB_SAMPLE / 'wsj_0001.mrg'}" in (
        logged[0]
    )
    with pytest.raises(ConfigurationError, match="max_length"):
        SentenceReader(max_length=0)


def test_text_to_instance_on_raw_words():
    reader = SentenceReader()
    instance = reader.text_to_instance(["Hello", ",", "World", "!", "It's", "3", "p.m.", "..."])
    assert tokens(instance) == ["hello", "world", "it's", "N", "p.m."]
    assert instance["metadata"].metadata == {
        "words": ["Hello", "World", "It's", "3", "p.m."],
        "gold_tree": None,
    }
    for empty in ([",", "!", "--"], []):
        with pytest.raises(ValueError, match="empty sentence"):
            reader.text_to_instance(empty)
    # Only punctuation: the message says why there is nothing to parse, and shows at most ten
    # of the words (a predictor reports it for one sentence of many).
    with pytest.raises(ValueError, match="reads no punctuation, so there is nothing to parse"):
        reader.text_to_instance(["!"])
    with pytest.raises(ValueError) as error_info:
        reader.text_to_instance(["."] * 5000)
    assert f"{['.'] * 10 + ['...']} has no words" in str(error_info.value)
    assert tokens(SentenceReader(remove_punctuation=False).text_to_instance([",", "!"])) == [
        ",",
        "!",
    ]


def test_text_to_instance_with_gold_tree_uses_its_tags():
    [(tree, _)] = parse_trees("(S (NP (NNP Ann)) (VP (VBZ sings) (: --) (NN #1)) (. .))")
    gold = normalise_tree(tree)
    instance = SentenceReader().text_to_instance(gold.leaves(), gold)
    # "#1" is a noun here: the tags, not the characters, decide what is punctuation.
    assert tokens(instance) == ["ann", "sings", "#N"]
    assert instance["metadata"]["gold_tree"] is gold
    with pytest.raises(ValueError, match="not the words of the gold tree"):
        SentenceReader().text_to_instance(["Ann", "sings"], gold)


def test_missing_paths(tmp_path):
    text = write(tmp_path / "a.txt", b"a b\n")
    for path in (str(tmp_path / "nowhere.txt"), f"{text},{tmp_path / 'nowhere'}"):
        with pytest.raises(TreebankPathError, match="nowhere"):
            read(path)
    with pytest.raises(FileNotFoundError, match="empty part"):
        read(f"{text},,{text}")


def test_sharding_over_workers_splits_instances_and_keeps_counts(tmp_path):
    text = write(tmp_path / "text.txt", b"".join(b"w%d x\n" % n for n in range(7)) + b"!\n")
    reader = SentenceReader()
    shards = []
    for worker in range(2):
        reader._set_worker_info(WorkerInfo(num_workers=2, id=worker))
        shards.append([" ".join(i["metadata"]["words"]) for i in reader.read(str(text))])
        assert reader.stats["sentences"] == 8 and reader.stats["skipped_empty"] == 1
    reader._set_worker_info(None)
    assert sorted(shards[0] + shards[1]) == [f"w{n} x" for n in range(7)]
    assert not set(shards[0]) & set(shards[1])
