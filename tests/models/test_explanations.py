"""Label attention explanations: exact against a per-span, per-head loop; rendered pictures."""
import numpy as np
import pytest
import torch
from allennlp.common import Params
from allennlp.data import DatasetReader, Vocabulary
from allennlp.models import Model

from lal_allennlp.commands.explain import render_html, render_png
from lal_allennlp.models.explanations import head_contributions
from lal_allennlp.modules import fencepost_span_features
from lal_allennlp.predictors import ParserPredictor
from tests.conftest import FIXTURES_ROOT, assert_plain_json

NUM_HEADS = 4


def _predictor(use_feed_forward: bool) -> ParserPredictor:
    torch.manual_seed(1)
    reader = DatasetReader.from_params(Params({"type": "lal_ptb"}))
    instances = list(reader.read(str(FIXTURES_ROOT / "ptb" / "train")))
    vocab = Vocabulary.from_instances(instances)
    params = Params(
        {
            "type": "lal_span_parser",
            "text_field_embedder": {"token_embedders": {"tokens": {"type": "embedding", "embedding_dim": 16}}},
            "encoder": {
                "type": "lal_stack",
                "input_dim": 16,
                "self_attention": {"d_model": 32, "num_layers": 1, "num_heads": 2, "d_kv": 8, "d_ff": 32},
                "label_attention": {
                    "num_heads": NUM_HEADS, "d_kv": 8, "d_proj": 8,
                    "use_feed_forward": use_feed_forward, "d_ff": 32,
                },
            },
            "span_hidden_dim": 16,
        }
    )
    model = Model.from_params(vocab=vocab, params=params)
    model.eval()
    return ParserPredictor(model, reader)


@pytest.fixture(scope="module")
def predictor() -> ParserPredictor:
    return _predictor(use_feed_forward=False)


def test_explanations_are_distributions(predictor):
    result = predictor.predict_json({"sentence": "The old man saw a dog in the park.", "explain": True})
    assert_plain_json(result)
    words = result["words"]
    attention = np.asarray(result["label_attention"])
    assert attention.shape == (NUM_HEADS, len(words) + 2)
    np.testing.assert_allclose(attention.sum(axis=1), 1.0, atol=1e-5)
    contributions = np.asarray(result["span_contributions"])
    assert contributions.shape == (len(result["spans"]), NUM_HEADS)
    np.testing.assert_allclose(contributions.sum(axis=1), 1.0, atol=1e-5)
    assert (contributions >= 0).all()
    assert result["explanation_note"].startswith("exact")


def test_no_explanations_unless_asked(predictor):
    result = predictor.predict_json({"sentence": "The old man saw a dog."})
    assert "label_attention" not in result and "span_contributions" not in result
    batch = predictor.predict_batch_json(
        [{"sentence": "A dog barked.", "explain": True}, {"sentence": "A cat slept."}]
    )
    assert "span_contributions" in batch[0] and "span_contributions" not in batch[1]
    assert batch[1] == predictor.predict_json({"sentence": "A cat slept."})


def test_feed_forward_makes_contributions_approximate():
    result = _predictor(use_feed_forward=True).predict_json({"tokens": ["Dogs", "bark", "."], "explain": True})
    assert result["explanation_note"].startswith("approximate")


def test_vectorised_contributions_equal_a_loop_over_spans_and_heads():
    torch.manual_seed(0)
    encoded = torch.randn(2, 7, NUM_HEADS * 6)
    spans = [(0, 0, 5), (0, 1, 3), (1, 2, 4), (1, 0, 1)]
    b, i, j = (torch.tensor(x) for x in zip(*spans))
    from lal_allennlp.modules import fencepost_features

    fast = head_contributions(fencepost_features(encoded, NUM_HEADS), b, i, j, NUM_HEADS)
    for row, (sentence, start, end) in enumerate(spans):
        vector = fencepost_span_features(
            encoded[sentence : sentence + 1], torch.tensor([start]), torch.tensor([end]), NUM_HEADS
        )[0, 0]
        norms = [vector[h * 6 : (h + 1) * 6].norm().item() for h in range(NUM_HEADS)]
        expected = [n / sum(norms) for n in norms]
        np.testing.assert_allclose(fast[row].numpy(), expected, rtol=1e-5)


def test_pictures_render(predictor, tmp_path):
    result = predictor.predict_json({"sentence": "Prices rose sharply in May.", "explain": True})
    png = render_png(result)
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 5000
    page = render_html(result, png)
    assert page.startswith("<!DOCTYPE html>") and "data:image/png;base64," in page
    assert "Prices" in page


def test_explanations_travel_with_the_request_not_the_model(predictor):
    # Two threads share one model; one asks for explanations on every call, the other never
    # does. Each gets what it asked for, because the switch is a field of its own instances.
    import threading

    model_state = dict(vars(predictor._model))
    results = {"explained": [], "plain": []}

    def ask(explain: bool, key: str) -> None:
        for _ in range(5):
            result = predictor.predict_json({"sentence": "A dog barked loudly.", "explain": explain})
            results[key].append("span_contributions" in result)

    threads = [
        threading.Thread(target=ask, args=(True, "explained")),
        threading.Thread(target=ask, args=(False, "plain")),
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert results == {"explained": [True] * 5, "plain": [False] * 5}
    assert set(vars(predictor._model)) == set(model_state)
    assert not hasattr(predictor._model, "explain")
