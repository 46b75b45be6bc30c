"""HiFloat8 (Ascend ``hifloat8_t``, arXiv 2409.16626): layout, decode table and rounding.

A code is ``sign | dot | exponent | mantissa``. The prefix-coded dot field says how many
exponent bits follow; the exponent is sign-magnitude with an implicit leading 1, so the
mantissa width tapers from 3 bits near 1 to 1 bit at the ends of the range:

==========  ===========  ===========  ==================================
dot         exponents e  mantissa     codes (sign clear)
==========  ===========  ===========  ==================================
``0000``    -22 .. -16   0 bits       ``0x01..0x07`` = 2**(code - 23)
``0001``    0            3 bits       ``0x08..0x0F``
``001``     +-1          3 bits       ``0x10..0x1F``
``01``      +-2, +-3     3 bits       ``0x20..0x3F``
``10``      +-4 .. +-7   2 bits       ``0x40..0x5F``
``11``      +-8 .. +-15  1 bit        ``0x60..0x7F``
==========  ===========  ===========  ==================================

Specials: ``0x00`` is the only zero, ``0x80`` the only NaN, ``0x6F``/``0xEF`` (where 1.5 * 2**15
would sit) are +-inf; the largest finite value is 32768 (``0x6E``).
"""

from __future__ import annotations

import functools
import math

import jax.numpy as jnp
import numpy as np
from jax import lax

from ..formats import finfo
from . import grid
from .bits import MAG32, U32

_INFO = finfo("hifloat8_t")
# Binades of the finite nonzero values: 2**-22 (least denormal) .. 2**15 (max).
E_MIN, E_MAX = math.frexp(_INFO.smallest_subnormal)[1] - 1, _INFO.maxexp - 1
INF_CODE, NAN_CODE, MAX_CODE = 0x6F, 0x80, 0x6E
OVERFLOW32 = 0x47200000  # float32 pattern of 40960 = 1.25 * 2**15, the round-mode overflow point
_SSR_BITS = 14  # hybrid mode, float32 source: compare 14 discarded bits with 14 low bits


def layout(e: int) -> tuple[int, int]:
    """(code of 2**e, mantissa bits) for a binade e in [E_MIN, E_MAX]."""
    a, neg = abs(e), int(e < 0)
    if e < -15:
        return e + 23, 0  # denormal: 2**(m - 23), m = 1..7
    if a == 0:
        return 0x08, 3
    if a == 1:
        return 0x10 | neg << 3, 3
    if a <= 3:
        return 0x20 | neg << 4 | (a - 2) << 3, 3
    if a <= 7:
        return 0x40 | neg << 4 | (a - 4) << 2, 2
    return 0x60 | neg << 4 | (a - 8) << 1, 1


@functools.cache
def decode_table() -> np.ndarray:
    """uint32 float32 patterns of all 256 codes, built from ``layout`` with exact integer math."""
    table = np.zeros(256, np.uint32)
    for e in range(E_MIN, E_MAX + 1):
        base, mbits = layout(e)
        for m in range(1 << mbits):
            value = np.float32(np.ldexp(float((1 << mbits) + m), e - mbits))
            table[base + m] = value.view(np.uint32)
    table[INF_CODE] = 0x7F800000
    table[0x80:] = table[:0x80] | np.uint32(0x80000000)
    table[NAN_CODE] = 0x7FC00000  # the code of -0 is NaN; 0x00 stays +0
    return table


@functools.cache
def _binade_tables() -> tuple[np.ndarray, np.ndarray]:
    """(code of 2**e, mantissa bits) indexed by e + 23 for e in [-23, 16] (ends: 0 bits)."""
    base = np.zeros(40, np.int32)
    mbits = np.zeros(40, np.int32)
    for e in range(E_MIN, E_MAX + 1):
        base[e + 23], mbits[e + 23] = layout(e)
    return base, mbits


def encode(bits, *, mode: str, saturate: bool, half_lsb=None):
    """HiFloat8 codes (uint8) of float32 patterns ``bits`` under ``mode`` "round" or "hybrid"
    (``rounding.round_bits`` is the entry point: it calls this for hifloat8_t).

    "round" (CAST_ROUND) is nearest, ties away from zero, on the tapered grid: |x| >= 40960
    overflows, |x| < 2**-23 gives 0 and 2**-23 itself rounds up to 2**-22. "hybrid"
    (CAST_HYBRID) keeps that rule where |e| < 4 and elsewhere (values in [2**-23, 40960)) rounds
    up iff the top discarded bits ``F`` are >= a threshold ``T`` taken from the source bits:
    float32 source, F = 14 top discarded bits, T = the 14 low mantissa bits; half source
    (``half_lsb`` given), F = 2 top discarded bits, T = 2 * (half's mantissa lsb) + 1. This
    follows Huawei's host reference codec (which says it follows the CANN simulator), **assumed**;
    one consequence is that on the float32 path an exact value with |e| >= 4 rounds up (F = T = 0).
    Overflow gives +-inf, or +-32768 with ``saturate``; NaN gives 0x80, or 0 with ``saturate``.
    """
    s = grid.split(bits)
    base_table, mbits_table = (jnp.asarray(t) for t in _binade_tables())
    e = s.e
    mbits = mbits_table[jnp.clip(e, -23, 16) + 23]
    # Below 2**-22 the grid is {0, 2**-22}: one step of 2**-22, like a subnormal range.
    e_floor = jnp.maximum(e, E_MIN)
    kept, low, half, shift = grid.quantize(s, e_floor - mbits)
    up = grid.round_up(grid.magnitude_rule("round", s.negative), low, half,
                           jnp.zeros_like(s.negative))
    if mode == "hybrid":
        mag = jnp.asarray(bits, U32) & MAG32
        ssr = (jnp.abs(e) >= 4) & (e >= -23) & (mag < U32(OVERFLOW32))
        if half_lsb is None:
            f = lax.shift_right_logical(low, shift - _SSR_BITS)
            t = s.sig & U32((1 << _SSR_BITS) - 1)
        else:
            f = lax.shift_right_logical(low, shift - 2)
            t = 2 * jnp.asarray(half_lsb, U32) + 1
        up = jnp.where(ssr, f >= t, up)
    n = (kept + up.astype(U32)).astype(jnp.int32)
    top = jnp.left_shift(1, mbits)
    carry = n >= 2 * top  # a round-up to the next power of two
    e_out = jnp.where(carry, e_floor + 1, e_floor)
    m_out = jnp.where(carry, 0, n - top)
    overflow = (e_out > E_MAX) | ((e_out == E_MAX) & (m_out != 0))
    code = jnp.where(n == 0, 0, base_table[jnp.clip(e_out, -23, 16) + 23] + m_out)
    code = jnp.where(overflow | s.inf, MAX_CODE if saturate else INF_CODE, code)
    code = jnp.where(s.negative & (code != 0), code | 0x80, code)
    return jnp.where(s.nan, 0 if saturate else NAN_CODE, code).astype(jnp.uint8)
