"""The span parser with character-level word representations (Kitaev & Klein 2018, sec. 5)
under the partitioned transformer and the Label Attention Layer stack."""
from allennlp.common.testing import ModelTestCase

from lal_allennlp.modules.char_embedders import (  # noqa: F401  (registers the embedders)
    CharConcatTokenEmbedder,
    CharLSTMTokenEmbedder,
)
from lal_allennlp.modules.lal_stack import LabelAttentionStack
from lal_allennlp.modules.partitioned_transformer import PartitionedTransformerEncoder
from tests.conftest import FIXTURES_ROOT

CHAR_LSTM = FIXTURES_ROOT / "span_parser" / "char_lstm.jsonnet"
LAL_CHAR_CONCAT = FIXTURES_ROOT / "span_parser" / "lal_char_concat.jsonnet"


class TestCharLSTMPartitionedTransformer(ModelTestCase):
    def setup_method(self):
        super().setup_method()
        self.set_up_model(CHAR_LSTM, FIXTURES_ROOT / "ptb" / "train")

    def test_builds_the_configured_parts(self):
        embedders = self.model.text_field_embedder._token_embedders
        assert isinstance(embedders["token_characters"], CharLSTMTokenEmbedder)
        assert isinstance(self.model.encoder, PartitionedTransformerEncoder)
        assert self.model.span_partitions == 1

    def test_train_save_load_and_batch_consistency(self):
        self.ensure_model_can_train_save_and_load(CHAR_LSTM)


class TestCharConcatLabelAttentionStack(ModelTestCase):
    def setup_method(self):
        super().setup_method()
        self.set_up_model(LAL_CHAR_CONCAT, FIXTURES_ROOT / "ptb" / "train")

    def test_builds_the_configured_parts(self):
        embedders = self.model.text_field_embedder._token_embedders
        assert isinstance(embedders["token_characters"], CharConcatTokenEmbedder)
        assert isinstance(self.model.encoder, LabelAttentionStack)
        # One span partition per label attention head.
        assert self.model.span_partitions == 4

    def test_train_save_load_and_batch_consistency(self):
        self.ensure_model_can_train_save_and_load(LAL_CHAR_CONCAT)
