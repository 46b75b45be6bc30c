"""MPFR (gmpy2) as an independent judge of the emulator's float arithmetic, bit for bit.

* the adder (``numerics.add.float_add``, what every instruction's add is) in half, bfloat16
  and float over random and adversarial pairs: ties to even, overflow edges, subnormal
  results, exact cancellation (the sign of zero), inf - inf;
* whole sums, ``ascjax.precision.sum``, along every order against MPFR following the same
  ``order_tree`` (Kahan by its loop), on random vectors;
* ``exact_sum`` against MPFR's exact sum rounded once.

A NaN result is compared by NaN-ness, and must be the canonical quiet NaN (assumption A8).
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from strategies import UINT, bits_of, few_examples, float_specials, register_values

import ascjax
from ascjax import precision
from ascjax._src.numerics.add import float_add
from ascjax._src.numerics.bits import from_carrier, to_carrier

gmpy2 = pytest.importorskip("gmpy2")
import mpfr_oracle as oracle

FLOATS = ("half", "bfloat16_t", "float")


def canonical_nan(name: str) -> int:
    f = ascjax.FORMATS[name]
    return (((1 << f.exponent_bits) - 1) << f.mantissa_bits) | (1 << (f.mantissa_bits - 1))


def assert_same(got, want, name: str, what: str, inputs=None) -> None:
    """Bits equal; where MPFR says NaN, the emulator's canonical NaN."""
    g = bits_of(np.asarray(got)).astype(np.int64)
    w = bits_of(np.asarray(want)).astype(np.int64)
    nan = np.isnan(np.asarray(want).astype(np.float64))
    w = np.where(nan, canonical_nan(name), w)
    bad = np.flatnonzero(g.ravel() != w.ravel())
    if bad.size:
        rows = [f"  at {i}: got {g.ravel()[i]:#x}, MPFR {w.ravel()[i]:#x}"
                + ("" if inputs is None else f" (inputs {inputs[i]})") for i in bad[:8]]
        raise AssertionError(f"{what} in {name}: {bad.size} differ\n" + "\n".join(rows))


@functools.lru_cache
def _adder(name: str):
    fmt = ascjax.FORMATS[name]

    @jax.jit
    def add(a, b):
        return from_carrier(float_add(to_carrier(a, fmt), to_carrier(b, fmt), fmt), fmt)

    return add


def emulated_add(a_bits, b_bits, name: str) -> np.ndarray:
    return np.asarray(_adder(name)(a_bits, b_bits)).view(oracle.storage(name))


def check_add(a_bits, b_bits, name: str, what: str) -> None:
    a_bits, b_bits = np.asarray(a_bits), np.asarray(b_bits)
    dtype = oracle.storage(name)
    want = oracle.add(a_bits.view(dtype), b_bits.view(dtype), name)
    pairs = [(hex(int(x)), hex(int(y))) for x, y in zip(a_bits, b_bits, strict=True)]
    assert_same(emulated_add(a_bits, b_bits, name), want, name, what, pairs)


def adversarial_pairs(name: str, rng) -> tuple[np.ndarray, np.ndarray]:
    """Pairs built to hit each rounding case, as bit patterns."""
    f = ascjax.FORMATS[name]
    m, e = f.mantissa_bits, f.exponent_bits
    sign = 1 << (m + e)
    uint = UINT[(m + e + 1) // 8]
    top = (1 << e) - 2  # largest finite exponent field
    a, b = [], []

    def pair(x, y):
        a.append(x)
        b.append(y)

    specials = [int(s) for s in float_specials(name)]
    for x in specials:  # every special against every special: inf - inf, NaN, -0 + -0, ...
        for y in specials:
            pair(x, y)
    for _ in range(200):
        # Ties: x + half an ulp of x (and +- a quarter ulp around it), both parities of x.
        field = int(rng.integers(m + 2, top + 1))
        x = (field << m) | int(rng.integers(0, 1 << m))
        half_ulp = (field - m - 1) << m  # 2^(exponent of x's ulp - 1), a normal value
        pair(x, half_ulp)
        pair(x, half_ulp + 1)        # just above the midpoint
        pair(x, half_ulp - 1)        # just below
        pair(x | sign, half_ulp | sign)
        # Exact cancellation and near-cancellation: x - x = +0, x - next(x) (subnormal for
        # small exponents).
        pair(x, x | sign)
        pair(x | sign, x)
        small = (int(rng.integers(0, 3)) << m) | int(rng.integers(0, 1 << m))
        pair(small, (small + int(rng.integers(1, 4))) | sign)
        pair(small, small)
        # Subnormal + subnormal, subnormal - normal.
        pair(int(rng.integers(0, 1 << m)), int(rng.integers(0, 2 << m)) | sign)
    max_finite = (top << m) | ((1 << m) - 1)
    for k in range(m + 2):  # overflow edges: max + 2^(ulp exponent - 1 - k)
        field = top - m - 1 - k
        for delta in (-1, 0, 1):
            pair(max_finite, (field << m) + delta)
            pair(max_finite | sign, ((field << m) + delta) | sign)
    pair(max_finite, max_finite)
    pair(max_finite, max_finite | sign)
    return np.array(a, uint), np.array(b, uint)


@pytest.mark.parametrize("name", FLOATS)
def test_add_adversarial_pairs(name):
    a, b = adversarial_pairs(name, np.random.default_rng(17))
    check_add(a, b, name, "adversarial adds")


@pytest.mark.parametrize("name", FLOATS)
@given(seed=st.integers(0, 2**32 - 1))
def test_add_random_pairs(name, seed):
    rng = np.random.default_rng(seed)
    # register_values mixes regimes: any bits, close exponents (ties), subnormals, overflow.
    a = register_values(rng, name, (4, 64), 0.05).reshape(-1)
    b = register_values(rng, name, (4, 64), 0.05).reshape(-1)
    check_add(bits_of(a), bits_of(b), name, "random adds")


def test_half_add_every_pattern_against_one_operand():
    """Every half pattern plus a few fixed ones: the whole grid, subnormals and NaNs included."""
    every = np.arange(1 << 16, dtype=np.uint16)
    for y in (0x3C00, 0x8001, 0x7BFF, 0x0400 | 0x8000):  # 1, -least subnormal, max, -min normal
        check_add(every, np.full_like(every, y), "half", f"x + {y:#06x}")


def _rows(rng, name: str, n: int, rows: int) -> np.ndarray:
    """Random vectors: normal values at a random scale, some with a wide exponent spread."""
    scale = 2.0 ** rng.integers(-8, 9, (rows, 1))
    x = rng.standard_normal((rows, n)) * scale
    spread = rng.random((rows, 1)) < 0.5
    x = np.where(spread, x * 2.0 ** rng.integers(-12, 13, (rows, n)), x)
    return precision.to_format(x, name)


@pytest.mark.parametrize("name", FLOATS)
@pytest.mark.parametrize("order", precision.ORDERS)
@few_examples(30)  # 21 cases, each example an MPFR sum of 2 x 520 values in Python
@given(seed=st.integers(0, 2**32 - 1), n=st.sampled_from([7, 520]))
def test_sum_orders_match_mpfr(name, order, seed, n):
    rng = np.random.default_rng(seed)
    x = _rows(rng, name, n, 2)
    got = np.asarray(precision.sum(x, order=order))
    want = oracle.to_format([oracle.order_sum(row, name, order) for row in x], name)
    assert_same(got, want, name, f"sum order={order} n={n}")


@pytest.mark.parametrize("name", FLOATS)
@pytest.mark.parametrize("order", ["sequential", "adjacent_tree", "numpy_pairwise", "kahan"])
def test_sum_orders_with_specials_match_mpfr(name, order):
    """Orders without padding follow their tree exactly, signs of zero and NaN included; both
    the eager call (a NumPy input: the host path where ``orders.USE_HOST`` lists the order)
    and the JAX path (under jit)."""
    rng = np.random.default_rng(5)
    x = register_values(rng, name, (24, 33), 0.1)
    x[0] = -0.0  # a sum of -0 only: -0, but numpy_pairwise's 0 + total makes it +0
    want = oracle.to_format([oracle.order_sum(row, name, order) for row in x], name)
    assert_same(precision.sum(x, order=order), want, name, f"sum order={order} (host)")
    traced = jax.jit(lambda v: precision.sum(v, order=order))(jnp.asarray(x))
    assert_same(traced, want, name, f"sum order={order} (jit)")


@pytest.mark.parametrize("name", FLOATS)
@given(seed=st.integers(0, 2**32 - 1), n=st.sampled_from([1, 3, 64, 257]))
def test_exact_sum_matches_mpfr(name, seed, n):
    rng = np.random.default_rng(seed)
    x = register_values(rng, name, (3, n), 0.05)
    c, k = _rows(rng, name, n, 1)[0], n // 2  # k values, then their negatives: only the
    cancel = np.concatenate([c[:k], -c[:k][::-1], c[2 * k:]])  # leftover survives, exactly
    x = np.concatenate([x, cancel[None].astype(x.dtype), _rows(rng, name, n, 2)])
    got = np.asarray(precision.exact_sum(x))
    want = oracle.to_format([oracle.exact_sum(row, name) for row in x], name)
    assert_same(got, want, name, f"exact_sum n={n}")


@pytest.mark.parametrize("name", FLOATS)
def test_exact_sum_hand_cases(name):
    """Cases MPFR and the page agree on by hand: cancellation keeps the small term, a sum of
    -0 only is -0, +inf with -inf is NaN, overflow of the exact sum is inf."""
    dtype = oracle.storage(name)
    big = float(ascjax.finfo(name).max)
    rows = np.array([[1e4, 1.0, -1e4, 0.0], [-0.0, -0.0, -0.0, -0.0], [-0.0, 0.0, -0.0, -0.0],
                     [np.inf, 1.0, -np.inf, 0.0], [big, big, -big, big], [big, big, 0, 0]])
    x = precision.to_format(rows, name)
    got = np.asarray(precision.exact_sum(x))
    want = oracle.to_format([oracle.exact_sum(row, name) for row in x], name)
    assert_same(got, want, name, "exact_sum by hand")
    assert_same(jax.jit(precision.exact_sum)(jnp.asarray(x)), want, name, "exact_sum (jit)")
    assert bits_of(got[1]) == bits_of(np.array(-0.0, dtype)) and bits_of(got[2]) == 0
    assert np.isnan(got[3].astype(np.float64)) and np.isinf(got[5].astype(np.float64))
