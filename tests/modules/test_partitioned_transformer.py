import pytest
import torch
from allennlp.common import Params
from allennlp.common.checks import ConfigurationError
from allennlp.modules import Seq2SeqEncoder

import tests.conftest  # noqa: F401  (registers the plugin)
from lal_allennlp.modules.partitioned_transformer import (
    FeatureDropout,
    PartitionedTransformerEncoder,
)

SMALL = dict(d_model=16, num_layers=2, num_heads=2, d_kv=8, d_ff=12, max_len=32)


def make_encoder(**overrides) -> PartitionedTransformerEncoder:
    torch.manual_seed(0)
    return PartitionedTransformerEncoder(input_dim=10, **{**SMALL, **overrides})


def batch(lengths, dim=10, seed=1):
    """Random inputs for sequences of the given lengths (START and STOP included)."""
    generator = torch.Generator().manual_seed(seed)
    inputs = torch.randn(len(lengths), max(lengths), dim, generator=generator)
    mask = torch.arange(max(lengths)).unsqueeze(0) < torch.tensor(lengths).unsqueeze(1)
    return inputs, mask


@pytest.mark.parametrize("partitioned", [True, False])
@pytest.mark.parametrize("window", [(None, "strict"), (2, "strict"), (2, "relaxed")])
def test_shapes_output_dim_and_zero_padding(partitioned, window):
    encoder = make_encoder(
        partitioned=partitioned, attention_window=window[0], window_mode=window[1]
    )
    inputs, mask = batch([7, 4])
    output = encoder(inputs, mask)
    assert encoder.get_input_dim() == 10
    assert encoder.get_output_dim() == 16
    assert output.shape == (2, 7, encoder.get_output_dim())
    assert torch.all(output[1, 4:] == 0)
    assert torch.all(output[1, :4].abs().sum(-1) > 0)


@pytest.mark.parametrize("partitioned", [True, False])
@pytest.mark.parametrize("window", [(None, "strict"), (1, "strict"), (1, "relaxed")])
def test_padding_invariance(partitioned, window):
    encoder = make_encoder(
        partitioned=partitioned, attention_window=window[0], window_mode=window[1]
    )
    encoder.eval()
    inputs, mask = batch([6, 9])
    alone = encoder(inputs[:1, :6], mask[:1, :6])
    padded = encoder(inputs, mask)
    assert torch.allclose(alone[0], padded[0, :6], atol=1e-5)


def test_strict_window_gives_zero_attention_outside_the_window():
    encoder = make_encoder(attention_window=2, window_mode="strict")
    encoder.eval()
    inputs, mask = batch([9, 6])
    encoder(inputs, mask)
    positions = torch.arange(9)
    outside = (positions.unsqueeze(1) - positions.unsqueeze(0)).abs() > 2
    for weights in encoder.get_attention_weights():
        # shape (batch_size, num_heads, query, key)
        assert weights.shape == (2, 2, 9, 9)
        assert torch.all(weights[0][:, outside] == 0)
        assert torch.all(weights[0][:, ~outside] > 0)
        # The shorter sentence: no attention to padding, none outside the window.
        assert torch.all(weights[1, :, :6, 6:] == 0)
        assert torch.all(weights[1, :, :6, :6][:, outside[:6, :6]] == 0)
        assert torch.allclose(weights[:, :, :6].sum(-1), torch.ones(2, 2, 6))


def test_relaxed_window_always_shows_start_first_last_and_stop():
    encoder = make_encoder(attention_window=1, window_mode="relaxed")
    encoder.eval()
    inputs, mask = batch([10, 7])
    encoder(inputs, mask)
    for weights in encoder.get_attention_weights():
        for b, length in enumerate([10, 7]):
            always = [0, 1, length - 2, length - 1]  # START, first word, last word, STOP
            real = weights[b, :, :length, :length]
            assert torch.all(real[:, :, always] > 0)
            # Query 5 (far from every edge) sees only 4..6 and the four special positions.
            visible = sorted(set(always) | {4, 5, 6})
            hidden = [k for k in range(length) if k not in visible]
            assert torch.all(real[:, 5, hidden] == 0)
            assert torch.all(weights[b, :, :length, length:] == 0)


def test_without_window_every_real_position_is_attended():
    encoder = make_encoder()
    encoder.eval()
    inputs, mask = batch([8, 5])
    encoder(inputs, mask)
    weights = encoder.get_attention_weights()[0]
    assert torch.all(weights[0] > 0)
    assert torch.all(weights[1, :, :5, :5] > 0) and torch.all(weights[1, :, :5, 5:] == 0)


@pytest.mark.parametrize("partitioned", [True, False])
def test_gradients_reach_every_parameter(partitioned):
    encoder = make_encoder(partitioned=partitioned, attention_window=2, window_mode="relaxed")
    inputs, mask = batch([7, 5])
    encoder(inputs, mask).pow(2).sum().backward()
    for name, parameter in encoder.named_parameters():
        assert parameter.grad is not None, name
        assert parameter.grad.abs().sum() > 0, name


@pytest.mark.parametrize("partitioned", [True, False])
def test_query_key_scores_factor_into_content_and_position_parts(partitioned):
    """Partitioned: `q . k = q_c . k_c + q_p . k_p`, so the scores are f(content) + g(position)
    and swapping position halves between two inputs leaves their sum unchanged. The unfactored
    attention has cross terms and fails this."""
    encoder = make_encoder(partitioned=partitioned)
    attention = encoder.layers[0].attention
    generator = torch.Generator().manual_seed(3)
    content = torch.randn(2, 1, 6, 8, generator=generator)
    position = torch.randn(2, 1, 6, 8, generator=generator)

    def logits(c, p):
        return attention.attention_logits(torch.cat([c, p], dim=-1))

    mixed = logits(content[0], position[0]) + logits(content[1], position[1])
    swapped = logits(content[0], position[1]) + logits(content[1], position[0])
    assert torch.allclose(mixed, swapped, atol=1e-5) == partitioned
    if partitioned:
        # Changing only the position half changes the scores by a content-free amount.
        delta_a = logits(content[0], position[1]) - logits(content[0], position[0])
        delta_b = logits(content[1], position[1]) - logits(content[1], position[0])
        assert torch.allclose(delta_a, delta_b, atol=1e-5)


def test_builds_from_params():
    encoder = Seq2SeqEncoder.from_params(
        Params(
            {
                "type": "partitioned_transformer",
                "input_dim": 10,
                "d_model": 16,
                "num_layers": 3,
                "num_heads": 2,
                "d_kv": 8,
                "d_ff": 12,
                "attention_window": 3,
                "window_mode": "relaxed",
            }
        )
    )
    assert isinstance(encoder, PartitionedTransformerEncoder)
    assert len(encoder.layers) == 3 and encoder.window_mode == "relaxed"
    assert encoder.get_output_dim() == 16


def test_configuration_errors():
    with pytest.raises(ConfigurationError, match="window_mode"):
        make_encoder(attention_window=2, window_mode="loose")
    with pytest.raises(ConfigurationError, match="even"):
        make_encoder(d_model=15)
    # Inputs longer than max_len are encoded in windows (tests/modules/test_long_inputs.py).


def test_feature_dropout_drops_a_feature_at_every_position_of_a_sequence():
    dropout = FeatureDropout(0.5)
    torch.manual_seed(0)
    dropped = dropout(torch.ones(3, 6, 40))
    # shape (3, 1, 40): one keep/drop decision per sequence and feature
    assert torch.all(dropped == dropped[:, :1])
    assert set(dropped.unique().tolist()) == {0.0, 2.0}
    dropout.eval()
    assert torch.equal(dropout(torch.ones(3, 6, 40)), torch.ones(3, 6, 40))
