"""
The reader bugs that the fuzzing of `test_fuzz_readers` found, each as the smallest file that
showed it, with what the readers do now. Before the fixes, each of these gave a silently wrong
tree, lost sentences that skip mode should have kept, or raised another exception.
"""

import logging
from typing import List, Tuple

import pytest

from lal_allennlp.dataset_readers.ctb_reader import ChineseTreebankReader
from lal_allennlp.dataset_readers.dependency_reader import DependencyTreebankReader
from lal_allennlp.dataset_readers.ptb_reader import PennTreebankReader
from lal_allennlp.syntax.dependencies import DependencyFormatError, read_dependencies
from lal_allennlp.syntax.trees import (
    MAX_DEPTH,
    TreebankFormatError,
    parse_trees,
    tree_to_string,
)

CONLLU_LINE = "{id}\t{word}\t_\tX\tX\t_\t{head}\t{label}\t_\t_\n"


def _read(reader, tmp_path, name: str, data: bytes) -> Tuple[List[str], int]:  # type: ignore
    """The trees (as strings) or word lists read, and the skips counted."""
    path = tmp_path / name
    path.write_bytes(data)
    values = []
    for instance in reader.read(str(path)):
        metadata = instance["metadata"].metadata
        tree = metadata.get("gold_tree")
        values.append(tree_to_string(tree) if tree is not None else " ".join(metadata["words"]))
    return values, reader.stats["skipped_errors"]


def _error(reader, tmp_path, name: str, data: bytes) -> TreebankFormatError:  # type: ignore
    with pytest.raises(TreebankFormatError) as info:
        _read(reader, tmp_path, name, data)
    assert str(tmp_path / name) in str(info.value)
    return info.value


@pytest.fixture(autouse=True)
def _quiet(caplog):  # type: ignore[no-untyped-def]
    caplog.set_level(logging.ERROR)


# ----------------------------------------------------------------------------------------------
# Bracketed trees (trees.parse_trees, lal_ptb, lal_ctb)
# ----------------------------------------------------------------------------------------------


def test_extra_bracket_inside_a_one_line_tree_drops_the_whole_tree(tmp_path):
    # Was: `(TOP (A a))` yielded (its `(B b)` lost) and only the piece `(B b)` dropped.
    data = b"(TOP (A a)) (B b))\n(TOP (C c))\n"
    error = _error(PennTreebankReader(), tmp_path, "a.trees", data)
    assert error.line == 1 and "the tree starting on line 1 has one ')' too many" in str(error)
    trees, skipped = _read(PennTreebankReader(on_error="skip"), tmp_path, "a.trees", data)
    assert (trees, skipped) == (["(TOP (C c))"], 1)


def test_missing_bracket_no_longer_swallows_the_following_trees(tmp_path):
    # Was: in skip mode the unclosed tree swallowed every tree after it, counted as one skip.
    data = b"( (S\n  (A a))\n( (S (B b)))\n( (S (C c)))\n"
    error = _error(PennTreebankReader(), tmp_path, "b.mrg", data)
    assert error.line == 1 and "line 3 opens a bracket in its first column" in str(error)
    trees, skipped = _read(PennTreebankReader(on_error="skip"), tmp_path, "b.mrg", data)
    assert (trees, skipped) == (["(TOP (S (B b)))", "(TOP (S (C c)))"], 1)


def test_unlabelled_bracket_inside_a_tree_is_reported_where_it_stands():
    # Was: read as a constituent labelled "" (an error only later, about joint labels).
    with pytest.raises(TreebankFormatError, match="line 2: a bracket without a label inside"):
        list(parse_trees("(TOP\n (NP ( (NN a)) (NN b)))", "c.trees"))
    # The unlabelled outer bracket of WSJ files is still fine.
    [(tree, _)] = parse_trees("( (S (NN a)))")
    assert tree.label() == "" and tree[0].label() == "S"


def test_deep_nesting_is_an_error_not_a_recursion_error(tmp_path):
    # Was: RecursionError from the recursive tree normalisation.
    data = b"(TOP " + b"(X " * 3000 + b"(NN a)" + b")" * 3001 + b"\n"
    error = _error(PennTreebankReader(), tmp_path, "d.trees", data)
    assert f"nested more than {MAX_DEPTH} deep" in str(error)


def test_nesting_within_the_limit_reads(tmp_path):
    # A deep but allowed tree goes through every recursive tree function of the reader.
    levels = MAX_DEPTH - 2  # with TOP and the preterminal
    data = b"(TOP " + b"(X (Y y) " * levels + b"(NN a)" + b")" * (levels + 1) + b"\n"
    trees, skipped = _read(PennTreebankReader(), tmp_path, "deep.trees", data)
    assert len(trees) == 1 and not skipped


def test_undecodable_byte_in_skip_mode_drops_only_its_tree(tmp_path):
    # Was: the whole file skipped.
    data = b"(TOP (A a))\n(TOP (B \xe8))\n(TOP (C c))\n"
    error = _error(PennTreebankReader(), tmp_path, "e.trees", data)
    assert error.line == 2 and "`encoding` option" in str(error)
    trees, skipped = _read(PennTreebankReader(on_error="skip"), tmp_path, "e.trees", data)
    assert (trees, skipped) == (["(TOP (A a))", "(TOP (C c))"], 1)
    # Read with the right encoding, the tree is fine.
    trees, _ = _read(PennTreebankReader(encoding="latin-1"), tmp_path, "e.trees", data)
    assert trees[1] == "(TOP (B è))"


def test_utf16_file_says_so(tmp_path):
    # Was: "(\x00T\x00O\x00P\x00 ...) mixes words and brackets", NUL characters in the labels.
    data = "(TOP (A a))\n".encode("utf-16-le")
    error = _error(PennTreebankReader(), tmp_path, "f.trees", data)
    assert error.line == 1 and "NUL character" in str(error) and '"utf-16"' in str(error)
    assert _read(PennTreebankReader(encoding="utf-16-le"), tmp_path, "f.trees", data)[0] == [
        "(TOP (A a))"
    ]


def test_big5_file_is_not_taken_for_gbk(tmp_path):
    # Was: decoded as GB18030 into private-use characters, silently: (Neu \ue5e6).
    data = "(TOP (NP (Neu 一)) (PERIODCATEGORY 。))\n".encode("big5")
    error = _error(ChineseTreebankReader(), tmp_path, "g.trees", data)
    assert "private-use" in str(error) and '"big5"' in str(error)
    trees, _ = _read(ChineseTreebankReader(encoding="big5"), tmp_path, "g.trees", data)
    assert trees == ["(TOP (NP (Neu 一)) (PERIODCATEGORY 。))"]


def test_missing_end_of_sentence_tag_drops_one_sentence_in_skip_mode(tmp_path):
    # Was: the whole file skipped.
    data = "<S ID=1>\n(TOP (A a))\n<S ID=2>\n(TOP (B b))\n</S>\n".encode()
    error = _error(ChineseTreebankReader(), tmp_path, "chtb_0001.fid", data)
    assert error.line == 3 and "<S ID=2> opens a sentence inside <S ID=1>" in str(error)
    reader = ChineseTreebankReader(on_error="skip")
    assert _read(reader, tmp_path, "chtb_0001.fid", data) == (["(TOP (B b))"], 1)


def test_lost_bracket_in_one_ctb_sentence_does_not_drop_the_sentence_before(tmp_path):
    # Was (fuzz case ctb-markup:3918, '(' -> '\r'; ctb-markup:4960, '(' -> ' '): "TOP" left
    # outside brackets, so the tree's last ')' closed nothing and dropped every tree held since
    # the last line-start bracket, the intact <S ID=1> included. The <S> tags now part trees.
    for lost in (b"\r", b" "):
        data = b"<S ID=1>\n(TOP (A a))\n</S>\n<S ID=2>\n" + lost + b"TOP (B b))\n</S>\n"
        error = _error(ChineseTreebankReader(), tmp_path, "chtb_0002.fid", data)
        assert error.line == 5 and "text outside brackets: 'TOP'" in str(error)
        trees, skipped = _read(ChineseTreebankReader(on_error="skip"), tmp_path, "r.fid", data)
        assert trees == ["(TOP (A a))"] and skipped >= 1


def test_tree_left_open_in_a_ctb_sentence_is_reported_on_its_own_line(tmp_path):
    # Was (fuzz case ctb-markup:14064, ')' -> '('): the open '(' took the next sentence's tree
    # as its child, reported as an unlabelled bracket on that tree's line, outside the edit.
    data = b"<S ID=1>\n(TOP (A a)(\n</S>\n<S ID=2>\n(TOP (B b))\n</S>\n"
    error = _error(ChineseTreebankReader(), tmp_path, "chtb_0003.fid", data)
    assert error.line == 2 and "not closed where its sentence's markup ends (line 3)" in str(
        error
    )
    reader = ChineseTreebankReader(on_error="skip")
    assert _read(reader, tmp_path, "chtb_0003.fid", data) == (["(TOP (B b))"], 1)
    # Without markup, the unlabelled bracket is named on its own line, not its child's.
    with pytest.raises(TreebankFormatError, match="line 1: a bracket without a label"):
        list(parse_trees("(TOP (A a) (\n(B b)))", "t.trees"))


# ----------------------------------------------------------------------------------------------
# Dependency files (dependencies.read_dependencies, lal_dependencies)
# ----------------------------------------------------------------------------------------------


def _dependencies(**options):  # type: ignore[no-untyped-def]
    return DependencyTreebankReader(transitions=False, **options)


@pytest.mark.parametrize("head", ["+1", " 1", "1_0", "١"])
def test_heads_are_ascii_digits(tmp_path, head):
    # Was: int() read "+1", " 1", "1_0" (10) and Arabic-Indic "١" (1) as heads.
    data = f"a\tX\t0\nb\tX\t{head}\n".encode()
    error = _error(_dependencies(), tmp_path, "h.dp", data)
    assert error.line == 2 and "is not a whole number" in str(error)


def test_conllu_sentence_cut_short_no_longer_passes_as_a_tree(tmp_path):
    # Was: read as the valid tree "The cat sat" (the "." lost).
    data = "# text = The cat sat .\n" + "".join(
        CONLLU_LINE.format(id=i, word=w, head=h, label="dep")
        for i, w, h in [(1, "The", 2), (2, "cat", 3), (3, "sat", 0)]
    )
    error = _error(_dependencies(), tmp_path, "k.conllu", data.encode())
    assert error.line == 2 and "do not spell the sentence's `# text` (line 1)" in str(error)


def test_file_cut_in_its_last_line(tmp_path):
    # Was: "c X 12" cut to "c X 1" read as a valid tree.
    error = _error(_dependencies(), tmp_path, "l.dp", b"a\tX\t2\nb\tX\t0\nc\tX\t1")
    assert error.line == 3 and "ends in the middle of this line" in str(error)


def test_format_is_told_by_a_line_that_fits(tmp_path):
    # Was: a CoNLL-U comment with tabs (4 columns) made the file Malt-TAB, so every sentence
    # failed; a first line with a column missing failed the whole file.
    data = "#\tsent_id\t=\t1\n" + CONLLU_LINE.format(id=1, word="Hi", head=0, label="root")
    assert _read(_dependencies(), tmp_path, "m.conllu", data.encode() + b"\n") == (["Hi"], 0)
    data = b"a\tX\nb\tX\t0\n\nc\tX\t0\n"
    assert _read(_dependencies(on_error="skip"), tmp_path, "m.dp", data) == (["c"], 1)


def test_undecodable_byte_in_skip_mode_drops_only_its_sentence(tmp_path):
    # Was: the whole file skipped.
    data = b"a\tX\t0\n\n\xe8\tX\t0\n\nc\tX\t0\n"
    error = _error(_dependencies(), tmp_path, "n.dp", data)
    assert error.line == 3 and "0xe8" in str(error)
    assert _read(_dependencies(on_error="skip"), tmp_path, "n.dp", data) == (["a", "c"], 1)


def test_whole_file_in_another_encoding_is_one_error(tmp_path):
    # Lines that happen to decode in a GBK file read as UTF-8 are wrong too: the file is
    # skipped as a whole, with the encoding advice.
    data = "".join(
        f"# text = 我们{i}\n" + CONLLU_LINE.format(id=1, word=f"我们{i}", head=0, label="root")
        + "\n" for i in range(6)
    ).encode("gbk")
    assert _read(_dependencies(on_error="skip"), tmp_path, "q.conllu", data) == ([], 1)
    with pytest.raises(DependencyFormatError, match="line 1: not valid UTF-8"):
        _read(_dependencies(), tmp_path, "q.conllu", data)
    assert len(_read(_dependencies(encoding="gbk"), tmp_path, "q.conllu", data)[0]) == 6


def test_text_comment_without_its_sentence(tmp_path):
    # Was: a file cut after the next sentence's comments lost that sentence silently.
    data = CONLLU_LINE.format(id=1, word="Hi", head=0, label="root") + "\n# text = Bye\n"
    error = _error(_dependencies(), tmp_path, "o.conllu", data.encode())
    assert error.line == 3 and "sentence 2: a `# text` comment with no token lines" in str(error)


def test_empty_columns(tmp_path):
    # Was: an empty POS tag (two tabs in a row) read as the tag "".
    error = _error(_dependencies(), tmp_path, "p.dp", b"a\t\t0\n")
    assert "the POS tag column is empty" in str(error)


def test_on_error_and_encoding_options_match_the_other_readers(tmp_path):
    reader = _dependencies(on_error="skip")
    _read(reader, tmp_path, "s.dp", b"a\tX\t0\n\nb\tX\t7\n\nc\tX\t0\n")
    assert reader.stats == {
        "files": 1,
        "sentences": 2,
        "instances": 2,
        "skipped_errors": 1,
        "skipped_non_projective": 0,
    }
    assert reader.skipped_bad == 1
    from allennlp.common.checks import ConfigurationError

    with pytest.raises(ConfigurationError, match='"raise" or "skip"'):
        _dependencies(on_error="ignore")
    for reader_class in (DependencyTreebankReader, PennTreebankReader):
        with pytest.raises(ConfigurationError, match="unknown encoding 'klingon'"):
            reader_class(encoding="klingon")


def _conll(*sentences: List[Tuple[int, str, int]]) -> bytes:
    """CoNLL lines of `(id, word, head)` rows, a blank line after each sentence."""
    return "".join(
        "".join(CONLLU_LINE.format(id=i, word=w, head=h, label="dep") for i, w, h in rows) + "\n"
        for rows in sentences
    ).encode()


@pytest.mark.parametrize("first_id", [6, 16])
def test_blank_line_that_cuts_a_conllx_sentence_loses_both_parts(tmp_path, first_id):
    # Was (fuzz cases conllx:603 and 4917, the first digit of an ID "16" -> '\n'): the words
    # before the blank line were yielded as a valid shorter tree, then the rest raised.
    data = _conll([(1, "a", 2), (2, "b", 0)], [(first_id, "c", 2)], [(1, "d", 0)])
    error = _error(_dependencies(), tmp_path, "u.conll", data)
    assert error.line == 3 and "sentence 1: this blank line probably cuts it short" in str(error)
    # Nothing was yielded before the error: the sentence waits for the next block's first ID.
    read = []
    with pytest.raises(DependencyFormatError):
        read.extend(sentence.words for sentence, _ in read_dependencies(tmp_path / "u.conll"))
    assert read == []
    assert _read(_dependencies(on_error="skip"), tmp_path, "u.conll", data) == (["d"], 2)
    # Before a block that starts with ID 1, a sentence is yielded as ever; so it is before a
    # block with comments, which starts a sentence (that lost its first line).
    data = _conll([(1, "a", 2), (2, "b", 0)], [(1, "c", 0)], [(1, "d", 0)])
    assert _read(_dependencies(), tmp_path, "v.conll", data) == (["a b", "c", "d"], 0)
    data = data.replace(b"\n\n1\tc", b"\n\n# sent_id = 2\n2\tc")
    reader = _dependencies(on_error="skip")
    assert _read(reader, tmp_path, "w.conllu", data) == (["a b", "d"], 1)
