"""`lal-parse` with the transition-based dependency parser (`stack_attention_parser`)."""
import json
import subprocess
import sys

import pytest

from lal_allennlp.commands.parse import main
from lal_allennlp.syntax.arc_standard import is_projective
from tests.conftest import FIXTURES_ROOT

CONFIG = FIXTURES_ROOT / "stack_attention" / "experiment.jsonnet"


def _train(tmp_path, overrides):
    serialization = tmp_path / "run"
    subprocess.run(
        [sys.executable, "-m", "allennlp", "train", str(CONFIG), "-s", str(serialization),
         "-o", json.dumps(overrides)],
        check=True,
        capture_output=True,
    )
    return str(serialization / "model.tar.gz")


def test_a_model_without_pos_parses_raw_lines_into_conllu(tmp_path, capsys):
    # The "- POS" setting: words only, so raw text parses.
    archive = _train(tmp_path, {"model.pos_tag_embedding": None, "model.encoder.input_size": 16})
    source = tmp_path / "in.txt"
    source.write_text("The company said sales rose.\n\nIt fell.\n", encoding="utf-8")
    assert main([archive, str(source), "--format", "conllu", "--no-progress"]) == 0
    captured = capsys.readouterr()
    blocks = captured.out.strip("\n").split("\n\n")
    assert len(blocks) == 3  # one per input line, the empty one included
    assert "# not parsed" in blocks[1] and "line 2" in captured.err
    for block, words in ((blocks[0], 6), (blocks[2], 3)):
        rows = [line.split("\t") for line in block.split("\n") if not line.startswith("#")]
        assert len(rows) == words
        heads = [int(row[6]) for row in rows]
        assert heads.count(0) == 1 and is_projective(heads)


def test_bracketed_trees_are_refused_with_the_format_to_use(tmp_path, capsys):
    archive = _train(tmp_path, {})
    source = tmp_path / "in.txt"
    source.write_text("The company said sales rose.\n", encoding="utf-8")
    with pytest.raises(SystemExit):
        main([archive, str(source)])
    assert "use --format conllu" in capsys.readouterr().err
