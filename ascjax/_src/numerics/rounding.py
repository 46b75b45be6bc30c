"""Rounding onto a format's grid, on bit patterns only: one function for any (format, mode).

XLA's CPU backend flushes float32 subnormals in float compares and casts, so no step here is a
float operation: a float32 pattern is split into an integer significand and a power of two,
``|x| = sig * 2**exp2`` with ``sig < 2**24``, and rounding to a grid of spacing ``2**qe`` is
integer shifting and comparing. ``round_bits`` rounds float32 patterns to the codes of any
IEEE-like format in any Ascend round mode and hands HiFloat8's tapered grid to ``hifloat8``,
which rounds through the same ``quantize`` / ``round_up`` rules. The exact sums (``exact``)
round their integer limbs themselves.

Two fast paths serve the adder, where rounding sits in the hot loop: ``round_carrier``
(round-to-nearest-even to half/bfloat16, carriers in and out) and ``round_half_sum`` (the sum
of two half values). tests/test_rounding.py proves both equal to ``round_bits``.
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from ..config import Config
from ..formats import Format, finfo
from . import hifloat8
from .bits import INF32, MAG32, QNAN32, SIGN32, U32, sll, srl, u32
from .grid import magnitude_rule, overflow_toward_zero, quantize, round_up, split


def round_bits(bits, fmt: Format, mode: str = "rint", *, saturate: bool = False,
               e8m0: str = "cast", half_lsb=None):
    """``fmt`` codes of float32 patterns ``bits``, each rounded once under the Ascend ``mode``.

    ``fmt``: a float type with a codec table entry: an IEEE-like one (sign, biased exponent,
    mantissa; fp8_e8m0 without sign), or hifloat8_t (modes "round" and "hybrid"; ``half_lsb``,
    the mantissa lsbs of a half source, sets hybrid's threshold, see ``hifloat8.encode``).
    Overflow and NaN follow ``ascjax.encode`` (which calls this).
    """
    if fmt.name == "hifloat8_t":
        return hifloat8.encode(bits, mode=mode, saturate=saturate, half_lsb=half_lsb)
    s = split(bits)
    rule = magnitude_rule(mode, s.negative)
    info = finfo(fmt)
    m = info.nmant
    e8m0_format = fmt.name == "fp8_e8m0_t" and e8m0 == "format"
    # e8m0's code 0 is 2**minexp in the format reading; the cast reading makes it +0, so the
    # lowest binade is one up (like an IEEE zero).
    emin = info.minexp if m or e8m0_format else info.minexp + 1
    e_floor = jnp.maximum(s.e, emin)
    kept, low, half, _ = quantize(s, e_floor - m)
    # IEEE codes are linear in the value within the subnormals and each binade, and a carry out
    # of the mantissa is the next binade's code, so the magnitude code is one formula.
    code = jnp.left_shift(e_floor - emin, m) + kept.astype(jnp.int32)
    if e8m0_format:
        code = code - 1  # code 0 is 2**-127
    code = code + round_up(rule, low, half, (code & 1) == 1).astype(jnp.int32)
    if e8m0_format:
        code = jnp.maximum(code, 0)  # values below 2**-127 stay at the smallest code
    limit = fmt.inf_code if fmt.inf_code is not None else fmt.nan_code
    big = fmt.max_code if saturate or limit is None else limit
    code = jnp.where(code > fmt.max_code,
                     jnp.where(overflow_toward_zero(rule), fmt.max_code, big), code)
    code = jnp.where(s.inf, big, code)
    nan = s.nan
    if fmt.sign_bit:
        code = jnp.where(s.negative, code | (1 << (fmt.bits - 1)), code)
    else:  # unsigned e8m0: negative values have no code; zero has none in the format reading
        nan = nan | (s.negative & ~s.zero) | (s.zero if e8m0_format else False)
    nan_code = 0 if saturate or fmt.nan_code is None else fmt.nan_code
    if fmt.sign_bit and not saturate and fmt.nan_code is not None:
        nan_code = jnp.where(s.negative, nan_code | (1 << (fmt.bits - 1)), nan_code)
    return jnp.where(nan, nan_code, code).astype(fmt.bits_dtype)


def _max_carrier(fmt: Format) -> int:
    """Carrier pattern of fmt's largest finite value."""
    return int(np.float32(finfo(fmt).max).view(np.uint32))


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
        exp = jnp.maximum(srl(mag, 23), 1).astype(jnp.int32)
        info = finfo(fmt)
        e_min = info.minexp + 127  # carrier exponent field of fmt's smallest normal binade
        drop = (23 - info.nmant) + jnp.maximum(e_min - exp, 0)
        # RNE on the pattern: add half an ulp minus one plus the kept lsb, then clear the dropped
        # bits. The pattern is linear across f32's subnormal/normal border, so this is exact
        # for drop <= 23; a carry runs into the exponent as it should.
        d = jnp.minimum(drop, 23).astype(U32)
        lsb = srl(mag, d) & 1
        rounded = (mag + (sll(u32(1), d) - 1 >> 1) + lsb) & ~(sll(u32(1), d) - 1)
        rounded = jnp.where(sll(u32(1), d) == 1, mag, rounded)
        # drop == 24: the value lies in [q/2, q) for the smallest subnormal q; a tie goes to 0.
        q_exp = max(e_min - info.nmant, 0)  # carrier exponent of fmt's least subnormal
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


_HALF_MIN_NORMAL = np.uint32(0x38800000)  # 2^-14
_HALF_MAX = np.uint32(0x477FE000)  # 65504


def round_half_sum(r):
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
