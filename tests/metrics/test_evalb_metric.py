"""The `lal_evalb` Metric: exact values, registration, and the sum over 2 gloo workers."""

import json
from pathlib import Path
from typing import List, Optional, Tuple

import pytest
import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from allennlp.common import Params
from allennlp.training.metrics import Metric
from nltk import Tree

from lal_allennlp.metrics import COLLINS, NK, EvalbMetric, evalb_score

GOLD = "(TOP (S (NP (DT The) (NN cat)) (VP (VBD sat)) (. .)))"
# (gold, predicted) pairs with known counts under COLLINS.prm; None = missing tree.
PAIRS: List[Tuple[Optional[str], Optional[str]]] = [
    (GOLD, GOLD),  # 3/3/3, tags 3/3, complete
    (GOLD, "(TOP (S (NP (DT The) (VB cat)) (VP (VBD sat) (. .))))"),  # 3/3/3, tags 2/3
    (GOLD, "(TOP (S (DT The) (NN cat) (VP (VBD sat)) (. .)))"),  # 2 of 3 gold, 2 predicted
    (GOLD, None),  # parser failure: 0 of 3 gold, tags 0/3
    (None, GOLD),  # no gold tree: left out
    (GOLD, GOLD.replace("cat", "dog")),  # error sentence: not scored
    ("(TOP (S (NP (NP (NNP John))) (VP (VBD ran))))", "(TOP (S (NP (NNP John)) (VP (VBD ran))))"),
    ("(TOP (S (NP (PRP He)) (VP (VBD gave) (PRT (RP up)))))", None),  # 0 of 4, tags 0/3
    (
        "(TOP (S (NP (PRP He)) (VP (VBD gave) (PRT (RP up)))))",
        "(TOP (S (NP (PRP He)) (VP (VBD gave) (ADVP (RP up)))))",
    ),  # 4/4/4, tags 3/3, complete
    ("(TOP (S (NN Yes) (. .)))", "(TOP (S (NN Yes) (. .)))"),  # 1/1/1, tags 1/1, complete
]
# matched 3+3+2+0+3+0+4+1 = 16; gold 3+3+3+3+4+4+4+1 = 25; predicted 3+3+2+0+3+0+4+1 = 16
# complete: sentences 1, 2, 9, 10 of 8 valid; tags 3+2+3+0+2+0+3+1 = 14 of 3+3+3+3+2+3+3+1 = 21
EXPECTED = {
    "evalb_precision": 1.0,
    "evalb_recall": 16 / 25,
    "evalb_f1": 32 / 41,
    "evalb_complete_match": 4 / 8,
    "evalb_tagging_accuracy": 14 / 21,
    "evalb_left_out": 1,  # the error sentence ("dog")
}


def _trees(texts: List[Optional[str]]) -> List[Optional[Tree]]:
    return [None if text is None else Tree.fromstring(text) for text in texts]


def _call(metric: EvalbMetric, pairs: List[Tuple[Optional[str], Optional[str]]]) -> None:
    metric(_trees([p for _, p in pairs]), _trees([g for g, _ in pairs]))


def test_exact_values_over_batches_and_reset():
    metric = EvalbMetric()
    _call(metric, PAIRS[:4])
    _call(metric, PAIRS[4:])
    values = metric.get_metric(reset=False)
    assert values == pytest.approx(EXPECTED, abs=1e-12)
    assert set(values) == set(EXPECTED)
    counts = metric.counts
    assert (counts.sentences, counts.errors, counts.valid_sentences) == (9, 1, 8)
    assert (counts.matched, counts.gold, counts.predicted) == (16, 25, 16)
    assert metric.get_metric(reset=True) == values
    assert metric.get_metric() == {key: 0.0 for key in EXPECTED}


def test_gold_tags_keep_a_sentence_whose_punctuation_was_mistagged():
    # "." tagged NN survives punctuation deletion: 4 predicted words against 3 gold words.
    mistagged = "(TOP (S (NP (DT The) (NN cat)) (VP (VBD sat) (NN .))))"
    plain, gold_tagged = EvalbMetric(), EvalbMetric(gold_tags=True)
    for metric in (plain, gold_tagged):
        _call(metric, [(GOLD, mistagged), (GOLD, GOLD.replace("cat", "dog"))])
    # EVALB: both are error sentences, nothing is scored.
    assert (plain.counts.errors, plain.counts.matched, plain.counts.gold) == (2, 0, 0)
    # Gold tags: the first is scored (S, NP and VP all match: "." is deleted from the VP),
    # the second still differs in a word and stays an error sentence.
    counts = gold_tagged.counts
    assert (counts.errors, counts.matched, counts.gold, counts.predicted) == (1, 3, 3, 3)
    assert gold_tagged.get_metric()["evalb_f1"] == 1.0
    assert gold_tagged.get_metric()["evalb_tagging_accuracy"] == 1.0
    assert (plain.get_metric()["evalb_left_out"], gold_tagged.get_metric()["evalb_left_out"]) \
        == (2, 1)


def test_gold_tags_leave_the_callers_trees_alone():
    predicted = Tree.fromstring("(TOP (S (NP (DT The) (VB cat)) (VP (VBD sat) (. .))))")
    EvalbMetric(gold_tags=True)([predicted], [Tree.fromstring(GOLD)])
    assert predicted.pos()[1] == ("cat", "VB")


def test_agrees_with_evalb_score():
    metric = EvalbMetric()
    _call(metric, PAIRS)
    kept = [(g, p) for g, p in PAIRS if g is not None]
    result = evalb_score(_trees([g for g, _ in kept]), _trees([p for _, p in kept]))
    values = metric.get_metric()
    assert values["evalb_f1"] == result.f1 and values["evalb_recall"] == result.recall
    assert metric.counts == result.counts


def test_mismatched_batch_is_refused():
    with pytest.raises(ValueError, match="2 predicted trees but 1 gold trees"):
        EvalbMetric()(_trees([GOLD, GOLD]), _trees([GOLD]))


def test_registered_with_presets_and_parameter_files(tmp_path):
    assert Metric.by_name("lal_evalb") is EvalbMetric
    assert Metric.from_params(Params({"type": "lal_evalb"})).params == COLLINS
    assert Metric.from_params(Params({"type": "lal_evalb", "preset": "nk"})).params == NK
    prm = tmp_path / "ctb.prm"
    prm.write_text("DELETE_LABEL TOP\nDELETE_LABEL PU\nDELETE_LABEL_FOR_LENGTH -NONE-\n", "utf-8")
    metric = Metric.from_params(Params({"type": "lal_evalb", "parameter_file": str(prm)}))
    assert metric.params.delete_labels == ("TOP", "PU")
    _call(
        metric,
        [
            (
                "(TOP (IP (NP (NR 中国)) (VP (VV 发展)) (PU 。)))",
                "(TOP (IP (NP (NR 中国)) (VP (VV 发展) (PU 。))))",
            )
        ],
    )
    assert metric.get_metric()["evalb_f1"] == 1.0
    with pytest.raises(ValueError, match="unknown EVALB preset"):
        EvalbMetric(preset="ptb")


def _worker(rank: int, world_size: int, init_file: str, out_dir: str) -> None:
    dist.init_process_group(
        "gloo", init_method=f"file://{init_file}", rank=rank, world_size=world_size
    )
    try:
        # The workers see different sentences in batches of different sizes (one empty), but
        # call the metric the same number of times.
        if rank == 0:
            batches = [PAIRS[0:3], PAIRS[3:7]]
        else:
            batches = [PAIRS[7:10], []]
        metric = EvalbMetric()
        for batch in batches:
            _call(metric, batch)
        result = {"metrics": metric.get_metric(), "counts": metric.counts.to_list()}
        Path(out_dir, f"{rank}.json").write_text(json.dumps(result))
    finally:
        dist.destroy_process_group()


def test_distributed_sum_equals_single_process(tmp_path):
    if not dist.is_available():
        pytest.skip("torch.distributed is not available")
    mp.start_processes(
        _worker,
        args=(2, str(tmp_path / "init"), str(tmp_path)),
        nprocs=2,
        start_method="fork",
    )
    single = EvalbMetric()
    _call(single, PAIRS)
    expected = {"metrics": single.get_metric(), "counts": single.counts.to_list()}
    for rank in range(2):
        assert json.loads((tmp_path / f"{rank}.json").read_text()) == expected
    assert expected["metrics"] == pytest.approx(EXPECTED, abs=1e-12)
    assert not dist.is_initialized()
    assert torch.tensor(expected["counts"]).sum() > 0


def test_ctb_punctuation_preset_deletes_pu_only():
    from nltk import Tree

    from lal_allennlp.metrics import EvalbMetric

    gold = Tree.fromstring("(TOP (IP (NP (NN 他)) (VP (VV 来) (NP (NN 了))) (PU 。)))")
    # The full stop attached inside the VP: a different VP bracket unless PU is deleted.
    pred = Tree.fromstring("(TOP (IP (NP (NN 他)) (VP (VV 来) (NP (NN 了)) (PU 。))))")
    collins, ctb = EvalbMetric(), EvalbMetric("ctb_punctuation")
    collins([pred], [gold])
    ctb([pred], [gold])
    assert ctb.get_metric(reset=True)["evalb_f1"] == 1.0
    assert collins.get_metric(reset=True)["evalb_f1"] < 1.0
