"""Chinese head rules and punctuation sets (lal_allennlp/syntax/languages.py)."""
import re

import pytest

from lal_allennlp.dataset_readers import ChineseTreebankReader
from lal_allennlp.syntax.head_rules import DEFAULT_RULE, HeadFinder
from lal_allennlp.syntax.languages import (
    CHINESE_PUNCTUATION_TAGS,
    CTB_HEAD_RULES,
    SINICA_PUNCTUATION_TAGS,
)
from tests.conftest import FIXTURES_ROOT, SHARED_DATA

CTB51 = FIXTURES_ROOT / "ctb" / "ctb51"


def _ctb_trees():
    reader = ChineseTreebankReader()
    return [instance["metadata"]["gold_tree"] for instance in reader.read(str(CTB51))]


def test_ctb_heads_checked_by_hand():
    finder = HeadFinder(CTB_HEAD_RULES)
    heads = {tuple(tree.leaves()): finder.heads(tree) for tree in _ctb_trees()}
    # 上海 浦东 近年 颁布 了 七十一 件 法规 。: the verb heads VP and IP; NP is headed by its
    # last noun, QP by its classifier phrase (件), CLP by M.
    assert heads[("上海", "浦东", "近年", "颁布", "了", "七十一", "件", "法规", "。")] == [
        2, 4, 4, 0, 4, 7, 8, 4, 4
    ]
    # 参加 会议 的 代表 很多 。: DEC heads the relative clause (CP), which depends on the noun.
    assert heads[("参加", "会议", "的", "代表", "很多", "。")] == [3, 1, 4, 5, 0, 5]
    # 这 决定 是 历史 的 选择 。: DEG heads DNP; the copula heads VP.
    assert heads[("这", "决定", "是", "历史", "的", "选择", "。")] == [2, 3, 0, 5, 6, 3, 3]
    # 朱镕基 总理 向 记者 介绍 了 情况 。: P heads PP (left), the verb the VP.
    assert heads[("朱镕基", "总理", "向", "记者", "介绍", "了", "情况", "。")] == [
        2, 5, 5, 3, 0, 5, 5, 5
    ]
    # FRAG of nouns: no verb, so its last noun (电) heads it.
    assert heads[("新华社", "北京", "十一月", "二十二日", "电")] == [5, 5, 5, 5, 0]


def test_ctb_rules_differ_from_collins_where_chinese_does():
    ctb, collins = HeadFinder(CTB_HEAD_RULES), HeadFinder()
    # Collins' table knows neither IP (leftmost child by default) nor the CTB verb tags (its VP
    # rule falls through to the object NP).
    assert ctb.head_child("IP", ["NP", "VP", "PU"]) == 1
    assert collins.head_child("IP", ["NP", "VP", "PU"]) == 0
    assert ctb.head_child("VP", ["ADVP", "VV", "NP"]) == 1
    assert collins.head_child("VP", ["ADVP", "VV", "NP"]) == 2
    # Localiser phrase: the localiser (LC) is the head, on the right.
    assert ctb.head_child("LCP", ["NP", "LC"]) == 1
    # Unknown labels: the rightmost child.
    assert ctb.head_child("XYZ", ["A", "B", "C"]) == 2
    assert CTB_HEAD_RULES[DEFAULT_RULE] == (("right", ()),)


def test_every_fixture_phrase_label_has_a_rule():
    labels = {
        subtree.label()
        for tree in _ctb_trees()
        for subtree in tree.subtrees()
        if subtree.height() > 2 and subtree.label() != "TOP"
    }
    assert labels and labels <= set(CTB_HEAD_RULES)


def test_punctuation_sets():
    tags = {tag for tree in _ctb_trees() for _, tag in tree.pos()}
    assert tags & CHINESE_PUNCTUATION_TAGS == {"PU"}
    assert all(tag.endswith("CATEGORY") for tag in SINICA_PUNCTUATION_TAGS)


@pytest.mark.skipif(not (SHARED_DATA / "sinica").exists(), reason="../shared/data/sinica absent")
def test_sinica_punctuation_tags_cover_the_sample():
    text = (SHARED_DATA / "sinica" / "sinica-train-dev.trees").read_text(encoding="utf-8")
    used = set(re.findall(r"\((\w+CATEGORY) ", text))
    assert len(used) == 7 and used <= SINICA_PUNCTUATION_TAGS
