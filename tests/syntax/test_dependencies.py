import pickle
from pathlib import Path

import pytest

from lal_allennlp.syntax.dependencies import (
    DependencyAligner,
    DependencyFormatError,
    DependencyMismatchError,
    DependencyPathError,
    DependencySentence,
    check_words,
    read_dependencies,
    resolve_dependency_paths,
    to_conllu,
    to_conllx,
)
from lal_allennlp.syntax.trees import TreebankFormatError

REPO_ROOT = Path(__file__).resolve().parents[2]
SHARED_DATA = REPO_ROOT.parent / "shared" / "data"
PTB_DEPS = SHARED_DATA / "ptb-sample" / "deps"
UD = SHARED_DATA / "ud"

MALT = "Ms.\tNNP\t2\nHaag\tNNP\t3\nplays\tVBZ\t0\nElianti\tNNP\t3\n.\t.\t3\n\n#\t#\t2\n10\tCD\t0\n"
CONLLX = (
    "1\tMs.\t_\tNNP\tNNP\t_\t2\tnn\t_\t_\n"
    "2\tHaag\t_\tNNP\tNNP\t_\t3\tnsubj\t_\t_\n"
    "3\tplays\t_\tVBZ\t_\t_\t0\troot\t_\t_\n"
    "\n"
    "1\tYes\t_\tUH\tUH\t_\t0\troot\t_\t_\n"
)
CONLLU = (
    "# sent_id = 1\n"
    "# text = I don't know.\n"
    "1\tI\tI\tPRON\tPRP\t_\t4\tnsubj\t_\t_\n"
    "2-3\tdon't\t_\t_\t_\t_\t_\t_\t_\t_\n"
    "2\tdo\tdo\tAUX\tVBP\t_\t4\taux\t_\t_\n"
    "3\tn't\tnot\tPART\tRB\t_\t4\tadvmod\t_\t_\n"
    "4\tknow\tknow\tVERB\tVB\t_\t0\troot\t_\t_\n"
    "4.1\tknown\tknow\tVERB\t_\t_\t_\t_\t4:conj\t_\n"
    "5\t.\t.\tPUNCT\t.\t_\t4\tpunct\t_\t_\n"
    "\n"
    "# sent_id = 2\n"
    "1\tHi\thi\tINTJ\t_\t_\t0\troot\t_\t_\n"
    "\n"
)


def write(tmp_path, name, text, mode="w"):
    path = tmp_path / name
    if mode == "wb":
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def test_malt_tab_three_columns_exactly(tmp_path):
    path = write(tmp_path, "a.dp", MALT)
    items = list(read_dependencies(path))
    assert items == [
        (
            DependencySentence(
                ["Ms.", "Haag", "plays", "Elianti", "."],
                ["NNP", "NNP", "VBZ", "NNP", "."],
                [2, 3, 0, 3, 3],
                None,
            ),
            1,
        ),
        # A word "#" is a word in Malt-TAB, not a comment.
        (DependencySentence(["#", "10"], ["#", "CD"], [2, 0], None), 7),
    ]
    first, second = items[0][0], items[1][0]
    assert (first.source, first.line, first.number) == (str(path), 1, 1)
    assert (second.source, second.line, second.number) == (str(path), 7, 2)


def test_malt_tab_four_columns_has_labels(tmp_path):
    path = write(tmp_path, "a.dp", "He\tPRP\t2\tSBJ\nleft\tVBD\t0\tROOT\n")
    [(sentence, line)] = read_dependencies(path)
    assert sentence == DependencySentence(["He", "left"], ["PRP", "VBD"], [2, 0], ["SBJ", "ROOT"])
    assert line == 1


def test_conllx_exactly(tmp_path):
    path = write(tmp_path, "a.conll", CONLLX)
    items = list(read_dependencies(path))
    assert items == [
        (
            DependencySentence(
                ["Ms.", "Haag", "plays"],
                ["NNP", "NNP", "VBZ"],  # POSTAG; CPOSTAG where POSTAG is "_"
                [2, 3, 0],
                ["nn", "nsubj", "root"],
            ),
            1,
        ),
        (DependencySentence(["Yes"], ["UH"], [0], ["root"]), 5),
    ]


def test_conllu_skips_comments_multiword_tokens_and_empty_nodes(tmp_path):
    path = write(tmp_path, "a.conllu", CONLLU)
    items = list(read_dependencies(path))
    assert items == [
        (
            DependencySentence(
                ["I", "do", "n't", "know", "."],
                ["PRP", "VBP", "RB", "VB", "."],  # XPOS
                [4, 4, 4, 0, 4],
                ["nsubj", "aux", "advmod", "root", "punct"],
            ),
            3,
        ),
        (DependencySentence(["Hi"], ["INTJ"], [0], ["root"]), 12),  # UPOS where XPOS is "_"
    ]
    assert [sentence.number for sentence, _ in items] == [1, 2]


def test_writers_exactly_and_read_back(tmp_path):
    sentence = DependencySentence(["He", "left", "."], ["PRP", "VBD", "."], [2, 0, 2], None)
    assert to_conllx(sentence) == (
        "1\tHe\t_\tPRP\tPRP\t_\t2\t_\t_\t_\n"
        "2\tleft\t_\tVBD\tVBD\t_\t0\t_\t_\t_\n"
        "3\t.\t_\t.\t.\t_\t2\t_\t_\t_\n"
        "\n"
    )
    labelled = DependencySentence(["He", "left"], ["PRP", "VBD"], [2, 0], ["nsubj", "root"])
    assert to_conllu(labelled) == (
        "1\tHe\t_\t_\tPRP\t_\t2\tnsubj\t_\t_\n" "2\tleft\t_\t_\tVBD\t_\t0\troot\t_\t_\n" "\n"
    )
    for name, render in (("a.conllx", to_conllx), ("a.conllu", to_conllu)):
        path = write(tmp_path, name, render(sentence) + render(labelled))
        assert [item[0] for item in read_dependencies(path)] == [sentence, labelled]


@pytest.mark.parametrize(
    "name, text, line, fragment",
    [
        ("cols.dp", "He\tPRP\t2\nleft\tVBD\n", 2, "2 columns in a Malt-TAB file"),
        ("cols.conll", CONLLX.replace("nsubj\t_\t_", "nsubj"), 2, "8 columns in a CoNLL file"),
        ("range.dp", "He\tPRP\t3\nleft\tVBD\t0\n", 1, "the head 3 of word 1"),
        ("self.dp", "He\tPRP\t1\nleft\tVBD\t0\n", 1, "word 1 is its own head"),
        ("cycle.dp", "a\tX\t2\nb\tX\t1\nc\tX\t0\n", 1, "cycle through words 1 -> 2 -> 1"),
        ("head.dp", "He\tPRP\ttwo\nleft\tVBD\t0\n", 1, "the head 'two' is not a whole number"),
        ("ids.conll", CONLLX.replace("2\tHaag", "3\tHaag"), 2, "token ID 3 where 2"),
        ("format.dp", "a b c d e f\n", 1, "cannot tell the format"),
    ],
)
def test_format_errors_name_file_and_line(tmp_path, name, text, line, fragment):
    path = write(tmp_path, name, text)
    with pytest.raises(DependencyFormatError) as info:
        list(read_dependencies(path))
    error = info.value
    assert isinstance(error, TreebankFormatError)  # a reader's on_error handling covers it
    assert (error.source, error.line) == (str(path), line)
    assert fragment in str(error)
    assert str(error).startswith(f"{path}, line {line}: ")
    assert pickle.loads(pickle.dumps(error)).args == error.args


def test_empty_and_non_utf8_files(tmp_path):
    with pytest.raises(DependencyFormatError, match="holds no sentences"):
        list(read_dependencies(write(tmp_path, "empty.dp", "\n\n")))
    with pytest.raises(DependencyFormatError, match=r"line 3: not valid UTF-8"):
        list(read_dependencies(write(tmp_path, "l1.dp", b"a\tX\t0\n\n\xe9\tX\t0\n", "wb")))


def test_paths_directory_range_glob_and_missing(tmp_path):
    for number in (1, 2, 3):
        write(tmp_path, f"wsj_000{number}.dp", f"w{number}\tNN\t0\n")
    write(tmp_path, "notes.md", "not read")
    names = lambda paths: [Path(p).name for p in paths]  # noqa: E731
    assert names(resolve_dependency_paths(tmp_path)) == [
        "wsj_0001.dp",
        "wsj_0002.dp",
        "wsj_0003.dp",
    ]
    assert names(resolve_dependency_paths(tmp_path / "wsj_0002-0003")) == [
        "wsj_0002.dp",
        "wsj_0003.dp",
    ]
    assert names(resolve_dependency_paths(tmp_path / "wsj_0001-wsj_0001")) == ["wsj_0001.dp"]
    assert names(resolve_dependency_paths(str(tmp_path / "*_000[13].dp"))) == [
        "wsj_0001.dp",
        "wsj_0003.dp",
    ]
    words = [sentence.words for sentence, _ in read_dependencies(tmp_path / "wsj_0002-0003")]
    assert words == [["w2"], ["w3"]]
    with pytest.raises(DependencyPathError, match="No dependency files found at"):
        resolve_dependency_paths(tmp_path / "wsj_0007-0009")
    with pytest.raises(FileNotFoundError):
        resolve_dependency_paths(tmp_path / "missing.dp")


def test_mismatched_words_name_file_sentence_and_first_differing_token(tmp_path):
    path = write(tmp_path, "a.dp", MALT)
    aligner = DependencyAligner(path)
    first = aligner.next(["Ms.", "Haag", "plays", "Elianti", "."], "a.mrg", 1)
    assert first.heads == [2, 3, 0, 3, 3]
    with pytest.raises(DependencyMismatchError) as info:
        aligner.next(["#", "11"], "a.mrg", 9)
    error = info.value
    assert (error.source, error.line, error.sentence_number, error.token) == (str(path), 7, 2, 2)
    assert pickle.loads(pickle.dumps(error)).token == 2
    assert str(error).startswith(
        f"{path}, line 7: dependency sentence 2 does not have the words of its tree (a.mrg, "
        "line 9): token 2 is '11' in the tree but '10' in the dependencies"
    )


def test_alignment_lengths_brackets_and_counts(tmp_path):
    sentence = DependencySentence(["(", "a", ")"], ["-LRB-", "X", "-RRB-"], [2, 0, 2])
    check_words(["-LRB-", "a", "-RRB-"], sentence)  # PTB bracket escapes match
    with pytest.raises(DependencyMismatchError, match="token 4 is 'b' in the tree but nothing"):
        check_words(["(", "a", ")", "b"], sentence)
    with pytest.raises(DependencyMismatchError, match="token 3 is nothing .the tree ends."):
        check_words(["(", "a"], sentence)

    path = write(tmp_path, "a.dp", MALT)
    aligner = DependencyAligner(path)
    aligner.skip()
    aligner.next(["#", "10"])
    with pytest.raises(DependencyFormatError, match="end after 2 sentence.s., but b.mrg, line 4"):
        aligner.next(["x"], "b.mrg", 4)
    aligner = DependencyAligner(path)
    aligner.skip()
    with pytest.raises(DependencyFormatError, match="line 7: the dependency files hold more"):
        aligner.finish()


@pytest.mark.skipif(not PTB_DEPS.is_dir(), reason="../shared/data/ptb-sample is not here")
def test_real_malt_tab_ptb_sample():
    sentences = [sentence for sentence, _ in read_dependencies(PTB_DEPS / "wsj_0001-0159")]
    assert len(sentences) == 3396
    assert sum(len(sentence.words) for sentence in sentences) == 81793
    assert sentences[0].words[:3] == ["Pierre", "Vinken", ","]
    assert sentences[0].heads == [2, 8, 2, 5, 6, 2, 2, 0, 8, 11, 9, 9, 15, 15, 12, 9, 16, 8]
    assert all(sentence.labels is None for sentence in sentences)
    assert len(list(read_dependencies(PTB_DEPS))) == 3669


@pytest.mark.skipif(not UD.is_dir(), reason="../shared/data/ud is not here")
def test_real_conllu_skips_multiword_tokens_and_empty_nodes():
    path = UD / "en_ewt" / "en_ewt-ud-dev.conllu"
    sentences = [sentence for sentence, _ in read_dependencies(path)]
    lines = path.read_text(encoding="utf-8").split("\n")
    token_lines = [line for line in lines if line and not line.startswith("#")]
    multiword = [line for line in token_lines if "-" in line.split("\t")[0]]
    empty = [line for line in token_lines if "." in line.split("\t")[0]]
    assert (len(multiword), len(empty)) == (359, 4)
    assert len(sentences) == 2001
    assert sum(len(s.words) for s in sentences) == len(token_lines) - 359 - 4 == 25147
    assert all(s.labels is not None and s.heads.count(0) == 1 for s in sentences)
    chinese = list(read_dependencies(UD / "zh_gsd" / "zh_gsd-ud-dev.conllu"))
    assert len(chinese) == 500


# Five Malt-TAB sentences: good, a cycle, a head out of range, two roots, good.
MIXED = (
    "a\tX\t2\nb\tX\t0\n"  # sentence 1, lines 1-2
    "\n"
    "c\tX\t2\nd\tX\t1\ne\tX\t0\n"  # sentence 2, lines 4-6: 1 -> 2 -> 1
    "\n"
    "f\tX\t0\ng\tX\t5\n"  # sentence 3, lines 8-9: head 5 of 2 words
    "\n"
    "h\tX\t0\ni\tX\t1\nj\tX\t0\n"  # sentence 4, lines 11-13: words 1 and 3 are roots
    "\n"
    "k\tX\t0\n"  # sentence 5, line 15
)
CYCLE = "sentence 2: the heads form a cycle through words 1 -> 2 -> 1"
OUT_OF_RANGE = "sentence 3: the head 5 of word 2 is not a word of the sentence"
TWO_ROOTS = "sentence 4: words 1 and 3 both have head 0; a tree has exactly one root word"


def test_errors_name_the_sentence_number_and_line(tmp_path):
    path = write(tmp_path, "mixed.dp", MIXED)
    with pytest.raises(DependencyFormatError) as info:
        list(read_dependencies(path))
    assert str(info.value).startswith(f"{path}, line 4: {CYCLE} (every word must reach")
    assert (info.value.source, info.value.line) == (str(path), 4)
    assert pickle.loads(pickle.dumps(info.value)).args == info.value.args

    # Without the cycle, the next bad sentence raises; two roots are allowed by default.
    fixed = write(tmp_path, "fixed.dp", MIXED.replace("d\tX\t1", "d\tX\t3"))
    with pytest.raises(DependencyFormatError) as info:
        list(read_dependencies(fixed))
    assert str(info.value).startswith(f"{fixed}, line 9: {OUT_OF_RANGE} (it has 2 words; ")
    good = write(tmp_path, "good.dp", MIXED.replace("d\tX\t1", "d\tX\t3").replace("\t5", "\t1"))
    assert [s.number for s, _ in read_dependencies(good)] == [1, 2, 3, 4, 5]
    with pytest.raises(DependencyFormatError) as info:
        list(read_dependencies(good, single_root=True))
    assert str(info.value) == (
        f"{good}, line 13: {TWO_ROOTS} (attach all but one of them to another word, or split "
        "the sentence with a blank line)"
    )


def test_on_error_skips_bad_sentences_and_goes_on(tmp_path):
    path = write(tmp_path, "mixed.dp", MIXED)
    errors = []
    items = list(read_dependencies(path, single_root=True, on_error=errors.append))
    assert items == [
        (DependencySentence(["a", "b"], ["X", "X"], [2, 0]), 1),
        (DependencySentence(["k"], ["X"], [0]), 15),
    ]
    assert [(s.number, s.line) for s, _ in items] == [(1, 1), (5, 15)]
    assert [(error.source, error.line) for error in errors] == [
        (str(path), 4),
        (str(path), 9),
        (str(path), 13),
    ]
    assert [error.problem.split(" (")[0] for error in errors] == [
        CYCLE,
        OUT_OF_RANGE,
        TWO_ROOTS,
    ]
    assert all(isinstance(error, DependencyFormatError) for error in errors)
    # Without single_root the two-root sentence is read.
    errors.clear()
    items = list(read_dependencies(path, on_error=errors.append))
    assert [s.number for s, _ in items] == [1, 4, 5]
    assert items[1][0].heads == [0, 1, 0]
    assert [error.line for error in errors] == [4, 9]


def test_on_error_column_ids_and_words_errors(tmp_path):
    text = (
        CONLLX.replace("nsubj\t_\t_", "nsubj")  # sentence 1: 8 columns on line 2
        + "\n1\tNo\t_\tUH\tUH\t_\t0\troot\t_\t_\n2\tway\t_\tNN\tNN\t_\tx\tdep\t_\t_\n"  # head x
        + "\n3\tSo\t_\tRB\tRB\t_\t0\troot\t_\t_\n"  # sentence 4: IDs start at 3
        + "\n2-3\tdon't\t_\t_\t_\t_\t_\t_\t_\t_\n"  # sentence 5: no words
        + "\n1\tOK\t_\tUH\tUH\t_\t0\troot\t_\t_\n"  # sentence 6: good
    )
    path = write(tmp_path, "a.conll", text)
    errors = []
    items = list(read_dependencies(path, on_error=errors.append))
    assert [(s.words, s.number, line) for s, line in items] == [
        (["Yes"], 2, 5),
        (["OK"], 6, 14),
    ]
    assert [str(error) for error in errors] == [
        f"{path}, line 2: sentence 1: 8 columns in a CoNLL file (each token line needs the 10 "
        "tab-separated CoNLL-X / CoNLL-U columns)",
        f"{path}, line 8: sentence 3: the head 'x' is not a whole number",
        f"{path}, line 10: sentence 4: token ID 3 where 1 was expected (IDs must count 1, 2, "
        "3, ... within each sentence; separate sentences by a blank line)",
        f"{path}, line 12: sentence 5: a sentence without words",
    ]


def test_single_root_without_any_root_and_with_three(tmp_path):
    path = write(tmp_path, "roots.dp", "a\tX\t2\nb\tX\t1\n\na\tX\t0\nb\tX\t0\nc\tX\t0\n")
    errors = []
    assert list(read_dependencies(path, single_root=True, on_error=errors.append)) == []
    assert [str(error) for error in errors] == [
        f"{path}, line 1: sentence 1: no word has head 0; a tree has exactly one root word "
        "(give the main word of the sentence the head 0)",
        f"{path}, line 5: sentence 2: words 1, 2 and 3 all have head 0; a tree has exactly one "
        "root word (attach all but one of them to another word, or split the sentence with a "
        "blank line)",
    ]


def test_on_error_skips_bad_files_and_sentences_and_reads_the_others(tmp_path):
    write(tmp_path, "a_empty.dp", "\n\n")
    write(tmp_path, "b_latin1.dp", b"a\tX\t0\n\n\xe9\tX\t0\n", "wb")
    write(tmp_path, "c_format.dp", "a b c d e f\n")
    write(tmp_path, "d_good.dp", "ok\tUH\t0\n")
    errors = []
    items = list(read_dependencies(tmp_path, on_error=errors.append))
    # An undecodable byte loses only its sentence: b_latin1.dp's first sentence is read.
    assert [(s.words, Path(s.source).name) for s, _ in items] == [
        (["a"], "b_latin1.dp"), (["ok"], "d_good.dp")
    ]
    assert [(Path(error.source).name, error.line) for error in errors] == [
        ("a_empty.dp", None),
        ("b_latin1.dp", 3),
        ("c_format.dp", 1),
    ]
    assert "holds no sentences" in str(errors[0])
    assert "not valid UTF-8" in str(errors[1])
    assert "cannot tell the format" in str(errors[2])

    def stop(error):
        raise RuntimeError(f"stopped at {error.line}")

    with pytest.raises(RuntimeError, match="stopped at None") as info:
        list(read_dependencies(tmp_path, on_error=stop))
    assert info.value.__context__ is None  # not chained to the error it was given


def test_coarse_and_fine_tags_of_conllu(tmp_path):
    path = write(tmp_path, "a.conllu", CONLLU)
    fine = [s.tags for s, _ in read_dependencies(path)]
    coarse = [s.tags for s, _ in read_dependencies(path, coarse_tags=True)]
    assert fine == [["PRP", "VBP", "RB", "VB", "."], ["INTJ"]]  # UPOS where XPOS is "_"
    assert coarse == [["PRON", "AUX", "PART", "VERB", "PUNCT"], ["INTJ"]]
    both = [s for s, _ in read_dependencies(path, coarse_tags=True)]
    assert both[0].words == ["I", "do", "n't", "know", "."]  # no multi-word token, empty node
    assert both[0].heads == [4, 4, 4, 0, 4]
    # A CoNLL-X file whose CPOSTAG is "_" falls back to POSTAG; Malt-TAB has one tag column.
    conllx = write(tmp_path, "a.conll", "1\tHi\t_\t_\tUH\t_\t0\troot\t_\t_\n")
    assert [s.tags for s, _ in read_dependencies(conllx, coarse_tags=True)] == [["UH"]]
    malt = write(tmp_path, "a.dp", MALT)
    assert [s.tags for s, _ in read_dependencies(malt, coarse_tags=True)] == [
        ["NNP", "NNP", "VBZ", "NNP", "."],
        ["#", "CD"],
    ]
