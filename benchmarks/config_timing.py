"""
Training steps and parsing of one training config's parser, timed on fixed batches: the set-up
shared by the benchmarks that compare variants of a parser side by side in one run
(`precision_speed.py`, `label_scorer_speed.py`).

`ConfigTiming(args)` reads the config with the WSJ sample's paths, builds the vocabulary and the
model (the config's initial weights: random parser layers, pretrained MiniLM; the arithmetic,
not the accuracy, is measured), `--batches` training batches of 16 sentences bucketed by length
as the config trains, and the first `--parse-sentences` dev sentences by length. `train()` runs
the training steps (forward, backward, gradient clipping, the config's optimizer) from the same
initial weights and optimizer state each time; `parse()` parses the dev sentences through the
predictor from gold tokens in batches of 32. `alternate(setups, rounds)` times both for each
variant of the parser (a function that switches the model to it), the variants taking turns
round by round so that a slower spell of the machine hits each.
"""
import argparse
import copy
import os
import sys
import time
from typing import Callable, Dict, Tuple

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if REPO_ROOT not in sys.path:
    sys.path.insert(0, REPO_ROOT)
TREES = os.path.join(REPO_ROOT, "..", "shared", "data", "ptb-sample", "trees")
DEPS = os.path.join(REPO_ROOT, "..", "shared", "data", "ptb-sample", "deps")
JOINT_CONFIG = os.path.join(REPO_ROOT, "training_config", "lal_minilm_cpu_joint.jsonnet")
BATCH_SIZE = 16  # training sentences per batch, as the CPU configs train


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of the set-up (the config, data, threads and sizes)."""
    parser.add_argument("--config", default=JOINT_CONFIG)
    parser.add_argument("--train", default=os.path.join(TREES, "wsj_0001-0019"))
    parser.add_argument("--dev", default=os.path.join(TREES, "wsj_0160-0179"))
    parser.add_argument("--deps-dir", default=DEPS)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--batches", type=int, default=6)
    parser.add_argument("--parse-sentences", type=int, default=96)
    parser.add_argument("--rounds", type=int, default=2)


class ConfigTiming:
    def __init__(self, args: argparse.Namespace) -> None:
        import torch
        from allennlp.common import Params
        from allennlp.data import DatasetReader, Vocabulary
        from allennlp.data.data_loaders import MultiProcessDataLoader
        from allennlp.data.samplers import BucketBatchSampler
        from allennlp.models import Model
        from allennlp.predictors import Predictor

        import lal_allennlp  # noqa: F401  (registers the models, reader and predictor)
        from gpu_speed import default_tokenizer_dir  # benchmarks/gpu_speed.py

        torch.set_num_threads(args.threads)
        torch.manual_seed(0)
        ext_vars = {
            "MINILM_DIR": default_tokenizer_dir(), "TRAIN_PATH": "", "DEV_PATH": "",
            "DEPS_DIR": args.deps_dir,
        }
        params = Params.from_file(args.config, ext_vars=ext_vars)
        reader = DatasetReader.from_params(params.pop("dataset_reader"))
        dev_reader = DatasetReader.from_params(params.pop("validation_dataset_reader"))
        vocab = Vocabulary.from_instances(reader.read(args.train))
        loader = MultiProcessDataLoader(
            reader,
            args.train,
            batch_sampler=BucketBatchSampler(batch_size=BATCH_SIZE, sorting_keys=["tokens"]),
        )
        loader.index_with(vocab)
        batches = [batch for _, batch in zip(range(args.batches + 1), loader)]
        self.warm_up, self.batches = batches[0], batches[1:]
        dev = sorted(
            (instance["tokens"].tokens for instance in dev_reader.read(args.dev)), key=len
        )[: args.parse_sentences]
        self.inputs = [{"tokens": [token.text for token in tokens]} for tokens in dev]
        self.model = Model.from_params(vocab=vocab, params=params.pop("model"))
        self.optimizer_params = params["trainer"]["optimizer"].as_dict()
        self.initial = copy.deepcopy(self.model.state_dict())
        self.predictor = Predictor.by_name("lal_parser")(self.model, dev_reader)
        self.config = os.path.basename(args.config)
        self.words = sum(int(b["tokens"]["tokens"]["mask"].sum()) for b in self.batches)

    def warm(self) -> None:
        """One training forward and backward and one parse (numba, allocations, caches)."""
        self.model.train()
        self.model(**self.warm_up)["loss"].backward()
        self.model.zero_grad()
        self.parse()

    def train(self) -> None:
        """The training steps, from the same initial weights and optimizer state."""
        import torch
        from allennlp.common import Params
        from allennlp.training.optimizers import Optimizer

        model = self.model
        model.load_state_dict(self.initial)
        optimizer = Optimizer.from_params(
            model_parameters=list(model.named_parameters()),
            params=Params(copy.deepcopy(self.optimizer_params)),
        )
        model.train()
        for batch in self.batches:
            optimizer.zero_grad()
            model(**batch)["loss"].backward()
            torch.nn.utils.clip_grad_norm_([p for p in model.parameters() if p.requires_grad], 5.0)
            optimizer.step()

    def parse(self) -> None:
        """The dev sentences through the predictor, batches of 32."""
        import torch

        self.model.load_state_dict(self.initial)
        self.model.eval()
        with torch.no_grad():
            for i in range(0, len(self.inputs), 32):
                self.predictor.predict_batch_json(self.inputs[i : i + 32])

    def alternate(
        self, setups: Dict[str, Callable[[], None]], rounds: int
    ) -> Dict[Tuple[str, str], float]:
        """Seconds of `train()` and `parse()` per variant, `{(phase, name): seconds}` summed over
        `rounds`, after one warm-up of each variant."""
        for setup in setups.values():
            setup()
            self.warm()
        seconds = {(phase, name): 0.0 for phase in ("train", "parse") for name in setups}
        for _ in range(rounds):
            for name, setup in setups.items():
                setup()
                for phase, run in (("train", self.train), ("parse", self.parse)):
                    start = time.perf_counter()
                    run()
                    seconds[phase, name] += time.perf_counter() - start
        return seconds

    def rates(self, seconds: float, phase: str, rounds: int) -> float:
        """Sentences per second of `rounds` runs of `phase` that took `seconds`."""
        count = BATCH_SIZE * len(self.batches) if phase == "train" else len(self.inputs)
        return rounds * count / seconds

    def summary(self, rounds: int) -> str:
        """What was timed, for the report."""
        return (
            f"{self.config}: {len(self.batches)} training batches of {BATCH_SIZE} sentences "
            f"({self.words} words), {len(self.inputs)} dev sentences parsed, {rounds} rounds"
        )
