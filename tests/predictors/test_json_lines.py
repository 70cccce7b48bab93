"""
`allennlp predict` over JSON lines with bad lines among them: AllenNLP's predict loop (run here
in-process) stops at the first exception, so the predictors turn each failing line into an
output with an `"error"` naming the line, and every other line is parsed, in order.
"""
import json
from pathlib import Path
from typing import List

import pytest
from allennlp.commands.predict import _PredictManager
from allennlp.common import Params
from allennlp.common.checks import ConfigurationError
from allennlp.data import DatasetReader, Vocabulary
from allennlp.models import Model
from nltk import Tree

from lal_allennlp.predictors import (
    ConlluPredictor,
    DependencyConlluPredictor,
    DependencyParserPredictor,
    ParserPredictor,
    UnsupervisedParserPredictor,
)
from lal_allennlp.predictors.checked import InputLine
from lal_allennlp.predictors.inputs import InputError
from lal_allennlp.syntax.trees import parse_trees
from tests.conftest import FIXTURES_ROOT


def _predictor(config: str, predictor_class, reader_key: str = "dataset_reader"):
    """An untrained model of a fixture config with its reader, behind `predictor_class`."""
    params = Params.from_file(str(FIXTURES_ROOT / config))
    reader = DatasetReader.from_params(params.pop("dataset_reader"))
    vocab = Vocabulary.from_instances(reader.read(params.pop("train_data_path")))
    model = Model.from_params(vocab=vocab, params=params.pop("model"))
    if reader_key != "dataset_reader":
        reader = DatasetReader.from_params(params.pop(reader_key))
    return predictor_class(model, reader)


@pytest.fixture(scope="module")
def span_predictor() -> ParserPredictor:
    return _predictor("span_parser/experiment.jsonnet", ParserPredictor)


def _predict(predictor, tmp_path: Path, lines: List[str], batch_size: int) -> List[str]:
    source, target = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    source.write_text("\n".join(lines) + "\n", encoding="utf-8")
    _PredictManager(predictor, str(source), str(target), batch_size, False, False).run()
    return target.read_text(encoding="utf-8").splitlines(keepends=True)


def _leaves(tree: str) -> list:
    (parsed, _), = list(parse_trees(tree))
    return parsed.leaves()


SPAN_LINES = [
    json.dumps({"sentence": "Prices fell ."}),
    "not json",
    "[1, 2]",
    json.dumps({"text": "no sentence key"}),
    json.dumps({"tokens": "not a list"}),
    json.dumps({"tokens": ["a", "b"], "tags": ["DT"]}),
    "   ",  # blank: allennlp predict skips it, with no output
    json.dumps({"sentence": "a\u0000b"}),
    json.dumps({"tokens": ["f(x)", ")"]}),
    json.dumps({"sentence": "Done ."}),
    # The fixture parser has no label attention layer: its forward fails on this one.
    json.dumps({"sentence": "Yes", "explain": True}),
]
# Per output line (the non-blank input lines), the words of the tree or the error's start.
SPAN_EXPECTED = [
    ["Prices", "fell", "."],
    "JSON line 2: not valid JSON (Expecting value at character 1)",
    "JSON line 3: a JSON list where an object",
    'JSON line 4: Each input needs "sentence" (raw text) or "tokens"',
    'JSON line 5: "tokens" must be a list of strings',
    "JSON line 6: Got 1 tags for 2 tokens",
    "JSON line 7: \"sentence\" holds the control character U+0000 at character 2",
    ["f-LRB-x-RRB-", "-RRB-"],
    ["Done", "."],
    "JSON line 10: Explanations need a label attention layer",
]


@pytest.mark.parametrize("batch_size", [1, 4])
def test_bad_json_lines_give_aligned_error_outputs(span_predictor, tmp_path, batch_size,
                                                   caplog):
    span_predictor._lines_read = 0  # a fresh run of `allennlp predict`
    outputs = [json.loads(line) for line in _predict(span_predictor, tmp_path, SPAN_LINES,
                                                     batch_size)]
    assert len(outputs) == len(SPAN_EXPECTED)
    for output, expected in zip(outputs, SPAN_EXPECTED):
        if isinstance(expected, list):
            assert "error" not in output
            assert output["words"] == expected
            assert _leaves(output["tree"]) == expected
        else:
            assert list(output) == ["error"]
            assert output["error"].startswith(expected), output["error"]
    assert caplog.text.count("Not parsed: JSON line") == 7, caplog.text


def test_errors_are_raised_for_requests_given_in_python(span_predictor):
    # The same request that gives an error output as a JSON line raises as a dict.
    line = span_predictor.load_line(json.dumps({"tokens": []}))
    assert isinstance(line, InputLine)
    assert "error" in span_predictor.predict_json(line)
    with pytest.raises(ValueError, match='"tokens" is empty'):
        span_predictor.predict_json({"tokens": []})
    with pytest.raises(ConfigurationError, match="Explanations need a label attention layer"):
        span_predictor.predict_batch_json([{"sentence": "Yes"}, {"sentence": "No", "explain": 1}])


def test_conllu_output_of_a_bad_line_is_a_comment_only_sentence(tmp_path):
    predictor = _predictor("joint_parser/experiment.jsonnet", ConlluPredictor)
    lines = [json.dumps({"sentence": "Prices fell ."}), "{oops",
             json.dumps({"tokens": ["Yes"]})]
    text = "".join(_predict(predictor, tmp_path, lines, 2))
    sentences = text.strip("\n").split("\n\n")
    assert len(sentences) == 3
    assert sentences[1] == (
        "# error = JSON line 2: not valid JSON (Expecting property name enclosed in double "
        "quotes at character 2); each line must be one JSON object such as "
        '{"sentence": "..."}'
    )
    assert [row.split("\t")[1] for row in sentences[2].split("\n")] == ["Yes"]


def test_dependency_predictor_lines(tmp_path):
    predictor = _predictor(
        "stack_attention/experiment.jsonnet", DependencyParserPredictor,
        "validation_dataset_reader",
    )
    lines = [
        json.dumps({"tokens": ["It", "(", "fell", ")"], "tags": ["PRP", "(", "VBD", ")"]}),
        json.dumps({"tokens": ["It", "fell"]}),  # the model reads tags: none given
        json.dumps({"tokens": ["It", "fell"], "tags": ["ZZZ", "VBD"]}),  # an unseen tag
        json.dumps({"tokens": ["It", "fell"], "tags": ["PRP"]}),
    ]
    outputs = [json.loads(line) for line in _predict(predictor, tmp_path, lines, 4)]
    # Dependency output keeps the words as given (brackets are fine in CoNLL-U).
    assert outputs[0]["words"] == ["It", "(", "fell", ")"]
    assert outputs[1]["error"].startswith("JSON line 2: this model reads POS tags")
    assert outputs[2]["words"] == ["It", "fell"] and outputs[2]["pos"] == ["ZZZ", "VBD"]
    assert outputs[3]["error"] == (
        "JSON line 4: Got 1 tags for 2 tokens; give one tag per token, or none."
    )
    conllu = DependencyConlluPredictor(predictor._model, predictor._dataset_reader)
    assert conllu.dump_line(outputs[3]) == f"# error = {outputs[3]['error']}\n\n"
    assert conllu.dump_line(outputs[0]).count("\n") == 5


def test_unsupervised_predictor_lines(tmp_path):
    predictor = _predictor("tree_transformer/experiment.jsonnet", UnsupervisedParserPredictor)
    lines = [
        json.dumps({"sentence": "... !!! ?"}),  # punctuation only: nothing left to parse
        json.dumps({"tokens": ["f(x)", "(", "prices", "fell", ")"]}),
    ]
    outputs = [json.loads(line) for line in _predict(predictor, tmp_path, lines, 2)]
    assert outputs[0]["error"].startswith("JSON line 1: cannot make an instance of an empty")
    assert "nothing to parse" in outputs[0]["error"]
    # The brackets are punctuation, left out of the tree; f(x) is a word. (The tree has no
    # preterminals, so nltk reads it.)
    assert outputs[1]["words"] == ["f-LRB-x-RRB-", "prices", "fell"]
    assert Tree.fromstring(outputs[1]["tree"]).leaves() == outputs[1]["words"]


def test_a_line_that_is_not_utf8_fails_alone(span_predictor, tmp_path):
    # AllenNLP reads the file as strict UTF-8 and would stop at line 2 with no output at all.
    span_predictor._lines_read = 0
    source, target = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    source.write_bytes(
        b'{"sentence": "Prices fell ."}\n{"sentence": "caf\xe9 au lait"}\n{"tokens": ["Done"]}\n'
    )
    _PredictManager(span_predictor, str(source), str(target), 2, False, False).run()
    outputs = [json.loads(line) for line in target.read_text(encoding="utf-8").splitlines()]
    assert [output.get("words") for output in outputs] == [["Prices", "fell", "."], None,
                                                           ["Done"]]
    assert outputs[1]["error"].startswith('JSON line 2: "sentence" holds the lone surrogate')


def _count_forward_passes(predictor, monkeypatch) -> List[int]:
    """The size of every batch that reaches the model's forward pass, recorded as they come."""
    forward = predictor._model.forward_on_instances
    sizes: List[int] = []

    def forward_on_instances(instances):
        sizes.append(len(instances))
        return forward(instances)

    monkeypatch.setattr(predictor._model, "forward_on_instances", forward_on_instances)
    return sizes


def test_a_failing_line_reaches_the_model_in_its_batch_and_once_alone(span_predictor, tmp_path,
                                                                     monkeypatch):
    span_predictor._lines_read = 0
    sizes = _count_forward_passes(span_predictor, monkeypatch)
    lines = [
        json.dumps({"sentence": "Prices fell ."}),
        json.dumps({"sentence": "Yes", "explain": True}),  # fails in the forward pass
        json.dumps({"tokens": []}),  # fails its check: never reaches the model
        json.dumps({"sentence": "Done ."}),
    ]
    outputs = [json.loads(line) for line in _predict(span_predictor, tmp_path, lines, 4)]
    assert sizes == [3, 1, 1, 1]
    assert [output.get("words") for output in outputs] == [
        ["Prices", "fell", "."], None, None, ["Done", "."]
    ]
    assert outputs[1]["error"].startswith("JSON line 2: Explanations need a label attention")
    assert outputs[2]["error"].startswith('JSON line 3: "tokens" is empty')


def test_outcomes_give_each_failure_in_its_request_s_place(span_predictor, monkeypatch):
    good = [{"sentence": "Prices fell ."}, {"tokens": ["Done", "."]}]
    expected = [span_predictor.predict_json(request) for request in good]
    sizes = _count_forward_passes(span_predictor, monkeypatch)
    outcomes = span_predictor.predict_batch_outcomes(
        [good[0], {"tokens": []}, {"sentence": "Yes", "explain": True}, good[1]]
    )
    assert sizes == [3, 1, 1, 1]
    assert [outcomes[0], outcomes[3]] == expected
    assert isinstance(outcomes[1], InputError) and '"tokens" is empty' in str(outcomes[1])
    assert isinstance(outcomes[2], ConfigurationError)
    assert "Explanations need a label attention layer" in str(outcomes[2])
    # `predict_batch_json` raises them instead: a bad request before anything is parsed.
    sizes.clear()
    with pytest.raises(InputError, match='"tokens" is empty'):
        span_predictor.predict_batch_json([good[0], {"tokens": []}])
    assert sizes == []
