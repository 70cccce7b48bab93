"""
`allennlp train --recover` with the `time_budget` callback: after a run is killed, the
recovered run continues the budget from the last checkpoint, with the learning rates, the
epoch count and the stopping point of a run that was never interrupted.

Time is fake, so that the interrupted and the uninterrupted runs see the same elapsed time at
the same step on any machine: one second per batch (training or validation), counted by
`tests/training/step_clock.py` in the `allennlp train` runs and by the model's forward in the
in-process ones.
"""
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, List, Optional, Tuple

import pytest
import torch
from allennlp.training import Checkpointer, GradientDescentTrainer
from allennlp.training.callbacks import TrainerCallback

from lal_allennlp.training import TimeBudget
from tests.conftest import FIXTURES_ROOT, REPO_ROOT
from tests.training.step_clock import StepClock, StepClockTimeBudget  # noqa: F401  (registers it)
from tests.training.test_time_budget import _loader, _Regression
from tests.training.validation_recorder import ValidationRecorder  # noqa: F401  (registers it)

PAUSE_AT = "LAL_TEST_PAUSE_AT"


@TrainerCallback.register("lal_test_pause")
class PauseForKill(TrainerCallback):
    """
    Registered as a `TrainerCallback` with name "lal_test_pause". When the environment
    variable `LAL_TEST_PAUSE_AT` is "epoch,batch", after that training batch (once the
    callbacks listed before this one have run) it creates `paused` in the serialization
    directory and waits to be killed. Without the variable it does nothing: `--recover` needs
    the configuration unchanged, so the interrupted and the recovered runs share it.
    """

    def on_batch(  # type: ignore[override]
        self,
        trainer: Any,
        batch_inputs: Any,
        batch_outputs: Any,
        batch_metrics: Any,
        epoch: int,
        batch_number: int,
        is_training: bool,
        is_primary: bool = True,
        **kwargs: Any,
    ) -> None:
        at = os.environ.get(PAUSE_AT)
        if is_training and at and tuple(int(n) for n in at.split(",")) == (epoch, batch_number):
            Path(self.serialization_dir, "paused").touch()
            time.sleep(600)
            raise RuntimeError("lal_test_pause: the paused run was not killed")


# The fixture treebank in batches of 8: 60 training trees (8 batches) and 15 dev trees (2), so
# an epoch takes 10 fake seconds. A budget of 35 seconds fits 3 epochs: the horizon is 35 s
# during epoch 0, 30 s after it (2 more epochs fit) and after epoch 1 (1 more); after epoch 2
# none fits. The trainer's cap of 10 epochs, or a budget restarted from zero, would run more.
TRAIN_BATCHES = 8
BUDGET_SECONDS, CUT_FRAC, BASE_RATE = 35.0, 0.25, 0.01  # BASE_RATE: the config's Adam lr
CONFIG = FIXTURES_ROOT / "span_parser" / "experiment.jsonnet"
OVERRIDES = {
    "model.dropout": 0.0,  # no randomness the checkpoint does not hold
    "trainer.num_epochs": 10,
    "trainer.callbacks": [
        {"type": "lal_test_validation_recorder", "rates": True},
        {
            "type": "lal_test_step_clock_time_budget",
            "minutes": BUDGET_SECONDS / 60,
            "cut_frac": CUT_FRAC,
            "seconds_per_batch": [1.0],
        },
        {"type": "lal_test_pause"},
    ],
}


def _allennlp_train(
    serialization_dir: Path, *options: str, pause_at: Optional[Tuple[int, int]] = None
) -> subprocess.Popen:
    env = dict(os.environ, PYTHONPATH=str(REPO_ROOT), OMP_NUM_THREADS="1")
    env.pop(PAUSE_AT, None)
    if pause_at is not None:
        env[PAUSE_AT] = ",".join(map(str, pause_at))
    command = [sys.executable, "-m", "allennlp", "train", str(CONFIG), "-s", str(serialization_dir)]
    command += ["-o", json.dumps(OVERRIDES), "--include-package", "lal_allennlp"]
    command += ["--include-package", "tests.training.test_resume", *options]
    with open(f"{serialization_dir}.log", "ab") as log:
        return subprocess.Popen(command, cwd=REPO_ROOT, env=env, stdout=log, stderr=log)


def _log_tail(serialization_dir: Path) -> str:
    return Path(f"{serialization_dir}.log").read_text(errors="replace")[-3000:]


def _finish(process: subprocess.Popen, serialization_dir: Path) -> None:
    assert process.wait(timeout=300) == 0, _log_tail(serialization_dir)


def _wait_for(path: Path, process: subprocess.Popen, serialization_dir: Path) -> None:
    deadline = time.monotonic() + 300
    while not path.exists():
        assert process.poll() is None, _log_tail(serialization_dir)
        assert time.monotonic() < deadline, f"no {path.name} yet\n{_log_tail(serialization_dir)}"
        time.sleep(0.1)


def _rates(serialization_dir: Path) -> List[Tuple[int, int, float]]:
    lines = (serialization_dir / "rates_rank0.jsonl").read_text().splitlines()
    return [(r["epoch"], r["batch"], r["rates"][0]) for r in map(json.loads, lines)]


@pytest.fixture
def processes():
    """The training processes a test starts; those still running at its end are killed."""
    started: List[subprocess.Popen] = []
    yield started
    for process in started:
        if process.poll() is None:
            process.kill()
            process.wait()


def test_a_killed_allennlp_train_recovers_the_budget_of_its_last_checkpoint(tmp_path, processes):
    whole, killed = tmp_path / "uninterrupted", tmp_path / "killed"
    uninterrupted = _allennlp_train(whole)
    interrupted = _allennlp_train(killed, pause_at=(1, 3))
    processes += [uninterrupted, interrupted]
    _wait_for(killed / "paused", interrupted, killed)
    # Paused in epoch 1, after the checkpoint of epoch 0 (named after the epochs completed).
    assert {path.name for path in killed.glob("*_state_e*.th")} == {
        "model_state_e1_b0.th",
        "training_state_e1_b0.th",
    }
    interrupted.kill()  # SIGKILL: nothing of the run's own shutdown happens
    interrupted.wait()
    budget_state = torch.load(killed / "training_state_e1_b0.th")["callbacks"][1]
    assert budget_state == {
        "elapsed": 10.0,
        "epochs_done": 1,
        "horizon": 30.0,
        "base_lrs": [BASE_RATE],
        "stopped": False,
    }
    recovered = _allennlp_train(killed, "--recover")
    processes.append(recovered)
    _finish(recovered, killed)
    _finish(uninterrupted, whole)

    # The uninterrupted run: the rate in force at each step was set from the fake clock after
    # the previous batch; epochs 1 and 2 start after the 2 validation batches.
    schedule = TimeBudget("unused", minutes=BUDGET_SECONDS / 60, cut_frac=CUT_FRAC)

    def rate(seconds: float, horizon: float) -> float:
        schedule.horizon = horizon
        return BASE_RATE * schedule.learning_rate_factor(seconds)

    steps = [(epoch, batch) for epoch in range(3) for batch in range(1, TRAIN_BATCHES + 1)]
    expected = [
        rate(10.0 * epoch + batch - 1, 35.0 if epoch == 0 else 30.0) for epoch, batch in steps
    ]
    assert [(epoch, batch) for epoch, batch, _ in _rates(whole)] == steps
    assert [r for _, _, r in _rates(whole)] == pytest.approx(expected, rel=1e-12)
    # The killed run stepped as the uninterrupted one up to batch 3 of epoch 1; recovered, it
    # redid epoch 1 from its first batch with the uninterrupted run's rates, to the same end.
    rates = _rates(killed)
    killed_after = TRAIN_BATCHES + 3
    assert rates[:killed_after] == _rates(whole)[:killed_after]
    assert rates[killed_after:] == _rates(whole)[TRAIN_BATCHES:]

    # Both stopped after epoch 2, on the budget: the recovered run counted epochs 1 and 2 as
    # the second and third, not as the first and second of a new budget.
    for run in (whole, killed):
        assert json.loads((run / "metrics.json").read_text())["epoch"] == 2
        assert (run / "metrics_epoch_2.json").exists()
        assert not (run / "metrics_epoch_3.json").exists()
    # Same rates, same data order and no dropout: the two runs trained the same model.
    final = [json.loads((run / "metrics_epoch_2.json").read_text()) for run in (whole, killed)]
    assert final[1]["training_loss"] == pytest.approx(final[0]["training_loss"], rel=1e-6)
    assert final[1]["validation_loss"] == pytest.approx(final[0]["validation_loss"], rel=1e-6)


class _Interrupted(Exception):
    pass


class _InterruptAt(TrainerCallback):
    """Raises `_Interrupted` after a training batch, before the trainer can checkpoint it."""

    def __init__(self, serialization_dir: str, epoch: int, batch: int) -> None:
        super().__init__(serialization_dir)
        self.at = (epoch, batch)

    def on_batch(self, trainer, batch_inputs, batch_outputs, batch_metrics, epoch, batch_number,
                 is_training, is_primary=True, **kwargs) -> None:  # type: ignore[override]
        if is_training and (epoch, batch_number) == self.at:
            raise _Interrupted()


def _train(
    serialization_dir: Path, interrupt_at: Optional[Tuple[int, int]] = None
) -> Tuple[_Regression, TimeBudget, GradientDescentTrainer]:
    """A fresh process's training (new model, optimizer, budget and clock at 0) on the
    regression of `test_time_budget`: epochs of 4 training batches and 1 validation batch,
    5 seconds each. A budget of 22 seconds fits 4 epochs (the horizon is 22 s, then 20 s). A
    checkpoint after every epoch and every 3rd training batch."""
    clock = StepClock()
    model = _Regression(clock)
    model.optimizer = torch.optim.SGD(model.parameters(), lr=0.5)
    budget = TimeBudget(str(serialization_dir), minutes=22 / 60, cut_frac=0.25)
    budget.clock = clock
    callbacks: List[TrainerCallback] = [budget]
    if interrupt_at is not None:
        callbacks.append(_InterruptAt(str(serialization_dir), *interrupt_at))
    train, dev = _loader(4), _loader(1)
    for loader in (train, dev):
        loader.index_with(model.vocab)
    trainer = GradientDescentTrainer(
        model,
        model.optimizer,
        train,
        validation_data_loader=dev,
        num_epochs=10,
        serialization_dir=str(serialization_dir),
        checkpointer=Checkpointer(str(serialization_dir), save_every_num_batches=3),
        callbacks=callbacks,
    )
    try:
        trainer.train()
    except _Interrupted:
        pass
    return model, budget, trainer


def test_recovery_from_a_checkpoint_within_an_epoch_continues_the_schedule(tmp_path):
    whole, _, _ = _train(tmp_path / "uninterrupted")
    assert len(whole.rates) == 16  # 4 epochs
    # Interrupted after batch 4 of epoch 1; the last checkpoint is after its batch 3.
    before, _, _ = _train(tmp_path / "interrupted", interrupt_at=(1, 4))
    assert before.rates == whole.rates[:8]
    assert (tmp_path / "interrupted" / "training_state_e1_b3.th").exists()
    assert not (tmp_path / "interrupted" / "training_state_e1_b4.th").exists()
    after, budget, trainer = _train(tmp_path / "interrupted")
    # The recovered run trained batch 4 of epoch 1 onwards, with the uninterrupted rates.
    assert after.rates == whole.rates[7:]
    assert budget.horizon == 20.0 and budget.state_dict()["elapsed"] == 20.0
    assert budget._epochs_done == trainer._epochs_completed == 4


def test_recovery_after_the_budget_ended_the_run_trains_no_further_epoch(tmp_path):
    _train(tmp_path)
    again, budget, trainer = _train(tmp_path)  # recovers the checkpoint of the last epoch
    assert again.rates == [] and again.clock() == 0.0
    assert budget._epochs_done == trainer._epochs_completed == 4


def test_a_checkpoint_without_budget_state_starts_the_budget_anew():
    budget = TimeBudget("unused", minutes=1)
    budget.load_state_dict({})  # what a callback that kept no state saved
    fresh = TimeBudget("unused", minutes=1).state_dict()
    assert budget.state_dict() == fresh and not budget._restored

