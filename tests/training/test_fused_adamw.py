"""`fused_adamw` makes the same updates as AllenNLP's `adamw`, parameter groups included."""
import copy

import pytest
import torch
from allennlp.common import Params
from allennlp.training.optimizers import Optimizer

import lal_allennlp  # noqa: F401  (registers fused_adamw)


def _model() -> torch.nn.Module:
    torch.manual_seed(0)
    return torch.nn.Sequential(
        torch.nn.Embedding(20, 8), torch.nn.Linear(8, 16), torch.nn.Tanh(), torch.nn.Linear(16, 3)
    )


def _train(optimizer_params: dict, steps: int = 5) -> torch.nn.Module:
    model = _model()
    optimizer = Optimizer.from_params(
        model_parameters=list(model.named_parameters()), params=Params(copy.deepcopy(optimizer_params))
    )
    generator = torch.Generator().manual_seed(1)
    for _ in range(steps):
        words = torch.randint(0, 20, (4, 6), generator=generator)
        target = torch.randint(0, 3, (4, 6), generator=generator)
        loss = torch.nn.functional.cross_entropy(model(words).reshape(-1, 3), target.reshape(-1))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return model


@pytest.mark.parametrize("weight_decay", [0.0, 0.01])
def test_fused_adamw_equals_adamw(weight_decay):
    settings = {
        "lr": 1e-2,
        "weight_decay": weight_decay,
        # The embedding (parameter "0.weight") learns at a tenth of the rate.
        "parameter_groups": [[["^0\\."], {"lr": 1e-3}]],
    }
    reference = _train({"type": "adamw", **settings})
    fused = _train({"type": "fused_adamw", **settings})
    untrained = _model()
    for (name, expected), actual, start in zip(
        reference.named_parameters(), fused.parameters(), untrained.parameters()
    ):
        assert not torch.equal(expected, start), f"{name} did not move"
        torch.testing.assert_close(actual, expected, rtol=1e-5, atol=1e-6, msg=name)


def test_fused_adamw_uses_the_fused_kernel():
    model = _model()
    optimizer = Optimizer.from_params(
        model_parameters=list(model.named_parameters()), params=Params({"type": "fused_adamw"})
    )
    assert all(group["fused"] for group in optimizer.param_groups)
