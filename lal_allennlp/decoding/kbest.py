"""
Exact k-best trees of a span chart: the lazy k-best algorithm of Huang & Chiang (2005), "Better
k-best Parsing" (Algorithm 3), over the trees the CKY decodes, each counted once.

The CKY (`cky.py`) maximises over labelled *binary* trees, where a span labelled 0 ("no
constituent") disappears from the output: many binary trees give one n-ary tree, so a k-best
list over binary trees would repeat trees. Here the hypergraph is the right-factored one of
the tree CRF (`structs/tree_crf.py`), in which every n-ary labelled tree has exactly one
derivation:

    C(i, i + 1) = R(i, i + 1) = a label l of the word (0 allowed)
    S(i, j)     = C(i, k) x R(k, j)                  one hyperedge per split i < k < j
    C(i, j)     = a label l > 0   x S(i, j)          a constituent
    R(i, j)     = a label l >= 0  x S(i, j)          a constituent, or (l = 0) siblings
    goal        = R(0, n)

A derivation's score is the sum of the chosen labels' chart scores, the tree's score. The
label of a node is a tail of its hyperedge like a sub-derivation: its "k-best list" is the
span's labels sorted by score. Each node keeps its derivations found so far and a heap of
candidates; the next best derivation of a node is popped after pushing the successors of the
last one (one tail's rank advanced), asking the tails for their own next derivations only when
needed. The 1-best pass visits every node and split once (the Viterbi CKY, in Python); each
further tree costs O(n log k)-ish heap operations.

Ties (equal scores) come out in a fixed order: at each node by hyperedge (split point, left to
right), then by the ranks of its tails compared as a tuple (the node's own label first, then
its sub-derivation; a label's rank is its place in its span's sorted list, the smaller label id
first among equal scores). So among equal trees, those that keep the higher nodes' choices come
first: for two words of all-zero scores, the flat tree, then the words' labels change, then the
root's.
"""
import heapq
from typing import Dict, List, Sequence, Tuple

import numpy as np

Tree = Tuple[float, List[Tuple[int, int, int]]]
"""A tree's score and its labelled spans `(i, j, label)` (label > 0), in pre-order."""

# A node: (kind, i, j), kind one of "C", "R", "S".
_Node = Tuple[str, int, int]


class _KBest:
    """The lazy k-best state of one sentence's chart."""

    def __init__(self, scores: np.ndarray, length: int) -> None:
        self.scores = scores
        self.length = length
        self.labels: Dict[Tuple[int, int, bool], Tuple[np.ndarray, np.ndarray]] = {}
        # per node: derivations found (score, edge, ranks), candidate heap, seen set
        self.found: Dict[_Node, List[Tuple[float, int, Tuple[int, ...]]]] = {}
        self.heaps: Dict[_Node, List] = {}
        self.seen: Dict[_Node, set] = {}
        self.edge_list: Dict[_Node, List[List[Tuple[str, object]]]] = {}
        # per node: how many of its derivations have had their successors pushed
        self.expanded: Dict[_Node, int] = {}

    def _label_list(self, i: int, j: int, constituent: bool) -> Tuple[np.ndarray, np.ndarray]:
        """The span's labels (only those > 0 when `constituent`) sorted by score, best first
        (stable: the smaller label id first among equal scores), and their scores."""
        key = (i, j, constituent)
        if key not in self.labels:
            row = np.asarray(self.scores[i, j], dtype=np.float64)
            first = 1 if constituent else 0
            order = np.argsort(-row[first:], kind="stable") + first
            self.labels[key] = (order, row[order])
        return self.labels[key]

    def _edges(self, node: _Node) -> List[List[Tuple[str, object]]]:
        """The hyperedges of `node`, each a list of tails: ("labels", (i, j, constituent)) or
        ("node", node)."""
        kind, i, j = node
        if kind == "S":
            return [[("node", ("C", i, k)), ("node", ("R", k, j))] for k in range(i + 1, j)]
        if j - i == 1:
            return [[("labels", (i, j, False))]]
        return [[("labels", (i, j, kind == "C")), ("node", ("S", i, j))]]

    def _tail_score(self, tail: Tuple[str, object], rank: int):
        """The score of the `rank`-th item of a tail (0-based), or None when it has fewer."""
        what, key = tail
        if what == "labels":
            _, values = self._label_list(*key)  # type: ignore[misc]
            return float(values[rank]) if rank < len(values) else None
        derivations = self.kth(key, rank)  # type: ignore[arg-type]
        return None if derivations is None else derivations[0]

    def _candidate(self, node: _Node, edge: int, ranks: Tuple[int, ...]):
        """Pushes the derivation of `node` by `edge` with tail `ranks`, if every tail has that
        many items and it was not pushed before."""
        if (edge, ranks) in self.seen[node]:
            return
        self.seen[node].add((edge, ranks))
        tails = self.edge_list[node][edge]
        total = 0.0
        for tail, rank in zip(tails, ranks):
            score = self._tail_score(tail, rank)
            if score is None:
                return
            total += score
        heapq.heappush(self.heaps[node], (-total, edge, ranks))

    def kth(self, node: _Node, rank: int):
        """The `rank`-th best derivation of `node` (0-based) as (score, edge, ranks), or None
        when the node has fewer."""
        if node not in self.found:
            self.found[node], self.heaps[node], self.seen[node] = [], [], set()
            self.edge_list.setdefault(node, self._edges(node))
            for edge, tails in enumerate(self.edge_list[node]):
                self._candidate(node, edge, (0,) * len(tails))
        found, heap = self.found[node], self.heaps[node]
        while len(found) <= rank:
            if found:
                # the successors of the last derivation, pushed only now (lazily)
                _, edge, ranks = found[-1]
                if self.expanded.get(node, 0) < len(found):
                    self.expanded[node] = len(found)
                    for t in range(len(ranks)):
                        successor = ranks[:t] + (ranks[t] + 1,) + ranks[t + 1 :]
                        self._candidate(node, edge, successor)
            if not heap:
                return None
            negative, edge, ranks = heapq.heappop(heap)
            found.append((-negative, edge, ranks))
        return found[rank]

    def spans(self, node: _Node, rank: int, out: List[Tuple[int, int, int]]) -> None:
        """Appends the labelled spans of the `rank`-th derivation of `node` in pre-order."""
        _, edge, ranks = self.found[node][rank]
        tails = self.edge_list[node][edge]
        for (what, key), r in zip(tails, ranks):
            if what == "labels":
                i, j, constituent = key  # type: ignore[misc]
                label = int(self._label_list(i, j, constituent)[0][r])
                if label > 0:
                    out.append((i, j, label))
            else:
                self.spans(key, r, out)  # type: ignore[arg-type]


def kbest_trees(scores: np.ndarray, length: int, k: int) -> List[Tree]:
    """
    The `k` highest-scoring trees of one sentence, best first (fewer when the sentence has
    fewer trees): `(score, spans)`, `spans` the tree's labelled spans `(i, j, label)` with
    label > 0 in pre-order (parents before children, left to right), as `SpanChart.argmax`
    gives a tree's rows. `scores`: `(>= length + 1, >= length + 1, num_labels)`, label 0 the
    empty label (its cells count for the word spans and sibling spans that take it, 0 in a
    parser's chart). Ties: see the module docstring.
    """
    if length < 1:
        raise ValueError(f"a sentence needs at least one word, got length {length}")
    if k < 1:
        raise ValueError(f"k must be at least 1, got {k}")
    state = _KBest(scores, length)
    goal: _Node = ("R", 0, length)
    trees: List[Tree] = []
    for rank in range(k):
        derivation = state.kth(goal, rank)
        if derivation is None:
            break
        spans: List[Tuple[int, int, int]] = []
        state.spans(goal, rank, spans)
        trees.append((derivation[0], spans))
    return trees


def kbest_batch(scores: np.ndarray, lengths: Sequence[int], k: int) -> List[List[Tree]]:
    """`kbest_trees` of every sentence of a batch of charts `(batch, n + 1, n + 1, labels)`."""
    return [kbest_trees(scores[b], int(n), k) for b, n in enumerate(lengths)]
