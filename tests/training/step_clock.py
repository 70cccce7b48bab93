"""
A `time_budget` callback on a fake clock, for the distributed tests: time passes only when a
batch (training or validation) goes through, by a fixed number of seconds per batch that
depends on the worker's rank. So the schedule no longer follows the machine's wall clock, and
two workers can be given clocks that run at different speeds.

It lives in its own module so the spawned training workers can import it by name
(`include_package`).
"""
from typing import Any, List

import torch.distributed as dist
from allennlp.training.callbacks.callback import TrainerCallback

from lal_allennlp.training import TimeBudget


class StepClock:
    """A clock that stands still until `tick` moves it on."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now

    def tick(self, seconds: float) -> None:
        self.now += seconds


@TrainerCallback.register("lal_test_step_clock_time_budget")
class StepClockTimeBudget(TimeBudget):
    """
    Registered as a `TrainerCallback` with name "lal_test_step_clock_time_budget": the
    `time_budget` callback whose clock advances by `seconds_per_batch[rank]` at every batch,
    before the callback reads it.

    # Parameters

    seconds_per_batch : `List[float]`
        The seconds one batch takes on each worker, indexed by rank (one entry when not
        distributed).
    minutes, cut_frac, ratio :
        As for `time_budget`.
    """

    def __init__(
        self,
        serialization_dir: str,
        seconds_per_batch: List[float],
        minutes: float,
        cut_frac: float = 0.06,
        ratio: float = 32.0,
    ) -> None:
        super().__init__(serialization_dir, minutes=minutes, cut_frac=cut_frac, ratio=ratio)
        self.seconds_per_batch = seconds_per_batch
        self.clock = StepClock()

    def on_batch(self, trainer: Any, *args: Any, **kwargs: Any) -> None:  # type: ignore[override]
        rank = dist.get_rank() if dist.is_available() and dist.is_initialized() else 0
        self.clock.tick(self.seconds_per_batch[rank])
        super().on_batch(trainer, *args, **kwargs)
