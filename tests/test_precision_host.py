"""The host (NumPy) fast paths of ``precision.sum`` and ``exact_sum`` give the JAX paths' bits.

A concrete half/bfloat16/float array takes the NumPy path; the same call under ``jax.jit``
traces and takes the JAX path (integer limbs, the bit-pattern adder), so comparing the two
checks the fast paths bit for bit on random and adversarial data.
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from strategies import assert_bits_equal, few_examples, register_values

import ascjax
from ascjax import precision
from ascjax._src.numerics import exact
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


_traced_exact = jax.jit(precision.exact_sum)
_traced_exact_parts = jax.jit(impl._exact_parts, static_argnums=0)


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
@few_examples(20)
@given(seed=st.integers(0, 2**32 - 1), n=st.sampled_from([1, 2, 6, 129, 520]))
def test_scan_orders_on_leading_rows_match_the_jax_path(name, order, seed, n):
    """A concrete input's sequential / kahan / repeat_vector_merge sum runs on rows moved to
    the leading axis by a call of its own; the traced call keeps the last axis: same bits."""
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
    x = _data(np.random.default_rng(3), "float", 4, 200)
    for order in precision.ORDERS:
        assert_bits_equal(precision.sum(x, order=order), _traced_sum(order)(jnp.asarray(x)),
                          order)
    assert set(orders.USE_HOST["float"]) <= set(orders.HOST_ORDERS)


@pytest.mark.parametrize("name", FLOATS)
@few_examples(5)
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
