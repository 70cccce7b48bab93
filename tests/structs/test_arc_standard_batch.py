import random

import pytest
import torch

from lal_allennlp.structs.arc_standard import (
    LEFT_ARC,
    NO_OP,
    RIGHT_ARC,
    SHIFT,
    ArcStandardBatch,
)
from lal_allennlp.syntax import arc_standard

_ACTIONS = {
    SHIFT: arc_standard.SHIFT,
    LEFT_ARC: arc_standard.LEFT_ARC,
    RIGHT_ARC: arc_standard.RIGHT_ARC,
}


def _check_rows_equal(batch, configurations):
    width = batch.pushed.size(1)
    for row, configuration in enumerate(configurations):
        n = configuration.length
        padding = [False] * (width - n - 1)
        assert batch.pushed[row].tolist() == configuration.pushed + padding
        assert batch.popped[row].tolist() == configuration.popped + padding
        assert batch.heads[row, 1 : n + 1].tolist() == [
            -1 if head is None else head for head in configuration.heads[1:]
        ]
        size = int(batch.stack_size[row])
        assert batch.stack[row, :size].tolist() == configuration.stack
        legal = batch.legal_kinds()[row].tolist()
        assert legal[:3] == [
            configuration.is_legal(_ACTIONS[kind]) for kind in (SHIFT, LEFT_ARC, RIGHT_ARC)
        ]
        assert legal[3] == configuration.is_terminal == bool(batch.finished[row])


def test_stack_vectors_at_every_step_equal_a_simulated_stack():
    rng = random.Random(0)
    for _ in range(30):
        lengths = [rng.randrange(1, 9) for _ in range(5)]
        batch = ArcStandardBatch(torch.tensor(lengths))
        configurations = [arc_standard.Configuration(n) for n in lengths]
        _check_rows_equal(batch, configurations)
        for _ in range(2 * max(lengths)):
            kinds, labels = [], []
            for configuration in configurations:
                if configuration.is_terminal:
                    kinds.append(NO_OP)
                    labels.append(0)
                    continue
                kind = rng.choice([k for k in _ACTIONS if configuration.is_legal(_ACTIONS[k])])
                label = rng.randrange(5)
                configuration.apply(_ACTIONS[kind], None if kind == SHIFT else label)
                kinds.append(kind)
                labels.append(label)
            batch.apply(torch.tensor(kinds), torch.tensor(labels))
            _check_rows_equal(batch, configurations)
        assert bool(batch.finished.all())
        for row, configuration in enumerate(configurations):
            heads, labels = batch.tree(row)
            assert heads == configuration.heads[1:]
            assert labels == configuration.labels[1:]


def test_illegal_transitions_raise_and_select_reorders_rows():
    batch = ArcStandardBatch(torch.tensor([2, 1]))
    with pytest.raises(ValueError, match="not legal in row 0"):
        batch.apply(torch.tensor([LEFT_ARC, SHIFT]), torch.tensor([0, 0]))
    batch.apply(torch.tensor([SHIFT, SHIFT]), torch.tensor([0, 0]))
    batch.apply(torch.tensor([SHIFT, RIGHT_ARC]), torch.tensor([0, 7]))
    assert batch.finished.tolist() == [False, True]
    with pytest.raises(ValueError, match="not legal in row 0"):
        batch.apply(torch.tensor([NO_OP, NO_OP]), torch.tensor([0, 0]))
    batch.select(torch.tensor([1, 1, 0]))
    assert batch.lengths.tolist() == [1, 1, 2]
    assert batch.tree(0) == ([0], [7]) and batch.tree(1) == ([0], [7])
    assert batch.stack_size.tolist() == [1, 1, 3]
