import pickle
import random
from pathlib import Path

import numpy
import pytest
from nltk import Tree

from lal_allennlp.syntax.trees import (
    TreebankFormatError,
    collapse_label,
    expand_label,
    is_preterminal,
    normalise_tree,
    parse_trees,
    spans_to_tree,
    tree_to_spans,
    tree_pos,
    tree_to_string,
)

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "ptb"

WSJ_STYLE = """
( (S
    (S-TPC-2
      (NP-SBJ-1 (PRP$ Its) (NN profit) )
      (VP (VBD rose)
        (NP-EXT (CD 5) (NN %) )
        (PP-LOC (IN in)
          (NP (NNP Asia) (-LRB- -LRB-) (NNP Japan) (-RRB- -RRB-) ))))
    (, ,)
    (NP-SBJ=3 (PRP it) )
    (VP (VBD said)
      (SBAR (-NONE- 0)
        (S (-NONE- *T*-2) )))
    (. .) ))
( (S
    (NP-SBJ-1 (PRP He) )
    (VP (VBD wanted)
      (S
        (NP-SBJ (-NONE- *-1) )
        (VP (TO to)
          (VP (VB give)
            (ADVP|PRT (RB back) )))))
    (. .) ))
"""


def t(text: str) -> Tree:
    return Tree.fromstring(text)


class TestParseTrees:
    def test_multi_line_trees_with_start_lines(self):
        parsed = list(parse_trees(WSJ_STYLE, "wsj.mrg"))
        assert [line for _, line in parsed] == [2, 15]
        first = parsed[0][0]
        assert first.label() == ""
        assert first[0].label() == "S"
        assert first[0][0].label() == "S-TPC-2"
        assert first.leaves()[:3] == ["Its", "profit", "rose"]
        assert ("-LRB-", "-LRB-") in [(w, p) for w, p in first.pos()]
        assert ("0", "-NONE-") in first.pos()

    def test_one_tree_per_line_and_no_space_outer_bracket(self):
        text = "(TOP (S (NP (PRP He)) (VP (VBD left))))\n((S (NP (PRP x)) (VP (VBD y))))\n"
        parsed = list(parse_trees(text))
        assert [line for _, line in parsed] == [1, 2]
        assert parsed[0][0] == t("(TOP (S (NP (PRP He)) (VP (VBD left))))")
        assert parsed[1][0].label() == ""
        assert parsed[1][0][0] == t("(S (NP (PRP x)) (VP (VBD y)))")

    def test_odd_characters_in_words_and_labels(self):
        text = "(TOP (X=1|Y (NNP Zoë) (POS 's) (SYM *+*) (CD 1\\/2) (: --) (NP[+theme] 我們)))"
        ((tree, _),) = parse_trees(text)
        assert tree.leaves() == ["Zoë", "'s", "*+*", "1\\/2", "--", "我們"]
        assert tree[0].label() == "X=1|Y"
        assert tree[0][5].label() == "NP[+theme]"

    def test_preterminal_split_over_lines(self):
        ((tree, line),) = parse_trees("\n(TOP (NN\n   dog\n))")
        assert line == 2
        assert tree == t("(TOP (NN dog))")

    @pytest.mark.parametrize(
        "text, line, fragment",
        [
            ("(TOP (NN a))\n\n(TOP (NN b)))\n", 3, "')' closes no open bracket"),
            (")\n", 1, "')' closes no open bracket"),
            ("(TOP (NN a))\n(TOP\n  (NN b)\n", 2, "not closed"),
            ("(TOP (NN a))\nstray words\n", 2, "text outside brackets: 'stray'"),
            ("(TOP (NN a))\n( )\n", 2, "no words or children"),
            ("(TOP\n  (NP ) (NN a))\n", 2, "(NP) has no words or children"),
            ("(TOP (NP a (NN b)))", 1, "mixes words and brackets"),
            ("(TOP (NP (NN b) a))", 1, "mixes words and brackets"),
            ("(TOP (NN a b))", 1, "more than one word"),
        ],
    )
    def test_errors_name_source_and_line(self, text, line, fragment):
        with pytest.raises(TreebankFormatError) as info:
            list(parse_trees(text, "my.mrg"))
        assert info.value.source == "my.mrg"
        assert info.value.line == line
        assert str(info.value).startswith(f"my.mrg, line {line}: ")
        assert fragment in str(info.value)

    def test_unclosed_tree_points_at_the_likely_place(self):
        text = "( (S\n    (NP (NN a) )\n( (S (NN b) ))\n( (S (NN c) ))\n"
        with pytest.raises(TreebankFormatError) as info:
            list(parse_trees(text, "f.mrg"))
        assert info.value.line == 1
        assert "line 3 opens a bracket in its first column" in str(info.value)

    def test_extra_closing_bracket_drops_the_tree_it_closed_too_early(self):
        text = "(TOP (NN a))\n(TOP (NP (NN b))\n (NN c)))\n(TOP (NN d))\n"
        errors = []
        parsed = list(parse_trees(text, "f", errors))
        # `(TOP (NP (NN b)) (NN c))` closes on line 3 before the last ")": it is dropped.
        assert [line for _, line in parsed] == [1, 4]
        assert len(errors) == 1
        assert errors[0].line == 3
        assert "the tree starting on line 2 has one ')' too many" in str(errors[0])

    def test_recovery_mode_collects_every_error_and_keeps_good_trees(self):
        text = "(TOP (NN a))\n(TOP (NP a (NN b)))\nnoise\n)\n(TOP (NN c))\n(TOP (NN d)"
        errors = []
        parsed = [tree for tree, _ in parse_trees(text, "f", errors)]
        assert parsed == [t("(TOP (NN a))"), t("(TOP (NN c))")]
        assert [error.line for error in errors] == [2, 3, 4, 6]

    def test_error_is_a_value_error_and_pickles(self):
        error = TreebankFormatError("a.mrg", 7, "bad", "fix it")
        assert isinstance(error, ValueError)
        assert str(error) == "a.mrg, line 7: bad (fix it)"
        copy = pickle.loads(pickle.dumps(error))
        assert (copy.source, copy.line, str(copy)) == ("a.mrg", 7, str(error))


class TestNormaliseTree:
    def test_function_tags_coindices_and_empty_elements(self):
        first, second = [tree for tree, _ in parse_trees(WSJ_STYLE)]
        # SBAR (-NONE- 0) (S (-NONE- *T*-2)) empties the S and then the SBAR: both go.
        assert normalise_tree(first) == t(
            "(TOP (S (S (NP (PRP$ Its) (NN profit)) (VP (VBD rose) (NP (CD 5) (NN %))"
            " (PP (IN in) (NP (NNP Asia) (-LRB- -LRB-) (NNP Japan) (-RRB- -RRB-)))))"
            " (, ,) (NP (PRP it)) (VP (VBD said)) (. .)))"
        )
        # The empty subject goes; the unary S over VP stays; ADVP|PRT -> ADVP.
        assert normalise_tree(second) == t(
            "(TOP (S (NP (PRP He)) (VP (VBD wanted) (S (VP (TO to) (VP (VB give)"
            " (ADVP (RB back)))))) (. .)))"
        )

    @pytest.mark.parametrize(
        "label, expected",
        [
            ("NP-SBJ-1", "NP"),
            ("NP-SBJ=2", "NP"),
            ("NP=2", "NP"),
            ("PP-LOC", "PP"),
            ("S-TPC-2", "S"),
            ("ADVP|PRT", "ADVP"),
            ("PRT|ADVP", "PRT"),
            ("ADVP-LOC-PRD-TPC-1", "ADVP"),
            ("WHNP-260", "WHNP"),
            ("-NONE-", "-NONE-"),
            ("-LRB-", "-LRB-"),
            ("NP[+theme]", "NP[+theme]"),
        ],
    )
    def test_constituent_labels(self, label, expected):
        tree = Tree("", [Tree(label, [Tree("NN", ["x"])])])
        assert normalise_tree(tree)[0].label() == expected

    def test_pos_tags_are_kept_as_they_are(self):
        tree = t("( (NP (PRP$ its) (-LRB- -LCB-) (NN-X y) (-RRB- -RCB-)))")
        assert normalise_tree(tree) == t(
            "(TOP (NP (PRP$ its) (-LRB- -LCB-) (NN-X y) (-RRB- -RCB-)))"
        )

    @pytest.mark.parametrize("root", ["", "TOP", "ROOT"])
    def test_root_bracket_is_replaced_by_top(self, root):
        tree = Tree(root, [t("(S (NP (NN a)) (VP (VB b)))"), t("(. .)")])
        assert normalise_tree(tree) == t("(TOP (S (NP (NN a)) (VP (VB b))) (. .))")

    def test_other_root_label_is_a_constituent(self):
        assert normalise_tree(t("(S-1 (NP (NN a)) (VP (VB b)))")) == t(
            "(TOP (S (NP (NN a)) (VP (VB b))))"
        )

    def test_only_empty_elements_gives_none(self):
        assert normalise_tree(t("( (S (NP-SBJ (-NONE- *)) (VP (-NONE- *?*))))")) is None

    def test_input_is_not_changed(self):
        tree = t("( (S (NP-SBJ (-NONE- *)) (VP (VB go))))")
        before = tree.copy(deep=True)
        assert normalise_tree(tree) == t("(TOP (S (VP (VB go))))")
        assert tree == before

    def test_root_preterminal_is_rejected(self):
        with pytest.raises(ValueError, match="holds a word directly"):
            normalise_tree(Tree("TOP", ["word"]))


class TestSpans:
    def test_spans_with_unary_chains_and_one_word_constituents(self):
        tree = t("(TOP (S (NP (PRP He)) (VP (VBD wanted) (S (VP (TO to) (VP (VB go)))))" " (. .)))")
        words, tags, spans = tree_to_spans(tree)
        assert words == ["He", "wanted", "to", "go", "."]
        assert tags == ["PRP", "VBD", "TO", "VB", "."]
        assert spans == [
            (0, 5, "S"),
            (0, 1, "NP"),
            (1, 4, "VP"),
            (2, 4, "S+VP"),
            (3, 4, "VP"),
        ]

    def test_long_chain_over_one_word(self):
        tree = t("(TOP (FRAG (NP (NN Correction))))")
        assert tree_to_spans(tree) == (["Correction"], ["NN"], [(0, 1, "FRAG+NP")])
        assert spans_to_tree(*tree_to_spans(tree)) == tree

    def test_one_word_sentence_without_spans(self):
        tree = t("(TOP (NN Thanks))")
        assert tree_to_spans(tree) == (["Thanks"], ["NN"], [])
        assert spans_to_tree(["Thanks"], ["NN"], []) == tree

    def test_top_with_several_children(self):
        tree = t("(TOP (S (NP (Nhaa 我們)) (VA4 上學)) (PERIODCATEGORY 。))")
        words, tags, spans = tree_to_spans(tree)
        assert spans == [(0, 2, "S"), (0, 1, "NP")]
        assert spans_to_tree(words, tags, spans) == tree

    def test_spans_to_tree_accepts_any_order_and_attaches_loose_words(self):
        words = ["The", "old", "dog", "barked", "."]
        tags = ["DT", "JJ", "NN", "VBD", "."]
        spans = [(3, 4, "VP"), (0, 3, "NP"), (0, 5, "S")]
        expected = t("(TOP (S (NP (DT The) (JJ old) (NN dog)) (VP (VBD barked)) (. .)))")
        for _ in range(5):
            random.shuffle(spans)
            assert spans_to_tree(words, tags, spans) == expected

    def test_spans_to_tree_expands_joint_labels_and_takes_numpy_ints(self):
        spans = [(numpy.int64(0), numpy.int64(2), "S+VP"), (numpy.int64(1), numpy.int64(2), "NP")]
        tree = spans_to_tree(["eat", "fish"], ["VB", "NN"], spans, root_label="ROOT")
        assert tree == t("(ROOT (S (VP (VB eat) (NP (NN fish)))))")

    @pytest.mark.parametrize(
        "spans, message",
        [
            ([(0, 2, "A"), (1, 3, "B")], "crosses"),
            ([(1, 3, "B"), (0, 2, "A")], "crosses"),
            ([(0, 4, "A")], "out of range"),
            ([(2, 2, "A")], "out of range"),
            ([(-1, 1, "A")], "out of range"),
            ([(0, 2, "A"), (0, 2, "B")], "given twice"),
            ([(0, 2, "A+")], "malformed"),
        ],
    )
    def test_spans_to_tree_rejects_bad_spans(self, spans, message):
        with pytest.raises(ValueError, match=message):
            spans_to_tree(["a", "b", "c"], ["X", "X", "X"], spans)

    def test_spans_to_tree_rejects_tag_count_mismatch(self):
        with pytest.raises(ValueError, match="2 words but 1 POS tags"):
            spans_to_tree(["a", "b"], ["X"], [])

    def test_spans_to_tree_handles_long_inputs(self):
        # 6,000 words, a tree 6,000 levels deep: far past Python's recursion limit, so any
        # recursive construction fails here. (No wall-clock bound: the suite runs on shared
        # machines, and timing belongs in the benchmarks.)
        n = 6000
        words = [f"w{i}" for i in range(n)]
        tags = ["NN"] * n
        right_branching = [(i, n, "X") for i in range(n - 1)]
        flat = [(i, i + 1, "NP") for i in range(n)]
        deep = spans_to_tree(words, tags, right_branching)
        wide = spans_to_tree(words, tags, flat)
        assert wide.leaves() == words and len(wide) == n
        # Walk the deep tree without recursion (nltk's own methods recurse).
        node = deep[0]
        for i in range(n - 2):
            assert node.label() == "X" and node[0] == Tree("NN", [words[i]])
            node = node[1]
        assert node == Tree("X", [Tree("NN", [words[-2]]), Tree("NN", [words[-1]])])

    def test_label_helpers(self):
        assert collapse_label(["S", "VP"]) == "S+VP"
        assert expand_label("S+VP") == ["S", "VP"]
        assert expand_label("NP") == ["NP"]
        assert collapse_label(["S", "NP[+theme]"]) == "S+NP[+theme]"
        assert expand_label("S+NP[+theme]") == ["S", "NP[+theme]"]
        with pytest.raises(ValueError, match="cannot be part of a joint label"):
            collapse_label(["A+B"])
        with pytest.raises(ValueError):
            collapse_label([""])
        with pytest.raises(ValueError, match="cannot be part of a joint label"):
            tree_to_spans(t("(TOP (A+B (NN x)))"))

    def test_tree_to_string(self):
        tree = t("(TOP (S (NP (PRP He)) (VP (VBD left)) (. .)))")
        assert tree_to_string(tree) == "(TOP (S (NP (PRP He)) (VP (VBD left)) (. .)))"
        assert tree_to_string(Tree("", [Tree("NN", ["x"])])) == "( (NN x))"

    def test_is_preterminal(self):
        assert is_preterminal(t("(NN dog)"))
        assert is_preterminal(t("(-NONE- *T*-1)"))
        assert not is_preterminal(t("(NP (NN dog))"))
        assert not is_preterminal(t("(NP (DT the) (NN dog))"))
        assert not is_preterminal(Tree("NN", ["dog", "cat"]))


def test_round_trip_on_every_fixture_tree():
    count = 0
    for path in sorted(FIXTURES.glob("*/*.mrg")) + [FIXTURES / "one_per_line.trees"]:
        if path.parent.name == "bad":
            continue
        for tree, line in parse_trees(path.read_text(encoding="utf-8"), str(path)):
            normalised = normalise_tree(tree)
            words, tags, spans = tree_to_spans(normalised)
            assert words == [w for w, p in tree.pos() if p != "-NONE-"], (path, line)
            assert spans == sorted(spans, key=lambda span: (span[0], -span[1]))
            assert spans_to_tree(words, tags, spans) == normalised, (path, line)
            assert spans_to_tree(words, tags, spans[::-1]) == normalised, (path, line)
            assert Tree.fromstring(tree_to_string(normalised)) == normalised
            count += 1
    assert count == 60 + 15 + 5


def test_string_and_tags_of_real_trees_equal_nltk():
    for tree, _ in parse_trees((FIXTURES / "dev" / "wsj_9003.mrg").read_text(), "dev"):
        assert tree_to_string(tree) == " ".join(str(tree).split())
        assert tree_pos(tree) == tree.pos()


def test_string_and_tags_of_a_tree_deeper_than_the_recursion_limit():
    # A parser's tree of a long sentence: right-branching, 3,000 levels.
    n = 3000
    tree = spans_to_tree(["w"] * n, ["NN"] * n, [(i, n, "S") for i in range(n - 1)])
    assert tree_to_string(tree) == "(TOP " + "(S (NN w) " * (n - 1) + "(NN w)" + ")" * n
    assert tree_pos(tree) == [("w", "NN")] * n
