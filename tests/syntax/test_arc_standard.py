import random

import pytest

from lal_allennlp.syntax.arc_standard import (
    LEFT_ARC,
    RIGHT_ARC,
    SHIFT,
    Configuration,
    NonProjectiveError,
    follow,
    is_projective,
    oracle,
    parse_transition_name,
    transition_name,
)
from lal_allennlp.syntax.dependencies import read_dependencies
from tests.conftest import SHARED_DATA

EWT_TRAIN = SHARED_DATA / "ud" / "en_ewt" / "en_ewt-ud-train.conllu"


def test_oracle_of_a_hand_checked_sentence():
    # The cat sat .  (cat <- The, sat <- cat, sat -> ., root -> sat)
    transitions = oracle([2, 3, 0, 3], ["det", "nsubj", "root", "punct"])
    assert transitions == [
        (SHIFT, None),
        (SHIFT, None),
        (LEFT_ARC, "det"),
        (SHIFT, None),
        (LEFT_ARC, "nsubj"),
        (SHIFT, None),
        (RIGHT_ARC, "punct"),
        (RIGHT_ARC, "root"),
    ]
    assert [transition_name(*t) for t in transitions[2:4]] == ["LEFT-ARC:det", "SHIFT"]
    configuration = follow(4, transitions)
    assert configuration.is_terminal
    assert configuration.heads[1:] == [2, 3, 0, 3]
    assert configuration.labels[1:] == ["det", "nsubj", "root", "punct"]


def test_transition_names_round_trip_labels_with_colons():
    for transition in [(SHIFT, None), (LEFT_ARC, "nmod:poss"), (RIGHT_ARC, "root")]:
        assert parse_transition_name(transition_name(*transition)) == transition
    with pytest.raises(ValueError, match="not a transition name"):
        parse_transition_name("SWAP")


def test_crossing_arcs_and_two_roots_have_no_derivation():
    # word 1 <- 3 and word 2 <- 4 cross
    assert not is_projective([3, 4, 0, 3])
    with pytest.raises(NonProjectiveError, match="not projective"):
        oracle([3, 4, 0, 3])
    with pytest.raises(NonProjectiveError, match="more than one root"):
        oracle([0, 0])


def test_legality_keeps_the_root_to_one_dependent():
    configuration = Configuration(2)
    assert not configuration.is_legal(LEFT_ARC) and not configuration.is_legal(RIGHT_ARC)
    configuration.apply(SHIFT)
    # One word on the stack, words left in the buffer: attaching it to the root now would
    # leave the next word without a possible head.
    assert not configuration.is_legal(RIGHT_ARC) and not configuration.is_legal(LEFT_ARC)
    with pytest.raises(ValueError, match="not legal"):
        configuration.apply(RIGHT_ARC, "root")
    configuration.apply(SHIFT)
    assert not configuration.is_legal(SHIFT)
    configuration.apply(LEFT_ARC, "nsubj")
    assert configuration.is_legal(RIGHT_ARC)
    configuration.apply(RIGHT_ARC, "root")
    assert configuration.is_terminal and configuration.heads[1:] == [2, 0]


def _random_tree(n, rng):
    """A uniformly chosen head per word until the heads form a tree with one root."""
    while True:
        heads = [rng.randrange(0, n + 1) for _ in range(n)]
        if heads.count(0) != 1 or any(h == i + 1 for i, h in enumerate(heads)):
            continue
        reaches_root = True
        for start in range(1, n + 1):
            word, steps = start, 0
            while word != 0 and steps <= n:
                word, steps = heads[word - 1], steps + 1
            reaches_root &= word == 0
        if reaches_root:
            return heads


def test_oracle_builds_exactly_the_projective_trees_on_random_trees():
    rng = random.Random(0)
    projective = 0
    for _ in range(2000):
        n = rng.randrange(1, 8)
        heads = _random_tree(n, rng)
        labels = [f"l{rng.randrange(3)}" for _ in heads]
        if is_projective(heads):
            projective += 1
            transitions = oracle(heads, labels)
            assert len(transitions) == 2 * n
            configuration = follow(n, transitions)
            assert configuration.heads[1:] == heads and configuration.labels[1:] == labels
        else:
            with pytest.raises(NonProjectiveError):
                oracle(heads, labels)
    assert 200 < projective < 2000  # both kinds were tried


def test_random_legal_transitions_always_end_in_a_projective_tree_with_one_root():
    rng = random.Random(1)
    for _ in range(500):
        n = rng.randrange(1, 10)
        configuration = Configuration(n)
        steps = 0
        while not configuration.is_terminal:
            legal = [a for a in (SHIFT, LEFT_ARC, RIGHT_ARC) if configuration.is_legal(a)]
            configuration.apply(rng.choice(legal), "x")
            steps += 1
        heads = configuration.heads[1:]
        assert steps == 2 * n
        assert heads.count(0) == 1 and is_projective(heads)


@pytest.mark.skipif(not EWT_TRAIN.exists(), reason="needs ../shared/data")
def test_oracle_reproduces_every_projective_ewt_training_tree():
    reproduced = non_projective = 0
    for sentence, _ in read_dependencies(EWT_TRAIN):
        if not is_projective(sentence.heads) or sentence.heads.count(0) != 1:
            with pytest.raises(NonProjectiveError):
                oracle(sentence.heads, sentence.labels)
            non_projective += 1
            continue
        configuration = follow(len(sentence.words), oracle(sentence.heads, sentence.labels))
        assert configuration.heads[1:] == sentence.heads
        assert configuration.labels[1:] == sentence.labels
        reproduced += 1
    assert (reproduced, non_projective) == (12256, 288)
