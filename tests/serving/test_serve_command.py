"""The `lal-serve` command as users run it: a real process on loopback answering the API as
`Parser` does, stopping cleanly on SIGTERM, and clear usage errors."""
import subprocess

import requests

from lal_allennlp.api import Parser
from tests.serving.conftest import LAL_SERVE


def test_a_served_model_answers_as_the_parser_does(served, fixture_archive):
    parser = Parser.load(fixture_archive("lal_parser"))
    health = requests.get(f"{served}/health", timeout=10).json()
    assert health["status"] == "ok" and health["max_words"] == 60
    sentences = ["The cat sat on the mat .", "Dogs bark ."]
    answer = requests.post(f"{served}/parse", json={"sentences": sentences}, timeout=60)
    assert answer.status_code == 200
    assert answer.json()["parses"] == [parser.parse(s).to_json() for s in sentences]
    too_long = requests.post(f"{served}/parse", json={"sentences": ["w " * 61]}, timeout=60)
    assert too_long.status_code == 422
    assert "start lal-serve with a higher --max-words" in too_long.json()["error"]


def test_usage_errors_exit_with_2(tmp_path):
    missing = subprocess.run(
        [LAL_SERVE, str(tmp_path / "none.tar.gz")], capture_output=True, text=True, timeout=120
    )
    assert missing.returncode == 2 and "No model archive at" in missing.stderr
    bad = subprocess.run(
        [LAL_SERVE, "x.tar.gz", "--max-batch", "0"], capture_output=True, text=True, timeout=120
    )
    assert bad.returncode == 2 and "--max-batch must be at least 1" in bad.stderr
