"""Tree induction from link probabilities, the baselines and the unlabelled bracket scores of
`lal_allennlp.syntax.unsupervised`, on hand-checked cases."""
import itertools
import random

import pytest
from nltk import Tree

from lal_allennlp.syntax.trees import tree_to_string
from lal_allennlp.syntax.unsupervised import (
    UnlabelledBracketScore,
    balanced_spans,
    baseline_scores,
    gold_unlabelled_spans,
    induce_spans,
    induce_tree,
    kept_word_mask,
    left_branching_spans,
    mean_and_std,
    project_spans,
    random_spans,
    right_branching_spans,
    spans_to_unlabelled_tree,
    unlabelled_spans,
)

ZEROS4 = [0.0, 0.0, 0.0, 0.0]


def _laminar(spans) -> bool:
    """No two spans cross."""
    return all(
        a_end <= b_start or b_end <= a_start or (a_start <= b_start and b_end <= a_end)
        or (b_start <= a_start and a_end <= b_end)
        for (a_start, a_end), (b_start, b_end) in itertools.combinations(spans, 2)
    )


# induce_spans / induce_tree -------------------------------------------------------------------


def test_a_tight_part_is_parsed_one_layer_down():
    # Links k: a-b, b-c, c-d, d-e; layers 0 .. 3, min_layer 2 (layers 0 and 1 are never used:
    # their zero links would split everything).
    links = [
        ZEROS4,
        ZEROS4,
        [0.75, 0.30, 0.05, 0.90],  # layer 2
        [0.75, 0.78, 0.10, 0.90],  # layer 3 (top)
    ]
    # Top, layer 3: weakest link c-d (0.10) -> (a b c) (d e). The part (a b c) has links
    # 0.75 and 0.78 at layer 3, both above 0.7: parsed at layer 2, whose weakest link b-c
    # (0.30) splits it into (a b) c. Parsed at layer 3 instead, it would split at a-b and give
    # a (b c).
    assert induce_spans(links) == {(0, 5), (0, 3), (0, 2), (3, 5)}
    tree = induce_tree("a b c d e".split(), links)
    assert tree_to_string(tree) == "(X (X (X a b) c) (X d e))"


def test_a_loose_part_is_parsed_at_the_same_layer():
    # Links k0 .. k4 over a b c d e f.
    links = [
        [0.0] * 5,
        [0.0] * 5,
        [0.30, 0.10, 0.04, 0.95, 0.30],  # layer 2
        [0.30, 0.20, 0.90, 0.95, 0.50],  # layer 3 (top)
    ]
    # Top: weakest b-c (0.20) -> (a b) (c d e f). The part (c d e f) has a link of 0.50 at
    # layer 3 (not above 0.7): parsed at layer 3, weakest e-f (0.50) -> (c d e) f. (At layer 2
    # its weakest link would be c-d, giving c (d e f).) (c d e) has links 0.90 and 0.95 at
    # layer 3: parsed at layer 2, weakest c-d (0.04) -> c (d e).
    assert induce_spans(links) == {(0, 6), (0, 2), (2, 6), (2, 5), (3, 5)}
    tree = induce_tree("a b c d e f".split(), links)
    assert tree_to_string(tree) == "(X (X a b) (X (X c (X d e)) f))"


def test_strong_links_move_down_a_layer_then_give_a_flat_span_at_min_layer():
    links = [
        [0.00, 0.00, 0.00, 0.00],  # layer 0, below min_layer = 1: never used
        [0.85, 0.20, 0.90, 0.95],  # layer 1
        [0.90, 0.85, 0.95, 0.99],  # layer 2 (top)
    ]
    # Top: weakest link 0.85 > 0.8, so layer 1 parses the sentence: weakest b-c (0.20) ->
    # (a b) (c d e). (c d e): links 0.90, 0.95 > 0.7 -> layer max(0, 1) = 1, where its weakest
    # link 0.90 > 0.8 at min_layer: flat.
    assert induce_spans(links, min_layer=1) == {(0, 5), (0, 2), (2, 5)}
    assert tree_to_string(induce_tree("a b c d e".split(), links, min_layer=1)) == (
        "(X (X a b) (X c d e))"
    )
    # With min_layer 0 the zero links of layer 0 split (c d e) at its first link: c (d e).
    assert induce_spans(links, min_layer=0) == {(0, 5), (0, 2), (2, 5), (3, 5)}


def test_thresholds_are_arguments():
    links = [[0.90, 0.85, 0.95, 0.99]] * 3
    # Every link is above 0.8 at every layer: one flat bracket.
    assert induce_spans(links) == {(0, 5)}
    # Above a split threshold of 0.99 nothing holds together: weakest 0.85 at b-c, then a b
    # (links 0.90 > 0.7, next layer) and c d e (split at c-d, 0.95) -> c (d e).
    assert induce_spans(links, split_threshold=0.99) == {(0, 5), (0, 2), (2, 5), (3, 5)}


def test_with_min_layer_layers_or_fewer_only_the_top_layer_is_used():
    # 2 layers, min_layer 2: the lowest layer used is 2 - 1 = 1, the top one.
    links = [[0.0, 0.0, 0.0], [0.9, 0.9, 0.9]]
    assert induce_spans(links) == {(0, 4)}


def test_ties_split_at_the_first_weakest_link():
    links = [[0.3, 0.3, 0.9]] * 3
    # Split after a, then (b c d) has a link of 0.3 (not above 0.7): same layer, split after b.
    assert induce_spans(links) == {(0, 4), (1, 4), (2, 4)}


def test_short_sentences():
    assert induce_spans([[]] * 3) == set()
    assert induce_spans([[0.1]] * 3) == {(0, 2)}
    assert tree_to_string(induce_tree(["word"], [[]] * 3)) == "(X word)"
    assert tree_to_string(induce_tree(["a", "b"], [[0.1]] * 3)) == "(X a b)"


def test_malformed_link_probabilities_are_refused():
    with pytest.raises(ValueError, match="no layers"):
        induce_spans([])
    with pytest.raises(ValueError, match="different lengths"):
        induce_spans([[0.1, 0.2], [0.1]])
    with pytest.raises(ValueError, match="3 words need 2 links"):
        induce_tree(["a", "b", "c"], [[0.1]])


# Trees and spans ------------------------------------------------------------------------------


def test_spans_to_tree_and_back():
    words = "the cat sat down".split()
    tree = spans_to_unlabelled_tree(words, {(0, 2), (2, 4), (3, 4)})
    assert tree == Tree("X", [Tree("X", ["the", "cat"]), Tree("X", ["sat", "down"])])
    assert unlabelled_spans(tree) == {(0, 4), (0, 2), (2, 4)}
    # The root is always the whole sentence; nested and flat spans.
    tree = spans_to_unlabelled_tree("a b c d e f".split(), {(1, 5), (2, 4)})
    assert tree_to_string(tree) == "(X a (X b (X c d) e) f)"
    assert unlabelled_spans(tree) == {(0, 6), (1, 5), (2, 4)}


def test_spans_that_cannot_make_a_tree_are_refused():
    with pytest.raises(ValueError, match="cross"):
        spans_to_unlabelled_tree("a b c d".split(), {(0, 2), (1, 3)})
    with pytest.raises(ValueError, match="not inside"):
        spans_to_unlabelled_tree("a b".split(), {(0, 3)})
    with pytest.raises(ValueError, match="no words"):
        spans_to_unlabelled_tree([], set())


def test_unlabelled_spans_of_a_labelled_tree_ignore_labels_and_preterminals():
    tree = Tree.fromstring("(S (NP (DT The) (NN cat)) (VP (VBD sat) (ADVP (RB down))))")
    assert unlabelled_spans(tree) == {(0, 4), (0, 2), (2, 4)}


def test_induced_trees_round_trip_through_spans():
    rng = random.Random(7)
    for n in range(1, 12):
        for _ in range(20):
            # Links that grow with depth, as the Tree Transformer's do.
            layers = [[rng.random() for _ in range(n - 1)]]
            for _ in range(5):
                layers.append([min(1.0, p + rng.random() * 0.3) for p in layers[-1]])
            words = [f"w{i}" for i in range(n)]
            spans = induce_spans(layers)
            assert _laminar(spans)
            assert unlabelled_spans(induce_tree(words, layers)) == spans


def test_project_spans_keeps_the_words_a_span_covers():
    # Words: `` The cat , sat . ; kept: The cat sat.
    keep = [False, True, True, False, True, False]
    spans = {(0, 6), (0, 3), (1, 4), (3, 6), (4, 6), (2, 4)}
    # (0, 6) -> all 3; (0, 3) -> The cat; (1, 4) -> The cat; (3, 6) -> sat (dropped);
    # (4, 6) -> sat (dropped); (2, 4) -> cat (dropped).
    assert project_spans(spans, keep) == {(0, 3), (0, 2)}


# Baselines ------------------------------------------------------------------------------------


def test_baselines_for_short_sentences():
    expected = {
        1: (set(), set(), set()),
        2: ({(0, 2)}, {(0, 2)}, {(0, 2)}),
        3: ({(0, 3), (1, 3)}, {(0, 3), (0, 2)}, {(0, 3), (0, 2)}),
        4: ({(0, 4), (1, 4), (2, 4)}, {(0, 4), (0, 3), (0, 2)}, {(0, 4), (0, 2), (2, 4)}),
        5: (
            {(0, 5), (1, 5), (2, 5), (3, 5)},
            {(0, 5), (0, 4), (0, 3), (0, 2)},
            {(0, 5), (0, 3), (0, 2), (3, 5)},
        ),
    }
    for n, (right, left, balanced) in expected.items():
        assert right_branching_spans(n) == right, n
        assert left_branching_spans(n) == left, n
        assert balanced_spans(n) == balanced, n


def test_random_spans_are_binary_bracketings():
    seen_for_three = set()
    for seed in range(200):
        rng = random.Random(seed)
        for n in range(1, 13):
            spans = random_spans(n, rng)
            if n == 1:
                assert spans == set()
                continue
            # A binary tree over n words has n - 1 constituents, the root included.
            assert len(spans) == n - 1
            assert (0, n) in spans
            assert all(0 <= start and end - start >= 2 and end <= n for start, end in spans)
            assert _laminar(spans)
            if n == 3:
                seen_for_three.add(frozenset(spans))
    # Both trees of three words are drawn.
    assert seen_for_three == {frozenset({(0, 3), (0, 2)}), frozenset({(0, 3), (1, 3)})}
    assert random_spans(10, random.Random(3)) == random_spans(10, random.Random(3))


# Gold spans and scores ------------------------------------------------------------------------

GOLD_PTB = (
    "( (S (`` ``) (NP-SBJ (NP (NP (DT The) (JJ big) (NN cat))) (, ,)) "
    "(VP (VBD sat) (ADVP (RB down)) (NP (-NONE- *T*-1))) (. .)) )"
)


def test_gold_spans_without_punctuation():
    tree = Tree.fromstring(GOLD_PTB)
    words, spans = gold_unlabelled_spans(tree)
    assert words == ["The", "big", "cat", "sat", "down"]
    # NP-SBJ loses its comma and gives the span of the NP chain, once; VP loses its trace;
    # ADVP covers one word; S and the unlabelled root give the whole sentence.
    assert spans == {(0, 3), (3, 5), (0, 5)}
    assert kept_word_mask(tree) == [False, True, True, True, False, True, True, False]
    # Keeping punctuation: `` The big cat , sat down .
    words, spans = gold_unlabelled_spans(tree, punctuation_tags=())
    assert len(words) == 8
    assert spans == {(0, 8), (1, 5), (1, 4), (5, 7)}


def test_sentence_f1_rules_for_empty_brackets():
    score = UnlabelledBracketScore()
    # Two words: only the whole sentence, left out of both sides -> P = R = 1.
    assert score.add({(0, 2)}, {(0, 2)}, 2) == 1.0
    assert score.add(set(), set(), 1) == 1.0
    # No gold bracket but one predicted: R = 1, P = 0 -> F1 0.
    assert score.add({(0, 3), (0, 2)}, {(0, 3)}, 3) == 0.0
    # Gold brackets but nothing predicted: P = R = 0 -> F1 0.
    assert score.add({(0, 3), (1, 2)}, {(0, 3), (0, 2)}, 3) == 0.0
    assert score.sentences == 4
    assert score.sentence_f1 == 0.5
    assert (score.matched, score.predicted, score.gold) == (0, 1, 1)


def test_sentence_and_corpus_f1_on_three_sentences():
    sentences = [
        # gold (0,3) (3,5) (1,3); predicted (0,2) (0,3) (3,5): 2 matched, P = R = F1 = 2/3.
        ({(0, 5), (0, 2), (0, 3), (3, 5)}, {(0, 5), (0, 3), (3, 5), (1, 3)}, 5),
        # gold (0,2) (2,4); predicted (2,4): 1 matched, P = 1, R = 1/2, F1 = 2/3.
        ({(0, 4), (2, 4)}, {(0, 4), (0, 2), (2, 4)}, 4),
        # nothing but the whole sentence on either side: F1 = 1.
        ({(0, 2)}, {(0, 2)}, 2),
    ]
    score = UnlabelledBracketScore()
    f1s = [score.add(*sentence) for sentence in sentences]
    assert f1s == pytest.approx([2 / 3, 2 / 3, 1.0])
    # Sentence F1: (2/3 + 2/3 + 1) / 3 = 7/9. Corpus: 3 matched, 4 predicted, 5 gold:
    # P = 3/4, R = 3/5, F1 = 2 * 9/20 / (27/20) = 2/3.
    assert score.as_dict() == pytest.approx(
        {"sentence_f1": 7 / 9, "corpus_precision": 3 / 4, "corpus_recall": 3 / 5,
         "corpus_f1": 2 / 3}
    )
    # Scores add up: two parts give the score of the whole.
    first, second = UnlabelledBracketScore(), UnlabelledBracketScore()
    first.add(*sentences[0])
    for sentence in sentences[1:]:
        second.add(*sentence)
    assert (first + second).as_dict() == pytest.approx(score.as_dict())
    assert UnlabelledBracketScore.from_list(score.to_list()) == score
    assert UnlabelledBracketScore().as_dict() == {
        "sentence_f1": 0.0, "corpus_f1": 0.0, "corpus_precision": 0.0, "corpus_recall": 0.0
    }


def test_baseline_scores_on_three_sentences():
    gold = [(5, {(0, 5), (0, 3), (3, 5), (1, 3)}), (4, {(0, 4), (0, 2), (2, 4)}), (2, {(0, 2)})]
    scores = baseline_scores(gold, seeds=(0, 1, 2))
    # Right: (1,5) (2,5) (3,5) -> 1 of 3 matched; (1,4) (2,4) -> 1 of 2; the 2-word sentence 1.
    # Sentence F1 (1/3 + 1/2 + 1) / 3 = 11/18; corpus 2 matched of 5 predicted, 5 gold.
    right = scores["right_branching"][0]
    assert (right.sentence_f1, right.corpus_f1) == pytest.approx((11 / 18, 2 / 5))
    # Left: (0,2) (0,3) (0,4) -> 1 of 3; (0,2) (0,3) -> 1 of 2: the same numbers.
    left = scores["left_branching"][0]
    assert (left.sentence_f1, left.corpus_f1) == pytest.approx((11 / 18, 2 / 5))
    # Balanced: (0,3) (0,2) (3,5) -> 2 of 3; (0,2) (2,4) -> 2 of 2: (2/3 + 1 + 1) / 3 = 8/9;
    # corpus 4 of 5 both ways.
    balanced = scores["balanced"][0]
    assert (balanced.sentence_f1, balanced.corpus_f1) == pytest.approx((8 / 9, 4 / 5))
    assert len(scores["random"]) == 3
    assert all(score.sentences == 3 for score in scores["random"])
    mean, std = mean_and_std(scores["random"])["sentence_f1"]
    values = [score.sentence_f1 for score in scores["random"]]
    assert mean == pytest.approx(sum(values) / 3)
    assert std >= 0.0
    assert mean_and_std([balanced])["corpus_f1"] == (pytest.approx(4 / 5), 0.0)


def test_raw_text_punctuation_is_what_the_treebank_tags_as_punctuation():
    from lal_allennlp.syntax.tokenizer import ptb_tokenize
    from lal_allennlp.syntax.unsupervised import is_punctuation_word

    words = ptb_tokenize('Mr. Smith (the chairman) said "no" -- {x} [y] ... $5 at 5% & co.')
    assert [w for w in words if not is_punctuation_word(w)] == [
        "Mr.", "Smith", "the", "chairman", "said", "no", "x", "y", "5", "at", "5", "%", "&", "co",
    ]
    assert not is_punctuation_word("")
