"""The host (NumPy) fast paths of ``precision.sum`` and ``exact_sum`` give the JAX paths' bits.

A concrete half/bfloat16/float array takes the NumPy path; the same call under ``jax.jit``
traces and takes the JAX path (integer limbs, the bit-pattern adder), so comparing the two
checks the fast paths bit for bit on random and adversarial data.
"""

from __future__ import annotations

import contextlib
import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from strategies import (
    assert_bits_equal,
    bfloat16_loops,
    few_examples,
    programs_compiled,
    register_values,
)

import ascjax
from ascjax import precision, reference
from ascjax._src import native
from ascjax._src.io import binio
from ascjax._src.isa.lanes import materialize
from ascjax._src.numerics import exact, host_blocks
from ascjax._src.numerics.add import NativeFloat32, tiny_to_nan
from ascjax._src.numerics.host_blocks import map_row_blocks
from ascjax._src.study import orders
from ascjax._src.study import precision as impl

FLOATS = ("half", "bfloat16_t", "float")


def _data(rng, name: str, rows: int, n: int) -> np.ndarray:
    """Adversarial registers (NaN, inf, -0, subnormals, overflow edges, small integers) and
    random normal rows at random scales with wide exponent spreads."""
    adversarial = register_values(rng, name, (rows, n), 0.05)
    x = rng.standard_normal((rows, n)) * 2.0 ** rng.integers(-30, 30, (rows, 1))
    x = np.where(rng.random((rows, 1)) < 0.5, x * 2.0 ** rng.integers(-20, 20, (rows, n)), x)
    zeros = np.where(rng.random((2, n)) < 0.5, -0.0, 0.0)  # all -0 / mixed signed zeros
    zeros[0] = -0.0
    return np.concatenate([adversarial, precision.to_format(x, name),
                           precision.to_format(zeros, name)])


@functools.lru_cache
@functools.cache
def _traced_sum(order: str):
    """precision.sum under jit (one function per order: compiled once per shape)."""
    return jax.jit(lambda v: precision.sum(v, order=order))


@functools.cache
def _traced_exact_and_parts(fmt):
    """exact_sum and the limb path's parts (magnitude, sign, rounded) under one jit: XLA
    shares the limb sums, so the pair compiles as fast as exact_sum alone."""
    return jax.jit(lambda v: (precision.exact_sum(v), *impl._exact_parts(fmt, v)))


def _traced_exact(x):
    """precision.exact_sum under jit (``_traced_exact_and_parts``: a shape whose parts are
    wanted too compiles once)."""
    return _traced_exact_and_parts(ascjax.resolve_format(x.dtype))(x)[0]


def _traced_exact_parts(fmt, x):
    """The limb path's (magnitude, sign, rounded) under jit, from ``_traced_exact``'s program."""
    return _traced_exact_and_parts(fmt)(x)[1:]


def _host(x: np.ndarray, order: str) -> np.ndarray:
    fmt = ascjax.resolve_format(x.dtype)
    return orders.host_order(x.reshape(-1, x.shape[-1]), order, fmt).reshape(x.shape[:-1])


@pytest.mark.parametrize("name", FLOATS)
@pytest.mark.parametrize("order", orders.HOST_ORDERS)
@few_examples(20)
@given(seed=st.integers(0, 2**32 - 1), n=st.sampled_from([1, 6, 520]))
def test_host_orders_match_the_jax_path(name, order, seed, n):
    x = _data(np.random.default_rng(seed), name, 6, n)
    assert_bits_equal(_host(x, order), _traced_sum(order)(jnp.asarray(x)),
                      f"{order} {name} n={n}")


def test_numpy_pairwise_past_one_numpy_buffer_is_np_sums_own_tree():
    """Rows longer than NumPy's 8192-element buffer: NumPy before 2.3 summed them buffer by
    buffer in sequence, so the host path (np.add.reduce) left the modelled tree (a portability
    review, stop 47: 4 of 16 rows of 65536 floats differed; numpy>=2.3 is now required). The
    host path, np.sum itself and the traced tree agree at n = 8200."""
    rng = np.random.default_rng(8200)
    for name in ("float", "half"):
        x = _data(rng, name, 4, 8200)
        host = _host(x, "numpy_pairwise")
        assert_bits_equal(host, _traced_sum("numpy_pairwise")(jnp.asarray(x)), name)
        if name == "float":
            with np.errstate(over="ignore", invalid="ignore"):   # the data's infs and NaNs
                numpy = np.sum(x, axis=-1)
            number = ~np.isnan(numpy)             # NumPy keeps NaN payloads, ascjax's are canonical
            assert number.sum() >= 6
            assert_bits_equal(host[number], numpy[number], "np.sum")


def test_float_vector_merge_keeps_lanes_of_negative_zeros():
    """NumPy's add.reduce over the repeats starts from +0: a lane that is -0 in every register
    must still merge to -0 (the hardware adds r0 + r1 + ...)."""
    x = np.full((3, 4 * 64), -0.0, np.float32)
    x[1, 5] = 1.0
    x[2, 64 + 7] = 0.0  # +0 in one register: that lane merges to +0
    assert_bits_equal(_host(x, "repeat_vector_merge"),
                      _traced_sum("repeat_vector_merge")(jnp.asarray(x)), "-0 lanes")
    assert np.signbit(_host(x, "repeat_vector_merge")[0])


@pytest.mark.parametrize(("name", "order"), [
    (name, order) for name in FLOATS for order in orders.SCAN_ORDERS
    if order not in orders.USE_HOST.get(name, ())])  # those take the host path
@few_examples(5)
@given(seed=st.integers(0, 2**32 - 1), n=st.sampled_from([1, 2, 6, 129, 520]))
def test_scan_orders_on_leading_rows_match_the_jax_path(name, order, seed, n):
    """A concrete input's sequential, kahan and repeat_vector_merge sums (over blocks of
    columns, or rows moved to the leading axis by a call of their own) give the traced call's
    bits, 2-D and 3-D."""
    x = _data(np.random.default_rng(seed), name, 6, n)
    want = _traced_sum(order)(jnp.asarray(x))
    assert_bits_equal(precision.sum(x, order=order), want, f"{order} {name} n={n}")
    assert_bits_equal(precision.sum(x[:12].reshape(2, 6, n), order=order),
                      np.asarray(want)[:12].reshape(2, 6), f"{order} {name} n={n}, 3-D")


@pytest.mark.parametrize("order", ["adjacent_tree", "numpy_pairwise", "repeat_tree"])
@pytest.mark.parametrize("shape", [(1, 4096), (2, 20000), (3000, 9), (40000, 3), (5, 70001)])
@pytest.mark.parametrize("dtype", [np.float16, np.float32])
def test_host_orders_keep_their_order_at_any_shape(order, shape, dtype):
    """One row, rows longer than NumPy's buffers, many short rows, blocks of rows: NumPy's own
    loop order must not leak in (np.add.reduce over a 2-D array could run along either axis)."""
    x = np.ones(shape, dtype)
    # half an ulp of 1, lost only where the order says
    x[..., 1::3] = 2.0 ** -10 if dtype == np.float16 else 2.0 ** -23
    assert_bits_equal(_host(x, order), _traced_sum(order)(jnp.asarray(x)), f"{order} {shape}")


def test_sum_takes_the_host_path_only_where_listed():
    """precision.sum on a concrete input: the host path for USE_HOST's orders, the same bits
    as the jitted call either way."""
    # the shape of the tests above (14 rows of 520): their jitted programs serve here
    x = _data(np.random.default_rng(3), "float", 6, 520)
    for order in precision.ORDERS:
        assert_bits_equal(precision.sum(x, order=order), _traced_sum(order)(jnp.asarray(x)),
                          order)
    assert set(orders.USE_HOST["float"]) <= set(orders.HOST_ORDERS)


@pytest.mark.parametrize("name", FLOATS)
@few_examples(2)  # each n compiles the limb path anew (~1 s a program): the deep profile more
@given(seed=st.integers(0, 2**32 - 1), n=st.sampled_from([5, 300, 4096]))
def test_host_exact_sum_matches_the_limb_path(name, seed, n):
    x = _data(np.random.default_rng(seed), name, 6, n)
    host = precision.exact_sum(x)
    traced = _traced_exact(jnp.asarray(x))
    assert_bits_equal(host, traced, f"exact_sum {name} n={n}")
    fmt = ascjax.FORMATS[name]
    mag, negative, rounded = _traced_exact_parts(fmt, jnp.asarray(x))
    wide = exact.limbs_to_float64(mag, negative, fmt, n)
    with np.errstate(invalid="ignore"):
        finite = np.all(np.isfinite(x.astype(np.float64)), axis=-1)
    got_rounded, got_wide = precision.exact_sums(x)
    assert_bits_equal(got_rounded, rounded, "exact_sums rounded")
    assert_bits_equal(got_wide, np.where(finite, wide, np.nan), "exact_sums float64")


@pytest.mark.parametrize("name", FLOATS)
def test_host_exact_path_takes_the_rows_it_can(name):
    """Random normal rows are summed in float64 (done); inf/NaN rows and rows spanning more
    exponents than float64 holds are left to the limb path."""
    fmt = ascjax.FORMATS[name]
    rng = np.random.default_rng(0)
    x = precision.to_format(rng.standard_normal((3, 4096)), name).copy()
    x[1, 7] = np.inf
    x[2, :2] = precision.to_format(np.array([float(ascjax.finfo(name).max),
                                             float(ascjax.finfo(name).smallest_subnormal)]),
                                   name)
    _, _, done = exact.exact_sum_host(x.view(fmt.bits_dtype), fmt)
    # half: its whole range fits float64 for n <= 2^13, so only the inf row is left
    assert done.tolist() == ([True, False, True] if name == "half" else [True, False, False])


def test_host_paths_keep_the_config_and_transformations():
    """float_overflow="saturate" (half) takes the JAX path; grad and vmap still trace."""
    x = np.full((2, 3), 60000, np.float16)
    sat = precision.sum(x, order="numpy_pairwise",
                        config=ascjax.Config(float_overflow="saturate"))
    assert np.asarray(sat).view(np.uint16).tolist() == [0x7BFF, 0x7BFF]
    assert np.isinf(np.asarray(precision.sum(x, order="numpy_pairwise"))).all()
    g = jax.grad(lambda v: precision.sum(v, order="kahan").sum().astype(np.float32))(
        jnp.asarray(x))
    assert np.asarray(g).tolist() == np.ones_like(x).tolist()
    v = jax.vmap(lambda r: precision.exact_sum(r))(jnp.asarray(x))
    assert np.isinf(np.asarray(v)).all()


# --- rows read in place, float's native adds, float's certified exact sums ----------------

@contextlib.contextmanager
def _column_loops(in_place: bool = False):
    """precision.sum with the column loops (and rows read in place) at any size: small test
    arrays would scan; the kernels' caches are cleared first so that no trace of the scan
    serves (a column trace left behind gives the same bits: it may serve later tests)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(orders, "COLUMN_MIN_SIZE", 0)
        if in_place:
            patch.setattr(binio, "IN_PLACE_MIN_BYTES", 0)
        impl._sum_kernel.clear_cache()
        impl._stored_sum_host.clear_cache()
        yield


def _at_shift(x: np.ndarray, shift: int) -> np.ndarray:
    """A copy of ``x`` whose data starts ``shift`` elements past a 64-byte boundary."""
    raw = binio.aligned_empty(x.size + 64, x.dtype)
    out = raw[shift:shift + x.size].reshape(x.shape)
    out[...] = x
    return out


# (bfloat16 rows move as half's do: the column loops' formats are covered below)
@pytest.mark.parametrize(("name", "order"), [("half", "sequential"), ("float", "sequential"),
                                             ("float", "kahan")])
@few_examples(2)
@given(seed=st.integers(0, 2**32 - 1), n=st.sampled_from([2, 300]),
       shift=st.integers(0, 31))
def test_rows_read_in_place_give_the_jax_paths_bits(name, order, seed, n, shift):
    """A concrete input starting anywhere past an aligned address: its rows are handed over
    in place from the first aligned element (``binio.rows_in_place``), row 0's head and the
    last row's tail copied; the sums are the traced call's, bit for bit."""
    rng = np.random.default_rng(seed)
    adversarial = _data(rng, name, 6, n)
    # clean rows too (no NaN, inf or subnormal): float's native adds decide per call
    clean = precision.to_format(rng.standard_normal((6, n)) * 2.0 ** rng.integers(-8, 8), name)
    xs = [_at_shift(data, shift % (64 // data.itemsize)) for data in (adversarial, clean)]
    wants = [_traced_sum(order)(jnp.asarray(x)) for x in xs]  # before the loops are forced
    with _column_loops(in_place=True):
        for x, want in zip(xs, wants, strict=True):
            first_aligned = (-x.ctypes.data % 64) // x.itemsize
            assert len(binio.rows_in_place(x)) == (3 if 0 < first_aligned < n else 1)
            assert_bits_equal(precision.sum(x, order=order), want,
                              f"{order} {name} n={n} {shift=}")
            if name == "float":
                assert_bits_equal(precision.exact_sum(x), _traced_exact(jnp.asarray(x)),
                                  f"exact_sum n={n} {shift=}")


@pytest.mark.parametrize("shift", [0, 5])
def test_rows_in_place_are_the_callers_memory(shift):
    """An aligned input is handed over whole, without a copy (it used to be copied: 21 ms
    for 64 MiB, more than the float32 sum itself); a shifted one from its first aligned
    element. Both give the traced call's bits."""
    x = _at_shift(np.random.default_rng(shift).standard_normal((6, 300)).astype(np.float32),
                  shift)
    with _column_loops(in_place=True):
        parts = binio.rows_in_place(x)
        assert len(parts) == (1 if shift == 0 else 3)
        assert parts[0].unsafe_buffer_pointer() == x.ctypes.data + 4 * (-shift % 16)
        for order in ("sequential", "kahan"):
            assert_bits_equal(precision.sum(x, order=order),
                              _traced_sum(order)(jnp.asarray(x)), f"{order} {shift=}")
        assert_bits_equal(precision.exact_sum(x), _traced_exact(jnp.asarray(x)), f"{shift=}")


def _no_tiny_floats(rng, rows: int, n: int) -> np.ndarray:
    """float32 rows without tiny values, NaN or inf: wide scales, overflow to inf on the way,
    exact cancellation, -0 rows."""
    # scales up to 2^124: |x| < 2^127 stays finite in float32 (sums still overflow)
    x = rng.standard_normal((rows, n)) * 2.0 ** rng.integers(-100, 125, (rows, 1))
    x = np.where(rng.random((rows, n)) < 0.2, 0.0, x).astype(np.float32)
    x[np.abs(x) < 2.0 ** -102] = 0.0
    x[0, ::3] = np.finfo(np.float32).max
    x[1] = -0.0
    x[2, n // 2:] = -x[2, :n - n // 2]
    return x


@pytest.mark.parametrize("native", [False, True])
@pytest.mark.parametrize("order", ["sequential", "kahan"])
@few_examples(4)
@given(seed=st.integers(0, 2**32 - 1), size=st.integers(0, 4))
def test_native_float_adds_are_the_carrier_adders(order, native, seed, size):
    """float's fast path, the backend's float32 adds, against the carrier adder: the same
    bits wherever no input is tiny (NaNs only from inf - inf), and a NaN wherever one is.
    ``native``: the loop as ``native_column_sum`` runs it (``NATIVE_BLOCK`` columns a step,
    Kahan's chains cut inside and outside the loop), over 2-4 blocks and a tail (or none)."""
    n = ([300, 420, 385, 257, 300] if native else [1, 3, 64, 65, 200])[size]
    rng = np.random.default_rng(seed)
    x = _no_tiny_floats(rng, 8, n)
    ar = orders.Arith(ascjax.FORMATS["float"], ascjax.Config())
    loop = {"block": orders.NATIVE_BLOCK} if native else {}
    if native and order == "kahan":
        loop.update(chain=orders.KAHAN_CHAIN, loop_chain=orders.KAHAN_LOOP_CHAIN)
    fast = jax.jit(lambda v: orders.column_sum(v, order, NativeFloat32, tiny_to_nan,
                                               neg=NativeFloat32.neg, **loop))
    exact_sum = jax.jit(lambda v: orders.scan_sum(
        jnp.moveaxis(jax.lax.bitcast_convert_type(v, jnp.uint32), -1, 0), order, ar))
    got, want = np.asarray(fast(x)), np.asarray(exact_sum(x)).view(np.float32)
    nan = np.isnan(want)
    assert_bits_equal(got[~nan], want[~nan], f"{order} n={n}")
    assert np.isnan(got[nan]).all()
    x[:, -1] = np.float32(2.0 ** -110)  # tiny: the fast path must hand over to the exact one
    assert np.isnan(np.asarray(fast(x))).all()
    assert_bits_equal(precision.sum(x, order=order),
                      [reference.SUMMATION_ORDERS[order](row, "float") for row in x],
                      f"{order} with tiny inputs")


@pytest.mark.parametrize("order", ["sequential", "kahan"])
def test_float_host_sums_compile_the_carrier_adder_only_where_a_row_needs_it(order):
    """A concrete float array runs the native loop alone; the carrier adder's program is
    compiled and run only once a sum comes out NaN (a tiny input, a NaN): compiling both
    into one program took 2-6x longer for a branch most data never takes. Same bits."""
    rng = np.random.default_rng(7)
    x = _at_shift(rng.standard_normal((6, 100)).astype(np.float32), 3)  # ShiftedColumns
    want = [reference.SUMMATION_ORDERS[order](row, "float") for row in x]
    with _column_loops(in_place=True):
        assert_bits_equal(precision.sum(x, order=order), want, f"{order} native")
        assert impl._stored_sum_host._cache_size() == 1
        x[2, 7], x[4, 0] = np.float32(2.0 ** -110), np.nan
        want = [reference.SUMMATION_ORDERS[order](row, "float") for row in x]
        assert_bits_equal(precision.sum(x, order=order), want, f"{order} carrier adder")
        assert impl._stored_sum_host._cache_size() == 2


@pytest.mark.parametrize("order", orders.NATIVE_TREE_ORDERS)
@few_examples(2)  # ~20 programs an example
@given(seed=st.integers(0, 2**32 - 1), n=st.sampled_from([2, 3, 63, 64, 65, 130, 300]))
def test_native_tree_orders_are_the_carrier_adders(order, seed, n):
    """float32 tree orders under jit add natively (``orders.native_tree_sum``), the carrier
    adder's bits. Clean rows (scales 2^-60..2^60, all -0 and mixed signed-zero rows, a sum
    that overflows, registers padded with +0) take the native sums: an ``exact`` that returns
    garbage must not be called. Adversarial rows (tiny values, NaN, inf - inf) hand over to
    ``exact``. Under jit (the clean rows eagerly too: the carrier adder op by op would
    compile each of its primitives), and through ``precision.sum`` under jit."""
    rng = np.random.default_rng(seed)
    fmt, config = ascjax.FORMATS["float"], ascjax.Config()

    def carriers(v):
        return orders.run_order(orders.load(v, fmt), order, fmt, config)

    clean = rng.standard_normal((6, n)) * 2.0 ** rng.integers(-60, 60, (6, 1))
    clean[0], clean[1] = -0.0, np.where(rng.random(n) < 0.5, -0.0, 0.0)
    clean[2, 0] = clean[2, 1] = np.finfo(np.float32).max  # +inf, never inf - inf
    clean = clean.astype(np.float32)
    garbage = np.full(6, 0xDEADBEEF, np.uint32)
    adversarial = _data(rng, "float", 6, n)
    for x, fallback in ((clean, lambda v: jnp.asarray(garbage)), (adversarial, carriers)):
        want = jax.jit(carriers)(x)

        def fast(v, fallback=fallback):
            return orders.native_tree_sum(v, order, lambda: fallback(v))

        runs = [jax.jit(fast)(x)] + ([fast(jnp.asarray(x))] if x is clean else [])
        for got in runs:
            assert_bits_equal(got, want, f"{order} n={n}")
        assert_bits_equal(_traced_sum(order)(jnp.asarray(x)),
                          np.asarray(want).view(np.float32), f"precision.sum {order} n={n}")


def test_joined_carry_keeps_every_bit():
    """Kahan's (s, e) through ``orders._joined`` (one complex64 array), a buffer of its own
    (``materialize``) and ``_split``, eager and under jit: NaN payloads, -0, inf and
    subnormals come back with their bits."""
    special = np.array([0x7FC00001, 0xFFA00000, 0x80000000, 0x00000001, 0x807FFFFF,
                        0x7F800000, 0x3F800000, 0x00000000], np.uint32)
    s, e = special.view(np.float32), special[::-1].copy().view(np.float32)

    def through(a, b):
        return orders._split(materialize(orders._joined((jnp.asarray(a), jnp.asarray(b)))))

    for got in (through(s, e), jax.jit(through)(s, e)):
        assert_bits_equal(got[0], s, "s")
        assert_bits_equal(got[1], e, "e")
    one = jnp.asarray(s)
    assert orders._split(orders._joined(one)) is one  # a one-array carry stays as it is


@pytest.mark.parametrize("order", ["sequential", "kahan"])
def test_float_fast_path_is_the_same_eager_jit_vmap(order):
    """The fast path decides per call (a lax.cond on the whole batch; under vmap both
    branches run): clean rows, a row with a subnormal and a NaN row agree every way."""
    x = _no_tiny_floats(np.random.default_rng(4), 6, 70)
    x[3, 5] = np.float32(1e-40)
    x[4, 9] = np.nan
    want = [reference.SUMMATION_ORDERS[order](row, "float") for row in x]
    with _column_loops():
        _check_every_way(x, order, want)


@pytest.mark.parametrize("order", orders.NATIVE_TREE_ORDERS)
def test_native_tree_orders_are_the_same_eager_jit_vmap(order):
    """The native tree's choice is per call too (under vmap both branches run): clean rows,
    a row with a subnormal and a NaN row against the scalar reference, by the host path
    (eager), under jit, under vmap, the clean rows alone and row by row."""
    x = _no_tiny_floats(np.random.default_rng(5), 6, 70)
    x[3, 5] = np.float32(1e-40)
    x[4, 9] = np.nan
    want = [reference.SUMMATION_ORDERS[order](row, "float") for row in x]
    traced = jax.jit(lambda v: precision.sum(v, order=order))
    assert_bits_equal(precision.sum(x, order=order), want, "eager")
    assert_bits_equal(traced(jnp.asarray(x)), want, "jit")
    assert_bits_equal(jax.vmap(traced)(jnp.asarray(x)), want, "vmap")
    assert_bits_equal(traced(jnp.asarray(x[1:3])), want[1:3], "clean rows alone")
    assert_bits_equal(np.stack([traced(jnp.asarray(row)) for row in x]), want, "rows")


def _check_every_way(x, order, want):
    traced = jax.jit(lambda v: precision.sum(v, order=order))
    assert_bits_equal(precision.sum(x, order=order), want, "eager")
    assert_bits_equal(traced(jnp.asarray(x)), want, "jit")
    assert_bits_equal(jax.vmap(traced)(jnp.asarray(x)), want, "vmap")
    clean = x[1:3]  # -0 and cancellation (row 0's overflow makes Kahan's inf - inf)
    assert not np.isnan(np.asarray(jax.jit(lambda v: orders.column_sum(
        v, order, NativeFloat32, tiny_to_nan, neg=NativeFloat32.neg))(clean))).any()
    assert_bits_equal(traced(jnp.asarray(clean)), want[1:3], "clean rows alone")
    assert_bits_equal(np.stack([precision.sum(row, order=order) for row in x]), want, "rows")


def test_certified_float_sums_leave_the_rows_they_cannot_settle():
    """The float64 sum's error bound settles a row only when all of it rounds to one float32:
    a tie, a sum a hair above one (lost in float64), zeros and subnormal sums are left to the
    exact paths; the answers are the exact sums rounded once either way."""
    f32 = np.float32
    rows = np.zeros((8, 4), f32)
    rows[0, :2] = [1.0, 2.0 ** -24]                      # a tie: even, 1.0
    rows[1, :3] = [1.0, 2.0 ** -24, 2.0 ** -100]         # just above it: 1 + 2^-23
    rows[2] = [1.0, 2.0, -3.0, 0.0]                      # exactly zero: +0
    rows[3] = -0.0                                       # -0
    rows[4, :2] = [2.0 ** -120, -(2.0 ** -120 - 2.0 ** -140)]  # subnormal sum
    rows[5] = [1.5, 2.25, -0.5, 8.0]                     # plain: settled
    rows[6, :2] = [np.finfo(f32).max, np.finfo(f32).max]  # inf (see below)
    rows[7, :2] = [2.0 ** 127, 2.0 ** 126]               # near the top: settled
    # Row 6's sum of magnitudes overflows in XLA's float32 sums, which leaves it; the native
    # kernel sums them in float64, and the whole interval rounds to inf: settled, as inf.
    for off in (True, False):
        with (ascjax.native_kernels_off() if off else contextlib.nullcontext(),
              jax.enable_x64(True)):
            _, certified = impl._certified_host(jnp.asarray(rows))
        by_xla = off or not native.enabled()
        assert np.asarray(certified).tolist() == [False] * 5 + [True, not by_xla, True]
    got = np.asarray(precision.exact_sum(rows))
    assert_bits_equal(got, _traced_exact(jnp.asarray(rows)), "exact_sum")
    assert got.view(np.uint32)[1] == np.float32(1 + 2.0 ** -23).view(np.uint32)
    assert got[6] == np.inf
    assert got.view(np.uint32)[3] == 0x80000000


@few_examples(5)
@given(seed=st.integers(0, 2**32 - 1))
def test_certified_float_sums_are_right_a_hair_from_a_tie(seed):
    """Exact sums a float32 tie plus or minus a nudge far below float64's reach of the row,
    behind big terms that cancel: the certificate (the float64 sum's error bound, its ends
    moved one float64 outwards) must settle none of them wrongly. Every answer is the exact
    sum rounded once, as the limb path gives it."""
    rng = np.random.default_rng(seed)
    f32 = np.float32
    rows = []
    for _ in range(32):
        head = f32(rng.uniform(1, 2) * 2.0 ** int(rng.integers(-30, 30)))
        half_ulp = float(np.spacing(head)) / 2              # head + half_ulp: a tie
        nudge = half_ulp * 2.0 ** -int(rng.integers(1, 45)) * rng.choice([-1.0, 0.0, 1.0])
        big = float(head) * 2.0 ** int(rng.integers(0, 45))  # cancels, widening the bound
        row = np.array([head, half_ulp, nudge, big, -big, 0, 0, 0], f32)
        rows.append(rng.permutation(row))
    rows = np.stack(rows)
    assert_bits_equal(precision.exact_sum(rows), _traced_exact(jnp.asarray(rows)),
                      "exact_sum near ties")


@pytest.mark.parametrize(("name", "order"), [(name, "sequential") for name in orders.SUM_FORMATS]
                         + [("float", "kahan")])  # other formats' kahan always scans
def test_column_loops_match_plain_loops_in_every_sum_format(name, order):
    """The column loops (which large inputs take) against the reference loops, in every sum
    format, on adversarial registers; half's sequential sum also under saturating overflow."""
    x = register_values(np.random.default_rng(9), name, (5, 37), 0.1)
    want = [reference.SUMMATION_ORDERS[order](row, name) for row in x]
    with _column_loops():
        assert_bits_equal(precision.sum(x, order=order), want, f"{order} {name}")
        if name == "half" and order == "sequential":
            sat = ascjax.Config(float_overflow="saturate")
            got = jax.jit(lambda v: precision.sum(v, order=order, config=sat))(x)
            assert_bits_equal(got, [reference.SUMMATION_ORDERS[order](row, name, sat)
                                    for row in x], "sequential half saturate")


def test_row_blocks_on_threads_join_as_one_call():
    """``map_row_blocks`` cuts rows into blocks summed by worker threads: the joined result is
    the one-call result for arrays and tuples, any block size, and no rows at all."""
    x = np.random.default_rng(2).standard_normal((37, 50)).astype(np.float32)

    def sums(rows):
        return np.add.reduce(rows, axis=-1), rows.min(axis=-1, initial=np.inf)

    for block in (1, 50, 333, 10_000):
        joined = map_row_blocks(sums, x, block)
        for got, want in zip(joined, sums(x), strict=True):
            assert_bits_equal(got, want, f"block {block}")
        assert_bits_equal(map_row_blocks(lambda r: r[:, 0], x, block), x[:, 0], "array")
    assert map_row_blocks(lambda r: r[:, 0], x[:0], 50).shape == (0,)
    # called from inside a block: runs in place instead of waiting on the busy workers
    nested = map_row_blocks(lambda r: map_row_blocks(lambda q: q[:, 0], r, 50), x, 100)
    assert_bits_equal(nested, x[:, 0], "nested")


@pytest.mark.parametrize("files, cores", [
    ({"cpu.max": "200000 100000"}, 2),                      # cgroup v2: 2 CPUs
    ({"cpu.max": "150000 100000"}, 2),                      # 1.5 CPUs: both cores, in turn
    ({"cpu.max": "max 100000"}, None),                      # v2, no quota
    ({"cpu/cpu.cfs_quota_us": "300000", "cpu/cpu.cfs_period_us": "100000"}, 3),  # v1
    ({"cpu/cpu.cfs_quota_us": "-1", "cpu/cpu.cfs_period_us": "100000"}, None),
    ({"cpu/cpu.cfs_quota_us": "garbled", "cpu/cpu.cfs_period_us": "100000"}, None),
    ({}, None),                                             # no cgroup files at all
])
def test_host_threads_follow_a_cgroup_quota(tmp_path, monkeypatch, files, cores):
    """A container's CPU quota caps the host threads (its affinity lists the whole host's
    cores): cgroup v2's cpu.max or v1's CFS quota, rounded up to whole cores."""
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text + "\n")
    assert host_blocks.cgroup_quota_cores(tmp_path) == cores
    monkeypatch.setattr(host_blocks, "cgroup_quota_cores", lambda: cores)
    monkeypatch.setattr(host_blocks.os, "sched_getaffinity", lambda pid: set(range(64)))
    assert host_blocks.host_threads.__wrapped__() == (cores or 64)


def test_host_threads_read_the_process_own_cgroup_first(tmp_path, monkeypatch):
    """cgroup v2: the quota of the process's own group (from /proc/self/cgroup) wins over the
    hierarchy root's, which a container without a namespace of its own leaves unlimited."""
    (tmp_path / "cpu.max").write_text("max 100000\n")
    (tmp_path / "jobs" / "ci").mkdir(parents=True)
    (tmp_path / "jobs" / "ci" / "cpu.max").write_text("100000 100000\n")
    monkeypatch.setattr(host_blocks, "_own_cgroup", lambda: "jobs/ci")
    assert host_blocks.cgroup_quota_cores(tmp_path) == 1
    monkeypatch.setattr(host_blocks, "_own_cgroup", lambda: "elsewhere")
    assert host_blocks.cgroup_quota_cores(tmp_path) is None


# Last in the file: programs_compiled clears JAX's caches, so the tests after it traced again
# the programs that earlier tests had compiled.
@pytest.mark.parametrize(("name", "rows", "sum_orders"), [
    ("bfloat16_t", 3, precision.ORDERS), ("half", 3, precision.ORDERS),
    ("bfloat16_t", 64, ("sequential", "kahan"))])  # 64 x 4096: the column loops' size
def test_subnormal_sums_survive_every_path(name, rows, sum_orders):
    """Sparse subnormals whose sum stays below 2^8 of the least subnormal: every partial sum is
    exact, so every order gives the exact sum. XLA's CPU backend carried a bfloat16 array
    through a scan as float32 and converted it back with AVX512-BF16, which flushes
    subnormals: on a Xeon with AVX512-BF16 the sequential sum of 0x0005 came out +0."""
    fmt = ascjax.FORMATS[name]
    least = 2.0 ** orders.least_exponent(fmt)
    rng = np.random.default_rng(11)
    k = np.zeros((rows, 4096), np.int64)
    for row in k:  # at most 60 nonzero multiples of 1..3: a total below 2^8
        row[rng.choice(4096, 60, replace=False)] = rng.integers(0, 4, 60)
    x = (k * least).astype(np.float32).astype(fmt.storage_dtype)
    x[0, rng.choice(4096, 9)] = -0.0
    want = (k.sum(-1) * least).astype(np.float32).astype(fmt.storage_dtype)
    assert np.all(k.sum(-1) < 256)
    with programs_compiled() as programs:  # every program the sums compile
        for order in sum_orders:
            assert_bits_equal(precision.sum(x, order=order), want, f"{order} (eager)")
            assert_bits_equal(_traced_sum(order)(jnp.asarray(x)), want, f"{order} (jit)")
        assert_bits_equal(precision.exact_sum(x), want, "exact_sum")
        if rows == 64:  # rows handed over in place from past a 64-byte boundary: ShiftedColumns
            shifted = _at_shift(np.concatenate([x] * 4), 5)
            with _column_loops(in_place=True):
                for order in sum_orders:
                    assert_bits_equal(precision.sum(shifted, order=order), np.tile(want, 4),
                                      f"{order} (rows in place, shifted)")
    # The cause, checked on any CPU (the sums above fail only with AVX512-BF16): no loop
    # carries a bfloat16 array; the loops the orders run are there to be seen.
    assert any("stablehlo.while" in p for p in programs)
    assert not [types for p in programs for types in bfloat16_loops(p)]


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_exact_sum_under_a_users_x64_gives_the_same_bits(dtype):
    """With ``jax.enable_x64`` on (a user's setting), rows longer than one limb pass
    (``exact.CHUNK``) that go to the integer limbs give the same bits as with it off: an inf
    row, and (float) a row whose terms span more than float64 holds (found in review: under
    x64 the limb sums widened to int64, which the carry scan refused, and a lane count mixed
    int64 with int32)."""
    n = exact.CHUNK + 5
    x = np.zeros((2, n), dtype)
    x[0, 5] = np.inf
    big, tiny = np.finfo(dtype).max, np.finfo(dtype).smallest_subnormal
    x[1, [0, 9, n - 2, n - 1]] = [big, tiny, -big, tiny]  # float: 277 bits apart
    want = np.asarray(precision.exact_sum(x))
    with jax.enable_x64(True):
        got = np.asarray(precision.exact_sum(x))
        traced = np.asarray(jax.jit(precision.exact_sum)(jnp.asarray(x)))
    assert_bits_equal(got, want, "x64")
    assert_bits_equal(traced, want, "x64, jit")
    assert want[0] == np.inf
    assert_bits_equal(want[1:], np.array([2 * tiny], dtype), "the exact sum")


def test_only_the_rows_that_come_out_nan_are_summed_again():
    """float32 sequential and kahan of host rows: a tiny value, a NaN and an inf - inf in
    three of many rows send those rows (padded to a power of two) to the carrier adder, the
    rest keep the native sums; every row has the bits of the carrier adder on the whole
    array, and the padding rows change nothing."""
    x = np.random.default_rng(8).standard_normal((300, 1024)).astype(np.float32)
    x[17, 100], x[200, 5], x[299, 1:3] = 3e-40, np.nan, [np.inf, -np.inf]
    config = ascjax.Config()
    for order in ("sequential", "kahan"):
        want = impl._stored_sum_host((ascjax.FORMATS["float"], order, config, "exact"),
                                     jnp.asarray(x))
        got = precision.sum(x, order=order)
        assert_bits_equal(np.asarray(got), np.asarray(want), order)
        assert not np.isnan(np.asarray(got)[17])
