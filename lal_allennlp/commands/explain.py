"""
`lal-explain MODEL_ARCHIVE "a sentence" -o picture.png|page.html`: draw what a label
attention parser did with one sentence, as in the figures of Mrini et al. (2020, sec. 5):

- the attention of every label attention head over the words (a heads x words heatmap), and
- for every predicted constituent, the contribution of each head to its span vector
  (a constituents x heads heatmap; see `lal_allennlp/models/explanations.py`),

under the predicted tree. `.png` writes one picture; `.html` writes a self-contained page
(the tree drawn as SVG by `lal_allennlp/drawing.py`, the picture embedded, plus the numbers
as tables).

A sentence the parser cannot take (empty, holding control characters, longer than the
predictor's `max_words`; see `lal_allennlp/predictors/inputs.py`) gets a message saying why,
and the exit status 1.

For the Tree Transformer's unsupervised parser (`tree_transformer_lm`) the picture is its
induced tree above the link probabilities of every layer (a layers x word-boundaries heatmap,
the top layer on top), from which the tree was read.
"""
import argparse
import base64
import html
import io
import sys
from typing import Any, Dict, List, Optional, Sequence, Tuple


def render_png(result: Dict[str, Any], top_heads: Optional[int] = None) -> bytes:
    """A PNG of the attention and contribution heatmaps for one parsed sentence."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    words = result["words"]
    columns = ["[START]"] + words + ["[STOP]"]
    attention = np.asarray(result["label_attention"])  # (num_heads, len(words) + 2)
    contributions = np.asarray(result["span_contributions"])  # (num_spans, num_heads)
    spans = result["spans"]
    num_heads = attention.shape[0]
    heads = np.arange(num_heads)
    if top_heads is not None and top_heads < num_heads and len(contributions):
        # The heads that contribute most to the predicted constituents, in head order.
        heads = np.sort(np.argsort(-contributions.max(axis=0))[:top_heads])
    span_names = [f"{label} [{start}:{end}] " + " ".join(words[start:end]) for start, end, label in spans]
    span_names = [name if len(name) <= 60 else name[:57] + "..." for name in span_names]

    height_attention = max(3.0, 0.22 * len(heads) + 1.5)
    height_spans = max(2.0, 0.3 * len(spans) + 1.5)
    width = max(10.0, 0.45 * max(len(columns), len(heads) * 0.5) + 4)
    figure, (top, bottom) = plt.subplots(
        2, 1, figsize=(width, height_attention + height_spans),
        gridspec_kw={"height_ratios": [height_attention, height_spans]},
    )
    image = top.imshow(attention[heads], aspect="auto", cmap="Blues", vmin=0.0)
    top.set_xticks(range(len(columns)), columns, rotation=60, ha="right", fontsize=9)
    top.set_yticks(range(len(heads)), [f"head {h + 1}" for h in heads], fontsize=7)
    top.set_title("Label attention: each head's distribution over the words", fontsize=11)
    figure.colorbar(image, ax=top, fraction=0.02, pad=0.01)

    if len(contributions):
        image = bottom.imshow(contributions[:, heads], aspect="auto", cmap="Oranges")
        bottom.set_yticks(range(len(spans)), span_names, fontsize=8)
        step = max(1, len(heads) // 40)
        bottom.set_xticks(
            range(0, len(heads), step), [str(h + 1) for h in heads[::step]], fontsize=7
        )
        bottom.set_xlabel("label attention head")
        figure.colorbar(image, ax=bottom, fraction=0.02, pad=0.01)
    bottom.set_title(
        "Head contributions to each predicted constituent (rows sum to 1 over all heads)",
        fontsize=11,
    )
    figure.suptitle(result["tree"], fontsize=9, wrap=True)
    figure.tight_layout()
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=110)
    plt.close(figure)
    return buffer.getvalue()


def _tree_layout(tree) -> Tuple[List[Tuple[float, float, float, float]], float]:
    """Line segments `(x0, y0, x1, y1)` drawing `tree` over its leaves at x = 0, 1, ...;
    a node sits above the middle of its leaves at its height. Returns the segments and the
    root's height."""
    segments: List[Tuple[float, float, float, float]] = []
    next_leaf = [0]

    def place(node) -> Tuple[float, float]:
        if isinstance(node, str):
            next_leaf[0] += 1
            return float(next_leaf[0] - 1), 0.0
        children = [place(child) for child in node]
        x = sum(cx for cx, _ in children) / len(children)
        y = max(cy for _, cy in children) + 1.0
        segments.extend((x, y, cx, cy) for cx, cy in children)
        return x, y

    _, height = place(tree)
    return segments, height


def render_links_png(result: Dict[str, Any]) -> bytes:
    """The induced tree above the heatmap of link probabilities by layer."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy
    from nltk import Tree

    words = result["words"]
    links = numpy.array(result["link_probabilities"], dtype=float).reshape(-1, len(words) - 1)
    segments, height = _tree_layout(Tree.fromstring(result["tree"]))
    width = max(6.0, 0.7 * len(words))
    figure, (top, bottom) = plt.subplots(
        2, 1, figsize=(width, 3.0 + 0.3 * (height + len(links))), sharex=True,
        gridspec_kw={"height_ratios": [max(height, 1.0), max(len(links), 1) * 0.6]},
    )
    for x0, y0, x1, y1 in segments:
        top.plot([x0, x1], [y0, y1], color="black", linewidth=1)
    top.set_ylim(-0.3, height + 0.3)
    top.set_yticks([])
    top.set_title("induced tree (top) and link probabilities by layer (bottom)")
    for side in ("top", "right", "left"):
        top.spines[side].set_visible(False)
    # Link k joins words k and k+1: it sits between their columns, at x = k + 0.5.
    image = bottom.imshow(
        links[::-1], aspect="auto", cmap="viridis", vmin=0.0, vmax=1.0,
        extent=(0.0, len(words) - 1.0, -0.5, len(links) - 0.5),
    )
    bottom.set_yticks(range(len(links)))
    bottom.set_yticklabels([f"layer {layer}" for layer in range(len(links))])
    bottom.set_xticks(range(len(words)))
    bottom.set_xticklabels(words, rotation=60, ha="right")
    for layer, row in enumerate(links):
        for k, value in enumerate(row):
            bottom.text(k + 0.5, layer, f"{value:.2f}", ha="center", va="center", fontsize=7,
                        color="white" if value < 0.6 else "black")
    figure.colorbar(image, ax=bottom, fraction=0.02, pad=0.01)
    figure.tight_layout()
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=120)
    plt.close(figure)
    return buffer.getvalue()


def tree_picture(result: Dict[str, Any]) -> str:
    """The predicted tree (`result["tree"]`) as an inline SVG, with the dependencies of a
    joint span model."""
    from nltk import Tree

    from lal_allennlp.drawing import tree_svg

    heads = result.get("heads")
    labels = result.get("dependency_labels") if heads is not None else None
    return tree_svg(Tree.fromstring(result["tree"]), heads=heads, dependency_labels=labels)


def render_html(result: Dict[str, Any], png: bytes) -> str:
    """A self-contained HTML page: the tree drawn as SVG, the picture of the heatmaps and the
    top heads per span."""
    rows = []
    for (start, end, label), shares in zip(result["spans"], result["span_contributions"]):
        ranked = sorted(range(len(shares)), key=lambda h: -shares[h])[:5]
        top = ", ".join(f"head {h + 1}: {shares[h]:.3f}" for h in ranked)
        text = " ".join(result["words"][start:end])
        rows.append(
            f"<tr><td>{html.escape(label)}</td><td>{start}-{end}</td>"
            f"<td>{html.escape(text)}</td><td>{top}</td></tr>"
        )
    image = base64.b64encode(png).decode("ascii")
    return f"""<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>Label attention: {html.escape(" ".join(result["words"]))}</title>
<style>body{{font-family:sans-serif;margin:2em}} table{{border-collapse:collapse}}
td,th{{border:1px solid #ccc;padding:4px 8px;font-size:13px}} code{{white-space:pre-wrap}}</style>
</head><body>
<h1>Label attention explanation</h1>
<p><code>{html.escape(result["tree"])}</code></p>
<div style="overflow-x:auto">{tree_picture(result)}</div>
<p>Contributions are {html.escape(result.get("explanation_note", ""))}.</p>
<img alt="label attention heatmaps" src="data:image/png;base64,{image}">
<h2>Strongest heads per constituent</h2>
<table><tr><th>label</th><th>span</th><th>words</th><th>top heads (share)</th></tr>
{"".join(rows)}
</table></body></html>
"""


def main(argv: Optional[Sequence[str]] = None) -> int:
    cli = argparse.ArgumentParser(
        prog="lal-explain",
        description="Draw the label attention and head contributions for one sentence.",
    )
    cli.add_argument("archive", help="a model.tar.gz of a parser with a label attention layer")
    cli.add_argument("sentence", help="the sentence to parse (raw text)")
    cli.add_argument("-o", "--output", required=True, help="output .png or .html file")
    cli.add_argument(
        "--top-heads", type=int, default=None,
        help="show only the N heads that contribute most (default: all heads)",
    )
    args = cli.parse_args(argv)
    if not args.output.endswith((".png", ".html")):
        cli.error("the output file must end in .png or .html")

    from lal_allennlp.api import Parser
    from lal_allennlp.predictors.inputs import InputError

    try:
        parser = Parser.load(args.archive)
    except (FileNotFoundError, ValueError) as error:
        cli.error(str(error))
    try:
        parser.check(args.sentence)
    except InputError as error:
        # A sentence the parser cannot take (empty, control characters, too long): say why.
        print(f"Cannot parse the sentence: {error}", file=sys.stderr)
        return 1
    if not parser.capabilities.explanations:
        print(
            f"{args.archive} holds a {type(parser.model).__name__}, which gives no explanations: "
            "lal-explain needs a span parser with a label attention layer in its encoder, or a "
            "Tree Transformer (tree_transformer_lm).",
            file=sys.stderr,
        )
        return 1
    result = parser.parse(args.sentence, explain=True).to_json()
    if "link_probabilities" in result:
        if len(result["words"]) < 2:
            print("A one-word sentence has no links to draw.", file=sys.stderr)
            return 1
        png = render_links_png(result)
        if args.output.endswith(".png"):
            with open(args.output, "wb") as out:
                out.write(png)
        else:
            image = base64.b64encode(png).decode("ascii")
            with open(args.output, "w", encoding="utf-8") as out:
                out.write(
                    f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>"
                    f"{html.escape(result['tree'])}</title></head><body><pre>"
                    f"{html.escape(result['tree'])}</pre>{tree_picture(result)}"
                    f"<img src='data:image/png;base64,"
                    f"{image}'></body></html>\n"
                )
        print(result["tree"], file=sys.stderr)
        print(f"wrote {args.output}", file=sys.stderr)
        return 0
    if "label_attention" not in result or "span_contributions" not in result:
        print("This model's label attention layer gives no per-head explanations "
              "(it needs query vectors and concatenated heads).", file=sys.stderr)
        return 1
    png = render_png(result, args.top_heads)
    if args.output.endswith(".png"):
        with open(args.output, "wb") as out:
            out.write(png)
    else:
        with open(args.output, "w", encoding="utf-8") as out:
            out.write(render_html(result, png))
    print(result["tree"], file=sys.stderr)
    print(f"contributions are {result['explanation_note']}", file=sys.stderr)
    print(f"wrote {args.output}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
