"""The exact sum of floating-point values, rounded once: integer limbs, no float arithmetic.

Every value of a format is an integer multiple of its least subnormal 2^qe, so a sum of them
is an integer times 2^qe. Each value's significand (at most 24 bits) is cut into 14-bit digits
at its bit position; the digits of all n values are added per limb in int32 (at most 2^16
values per pass, so no limb sum can overflow), carries are propagated, and the resulting big
integer is rounded once to the target format, ties to even, with integer shifts only. Nothing
depends on float behaviour (flush-to-zero, excess precision, NaN payloads), so the result is
the same eager, under jit, on CPU and GPU.

``exact_sum_host`` is the host (NumPy) fast path for concrete arrays: where a row's values
span few enough bits that a float64 sum of them is exact in any order, it sums in float64 and
rounds once (via float32 rounded to odd); the rows it cannot take (inf, NaN, wide spans) are
left to the limbs. Both give the same bits (tests/test_precision_host.py, tests/test_mpfr.py).
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from ..formats import Format, finfo
from .bits import INF32, MAG32, SIGN32, U32, sll, srl, u32
from .host_blocks import map_row_blocks

LIMB_BITS = 14
_MASK = (1 << LIMB_BITS) - 1
CHUNK = 1 << 16  # values per int32 pass: CHUNK * (2^14 - 1) < 2^30
I32 = jnp.int32


def _layout(fmt: Format, n: int) -> tuple[int, int, int]:
    """(least exponent qe, limbs, digits per value) for sums of n values of ``fmt``."""
    info = finfo(fmt)
    sig_bits = info.nmant + 1
    qe = info.minexp - info.nmant
    # |sum| <= n * max < 2^(maxexp + bit_length(n)): its bits in units of 2^qe, a sign, a spare.
    top = info.maxexp - qe + max(n, 1).bit_length() + 2
    return qe, -(-top // LIMB_BITS) + 1, -(-(sig_bits + LIMB_BITS - 1) // LIMB_BITS)


def _digits(c, fmt: Format, qe: int, pieces: int):
    """Limb index q and signed digits of each finite carrier's value / 2^qe."""
    mag = c & MAG32
    field = srl(mag, 23)
    sig = (mag & 0x7FFFFF) | jnp.where(field > 0, u32(0x800000), u32(0))
    drop = 23 - fmt.mantissa_bits  # zero bits below a format value's significand
    pos = jnp.maximum(field, 1).astype(I32) - 150 - qe + drop
    sig = srl(sig, u32(drop))
    # A format subnormal sits below its normal grid; its low bits are zero, so this is exact.
    sig = srl(sig, jnp.clip(-pos, 0, 31).astype(U32))
    pos = jnp.maximum(pos, 0)
    q, r = pos // LIMB_BITS, (pos % LIMB_BITS).astype(U32)
    digits = [sll(sig, r) & _MASK]
    digits += [srl(sig, j * LIMB_BITS - r) & _MASK for j in range(1, pieces)]
    negative = (c & SIGN32) != 0
    finite = mag < INF32
    digits = [jnp.where(finite, jnp.where(negative, -d.astype(I32), d.astype(I32)), 0)
              for d in digits]
    return q, digits


def _normalise(acc):
    """Carry-propagate limb sums (..., L): digits in [0, 2^14) below a signed top limb."""

    def step(carry, v):
        v = v + carry
        return v >> LIMB_BITS, v & _MASK  # arithmetic shift: floor division

    low = jnp.moveaxis(acc[..., :-1], -1, 0)
    carry, digits = lax.scan(step, jnp.zeros(acc.shape[:-1], I32), low)
    return jnp.concatenate([jnp.moveaxis(digits, 0, -1), (acc[..., -1] + carry)[..., None]],
                           axis=-1)


def _scatter_limbs(q, digits, limbs: int):
    """Per-limb sums (..., L) of digits (..., m) at limbs q, q+1, ...: integer adds, exact and
    associative, so any order of the scatter-add is the exact sum."""
    batch = q.shape[:-1]
    flat = [a.reshape(-1, a.shape[-1]) for a in (q, *digits)]

    def one(q, *digits):
        acc = jnp.zeros(limbs, I32)
        for j, d in enumerate(digits):
            acc = acc.at[q + j].add(d)
        return acc

    return jax.vmap(one)(*flat).reshape(batch + (limbs,))


def exact_limbs(c, fmt: Format):
    """The exact sum of carriers ``c`` (..., n) of ``fmt`` values, as (magnitude limbs, negative).

    ``limbs`` (..., L) int32: digit k in [0, 2^14) weighs 2^(14k + qe); ``negative`` bool.
    Non-finite inputs are left out (callers handle them).
    """
    n = c.shape[-1]
    qe, limbs, pieces = _layout(fmt, n)
    chunks = -(-n // CHUNK)
    if chunks > 1:
        c = jnp.pad(c, [(0, 0)] * (c.ndim - 1) + [(0, chunks * CHUNK - n)])
        c = c.reshape(c.shape[:-1] + (chunks, CHUNK))
    q, digits = _digits(c, fmt, qe, pieces)
    total = _scatter_limbs(q, digits, limbs)
    if chunks > 1:
        # int32 whatever x64 says (under x64 jnp.sum would widen it, and the scan's carry not)
        total = jnp.sum(_normalise(total), axis=-2, dtype=I32)
    signed = _normalise(total)
    negative = signed[..., -1] < 0
    return jnp.where(negative[..., None], _normalise(-total), signed), negative


# Not round_bits: squeezing the sum into a float32 pattern first would round twice for float.
def _round_limbs(mag, negative, base: int, fmt: Format, odd: bool = False):
    """``fmt`` bit patterns (uint32) of +-(magnitude limbs) (digit k weighs 2^(14k + base)),
    rounded to nearest, ties to even; or to odd (``odd``: the last kept bit set when anything
    was dropped, which a later rounding to 2+ fewer bits turns into the correct one)."""
    limbs = mag.shape[-1]
    nonzero = mag != 0
    t = limbs - 1 - jnp.argmax(nonzero[..., ::-1], axis=-1).astype(I32)

    def digit(i):
        d = jnp.take_along_axis(mag, jnp.clip(i, 0, limbs - 1)[..., None], axis=-1)[..., 0]
        return jnp.where(i >= 0, d, 0).astype(U32)

    d0, d1, d2 = digit(t), digit(t - 1), digit(t - 2)
    b = (32 - lax.clz(d0)).astype(I32)  # bits of the top digit, 1..14
    low = jnp.clip(b - 2, 0, 31).astype(U32)
    x = (sll(d0, (30 - b).astype(U32)) | sll(d1, (16 - b).astype(U32))
         | jnp.where(b >= 2, srl(d2, low), sll(d2, u32(1))))
    sticky = ((d2 & (sll(u32(1), low) - 1)) != 0) | jnp.any(
        nonzero & (jnp.arange(limbs, dtype=I32) < (t - 2)[..., None]), axis=-1)
    e0 = LIMB_BITS * (t - 2) + (b - 2) + base  # exponent of x's last bit; x has 30 bits

    info = finfo(fmt)
    p = info.nmant + 1
    emin = info.minexp
    qe = emin - info.nmant
    normal = e0 + 29 >= emin
    shift = jnp.where(normal, 30 - p, jnp.minimum(qe - e0, 31)).astype(U32)
    kept = srl(x, shift)
    rem = x & (sll(u32(1), shift) - 1)
    half = sll(u32(1), shift - 1)
    if odd:
        kept = kept | ((rem != 0) | sticky).astype(U32)
    else:
        kept = kept + ((rem > half) | ((rem == half) & (sticky | ((kept & 1) == 1)))).astype(U32)
    # (biased exponent - 1) * 2^mantissa_bits + significand: a carry out of the significand
    # moves into the exponent field by itself.
    field = jnp.clip(e0 + shift.astype(I32) - qe, 0, (1 << fmt.exponent_bits) - 1).astype(U32)
    pattern = jnp.where(normal, sll(field, u32(fmt.mantissa_bits)) + kept, kept)
    inf = np.uint32(((1 << fmt.exponent_bits) - 1) << fmt.mantissa_bits)
    pattern = jnp.where(jnp.any(nonzero, axis=-1), jnp.minimum(pattern, inf), u32(0))
    sign = np.uint32(1 << (fmt.exponent_bits + fmt.mantissa_bits))
    return jnp.where(negative, pattern | sign, pattern)


def exact_sum_bits(c, fmt: Format, *, limbs=None, target: Format | None = None,
                   odd: bool = False):
    """``target`` patterns (uint32) of the exact sum of carriers ``c`` (..., n) of ``fmt``
    values (``target`` defaults to ``fmt``), rounded once: to nearest even, or to odd.

    inf + -inf or a NaN input give the canonical NaN; an exact zero is +0 unless every input
    is -0 (IEEE's sign rules for a sum that is exactly zero). ``limbs``: ``exact_limbs(c,
    fmt)`` if already computed.
    """
    base = _layout(fmt, c.shape[-1])[0]
    mag, negative = exact_limbs(c, fmt) if limbs is None else limbs
    fmt = fmt if target is None else target
    pattern = _round_limbs(mag, negative, base, fmt, odd)
    sign = np.uint32(1 << (fmt.exponent_bits + fmt.mantissa_bits))
    inf = np.uint32(((1 << fmt.exponent_bits) - 1) << fmt.mantissa_bits)
    nan = inf | np.uint32(1 << (fmt.mantissa_bits - 1))
    pos_inf = jnp.any(c == INF32, axis=-1)
    neg_inf = jnp.any(c == (INF32 | SIGN32), axis=-1)
    any_nan = jnp.any((c & MAG32) > INF32, axis=-1)
    all_neg_zero = jnp.all(c == SIGN32, axis=-1)
    pattern = jnp.where(all_neg_zero, u32(sign), pattern)
    pattern = jnp.where(pos_inf, u32(inf), jnp.where(neg_inf, u32(inf | sign), pattern))
    return jnp.where(any_nan | (pos_inf & neg_inf), u32(nan), pattern)


def limbs_to_float64(mag, negative, fmt: Format, n: int) -> np.ndarray:
    """Host-side: the exact sums, correctly rounded to float64 (``math.fsum`` of exact terms)."""
    qe = _layout(fmt, n)[0]
    mag = np.asarray(mag)
    weights = [math.ldexp(1.0, LIMB_BITS * k + qe) for k in range(mag.shape[-1])]
    flat = mag.reshape(-1, mag.shape[-1])
    out = np.array([math.fsum(float(d) * w for d, w in zip(row, weights, strict=True) if d)
                    for row in flat])
    out = np.where(np.asarray(negative).reshape(-1), -out, out)
    return out.reshape(mag.shape[:-1])


# --- host fast path: float64 sums that are exact by construction -----------------------------

HOST_CHUNK = 1 << 20  # elements per block of rows: the float64 copy stays in cache
_SPLIT_BITS = 12  # float: each value cut into a 12-bit high part and a 12-bit low part


def _odd_float32(s: np.ndarray, err: np.ndarray | None = None) -> np.ndarray:
    """float32 of ``s + err`` rounded to odd (``err``: a float64 below half an ulp of ``s``, or
    None for an exact ``s``); a later rounding to a format 2+ bits narrower is then correct."""
    with np.errstate(over="ignore", invalid="ignore"):
        f = s.astype(np.float32)
        wide = f.astype(np.float64)
        below = wide < s if err is None else (wide < s) | ((wide == s) & (err > 0))
        above = wide > s if err is None else (wide > s) | ((wide == s) & (err < 0))
    inexact = np.isfinite(f) & (below | above)
    even = (f.view(np.uint32) & 1) == 0
    toward = np.where(below, np.float32(np.inf), np.float32(-np.inf))
    return np.where(inexact & even, np.nextafter(f, toward), f)


def _odd_float64(s: np.ndarray, err: np.ndarray) -> np.ndarray:
    """``s + err`` rounded to odd in float64, for s = fl(a + b) and err its exact error."""
    even = (s.view(np.uint64) & 1) == 0
    toward = np.where(err > 0, np.inf, -np.inf)
    return np.where((err != 0) & even, np.nextafter(s, toward), s)


def _host_block(bits: np.ndarray, fmt: Format):
    """(fmt patterns, float64 sums, done) for one block of rows ``bits`` (rows, n)."""
    m, e = fmt.mantissa_bits, fmt.exponent_bits
    uint = bits.dtype.type
    n = bits.shape[-1]
    log_n = max(n - 1, 0).bit_length()  # |partial sums| < n max|x| <= 2^log_n max|x|
    field = (bits >> uint(m)) & uint((1 << e) - 1)
    finite = np.all(field != (1 << e) - 1, axis=-1)
    wide = bits.view(fmt.storage_dtype).astype(np.float64)
    split = fmt.name == "float"  # 24 significand bits: two parts leave room for the span
    if fmt.name == "half" and log_n <= 13:
        done = finite  # multiples of 2^-24 below 2^16: 2^13 of them sum exactly
    else:
        # Every value is a multiple of 2^(lo - bias - m) below 2^(hi - bias + 1): the float64
        # sums are exact when that span plus log_n fits in 53 bits (in each part, if split).
        nonzero = (bits & uint((1 << (m + e)) - 1)) != 0
        hi = np.max(np.where(finite[:, None], field, 0), axis=-1).astype(np.int64)
        lo = np.min(np.where(nonzero, np.maximum(field, 1), 1 << e), axis=-1).astype(np.int64)
        bits_needed = hi - lo + (m + 1 - _SPLIT_BITS if split else m + 1) + log_n
        done = finite & (bits_needed <= 53)  # (all zero: lo is 2^e, so always done)
    if split:
        # high part: the value with its low 12 significand bits cleared (exact); low: the rest
        high = (bits & ~uint((1 << _SPLIT_BITS) - 1)).view(fmt.storage_dtype).astype(np.float64)
        a = np.sum(high, axis=-1)
        b = np.sum(wide - high, axis=-1)
        s = a + b
        err = (a - (s - (s - a))) + (b - (s - a))  # TwoSum: s + err == a + b exactly
    else:
        s = np.sum(wide, axis=-1)
        err = None
    s = np.where(done, s, 0.0)
    if fmt.name == "float":
        exact64 = s if err is None else _odd_float64(s, np.where(done, err, 0.0))
        with np.errstate(over="ignore"):
            rounded = exact64.astype(np.float32)
    else:
        odd = _odd_float32(s, None if err is None else np.where(done, err, 0.0))
        rounded = odd.astype(fmt.storage_dtype)
    out = rounded.view(fmt.bits_dtype).copy()
    # An exact zero: -0 only when every input is -0 (IEEE), else +0.
    zero = done & (s == 0)
    if np.any(zero):
        sign = uint(1 << (m + e))
        out[zero] = np.where(np.all(bits[zero] == sign, axis=-1), sign, 0)
    return out, s + 0.0, done  # an exact zero is +0.0 in float64, as limbs_to_float64 gives


def exact_sum_host(bits: np.ndarray, fmt: Format):
    """Host NumPy: ``(patterns, float64 sums, done)`` of the exact sums of ``fmt`` patterns
    ``bits`` (rows, n) for the rows where a float64 sum is exact by construction.

    half (n <= 2^13): always; bfloat16 and float: when a row's exponent span plus log2 n fits
    float64's 53 bits (float cuts each value into two 12-bit parts summed apart, then joined
    by TwoSum). ``patterns`` is the exact sum rounded once to ``fmt`` (through float64 and
    float32 rounded to odd, so the one rounding that counts is the last), bit-identical to
    ``exact_sum_bits``; ``float64 sums`` is the exact sum correctly rounded to float64. Rows
    with inf or NaN, or too wide a span, have ``done`` False: the caller takes the limb path.
    """
    def block(rows):
        with np.errstate(all="ignore"):  # NaN and inf rows are computed, then not done
            return _host_block(rows, fmt)

    return map_row_blocks(block, bits, HOST_CHUNK)


# --- float: a float64 sum with an error bound, rounded only where the bound settles it -------

CERTIFY_MAX_N = 1 << 20  # the bound below needs (n - 1) 2^-24 well below 1


def certified_float_bits(s, t, terms: int):
    """(float32 patterns, certified) of exact sums of float32 values, traced under x64:
    ``s`` is a float64 sum of ``terms`` terms (the values, in any order, plus any that
    cancel), ``t`` the float32 sums of groups of their magnitudes, added in float64.

    A row is certified when every value within the error bound of ``s`` rounds to the same
    float32, which then is the exact sum rounded once. Rows left (an exact sum near a
    rounding boundary or a tie, zero or subnormal, inf or NaN inputs) need
    ``exact_sum_host`` or the limbs; for standard normal data about one row in 270 at n = 4096.
    ``terms`` <= ``CERTIFY_MAX_N``.
    """
    if s.dtype != jnp.float64:  # with x64 off s is a float32 sum: the bound would not hold
        raise TypeError("certified_float_bits: s must be float64 (trace under jax.enable_x64)")
    # T: an upper bound on the sum of magnitudes once t is divided by 1 - 2 gamma_{k-1}, k
    # the largest group (Higham, Accuracy and Stability, 2nd ed., (4.4)).
    g32 = (terms - 1) * 2.0 ** -24 / (1 - (terms - 1) * 2.0 ** -24)
    t = t / (1 - 2 * g32)
    # |s - exact| <= gamma64_{terms-1} T (1.01: the bound's own roundings), plus terms *
    # 2^-126 if the backend reads subnormal inputs as zero (flush-to-zero) in either sum.
    bound = 1.01 * (terms - 1) * 2.0 ** -53 * t + terms * 2.0 ** -126
    # s -/+ bound rounded, then one float64 further out: strictly outside the interval, so
    # the exact sum lies between them even where the rounding moved an end inwards.
    lo = jnp.nextafter(s - bound, -jnp.inf)
    hi = jnp.nextafter(s + bound, jnp.inf)
    lo = lax.bitcast_convert_type(lo.astype(jnp.float32), U32)
    hi = lax.bitcast_convert_type(hi.astype(jnp.float32), U32)
    # Both ends round to one float32 (rounding is monotonic, so the exact sum does too), a
    # normal number or an infinity: a float32 subnormal result could have been flushed.
    mag = lo & MAG32
    return lo, (lo == hi) & (mag >= np.uint32(0x800000)) & (mag <= INF32)
