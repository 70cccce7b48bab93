"""A tiny LAL parser can fit a handful of real sentences perfectly (F1 100 on them)."""
import pytest
import torch
from allennlp.common import Params
from allennlp.data import Batch, DatasetReader, Vocabulary
from allennlp.models import Model

from tests.conftest import FIXTURES_ROOT


@pytest.mark.parametrize("span_loss", ["hinge", "crf"])
def test_tiny_lal_parser_overfits_to_f1_100(span_loss):
    torch.manual_seed(0)
    reader = DatasetReader.from_params(Params({"type": "lal_ptb"}))
    instances = [
        i for i in reader.read(str(FIXTURES_ROOT / "ptb" / "train" / "wsj_9001.mrg"))
        if 4 <= len(i["tokens"]) <= 12
    ][:6]
    assert len(instances) == 6
    vocab = Vocabulary.from_instances(instances)
    model = Model.from_params(
        vocab=vocab,
        params=Params(
            {
                "type": "lal_span_parser",
                "text_field_embedder": {
                    "token_embedders": {"tokens": {"type": "embedding", "embedding_dim": 32}}
                },
                "encoder": {
                    "type": "lal_stack",
                    "input_dim": 32,
                    "self_attention": {
                        "d_model": 64, "num_layers": 2, "num_heads": 4, "d_kv": 16, "d_ff": 64,
                        "attention_dropout": 0.0, "relu_dropout": 0.0, "residual_dropout": 0.0,
                    },
                    "label_attention": {
                        "num_heads": 8, "d_kv": 16, "d_proj": 8, "use_feed_forward": False,
                        "attention_dropout": 0.0,
                    },
                },
                "span_hidden_dim": 64,
                "dropout": 0.0,
                "span_loss": span_loss,
            }
        ),
    )
    batch = Batch(instances)
    batch.index_instances(vocab)
    tensors = batch.as_tensor_dict()
    optimizer = torch.optim.Adam(model.parameters(), lr=3e-3)
    f1 = 0.0
    for step in range(300):
        model.train()
        optimizer.zero_grad()
        model(**tensors)["loss"].backward()
        optimizer.step()
        if step % 25 == 24:
            model.eval()
            with torch.no_grad():
                model(**tensors)
            f1 = model.get_metrics(reset=True)["evalb_f1"]
            if f1 == 1.0:
                break
    assert f1 == 1.0
