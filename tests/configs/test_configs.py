"""Every file in training_config/ builds on fixture data and runs a forward pass."""
import re
from pathlib import Path

import pytest
from allennlp.common import Params
from allennlp.data import Batch, DatasetReader, Vocabulary
from allennlp.models import Model
from allennlp.training.callbacks import TrainerCallback
from allennlp.training.optimizers import Optimizer

from tests.conftest import FIXTURES_ROOT, REPO_ROOT, minilm_dir

CONFIGS = sorted((REPO_ROOT / "training_config").glob("*.jsonnet"))
MINILM_HIDDEN = 384


def _ext_vars() -> dict:
    train, dev = str(FIXTURES_ROOT / "ptb" / "train"), str(FIXTURES_ROOT / "ptb" / "dev")
    return {
        "TRAIN_PATH": train,
        "DEV_PATH": dev,
        "PTB_TRAIN": train,
        "PTB_DEV": dev,
        # The CTB 5.1 split of the hand-written CTB files (`#train`, `#dev`).
        "CTB_DIR": str(FIXTURES_ROOT / "ctb" / "ctb51"),
        # Sinica-style trees; the config selects `[:8000]` and `[8000:]` of them.
        "SINICA_TREES": str(FIXTURES_ROOT / "sinica" / "sample.trees"),
        # Dependency files named like the fixture tree files (joint span configs).
        "DEPS_DIR": str(FIXTURES_ROOT / "ptb" / "deps"),
        "PTB_DEPS": str(FIXTURES_ROOT / "ptb" / "deps"),
        "MINILM_DIR": minilm_dir(),
        # Large-model configs are built with the small local MiniLM in place of their model.
        "TRANSFORMER_MODEL": minilm_dir(),
    }


def test_there_are_configs():
    assert len(CONFIGS) >= 13


@pytest.mark.parametrize("config", CONFIGS, ids=lambda p: p.name)
def test_config_builds_and_runs_forward(config: Path):
    params = Params.from_file(str(config), ext_vars=_ext_vars())
    embedders = params["model"]["text_field_embedder"]["token_embedders"]
    uses_transformer = any(
        e["type"].startswith("pretrained_transformer") for e in embedders.values()
    )
    encoder = params["model"]["encoder"]
    for key in ("input_dim", "input_size"):
        if uses_transformer and key in encoder and encoder[key] != MINILM_HIDDEN:
            # The config is shaped for a larger transformer; resize its encoder for MiniLM.
            encoder[key] = MINILM_HIDDEN
    if params["trainer"].get("cuda_device", -1) >= 0:
        assert params["trainer"].get("use_amp", False), "GPU configs train in mixed precision"
    reader = DatasetReader.from_params(params.pop("dataset_reader"))
    instances = list(reader.read(params.pop("train_data_path")))[:4]
    assert instances
    vocab = Vocabulary.from_instances(instances)
    model = Model.from_params(vocab=vocab, params=params.pop("model"))
    batch = Batch(instances)
    batch.index_instances(vocab)
    output = model(**batch.as_tensor_dict())
    assert output["loss"].requires_grad
    trainer = params.pop("trainer").as_dict()
    assert trainer["validation_metric"] == "+evalb_f1"
    # Every parameter group of the optimiser names parameters that exist (a regex matching
    # nothing would silently train those weights at the default learning rate).
    names = [name for name, _ in model.named_parameters()]
    for regexes, _ in trainer.get("optimizer", {}).get("parameter_groups", []):
        for regex in regexes:
            assert any(re.search(regex, name) for name in names), f"{regex} matches nothing"
    if "optimizer" in trainer:
        # Builds: no parameter is in two groups.
        Optimizer.from_params(
            model_parameters=list(model.named_parameters()), params=Params(trainer["optimizer"])
        )
    callbacks = trainer.get("callbacks", [])
    if any(callback["type"] == "time_budget" for callback in callbacks):
        # The budget sets the learning rate itself; a scheduler would fight it.
        assert "learning_rate_scheduler" not in trainer
    for callback in callbacks:
        TrainerCallback.from_params(params=Params(callback), serialization_dir="unused")
