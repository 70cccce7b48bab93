"""
Confidences beyond the span parser's marginals (`tests/models/test_span_confidences.py`): the
joint parser's (span marginals against enumeration, head and label probabilities against the
softmax), temperatures (the numbers of the chart divided by T, the same tree), tree
probabilities against enumeration, MBR decoding on hand-made marginals and through the model,
and the k-best trees through the predictor.
"""
import math

import pytest
import torch
from allennlp.common import Params
from allennlp.common.checks import ConfigurationError
from allennlp.data import DatasetReader, Vocabulary
from allennlp.models import Model

from lal_allennlp.predictors import ParserPredictor
from lal_allennlp.structs.confidence import mbr_trees
from tests.conftest import FIXTURES_ROOT, assert_plain_json, captured_charts
from tests.oracles.tree_enumeration import labelled_trees

WORDS = ("the", "dog", "barks", "loudly")
TAGS = ["DT", "NN", "VBZ", "RB"]


def _model(family: str, **settings) -> ParserPredictor:
    """An untrained model of `fixtures/<family>/experiment.jsonnet` over a small vocabulary,
    with `settings` over its config."""
    torch.manual_seed(3)
    vocab = Vocabulary()
    vocab.add_tokens_to_namespace(list(WORDS), "tokens")
    vocab.add_tokens_to_namespace(["NP", "S"] + (["<H>"] if family == "joint_parser" else []), "span_labels")
    vocab.add_tokens_to_namespace(TAGS, "pos_tags")
    vocab.add_tokens_to_namespace(["det", "nsubj", "root"], "dependency_labels")
    config = Params.from_file(str(FIXTURES_ROOT / family / "experiment.jsonnet"))
    params = config.pop("model")
    for key, value in settings.items():
        params[key] = value
    model = Model.from_params(vocab=vocab, params=params)
    model.eval()
    reader = DatasetReader.from_params(config.pop("dataset_reader"))
    return ParserPredictor(model, reader)


def _enumerate(scores, length: int, num_columns: int, temperature: float = 1.0):
    """Every tree of the CRF with its probability under the scores divided by `temperature`."""
    trees = list(labelled_trees(length, num_columns))
    weights = [math.exp(sum(scores[i][j][c] for (i, j), c in t) / temperature) for t in trees]
    total = sum(weights)
    return [(t, w / total) for t, w in zip(trees, weights)]


@pytest.fixture(scope="module")
def joint() -> ParserPredictor:
    return _model("joint_parser", span_loss="crf")


@pytest.mark.parametrize("temperatures", [None, {"spans": 2.5, "heads": 0.5, "dependency_labels": 3.0}])
def test_joint_confidences_are_the_model_s_probabilities(temperatures):
    predictor = _model("joint_parser", span_loss="crf", confidence_temperatures=temperatures)
    model = predictor._model
    t = model.confidence_temperatures
    charts = captured_charts(predictor)
    result = predictor.predict_json({"tokens": list(WORDS), "confidence": True})
    assert_plain_json(result)
    chart = charts[0]
    scores = chart.spans.scores[0].tolist()
    trees = _enumerate(scores, len(WORDS), chart.spans.scores.size(-1), t["spans"])
    labels = model.span_labels
    # span marginals against enumeration
    assert len(result["span_confidences"]) == len(result["spans"])
    for (i, j, label), confidence in zip(result["spans"], result["span_confidences"]):
        span = ((i, j), labels.column(label))
        expected = sum(p for tree, p in trees if span in tree)
        assert confidence == pytest.approx(expected, abs=1e-5)
    # heads: the softmax over each word's heads (not itself, not padding) divided by T
    logits = chart.arc_log_probs[0]
    heads = result["heads"]
    for w, head in enumerate(heads):
        allowed = [h for h in range(len(WORDS) + 1) if h != w + 1]
        row = torch.tensor([logits[w, h].item() / t["heads"] for h in allowed])
        expected = torch.softmax(row, 0)[allowed.index(head)].item()
        assert result["head_confidences"][w] == pytest.approx(expected, abs=1e-5)
    # labels: the label classifier's softmax at the decoded head divided by T
    head_tensor = torch.tensor([heads])
    label_logits = model._label_logits(chart.word_features, head_tensor)[0] / t["dependency_labels"]
    names = [model.vocab.get_token_from_index(int(i), "dependency_labels") for i in label_logits.argmax(-1)]
    assert names == result["dependency_labels"]
    expected_labels = torch.softmax(label_logits, -1).max(-1).values.tolist()
    assert result["dependency_label_confidences"] == pytest.approx(expected_labels, abs=1e-5)
    # the tree's probability: the CRF's of its constituency tree (with <H> spans) times the
    # heads' and labels'
    assert 0.0 < result["tree_probability"] <= 1.0
    all_confidences = result["span_confidences"] + result["head_confidences"] + expected_labels
    assert result["sentence_confidence"] == pytest.approx(
        sum(all_confidences) / len(all_confidences), abs=1e-6
    )


def test_the_tree_probability_of_a_span_parser_is_enumerated():
    for temperature in (1.0, 0.7):
        predictor = _model("lal_parser", confidence_temperatures={"spans": temperature})
        charts = captured_charts(predictor)
        result = predictor.predict_json({"tokens": list(WORDS), "confidence": True})
        scores = charts[0].scores[0].tolist()
        trees = _enumerate(scores, len(WORDS), charts[0].scores.size(-1), temperature)
        labels = predictor._model.span_labels
        predicted = {((i, j), labels.column(label)) for i, j, label in result["spans"]}
        # The tree of the output is the enumerated tree with exactly its labelled spans.
        matching = [p for tree, p in trees if {s for s in tree if s[1] != 0} == predicted]
        assert len(matching) == 1
        assert result["tree_probability"] == pytest.approx(matching[0], rel=1e-4)
        # The Viterbi tree is the most probable one, at every temperature.
        assert matching[0] == pytest.approx(max(p for _, p in trees), rel=1e-6)


def test_a_temperature_changes_the_numbers_not_the_parse():
    plain = _model("lal_parser").predict_json({"tokens": list(WORDS), "confidence": True})
    hot = _model("lal_parser", confidence_temperatures={"spans": 4.0}).predict_json(
        {"tokens": list(WORDS), "confidence": True}
    )
    assert plain["tree"] == hot["tree"]
    assert plain["span_confidences"] != pytest.approx(hot["span_confidences"], abs=1e-3)


def test_unknown_or_bad_temperatures_are_refused():
    with pytest.raises(ConfigurationError, match="no 'heads' for SpanConstituencyParser"):
        _model("lal_parser", confidence_temperatures={"heads": 2.0})
    with pytest.raises(ConfigurationError, match="must be a positive number, got 0"):
        _model("lal_parser", confidence_temperatures={"spans": 0})


def test_a_hinge_joint_model_gives_head_confidences_only():
    result = _model("joint_parser").predict_json({"tokens": list(WORDS), "confidence": True})
    assert "span_confidences" not in result
    assert len(result["head_confidences"]) == len(WORDS)


def _chart(cells, length: int, columns: int = 3) -> torch.Tensor:
    chart = torch.zeros(1, length + 1, length + 1, columns)
    for (i, j, c), value in cells.items():
        chart[0, i, j, c] = value
    return chart


def test_mbr_keeps_the_spans_more_likely_right_than_wrong():
    # Three words; marginals: (0, 2) NP 0.9, (1, 3) NP 0.6 (they cross), (0, 3) S 0.95,
    # word 2 NP 0.55.
    marginals = _chart({(0, 2, 1): 0.9, (1, 3, 1): 0.6, (0, 3, 2): 0.95, (2, 3, 1): 0.55}, 3)
    lengths = torch.tensor([3])
    (rows,) = mbr_trees(marginals, lengths, 0.5)
    # (0, 2) beats the crossing (1, 3): 0.4 against 0.1.
    assert sorted(map(tuple, rows.tolist())) == [(0, 2, 1), (0, 3, 2), (2, 3, 1)]
    (strict,) = mbr_trees(marginals, lengths, 0.58)
    assert sorted(map(tuple, strict.tolist())) == [(0, 2, 1), (0, 3, 2)]
    # Gain 0 (expected correct constituents alone): every span of a binary tree is labelled.
    (greedy,) = mbr_trees(marginals + 0.01, lengths, 0.0)
    assert len(greedy) == 2 * 3 - 1


def test_mbr_decoding_of_the_model_is_the_mbr_tree_of_its_marginals():
    from lal_allennlp.structs.confidence import marginals_and_log_partition

    predictor = _model("lal_parser", span_decoding="mbr", mbr_gain=0.3)
    charts = captured_charts(predictor)
    result = predictor.predict_json({"tokens": list(WORDS)})
    chart = charts[0]
    marginals, _ = marginals_and_log_partition(chart)
    scores = chart.scores[0].tolist()
    trees = _enumerate(scores, len(WORDS), chart.scores.size(-1))
    # The brute-force MBR tree: the n-ary tree maximising sum(marginal - gain).
    def gain_of(tree):
        return sum(marginals[0, i, j, c].item() - 0.3 for (i, j), c in tree if c != 0)

    best = max(trees, key=lambda tp: gain_of(tp[0]))[0]
    labels = predictor._model.span_labels
    assert {((i, j), labels.column(label)) for i, j, label in result["spans"]} == {
        s for s in best if s[1] != 0
    }
    with pytest.raises(ConfigurationError, match='span_decoding "mbr" .* span_loss: "crf"'):
        _model("lal_parser", span_decoding="mbr", span_loss="hinge")


def test_kbest_through_the_predictor():
    predictor = _model("lal_parser")
    charts = captured_charts(predictor)
    result = predictor.predict_json({"tokens": list(WORDS), "kbest": 5, "confidence": True})
    assert_plain_json(result)
    kbest = result["kbest"]
    assert len(kbest) == 5
    assert kbest[0]["tree"] == result["tree"]
    assert kbest[0]["probability"] == pytest.approx(result["tree_probability"], rel=1e-4)
    scores = [entry["score"] for entry in kbest]
    assert scores == sorted(scores, reverse=True)
    chart_scores = charts[0].scores[0].tolist()
    trees = _enumerate(chart_scores, len(WORDS), charts[0].scores.size(-1))
    best = sorted((p for _, p in trees), reverse=True)[:5]
    assert [entry["probability"] for entry in kbest] == pytest.approx(best, rel=1e-4)
    assert len({entry["tree"] for entry in kbest}) == 5
    for bad in (0, 101, "3", 2.5, True):
        with pytest.raises(ConfigurationError, match='"kbest" must be a whole number'):
            predictor.predict_json({"tokens": list(WORDS), "kbest": bad})
    joint = _model("joint_parser")
    with pytest.raises(ConfigurationError, match="JointSpanParser has none: leave it out"):
        joint.predict_json({"tokens": list(WORDS), "kbest": 2})
