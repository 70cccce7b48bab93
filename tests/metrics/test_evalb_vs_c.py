"""
Our EVALB against the original C program shipped with AllenNLP (`allennlp/tools/EVALB`),
compiled with gcc for the test: on real WSJ trees with perturbed predictions the full standard
output (every sentence line, the totals line and both summary blocks) must be identical.
Skipped when gcc, the EVALB sources or the shared PTB sample are missing.
"""

import copy
import dataclasses
import random
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Callable, List, Optional, Tuple

import allennlp
import pytest
from nltk import Tree

from lal_allennlp.metrics.evalb import (
    COLLINS,
    NK,
    EvalbError,
    EvalbParams,
    evalb_files,
    format_report,
)

REPO_ROOT = Path(__file__).resolve().parents[2]
PTB_TREES = REPO_ROOT.parent / "shared" / "data" / "ptb-sample" / "trees"
EVALB_SOURCE = Path(allennlp.__file__).parent / "tools" / "EVALB"

NUM_SENTENCES = 300
# The C program's fixed buffers: 200 words, 200 brackets, 20 quote terms, 5000 characters.
MAX_ITEMS, MAX_LINE = 190, 4900

try:  # the project's treebank reader, if it is there
    from lal_allennlp.syntax.trees import normalise_tree, parse_trees
except ImportError:  # pragma: no cover - a small local stand-in
    parse_trees = normalise_tree = None


@pytest.fixture(scope="module")
def evalb_binary(tmp_path_factory) -> Path:
    if shutil.which("gcc") is None:
        pytest.skip("gcc is not installed")
    source = EVALB_SOURCE / "evalb.c"
    if not source.is_file():
        pytest.skip(f"{source} is missing")
    binary = tmp_path_factory.mktemp("evalb") / "evalb"
    subprocess.run(["gcc", "-O1", "-w", "-o", str(binary), str(source)], check=True)
    return binary


def _run_c(binary: Path, prm: Path, gold: Path, test: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(binary), "-p", str(prm), str(gold), str(test)],
        capture_output=True,
        text=True,
        timeout=60,
    )


def _flat(tree: Tree) -> str:
    return tree.pformat(margin=sys.maxsize)


# ------------------------------------------------------------------------------------------------
# Trees
# ------------------------------------------------------------------------------------------------


def _read_ptb(path: Path) -> List[Tree]:
    text = path.read_text(encoding="utf-8")
    if parse_trees is not None:
        return [tree for tree, _ in parse_trees(text, source=str(path))]
    trees, depth, start = [], 0, 0
    for position, character in enumerate(text):
        if character == "(":
            if depth == 0:
                start = position
            depth += 1
        elif character == ")":
            depth -= 1
            if depth == 0:
                trees.append(Tree.fromstring(text[start : position + 1]))
    return trees


def _normalise(tree: Tree) -> Optional[Tree]:
    """Traces and function tags removed, TOP root: what a parser would predict."""
    if normalise_tree is not None:
        return normalise_tree(tree)

    def visit(node: Tree) -> Optional[Tree]:
        if len(node) == 1 and isinstance(node[0], str):
            return None if node.label() == "-NONE-" else Tree(node.label(), [node[0]])
        children = [child for child in (visit(c) for c in node) if child is not None]
        label = node.label().split("-")[0].split("=")[0] or node.label()
        return Tree(label, children) if children else None

    return Tree("TOP", [c for c in (visit(c) for c in tree) if c is not None])


def _fits_c_buffers(tree: Tree) -> bool:
    brackets = sum(1 for p in tree.treepositions() if isinstance(tree[p], Tree))
    return (
        len(tree.leaves()) <= MAX_ITEMS
        and brackets <= MAX_ITEMS
        and len(_flat(tree)) <= MAX_LINE
        and sum(leaf in ("'", '"', "/") for leaf in tree.leaves()) <= 15
    )


@pytest.fixture(scope="module")
def wsj_trees() -> List[Tree]:
    if not PTB_TREES.is_dir():
        pytest.skip(f"{PTB_TREES} is missing")
    trees: List[Tree] = []
    for path in sorted(PTB_TREES.glob("wsj_*.mrg")):
        for tree in _read_ptb(path):
            gold = Tree("TOP", list(tree)) if tree.label() == "" else Tree("TOP", [tree])
            if _fits_c_buffers(gold):
                trees.append(gold)
        if len(trees) >= NUM_SENTENCES:
            break
    return trees[:NUM_SENTENCES]


# ------------------------------------------------------------------------------------------------
# Perturbations (each returns False when it does not apply)
# ------------------------------------------------------------------------------------------------

LABELS = ["NP", "VP", "S", "PP", "SBAR", "ADJP", "ADVP", "PRT", "NP-SBJ", "S=2", "QP", "WHNP"]
TAGS = ["NN", "NNS", "VB", "VBD", "JJ", "RB", "IN", "DT", "RP"]
PUNCTUATION = {",", ":", "``", "''", ".", "-NONE-"}


def _is_preterminal(node) -> bool:
    return isinstance(node, Tree) and len(node) == 1 and isinstance(node[0], str)


def _phrases(tree: Tree) -> List[Tuple[int, ...]]:
    return [
        p
        for p in tree.treepositions()
        if p and isinstance(tree[p], Tree) and not _is_preterminal(tree[p])
    ]


def _preterminals(tree: Tree) -> List[Tuple[int, ...]]:
    return [p for p in tree.treepositions() if _is_preterminal(tree[p])]


def delete_bracket(tree: Tree, rng: random.Random) -> bool:
    phrases = _phrases(tree)
    if not phrases:
        return False
    position = rng.choice(phrases)
    parent, index = tree[position[:-1]], position[-1]
    parent[index : index + 1] = list(tree[position])
    return True


def relabel(tree: Tree, rng: random.Random) -> bool:
    phrases = _phrases(tree)
    if not phrases:
        return False
    tree[rng.choice(phrases)].set_label(rng.choice(LABELS))
    return True


def advp_prt(tree: Tree, rng: random.Random) -> bool:
    swap = {"ADVP": "PRT", "PRT": "ADVP"}
    phrases = [p for p in _phrases(tree) if tree[p].label().split("-")[0] in swap]
    if not phrases:
        return False
    node = tree[rng.choice(phrases)]
    node.set_label(swap[node.label().split("-")[0]])
    return True


def move_boundary(tree: Tree, rng: random.Random) -> bool:
    candidates = []
    for p in _phrases(tree):
        parent, index = tree[p[:-1]], p[-1]
        if len(tree[p]) >= 2 and index + 1 < len(parent):
            sibling = parent[index + 1]
            if isinstance(sibling, Tree) and not _is_preterminal(sibling):
                candidates.append(p)
    if not candidates:
        return False
    p = rng.choice(candidates)
    node, sibling = tree[p], tree[p[:-1]][p[-1] + 1]
    sibling.insert(0, node.pop())
    return True


def add_bracket(tree: Tree, rng: random.Random) -> bool:
    candidates = [p for p in [()] + _phrases(tree) if len(tree[p]) >= 3]
    if not candidates:
        return False
    node = tree[rng.choice(candidates)]
    start = rng.randrange(len(node) - 1)
    node[start : start + 2] = [Tree(rng.choice(LABELS), node[start : start + 2])]
    return True


def add_unary(tree: Tree, rng: random.Random) -> bool:
    positions = _phrases(tree) + _preterminals(tree)
    position = rng.choice(positions)
    node = tree[position]
    label = node.label() if not _is_preterminal(node) and rng.random() < 0.5 else "NP"
    tree[position] = Tree(label, [node])
    return True


def change_tag(tree: Tree, rng: random.Random) -> bool:
    positions = [p for p in _preterminals(tree) if tree[p].label() not in PUNCTUATION]
    tree[rng.choice(positions)].set_label(rng.choice(TAGS))
    return True


def punctuation_tag(tree: Tree, rng: random.Random) -> bool:
    """Re-tags one punctuation word with another deleted tag (same words, no error)."""
    positions = [p for p in _preterminals(tree) if tree[p].label() in {",", ":", "."}]
    if not positions:
        return False
    tree[rng.choice(positions)].set_label(rng.choice([",", ":", "."]))
    return True


def function_tag(tree: Tree, rng: random.Random) -> bool:
    phrases = _phrases(tree)
    if not phrases:
        return False
    node = tree[rng.choice(phrases)]
    node.set_label(node.label() + rng.choice(["-SBJ", "=3", "-TMP-1"]))
    return True


def flatten(tree: Tree, rng: random.Random) -> bool:
    tree[:] = [Tree("S", [tree[p] for p in _preterminals(tree)])]
    return True


def change_word(tree: Tree, rng: random.Random) -> bool:
    """Error sentence: words differ."""
    position = rng.choice([p for p in _preterminals(tree) if tree[p].label() not in PUNCTUATION])
    tree[position][0] = tree[position][0] + "X"
    return True


def undelete_punctuation(tree: Tree, rng: random.Random) -> bool:
    """Error sentence (unless a quote term is put back): punctuation tagged as a word."""
    positions = [
        p
        for p in _preterminals(tree)
        if tree[p].label() in PUNCTUATION - {"-NONE-"} and tree[p][0] not in ("'", '"', "/")
    ]
    if not positions:
        return False
    tree[rng.choice(positions)].set_label("NN")
    return True


def swap_quote_tag(tree: Tree, rng: random.Random) -> bool:
    """`(POS ')` <-> `('' ')`: repaired by nk.prm's QUOTE_LABELs, an error with COLLINS.prm."""
    swap = {"POS": "''", "''": "POS"}
    positions = [p for p in _preterminals(tree) if tree[p][0] == "'" and tree[p].label() in swap]
    if not positions:
        return False
    node = tree[rng.choice(positions)]
    node.set_label(swap[node.label()])
    return True


SCORE_CHANGES: List[Callable[[Tree, random.Random], bool]] = [
    delete_bracket,
    relabel,
    advp_prt,
    move_boundary,
    add_bracket,
    add_unary,
    change_tag,
    punctuation_tag,
    function_tag,
]


def _predictions(golds: List[Tree], seed: int, num_errors: int, quote_swaps: bool) -> List[Tree]:
    rng = random.Random(seed)
    error_at = set(rng.sample(range(len(golds)), num_errors))
    predictions = []
    for index, gold in enumerate(golds):
        roll = rng.random()
        # Half keep traces and function tags (like the gold file), half are normalised.
        predicted = copy.deepcopy(gold) if roll < 0.5 else _normalise(gold)
        if index in error_at:
            rng.choice([change_word, undelete_punctuation])(predicted, rng) or change_word(
                predicted, rng
            )
        elif roll < 0.1:
            pass  # left as it is: usually a complete match
        elif roll < 0.13:
            flatten(predicted, rng)
        else:
            for _ in range(rng.randint(1, 4)):
                rng.choice(SCORE_CHANGES)(predicted, rng)
        if quote_swaps and index not in error_at:
            swap_quote_tag(predicted, rng)
        if rng.random() < 0.02:  # a root the gold file does not have: one more bracket
            predicted = Tree("", [predicted])
        predictions.append(predicted)
    return predictions


# Sentences EVALB skips (no word left in the prediction) or that need the special cases.
EXTRA_PAIRS = [
    ("(TOP (. .))", "(TOP (. .))"),
    ("(TOP (S (NN Yes) (. .)))", "(TOP (S (. Yes) (. .)))"),
    ("(TOP (S (NN Yes) (. .)))", "(TOP (S (NN Yes) (. .)))"),
    ("(TOP (S (NP-SBJ (-NONE- *)) (VP (VBD left))))", "(TOP (S (VP (VBD left))))"),
    ("(TOP (S (NP (NP (NNP John))) (VP (VBD ran))))", "(TOP (S (NP (NNP John)) (VP (VBD ran))))"),
    ("(TOP (-X- (NN a) (NN b)))", "(TOP (-Y- (NN a) (NN b)))"),
]


def _write_pairs(directory: Path, golds: List[Tree], predictions: List[Tree]) -> Tuple[Path, Path]:
    gold_lines = [_flat(tree) for tree in golds] + [gold for gold, _ in EXTRA_PAIRS]
    test_lines = [_flat(tree) for tree in predictions] + [test for _, test in EXTRA_PAIRS]
    gold_path, test_path = directory / "gold.txt", directory / "test.txt"
    gold_path.write_text("\n".join(gold_lines) + "\n", encoding="utf-8")
    test_path.write_text("\n".join(test_lines) + "\n", encoding="utf-8")
    return gold_path, test_path


def _assert_same_output(c_stdout: str, ours: str) -> None:
    c_lines, our_lines = c_stdout.splitlines(), ours.splitlines()
    assert len(c_lines) == len(our_lines)
    for number, (c_line, our_line) in enumerate(zip(c_lines, our_lines), start=1):
        assert our_line == c_line, f"output line {number} differs"


def _summary_figures(stdout: str) -> List[float]:
    return [float(line.split("=")[1]) for line in stdout.splitlines() if " = " in line]


SETTINGS = {
    # name: (parameters, number of error sentences, quote swaps)
    "collins": (COLLINS, 11, False),  # 11 errors: the most EVALB accepts with MAX_ERROR 10
    "nk": (NK, 25, True),
    "collins-unlabelled": (dataclasses.replace(COLLINS, labeled=False), 5, False),
    "collins-cutoff-20": (dataclasses.replace(COLLINS, cutoff_length=20), 3, False),
}


@pytest.mark.parametrize("setting", sorted(SETTINGS))
def test_same_output_as_c_evalb(setting, evalb_binary, wsj_trees, tmp_path):
    params, num_errors, quote_swaps = SETTINGS[setting]
    predictions = _predictions(
        wsj_trees, seed=len(setting), num_errors=num_errors, quote_swaps=quote_swaps
    )
    gold_path, test_path = _write_pairs(tmp_path, wsj_trees, predictions)
    if params is COLLINS:
        prm = EVALB_SOURCE / "COLLINS.prm"  # the shipped file itself
    else:
        prm = tmp_path / "params.prm"
        prm.write_text(params.to_prm_text(), encoding="utf-8")

    completed = _run_c(evalb_binary, prm, gold_path, test_path)
    assert completed.returncode == 0, completed.stderr
    result = evalb_files(gold_path, test_path, params)
    _assert_same_output(completed.stdout, format_report(result, per_sentence=True))

    # The data did exercise what it was meant to.
    assert result.skipped == 2
    if quote_swaps:  # some swaps in error sentences are repaired, others are not with COLLINS
        assert num_errors - 3 <= result.errors <= num_errors
        no_quote_repair = dataclasses.replace(params, quote_labels=(), max_error=None)
        assert evalb_files(gold_path, test_path, no_quote_repair).errors > result.errors
    else:
        assert result.errors == num_errors
    assert 0 < result.cutoff.sentences < result.sentences
    assert 0.5 < result.f1 < 0.95 and result.complete_match > 0.05
    # The fractions agree with EVALB's printed percentages.
    figures = _summary_figures(completed.stdout)
    ours = [result.recall, result.precision, result.f1, result.complete_match]
    ours += [result.cutoff.recall, result.cutoff.precision, result.cutoff.f1]
    theirs = [figures[i] for i in (4, 5, 6, 7)] + [figures[i] for i in (16, 17, 18)]
    assert [round(100 * value, 2) for value in ours] == pytest.approx(theirs, abs=0.0051)
    assert round(100 * result.tagging_accuracy, 2) == pytest.approx(figures[11], abs=0.0051)


def test_too_many_errors_stop_both(evalb_binary, wsj_trees, tmp_path):
    golds = wsj_trees[:15]
    predictions = [copy.deepcopy(tree) for tree in golds]
    for tree in predictions[:12]:
        change_word(tree, random.Random(0))
    gold_path, test_path = tmp_path / "gold.txt", tmp_path / "test.txt"
    gold_path.write_text("\n".join(_flat(tree) for tree in golds) + "\n", encoding="utf-8")
    test_path.write_text("\n".join(_flat(tree) for tree in predictions) + "\n", encoding="utf-8")
    completed = _run_c(evalb_binary, EVALB_SOURCE / "COLLINS.prm", gold_path, test_path)
    assert completed.returncode == 1 and "Summary" not in completed.stdout
    with pytest.raises(EvalbError, match="sentence 12 "):
        evalb_files(gold_path, test_path, COLLINS)


@pytest.mark.parametrize(
    "folder, gold, test, prm",
    [("sample", "sample.gld", "sample.tst", "sample.prm"), ("bug", "bug.gld", "bug.tst", None)],
)
def test_shipped_examples(folder, gold, test, prm, evalb_binary, tmp_path):
    """EVALB's own examples; the sample's two empty test lines (skipped by EVALB, parser
    failures for us) are left out of both files."""
    directory = EVALB_SOURCE / folder
    if not directory.is_dir():
        pytest.skip(f"{directory} is missing")
    gold_lines = (directory / gold).read_text(encoding="utf-8").splitlines()
    test_lines = (directory / test).read_text(encoding="utf-8").splitlines()
    kept = [i for i, line in enumerate(test_lines) if line.strip()]
    gold_path, test_path = tmp_path / "gold.txt", tmp_path / "test.txt"
    gold_path.write_text("".join(gold_lines[i] + "\n" for i in kept), encoding="utf-8")
    test_path.write_text("".join(test_lines[i] + "\n" for i in kept), encoding="utf-8")
    prm_path = directory / prm if prm else EVALB_SOURCE / "new.prm"
    completed = _run_c(evalb_binary, prm_path, gold_path, test_path)
    assert completed.returncode == 0, completed.stderr
    params = EvalbParams.from_prm_file(prm_path)
    result = evalb_files(gold_path, test_path, params)
    _assert_same_output(completed.stdout, format_report(result, per_sentence=True))
