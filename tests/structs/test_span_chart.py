"""
`SpanChart` and `JointSpanChart` against brute force: gold charts from padded gold spans, the
gold tree's score, marginals, the best tree and the hinge loss by enumerating every tree of a
few words; padding invariance of the losses.
"""
import itertools
import math

import pytest
import torch
from allennlp.data import Vocabulary

from lal_allennlp.structs import EMPTY, ChartLabels, JointSpanChart, SpanChart
from tests.oracles.tree_enumeration import binary_trees, labelled_trees


def random_chart(lengths, num_columns, seed, dtype=torch.float64):
    torch.manual_seed(seed)
    max_length = max(lengths)
    scores = torch.randn(len(lengths), max_length + 1, max_length + 1, num_columns, dtype=dtype)
    scores[..., EMPTY] = 0.0
    return SpanChart(scores, torch.tensor(lengths))


def test_gold_chart_places_each_labelled_span_and_ignores_padding():
    # Sentence 0: spans (0, 2) label 3 and (1, 2) label 0; sentence 1: one span and padding.
    gold_spans = torch.tensor([[[0, 1], [1, 1]], [[0, 2], [-1, -1]]])
    gold_labels = torch.tensor([[3, 0], [1, 0]])
    gold = SpanChart.gold(gold_spans, gold_labels, max_length=3)
    assert gold.shape == (2, 4, 4)
    assert {tuple(x) for x in gold.nonzero().tolist()} == {(0, 0, 2), (0, 1, 2), (1, 0, 3)}
    assert gold[0, 0, 2] == 4 and gold[0, 1, 2] == 1 and gold[1, 0, 3] == 2


def test_score_sums_the_gold_spans():
    chart = random_chart([3, 2], 4, seed=0)
    gold = torch.zeros(2, 4, 4, dtype=torch.long)
    gold[0, 0, 3], gold[0, 1, 3], gold[1, 0, 2] = 2, 3, 1
    s = chart.scores
    expected = [s[0, 0, 3, 2] + s[0, 1, 3, 3], s[1, 0, 2, 1]]
    assert chart.score(gold).tolist() == pytest.approx([e.item() for e in expected], abs=1e-12)


def tree_score(scores, tree):
    """The score of a tree of `((i, j), label)` on a chart given as nested lists."""
    return sum(scores[i][j][label] for (i, j), label in tree)


@pytest.mark.parametrize("length", [1, 2, 3, 4])
def test_marginals_equal_enumeration(length):
    chart = random_chart([length], 3, seed=length)
    marginals = chart.marginals()[0]
    expected = torch.zeros_like(marginals)
    total = 0.0
    scores = chart.scores[0].tolist()
    for tree in labelled_trees(length, 3):
        weight = math.exp(tree_score(scores, tree))
        total += weight
        for (i, j), label in tree:
            expected[i, j, label] += weight
    assert torch.allclose(marginals, expected / total, atol=1e-10)
    assert chart.log_partition.item() == pytest.approx(math.log(total), rel=1e-10)


@pytest.mark.parametrize("length", [1, 2, 3, 4])
def test_argmax_is_the_best_tree_by_enumeration(length):
    chart = random_chart([length], 3, seed=10 + length)
    scores = chart.scores[0].tolist()
    best = max(
        tree_score(scores, list(zip(spans, labels)))
        for spans, _ in binary_trees(0, length)
        for labels in itertools.product(range(3), repeat=len(spans))
    )
    _, decoded = chart.decode()
    assert decoded[0] == pytest.approx(best, rel=1e-6)
    constituents = chart.argmax()[0]
    assert all(column != EMPTY for _, _, column in constituents)
    assert sum(scores[i][j][c] for i, j, c in constituents) == pytest.approx(best, rel=1e-6)


@pytest.mark.parametrize("length", [2, 3, 4])
def test_hinge_loss_equals_enumeration(length):
    # max over labelled binary trees T of s(T) + (spans of T whose label differs from the
    # gold label of that span) - s(T*), at least 0.
    chart = random_chart([length], 3, seed=20 + length)
    scores = chart.scores[0].tolist()
    gold = torch.zeros(1, length + 1, length + 1, dtype=torch.long)
    gold[0, 0, length] = 1
    gold[0, 0, 1] = 2
    gold_labels = gold[0].tolist()
    augmented = max(
        sum(scores[i][j][l] + (l != gold_labels[i][j]) for (i, j), l in zip(spans, labels))
        for spans, _ in binary_trees(0, length)
        for labels in itertools.product(range(3), repeat=len(spans))
    )
    gold_score = scores[0][length][1] + scores[0][1][2]
    expected = max(0.0, augmented - gold_score)
    assert chart.hinge_loss(gold).item() == pytest.approx(expected, rel=1e-6)


@pytest.mark.parametrize("loss", ["hinge_loss", "crf_loss"])
def test_losses_are_invariant_to_padding(loss):
    lengths = [5, 2, 7]
    batch = random_chart(lengths, 4, seed=3)
    gold = torch.zeros(3, 8, 8, dtype=torch.long)
    for b, n in enumerate(lengths):
        gold[b, 0, n] = 1 + b % 3
    per_sentence = []
    for b, n in enumerate(lengths):
        single = SpanChart(batch.scores[b : b + 1, : n + 1, : n + 1].clone(), torch.tensor([n]))
        per_sentence.append(getattr(single, loss)(gold[b : b + 1, : n + 1, : n + 1]).item())
    # Garbage beyond each sentence's length must not matter.
    for b, n in enumerate(lengths):
        batch.scores[b, n + 1 :, :, 1:] = 1e3
        batch.scores[b, :, n + 1 :, 1:] = 1e3
    assert getattr(batch, loss)(gold).item() == pytest.approx(sum(per_sentence) / 3, rel=1e-9)


def test_chart_labels_name_columns_and_empty():
    vocab = Vocabulary()
    vocab.add_tokens_to_namespace(["NP", "S+VP"], "span_labels")
    labels = ChartLabels(vocab)
    assert len(labels) == 3
    assert [labels.name(c) for c in range(3)] == ["", "NP", "S+VP"]
    assert labels.column("S+VP") == 2 and labels.column("VP") is None
    assert labels.columns(torch.tensor([0, 1])).tolist() == [1, 2]


def test_joint_arc_loss_is_the_mean_negative_log_likelihood_of_the_gold_heads():
    torch.manual_seed(0)
    arcs = torch.randn(2, 3, 4).log_softmax(-1)
    mask = torch.tensor([[True, True, True], [True, True, False]])
    heads = torch.tensor([[2, 0, 2], [0, 1, 0]])
    joint = JointSpanChart(random_chart([3, 2], 3, seed=1), arcs, [0, -1, 1, 2], 0.5)
    expected = -(arcs[0, 0, 2] + arcs[0, 1, 0] + arcs[0, 2, 2] + arcs[1, 0, 0] + arcs[1, 1, 1]) / 5
    assert joint.arc_loss(heads, mask).item() == pytest.approx(expected.item())


# On a GPU the decodes reduce the label axis before the numba decoders (`reduce_labels`): the
# trees, labels, heads and scores must be those of the decoders run on every label's score.


def _tied_chart(batch, fences, labels, seed, dtype=torch.float32):
    """Scores from a few integers (many exact ties between labels and between trees), the
    empty column at 0 as the scorer makes it."""
    generator = torch.Generator().manual_seed(seed)
    scores = torch.randint(-3, 3, (batch, fences, fences, labels), generator=generator)
    scores = scores.to(dtype) * 0.75
    scores[..., EMPTY] = 0
    return scores


@pytest.mark.parametrize("seed", range(6))
def test_cky_decode_of_reduced_labels_equals_the_full_chart(seed):
    from lal_allennlp.decoding import cky_decode

    scores = _tied_chart(5, 10, 7, seed)
    lengths = torch.tensor([9, 1, 4, 7, 2])
    spans, totals = SpanChart(scores, lengths).decode(reduce_labels=True)
    expected, expected_totals = cky_decode(scores.numpy(), lengths.numpy())
    assert [s.tolist() for s in spans] == [s.tolist() for s in expected]
    assert totals.tolist() == expected_totals.tolist()


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("sub_head", [True, False])
@pytest.mark.parametrize("weight", [0.5, 0.3])
def test_joint_decode_of_reduced_labels_equals_the_full_chart(seed, sub_head, weight):
    """Also with `<H>` missing from the vocabulary (its decoder label scored -inf), a lambda
    whose products round (0.3), and half-precision scores as autocast gives them."""
    from lal_allennlp.structs.joint_span_chart import MISSING

    batch, fences, labels = 4, 9, 6
    scores = _tied_chart(batch, fences, labels, seed, torch.float16 if seed % 2 else torch.float32)
    lengths = torch.tensor([8, 1, 5, 3])
    phrases = [c for c in range(1, labels) if c != 3 or not sub_head]
    columns = [0, 3 if sub_head else MISSING] + phrases
    generator = torch.Generator().manual_seed(100 + seed)
    arc_logits = torch.randint(-2, 2, (batch, fences - 1, fences), generator=generator).float()
    arc_log_probs = torch.log_softmax(arc_logits, dim=-1)
    chart = JointSpanChart(SpanChart(scores, lengths), arc_log_probs, columns, weight)
    spans, heads = chart.decode(reduce_labels=True)
    expected, expected_heads = chart.decode(reduce_labels=False)  # every label's score
    assert [s.tolist() for s in spans] == [s.tolist() for s in expected]
    assert [h.tolist() for h in heads] == [h.tolist() for h in expected_heads]


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
@pytest.mark.parametrize("seed", range(3))
def test_decodes_on_a_gpu_reduce_labels_there_and_equal_the_cpu_decodes(seed):
    """On a GPU the default decodes take the reduced path; trees, labels and heads are those
    of the CPU's full-chart decodes of the same scores."""
    scores = _tied_chart(4, 9, 6, seed, torch.float16)
    lengths = torch.tensor([8, 1, 5, 3])
    generator = torch.Generator().manual_seed(100 + seed)
    arc_log_probs = torch.log_softmax(torch.randn(4, 8, 9, generator=generator), dim=-1)
    columns = [0, 3, 1, 2, 4, 5]

    def decodes(device):
        on = SpanChart(scores.to(device), lengths.to(device))
        joint = JointSpanChart(on, arc_log_probs.to(device), columns, 0.5)
        spans, _ = on.decode()
        joint_spans, heads = joint.decode()
        return (
            [s.tolist() for s in spans],
            [s.tolist() for s in joint_spans],
            [h.tolist() for h in heads],
        )

    assert decodes("cuda") == decodes("cpu")
