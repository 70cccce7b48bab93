"""`lal-parse --pretokenized`: pre-segmented (Chinese) lines keep their words exactly."""
import io

from lal_allennlp.commands.parse import parse_lines


class RecordingPredictor:
    """Stands in for the `lal_parser` predictor: a flat tree of the words it is given."""

    def __init__(self):
        self.inputs = []

    def predict_batch_json(self, inputs):
        self.inputs.extend(inputs)
        return [self.predict_json(json_dict) for json_dict in inputs]

    def predict_json(self, json_dict):
        words = json_dict["tokens"]
        return {"tree": "(TOP " + " ".join(f"(X {word})" for word in words) + ")"}


LINES = ["日益 嚴重 的 汙染 問題 …\n", "有 Nac:鵝掌形 的 ( 葉子 ) ，\n", "\n", "我們 明天 見 。\n"]


def test_pretokenized_keeps_every_word_as_written():
    predictor, errors = RecordingPredictor(), io.StringIO()
    trees = list(parse_lines(predictor, LINES, 2, errors, progress=False, pretokenized=True))
    assert trees == [
        "(TOP (X 日益) (X 嚴重) (X 的) (X 汙染) (X 問題) (X …))",
        "(TOP (X 有) (X Nac:鵝掌形) (X 的) (X () (X 葉子) (X )) (X ，))",
        "",
        "(TOP (X 我們) (X 明天) (X 見) (X 。))",
    ]
    assert errors.getvalue() == "line 3: empty line, nothing to parse\n"


def test_default_tokenizer_rewrites_ascii_and_ellipses():
    # Without --pretokenized the Penn Treebank tokenizer runs: the ellipsis becomes "...",
    # the colon is split off and brackets become -LRB-/-RRB-, which a Chinese model never saw.
    predictor = RecordingPredictor()
    list(parse_lines(predictor, LINES[:2], 2, io.StringIO(), progress=False))
    words = sorted((json_dict["tokens"] for json_dict in predictor.inputs), key=len)
    assert words[0] == ["日益", "嚴重", "的", "汙染", "問題", "..."]
    assert words[1] == ["有", "Nac", ":", "鵝掌形", "的", "-LRB-", "葉子", "-RRB-", "，"]
