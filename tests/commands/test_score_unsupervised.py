"""`lal-score-unsupervised` on a tiny WSJ-style treebank: hand-checked scores, reported lines,
exit status, baselines and JSON output."""
import json
import statistics

import pytest

from lal_allennlp.commands.score_unsupervised import main

GOLD_FILES = {
    "wsj_0001.mrg": (
        "( (S (NP-SBJ (DT The) (NN cat)) (VP (VBD sat) (ADVP (RB down))) (. .)) )\n"
        "( (S (NP-SBJ (PRP He)) (VP (VBD left)) (. .)) )\n"
    ),
    "wsj_0002.mrg": (
        "( (S (`` ``) (NP-SBJ (NNP John)) (VP (VBD saw) (NP (DT a) (NN dog))) (. .)) )\n"
        "( (S (NP-SBJ (DT The) (NN cat)) (VP (VBD sat)) (. .)) )\n"
    ),
}
# Gold brackets without punctuation, besides the whole sentence:
#   1. The cat sat down   (0,2) (2,4)
#   2. He left            none
#   3. John saw a dog     (1,4) (2,4)
#   4. The cat sat        (0,2)
PREDICTED = [
    # Over the 5 words with punctuation: NP (0,2), VP (2,5) -> (2,4). 2 of 2: F1 1.
    "(S (NP (DT The) (NN cat)) (VP (VBD sat) (RB down) (. .)))",
    # Not a tree: no brackets; no gold bracket either: F1 1.
    "(X He left",
    # Over the 4 words without punctuation: (0,2) (2,4), 1 of 2 matched: F1 1/2.
    "(X (X John saw) (X a dog))",
    # 5 words for a sentence of 4 with punctuation, 3 without: no brackets, F1 0.
    "(X (X a b) c d e)",
]
# Sentence F1 (1 + 1 + 1/2 + 0) / 4 = 5/8. Corpus: 3 matched, 2 + 2 = 4 predicted,
# 2 + 2 + 1 = 5 gold: P = 3/4, R = 3/5, F1 = 2 * 9/20 / (27/20) = 2/3.
EXPECTED = {
    "sentence_f1": 5 / 8,
    "corpus_f1": 2 / 3,
    "corpus_precision": 3 / 4,
    "corpus_recall": 3 / 5,
}


@pytest.fixture
def files(tmp_path):
    gold_dir = tmp_path / "wsj"
    gold_dir.mkdir()
    for name, text in GOLD_FILES.items():
        (gold_dir / name).write_text(text, encoding="utf-8")
    predicted = tmp_path / "predicted.txt"
    predicted.write_text("\n".join(PREDICTED) + "\n", encoding="utf-8")
    return str(predicted), str(gold_dir / "wsj_0001-0002")


def test_json_scores_failed_lines_and_baselines(files, capsys):
    predicted, gold = files
    status = main([predicted, gold, "--json", "--baselines", "--seeds", "3"])
    out, err = capsys.readouterr()
    assert status == 1
    result = json.loads(out)
    assert result["sentences"] == 4
    assert result["failed_lines"] == [2, 4]
    assert result["predicted"] == pytest.approx(EXPECTED)
    assert f"{predicted}, line 2: not a bracketed tree" in err
    assert (
        f"{predicted}, line 4: the tree has 5 words but the gold sentence has 4 with "
        "punctuation and 3 without" in err
    )
    baselines = result["baselines"]
    # Right-branching: (1,4) (2,4) | - | (1,4) (2,4) | (1,3). Per sentence 1/2, 1, 1, 0:
    # 5/8; corpus 1 + 2 = 3 matched of 5 predicted and 5 gold: 3/5.
    assert baselines["right_branching"]["sentence_f1"] == pytest.approx(5 / 8)
    assert baselines["right_branching"]["corpus_f1"] == pytest.approx(3 / 5)
    # Left-branching: (0,2) (0,3) | - | (0,2) (0,3) | (0,2). Per sentence 1/2, 1, 0, 1:
    # 5/8; corpus 2 of 5: 2/5.
    assert baselines["left_branching"]["sentence_f1"] == pytest.approx(5 / 8)
    assert baselines["left_branching"]["corpus_f1"] == pytest.approx(2 / 5)
    # Balanced: (0,2) (2,4) | - | (0,2) (2,4) | (0,2). Per sentence 1, 1, 1/2, 1: 7/8;
    # corpus 4 of 5: 4/5.
    assert baselines["balanced"]["sentence_f1"] == pytest.approx(7 / 8)
    assert baselines["balanced"]["corpus_f1"] == pytest.approx(4 / 5)
    random_result = baselines["random"]
    assert random_result["seeds"] == [0, 1, 2]
    per_seed = [scores["sentence_f1"] for scores in random_result["per_seed"]]
    assert len(per_seed) == 3
    assert random_result["mean"]["sentence_f1"] == pytest.approx(statistics.fmean(per_seed))
    assert random_result["std"]["sentence_f1"] == pytest.approx(statistics.stdev(per_seed))


def test_table(files, capsys):
    predicted, gold = files
    assert main([predicted, gold, "--baselines", "--seeds", "2"]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["sentence", "F1", "corpus", "F1", "corpus", "P", "corpus", "R"]
    # Percent: sentence F1, corpus F1, corpus P, corpus R.
    assert lines[1].split() == ["predicted", "62.50", "66.67", "75.00", "60.00"]
    assert lines[2].split() == ["right-branching", "62.50", "60.00", "60.00", "60.00"]
    assert lines[4].split() == ["balanced", "87.50", "80.00", "80.00", "80.00"]
    assert lines[5].startswith("random (2 seeds)") and "±" in lines[5]
    assert lines[6].startswith("4 sentences, 2 line(s) scored as no brackets")
    # The columns line up.
    assert len({len(line) for line in lines[:6]}) == 1


def test_clean_run_exits_0(files, tmp_path, capsys):
    _, gold = files
    predicted = tmp_path / "right.txt"
    predicted.write_text(
        "(X The (X cat (X sat down)))\n(X He left)\n"
        "(X John (X saw (X a dog)))\n(X The (X cat sat))\n",
        encoding="utf-8",
    )
    assert main([str(predicted), gold, "--json"]) == 0
    out, err = capsys.readouterr()
    assert err == ""
    # The right-branching trees score as the right-branching baseline.
    assert json.loads(out)["predicted"]["corpus_f1"] == pytest.approx(3 / 5)


def test_line_count_mismatch_is_an_error(files, tmp_path, capsys):
    _, gold = files
    predicted = tmp_path / "short.txt"
    predicted.write_text("\n".join(PREDICTED[:3]) + "\n", encoding="utf-8")
    assert main([str(predicted), gold]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert "has 3 lines but" in err and "has 4 gold trees" in err


def test_missing_gold_is_an_error(files, tmp_path, capsys):
    predicted, _ = files
    assert main([predicted, str(tmp_path / "nowhere")]) == 2
    assert "nowhere" in capsys.readouterr().err
