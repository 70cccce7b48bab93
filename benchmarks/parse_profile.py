"""
Where a span parser's parse time goes, stage by stage, on the CPU.

Parses gold-token sentences (one bracketed tree per line, e.g. ``benchmarks/peers_accuracy.py``'s
``WORK_DIR/data/dev.trees``, or a treebank path the ``lal_ptb`` reader takes) through the
predictor exactly as ``benchmarks/peers_worker.py parse-ours`` does (batches of similar length,
a warm-up batch first), with a wall-clock timer around each stage:

* ``instances``: JSON to instances (word pieces) and their indexing into tensors;
* ``transformer``: the text field embedder (in ``--precision``);
* ``encoder``: the parser's encoder (the label attention layer);
* ``span scores``: the span label classifier over every span;
* ``POS tagger``: the tagging head;
* ``decode``: the decoder and the trees;
* ``output``: trees to strings, the predictor's JSON;
* ``other``: the rest of the wall time (fencepost features, masks, Python between stages).

Each pass's stage times are summed; the table shows the median pass. Timers only read the clock
at stage boundaries, so the total equals an untimed pass within noise.

    python benchmarks/parse_profile.py runs/lal_refactor/model.tar.gz runs/peers/data/dev.trees
    python benchmarks/parse_profile.py runs/lal_refactor/model.tar.gz runs/peers/data/dev.trees \\
        --precision bfloat16
"""
import argparse
import functools
import os
import sys
import time
from collections import defaultdict
from typing import Callable, Dict, List

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)

STAGES = [
    "instances",
    "transformer",
    "encoder",
    "span scores",
    "POS tagger",
    "decode",
    "output",
]


def _timed(owner: object, name: str, stage: str, totals: Dict[str, float]) -> None:
    """Replaces ``owner.name`` by a wrapper that adds its wall time to ``totals[stage]``
    (a nested timed call is not counted twice: only the outermost timer of a stage runs)."""
    original: Callable = getattr(owner, name)
    running: List[bool] = [False]

    @functools.wraps(original)
    def wrapper(*args, **kwargs):  # type: ignore[no-untyped-def]
        if running[0]:
            return original(*args, **kwargs)
        running[0] = True
        start = time.perf_counter()
        try:
            return original(*args, **kwargs)
        finally:
            totals[stage] += time.perf_counter() - start
            running[0] = False

    setattr(owner, name, wrapper)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("archive")
    parser.add_argument("gold", help="gold trees, one per line")
    parser.add_argument("--precision", help="the span parser's embedder_precision")
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--passes", type=int, default=5)
    args = parser.parse_args()

    from peers_worker import WARM_UP, _by_length, load_ours

    predictor, sentences, inputs = load_ours(args.archive, args.gold, args.precision)
    import torch
    from allennlp.data import Batch

    model = predictor._model

    totals: Dict[str, float] = defaultdict(float)
    _timed(predictor, "_json_to_instance", "instances", totals)
    _timed(Batch, "index_instances", "instances", totals)
    _timed(model.text_field_embedder, "forward", "transformer", totals)
    _timed(model.encoder, "forward", "encoder", totals)
    _timed(model.span_label_scorer, "forward", "span scores", totals)
    _timed(model, "_tag_logits", "POS tagger", totals)
    _timed(model, "_decode", "decode", totals)
    _timed(model, "make_output_human_readable", "output", totals)
    _timed(predictor, "_output", "output", totals)

    passes = []
    with torch.no_grad():
        predictor.predict_batch_json(inputs[:WARM_UP])
        for _ in range(args.passes):
            totals.clear()
            start = time.perf_counter()
            for batch in _by_length(sentences, args.batch_size):
                predictor.predict_batch_json([inputs[i] for i in batch])
            wall = time.perf_counter() - start
            passes.append((wall, dict(totals)))
    wall, stages = sorted(passes, key=lambda p: p[0])[len(passes) // 2]
    stages["other"] = wall - sum(stages.values())
    precision = args.precision or model.embedder_precision
    print(f"{args.archive}, {len(sentences)} sentences, transformer in {precision}: "
          f"{len(sentences) / wall:.1f} sentences/s (median of {args.passes} passes; all: "
          + ", ".join(f"{len(sentences) / w:.1f}" for w, _ in passes) + ")")
    print()
    print("| stage | ms per pass | share |")
    print("|---|---:|---:|")
    for stage in STAGES + ["other"]:
        seconds = stages.get(stage, 0.0)
        print(f"| {stage} | {1000 * seconds:.0f} | {100 * seconds / wall:.0f} % |")
    print(f"| **total** | {1000 * wall:.0f} | 100 % |")


if __name__ == "__main__":
    main()
