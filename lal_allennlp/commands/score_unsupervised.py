"""
`lal-score-unsupervised PREDICTED GOLD [--baselines] [--seeds 5] [--json]`: unlabelled bracket
scores of an unsupervised parser's trees against a Penn Treebank, as ON-LSTM (Shen et al. 2019)
and the Tree Transformer (Wang et al. 2019) compute them: punctuation removed, trivial brackets
left out, sentence-level F1 and corpus-level precision, recall and F1 (see
`lal_allennlp.syntax.unsupervised.UnlabelledBracketScore`).

PREDICTED holds one bracketed tree per line, line k for gold sentence k: unlabelled trees such
as `(X (X the cat) sat)` or any labelled tree; words may be bare or in `(tag word)`
preterminals. A tree over the gold words with punctuation is moved onto the words without it
(a bracket keeps the words it covers that are not punctuation); a tree over the words without
punctuation is used as it is. GOLD is a treebank file, folder, glob or WSJ file-id range
(`DIR/wsj_2300-2399`), read and normalised as the `lal_ptb` reader does.

An empty line, a line that is not a bracketed tree, or a tree with another number of words is
reported on stderr, naming the line, and scored as predicting no brackets. Exit status: 0, 1
if some line was reported, 2 if nothing could be scored (unreadable files, or not as many
lines as gold sentences).
"""
import argparse
import json
import sys
from typing import IO, Dict, List, Optional, Sequence, Set, Tuple

from nltk import Tree

from lal_allennlp.syntax.unsupervised import (
    SCORE_NAMES,
    UnlabelledBracketScore,
    baseline_scores,
    gold_unlabelled_spans,
    kept_word_mask,
    mean_and_std,
    project_spans,
    unlabelled_spans,
)

# Column headers of the table, per score name.
_HEADERS = {
    "sentence_f1": "sentence F1",
    "corpus_f1": "corpus F1",
    "corpus_precision": "corpus P",
    "corpus_recall": "corpus R",
}
_BASELINE_NAMES = {
    "right_branching": "right-branching",
    "left_branching": "left-branching",
    "balanced": "balanced",
}


def read_gold_trees(path: str) -> List[Tree]:
    """The trees of a treebank path, normalised (`TOP` root, no `-NONE-`), in reading order:
    those the `lal_ptb` reader puts in its instances' metadata."""
    from lal_allennlp.dataset_readers.ptb_reader import PennTreebankReader

    return [instance["metadata"]["gold_tree"] for instance in PennTreebankReader().read(path)]


def read_lines(path: str) -> List[str]:
    """The lines of a text file without their line ends (no last empty line)."""
    with open(path, encoding="utf-8") as text_file:
        lines = text_file.read().split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [line.rstrip("\r") for line in lines]


def predicted_spans(
    line: str, gold_tree: Tree, where: str, errors: IO[str]
) -> Optional[Set[Tuple[int, int]]]:
    """
    The brackets of one predicted line over the gold words without punctuation, or `None`
    (reported on `errors`, prefixed with `where`) if the line cannot be scored.
    """
    if not line.strip():
        print(f"{where}: empty line; scored as predicting no brackets", file=errors)
        return None
    try:
        tree = Tree.fromstring(line)
    except ValueError as error:
        problem = " ".join(str(error).split())  # nltk's message spans several lines
        print(
            f"{where}: not a bracketed tree ({problem}); scored as predicting no brackets",
            file=errors,
        )
        return None
    keep = kept_word_mask(gold_tree)
    length = len(tree.leaves())
    if length == len(keep):
        return project_spans(unlabelled_spans(tree), keep)
    if length == sum(keep):
        return unlabelled_spans(tree)
    print(
        f"{where}: the tree has {length} words but the gold sentence has {len(keep)} with "
        f"punctuation and {sum(keep)} without; scored as predicting no brackets",
        file=errors,
    )
    return None


def score_lines(
    lines: Sequence[str], gold_trees: Sequence[Tree], source: str, errors: IO[str]
) -> Tuple[UnlabelledBracketScore, List[Tuple[int, Set[Tuple[int, int]]]], List[int]]:
    """
    Scores line k of `lines` (from the file `source`) against `gold_trees[k]`.

    # Returns

    The score, the gold sentences as `(words without punctuation, gold brackets)` pairs for
    `baseline_scores`, and the numbers (1-based) of the lines reported on `errors`.
    """
    score = UnlabelledBracketScore()
    gold: List[Tuple[int, Set[Tuple[int, int]]]] = []
    failed: List[int] = []
    for number, (line, tree) in enumerate(zip(lines, gold_trees), start=1):
        words, gold_spans = gold_unlabelled_spans(tree)
        spans = predicted_spans(line, tree, f"{source}, line {number}", errors)
        if spans is None:
            failed.append(number)
            spans = set()
        score.add(spans, gold_spans, len(words))
        gold.append((len(words), gold_spans))
    return score, gold, failed


def _table(rows: List[Tuple[str, List[str]]]) -> str:
    """Rows of (name, cells) under the score headers, right-aligned."""
    header = ("", [_HEADERS[name] for name in SCORE_NAMES])
    rows = [header] + rows
    name_width = max(len(name) for name, _ in rows)
    widths = [max(len(cells[i]) for _, cells in rows) for i in range(len(SCORE_NAMES))]
    lines = []
    for name, cells in rows:
        padded = [cell.rjust(width) for cell, width in zip(cells, widths)]
        lines.append("  ".join([name.ljust(name_width)] + padded).rstrip())
    return "\n".join(lines)


def _percent(score: UnlabelledBracketScore) -> List[str]:
    return [f"{100 * getattr(score, name):.2f}" for name in SCORE_NAMES]


def report(
    score: UnlabelledBracketScore,
    failed: List[int],
    baselines: Optional[Dict[str, List[UnlabelledBracketScore]]],
    seeds: Sequence[int],
    as_json: bool,
) -> str:
    """The scores as an aligned table in percent, or as a JSON object of fractions."""
    if as_json:
        result: dict = {
            "sentences": score.sentences,
            "failed_lines": failed,
            "predicted": score.as_dict(),
        }
        if baselines is not None:
            result["baselines"] = {
                name: baselines[name][0].as_dict() for name in _BASELINE_NAMES
            }
            summary = mean_and_std(baselines["random"])
            result["baselines"]["random"] = {
                "seeds": list(seeds),
                "mean": {name: mean for name, (mean, _) in summary.items()},
                "std": {name: std for name, (_, std) in summary.items()},
                "per_seed": [seed_score.as_dict() for seed_score in baselines["random"]],
            }
        return json.dumps(result, indent=2)
    rows = [("predicted", _percent(score))]
    if baselines is not None:
        rows += [(label, _percent(baselines[name][0])) for name, label in _BASELINE_NAMES.items()]
        summary = mean_and_std(baselines["random"])
        cells = [
            f"{100 * summary[name][0]:.2f} ± {100 * summary[name][1]:.2f}" for name in SCORE_NAMES
        ]
        rows.append((f"random ({len(seeds)} seeds)", cells))
    failures = f", {len(failed)} line(s) scored as no brackets" if failed else ""
    footer = f"{score.sentences} sentences{failures}; percent, punctuation removed"
    return _table(rows) + "\n" + footer


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(
        prog="lal-score-unsupervised",
        description="Unlabelled bracket F1 of unsupervised parses against a Penn Treebank, "
        "punctuation removed (as ON-LSTM and the Tree Transformer evaluate).",
    )
    parser.add_argument("predicted", help="one bracketed tree per line, line k for gold tree k")
    parser.add_argument(
        "gold", help="gold treebank: a file, folder, glob or WSJ range such as DIR/wsj_2300-2399"
    )
    parser.add_argument(
        "--baselines",
        action="store_true",
        help="also score right-branching, left-branching, balanced and random trees",
    )
    parser.add_argument(
        "--seeds",
        type=int,
        default=5,
        help="random baseline: the number of seeds (0, 1, ...) averaged (default: 5)",
    )
    parser.add_argument(
        "--json", action="store_true", help="print a JSON object of fractions, not a table"
    )
    args = parser.parse_args(argv)
    if args.seeds < 1:
        parser.error(f"--seeds must be 1 or more, not {args.seeds}")

    from lal_allennlp.syntax.trees import TreebankFormatError

    try:
        gold_trees = read_gold_trees(args.gold)
        lines = read_lines(args.predicted)
    except (OSError, UnicodeDecodeError, TreebankFormatError) as error:
        print(f"lal-score-unsupervised: {error}", file=sys.stderr)
        return 2
    if len(lines) != len(gold_trees):
        print(
            f"lal-score-unsupervised: {args.predicted} has {len(lines)} lines but {args.gold} "
            f"has {len(gold_trees)} gold trees; give one predicted tree per gold tree, in order "
            "(an empty line for a sentence not parsed)",
            file=sys.stderr,
        )
        return 2
    score, gold, failed = score_lines(lines, gold_trees, args.predicted, sys.stderr)
    seeds = list(range(args.seeds))
    baselines = baseline_scores(gold, seeds) if args.baselines else None
    print(report(score, failed, baselines, seeds, args.json))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
