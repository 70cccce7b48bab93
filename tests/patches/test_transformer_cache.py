"""Two embedders of one pretrained model with different `transformer_kwargs` in one process."""
from allennlp.common import cached_transformers
from allennlp.modules.token_embedders import PretrainedTransformerMismatchedEmbedder

from tests.conftest import minilm_dir


def test_transformer_kwargs_get_their_own_cached_model():
    full = PretrainedTransformerMismatchedEmbedder(minilm_dir())
    first_four = PretrainedTransformerMismatchedEmbedder(
        minilm_dir(), transformer_kwargs={"num_hidden_layers": 4}
    )
    full_again = PretrainedTransformerMismatchedEmbedder(minilm_dir())
    layers = lambda e: len(e._matched_embedder.transformer_model.encoder.layer)  # noqa: E731
    assert (layers(full), layers(first_four), layers(full_again)) == (6, 4, 6)
    # The kept layers are the pretrained ones, and plain calls still share one cache.
    assert first_four._matched_embedder.transformer_model.encoder.layer[3].output.dense.weight.equal(
        full._matched_embedder.transformer_model.encoder.layer[3].output.dense.weight
    )
    plain = cached_transformers.get(minilm_dir(), False)
    assert cached_transformers.get(minilm_dir(), False) is plain
    assert len(plain.encoder.layer) == 6
