"""The adder: IEEE float32 addition on carriers, rounded to the destination format.

Besides native float32 adds, the only float operations are conversions and power-of-two
scalings whose operands and results are normal numbers, which no backend flushes or rounds:

* ``carrier_add`` is IEEE float32 addition, round-to-nearest-even, subnormals kept: the native
  add is exact whenever an operand is >= 2^-100 in magnitude (a subnormal operand flushed to 0
  is then below half an ulp of the other); otherwise both are scaled by 2^64 with integer
  exponent arithmetic, added natively (normal, hence exact per IEEE), and scaled back;
* ``float_add`` rounds that sum once to half/bfloat16 (``rounding``).

A NaN result is the canonical quiet NaN (sign 0, payload 0): **assumed**, since the Ascend
documents do not say which NaN an add returns, and CPU and GPU differ.
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np
from jax import lax

from ..config import Config
from ..formats import Format
from .bits import INF32, MAG32, QNAN32, SIGN32, U32, u32
from .rounding import round_carrier, round_half_sum

_SMALL32 = np.uint32((127 - 100) << 23)  # carriers below 2^-100 take the scaled path
_SCALE = np.uint32(64 << 23)  # 2^64, as an exponent-field increment


def _scale_up(c):
    """Carrier * 2^64 for |c| < 2^-100 (subnormals included), exactly and immune to DAZ.

    A normal gains 64 in its exponent field; a subnormal m * 2^-149 becomes float32(m) * 2^-85,
    a product of normal numbers (int->float conversion of m < 2^23 is exact).
    """
    mag = c & MAG32
    sub = lax.bitcast_convert_type(lax.convert_element_type(mag, jnp.float32)
                                   * np.float32(2.0 ** -85), U32)
    return (c & SIGN32) | jnp.where(mag < 0x800000, sub, mag + _SCALE)


def _scale_down(s):
    """Carrier * 2^-64 of an exact scaled sum (no bits are lost: Hauser's theorem).

    Below 2^-62 the result is a subnormal k * 2^-149 with k = |s| * 2^85 an integer < 2^23:
    a normal product, converted to int exactly, is its pattern.
    """
    mag = s & MAG32
    k = lax.convert_element_type(lax.bitcast_convert_type(mag, jnp.float32)
                                 * np.float32(2.0 ** 85), jnp.int32)
    out = jnp.where(mag > np.uint32(64 << 23) | np.uint32(0x7FFFFF), mag - _SCALE,
                    lax.bitcast_convert_type(k, U32))
    return (s & SIGN32) | out


def native_add(a, b):
    """The backend's float32 add on carriers: IEEE exactly when ``not is_tiny`` holds (below)."""
    fa = lax.bitcast_convert_type(a, jnp.float32)
    fb = lax.bitcast_convert_type(b, jnp.float32)
    return lax.bitcast_convert_type(fa + fb, U32)


def canonical_nan(c):
    """Carriers with every NaN replaced by the canonical quiet NaN (assumption A8)."""
    return jnp.where((c & MAG32) > INF32, u32(QNAN32), c)


_NORMAL_FLOOR = np.uint32(24 << 23)  # 2^-103


def is_tiny(c):
    """Nonzero carriers below 2^-103, where flush-to-zero could change a native add.

    If no operand of a tree of adds is tiny, every value in it is a multiple of 2^-126 (so
    nonzero partial sums are normal) and native adds are IEEE on every backend.
    """
    return ((c & MAG32) - np.uint32(1)) < _NORMAL_FLOOR - np.uint32(1)


def tiny_to_nan(x):
    """float32 array ``x`` with every tiny value (``is_tiny``) made a NaN (``NativeFloat32``)."""
    return jnp.where(is_tiny(lax.bitcast_convert_type(x, U32)), jnp.float32(np.nan), x)


class NativeFloat32:
    """The backend's float32 add and negation on float32 arrays, for a loop whose inputs went
    through ``tiny_to_nan``: then every value in it is a multiple of 2^-126 (zero or normal),
    each add is IEEE on every backend, flush-to-zero or not, and a tiny input shows as a NaN
    result, for the caller to redo with ``carrier_add`` (``orders.native_column_sum``)."""

    @staticmethod
    def add(a, b):
        return a + b

    @staticmethod
    def neg(a):
        return -a


def carrier_add(a, b):
    """IEEE float32 a + b on carriers (RNE, subnormals kept), NaN canonical."""
    r = native_add(a, b)
    tiny = jnp.maximum(a & MAG32, b & MAG32) < _SMALL32
    r = jnp.where(tiny, _scale_down(native_add(_scale_up(a), _scale_up(b))), r)
    return canonical_nan(r)


def float_add(a, b, fmt: Format, config: Config | None = None):
    """fmt a + b on carriers, rounded once to ``fmt`` (bfloat16: float32 RNE, then bfloat16 RNE)."""
    if fmt.name == "half":
        # Half values are multiples of 2^-24: the native float32 add is exact on every backend.
        if config is None or config.float_overflow == "ieee":
            return round_half_sum(native_add(a, b))
        return round_carrier(canonical_nan(native_add(a, b)), fmt, config)
    return round_carrier(carrier_add(a, b), fmt, config)


def half_add(a, b):
    """half a + b on half patterns (uint16) or float16 arrays, IEEE RNE, as half patterns with
    every NaN the canonical 0x7E00 (A8).

    The float32 sum of two halves is exact or rounded innocuously (24 >= 2*11 + 2 bits) and is
    0 or at least 2^-24, never a float32 subnormal, so the backend's float32 -> half conversion
    rounds it exactly, flush-to-zero or not. The NaN select between that conversion and the
    next add's widening is also what keeps XLA from folding the pair away as excess precision.
    """
    def wide(h):
        if h.dtype != jnp.float16:
            h = lax.bitcast_convert_type(h, jnp.float16)
        return lax.convert_element_type(h, jnp.float32)

    h = lax.bitcast_convert_type(lax.convert_element_type(wide(a) + wide(b), jnp.float16),
                                 jnp.uint16)
    return jnp.where((h & np.uint16(0x7FFF)) > np.uint16(0x7C00), np.uint16(0x7E00), h)


def int_add(a, b, fmt: Format, config: Config | None = None):
    """Integer a + b in ``fmt``: wraps modulo 2^bits, or saturates under int_overflow="saturate"."""
    s = a + b
    if config is None or config.int_overflow == "wrap":
        return s
    if fmt.kind == "uint":
        return jnp.where(s < a, jnp.asarray(np.iinfo(fmt.storage_dtype).max, s.dtype), s)
    info = np.iinfo(fmt.storage_dtype)
    overflow = ((a >= 0) == (b >= 0)) & ((s >= 0) != (a >= 0))
    return jnp.where(overflow, jnp.where(a >= 0, s.dtype.type(info.max), s.dtype.type(info.min)), s)
