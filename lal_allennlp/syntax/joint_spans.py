"""
Joint span trees (Zhou & Zhao 2019, "Head-Driven Phrase Structure Grammar Parsing on Penn
Treebank", section 3.1; used unchanged by Mrini et al. 2020, LAL-Parser): a constituency tree
and a dependency tree of the same words as one labelled tree that the joint span decoder
(`lal_allennlp.decoding.joint_span_decode`) scores and outputs. Pure Python, no torch.

Definition
----------
Take a normalised `TOP` tree (`trees.normalise_tree`) with unary chains collapsed into joint
labels exactly as `trees.tree_to_spans` does (`S+VP`; a chain over one word, `(NP (PRP he))`,
is a labelled one-word span), and heads `heads[w - 1]` for words w = 1..n (0 = root).

1. **Root span.** The span (0, n) is always labelled: by the constituent over the whole
   sentence if `TOP` has a single child that is not a bare preterminal, otherwise by
   `ROOT_SPAN_LABEL` ("TOP"), which stands for "no constituent" and is dropped again on the
   way back (`(TOP (NP ...) (. .))`, or a one-word sentence `(TOP (UH Yes))`).
2. **One head per constituent.** Every constituent (and the root span) has exactly one word
   whose head lies outside it (or is 0): its *head word*. So the dependents of every
   constituent's words form a subtree rooted at its head word, and exactly one word of the
   sentence has head 0.
3. **Siblings link by their heads.** Within a constituent with children c_1 .. c_m (words and
   constituents) the head child contains the head word; the head word of every other child
   attaches to the head word of a sibling -- not to another word inside it -- and these links
   form a tree over the children rooted at the head child.
4. **Projective among siblings.** In that tree over the children, every child and its
   descendants are adjacent.
5. **`<H>` spans.** A non-head child c_i that has dependents among its siblings is grouped
   with all its descendants there into one span labelled `SUB_HEAD_LABEL` ("<H>"), the
   sub-head node of Zhou & Zhao, recursively (a dependent with dependents of its own gets its
   own `<H>` inside). Zhou & Zhao's code makes one level of `<H>` (a sibling with dependents
   that are leaves); this is the same wherever that suffices. After grouping, every child of a
   constituent or `<H>` node attaches directly to its head child.

Conditions 2-4 hold exactly when the dependency tree is projective and agrees with the
constituents in this way; trees/dependencies that break one raise `JointSpanError` naming the
sentence, the constituent and the words.

The joint spans are all labelled spans: the spans of `tree_to_spans`, the `<H>` spans and the
root span if it is "TOP". They are in the decoder's search space: binarise each node by
attaching its children to the head child one by one (`binarize_joint_spans`); every dependent
half longer than a word is then a labelled node, every other new node is empty (label 0), as
the decoder requires (see `lal_allennlp/decoding/joint_span.py`). Going back,
`joint_spans_to_tree_and_heads` drops empty, `<H>` and "TOP" spans and rebuilds the tree from
the rest with `trees.spans_to_tree`; the heads are passed through. So
`joint_spans_to_tree_and_heads(words, tags, joint.spans, joint.heads) == (tree, heads)` for
every `joint = tree_and_heads_to_joint_spans(tree, heads)`, and decoder output (rows
`(i, j, label_id)`, label 0 empty, 1 `<H>`) converts the same way.
"""

from dataclasses import dataclass
from typing import Dict, List, NoReturn, Optional, Sequence, Tuple, Union

from nltk import Tree

from lal_allennlp.syntax.trees import collapse_label, is_preterminal, spans_to_tree

SUB_HEAD_LABEL = "<H>"
"""The label of sub-head spans; label id 1 of the decoder."""
EMPTY_LABEL = ""
"""No constituent; label id 0 of the decoder."""
ROOT_SPAN_LABEL = "TOP"
"""The label of the span (0, n) when no constituent covers the whole sentence."""
EMPTY_ID = 0
SUB_HEAD_ID = 1

Label = Union[str, int]


class JointSpanError(ValueError):
    """A tree and dependencies that the joint span representation cannot hold."""


@dataclass
class JointSpanTree:
    """
    A tree and its dependencies as joint spans.

    # Parameters

    words : `List[str]`
    tags : `List[str]`
    spans : `List[Tuple[int, int, str]]`
        `(start, end_exclusive, label)`, sorted by `(start, -end)` (parents first): the spans of
        `trees.tree_to_spans` (joint labels such as `S+VP`), the `<H>` spans, and
        `(0, n, "TOP")` if no constituent covers the sentence. Every other span is empty.
    heads : `List[int]`
        `heads[w - 1]` is the head of word w (1-based, 0 = root).
    """

    words: List[str]
    tags: List[str]
    spans: List[Tuple[int, int, str]]
    heads: List[int]


class _Node:
    """A labelled span (or a word) and its children, with its head word once known."""

    __slots__ = ("start", "end", "label", "children", "head")

    def __init__(self, start: int, end: int, label: Optional[str], children: List["_Node"]):
        self.start = start
        self.end = end
        self.label = label  # None for a bare word
        self.children = children  # empty for a word
        self.head = 0


def _collapse_unary_chains(tree: Tree) -> Tuple[_Node, List[str], List[str]]:
    """The tree with unary chains collapsed (as `tree_to_spans`), rooted at the root span."""
    words: List[str] = []
    tags: List[str] = []

    def visit(node: Tree, chain: List[str]) -> _Node:
        if isinstance(node, str):
            raise ValueError(f"the tree holds the word {node!r} outside a (POS word) preterminal")
        if is_preterminal(node):
            index = len(words)
            words.append(list.__getitem__(node, 0))
            tags.append(node.label())
            return _Node(index, index + 1, collapse_label(chain) if chain else None, [])
        if len(node) == 1:
            return visit(list.__getitem__(node, 0), chain + [node.label()])
        start = len(words)
        children = [visit(child, []) for child in node]
        return _Node(start, len(words), collapse_label(chain + [node.label()]), children)

    if isinstance(tree, str) or is_preterminal(tree):
        raise ValueError(f"expected a normalised TOP tree, got {tree!r}")
    top = [visit(child, []) for child in tree]
    n = len(words)
    if len(top) == 1 and top[0].label is not None:
        root = top[0]
    else:
        root = _Node(0, n, ROOT_SPAN_LABEL, top)
    return root, words, tags


def _describe(words: Sequence[str], start: int, end: int) -> str:
    shown = words[start:end]
    text = " ".join(shown if len(shown) <= 8 else list(shown[:4]) + ["..."] + list(shown[-3:]))
    return f"words {start + 1}-{end} ({text!r})"


def _name(node: _Node, words: Sequence[str]) -> str:
    label = "the word" if node.label is None else f"the constituent {node.label}"
    if node.label is None:
        return f"{label} {node.start + 1} ({words[node.start]!r})"
    return f"{label} over {_describe(words, node.start, node.end)}"


def _first_words(words: Sequence[str]) -> str:
    """Names a sentence in error messages by its words (the first and last ones if long)."""
    shown = list(words) if len(words) <= 10 else list(words[:6]) + ["..."] + list(words[-3:])
    return f"the sentence {' '.join(shown)!r}"


def tree_and_heads_to_joint_spans(
    tree: Tree, heads: Sequence[int], sentence: Optional[str] = None
) -> JointSpanTree:
    """
    Converts a normalised `TOP` tree and its dependency heads to joint spans (see the module
    docstring for the definition).

    # Parameters

    tree : `Tree`
        A tree normalised by `trees.normalise_tree`.
    heads : `Sequence[int]`
        `heads[w - 1]` is the head of word w: 1-based, 0 for the root.
    sentence : `Optional[str]`, optional (default = `None`)
        Names the sentence in error messages (e.g. `"wsj_0001.mrg, line 1"`); by default its
        first words.

    # Raises

    `JointSpanError` (a `ValueError`) naming the sentence, the constituent and the words if the
    heads are not one per word in 0..n, or break a condition of the definition: a constituent
    with several (or no) words whose heads lie outside it, a word attached to a non-head word of
    a sibling constituent, a cycle, or dependencies that are not projective.
    """
    root, words, tags = _collapse_unary_chains(tree)
    heads = [int(head) for head in heads]
    if sentence is None:
        sentence = _first_words(words)
    converter = _JointSpanConverter(words, heads, sentence)
    converter.check_heads()
    converter.convert(root)
    spans = sorted(converter.spans, key=lambda span: (span[0], -span[1]))
    return JointSpanTree(words, tags, spans, heads)


class _SiblingTree:
    """
    The dependency tree over the children of one constituent (condition 3 of the definition),
    rooted at the head child: the head word of child `i` attaches to the head word of child
    `governors[i]` (-1 for the head child); `dependents[i]` lists those children, in order.
    """

    __slots__ = ("children", "head_child", "governors", "dependents")

    def __init__(self, children: List[_Node], head_child: int, governors: List[int]) -> None:
        self.children = children
        self.head_child = head_child
        self.governors = governors
        self.dependents: List[List[int]] = [[] for _ in children]
        for i, governor in enumerate(governors):
            if governor >= 0:
                self.dependents[governor].append(i)

    def is_flat(self) -> bool:
        """Whether every child other than the head child attaches to the head child."""
        return all(governor == self.head_child for governor in self.governors if governor >= 0)


class _JointSpanConverter:
    """
    Turns the collapsed tree of one sentence into joint spans, bottom-up: finds the head word
    of every node, checks conditions 2-4 of the definition (raising `JointSpanError` naming the
    sentence) and groups siblings into `<H>` nodes (condition 5). `spans` collects the labelled
    spans in the order they are found.
    """

    def __init__(self, words: List[str], heads: List[int], sentence: str) -> None:
        self.words = words
        self.heads = heads
        self.sentence = sentence
        self.spans: List[Tuple[int, int, str]] = []

    def fail(self, problem: str) -> NoReturn:
        raise JointSpanError(
            f"{self.sentence}: {problem}. The joint span representation (Zhou & Zhao 2019) needs "
            "projective dependencies that agree with the constituents: one head word per "
            "constituent, and siblings linked through their head words"
        )

    def check_heads(self) -> None:
        """One head per word, each in 0..n and not the word itself."""
        n = len(self.words)
        if len(self.heads) != n:
            self.fail(f"{len(self.heads)} heads for {n} words")
        for index, head in enumerate(self.heads):
            if not 0 <= head <= n or head == index + 1:
                self.fail(f"word {index + 1} ({self.words[index]!r}) has the head {head}")

    def convert(self, node: _Node) -> None:
        """Sets `node.head`, checks the node, and regroups its children with `<H>` nodes."""
        if node.label is not None:
            self.spans.append((node.start, node.end, node.label))
        if not node.children:
            node.head = node.start + 1
            return
        for child in node.children:
            self.convert(child)
        node.head = self._head_word(node)
        siblings = self._link_siblings(node)
        if siblings.is_flat():
            return  # every child attaches to the head child: nothing to group (the usual case)
        self._check_projective(node, siblings)
        node.children = self._group_sub_heads(siblings, siblings.head_child)

    def _head_word(self, node: _Node) -> int:
        """Condition 2: the one word of `node` whose head lies outside it."""
        heads, words = self.heads, self.words
        # Words whose head lies outside the node: only children's head words can be.
        outside = [
            child.head
            for child in node.children
            if not node.start < heads[child.head - 1] <= node.end
        ]
        if len(outside) != 1:
            if not outside:
                self.fail(f"no word of {_name(node, words)} has its head outside it (a cycle)")
            shown = ", ".join(f"{w} ({words[w - 1]!r}, head {heads[w - 1]})" for w in outside)
            self.fail(
                f"{_name(node, words)} has {len(outside)} words whose heads lie outside it: {shown}"
            )
        return outside[0]

    def _link_siblings(self, node: _Node) -> _SiblingTree:
        """Condition 3: the head word of every non-head child attaches to a sibling's head word."""
        children = node.children
        by_head: Dict[int, int] = {child.head: i for i, child in enumerate(children)}
        head_child = by_head[node.head]
        governors = [-1] * len(children)
        for i, child in enumerate(children):
            if i == head_child:
                continue
            governor = self.heads[child.head - 1]
            if governor not in by_head:
                self._fail_inside_sibling(node, child, governor)
            governors[i] = by_head[governor]
        return _SiblingTree(children, head_child, governors)

    def _fail_inside_sibling(self, node: _Node, child: _Node, governor: int) -> NoReturn:
        words = self.words
        sibling = next(c for c in node.children if c.start < governor <= c.end)
        dependent = f"word {child.head} ({words[child.head - 1]!r})"
        if child.children:
            dependent = f"the head {dependent} of {_name(child, words)}"
        self.fail(
            f"in {_name(node, words)}, {dependent} depends on word {governor} "
            f"({words[governor - 1]!r}), which is not the head word of {_name(sibling, words)}"
        )

    def _check_projective(self, node: _Node, siblings: _SiblingTree) -> None:
        """
        Condition 4: every child and its descendants among the siblings are adjacent; and every
        child reaches the head child (no cycle).
        """
        reached = [False] * len(siblings.children)
        self._descendant_range(node, siblings, siblings.head_child, reached)
        if not all(reached):
            word = siblings.children[reached.index(False)].head
            self.fail(
                f"in {_name(node, self.words)}, the head words of the children form a cycle "
                f"through word {word} ({self.words[word - 1]!r})"
            )

    def _descendant_range(
        self, node: _Node, siblings: _SiblingTree, i: int, reached: List[bool]
    ) -> Tuple[int, int, int]:
        """
        The first and last child index and the number of children in the subtree of child `i`
        (marked in `reached`); fails if that subtree is not a run of adjacent children.
        """
        reached[i] = True
        low = high = i
        size = 1
        for d in siblings.dependents[i]:
            d_low, d_high, d_size = self._descendant_range(node, siblings, d, reached)
            low = min(low, d_low)
            high = max(high, d_high)
            size += d_size
        if high - low + 1 != size:
            first, last = siblings.children[low], siblings.children[high]
            word = siblings.children[i].head
            self.fail(
                f"the dependencies are not projective: in {_name(node, self.words)}, word {word} "
                f"({self.words[word - 1]!r}) and its dependents are not adjacent: other words lie "
                f"between them within {_describe(self.words, first.start, last.end)}"
            )
        return low, high, size

    def _group_sub_heads(self, siblings: _SiblingTree, i: int) -> List[_Node]:
        """
        Condition 5: the subtree of child `i` in order, as one `<H>` node if child `i` has
        dependents and is not the head child, else as it is.
        """
        items: List[_Node] = []
        for d in siblings.dependents[i]:
            if d < i:
                items.extend(self._group_sub_heads(siblings, d))
        items.append(siblings.children[i])
        for d in siblings.dependents[i]:
            if d > i:
                items.extend(self._group_sub_heads(siblings, d))
        if i == siblings.head_child or len(items) == 1:
            return items
        sub_head = _Node(items[0].start, items[-1].end, SUB_HEAD_LABEL, items)
        sub_head.head = siblings.children[i].head
        self.spans.append((sub_head.start, sub_head.end, SUB_HEAD_LABEL))
        return [sub_head]


def _label_string(label: Optional[Label], label_names: Optional[Sequence[str]]) -> str:
    """Label ids to strings: 0 is empty, 1 is <H>, others looked up in label_names."""
    if label is None:
        return EMPTY_LABEL
    if isinstance(label, str):
        return label
    label_id = int(label)  # numpy ints too
    if label_id == EMPTY_ID:
        return EMPTY_LABEL
    if label_id == SUB_HEAD_ID:
        return SUB_HEAD_LABEL
    if label_names is None:
        raise ValueError(f"the label id {label_id} needs label_names to be turned into a label")
    return label_names[label_id]


def joint_spans_to_tree_and_heads(
    words: Sequence[str],
    tags: Sequence[str],
    spans: Sequence[Tuple[int, int, Label]],
    heads: Sequence[int],
    label_names: Optional[Sequence[str]] = None,
) -> Tuple[Tree, List[int]]:
    """
    The constituency tree and the heads of joint spans: the inverse of
    `tree_and_heads_to_joint_spans`, and the reading of the joint span decoder's output.

    # Parameters

    words : `Sequence[str]`
    tags : `Sequence[str]`
    spans : `Sequence[Tuple[int, int, Union[str, int]]]`
        `(start, end_exclusive, label)` rows in any order: the labelled joint spans, or the
        decoder's `spans[b]` rows `(i, j, label_id)` (all 2n - 1 nodes of its binary tree).
        Label id 0 or `""` (or `None`) is empty, id 1 or `"<H>"` a sub-head node; both are
        dropped, and so is the label "TOP" (no constituent over the sentence).
    heads : `Sequence[int]`
        `heads[w - 1]` is the head of word w (0 = root); returned as a list of ints.
    label_names : `Optional[Sequence[str]]`, optional (default = `None`)
        Label id -> label string for the ids 2.. (ids 0 and 1 always mean empty and `<H>`);
        needed only for integer labels.

    # Returns

    `(tree, heads)`: a `TOP` tree with unary chains expanded (`S+VP` -> `(S (VP ...))`).

    # Raises

    `ValueError` if the lengths of words, tags and heads differ, or the spans are out of range,
    cross or repeat.
    """
    n = len(words)
    if len(heads) != n:
        raise ValueError(f"{n} words but {len(heads)} heads")
    tree = spans_to_tree(words, tags, joint_constituents(spans, label_names))
    return tree, [int(head) for head in heads]


def joint_constituents(
    spans: Sequence[Tuple[int, int, Label]], label_names: Optional[Sequence[str]] = None
) -> List[Tuple[int, int, str]]:
    """
    The constituents among joint spans (`joint_spans_to_tree_and_heads`'s `spans` and
    `label_names`): `(start, end_exclusive, label)` in the order given, without the empty and
    `<H>` nodes and the label "TOP". For the decoder's rows (pre-order) they are the
    `labelled_spans` of the tree they make (`tree_to_spans`), without building it first.
    """
    constituents = []
    for row in spans:
        label = _label_string(row[2], label_names)
        if label in (EMPTY_LABEL, SUB_HEAD_LABEL, ROOT_SPAN_LABEL):
            continue
        constituents.append((int(row[0]), int(row[1]), label))
    return constituents


def binarize_joint_spans(
    n: int, spans: Sequence[Tuple[int, int, str]], heads: Sequence[int]
) -> List[Tuple[int, int, str, int]]:
    """
    A binary tree of the joint spans as the decoder outputs one: 2n - 1 rows
    `(start, end_exclusive, label, head_word)` in pre-order (parent, left, right), where the
    nodes added by binarisation and the unlabelled words have the label `""` (id 0). Each node
    attaches its children to its head child one at a time, left dependents outermost (first
    the leftmost), then right dependents (first the rightmost) -- the decoder's tie-breaking
    (smallest split first) on a chart that scores all binarisations alike. Summing a chart's
    scores over these rows (labels) and the arcs of `heads` gives the score the decoder gives
    this tree.

    # Parameters

    n : `int`
        The number of words.
    spans : `Sequence[Tuple[int, int, str]]`
        The joint spans (`JointSpanTree.spans`); must include (0, n).
    heads : `Sequence[int]`
        Heads consistent with the spans (as from `tree_and_heads_to_joint_spans`).
    """
    ordered = sorted(spans, key=lambda span: (span[0], -span[1]))
    if not ordered or (ordered[0][0], ordered[0][1]) != (0, n):
        raise ValueError("the joint spans must include the root span (0, n)")
    # Nest the spans; words not covered by a one-word span become unlabelled leaves.
    root = _Node(0, n, ordered[0][2], [])
    stack = [root]
    for start, end, label in ordered[1:]:
        while not (stack[-1].start <= start and end <= stack[-1].end):
            stack.pop()
        node = _Node(start, end, label, [])
        stack[-1].children.append(node)
        stack.append(node)

    def fill(node: _Node) -> None:
        if node.end - node.start == 1 and not node.children:
            node.head = node.start + 1
            return
        children = []
        position = node.start
        for child in node.children:
            children.extend(_Node(w, w + 1, EMPTY_LABEL, []) for w in range(position, child.start))
            children.append(child)
            position = child.end
        children.extend(_Node(w, w + 1, EMPTY_LABEL, []) for w in range(position, node.end))
        node.children = children
        for child in children:
            fill(child)
        outside = [c.head for c in children if not node.start < heads[c.head - 1] <= node.end]
        if len(outside) != 1:
            raise ValueError(f"the heads do not fit the span ({node.start}, {node.end})")
        node.head = outside[0]

    fill(root)
    rows: List[Tuple[int, int, str, int]] = []

    def emit_node(node: _Node) -> None:
        if not node.children:  # a word (a span of two or more words has two or more children)
            rows.append((node.start, node.end, node.label, node.head))
        else:
            emit_items(node.label, node.head, node.children)

    def emit_items(label: str, head: int, items: List[_Node]) -> None:
        # A binary node over the adjacent `items` (two or more), headed by the item holding
        # `head`: the leftmost item is split off if it is a dependent, else the rightmost.
        rows.append((items[0].start, items[-1].end, label, head))
        if not items[0].start < head <= items[0].end:
            emit_node(items[0])
            emit_rest(head, items[1:])
        else:
            emit_rest(head, items[:-1])
            emit_node(items[-1])

    def emit_rest(head: int, items: List[_Node]) -> None:
        if len(items) == 1:
            emit_node(items[0])  # the head child itself
        else:
            emit_items(EMPTY_LABEL, head, items)

    emit_node(root)
    if len(rows) != 2 * n - 1:  # pragma: no cover - a bug, not a user error
        raise AssertionError(f"{len(rows)} nodes for {n} words")
    return rows
