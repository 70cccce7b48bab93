"""
Unsupervised constituency parsing, the pure part: which words are punctuation (removed before
trees are induced and scored, as the unsupervised-parsing literature does), trees induced from
the Tree Transformer's link probabilities, the trivial baselines, and unlabelled bracket
scores as ON-LSTM computes them.

* `induce_spans` / `induce_tree`: the Tree Transformer's tree induction (Wang, Lee & Chen 2019,
  "Tree Transformer: Integrating Tree Structures into Self-Attention", section 5 and the
  authors' `parse.py`, `build_tree` / `dump_tree`), from the probabilities, per layer, that two
  adjacent words are linked into one constituent.
* `right_branching_spans`, `left_branching_spans`, `balanced_spans`, `random_spans`: baselines.
* `gold_unlabelled_spans`: the unlabelled brackets of a Penn Treebank tree without its
  punctuation, as ON-LSTM's evaluation (Shen et al. 2019, "Ordered Neurons", section 6.2)
  makes them; `UnlabelledBracketScore` accumulates sentence-level and corpus-level F1.

Conventions: a span is `(start, end)` over the words of a sentence, end exclusive. A set of
spans ("brackets") holds spans of at least two words only, and the whole sentence `(0, n)`
whenever `n >= 2`. Scores are fractions in [0, 1].
"""
import dataclasses
import random
import statistics
import unicodedata
from typing import Dict, Iterable, List, Sequence, Set, Tuple

from nltk import Tree

from lal_allennlp.syntax.trees import EMPTY_ELEMENT_TAG, is_preterminal

# Penn Treebank tags removed before evaluation: ON-LSTM's evaluation (Shen et al. 2019,
# `data_ptb.py`), which the Tree Transformer (Wang et al. 2019) follows, keeps only the words
# whose tag is in its list of word tags; the others are these punctuation and symbol tags
# (`-NONE-` traces are already gone, `normalise_tree` removes them).
PUNCTUATION_TAGS = frozenset({".", ",", ":", "``", "''", "-LRB-", "-RRB-", "$", "#"})

# Characters of Unicode punctuation categories that the Penn Treebank tags as words (`%` NN,
# `&` CC, ...): raw text keeps them, as a tagger would.
_WORDLIKE_PUNCTUATION = frozenset("%&@*/")

# Penn Treebank tokens of punctuation that are not made of punctuation characters: the escaped
# brackets and the opening quote (the tokenizer of `lal-parse` and the predictors writes them).
_PTB_PUNCTUATION_TOKENS = frozenset({"-LRB-", "-RRB-", "-LCB-", "-RCB-", "-LSB-", "-RSB-", "``"})

# Universal Dependencies' punctuation tag (UPOS).
UD_PUNCTUATION_TAG = "PUNCT"

# The label of every constituent of an unlabelled tree.
UNLABELLED = "X"

Span = Tuple[int, int]


def is_punctuation_word(word: str) -> bool:
    """A word of raw text (no tag known) is punctuation, as `PUNCTUATION_TAGS` would tag it,
    when it is a Penn Treebank bracket or opening-quote token (`-LRB-`, `` `` ``, ...) or every
    character is Unicode punctuation (category P*) or a currency sign (`$`, `€`), except the
    characters the Penn Treebank tags as words (`%`, `&`, `@`, `*`, `/`)."""
    if word in _PTB_PUNCTUATION_TOKENS:
        return True
    return bool(word) and not any(c in _WORDLIKE_PUNCTUATION for c in word) and all(
        unicodedata.category(c).startswith("P") or unicodedata.category(c) == "Sc" for c in word
    )


# Tree induction ------------------------------------------------------------------------------


def _check_link_probs(link_probs: Sequence[Sequence[float]]) -> List[List[float]]:
    """The link probabilities as lists of floats, all layers of the same length."""
    layers = [[float(p) for p in layer] for layer in link_probs]
    if not layers:
        raise ValueError("link_probs has no layers: give one sequence of n - 1 links per layer")
    lengths = sorted({len(layer) for layer in layers})
    if len(lengths) > 1:
        raise ValueError(
            f"the layers of link_probs have different lengths {lengths}: every layer must hold "
            "one link per pair of adjacent words (n - 1 for n words)"
        )
    return layers


def induce_spans(
    link_probs: Sequence[Sequence[float]],
    split_threshold: float = 0.8,
    descend_threshold: float = 0.7,
    min_layer: int = 2,
) -> Set[Span]:
    """
    The brackets of the tree the Tree Transformer induces from its link probabilities, top
    down (Wang et al. 2019, section 5; the authors' `parse.py`, `build_tree`).

    Parsing starts at the top layer on the whole sentence. A span of two words is a bracket
    with nothing inside. For a longer span at layer `L`, take its weakest link (the first of
    equal ones):

    * If it is above `split_threshold`, the words hold together at this layer: at `min_layer`
      the span is flat (one bracket, its words as children); above it the same span is parsed
      again one layer down.
    * Otherwise the span is split at that link. Each part of at least two words is a bracket
      and is parsed in turn: one layer down (never below `min_layer`) if its own weakest link
      at layer `L` is above `descend_threshold` (the part is already a tight group at `L`),
      else at `L` again.

    Links only grow with depth, so a lower layer splits at least as much as a higher one: the
    top layer makes the coarse splits and lower layers refine them.

    # Parameters

    link_probs : `Sequence[Sequence[float]]`
        Per layer, lowest first, the `n - 1` probabilities that words `k` and `k + 1` are in
        the same constituent (`link_probs[l][k]`).
    split_threshold : `float`, optional (default = `0.8`)
        A span whose weakest link is above this is not split at this layer. The authors' value.
    descend_threshold : `float`, optional (default = `0.7`)
        A part whose weakest link is above this is parsed one layer down. The authors' value.
    min_layer : `int`, optional (default = `2`)
        The lowest layer used, as the authors' `min_layer = 2` (the third layer: the lowest
        layers link almost nothing). With `min_layer` layers or fewer it becomes
        `len(link_probs) - 1`: only the top layer is used.

    # Returns

    `Set[Tuple[int, int]]`
        The brackets `(start, end_exclusive)`: the whole sentence `(0, n)` and every induced
        span of at least two words; empty for `n <= 1`, `{(0, 2)}` for `n == 2`.
    """
    if min_layer < 0:
        raise ValueError(f"min_layer must be 0 or more, not {min_layer}")
    layers = _check_link_probs(link_probs)
    n = len(layers[0]) + 1
    if n <= 1:
        return set()
    lowest = min(min_layer, len(layers) - 1)
    spans = {(0, n)}
    # (start, end_exclusive, layer) of the spans still to parse; each is parsed on its own.
    pending = [(0, n, len(layers) - 1)]
    while pending:
        start, end, layer = pending.pop()
        if end - start <= 2:
            continue
        links = layers[layer]
        # links[k] joins words k and k + 1: the links inside the span are start .. end - 2.
        weakest = min(range(start, end - 1), key=links.__getitem__)
        if links[weakest] > split_threshold:
            if layer > lowest:
                pending.append((start, end, layer - 1))
            continue
        for part_start, part_end in ((start, weakest + 1), (weakest + 1, end)):
            if part_end - part_start < 2:
                continue
            spans.add((part_start, part_end))
            tight = min(links[part_start : part_end - 1]) > descend_threshold
            pending.append((part_start, part_end, max(layer - 1, lowest) if tight else layer))
    return spans


def induce_tree(
    words: Sequence[str],
    link_probs: Sequence[Sequence[float]],
    split_threshold: float = 0.8,
    descend_threshold: float = 0.7,
    min_layer: int = 2,
) -> Tree:
    """
    The tree of `induce_spans` (same arguments) over `words`, as an unlabelled tree (see
    `spans_to_unlabelled_tree`): `(X (X the cat) (X sat down))`. This is the tree of the
    authors' `dump_tree`.
    """
    layers = _check_link_probs(link_probs)
    if len(layers[0]) != len(words) - 1:
        raise ValueError(
            f"{len(words)} words need {len(words) - 1} links per layer, not {len(layers[0])}: "
            f"{list(words)}"
        )
    spans = induce_spans(layers, split_threshold, descend_threshold, min_layer)
    return spans_to_unlabelled_tree(words, spans)


def spans_to_unlabelled_tree(words: Sequence[str], spans: Iterable[Span]) -> Tree:
    """
    The unlabelled tree of nested spans over `words`: each constituent is labelled `X` and
    holds its words as plain strings (no preterminals), so `trees.tree_to_string` gives
    `(X (X the cat) (X sat down))`. The root covers the whole sentence, whether or not `spans`
    holds `(0, n)`; spans of fewer than two words are ignored (a word is its own node). One
    word gives `(X word)`.

    # Raises

    `ValueError` if there are no words, a span lies outside the sentence, or two spans cross.
    """
    n = len(words)
    if n == 0:
        raise ValueError("cannot build a tree over no words")
    chosen = {(0, n)}
    for start, end in spans:
        if not 0 <= start < end <= n:
            raise ValueError(f"the span ({start}, {end}) is not inside the {n} words {list(words)}")
        if end - start >= 2:
            chosen.add((start, end))
    # Outer spans before the spans they hold; (0, n) first.
    ordered = sorted(chosen, key=lambda span: (span[0], -span[1]))
    # Open constituents, outermost first: (start, end, children).
    stack: List[Tuple[int, int, list]] = []
    position = 0  # the first word not yet placed in a constituent

    def close() -> None:
        nonlocal position
        start, end, children = stack.pop()
        children.extend(words[position:end])
        position = end
        stack[-1][2].append(Tree(UNLABELLED, children))

    for start, end in ordered:
        while stack and stack[-1][1] <= start:
            close()
        if stack and end > stack[-1][1]:
            raise ValueError(
                f"the spans ({stack[-1][0]}, {stack[-1][1]}) and ({start}, {end}) cross; "
                "a tree needs nested spans"
            )
        if stack:
            stack[-1][2].extend(words[position:start])
        position = start
        stack.append((start, end, []))
    while len(stack) > 1:
        close()
    _, _, children = stack[0]
    children.extend(words[position:])
    return Tree(UNLABELLED, children)


def unlabelled_spans(tree: Tree) -> Set[Span]:
    """
    The spans of every constituent of `tree` with at least two words, the root (the whole
    sentence) included; labels are ignored. Works on unlabelled trees and on labelled ones
    (preterminals cover one word and give no span).
    """
    spans: Set[Span] = set()

    def visit(node: Tree, start: int) -> int:
        end = start
        for child in node:
            end = end + 1 if isinstance(child, str) else visit(child, end)
        if end - start >= 2:
            spans.add((start, end))
        return end

    if not isinstance(tree, str):
        visit(tree, 0)
    return spans


def project_spans(spans: Iterable[Span], keep: Sequence[bool]) -> Set[Span]:
    """
    Spans over a sentence moved onto the words it keeps (`keep[i]` for word `i`), numbered
    again from 0: a span becomes the span of the kept words it covers, and is left out when
    that is fewer than two words. Used to score a tree over a sentence with punctuation
    against gold brackets without it.
    """
    # kept_before[i]: kept words among words 0 .. i - 1, the new index of word i if kept.
    kept_before = [0]
    for kept in keep:
        kept_before.append(kept_before[-1] + bool(kept))
    projected = set()
    for start, end in spans:
        if not 0 <= start < end <= len(keep):
            raise ValueError(f"the span ({start}, {end}) is not inside the {len(keep)} words")
        if kept_before[end] - kept_before[start] >= 2:
            projected.add((kept_before[start], kept_before[end]))
    return projected


# Baselines -----------------------------------------------------------------------------------


def right_branching_spans(n: int) -> Set[Span]:
    """`(0, n), (1, n), ..., (n - 2, n)`: every suffix of at least two words."""
    return {(start, n) for start in range(n - 1)}


def left_branching_spans(n: int) -> Set[Span]:
    """`(0, 2), (0, 3), ..., (0, n)`: every prefix of at least two words."""
    return {(0, end) for end in range(2, n + 1)}


def _split_spans(start: int, end: int, split_point, spans: Set[Span]) -> Set[Span]:
    """Adds the binary bracketing of `start .. end` that splits each span where
    `split_point(start, end)` says (a word index strictly inside the span)."""
    pending = [(start, end)]
    while pending:
        start, end = pending.pop()
        if end - start < 2:
            continue
        spans.add((start, end))
        middle = split_point(start, end)
        pending.extend(((start, middle), (middle, end)))
    return spans


def balanced_spans(n: int) -> Set[Span]:
    """
    The balanced binary bracketing: each span of `m >= 2` words is split after its first
    `(m + 1) // 2` words, so the left part is the larger one when `m` is odd
    (`n = 5`: `(0, 5), (0, 3), (0, 2), (3, 5)`).
    """
    return _split_spans(0, n, lambda start, end: start + (end - start + 1) // 2, set())


def random_spans(n: int, rng: random.Random) -> Set[Span]:
    """
    A random binary bracketing: each span of two words or more is split at a split point
    drawn uniformly among its `m - 1`, recursively (the "random split" trees of the
    unsupervised-parsing literature). The trees are not uniform over binary trees: balanced
    ones are more likely than under the uniform (Catalan) distribution.
    """
    return _split_spans(0, n, lambda start, end: rng.randint(start + 1, end - 1), set())


# Evaluation ----------------------------------------------------------------------------------


def _words_without_punctuation(
    tree: Tree, punctuation_tags: Iterable[str]
) -> Tuple[List[str], List[bool], Set[Span]]:
    """The words of `tree` (its leaves but `-NONE-` empty elements), whether each is kept
    (not punctuation), and the spans of the constituents over the kept words."""
    dropped = set(punctuation_tags) | {EMPTY_ELEMENT_TAG}
    words: List[str] = []
    keep: List[bool] = []
    kept_words: List[str] = []
    spans: Set[Span] = set()

    def visit(node) -> None:
        if isinstance(node, str):
            # A word outside a preterminal: no tag, so never punctuation.
            words.append(node)
            keep.append(True)
            kept_words.append(node)
            return
        if is_preterminal(node):
            if node.label() == EMPTY_ELEMENT_TAG:
                return
            kept = node.label() not in dropped
            words.append(node[0])
            keep.append(kept)
            if kept:
                kept_words.append(node[0])
            return
        start = len(kept_words)
        for child in node:
            visit(child)
        if len(kept_words) - start >= 2:
            spans.add((start, len(kept_words)))

    visit(tree)
    return kept_words, keep, spans


def gold_unlabelled_spans(
    tree: Tree, punctuation_tags: Iterable[str] = PUNCTUATION_TAGS
) -> Tuple[List[str], Set[Span]]:
    """
    The words and unlabelled brackets of a gold tree without its punctuation, as ON-LSTM's
    and the Tree Transformer's evaluation makes them: words whose POS tag is in
    `punctuation_tags` (and `-NONE-` empty elements) are removed, the others numbered again
    from 0, and every constituent gives the span of the words left under it. Spans of fewer
    than two words are dropped, and a unary chain gives its span once.

    The tree's words are under `(tag word)` preterminals, as in the Penn Treebank (raw or
    normalised by `trees.normalise_tree`); a word straight under a constituent has no tag and
    is kept.

    # Returns

    `Tuple[List[str], Set[Tuple[int, int]]]`
        The words without punctuation, and the brackets over them, the whole sentence
        included (when it has two words or more).
    """
    words, _, spans = _words_without_punctuation(tree, punctuation_tags)
    return words, spans


def kept_word_mask(tree: Tree, punctuation_tags: Iterable[str] = PUNCTUATION_TAGS) -> List[bool]:
    """For each word of `tree` (its leaves but `-NONE-` empty elements), whether
    `gold_unlabelled_spans` keeps it: `False` for punctuation."""
    return _words_without_punctuation(tree, punctuation_tags)[1]


@dataclasses.dataclass
class UnlabelledBracketScore:
    """
    Unlabelled bracket scores accumulated over sentences, as ON-LSTM's evaluation computes
    them (Shen et al. 2019; also used by the Tree Transformer). In each sentence of `n` words
    the trivial brackets are left out of both sides: the whole sentence and spans of fewer
    than two words.

    * Sentence-level F1 (`sentence_f1`), the number these papers report: per sentence,
      precision = matched / predicted and recall = matched / gold; when the sentence has no
      gold bracket, recall is 1, and precision is 1 too if nothing is predicted (so a
      sentence of one or two words scores 1); F1 = 2PR / (P + R), 0 when P + R = 0. Then the
      mean over sentences. Every sentence added counts, short ones included, as in those
      evaluations; filter by length before `add` for length-limited results (WSJ10).
    * Corpus-level (micro) precision, recall and F1 (`corpus_*`) from the matched, predicted
      and gold counts summed over sentences; 0 when a count they divide by is 0.

    All scores are fractions in [0, 1], 0 when no sentence was added. Scores add up with `+`.
    """

    sentences: int = 0
    sentence_f1_sum: float = 0.0
    matched: int = 0
    predicted: int = 0
    gold: int = 0

    def add(self, predicted_spans: Iterable[Span], gold_spans: Iterable[Span], n: int) -> float:
        """Adds one sentence of `n` words and returns its sentence-level F1."""
        predicted = _nontrivial(predicted_spans, n)
        gold = _nontrivial(gold_spans, n)
        matched = len(predicted & gold)
        precision = matched / len(predicted) if predicted else 0.0
        recall = matched / len(gold) if gold else 1.0
        if not gold and not predicted:
            precision = 1.0
        f1 = _f1(precision, recall)
        self.sentences += 1
        self.sentence_f1_sum += f1
        self.matched += matched
        self.predicted += len(predicted)
        self.gold += len(gold)
        return f1

    @property
    def sentence_f1(self) -> float:
        return self.sentence_f1_sum / self.sentences if self.sentences else 0.0

    @property
    def corpus_precision(self) -> float:
        return self.matched / self.predicted if self.predicted else 0.0

    @property
    def corpus_recall(self) -> float:
        return self.matched / self.gold if self.gold else 0.0

    @property
    def corpus_f1(self) -> float:
        return _f1(self.corpus_precision, self.corpus_recall)

    def as_dict(self) -> Dict[str, float]:
        """`sentence_f1`, `corpus_f1`, `corpus_precision` and `corpus_recall`."""
        return {name: getattr(self, name) for name in SCORE_NAMES}

    def to_list(self) -> List[float]:
        """The accumulated fields, in order, for summing over distributed workers."""
        return [float(value) for value in dataclasses.astuple(self)]

    @classmethod
    def from_list(cls, values: Sequence[float]) -> "UnlabelledBracketScore":
        sentences, f1_sum, matched, predicted, gold = values
        return cls(round(sentences), float(f1_sum), round(matched), round(predicted), round(gold))

    def __add__(self, other: "UnlabelledBracketScore") -> "UnlabelledBracketScore":
        return UnlabelledBracketScore(
            self.sentences + other.sentences,
            self.sentence_f1_sum + other.sentence_f1_sum,
            self.matched + other.matched,
            self.predicted + other.predicted,
            self.gold + other.gold,
        )


# The scores of `UnlabelledBracketScore.as_dict`, in order.
SCORE_NAMES = ("sentence_f1", "corpus_f1", "corpus_precision", "corpus_recall")


def _nontrivial(spans: Iterable[Span], n: int) -> Set[Span]:
    """The spans but the whole sentence and those of fewer than two words."""
    return {(start, end) for start, end in spans if end - start >= 2 and (start, end) != (0, n)}


def _f1(precision: float, recall: float) -> float:
    return 2 * precision * recall / (precision + recall) if precision + recall > 0 else 0.0


def baseline_scores(
    gold: Sequence[Tuple[int, Set[Span]]], seeds: Sequence[int] = (0, 1, 2, 3, 4)
) -> Dict[str, List[UnlabelledBracketScore]]:
    """
    The baselines' scores on the same sentences as a parser: `gold` holds, per sentence, its
    number of words (without punctuation) and its gold brackets (`gold_unlabelled_spans`).

    # Returns

    `Dict[str, List[UnlabelledBracketScore]]`
        `"right_branching"`, `"left_branching"` and `"balanced"`, one score each; `"random"`,
        one score per seed (a `random.Random(seed)` drawing every sentence's tree in order);
        `mean_and_std` summarises them.
    """
    baselines = {
        "right_branching": right_branching_spans,
        "left_branching": left_branching_spans,
        "balanced": balanced_spans,
    }
    scores = {name: [UnlabelledBracketScore()] for name in baselines}
    for n, gold_spans in gold:
        for name, spans_of in baselines.items():
            scores[name][0].add(spans_of(n), gold_spans, n)
    scores["random"] = []
    for seed in seeds:
        rng = random.Random(seed)
        score = UnlabelledBracketScore()
        for n, gold_spans in gold:
            score.add(random_spans(n, rng), gold_spans, n)
        scores["random"].append(score)
    return scores


def mean_and_std(scores: Sequence[UnlabelledBracketScore]) -> Dict[str, Tuple[float, float]]:
    """Per score name (`SCORE_NAMES`), the mean and the sample standard deviation over
    `scores` (several random seeds); the deviation is 0 for fewer than two scores."""
    if not scores:
        raise ValueError("no scores to summarise")
    summary = {}
    for name in SCORE_NAMES:
        values = [getattr(score, name) for score in scores]
        spread = statistics.stdev(values) if len(values) > 1 else 0.0
        summary[name] = (statistics.fmean(values), spread)
    return summary
