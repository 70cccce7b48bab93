import pytest
from allennlp.common import Params
from allennlp.common.checks import ConfigurationError
from allennlp.data import DatasetReader, Vocabulary
from allennlp.models import Model

from lal_allennlp.syntax.trees import parse_trees, tree_to_spans
from lal_allennlp.predictors import ParserPredictor
from tests.conftest import FIXTURES_ROOT


@pytest.fixture(scope="module")
def predictor() -> ParserPredictor:
    params = Params.from_file(str(FIXTURES_ROOT / "span_parser" / "experiment.jsonnet"))
    reader = DatasetReader.from_params(params.pop("dataset_reader"))
    instances = list(reader.read(str(FIXTURES_ROOT / "ptb" / "train")))
    vocab = Vocabulary.from_instances(instances)
    model = Model.from_params(vocab=vocab, params=params.pop("model"))
    return ParserPredictor(model, reader)


def _check(result: dict, words: list) -> None:
    assert result["words"] == words
    assert len(result["pos_tags"]) == len(words)
    tree, _ = next(parse_trees(result["tree"]))
    assert tree.label() == "TOP"
    assert tree.leaves() == words
    assert sorted(map(tuple, result["spans"])) == sorted(tree_to_spans(tree)[2])


def test_raw_sentence_is_tokenised_like_the_ptb(predictor):
    result = predictor.predict_json({"sentence": 'He said "no" (twice).'})
    _check(result, ["He", "said", "``", "no", "''", "-LRB-", "twice", "-RRB-", "."])


def test_tokens_and_batch_agree_with_single(predictor):
    inputs = [{"tokens": ["Prices", "fell", "."]}, {"tokens": ["Stocks", "rose", "today", "."]}]
    batch = predictor.predict_batch_json(inputs)
    for single_input, batched in zip(inputs, batch):
        single = predictor.predict_json(single_input)
        assert single == batched
        _check(single, single_input["tokens"])


def test_one_word_sentence(predictor):
    _check(predictor.predict_json({"tokens": ["Yes"]}), ["Yes"])


@pytest.mark.parametrize(
    "bad, message",
    [
        ({"text": "hello"}, '"sentence"'),
        ({"sentence": "   "}, "empty sentence"),
        ({"tokens": "not a list"}, "list of strings"),
        ({"tokens": ["a", "b"], "tags": ["DT"]}, "1 tags for 2 tokens"),
    ],
)
def test_bad_inputs_give_clear_errors(predictor, bad, message):
    with pytest.raises(ConfigurationError, match=message):
        predictor.predict_json(bad)
