"""
Runs a grid (`grid_file.Grid`): every (variant, seed) trained with `allennlp train`, one at a
time per worker, then evaluated on the grid's files.

The engine is Optuna: a study in an RDB storage whose queue of trials is the grid's work list.
On one machine the storage is a SQLite file in the grid's output folder; on many machines every
worker runs the same command with `--storage` naming one shared database (and the same
`--runs-dir` on a shared file system). Each worker queues every pending run that no worker
holds and no queued trial names, and takes the next trial from the queue; Optuna's queue hands
one trial to one worker. Optuna's heartbeats mark the trial of a worker that died as failed.

What makes a grid resumable is on disk, not in the study: each run lives in
`RUNS_DIR/<run key>/` (the key is the hash of the run's final config, so identical runs of two
grids are one run), and

* `result.json` there means finished: the run is never trained or evaluated again;
* a serialization folder with a checkpoint and no `model.tar.gz` means killed: training goes on
  with `allennlp train --recover` (the `time_budget` callback continues its budget);
* a lock file held by a live process means another worker is on it: this worker leaves it.

Each run's folder keeps `config.json` (what was trained), `train.log`, the serialization folder
`model/`, `eval/NAME.jsonl` (per-sentence predictions, for the significance tests) and
`result.json` (metrics per evaluation file, epochs, training time, the dev curve).
"""

import contextlib
import datetime
import fcntl
import gc
import glob
import hashlib
import json
import logging
import os
import re
import shutil
import subprocess
import sys
import threading
import time
import warnings
from typing import Any, Dict, Iterator, List, Optional

from lal_allennlp.experiments.grid_file import (
    METRICS,
    Grid,
    Run,
    load_time_overrides,
    slug,
    table_value,
)

logger = logging.getLogger(__name__)


def _log(message: str) -> None:
    print(f"[grid {time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def _duration(text: str) -> float:
    """Seconds of an AllenNLP `training_duration` string (`H:MM:SS.ffffff`, or `D day, ...`)."""
    days = 0
    if "day" in text:
        day_part, text = text.split(",", 1)
        days = int(day_part.split()[0])
    hours, minutes, seconds = text.strip().split(":")
    return days * 86400 + int(hours) * 3600 + int(minutes) * 60 + float(seconds)


class RunFolder:
    """The files of one run (see the module docstring). The training's files (config, log,
    state, model) are in the folder of the run's `train_key`, which runs with test-time
    overrides share with the run without them; the results are in the run's own folder."""

    def __init__(self, runs_dir: str, run: Run) -> None:
        self.run = run
        self.path = os.path.join(runs_dir, run.key)
        self.train_path = os.path.join(runs_dir, run.train_key or run.key)
        self.model_dir = os.path.join(self.train_path, "model")
        self.config_path = os.path.join(self.train_path, "config.json")
        self.result_path = os.path.join(self.path, "result.json")
        self.state_path = os.path.join(self.train_path, "state.json")
        self.log_path = os.path.join(self.train_path, "train.log")

    @property
    def archive(self) -> str:
        return os.path.join(self.model_dir, "model.tar.gz")

    def finished(self) -> bool:
        return os.path.isfile(self.result_path)

    def result(self) -> Dict[str, Any]:
        with open(self.result_path, encoding="utf-8") as result:
            return json.load(result)

    def predictions_path(self, eval_name: str) -> str:
        return os.path.join(self.path, "eval", f"{slug(eval_name)}.jsonl")

    def has_checkpoint(self) -> bool:
        return bool(glob.glob(os.path.join(self.model_dir, "training_state_*.th")))

    def state(self) -> Dict[str, Any]:
        if os.path.isfile(self.state_path):
            with open(self.state_path, encoding="utf-8") as state:
                return json.load(state)
        return {"train_seconds": 0.0, "trainings": 0, "segments": []}

    def write_json(self, path: str, value: Any) -> None:
        partial = f"{path}.partial"
        with open(partial, "w", encoding="utf-8") as out:
            json.dump(value, out, indent=2, sort_keys=True)
        os.replace(partial, path)

    @contextlib.contextmanager
    def training_lock(self) -> Iterator[None]:
        """Held while the model is trained: a worker that needs the same training for another
        run (one with test-time overrides) waits for it instead of training it twice."""
        os.makedirs(self.train_path, exist_ok=True)
        with open(os.path.join(self.train_path, ".training-lock"), "w") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)

    @contextlib.contextmanager
    def lock(self) -> Iterator[bool]:
        """Yields True when this process holds the run's lock (no other live worker has it)."""
        os.makedirs(self.path, exist_ok=True)
        with open(os.path.join(self.path, ".lock"), "w") as handle:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                yield False
                return
            try:
                yield True
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)

    def epoch_curve(self) -> List[Dict[str, float]]:
        """Per validated epoch: minutes of training so far and the validation metrics."""
        segments = self.state().get("segments", [])
        points = []
        files = glob.glob(os.path.join(self.model_dir, "metrics_epoch_*.json"))
        for path in sorted(files, key=lambda p: int(re.findall(r"(\d+)\.json$", p)[0])):
            with open(path, encoding="utf-8") as metrics_file:
                metrics = json.load(metrics_file)
            epoch = int(metrics["epoch"])
            # A recovered training counts its duration from the recovery; add what came before.
            offset = sum(s["seconds"] for s in segments if s["before_epoch"] <= epoch)
            point = {
                "epoch": epoch,
                "minutes": (offset + _duration(metrics["training_duration"])) / 60,
            }
            for name, metric in METRICS.items():
                value = metrics.get(f"validation_{metric}")
                if value is not None:
                    point[name] = table_value(name, value)
            points.append(point)
        return points


def _allennlp_command() -> List[str]:
    script = os.path.join(os.path.dirname(sys.executable), "allennlp")
    return [script] if os.path.isfile(script) else [sys.executable, "-m", "allennlp"]


class _Heartbeat:
    """Records in the storage every `seconds` that this worker is alive and on `trial_id`, in a
    thread, while the `with` block runs. A storage error (a busy SQLite file) costs one beat,
    not the thread: a worker whose beats stop is taken for dead after four of them."""

    def __init__(self, storage: Any, trial_id: int, seconds: float) -> None:
        self.storage, self.trial_id, self.seconds = storage, trial_id, seconds
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._beat, daemon=True)

    def _beat(self) -> None:
        while True:
            try:
                self.storage.record_heartbeat(self.trial_id)
            except Exception as error:
                _log(f"heartbeat not recorded ({type(error).__name__}: {error}); trying again")
            if self._stop.wait(self.seconds):
                return

    def __enter__(self) -> "_Heartbeat":
        self._thread.start()
        return self

    def __exit__(self, *exc_info: Any) -> None:
        self._stop.set()
        self._thread.join()


class GridRunner:
    """
    Trains and evaluates the runs of `grid`. `out_dir` gets the study, the tables and the
    pictures; `runs_dir` the runs (shared between grids: identical runs are trained once).
    `storage`: an Optuna storage URL (default: SQLite in `out_dir`); `heartbeat_seconds`: how
    often a worker tells the storage it is alive (a worker silent for four beats is taken for
    dead and its grid point is retried).
    """

    def __init__(
        self,
        grid: Grid,
        out_dir: str,
        runs_dir: str,
        storage: Optional[str] = None,
        heartbeat_seconds: int = 60,
    ) -> None:
        self.grid = grid
        self.out_dir = out_dir
        self.runs_dir = runs_dir
        os.makedirs(out_dir, exist_ok=True)
        os.makedirs(runs_dir, exist_ok=True)
        self.storage_url = storage or "sqlite:///" + os.path.abspath(
            os.path.join(out_dir, "study.db")
        )
        self.heartbeat_seconds = heartbeat_seconds
        self._storage: Any = None  # the study's RDBStorage, set by `_study`
        self._by_point = {(run.variant, run.seed): run for run in grid.runs}
        # The variants Optuna hands out: not the ensembles, built after their members.
        self._trained_variants = [v.name for v in grid.variants if v.ensemble_of is None]
        self._times: List[float] = []
        # Runs that failed in this process: not retried by it (a new `run` retries them).
        self._failed: set = set()

    def folder(self, run: Run) -> RunFolder:
        return RunFolder(self.runs_dir, run)

    def _study(self, attempts: int = 5) -> Any:
        """The grid's study, created by the first worker and loaded by the others. Workers that
        start together race to create the storage's tables and the study: the loser retries."""
        for attempt in range(attempts):
            try:
                return self._create_study()
            except Exception as error:  # sqlalchemy's and optuna's errors of that race
                if attempt == attempts - 1:
                    raise
                _log(f"opening the study failed ({type(error).__name__}); trying again")
                time.sleep(1.0 + attempt)
        raise AssertionError("unreachable")

    @property
    def study_name(self) -> str:
        """The grid's name and a digest of its points (variants and seeds): Optuna refuses a
        trial whose categorical choices differ from those the study was made with, so a grid
        given another variant or seed gets a study of its own. The runs already finished are
        still found by their folders, and not trained again."""
        points = json.dumps([self._trained_variants, list(self.grid.seeds)])
        return f"{slug(self.grid.name)}-{hashlib.sha1(points.encode('utf-8')).hexdigest()[:8]}"

    def _create_study(self) -> Any:
        import optuna
        from optuna.storages import RDBStorage, RetryHeartbeatStaleTrialCallback

        optuna.logging.set_verbosity(optuna.logging.ERROR)
        # Heartbeats are marked experimental in Optuna; they are what hands a dead worker's
        # run to another worker.
        warnings.filterwarnings("ignore", category=optuna.exceptions.ExperimentalWarning)
        self._storage = storage = RDBStorage(
            self.storage_url,
            heartbeat_interval=self.heartbeat_seconds,
            grace_period=4 * self.heartbeat_seconds,
            heartbeat_stale_trial_callback=RetryHeartbeatStaleTrialCallback(max_retry=3),
            engine_kwargs=(
                {"connect_args": {"timeout": 60}} if self.storage_url.startswith("sqlite") else {}
            ),
        )
        return optuna.create_study(
            study_name=self.study_name,
            storage=storage,
            # Trials come from the queue with their points fixed (`_requeue`). A trial asked
            # when another worker has just taken the last queued one draws a point at random;
            # the run's lock and folder then say whether there is anything to do. (Optuna's
            # GridSampler fails on queued trials when one point is left, and stops `optimize`,
            # which this runner does not use.)
            sampler=optuna.samplers.RandomSampler(),
            direction="maximize",
            load_if_exists=True,
        )

    def pending(self) -> List[Run]:
        """The runs not finished, less those that failed in this process."""
        return [
            run
            for run in self.grid.runs
            if not self.folder(run).finished() and run.key not in self._failed
        ]

    def run(self, max_runs: Optional[int] = None) -> int:
        """Trains and evaluates every run not finished yet (at most `max_runs` trainings);
        returns the number of runs this worker trained or evaluated."""
        study = self._study()
        done_here = 0
        self._link_runs()
        while max_runs is None or done_here < max_runs:
            pending = self.pending()
            if not pending:
                break
            if not any(self._free(run) for run in pending):
                # Every run left is with another worker: wait for them.
                time.sleep(max(1.0, self.heartbeat_seconds / 4))
                continue
            self._requeue(study, pending)
            outcome: Dict[str, Any] = {}
            self._one_trial(study, outcome)
            if outcome.get("trained"):
                done_here += 1
        self._evaluate_ensembles()
        self._link_runs()
        if self._failed:
            labels = [run.label for run in self.grid.all_runs if run.key in self._failed]
            _log(f"{len(labels)} run(s) failed: {'; '.join(labels)} (see their train.log)")
        return done_here

    def _one_trial(self, study: Any, outcome: Dict[str, Any]) -> None:
        """One trial, asked and told by hand rather than through `study.optimize`: first the
        stale trials of dead workers are failed (Optuna's retry callback queues their points
        again), then this worker's heart beats while it trains. The study only hands out grid
        points; the runs' folders say what is done. A trial whose record another worker closed
        meanwhile (it took this one's heartbeat for stale) is left as that worker left it:
        `study.optimize` dies on such a trial in Optuna 5 (an assertion while it reports the
        trial), which stopped a worker of a two-worker grid."""
        import optuna

        optuna.storages.fail_stale_trials(study)
        with warnings.catch_warnings():
            # Optuna warns that heartbeats are meant for `optimize`: `_Heartbeat` beats here.
            warnings.filterwarnings("ignore", message="Heartbeat of storage")
            trial = study.ask()
        value, state = None, optuna.trial.TrialState.FAIL
        try:
            with _Heartbeat(self._storage, trial._trial_id, self.heartbeat_seconds):
                value = self._objective(trial, outcome)
            state = optuna.trial.TrialState.COMPLETE
        except optuna.TrialPruned:
            state = optuna.trial.TrialState.PRUNED
        except Exception as error:  # a failed training is logged by _objective; anything else here
            if not outcome.get("failed"):
                _log(f"trial {trial.number} failed: {error!r}")
        finally:
            study.tell(trial, value, state=state, skip_if_finished=True)
            gc.collect()  # the evaluated model's tensors, before the next training

    def _objective(self, trial: Any, outcome: Dict[str, Any]) -> float:
        import optuna

        variant = trial.suggest_categorical("variant", self._trained_variants)
        seed = trial.suggest_categorical("seed", list(self.grid.seeds))
        run = self._by_point[(variant, seed)]
        folder = self.folder(run)
        total = len(self.grid.runs)
        with folder.lock() as mine:
            if not mine:
                raise optuna.TrialPruned(f"{run.label} is being trained by another worker")
            if folder.finished() or run.key in self._failed:
                if run.key in self._failed:
                    raise optuna.TrialPruned(f"{run.label} failed earlier in this process")
                return folder.result()["score"]
            number = total - len(self.pending()) + 1
            started = time.time()
            _log(f"[{number}/{total}] {run.label}: {self._plan(folder)} ({folder.path})")
            try:
                result = self._train_and_evaluate(folder)
            except Exception as error:
                self._failed.add(run.key)
                outcome["failed"] = True
                _log(f"[{number}/{total}] {run.label}: FAILED ({error}); log: {folder.log_path}")
                raise
        elapsed = time.time() - started
        self._times.append(elapsed)
        outcome["trained"] = True
        left = len(self.pending())
        eta = left * (sum(self._times) / len(self._times))
        first = next(iter(self.grid.evaluate))
        _log(
            f"[{number}/{total}] {run.label}: done in {elapsed / 60:.1f} min, "
            f"{result['epochs']} epochs; {first}: {self._scores(result, first)}; {left} runs "
            f"left, about {eta / 60:.0f} min"
        )
        return result["score"]

    def _scores(self, result: Dict[str, Any], eval_name: str) -> str:
        return ", ".join(
            f"{name} {value:.2f}"
            for name, value in result["metrics"][eval_name].items()
            if name in self.grid.metrics
        )

    def _free(self, run: Run) -> bool:
        folder = self.folder(run)
        with folder.lock() as mine:
            return mine

    def _requeue(self, study: Any, pending: List[Run]) -> None:
        """Queues every pending run that no worker holds and no queued trial names: the runs'
        locks, not the trials' states, say who is on a run. (A trial left running by a worker
        killed before its first heartbeat is never failed by the heartbeat check; a run pruned
        because another worker had it, which then died, has an ended trial.) A point queued
        twice is harmless: the second trial finds the run locked or finished."""
        import optuna

        waiting = study.get_trials(deepcopy=False, states=(optuna.trial.TrialState.WAITING,))
        # A queued trial keeps its point in `fixed_params` until it is handed out.
        queued = {
            (point.get("variant"), point.get("seed"))
            for point in (t.system_attrs.get("fixed_params", t.params) for t in waiting)
        }
        for run in pending:
            if (run.variant, run.seed) not in queued and self._free(run):
                study.enqueue_trial({"variant": run.variant, "seed": run.seed})

    def _plan(self, folder: RunFolder) -> str:
        if os.path.isfile(folder.archive):
            return "trained; evaluating"
        if folder.has_checkpoint():
            return "recovering the killed training (allennlp train --recover)"
        return "training"

    def _train_and_evaluate(self, folder: RunFolder) -> Dict[str, Any]:
        if not os.path.isfile(folder.archive):
            with folder.training_lock():
                if not os.path.isfile(folder.archive):  # not trained by another worker meanwhile
                    self._train(folder)
        return self._evaluate(folder)

    def _evaluate_ensembles(self) -> None:
        """Builds and evaluates each ensemble whose members are all finished (after this
        worker's trainings; members of another worker's that are not finished yet leave the
        ensemble for a later `run` or `report`)."""
        for run in self.grid.ensemble_runs:
            folder = self.folder(run)
            member_folders = [self.folder(member) for member in run.members]
            if folder.finished():
                continue
            if not all(member.finished() for member in member_folders):
                waiting = [m.run.label for m in member_folders if not m.finished()]
                _log(f"{run.label}: waiting for {', '.join(waiting)}")
                continue
            with folder.lock() as mine:
                if not mine or folder.finished():
                    continue
                _log(f"{run.label}: building the ensemble and evaluating ({folder.path})")
                try:
                    if not os.path.isfile(folder.archive):
                        from lal_allennlp.models.stack_attention_ensemble import (
                            build_ensemble_archive,
                        )

                        os.makedirs(folder.model_dir, exist_ok=True)
                        build_ensemble_archive([m.archive for m in member_folders], folder.archive)
                    result = self._evaluate(folder)
                except Exception as error:
                    self._failed.add(run.key)
                    _log(f"{run.label}: FAILED ({error})")
                    continue
            first = next(iter(self.grid.evaluate))
            _log(f"{run.label}: done; {first}: {self._scores(result, first)}")

    def _train(self, folder: RunFolder) -> None:
        folder.write_json(folder.config_path, folder.run.config)
        state = folder.state()
        command = _allennlp_command() + [
            "train",
            folder.config_path,
            "-s",
            folder.model_dir,
            "--file-friendly-logging",
        ]
        if folder.has_checkpoint():
            command.append("--recover")
            # The recovered training's clock starts at zero: remember what came before.
            done = folder.epoch_curve()
            if done:
                state["segments"].append(
                    {"before_epoch": done[-1]["epoch"] + 1, "seconds": done[-1]["minutes"] * 60}
                )
        elif os.path.isdir(folder.model_dir):
            # Killed before its first checkpoint: nothing to recover.
            shutil.rmtree(folder.model_dir)
        state["trainings"] += 1
        folder.write_json(folder.state_path, state)
        started = time.time()
        with open(folder.log_path, "a", encoding="utf-8") as log:
            log.write(f"\n=== {datetime.datetime.now().isoformat()} {' '.join(command)}\n")
            log.flush()
            returncode = subprocess.call(command, stdout=log, stderr=subprocess.STDOUT)
        state["train_seconds"] += time.time() - started
        folder.write_json(folder.state_path, state)
        if returncode != 0 or not os.path.isfile(folder.archive):
            raise RuntimeError(f"allennlp train exited with {returncode}")

    def _evaluate(self, folder: RunFolder) -> Dict[str, Any]:
        from lal_allennlp.analysis.predictions import predict_treebank, write_predictions

        metrics: Dict[str, Dict[str, float]] = {}
        overrides = load_time_overrides(folder.run.test_overrides)
        for name, path in self.grid.evaluate.items():
            predictions, model_metrics = predict_treebank(folder.archive, path, overrides=overrides)
            os.makedirs(os.path.dirname(folder.predictions_path(name)), exist_ok=True)
            write_predictions(folder.predictions_path(name), predictions)
            metrics[name] = {
                table_name: table_value(table_name, model_metrics[metric])
                for table_name, metric in METRICS.items()
                if metric in model_metrics
            }
        final_metrics: Dict[str, Any] = {}
        final_path = os.path.join(folder.model_dir, "metrics.json")
        if os.path.isfile(final_path):  # not for an ensemble, which is not trained
            with open(final_path, encoding="utf-8") as final:
                final_metrics = json.load(final)
        curve = folder.epoch_curve()
        first_eval = next(iter(self.grid.evaluate))
        result = {
            "variant": folder.run.variant,
            "seed": folder.run.seed,
            "key": folder.run.key,
            "test_overrides": folder.run.test_overrides,
            "members": [member.key for member in folder.run.members],
            "metrics": metrics,
            "score": metrics[first_eval].get(self.grid.metrics[0], 0.0),
            "epochs": None if folder.run.members else len(curve),
            "best_epoch": final_metrics.get("best_epoch"),
            "train_minutes": (
                sum(self.folder(m).state()["train_seconds"] for m in folder.run.members)
                if folder.run.members
                else folder.state()["train_seconds"]
            )
            / 60,
            "curve": curve,
            "evaluate": dict(self.grid.evaluate),
            "finished": datetime.datetime.now().isoformat(timespec="seconds"),
        }
        folder.write_json(folder.result_path, result)
        return result

    def _link_runs(self) -> None:
        """`OUT/runs/<variant>-seed<N>`: links to the runs, for people browsing a grid."""
        links = os.path.join(self.out_dir, "runs")
        os.makedirs(links, exist_ok=True)
        for run in self.grid.all_runs:
            name = f"{slug(run.variant)}-seed{run.seed}" if not run.members else slug(run.variant)
            link = os.path.join(links, name)
            target = os.path.relpath(self.folder(run).path, links)
            if os.path.islink(link) and os.readlink(link) == target:
                continue
            with contextlib.suppress(FileNotFoundError):
                os.remove(link)
            with contextlib.suppress(FileExistsError):
                os.symlink(target, link)
