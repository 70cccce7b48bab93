"""
The transformer's precision on this CPU, side by side in one run: training steps and parsing of
a span parser config with `embedder_precision` float32, bfloat16 and auto.

bfloat16 autocast pays only on CPUs with native bfloat16 arithmetic (AVX-512 BF16 or AMX);
elsewhere torch emulates it. This script says which kind of CPU it runs on and what `auto`
resolves to there, then times, on the same model weights and the same batches:

- training steps (forward, backward, gradient clipping, the config's optimizer step) on
  `--batches` batches of 16 training sentences (bucketed by length, as the config trains);
- parsing the first `--parse-sentences` dev sentences through the predictor from gold tokens,
  in batches of 32 similar-length sentences.

The precisions alternate round by round, so that a slower spell of the machine hits each; the
report gives the total time of each and the ratio to float32. The parser's weights are the
config's initial ones (random parser layers, pretrained MiniLM): the arithmetic, not the
accuracy, is measured.

    python benchmarks/precision_speed.py [--config training_config/lal_minilm_cpu_joint.jsonnet]
        [--train ../shared/data/ptb-sample/trees/wsj_0001-0019]
        [--dev ../shared/data/ptb-sample/trees/wsj_0160-0179] [--batches 6] [--rounds 2]
"""
import argparse
import copy
import os
import sys
import time

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if REPO_ROOT not in sys.path:
    sys.path.insert(0, REPO_ROOT)
TREES = os.path.join(REPO_ROOT, "..", "shared", "data", "ptb-sample", "trees")
DEPS = os.path.join(REPO_ROOT, "..", "shared", "data", "ptb-sample", "deps")
PRECISIONS = ("float32", "bfloat16", "auto")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--config", default=os.path.join(REPO_ROOT, "training_config", "lal_minilm_cpu_joint.jsonnet")
    )
    parser.add_argument("--train", default=os.path.join(TREES, "wsj_0001-0019"))
    parser.add_argument("--dev", default=os.path.join(TREES, "wsj_0160-0179"))
    parser.add_argument("--deps-dir", default=DEPS)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--batches", type=int, default=6)
    parser.add_argument("--parse-sentences", type=int, default=96)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()

    import torch
    from allennlp.common import Params
    from allennlp.data import DatasetReader, Vocabulary
    from allennlp.data.data_loaders import MultiProcessDataLoader
    from allennlp.data.samplers import BucketBatchSampler
    from allennlp.models import Model
    from allennlp.predictors import Predictor
    from allennlp.training.optimizers import Optimizer

    import lal_allennlp  # noqa: F401
    from lal_allennlp.models.span_parser_base import native_autocast_dtype
    from gpu_speed import default_tokenizer_dir  # benchmarks/gpu_speed.py
    from timing import load_average  # benchmarks/timing.py

    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    native = native_autocast_dtype(torch.device("cpu"))
    print(f"CPU capability {torch.backends.cpu.get_cpu_capability()}; auto resolves to "
          f"{native or 'float32'}; {args.threads} threads; load {load_average()}")

    ext_vars = {
        "MINILM_DIR": default_tokenizer_dir(), "TRAIN_PATH": "", "DEV_PATH": "",
        "DEPS_DIR": args.deps_dir,
    }
    params = Params.from_file(args.config, ext_vars=ext_vars)
    reader = DatasetReader.from_params(params.pop("dataset_reader"))
    dev_reader = DatasetReader.from_params(params.pop("validation_dataset_reader"))
    vocab = Vocabulary.from_instances(reader.read(args.train))
    loader = MultiProcessDataLoader(
        reader, args.train, batch_sampler=BucketBatchSampler(batch_size=16, sorting_keys=["tokens"])
    )
    loader.index_with(vocab)
    batches = [batch for _, batch in zip(range(args.batches + 1), loader)]
    warm_up, batches = batches[:1], batches[1:]
    dev = sorted(
        (instance["tokens"].tokens for instance in dev_reader.read(args.dev)), key=len
    )[: args.parse_sentences]
    inputs = [{"tokens": [token.text for token in tokens]} for tokens in dev]

    model = Model.from_params(vocab=vocab, params=params.pop("model"))
    optimizer_params = params["trainer"]["optimizer"].as_dict()
    initial = copy.deepcopy(model.state_dict())
    predictor = Predictor.by_name("lal_parser")(model, dev_reader)

    def train(precision):
        """Training steps from the same initial weights and optimizer state."""
        model.load_state_dict(initial)
        model.embedder_precision = precision
        optimizer = Optimizer.from_params(
            model_parameters=list(model.named_parameters()),
            params=Params(copy.deepcopy(optimizer_params)),
        )
        model.train()
        for batch in batches:
            optimizer.zero_grad()
            model(**batch)["loss"].backward()
            torch.nn.utils.clip_grad_norm_([p for p in model.parameters() if p.requires_grad], 5.0)
            optimizer.step()

    def parse(precision):
        model.load_state_dict(initial)
        model.embedder_precision = precision
        model.eval()
        with torch.no_grad():
            for i in range(0, len(inputs), 32):
                predictor.predict_batch_json(inputs[i : i + 32])

    for precision in PRECISIONS:  # warm-up: numba, allocations, the weight copies
        model.embedder_precision = precision
        model.train()
        model(**warm_up[0])["loss"].backward()
        model.zero_grad()
        parse(precision)
    seconds = {(phase, p): 0.0 for phase in ("train", "parse") for p in PRECISIONS}
    for _ in range(args.rounds):
        for precision in PRECISIONS:
            for phase, run in (("train", train), ("parse", parse)):
                start = time.perf_counter()
                run(precision)
                seconds[phase, precision] += time.perf_counter() - start

    words = sum(int(b["tokens"]["tokens"]["mask"].sum()) for b in batches)
    print(f"\n{os.path.basename(args.config)}: {len(batches)} training batches of 16 sentences "
          f"({words} words), {len(inputs)} dev sentences parsed, {args.rounds} rounds; "
          f"load {load_average()}\n")
    print("| embedder_precision | training sentences/s | / float32 | parse sentences/s | / float32 |")
    print("|---|---:|---:|---:|---:|")
    train_rate = {p: args.rounds * 16 * len(batches) / seconds["train", p] for p in PRECISIONS}
    parse_rate = {p: args.rounds * len(inputs) / seconds["parse", p] for p in PRECISIONS}
    for p in PRECISIONS:
        name = f"auto ({native or 'float32'})" if p == "auto" else p
        print(f"| {name} | {train_rate[p]:.1f} | {train_rate[p] / train_rate['float32']:.2f}x "
              f"| {parse_rate[p]:.1f} | {parse_rate[p] / parse_rate['float32']:.2f}x |")


if __name__ == "__main__":
    main()
