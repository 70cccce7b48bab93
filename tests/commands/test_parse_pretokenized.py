"""`lal-parse --pretokenized`: pre-segmented (Chinese) lines keep their words exactly."""
import io
from typing import List, Tuple

from lal_allennlp.api import Parser
from lal_allennlp.commands.parse import parse_lines
from lal_allennlp.syntax.trees import parse_trees

LINES = ["日益 嚴重 的 汙染 問題 …\n", "有 Nac:鵝掌形 的 ( 葉子 ) ，\n", "\n", "我們 明天 見 。\n"]


def _recording(archive: str, monkeypatch) -> Tuple[Parser, List[dict]]:
    """The parser of `archive`, and the requests its predictor is given, as they come."""
    parser = Parser.load(archive)
    requests: List[dict] = []
    outcomes = parser.predictor.predict_batch_outcomes

    def recorded(batch):
        requests.extend(batch)
        return outcomes(batch)

    monkeypatch.setattr(parser.predictor, "predict_batch_outcomes", recorded)
    return parser, requests


def _leaves(tree: str) -> list:
    (parsed, _), = list(parse_trees(tree))
    return parsed.leaves()


def test_pretokenized_keeps_every_word_as_written(span_parser_archive, monkeypatch):
    parser, requests = _recording(span_parser_archive, monkeypatch)
    errors = io.StringIO()
    trees = list(parse_lines(parser, LINES, 2, errors, progress=False, pretokenized=True))
    assert sorted(request["tokens"] for request in requests) == [
        ["我們", "明天", "見", "。"],
        ["日益", "嚴重", "的", "汙染", "問題", "…"],
        ["有", "Nac:鵝掌形", "的", "(", "葉子", ")", "，"],
    ]
    # In the trees, the brackets are written the treebank way, so that they read back.
    assert [_leaves(tree) if tree else None for tree in trees] == [
        ["日益", "嚴重", "的", "汙染", "問題", "…"],
        ["有", "Nac:鵝掌形", "的", "-LRB-", "葉子", "-RRB-", "，"],
        None,
        ["我們", "明天", "見", "。"],
    ]
    assert errors.getvalue() == "line 3: empty line, nothing to parse\n"


def test_default_tokenizer_rewrites_ascii_and_ellipses(span_parser_archive, monkeypatch):
    # Without --pretokenized the Penn Treebank tokenizer runs: the ellipsis becomes "...",
    # the colon is split off and brackets become -LRB-/-RRB-, which a Chinese model never saw.
    parser, requests = _recording(span_parser_archive, monkeypatch)
    list(parse_lines(parser, LINES[:2], 2, io.StringIO(), progress=False))
    words = sorted((request["tokens"] for request in requests), key=len)
    assert words[0] == ["日益", "嚴重", "的", "汙染", "問題", "..."]
    assert words[1] == ["有", "Nac", ":", "鵝掌形", "的", "-LRB-", "葉子", "-RRB-", "，"]
