"""FastDropout: the same distribution as torch's dropout, with a cheaper CPU mask."""
import pytest
import torch
from allennlp.common import Params
from allennlp.data import DatasetReader, Vocabulary
from allennlp.models import Model

from lal_allennlp.modules.fast_dropout import (
    FastDropout,
    fast_dropout,
    keep_mask,
    replace_dropout,
    rounded_probability,
)
from lal_allennlp.modules.partitioned_transformer import FeatureDropout
from tests.conftest import FIXTURES_ROOT, minilm_parser_params

N = 1 << 20


@pytest.mark.parametrize("p", [0.1, 0.2, 0.5, 0.9])
def test_each_of_the_four_fields_of_a_draw_is_dropped_with_probability_p(p):
    torch.manual_seed(0)
    mask = keep_mask((N // 4, 4), p, torch.empty(0))
    dropped = (mask == 0).double().mean(dim=0)
    # 6 standard deviations of a binomial proportion over N / 4 elements.
    tolerance = 6 * (p * (1 - p) / (N // 4)) ** 0.5
    assert torch.all((dropped - p).abs() < tolerance), dropped.tolist()


def test_neighbouring_elements_are_independent():
    torch.manual_seed(1)
    kept = (keep_mask((N,), 0.5, torch.empty(0)) > 0).double()
    # P(both kept) for neighbours inside one draw and across draws: 0.25 each.
    both = kept[:-1] * kept[1:]
    assert abs(both.mean().item() - 0.25) < 6 * (0.25 * 0.75 / N) ** 0.5


@pytest.mark.parametrize("p", [0.1, 0.3, 0.5, 0.9])
def test_kept_elements_share_one_scale_that_keeps_the_expected_value(p):
    torch.manual_seed(3)
    mask = keep_mask((N,), p, torch.empty(0, dtype=torch.float64))
    assert mask.dtype == torch.float64
    # Every kept element is scaled by the same factor, 1 / (1 - p'), where p' is the drop
    # probability actually used: the one `rounded_probability` reports, within half a 16-bit
    # step of p.
    values = mask.unique().tolist()
    assert len(values) == 2 and values[0] == 0.0
    used = 1.0 - 1.0 / values[1]
    assert used == pytest.approx(rounded_probability(p), rel=1e-12)
    assert abs(used - p) <= 0.5 / 65536
    # Elements are dropped at that rate, and the mask's mean is 1, so the output's expected
    # value is the input (6 standard deviations over N elements).
    assert abs((mask == 0).double().mean().item() - used) < 6 * (p * (1 - p) / N) ** 0.5
    assert abs(mask.mean().item() - 1.0) < 6 * (p / (1 - p) / N) ** 0.5


def test_dropout_keeps_the_mean_of_a_constant_input():
    torch.manual_seed(4)
    for p in (0.2, 0.7):
        output = fast_dropout(torch.full((N,), 3.0, dtype=torch.float64), p)
        assert abs(output.mean().item() - 3.0) < 6 * 3.0 * (p / (1 - p) / N) ** 0.5, p


def test_output_is_the_input_times_the_mask_and_so_is_the_gradient():
    torch.manual_seed(6)
    inputs = torch.randn(8, 50, requires_grad=True)
    torch.manual_seed(5)
    output = fast_dropout(inputs, 0.3)
    torch.manual_seed(5)
    mask = keep_mask(inputs.shape, 0.3, inputs)
    assert torch.equal(output, inputs * mask)
    output.sum().backward()
    assert torch.equal(inputs.grad, mask)
    # The gradient flows through the kept elements only, scaled as they were.
    dropped = output == 0
    assert 0 < dropped.sum() < dropped.numel()
    assert torch.all(inputs.grad[dropped] == 0)
    assert torch.all(inputs.grad[~dropped] == 1.0 / (1.0 - rounded_probability(0.3)))


def test_seeded_masks_repeat_and_unseeded_ones_differ():
    inputs = torch.ones(100, 100)
    torch.manual_seed(7)
    first = fast_dropout(inputs, 0.2)
    second = fast_dropout(inputs, 0.2)
    torch.manual_seed(7)
    again = fast_dropout(inputs, 0.2)
    assert torch.equal(first, again)
    assert not torch.equal(first, second)


def test_identity_in_eval_mode_and_with_p_zero():
    inputs = torch.randn(4, 5)
    layer = FastDropout(0.5).eval()
    assert layer(inputs) is inputs
    assert FastDropout(0.0).train()(inputs) is inputs


def test_probability_out_of_range_is_refused():
    with pytest.raises(ValueError, match="must be in"):
        keep_mask((3,), 1.0, torch.empty(0))


def test_feature_dropout_shares_one_mask_over_positions():
    torch.manual_seed(2)
    output = FeatureDropout(0.5).train()(torch.ones(3, 40, 16))
    assert torch.equal(output, output[:, :1, :].expand_as(output))
    assert 0 < (output == 0).sum() < output.numel()


def test_replace_dropout_swaps_exact_dropout_layers_only():
    module = torch.nn.Sequential(
        torch.nn.Linear(3, 3),
        torch.nn.Dropout(0.3),
        torch.nn.Sequential(torch.nn.Dropout(0.1), FeatureDropout(0.2)),
    )
    assert replace_dropout(module) == 2
    assert type(module[1]) is FastDropout and module[1].p == 0.3
    assert type(module[2][0]) is FastDropout and module[2][0].p == 0.1
    assert type(module[2][1]) is FeatureDropout
    assert replace_dropout(module) == 0


def test_the_parser_and_its_transformer_embedder_have_fast_dropout():
    reader = DatasetReader.from_params(Params({"type": "lal_ptb"}))
    vocab = Vocabulary.from_instances(reader.read(str(FIXTURES_ROOT / "ptb" / "train")))
    params = minilm_parser_params(dropout=0.2)
    params["text_field_embedder"]["token_embedders"]["tokens"]["type"] = "lal_transformer"
    model = Model.from_params(vocab=vocab, params=Params(params))
    dropouts = [m for m in model.modules() if isinstance(m, torch.nn.Dropout)]
    assert dropouts and all(type(m) is FastDropout for m in dropouts)
    # MiniLM's hidden dropout keeps its probability.
    assert {m.p for m in model.text_field_embedder.modules() if type(m) is FastDropout} == {0.1}


def test_p_one_drops_everything_and_scalars_work():
    inputs = torch.randn(3, 4)
    assert torch.equal(fast_dropout(inputs, 1.0), torch.zeros(3, 4))
    assert keep_mask((), 0.5, torch.empty(0)).shape == ()
