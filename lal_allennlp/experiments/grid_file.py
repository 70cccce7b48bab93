"""
Grid files: a comparative experiment as data (jsonnet), checked before anything trains.

A grid names one base training config, named variants (each an override object on that config,
or its own config), seeds, one training budget for every run, the files each model is evaluated
on, and optionally a reference variant for the significance tests and published numbers per
variant and metric:

    {
      name: 'lal_table1_cpu',
      config: '../training_config/lal_minilm_cpu_joint.jsonnet',  // relative to the grid file
      budget_minutes: 2.5,               // the `time_budget` callback's minutes, every run
      seeds: [1, 2, 3],                  // random_seed = numpy_seed = pytorch_seed
      overrides: { ... },                // on every variant
      evaluate: { dev: std.extVar('DEV_PATH') },
      reference_variant: 'PFL yes, RD no',
      reference_source: 'Mrini et al. 2020, Table 1 (PTB test)',
      variants: [
        { name: 'PFL yes, RD no', overrides: { model: { encoder: { ... } } },
          reference: { F1: 96.38, UAS: 97.42, LAS: 96.26 } },
        { name: 'K&K', config: '../training_config/kk_factored_minilm_cpu_joint.jsonnet' },
      ],
    }

Overrides merge into the evaluated config object by object; a list or a scalar replaces what is
there. Every key of an override must name something the config has: a misspelt key would
otherwise train a copy of the base model under the variant's name. A key written `'+name'`
adds `name` where the config has no such key yet (an optional argument the config leaves at
its default). Grid files and configs see the environment as `std.extVar`s, as `allennlp train`
gives them.

Each run (variant, seed) is identified by the hash of its final config, so a run that two grids
share (the base model of two ablation tables) is trained once and found by both.

Two kinds of variant are not trainings of their own:

* `test_overrides: {...}`: the variant's trained model evaluated with these overrides merged
  into its config when the archive is loaded (what `allennlp evaluate --overrides` does: the
  model is rebuilt from the stored config plus the overrides and gets the trained weights). The
  training is that of the same variant without `test_overrides`, shared (a test-time ablation
  table is one trained model per seed, evaluated several ways). The keys are checked against
  the config as `overrides` are.
* `ensemble_of: 'VARIANT'`: one model built from the trained models of every seed of another
  variant (`lal_allennlp.models.stack_attention_ensemble.build_ensemble_archive`), evaluated
  once after they are trained; its significance tests pair it with each seed of the reference.
"""

from dataclasses import dataclass, field
import hashlib
import json
import os
import re
from typing import Any, Dict, List, Mapping, Optional, Tuple

# The table's metric names and the model metric each is read from (fractions become percent,
# except the metrics in UNSCALED).
METRICS: Dict[str, str] = {
    "F1": "evalb_f1",
    "P": "evalb_precision",
    "R": "evalb_recall",
    "UAS": "UAS",
    "LAS": "LAS",
    "POS": "pos_accuracy",
    # The unsupervised parsers' scores of unlabelled brackets (`lal_unlabelled_f1`) and a masked
    # language model's perplexity and accuracy on the masked words.
    "sentence_F1": "sentence_f1",
    "corpus_F1": "corpus_f1",
    "perplexity": "perplexity",
    "masked_acc": "masked_accuracy",
}
UNSCALED = {"perplexity"}


def table_value(metric: str, value: float) -> float:
    """A model's metric `value` as the tables show `metric`: percent, or as it is."""
    return value if metric in UNSCALED else 100 * value

_KNOWN_KEYS = {
    "name",
    "config",
    "budget_minutes",
    "seeds",
    "overrides",
    "evaluate",
    "reference_variant",
    "reference_source",
    "variants",
    "metrics",
    "description",
}
_VARIANT_KEYS = {
    "name",
    "config",
    "overrides",
    "test_overrides",
    "ensemble_of",
    "reference",
    "description",
}


class GridError(ValueError):
    """A grid that cannot run: the message names the grid file and the entry."""


@dataclass(frozen=True)
class Run:
    """
    One evaluated model of a grid: a variant with a seed, its final training config and
    identity. `key` names the run's folder (its results); `train_key` the folder of the training
    it evaluates, the same unless the variant has `test_overrides` (then several runs share one
    training). An ensemble run has `members`, the trained runs it is built from, and no
    training of its own.
    """

    variant: str
    seed: int
    config: Dict[str, Any] = field(hash=False, compare=False)
    key: str = ""
    train_key: str = ""
    test_overrides: Dict[str, Any] = field(default_factory=dict, hash=False, compare=False)
    members: Tuple["Run", ...] = field(default=(), hash=False, compare=False)

    @property
    def label(self) -> str:
        if self.members:
            return f"{self.variant} ({len(self.members)} models)"
        return f"{self.variant} · seed {self.seed}"


@dataclass
class Variant:
    name: str
    config_path: str
    overrides: Dict[str, Any]
    reference: Dict[str, float]
    description: str = ""
    test_overrides: Dict[str, Any] = field(default_factory=dict)
    ensemble_of: Optional[str] = None


@dataclass
class Grid:
    path: str
    name: str
    variants: List[Variant]
    seeds: List[int]
    evaluate: Dict[str, str]
    budget_minutes: Optional[float]
    reference_variant: Optional[str]
    reference_source: str
    metrics: List[str]
    description: str
    runs: List[Run]
    # One run per `ensemble_of` variant, evaluated after its members are trained.
    ensemble_runs: List[Run] = field(default_factory=list)

    def runs_of(self, variant: str) -> List[Run]:
        return [run for run in self.all_runs if run.variant == variant]

    @property
    def all_runs(self) -> List[Run]:
        return self.runs + self.ensemble_runs


def slug(text: str) -> str:
    """A file-name-safe form of a variant or grid name."""
    return re.sub(r"[^A-Za-z0-9]+", "_", text).strip("_").lower() or "variant"


def _evaluate_jsonnet(path: str, ext_vars: Mapping[str, str]) -> Any:
    import _jsonnet

    try:
        return json.loads(_jsonnet.evaluate_file(path, ext_vars=dict(ext_vars)))
    except RuntimeError as error:
        raise GridError(f"{path}: {str(error).strip()}") from error


def merge_overrides(
    config: Dict[str, Any], overrides: Mapping[str, Any], where: str, config_name: str
) -> Dict[str, Any]:
    """
    `config` with `overrides` merged in (a new object; neither input changes). Raises
    `GridError` naming `where` for a key that matches nothing in the config (unless written
    `'+key'`, which adds it).
    """
    merged = dict(config)
    for raw_key, value in overrides.items():
        adding = raw_key.startswith("+")
        key = raw_key[1:] if adding else raw_key
        path = f"{where}.{key}" if where else key
        if key not in merged and not adding:
            known = ", ".join(sorted(merged)) or "none"
            raise GridError(
                f"override key {path!r} matches nothing in {config_name} (keys there: {known}); "
                f"fix the name, or write '+{key}' to add a key the config does not set"
            )
        if adding and key in merged:
            raise GridError(
                f"override key {raw_key!r} at {where or 'the top'} adds {key!r}, which "
                f"{config_name} already has: drop the '+'"
            )
        if isinstance(value, Mapping) and isinstance(merged.get(key), Mapping):
            merged[key] = merge_overrides(merged[key], value, path, config_name)
        else:
            merged[key] = value
    return merged


def load_time_overrides(overrides: Mapping[str, Any], prefix: str = "") -> Dict[str, Any]:
    """`overrides` as `load_archive(overrides=...)` takes them: flat dotted keys
    (`{"model.encoder.attention_window": 5}`; AllenNLP replaces a whole object given as one
    value), without the grid's `'+'` key marks (AllenNLP adds a key the config does not have)."""
    flat: Dict[str, Any] = {}
    for key, value in overrides.items():
        path = prefix + (key[1:] if key.startswith("+") else key)
        if isinstance(value, Mapping) and value:
            flat.update(load_time_overrides(value, path + "."))
        else:
            flat[path] = value
    return flat


def _set_budget(config: Dict[str, Any], minutes: float, config_name: str) -> None:
    callbacks = config.get("trainer", {}).get("callbacks") or []
    budgets = [c for c in callbacks if isinstance(c, dict) and c.get("type") == "time_budget"]
    if not budgets:
        raise GridError(
            f"budget_minutes is set but {config_name} has no time_budget callback in "
            "trainer.callbacks: leave budget_minutes out, or use a config with a wall-clock budget"
        )
    for budget in budgets:
        budget["minutes"] = minutes


def run_key(config: Mapping[str, Any]) -> str:
    """The identity of a run: a hash of its final config (keys sorted)."""
    text = json.dumps(config, sort_keys=True, separators=(",", ":"))
    return hashlib.sha1(text.encode("utf-8")).hexdigest()[:12]


def _number(value: Any, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise GridError(f"{what} must be a number, got {value!r}")
    return float(value)


def load_grid(path: str, ext_vars: Optional[Mapping[str, str]] = None) -> Grid:
    """
    Reads and checks the grid file `path`: every variant's config is evaluated and its
    overrides applied, the evaluation files must exist, and names must be unique. Any problem
    is a `GridError` that names the grid file and the entry, raised before anything trains.
    """
    if not os.path.isfile(path):
        raise GridError(f"{path}: no such grid file")
    ext_vars = dict(os.environ if ext_vars is None else ext_vars)
    spec = _evaluate_jsonnet(path, ext_vars)
    where = os.path.relpath(path)

    def fail(message: str) -> GridError:
        return GridError(f"{where}: {message}")

    if not isinstance(spec, dict):
        raise fail("a grid file must evaluate to an object")
    unknown = sorted(set(spec) - _KNOWN_KEYS)
    if unknown:
        raise fail(
            f"unknown key(s) {', '.join(unknown)}; a grid has {', '.join(sorted(_KNOWN_KEYS))}"
        )
    base_dir = os.path.dirname(os.path.abspath(path))
    name = spec.get("name") or os.path.splitext(os.path.basename(path))[0]

    seeds = spec.get("seeds", [1])
    if not isinstance(seeds, list) or not seeds:
        raise fail("seeds must be a non-empty list of integers")
    if any(isinstance(s, bool) or not isinstance(s, int) for s in seeds):
        raise fail(f"seeds must be integers, got {seeds}")
    if len(set(seeds)) != len(seeds):
        raise fail(f"seeds {seeds} repeat a seed")

    budget = spec.get("budget_minutes")
    if budget is not None:
        budget = _number(budget, f"{where}: budget_minutes")
        if budget <= 0:
            raise fail(f"budget_minutes must be positive, got {budget}")

    evaluate = spec.get("evaluate") or {}
    if not isinstance(evaluate, dict) or not evaluate:
        raise fail("evaluate must name at least one file to evaluate on, e.g. {dev: '...'}")
    for eval_name, eval_path in evaluate.items():
        if not isinstance(eval_path, str) or not eval_path:
            raise fail(f"evaluate.{eval_name} must be a path, got {eval_path!r}")

    metrics = spec.get("metrics", ["F1", "UAS", "LAS", "POS"])
    bad_metrics = [m for m in metrics if m not in METRICS]
    if bad_metrics:
        raise fail(f"unknown metric(s) {bad_metrics}; the metrics are {', '.join(METRICS)}")

    raw_variants = spec.get("variants")
    if not isinstance(raw_variants, list) or not raw_variants:
        raise fail("variants must be a non-empty list of objects with a name")
    base_config = spec.get("config")
    common = spec.get("overrides") or {}
    variants: List[Variant] = []
    seen: Dict[str, int] = {}
    for index, raw in enumerate(raw_variants):
        entry = f"variants[{index}]"
        if not isinstance(raw, dict) or not isinstance(raw.get("name"), str) or not raw["name"]:
            raise fail(f"{entry} must be an object with a non-empty name")
        variant_name = raw["name"]
        entry = f"variant {variant_name!r} ({entry})"
        if variant_name in seen:
            raise fail(
                f"{entry} has the same name as variants[{seen[variant_name]}]: names must be unique"
            )
        seen[variant_name] = index
        extra = sorted(set(raw) - _VARIANT_KEYS)
        if extra:
            raise fail(
                f"{entry}: unknown key(s) {', '.join(extra)}; a variant has {', '.join(sorted(_VARIANT_KEYS))}"
            )
        config_path = raw.get("config", base_config)
        if "ensemble_of" in raw:
            config_path = ""  # the members' configs
        elif not isinstance(config_path, str):
            raise fail(f"{entry} has no config, and the grid names no base config")
        else:
            config_path = os.path.normpath(os.path.join(base_dir, config_path))
            if not os.path.isfile(config_path):
                raise fail(f"{entry}: config {config_path} does not exist")
        reference = raw.get("reference") or {}
        for metric, value in reference.items():
            if metric not in METRICS:
                raise fail(
                    f"{entry}: reference metric {metric!r} is not one of {', '.join(METRICS)}"
                )
            _number(value, f"{where}: {entry}: reference {metric}")
        test_overrides = raw.get("test_overrides") or {}
        ensemble_of = raw.get("ensemble_of")
        if not isinstance(test_overrides, dict):
            raise fail(f"{entry}: test_overrides must be an object")
        if ensemble_of is not None and (
            set(raw) & {"config", "overrides"} or not isinstance(ensemble_of, str)
        ):
            raise fail(
                f"{entry}: ensemble_of names the variant whose trained models it combines; it "
                "takes no config or overrides of its own (test_overrides, yes)"
            )
        variants.append(
            Variant(
                variant_name,
                config_path,
                raw.get("overrides") or {},
                {k: float(v) for k, v in reference.items()},
                raw.get("description", ""),
                test_overrides,
                ensemble_of,
            )
        )
    reference_variant = spec.get("reference_variant")
    if reference_variant is not None and reference_variant not in seen:
        raise fail(
            f"reference_variant {reference_variant!r} is not one of the variants ({', '.join(seen)})"
        )

    by_name = {variant.name: variant for variant in variants}
    for variant in variants:
        if variant.ensemble_of is None:
            continue
        members = by_name.get(variant.ensemble_of)
        if members is None or members.ensemble_of is not None:
            raise fail(
                f"variant {variant.name!r}: ensemble_of {variant.ensemble_of!r} is not a trained "
                f"variant of this grid ({', '.join(v.name for v in variants if not v.ensemble_of)})"
            )

    runs: List[Run] = []
    evaluated: Dict[str, Any] = {}
    for variant in variants:
        if variant.ensemble_of is not None:
            continue
        if variant.config_path not in evaluated:
            evaluated[variant.config_path] = _evaluate_jsonnet(variant.config_path, ext_vars)
        config_name = os.path.relpath(variant.config_path)
        try:
            config = merge_overrides(evaluated[variant.config_path], common, "", config_name)
            config = merge_overrides(config, variant.overrides, "", config_name)
        except GridError as error:
            raise fail(f"variant {variant.name!r}: {error}") from None
        config = json.loads(json.dumps(config))
        if budget is not None:
            try:
                _set_budget(config, budget, config_name)
            except GridError as error:
                raise fail(f"variant {variant.name!r}: {error}") from None
        if variant.test_overrides:
            try:
                merge_overrides(config, variant.test_overrides, "", config_name)
            except GridError as error:
                raise fail(f"variant {variant.name!r}: test_overrides: {error}") from None
        for seed in seeds:
            seeded = dict(config, random_seed=seed, numpy_seed=seed, pytorch_seed=seed)
            train_key = run_key(seeded)
            key = train_key
            if variant.test_overrides:
                key = run_key({"trained": train_key, "test_overrides": variant.test_overrides})
            runs.append(
                Run(variant.name, seed, seeded, key, train_key, dict(variant.test_overrides))
            )
    ensemble_runs = []
    for variant in variants:
        if variant.ensemble_of is not None:
            members = tuple(run for run in runs if run.variant == variant.ensemble_of)
            # The archive is built once for its members (`train_key`) and evaluated per variant.
            train_key = run_key({"ensemble_of": [member.key for member in members]})
            key = train_key
            if variant.test_overrides:
                key = run_key({"trained": train_key, "test_overrides": variant.test_overrides})
            ensemble_runs.append(
                Run(variant.name, 0, {}, key, train_key, dict(variant.test_overrides), members)
            )
    return Grid(
        path=os.path.abspath(path),
        name=name,
        variants=variants,
        seeds=list(seeds),
        evaluate=dict(evaluate),
        budget_minutes=budget,
        reference_variant=reference_variant,
        reference_source=spec.get("reference_source", ""),
        metrics=list(metrics),
        description=spec.get("description", ""),
        runs=runs,
        ensemble_runs=ensemble_runs,
    )


def check_evaluation_files(grid: Grid) -> List[Tuple[str, str]]:
    """The evaluation files that do not exist (name, path); the runner refuses to start then."""
    from glob import glob

    from lal_allennlp.syntax.paths import split_tree_selection

    missing = []
    for name, evaluated in grid.evaluate.items():
        path, _ = split_tree_selection(evaluated)  # `FILE[400:]`: a selection of FILE
        if not (os.path.exists(path) or glob(path) or _is_file_range(path)):
            missing.append((name, evaluated))
    return missing


def _is_file_range(path: str) -> bool:
    """`DIR/wsj_0160-0179`: the PTB reader's range of numbered files."""
    match = re.match(r"^(.*?)(\d+)-(\d+)$", os.path.basename(path))
    if not match:
        return False
    prefix, first = match.group(1), match.group(2)
    directory = os.path.dirname(path) or "."
    return os.path.isdir(directory) and any(
        name.startswith(prefix + first) for name in os.listdir(directory)
    )
