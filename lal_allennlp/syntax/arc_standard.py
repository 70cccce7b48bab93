"""
The arc-standard transition system (Nivre 2004) with a root word, the pure part: the
configurations, which transitions are legal, the static oracle, projectivity. No torch; the
batched tensor version used by the stack-attention parser is `lal_allennlp.structs.arc_standard`
and is tested against this one.

A configuration is a stack, a buffer and the arcs built so far. Position 0 is the root, words
are 1..n. The stack starts as `[0]` and the buffer as `1..n`:

* `SHIFT` moves the buffer's first word onto the stack (legal while the buffer is not empty);
* `LEFT-ARC(l)` makes the top `s0` the head of the word under it `s1` (label `l`) and pops
  `s1` (legal when `s1` is a word, not the root);
* `RIGHT-ARC(l)` makes `s1` the head of `s0` and pops `s0` (legal when `s1` is a word, or when
  `s1` is the root, `s0` is the only word left on the stack and the buffer is empty: the root
  gets exactly one dependent, so every derivation is a tree with a single root).

Every sentence of `n` words takes exactly `2n` transitions (`n` shifts, `n` arcs), and every
sequence of legal transitions ends in a projective tree. Zhang et al. (2017, section 3.1) mark
each word as pushed (`s_t = 1` once shifted) and popped (`r_t = 1` once it got its head);
`pushed` and `popped` below are those vectors.
"""
from typing import List, Optional, Sequence, Tuple

SHIFT = "SHIFT"
LEFT_ARC = "LEFT-ARC"
RIGHT_ARC = "RIGHT-ARC"
_SEPARATOR = ":"

Transition = Tuple[str, Optional[str]]
"""`(action, label)`: `("SHIFT", None)`, `("LEFT-ARC", "nsubj")`, `("RIGHT-ARC", "root")`."""


class NonProjectiveError(ValueError):
    """The tree has crossing arcs: no arc-standard derivation builds it."""


def transition_name(action: str, label: Optional[str] = None) -> str:
    """`SHIFT`, `LEFT-ARC:nsubj`, `RIGHT-ARC:root`: the vocabulary entry of a transition."""
    if action == SHIFT:
        return SHIFT
    if action not in (LEFT_ARC, RIGHT_ARC):
        raise ValueError(f"unknown transition {action!r}; expected {SHIFT}, {LEFT_ARC}, {RIGHT_ARC}")
    return f"{action}{_SEPARATOR}{label}"


def parse_transition_name(name: str) -> Transition:
    """The inverse of `transition_name`; the label may itself contain `:` (`nmod:poss`)."""
    if name == SHIFT:
        return SHIFT, None
    action, separator, label = name.partition(_SEPARATOR)
    if action not in (LEFT_ARC, RIGHT_ARC) or not separator:
        raise ValueError(f"{name!r} is not a transition name (SHIFT, LEFT-ARC:label, RIGHT-ARC:label)")
    return action, label


class Configuration:
    """
    One arc-standard configuration over `length` words.

    `heads[i]` / `labels[i]` are word `i`'s head and label (index 0, the root, stays `None`);
    `pushed[i]` / `popped[i]` say whether word `i` has been shifted onto the stack / has got
    its head and left it (the root counts as pushed from the start and is never popped).
    """

    def __init__(self, length: int) -> None:
        if length < 1:
            raise ValueError("a sentence needs at least one word")
        self.length = length
        self.stack: List[int] = [0]
        self.next_word = 1
        self.heads: List[Optional[int]] = [None] * (length + 1)
        self.labels: List[Optional[str]] = [None] * (length + 1)
        self.pushed = [True] + [False] * length
        self.popped = [False] * (length + 1)

    @property
    def buffer_empty(self) -> bool:
        return self.next_word > self.length

    @property
    def is_terminal(self) -> bool:
        return self.buffer_empty and len(self.stack) == 1

    def is_legal(self, action: str) -> bool:
        if action == SHIFT:
            return not self.buffer_empty
        if action == LEFT_ARC:
            return len(self.stack) >= 3
        if action == RIGHT_ARC:
            return len(self.stack) >= 3 or (len(self.stack) == 2 and self.buffer_empty)
        raise ValueError(f"unknown action {action!r}")

    def apply(self, action: str, label: Optional[str] = None) -> None:
        if not self.is_legal(action):
            raise ValueError(
                f"{action} is not legal with stack {self.stack} and "
                f"{self.length - self.next_word + 1} word(s) in the buffer"
            )
        if action == SHIFT:
            self.stack.append(self.next_word)
            self.pushed[self.next_word] = True
            self.next_word += 1
            return
        top = self.stack.pop()
        below = self.stack.pop()
        if action == LEFT_ARC:
            head, dependent = top, below
        else:
            head, dependent = below, top
        self.heads[dependent] = head
        self.labels[dependent] = label
        self.popped[dependent] = True
        self.stack.append(head)


def follow(length: int, transitions: Sequence[Transition]) -> Configuration:
    """The configuration reached from the start by `transitions` (each must be legal)."""
    configuration = Configuration(length)
    for action, label in transitions:
        configuration.apply(action, label)
    return configuration


def is_projective(heads: Sequence[int]) -> bool:
    """
    Whether the tree `heads` (`heads[i]` the 1-based head of word `i + 1`, 0 the root) has no
    crossing arcs, the root's arc included.
    """
    arcs = [(min(i + 1, h), max(i + 1, h)) for i, h in enumerate(heads)]
    for left, right in arcs:
        for other_left, other_right in arcs:
            if left < other_left < right < other_right:
                return False
    return True


def oracle(heads: Sequence[int], labels: Optional[Sequence[str]] = None) -> List[Transition]:
    """
    The static arc-standard oracle: the transitions that build the tree `heads` (1-based, 0 the
    root) with `labels` (one per word; `None` gives every arc the label `_`). It prefers
    `LEFT-ARC`, then `RIGHT-ARC` once `s0` has all its dependents, then `SHIFT`.

    # Raises

    `NonProjectiveError` if the tree is not projective (or has more than one root: the root
    takes one dependent). `ValueError` if `heads` and `labels` differ in length.
    """
    length = len(heads)
    if labels is not None and len(labels) != length:
        raise ValueError(f"{length} heads but {len(labels)} labels")
    word_labels = ["_"] * length if labels is None else list(labels)
    missing_dependents = [0] * (length + 1)
    for head in heads:
        missing_dependents[head] += 1
    configuration = Configuration(length)
    transitions: List[Transition] = []
    while not configuration.is_terminal:
        stack = configuration.stack
        if len(stack) >= 2:
            top, below = stack[-1], stack[-2]
            if configuration.is_legal(LEFT_ARC) and heads[below - 1] == top:
                transition: Transition = (LEFT_ARC, word_labels[below - 1])
                missing_dependents[top] -= 1
                transitions.append(transition)
                configuration.apply(*transition)
                continue
            if (
                configuration.is_legal(RIGHT_ARC)
                and heads[top - 1] == below
                and missing_dependents[top] == 0
            ):
                transition = (RIGHT_ARC, word_labels[top - 1])
                missing_dependents[below] -= 1
                transitions.append(transition)
                configuration.apply(*transition)
                continue
        if configuration.buffer_empty:
            raise NonProjectiveError(
                "no arc-standard derivation builds this tree: it is not projective"
                + ("" if sum(h == 0 for h in heads) == 1 else " or has more than one root")
            )
        transitions.append((SHIFT, None))
        configuration.apply(SHIFT)
    return transitions
