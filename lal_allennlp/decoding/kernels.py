"""Numba building blocks of the chart decoders: vectorisable maxima and 8-lane LLVM vector code.

Every chart decoder spends most of its time in max reductions: the best label of a span (a max
over its L contiguous scores) and the best split point (a max over sums of two chart rows). LLVM
only vectorises a floating-point max reduction when the max is the ``llvm.maxnum`` intrinsic and
the loop may ignore NaN and signed zeros; a plain ``if x > m: m = x`` loop stays scalar. Hence:

* :func:`maxnum`: ``llvm.maxnum`` on two floats, the operation that such reductions accumulate
  with;
* :func:`segment_max`: the max of a 1-d array, written so that LLVM vectorises it;
* :func:`first_equal`: the first index of a row's maximum (a tree node's label);
* :data:`FASTMATH`: the only fastmath flags the decoders compile with (no-NaN, no-signed-zero).
  A maximum is exact in any reduction order, so with finite or ``-inf`` scores these flags change
  neither the values nor the tie-breaking; NaN scores in cells that are read are not supported.

The joint span decoder's two hot loops are short (a span's split points, a span's dependents),
and LLVM's loop vectoriser only enters its vector body for 32 or more iterations (4 x 8 lanes),
so they are written here directly as LLVM vector code on 8 lanes (:class:`VectorCode`), with the
accumulator in a register: :func:`split_max` (the split maximum of a chunk of 8 heads) and
:func:`max_of_broadcast_sums` (the best dependent of a span for a chunk of 8 outside heads).
"""

import numba
from llvmlite import ir
from numba import njit, types
from numba.core import cgutils
from numba.extending import intrinsic

__all__ = [
    "FASTMATH",
    "LANES",
    "MAX_FLAGS",
    "VectorCode",
    "check_flat_arrays",
    "first_equal",
    "max_of_broadcast_sums",
    "maxnum",
    "segment_max",
    "split_max",
]

# Only the flags that the max reductions need to vectorise; both are exact for finite inputs.
FASTMATH = {"nnan", "nsz"}
MAX_FLAGS = tuple(sorted(FASTMATH))  # the same flags on the maxnum calls themselves
LANES = 8  # lanes of the vector code: 8 float32 (one AVX register) or 8 float64 (two)


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
    with NaN scores, which are not supported)."""
    for index in range(start, row.shape[0]):
        if row[index] == value:
            return index
    return row.shape[0]


# ----------------------------------------------------------------------------------------------
# 8-lane LLVM vector code. The kernels read and write whole vectors of 8 consecutive elements,
# some of whose lanes may lie outside the range the caller needs.
# ----------------------------------------------------------------------------------------------


def check_flat_arrays(*array_types) -> bool:
    """Typing guard of the vector kernels: 1-d C-contiguous float arrays of one dtype."""
    first = array_types[0]
    return all(
        isinstance(t, types.Array) and t.ndim == 1 and t.layout == "C" and t.dtype == first.dtype
        for t in array_types
    ) and isinstance(first.dtype, types.Float)


def _broadcast(builder, vector_type, scalar):
    """``scalar`` in every lane of ``vector_type``."""
    undefined = ir.Constant(vector_type, ir.Undefined)
    lane0 = builder.insert_element(undefined, scalar, ir.Constant(ir.IntType(32), 0))
    zeros = ir.Constant(ir.VectorType(ir.IntType(32), LANES), [0] * LANES)
    return builder.shuffle_vector(lane0, undefined, zeros)


class VectorCode:
    """LLVM vector code on 1-d arrays of one float dtype, 8 lanes at a time (for the kernels);
    offsets are in elements."""

    def __init__(self, context, builder, dtype) -> None:
        self.context, self.builder = context, builder
        scalar_type = context.get_data_type(dtype)
        self.vector_type = ir.VectorType(scalar_type, LANES)
        self.align = context.get_abi_sizeof(scalar_type)
        self._max = cgutils.get_or_insert_function(
            builder.module,
            ir.FunctionType(self.vector_type, [self.vector_type, self.vector_type]),
            f"llvm.maxnum.v{LANES}f{8 * self.align}",
        )

    def _data(self, array_type, array_value):
        return self.context.make_array(array_type)(self.context, self.builder, array_value).data

    def pointer(self, array_type, array_value, offset):
        """Pointer to the vector at element ``offset`` of a 1-d array."""
        element = self.builder.gep(self._data(array_type, array_value), [offset])
        return self.builder.bitcast(element, self.vector_type.as_pointer())

    def load(self, array_type, array_value, offset):
        return self.builder.load(self.pointer(array_type, array_value, offset), align=self.align)

    def store(self, array_type, array_value, offset, value) -> None:
        self.builder.store(value, self.pointer(array_type, array_value, offset), align=self.align)

    def load_scalar(self, array_type, array_value, index):
        """Element ``index`` of a 1-d array."""
        return self.builder.load(self.builder.gep(self._data(array_type, array_value), [index]))

    def max(self, a, b):
        # With the no-NaN flag, LLVM emits one max instruction instead of max, compare and blend
        # (the NaN handling of ``maxnum``) for every maximum of the hot loops.
        return self.builder.call(self._max, [a, b], fastmath=MAX_FLAGS)

    def add(self, a, b):
        return self.builder.fadd(a, b)

    def add_scalar(self, vector, scalar):
        return self.add(vector, _broadcast(self.builder, self.vector_type, scalar))

    def max_over(self, terms, count):
        """Accumulators (allocas) of ``max_{r < count} terms(r)[m]`` for every m, kept in
        registers by LLVM; ``terms(r)`` returns vectors for an index r; count >= 1."""
        builder = self.builder
        one = ir.Constant(count.type, 1)
        accs = [
            cgutils.alloca_once_value(builder, value) for value in terms(ir.Constant(count.type, 0))
        ]
        with cgutils.for_range(builder, builder.sub(count, one)) as loop:
            for acc, value in zip(accs, terms(builder.add(loop.index, one))):
                builder.store(self.max(builder.load(acc), value), acc)
        return accs

    def store_lanes(self, array_type, array_value, offset, value, lo, hi) -> None:
        """``value`` into the lanes lo <= t < hi of the vector at ``offset``; the other lanes
        keep their values. Where the range covers all 8, a plain store (no need to read the
        line first)."""
        builder = self.builder
        whole = builder.and_(
            builder.icmp_signed("<=", lo, ir.Constant(lo.type, 0)),
            builder.icmp_signed(">=", hi, ir.Constant(hi.type, LANES)),
        )
        with builder.if_else(whole) as (all_lanes, some_lanes):
            with all_lanes:
                self.store(array_type, array_value, offset, value)
            with some_lanes:
                lanes = ir.Constant(ir.VectorType(lo.type, LANES), list(range(LANES)))
                inside = builder.and_(
                    builder.icmp_signed(">=", lanes, _broadcast(builder, lanes.type, lo)),
                    builder.icmp_signed("<", lanes, _broadcast(builder, lanes.type, hi)),
                )
                old = self.load(array_type, array_value, offset)
                self.store(array_type, array_value, offset, builder.select(inside, value, old))


@intrinsic
def split_max(
    typingctx, x, s, e, x_off, s_off, e_off, one_score, multi_score, a, a_off, b, b_off, count
):  # pragma: no cover - compiled code
    """One 8-lane chunk of a span's split maximum, written out three times::

        raw[t] = max_{r < count} a[a_off + 8 r + t] + b[b_off + 8 r + t]   (t = 0..7)
        x[x_off + t] = raw[t] + one_score
        s[s_off + t] = e[e_off + t] = raw[t] + multi_score

    The terms are consecutive chunks of a and b (the chart's cells of k, k + 1, ...). The
    accumulator stays in a register; count >= 1.
    """
    if not check_flat_arrays(x, s, e, a, b) or one_score != x.dtype or multi_score != x.dtype:
        return None
    intp = types.intp
    sig = types.void(x, s, e, intp, intp, intp, one_score, multi_score, a, intp, b, intp, intp)

    def codegen(context, builder, signature, args):
        x_v, s_v, e_v, x_off_v, s_off_v, e_off_v, one_v, multi_v = args[:8]
        a_v, a_off_v, b_v, b_off_v, count_v = args[8:]
        x_t, s_t, e_t, a_t, b_t = (signature.args[m] for m in (0, 1, 2, 8, 10))
        code = VectorCode(context, builder, x_t.dtype)

        def terms(r):
            shift = builder.mul(r, ir.Constant(r.type, LANES))  # consecutive chunks
            left = code.load(a_t, a_v, builder.add(a_off_v, shift))
            return [code.add(left, code.load(b_t, b_v, builder.add(b_off_v, shift)))]

        (acc,) = code.max_over(terms, count_v)
        raw = builder.load(acc)
        code.store(x_t, x_v, x_off_v, code.add_scalar(raw, one_v))
        multi = code.add_scalar(raw, multi_v)
        code.store(s_t, s_v, s_off_v, multi)
        code.store(e_t, e_v, e_off_v, multi)
        return context.get_dummy_value()

    return sig, codegen


@intrinsic
def max_of_broadcast_sums(
    typingctx, dst, dst_off, x, x_off, a, a_off, count, lo, hi
):  # pragma: no cover - compiled code
    """``dst[dst_off + t] = max_{r < count} x[x_off + r] + a[a_off + 8 r + t]`` for the
    lanes lo <= t < hi of 8 (x[.] broadcast to all lanes), accumulated in a register
    (count >= 1). The other lanes of dst keep their values."""
    if not check_flat_arrays(dst, x, a):
        return None
    intp = types.intp
    sig = types.void(dst, intp, x, intp, a, intp, intp, intp, intp)

    def codegen(context, builder, signature, args):
        dst_v, dst_off_v, x_v, x_off_v, a_v, a_off_v, count_v, lo_v, hi_v = args
        dst_t, _, x_t, _, a_t = signature.args[:5]
        code = VectorCode(context, builder, dst_t.dtype)

        def terms(r):
            scalar = code.load_scalar(x_t, x_v, builder.add(x_off_v, r))
            shift = builder.mul(r, ir.Constant(r.type, LANES))  # consecutive chunks of a
            return [code.add_scalar(code.load(a_t, a_v, builder.add(a_off_v, shift)), scalar)]

        (acc,) = code.max_over(terms, count_v)
        code.store_lanes(dst_t, dst_v, dst_off_v, builder.load(acc), lo_v, hi_v)
        return context.get_dummy_value()

    return sig, codegen
