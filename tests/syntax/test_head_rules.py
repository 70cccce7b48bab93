from functools import lru_cache
from pathlib import Path

import pytest
from nltk import Tree

from lal_allennlp.syntax.dependencies import DependencyAligner, DependencySentence
from lal_allennlp.syntax.head_rules import (
    COLLINS_HEAD_RULES,
    COORDINATION,
    HeadFinder,
    dependency_labels,
)
from lal_allennlp.syntax.joint_spans import SUB_HEAD_LABEL, tree_and_heads_to_joint_spans
from lal_allennlp.syntax.trees import normalise_tree, parse_trees

REPO_ROOT = Path(__file__).resolve().parents[2]
PTB_SAMPLE = REPO_ROOT.parent / "shared" / "data" / "ptb-sample"

PIERRE = Tree.fromstring(
    "(TOP (S (NP (NNP Pierre) (NNP Vinken)) (VP (MD will) (VP (VB join) (NP (DT the) (NN board))"
    " (PP (IN as) (NP (DT a) (NN director))))) (. .)))"
)


@pytest.mark.parametrize(
    "label, children, expected",
    [
        ("S", ["NP", "VP", "."], 1),
        ("VP", ["MD", "VP"], 0),  # MD heads the VP
        ("VP", ["TO", "VP"], 0),
        ("PP", ["IN", "NP"], 0),  # IN heads the PP
        ("PP", ["IN", "IN", "NP"], 1),  # "right": the rightmost IN
        ("ADVP", ["RB", "RB"], 1),
        ("ADJP", ["JJ", "JJ"], 0),
        ("SBAR", ["IN", "S"], 0),
        ("NP", ["DT", "JJ", "NN"], 2),
        ("NP", ["NNP", "NNP", "POS"], 2),
        ("NP", ["NP", ",", "NP"], 0),  # no noun tag: the leftmost NP
        ("NP", ["DT", "CD", "JJ"], 1),  # CD before JJ
        ("NP", ["$", "CD"], 0),  # "$" before CD
        ("NP", ["NNS", "CC", "NNS"], 0),  # coordination rule: X CC Y is headed by X
        ("FRAG", ["NP", "."], 1),  # no priority list: the rightmost child
        ("NO-SUCH-LABEL", ["NN", "VB"], 0),  # default: the leftmost child
    ],
)
def test_collins_head_child(label, children, expected):
    assert HeadFinder().head_child(label, children) == expected


def test_heads_constituents_and_labels_exactly():
    finder = HeadFinder()
    heads, constituents = finder.constituent_heads(PIERRE)
    # Pierre Vinken will join the board as a director .
    assert heads == [2, 3, 0, 3, 6, 4, 4, 9, 7, 3]
    assert constituents == [
        (0, 10, "TOP", 3),
        (0, 10, "S", 3),
        (0, 2, "NP", 2),
        (2, 9, "VP", 3),
        (3, 9, "VP", 4),
        (4, 6, "NP", 6),
        (6, 9, "PP", 7),
        (7, 9, "NP", 9),
    ]
    assert finder.dependencies(PIERRE) == DependencySentence(
        ["Pierre", "Vinken", "will", "join", "the", "board", "as", "a", "director", "."],
        ["NNP", "NNP", "MD", "VB", "DT", "NN", "IN", "DT", "NN", "."],
        heads,
        ["NP_NNP", "S_NP", "ROOT", "VP_VP", "NP_DT", "VP_NP", "VP_PP", "NP_DT", "PP_NP", "S_."],
    )


def test_labels_use_the_top_of_a_unary_chain_and_follow_given_heads():
    tree = Tree.fromstring("(TOP (S (NP (PRP He)) (VP (VBD said) (S (VP (VBG nothing))))))")
    assert HeadFinder().heads(tree) == [2, 0, 2]
    assert dependency_labels(tree, [2, 0, 2]) == ["S_NP", "ROOT", "VP_S"]
    # Other (consistent) heads: "said" depends on "nothing".
    assert dependency_labels(tree, [2, 3, 0]) == ["S_NP", "VP_VBD", "ROOT"]


def test_the_table_is_replaceable():
    # A head-final toy table for another language: VV heads VP, the rightmost NN heads NP,
    # everything else is head-final; no coordination rule.
    rules = {"VP": [("left", ("VV",))], "NP": [("right_any", ("NN", "NR"))], "*": [("right", ())]}
    finder = HeadFinder(rules)
    tree = Tree.fromstring("(TOP (IP (NP (NR 张三) (CC 和) (NN 李四)) (VP (VV 来) (AS 了))))")
    assert finder.heads(tree) == [3, 3, 4, 0, 4]
    # Collins: NP -> 李四, moved left by the coordination rule; IP is unknown -> leftmost.
    assert HeadFinder().heads(tree) == [0, 1, 1, 1, 4]
    with pytest.raises(ValueError, match="direction 'up'"):
        HeadFinder({"NP": [("up", ("NN",))]})
    with pytest.raises(ValueError, match="has no passes"):
        HeadFinder({"NP": []})
    without_coordination = {k: v for k, v in COLLINS_HEAD_RULES.items() if k != COORDINATION}
    assert HeadFinder(without_coordination).head_child("NP", ["NNS", "CC", "NNS"]) == 2


@lru_cache(maxsize=1)
def ptb_sample():
    """(normalised tree, tree file, line, dependency sentence) for all 3,669 sentences."""
    aligner = DependencyAligner(PTB_SAMPLE / "deps")
    items = []
    for path in sorted((PTB_SAMPLE / "trees").glob("wsj_*.mrg")):
        for tree, line in parse_trees(path.read_text(encoding="utf-8"), str(path)):
            normalised = normalise_tree(tree)
            sentence = aligner.next(normalised.leaves(), str(path), line)
            assert Path(sentence.source).stem == path.stem  # aligned by file and order
            items.append((normalised, str(path), line, sentence))
    aligner.finish()
    return items


@pytest.mark.skipif(not PTB_SAMPLE.is_dir(), reason="../shared/data/ptb-sample is not here")
def test_agreement_with_the_real_penn2malt_heads():
    finder = HeadFinder()
    same = total = 0
    for tree, _, _, sentence in ptb_sample():
        heads = finder.heads(tree)
        same += sum(a == b for a, b in zip(heads, sentence.heads))
        total += len(heads)
        # Head-rule dependencies always fit the tree: joint spans without <H>.
        joint = tree_and_heads_to_joint_spans(tree, heads)
        assert all(label != SUB_HEAD_LABEL for _, _, label in joint.spans)
    # Collins (1999) rules vs. the Penn2Malt (Yamada & Matsumoto) heads of the NLTK sample:
    # they differ mainly on appositive NPs, "to VP", "$ CD", QP and PRN.
    assert (len(ptb_sample()), total, same) == (3669, 88120, 74110)  # 84.10 %
