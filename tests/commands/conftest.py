"""Tiny model archives shared by the command tests: those of `tests/conftest.py`'s
session-wide `fixture_archive`, under the names the command tests use."""
import pytest


@pytest.fixture(scope="session")
def span_parser_archive(fixture_archive) -> str:
    """A `lal_span_parser` (word embeddings, one BiLSTM layer) on the fixture treebank."""
    return fixture_archive("span_parser")


@pytest.fixture(scope="session")
def joint_parser_archive(fixture_archive) -> str:
    """A `lal_joint_parser` (CoNLL-U output) on the fixture treebank."""
    return fixture_archive("joint_parser")
