"""Hand-checked EVALB cases (COLLINS.prm semantics unless stated), each with exact counts."""

import dataclasses
from pathlib import Path

import allennlp
import pytest
from nltk import Tree

from lal_allennlp.metrics.evalb import (
    COLLINS,
    NK,
    EvalbCounts,
    EvalbError,
    EvalbParams,
    EvalbResult,
    evalb_files,
    evalb_score,
    evalb_sentence,
    format_report,
)

EVALB_DIR = Path(allennlp.__file__).parent / "tools" / "EVALB"


def t(text: str) -> Tree:
    return Tree.fromstring(text)


def counts(gold: str, predicted, params: EvalbParams = COLLINS) -> EvalbCounts:
    return evalb_sentence(t(gold), None if predicted is None else t(predicted), params)


def brackets(c: EvalbCounts):
    return c.matched, c.gold, c.predicted


GOLD = "(TOP (S (NP (DT The) (NN cat)) (VP (VBD sat)) (. .)))"


def test_identical_trees_are_a_complete_match():
    c = counts(GOLD, GOLD)
    # S(0,3) NP(0,2) VP(2,3); TOP not scored; the "." is deleted.
    assert brackets(c) == (3, 3, 3)
    assert (c.complete_match, c.tags_correct, c.tags_total) == (1, 3, 3)
    assert (c.sentences, c.errors, c.skipped, c.status) == (1, 0, 0, 0)
    # Punctuation is deleted for scoring but counts for the length (only -NONE- does not).
    assert (c.length, c.within_cutoff) == (4, 1)


def test_punctuation_is_deleted_before_span_boundaries():
    # VP takes the final period: after deletion it still spans "sat" only.
    c = counts(GOLD, "(TOP (S (NP (DT The) (NN cat)) (VP (VBD sat) (. .))))")
    assert brackets(c) == (3, 3, 3) and c.complete_match == 1
    # NP takes a comma in the middle of the sentence: same words after deletion.
    gold = "(TOP (S (NP (NNP John)) (, ,) (VP (VBD left))))"
    c = counts(gold, "(TOP (S (NP (NNP John) (, ,)) (VP (VBD left))))")
    assert brackets(c) == (3, 3, 3)


def test_bracket_left_empty_after_deletion_is_not_scored():
    # (X (. .)) spans no word once "." is deleted: it is scored in neither file.
    c = counts(GOLD, "(TOP (S (NP (DT The) (NN cat)) (VP (VBD sat)) (X (. .))))")
    assert brackets(c) == (3, 3, 3) and c.complete_match == 1
    # A gold NP that holds only a trace disappears; the trace does not count for the length.
    c = counts(
        "(TOP (S (NP-SBJ (-NONE- *)) (VP (VBD left))))",
        "(TOP (S (VP (VBD left))))",
    )
    assert brackets(c) == (2, 2, 2)
    assert (c.tags_total, c.length) == (1, 1)


def test_top_is_not_scored_but_other_roots_are():
    no_top = "(S (NP (DT The) (NN cat)) (VP (VBD sat)) (. .))"
    assert brackets(counts(GOLD, no_top)) == (3, 3, 3)
    # A ROOT label is an ordinary bracket: one extra predicted bracket.
    assert brackets(counts(GOLD, "(ROOT " + no_top + ")")) == (3, 3, 4)
    # So is the unlabelled outer bracket of raw Penn Treebank files, `( (S ...) )`.
    assert brackets(counts(GOLD, "( " + no_top + ")")) == (3, 3, 4)
    assert brackets(counts("( " + no_top + ")", "( " + no_top + ")")) == (4, 4, 4)


def test_advp_and_prt_are_equivalent():
    gold = "(TOP (S (NP (PRP He)) (VP (VBD gave) (PRT (RP up)))))"
    c = counts(gold, "(TOP (S (NP (PRP He)) (VP (VBD gave) (ADVP (RP up)))))")
    assert brackets(c) == (4, 4, 4) and c.complete_match == 1
    c = counts(gold, "(TOP (S (NP (PRP He)) (VP (VBD gave) (NP (RP up)))))")
    assert brackets(c) == (3, 4, 4) and c.complete_match == 0


def test_brackets_are_a_multiset():
    two = "(TOP (S (NP (NP (NNP John))) (VP (VBD ran))))"
    one = "(TOP (S (NP (NNP John)) (VP (VBD ran))))"
    # Gold has NP(0,1) twice, the prediction once: recall 3/4, precision 3/3.
    assert brackets(counts(two, one)) == (3, 4, 3)
    assert brackets(counts(one, two)) == (3, 3, 4)
    assert brackets(counts(two, two)) == (4, 4, 4)
    # Same span, different labels: only the matching label counts.
    assert brackets(counts(two, "(TOP (S (NP (VP (NNP John))) (VP (VBD ran))))")) == (3, 4, 4)


def test_function_tags_and_indices_are_cut():
    gold = "(TOP (S (NP-SBJ-1 (PRP He)) (VP=2 (VBD left))))"
    assert brackets(counts(gold, "(TOP (S (NP (PRP He)) (VP (VBD left))))")) == (3, 3, 3)
    assert brackets(counts(gold, "(TOP (S-TPC (NP=3 (PRP He)) (VP-X (VBD left))))")) == (3, 3, 3)
    # EVALB cuts at the first "-" even at position 0: "-X-" and "-Y-" both become "".
    assert brackets(counts("(TOP (-X- (NN a) (NN b)))", "(TOP (-Y- (NN a) (NN b)))")) == (1, 1, 1)
    # A cleaned TOP label is deleted too.
    assert brackets(counts("(TOP-1 (S (NN a) (NN b)))", "(TOP (S (NN a) (NN b)))")) == (1, 1, 1)
    # "ADVP|PRT" (one label in the WSJ sample) has no "-" or "=": it is kept whole.
    gold = "(TOP (S (ADVP|PRT (RB up)) (VP (VBD went))))"
    assert brackets(counts(gold, "(TOP (S (ADVP (RB up)) (VP (VBD went))))")) == (2, 3, 3)


def test_tagging_accuracy_excludes_deleted_tags_and_compares_raw_tags():
    # "cat" mis-tagged; "." tagged ":" in the prediction is deleted on both sides.
    c = counts(GOLD, "(TOP (S (NP (DT The) (VB cat)) (VP (VBD sat)) (: .)))")
    assert (c.tags_correct, c.tags_total) == (2, 3)
    assert brackets(c) == (3, 3, 3)
    # Tags are not cleaned of "-" suffixes.
    c = counts(GOLD, "(TOP (S (NP (DT The) (NN-HL cat)) (VP (VBD sat)) (. .)))")
    assert (c.tags_correct, c.tags_total) == (2, 3)


def test_complete_match_and_crossing():
    gold = "(TOP (S (NP (DT a) (NN b)) (VP (VB c) (NN d))))"
    # Y(1,3) crosses both NP(0,2) and VP(2,4): one crossing bracket.
    c = counts(gold, "(TOP (S (X (DT a)) (Y (NN b) (VB c)) (Z (NN d))))")
    assert brackets(c) == (1, 3, 4)
    assert (c.crossing, c.no_crossing, c.two_or_less_crossing, c.complete_match) == (1, 0, 1, 0)
    # Missing a bracket is not a complete match, whatever the precision.
    c = counts(gold, "(TOP (S (NP (DT a) (NN b)) (VB c) (NN d)))")
    assert brackets(c) == (2, 3, 2) and c.complete_match == 0 and c.crossing == 0


def test_unlabelled_scoring():
    unlabeled = dataclasses.replace(COLLINS, labeled=False)
    gold = "(TOP (S (NP (DT a) (NN b)) (VP (VB c))))"
    pred = "(TOP (X (VP (DT a) (NN b)) (NP (VB c))))"
    assert brackets(counts(gold, pred)) == (0, 3, 3)
    assert brackets(counts(gold, pred, unlabeled)) == (3, 3, 3)


def test_word_or_length_mismatch_is_an_error_sentence():
    c = counts(GOLD, "(TOP (S (NP (DT The) (NN dog)) (VP (VBD sat)) (. .)))")
    assert (c.sentences, c.errors, c.status) == (1, 1, 1)
    assert brackets(c) == (0, 0, 0) and (c.tags_total, c.complete_match) == (0, 0)
    # Still belongs to the cut-off block by its gold length.
    assert (c.length, c.within_cutoff) == (4, 1)
    # "." tagged NN is no longer deleted: 4 words against 3.
    c = counts(GOLD, "(TOP (S (NP (DT The) (NN cat)) (VP (VBD sat)) (NN .)))")
    assert c.errors == 1
    result = evalb_score([t(GOLD), t(GOLD)], [t(GOLD.replace("cat", "dog")), t(GOLD)])
    assert (result.sentences, result.errors, result.valid_sentences) == (2, 1, 1)
    assert (result.counts.matched, result.counts.gold, result.complete_match) == (3, 3, 1.0)


def test_max_error_stops_like_evalb():
    bad = t(GOLD.replace("cat", "dog"))
    # EVALB exits at error MAX_ERROR + 2: with MAX_ERROR 10, 11 errors pass and 12 do not.
    result = evalb_score([t(GOLD)] * 12, [bad] * 11 + [t(GOLD)])
    assert (result.errors, result.valid_sentences) == (11, 1)
    with pytest.raises(EvalbError, match="sentence 12 is error sentence number 12"):
        evalb_score([t(GOLD)] * 12, [bad] * 12)
    assert evalb_score([t(GOLD)] * 50, [bad] * 50, NK).errors == 50
    assert evalb_score([t(GOLD)] * 50, [bad] * 50, EvalbParams(max_error=None)).errors == 50


def _sentence(num_words: int, final_period: bool, traces: int = 0) -> str:
    words = " ".join(f"(NN w{i})" for i in range(num_words))
    words += " (-NONE- *)" * traces
    return f"(TOP (S (NP {words}) (VP (VB go)){' (. .)' if final_period else ''}))"


def test_cutoff_counts_gold_words_including_punctuation_but_not_traces():
    # 39 nouns + "go" + "." = 41 words for the length (punctuation counts): beyond 40.
    long_one = _sentence(39, True)
    # 39 nouns + "go" = 40 words, plus two traces that do not count.
    short_one = _sentence(39, False, traces=2)
    c_long, c_short = counts(long_one, long_one), counts(short_one, short_one)
    assert (c_long.length, c_long.within_cutoff) == (41, 0)
    assert (c_short.length, c_short.within_cutoff) == (40, 1)
    result = evalb_score([t(long_one), t(short_one)], [t(long_one), t(short_one)])
    assert (result.sentences, result.cutoff.sentences) == (2, 1)
    assert result.counts.tags_total == 80 and result.cutoff.counts.tags_total == 40
    assert result.cutoff_length == 40
    cut_30 = dataclasses.replace(COLLINS, cutoff_length=30)
    assert evalb_score([t(short_one)], [t(short_one)], cut_30).cutoff.sentences == 0


def test_failed_prediction_counts_against_recall():
    for failure in (None, t("(TOP )"), t("(TOP (S ))")):
        c = evalb_sentence(t(GOLD), failure)
        assert (c.sentences, c.errors, c.skipped) == (1, 0, 0)
        assert brackets(c) == (0, 3, 0)
        assert (c.tags_correct, c.tags_total, c.complete_match) == (0, 3, 0)
        assert (c.crossing, c.no_crossing, c.length, c.within_cutoff) == (0, 1, 4, 1)
    result = evalb_score([t(GOLD), t(GOLD)], [t(GOLD), None])
    assert (result.precision, result.recall, result.f1) == (1.0, 0.5, pytest.approx(2 / 3))
    assert (result.complete_match, result.tagging_accuracy, result.valid_sentences) == (0.5, 0.5, 2)
    # A gold tree without any word left is skipped, whatever the prediction.
    assert counts("(TOP (. .))", None).skipped == 1


def test_prediction_without_words_after_deletion_is_skipped():
    c = counts("(TOP (S (NN Yes) (. .)))", "(TOP (S (. Yes) (. .)))")
    assert (c.skipped, c.errors, c.status) == (1, 0, 2)
    assert brackets(c) == (0, 0, 0)


def test_malformed_tree_is_an_error_sentence():
    assert counts(GOLD, "(TOP (S The (NP (NN cat)) (VP (VBD sat)) (. .)))").errors == 1


def test_quote_terms_are_put_back_with_nk():
    gold = "(TOP (S (NP (NP (NNS investors) (POS ')) (NN money)) (VP (VBD fell))))"
    pred = "(TOP (S (NP (NP (NNS investors) ('' ')) (NN money)) (VP (VBD fell))))"
    # COLLINS.prm: the predicted "'" is deleted, 3 words against 4: error.
    assert counts(gold, pred).errors == 1
    # nk.prm: the quote is put back and the brackets after it are shifted.
    c = counts(gold, pred, NK)
    assert c.errors == 0 and brackets(c) == (4, 4, 4)
    assert (c.tags_correct, c.tags_total, c.complete_match) == (3, 4, 1)
    c = counts(pred, gold, NK)
    assert c.errors == 0 and brackets(c) == (4, 4, 4)


def test_nk_deletes_more_punctuation():
    gold = "(S1 (S (NP (PRP He)) (VP (VBD left)) (? ?)))"
    pred = "(S1 (S (NP (PRP He)) (VP (VBD left) (? ?))))"
    assert brackets(counts(gold, pred, NK)) == (3, 3, 3)
    # COLLINS keeps S1 and "?": VP spans differ and S1 is scored.
    assert brackets(counts(gold, pred)) == (3, 4, 4)


def test_counts_add_and_round_trip_through_a_flat_list():
    a, b = counts(GOLD, GOLD), counts(GOLD, None)
    total = a + b
    assert total.to_list() == [x + y for x, y in zip(a.to_list(), b.to_list())]
    assert EvalbCounts.from_list([float(v) for v in total.to_list()]) == total
    assert len(total.to_list()) == len(EvalbCounts.FIELDS)
    with pytest.raises(ValueError):
        EvalbCounts.from_list([1, 2])
    result = EvalbResult.from_counts(total)
    assert (result.recall, result.precision, result.cutoff) == (0.5, 1.0, None)


def test_parameter_files_round_trip():
    assert EvalbParams.from_prm_text(COLLINS.to_prm_text()) == COLLINS
    assert EvalbParams.from_prm_text(NK.to_prm_text()) == NK
    with pytest.raises(ValueError, match="line 2: unknown EVALB parameter 'DELETE_LABLE'"):
        EvalbParams.from_prm_text("LABELED 1\nDELETE_LABLE X\n")
    if EVALB_DIR.is_dir():
        assert EvalbParams.from_prm_file(EVALB_DIR / "COLLINS.prm") == COLLINS
        new = EvalbParams.from_prm_file(EVALB_DIR / "new.prm")
        assert new == dataclasses.replace(NK, max_error=10)


def test_files_and_report(tmp_path):
    gold_path, pred_path = tmp_path / "gold.txt", tmp_path / "pred.txt"
    gold_path.write_text(GOLD + "\n" + GOLD + "\n", encoding="utf-8")
    pred_path.write_text("(S (NP (DT The) (NN cat)) (VP (VBD sat) (. .)))\n(TOP )\n", "utf-8")
    result = evalb_files(gold_path, pred_path)
    assert [c.status for c in result.per_sentence] == [0, 0]
    assert (result.counts.matched, result.counts.gold, result.counts.predicted) == (3, 6, 3)
    report = format_report(result)
    assert "-- All --" in report and "-- len<=40 --" in report
    assert "Bracketing Recall         =  50.00" in report
    assert "Bracketing Precision      = 100.00" in report
    assert "Bracketing FMeasure       =  66.67" in report
    assert "Complete match            =  50.00" in report
    full = format_report(result, per_sentence=True).splitlines()
    assert full[3] == "   1    4    0  100.00 100.00     3      3    3      0      3     3   100.00"
    assert full[4] == "   2    4    0    0.00   0.00     0      3    0      0      3     0     0.00"
    (tmp_path / "short.txt").write_text(GOLD + "\n", encoding="utf-8")
    with pytest.raises(ValueError, match="has 2 lines but .* has 1"):
        evalb_files(gold_path, tmp_path / "short.txt")
