"""
Arc-standard configurations of a batch of sentences as tensors, for the transition-based
parsers: which transitions are legal, applying one transition per sentence at once, and the
stack vectors of Zhang et al. (2017, section 3.1), `s_t` (word `t` has been pushed) and `r_t`
(word `t` has been popped). The rules are those of `lal_allennlp.syntax.arc_standard` (the pure
reference, one sentence at a time), with the same root convention: position 0 is the root, which
starts on the stack and takes exactly one dependent, so every finished configuration is a
projective tree with a single root.

One row per sentence (or per beam hypothesis): the transitions of all rows are applied by a few
indexed writes, not a loop over rows.
"""
from typing import Tuple

import torch

# Transition kinds; a decoder's output vocabulary maps each of its entries to one of these.
SHIFT = 0
LEFT_ARC = 1
RIGHT_ARC = 2
NO_OP = 3
"""Leaves the configuration as it is: what a finished row (or a padding entry) "applies"."""


class ArcStandardBatch:
    """
    # Parameters

    lengths : `torch.LongTensor`
        `(rows,)`, the number of words of each row's sentence (at least 1).
    max_length : `int`, optional (default = `None`)
        Width of the word axis (`max_length + 1` positions with the root); `lengths.max()`
        if not given.

    # Attributes

    heads, labels : `torch.LongTensor`
        `(rows, max_length + 1)`: the head of each position (0 the root) and the label id given
        to `apply`, `-1` while a word has none (and always at the root and padding).
    pushed, popped : `torch.BoolTensor`
        `(rows, max_length + 1)`: `s` and `r`. The root counts as pushed and is never popped.
    """

    def __init__(self, lengths: torch.Tensor, max_length: int = None) -> None:
        if (lengths < 1).any():
            raise ValueError("every sentence needs at least one word")
        rows = lengths.size(0)
        width = int(lengths.max()) + 1 if max_length is None else max_length + 1
        device = lengths.device
        self.lengths = lengths
        # shape (rows, width): the stack bottom-up; only the first `stack_size` entries count.
        self.stack = torch.zeros(rows, width, dtype=torch.long, device=device)
        self.stack_size = torch.ones(rows, dtype=torch.long, device=device)
        self.next_word = torch.ones(rows, dtype=torch.long, device=device)
        self.heads = torch.full((rows, width), -1, dtype=torch.long, device=device)
        self.labels = torch.full((rows, width), -1, dtype=torch.long, device=device)
        self.pushed = torch.zeros(rows, width, dtype=torch.bool, device=device)
        self.pushed[:, 0] = True
        self.popped = torch.zeros(rows, width, dtype=torch.bool, device=device)

    @property
    def finished(self) -> torch.Tensor:
        """`(rows,)`: the buffer is empty and only the root is on the stack."""
        return (self.stack_size == 1) & (self.next_word > self.lengths)

    def legal_kinds(self) -> torch.Tensor:
        """`(rows, 4)`: whether SHIFT, LEFT-ARC, RIGHT-ARC and NO_OP are legal; NO_OP is legal
        exactly for the finished rows, so every row always has a legal transition."""
        buffer_empty = self.next_word > self.lengths
        two_words = self.stack_size >= 3
        return torch.stack(
            [
                ~buffer_empty,
                two_words,
                two_words | ((self.stack_size == 2) & buffer_empty),
                self.finished,
            ],
            dim=-1,
        )

    def apply(self, kinds: torch.Tensor, labels: torch.Tensor) -> None:
        """
        Applies one transition per row: `kinds` `(rows,)` of `SHIFT`, `LEFT_ARC`, `RIGHT_ARC`,
        `NO_OP`, and `labels` `(rows,)` the label ids stored with the arcs. The caller keeps to
        legal transitions (`legal_kinds`); an illegal one raises.
        """
        legal = self.legal_kinds().gather(1, kinds.unsqueeze(1)).squeeze(1)
        if not bool(legal.all()):
            row = int((~legal).nonzero()[0])
            raise ValueError(f"transition kind {int(kinds[row])} is not legal in row {row}")
        rows = torch.arange(kinds.size(0), device=kinds.device)
        size = self.stack_size
        top = self.stack[rows, (size - 1).clamp(min=0)]
        below = self.stack[rows, (size - 2).clamp(min=0)]

        shift = kinds == SHIFT
        shifted = rows[shift]
        word = self.next_word[shift]
        self.stack[shifted, size[shift]] = word
        self.pushed[shifted, word] = True

        left = kinds == LEFT_ARC
        arc = left | (kinds == RIGHT_ARC)
        head = torch.where(left, top, below)[arc]
        dependent = torch.where(left, below, top)[arc]
        attached = rows[arc]
        self.heads[attached, dependent] = head
        self.labels[attached, dependent] = labels[arc]
        self.popped[attached, dependent] = True
        # The head takes the place of the two stack entries.
        self.stack[attached, size[arc] - 2] = head

        self.next_word = self.next_word + shift.long()
        self.stack_size = size + shift.long() - arc.long()

    def select(self, indices: torch.Tensor) -> None:
        """Keeps the rows `indices` (`(new_rows,)`, repeats allowed), in that order: beam search
        continuing from the chosen hypotheses."""
        for name in ("lengths", "stack", "stack_size", "next_word", "heads", "labels", "pushed",
                     "popped"):
            setattr(self, name, getattr(self, name).index_select(0, indices))

    def tree(self, row: int) -> Tuple[list, list]:
        """Row `row`'s heads and label ids of words `1..length` (`-1` where none yet)."""
        length = int(self.lengths[row])
        return (
            self.heads[row, 1 : length + 1].tolist(),
            self.labels[row, 1 : length + 1].tolist(),
        )
