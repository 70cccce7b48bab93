"""The decoders' workspaces (`lal_allennlp.decoding.memory`) and the joint span decoder's use of
them: aligned buffers, and a clear error where a workspace does not fit."""

import numpy as np
import pytest

from lal_allennlp.decoding import joint_span, memory


def test_aligned_buffers_are_zeroed_aligned_and_apart() -> None:
    first, second = memory.aligned_buffers(3, (17, 1000), np.float32)
    for view, cells in ((first, 17), (second, 1000)):
        assert view.shape[0] == 3 and view.shape[1] >= cells and view.flags.writeable
        assert view.ctypes.data % 64 == 0 and view.strides[0] % 64 == 0
        assert not view.any()
    first[:] = 1.0  # the views of the one allocation do not overlap
    assert not second.any()
    second[-1, -1] = 1.0  # writable to the last element


def test_joint_span_decoder_refuses_a_workspace_larger_than_memory(monkeypatch) -> None:
    # The workspace grows as n^3. S/E: for each start or end a and chunk of 8 heads (chunk c:
    # heads 8 c + 1 .. 8 c + 8), the cells b > a (n - a of them) if the chunk holds heads above
    # a, the cells b < a (a of them) if it holds heads up to a, and a margin of n + 1 cells
    # before and after; X: one row of the n heads (in whole chunks of 8) per end of a block of
    # 8 ends.
    def charts(n):
        chunks = (n + 7) // 8
        se = 2 * (n + 1)
        for a in range(n + 1):
            for c in range(chunks):
                above = 8 * c + 8 > a
                below = 8 * c + 1 <= a
                se += n + 1 if above and below else (n - a if above else a)
        x = 8 * 8 * chunks
        return 8 * (8 * se + x)  # float64

    for n in (1000, 2000):
        needed = joint_span.workspace_bytes(n, np.float64)
        assert charts(n) < needed < charts(n) * 1.01
    assert 5.00 * 2**30 < joint_span.workspace_bytes(1000, np.float64) < 5.05 * 2**30
    rng = np.random.default_rng(0)
    lengths = np.array([30, 30, 30])
    span_scores = rng.standard_normal((3, 31, 31, 4))
    arc_scores = rng.standard_normal((3, 31, 31))
    expected = joint_span.joint_span_decode(span_scores, arc_scores, lengths)
    one_workspace = joint_span.workspace_bytes(30, np.float64)
    # Workspaces this small skip the check (it reads the system's figures); make it run.
    monkeypatch.setattr(memory, "available_memory_bytes", lambda: 0)
    assert memory.workers_that_fit(one_workspace, 3, "", "") == 3
    monkeypatch.setattr(memory, "UNCHECKED_BYTES", 0)
    # Room for one workspace: one worker, the same trees.
    monkeypatch.setattr(memory, "available_memory_bytes", lambda: one_workspace + 1)
    assert memory.workers_that_fit(one_workspace, 3, "", "") == 1
    spans, heads, _ = joint_span.joint_span_decode(span_scores, arc_scores, lengths)
    assert all(np.array_equal(a, b) for a, b in zip(spans + heads, expected[0] + expected[1]))
    # No room: a clear error instead of the system killing the process.
    monkeypatch.setattr(memory, "available_memory_bytes", lambda: one_workspace - 1)
    with pytest.raises(MemoryError, match="workspace for a sentence of 30 words"):
        joint_span.joint_span_decode(span_scores, arc_scores, lengths)
