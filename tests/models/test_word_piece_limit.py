"""A sentence longer than the transformer's positions fails with an error naming it."""
import pytest
from allennlp.common import Params
from allennlp.data import DatasetReader, Vocabulary
from allennlp.models import Model

from lal_allennlp.predictors import ParserPredictor
from tests.conftest import FIXTURES_ROOT, minilm_dir, minilm_parser_params


@pytest.fixture(scope="module")
def predictor() -> ParserPredictor:
    reader = DatasetReader.from_params(Params({
        "type": "lal_ptb",
        "token_indexers": {
            "tokens": {"type": "pretrained_transformer_mismatched", "model_name": minilm_dir()}
        },
    }))
    vocab = Vocabulary.from_instances(reader.read(str(FIXTURES_ROOT / "ptb" / "train")))
    model = Model.from_params(vocab=vocab, params=Params(minilm_parser_params()))
    model.eval()
    return ParserPredictor(model, reader)


def test_too_many_word_pieces_name_the_sentence(predictor):
    # 520 one-piece words + [CLS] and [SEP]: 522 word pieces, MiniLM has 512 positions.
    words = ["the", "company", "said", "profits", "rose", "."] * 86 + ["and", "fell", "again", "."]
    assert len(words) == 520
    with pytest.raises(ValueError) as error:
        predictor.predict_batch_json([{"tokens": ["Prices", "fell", "."]}, {"tokens": words}])
    message = str(error.value)
    assert ("sentence 2 of the batch (520 words, starting 'the company said profits rose .') "
            "has 522 word pieces, more than the transformer's 512 positions") in message
    assert "Split the sentence" in message


def test_sentences_within_the_limit_parse(predictor):
    words = ["the", "company", "said", "profits", "rose", "."] * 85  # 510 words, 512 pieces
    assert predictor.predict_json({"tokens": words})["words"] == words
