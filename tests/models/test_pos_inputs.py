"""POS tag embeddings as an input (LAL paper sec. 3.1: word and POS embeddings as content)."""
import torch
from allennlp.common import Params
from allennlp.data import Batch, DatasetReader, Vocabulary
from allennlp.models import Model

from tests.conftest import FIXTURES_ROOT

READER = {
    "type": "lal_ptb",
    "token_indexers": {
        "tokens": {"type": "single_id"},
        "token_characters": {"type": "characters", "min_padding_length": 1},
        "pos_tokens": {
            "type": "single_id",
            "namespace": "pos_tokens",
            "feature_name": "tag_",
            "default_value": "@@UNKNOWN@@",
        },
    },
}


def _model(vocab):
    return Model.from_params(
        vocab=vocab,
        params=Params(
            {
                "type": "lal_span_parser",
                "text_field_embedder": {
                    "token_embedders": {
                        "tokens": {"type": "embedding", "embedding_dim": 8},
                        "token_characters": {
                            "type": "char_lstm",
                            "embedding_dim": 6,
                            "hidden_dim": 8,
                        },
                        "pos_tokens": {"type": "embedding", "embedding_dim": 4},
                    }
                },
                "encoder": {
                    "type": "partitioned_transformer",
                    "input_dim": 8 + 16 + 4,
                    "d_model": 16,
                    "num_layers": 1,
                    "num_heads": 2,
                    "d_kv": 4,
                    "d_ff": 16,
                },
                "span_hidden_dim": 10,
            }
        ),
    )


def test_tags_are_indexed_as_inputs_and_unknown_without_tags():
    reader = DatasetReader.from_params(Params(READER))
    instances = list(reader.read(str(FIXTURES_ROOT / "ptb" / "dev")))
    vocab = Vocabulary.from_instances(instances)
    batch = Batch(instances[:3])
    batch.index_instances(vocab)
    ids = batch.as_tensor_dict()["tokens"]["pos_tokens"]["tokens"]
    for k, instance in enumerate(instances[:3]):
        tags = instance["metadata"]["pos_tags"]
        expected = [vocab.get_token_index(t, "pos_tokens") for t in tags]
        assert ids[k, : len(tags)].tolist() == expected
        assert vocab.get_token_index("@@UNKNOWN@@", "pos_tokens") not in expected
    untagged = reader.text_to_instance(["Dogs", "bark", "."])
    untagged.index_fields(vocab)
    tensors = untagged.as_tensor_dict()["tokens"]["pos_tokens"]["tokens"]
    assert tensors.tolist() == [vocab.get_token_index("@@UNKNOWN@@", "pos_tokens")] * 3
    # A model with word + char + POS inputs trains: the POS embedding gets gradients.
    model = _model(vocab)
    output = model(**batch.as_tensor_dict())
    output["loss"].backward()
    pos_embedding = model.text_field_embedder.token_embedder_pos_tokens.weight
    assert pos_embedding.grad is not None and torch.any(pos_embedding.grad != 0)
