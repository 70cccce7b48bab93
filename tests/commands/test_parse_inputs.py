"""
`lal-parse` on every kind of bad input line: each line gets one output line (or CoNLL-U
sentence), a bad line a message naming it and an empty output, the others their trees; the exit
status says whether any line failed.
"""
import io
import sys
from typing import List

import pytest

from lal_allennlp.api import Parser
from lal_allennlp.commands.parse import main, parse_all_lines, split_lines
from lal_allennlp.syntax.trees import parse_trees

# Input lines as bytes, with the words each good line must give (None: no tree).
GOOD = "The cat sat on the mat.".encode()
LINES = [
    (b"\xef\xbb\xbf" + GOOD, ["The", "cat", "sat", "on", "the", "mat", "."]),  # after a BOM
    ("café au lait".encode("latin-1"), None),  # not UTF-8
    (b"a\x00b c", None),  # NUL
    (b"\x1b[31mred\x1b[0m text", None),  # terminal colour codes
    (b"", None),  # empty
    (b"   \t ", None),  # white space only
    (b"... !!! ?", ["...", "!", "!", "!", "?"]),  # punctuation only
    (
        b"f(x) = [y] {z} ( )",
        ["f", "-LRB-", "x", "-RRB-", "=", "-LSB-", "y", "-RSB-", "-LCB-", "z", "-RCB-",
         "-LRB-", "-RRB-"],
    ),
    (b"Yes", ["Yes"]),  # one word
    (b"word " * 5000, None),  # over the default --max-words
    (b"Prices rose .", ["Prices", "rose", "."]),
]
FAILED = [2, 3, 4, 10]
EMPTY = [5, 6]


def _input(tmp_path, lines=LINES, ending=b"\n") -> str:
    path = tmp_path / "in.txt"
    # One line ends in \r\n, to show that the line breaks of Windows files are line breaks.
    data = ending.join(line for line, _ in lines) + ending
    path.write_bytes(data.replace(b"Prices rose .\n", b"Prices rose .\r\n"))
    return str(path)


def _leaves(tree: str) -> list:
    (parsed, _), = list(parse_trees(tree))
    return parsed.leaves()


def test_every_line_gets_one_output_and_a_bad_one_a_message(span_parser_archive, tmp_path,
                                                             capsys):
    status = main([span_parser_archive, _input(tmp_path), "--no-progress", "--batch-size", "3"])
    captured = capsys.readouterr()
    outputs = captured.out.split("\n")
    assert outputs.pop() == ""
    assert len(outputs) == len(LINES)
    for number, ((_, words), output) in enumerate(zip(LINES, outputs), 1):
        if words is None:
            assert output == "", number
        else:
            assert _leaves(output) == words, number
    err = captured.err
    assert "line 2: not valid utf-8 (byte 0xe9 at byte 4 of the line)" in err
    assert "--encoding" in err
    assert "line 3: the line holds the control character U+0000 at character 2" in err
    assert "line 4: the line holds the control character U+001B at character 1" in err
    assert "line 5: empty line, nothing to parse" in err
    assert "line 6: empty line, nothing to parse" in err
    assert "line 10: the sentence has 5000 words, more than the limit of 1000" in err
    assert "raise --max-words" in err
    assert "4 of 11 line(s) not parsed (line 2, 3, 4, 10)" in err
    for number in (1, 7, 8, 9, 11):
        assert f"line {number}:" not in err
    assert status == 1


def test_encoding_option_decodes_the_latin1_line(span_parser_archive, tmp_path, capsys):
    lines = [LINES[1], LINES[-1]]
    status = main([span_parser_archive, _input(tmp_path, lines), "--no-progress",
                   "--encoding", "latin-1"])
    outputs = capsys.readouterr().out.split("\n")
    assert [_leaves(output) for output in outputs[:2]] == [
        ["café", "au", "lait"], ["Prices", "rose", "."]
    ]
    assert status == 0


def test_exit_status_is_0_when_only_blank_lines_give_no_tree(span_parser_archive, tmp_path,
                                                              capsys):
    lines = [LINES[0], LINES[4], LINES[5], LINES[8]]
    assert main([span_parser_archive, _input(tmp_path, lines), "--no-progress"]) == 0
    outputs = capsys.readouterr().out.split("\n")
    assert [bool(output) for output in outputs[:4]] == [True, False, False, True]


def test_max_words_is_configurable(span_parser_archive, tmp_path, capsys):
    path = _input(tmp_path, [LINES[0], LINES[-1]])
    assert main([span_parser_archive, path, "--no-progress", "--max-words", "5"]) == 1
    captured = capsys.readouterr()
    assert "line 1: the sentence has 7 words, more than the limit of 5" in captured.err
    assert captured.out.split("\n")[0] == ""
    # 0: no limit.
    assert main([span_parser_archive, path, "--no-progress", "--max-words", "0"]) == 0
    assert len(_leaves(capsys.readouterr().out.split("\n")[0])) == 7


def test_pretokenized_brackets_read_back_as_one_leaf_each(span_parser_archive, tmp_path, capsys):
    path = _input(tmp_path, [(b"f(x) ( [ ) :-) \xe4\xbd\xa0", None)])
    assert main([span_parser_archive, path, "--no-progress", "--pretokenized"]) == 0
    output = capsys.readouterr().out.split("\n")[0]
    assert _leaves(output) == ["f-LRB-x-RRB-", "-LRB-", "-LSB-", "-RRB-", ":--RRB-", "你"]


def test_stdin_is_read_as_bytes(span_parser_archive, monkeypatch, capsys):
    data = b"Prices rose .\n\xff\xfe bad\nYes\n"
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))
    assert main([span_parser_archive, "--no-progress"]) == 1
    captured = capsys.readouterr()
    outputs = captured.out.split("\n")
    assert _leaves(outputs[0]) == ["Prices", "rose", "."]
    assert outputs[1] == ""
    assert _leaves(outputs[2]) == ["Yes"]
    assert "line 2: not valid utf-8 (byte 0xff at byte 1 of the line)" in captured.err


def test_conllu_keeps_one_sentence_per_line(joint_parser_archive, tmp_path, capsys):
    lines = [LINES[0], LINES[1], LINES[4], LINES[7], LINES[3]]
    status = main([joint_parser_archive, _input(tmp_path, lines), "--format", "conllu",
                   "--no-progress"])
    blocks = capsys.readouterr().out.strip("\n").split("\n\n")
    assert len(blocks) == 5
    for number, block in enumerate(blocks, 1):
        assert block.startswith(f"# sent_id = {number}\n# text = ")
    assert "# text = caf\ufffd au lait\n# not parsed" in blocks[1]
    assert blocks[2] == "# sent_id = 3\n# text = \n# not parsed"
    assert "# text = \ufffd[31mred\ufffd[0m text\n# not parsed" in blocks[4]
    for block, words in ((blocks[0], LINES[0][1]), (blocks[3], LINES[7][1])):
        rows = [line.split("\t") for line in block.split("\n") if not line.startswith("#")]
        assert [row[1] for row in rows] == words
    assert status == 1


@pytest.mark.parametrize("encoding", ["utf-16", "no-such-encoding"])
def test_an_encoding_that_cannot_split_lines_is_a_usage_error(span_parser_archive, tmp_path,
                                                              capsys, encoding):
    with pytest.raises(SystemExit) as exit_info:
        main([span_parser_archive, _input(tmp_path), "--encoding", encoding])
    assert exit_info.value.code == 2
    assert "convert the file to UTF-8" in capsys.readouterr().err


def test_help_documents_the_exit_status(capsys):
    with pytest.raises(SystemExit):
        main(["--help"])
    assert "Exit status: 0 if every non-blank line was parsed, 1 if any was not" in (
        capsys.readouterr().out.replace("\n", " ").replace("  ", " ")
    )


def test_split_lines_knows_every_line_break():
    assert split_lines(b"a\r\nb\rc\n\nd") == [b"a", b"b", b"c", b"", b"d"]
    assert split_lines(b"a\n") == [b"a"]
    assert split_lines(b"") == []
    assert split_lines(b"\n") == [b""]


def _fail_on_boom(parser: Parser, monkeypatch) -> List[List[str]]:
    """Makes the model fail on every batch holding a sentence with the word BOOM (as a model
    fails on one sentence it cannot take); returns the words of each batch that reaches the
    model's forward pass, in order."""
    forward = parser.model.forward_on_instances
    batches: List[List[str]] = []

    def forward_on_instances(instances):
        words = [list(instance["metadata"].metadata["words"]) for instance in instances]
        batches.append(words)
        if any("BOOM" in sentence for sentence in words):
            raise RuntimeError("out of memory")
        return forward(instances)

    monkeypatch.setattr(parser.model, "forward_on_instances", forward_on_instances)
    return batches


def test_a_sentence_that_fails_in_its_batch_loses_only_itself(span_parser_archive, monkeypatch):
    parser = Parser.load(span_parser_archive)
    expected = {line: parser.parse(line.split()).tree_string for line in ("a b", "e f", "g h")}
    batches = _fail_on_boom(parser, monkeypatch)
    errors = io.StringIO()
    lines = ["a b", "c BOOM", "e f", "g h"]  # the first three make one batch
    parsed = parse_all_lines(parser, lines, 3, errors, progress=False)
    # The failing batch, then each of its sentences once on its own (the failing one included,
    # only once), then the next batch: no sentence reaches the model a third time.
    assert batches == [
        [["a", "b"], ["c", "BOOM"], ["e", "f"]],
        [["a", "b"]],
        [["c", "BOOM"]],
        [["e", "f"]],
        [["g", "h"]],
    ]
    assert parsed.outputs == [expected["a b"], "", expected["e f"], expected["g h"]]
    assert parsed.failed == [2]
    assert errors.getvalue() == "line 2: could not parse (out of memory)\n"


def test_main_reports_a_sentence_the_model_fails_on(span_parser_archive, tmp_path, monkeypatch,
                                                    capsys):
    # Through the command: the parser it loads is the one whose model fails.
    loaded = []
    load = Parser.load

    def load_failing(*args, **kwargs):
        parser = load(*args, **kwargs)
        loaded.append(_fail_on_boom(parser, monkeypatch))
        return parser

    monkeypatch.setattr(Parser, "load", load_failing)
    path = _input(tmp_path, [(b"Prices rose .", None), (b"It BOOM .", None), (b"Yes", None)])
    assert main([span_parser_archive, path, "--no-progress", "--batch-size", "8"]) == 1
    captured = capsys.readouterr()
    outputs = captured.out.split("\n")
    assert [bool(output) for output in outputs[:3]] == [True, False, True]
    assert "line 2: could not parse (out of memory)" in captured.err
    assert "1 of 3 line(s) not parsed (line 2)" in captured.err
    (batches,) = loaded
    assert [len(batch) for batch in batches] == [3, 1, 1, 1]


def test_a_model_without_heads_is_refused_for_conllu(span_parser_archive, tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main([span_parser_archive, _input(tmp_path, [LINES[0]]), "--format", "conllu"])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert "holds a SpanConstituencyParser, which gives constituency trees only" in err
    assert "use --format tree" in err


def test_a_missing_archive_is_a_usage_error(tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main([str(tmp_path / "model.tar.gz"), _input(tmp_path, [LINES[0]])])
    assert exit_info.value.code == 2
    assert f"No model archive at {tmp_path / 'model.tar.gz'}" in capsys.readouterr().err


def test_a_missing_input_file_is_a_usage_error(span_parser_archive, tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main([span_parser_archive, str(tmp_path / "missing.txt")])
    assert exit_info.value.code == 2
    assert "cannot read the input" in capsys.readouterr().err
