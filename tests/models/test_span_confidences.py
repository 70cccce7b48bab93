"""
Span confidences (`"confidence": true`): through the predictor, each predicted span's number is
its labelled marginal under the tree CRF, checked by enumerating every tree over the model's
own chart; aligned with `spans`; refused for the hinge loss; per request within a batch; the
same through `Parser`.

`SpanChart.marginals` itself is checked against enumeration in `tests/structs/`; here the path
from a request to the output is.
"""
import math
from typing import List

import pytest
import torch
from allennlp.common import Params
from allennlp.common.checks import ConfigurationError
from allennlp.data import DatasetReader, Vocabulary
from allennlp.models import Model

from lal_allennlp import Parser
from lal_allennlp.predictors import ParserPredictor
from tests.conftest import FIXTURES_ROOT, assert_plain_json, captured_charts
from tests.oracles.tree_enumeration import labelled_trees

# Two labels, so that the chart has 3 columns and every tree of 4 words can be enumerated.
SPAN_LABELS = ("NP", "S")
WORDS = ("the", "dog", "barks", "loudly")


def _predictor(span_loss: str) -> ParserPredictor:
    """An untrained parser of `fixtures/span_parser/experiment.jsonnet` with `span_loss`, over
    a vocabulary of two span labels."""
    torch.manual_seed(7)
    vocab = Vocabulary()
    vocab.add_tokens_to_namespace(list(WORDS), "tokens")
    vocab.add_tokens_to_namespace(list(SPAN_LABELS), "span_labels")
    vocab.add_tokens_to_namespace(["DT", "NN", "VBZ", "RB"], "pos_tags")
    config = Params.from_file(str(FIXTURES_ROOT / "span_parser" / "experiment.jsonnet"))
    params = config.pop("model")
    params["span_loss"] = span_loss
    model = Model.from_params(vocab=vocab, params=params)
    model.eval()
    reader = DatasetReader.from_params(config.pop("dataset_reader"))
    return ParserPredictor(model, reader)


@pytest.fixture(scope="module")
def crf() -> ParserPredictor:
    return _predictor("crf")


def _enumerated_marginal(scores: List, length: int, span: tuple) -> float:
    """P(the labelled span `((i, j), column)` is in the tree), by summing over every tree."""
    total = inside = 0.0
    for tree in labelled_trees(length, len(SPAN_LABELS) + 1):
        weight = math.exp(sum(scores[i][j][c] for (i, j), c in tree))
        total += weight
        if span in tree:
            inside += weight
    return inside / total


def test_each_confidence_is_the_enumerated_labelled_marginal(crf):
    labels = crf._model.span_labels
    checked = 0
    for length in range(1, len(WORDS) + 1):
        charts = captured_charts(crf)
        try:
            result = crf.predict_json({"tokens": list(WORDS[:length]), "confidence": True})
        finally:
            del crf._model._chart
        scores = charts[0].scores[0].tolist()
        assert len(result["span_confidences"]) == len(result["spans"])
        for (start, end, label), confidence in zip(result["spans"], result["span_confidences"]):
            # One label per span: this vocabulary has no unary chains.
            span = ((start, end), labels.column(label))
            expected = _enumerated_marginal(scores, length, span)
            assert confidence == pytest.approx(expected, abs=1e-5)
            checked += 1
    assert checked >= 3


def test_confidence_is_the_labelled_not_the_unlabelled_marginal(crf):
    # With two labels, P(span with this label) < P(span with any label) for some span: the
    # numbers are per label.
    charts = captured_charts(crf)
    try:
        result = crf.predict_json({"tokens": list(WORDS), "confidence": True})
    finally:
        del crf._model._chart
    scores = charts[0].scores[0].tolist()
    labels = crf._model.span_labels
    gaps = []
    for (start, end, label), confidence in zip(result["spans"], result["span_confidences"]):
        any_label = sum(
            _enumerated_marginal(scores, len(WORDS), ((start, end), column))
            for column in range(1, len(SPAN_LABELS) + 1)
        )
        assert confidence <= any_label + 1e-6
        gaps.append(any_label - confidence)
    assert max(gaps) > 1e-3


def test_confidences_are_probabilities_aligned_with_spans(crf):
    result = crf.predict_json(
        {"sentence": "The old dog barks loudly at the cat in the park .", "confidence": True}
    )
    assert_plain_json(result)
    confidences = result["span_confidences"]
    assert len(confidences) == len(result["spans"]) > 1
    assert all(isinstance(c, float) and 0.0 < c <= 1.0 + 1e-6 for c in confidences)


def test_no_confidences_unless_asked(crf):
    result = crf.predict_json({"tokens": list(WORDS)})
    assert "span_confidences" not in result
    assert crf.predict_json({"tokens": list(WORDS), "confidence": False}) == result


def test_hinge_model_refuses_confidences():
    hinge = _predictor("hinge")
    with pytest.raises(ConfigurationError, match='span_loss: "crf"'):
        hinge.predict_json({"tokens": list(WORDS), "confidence": True})
    with pytest.raises(ConfigurationError, match='span_loss: "crf"'):
        Parser(hinge).parse(list(WORDS), confidence=True)
    # Without the request the hinge model parses as before.
    assert "span_confidences" not in hinge.predict_json({"tokens": list(WORDS)})


def test_requests_in_one_batch_do_not_interfere(crf):
    asked = {"sentence": "The dog barks loudly at the cat .", "confidence": True}
    plain = {"tokens": ["the", "dog", "barks"]}
    batch = crf.predict_batch_json([asked, plain, dict(asked, sentence="A dog barks .")])
    assert "span_confidences" not in batch[1]
    assert batch[1] == crf.predict_json(plain)
    for request, output in ((asked, batch[0]), (dict(asked, sentence="A dog barks ."), batch[2])):
        alone = crf.predict_json(request)
        assert output["spans"] == alone["spans"]
        assert output["span_confidences"] == pytest.approx(alone["span_confidences"], abs=1e-5)


def test_parser_passes_confidence(crf):
    parser = Parser(crf)
    expected = crf.predict_json({"tokens": list(WORDS), "confidence": True})
    result = parser.parse(list(WORDS), confidence=True)
    assert result.span_confidences == pytest.approx(expected["span_confidences"], abs=1e-6)
    assert parser.parse(list(WORDS)).span_confidences is None
    many = list(parser.parse_many([list(WORDS), "A dog barks ."], confidence=True))
    assert many[0].span_confidences == pytest.approx(expected["span_confidences"], abs=1e-5)
    assert len(many[1].span_confidences) == len(many[1].spans)
