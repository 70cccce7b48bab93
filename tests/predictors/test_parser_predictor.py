import pytest
from allennlp.common import Params
from allennlp.common.checks import ConfigurationError
from allennlp.data import DatasetReader, Vocabulary
from allennlp.models import Model

from lal_allennlp.syntax.trees import parse_trees, tree_to_spans
from lal_allennlp.predictors import ParserPredictor
from lal_allennlp.predictors.inputs import InputError
from tests.conftest import FIXTURES_ROOT, assert_plain_json


@pytest.fixture(scope="module")
def predictor() -> ParserPredictor:
    params = Params.from_file(str(FIXTURES_ROOT / "span_parser" / "experiment.jsonnet"))
    reader = DatasetReader.from_params(params.pop("dataset_reader"))
    instances = list(reader.read(str(FIXTURES_ROOT / "ptb" / "train")))
    vocab = Vocabulary.from_instances(instances)
    model = Model.from_params(vocab=vocab, params=params.pop("model"))
    return ParserPredictor(model, reader)


def _check(result: dict, words: list) -> None:
    assert_plain_json(result)
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


@pytest.mark.parametrize(
    "bad, message",
    [
        ({"sentence": "a\x00b"}, "control character U\\+0000 at character 2"),
        ({"sentence": "\x1b[1mbold"}, "control character U\\+001B at character 1"),
        ({"sentence": "lone \udcff"}, "lone surrogate U\\+DCFF"),
        ({"sentence": 42}, '"sentence" must be a string'),
        ({"tokens": []}, '"tokens" is empty'),
        ({"tokens": ["New York", "fell"]}, "word 1 of \"tokens\", 'New York', is empty or holds "
                                           "white space"),
        ({"tokens": ["a", ""]}, "word 2 of \"tokens\", '', is empty"),
        ({"tokens": ["a", 3]}, "list of strings"),
        ({"tokens": ["a\tb"]}, "white space"),
        ({"tokens": ["a"], "tags": "DT"}, '"tags" must be a list of strings'),
        ({"tokens": ["a"], "tags": ["D T"]}, "tag 1, 'D T', is empty or holds white space"),
        (["not", "an", "object"], "must be a JSON object"),
    ],
)
def test_more_bad_inputs_give_clear_errors(predictor, bad, message):
    with pytest.raises(InputError, match=message):
        predictor.predict_json(bad)


def test_words_with_brackets_are_escaped_so_the_tree_reads_back(predictor):
    result = predictor.predict_json({"tokens": ["f(x)", "(", "[", ")", ":-)"]})
    _check(result, ["f-LRB-x-RRB-", "-LRB-", "-LSB-", "-RRB-", ":--RRB-"])


def test_an_unseen_given_tag_is_no_error(predictor):
    # The tags feed the tagger's (unused) loss: a tag the vocabulary lacks is UNSEEN_LABEL.
    result = predictor.predict_json({"tokens": ["Prices", "fell"], "tags": ["ZZZ", "VBD"]})
    _check(result, ["Prices", "fell"])


def test_a_sentence_over_max_words_is_refused(predictor):
    limited = ParserPredictor(predictor._model, predictor._dataset_reader, max_words=3)
    _check(limited.predict_json({"tokens": ["a", "b", "c"]}), ["a", "b", "c"])
    with pytest.raises(InputError, match="the sentence has 4 words, more than the limit of 3"):
        limited.predict_json({"tokens": ["a", "b", "c", "d"]})
    with pytest.raises(InputError, match="--predictor-args"):
        limited.predict_json({"sentence": "one two three four"})


def test_tags_with_brackets_are_escaped_like_the_words():
    # A model that predicts no tags puts the given ones in the tree: they must read back too.
    params = Params.from_file(str(FIXTURES_ROOT / "span_parser" / "experiment.jsonnet"))
    reader = DatasetReader.from_params(params.pop("dataset_reader"))
    vocab = Vocabulary.from_instances(reader.read(str(FIXTURES_ROOT / "ptb" / "train")))
    model_params = params.pop("model")
    model_params["predict_pos_tags"] = False
    predictor = ParserPredictor(Model.from_params(vocab=vocab, params=model_params), reader)
    result = predictor.predict_json({"tokens": ["(", "hi", ")"], "tags": ["(", "UH", ")"]})
    _check(result, ["-LRB-", "hi", "-RRB-"])
    assert result["pos_tags"] == ["-LRB-", "UH", "-RRB-"]
