"""
Worker for ``benchmarks/peers_accuracy.py``: parses the dev set with one trained model, or
trains SuPar, inside the virtual environment of that system.

Each sub-command runs under the Python of the system it drives (ours and allennlp-models in the
project's ``.venv``, SuPar in its own), so nothing is imported at module level beyond the
standard library. A parse command reads gold trees (one per line), parses their words with the
gold POS tags given where the system takes them, writes one predicted tree per line in the same
order and prints a JSON line ``{"sentences": N, "words": W, "seconds": S}``: the median wall time
of ``--repeats`` (3) passes over all sentences after one untimed warm-up batch, model loading
excluded. With
``--probe L1 L2 ...`` it then parses one sentence of each length (dev words repeated) until one
fails (an error, or a peak resident size over ``--limit-mib``, 8 GiB by default) and adds the
results under ``probe``.

    python benchmarks/peers_worker.py parse-ours ARCHIVE GOLD OUT [--batch-size 32]
    python benchmarks/peers_worker.py parse-allennlp-models ARCHIVE GOLD OUT [--batch-size 32]
    python benchmarks/peers_worker.py parse-supar MODEL GOLD OUT
    python benchmarks/peers_worker.py train-supar -- SUPAR_CRF_CON_ARGUMENTS...
"""

import argparse
import json
import os
import statistics
import sys
import time
from typing import Callable, List, Optional, Tuple

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

WARM_UP = 16  # sentences parsed, untimed, before timing


def _read_gold(path: str) -> List[Tuple[List[str], List[str]]]:
    """(words, tags) of each tree of a one-tree-per-line file."""
    from nltk import Tree

    sentences = []
    with open(path, encoding="utf-8") as gold:
        for line in gold:
            words, tags = zip(*Tree.fromstring(line).pos())
            sentences.append((list(words), list(tags)))
    return sentences


def load_ours(
    archive_path: str, gold_path: str, precision: Optional[str] = None
) -> Tuple[object, List[Tuple[List[str], List[str]]], List[dict]]:
    """This project's `lal_parser` predictor of a trained archive (its embedder in `precision`
    when given), the gold sentences (`_read_gold`) and their JSON inputs (words and gold
    tags): `(predictor, sentences, inputs)`. For the scripts that parse with our models."""
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    import lal_allennlp  # noqa: F401  (registers the models, reader and predictor)
    from allennlp.models.archival import load_archive
    from allennlp.predictors import Predictor

    from lal_allennlp.models.span_parser_base import set_embedder_precision

    sentences = _read_gold(gold_path)
    archive = load_archive(archive_path)
    if precision:
        set_embedder_precision(archive.model, precision, archive_path)
    predictor = Predictor.from_archive(archive, "lal_parser")
    inputs = [{"tokens": words, "tags": tags} for words, tags in sentences]
    return predictor, sentences, inputs


def _by_length(sentences: List, batch_size: int) -> List[List[int]]:
    """Batches of indices of sentences of similar length (all the parsers batch this way)."""
    order = sorted(range(len(sentences)), key=lambda i: len(sentences[i][0]))
    return [order[i : i + batch_size] for i in range(0, len(order), batch_size)]


def _timed(parse_all: Callable[[], object], repeats: int) -> float:
    """The median wall time of `repeats` calls of `parse_all` (each parses all sentences). One
    pass over the 273 dev sentences takes 2-3 s, and single passes of one model differ by up
    to a fifth from run to run on a shared machine; the median of a few is steadier."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        parse_all()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def _report(sentences: List, seconds: float, probe: Optional[List[dict]] = None) -> None:
    words = sum(len(words) for words, _ in sentences)
    report = {"sentences": len(sentences), "words": words, "seconds": seconds, "probe": probe}
    print(json.dumps(report))


def _peak_reset() -> None:
    with open("/proc/self/clear_refs", "w") as clear_refs:  # VmHWM := VmRSS (Linux >= 4.0)
        clear_refs.write("5")


def _peak_mib() -> float:
    with open("/proc/self/status") as status:
        line = next(line for line in status if line.startswith("VmHWM:"))
    return int(line.split()[1]) / 1024


def _probe(
    parse_one: Callable[[List[str], List[str]], object],
    sentences: List[Tuple[List[str], List[str]]],
    lengths: List[int],
    limit_mib: float,
) -> List[dict]:
    """Parses one sentence of each length (dev words repeated), up to the first failure: a
    raised error, or a peak resident size of the process above ``limit_mib``."""
    words = [w for sentence, _ in sentences for w in sentence]
    tags = [t for _, sentence_tags in sentences for t in sentence_tags]
    results = []
    for length in lengths:
        repeat = -(-length // len(words))
        _peak_reset()
        try:
            parse_one((words * repeat)[:length], (tags * repeat)[:length])
            error = None
        except Exception as exception:  # noqa: BLE001 - reported, whatever it is
            error = f"{type(exception).__name__}: {str(exception)[:200]}"
        peak = _peak_mib()
        if error is None and peak > limit_mib:
            error = f"peak resident memory {peak:,.0f} MiB > {limit_mib:,.0f} MiB"
        results.append({"length": length, "ok": error is None, "peak_mib": peak, "error": error})
        if error is not None:
            break
    return results


def _flat(tree) -> str:  # type: ignore[no-untyped-def]
    return tree.pformat(margin=sys.maxsize) if not isinstance(tree, str) else tree


def parse_ours(args: argparse.Namespace) -> None:
    predictor, sentences, inputs = load_ours(args.archive, args.gold, args.precision)
    import torch

    with torch.no_grad():
        predictor.predict_batch_json(inputs[:WARM_UP])
        trees = [""] * len(sentences)

        def parse_all() -> None:
            for batch in _by_length(sentences, args.batch_size):
                outputs = predictor.predict_batch_json([inputs[i] for i in batch])
                for i, output in zip(batch, outputs):
                    trees[i] = output["tree"]

        seconds = _timed(parse_all, args.repeats)
    with open(args.out, "w", encoding="utf-8") as out:
        out.writelines(tree + "\n" for tree in trees)

    def one(words: List[str], tags: List[str]) -> object:
        with torch.no_grad():
            return predictor.predict_json({"tokens": words, "tags": tags})

    _report(sentences, seconds, _probe(one, sentences, args.probe, args.limit_mib))


def parse_allennlp_models(args: argparse.Namespace) -> None:
    import torch

    import allennlp_models.structured_prediction  # noqa: F401  (registers constituency_parser)
    from allennlp.models.archival import load_archive

    sentences = _read_gold(args.gold)
    archive = load_archive(args.archive)
    model, reader = archive.model, archive.validation_dataset_reader
    model.eval()
    # The gold tags go into the output trees (its predictor, from raw text, tags with spaCy and
    # drops one-word constituents when no tags are given).
    instances = [reader.text_to_instance(words, tags) for words, tags in sentences]
    with torch.no_grad():
        model.forward_on_instances(instances[:WARM_UP])
        trees = [""] * len(sentences)

        def parse_all() -> None:
            for batch in _by_length(sentences, args.batch_size):
                outputs = model.forward_on_instances([instances[i] for i in batch])
                for i, output in zip(batch, outputs):
                    trees[i] = _flat(output["trees"])

        seconds = _timed(parse_all, args.repeats)
    with open(args.out, "w", encoding="utf-8") as out:
        out.writelines(tree + "\n" for tree in trees)

    def one(words: List[str], tags: List[str]) -> object:
        with torch.no_grad():
            return model.forward_on_instances([reader.text_to_instance(words, tags)])

    _report(sentences, seconds, _probe(one, sentences, args.probe, args.limit_mib))


def _supar_compat() -> None:
    """SuPar 1.1.4 under torch >= 2.6 and transformers >= 4.50 (see the module docstring)."""
    os.environ.setdefault("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", "1")  # its checkpoints are pickles
    import torch
    import transformers

    try:
        from transformers import AdamW  # noqa: F401
    except ImportError:  # removed in transformers 4.50; SuPar imports it
        transformers.AdamW = torch.optim.AdamW
        # transformers may put a fresh lazy module in sys.modules later: serve it there too.
        lazy_module = type(transformers)
        fallback = lazy_module.__getattr__

        def getattr_with_adamw(self, name):  # type: ignore[no-untyped-def]
            return torch.optim.AdamW if name == "AdamW" else fallback(self, name)

        lazy_module.__getattr__ = getattr_with_adamw


def parse_supar(args: argparse.Namespace) -> None:
    _supar_compat()
    import torch
    from supar import Parser

    torch.set_num_threads(args.threads)
    sentences = _read_gold(args.gold)
    parser = Parser.load(args.archive)
    parser.predict([words for words, _ in sentences[:WARM_UP]], verbose=False)
    # Reads the gold file (SuPar keeps its POS tags in the output trees), sorts by length into
    # buckets, writes the trees in the input order.
    seconds = _timed(
        lambda: parser.predict(args.gold, pred=args.out, verbose=False), args.repeats
    )

    def one(words: List[str], tags: List[str]) -> object:
        return parser.predict([words], verbose=False)

    _report(sentences, seconds, _probe(one, sentences, args.probe, args.limit_mib))


def train_supar(args: argparse.Namespace) -> None:
    _supar_compat()
    from supar.cmds import crf_con

    sys.argv = ["supar.cmds.crf_con"] + [a for a in args.rest if a != "--"]
    crf_con.main()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    for name in ("parse-ours", "parse-allennlp-models", "parse-supar"):
        command = commands.add_parser(name)
        command.add_argument("archive", help="model archive (SuPar: model file)")
        command.add_argument("gold", help="gold trees, one per line")
        command.add_argument("out", help="predicted trees, one per line")
        command.add_argument("--batch-size", type=int, default=32)
        command.add_argument("--threads", type=int, default=2)
        command.add_argument(
            "--probe", type=int, nargs="*", default=[], help="then parse one sentence of each "
            "of these lengths (dev words repeated), stopping at the first that fails"
        )
        command.add_argument("--limit-mib", type=float, default=8192.0)
        command.add_argument("--repeats", type=int, default=3, help="timed passes (median)")
        if name == "parse-ours":
            command.add_argument("--precision", help="the span parsers' embedder_precision")
    train = commands.add_parser("train-supar")
    train.add_argument("rest", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    {
        "parse-ours": parse_ours,
        "parse-allennlp-models": parse_allennlp_models,
        "parse-supar": parse_supar,
        "train-supar": train_supar,
    }[args.command](args)


if __name__ == "__main__":
    main()
