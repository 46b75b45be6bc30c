"""The one adder and rounder, checked against NumPy's IEEE arithmetic (which keeps subnormals)."""

import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np
import pytest

from ascjax._src.config import Config
from ascjax._src.formats import FORMATS
from ascjax._src.numerics.add import carrier_add, float_add, half_add
from ascjax._src.numerics.bits import from_carrier, keep_where, to_carrier
from ascjax._src.numerics.rounding import round_carrier

RNG = np.random.default_rng(1234)
QNAN = {"half": 0x7E00, "bfloat16_t": 0x7FC0, "float": 0x7FC00000}
NUMPY = {"half": np.float16, "bfloat16_t": ml_dtypes.bfloat16, "float": np.float32}


def _canonical(bits, fmt):
    dtype = NUMPY[fmt]
    out = bits.copy()
    with np.errstate(invalid="ignore"):
        out[np.isnan(bits.view(dtype))] = QNAN[fmt]
    return out


def _random_f32_pairs(n):
    a = RNG.integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32)
    b = RNG.integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32)
    tiny = RNG.integers(0, 2**27, n, dtype=np.uint32) | (RNG.integers(0, 2, n, np.uint32) << 31)
    a[::3] = tiny[::3]
    b[::4] = tiny[1::4]
    b[1::5] = a[1::5] ^ np.uint32(0x80000000) ^ RNG.integers(0, 4, a[1::5].size, np.uint32)
    return a, b


@pytest.mark.parametrize("jit", [False, True])
def test_carrier_add_is_ieee_float32(jit):
    a, b = _random_f32_pairs(1 << 20)
    with np.errstate(all="ignore"):
        want = _canonical((a.view(np.float32) + b.view(np.float32)).view(np.uint32), "float")
    add = jax.jit(carrier_add) if jit else carrier_add
    got = np.asarray(add(jnp.asarray(a), jnp.asarray(b)))
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("fmt", ["half", "bfloat16_t"])
def test_float_add_in_format(fmt):
    """Every add: float32 RNE, then RNE to the format (exact for half, the spec for bfloat16)."""
    f = FORMATS[fmt]
    dtype = NUMPY[fmt]
    a = RNG.integers(0, 2**16, 1 << 20, dtype=np.uint32).astype(np.uint16)
    b = RNG.integers(0, 2**16, 1 << 20, dtype=np.uint32).astype(np.uint16)
    b[::7] = a[::7] ^ 0x8000
    with np.errstate(all="ignore"):
        want = _canonical((a.view(dtype).astype(np.float32) + b.view(dtype).astype(np.float32))
                          .astype(dtype).view(np.uint16), fmt)

    @jax.jit
    def add(x, y):
        s = float_add(to_carrier(x, f), to_carrier(y, f), f)
        return from_carrier(s, f)

    np.testing.assert_array_equal(np.asarray(add(a, b)), want)


def _half_pairs():
    """Every half pattern against 64 partners: random ones, its own negation (exact
    cancellation), its neighbours, and the specials, subnormals and overflow edges."""
    a = np.arange(1 << 16, dtype=np.uint32)
    edges = np.array([0, 0x8000, 1, 0x8001, 0x3FF, 0x83FF, 0x400, 0x8400, 0x7BFF, 0xFBFF,
                      0x7C00, 0xFC00, 0x7E00, 0x7C01, 0xFE01, 0x3C00, 0xBC00, 0x7BFE], np.uint32)
    partners = [a ^ 0x8000, (a + 1) & 0xFFFF, (a - 1) & 0xFFFF, a]
    partners += [np.full_like(a, e) for e in edges]
    partners += [RNG.integers(0, 1 << 16, a.size, dtype=np.uint32)
                 for _ in range(64 - len(partners))]
    b = np.stack(partners)
    return (np.broadcast_to(a, b.shape).astype(np.uint16).reshape(-1),
            b.astype(np.uint16).reshape(-1))


@pytest.mark.parametrize("jit", [False, True])
def test_half_add_on_patterns_is_the_carrier_add(jit):
    """``half_add`` (half patterns, the backend's float32 -> half conversion) gives the carrier
    adder's bits for every half against 64 partners, eagerly and under jit (where XLA must not
    fold the conversions away), also when the first operands are float16 arrays."""
    f = FORMATS["half"]
    a, b = _half_pairs()
    want = np.asarray(jax.jit(lambda x, y: from_carrier(
        float_add(to_carrier(x, f), to_carrier(y, f), f), f))(a, b))
    add = jax.jit(half_add) if jit else half_add
    np.testing.assert_array_equal(np.asarray(add(jnp.asarray(a), jnp.asarray(b))), want)
    np.testing.assert_array_equal(
        np.asarray(add(jnp.asarray(a.view(np.float16)), jnp.asarray(b.view(np.float16)))), want)
    # chained, as in a tree: the rounding between two adds must stay
    c = np.roll(b, 1)
    chained = jax.jit(lambda x, y, z: half_add(half_add(x, y), z)) if jit else \
        (lambda x, y, z: half_add(half_add(x, y), z))
    want2 = np.asarray(jax.jit(lambda x, y, z: from_carrier(float_add(float_add(
        to_carrier(x, f), to_carrier(y, f), f), to_carrier(z, f), f), f))(a, b, c))
    np.testing.assert_array_equal(np.asarray(chained(a, b, c)), want2)


@pytest.mark.parametrize("fmt", ["half", "bfloat16_t"])
def test_round_carrier_matches_numpy_cast(fmt):
    f = FORMATS[fmt]
    x = RNG.integers(0, 2**32, 1 << 20, dtype=np.uint64).astype(np.uint32)
    x[::2] = (x[::2] & 0x807FFFFF) | (RNG.integers(90, 145, x[::2].size, np.uint32) << 23)
    with np.errstate(all="ignore"):
        want = x.view(np.float32).astype(NUMPY[fmt]).astype(np.float32).view(np.uint32).copy()
    with np.errstate(invalid="ignore"):
        want[np.isnan(want.view(np.float32))] = 0x7FC00000
    got = np.asarray(jax.jit(lambda c: round_carrier(c, f))(x))
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("fmt", ["half", "bfloat16_t"])
def test_carrier_round_trip_every_pattern(fmt):
    f = FORMATS[fmt]
    bits = np.arange(2**16, dtype=np.uint16)
    carrier = np.asarray(jax.jit(lambda b: to_carrier(b, f))(bits))
    with np.errstate(invalid="ignore"):
        finite = ~np.isnan(bits.view(NUMPY[fmt]))
    np.testing.assert_array_equal(carrier[finite],
                                  bits.view(NUMPY[fmt]).astype(np.float32).view(np.uint32)[finite])
    back = np.asarray(jax.jit(lambda c: from_carrier(c, f))(carrier))
    # Values survive; NaNs stay NaN (carriers feed arithmetic, whose NaNs are canonical).
    np.testing.assert_array_equal(back[finite], bits[finite])
    with np.errstate(invalid="ignore"):
        assert np.isnan(back[~finite].view(NUMPY[fmt])).all()


def test_half_saturation_mode():
    f = FORMATS["half"]
    config = Config(float_overflow="saturate")
    c = to_carrier(np.array([0x7C00, 0xFC00, 0x7E01, 0x7BFF], np.uint16), f)
    got = from_carrier(float_add(c, c, f, config), f)
    np.testing.assert_array_equal(np.asarray(got), [0x7BFF, 0xFBFF, 0x0000, 0x7BFF])


def test_xla_cpu_flushes_subnormals_natively():
    """The reason the carrier adder exists: a plain jitted float32 add loses 1e-40 on CPU."""
    if jax.default_backend() != "cpu":
        pytest.skip("flush-to-zero is a property of XLA's CPU backend")
    x = np.float32(1e-40)
    assert float(jax.jit(lambda a, b: a + b)(x, x)) == 0.0
    got = carrier_add(jnp.asarray(x).view(jnp.uint32), jnp.asarray(x).view(jnp.uint32))
    assert int(got) == int((x + x).view(np.uint32))


@pytest.mark.parametrize("dtype", [np.uint16, np.uint32, np.int16, np.int32])
@pytest.mark.parametrize("fill", [0, 0x8000, -1])
def test_keep_where_is_a_bitwise_select(dtype, fill):
    info = np.iinfo(dtype)
    x = RNG.integers(info.min, info.max, (7, 64), dtype=dtype, endpoint=True)
    active = RNG.random((7, 64)) < 0.5
    fill = np.array(fill).astype(dtype)
    expected = np.where(active, x, fill)
    for fn in (keep_where, jax.jit(keep_where)):
        got = np.asarray(fn(jnp.asarray(active), jnp.asarray(x), fill))
        assert got.dtype == dtype and np.array_equal(got, expected)
    static = np.asarray(keep_where(active, jnp.asarray(x), fill))  # a NumPy (static) mask
    assert np.array_equal(static, expected)
