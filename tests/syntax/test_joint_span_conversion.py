from functools import lru_cache
from pathlib import Path
from typing import List

import numpy as np
import pytest
from nltk import Tree

from lal_allennlp.syntax.dependencies import DependencyAligner
from lal_allennlp.syntax.joint_spans import (
    ROOT_SPAN_LABEL,
    SUB_HEAD_LABEL,
    JointSpanError,
    JointSpanTree,
    binarize_joint_spans,
    joint_spans_to_tree_and_heads,
    tree_and_heads_to_joint_spans,
)
from lal_allennlp.syntax.trees import normalise_tree, parse_trees, tree_to_spans
from lal_allennlp.decoding import joint_span_decode

REPO_ROOT = Path(__file__).resolve().parents[2]
PTB_SAMPLE = REPO_ROOT.parent / "shared" / "data" / "ptb-sample"
needs_ptb_sample = pytest.mark.skipif(
    not PTB_SAMPLE.is_dir(), reason="../shared/data/ptb-sample is not here"
)

# "very" depends on "big", not on the head "dog" of the NP: one <H> span groups "very big".
VERY_BIG = Tree.fromstring(
    "(TOP (S (NP (DT the) (RB very) (JJ big) (NN dog)) (VP (VBD barked)) (. .)))"
)
VERY_BIG_HEADS = [4, 3, 4, 5, 0, 5]
# Nested: not -> very -> big -> dog.
NOT_VERY_BIG = Tree.fromstring(
    "(TOP (S (NP (DT the) (RB not) (RB very) (JJ big) (NN dog)) (VP (VBD barked)) (. .)))"
)
NOT_VERY_BIG_HEADS = [5, 3, 4, 5, 6, 0, 6]
# Hand-checked cases: tree, heads, joint spans.
CASES = [
    (
        "(TOP (S (NP (NNP Ms.) (NNP Haag)) (VP (VBZ plays) (NP (NNP Elianti))) (. .)))",
        [2, 3, 0, 3, 3],
        [(0, 5, "S"), (0, 2, "NP"), (2, 4, "VP"), (3, 4, "NP")],
    ),
    (VERY_BIG, VERY_BIG_HEADS, [(0, 6, "S"), (0, 4, "NP"), (1, 3, "<H>"), (4, 5, "VP")]),
    (
        NOT_VERY_BIG,
        NOT_VERY_BIG_HEADS,
        [(0, 7, "S"), (0, 5, "NP"), (1, 4, "<H>"), (1, 3, "<H>"), (5, 6, "VP")],
    ),
    # Right side: "saw" <- "cats" <- "today" (a right <H> inside the VP).
    (
        "(TOP (S (NP (PRP We)) (VP (VBD saw) (NP (NNS cats)) (NP (NN today))) (. .)))",
        [2, 0, 2, 3, 2],
        [(0, 5, "S"), (0, 1, "NP"), (1, 4, "VP"), (2, 4, "<H>"), (2, 3, "NP"), (3, 4, "NP")],
    ),
    # No constituent over the whole sentence: the root span is "TOP".
    ("(TOP (NP (DT The) (NN end)) (. .))", [2, 0, 2], [(0, 3, "TOP"), (0, 2, "NP")]),
    ("(TOP (UH Yes))", [0], [(0, 1, "TOP")]),
    ("(TOP (INTJ (UH Yes)))", [0], [(0, 1, "INTJ")]),
    ("(TOP (S (VP (VB Go) (ADVP (RB away)))))", [0, 1], [(0, 2, "S+VP"), (1, 2, "ADVP")]),
]


def as_tree(tree):
    return Tree.fromstring(tree) if isinstance(tree, str) else tree


@pytest.mark.parametrize("tree, heads, spans", CASES)
def test_hand_checked_joint_spans_and_round_trip(tree, heads, spans):
    tree = as_tree(tree)
    joint = tree_and_heads_to_joint_spans(tree, heads)
    words, tags, _ = tree_to_spans(tree)
    assert joint == JointSpanTree(words, tags, spans, heads)
    assert joint_spans_to_tree_and_heads(words, tags, joint.spans, joint.heads) == (tree, heads)


def test_binarised_like_the_decoder_exactly():
    joint = tree_and_heads_to_joint_spans(VERY_BIG, VERY_BIG_HEADS)
    # the very big dog barked .   -- (start, end, label, head word), pre-order, 2n - 1 rows
    assert binarize_joint_spans(6, joint.spans, joint.heads) == [
        (0, 6, "S", 5),
        (0, 4, "NP", 4),
        (0, 1, "", 1),
        (1, 4, "", 4),
        (1, 3, "<H>", 3),
        (1, 2, "", 2),
        (2, 3, "", 3),
        (3, 4, "", 4),
        (4, 6, "", 5),
        (4, 5, "VP", 5),
        (5, 6, "", 6),
    ]


def test_decoder_rows_with_label_ids():
    words, tags = ["the", "very", "big", "dog", "barked", "."], ["DT", "RB", "JJ", "NN", "VBD", "."]
    names = ["<empty>", "<H>", "S", "NP", "VP"]
    rows = np.array(
        [[0, 6, 2], [0, 4, 3], [0, 1, 0], [1, 4, 0], [1, 3, 1], [1, 2, 0], [2, 3, 0]]
        + [[3, 4, 0], [4, 6, 0], [4, 5, 4], [5, 6, 0]]
    )
    tree, heads = joint_spans_to_tree_and_heads(
        words, tags, rows, np.array(VERY_BIG_HEADS), label_names=names
    )
    assert (tree, heads) == (VERY_BIG, VERY_BIG_HEADS)
    assert all(type(head) is int for head in heads)
    with pytest.raises(ValueError, match="needs label_names"):
        joint_spans_to_tree_and_heads(words, tags, rows, VERY_BIG_HEADS)
    with pytest.raises(ValueError, match="6 words but 5 heads"):
        joint_spans_to_tree_and_heads(words, tags, rows, VERY_BIG_HEADS[:5], names)


@pytest.mark.parametrize(
    "tree, heads, fragment",
    [
        # "c" (a dependent of "b") has the dependent "a" on the far side of "b".
        ("(TOP (S (NN a) (VB b) (NN c)))", [3, 0, 2], "not projective: in the constituent S"),
        ("(TOP (S (NN a) (VB b) (NN c)))", [0, 0, 2], "has 2 words whose heads lie outside it"),
        ("(TOP (S (NN a) (VB b) (NN c)))", [2, 1, 2], "(a cycle)"),
        (
            "(TOP (S (NP (DT the) (NN dog)) (VP (VBD barked))))",
            [3, 3, 0],
            "the constituent NP over words 1-2 ('the dog') has 2 words whose heads lie outside",
        ),
        (
            "(TOP (S (NP (JJ big) (NN dog)) (VP (VBD barked)) (. .)))",
            [2, 3, 0, 1],
            "word 4 ('.') depends on word 1 ('big'), which is not the head word of the "
            "constituent NP over words 1-2",
        ),
        ("(TOP (S (NN a) (VB b)))", [2, 0, 1], "3 heads for 2 words"),
        ("(TOP (S (NN a) (VB b)))", [1, 0], "word 1 ('a') has the head 1"),
        ("(TOP (S (NN a) (VB b)))", [3, 0], "word 1 ('a') has the head 3"),
    ],
)
def test_unrepresentable_trees_raise_naming_the_sentence(tree, heads, fragment):
    with pytest.raises(JointSpanError) as info:
        tree_and_heads_to_joint_spans(Tree.fromstring(tree), heads, sentence="x.mrg, line 7")
    message = str(info.value)
    assert message.startswith("x.mrg, line 7: ")
    assert fragment in message
    with pytest.raises(JointSpanError, match="^the sentence 'a b"):
        tree_and_heads_to_joint_spans(Tree.fromstring("(TOP (S (NN a) (VB b)))"), [0, 0])


def chain_dependents(tree: Tree, heads: List[int]) -> List[int]:
    """
    Other heads for a real tree, with <H> spans: in every constituent each dependent child left
    of the head child attaches to its right neighbour and each one right of it to its left
    neighbour (x -> y -> head <- z <- w), which stays projective and needs nested <H> spans.
    """
    heads = list(heads)

    def visit(node: Tree, start: int):
        if isinstance(node[0], str):
            return start + 1, start + 1
        end = start
        child_heads = []
        for child in node:
            end, head = visit(child, end)
            child_heads.append(head)
        top = next(h for h in child_heads if not start < heads[h - 1] <= end)
        index = child_heads.index(top)
        for i in range(index - 1):
            heads[child_heads[i] - 1] = child_heads[i + 1]
        for i in range(index + 2, len(child_heads)):
            heads[child_heads[i] - 1] = child_heads[i - 1]
        return end, top

    end = 0
    for child in tree:
        end, _ = visit(child, end)
    return heads


@lru_cache(maxsize=1)
def ptb_sample():
    """(normalised tree, tree file, line, heads) for all 3,669 sentences, aligned by file."""
    aligner = DependencyAligner(PTB_SAMPLE / "deps")
    items = []
    for path in sorted((PTB_SAMPLE / "trees").glob("wsj_*.mrg")):
        for tree, line in parse_trees(path.read_text(encoding="utf-8"), str(path)):
            normalised = normalise_tree(tree)
            sentence = aligner.next(normalised.leaves(), str(path), line)
            assert Path(sentence.source).stem == path.stem
            items.append((normalised, str(path), line, sentence.heads))
    aligner.finish()
    return items


@needs_ptb_sample
def test_all_ptb_sample_sentences_round_trip():
    items = ptb_sample()
    assert len(items) == 3669
    for tree, path, line, heads in items:
        joint = tree_and_heads_to_joint_spans(tree, heads, sentence=f"{path}, line {line}")
        # The joint spans are the spans of tree_to_spans: the Penn2Malt heads need no <H>.
        assert joint.spans == tree_to_spans(tree)[2]
        assert joint_spans_to_tree_and_heads(joint.words, joint.tags, joint.spans, joint.heads) == (
            tree,
            heads,
        )


def gold_chart(joints, labels):
    """Span and arc scores that put +10 on exactly the gold labels and arcs, 0 on empty."""
    index = {label: i for i, label in enumerate(labels)}
    batch, longest = len(joints), max(len(joint.words) for joint in joints)
    span_scores = np.full((batch, longest + 1, longest + 1, len(labels)), -10.0, np.float32)
    span_scores[..., 0] = 0.0
    arc_scores = np.full((batch, longest + 1, longest + 1), -10.0, np.float32)
    for b, joint in enumerate(joints):
        for start, end, label in joint.spans:
            span_scores[b, start, end, 0] = -10.0
            span_scores[b, start, end, index[label]] = 10.0
        for word, head in enumerate(joint.heads, 1):
            arc_scores[b, head, word] = 10.0
    return span_scores, arc_scores


def test_decoder_returns_gold_joint_spans():
    """
    On a chart that prefers exactly the gold spans, labels and arcs, the joint span decoder
    returns them, in the binarisation of `binarize_joint_spans`, and its output converts back
    to the gold tree and heads: the conversion follows the decoder's conventions (label 0
    empty, 1 <H>, heads per word). Hand cases (with nested <H> and a "TOP" root span), then 50
    real sentences with their heads and 50 with chained heads (many <H> spans).
    """
    examples = [(as_tree(tree), heads) for tree, heads, _ in CASES]
    if PTB_SAMPLE.is_dir():
        real = [(tree, heads) for tree, _, _, heads in ptb_sample()[:50]]
        examples += real + [(tree, chain_dependents(tree, heads)) for tree, heads in real]
    joints = [tree_and_heads_to_joint_spans(tree, heads) for tree, heads in examples]
    sub_heads = sum(label == SUB_HEAD_LABEL for joint in joints for _, _, label in joint.spans)
    assert sub_heads >= (200 if PTB_SAMPLE.is_dir() else 4)
    names = {label for joint in joints for _, _, label in joint.spans} - {SUB_HEAD_LABEL}
    labels = ["", SUB_HEAD_LABEL] + sorted(names)
    assert ROOT_SPAN_LABEL in labels
    span_scores, arc_scores = gold_chart(joints, labels)
    lengths = np.array([len(joint.words) for joint in joints])
    spans, heads, scores = joint_span_decode(span_scores, arc_scores, lengths)
    for b, ((tree, gold_heads), joint) in enumerate(zip(examples, joints)):
        rows = binarize_joint_spans(len(joint.words), joint.spans, joint.heads)
        assert spans[b].tolist() == [[i, j, labels.index(label)] for i, j, label, _ in rows]
        assert heads[b].tolist() == gold_heads
        assert scores[b] == 10.0 * (len(joint.spans) + len(joint.words))
        assert joint_spans_to_tree_and_heads(
            joint.words, joint.tags, spans[b], heads[b], label_names=labels
        ) == (tree, gold_heads)
