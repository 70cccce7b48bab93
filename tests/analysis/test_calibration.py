"""
Calibration: temperatures recovered on synthetic scores with a known temperature (every
objective), ECE and Spearman on hand-checked cases, and `lal-analyze calibrate` end to end on
a fixture archive (the temperatures land in the archive's config and in the loaded model).
"""
import json
import tarfile

import numpy as np
import pytest
import torch

from lal_allennlp.analysis.calibration import (
    Reliability,
    ece_of,
    fit_temperature,
    fit_temperature_on_grid,
    output_softmax_bce,
    output_softmax_probabilities,
    softmax_nll,
    spearman,
)
from lal_allennlp.commands.analyze import main as analyze


def _synthetic(temperature: float, items: int = 20000, classes: int = 6, seed: int = 0):
    """Logits whose classes are drawn from softmax(logits / temperature)."""
    generator = torch.Generator().manual_seed(seed)
    logits = 3.0 * torch.randn(items, classes, generator=generator)
    probabilities = torch.softmax(logits / temperature, -1)
    gold = torch.multinomial(probabilities, 1, generator=generator).squeeze(1)
    return logits, gold


@pytest.mark.parametrize("temperature", [0.5, 1.0, 2.0])
def test_the_gold_nll_recovers_a_known_temperature(temperature):
    logits, gold = _synthetic(temperature)
    # two batches of different widths (as heads are), the same items
    padded = torch.cat([logits[:5000], torch.full((5000, 2), float("-inf"))], dim=1)
    fitted = fit_temperature(softmax_nll([padded, logits[5000:]], [gold[:5000], gold[5000:]]))
    assert fitted == pytest.approx(temperature, rel=0.06)


@pytest.mark.parametrize("temperature", [0.5, 2.0])
def test_the_output_objective_recovers_a_known_temperature(temperature):
    logits, gold = _synthetic(temperature, seed=1)
    chosen = logits.argmax(-1)
    fitted = fit_temperature(output_softmax_bce([(logits, chosen, chosen == gold)]))
    assert fitted == pytest.approx(temperature, rel=0.1)


@pytest.mark.parametrize("temperature", [0.5, 2.0])
def test_the_ece_objective_recovers_a_known_temperature(temperature):
    logits, gold = _synthetic(temperature, seed=2)
    chosen = logits.argmax(-1)
    items = [(logits, chosen, chosen == gold)]
    ece = ece_of(lambda t: output_softmax_probabilities(items, t))
    fitted = fit_temperature_on_grid(ece)
    assert fitted == pytest.approx(temperature, rel=0.15)
    assert ece(fitted) < 0.01 < ece(1.0)


def test_ece_of_a_hand_checked_case():
    reliability = Reliability(np.array([0.95, 0.95, 0.15, 0.15]), np.array([1, 0, 0, 0], bool))
    counts, mean, accuracy = reliability.bins(10)
    assert counts[9] == 2 and counts[1] == 2 and counts.sum() == 4
    assert reliability.ece(10) == pytest.approx((2 * 0.45 + 2 * 0.15) / 4)
    # confidence 1.0 falls in the last bin
    assert Reliability(np.array([1.0]), np.array([True])).ece(10) == 0.0


def test_spearman_with_ties():
    assert spearman([1, 2, 3, 4], [10, 20, 30, 40]) == pytest.approx(1.0)
    assert spearman([1, 2, 3, 4], [4, 3, 2, 1]) == pytest.approx(-1.0)
    # ranks of [1, 1, 2] are [0.5, 0.5, 2]; of [1, 2, 3] [0, 1, 2]
    expected = np.corrcoef([0.5, 0.5, 2], [0, 1, 2])[0, 1]
    assert spearman([1, 1, 2], [1, 2, 3]) == pytest.approx(expected)


def test_calibrate_writes_the_temperatures_into_the_archive(fixture_archive, tmp_path):
    from lal_allennlp import Parser

    archive = fixture_archive("lal_parser")
    out = tmp_path / "calibrated"
    code = analyze(
        ["calibrate", archive, "fixtures/ptb/dev", "--report", "fixtures/ptb/train", "-o", str(out)]
    )
    assert code == 0
    summary = json.loads((out / "calibration.json").read_text())
    temperature = summary["temperatures"]["spans"]
    assert 0.05 < temperature < 20
    assert set(summary["before"]) == {"spans", "ranking"}
    assert (out / "reliability.png").stat().st_size > 1000
    with tarfile.open(out / "model.tar.gz") as written:
        assert written.getnames()[0] == "config.json"
        config = json.load(written.extractfile("config.json"))
    assert config["model"]["confidence_temperatures"] == {"spans": temperature}
    calibrated, plain = Parser.load(str(out / "model.tar.gz")), Parser.load(archive)
    assert calibrated.model.confidence_temperatures == {"spans": temperature}
    words = ["The", "cat", "sat", "."]
    a, b = calibrated.parse(words, confidence=True), plain.parse(words, confidence=True)
    assert a.tree_string == b.tree_string
    if abs(temperature - 1.0) > 1e-3:
        assert a.span_confidences != pytest.approx(b.span_confidences, abs=1e-6)


def test_calibrate_refuses_a_model_without_a_crf(fixture_archive, tmp_path, capsys):
    code = analyze(["calibrate", fixture_archive("span_parser"), "fixtures/ptb/dev", "-o", str(tmp_path)])
    assert code == 1
    assert 'span_loss: "crf"' in capsys.readouterr().err
