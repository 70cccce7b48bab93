"""Label tables and traceback bookkeeping of the joint span decoder.

The label rules of :mod:`~lal_allennlp.decoding.joint_span` (its docstring has the semantics):
``one_label(i, j)`` is the best *non-empty* label of span (i, j), where ``<H>`` is not allowed on
a single word nor on the whole sentence; ``multi_label(i, j)`` is the best of that and the empty
label. The chart fill only needs their scores (:func:`label_tables`); the label ids are found for
the 2n - 1 nodes of the best tree only, once it is traced (:func:`label_nodes`), by the role
each node plays (the root, a head child, a dependent child).
"""

from numba import njit

from lal_allennlp.decoding.kernels import FASTMATH, first_equal, maxnum, segment_max

__all__ = [
    "EMPTY",
    "SUB_HEAD",
    "ROLE_DEP",
    "ROLE_HEAD",
    "ROLE_ROOT",
    "best_root",
    "label_nodes",
    "label_tables",
    "node_label",
    "pop_node",
    "push",
]

EMPTY = 0  # label id of "no constituent"
SUB_HEAD = 1  # label id of <H>
ROLE_HEAD, ROLE_DEP, ROLE_ROOT = 0, 1, 2  # the role of a node in the tree


@njit(cache=True, fastmath=FASTMATH, inline="always")
def first_label(i, j, n):  # pragma: no cover - compiled code
    """Smallest label id allowed for a non-empty span (i, j): no <H> on words or the sentence."""
    return SUB_HEAD + 1 if j - i == 1 or j - i == n else SUB_HEAD


@njit(cache=True, fastmath=FASTMATH)
def label_tables(sent, n, label_one, label_multi):  # pragma: no cover - compiled code
    """label_one[i, j] = best allowed non-empty score; label_multi[i, j] = max(that, empty).

    sent: (>= n + 1, >= n + 1, L) label scores; reads every span's L scores once."""
    for i in range(n):
        for j in range(i + 1, n + 1):
            row = sent[i, j]  # (L,)
            best = segment_max(row[first_label(i, j, n) :])
            label_one[i, j] = best
            label_multi[i, j] = maxnum(row[EMPTY], best)


@njit(cache=True, fastmath=FASTMATH)
def node_label(row, first, one_value, use_one):  # pragma: no cover - compiled code
    """Label id of a node: smallest maximiser among the allowed non-empty labels (use_one), or
    empty if it scores at least as much (multi)."""
    if not use_one and row[EMPTY] >= one_value:
        return EMPTY
    label = first_equal(row, first, one_value)
    if label < row.shape[0]:
        return label
    return first  # unreachable for finite scores


@njit(cache=True, fastmath=FASTMATH)
def label_nodes(out_spans, n, sent, label_one):  # pragma: no cover - compiled code
    """Replace the role in column 2 of each of the 2n - 1 rows (i, j, role) of out_spans by the
    label that the node takes in that role (label_one: 2-d, ``label_one[i, j]``)."""
    for pos in range(2 * n - 1):
        i = out_spans[pos, 0]
        j = out_spans[pos, 1]
        role = out_spans[pos, 2]
        use_one = role == ROLE_ROOT or (role == ROLE_DEP and j - i > 1)
        out_spans[pos, 2] = node_label(sent[i, j], first_label(i, j, n), label_one[i, j], use_one)


@njit(cache=True, fastmath=FASTMATH, inline="always")
def best_root(x, first, step, one_word, arc, n):  # pragma: no cover - compiled code
    """(root, score): the smallest h maximising one[0, n, h] + arc[0, h] (the whole sentence is a
    ``one`` span; for n = 1, ``one_word``, the one_label of the single word). one[0, n, h] is
    ``x[first + (h - 1) step]``."""
    root = 1
    score = (one_word if n == 1 else x[first]) + arc[0, 1]
    for h in range(2, n + 1):
        value = x[first + (h - 1) * step] + arc[0, h]
        if value > score:  # strict: smallest h among ties
            score = value
            root = h
    return root, score


@njit(cache=True, fastmath=FASTMATH, inline="always")
def push(stack, top, i, j, h, role):  # pragma: no cover - compiled code
    """Put the node (i, j, head h, role) at row ``top`` of the traceback's stack."""
    stack[top, 0] = i
    stack[top, 1] = j
    stack[top, 2] = h
    stack[top, 3] = role


@njit(cache=True, fastmath=FASTMATH, inline="always")
def pop_node(stack, top, pos, out_spans):  # pragma: no cover - compiled code
    """Pop the traceback's next node (i, j, head, role) off ``stack`` (``top`` entries) and write
    (i, j, role) at row ``pos`` of out_spans: the role for now, the label once the tree is
    traced (:func:`label_nodes`). Returns (top, i, j, head)."""
    top -= 1
    i = stack[top, 0]
    j = stack[top, 1]
    out_spans[pos, 0] = i
    out_spans[pos, 1] = j
    out_spans[pos, 2] = stack[top, 3]
    return top, i, j, stack[top, 2]
