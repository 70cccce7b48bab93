import itertools
import math

import pytest
import torch
from allennlp.common import Params
from allennlp.modules import Seq2SeqEncoder

import tests.conftest  # noqa: F401  (registers the plugin)
from lal_allennlp.modules.label_attention import LabelAttentionLayer

INPUT_DIM = 12
SMALL = dict(num_heads=3, d_kv=8, d_proj=6, d_ff=10)
# (query_vectors, concatenate_heads, use_feed_forward, partitioned)
SWITCHES = list(itertools.product([True, False], repeat=4))


def make_layer(switches=(True, True, True, True), **overrides) -> LabelAttentionLayer:
    torch.manual_seed(0)
    query_vectors, concatenate_heads, use_feed_forward, partitioned = switches
    return LabelAttentionLayer(
        INPUT_DIM,
        query_vectors=query_vectors,
        concatenate_heads=concatenate_heads,
        use_feed_forward=use_feed_forward,
        partitioned=partitioned,
        **{**SMALL, **overrides},
    )


def batch(lengths, seed=1):
    generator = torch.Generator().manual_seed(seed)
    inputs = torch.randn(len(lengths), max(lengths), INPUT_DIM, generator=generator)
    mask = torch.arange(max(lengths)).unsqueeze(0) < torch.tensor(lengths).unsqueeze(1)
    return inputs, mask


@pytest.mark.parametrize("switches", SWITCHES)
def test_shapes_output_dim_and_attention_shape(switches):
    query_vectors, concatenate_heads, _, _ = switches
    layer = make_layer(switches)
    inputs, mask = batch([6, 4])
    output = layer(inputs, mask)
    expected_dim = 3 * 6 if concatenate_heads else INPUT_DIM
    assert layer.get_input_dim() == INPUT_DIM
    assert layer.get_output_dim() == expected_dim
    assert layer.output_partitions == (3 if concatenate_heads else 1)
    assert output.shape == (2, 6, expected_dim)
    assert torch.all(output[1, 4:] == 0)
    expected_attention = (2, 3, 6) if query_vectors else (2, 3, 6, 6)
    assert layer.last_attention.shape == expected_attention


@pytest.mark.parametrize("switches", SWITCHES)
def test_padding_invariance(switches):
    layer = make_layer(switches)
    layer.eval()
    inputs, mask = batch([5, 8])
    alone = layer(inputs[:1, :5], mask[:1, :5])
    attention_alone = layer.last_attention
    padded = layer(inputs, mask)
    assert torch.allclose(alone[0], padded[0, :5], atol=1e-5)
    attention_padded = layer.last_attention[0, ..., :5]
    if not switches[0]:  # query matrix: (batch, heads, query, key)
        attention_padded = attention_padded[:, :5]
    assert torch.allclose(attention_alone[0], attention_padded, atol=1e-6)


def test_each_head_attention_sums_to_one_over_real_words_and_is_zero_on_padding():
    layer = make_layer()
    layer.eval()
    inputs, mask = batch([7, 3, 5])
    layer(inputs, mask)
    # shape (batch_size, num_heads, sequence_length)
    attention = layer.last_attention
    for b, length in enumerate([7, 3, 5]):
        assert torch.allclose(attention[b, :, :length].sum(-1), torch.ones(3))
        assert torch.all(attention[b, :, :length] > 0)
        assert torch.all(attention[b, :, length:] == 0)


@pytest.mark.parametrize("switches", SWITCHES)
def test_gradients_reach_every_parameter(switches):
    layer = make_layer(switches, residual_dropout=0.1)
    inputs, mask = batch([6, 4])
    layer(inputs, mask).pow(2).sum().backward()
    for name, parameter in layer.named_parameters():
        assert parameter.grad is not None, name
        assert parameter.grad.abs().sum() > 0, name


@pytest.mark.parametrize("query_vectors", [True, False])
@pytest.mark.parametrize("partitioned", [True, False])
def test_scores_factor_into_content_and_position_parts(query_vectors, partitioned):
    """Partitioned: `q . k = q_c . k_c + q_p . k_p`, so the scores are f(content) +
    g(position) and swapping the position halves of two inputs leaves the sum of their scores
    unchanged. With a query matrix and unpartitioned projections the cross terms break this.
    With query vectors the score `q_i . W_i x` is linear in `x`, so it factors either way."""
    layer = make_layer((query_vectors, True, True, partitioned))
    generator = torch.Generator().manual_seed(4)
    content = torch.randn(2, 1, 5, INPUT_DIM // 2, generator=generator)
    position = torch.randn(2, 1, 5, INPUT_DIM // 2, generator=generator)

    def logits(c, p):
        return layer.attention_logits(torch.cat([c, p], dim=-1))

    mixed = logits(content[0], position[0]) + logits(content[1], position[1])
    swapped = logits(content[0], position[1]) + logits(content[1], position[0])
    assert torch.allclose(mixed, swapped, atol=1e-5) == (partitioned or query_vectors)


@pytest.mark.parametrize("partitioned", [True, False])
def test_keys_and_values_keep_content_and_position_apart(partitioned):
    """Partitioned: the first half of every head's key and value depends on the content half
    of the input only, the second half on the position half only."""
    layer = make_layer((True, True, True, partitioned))
    inputs, _ = batch([5])
    moved_position = inputs.clone()
    moved_position[..., INPUT_DIM // 2 :] += 1.0
    moved_content = inputs.clone()
    moved_content[..., : INPUT_DIM // 2] += 1.0
    for projection in (layer.key, layer.value):
        # shape (batch_size, num_heads, sequence_length, d_kv)
        base = projection(inputs)
        content_half_kept = torch.allclose(base[..., :4], projection(moved_position)[..., :4])
        position_half_kept = torch.allclose(base[..., 4:], projection(moved_content)[..., 4:])
        assert content_half_kept == partitioned
        assert position_half_kept == partitioned


def test_matches_a_per_head_reference_computation():
    """Unpartitioned, no feed-forward: head i's slice of word t is
    LayerNorm(W_reduce (x_t + W_context c_i)) with c_i = softmax(q_i K_i^T / sqrt(d)) V_i."""
    layer = make_layer((True, True, False, False))
    layer.eval()
    inputs, mask = batch([5])
    output = layer(inputs, mask)[0]
    x = inputs[0]
    for head in range(3):
        keys = x @ layer.key.weight[head]
        values = x @ layer.value.weight[head]
        weights = torch.softmax(keys @ layer.query[head] / math.sqrt(8), dim=0)
        context = weights @ values
        expected = layer.layer_norm(layer.reduce(x + layer.context_projection(context)))
        assert torch.allclose(output[:, head * 6 : (head + 1) * 6], expected, atol=1e-5)
        assert torch.allclose(layer.last_attention[0, head], weights, atol=1e-6)


@pytest.mark.parametrize("partitioned", [True, False])
@pytest.mark.parametrize("concatenate_heads", [True, False])
def test_query_vectors_without_per_word_keys_equal_the_explicit_keys_and_values(
    partitioned, concatenate_heads
):
    """With query vectors the layer never builds per-word keys or values (it contracts the
    query with the key matrix and pools the words before the value matrix); the result must
    equal attention over explicit keys `K_i = W_i^K X` and values `V_i = W_i^V X`."""
    layer = make_layer((True, concatenate_heads, False, partitioned))
    layer.eval()
    inputs, mask = batch([5, 3])
    output = layer(inputs, mask)
    logits = layer.attention_logits(inputs)  # explicit keys
    logits = logits.masked_fill(~mask[:, None, None, :], torch.finfo(logits.dtype).min)
    probabilities = torch.softmax(logits, dim=-1)
    assert torch.allclose(layer.last_attention, probabilities.squeeze(2), atol=1e-6)
    # shape (batch_size, num_heads, 1, d_kv)
    context = torch.matmul(probabilities, layer.value(inputs))  # explicit values
    if concatenate_heads:
        projected = layer.reduce(layer._project_context(context))
        per_head = layer.reduce(inputs).unsqueeze(1) + projected
        expected = layer.layer_norm(per_head).transpose(1, 2).flatten(2)
    else:
        combined = layer._project_context(context.transpose(1, 2).flatten(-2))
        expected = layer.layer_norm(inputs + combined)
    assert torch.allclose(output, expected * mask.unsqueeze(-1), atol=1e-5)


def test_without_feed_forward_each_slice_depends_only_on_its_head():
    """Changing head 1's key matrix changes only head 1's slice of the output (Figure 4)."""
    layer = make_layer((True, True, False, True))
    layer.eval()
    inputs, mask = batch([6])
    before = layer(inputs, mask)
    with torch.no_grad():
        layer.key.weight_content[1] += 0.5
    after = layer(inputs, mask)
    changed = (before - after).abs().view(1, 6, 3, 6).sum(dim=(0, 1, 3))
    assert changed[1] > 1e-4
    assert changed[0] == 0 and changed[2] == 0


def test_residual_dropout_is_per_head_and_only_in_training():
    layer = make_layer(
        (True, True, False, True), residual_dropout=0.5, attention_dropout=0.0
    )
    inputs, mask = batch([6])
    layer.eval()
    assert torch.equal(layer(inputs, mask), layer(inputs, mask))
    layer.train()
    torch.manual_seed(5)
    dropped = layer(inputs, mask)
    layer.eval()
    assert not torch.allclose(dropped, layer(inputs, mask))


def test_builds_from_params_with_paper_defaults():
    layer = Seq2SeqEncoder.from_params(
        Params({"type": "label_attention", "input_dim": 16, "d_ff": 8})
    )
    assert isinstance(layer, LabelAttentionLayer)
    assert layer.num_heads == 112 and layer.d_kv == 128 and layer.d_proj == 128
    assert layer.get_output_dim() == 112 * 128
    assert layer.query_vectors and layer.concatenate_heads and layer.partitioned
    assert layer.feed_forward is not None and layer.residual_dropout.p == 0.0
    ablated = Seq2SeqEncoder.from_params(
        Params(
            {
                "type": "label_attention",
                "input_dim": 16,
                "num_heads": 4,
                "concatenate_heads": False,
                "query_vectors": False,
                "use_feed_forward": False,
            }
        )
    )
    assert ablated.get_output_dim() == 16 and ablated.feed_forward is None
