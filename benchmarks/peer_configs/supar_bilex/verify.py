"""Tiny check of supar_bilex.BiLexicalizedConstituencyCRF against brute force (seconds on CPU).

Run by make.sh: PYTHONPATH=OVERLAY_DIR SUPAR_VENV/bin/python verify.py
"""
import itertools

import torch
from supar_bilex import BiLexicalizedConstituencyCRF


def trees(i, j):
    """All lexicalized binary trees over words i+1..j (fences i..j): (spans, arcs{m: h}, head)."""
    if j == i + 1:
        yield [(i, j)], {}, j
        return
    for k in range(i + 1, j):
        for ls, la, lh in trees(i, k):
            for rs, ra, rh in trees(k, j):
                base = [(i, j)] + ls + rs
                yield base, {**la, **ra, rh: lh}, lh   # left child heads the span
                yield base, {**la, **ra, lh: rh}, rh   # right child heads the span


def brute(s_dep, s_con, n):
    """s_dep [m, h], s_con [i, j] for one sentence: best score, all trees as (spans, heads)."""
    best, all_trees = None, set()
    for spans, arcs, root in trees(0, n):
        arcs = {**arcs, root: 0}
        heads = tuple(arcs[m] for m in range(1, n + 1))
        score = sum(s_con[i, j].item() for i, j in spans)
        score += sum(s_dep[m, h].item() for m, h in arcs.items())
        all_trees.add((frozenset(spans), heads))
        best = score if best is None or score > best else best
    return best, all_trees


def check(batch, n, lens=None, seed=0):
    torch.manual_seed(seed)
    s_dep = torch.randn(batch, n + 1, n + 1)
    s_con = torch.randn(batch, n + 1, n + 1)
    lens = torch.full((batch,), n, dtype=torch.long) if lens is None else torch.tensor(lens)
    crf = BiLexicalizedConstituencyCRF(torch.stack((s_dep, s_con)), lens)
    heads, spans = crf.argmax
    assert heads.shape == (batch, n + 1) and heads.dtype == torch.long, heads.shape
    assert isinstance(spans, list) and len(spans) == batch
    assert all(isinstance(t, list) for t in spans)
    mx = crf.max
    for b in range(batch):
        L = int(lens[b])
        tree_spans, tree_heads = spans[b], heads[b, 1:L + 1].tolist()
        assert len(tree_spans) == 2 * L - 1, tree_spans
        assert heads[b, L + 1:].eq(0).all() and heads[b, 0] == 0
        got = sum(s_con[b, i, j].item() for i, j in tree_spans) \
            + sum(s_dep[b, m, h].item() for m, h in enumerate(tree_heads, 1))
        line = (
            f"batch {batch} n {n} sent {b} len {L}: argmax tree score {got:.5f}, "
            f"crf.max {mx[b].item():.5f}"
        )
        assert abs(got - mx[b].item()) < 1e-4, line
        if L <= 7:
            best, all_trees = brute(s_dep[b], s_con[b], L)
            tree = (frozenset(map(tuple, tree_spans)), tuple(tree_heads))
            assert tree in all_trees, "not a valid tree"
            assert abs(best - got) < 1e-4, (line, best)
            line += f", brute force max {best:.5f} over {len(all_trees)} trees (well-formed: yes)"
        print(line)
        print(f"    heads {heads[b].tolist()}  spans {tree_spans}")


if __name__ == '__main__':
    check(2, 5)
    check(2, 7)
    check(2, 4)
    check(3, 6, lens=[6, 3, 5], seed=1)
    for seed in range(2, 12):
        check(2, 5, seed=seed)
    print("OK")
