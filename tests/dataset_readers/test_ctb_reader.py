"""The `lal_ctb` reader on the hand-written CTB files of fixtures/ctb (GB2312, GBK, UTF-8)."""
import logging

import pytest
from allennlp.common import Params
from allennlp.common.checks import ConfigurationError
from allennlp.data import DatasetReader

from lal_allennlp.dataset_readers import ChineseTreebankReader, PennTreebankReader, TreebankFormatError
from lal_allennlp.dataset_readers import TreebankPathError
from lal_allennlp.syntax.trees import tree_to_string
from lal_allennlp.syntax.ctb_format import (
    CTB51_SPLITS,
    ctb_file_id,
    decode_ctb,
    parse_file_id_ranges,
    strip_markup,
)
from tests.conftest import FIXTURES_ROOT

CTB51 = FIXTURES_ROOT / "ctb" / "ctb51"  # CTB 5.1 style: chtb_NNN.fid, GB2312 / GBK
CTB9 = FIXTURES_ROOT / "ctb" / "ctb9"  # later releases: chtb_NNNN.<genre>, UTF-8
BAD = FIXTURES_ROOT / "ctb" / "bad"

RELATIVE_CLAUSE = (
    "(TOP (IP (NP (CP (CP (IP (VP (VV 参加) (NP (NN 会议)))) (DEC 的))) (NP (NN 代表))) "
    "(VP (VA 很多)) (PU 。)))"
)
ZHU_RONGJI = (
    "(TOP (IP (NP (NP (NR 朱镕基)) (NP (NN 总理))) (VP (PP (P 向) (NP (NN 记者))) "
    "(VP (VV 介绍) (AS 了) (NP (NN 情况)))) (PU 。)))"
)


def _trees(reader, path):
    return [tree_to_string(instance["metadata"]["gold_tree"]) for instance in reader.read(path)]


def _words(reader, path):
    return [instance["metadata"]["words"] for instance in reader.read(path)]


def test_ctb51_standard_split_by_file_id():
    reader = ChineseTreebankReader()
    # train = 1-270 and 440-1151: chtb_001 (headline + 2 sentences) and chtb_1001 (2), in
    # file-id order; chtb_400 belongs to no split.
    assert _words(reader, f"{CTB51}#train") == [
        ["上海", "浦东", "开发"],
        ["上海", "浦东", "近年", "颁布", "了", "七十一", "件", "法规", "。"],
        ["参加", "会议", "的", "代表", "很多", "。"],
        ["经济", "和", "贸易", "发展", "得", "很", "快", "。"],
        ["这", "决定", "是", "历史", "的", "选择", "。"],
    ]
    assert reader.stats["files"] == 2
    assert _words(reader, f"{CTB51}#dev") == [["希望", "他们", "继续", "努力", "。"]]
    assert _trees(reader, f"{CTB51}#test") == [ZHU_RONGJI]
    assert CTB51_SPLITS == {"train": "1-270,440-1151", "dev": "301-325", "test": "271-300"}


def test_normalisation_is_the_ptb_readers():
    # Empty elements (*OP*, *T*-1, *pro*) and the constituents they empty are removed,
    # function tags and co-indices stripped (NP-SBJ, WHNP-1, NP-OBJ), the root bracket dropped.
    reader = ChineseTreebankReader()
    assert _trees(reader, f"{CTB51}#train")[2] == RELATIVE_CLAUSE
    assert _trees(reader, f"{CTB51}#dev") == [
        "(TOP (IP (VP (VV 希望) (IP (NP (PN 他们)) (VP (ADVP (AD 继续)) (VP (VV 努力))))) "
        "(PU 。)))"
    ]
    instance = next(iter(reader.read(f"{CTB51}#train[2:3]")))
    labels = instance["gold_span_labels"].labels
    spans = [(span.span_start, span.span_end + 1) for span in instance["gold_spans"].field_list]
    # Unary chains become joint labels: (CP (CP ...)) and (IP (VP ...)).
    assert list(zip(spans, labels)) == [
        ((0, 6), "IP"),
        ((0, 4), "NP"),
        ((0, 3), "CP+CP"),
        ((0, 2), "IP+VP"),
        ((1, 2), "NP"),
        ((3, 4), "NP"),
        ((4, 5), "VP"),
    ]
    assert instance["pos_tags"].labels == ["VV", "NN", "DEC", "NN", "VA", "PU"]


def test_file_without_markup_reads_like_the_ptb_reader():
    # A plain bracketed file (UTF-8 with a byte-order mark): both readers make the same spans.
    path = str(CTB9 / "chtb_4001.mz")
    ctb = list(ChineseTreebankReader().read(path))
    ptb = list(PennTreebankReader().read(path))
    assert len(ctb) == len(ptb) == 2
    for left, right in zip(ctb, ptb):
        assert left["metadata"]["words"] == right["metadata"]["words"]
        assert left["gold_span_labels"].labels == right["gold_span_labels"].labels
        assert [(s.span_start, s.span_end) for s in left["gold_spans"].field_list] == [
            (s.span_start, s.span_end) for s in right["gold_spans"].field_list
        ]
    assert ctb[0]["metadata"]["words"] == ["小明", "喜欢", "音乐", "。"]


def test_utf8_release_with_and_without_sentence_elements():
    reader = ChineseTreebankReader()
    assert _trees(reader, str(CTB9)) == [
        "(TOP (NP (NN 新闻) (NN 标题)))",
        "(TOP (IP (NP (PN 我们)) (VP (VV 认为) (IP (NP (NN 计划)) (VP (VA 可行)))) (PU 。)))",
        # chtb_3001.bc has no <S> elements: the tags go, and so does the text of <SPEAKER>
        # and <DATETIME>.
        "(TOP (IP (NP (PN 你)) (VP (VV 好)) (PU ！)))",
        "(TOP (IP (NP (PN 大家)) (VP (ADVP (AD 都)) (VP (VV 来) (AS 了))) (SP 吗) (PU ？)))",
        "(TOP (IP (NP (NR 小明)) (VP (VV 喜欢) (NP (NN 音乐))) (PU 。)))",
        "(TOP (IP (VP (VV 下雨) (AS 了)) (PU 。)))",
    ]
    # Four-digit ids and genre suffixes select like CTB 5.1 names.
    assert len(list(reader.read(f"{CTB9}#3001-4001"))) == 4


def test_encodings_detected_or_given():
    path = str(CTB51 / "chtb_271.fid")  # GBK: 镕 is not in GB2312
    data = (CTB51 / "chtb_271.fid").read_bytes()
    with pytest.raises(UnicodeDecodeError):
        data.decode("utf-8")
    assert _trees(ChineseTreebankReader(), path) == [ZHU_RONGJI]
    assert _trees(ChineseTreebankReader(encoding="gbk"), path) == [ZHU_RONGJI]
    with pytest.raises(TreebankFormatError, match=r"chtb_271\.fid, line 6: not valid gb2312"):
        list(ChineseTreebankReader(encoding="gb2312").read(path))
    with pytest.raises(TreebankFormatError, match=r"chtb_271\.fid, line \d+: not valid utf-8"):
        list(ChineseTreebankReader(encoding="utf-8").read(path))
    # GB2312 files are read by the detection too, and UTF-8 files (BOM or not).
    assert decode_ctb("x", "上海".encode("gb2312")) == "上海"
    assert decode_ctb("x", "\ufeff上海".encode("utf-8")) == "上海"


def test_strip_markup_keeps_lines_and_only_sentence_contents():
    text = (CTB51 / "chtb_001.fid").read_bytes().decode("gb2312")
    stripped = strip_markup(text, "chtb_001.fid")
    assert stripped.count("\n") == text.count("\n")
    lines = stripped.split("\n")
    # Line 9 holds the headline's tree; the header's date (line 4) is gone.
    assert lines[8].strip() == "( (NP-HLN (NP-PN (NR 上海))"
    assert "2026" not in stripped and "<" not in stripped and "DOC" not in stripped
    # Words that look like markup but do not start with a letter are kept.
    assert strip_markup("(ROOT (PU <) (NN x) (PU >))") == "(ROOT (PU <) (NN x) (PU >))"
    assert strip_markup("( (NN a) )\n") == "( (NN a) )\n"


@pytest.mark.parametrize(
    "name, message",
    [
        ("chtb_0901.fid", r"chtb_0901\.fid, line 7: <S ID=2> opens a sentence inside <S ID=1> of"),
        ("chtb_0902.fid", r"chtb_0902\.fid, line 9: the tree starting on line 9 is not closed"),
        ("chtb_0903.fid", r"chtb_0903\.fid, line 7: neither UTF-8 nor GB18030"),
        ("chtb_0904.fid", r"chtb_0904\.fid: the file holds no trees \(only markup\)"),
    ],
)
def test_malformed_files_name_file_and_line(name, message):
    with pytest.raises(TreebankFormatError, match=message):
        list(ChineseTreebankReader().read(str(BAD / name)))


def test_malformed_files_skipped_and_counted(caplog):
    reader = ChineseTreebankReader(on_error="skip")
    with caplog.at_level(logging.WARNING):
        trees = _trees(reader, str(BAD))
    # chtb_0902's second tree is not closed: it alone is lost, and the third, which starts
    # at the column where the file's trees start, is read.
    assert trees == [
        "(TOP (IP (NP (PN 她)) (VP (VV 来)) (PU 。)))",
        "(TOP (IP (NP (PN 他)) (VP (VV 走)) (PU 。)))",
        "(TOP (IP (NP (PN 我们)) (VP (VV 回家)) (PU 。)))",
    ]
    assert reader.stats["skipped_errors"] == 4
    assert "chtb_0903.fid, line 7" in caplog.text


def test_path_errors():
    reader = ChineseTreebankReader()
    with pytest.raises(TreebankPathError, match=r"#foo, which is neither a split name \(known: "):
        list(reader.read(f"{CTB51}#foo"))
    with pytest.raises(TreebankPathError, match="has a file id in 17-17"):
        list(reader.read(f"{CTB51}#17"))
    with pytest.raises(TreebankPathError, match="is not a directory"):
        list(reader.read(f"{CTB51}/missing#dev"))
    with pytest.raises(TreebankPathError, match="No treebank files found"):
        list(reader.read(f"{CTB51}/chtb_999.fid"))


def test_other_releases_splits_and_ranges():
    reader = ChineseTreebankReader(splits={"train": "1-300", "held_out": "400,1001"})
    assert reader.stats == {}
    assert len(list(reader.read(f"{CTB51}#train"))) == 4  # chtb_001 and chtb_271
    assert _words(reader, f"{CTB51}#held_out")[0] == ["新华社", "北京", "十一月", "二十二日", "电"]
    assert len(list(reader.read(f"{CTB51}#1-300,1001"))) == 6
    with pytest.raises(ConfigurationError, match="the split 'dev'"):
        ChineseTreebankReader(splits={"dev": "325-301"})
    with pytest.raises(ConfigurationError, match="unknown encoding 'klingon'"):
        ChineseTreebankReader(encoding="klingon")


def test_from_params_passes_ptb_options():
    reader = DatasetReader.from_params(
        Params({"type": "lal_ctb", "encoding": "gbk", "max_length": 6, "on_error": "skip"})
    )
    assert isinstance(reader, ChineseTreebankReader)
    assert _words(reader, f"{CTB51}#train") == [
        ["上海", "浦东", "开发"],
        ["参加", "会议", "的", "代表", "很多", "。"],
    ]
    assert reader.stats["skipped_too_long"] == 3


def test_file_ids_and_ranges():
    assert ctb_file_id("data/bracketed/chtb_001.fid") == 1
    assert ctb_file_id("chtb_0301.nw") == 301
    assert ctb_file_id("CHTB_1151.mrg") == 1151
    assert ctb_file_id("wsj_0001.mrg") is None
    assert parse_file_id_ranges("1-270, 440-1151,301") == ((1, 270), (440, 1151), (301, 301))
    with pytest.raises(ValueError, match="is empty"):
        parse_file_id_ranges("5-1")
    with pytest.raises(ValueError, match="'x' in the file-id ranges"):
        parse_file_id_ranges("1-3,x")


def test_joint_spans_use_the_ctb_head_rules_by_default():
    path = f"{CTB51}#train[1:2]"  # 上海 浦东 近年 颁布 了 七十一 件 法规 。
    reader = DatasetReader.from_params(Params({"type": "lal_ctb", "joint_spans": True}))
    instance = next(iter(reader.read(path)))
    assert instance["metadata"]["gold_heads"] == [2, 4, 4, 0, 4, 7, 8, 4, 4]
    collins = ChineseTreebankReader(joint_spans=True, head_rules="collins")
    assert next(iter(collins.read(path)))["metadata"]["gold_heads"] != [2, 4, 4, 0, 4, 7, 8, 4, 4]
