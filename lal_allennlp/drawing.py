"""
Pictures of parse trees as SVG, written in pure Python (no browser, no matplotlib), for
`lal-parse --format svg|html` and the page of `lal-explain`.

`tree_svg` draws the usual top-down tree: the words along the bottom, their POS tags above
them, the labelled constituents above those, each node centred over its children and joined to
them by lines. Dependency arcs (head to dependent, with an arrowhead, the label, and the root
marked) can be drawn below the words, and a probability per constituent can shade the node's
box (light to dark) with the value in a `<title>` tooltip. `html_page` puts several pictures on
one self-contained page.

Text widths are estimated from the characters (no font metrics are at hand): a column is as
wide as its word or tag, so that words never overlap however long the sentence; East Asian wide
characters count double.
"""
import html
import math
import unicodedata
from typing import Dict, List, Optional, Sequence, Tuple, Union

from nltk import Tree

Span = Tuple[int, int, str]

FONT_SIZE = 14
"""The font size of words, tags and labels, in pixels (dependency labels are smaller)."""
_ARC_FONT_SIZE = 11
_MARGIN = 16  # around the picture
_COLUMN_GAP = 14  # between the widest texts of neighbouring words
_LEVEL = 46  # from one level of constituents to the next
_BOX_PAD = 5  # between a label and its box
_TAG_TO_WORD = 28  # from the row of tags to the row of words
_ARC_STEP = 20  # extra depth of an arc per level of arcs nested inside it
_ROOT_DEPTH = 22  # the length of the root marker's arrow
_LIGHT = (239, 243, 255)  # the box of a constituent of probability 0
_DARK = (8, 48, 107)  # ... and of probability 1


def text_width(text: str, font_size: float = FONT_SIZE) -> float:
    """The approximate width of `text` in pixels: 0.6 em per character in a sans-serif font,
    1 em for East Asian wide and full-width characters, nothing for combining marks."""
    width = 0.0
    for character in text:
        if unicodedata.combining(character):
            continue
        width += 1.0 if unicodedata.east_asian_width(character) in ("W", "F") else 0.6
    return width * font_size


def _xml(text: str) -> str:
    """`text` escaped for XML text and attributes; characters XML 1.0 cannot hold (most
    control characters, lone surrogates) become U+FFFD."""
    cleaned = "".join(
        c
        if c in "\t\n\r" or "\x20" <= c <= "\ud7ff" or "\ue000" <= c <= "\ufffd" or c > "\uffff"
        else "\ufffd"
        for c in text
    )
    return html.escape(cleaned, quote=True)


def _number(value: float) -> str:
    """A coordinate as written in the SVG: at most one decimal."""
    return f"{value:.1f}".rstrip("0").rstrip(".")


def _shade(probability: float) -> str:
    """The fill of a box for `probability` in [0, 1], from `_LIGHT` to `_DARK`."""
    p = min(max(probability, 0.0), 1.0)
    red, green, blue = (round(a + (b - a) * p) for a, b in zip(_LIGHT, _DARK))
    return f"#{red:02x}{green:02x}{blue:02x}"


class _Phrase:
    """A constituent of the picture (a tree node that is neither a word nor a POS tag)."""

    def __init__(self, label: str, depth: int) -> None:
        self.label = label
        self.depth = depth
        self.start = 0
        self.end = 0
        # ("phrase", index into the phrases), ("tag", word index) or ("word", word index)
        self.children: List[Tuple[str, int]] = []
        self.x = 0.0


def _collect(tree: Union[Tree, str]) -> Tuple[List[str], List[Optional[str]], List[_Phrase]]:
    """The words, the POS tag of each word (`None` for a word that is a constituent's direct
    child, as in the unsupervised parser's trees) and the constituents in pre-order."""
    words: List[str] = []
    tags: List[Optional[str]] = []
    phrases: List[_Phrase] = []

    def visit(node: Union[Tree, str], depth: int) -> Tuple[str, int]:
        if isinstance(node, str):
            words.append(node)
            tags.append(None)
            return "word", len(words) - 1
        if len(node) == 0:
            raise ValueError(f"cannot draw the constituent {node.label()!r}: it has no words")
        if len(node) == 1 and isinstance(node[0], str):  # a preterminal (TAG word)
            words.append(node[0])
            tags.append(str(node.label()))
            return "tag", len(words) - 1
        phrase = _Phrase(str(node.label()), depth)
        index = len(phrases)
        phrases.append(phrase)
        phrase.start = len(words)
        phrase.children = [visit(child, depth + 1) for child in node]
        phrase.end = len(words)
        return "phrase", index

    visit(tree, 0)
    return words, tags, phrases


def _arc_levels(arcs: List[Tuple[int, int]]) -> List[int]:
    """The level of each arc `(head, dependent)` (0-based word indices): 1 plus the highest
    level of the arcs whose words lie inside its own, so that nested arcs of a projective tree
    are drawn one inside the other without crossing."""
    spans = [(min(h, d), max(h, d)) for h, d in arcs]
    order = sorted(range(len(arcs)), key=lambda k: spans[k][1] - spans[k][0])
    levels = [0] * len(arcs)
    for k in order:
        left, right = spans[k]
        inner = [
            levels[j]
            for j in range(len(arcs))
            if j != k and left <= spans[j][0] and spans[j][1] <= right and spans[j] != spans[k]
        ]
        levels[k] = 1 + max(inner, default=0)
    return levels


def tree_svg(
    tree: Tree,
    heads: Optional[Sequence[int]] = None,
    dependency_labels: Optional[Sequence[str]] = None,
    confidences: Optional[Dict[Span, float]] = None,
) -> str:
    """
    An SVG document (a string, without an XML declaration, so that it can also be put inline
    into HTML) drawing `tree` top-down: words at the bottom, POS tags above them (for words
    that have a preterminal), constituents above, each centred over its children.

    # Parameters

    tree : `Tree`
        Any `nltk.Tree` with words as leaves: with preterminals (`(S (NP (DT The) ...)))`) or
        without (`(X (X The cat) sat)` from the unsupervised parser), unary chains included.
    heads : `Sequence[int]`, optional (default = `None`)
        The head of each word, 1-based, 0 for the root (as in CoNLL-U): each word but the
        root gets an arc below the words from its head, with an arrowhead at the word; the
        root gets an arrow of its own.
    dependency_labels : `Sequence[str]`, optional (default = `None`)
        The label of each word's arc (needs `heads`).
    confidences : `Dict[Tuple[int, int, str], float]`, optional (default = `None`)
        A probability in [0, 1] per constituent `(start, end_exclusive, label)`, shown as the
        shading of the node's box and in its tooltip. The nodes of a unary chain also take the
        value of the chain's joined label (`"S+VP"`, as `trees.tree_to_spans` writes spans).
        Without it, boxes are white and have no tooltip.

    # Raises

    `ValueError` if the tree has no words or a constituent without words, or if `heads` or
    `dependency_labels` do not give one entry per word (heads between 0 and the length).
    """
    words, tags, phrases = _collect(tree)
    n = len(words)
    if n == 0:
        raise ValueError("cannot draw a tree with no words")
    if dependency_labels is not None and heads is None:
        raise ValueError("dependency_labels need heads")
    if heads is not None:
        if len(heads) != n or any(not 0 <= h <= n for h in heads):
            raise ValueError(
                f"heads must give one head in 0..{n} per word of the {n} words, not {list(heads)}"
            )
        if dependency_labels is not None and len(dependency_labels) != n:
            raise ValueError(
                f"{len(dependency_labels)} dependency labels for {n} words: give one per word"
            )

    # Columns: each word's column is as wide as its word or its tag, whichever is wider.
    widths = [
        max(text_width(word), text_width(tag or "")) + _COLUMN_GAP for word, tag in zip(words, tags)
    ]
    column_x: List[float] = []
    left = 0.0
    for width in widths:
        column_x.append(left + width / 2)
        left += width

    # Constituents: centred over their first and last child, children after their parents.
    def child_x(child: Tuple[str, int]) -> float:
        kind, index = child
        return phrases[index].x if kind == "phrase" else column_x[index]

    for phrase in reversed(phrases):
        phrase.x = (child_x(phrase.children[0]) + child_x(phrase.children[-1])) / 2

    box_height = FONT_SIZE + 2 * _BOX_PAD
    top = _MARGIN + box_height / 2
    depth = max((phrase.depth for phrase in phrases), default=-1) + 1
    tag_y = top + depth * _LEVEL
    has_tags = any(tag is not None for tag in tags)
    word_y = tag_y + _TAG_TO_WORD if has_tags else tag_y

    def phrase_y(phrase: _Phrase) -> float:
        return top + phrase.depth * _LEVEL

    # Chains: the labels of every span covered by several nodes (a unary chain), top to
    # bottom; as in `trees.tree_to_spans`, the root is no span and takes no part in chains.
    chains: Dict[Tuple[int, int], List[str]] = {}
    for phrase in phrases[1:]:
        chains.setdefault((phrase.start, phrase.end), []).append(phrase.label)

    lines: List[str] = []  # drawn first, under the boxes and texts
    nodes: List[str] = []
    # Horizontal extent of everything drawn, to size the picture and shift it into view.
    extent = [min(column_x) - widths[0] / 2, max(column_x) + widths[-1] / 2]

    def line(x0: float, y0: float, x1: float, y1: float) -> None:
        lines.append(
            f'<line x1="{_number(x0)}" y1="{_number(y0)}" x2="{_number(x1)}" y2="{_number(y1)}"/>'
        )

    for phrase in phrases:
        y = phrase_y(phrase)
        for kind, index in phrase.children:
            if kind == "phrase":
                child = phrases[index]
                line(phrase.x, y + box_height / 2, child.x, phrase_y(child) - box_height / 2)
            elif kind == "tag":
                line(phrase.x, y + box_height / 2, column_x[index], tag_y - FONT_SIZE / 2 - 2)
            else:
                line(phrase.x, y + box_height / 2, column_x[index], word_y - FONT_SIZE / 2 - 2)
        box_width = text_width(phrase.label) + 2 * _BOX_PAD
        extent[0] = min(extent[0], phrase.x - box_width / 2)
        extent[1] = max(extent[1], phrase.x + box_width / 2)
        fill, ink, tooltip = "#ffffff", "#000000", ""
        if confidences is not None:
            span = (phrase.start, phrase.end)
            probability = confidences.get((*span, phrase.label))
            chain = chains.get(span, [])
            if probability is None and len(chain) > 1 and phrase is not phrases[0]:
                probability = confidences.get((*span, "+".join(chain)))
            if probability is None:
                tooltip = (
                    f"<title>{_xml(phrase.label)} [{span[0]}:{span[1]}]: no probability</title>"
                )
            else:
                fill = _shade(probability)
                ink = "#ffffff" if probability > 0.55 else "#000000"
                tooltip = (
                    f"<title>{_xml(phrase.label)} [{span[0]}:{span[1]}]: "
                    f"p = {probability:.3f}</title>"
                )
        nodes.append(
            f'<g class="node">{tooltip}<rect x="{_number(phrase.x - box_width / 2)}" '
            f'y="{_number(y - box_height / 2)}" width="{_number(box_width)}" '
            f'height="{_number(box_height)}" rx="3" fill="{fill}" stroke="#7a7a7a"/>'
            f'<text class="label" x="{_number(phrase.x)}" y="{_number(y)}" fill="{ink}">'
            f"{_xml(phrase.label)}</text></g>"
        )
    for index, (word, tag) in enumerate(zip(words, tags)):
        x = column_x[index]
        if tag is not None:
            line(x, tag_y + FONT_SIZE / 2 + 2, x, word_y - FONT_SIZE / 2 - 2)
            nodes.append(
                f'<text class="tag" x="{_number(x)}" y="{_number(tag_y)}" fill="#1f5fa8">'
                f"{_xml(tag)}</text>"
            )
        nodes.append(
            f'<text class="word" x="{_number(x)}" y="{_number(word_y)}" font-weight="bold">'
            f"{_xml(word)}</text>"
        )

    bottom = word_y + FONT_SIZE / 2 + 4
    arcs_drawn: List[str] = []
    if heads is not None:
        arc_top = bottom
        pairs = [(h - 1, d) for d, h in enumerate(heads) if h != 0]
        levels = dict(zip(pairs, _arc_levels(pairs)))
        # The root's arrow reaches below every other arc and its label, so that its own label
        # is clear of theirs (in a projective tree no arc passes under the root word).
        deepest = max(levels.values(), default=0)
        root_end = max(
            arc_top + _ROOT_DEPTH,
            arc_top + 0.75 * (10 + _ARC_STEP * deepest) + 1.5 * _ARC_FONT_SIZE + 4,
        )
        for dependent, head in enumerate(heads):
            label = dependency_labels[dependent] if dependency_labels is not None else ""
            x = column_x[dependent]
            if head == 0:
                end = root_end
                arcs_drawn.append(
                    f'<path class="arc root" d="M{_number(x)},{_number(end)} '
                    f'L{_number(x)},{_number(arc_top + 6)}" stroke="#b03a2e" stroke-width="1.5" fill="none"/>'
                )
                label_y = end + _ARC_FONT_SIZE * 0.8
            else:
                control = arc_top + 10 + _ARC_STEP * levels[(head - 1, dependent)]
                start = column_x[head - 1]
                arcs_drawn.append(
                    f'<path class="arc" d="M{_number(start)},{_number(arc_top)} '
                    f"C{_number(start)},{_number(control)} {_number(x)},{_number(control)} "
                    f'{_number(x)},{_number(arc_top + 6)}" stroke="#555555" fill="none"/>'
                )
                # The apex of the cubic curve lies at 3/4 of the depth of its control points.
                end = arc_top + 0.75 * (control - arc_top)
                x = (start + x) / 2
                label_y = end + _ARC_FONT_SIZE * 0.8
            # The arrowhead at the dependent, pointing up at the word.
            tip = column_x[dependent]
            arcs_drawn.append(
                f'<polygon class="arrowhead" points="{_number(tip)},{_number(arc_top)} '
                f"{_number(tip - 3.5)},{_number(arc_top + 7)} "
                f'{_number(tip + 3.5)},{_number(arc_top + 7)}" '
                f'fill="{"#b03a2e" if head == 0 else "#555555"}"/>'
            )
            shown = label or ("root" if head == 0 else "")
            if shown:
                arcs_drawn.append(
                    f'<text class="arc-label" x="{_number(x)}" y="{_number(label_y)}" '
                    f'font-size="{_ARC_FONT_SIZE}" fill="#555555">{_xml(shown)}</text>'
                )
                half = text_width(shown, _ARC_FONT_SIZE) / 2
                extent[0] = min(extent[0], x - half)
                extent[1] = max(extent[1], x + half)
            bottom = max(bottom, label_y + _ARC_FONT_SIZE / 2)

    shift = _MARGIN - extent[0]
    width = extent[1] - extent[0] + 2 * _MARGIN
    height = bottom + _MARGIN
    sentence = " ".join(words)
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{math.ceil(width)}" '
        f'height="{math.ceil(height)}" viewBox="0 0 {math.ceil(width)} {math.ceil(height)}" '
        f'font-family="sans-serif" font-size="{FONT_SIZE}" text-anchor="middle" '
        f'dominant-baseline="central" role="img">'
        f"<title>{_xml(sentence)}</title>"
        f'<g transform="translate({_number(shift)},0)">'
        f'<g stroke="#7a7a7a" stroke-width="1">{"".join(lines)}</g>'
        f'{"".join(nodes)}{"".join(arcs_drawn)}</g></svg>'
    )


def html_page(
    svgs: Sequence[Optional[str]],
    titles: Sequence[str],
    notes: Optional[Sequence[Optional[str]]] = None,
    page_title: str = "Parse trees",
) -> str:
    """
    A self-contained HTML page (no scripts, no outside files) showing each SVG of `svgs`
    inline under its title, in the order given. An entry `None` (a sentence that gave no
    picture) shows its title and its note, e.g. why the sentence was not parsed; `notes`
    (`None` entries for none) are shown under the titles. Titles and notes are plain text and
    escaped here; the SVGs are put in as they are (`tree_svg` escapes its own text).
    """
    if len(titles) != len(svgs):
        raise ValueError(f"{len(svgs)} pictures but {len(titles)} titles: give one title each")
    if notes is not None and len(notes) != len(svgs):
        raise ValueError(f"{len(svgs)} pictures but {len(notes)} notes: give one note each")
    sections = []
    for index, (svg, title) in enumerate(zip(svgs, titles)):
        note = notes[index] if notes is not None else None
        if note is None and svg is None:
            note = "no picture"
        kind = "failed" if svg is None else "note"
        paragraph = f'<p class="{kind}">{_xml(note)}</p>' if note else ""
        picture = f'<div class="tree">{svg}</div>' if svg is not None else ""
        sections.append(f"<section><h2>{_xml(title)}</h2>{paragraph}{picture}</section>")
    return (
        "<!DOCTYPE html>\n"
        f'<html lang="en"><head><meta charset="utf-8"><title>{_xml(page_title)}</title>\n'
        "<style>body{font-family:sans-serif;margin:2em} h2{font-size:15px;font-weight:normal}"
        " .tree{overflow-x:auto} .failed{color:#b03a2e}</style></head><body>\n"
        f"<h1>{_xml(page_title)}</h1>\n" + "\n".join(sections) + "\n</body></html>\n"
    )


def heatmap_svg(
    values: Sequence[Sequence[float]],
    row_names: Sequence[str],
    column_names: Sequence[str],
    title: str = "",
    cell: float = 12.0,
) -> str:
    """
    An SVG heatmap of the matrix `values` (one row per entry of `row_names`, one column per
    entry of `column_names`): each cell shaded from light (the matrix's smallest value) to dark
    (its largest), with the row, column and value in the cell's `<title>` tooltip. Row names
    are written on the left, column names above the columns, turned to read upwards.

    Used by `lal-serve`'s page for the label attention of each head over the words (heads x
    words) and for each constituent's head contributions (constituents x heads).

    # Raises

    `ValueError` if a row is missing or has the wrong number of values.
    """
    if len(values) != len(row_names):
        raise ValueError(f"{len(values)} rows of values for {len(row_names)} row names")
    for index, row in enumerate(values):
        if len(row) != len(column_names):
            raise ValueError(
                f"row {index} has {len(row)} values for {len(column_names)} column names"
            )
    flat = [value for row in values for value in row]
    low, high = (min(flat), max(flat)) if flat else (0.0, 1.0)
    scale = (high - low) or 1.0
    small = min(_ARC_FONT_SIZE, cell)  # names no taller than their row
    left = max((text_width(name, small) for name in row_names), default=0.0) + 8
    top = max((text_width(name, small) for name in column_names), default=0.0) + 8
    title_height = FONT_SIZE + 10 if title else 0
    top += title_height
    cells = []
    for r, (name, row) in enumerate(zip(row_names, values)):
        for c, value in enumerate(row):
            cells.append(
                f'<rect x="{_number(left + c * cell)}" y="{_number(top + r * cell)}" '
                f'width="{_number(cell)}" height="{_number(cell)}" '
                f'fill="{_shade((value - low) / scale)}"><title>{_xml(name)}, '
                f"{_xml(column_names[c])}: {value:.3f}</title></rect>"
            )
    texts = [
        f'<text x="{_number(left - 4)}" y="{_number(top + (r + 0.5) * cell)}" '
        f'text-anchor="end">{_xml(name)}</text>'
        for r, name in enumerate(row_names)
    ]
    for c, name in enumerate(column_names):
        x, y = left + (c + 0.5) * cell, top - 4
        texts.append(
            f'<text x="{_number(x)}" y="{_number(y)}" text-anchor="start" '
            f'transform="rotate(-90 {_number(x)} {_number(y)})">{_xml(name)}</text>'
        )
    if title:
        texts.append(
            f'<text x="{_MARGIN}" y="{_number(FONT_SIZE)}" text-anchor="start" '
            f'font-size="{FONT_SIZE}">{_xml(title)}</text>'
        )
    width = math.ceil(
        max(left + len(column_names) * cell, _MARGIN + text_width(title)) + _MARGIN
    )
    height = math.ceil(top + len(row_names) * cell + _MARGIN)
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" class="heatmap" width="{width}" '
        f'height="{height}" viewBox="0 0 {width} {height}" font-family="sans-serif" '
        f'font-size="{small}" dominant-baseline="central" role="img">'
        f"<title>{_xml(title)}</title>{''.join(cells)}{''.join(texts)}</svg>"
    )
