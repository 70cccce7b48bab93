"""`lal-parse --confidence`, `--kbest`, `--format json` and `--decode mbr`: the numbers are
those `Parser.parse` gives, in the JSON keys or the CoNLL-U MISC column."""
import json
import re

import pytest

from lal_allennlp import Parser
from lal_allennlp.commands.parse import main

LOG_LINE = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d+ - ")
LINES = "The cat sat on the mat .\nIt purred .\n"


def _run(archive, tmp_path, capsys, *options):
    source = tmp_path / "in.txt"
    source.write_text(LINES, encoding="utf-8")
    capsys.readouterr()  # what training the fixture archive printed
    assert main([archive, str(source), "--no-progress", *options]) == 0
    # without the log lines that a training earlier in the session routed to stdout
    out = capsys.readouterr().out.splitlines(keepends=True)
    return "".join(line for line in out if not LOG_LINE.match(line))


def test_json_with_confidences_is_the_parser_s(joint_parser_archive, tmp_path, capsys):
    out = _run(joint_parser_archive, tmp_path, capsys, "--format", "json", "--confidence")
    parser = Parser.load(joint_parser_archive)
    for line, text in zip(out.splitlines(), LINES.splitlines()):
        parsed = json.loads(line)
        expected = parser.parse(text.split(), confidence=True)
        assert parsed["words"] == expected.words
        assert parsed["head_confidences"] == pytest.approx(expected.head_confidences, abs=1e-5)
        assert parsed["sentence_confidence"] == pytest.approx(expected.sentence_confidence, abs=1e-5)


def test_conllu_carries_the_confidences_in_misc(joint_parser_archive, tmp_path, capsys):
    out = _run(joint_parser_archive, tmp_path, capsys, "--format", "conllu", "--confidence")
    parser = Parser.load(joint_parser_archive)
    blocks = out.strip("\n").split("\n\n")
    assert len(blocks) == 2
    for block, text in zip(blocks, LINES.splitlines()):
        expected = parser.parse(text.split(), confidence=True)
        comments = [line for line in block.split("\n") if line.startswith("#")]
        assert f"# sentence_confidence = {expected.sentence_confidence:.6g}" in comments
        rows = [line.split("\t") for line in block.split("\n") if not line.startswith("#")]
        assert len(rows) == len(expected.words)
        for row, head_p, label_p in zip(
            rows, expected.head_confidences, expected.dependency_label_confidences
        ):
            misc = dict(item.split("=") for item in row[9].split("|"))
            assert float(misc["HeadProb"]) == pytest.approx(head_p, abs=1e-4)
            assert float(misc["DeprelProb"]) == pytest.approx(label_p, abs=1e-4)


def test_kbest_in_json(fixture_archive, tmp_path, capsys):
    archive = fixture_archive("lal_parser")
    out = _run(archive, tmp_path, capsys, "--format", "json", "--kbest", "3")
    for line in out.splitlines():
        parsed = json.loads(line)
        assert parsed["kbest"][0]["tree"] == parsed["tree"]
        assert 1 <= len(parsed["kbest"]) <= 3


def test_mbr_decoding_and_refusals(fixture_archive, span_parser_archive, tmp_path, capsys):
    out = _run(fixture_archive("lal_parser"), tmp_path, capsys, "--decode", "mbr")
    assert len(out.splitlines()) == 2 and all(line.startswith("(") for line in out.splitlines())
    source = tmp_path / "in.txt"
    capsys.readouterr()
    for options, message in (
        (["--confidence"], "--confidence needs --format json or --format conllu"),
        (["--kbest", "3"], "--kbest needs --format json"),
        (["--format", "json", "--confidence"], "gives no confidences"),
        (["--decode", "mbr"], '--decode mbr: span_decoding "mbr"'),
    ):
        with pytest.raises(SystemExit):
            main([span_parser_archive, str(source), "--no-progress", *options])
        assert message in capsys.readouterr().err
