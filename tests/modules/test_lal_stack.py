import pytest
import torch
from allennlp.common import Params
from allennlp.common.checks import ConfigurationError
from allennlp.modules import Seq2SeqEncoder

import tests.conftest  # noqa: F401  (registers the plugin)
from lal_allennlp.modules.label_attention import LabelAttentionLayer
from lal_allennlp.modules.lal_stack import LabelAttentionStack
from lal_allennlp.modules.partitioned_transformer import PartitionedTransformerEncoder
from lal_allennlp.modules.span_features import fencepost_span_features, span_indices

SELF_ATTENTION = {"d_model": 16, "num_layers": 3, "num_heads": 2, "d_kv": 8, "d_ff": 12}
LABEL_ATTENTION = {"num_heads": 4, "d_kv": 8, "d_proj": 6, "d_ff": 10}


def build(**label_overrides) -> LabelAttentionStack:
    torch.manual_seed(0)
    return Seq2SeqEncoder.from_params(
        Params(
            {
                "type": "lal_stack",
                "input_dim": 10,
                "self_attention": dict(SELF_ATTENTION),
                "label_attention": {**LABEL_ATTENTION, **label_overrides},
            }
        )
    )


def batch(lengths, seed=1):
    generator = torch.Generator().manual_seed(seed)
    inputs = torch.randn(len(lengths), max(lengths), 10, generator=generator)
    mask = torch.arange(max(lengths)).unsqueeze(0) < torch.tensor(lengths).unsqueeze(1)
    return inputs, mask


def test_builds_from_one_config_block():
    stack = build()
    assert isinstance(stack, LabelAttentionStack)
    assert len(stack.self_attention.layers) == 3
    assert stack.label_attention.get_input_dim() == 16
    assert stack.get_input_dim() == 10
    assert stack.get_output_dim() == 4 * 6
    assert stack.num_label_heads == 4
    assert stack.output_partitions == 4


def test_combined_heads_give_one_output_partition():
    stack = build(concatenate_heads=False)
    assert stack.get_output_dim() == 16
    assert stack.num_label_heads == 4
    assert stack.output_partitions == 1


def test_output_feeds_per_head_span_features_and_is_padding_invariant():
    stack = build()
    stack.eval()
    inputs, mask = batch([7, 5])
    output = stack(inputs, mask)
    assert output.shape == (2, 7, stack.get_output_dim())
    assert torch.all(output[1, 5:] == 0)
    alone = stack(inputs[1:, :5], mask[1:, :5])
    assert torch.allclose(alone[0], output[1, :5], atol=1e-5)
    starts, ends = span_indices(5, output.device)
    spans = fencepost_span_features(output, starts, ends, stack.output_partitions)
    assert spans.shape == (2, len(starts), stack.get_output_dim())
    # The label attention's weights of the last forward, per head over the real positions.
    assert torch.allclose(stack.label_attention.last_attention.sum(-1), torch.ones(1, 4))


def test_gradients_reach_every_parameter():
    stack = build()
    inputs, mask = batch([6, 4])
    stack(inputs, mask).pow(2).sum().backward()
    for name, parameter in stack.named_parameters():
        assert parameter.grad is not None, name
        assert parameter.grad.abs().sum() > 0, name


def test_mismatched_parts_are_configuration_errors():
    self_attention = PartitionedTransformerEncoder(10, **SELF_ATTENTION)
    with pytest.raises(ConfigurationError, match="input dimension"):
        LabelAttentionStack(self_attention, LabelAttentionLayer(12, **LABEL_ATTENTION))
    with pytest.raises(ConfigurationError, match="partitioned"):
        LabelAttentionStack(
            self_attention, LabelAttentionLayer(16, partitioned=False, **LABEL_ATTENTION)
        )
