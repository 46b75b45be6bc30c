"""The rounding fast paths equal the general ``round_bits``, which equals NumPy/ml_dtypes casts.

Every 16-bit pattern (as the high half of a float32, and as a half operand) and 10**6 random
32-bit patterns; NaNs compare as NaN (the fast paths return the canonical NaN).
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from ascjax import FORMATS, Config
from ascjax._src.numerics.add import canonical_nan
from ascjax._src.numerics.bits import to_carrier, widen16
from ascjax._src.numerics.rounding import round_bits, round_carrier, round_half_sum

RNG = np.random.default_rng(11)
EVERY16 = np.arange(1 << 16, dtype=np.uint32)
RANDOM32 = RNG.integers(0, 1 << 32, 10**6, dtype=np.uint64).astype(np.uint32)
# Every high half with the low half zero, a tie and random, then random patterns.
PATTERNS = np.concatenate([EVERY16 << 16, (EVERY16 << 16) | 0x8000,
                           (EVERY16 << 16) | (RANDOM32[:1 << 16] & 0xFFFF), RANDOM32])


def _general_carrier(c, fmt, saturate=False):
    """Carriers of round_bits' codes, NaN canonical: what the carrier fast paths promise."""
    return canonical_nan(to_carrier(round_bits(c, fmt, "rint", saturate=saturate), fmt))


@pytest.mark.parametrize("name,overflow", [("half", "ieee"), ("half", "saturate"),
                                           ("bfloat16_t", "ieee")])
def test_round_carrier_is_round_bits(name, overflow):
    fmt, config = FORMATS[name], Config(float_overflow=overflow)
    got = jax.jit(lambda c: round_carrier(c, fmt, config))(PATTERNS)
    want = jax.jit(lambda c: _general_carrier(c, fmt, overflow == "saturate"))(PATTERNS)
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want))


def test_round_half_sum_is_round_bits():
    """On its domain: r = float32(a + b) for half values a, b (exact in float32)."""
    half = RNG.integers(0, 1 << 16, PATTERNS.size - (1 << 16), dtype=np.uint16)
    a = np.concatenate([EVERY16.astype(np.uint16), half]).view(np.float16)
    b = np.concatenate([RNG.integers(0, 1 << 16, 1 << 16, dtype=np.uint16),
                        RNG.permutation(half)]).view(np.float16)
    with np.errstate(all="ignore"):
        r = (a.astype(np.float32) + b.astype(np.float32)).view(np.uint32)
    fmt = FORMATS["half"]
    got = jax.jit(round_half_sum)(r)
    want = jax.jit(lambda c: _general_carrier(c, fmt))(r)
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want))


@pytest.mark.parametrize("name", ["half", "bfloat16_t", "fp8_e5m2_t", "fp8_e4m3fn_t"])
def test_round_bits_matches_library_cast(name):
    fmt = FORMATS[name]
    got = np.asarray(jax.jit(lambda c: round_bits(c, fmt, "rint"))(PATTERNS))
    with np.errstate(all="ignore"):
        want = PATTERNS.view(np.float32).astype(fmt.storage_dtype)
    nan = np.isnan(want.astype(np.float32))
    np.testing.assert_array_equal(got[~nan], want.view(fmt.bits_dtype)[~nan])
    with np.errstate(invalid="ignore"):
        assert np.isnan(got[nan].view(fmt.storage_dtype).astype(np.float32)).all()


def test_one_half_widening_matches_native_conversion():
    """to_carrier(half) widens by integer operations and quiets NaNs as XLA's CPU cast does.

    The native cast is pinned to the CPU: XLA's GPU cast turns every NaN into 0x7fffffff (seen on
    an H200), one reason to_carrier uses integer operations and gives the same bits everywhere.
    """
    fmt = FORMATS["half"]
    bits = jax.device_put(EVERY16.astype(np.uint16), jax.devices("cpu")[0])
    native = jax.jit(lambda b: jax.lax.bitcast_convert_type(
        jax.lax.bitcast_convert_type(b, jnp.float16).astype(jnp.float32), jnp.uint32))(bits)
    bits = np.asarray(bits)
    np.testing.assert_array_equal(np.asarray(jax.jit(lambda b: to_carrier(b, fmt))(bits)),
                                  np.asarray(native))
    exact = np.asarray(jax.jit(lambda b: widen16(b, fmt))(bits))  # payloads kept
    finite = ~np.isnan(bits.view(np.float16))
    np.testing.assert_array_equal(exact[finite],
                                  bits.view(np.float16)[finite].astype(np.float32).view(np.uint32))
