"""
Overlapping windows over sequences longer than a model reads at once.

A model with learned absolute positions (a pretrained transformer's 512 positions, the learned
position embeddings of `partitioned_transformer`) cannot encode a longer sequence in one piece.
Such a sequence is cut into windows that each look like a sequence the model was trained on:
the sequence's leading special positions (`[CLS]`, or the parser's `[START]`), a slice of at
most `window_length - num_start - num_end` content positions, and the trailing special
positions (`[SEP]`, `[STOP]`). Consecutive slices start half a slice apart, so they overlap by
half a window (the last slice ends at the last content position and may overlap its
predecessor by more). All windows of a batch are encoded as one batch.

Each content position then takes its vector from the window in which it is farthest from a
cut, an edge where the window ends inside the sequence (the sequence's own start and end are
not cuts): with half-window overlaps, that is the central half of every window, plus the
outer parts of the first and last windows. Ties go to the earlier window. The leading special
positions take their vectors from the first window, the trailing ones from the last. This is
the sliding-window scheme that BERT uses for long SQuAD documents (Devlin et al. 2019, sec.
4.2, "max context"), applied to every position.

A sequence that fits in one window is that one window, unchanged (the caller runs sequences
that all fit through its usual path, so their outputs stay bit for bit the same).
"""
from dataclasses import dataclass
from typing import List, Sequence

import numpy as np
import torch


def window_starts(content_length: int, window: int) -> List[int]:
    """
    The first content position of each window of at most `window` content positions over
    `content_length` positions: every `window // 2` positions, and the last window ends at
    `content_length`. One window (start 0) when the content fits.
    """
    if window < 1:
        raise ValueError(f"A window needs room for at least one content position, not {window}.")
    if content_length <= window:
        return [0]
    stride = max(1, window // 2)
    return list(range(0, content_length - window, stride)) + [content_length - window]


def choose_windows(content_length: int, window: int, starts: Sequence[int]) -> np.ndarray:
    """
    For every content position, the index (into `starts`) of the window it takes its vector
    from: the window in which it is farthest from a cut (an edge inside the sequence), the
    earlier window on ties. Shape `(content_length,)`.
    """
    best_window = np.zeros(content_length, dtype=np.int64)
    best_distance = np.full(content_length, -1, dtype=np.int64)
    for index, start in enumerate(starts):
        end = min(start + window, content_length)
        positions = np.arange(start, end)
        unlimited = content_length  # farther than any real distance
        left = positions - start if start > 0 else np.full(len(positions), unlimited)
        right = end - 1 - positions if end < content_length else np.full(len(positions), unlimited)
        distance = np.minimum(left, right)
        better = distance > best_distance[start:end]
        best_window[start:end][better] = index
        best_distance[start:end][better] = distance[better]
    return best_window


@dataclass
class WindowPlan:
    """
    Where each window takes its positions from, and where each position of the batch takes its
    output from (`plan_windows` makes it).

    # Parameters

    fold_index : `torch.LongTensor`
        Shape `(num_windows, window_positions)`: per window position, the index into the
        flattened `(batch_size * sequence_length)` input (0 at window padding).
    window_mask : `torch.BoolTensor`
        Shape `(num_windows, window_positions)`, true on the windows' real positions.
    unfold_index : `torch.LongTensor`
        Shape `(batch_size, sequence_length)`: per input position, the index into the flattened
        `(num_windows * window_positions)` window output, or `num_windows * window_positions`
        (a zero vector) at the input's padding.
    """

    fold_index: torch.LongTensor
    window_mask: torch.BoolTensor
    unfold_index: torch.LongTensor

    def fold(self, values: torch.Tensor) -> torch.Tensor:
        """`(batch_size, sequence_length, ...)` to the windows' `(num_windows,
        window_positions, ...)`."""
        flat = values.reshape((-1,) + tuple(values.shape[2:]))
        return flat[self.fold_index]

    def unfold(self, window_values: torch.Tensor) -> torch.Tensor:
        """The windows' outputs `(num_windows, window_positions, dim)` stitched back to
        `(batch_size, sequence_length, dim)`, zero at the input's padding."""
        dim = window_values.size(-1)
        flat = window_values.reshape(-1, dim)
        # shape (num_windows * window_positions + 1, dim): a zero row for padding
        flat = torch.cat([flat, flat.new_zeros(1, dim)], dim=0)
        return flat[self.unfold_index]


def plan_windows(
    mask: torch.BoolTensor, window_length: int, num_start: int, num_end: int
) -> WindowPlan:
    """
    The windows of a batch.

    # Parameters

    mask : `torch.BoolTensor`
        Shape `(batch_size, sequence_length)`: each row's real positions, all before its
        padding. A row is `num_start` special positions, its content, `num_end` special
        positions.
    window_length : `int`
        The most positions a window may have, special positions included.
    num_start : `int`
    num_end : `int`
    """
    batch_size, sequence_length = mask.shape
    lengths = mask.sum(dim=1)
    prefix = torch.arange(sequence_length, device=mask.device).unsqueeze(0) < lengths.unsqueeze(1)
    if not bool((prefix == mask.bool()).all()):
        raise ValueError("Windows need every row's real positions before its padding.")
    window = window_length - num_start - num_end
    lengths_list = lengths.tolist()
    # Per row, its windows' content starts and each content position's window.
    row_starts: List[List[int]] = []
    row_choices: List[np.ndarray] = []
    for b, length in enumerate(lengths_list):
        content_length = length - num_start - num_end
        if content_length < 0:
            raise ValueError(
                f"Row {b} has {length} positions, fewer than its {num_start + num_end} special "
                "positions."
            )
        starts = window_starts(content_length, window)
        row_starts.append(starts)
        row_choices.append(choose_windows(content_length, window, starts))
    num_windows = sum(len(starts) for starts in row_starts)
    # The longest window: a full one, or the longest row when every row fits in one window.
    window_positions = min(window_length, max(lengths_list))

    fold = np.zeros((num_windows, window_positions), dtype=np.int64)
    window_mask = np.zeros((num_windows, window_positions), dtype=bool)
    # Padding points at the zero row after the windows' outputs.
    unfold = np.full((batch_size, sequence_length), num_windows * window_positions, dtype=np.int64)
    first = 0  # the row's first window
    for b, (length, starts, chosen) in enumerate(zip(lengths_list, row_starts, row_choices)):
        content_length = length - num_start - num_end
        row = b * sequence_length
        for w, start in enumerate(starts, start=first):
            size = min(window, content_length - start)
            positions = np.concatenate([
                row + np.arange(num_start),
                row + num_start + start + np.arange(size),
                row + length - num_end + np.arange(num_end),
            ])
            fold[w, : len(positions)] = positions
            window_mask[w, : len(positions)] = True
        # Content position p of window w sits at window position num_start + p - starts[w].
        source_start = np.asarray(starts)[chosen]
        unfold[b, :num_start] = first * window_positions + np.arange(num_start)
        unfold[b, num_start : length - num_end] = (
            (first + chosen) * window_positions
            + num_start
            + np.arange(content_length)
            - source_start
        )
        last = first + len(starts) - 1
        last_size = min(window, content_length)
        unfold[b, length - num_end : length] = (
            last * window_positions + num_start + last_size + np.arange(num_end)
        )
        first += len(starts)

    device = mask.device
    return WindowPlan(
        fold_index=torch.as_tensor(fold, device=device),
        window_mask=torch.as_tensor(window_mask, device=device),
        unfold_index=torch.as_tensor(unfold, device=device),
    )
