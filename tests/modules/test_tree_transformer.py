import math

import pytest
import torch

from lal_allennlp.modules.tree_transformer import (
    LINK_FLOOR,
    ConstituentAttention,
    TreeAttention,
    TreeTransformerEncoder,
    constituent_prior,
)


def explicit_prior(links: torch.Tensor, diagonal: float) -> torch.Tensor:
    """`C[i, j]` as the paper writes it: the product of the links between i and j, loop by
    loop."""
    n = links.size(-1) + 1
    prior = torch.empty(links.size(0), n, n, dtype=torch.float64)
    for b in range(links.size(0)):
        for i in range(n):
            for j in range(n):
                if i == j:
                    prior[b, i, j] = diagonal
                    continue
                product = 1.0
                for k in range(min(i, j), max(i, j)):
                    product *= links[b, k].item()
                prior[b, i, j] = product
    return prior


@pytest.mark.parametrize("diagonal", [1.0, 0.0])
def test_prior_equals_the_explicit_product_and_is_symmetric(diagonal):
    torch.manual_seed(0)
    links = torch.rand(3, 6, dtype=torch.float64) * 0.98 + 0.01
    prior = constituent_prior(links, diagonal)
    assert torch.allclose(prior, explicit_prior(links, diagonal), atol=1e-12)
    assert torch.equal(prior, prior.transpose(1, 2))
    assert torch.equal(torch.diagonal(prior, dim1=1, dim2=2), torch.full((3, 7), diagonal,
                                                                         dtype=torch.float64))


def test_prior_of_a_zero_link_cuts_the_sentence_in_two():
    links = torch.tensor([[0.9, 0.0, 0.5]])
    prior = constituent_prior(links)
    # Words 0-1 and 2-3 are joined; nothing crosses the zero link (up to the floor).
    assert prior[0, 0, 1].item() == pytest.approx(0.9)
    assert prior[0, 2, 3].item() == pytest.approx(0.5)
    assert prior[0, 1, 2].item() == pytest.approx(LINK_FLOOR, rel=1e-3)
    assert prior[0, 0, 3].item() < 1e-9


def test_links_are_the_geometric_mean_of_the_neighbour_softmaxes():
    torch.manual_seed(1)
    d_model, n = 8, 5
    module = ConstituentAttention(d_model, score_scale=None, link_layer_norm=False)
    inputs = torch.randn(1, n, d_model)
    mask = torch.ones(1, n, dtype=torch.bool)
    previous = torch.rand(1, n - 1)
    links = module(inputs, mask, previous)
    query, key = module.query(inputs)[0], module.key(inputs)[0]
    score = lambda i, j: (query[i] @ key[j]).item() / (d_model / 2)  # noqa: E731

    def p(i, j):  # word i's probability of choosing neighbour j among its neighbours
        neighbours = [k for k in (i - 1, i + 1) if 0 <= k < n]
        return math.exp(score(i, j)) / sum(math.exp(score(i, k)) for k in neighbours)

    for k in range(n - 1):
        new = math.sqrt(p(k, k + 1) * p(k + 1, k) + LINK_FLOOR)
        expected = previous[0, k].item() + (1 - previous[0, k].item()) * new
        assert links[0, k].item() == pytest.approx(expected, rel=1e-5)


def test_score_scale_is_a_named_argument():
    torch.manual_seed(2)
    inputs = torch.randn(1, 4, 8)
    mask = torch.ones(1, 4, dtype=torch.bool)
    zero = torch.zeros(1, 3)
    paper = ConstituentAttention(8, score_scale=None, link_layer_norm=False)
    authors = ConstituentAttention(8, score_scale=256.0, link_layer_norm=False)
    authors.load_state_dict(paper.state_dict())
    # A large divisor flattens the softmaxes of the middle words towards 1/2 (the first and
    # last words have one neighbour each, chosen with probability 1): links sqrt(1/2), 1/2,
    # sqrt(1/2).
    flat = authors(inputs, mask, zero)
    half = math.sqrt(0.5)
    assert torch.allclose(flat, torch.tensor([[half, 0.5, half]]), atol=0.02)
    assert not torch.allclose(paper(inputs, mask, zero), flat, atol=0.02)


def encoder(**kwargs) -> TreeTransformerEncoder:
    torch.manual_seed(3)
    settings = dict(d_model=16, num_layers=4, num_heads=4, d_ff=32)
    settings.update(kwargs)
    return TreeTransformerEncoder(12, **settings).eval()


def test_links_never_decrease_with_depth_and_are_probabilities():
    model = encoder()
    inputs = torch.randn(3, 9, 12)
    mask = torch.ones(3, 9, dtype=torch.bool)
    _, links = model.forward_with_links(inputs, mask)
    assert links.shape == (3, 4, 8)
    assert (links[:, 1:] >= links[:, :-1]).all()
    assert ((links >= 0) & (links <= 1)).all()


@pytest.mark.parametrize("settings", [{}, {"link_layer_norm": True, "prior_diagonal": 0.0,
                                           "renormalise": True, "score_scale": 256.0}])
def test_padding_does_not_change_outputs_or_links(settings):
    model = encoder(**settings)
    torch.manual_seed(4)
    lengths = [7, 3, 5]
    inputs = torch.randn(3, 7, 12)
    mask = torch.arange(7).unsqueeze(0) < torch.tensor(lengths).unsqueeze(1)
    outputs, links = model.forward_with_links(inputs, mask)
    for b, n in enumerate(lengths):
        alone, alone_links = model.forward_with_links(inputs[b : b + 1, :n], mask[b : b + 1, :n])
        assert torch.allclose(outputs[b, :n], alone[0], atol=1e-5)
        assert torch.allclose(links[b, :, : n - 1], alone_links[0], atol=1e-6)
        # Padding: zero output, zero links.
        assert (outputs[b, n:] == 0).all()
        assert (links[b, :, n - 1 :] == 0).all()


def test_a_one_word_sentence_has_no_links_and_finite_output():
    model = encoder()
    outputs, links = model.forward_with_links(torch.randn(1, 1, 12), torch.ones(1, 1).bool())
    assert links.shape == (1, 4, 0)
    assert torch.isfinite(outputs).all()


def test_gradients_are_finite_with_padding():
    model = encoder().train()
    inputs = torch.randn(2, 6, 12, requires_grad=True)
    mask = torch.tensor([[True] * 6, [True] * 2 + [False] * 4])
    outputs, links = model.forward_with_links(inputs, mask)
    (outputs.sum() + links.sum()).backward()
    assert torch.isfinite(inputs.grad).all()
    assert all(torch.isfinite(p.grad).all() for p in model.parameters() if p.grad is not None)


def test_attention_is_softmax_times_prior_with_the_chosen_options():
    torch.manual_seed(5)
    n, d_model = 5, 8
    inputs = torch.randn(1, n, d_model)
    mask = torch.tensor([[True] * 4 + [False]])
    prior = constituent_prior(torch.tensor([[0.9, 0.2, 0.7, 0.0]]), diagonal=0.0)
    attention = TreeAttention(d_model, num_heads=2, dropout=0.0, renormalise=False).eval()
    qkv = attention.qkv(inputs).view(1, n, 3, 2, 4).permute(2, 0, 3, 1, 4)
    scores = (qkv[0] @ qkv[1].transpose(-1, -2) / 2.0).masked_fill(~mask[:, None, None], -1e9)
    expected_weights = torch.softmax(scores, -1) * prior.unsqueeze(1)
    expected = attention.output(
        (expected_weights @ qkv[2]).transpose(1, 2).reshape(1, n, d_model)
    )
    assert torch.allclose(attention(inputs, mask, prior), expected, atol=1e-6)
    # With renormalisation, the rows of C ⊙ softmax are divided by their sums.
    attention.renormalise = True
    rows = expected_weights / expected_weights.sum(-1, keepdim=True)
    renormalised = attention.output((rows @ qkv[2]).transpose(1, 2).reshape(1, n, d_model))
    # (the padded query's row, whose prior is ~0 everywhere, is left out: its sum is floored)
    assert torch.allclose(attention(inputs, mask, prior)[:, :4], renormalised[:, :4], atol=1e-5)


def test_without_the_prior_the_layers_are_the_same_with_plain_attention(monkeypatch):
    """`constituent_prior=False` drops the link scorers and nothing else: with the other
    weights copied, it computes what the full encoder computes with a prior of all ones."""
    import lal_allennlp.modules.tree_transformer as tree_transformer

    torch.manual_seed(11)
    settings = dict(d_model=8, num_layers=3, num_heads=2, d_ff=16, dropout=0.0)
    full = TreeTransformerEncoder(6, **settings).eval()
    plain = TreeTransformerEncoder(6, constituent_prior=False, **settings).eval()
    missing, unexpected = plain.load_state_dict(full.state_dict(), strict=False)
    assert not missing and unexpected and all(".constituents." in k for k in unexpected)
    inputs = torch.randn(2, 5, 6)
    mask = torch.tensor([[True] * 5, [True] * 3 + [False] * 2])
    outputs, links = plain.forward_with_links(inputs, mask)
    assert torch.equal(links, torch.zeros(2, 3, 4))
    # The prior does change the full encoder's output ...
    assert not torch.allclose(full(inputs, mask), outputs, atol=1e-4)
    # ... and a prior of ones is plain attention.
    monkeypatch.setattr(
        tree_transformer, "constituent_prior", lambda links, diagonal: torch.ones(
            links.size(0), links.size(1) + 1, links.size(1) + 1
        )
    )
    assert torch.allclose(full(inputs, mask), outputs, atol=1e-6)
