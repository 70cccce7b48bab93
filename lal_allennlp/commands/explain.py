"""
`lal-explain MODEL_ARCHIVE "a sentence" -o picture.png|page.html`: draw what a label
attention parser did with one sentence, as in the figures of Mrini et al. (2020, sec. 5):

- the attention of every label attention head over the words (a heads x words heatmap), and
- for every predicted constituent, the contribution of each head to its span vector
  (a constituents x heads heatmap; see `lal_allennlp/models/explanations.py`),

under the predicted tree. `.png` writes one picture; `.html` writes a self-contained page
(the picture embedded, plus the numbers as tables).
"""
import argparse
import base64
import html
import io
import sys
from typing import Any, Dict, Optional, Sequence


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


def render_html(result: Dict[str, Any], png: bytes) -> str:
    """A self-contained HTML page: the picture plus the tree and the top heads per span."""
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
<p>Contributions are {html.escape(result.get("explanation_note", ""))}.</p>
<img alt="label attention heatmaps" src="data:image/png;base64,{image}">
<h2>Strongest heads per constituent</h2>
<table><tr><th>label</th><th>span</th><th>words</th><th>top heads (share)</th></tr>
{"".join(rows)}
</table></body></html>
"""


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(
        prog="lal-explain",
        description="Draw the label attention and head contributions for one sentence.",
    )
    parser.add_argument("archive", help="a model.tar.gz of a parser with a label attention layer")
    parser.add_argument("sentence", help="the sentence to parse (raw text)")
    parser.add_argument("-o", "--output", required=True, help="output .png or .html file")
    parser.add_argument(
        "--top-heads", type=int, default=None,
        help="show only the N heads that contribute most (default: all heads)",
    )
    args = parser.parse_args(argv)
    if not args.output.endswith((".png", ".html")):
        parser.error("the output file must end in .png or .html")

    import lal_allennlp  # noqa: F401
    from allennlp.models.archival import load_archive
    from allennlp.predictors import Predictor

    predictor = Predictor.from_archive(load_archive(args.archive), "lal_parser")
    result = predictor.predict_json({"sentence": args.sentence, "explain": True})
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
