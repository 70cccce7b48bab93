import pytest
import torch
from allennlp.common import Params
from allennlp.common.checks import ConfigurationError
from allennlp.modules import Seq2SeqEncoder

import tests.conftest  # noqa: F401  (registers the plugin)
from lal_allennlp.modules.partitioned_transformer import (
    FeatureDropout,
    PartitionedTransformerEncoder,
    attention_key_mask,
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


# ---- Factoring only at the input (Kitaev & Klein 2018, sec. 3) ----------------------------

INPUT_ONLY = dict(partitioned=False, partition_input=True)


def test_partition_input_defaults_to_partitioned():
    assert make_encoder().partition_input is True
    assert make_encoder(partitioned=False).partition_input is False
    # The sum of content and position: both d_model wide.
    unfactored = make_encoder(partitioned=False)
    assert unfactored.content_projection.out_features == 16
    assert unfactored.position_embeddings.shape == (32, 16)


def test_input_only_factoring_concatenates_content_and_position_at_the_input():
    encoder = make_encoder(**INPUT_ONLY)
    encoder.eval()
    assert encoder.content_projection.out_features == 8
    assert encoder.position_embeddings.shape == (32, 8)
    inputs, mask = batch([7, 4])
    # shape (2, 7, 16): LayerNorm([W x ; p]) with the position of each index
    content = inputs @ encoder.content_projection.weight.T
    position = encoder.position_embeddings[:7].expand(2, 7, 8)
    expected = torch.nn.functional.layer_norm(
        torch.cat([content, position], dim=-1),
        (16,),
        encoder.input_norm.weight,
        encoder.input_norm.bias,
    )
    assert torch.allclose(encoder.embed(inputs), expected, atol=1e-6)
    output = encoder(inputs, mask)
    assert output.shape == (2, 7, encoder.get_output_dim()) == (2, 7, 16)
    assert torch.all(output[1, 4:] == 0)


def test_input_only_factoring_has_dense_layers():
    encoder = make_encoder(**INPUT_ONLY)
    for layer in encoder.layers:
        attention, feed_forward = layer.attention, layer.feed_forward
        assert not attention.partitioned and not feed_forward.partitioned
        # One (num_heads, d_model, d_kv) matrix per projection, no content/position blocks.
        for projection in (attention.query, attention.key, attention.value):
            assert projection.weight.shape == (2, 16, 8)
            assert not hasattr(projection, "weight_content")
        assert attention.output.weight.shape == (16, 2 * 8)
        assert feed_forward.hidden.weight.shape == (12, 16)
        assert feed_forward.output.weight.shape == (16, 12)
    # The same layers as the unfactored model: only the input differs.
    unfactored = make_encoder(partitioned=False)
    layer_shapes = {
        name: p.shape for name, p in unfactored.named_parameters() if name.startswith("layers.")
    }
    assert layer_shapes == {
        name: p.shape for name, p in encoder.named_parameters() if name.startswith("layers.")
    }


@pytest.mark.parametrize("window", [(None, "strict"), (1, "relaxed")])
def test_input_only_factoring_is_padding_invariant(window):
    encoder = make_encoder(attention_window=window[0], window_mode=window[1], **INPUT_ONLY)
    encoder.eval()
    inputs, mask = batch([6, 9])
    alone = encoder(inputs[:1, :6], mask[:1, :6])
    assert torch.allclose(alone[0], encoder(inputs, mask)[0, :6], atol=1e-5)


def test_input_only_factoring_trains_one_step():
    encoder = make_encoder(**INPUT_ONLY)
    encoder.eval()  # no dropout: the loss before and after the step is deterministic
    inputs, mask = batch([7, 5])
    target = torch.randn(2, 7, 16, generator=torch.Generator().manual_seed(4)) * mask.unsqueeze(-1)

    def loss():
        return (encoder(inputs, mask) - target).pow(2).sum()

    before = loss()
    before.backward()
    for name, parameter in encoder.named_parameters():
        assert parameter.grad is not None and parameter.grad.abs().sum() > 0, name
    optimizer = torch.optim.SGD(encoder.parameters(), lr=1e-3)
    optimizer.step()
    with torch.no_grad():
        assert loss() < before.detach()


def test_input_only_factoring_from_params_and_its_refusals():
    encoder = Seq2SeqEncoder.from_params(
        Params({"type": "partitioned_transformer", "input_dim": 10, **SMALL, **INPUT_ONLY})
    )
    assert (encoder.partitioned, encoder.partition_input) == (False, True)
    with pytest.raises(ConfigurationError, match="partitioned=True.*partition_input=False"):
        make_encoder(partitioned=True, partition_input=False)
    with pytest.raises(ConfigurationError, match="partition_input=True, d_model"):
        make_encoder(d_model=15, **INPUT_ONLY)


# ---- Test-time attention ablation (Kitaev & Klein 2018, sec. 3, Table 1) -----------------


def layer_inputs_and_outputs(encoder, inputs, mask):
    """Each layer's input and output in one forward (forward hooks)."""
    captured = []
    hooks = [
        layer.register_forward_hook(lambda _, args, out: captured.append((args[0], out)))
        for layer in encoder.layers
    ]
    encoder(inputs, mask)
    for hook in hooks:
        hook.remove()
    return captured


def ablated_like(encoder, **ablation):
    """An encoder of `encoder`'s sizes with `ablation`, holding `encoder`'s weights."""
    ablated = make_encoder(**ablation)
    ablated.load_state_dict(encoder.state_dict())
    ablated.eval()
    return ablated


def halves_term(attention, inputs, half):
    """`q_half . k_half / sqrt(d_kv)` computed from the projection weights of one half
    (`half` "content" or "position") of `inputs` `(batch_size, sequence_length, d_model)`."""
    content, position = inputs.chunk(2, dim=-1)
    x = content if half == "content" else position
    # shape (batch_size, num_heads, sequence_length, d_kv / 2)
    queries = torch.einsum("btf,hfa->bhta", x, getattr(attention.query, f"weight_{half}"))
    keys = torch.einsum("btf,hfa->bhta", x, getattr(attention.key, f"weight_{half}"))
    return queries @ keys.transpose(-1, -2) / (attention.d_kv ** 0.5)


def test_no_ablation_gives_the_same_outputs():
    plain = make_encoder(num_layers=3)
    plain.eval()
    inputs, mask = batch([9, 6])
    expected = plain(inputs, mask)
    for empty in ([], ()):
        same = make_encoder(
            num_layers=3, zero_content_attention=empty, zero_position_attention=empty
        )
        same.load_state_dict(plain.state_dict())
        same.eval()
        assert torch.equal(same(inputs, mask), expected)
    # Without ablation the scores are the full factored sum q_c . k_c + q_p . k_p.
    attention = plain.layers[0].attention
    x = plain.embed(inputs)
    full = halves_term(attention, x, "content") + halves_term(attention, x, "position")
    assert torch.allclose(attention.attention_logits(x), full, atol=1e-5)


@pytest.mark.parametrize("k", [1, 2, 3])
@pytest.mark.parametrize(
    "ablation, kept",
    [("zero_content_attention", "position"), ("zero_position_attention", "content")],
)
def test_ablating_one_term_of_layer_k_leaves_the_other_term(k, ablation, kept):
    plain = make_encoder(num_layers=3)
    plain.eval()
    ablated = ablated_like(plain, num_layers=3, **{ablation: [k]})
    assert [layer.attention.zero_content for layer in ablated.layers] == [
        ablation == "zero_content_attention" and number == k for number in (1, 2, 3)
    ]
    inputs, mask = batch([9, 6])
    plain_io = layer_inputs_and_outputs(plain, inputs, mask)
    ablated_io = layer_inputs_and_outputs(ablated, inputs, mask)
    # The layers below k are untouched: the same outputs, so layer k's input is the same.
    for below in range(k - 1):
        assert torch.equal(ablated_io[below][1], plain_io[below][1])
    layer_input = ablated_io[k - 1][0]
    assert torch.equal(layer_input, plain_io[k - 1][0])
    # Layer k's scores are exactly the kept term, computed here from the projection weights.
    attention = ablated.layers[k - 1].attention
    expected = halves_term(attention, layer_input, kept)
    assert torch.allclose(attention.attention_logits(layer_input), expected, atol=1e-6)
    # ... and its attention is their softmax over the keys each query may see.
    logits = expected.masked_fill(~mask[:, None, None, :], float("-inf"))
    assert torch.allclose(
        ablated.get_attention_weights()[k - 1], torch.softmax(logits, dim=-1), atol=1e-6
    )
    # The dropped term mattered: layer k's output changes.
    assert not torch.allclose(ablated_io[k - 1][1], plain_io[k - 1][1], atol=1e-4)


@pytest.mark.parametrize("window", [(None, "strict"), (1, "strict"), (1, "relaxed")])
def test_ablating_both_terms_everywhere_gives_uniform_attention_over_the_allowed_keys(window):
    all_layers = [1, 2]
    encoder = make_encoder(
        zero_content_attention=all_layers,
        zero_position_attention=all_layers,
        attention_window=window[0],
        window_mode=window[1],
    )
    encoder.eval()
    inputs, mask = batch([9, 6])
    encoder(inputs, mask)
    # shape (batch_size, query, key)
    allowed = attention_key_mask(mask, window[0], window[1]).expand(2, 9, 9).float()
    uniform = allowed / allowed.sum(-1, keepdim=True)
    for weights in encoder.get_attention_weights():
        for b, length in enumerate([9, 6]):
            # The real queries (a padded query's row is not used).
            real = weights[b, :, :length]
            assert torch.allclose(real, uniform[b, :length].expand_as(real), atol=1e-6)
    if window[0] is not None:
        assert torch.all(weights[0, :, 5, 2:4] == 0)  # outside the window: nothing


def test_ablation_adds_no_parameters_so_a_trained_state_dict_loads():
    plain = make_encoder()
    ablated = make_encoder(zero_content_attention=[1, 2], zero_position_attention=[2])
    assert list(plain.state_dict()) == list(ablated.state_dict())
    assert all(
        plain.state_dict()[name].shape == tensor.shape
        for name, tensor in ablated.state_dict().items()
    )
    ablated.load_state_dict(plain.state_dict(), strict=True)


def test_ablation_from_params():
    encoder = Seq2SeqEncoder.from_params(
        Params(
            {
                "type": "partitioned_transformer",
                "input_dim": 10,
                **SMALL,
                "zero_content_attention": [2],
                "zero_position_attention": [1, 2],
            }
        )
    )
    attentions = [layer.attention for layer in encoder.layers]
    switches = [(attention.zero_content, attention.zero_position) for attention in attentions]
    assert switches == [(False, True), (True, True)]


@pytest.mark.parametrize(
    "options, message",
    [
        (dict(zero_content_attention=[0]), r"names layer\(s\) \[0\], but .* 1 \.\. 2"),
        (dict(zero_content_attention=[1, 3]), r"zero_content_attention names layer\(s\) \[3\]"),
        (dict(zero_position_attention=[-1]), r"zero_position_attention names layer\(s\) \[-1\]"),
        (
            dict(partitioned=False, zero_content_attention=[1]),
            "zero_content_attention.*partitioned=True.*partitioned=False",
        ),
        (dict(partitioned=False, zero_position_attention=[1]), "zero_position_attention"),
        (dict(zero_position_attention=[1], **INPUT_ONLY), "partitioned=False"),
    ],
)
def test_ablation_refusals(options, message):
    with pytest.raises(ConfigurationError, match=message):
        make_encoder(**options)


# ---- Windowed attention at test time (sec. 4.2) ------------------------------------------


@pytest.mark.parametrize("window_mode", ["strict", "relaxed"])
def test_a_window_larger_than_the_sentence_is_no_window(window_mode):
    plain = make_encoder()
    plain.eval()
    inputs, mask = batch([9, 6])
    expected = plain(inputs, mask)
    for window in (8, 20):  # 8: the longest distance between two of 9 positions
        windowed = ablated_like(plain, attention_window=window, window_mode=window_mode)
        assert torch.allclose(windowed(inputs, mask), expected, atol=1e-6)
    narrow = ablated_like(plain, attention_window=7, window_mode="strict")
    assert not torch.allclose(narrow(inputs, mask), expected, atol=1e-4)
