"""The `time_budget` callback: slanted triangular rates over elapsed time, and the real
AllenNLP trainer stops after the last epoch that fits the budget."""
import pytest
import torch
from allennlp.common import Params
from allennlp.common.checks import ConfigurationError
from allennlp.data import Instance, Vocabulary
from allennlp.data.data_loaders import SimpleDataLoader
from allennlp.data.fields import TensorField
from allennlp.models import Model
from allennlp.training import GradientDescentTrainer
from allennlp.training.callbacks import TrainerCallback
from allennlp.training.learning_rate_schedulers import LearningRateScheduler

from lal_allennlp.training import TimeBudget
from tests.training.step_clock import StepClock


def test_rate_factor_equals_allennlps_slanted_triangular_over_time():
    # AllenNLP's schedule over 100 steps of one epoch; ours over 100 seconds.
    parameter = torch.nn.Parameter(torch.zeros(1))
    optimizer = torch.optim.SGD([parameter], lr=1.0)
    reference = LearningRateScheduler.from_params(
        optimizer=optimizer,
        num_epochs=1,
        num_steps_per_epoch=100,
        params=Params({"type": "slanted_triangular", "cut_frac": 0.06, "ratio": 32}),
    )
    budget = TimeBudget("unused", minutes=100 / 60, cut_frac=0.06, ratio=32)
    for step in range(101):
        reference.step_batch(step)
        assert budget.learning_rate_factor(float(step)) == pytest.approx(
            optimizer.param_groups[0]["lr"], rel=1e-12
        ), step
    assert budget.learning_rate_factor(250.0) == pytest.approx(1 / 32)


class _Regression(Model):
    """A linear regression during which time passes only when it runs a batch: one second
    per batch (training or validation) on `clock`."""

    def __init__(self, clock: StepClock) -> None:
        super().__init__(Vocabulary())
        self.linear = torch.nn.Linear(2, 1)
        self.clock = clock
        self.rates = []  # the learning rate in force at each training batch
        self.optimizer = None

    def forward(self, x, y):
        if self.training:
            self.rates.append(self.optimizer.param_groups[0]["lr"])
        self.clock.tick(1.0)
        return {"loss": ((self.linear(x).squeeze(-1) - y) ** 2).mean()}


def _loader(n_batches: int) -> SimpleDataLoader:
    torch.manual_seed(n_batches)
    instances = [
        Instance({"x": TensorField(torch.randn(2)), "y": TensorField(torch.randn(()))})
        for _ in range(n_batches)
    ]
    return SimpleDataLoader(instances, batch_size=1)


def test_trainer_stops_after_the_last_epoch_that_fits(tmp_path):
    clock = StepClock()
    model = _Regression(clock)
    model.optimizer = torch.optim.SGD(model.parameters(), lr=0.5)
    # Epochs of 4 training batches and 1 validation batch: 5 seconds each. After epoch 1, one
    # more fits in 12 seconds: the schedule's horizon moves from 12 to 10 seconds. After
    # epoch 2 none fits: two epochs, not the 10 allowed.
    budget = TimeBudget(str(tmp_path), minutes=12 / 60, cut_frac=0.25, ratio=32)
    budget.clock = clock
    train, dev = _loader(4), _loader(1)
    for loader in (train, dev):
        loader.index_with(model.vocab)
    trainer = GradientDescentTrainer(
        model,
        model.optimizer,
        train,
        validation_data_loader=dev,
        num_epochs=10,
        serialization_dir=str(tmp_path),
        callbacks=[budget],
    )
    trainer.train()
    assert trainer._epochs_completed == 2
    assert budget.horizon == 10.0

    def rate(seconds: float, horizon: float) -> float:
        budget.horizon = horizon
        return 0.5 * budget.learning_rate_factor(seconds)

    # Rates set after each training batch from the clock (epoch 2 starts after validation).
    expected = [rate(s, 12.0) for s in (0, 1, 2, 3)] + [rate(s, 10.0) for s in (5, 6, 7, 8)]
    assert model.rates == pytest.approx(expected)
    # Warm-up peaks at a quarter of the horizon (3 s), then the rate falls to 1/32 at 10 s.
    assert max(model.rates) == pytest.approx(0.5)
    assert rate(10.0, 10.0) == pytest.approx(0.5 / 32)


def test_the_trainers_epoch_cap_ends_the_schedule(tmp_path):
    clock = StepClock()
    model = _Regression(clock)
    model.optimizer = torch.optim.SGD(model.parameters(), lr=0.5)
    budget = TimeBudget(str(tmp_path), minutes=1, cut_frac=0.25)  # 60 s: 12 epochs would fit
    budget.clock = clock
    train, dev = _loader(4), _loader(1)
    for loader in (train, dev):
        loader.index_with(model.vocab)
    trainer = GradientDescentTrainer(
        model, model.optimizer, train, validation_data_loader=dev, num_epochs=3, callbacks=[budget]
    )
    trainer.train()
    assert trainer._epochs_completed == 3
    assert budget.horizon == 15.0  # the end of epoch 3, planned after epoch 2


def test_time_budget_refuses_a_learning_rate_scheduler(tmp_path):
    clock = StepClock()
    model = _Regression(clock)
    model.optimizer = torch.optim.SGD(model.parameters(), lr=0.5)
    train = _loader(2)
    train.index_with(model.vocab)
    scheduler = LearningRateScheduler.from_params(
        optimizer=model.optimizer, params=Params({"type": "constant"})
    )
    trainer = GradientDescentTrainer(
        model,
        model.optimizer,
        train,
        num_epochs=1,
        learning_rate_scheduler=scheduler,
        callbacks=[TimeBudget(str(tmp_path), minutes=1)],
    )
    with pytest.raises(ConfigurationError, match="learning_rate_scheduler"):
        trainer.train()


def test_time_budget_is_registered():
    callback = TrainerCallback.from_params(
        params=Params({"type": "time_budget", "minutes": 15}), serialization_dir="x"
    )
    assert isinstance(callback, TimeBudget) and callback.seconds == 900
