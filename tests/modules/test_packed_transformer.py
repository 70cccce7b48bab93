"""A BERT encoder run without its padding rows (`packed_transformer`, and the transformer
embedder's word piece half that uses it, `WordPieceTransformer`): the same vectors as the padded
forward at every real word piece, on the real MiniLM; used only where it is exact (parse time,
plain BERT)."""
import pytest
import torch
from allennlp.modules.token_embedders import PretrainedTransformerEmbedder
from transformers import BertConfig, BertModel, RobertaConfig, RobertaModel

from lal_allennlp.modules.packed_transformer import packed_hidden_states, supports_packing
from lal_allennlp.modules.transformer_embedder import WordPieceTransformer
from tests.conftest import minilm_dir

# AllenNLP's own (padded) forward.
original_forward = PretrainedTransformerEmbedder.forward

CLS, SEP, PAD = 101, 102, 0


def _batch(lengths, seed=0):
    """Word piece ids `[CLS] ... [SEP]` of the given lengths (special tokens included), padded,
    and the mask of the real word pieces."""
    generator = torch.Generator().manual_seed(seed)
    longest = max(lengths)
    ids = torch.full((len(lengths), longest), PAD, dtype=torch.long)
    for row, length in enumerate(lengths):
        ids[row, 0], ids[row, length - 1] = CLS, SEP
        ids[row, 1 : length - 1] = torch.randint(1000, 30000, (length - 2,), generator=generator)
    mask = torch.arange(longest)[None, :] < torch.tensor(lengths)[:, None]
    return ids, mask


@pytest.fixture(scope="module")
def minilm():
    return BertModel.from_pretrained(minilm_dir(), num_hidden_layers=3).eval()


def test_packed_hidden_states_equal_the_padded_forward(minilm):
    ids, mask = _batch([5, 17, 9, 30, 2])
    with torch.no_grad():
        expected = minilm(input_ids=ids, attention_mask=mask.float(), output_hidden_states=True)
        packed = packed_hidden_states(minilm, ids, mask)
    assert len(packed) == len(expected.hidden_states) == 4
    for got, want in zip(packed, expected.hidden_states):
        assert got.shape == want.shape
        torch.testing.assert_close(got[mask], want[mask], rtol=1e-5, atol=1e-5)
        assert not got[~mask].any()  # zeros at the padding


def test_a_sentence_gets_the_same_vectors_alone_and_padded_in_a_batch(minilm):
    ids, mask = _batch([12, 40, 3], seed=1)
    with torch.no_grad():
        together = packed_hidden_states(minilm, ids, mask)[-1]
        alone = packed_hidden_states(minilm, ids[:1, :12], mask[:1, :12])[-1]
    torch.testing.assert_close(together[0, :12], alone[0], rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("last_layer_only", [True, False])
def test_the_embedder_packs_at_parse_time_with_the_same_output(last_layer_only):
    torch.manual_seed(0)
    embedder = WordPieceTransformer(
        minilm_dir(), last_layer_only=last_layer_only, transformer_kwargs={"num_hidden_layers": 2}
    ).eval()
    if not last_layer_only:  # a scalar mix far from uniform, so that a wrong layer would show
        embedder._scalar_mix.scalar_parameters[0].data.fill_(2.0)
    ids, mask = _batch([7, 25, 11, 4], seed=2)
    with torch.no_grad():
        assert embedder.packs(ids, mask, torch.zeros_like(ids))
        packed = embedder(ids, mask, type_ids=torch.zeros_like(ids))
        padded = original_forward(embedder, ids, mask, type_ids=torch.zeros_like(ids))
    torch.testing.assert_close(packed[mask], padded[mask], rtol=1e-5, atol=1e-5)
    assert not packed[~mask].any()


def test_packing_only_where_it_is_exact_and_pays(minilm):
    embedder = WordPieceTransformer(minilm_dir(), transformer_kwargs={"num_hidden_layers": 1})
    embedder.eval()
    ids, mask = _batch([6, 9])
    with torch.no_grad():
        assert embedder.packs(ids, mask, None)
        assert not embedder.packs(ids[:, :6], mask[:, :6] | True, None)  # no padding
        assert not embedder.packs(ids, mask, torch.ones_like(ids))  # a second segment
        assert not embedder.train().packs(ids, mask, None)  # training mode
    assert not embedder.eval().packs(ids, mask, None)  # gradients on
    # Beyond the transformer's positions, the windows take over.
    long_ids, long_mask = _batch([600, 20])
    with torch.no_grad():
        assert not embedder.packs(long_ids, long_mask, None)
    assert supports_packing(minilm)
    tiny = {"hidden_size": 32, "num_hidden_layers": 1, "num_attention_heads": 2}
    tiny["intermediate_size"] = 64
    assert not supports_packing(RobertaModel(RobertaConfig(**tiny)))
    relative = BertConfig(**tiny, position_embedding_type="relative_key")
    assert not supports_packing(BertModel(relative))
    assert not supports_packing(BertModel(BertConfig(**tiny, chunk_size_feed_forward=4)))
