"""The `lal_unlabelled_f1` metric: hand-checked values over batches, reset, misaligned input,
and the same scores from two distributed workers as from one process."""
import json
from pathlib import Path
from typing import List, Optional, Set, Tuple

import pytest
import torch.distributed as dist
import torch.multiprocessing as mp
from allennlp.common import Params
from allennlp.training.metrics import Metric
from nltk import Tree

from lal_allennlp.metrics import UnlabelledF1

Spans = Set[Tuple[int, int]]

# (predicted spans over the words without punctuation, gold tree with punctuation).
PAIRS: List[Tuple[Spans, Optional[str]]] = [
    # Words: The big cat sat down; gold (0,3) (3,5) besides the whole sentence. Predicted
    # (0,2) (0,3): 1 matched, P = R = F1 = 1/2.
    (
        {(0, 5), (0, 2), (0, 3)},
        "(TOP (S (NP (DT The) (JJ big) (NN cat)) (VP (VBD sat) (ADVP (RB down))) (. .)))",
    ),
    # Two words: no bracket besides the whole sentence on either side, F1 = 1.
    ({(0, 2)}, "(TOP (S (NP (PRP He)) (VP (VBD left)) (. .)))"),
    # No gold tree: left out, whatever is predicted.
    ({(0, 9)}, None),
    # Words: John saw a dog; gold (1,4) (2,4); predicted (2,4): P = 1, R = 1/2, F1 = 2/3.
    (
        {(0, 4), (2, 4)},
        "(TOP (S (`` ``) (NP (NNP John)) (VP (VBD saw) (NP (DT a) (NN dog))) (. .)))",
    ),
]
# Sentence F1 (1/2 + 1 + 2/3) / 3 = 13/18. Corpus: 2 matched, 2 + 0 + 1 = 3 predicted,
# 2 + 0 + 2 = 4 gold: P = 2/3, R = 1/2, F1 = 2 * 1/3 / (7/6) = 4/7.
EXPECTED = {
    "sentence_f1": 13 / 18,
    "corpus_f1": 4 / 7,
    "corpus_precision": 2 / 3,
    "corpus_recall": 1 / 2,
}
ZEROS = {"sentence_f1": 0.0, "corpus_f1": 0.0, "corpus_precision": 0.0, "corpus_recall": 0.0}


def _call(metric: UnlabelledF1, pairs: List[Tuple[Spans, Optional[str]]]) -> None:
    metric(
        [spans for spans, _ in pairs],
        [None if gold is None else Tree.fromstring(gold) for _, gold in pairs],
    )


def test_exact_values_over_batches_and_reset():
    metric = UnlabelledF1()
    assert metric.get_metric() == ZEROS
    _call(metric, PAIRS[:2])
    assert metric.get_metric() == pytest.approx(
        {"sentence_f1": 3 / 4, "corpus_f1": 1 / 2, "corpus_precision": 1 / 2,
         "corpus_recall": 1 / 2}
    )
    _call(metric, PAIRS[2:])
    assert metric.score.sentences == 3
    assert metric.get_metric(reset=True) == pytest.approx(EXPECTED)
    assert metric.get_metric() == ZEROS


def test_spans_over_the_words_with_punctuation_are_refused():
    metric = UnlabelledF1()
    gold = Tree.fromstring(PAIRS[0][1])
    # (0, 6) spans the six words with the final full stop.
    with pytest.raises(ValueError, match="'The big cat sat down'"):
        metric([{(0, 6)}], [gold])
    with pytest.raises(ValueError, match="2 predicted span sets but 1 gold trees"):
        metric([set(), set()], [gold])
    assert metric.score.sentences == 0


def test_registered():
    assert Metric.by_name("lal_unlabelled_f1") is UnlabelledF1
    assert isinstance(Metric.from_params(Params({"type": "lal_unlabelled_f1"})), UnlabelledF1)


def _worker(rank: int, world_size: int, init_file: str, out_dir: str) -> None:
    dist.init_process_group(
        "gloo", init_method=f"file://{init_file}", rank=rank, world_size=world_size
    )
    try:
        # Different sentences in batches of different sizes (one empty), the same number of
        # calls on each worker.
        batches = [PAIRS[0:1], PAIRS[1:3]] if rank == 0 else [PAIRS[3:4], []]
        metric = UnlabelledF1()
        for batch in batches:
            _call(metric, batch)
        result = {"metrics": metric.get_metric(), "score": metric.score.to_list()}
        Path(out_dir, f"{rank}.json").write_text(json.dumps(result))
    finally:
        dist.destroy_process_group()


def test_distributed_sum_equals_single_process(tmp_path):
    if not dist.is_available():
        pytest.skip("torch.distributed is not available")
    mp.start_processes(
        _worker, args=(2, str(tmp_path / "init"), str(tmp_path)), nprocs=2, start_method="fork"
    )
    single = UnlabelledF1()
    _call(single, PAIRS)
    for rank in range(2):
        result = json.loads((tmp_path / f"{rank}.json").read_text())
        assert result["metrics"] == pytest.approx(EXPECTED)
        assert result["score"] == pytest.approx(single.score.to_list())
    assert single.get_metric() == pytest.approx(EXPECTED)
    assert not dist.is_initialized()
