"""Tiny model archives shared by the command tests, trained in-process once per session."""
from contextlib import chdir
from pathlib import Path

import pytest
from allennlp.commands.train import train_model_from_file

from tests.conftest import FIXTURES_ROOT, REPO_ROOT


def _train(config: Path, serialization_dir: Path) -> str:
    # One epoch: these archives test input handling, not parsing quality. The configs' data
    # paths are relative to the repository root.
    with chdir(REPO_ROOT):
        train_model_from_file(
            str(config), str(serialization_dir), overrides='{"trainer.num_epochs": 1}'
        )
    return str(serialization_dir / "model.tar.gz")


@pytest.fixture(scope="session")
def span_parser_archive(tmp_path_factory) -> str:
    """A `lal_span_parser` (word embeddings, one BiLSTM layer) on the fixture treebank."""
    return _train(FIXTURES_ROOT / "span_parser" / "experiment.jsonnet",
                  tmp_path_factory.mktemp("span") / "run")


@pytest.fixture(scope="session")
def joint_parser_archive(tmp_path_factory) -> str:
    """A `lal_joint_parser` (CoNLL-U output) on the fixture treebank."""
    return _train(FIXTURES_ROOT / "joint_parser" / "experiment.jsonnet",
                  tmp_path_factory.mktemp("joint") / "run")
