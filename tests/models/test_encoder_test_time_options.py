"""
The partitioned transformer's test-time analyses (Kitaev & Klein 2018: the attention ablation of
sec. 3, Table 1, and the attention window of sec. 4.2) set through the archive's overrides on a
model trained without them: the stored weights load (the options add no parameters), an empty
ablation or a window wider than every sentence changes nothing, and ablating all position
attention changes the predictions.
"""
import json
from contextlib import chdir

import pytest
import torch
from allennlp.commands.train import train_model_from_file
from allennlp.common.checks import ConfigurationError
from allennlp.data import Batch
from allennlp.models.archival import load_archive

from tests.conftest import FIXTURES_ROOT, REPO_ROOT

CHAR_LSTM = FIXTURES_ROOT / "span_parser" / "char_lstm.jsonnet"


@pytest.fixture(scope="module")
def archive_file(tmp_path_factory) -> str:
    """The 2-layer partitioned transformer span parser of the fixture, trained for one epoch."""
    directory = tmp_path_factory.mktemp("kk") / "run"
    with chdir(REPO_ROOT):
        train_model_from_file(str(CHAR_LSTM), str(directory), overrides='{"trainer.num_epochs": 1}')
    return str(directory / "model.tar.gz")


def predictions(archive_file: str, overrides: dict):
    """The loss, the trees and the encoder of the archived model loaded with `overrides`
    (AllenNLP's dotted keys), on the first 8 dev sentences."""
    archive = load_archive(archive_file, overrides=json.dumps(overrides))
    model = archive.model
    model.eval()
    instances = list(archive.validation_dataset_reader.read(str(FIXTURES_ROOT / "ptb" / "dev")))
    batch = Batch(instances[:8])
    batch.index_instances(model.vocab)
    with torch.no_grad():
        output = model(**batch.as_tensor_dict())
    return output["loss"].item(), [str(tree) for tree in output["trees"]], model.encoder


def test_the_stored_config_has_no_test_time_options(archive_file):
    config = load_archive(archive_file).config.as_dict()["model"]["encoder"]
    assert config["type"] == "partitioned_transformer" and config["num_layers"] == 2
    for key in ("zero_content_attention", "zero_position_attention", "attention_window"):
        assert key not in config


def test_empty_ablation_and_wide_windows_change_nothing(archive_file):
    loss, trees, _ = predictions(archive_file, {})
    for overrides in (
        {"model.encoder.zero_content_attention": [], "model.encoder.zero_position_attention": []},
        # Wider than any fixture sentence (START and STOP included).
        {"model.encoder.attention_window": 1000},
        {"model.encoder.attention_window": 1000, "model.encoder.window_mode": "relaxed"},
    ):
        same_loss, same_trees, _ = predictions(archive_file, overrides)
        assert same_loss == pytest.approx(loss, abs=1e-5), overrides
        assert same_trees == trees, overrides


@pytest.mark.parametrize(
    "overrides",
    [
        {"model.encoder.zero_position_attention": [1, 2]},
        {"model.encoder.zero_content_attention": [1, 2]},
        {"model.encoder.attention_window": 1, "model.encoder.window_mode": "strict"},
    ],
    ids=["position off", "content off", "window 1"],
)
def test_test_time_options_load_the_trained_weights_and_change_the_predictions(
    archive_file, overrides
):
    loss, trees, plain = predictions(archive_file, {})
    changed_loss, changed_trees, encoder = predictions(archive_file, overrides)
    # The trained weights, unchanged, under the new options.
    assert encoder.state_dict().keys() == plain.state_dict().keys()
    assert all(torch.equal(encoder.state_dict()[k], v) for k, v in plain.state_dict().items())
    assert changed_loss != pytest.approx(loss, abs=1e-3)
    if "model.encoder.zero_position_attention" in overrides:
        assert [layer.attention.zero_position for layer in encoder.layers] == [True, True]
        assert changed_trees != trees


def test_an_ablation_of_a_layer_the_model_lacks_is_refused(archive_file):
    with pytest.raises(ConfigurationError, match=r"zero_content_attention names layer\(s\) \[3\]"):
        predictions(archive_file, {"model.encoder.zero_content_attention": [3]})


def test_the_lal_stack_self_attention_takes_the_same_options(fixture_archive):
    """`lal_stack`'s self-attention is a `partitioned_transformer`: its ablation is
    `model.encoder.self_attention.zero_*_attention`, and the label attention is untouched."""
    archive = fixture_archive("lal_parser")
    loss, trees, plain = predictions(archive, {})
    ablated_loss, _, stack = predictions(
        archive, {"model.encoder.self_attention.zero_position_attention": [1]}
    )
    assert [layer.attention.zero_position for layer in stack.self_attention.layers] == [True]
    assert stack.state_dict().keys() == plain.state_dict().keys()
    assert ablated_loss != pytest.approx(loss, abs=1e-3)
