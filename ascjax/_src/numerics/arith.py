"""Bit-exact element arithmetic: the one place where the emulator adds and rounds.

XLA's CPU backend treats float32/bfloat16 subnormals as zero (inputs and results of adds,
comparisons and casts), may keep excess precision between fused half ops, and GPUs return
their own NaN. So floating values travel as *bit patterns* in unsigned integers. Besides native
float32 adds, the only float operations are conversions and power-of-two scalings whose operands
and results are normal numbers (int -> float of m < 2^24, half -> float32), which no backend
flushes or rounds; everything else is integer arithmetic:

* a "carrier" is the uint32 bit pattern of a float32 holding a half/bfloat16/float value
  exactly (every half and bfloat16 value is a float32 value);
* ``carrier_add`` is IEEE float32 addition, round-to-nearest-even, subnormals kept: the native
  add is exact whenever an operand is >= 2^-100 in magnitude (a subnormal operand flushed to 0
  is then below half an ulp of the other); otherwise both are scaled by 2^64 with integer
  exponent arithmetic, added natively (normal, hence exact per IEEE), and scaled back;
* ``round_carrier`` rounds a carrier to a narrower IEEE-like format (RNE, subnormals, overflow
  to inf) with integer operations on the pattern.

A NaN result is the canonical quiet NaN (sign 0, payload 0): **assumed**, since the Ascend
documents do not say which NaN an add returns, and CPU and GPU differ.
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np
from jax import lax

from ..config import Config
from ..formats import Format

U32 = jnp.uint32
SIGN32 = np.uint32(0x80000000)
MAG32 = np.uint32(0x7FFFFFFF)
INF32 = np.uint32(0x7F800000)
QNAN32 = np.uint32(0x7FC00000)
_SMALL32 = np.uint32((127 - 100) << 23)  # carriers below 2^-100 take the scaled path
_SCALE = np.uint32(64 << 23)  # 2^64, as an exponent-field increment


def u32(x):
    return jnp.asarray(x, U32)


def to_bits(x, fmt: Format):
    """Bit patterns of an array held in ``fmt``'s storage dtype (no value is touched)."""
    x = jnp.asarray(x)
    if x.dtype == fmt.bits_dtype:
        return x
    return lax.bitcast_convert_type(x, fmt.bits_dtype)


def from_bits(bits, fmt: Format):
    """The array in ``fmt``'s storage dtype whose bit patterns are ``bits``."""
    if bits.dtype == fmt.storage_dtype:
        return bits
    return lax.bitcast_convert_type(bits, fmt.storage_dtype)


def _srl(x, n):
    return lax.shift_right_logical(x, jnp.asarray(n, x.dtype))


def _sll(x, n):
    return lax.shift_left(x, jnp.asarray(n, x.dtype))


def _int_to_f32_bits(m):
    """Pattern of float32(m) for integer m < 2^24: int->float conversion is exact and immune to FTZ."""
    return lax.bitcast_convert_type(lax.convert_element_type(m, jnp.float32), U32)


def keep_where(active, x, fill=0):
    """``where(active, x, fill)`` for integer arrays, as bitwise operations.

    Inside a fused adjacent-pair tree, XLA's CPU backend vectorizes an AND with an all-ones
    word but not a select on a bool mask (measured 2.6x slower on the whole reduction).
    """
    active = jnp.asarray(active)
    if active.dtype != jnp.bool_ or not jnp.issubdtype(x.dtype, jnp.integer):
        raise TypeError(f"keep_where: needs a bool mask and integer bits, got {active.dtype} "
                        f"and {x.dtype}")
    ones = jnp.zeros((), x.dtype) - active.astype(x.dtype)  # all ones where active
    out = x & ones
    if not (isinstance(fill, (int, np.integer)) and int(fill) == 0):
        out = out | (jnp.asarray(fill, x.dtype) & ~ones)
    return out


# --- carriers -------------------------------------------------------------------------------

def to_carrier(bits, fmt: Format):
    """uint32 float32 patterns of the values whose ``fmt`` patterns are ``bits`` (exact)."""
    if fmt.name == "float":
        return bits
    if fmt.name == "bfloat16_t":
        return _sll(bits.astype(U32), 16)
    if fmt.name != "half":
        raise NotImplementedError(f"no float32 carrier for {fmt.name}")
    # Every half is a normal float32 or zero, so the conversion is exact on every backend
    # (flush-to-zero acts on float32 subnormals only); NaN payloads may be quieted, which
    # arithmetic never sees (its NaN results are canonical).
    half = lax.bitcast_convert_type(bits.astype(jnp.uint16), jnp.float16)
    return lax.bitcast_convert_type(lax.convert_element_type(half, jnp.float32), U32)


def from_carrier(c, fmt: Format):
    """``fmt`` patterns of carriers that hold ``fmt`` values exactly (see ``round_carrier``)."""
    if fmt.name == "float":
        return c
    if fmt.name == "bfloat16_t":
        return _srl(c, 16).astype(jnp.uint16)
    if fmt.name != "half":
        raise NotImplementedError(f"no float32 carrier for {fmt.name}")
    sign = _srl(c & SIGN32, 16)
    mag = c & MAG32
    exp = _srl(mag, 23)
    normal = _sll(exp - (127 - 15), 10) | _srl(mag & 0x7FFFFF, 13)
    special = 0x7C00 | _srl(mag & 0x7FFFFF, 13)
    sig = (mag & 0x7FFFFF) | 0x800000
    # Below 2^-14 the value is sig * 2^(exp-150) = (sig >> (126 - exp)) * 2^-24, exactly.
    sub = _srl(sig, jnp.clip(126 - exp.astype(jnp.int32), 0, 31).astype(U32))
    out = jnp.where(exp == 255, special,
                    jnp.where(exp >= 113, normal, jnp.where(mag == 0, u32(0), sub)))
    return (sign | out).astype(jnp.uint16)


def _max_carrier(fmt: Format) -> int:
    """Carrier pattern of fmt's largest finite value."""
    emax = (1 << fmt.exponent_bits) - 2 - fmt.bias
    man = ((1 << fmt.mantissa_bits) - 1) << (23 - fmt.mantissa_bits)
    return ((emax + 127) << 23) | man


def round_carrier(c, fmt: Format, config: Config | None = None):
    """Round float32 carriers to the nearest ``fmt`` value, ties to even, as carriers.

    ``fmt`` is an IEEE-like format with inf (half, bfloat16, float). Results below fmt's
    smallest subnormal round to 0 or to it; results beyond its range become inf, or fmt's
    largest finite value for half under ``float_overflow="saturate"`` (NaN -> 0 there).
    """
    mag = c & MAG32
    sign = c & SIGN32
    is_nan = mag > INF32
    if fmt.name != "float":
        exp = jnp.maximum(_srl(mag, 23), 1).astype(jnp.int32)
        e_min = 128 - fmt.bias  # carrier exponent field of fmt's smallest normal binade
        drop = (23 - fmt.mantissa_bits) + jnp.maximum(e_min - exp, 0)
        # RNE on the pattern: add half an ulp minus one plus the kept lsb, then clear the dropped
        # bits. The pattern is linear across f32's subnormal/normal border, so this is exact
        # for drop <= 23; a carry runs into the exponent as it should.
        d = jnp.minimum(drop, 23).astype(U32)
        lsb = _srl(mag, d) & 1
        rounded = (mag + (_sll(u32(1), d) - 1 >> 1) + lsb) & ~(_sll(u32(1), d) - 1)
        rounded = jnp.where(_sll(u32(1), d) == 1, mag, rounded)
        # drop == 24: the value lies in [q/2, q) for the smallest subnormal q; a tie goes to 0.
        q_exp = max(e_min - fmt.mantissa_bits, 0)  # carrier exponent of fmt's least subnormal
        tiny = jnp.where((drop == 24) & ((mag & 0x7FFFFF) != 0), u32(q_exp << 23), u32(0))
        rounded = jnp.where(drop <= 23, rounded, tiny)
        limit = np.uint32(_max_carrier(fmt))
        rounded = jnp.where((rounded > limit) & ~is_nan & (mag != INF32),
                            u32(INF32), jnp.where(is_nan | (mag == INF32), mag, rounded))
    else:
        rounded = mag
    out = sign | rounded
    out = jnp.where(is_nan, u32(QNAN32), out)
    if fmt.name == "half" and config is not None and config.float_overflow == "saturate":
        out = jnp.where(rounded == INF32, sign | np.uint32(_max_carrier(fmt)), out)
        out = jnp.where(is_nan, u32(0), out)
    return out


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


def carrier_add(a, b):
    """IEEE float32 a + b on carriers (RNE, subnormals kept), NaN canonical."""
    r = native_add(a, b)
    tiny = jnp.maximum(a & MAG32, b & MAG32) < _SMALL32
    r = jnp.where(tiny, _scale_down(native_add(_scale_up(a), _scale_up(b))), r)
    return canonical_nan(r)


_HALF_MIN_NORMAL = np.uint32(0x38800000)  # 2^-14
_HALF_MAX = np.uint32(0x477FE000)  # 65504


def _round_half_sum(r):
    """Carrier of the half nearest to r, where r = float32(a + b) for half values a, b.

    Double rounding is innocuous (24 >= 2*11 + 2 bits) and a sum below 2^-14 is an exact
    multiple of 2^-24, i.e. already a half subnormal; so only normal sums need rounding.
    """
    mag = r & MAG32
    lsb = (r >> np.uint32(13)) & np.uint32(1)
    rounded = (r + np.uint32(0xFFF) + lsb) & np.uint32(0xFFFFE000)
    out = jnp.where(mag < _HALF_MIN_NORMAL, r, rounded)
    out = jnp.where((out & MAG32) > _HALF_MAX, (r & SIGN32) | INF32, out)
    return jnp.where(mag > INF32, u32(QNAN32), out)


def float_add(a, b, fmt: Format, config: Config | None = None):
    """fmt a + b on carriers, rounded once to ``fmt`` (bfloat16: float32 RNE, then bfloat16 RNE)."""
    if fmt.name == "half":
        # Half values are multiples of 2^-24: the native float32 add is exact on every backend.
        if config is None or config.float_overflow == "ieee":
            return _round_half_sum(native_add(a, b))
        return round_carrier(canonical_nan(native_add(a, b)), fmt, config)
    return round_carrier(carrier_add(a, b), fmt, config)


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
