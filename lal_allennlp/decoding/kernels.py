"""Numba building blocks shared by the chart decoders: vectorisable maxima and software prefetch.

Every chart decoder spends most of its time in max reductions: the best label of a span (a max
over its L contiguous scores) and the best split point (a max over sums of two chart rows). LLVM
only vectorises a floating-point max reduction when the max is the ``llvm.maxnum`` intrinsic and
the loop may ignore NaN and signed zeros; a plain ``if x > m: m = x`` loop stays scalar. Hence:

* :func:`maxnum`: ``llvm.maxnum`` on two floats, the operation that such reductions accumulate
  with;
* :func:`segment_max`: the max of a 1-d array, written so that LLVM vectorises it;
* :func:`first_equal`: the first index of a row's maximum (a tree node's label), found by
  skipping blocks with :func:`segment_max`;
* :data:`FASTMATH`: the only fastmath flags the decoders compile with (no-NaN, no-signed-zero).
  A maximum is exact in any reduction order, so with finite or ``-inf`` scores these flags change
  neither the values nor the tie-breaking; NaN scores in cells that are read are not supported.

The label pass of a decoder reads every span's L scores once and is bound by memory bandwidth
at realistic sizes; :func:`prefetch` and :func:`prefetch_row` ask the CPU to load a span's
scores a few spans ahead of their use.
"""

import numba
from llvmlite import binding as llvm_binding
from llvmlite import ir
from numba import njit
from numba.core import cgutils
from numba.extending import intrinsic

__all__ = [
    "FASTMATH",
    "MAX_FLAGS",
    "first_equal",
    "maxnum",
    "prefetch",
    "prefetch_row",
    "segment_max",
]

# Only the flags that the max reductions need to vectorise; both are exact for finite inputs.
FASTMATH = {"nnan", "nsz"}
MAX_FLAGS = tuple(sorted(FASTMATH))  # the same flags on the maxnum calls themselves
SEARCH_BLOCK = 16  # elements per block in :func:`first_equal`
_OPAQUE_POINTERS = llvm_binding.llvm_version_info[0] >= 15
_PREFETCH_NAME = "llvm.prefetch.p0" if _OPAQUE_POINTERS else "llvm.prefetch.p0i8"


@intrinsic
def maxnum(typingctx, a, b):  # pragma: no cover - compiled code
    """``llvm.maxnum`` on two floats of the same type (vectorisable max reduction).

    The call carries the no-NaN and no-signed-zero flags: without them LLVM keeps ``maxnum``'s
    NaN rule, and a vectorised reduction pays a compare and a blend beside every ``vmaxps``.
    """
    if a != b or not isinstance(a, numba.types.Float):
        return None
    sig = a(a, b)

    def codegen(context, builder, signature, args):
        llvm_type = args[0].type
        name = "llvm.maxnum.f32" if llvm_type == ir.FloatType() else "llvm.maxnum.f64"
        fn_type = ir.FunctionType(llvm_type, [llvm_type, llvm_type])
        fn = cgutils.get_or_insert_function(builder.module, fn_type, name)
        return builder.call(fn, args, fastmath=MAX_FLAGS)

    return sig, codegen


def emit_prefetch(builder, pointer, locality: int = 3) -> None:
    """LLVM code of a software prefetch (read, data) of the memory at ``pointer``; ``locality``
    3 keeps it in all cache levels (x86 ``prefetcht0``), 2 in the L2 cache and further out
    (``prefetcht1``)."""
    i8_ptr = ir.IntType(8).as_pointer()
    i32 = ir.IntType(32)
    fn_type = ir.FunctionType(ir.VoidType(), [i8_ptr, i32, i32, i32])
    fn = cgutils.get_or_insert_function(builder.module, fn_type, _PREFETCH_NAME)
    # (address, rw = read, locality, cache type = data)
    args = [builder.bitcast(pointer, i8_ptr), ir.Constant(i32, 0), ir.Constant(i32, locality)]
    builder.call(fn, args + [ir.Constant(i32, 1)])


@intrinsic
def prefetch(typingctx, array, index):  # pragma: no cover - compiled code
    """Software prefetch (read, keep in all cache levels) of ``array[index]``; array: 1-d."""
    if not isinstance(array, numba.types.Array) or array.ndim != 1:
        return None
    sig = numba.types.void(array, index)

    def codegen(context, builder, signature, args):
        array_type = signature.args[0]
        array_struct = context.make_array(array_type)(context, builder, args[0])
        pointer = cgutils.get_item_pointer(
            context, builder, array_type, array_struct, [args[1]], wraparound=False
        )
        emit_prefetch(builder, pointer)
        return context.get_dummy_value()

    return sig, codegen


@njit(cache=True)
def prefetch_row(row):  # pragma: no cover - compiled code
    """Prefetch every 64-byte cache line of a 1-d C-contiguous row."""
    for c in range(0, row.shape[0], max(1, 64 // row.itemsize)):
        prefetch(row, c)


@njit(cache=True, fastmath=FASTMATH)
def segment_max(segment):  # pragma: no cover - compiled code
    """max(segment) in the segment's dtype; segment: non-empty 1-d C array.

    The loop runs from index 0 over a zero-based view: LLVM vectorises that form, not a loop
    that starts at an offset.
    """
    m = segment[0]
    for l in range(1, segment.shape[0]):
        m = maxnum(m, segment[l])
    return m


@njit(cache=True, fastmath=FASTMATH)
def first_equal(row, start, value):  # pragma: no cover - compiled code
    """Smallest index l >= start with ``row[l] == value``, where ``value`` is the maximum of
    ``row[start:]`` (the argmax label of a tree node); ``row.shape[0]`` if there is none (only
    with NaN scores, which are not supported).

    Whole blocks of ``SEARCH_BLOCK`` elements whose (vectorised) maximum is not ``value`` are
    skipped, then one block is scanned: a plain scan stops at a data-dependent index and does not
    vectorise."""
    end = row.shape[0]
    while start + SEARCH_BLOCK <= end and segment_max(row[start : start + SEARCH_BLOCK]) != value:
        start += SEARCH_BLOCK
    for index in range(start, end):
        if row[index] == value:
            return index
    return end
