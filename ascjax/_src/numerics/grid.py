"""The grid primitives every rounding shares, on bit patterns only.

A float32 pattern is split into an integer significand and a power of two,
``|x| = sig * 2**exp2`` with ``sig < 2**24``; rounding it to a grid of spacing ``2**qe`` is then
integer shifting and comparing (``quantize``), and a round mode is a rule for when the kept
magnitude goes up one step (``magnitude_rule``, ``round_up``). ``rounding.round_bits`` (IEEE-like
formats) and ``hifloat8.encode`` (its tapered grid) both round through these.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
from jax import lax

from .bits import INF32, MAG32, U32

I32 = jnp.int32

# Magnitude rules a round mode resolves to, per element, once the sign is known.
NEAREST_EVEN, NEAREST_AWAY, TOWARD_ZERO, AWAY_FROM_ZERO, TO_ODD = range(5)


class Split(NamedTuple):
    """A float32 pattern taken apart: |x| = sig * 2**exp2, 2**e <= |x| < 2**(e+1)."""

    negative: jax.Array
    zero: jax.Array
    inf: jax.Array
    nan: jax.Array
    e: jax.Array  # floor(log2 |x|), int32 (meaningless for 0, inf, NaN)
    sig: jax.Array  # uint32, < 2**24
    exp2: jax.Array  # int32


def split(bits) -> Split:
    """Split uint32 float32 patterns; subnormals are kept (their leading bit sets ``e``)."""
    bits = jnp.asarray(bits, U32)
    mag = bits & U32(MAG32)
    field = lax.shift_right_logical(mag, U32(23)).astype(I32)
    frac = mag & U32(0x7FFFFF)
    sub = field == 0
    top = 31 - lax.clz(mag).astype(I32)  # highest set bit of a subnormal's pattern
    return Split(negative=bits >= U32(0x80000000), zero=mag == 0, inf=mag == INF32,
                 nan=mag > U32(INF32), e=jnp.where(sub, top - 149, field - 127),
                 sig=jnp.where(sub, frac, frac | U32(0x800000)),
                 exp2=jnp.where(sub, -149, field - 150))


def quantize(s: Split, qe):
    """``(kept, low, half, shift)``: |x| / 2**qe split into its integer part and the rest.

    ``low`` is the discarded part in units of 2**exp2, ``half`` half a grid step in those units.
    Shifts are clamped to 25: beyond that ``low = sig < half``, which decides every mode alike.
    """
    shift = jnp.clip(qe - s.exp2, 0, 25).astype(U32)
    one = jnp.ones_like(s.sig)
    kept = lax.shift_right_logical(s.sig, shift)
    low = s.sig & (lax.shift_left(one, shift) - 1)
    half = lax.shift_right_logical(lax.shift_left(one, shift), U32(1))
    return kept, low, half, shift


_FIXED_RULES = {"rint": NEAREST_EVEN, "round": NEAREST_AWAY, "trunc": TOWARD_ZERO,
                "odd": TO_ODD}


def magnitude_rule(mode: str, negative):
    """The magnitude rule of an Ascend round mode: a Python int, or per element for floor/ceil.

    Fixed rules stay Python ints so that XLA sees no constant arrays (folding those is slow).
    """
    if mode in _FIXED_RULES:
        return _FIXED_RULES[mode]
    if mode == "floor":
        return jnp.where(negative, AWAY_FROM_ZERO, TOWARD_ZERO)
    if mode == "ceil":
        return jnp.where(negative, TOWARD_ZERO, AWAY_FROM_ZERO)
    raise ValueError(f"no magnitude rule for round mode {mode!r}")


def round_up(rule, low, half, odd):
    """Whether the magnitude goes up one grid step under ``rule``.

    ``odd``: whether the code of the magnitude rounded toward zero is odd (ties to even and
    round to odd look at the code's last bit, which is the exponent's when there is no mantissa).
    """
    inexact = low != 0
    above = low > half
    tie = (low == half) & (half != 0)
    ups = {NEAREST_EVEN: lambda: above | (tie & odd), NEAREST_AWAY: lambda: above | tie,
           TOWARD_ZERO: lambda: jnp.zeros_like(inexact), AWAY_FROM_ZERO: lambda: inexact,
           TO_ODD: lambda: inexact & ~odd}
    if isinstance(rule, int):
        return ups[rule]()
    return jnp.where(rule == AWAY_FROM_ZERO, inexact, False)  # floor / ceil


def overflow_toward_zero(rule):
    """Rules that never round a magnitude up: their overflow is the largest finite value (IEEE)."""
    if isinstance(rule, int):
        return rule in (TOWARD_ZERO, TO_ODD)
    return rule == TOWARD_ZERO
