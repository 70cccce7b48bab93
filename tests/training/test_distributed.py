"""
Distributed data-parallel training with AllenNLP (`"distributed": {"cuda_devices": [-1, -1]}`:
two CPU worker processes joined by the gloo backend) of the span parser and of the LAL stack,
on the fixture treebank.

The dev set (15 sentences) is split between the workers (8 and 7 sentences, in batches of
3, 3, 2 and 3, 3, 1), and `lal_evalb` sums its EVALB counts over the workers at every call.
So both workers must report the counts of all 15 sentences, and the validation scores in
`metrics.json` must equal, exactly, a single-process evaluation of the saved (best) model on
the whole dev set.
"""
import json
from pathlib import Path
from typing import Dict, List

import pytest
import torch
import torch.distributed as dist
from allennlp.commands.train import train_model
from allennlp.common import Params
from allennlp.data.data_loaders import MultiProcessDataLoader
from allennlp.models.archival import load_archive

from lal_allennlp.training import TimeBudget
from tests.conftest import FIXTURES_ROOT
from tests.training.step_clock import StepClockTimeBudget  # noqa: F401  (registers it)
from tests.training.validation_recorder import ValidationRecorder  # noqa: F401  (registers it)

DEV = FIXTURES_ROOT / "ptb" / "dev"
DEV_SENTENCES = 15
VALIDATION_BATCH_SIZE = 3
METRICS = ("precision", "recall", "f1", "complete_match", "tagging_accuracy")


def _train_distributed(config: Path, serialization_dir: Path, epochs: int) -> Dict:
    params = Params.from_file(
        str(config),
        params_overrides={
            "validation_data_path": str(DEV),
            "validation_data_loader": {"batch_size": VALIDATION_BATCH_SIZE, "shuffle": False},
            "distributed": {"cuda_devices": [-1, -1]},
            # Gold POS tags in the output trees: a parser trained for two epochs mistags words
            # as punctuation, which EVALB then deletes, making most sentences "errors".
            # Dotted keys: a nested dict would replace the whole section.
            "model.predict_pos_tags": False,
            "trainer.num_epochs": epochs,
            "trainer.callbacks": [{"type": "lal_test_validation_recorder"}],
        },
    )
    train_model(
        params,
        str(serialization_dir),
        include_package=["lal_allennlp", "tests.training.validation_recorder"],
    )
    return json.loads((serialization_dir / "metrics.json").read_text())


def _records(serialization_dir: Path, rank: int, kind: str = "validation") -> List[Dict]:
    path = serialization_dir / f"{kind}_rank{rank}.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()]


def _evaluate_single_process(archive_file: Path):
    """EVALB counts and scores of the archived model on the whole dev set, in this process."""
    archive = load_archive(str(archive_file))
    model = archive.model
    model.eval()
    loader = MultiProcessDataLoader(
        archive.validation_dataset_reader, str(DEV), batch_size=VALIDATION_BATCH_SIZE
    )
    loader.index_with(model.vocab)
    with torch.no_grad():
        for batch in loader:
            model(**batch)
    return model.evalb.counts, model.get_metrics(reset=True)


@pytest.mark.parametrize(
    "config,epochs",
    [("experiment.jsonnet", 3), ("lal_char_concat.jsonnet", 2)],
    ids=["bilstm_span_parser", "lal_stack"],
)
def test_two_cpu_workers_aggregate_evalb_over_the_whole_dev_set(
    tmp_path, monkeypatch, config, epochs
):
    if not dist.is_available():
        pytest.skip("torch.distributed is not available")
    # One thread per worker: two workers with a thread per core each would oversubscribe.
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    serialization_dir = tmp_path / "run"
    metrics = _train_distributed(FIXTURES_ROOT / "span_parser" / config, serialization_dir, epochs)
    assert metrics["epoch"] == epochs - 1

    by_rank = [_records(serialization_dir, rank) for rank in (0, 1)]
    for rank, records in enumerate(by_rank):
        assert {r["rank"] for r in records} == {rank}
        assert {r["world_size"] for r in records} == {2}
    for epoch in range(epochs):
        per_rank = [[r for r in records if r["epoch"] == epoch] for records in by_rank]
        # Each worker validated its own share of the dev set: 8 + 7 sentences, 3 batches each.
        assert [sum(r["batch_sentences"] for r in records) for records in per_rank] == [8, 7]
        assert [len(records) for records in per_rank] == [3, 3]
        # After every batch both workers hold the same counts, summed over both workers ...
        for batch_on_0, batch_on_1 in zip(*per_rank):
            assert batch_on_0["counts"] == batch_on_1["counts"]
        # ... and at the end of validation they cover all 15 dev sentences.
        assert per_rank[0][-1]["counts"][0] == DEV_SENTENCES

    # The archived model is the best epoch's; its validation counts and scores, aggregated over
    # the two workers, equal a single-process evaluation of it on the whole dev set.
    counts, single = _evaluate_single_process(serialization_dir / "model.tar.gz")
    best = [r for r in by_rank[0] if r["epoch"] == metrics["best_epoch"]][-1]
    assert best["counts"] == counts.to_list()
    assert counts.sentences == DEV_SENTENCES and counts.errors == 0
    assert counts.gold > 0 and counts.predicted > 0
    for name in METRICS:
        assert metrics[f"best_validation_evalb_{name}"] == single[f"evalb_{name}"], name


def test_time_budget_gives_every_worker_the_same_rates_and_epochs(tmp_path, monkeypatch):
    """`time_budget` on two CPU workers whose clocks run at different speeds: every worker
    follows the slowest worker's clock, so the replicas step with identical learning rates
    (else their weights would drift apart) and stop after the same epoch.

    The clocks are fake (`tests/training/step_clock.py`): a batch takes 1 second on worker 0
    and 2 seconds on worker 1, whatever the machine does. Each worker runs 4 training batches
    and 1 validation batch per epoch (30 + 29 training and 8 + 7 dev sentences, in batches of
    8), so an epoch takes 5 seconds on worker 0 and 10 on worker 1. In a budget of 25 seconds
    worker 1's clock fits 2 epochs: after epoch 0 (10 s) one more fits, and the horizon moves
    from 25 to 20 seconds; after epoch 1 (20 s) none does. Worker 0's clock alone would run
    the trainer's cap of 4 epochs.
    """
    if not dist.is_available():
        pytest.skip("torch.distributed is not available")
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    serialization_dir = tmp_path / "run"
    budget_seconds, cut_frac, base_rate = 25.0, 0.5, 0.01  # base_rate: the config's Adam lr
    params = Params.from_file(
        str(FIXTURES_ROOT / "span_parser" / "experiment.jsonnet"),
        params_overrides={
            "distributed": {"cuda_devices": [-1, -1]},
            "model.predict_pos_tags": False,
            "trainer.num_epochs": 4,  # an upper bound: the budget ends the run first
            "trainer.callbacks": [
                {"type": "lal_test_validation_recorder", "rates": True},
                {
                    "type": "lal_test_step_clock_time_budget",
                    "minutes": budget_seconds / 60,
                    "cut_frac": cut_frac,
                    "seconds_per_batch": [1.0, 2.0],
                },
            ],
        },
    )
    assert params["trainer"]["optimizer"]["lr"] == base_rate
    train_model(
        params,
        str(serialization_dir),
        include_package=[
            "lal_allennlp",
            "tests.training.validation_recorder",
            "tests.training.step_clock",
        ],
    )
    metrics = json.loads((serialization_dir / "metrics.json").read_text())
    assert metrics["epoch"] == 1  # two epochs, stopped by the budget of the slower clock
    by_rank = [_records(serialization_dir, rank, "rates") for rank in (0, 1)]
    assert by_rank[0] == by_rank[1]
    assert [(r["epoch"], r["batch"]) for r in by_rank[0]] == [
        (epoch, batch) for epoch in (0, 1) for batch in (1, 2, 3, 4)
    ]

    # The rate in force at each step was set after the previous batch, from worker 1's clock:
    # 2 seconds per batch, and the horizon planned after epoch 0.
    schedule = TimeBudget("unused", minutes=budget_seconds / 60, cut_frac=cut_frac)

    def rate(seconds: float, horizon: float) -> float:
        schedule.horizon = horizon
        return base_rate * schedule.learning_rate_factor(seconds)

    expected = [rate(s, 25.0) for s in (0, 2, 4, 6)] + [rate(s, 20.0) for s in (10, 12, 14, 16)]
    rates = [r["rates"][0] for r in by_rank[0]]
    assert rates == pytest.approx(expected, rel=1e-12)
    # Warm-up over epoch 0, the peak when epoch 1 starts (half of the 20-second horizon), decay.
    assert rates[4] == pytest.approx(base_rate)
    assert rates[:5] == sorted(rates[:5]) and rates[4:] == sorted(rates[4:], reverse=True)
    assert len(set(rates)) == len(rates)


def test_multi_gpu_config_is_the_single_gpu_config_split_over_its_gpus():
    """Same model and schedule; per-worker batches x GPUs = the single-GPU batch (100)."""
    ext_vars = {"PTB_TRAIN": "train", "PTB_DEV": "dev", "TRANSFORMER_MODEL": "xlnet-large-cased"}
    config_dir = Path(__file__).resolve().parents[2] / "training_config"
    single = Params.from_file(str(config_dir / "lal_xlnet_ptb.jsonnet"), ext_vars=ext_vars)
    multi = Params.from_file(str(config_dir / "lal_xlnet_ptb_multi_gpu.jsonnet"), ext_vars=ext_vars)
    single, multi = single.as_dict(), multi.as_dict()
    devices = multi.pop("distributed")["cuda_devices"]
    assert len(devices) >= 2 and len(set(devices)) == len(devices)
    assert all(isinstance(d, int) and d >= 0 for d in devices)
    for loader in ("data_loader", "validation_data_loader"):
        per_worker = multi[loader]["batch_sampler"].pop("batch_size")
        assert per_worker * len(devices) == single[loader]["batch_sampler"].pop("batch_size")
    assert multi == single
