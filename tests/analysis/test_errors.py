"""Error analysis on hand-made trees: exact counts per label, span length and sentence length,
an exact confusion, missing and extra brackets, exact attachment figures; `lal-analyze errors`
on a predictions file."""
import json
from types import SimpleNamespace

import pytest
from nltk import Tree

from lal_allennlp.analysis.errors import (
    SENTENCE_LENGTH_BUCKETS,
    SPAN_LENGTH_BUCKETS,
    analyze_errors,
    analyze_predictions,
    bucket_name,
    label_classes,
)
from lal_allennlp.metrics.evalb import COLLINS, evalb_score

# Gold brackets (EVALB positions, "." deleted): S(0,6) NP(0,2) VP(2,6) PP(3,6) NP(4,6).
GOLD_1 = Tree.fromstring(
    "(TOP (S (NP (DT The) (NN cat)) (VP (VBD sat) (PP (IN on) (NP (DT the) (NN mat)))) (. .)))"
)
# S(0,6) NP(0,2) NP(1,2) VP(2,6) ADVP(3,6): PP -> ADVP, NP(4,6) missing, NP(1,2) extra.
PREDICTED_1 = Tree.fromstring(
    "(TOP (S (NP (DT The) (NP (NN cat))) (VP (VBD sat) (ADVP (IN on) (DT the) (NN mat)))" " (. .)))"
)
# S(0,2) NP(0,1) VP(1,2); the parser failed on it.
GOLD_2 = Tree.fromstring("(TOP (S (NP (PRP It)) (VP (VBZ works)) (. .)))")
# 12 words, 7 brackets, parsed exactly.
GOLD_3 = Tree.fromstring(
    "(TOP (S (NP (DT A) (JJ big) (NN dog)) (VP (VBD ran) (PP (IN into) (NP (DT the) (JJ old)"
    " (NN house))) (PP (IN near) (NP (DT the) (NN river)))) (. .)))"
)

GOLD = [GOLD_1, GOLD_2, GOLD_3]
PREDICTED = [PREDICTED_1, None, GOLD_3.copy(deep=True)]

# The cat sat on the mat . / It works . / (no dependencies for sentence 3)
GOLD_HEADS = [[2, 3, 0, 3, 6, 4, 3], [2, 0, 2], None]
GOLD_LABELS = [
    ["det", "nsubj", "root", "prep", "det", "pobj", "punct"],
    ["nsubj", "root", "punct"],
    None,
]
# "on" attached to "mat", "mat" to "sat"; "cat" has the right head and the wrong label.
PREDICTED_HEADS = [[2, 3, 0, 6, 6, 3, 3], None, None]
PREDICTED_LABELS = [["det", "dobj", "root", "prep", "det", "pobj", "punct"], None, None]


@pytest.fixture(scope="module")
def analysis():
    return analyze_errors(
        GOLD,
        PREDICTED,
        gold_heads=GOLD_HEADS,
        predicted_heads=PREDICTED_HEADS,
        gold_dependency_labels=GOLD_LABELS,
        predicted_dependency_labels=PREDICTED_LABELS,
    )


def _counts(row):
    return (row.gold, row.predicted, row.matched)


def test_totals_are_evalbs(analysis):
    reference = evalb_score(GOLD, PREDICTED, COLLINS)
    assert analysis.evalb.counts == reference.counts
    assert (reference.counts.gold, reference.counts.predicted, reference.counts.matched) == (
        15,
        12,
        10,
    )
    assert analysis.evalb.f1 == reference.f1 == 20 / 27
    assert analysis.failures == 1
    for rows in (analysis.by_label.values(), analysis.by_span_length, analysis.by_sentence_length):
        assert tuple(map(sum, zip(*map(_counts, rows)))) == (15, 12, 10)


def test_per_label_counts(analysis):
    assert {label: _counts(row) for label, row in analysis.by_label.items()} == {
        "S": (3, 2, 2),
        "NP": (6, 5, 4),
        "VP": (3, 2, 2),
        "PP": (3, 2, 2),
        "ADVP/PRT": (0, 1, 0),
    }
    assert analysis.by_label["NP"].f1 == 8 / 11
    assert analysis.by_label["NP"].precision == 4 / 5
    assert analysis.by_label["NP"].recall == 4 / 6
    assert analysis.labels_by_frequency()[:2] == ["NP", "PP"]


def test_span_length_buckets(analysis):
    rows = dict(zip(map(bucket_name, SPAN_LENGTH_BUCKETS), analysis.by_span_length))
    assert list(rows) == ["1", "2", "3", "4-5", "6-10", "11-20", "21+"]
    assert {name: _counts(row) for name, row in rows.items()} == {
        "1": (2, 1, 0),
        "2": (4, 2, 2),
        "3": (4, 4, 3),
        "4-5": (2, 2, 2),
        "6-10": (2, 2, 2),
        "11-20": (1, 1, 1),
        "21+": (0, 0, 0),
    }
    assert [row.f1 for row in rows.values()] == [0.0, 2 / 3, 0.75, 1.0, 1.0, 1.0, 0.0]


def test_sentence_length_buckets(analysis):
    # Sentences of 7 and 3 words (punctuation counts, as for EVALB's cut-off) and of 12.
    names = list(map(bucket_name, SENTENCE_LENGTH_BUCKETS))
    assert names == ["1-10", "11-20", "21-30", "31-40", "41+"]
    assert analysis.sentences_by_length == [2, 1, 0, 0, 0]
    assert [_counts(row) for row in analysis.by_sentence_length] == [
        (8, 5, 3),
        (7, 7, 7),
        (0, 0, 0),
        (0, 0, 0),
        (0, 0, 0),
    ]
    assert analysis.by_sentence_length[0].f1 == 6 / 13
    assert analysis.by_sentence_length[1].f1 == 1.0


def test_confusions_missing_and_extra(analysis):
    assert dict(analysis.confusions) == {("PP", "ADVP/PRT"): 1}
    # Sentence 1 misses NP(4,6); the failed sentence 2 misses all of its three brackets.
    assert dict(analysis.missing) == {"NP": 2, "S": 1, "VP": 1}
    assert dict(analysis.extra) == {"NP": 1}


def test_equivalent_labels_are_one_row():
    assert label_classes(COLLINS) == {"ADVP": "ADVP/PRT", "PRT": "ADVP/PRT"}
    gold = Tree.fromstring("(TOP (S (VP (VB Give) (PRT (RP up)))))")
    predicted = Tree.fromstring("(TOP (S (VP (VB Give) (ADVP (RP up)))))")
    analysis = analyze_errors([gold], [predicted])
    assert _counts(analysis.by_label["ADVP/PRT"]) == (1, 1, 1)
    assert not analysis.confusions and analysis.evalb.f1 == 1.0


def test_attachment_figures(analysis):
    attachment = analysis.attachment
    # 6 scored words in sentence 1 ("." left out), 2 in the failed sentence 2.
    assert (attachment.total.words, attachment.total.correct_heads) == (8, 4)
    assert attachment.total.correct_labelled == 3
    assert attachment.total.uas == 0.5 and attachment.total.las == 3 / 8
    assert attachment.failed_sentences == 1

    def table(groups):
        return {name: (g.words, g.correct_heads, g.correct_labelled) for name, g in groups.items()}

    assert table(attachment.by_tag) == {
        "DT": (2, 2, 2),
        "NN": (2, 1, 0),
        "VBD": (1, 1, 1),
        "IN": (1, 0, 0),
        "PRP": (1, 0, 0),
        "VBZ": (1, 0, 0),
    }
    assert table(attachment.by_label) == {
        "det": (2, 2, 2),
        "nsubj": (2, 1, 0),
        "root": (2, 1, 1),
        "prep": (1, 0, 0),
        "pobj": (1, 0, 0),
    }
    assert table(attachment.by_distance) == {"1": (5, 3, 2), "2": (1, 0, 0), "root": (2, 1, 1)}
    assert dict(attachment.wrong_heads) == {("IN", "VBD", "NN"): 1, ("NN", "IN", "VBD"): 1}
    assert dict(attachment.label_errors) == {("nsubj", "dobj"): 1}


def test_no_dependencies_without_gold_heads():
    assert analyze_errors(GOLD, PREDICTED).attachment is None


def test_mismatched_lengths_name_the_sentence():
    with pytest.raises(ValueError, match="sentence 0: 2 gold heads for the 7 words"):
        analyze_errors([GOLD_1], [PREDICTED_1], gold_heads=[[2, 0]], predicted_heads=[[2, 0]])
    with pytest.raises(ValueError, match="2 gold trees but 1 predicted"):
        analyze_errors(GOLD[:2], PREDICTED[:1])


def test_report_and_json(analysis, tmp_path):
    report = analysis.to_markdown()
    assert "| PP | ADVP/PRT | 1 |" in report
    assert "| 3 | 4 | 4 | 3 | 75.00 | 75.00 | 75.00 |" in report
    assert "| IN | VBD | NN | 1 |" in report
    data = json.loads(json.dumps(analysis.to_json()))
    assert data["summary"]["f1"] == 20 / 27
    assert data["by_span_length"][2] == {
        "span_length": "3",
        "gold": 4,
        "predicted": 4,
        "matched": 3,
        "precision": 0.75,
        "recall": 0.75,
        "f1": 0.75,
    }
    assert data["confusions"] == [{"gold": "PP", "predicted": "ADVP/PRT", "count": 1}]
    assert data["attachment"]["total"]["uas"] == 0.5
    paths = analysis.write_plots(str(tmp_path))
    assert [p.rsplit("/", 1)[1] for p in paths] == [
        "errors_span_length.png",
        "errors_sentence_length.png",
        "errors_labels.png",
    ]
    for path in paths:
        with open(path, "rb") as picture:
            assert picture.read(8) == b"\x89PNG\r\n\x1a\n"


def test_analyze_predictions_reads_the_records(analysis):
    records = [
        SimpleNamespace(
            gold_tree=gold,
            predicted_tree=predicted,
            gold_heads=heads,
            predicted_heads=pheads,
            gold_dependency_labels=labels,
            predicted_dependency_labels=plabels,
            scored=None,
        )
        for gold, predicted, heads, pheads, labels, plabels in zip(
            GOLD, PREDICTED, GOLD_HEADS, PREDICTED_HEADS, GOLD_LABELS, PREDICTED_LABELS
        )
    ]
    assert analyze_predictions(records).to_json() == analysis.to_json()


def _record(gold, predicted):
    return {
        "words": gold.leaves(),
        "gold_tags": [t for _, t in gold.pos()],
        "gold_tree": " ".join(str(gold).split()),
        "predicted_tree": None if predicted is None else " ".join(str(predicted).split()),
        "predicted_tags": None,
        "gold_heads": None,
        "predicted_heads": None,
        "gold_dependency_labels": None,
        "predicted_dependency_labels": None,
        "scored": None,
        "error": None,
    }


def test_command_on_a_predictions_file(tmp_path, capsys):
    pytest.importorskip("lal_allennlp.analysis.predictions")
    from lal_allennlp.commands.analyze import main

    path = tmp_path / "predictions.jsonl"
    path.write_text(
        "".join(json.dumps(_record(g, p)) + "\n" for g, p in zip(GOLD, PREDICTED)),
        encoding="utf-8",
    )
    out = tmp_path / "report"
    assert main(["errors", "--predictions", str(path), "-o", str(out)]) == 0
    names = sorted(p.name for p in out.iterdir())
    assert names == [
        "errors.json",
        "errors.md",
        "errors_labels.png",
        "errors_sentence_length.png",
        "errors_span_length.png",
    ]
    data = json.loads((out / "errors.json").read_text(encoding="utf-8"))
    assert (data["summary"]["gold"], data["summary"]["matched"]) == (15, 10)
    assert "attachment" not in data


def test_command_errors_name_the_file(tmp_path, capsys):
    from lal_allennlp.commands.analyze import main

    missing = tmp_path / "nothing.jsonl"
    assert main(["errors", "--predictions", str(missing), "-o", str(tmp_path / "o")]) == 2
    assert f"no predictions file at {missing}" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exit_:
        main(["errors", "-o", str(tmp_path / "o")])
    assert exit_.value.code == 2
    assert "give MODEL TREEBANK, or --predictions" in capsys.readouterr().err


def test_command_names_a_bad_line(tmp_path, capsys):
    pytest.importorskip("lal_allennlp.analysis.predictions")
    from lal_allennlp.commands.analyze import main

    bad = tmp_path / "bad.jsonl"
    bad.write_text("not json\n", encoding="utf-8")
    assert main(["errors", "--predictions", str(bad), "-o", str(tmp_path / "o")]) == 2
    assert f"{bad}, line 1" in capsys.readouterr().err
