"""
The grid runner (`allennlp grid`): refusal of bad grids before anything trains, resume (a
finished run is never redone, a killed one is recovered with `--recover`), two workers sharing
one Optuna storage, and the tables' arithmetic on fake runs.
"""

import csv
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from nltk import Tree

from lal_allennlp.analysis.predictions import SentencePrediction, write_predictions
from lal_allennlp.experiments.grid_file import (
    Grid,
    GridError,
    load_grid,
    load_time_overrides,
    merge_overrides,
    run_key,
    table_value,
)
from lal_allennlp.experiments.report import GridReport
from lal_allennlp.experiments.runner import GridRunner, RunFolder

TINY = "fixtures/grid/tiny.jsonnet"
ALLENNLP = [os.path.join(os.path.dirname(sys.executable), "allennlp")]


def write_grid(tmp_path: Path, body: str) -> str:
    path = tmp_path / "grid.jsonnet"
    path.write_text(body)
    return str(path)


def grid_text(variants: str, extra: str = "") -> str:
    config = os.path.abspath("fixtures/joint_parser/experiment.jsonnet")
    return (
        "{ name: 'g', config: '" + config + "', seeds: [1], "
        "evaluate: { dev: 'fixtures/ptb/dev' }, " + extra + " variants: [" + variants + "] }"
    )


# ---- refusals ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "variants, extra, message",
    [
        ("{ name: 'a', config: 'nowhere.jsonnet' }", "", "config"),
        ("{ name: 'a', overrides: { model: { dropuot: 0.3 } } }", "", "'model.dropuot'"),
        ("{ name: 'a' }, { name: 'a' }", "", "same name as variants[0]"),
        ("{ name: 'a' }", "reference_variant: 'b',", "reference_variant 'b'"),
        ("{ name: 'a', reference: { F2: 1 } }", "", "reference metric 'F2'"),
        ("{ name: 'a' }", "budget_minutes: 2,", "no time_budget callback"),
        ("{ name: 'a', overrides: { '+model': {} } }", "", "already has"),
        ("{ name: 'a', test_overrides: { model: { dropuot: 0.3 } } }", "", "test_overrides"),
        ("{ name: 'a' }, { name: 'e', ensemble_of: 'b' }", "", "ensemble_of 'b'"),
        ("{ name: 'a' }, { name: 'e', ensemble_of: 'a', overrides: {} }", "", "no config"),
    ],
)
def test_bad_grids_are_refused_naming_the_entry(tmp_path, variants, extra, message):
    path = write_grid(tmp_path, grid_text(variants, extra))
    with pytest.raises(GridError) as error:
        load_grid(path)
    assert message in str(error.value)
    assert "grid.jsonnet" in str(error.value)


def test_the_command_refuses_a_bad_grid_before_training(tmp_path):
    path = write_grid(
        tmp_path, grid_text("{ name: 'a', overrides: { trainer: { num_epoch: 1 } } }")
    )
    runs = tmp_path / "runs"
    result = subprocess.run(
        ALLENNLP + ["grid", "run", path, "-o", str(tmp_path / "out"), "--runs-dir", str(runs)],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 2
    assert "'trainer.num_epoch' matches nothing" in result.stderr
    assert "variant 'a'" in result.stderr
    assert not runs.exists()


def test_overrides_merge_objects_replace_values_and_add_marked_keys():
    config = {"model": {"dropout": 0.1, "encoder": {"type": "lstm", "size": 3}}, "list": [1, 2]}
    merged = merge_overrides(
        config, {"model": {"encoder": {"size": 4}, "+new": 1}, "list": [3]}, "", "c"
    )
    assert merged == {
        "model": {"dropout": 0.1, "encoder": {"type": "lstm", "size": 4}, "new": 1},
        "list": [3],
    }
    assert config["model"]["encoder"]["size"] == 3  # the input is not changed


def test_runs_are_keyed_by_their_final_config():
    grid = load_grid(TINY)
    assert len(grid.runs) == 4
    assert len({run.key for run in grid.runs}) == 4
    run = grid.runs_of("dropout 0.3")[0]
    assert run.config["model"]["dropout"] == 0.3
    assert run.config["trainer"]["num_epochs"] == 1
    assert run.config["random_seed"] == run.config["pytorch_seed"] == run.seed
    assert run.key == run_key(run.config)


def test_test_time_variants_share_their_training():
    grid_file = "fixtures/grid/tiny.jsonnet"
    grid = load_grid(grid_file)
    assert all(run.train_key == run.key for run in grid.runs)
    ablated = load_grid_text(
        "{ name: 'a' }, { name: 'a at test', test_overrides: { model: { '+span_weight': 1.0 } } }"
    )
    base, tested = ablated.runs_of("a")[0], ablated.runs_of("a at test")[0]
    assert tested.train_key == base.key and tested.key != base.key
    assert tested.config == base.config
    assert load_time_overrides(tested.test_overrides) == {"model.span_weight": 1.0}


def test_an_ensemble_variant_is_one_run_of_every_seed_of_its_members():
    grid = load_grid_text(
        "{ name: 'a' }, { name: 'ens', ensemble_of: 'a' }, "
        "{ name: 'ens, beam', ensemble_of: 'a', test_overrides: { model: { '+beam_size': 4 } } }",
        seeds="[1, 2, 3]",
    )
    assert [run.variant for run in grid.runs] == ["a"] * 3
    ensemble, beam = grid.ensemble_runs
    assert [member.seed for member in ensemble.members] == [1, 2, 3]
    assert beam.train_key == ensemble.key != beam.key
    assert ensemble.label == "ens (3 models)"


def load_grid_text(variants: str, seeds: str = "[1]") -> "Grid":
    import tempfile

    with tempfile.TemporaryDirectory() as directory:
        path = write_grid(Path(directory), grid_text(variants).replace("seeds: [1]", f"seeds: {seeds}"))
        return load_grid(path)


def test_metrics_in_percent_but_perplexity():
    assert table_value("F1", 0.9123) == pytest.approx(91.23)
    assert table_value("sentence_F1", 0.5) == 50.0
    assert table_value("perplexity", 123.4) == 123.4


# ---- running, resuming, two workers ------------------------------------------------------


def run_grid(tmp_path: Path, *extra: str) -> subprocess.CompletedProcess:
    command = ALLENNLP + ["grid", "run", TINY, "-o", str(tmp_path / "out")]
    command += ["--runs-dir", str(tmp_path / "runs"), "--trials", "200", *extra]
    return subprocess.run(command, capture_output=True, text=True, timeout=600)


def trainings(tmp_path: Path) -> dict:
    grid = load_grid(TINY)
    return {
        run.label: RunFolder(str(tmp_path / "runs"), run).state()["trainings"] for run in grid.runs
    }


@pytest.fixture(scope="module")
def finished_grid(tmp_path_factory):
    """The tiny grid run to the end once: one run by `--max-runs 1`, then the rest."""
    tmp_path = tmp_path_factory.mktemp("grid")
    first = run_grid(tmp_path, "--max-runs", "1")
    assert first.returncode == 0, first.stderr[-3000:]
    assert sum(trainings(tmp_path).values()) == 1
    second = run_grid(tmp_path)
    assert second.returncode == 0, second.stderr[-3000:]
    return tmp_path, first, second


def test_a_finished_run_is_never_redone(finished_grid):
    tmp_path, first, second = finished_grid
    assert set(trainings(tmp_path).values()) == {1}
    assert second.stderr.count("training (") == 3  # the three left by the first call
    third = run_grid(tmp_path)
    assert third.returncode == 0
    assert "training (" not in third.stderr
    assert set(trainings(tmp_path).values()) == {1}


def test_the_tables_and_the_picture_are_written(finished_grid):
    tmp_path, _, _ = finished_grid
    out = tmp_path / "out"
    table = (out / "table.md").read_text()
    assert "| dropout 0.1 | 2 |" in table and "| dropout 0.3 | 2 |" in table
    assert "ref." in table
    rows = list(csv.DictReader(open(out / "table_dev.csv")))
    assert [row["variant"] for row in rows] == ["dropout 0.1", "dropout 0.3"]
    assert rows[0]["F1_paper"] == "50.0"
    assert (out / "curves.png").read_bytes()[:4] == b"\x89PNG"
    # The links for people browsing the grid.
    assert sorted(os.listdir(out / "runs")) == [
        "dropout_0_1-seed1",
        "dropout_0_1-seed2",
        "dropout_0_3-seed1",
        "dropout_0_3-seed2",
    ]
    result = json.loads((out / "runs" / "dropout_0_3-seed1" / "result.json").read_text())
    assert result["variant"] == "dropout 0.3" and result["epochs"] == 1
    assert set(result["metrics"]["dev"]) >= {"F1", "UAS", "LAS", "POS"}


def test_a_killed_training_is_recovered(tmp_path):
    """A run folder as a training killed after its first epoch leaves it (a checkpoint, no
    archive, no result) is continued with `allennlp train --recover`, to the grid's epochs."""
    grid_path = write_grid(
        tmp_path,
        grid_text("{ name: 'a' }", "overrides: { trainer: { num_epochs: 2 } },"),
    )
    grid = load_grid(grid_path)
    run = grid.runs[0]
    folder = RunFolder(str(tmp_path / "runs"), run)
    # Epoch 1 of the same config, then everything after its checkpoint removed.
    one_epoch = dict(run.config, trainer=dict(run.config["trainer"], num_epochs=1))
    os.makedirs(folder.path)
    (tmp_path / "one.json").write_text(json.dumps(one_epoch))
    subprocess.run(
        ALLENNLP + ["train", str(tmp_path / "one.json"), "-s", folder.model_dir],
        check=True,
        capture_output=True,
    )
    for name in ("model.tar.gz", "metrics.json"):
        os.remove(os.path.join(folder.model_dir, name))
    with open(os.path.join(folder.model_dir, "config.json"), "w") as config:
        json.dump(run.config, config)
    assert folder.has_checkpoint()

    runner = GridRunner(grid, str(tmp_path / "out"), str(tmp_path / "runs"), heartbeat_seconds=2)
    assert runner.run() == 1
    log = Path(folder.log_path).read_text()
    assert "--recover" in log
    result = folder.result()
    assert [point["epoch"] for point in result["curve"]] == [0, 1]
    # The recovered epoch's minutes continue from the first's.
    assert result["curve"][1]["minutes"] > result["curve"][0]["minutes"]


def test_a_test_time_variant_evaluates_the_shared_training_with_its_overrides(tmp_path):
    """One training, two evaluations: the joint decoder with its trained lambda, and with the
    span scores alone (span_weight 1 at test time: heads from the spans' head rules)."""
    path = write_grid(
        tmp_path,
        grid_text(
            "{ name: 'a' }, "
            "{ name: 'spans only', test_overrides: { model: { '+span_weight': 1.0 } } }",
            "overrides: { trainer: { num_epochs: 1 } },",
        ),
    )
    grid = load_grid(path)
    runner = GridRunner(grid, str(tmp_path / "out"), str(tmp_path / "runs"), heartbeat_seconds=2)
    assert runner.run() == 2
    base, tested = (RunFolder(str(tmp_path / "runs"), grid.runs_of(v)[0]) for v in ("a", "spans only"))
    assert base.state()["trainings"] == 1 and tested.model_dir == base.model_dir
    assert tested.result()["test_overrides"] == {"model": {"+span_weight": 1.0}}
    assert tested.result()["metrics"]["dev"]["UAS"] != base.result()["metrics"]["dev"]["UAS"]
    assert os.path.isfile(tested.predictions_path("dev")) and tested.path != base.path


def test_an_ensemble_is_built_from_its_trained_members_and_tabled(tmp_path):
    """Two stack-attention models on a dependency treebank, then their ensemble: one archive,
    evaluated once, paired with each seed of the reference in the significance test."""
    config = os.path.abspath("fixtures/stack_attention/experiment.jsonnet")
    path = write_grid(
        tmp_path,
        "{ name: 'e', config: '" + config + "', seeds: [1, 2], metrics: ['UAS', 'LAS'], "
        "overrides: { trainer: { num_epochs: 1 } }, "
        "evaluate: { dev: 'fixtures/ptb/deps/wsj_9003.dp' }, reference_variant: 'single', "
        "variants: [{ name: 'single' }, { name: 'both', ensemble_of: 'single' }] }",
    )
    grid = load_grid(path)
    runs_dir, out = str(tmp_path / "runs"), str(tmp_path / "out")
    assert GridRunner(grid, out, runs_dir, heartbeat_seconds=2).run() == 2
    ensemble = RunFolder(runs_dir, grid.ensemble_runs[0])
    result = ensemble.result()
    assert result["members"] == [run.key for run in grid.runs]
    assert set(result["metrics"]["dev"]) >= {"UAS", "LAS"}
    from allennlp.models.archival import load_archive

    model = load_archive(ensemble.archive).model
    assert type(model).__name__ == "StackAttentionEnsemble" and len(model.members) == 2
    rows = {row["variant"]: row for row in GridReport(grid, runs_dir, trials=200).rows("dev")}
    assert rows["both"]["seeds"] == 1 and rows["single"]["seeds"] == 2
    assert len(rows["both"]["p_per_seed"]["UAS"]) == 2  # against each single model
    assert rows["both"]["train_minutes"] == [
        sum(RunFolder(runs_dir, run).state()["train_seconds"] for run in grid.runs) / 60
    ]


def test_two_workers_share_one_storage(tmp_path):
    """Two workers on one SQLite study: every run is trained exactly once, by one of them."""
    storage = f"sqlite:///{tmp_path / 'shared.db'}"
    command = ALLENNLP + ["grid", "run", TINY, "-o", str(tmp_path / "out")]
    command += ["--runs-dir", str(tmp_path / "runs"), "--storage", storage, "--heartbeat", "2"]
    command += ["--trials", "100"]
    workers = [
        subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for _ in range(2)
    ]
    outputs = [worker.communicate(timeout=600) for worker in workers]
    assert [worker.returncode for worker in workers] == [0, 0], [e[-3000:] for _, e in outputs]
    assert set(trainings(tmp_path).values()) == {1}
    trained = sum(stderr.count(": training (") for _, stderr in outputs)
    assert trained == 4


def _fake_trainings(monkeypatch, runner: GridRunner, trained: list, during_training=None):
    """Replaces `runner`'s trainings by fake results, each run's label appended to `trained`;
    `during_training(study)` is called first with the study as another worker opens it."""

    def fake_training(folder):
        if during_training is not None:
            import optuna

            during_training(
                optuna.load_study(study_name=runner.study_name, storage=runner.storage_url)
            )
        fake_run(runner.runs_dir, folder.run, 81.0, 71.0, [fake_prediction(True)])
        trained.append(folder.run.label)
        return folder.result()

    monkeypatch.setattr(runner, "_train_and_evaluate", fake_training)


def _runner_with_one_run_left(tmp_path: Path, monkeypatch, during_training=None):
    """The tiny grid with three runs finished (fake results) and one left, whose training is
    faked (`_fake_trainings`)."""
    grid = load_grid(TINY)
    runs_dir = str(tmp_path / "runs")
    for run in grid.runs[1:]:
        fake_run(runs_dir, run, 80.0, 70.0, [fake_prediction(True)])
    runner = GridRunner(grid, str(tmp_path / "out"), runs_dir, heartbeat_seconds=1)
    trained: list = []
    _fake_trainings(monkeypatch, runner, trained, during_training)
    return grid, runner, trained


def test_a_trial_closed_by_another_worker_does_not_stop_this_one(tmp_path, monkeypatch):
    """While this worker trains, another marks its trial failed (as Optuna's heartbeat check
    does with a trial it takes for stale): Optuna 5's `optimize` died reporting such a trial; the
    worker goes on, and the run's folder says it is done."""
    import optuna

    def fail_running_trials(study):
        for trial in study.get_trials(states=(optuna.trial.TrialState.RUNNING,)):
            study._storage.set_trial_state_values(trial._trial_id, optuna.trial.TrialState.FAIL)

    grid, runner, trained = _runner_with_one_run_left(tmp_path, monkeypatch, fail_running_trials)
    assert runner.run() == 1
    assert trained == [grid.runs[0].label] and runner.pending() == []


def test_a_grid_given_another_variant_trains_only_the_new_runs(tmp_path, monkeypatch):
    """The grid file edited after its study was made (a variant added): Optuna refuses
    categorical choices that differ from the study's, which made every trial fail; the new
    grid has a study of its own, and its finished runs are found by their folders."""
    out, runs_dir = str(tmp_path / "out"), str(tmp_path / "runs")
    trained = []

    def runner_of(variants):
        runner = GridRunner(load_grid(write_grid(tmp_path, grid_text(variants))), out, runs_dir)
        _fake_trainings(monkeypatch, runner, trained)
        return runner

    first = runner_of("{ name: 'a' }")
    assert first.run() == 1 and len(trained) == 1
    second = runner_of("{ name: 'a' }, { name: 'b', overrides: { model: { dropout: 0.3 } } }")
    assert second.study_name != first.study_name
    assert second.run() == 1
    assert len(trained) == 2 and trained[1].startswith("b") and second.pending() == []


def test_a_run_left_running_in_the_study_by_a_dead_worker_is_trained(tmp_path, monkeypatch):
    """A worker killed between taking a trial and its first heartbeat leaves the trial running
    for ever (the heartbeat check never fails it): the run's free lock puts it back in the
    queue."""
    import optuna

    grid, runner, trained = _runner_with_one_run_left(tmp_path, monkeypatch)
    left = grid.runs[0]
    study = runner._study()
    study.enqueue_trial({"variant": left.variant, "seed": left.seed})
    orphan = study.ask()
    assert orphan.params == {} and study.get_trials()[0].state == optuna.trial.TrialState.RUNNING
    assert runner.run() == 1
    assert trained == [left.label]


# ---- the tables' arithmetic on fake runs -------------------------------------------------


def fake_prediction(correct: bool) -> SentencePrediction:
    gold = Tree.fromstring("(TOP (S (NP (DT The) (NN cat)) (VP (VBD sat))))")
    wrong = Tree.fromstring("(TOP (S (DT The) (VP (NN cat) (VBD sat))))")
    return SentencePrediction(
        words=["The", "cat", "sat"],
        gold_tags=["DT", "NN", "VBD"],
        gold_tree=gold,
        predicted_tree=gold if correct else wrong,
        gold_heads=[2, 3, 0],
        predicted_heads=[2, 3, 0] if correct else [3, 3, 0],
        gold_dependency_labels=["NP_DT", "S_NP", "root"],
        predicted_dependency_labels=["NP_DT", "S_NP", "root"],
        scored=[True, True, True],
    )


def fake_run(runs_dir: str, run, f1: float, uas: float, predictions) -> None:
    folder = RunFolder(runs_dir, run)
    os.makedirs(os.path.join(folder.path, "eval"))
    write_predictions(folder.predictions_path("dev"), predictions)
    folder.write_json(
        folder.result_path,
        {
            "variant": run.variant,
            "seed": run.seed,
            "metrics": {"dev": {"F1": f1, "UAS": uas, "LAS": uas, "POS": 90.0}},
            "score": f1,
            "epochs": 3,
            "train_minutes": 2.0,
            "curve": [{"epoch": 0, "minutes": 1.0, "F1": f1}],
        },
    )


def test_table_arithmetic_on_fake_runs(tmp_path):
    grid = load_grid(TINY)
    runs_dir = str(tmp_path / "runs")
    a, b = "dropout 0.1", "dropout 0.3"
    # a: right on every sentence; b: wrong on 15 of 20 sentences in both seeds
    good = [fake_prediction(True) for _ in range(20)]
    bad = [fake_prediction(k < 5) for k in range(20)]
    for run, f1, uas, predictions in [
        (grid.runs_of(a)[0], 90.0, 80.0, good),
        (grid.runs_of(a)[1], 92.0, 84.0, good),
        (grid.runs_of(b)[0], 80.0, 70.0, bad),
        (grid.runs_of(b)[1], 86.0, 70.0, bad),
    ]:
        fake_run(runs_dir, run, f1, uas, predictions)
    report = GridReport(grid, runs_dir, trials=2000)
    rows = {row["variant"]: row for row in report.rows("dev")}
    assert rows[a]["values"]["F1"] == [90.0, 92.0]
    table = report.markdown("dev", report.rows("dev"))
    # mean ± sample sd: 91 ± 1.41 and 83 ± 4.24
    assert "| dropout 0.1 | 2 | 91.00 ± 1.41 | 82.00 ± 2.83 |" in table
    assert "| dropout 0.3 | 2 | 83.00 ± 4.24 | 70.00 ± 0.00 |" in table
    # 30 of 40 sentence pairs differ, all one way: the smallest p the shuffles can give
    assert rows[b]["p"]["F1"] == pytest.approx(1 / 2001)
    assert rows[b]["p"]["UAS"] == pytest.approx(1 / 2001)
    # the dependency labels are right wherever the head is: LAS = UAS
    assert rows[b]["p"]["LAS"] == rows[b]["p"]["UAS"]
    assert len(rows[b]["p_per_seed"]["F1"]) == 2


def test_identical_variants_have_p_one(tmp_path):
    grid = load_grid(TINY)
    runs_dir = str(tmp_path / "runs")
    predictions = [fake_prediction(k % 3 == 0) for k in range(12)]
    for run in grid.runs:
        fake_run(runs_dir, run, 85.0, 80.0, predictions)
    rows = {row["variant"]: row for row in GridReport(grid, runs_dir, trials=500).rows("dev")}
    assert rows["dropout 0.3"]["p"] == {"F1": 1.0, "UAS": 1.0, "LAS": 1.0}
    assert rows["dropout 0.1"]["p"] == {"F1": None, "UAS": None, "LAS": None}


# ---- the project's grid files ------------------------------------------------------------

GRIDS = sorted(Path("grids").glob("*.jsonnet")) if Path("grids").is_dir() else []


def grid_ext_vars() -> dict:
    from tests.configs.test_configs import _ext_vars

    return dict(_ext_vars(), PTB_TEST=_ext_vars()["PTB_DEV"])


@pytest.mark.parametrize("path", GRIDS, ids=lambda p: p.name)
def test_every_grid_file_loads(path):
    grid = load_grid(str(path), grid_ext_vars())
    # A table: two variants at least, each trained over three seeds at least (an ensemble is
    # one run built from the seeds of another variant).
    trained = [v for v in grid.variants if v.ensemble_of is None]
    assert len(grid.runs) == len(trained) * len(grid.seeds)
    assert len(grid.ensemble_runs) == len(grid.variants) - len(trained)
    assert len(grid.variants) >= 2 and len(grid.seeds) >= 3
    # Every variant trains or evaluates something different.
    assert len({run.key for run in grid.all_runs}) == len(grid.all_runs)
    if grid.reference_variant:
        assert grid.reference_variant in [v.name for v in grid.variants]


def label_attention(grid, variant):
    return grid.runs_of(variant)[0].config["model"]["encoder"]["label_attention"]


def test_the_table_grids_switch_what_their_rows_name():
    for scale in ("cpu", "ptb"):
        table1 = load_grid(f"grids/lal_table1_{scale}.jsonnet", grid_ext_vars())
        for variant in table1.variants:
            pfl, rd = (part.split()[1] == "yes" for part in variant.name.split(", "))
            switches = label_attention(table1, variant.name)
            assert switches["use_feed_forward"] is pfl
            assert switches["residual_dropout"] == (0.2 if rd else 0.0)
            assert table1.runs_of(variant.name)[0].config["model"]["type"] == "lal_joint_parser"
        table2 = load_grid(f"grids/lal_table2_{scale}.jsonnet", grid_ext_vars())
        for variant in table2.variants:
            qv, conc = (part.split()[1] == "yes" for part in variant.name.split(", "))
            switches = label_attention(table2, variant.name)
            assert (switches["query_vectors"], switches["concatenate_heads"]) == (qv, conc)
            assert (switches["use_feed_forward"], switches["residual_dropout"]) == (True, 0.0)
    # The base model of both tables is one run, trained once.
    cpu1 = load_grid("grids/lal_table1_cpu.jsonnet", grid_ext_vars())
    cpu2 = load_grid("grids/lal_table2_cpu.jsonnet", grid_ext_vars())
    layers = load_grid("grids/lal_layers_cpu.jsonnet", grid_ext_vars())
    base = {run.key for run in cpu1.runs_of("PFL yes, RD no")}
    assert base == {run.key for run in cpu2.runs_of("QV yes, Conc yes")}
    assert base == {run.key for run in layers.runs_of("LAL, 0 self-attention layers")}
    for k, name in [(1, "1 self-attention layer"), (4, "4 self-attention layers")]:
        run = layers.runs_of(f"LAL, {name}")[0]
        assert run.config["model"]["encoder"]["self_attention"]["num_layers"] == k
