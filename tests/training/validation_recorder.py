"""
A trainer callback for the distributed tests: after every validation batch, each worker appends
what it saw (its rank, the epoch, the batch's sentence count) and what its `lal_evalb` metric
holds so far (the raw EVALB counts, which the metric sums over workers) to
`<serialization_dir>/validation_rank<rank>.jsonl`.

It lives in its own module so the spawned training workers can import it by name
(`include_package`).
"""
import json
import os
from typing import Any, Dict, List

import torch.distributed as dist
from allennlp.data import TensorDict
from allennlp.training.callbacks.callback import TrainerCallback


@TrainerCallback.register("lal_test_validation_recorder")
class ValidationRecorder(TrainerCallback):
    """
    Registered as a `TrainerCallback` with name "lal_test_validation_recorder". With
    `rates=True` it also appends, after every training batch, the epoch, the batch number and
    the learning rates of the optimizer's groups to `<serialization_dir>/rates_rank<rank>.jsonl`.
    """

    def __init__(self, serialization_dir: str, rates: bool = False) -> None:
        super().__init__(serialization_dir)
        self.rates = rates

    def on_batch(  # type: ignore[override]
        self,
        trainer: Any,
        batch_inputs: List[TensorDict],
        batch_outputs: List[Dict[str, Any]],
        batch_metrics: Dict[str, Any],
        epoch: int,
        batch_number: int,
        is_training: bool,
        is_primary: bool = True,
        **kwargs: Any,
    ) -> None:
        rank = dist.get_rank() if dist.is_available() and dist.is_initialized() else 0
        if is_training:
            if self.rates:
                self._append(f"rates_rank{rank}.jsonl", {
                    "epoch": epoch,
                    "batch": batch_number,
                    "rates": [group["lr"] for group in trainer.optimizer.param_groups],
                })
            return
        record = {
            "rank": rank,
            "world_size": dist.get_world_size() if dist.is_initialized() else 1,
            "epoch": epoch,
            "batch_sentences": sum(len(batch["metadata"]) for batch in batch_inputs),
            "counts": trainer.model.evalb.counts.to_list(),
            "evalb_f1": batch_metrics.get("evalb_f1"),
        }
        self._append(f"validation_rank{rank}.jsonl", record)

    def _append(self, name: str, record: Dict[str, Any]) -> None:
        with open(os.path.join(self.serialization_dir, name), "a") as file:
            file.write(json.dumps(record) + "\n")
