"""
Head rules: dependencies read off a constituency tree, for treebanks that come without a
dependency file.

The joint span parser (Zhou & Zhao 2019, section 3; Mrini et al. 2020) needs a head word for
every constituent. With a dependency file (`dependencies.py`) the heads come from it; without
one, `HeadFinder` finds the head child of every constituent with a head-rule table and makes
the head word of every non-head child depend on the head word of the head child (Magerman
1995; Collins 1999, appendix A; Penn2Malt and Yamada & Matsumoto 2003 do the same with other
tables).

`COLLINS_HEAD_RULES` is the table of Collins (1999, pp. 238-240) for the English Penn Treebank,
with the NP rule written as ordered passes and the coordination rule (p. 239). The table is a
constructor argument, so another language (or another convention) only needs another table.
On the NLTK Penn Treebank sample (3,669 sentences, `docs/data.md`) these heads
agree with the Penn2Malt heads of its `deps/` files for 84.10% of the words (74,110 of 88,120;
85.38% without the coordination rule); they differ mostly on appositive NPs (`NP , NP`),
`to` + VP, `$ CD`, QP and PRN.

The published LAL / HPSG numbers use Stanford basic dependencies instead, which users convert
with their own tools (see `docs/data.md`); head-rule dependencies are a fallback, and their labels
(`dependency_labels`) are a simple deterministic scheme, not Stanford labels.
"""

from typing import Dict, List, Mapping, Optional, Sequence, Tuple

from nltk import Tree

from lal_allennlp.syntax.dependencies import DependencySentence
from lal_allennlp.syntax.trees import is_preterminal

# One pass of a head rule: a direction and a priority list of child labels.
#
# * "left" / "right": for each label of the list in turn, the first child with that label
#   scanning from the left / right end (the list order has priority; Collins's rules);
# * "left_any" / "right_any": the first child scanning from the left / right end whose label is
#   anywhere in the list (the position has priority; Collins's NP rule).
#
# The passes of a rule are tried in order; if none finds a child, the head child is the first
# child in the direction of the first pass (leftmost for "left", rightmost for "right").
HeadRule = Tuple[str, Tuple[str, ...]]
HeadRules = Mapping[str, Sequence[HeadRule]]
DIRECTIONS = ("left", "right", "left_any", "right_any")
# The rule used for labels missing from a table.
DEFAULT_RULE = "*"
# The table key of the coordination rule's tags (Collins 1999, p. 239): if the child just left of
# the head child has one of these tags and is not the first child, the head child is the child
# left of it (`X CC Y` is headed by X).
COORDINATION = "<coordination>"

_NP_RULE: Tuple[HeadRule, ...] = (
    ("right_any", ("NN", "NNP", "NNPS", "NNS", "NX", "POS", "JJR")),
    ("left", ("NP",)),
    ("right_any", ("$", "ADJP", "PRN")),
    ("right", ("CD",)),
    ("right_any", ("JJ", "JJS", "RB", "QP")),
)

COLLINS_HEAD_RULES: Dict[str, Tuple[HeadRule, ...]] = {
    "ADJP": (
        (
            "left",
            ("NNS", "QP", "NN", "$", "ADVP", "JJ", "VBN", "VBG", "ADJP", "JJR", "NP", "JJS")
            + ("DT", "FW", "RBR", "RBS", "SBAR", "RB"),
        ),
    ),
    "ADVP": (
        (
            "right",
            ("RB", "RBR", "RBS", "FW", "ADVP", "TO", "CD", "JJR", "JJ", "IN", "NP", "JJS", "NN"),
        ),
    ),
    "CONJP": (("right", ("CC", "RB", "IN")),),
    "FRAG": (("right", ()),),
    "INTJ": (("left", ()),),
    "LST": (("right", ("LS", ":")),),
    "NAC": (
        (
            "left",
            ("NN", "NNS", "NNP", "NNPS", "NP", "NAC", "EX", "$", "CD", "QP", "PRP", "VBG", "JJ")
            + ("JJS", "JJR", "ADJP", "FW"),
        ),
    ),
    "NP": _NP_RULE,
    "NX": _NP_RULE,  # not in Collins's table; treated like NP (as Bikel's parser does)
    "PP": (("right", ("IN", "TO", "VBG", "VBN", "RP", "FW")),),
    "PRN": (("left", ()),),
    "PRT": (("right", ("RP",)),),
    "QP": (("left", ("$", "IN", "NNS", "NN", "JJ", "RB", "DT", "CD", "NCD", "QP", "JJR", "JJS")),),
    "RRC": (("right", ("VP", "NP", "ADVP", "ADJP", "PP")),),
    "S": (("left", ("TO", "IN", "VP", "S", "SBAR", "ADJP", "UCP", "NP")),),
    "SBAR": (
        (
            "left",
            ("WHNP", "WHPP", "WHADVP", "WHADJP", "IN", "DT", "S", "SQ", "SINV", "SBAR", "FRAG"),
        ),
    ),
    "SBARQ": (("left", ("SQ", "S", "SINV", "SBARQ", "FRAG")),),
    "SINV": (("left", ("VBZ", "VBD", "VBP", "VB", "MD", "VP", "S", "SINV", "ADJP", "NP")),),
    "SQ": (("left", ("VBZ", "VBD", "VBP", "VB", "MD", "VP", "SQ")),),
    "UCP": (("right", ()),),
    "VP": (
        (
            "left",
            ("TO", "VBD", "VBN", "MD", "VBZ", "VB", "VBG", "VBP", "VP", "ADJP", "NN", "NNS", "NP"),
        ),
    ),
    "WHADJP": (("left", ("CC", "WRB", "JJ", "ADJP")),),
    "WHADVP": (("right", ("CC", "WRB")),),
    "WHNP": (("left", ("WDT", "WP", "WP$", "WHADJP", "WHPP", "WHNP")),),
    "WHPP": (("right", ("IN", "TO", "FW")),),
    "X": (("right", ()),),  # not in Collins's table
    DEFAULT_RULE: (("left", ()),),
    COORDINATION: (("left", ("CC",)),),
}
"""
Collins (1999) head rules for the English Penn Treebank (function tags stripped). `NX` (rule of
NP) and `X` (rightmost child) are additions; labels not in the table take the leftmost child.
"""

HEAD_RULE_TABLES: Dict[str, HeadRules] = {"collins": COLLINS_HEAD_RULES}
"""Head-rule tables by name, as a reader's `head_rules` option names them; add a language's
table here (or pass a table to `HeadFinder` directly)."""

ROOT_LABEL = "ROOT"
"""The dependency label of the root word."""


def head_rules_by_name(name: str) -> HeadRules:
    """The table `HEAD_RULE_TABLES[name]`; a `ValueError` listing the known names otherwise."""
    try:
        return HEAD_RULE_TABLES[name]
    except KeyError:
        known = ", ".join(sorted(HEAD_RULE_TABLES))
        raise ValueError(f"no head-rule table named {name!r}; known: {known}") from None


class HeadFinder:
    """
    Finds the head word of every constituent of a normalised tree with a head-rule table, and
    from them the dependency tree: the head word of each non-head child depends on the head
    word of the head child; the head word of the whole sentence depends on the root (0).

    # Parameters

    rules : `Optional[HeadRules]`, optional (default = `None`)
        Label -> passes (see `HeadRule`); `None` means `COLLINS_HEAD_RULES`. The entry
        `DEFAULT_RULE` ("*") serves labels missing from the table (leftmost child if absent).
        The entry `COORDINATION` holds the tags of the coordination rule in its first pass
        (no coordination rule if absent). Labels are looked up with function tags already
        stripped (the tree is normalised); of a collapsed chain each node uses its own label.
    """

    def __init__(self, rules: Optional[HeadRules] = None) -> None:
        rules = COLLINS_HEAD_RULES if rules is None else rules
        for label, passes in rules.items():
            if not passes:
                raise ValueError(f"the head rule of {label!r} has no passes")
            for direction, _ in passes:
                if direction not in DIRECTIONS:
                    raise ValueError(
                        f"the head rule of {label!r} has the direction {direction!r}; "
                        f"expected one of {DIRECTIONS}"
                    )
        self._rules = {
            label: tuple((direction, tuple(labels)) for direction, labels in passes)
            for label, passes in rules.items()
            if label != COORDINATION
        }
        self._default: Tuple[HeadRule, ...] = self._rules.get(DEFAULT_RULE, (("left", ()),))
        coordination = rules.get(COORDINATION)
        self._coordination = frozenset(coordination[0][1]) if coordination else frozenset()

    def head_child(self, label: str, child_labels: Sequence[str]) -> int:
        """
        The 0-based index of the head child of a constituent labelled `label` whose children
        have the labels (or POS tags) `child_labels`.
        """
        if not child_labels:
            raise ValueError(f"the constituent {label!r} has no children")
        count = len(child_labels)
        passes = self._rules.get(label, self._default)
        found: Optional[int] = None
        for direction, labels in passes:
            order = range(count) if direction.startswith("left") else range(count - 1, -1, -1)
            if direction.endswith("_any"):
                wanted = frozenset(labels)
                found = next((i for i in order if child_labels[i] in wanted), None)
            else:
                for wanted_label in labels:
                    found = next((i for i in order if child_labels[i] == wanted_label), None)
                    if found is not None:
                        break
            if found is not None:
                break
        if found is None:
            found = 0 if passes[0][0].startswith("left") else count - 1
        if found >= 2 and child_labels[found - 1] in self._coordination:
            found -= 2
        return found

    def constituent_heads(self, tree: Tree) -> Tuple[List[int], List[Tuple[int, int, str, int]]]:
        """
        Returns the word heads (as `heads`) and, for every node of the tree except the
        preterminals, `(start, end_exclusive, label, head_word)` with a 1-based head word, in
        pre-order (the root `TOP` first, unary chains node by node).
        """
        heads: List[int] = []
        constituents: List[Tuple[int, int, str, int]] = []

        def visit(node: Tree) -> int:
            # Returns the node's head word (1-based) and sets the heads of its other children.
            if is_preterminal(node):
                heads.append(0)  # set by the parent (or stays 0 for the root word)
                return len(heads)
            position = len(constituents)
            constituents.append((0, 0, "", 0))
            start = len(heads)
            child_heads = []
            child_labels = []
            for child in node:
                if isinstance(child, str):
                    raise ValueError(
                        f"({node.label()} ...) mixes words and constituents at {child!r}"
                    )
                child_heads.append(visit(child))
                child_labels.append(child.label())
            head_index = self.head_child(node.label(), child_labels)
            head = child_heads[head_index]
            for index, child_head in enumerate(child_heads):
                if index != head_index:
                    heads[child_head - 1] = head
            constituents[position] = (start, len(heads), node.label(), head)
            return head

        if isinstance(tree, str) or is_preterminal(tree):
            raise ValueError(f"expected a normalised TOP tree, got {tree!r}")
        visit(tree)
        return heads, constituents

    def heads(self, tree: Tree) -> List[int]:
        """The head of every word of a normalised tree: 1-based, 0 for the root word."""
        return self.constituent_heads(tree)[0]

    def dependencies(self, tree: Tree) -> DependencySentence:
        """
        The dependency tree of a normalised tree: its words and tags, the heads found with the
        rules and the labels of `dependency_labels`.
        """
        heads = self.heads(tree)
        words, tags = zip(*tree.pos())
        return DependencySentence(list(words), list(tags), heads, dependency_labels(tree, heads))


def dependency_labels(tree: Tree, heads: Sequence[int]) -> List[str]:
    """
    Deterministic labels for dependencies read off a tree: the arc to word d is labelled
    `P_M`, where M is the maximal projection of d (the highest node whose words all depend,
    directly or not, on d -- the POS tag if d heads no constituent) and P the label of M's
    parent, the constituent in which d attaches to its head. The root word gets `ROOT`.
    Collapsed unary chains are not used: M is the top node of its chain (`S` of `(S (VP ...))`)
    and P is the node where the branching happens. Examples: `S_NP` (subject), `VP_NP`
    (object), `NP_DT` (determiner), `PP_NP` (object of a preposition), `VP_PP`, `S_.`.

    Works for any heads that agree with the tree (each constituent has one word whose head
    lies outside it); otherwise a word is labelled after the highest node around it that does
    not hold its head.
    """
    n = len(heads)
    labels = [ROOT_LABEL] * n

    def visit(node: Tree, start: int, parent_label: str) -> int:
        # Children first, so that the highest node not holding a word's head labels it last.
        if is_preterminal(node):
            end = start + 1
        else:
            end = start
            for child in node:
                end = visit(child, end, node.label())
        for word in range(start + 1, end + 1):
            head = heads[word - 1]
            if head != 0 and not start < head <= end:
                labels[word - 1] = f"{parent_label}_{node.label()}"
        return end

    if isinstance(tree, str) or is_preterminal(tree):
        raise ValueError(f"expected a normalised TOP tree, got {tree!r}")
    end = 0
    for child in tree:
        end = visit(child, end, tree.label())
    if end != n:
        raise ValueError(f"{n} heads for a tree of {end} words")
    return labels
