"""`lal-explain` on a sentence the parser cannot take: a message saying why, exit status 1."""
import pytest

from lal_allennlp.commands.explain import main


@pytest.mark.parametrize(
    "sentence, message",
    [
        ("   ", "Cannot parse the sentence: Cannot parse an empty sentence"),
        ("\x1b[1mbold", "control character U+001B at character 1"),
        # What Python makes of an undecodable byte in a command-line argument.
        ("caf\udce9", "lone surrogate U+DCE9"),
    ],
)
def test_a_bad_sentence_gets_a_message(span_parser_archive, tmp_path, capsys, sentence,
                                       message):
    output = tmp_path / "picture.png"
    assert main([span_parser_archive, sentence, "-o", str(output)]) == 1
    assert message in capsys.readouterr().err
    assert not output.exists()
