"""Summation orders, bit-exact on float32 carriers: the engine behind ``ascjax.precision.sum``.

Each order is a fixed sequence of adds over the last axis, written out (slices, a scan, a
static tree schedule) so that no compiler can reassociate it; every add is the adder's IEEE add
rounded to the format (or to float32 where the order accumulates in float32). ``order_tree``
gives the same orders as nested tuples of input indices, the form ``reveal_order`` returns.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable

import jax
import jax.numpy as jnp
import numpy as np

from .. import native
from ..config import Config, resolve_config
from ..formats import FORMATS, Format, finfo
from ..io.binio import IN_PLACE_MIN_BYTES, rows_in_place
from ..isa.codecs import decode, encode
from ..isa.lanes import materialize, pair_tree
from ..isa.reduce_tensor import tensor_sum
from ..native import chain_sums, wide_sums
from ..numerics.add import (
    NativeFloat32,
    canonical_nan,
    carrier_add,
    float_add,
    is_tiny,
    native_add,
    tiny_to_nan,
)
from ..numerics.bits import (
    INF32,
    MAG32,
    SIGN32,
    U32,
    from_bits,
    from_carrier,
    sll,
    srl,
    to_bits,
    to_carrier,
)
from ..numerics.host_blocks import map_row_blocks
from ..numerics.rounding import round_carrier

ORDERS = ("sequential", "adjacent_tree", "repeat_sequential", "repeat_tree", "repeat_vector_merge",
          "numpy_pairwise", "kahan")
# The hardware's long-vector patterns the study measures beside ORDERS (``study.PATTERNS``
# says what each does): no ``precision.sum`` order, but each is a fixed tree of adds, so
# ``order_tree``, the depths and the bounds take them like any order. STUDY_ORDERS: the one
# list of orders the study and every bound helper accept.
PATTERN_ORDERS = ("whole_reduce_chain", "float_acc_repeat_sequential")
STUDY_ORDERS = ORDERS + PATTERN_ORDERS
# Orders that accumulate in float32 and round once to a narrower format at the end.
FLOAT32_ORDERS = ("numpy_pairwise", "float_acc_repeat_sequential")
# The ReduceSum orders: the vendor page's method numbers (reduce_tensor.REDUCE_SUM_METHODS).
REPEAT_ORDERS = {"repeat_sequential": 1, "repeat_tree": 2, "repeat_vector_merge": 3}
# Formats a sum can be emulated in: every value has an exact float32 carrier. fp8_e5m2 is the
# top byte of a half and rides on half's carrier; fp8_e4m3fn (no inf: overflow gives NaN)
# rounds through the hardware Cast codec, RNE. hifloat8 is left out: its precision tapers
# (3 to 0 mantissa bits), so no unit roundoff gives Higham's bounds, and nothing adds in it.
SUM_FORMATS = ("half", "bfloat16_t", "float", "fp8_e5m2_t", "fp8_e4m3fn_t")
CODEC_SUMS = {"fp8_e4m3fn_t": "rint"}  # format -> Cast round mode of one IEEE add

PW_BLOCKSIZE = 128  # NumPy's pairwise_sum block (numpy/_core/src/umath/loops_utils.h.src)


# --- formats on carriers --------------------------------------------------------------------

def unit_roundoff(fmt: Format) -> float:
    """u = 2^-p, half the spacing of the format's numbers in [1, 2) (p = mantissa bits + 1)."""
    return finfo(fmt).eps / 2


def least_exponent(fmt: Format) -> int:
    """Exponent of the format's least subnormal (every value is a multiple of it)."""
    info = finfo(fmt)
    return info.minexp - info.nmant


def load(x, fmt: Format):
    """Carriers of an array held in ``fmt``'s storage dtype (exact)."""
    if fmt.name in CODEC_SUMS:
        return jax.lax.bitcast_convert_type(decode(x, fmt), U32)
    bits = to_bits(x, fmt)
    if fmt.name == "fp8_e5m2_t":
        return to_carrier(sll(bits.astype(jnp.uint16), 8), FORMATS["half"])
    return to_carrier(bits, fmt)


def store(c, fmt: Format):
    """The ``fmt`` array of carriers that hold ``fmt`` values exactly (a codec format: of any
    float32 carriers, rounded once by the Cast codec)."""
    if fmt.name in CODEC_SUMS:
        codes = encode(jax.lax.bitcast_convert_type(c, jnp.float32), fmt,
                       round_mode=CODEC_SUMS[fmt.name])
        return from_bits(codes, fmt)
    if fmt.name == "fp8_e5m2_t":
        half = from_carrier(c, FORMATS["half"])
        return from_bits(srl(half, 8).astype(jnp.uint8), fmt)
    return from_bits(from_carrier(c, fmt), fmt)


def _may_be_tiny(fmt: Format) -> bool:
    """Can a float32 sum of fmt values be nonzero and below 2^-100 (carrier_add's slow path)?"""
    return least_exponent(fmt) < -100


@dataclasses.dataclass(frozen=True)
class Arith:
    """The adds of one order: in the format, and in the float32 accumulator where one is used."""

    fmt: Format
    config: Config

    def add(self, a, b):
        if self.fmt.name in CODEC_SUMS:
            return self.round(self.add_f32(a, b))
        return float_add(a, b, self.fmt, self.config)

    def add_f32(self, a, b):
        if _may_be_tiny(self.fmt):
            return carrier_add(a, b)
        # Sums of half (or fp8) values are multiples of 2^-24: the native add is exact.
        return canonical_nan(native_add(a, b))

    def round(self, c):
        if self.fmt.name in CODEC_SUMS:  # the float32 sum of two fp8 values is exact
            return load(store(c, self.fmt), self.fmt)
        return round_carrier(c, self.fmt, self.config)

    def zeros(self, shape):
        return jnp.zeros(shape, U32)


def _neg(c):
    return c ^ SIGN32


# --- the orders -----------------------------------------------------------------------------

def _sequential(c, ar: Arith):
    return column_sum(c, "sequential", ar)


# Orders that loop over the data in index order: sequential and kahan run on the last axis in
# blocks of columns (``column_sum``); repeat_vector_merge, on a concrete input, scans registers
# moved to the leading axis beforehand (``to_leading``, ``leading_sum``).
SCAN_ORDERS = ("sequential", "kahan", "repeat_vector_merge")


def _chain_step(order: str, ar: Arith, neg: Callable | None = None):
    """(start, step, result) of ``order``'s loop: sequential ``((x0 + x1) + x2) + ...``;
    Kahan's compensated sum s = x0, e = +0, then per x: y = x - e; t = s + y;
    e = (t - s) - y; s = t."""
    neg = neg or _neg
    if order == "sequential":
        return (lambda first: first), ar.add, (lambda s: s)

    def kahan_step(carry, x):
        s, e = carry
        y = ar.add(x, neg(e))
        t = ar.add(s, y)
        return t, ar.add(ar.add(t, neg(s)), neg(y))

    return (lambda first: (first, jnp.zeros_like(first))), kahan_step, (lambda carry: carry[0])


def scan_sum(rows, order: str, ar: Arith, load_row: Callable | None = None):
    """``sequential`` or ``kahan`` over the leading axis of ``rows`` (n, ...), n >= 1, as a
    ``lax.scan`` in row order (``_chain_step``).

    ``load_row`` turns one row into carriers inside the loop, so rows may stay in their storage
    format (half the memory traffic of carriers); by default rows are carriers already.
    """
    load_row = load_row or (lambda row: row)
    start, step, result = _chain_step(order, ar)
    carry = start(load_row(rows[0]))
    if rows.shape[0] > 1:
        carry, _ = jax.lax.scan(lambda carry, x: (step(carry, load_row(x)), None), carry,
                                rows[1:])
    return result(carry)


# Columns per step of ``column_sum``'s loop, unrolled into one fused pass over the block: the
# loop's overhead per step (~10 us on XLA's CPU backend) then matters little, while a longer
# chain of the adder's selects grows XLA's fusions past what it compiles well.
COLUMN_BLOCK = 16
# The same for plain float32 adds: each step copies a (rows, block) slab out of the rows, and
# 384-byte pieces of rows read 1.5x faster than 256 (sequential at 4096 x 4096: 10-11.6 ms
# against 15.4 for 64 columns; benchmarks/precision_speed.py). 128 runs no faster and compiles
# 1.5-2x longer (a first call of precision.sum: kahan 9.0 s against 4.5).
NATIVE_BLOCK = 96
# Kahan's native loop: XLA in JAX 0.11 compiles a run of Kahan steps outside a loop in time
# exponential in its length (8 steps 0.2 s, 16 0.8 s, 20 44 s, 64 over 10 minutes; JAX 0.10:
# well under a second), so no run outside the loop is longer than KAHAN_CHAIN, and none inside
# it longer than KAHAN_LOOP_CHAIN (32 steps in a loop compiled in 0.3 s there); the loop still
# reads NATIVE_BLOCK columns a step (11.5 ms at 4096 x 4096 against 23 ms for 32).
KAHAN_CHAIN = 8
KAHAN_LOOP_CHAIN = 32
# Below this many elements ``stored_sum`` scans instead: the unrolled blocks compile 5-20x
# longer, and a study or a notebook sums many small shapes once each.
COLUMN_MIN_SIZE = 1 << 18


def _joined(carry):
    """A loop's carry as one array: Kahan's (s, e) of float32 as the complex64 s + e i.

    XLA's CPU backend computes each output of a loop fusion from its own copy of the
    expression: with s and e apart, every step's chain of adds runs twice, once for each
    (1.6-2x slower). One complex output runs it once. Putting float32 values into a complex
    and taking them out (``_split``) moves them and changes no bit."""
    if (isinstance(carry, tuple) and len(carry) == 2
            and all(c.dtype == jnp.float32 for c in carry)):
        return jax.lax.complex(*carry)
    return carry


def _split(joined):
    """``_joined``'s carry back."""
    if getattr(joined, "dtype", None) == jnp.complex64:
        return jax.lax.real(joined), jax.lax.imag(joined)
    return joined


class Columns:
    """The columns of an array ``x`` (..., n), as ``column_sum`` reads them: each column or
    slab of columns as a tuple of row groups (one here), so that no step joins arrays."""

    def __init__(self, x):
        self.x, self.n, self.shift = x, x.shape[-1], 0

    def parts(self) -> tuple:
        """The arrays ``columns_of`` takes back (what ``binio.rows_in_place`` returned)."""
        return (self.x,)

    def column(self, j: int) -> tuple:
        return (self.x[..., j],)

    def slab(self, start, size: int) -> tuple:
        """Columns start .. start + size - 1 (``start`` may be traced, >= ``shift``)."""
        return (jax.lax.dynamic_slice_in_dim(self.x, start, size, axis=self.x.ndim - 1),)

    def join(self, groups: tuple):
        """The per-row results of the row groups, as one array."""
        return groups[0]

    def wide_sums(self):
        """Per row: (the float64 sum of the terms, the sums of their magnitudes, float32 sums
        added in float64 or float64 throughout, and at most how many terms); the terms are the
        row's values, in any order, plus any that cancel. For ``exact.certified_float_bits``:
        run under x64. float32 rows on CPU: the native kernel (``native.wide_sums``)."""
        sums = wide_sums(self.parts(), lambda *parts: columns_of(parts).xla_wide_sums())
        return (*sums, self.wide_terms())

    def wide_terms(self) -> int:
        return self.n

    def xla_wide_sums(self):
        """``wide_sums``' two sums by XLA."""
        return (jnp.sum(self.x.astype(jnp.float64), axis=-1),
                jnp.sum(jnp.abs(self.x), axis=-1).astype(jnp.float64))


class ShiftedColumns(Columns):
    """The columns of host rows (rows, n) handed over mostly in place (``binio.rows_in_place``):
    ``body`` (m, n), m even, starts ``shift`` elements into row 0, so its row r is row r's
    columns shift.. then row r + 1's first ``shift``; ``head`` is row 0's first ``shift``
    columns and ``rest`` the rows after the first m, whole. Two row groups: rows 0..m-1 (each
    column of them from body, or from the prefix for the first ``shift``), and ``rest``."""

    def __init__(self, body, head, rest):
        n, shift = body.shape[-1], head.shape[-1]
        self.n, self.shift, self.body, self.head, self.rest = n, shift, body, head, rest
        self.prefix = jnp.concatenate([head[None], body[:-1, n - shift:]])  # (m, shift)

    def parts(self) -> tuple:
        return self.body, self.head, self.rest

    def column(self, j: int) -> tuple:
        main = self.prefix[:, j] if j < self.shift else self.body[:, j - self.shift]
        return main, self.rest[:, j]

    def slab(self, start, size: int) -> tuple:
        return (jax.lax.dynamic_slice_in_dim(self.body, start - self.shift, size, axis=1),
                jax.lax.dynamic_slice_in_dim(self.rest, start, size, axis=1))

    def join(self, groups: tuple):
        return jnp.concatenate(groups)

    def wide_terms(self) -> int:
        return self.n + 2 * self.shift

    def xla_wide_sums(self):
        # Whole rows of body, minus their last shift columns (the next row's prefix), plus the
        # row's own prefix: XLA's CPU backend sums whole rows several times faster than a
        # slice of them. So 2 shift more terms, half of them cancelling.
        def sums(f):
            own = jnp.sum(f(self.prefix).astype(jnp.float64), axis=-1)
            following = jnp.sum(f(self.body[:, self.n - self.shift:]).astype(jnp.float64), -1)
            return own, jnp.sum(f(self.body), axis=-1).astype(jnp.float64), following

        own, rows, following = sums(lambda v: v.astype(jnp.float64))
        mag_own, mag_rows, mag_following = sums(jnp.abs)
        rest_sum, rest_mag = Columns(self.rest).xla_wide_sums()
        return (jnp.concatenate([rows - following + own, rest_sum]),
                jnp.concatenate([mag_rows + mag_following + mag_own, rest_mag]))


def columns_of(parts) -> Columns:
    """``Columns`` of what ``binio.rows_in_place`` returned."""
    return Columns(parts[0]) if len(parts) == 1 else ShiftedColumns(*parts)


def column_sum(cols, order: str, ar: Arith, load: Callable | None = None, *,
               block: int = COLUMN_BLOCK, neg: Callable | None = None,
               chain: int | None = None, loop_chain: int | None = None):
    """``sequential`` or ``kahan`` (``_chain_step``) over the last axis of ``cols`` (an array
    (..., n), n >= 1, or ``Columns``): a loop over blocks of ``block`` columns whose adds
    are unrolled in index order.

    Each step reads a (rows, block) slab where its rows are contiguous, instead of a scan
    over a moved axis, which XLA's CPU backend reads strided or transposes first (2-10x
    slower). ``load`` turns a column into the adder's operands (carriers by default).
    ``chain``: the most steps XLA may see in a row outside the loop (the carry gets a buffer
    of its own between runs; a loop of one block, which XLA unrolls, is not made);
    ``loop_chain`` the same inside a block."""
    cols = cols if isinstance(cols, Columns) else Columns(cols)
    load = load or (lambda column: column)
    start, step, result = _chain_step(order, ar, neg)

    first = max(cols.shift, 1)  # columns before it are taken one by one

    def cut(carry):  # the carry into a buffer of its own: a fusion boundary
        return _split(materialize(_joined(carry)))

    def one_by_one(carry, columns, g: int):
        for k, j in enumerate(columns):
            if chain and k and k % chain == 0:
                carry = cut(carry)
            carry = step(carry, load(cols.column(j)[g]))
        return carry

    def group_sum(g: int, block: int):  # row group g: a loop of its own
        carry = one_by_one(start(load(cols.column(0)[g])), range(1, first), g)
        blocks = (cols.n - first) // block
        if chain and blocks == 1:
            blocks = 0

        def block_step(i, joined):
            carry = _split(joined)
            slab = cols.slab(first + i * block, block)[g]
            for j in range(block):
                if loop_chain and j and j % loop_chain == 0:
                    carry = cut(carry)
                carry = step(carry, load(slab[..., j]))
            return _joined(carry)

        if blocks:
            carry = _split(jax.lax.fori_loop(0, blocks, block_step, _joined(carry)))
        if chain and first + blocks * block < cols.n:
            carry = cut(carry)
        return result(one_by_one(carry, range(first + blocks * block, cols.n), g))

    return cols.join(tuple(group_sum(g, block) for g in range(len(cols.column(0)))))


def native_column_sum(x, order: str, exact: Callable):
    """``sequential`` or ``kahan`` of float32 ``x`` (..., n) as carriers, by plain float32 adds.

    With no tiny operand (nonzero, below 2^-103) every value in either loop is a multiple of
    2^-126, so zero or normal, and a native add is IEEE on every backend, flush-to-zero or
    not. Tiny inputs are made NaNs, which reach the result; so where some result is a NaN
    (a tiny input, or a NaN or inf - inf of the data itself), ``exact()`` gives the sums
    instead, by the carrier adder (one pass instead of two for data without either).
    """
    return _native_or_exact(native_column_fast(x, order), False, exact)


def native_column_fast(x, order: str):
    """``native_column_sum``'s native float32 sums alone (float32 values): right wherever none
    is a NaN; a NaN says the carrier adder must give that call's sums. On CPU the native
    kernel adds them (``native.chain_sums``: the same adds, 16 rows at once)."""
    kahan = order == "kahan"

    def by_xla(*parts):
        return column_sum(columns_of(parts), order, NativeFloat32, tiny_to_nan,
                          block=NATIVE_BLOCK, neg=NativeFloat32.neg,
                          chain=KAHAN_CHAIN if kahan else None,
                          loop_chain=KAHAN_LOOP_CHAIN if kahan else None)

    cols = x if isinstance(x, Columns) else Columns(x)
    return chain_sums(cols.parts(), kahan, by_xla)


def _native_or_exact(fast, tiny, exact: Callable):
    """The native float32 sums ``fast`` as carriers, or ``exact()`` where an input was tiny
    (``tiny``, a traced bool) or some sum is a NaN (a tiny input made one, or the data's own
    NaN or inf - inf: the carrier adder makes its NaNs canonical)."""
    bits = jax.lax.bitcast_convert_type(fast, U32)
    return jax.lax.cond(tiny | jnp.any((bits & MAG32) > INF32), exact, lambda: bits)


class _NativeAdder:
    """``tensor_sum``'s adder over native float32 values (``NativeFloat32``'s add)."""

    fmt = FORMATS["float"]
    add = staticmethod(NativeFloat32.add)

    @staticmethod
    def zeros(shape):
        return jnp.zeros(shape, jnp.float32)


# Tree orders that float32 adds natively under jit (``native_tree_sum``): 4096 x 4096 on the
# 2-core AVX-512 Xeon, adjacent_tree 14 ms against 24.5 by the carrier adder, repeat_tree 11.5
# against 31 (np.sum 7.2). repeat_sequential (13 ms by carriers, 25 native) and
# repeat_vector_merge (63-79 ms either way) stay on the carrier adder.
NATIVE_TREE_ORDERS = ("adjacent_tree", "repeat_tree")


def native_tree_sum(x, order: str, exact: Callable):
    """A ``NATIVE_TREE_ORDERS`` order of float32 ``x`` (..., n) as carriers, by plain float32
    adds; ``exact()`` instead where an input is tiny or a sum a NaN (``native_column_sum``'s
    argument: with no tiny input, every partial sum is zero or normal). Tininess is found by
    a reduction of its own: as ``tiny_to_nan`` fused into the tree, XLA's CPU backend ran the
    tree 5x slower."""
    if order == "adjacent_tree":
        fast = adjacent_tree(x, NativeFloat32.add)
    else:
        fast = _repeats(x, _NativeAdder, REPEAT_ORDERS[order])
    tiny = jnp.any(is_tiny(jax.lax.bitcast_convert_type(x, U32)))
    return _native_or_exact(fast, tiny, exact)


def stored_bits(x, fmt: Format):
    """``x`` held in ``fmt``'s storage dtype, a bfloat16 array as its bit patterns.

    XLA's CPU backend may carry a bfloat16 array that a loop reads (a scan, slices in a
    fori_loop) as float32 and convert it back where it is read; where the CPU has AVX512-BF16
    that conversion flushes subnormals to zero, whatever the flush-to-zero setting (a bfloat16
    sum of 0x0005 gave +0 on a Xeon with AVX512-BF16). Patterns move as integers. Other
    formats stay: a half's round trip through float32 keeps its value (its subnormals are
    float32 normals; a NaN is quieted, and sums make NaNs canonical anyway), and moved as
    patterns half Kahan ran 2.5x slower (1000 ms against 396 at 20000 x 4096), its widening no
    longer a native conversion.
    """
    return to_bits(x, fmt) if fmt.name == "bfloat16_t" else x


def stored_order(x, order: str, fmt: Format, config: Config):
    """``run_order`` of ``x`` (..., n) held in ``fmt``'s storage dtype, as carriers: float32
    tree orders by native adds where they give the carrier adder's bits (``native_tree_sum``),
    sequential and kahan by ``stored_sum``."""
    if order in ("sequential", "kahan"):
        return stored_sum(x, order, fmt, config)

    def exact():
        return run_order(load(x, fmt), order, fmt, config)

    if (fmt.name == "float" and config.float_overflow == "ieee"
            and order in NATIVE_TREE_ORDERS and x.shape[-1] > 1):
        return native_tree_sum(x, order, exact)
    return exact()


def stored_sum(x, order: str, fmt: Format, config: Config, path: str = "checked"):
    """``sequential`` or ``kahan`` of ``x`` (..., n) held in ``fmt``'s storage dtype (an array
    or ``Columns``), as carriers (columns are loaded inside the loop: no carriers array).

    ``path`` for float under IEEE overflow: ``"checked"``, native adds and the carrier adder
    where a sum comes out NaN, decided in the program (``native_column_sum``); ``"native"``,
    the native sums alone (``native_column_fast``: the caller checks for a NaN); ``"exact"``,
    the carrier adder alone. Other formats take the carrier adder whatever ``path`` says."""
    ar = Arith(fmt, config)
    array = not isinstance(x, Columns)
    if array:
        x = stored_bits(x, fmt)

    def scan():
        return scan_sum(jnp.moveaxis(x, -1, 0), order, ar, lambda row: load(row, fmt))

    if array and x.size < COLUMN_MIN_SIZE:
        return scan()

    def exact():
        if order == "kahan" and array:
            # Unrolled, Kahan's two-value carry makes XLA duplicate the adder's selects
            # across fusions (up to 10x slower): the scan over the moved axis is faster.
            return scan()
        return column_sum(x, order, ar, lambda column: load(column, fmt),
                          block=1 if order == "kahan" else COLUMN_BLOCK)

    if fmt.name == "float" and config.float_overflow == "ieee" and path != "exact":
        if path == "native":
            return jax.lax.bitcast_convert_type(native_column_fast(x, order), U32)
        return native_column_sum(x, order, exact)
    return exact()


def adjacent_tree(c, add: Callable):
    """Adjacent pairs level by level; an odd element at the end of a level moves up unchanged.

    Same values as padding with +0 to a power of two (what the hardware does), except that a
    lone -0 stays -0 instead of becoming -0 + +0 = +0.
    """
    while c.shape[-1] > 1:
        m = c.shape[-1]
        s = add(c[..., 0:m - 1:2], c[..., 1:m:2])
        c = jnp.concatenate([s, c[..., m - 1:]], axis=-1) if m % 2 else s
    return c[..., 0]


def _repeats(c, ar: Arith, method: int):
    """ReduceSum's first-n form with ``method`` (the page's number): 256-byte repeats, the last
    padded with +0; method 3 merges the registers in repeat order."""
    lanes = ar.fmt.lanes
    n = c.shape[-1]
    repeats = -(-n // lanes)
    pad = [(0, 0)] * (c.ndim - 1) + [(0, repeats * lanes - n)]
    w = jnp.pad(c, pad).reshape(c.shape[:-1] + (repeats, lanes))
    return tensor_sum(w, ar, method, "sequential")


def to_leading(x, order: str, fmt: Format):
    """``x`` (..., n) in its storage format, the scanned axis moved to the front: (n, ...); for
    repeat_vector_merge the registers (R, ..., lanes), the last padded with +0. Moved as
    ``stored_bits``."""
    x = stored_bits(x, fmt)
    if order != "repeat_vector_merge":
        return jnp.moveaxis(x, -1, 0)
    n, lanes = x.shape[-1], fmt.lanes
    repeats = -(-n // lanes)
    w = jnp.pad(x, [(0, 0)] * (x.ndim - 1) + [(0, repeats * lanes - n)])
    return jnp.moveaxis(w.reshape(x.shape[:-1] + (repeats, lanes)), -2, 0)


def leading_sum(rows, order: str, ar: Arith, load_row: Callable):
    """``run_order`` of a ``SCAN_ORDERS`` order on ``to_leading``'s rows (loaded per step)."""
    if order != "repeat_vector_merge":
        return scan_sum(rows, order, ar, load_row)
    return pair_tree(scan_sum(rows, "sequential", ar, load_row), ar.add)


def _kahan(c, ar: Arith):
    return scan_sum(jnp.moveaxis(c, -1, 0), "kahan", ar)


# --- NumPy's pairwise_sum -------------------------------------------------------------------

def numpy_plan(n: int, start: int = 0):
    """NumPy's recursion over ``n`` elements: a leaf is ``(start, size)`` (size <= 128), a node
    a pair ``(left, right)``. Split: n2 = n // 2 rounded down to a multiple of 8."""
    if n <= PW_BLOCKSIZE:
        return (start, n)
    half = _numpy_half(n)
    return (numpy_plan(half, start), numpy_plan(n - half, start + half))


def _numpy_half(n: int) -> int:
    """The size of the first half NumPy's pairwise_sum splits n > 128 elements into."""
    half = n // 2
    return half - half % 8


@functools.lru_cache(maxsize=1024)  # the halves' sizes repeat: each level costs two calls
def numpy_depth(n: int) -> int:
    """``tree_depth`` of NumPy's pairwise tree over n elements (``_numpy_tree``), without
    building it: a leaf block of s < 8 is a chain (s - 1 adds); of s >= 8, eight chains of
    s // 8 values, their pair tree (3 adds), then the s % 8 left one by one."""
    if n <= PW_BLOCKSIZE:
        return n - 1 if n < 8 else n // 8 - 1 + 3 + n % 8
    half = _numpy_half(n)
    return 1 + max(numpy_depth(half), numpy_depth(n - half))


def _leaves(plan) -> list:
    out, stack = [], [plan]
    while stack:
        node = stack.pop()
        if isinstance(node[0], int):
            out.append(node)
        else:
            stack += [node[1], node[0]]
    return out


def _numpy_leaf(v, add: Callable):
    """pairwise_sum on a block ``(..., size)``: below 8, -0 + v0 + v1 + ...; else 8 accumulators
    r[j] += v[i + j], then ((r0+r1)+(r2+r3))+((r4+r5)+(r6+r7)), then the rest one by one."""
    size = v.shape[-1]
    if size < 8:
        res = jnp.full(v.shape[:-1], SIGN32, U32)
        for i in range(size):
            res = add(res, v[..., i])
        return res
    r = v[..., 0:8]
    end = size - size % 8
    for i in range(8, end, 8):
        r = add(r, v[..., i:i + 8])
    res = pair_tree(r, add)
    for i in range(end, size):
        res = add(res, v[..., i])
    return res


def _numpy_pairwise(c, ar: Arith):
    """NumPy's np.sum: 0 + pairwise_sum(x), accumulated in float32, rounded once to the format."""
    plan = numpy_plan(c.shape[-1])
    leaves = _leaves(plan)
    index = {leaf: i for i, leaf in enumerate(leaves)}
    by_size: dict[int, list] = {}
    for leaf in leaves:
        by_size.setdefault(leaf[1], []).append(leaf)
    values = jnp.zeros(c.shape[:-1] + (len(leaves),), U32)
    for size, group in by_size.items():
        idx = np.array([start for start, _ in group])[:, None] + np.arange(size)
        values = values.at[..., np.array([index[g] for g in group])].set(
            _numpy_leaf(c[..., idx], ar.add_f32))
    total = run_tree(values, _relabel(plan, index), ar.add_f32)
    # 0 + total, written out: XLA folds an add of +0 away under jit, which would keep a -0
    # (NumPy, and this path run eagerly, give +0). Every other value passes unchanged.
    return ar.round(jnp.where(total == SIGN32, jnp.zeros_like(total), total))


def _relabel(plan, index):
    if isinstance(plan[0], int):
        return index[plan]
    return (_relabel(plan[0], index), _relabel(plan[1], index))


# --- any tree -------------------------------------------------------------------------------

def tree_schedule(tree, n: int):
    """Level-by-level schedule of a summation tree over n leaves.

    Returns a list of ``(left, right)`` index arrays; level k's results get the buffer indices
    after all earlier ones. A node with more than two children adds them left to right.
    """
    nodes = []  # (left id, right id, height); ids >= n are nodes, in creation order
    stack = [(tree, False)]
    done: list = []
    while stack:
        t, expanded = stack.pop()
        if isinstance(t, (int, np.integer)):
            done.append((int(t), 0))
        elif not expanded:
            stack.append((t, True))
            stack += [(child, False) for child in reversed(t)]
        else:
            kids = [done.pop() for _ in t][::-1]
            node, height = kids[0]
            for kid, kid_height in kids[1:]:
                height = max(height, kid_height) + 1
                nodes.append((node, kid, height))
                node = n + len(nodes) - 1
            done.append((node, height))
    heights = np.array([h for _, _, h in nodes], int)
    rank = np.argsort(heights, kind="stable")
    new_id = np.arange(n + len(nodes))
    new_id[n + rank] = n + np.arange(len(nodes))
    levels = []
    for h in np.unique(heights):
        members = rank[heights[rank] == h]
        levels.append((new_id[[nodes[m][0] for m in members]],
                       new_id[[nodes[m][1] for m in members]]))
    return levels


def run_tree(values, tree, add: Callable):
    """Sum ``values`` (..., n) along a summation tree (nested tuples of indices), level by level.

    Each level is one vectorised add of gathered operands, so a tree of height h costs h
    steps: meant for trees of modest height (a sequential tree of n leaves has height n-1).
    """
    n = values.shape[-1]
    if isinstance(tree, (int, np.integer)):
        return values[..., int(tree)]
    for left, right in tree_schedule(tree, n):
        values = jnp.concatenate([values, add(values[..., left], values[..., right])], axis=-1)
    return values[..., -1]


# --- dispatch -------------------------------------------------------------------------------

def run_order(c, order: str, fmt: Format, config: Config | None = None):
    """The sum of carriers ``c`` (..., n), n >= 1, in ``fmt`` along ``order``, as carriers."""
    ar = Arith(fmt, resolve_config(config))
    if order == "sequential":
        return _sequential(c, ar)
    if order == "adjacent_tree":
        return adjacent_tree(c, ar.add)
    if order in REPEAT_ORDERS:
        return _repeats(c, ar, REPEAT_ORDERS[order])
    if order == "numpy_pairwise":
        return _numpy_pairwise(c, ar)
    if order == "kahan":
        return _kahan(c, ar)
    raise ValueError(f"unknown order {order!r}; valid: {ORDERS}")


def order_tree(order: str, n: int, fmt: Format):
    """The summation tree of ``order`` over n inputs, as nested tuples (None for kahan)."""
    leaves = list(range(n))
    if order == "kahan":
        return None
    if order == "sequential":
        return _chain(leaves)
    if order == "adjacent_tree":
        return _pairs(leaves)
    if order in REPEAT_ORDERS:
        lanes = fmt.lanes
        if order == "repeat_vector_merge":  # lane j: ((x_j, x_{lanes+j}), ...), then pairs
            return _pairs([_chain(leaves[j::lanes]) for j in range(min(n, lanes))])
        repeats = [_pairs(leaves[r:r + lanes]) for r in range(0, n, lanes)]
        return _pairs(repeats) if order == "repeat_tree" else _chain(repeats)
    if order == "numpy_pairwise":
        return _numpy_tree(numpy_plan(n))
    if order == "float_acc_repeat_sequential":  # ReduceSum method 1 in float (64 lanes)
        return order_tree("repeat_sequential", n, FORMATS["float"])
    if order == "whole_reduce_chain":  # each repeat's pair tree, level after level
        while len(leaves) > 1:
            leaves = [_pairs(leaves[r:r + fmt.lanes]) for r in range(0, len(leaves), fmt.lanes)]
        return leaves[0]
    raise ValueError(f"unknown order {order!r}; valid: {STUDY_ORDERS}")


def _chain(items: list):
    """Items added in order: ((i0, i1), i2), ..."""
    t = items[0]
    for item in items[1:]:
        t = (t, item)
    return t


def _pairs(items: list):
    """Adjacent-pair tree over items, an odd last item moving up unchanged."""
    while len(items) > 1:
        nxt = [(items[i], items[i + 1]) for i in range(0, len(items) - 1, 2)]
        items = nxt + items[len(items) - len(items) % 2:] if len(items) % 2 else nxt
    return items[0]


def _numpy_tree(plan):
    if not isinstance(plan[0], int):
        return (_numpy_tree(plan[0]), _numpy_tree(plan[1]))
    start, size = plan
    idx = list(range(start, start + size))
    if size < 8:  # -0 + v0 is exact: the -0 start is no node of the tree
        t = idx[0]
        for i in idx[1:]:
            t = (t, i)
        return t
    end = size - size % 8
    r = list(idx[:8])
    for i in range(8, end, 8):
        r = [(r[j], idx[i + j]) for j in range(8)]
    t = _pairs(r)
    for i in idx[end:]:
        t = (t, i)
    return t


def tree_depth(tree) -> int:
    """Largest number of adds on a path from a leaf to the root (a k-ary node counts k-1)."""
    if tree is None:
        raise ValueError("no summation tree")
    stack, best = [(tree, 0)], 0
    while stack:
        t, d = stack.pop()
        if isinstance(t, (int, np.integer)):
            best = max(best, d)
        else:
            k = len(t)
            # child i of a k-ary node (added left to right) passes through k-1 adds at most
            stack += [(child, d + k - max(i, 1)) for i, child in enumerate(t)]
    return best


# --- host fast paths (NumPy) ----------------------------------------------------------------
#
# Some orders on concrete arrays, in NumPy's own arithmetic on the storage dtype: a float32 add
# is IEEE (RNE, subnormals kept: NumPy sets no flush-to-zero); a float16 add is a float32 add
# rounded to half and a bfloat16 (ml_dtypes) add a float32 add rounded to bfloat16, both one
# correct rounding (24 >= 2p + 2 bits: double rounding is innocuous). So each add is the
# adder's and the order is written out as in the JAX paths; only NaN payloads differ, and the
# result's NaNs are made canonical. tests/test_precision_host.py checks them bit for bit
# against the JAX paths.

HOST_ORDERS = ("adjacent_tree", "repeat_sequential", "repeat_tree", "repeat_vector_merge",
               "numpy_pairwise")
# Where ``precision.sum`` takes the host path for a concrete input: where it beat the jitted
# JAX path by a clear margin (benchmarks/precision_speed.py --jax, 2-core CPU, 20000 x 4096
# half, 4096 x 4096 bfloat16 and float; benchmarks/results/issue17). Column-by-column orders
# (sequential, kahan) cost one NumPy call per column and never won: XLA's loop is as fast.
USE_HOST = {"half": ("numpy_pairwise",),
            "bfloat16_t": ("numpy_pairwise", "repeat_vector_merge"),
            "float": ("adjacent_tree", "repeat_sequential", "repeat_tree", "repeat_vector_merge",
                      "numpy_pairwise")}


def _host_adjacent_tree(c: np.ndarray) -> np.ndarray:
    while c.shape[-1] > 1:
        m = c.shape[-1]
        s = c[..., 0:m - 1:2] + c[..., 1:m:2]
        c = np.concatenate([s, c[..., m - 1:]], axis=-1) if m % 2 else s
    return c[..., 0]


def _host_pair_tree(v: np.ndarray) -> np.ndarray:
    """Adjacent-pair tree over a last axis of any length, padded with +0 to a power of two."""
    n = v.shape[-1]
    width = 1 << (n - 1).bit_length()
    if width != n:
        v = np.concatenate([v, np.zeros(v.shape[:-1] + (width - n,), v.dtype)], axis=-1)
    while v.shape[-1] > 1:
        v = v[..., 0::2] + v[..., 1::2]
    return v[..., 0]


def _host_chain(v: np.ndarray) -> np.ndarray:
    """((v0 + v1) + v2) + ... over the last axis (a short one: the repeats)."""
    total = v[..., 0].copy()
    for i in range(1, v.shape[-1]):
        np.add(total, v[..., i], out=total)
    return total


def _host_repeats(x: np.ndarray, fmt: Format, method: int) -> np.ndarray:
    lanes = fmt.lanes
    rows, n = x.shape
    repeats = -(-n // lanes)
    w = x
    if n % lanes:
        w = np.zeros((rows, repeats * lanes), x.dtype)  # the last repeat padded with +0
        w[:, :n] = x
    w = w.reshape(rows, repeats, lanes)
    if method == 3:
        if fmt.name != "float":
            return _host_pair_tree(_host_chain(np.moveaxis(w, 1, 2)))
        # float32 adds over a middle axis run in index order, ((r0 + r1) + r2) + ..., as
        # lane-wise vector adds (tested against the chain); NumPy starts from +0, so a lane
        # of -0 registers only would come out +0 instead of -0.
        merged = np.add.reduce(w, axis=1)
        zero = np.flatnonzero(merged.view(np.uint32) == 0)
        if zero.size:
            lanes_of = w.transpose(0, 2, 1).reshape(-1, repeats)[zero]
            all_negative = np.all(lanes_of.view(np.uint32) == np.uint32(0x80000000), axis=-1)
            merged.reshape(-1)[zero[all_negative]] = np.float32(-0.0)
        return _host_pair_tree(merged)
    sums = _host_pair_tree(w)
    return _host_pair_tree(sums) if method == 2 else _host_chain(sums)


def _host_numpy_pairwise(x: np.ndarray) -> np.ndarray:
    # NumPy's own float32 pairwise sum is the order modelled above, 0 + total, rounded once.
    # A C-contiguous block reduced over its last axis runs that sum row by row (tested against
    # one call per row).
    block = np.ascontiguousarray(x, np.float32)
    return (np.add.reduce(block, axis=-1) + np.float32(0)).astype(x.dtype)


def host_order(x: np.ndarray, order: str, fmt: Format, native_path: bool = True) -> np.ndarray:
    """The sum of ``x`` (rows, n) in its storage dtype along ``order`` (one of
    ``HOST_ORDERS``), by NumPy: the same bits as ``run_order`` under the default
    float_overflow="ieee" (callers check that)."""
    if x.shape[-1] == 1 and order == "adjacent_tree":
        out = x[:, 0].copy()  # no add at all: the value as ``load`` carries it
        if fmt.name == "half":  # a half NaN's carrier is quiet, payload kept
            bits = out.view(np.uint16)
            bits[(bits & 0x7FFF) > 0x7C00] |= np.uint16(0x200)
        return out
    if (native_path and fmt.name == "float" and order in native.TREE_METHODS
            and x.nbytes >= IN_PLACE_MIN_BYTES and native.trees_enabled()
            and jax.default_backend() == "cpu"):
        return _canonical(_native_tree_host(x, order), fmt)
    if order == "adjacent_tree":
        rows_sum = _host_adjacent_tree
    elif order in REPEAT_ORDERS:
        rows_sum = functools.partial(_host_repeats, fmt=fmt, method=REPEAT_ORDERS[order])
    elif order == "numpy_pairwise":
        rows_sum = _host_numpy_pairwise
    else:
        raise ValueError(f"no host path for order {order!r}; host orders: {HOST_ORDERS}")
    def block_sum(block):
        with np.errstate(all="ignore"):  # inf and NaN arise as IEEE says
            return rows_sum(block)

    return _canonical(map_row_blocks(block_sum, x), fmt)  # a block's tree stays in cache


def _native_tree_host(x: np.ndarray, order: str) -> np.ndarray:
    """``host_order`` of float32 rows by the native kernel (``native.tree_sums_host``: the
    same adds), the rows that come out NaN (a tiny input, the data's NaN or inf - inf) summed
    again by NumPy."""
    out = np.array(native.tree_sums_host(rows_in_place(x), order))
    redo = np.flatnonzero(np.isnan(out))
    if redo.size:
        out[redo] = host_order(np.ascontiguousarray(x[redo]), order, FORMATS["float"],
                               native_path=False)
    return out


def _canonical(out: np.ndarray, fmt: Format) -> np.ndarray:
    """``out`` with every NaN the format's canonical NaN (what the carrier adder gives)."""
    bits = out.view(fmt.bits_dtype)
    with np.errstate(all="ignore"):
        nan = np.isnan(out.astype(np.float32))
    m, e = fmt.mantissa_bits, fmt.exponent_bits
    canonical = (((1 << e) - 1) << m) | (1 << (m - 1))
    return np.where(nan, fmt.bits_dtype.type(canonical), bits).view(fmt.storage_dtype)
