"""
Training helpers registered with AllenNLP.

`fused_adamw`: AllenNLP's `adamw` with torch's fused kernel. AllenNLP's wrapper builds
`torch.optim.AdamW` with its default implementation, which on the CPU is a Python loop
over the parameters; the fused kernel does the same update in one pass and, for the MiniLM
parser (22.6 M trained parameters, 2 cores), cuts an optimizer step from ~90 ms to ~17 ms
(`benchmarks/optimizer_step.py`). Same update rule, same arguments.

`time_budget`: a trainer callback that trains for a wall-clock budget (learning rate schedule
over elapsed time, stop after the last epoch that fits); `--recover` continues the budget from
the last checkpoint.
"""
import logging
import time
from typing import Any, Dict, List, Tuple

import torch
import torch.distributed as dist
from allennlp.common.checks import ConfigurationError
from allennlp.nn.util import dist_reduce
from allennlp.training.callbacks import TrainerCallback
from allennlp.training.optimizers import Optimizer, make_parameter_groups

logger = logging.getLogger(__name__)


@Optimizer.register("fused_adamw")
class FusedAdamWOptimizer(Optimizer, torch.optim.AdamW):
    """AdamW (decoupled weight decay) with `fused=True`; arguments as AllenNLP's `adamw`."""

    def __init__(
        self,
        model_parameters: List[Tuple[str, torch.nn.Parameter]],
        parameter_groups: List[Tuple[List[str], Dict[str, Any]]] = None,
        lr: float = 0.001,
        betas: Tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-08,
        weight_decay: float = 0.01,
        amsgrad: bool = False,
    ):
        super().__init__(
            params=make_parameter_groups(model_parameters, parameter_groups),
            lr=lr,
            betas=betas,
            eps=eps,
            weight_decay=weight_decay,
            amsgrad=amsgrad,
            fused=True,
        )


@TrainerCallback.register("time_budget")
class TimeBudget(TrainerCallback):
    """
    Trains for a wall-clock budget instead of a number of epochs. The learning rate follows
    AllenNLP's slanted triangular shape (linear warm-up over the first `cut_frac`, then linear
    decay, from and to `1 / ratio` of each group's rate) over elapsed *time*, towards a horizon:
    the whole budget during the first epoch, then, after each epoch, the end of the last whole
    epoch that fits in the budget (epochs predicted to take as long as the mean so far,
    validation included). Training stops when no further epoch fits, so it ends on the
    schedule's low point and within the budget (unless one epoch is longer than the budget).
    The clock starts when the trainer does (data reading and model building come before it);
    the trainer's `num_epochs` stays an upper bound (the horizon ends with it if it comes
    first). Use it without a `learning_rate_scheduler`, which would overwrite the rates this
    callback sets.

    In distributed training the workers share the slowest worker's clock (one all-reduce of a
    number per step), so the replicas step with the same rates and stop together.

    `allennlp train --recover` continues the budget from the last checkpoint. The callback's
    state (the budget seconds used, the epochs done, the horizon, each group's base learning
    rate, and whether the budget has ended the run) goes into AllenNLP's training-state
    checkpoint, next to the optimizer's state of the same moment, and comes back with it. The
    recovered run's clock starts from the seconds used at that checkpoint: the time during
    which no process trained, and the work done after the checkpoint and lost with the
    process, do not count, because they did nothing for the model that training continues
    from. So after recovery the learning rates, the epochs counted and the stopping point are
    those of an uninterrupted run at the same position in the budget, and a run recovered
    from the checkpoint of the epoch that ended its budget trains no further epoch. What the
    recovered process itself spends from the trainer's start on counts, including the
    trainer's pass over the data of the epochs it skips.

    Comparisons "within a budget of N minutes" then mean the same on a fast and a slow day:
    the machine decides how many epochs fit, not the config.
    """

    def __init__(
        self, serialization_dir: str, minutes: float, cut_frac: float = 0.06, ratio: float = 32.0
    ) -> None:
        super().__init__(serialization_dir)
        if minutes <= 0:
            raise ConfigurationError(f"time_budget: minutes must be positive, got {minutes}")
        if not 0.0 < cut_frac < 1.0:
            raise ConfigurationError(f"time_budget: cut_frac must be in (0, 1), got {cut_frac}")
        self.seconds = 60.0 * minutes
        self.cut_frac = cut_frac
        self.ratio = ratio
        self.horizon = self.seconds
        self.clock = time.monotonic
        self._start = 0.0  # this process's clock reading when the trainer started
        self._elapsed_before = 0.0  # budget seconds used before this process (a checkpoint's)
        self._elapsed_last = 0.0  # the elapsed time last read, as every worker read it
        self._epochs_done = 0
        self._stopped = False  # the budget has ended the run
        self._restored = False  # the state above came from a checkpoint
        self._base_lrs: List[float] = []

    def learning_rate_factor(self, elapsed: float) -> float:
        """The multiplier of each group's base learning rate `elapsed` seconds in."""
        fraction = min(max(elapsed / self.horizon, 0.0), 1.0)
        if fraction < self.cut_frac:
            rise = fraction / self.cut_frac
        else:
            rise = (1.0 - fraction) / (1.0 - self.cut_frac)
        return (1.0 + rise * (self.ratio - 1.0)) / self.ratio

    def _elapsed(self) -> float:
        # In distributed training every worker uses the slowest worker's clock, so that all
        # replicas step with the same rate and stop after the same epoch.
        mine = self.clock() - self._start
        self._elapsed_last = self._elapsed_before + float(dist_reduce(mine, dist.ReduceOp.MAX))
        return self._elapsed_last

    def _set_learning_rates(self, trainer) -> None:
        factor = self.learning_rate_factor(self._elapsed())
        for group, base in zip(trainer.optimizer.param_groups, self._base_lrs):
            group["lr"] = base * factor

    def state_dict(self) -> Dict[str, Any]:
        """What `--recover` needs, saved by the trainer in each training-state checkpoint.

        The checkpointer calls this right after `on_epoch` (an epoch's checkpoint) or after a
        training batch's `on_batch` (a checkpoint within an epoch), so the elapsed time last
        read is the one the horizon or the next rate was computed from. It is not read anew
        here: in distributed training only the primary worker saves, and a read would wait for
        the other workers' all-reduce forever. The base rates are saved because the
        optimizer's saved groups hold the scaled rates in force at the checkpoint.
        """
        return {
            "elapsed": self._elapsed_last,
            "epochs_done": self._epochs_done,
            "horizon": self.horizon,
            "base_lrs": list(self._base_lrs),
            "stopped": self._stopped,
        }

    def load_state_dict(self, state_dict: Dict[str, Any]) -> None:
        """Takes back `state_dict`'s state; the trainer calls it before `on_start`."""
        if not state_dict:  # a checkpoint from a version of this callback that kept no state
            logger.warning("time_budget: the checkpoint holds no budget state; it starts anew")
            return
        self._elapsed_before = self._elapsed_last = float(state_dict["elapsed"])
        self._epochs_done = int(state_dict["epochs_done"])
        self.horizon = float(state_dict["horizon"])
        self._base_lrs = [float(rate) for rate in state_dict["base_lrs"]]
        self._stopped = bool(state_dict["stopped"])
        self._restored = True

    def on_start(self, trainer, is_primary: bool = True, **kwargs) -> None:
        super().on_start(trainer, is_primary=is_primary, **kwargs)
        if trainer._learning_rate_scheduler is not None:
            raise ConfigurationError(
                "time_budget sets the learning rate itself; remove the trainer's "
                "learning_rate_scheduler"
            )
        # On `--recover` the trainer has restored the checkpoint before this call, the
        # optimizer's groups (whose number torch checks against the checkpoint's) included;
        # their rates are the scaled ones of the checkpoint, so the base rates come from it.
        if not self._restored:
            self._base_lrs = [group["lr"] for group in trainer.optimizer.param_groups]
        self._start = self.clock()
        self._set_learning_rates(trainer)
        if self._stopped:
            logger.info(
                "time_budget: the budget ended this run after %d epoch(s); no epoch left to train",
                self._epochs_done,
            )
            # The patience of 0 set when the budget ended the run is not in the checkpoint, and
            # would only be checked after one more epoch. With this cap the trainer's epoch
            # loop, which starts after this call, ends with the epochs it skips as completed.
            trainer._num_epochs = self._epochs_done

    def on_batch(self, trainer, batch_inputs, batch_outputs, batch_metrics, epoch, batch_number,
                 is_training, is_primary=True, batch_grad_norm=None, **kwargs) -> None:
        if is_training:  # the rate for the next step
            self._set_learning_rates(trainer)

    def on_epoch(self, trainer, metrics, epoch, is_primary=True, **kwargs) -> None:
        self._epochs_done += 1
        elapsed = self._elapsed()
        per_epoch = elapsed / self._epochs_done
        epochs_left = min(
            int((self.seconds - elapsed) // per_epoch),
            trainer._num_epochs - self._epochs_done,  # the trainer's cap on epochs
        )
        if epochs_left <= 0:
            logger.info(
                "time_budget: %.1f of %.1f minutes used after %d epoch(s) of %.1f; stopping",
                elapsed / 60, self.seconds / 60, self._epochs_done, per_epoch / 60,
            )
            # AllenNLP 2.10's trainer has no public way to stop; it checks its metric
            # tracker's patience right after the epoch callbacks, so a patience of 0 ends it.
            trainer._metric_tracker._patience = 0
            self._stopped = True
            return
        self.horizon = elapsed + epochs_left * per_epoch
        logger.info(
            "time_budget: %d more epoch(s) fit; schedule ends at %.1f of %.1f minutes",
            epochs_left, self.horizon / 60, self.seconds / 60,
        )
        self._set_learning_rates(trainer)
