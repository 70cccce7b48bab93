"""Pictures of trees as SVG (`lal_allennlp/drawing.py`) and `lal-parse --format svg|html`."""
import re
import xml.etree.ElementTree as ET
from typing import Dict, List, Tuple

import pytest
from nltk import Tree

from lal_allennlp.commands.parse import main
from lal_allennlp.drawing import FONT_SIZE, html_page, text_width, tree_svg
# The session's tiny trained archives (one epoch on the fixture treebank).
from tests.commands.conftest import joint_parser_archive, span_parser_archive  # noqa: F401

SVG = "{http://www.w3.org/2000/svg}"
SENTENCE = (
    "(TOP (S (NP (DT The) (NN cat)) (VP (VBD sat) (PP (IN on) (NP (DT the) (NN mat)))) (. .)))"
)


def _texts(svg: str, kind: str) -> List[Tuple[str, float]]:
    """The `(text, x)` of every `<text class=kind>`, in document order."""
    root = ET.fromstring(svg)
    return [
        (element.text or "", float(element.get("x")))
        for element in root.iter(SVG + "text")
        if element.get("class") == kind
    ]


def _preorder_phrases(tree: Tree) -> List[Tree]:
    """The constituents (not preterminals) in pre-order, as `tree_svg` draws their labels."""
    found: List[Tree] = []

    def visit(node) -> None:
        if isinstance(node, str) or (len(node) == 1 and isinstance(node[0], str)):
            return
        found.append(node)
        for child in node:
            visit(child)

    visit(tree)
    return found


def _check_layout(tree: Tree, svg: str) -> None:
    """Words, tags and labels are drawn once each, in order; words do not overlap; every
    constituent lies between its first and last child."""
    words = _texts(svg, "word")
    assert [w for w, _ in words] == tree.leaves()
    xs = [x for _, x in words]
    for (left, x0), (right, x1) in zip(words, words[1:]):
        assert x1 - x0 >= (text_width(left) + text_width(right)) / 2  # no overlap, x increases
    preterminals = [
        node.label() for node in tree.subtrees() if len(node) == 1 and isinstance(node[0], str)
    ]
    assert [t for t, _ in _texts(svg, "tag")] == preterminals
    phrases = _preorder_phrases(tree)
    labels = _texts(svg, "label")
    assert [t for t, _ in labels] == [node.label() for node in phrases]

    # The x of each node: words (and their tags) by column, constituents from their labels.
    node_x: Dict[int, float] = {id(node): x for node, (_, x) in zip(phrases, labels)}
    leaf = iter(xs)

    def x_of(node) -> float:
        if isinstance(node, str) or (len(node) == 1 and isinstance(node[0], str)):
            return next(leaf)
        children = [x_of(child) for child in node]
        assert min(children) - 1e-6 <= node_x[id(node)] <= max(children) + 1e-6
        assert node_x[id(node)] == pytest.approx((children[0] + children[-1]) / 2, abs=0.1)
        return node_x[id(node)]

    x_of(tree)


def test_a_tree_with_tags_is_drawn_in_order_and_centred_over_its_children():
    tree = Tree.fromstring(SENTENCE)
    svg = tree_svg(tree)
    _check_layout(tree, svg)
    assert [t for t, _ in _texts(svg, "tag")] == ["DT", "NN", "VBD", "IN", "DT", "NN", "."]
    assert [t for t, _ in _texts(svg, "label")] == ["TOP", "S", "NP", "VP", "PP", "NP"]
    # No dependencies asked for: no arcs.
    assert "arc" not in svg


def test_unary_chains_one_word_and_trees_without_preterminals():
    chain = Tree.fromstring("(TOP (S (VP (VB Go))))")
    svg = tree_svg(chain, confidences={(0, 1, "S+VP"): 0.8})
    _check_layout(chain, svg)
    labels = _texts(svg, "label")
    assert [t for t, _ in labels] == ["TOP", "S", "VP"]
    assert len({x for _, x in labels}) == 1  # a chain stands in one column
    # The chain's joined label shades both of its nodes; TOP has no value.
    titles = [t.text for t in ET.fromstring(svg).iter(SVG + "title")][1:]
    assert titles == ["TOP [0:1]: no probability", "S [0:1]: p = 0.800", "VP [0:1]: p = 0.800"]

    unsupervised = Tree.fromstring("(X (X The cat) (X sat (X down here)))")
    svg = tree_svg(unsupervised)
    _check_layout(unsupervised, svg)
    assert _texts(svg, "tag") == []
    assert [t for t, _ in _texts(svg, "label")] == ["X", "X", "X", "X"]

    one_word = Tree("X", ["Hello"])
    svg = tree_svg(one_word, heads=[0])
    assert [w for w, _ in _texts(svg, "word")] == ["Hello"]
    assert len(ET.fromstring(svg).findall(f".//{SVG}path")) == 1


def test_long_and_wide_sentences_grow_and_never_overlap():
    words = [f"word{i}" * (1 + i % 3) for i in range(80)]
    noun_phrase = Tree("NP", [Tree("NN", [w]) for w in words[:40]])
    tree = Tree("S", [noun_phrase, Tree("VP", [Tree("VB", [w]) for w in words[40:]])])
    svg = tree_svg(tree)
    _check_layout(tree, svg)
    short = tree_svg(Tree.fromstring("(S (NP (NN a)) (VP (VB b)))"))
    assert int(ET.fromstring(svg).get("width")) > 10 * int(ET.fromstring(short).get("width"))
    # Wide (East Asian) characters count double.
    chinese = Tree.fromstring("(IP (NP (NR 中华人民共和国)) (VP (VV 成立)))")
    assert text_width("中华人民共和国") == pytest.approx(7 * FONT_SIZE)
    assert text_width("abc") == pytest.approx(3 * 0.6 * FONT_SIZE)
    _check_layout(chinese, tree_svg(chinese))


def test_text_is_escaped_for_xml():
    words = ["<", "&", '"', "'", "a<b&c>"]
    tree = Tree("S", [Tree("SYM", [w]) for w in words] + [Tree("X&Y", [Tree("NN", ["<x>"])])])
    arc_labels = ["<r>", "&", '"', "a", "b", "c"]
    svg = tree_svg(tree, heads=[0, 1, 1, 1, 1, 1], dependency_labels=arc_labels)
    assert [w for w, _ in _texts(svg, "word")] == words + ["<x>"]
    assert [t for t, _ in _texts(svg, "label")] == ["S", "X&Y"]
    assert [t for t, _ in _texts(svg, "arc-label")] == arc_labels
    assert "a<b" not in svg and '"""' not in svg
    # A character XML cannot hold becomes U+FFFD instead of breaking the document.
    [(word, _)] = _texts(tree_svg(Tree("S", [Tree("NN", ["a\x01b"])])), "word")
    assert word == "a\ufffdb"


def test_dependency_arcs_one_per_word_with_the_root_marked():
    tree = Tree.fromstring(SENTENCE)
    heads = [2, 3, 0, 3, 6, 4, 3]
    labels = ["det", "nsubj", "root", "prep", "det", "pobj", "punct"]
    svg = tree_svg(tree, heads=heads, dependency_labels=labels)
    _check_layout(tree, svg)
    root = ET.fromstring(svg)
    arcs = [p for p in root.iter(SVG + "path") if "arc" in p.get("class").split()]
    assert len(arcs) == len(heads)
    assert [a.get("class") for a in arcs].count("arc root") == 1
    assert len([p for p in root.iter(SVG + "polygon") if p.get("class") == "arrowhead"]) == 7
    assert [t for t, _ in _texts(svg, "arc-label")] == labels
    # Each arc runs from its head's column to its dependent's, below the words.
    columns = [x for _, x in _texts(svg, "word")]
    for dependent, (arc, head) in enumerate(zip(arcs, heads)):
        numbers = [float(v) for v in re.findall(r"-?\d+(?:\.\d+)?", arc.get("d"))]
        start, end = numbers[0], numbers[-2]
        assert end == pytest.approx(columns[dependent], abs=0.1)
        assert start == pytest.approx(columns[head - 1] if head else columns[dependent], abs=0.1)
    # Arcs go deeper than the arcs inside them: sat -> . holds on -> mat, which holds
    # mat -> the.
    depth = {d: max(float(v) for v in re.findall(r",(-?\d+(?:\.\d+)?)", a.get("d")))
             for d, a in enumerate(arcs)}
    assert depth[6] > depth[5] > depth[4] and depth[6] > depth[3]
    with pytest.raises(ValueError, match="one head in 0..7"):
        tree_svg(tree, heads=heads[:-1])
    with pytest.raises(ValueError, match="one per word"):
        tree_svg(tree, heads=heads, dependency_labels=labels[:-1])


def test_shading_iff_confidences_are_given():
    tree = Tree.fromstring(SENTENCE)

    def boxes(svg: str) -> List[Tuple[str, List[str]]]:
        return [
            (g.find(SVG + "rect").get("fill"), [t.text for t in g.findall(SVG + "title")])
            for g in ET.fromstring(svg).iter(SVG + "g")
            if g.get("class") == "node"
        ]

    plain = boxes(tree_svg(tree))
    assert len(plain) == 6 and all(fill == "#ffffff" and not titles for fill, titles in plain)
    shaded = boxes(tree_svg(tree, confidences={(0, 7, "S"): 1.0, (0, 2, "NP"): 0.0,
                                                (2, 6, "VP"): 0.5}))
    fills = [fill for fill, _ in shaded]
    # TOP (none), S (1.0, darkest), NP (0.0, lightest), VP (0.5), PP and NP (none).
    assert fills[1] == "#08306b" and fills[2] == "#eff3ff" and fills[1] != fills[3] != fills[2]
    assert [titles[0] for _, titles in shaded][1:4] == [
        "S [0:7]: p = 1.000", "NP [0:2]: p = 0.000", "VP [2:6]: p = 0.500"
    ]


def test_an_html_page_holds_the_pictures_in_order_and_the_failures():
    first, third = (tree_svg(Tree.fromstring(t)) for t in ("(S (NN a))", "(S (NN c))"))
    page = html_page([first, None, third], ["1. a", "2. <b>", "3. c"], [None, "too long", None])
    positions = [page.index(part) for part in (first, "2. &lt;b&gt;", "too long", third)]
    assert positions == sorted(positions)
    assert page.startswith("<!DOCTYPE html>") and "<script" not in page
    with pytest.raises(ValueError, match="one title each"):
        html_page([first], [])


def test_lal_parse_writes_one_svg_per_parsed_line(
    span_parser_archive, tmp_path, capsys  # noqa: F811
):
    source = tmp_path / "in.txt"
    source.write_text("The cat sat .\n\nA \x1b[31mdog\n\"Fish\" & <chips> .\n", encoding="utf-8")
    out = tmp_path / "pictures"
    assert main([span_parser_archive, str(source), "-o", str(out), "--format", "svg",
                 "--no-progress"]) == 1
    assert sorted(p.name for p in out.iterdir()) == ["line-0001.svg", "line-0004.svg"]
    first = (out / "line-0001.svg").read_text(encoding="utf-8")
    assert [w for w, _ in _texts(first, "word")] == ["The", "cat", "sat", "."]
    fourth = (out / "line-0004.svg").read_text(encoding="utf-8")
    words = ["``", "Fish", "''", "&", "<", "chips", ">", "."]  # PTB tokens
    assert [w for w, _ in _texts(fourth, "word")] == words
    assert len(_texts(fourth, "tag")) == 8 and not _texts(fourth, "arc-label")
    assert "line 3:" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main([span_parser_archive, str(source), "--format", "svg"])  # no directory


def test_lal_parse_writes_one_html_page_in_input_order(
    joint_parser_archive, tmp_path, capsys  # noqa: F811
):
    source = tmp_path / "in.txt"
    source.write_text("The cat sat .\n" + "x " * 30 + "\nIt fell .\n", encoding="utf-8")
    page_path = tmp_path / "page.html"
    assert main([joint_parser_archive, str(source), "-o", str(page_path), "--format", "html",
                 "--max-words", "20", "--no-progress"]) == 1
    page = page_path.read_text(encoding="utf-8")
    svgs = re.findall(r"<svg.*?</svg>", page, flags=re.S)
    assert len(svgs) == 2
    assert [w for w, _ in _texts(svgs[0], "word")] == ["The", "cat", "sat", "."]
    assert [w for w, _ in _texts(svgs[1], "word")] == ["It", "fell", "."]
    # The joint model's dependencies: one arc per word, one root.
    for svg, n in zip(svgs, (4, 3)):
        arcs = [p.get("class") for p in ET.fromstring(svg).iter(SVG + "path")]
        assert len(arcs) == n and arcs.count("arc root") == 1
    # The failed line 2 sits between them with its reason.
    failed = re.search(r'<p class="failed">([^<]*)</p>', page)
    assert page.index(svgs[0]) < failed.start() < page.index(svgs[1])
    assert "30 words, more than the limit of 20" in failed.group(1) and "2. x x" in page
    assert "line 2:" in capsys.readouterr().err


def test_lal_explain_pages_draw_the_tree_as_svg():
    from lal_allennlp.commands.explain import render_html, tree_picture

    result = {
        "tree": "(TOP (S (NP (NNS Dogs)) (VP (VBP bark)) (. .)))",
        "words": ["Dogs", "bark", "."],
        "spans": [(0, 3, "S"), (0, 1, "NP"), (1, 2, "VP")],
        "span_contributions": [[0.5, 0.5], [1.0, 0.0], [0.25, 0.75]],
        "explanation_note": "exact",
    }
    page = render_html(result, b"")
    [svg] = re.findall(r"<svg.*?</svg>", page, flags=re.S)
    assert [w for w, _ in _texts(svg, "word")] == ["Dogs", "bark", "."]
    assert [t for t, _ in _texts(svg, "label")] == ["TOP", "S", "NP", "VP"]
    # A joint model's result carries its dependencies, and the picture shows them.
    joint = dict(result, heads=[2, 0, 2], dependency_labels=["nsubj", "root", "punct"])
    assert [t for t, _ in _texts(tree_picture(joint), "arc-label")] == ["nsubj", "root", "punct"]
