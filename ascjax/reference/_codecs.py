"""Slow, obvious NumPy models of ``ascjax.encode`` / ``ascjax.decode`` (SPEC 8).

Written from SPEC 8 and the vendor rules, independently of the emulator: the values of a type
come from its independent library (ml_dtypes, en_dtypes, NumPy; ``FORMATS[name].reference``),
and rounding is a search in that sorted value list in float64 (which holds every float32 and
every midpoint exactly), then a choice between the two neighbours as the round mode says.
HiFloat8's CAST_HYBRID is a transcription of Huawei's host reference codec.
"""

from __future__ import annotations

import functools
import importlib
from typing import Any

import numpy as np

from ascjax._src.config import Config
from ascjax._src.formats import FORMATS, resolve

_UINT = {1: np.uint8, 2: np.uint16}
_NEXT = {"hifloat8_t": 49152.0, "fp8_e8m0_t": 2.0 ** 128}  # where the next code would sit


def library_type(fmt: Any):
    """The independent library's NumPy scalar type of ``fmt`` (en_dtypes only for hifloat8)."""
    module_name, attr = FORMATS[resolve(fmt, where="reference").name].reference.split(".")
    try:
        module = importlib.import_module(module_name)
    except ImportError as e:    # en_dtypes is a test extra, not an ascjax dependency
        raise ImportError(f"reference: the values of {fmt} come from {module_name}; install it "
                          "(pip install 'ascjax[test]')") from e
    return getattr(module, attr)


def decode(bits: Any, fmt: Any, *, config: Config | None = None) -> np.ndarray:
    """float32 values of codes ``bits`` by the type's library (one unpacked element a byte)."""
    name = resolve(fmt, where="reference").name
    return _decode(bits, name, (config or Config()).e8m0)


def _decode(bits, name: str, e8m0: str) -> np.ndarray:
    t = np.dtype(library_type(name))
    values = np.asarray(bits).astype(_UINT[t.itemsize]).view(t).astype(np.float32)
    if name == "fp8_e8m0_t" and e8m0 == "cast":
        values = np.where(np.asarray(bits) == 0, np.float32(0), values)
    return values


def value_grid(fmt: Any, *, config: Config | None = None):
    """(finite values >= 0 ascending, float64; their codes; the would-be next value)."""
    return _value_grid(resolve(fmt, where="reference").name, (config or Config()).e8m0)


@functools.cache
def _value_grid(name: str, e8m0: str):
    f = FORMATS[name]
    codes = np.arange(1 << (f.bits - 1 if f.sign_bit else f.bits))
    with np.errstate(invalid="ignore"):  # signalling NaNs widen with a warning
        values = _decode(codes, name, e8m0).astype(np.float64)
    keep = np.isfinite(values)
    values, codes = values[keep], codes[keep]
    order = np.argsort(values, kind="stable")
    values, codes = values[order], codes[order]
    return values, codes, _NEXT.get(name, 2 * values[-1] - values[-2])


def encode(values: Any, fmt: Any, *, round_mode: str | None = None, saturate: bool = False,
           config: Config | None = None) -> np.ndarray:
    """Codes of ``values`` in ``fmt`` by the documented rules (see ``ascjax.encode``).

    ``round_mode`` defaults to the type's first mode. "hybrid" reads a float16 array by the
    Cast-from-half rule (its mantissa lsbs), anything else as float32.
    """
    name = resolve(fmt, where="reference").name
    mode = FORMATS[name].round_modes[0] if round_mode is None else round_mode
    if mode == "hybrid" and saturate:   # the vendor codec transcribed below has no saturation
        raise NotImplementedError("reference: encode has no model of hybrid with saturate")
    source = np.asarray(values)
    x = source.astype(np.float32)
    with np.errstate(invalid="ignore"):
        if mode == "hybrid":
            half_lsb = source.view(np.uint16) & 1 if source.dtype == np.float16 else None
            return _hifloat8_hybrid(x, half_lsb)
        return _encode(x, name, mode, saturate, (config or Config()).e8m0)


def _int4(x: np.ndarray, mode: str) -> np.ndarray:
    v = x.astype(np.float64)
    rounders = {"rint": np.rint, "floor": np.floor, "ceil": np.ceil, "trunc": np.trunc,
                "round": lambda a: np.sign(a) * np.floor(np.abs(a) + 0.5)}
    r = np.clip(np.nan_to_num(rounders[mode](v), nan=0.0), -8, 7)
    return (r.astype(np.int64) & 0xF).astype(np.uint8)


def _encode(x, name, round_mode, saturate, e8m0):
    f = FORMATS[name]
    if name == "int4b_t":
        return _int4(x, round_mode)
    grid, codes, nxt = _value_grid(name, e8m0)
    neg = np.signbit(x)
    finite = np.isfinite(x)
    a = np.where(finite, np.abs(x.astype(np.float64)), 0.0)
    i = np.searchsorted(grid, a, side="right") - 1
    below = i < 0  # only e8m0 read as the format has no zero: below 2**-127
    i = np.clip(i, 0, grid.size - 1)
    top = i == grid.size - 1
    lo, hi = grid[i], np.where(top, nxt, grid[np.minimum(i + 1, grid.size - 1)])
    exact, mid, lo_odd = a == lo, (lo + hi) / 2, (codes[i] & 1) == 1
    up = {"rint": (a > mid) | ((a == mid) & lo_odd), "round": a >= mid,
          "trunc": np.zeros_like(exact), "floor": neg & ~exact, "ceil": ~neg & ~exact,
          "odd": ~exact & ~lo_odd}[round_mode] & ~below
    code = np.where(up & ~top, codes[np.minimum(i + 1, grid.size - 1)], codes[i])
    toward_zero = {"trunc": True, "odd": True, "floor": ~neg, "ceil": neg}.get(round_mode, False)
    special = f.inf_code if f.inf_code is not None else f.nan_code
    big = f.max_code if saturate or special is None else special
    code = np.where(up & top, np.where(toward_zero, f.max_code, big), code)
    code = np.where(np.isinf(x), big, code)
    nan = np.isnan(x)
    if f.sign_bit:
        has_negative_zero = name != "hifloat8_t"
        sign = 1 << (f.bits - 1)
        code = np.where(neg & ((code != 0) | has_negative_zero), code | sign, code)
    else:  # unsigned e8m0
        nan = nan | (neg & (x != 0)) | ((x == 0) & (e8m0 == "format"))
    nan_code = 0 if saturate or f.nan_code is None else f.nan_code
    if f.sign_bit and name != "hifloat8_t" and not saturate and f.nan_code is not None:
        nan_code = np.where(neg, nan_code | (1 << (f.bits - 1)), nan_code)
    return np.where(nan, nan_code, code).astype(_UINT[max(f.bits // 8, 1)])


def _hif8_code(e: np.ndarray, frac: np.ndarray, frac_bits: np.ndarray) -> np.ndarray:
    """The code of 2**e * (1 + frac / 2**frac_bits), assembled as in the vendor's codec."""
    a = np.abs(e)
    d = np.select([e < -15, a == 0, a == 1, a <= 3, a <= 7], [0, 0, 1, 2, 3], 4)
    dot = np.array([1, 2, 4, 8, 12])[d]
    exp_bits = np.maximum(d, 1)
    sign_exp = (e < 0).astype(np.int64) << (exp_bits - 1 + frac_bits)
    tail = (a - (1 << (exp_bits - 1))) << frac_bits
    normal = np.where(d == 0, (dot << 3) + frac, (dot << 3) + sign_exp + tail + frac)
    return np.where(e < -22, 0, np.where(e < -15, e + 23, normal))


def _hifloat8_hybrid(x, half_lsb) -> np.ndarray:
    """CAST_HYBRID codes, transcribed from Huawei's host reference codec (saturate off).

    |e| < 4, or |x| >= 40960: CAST_ROUND. Otherwise the magnitude's fraction below the kept
    mantissa bits is cut into F (its top 14 bits; half source: top 2 bits) and compared with T
    (float32: the fraction's low 14 bits; half: 2 * mantissa lsb + 1); F >= T rounds up.
    """
    out = _encode(x, "hifloat8_t", "round", False, "cast").astype(np.int64)
    with np.errstate(invalid="ignore"):
        a = np.abs(x.astype(np.float64))
    nonzero = np.isfinite(a) & (a > 0)
    e = np.frexp(np.where(nonzero, a, 1.0))[1].astype(np.int64) - 1
    use = nonzero & (np.abs(e) >= 4) & (a < 40960.0)
    a, e = np.where(use, a, 1.0), np.where(use, e, 0)
    frac_bits = np.select([np.abs(e) <= 3, np.abs(e) <= 7, np.abs(e) <= 15], [3, 2, 1], 0)
    frac_bits = np.where(e < -15, 0, frac_bits)
    src_bits, keep = (23, 14) if half_lsb is None else (10, 2)
    fraction = np.ldexp(a, src_bits - e).astype(np.int64) - (1 << src_bits)
    shift = src_bits - frac_bits
    kept = fraction >> shift
    rest = fraction - (kept << shift)
    f = rest >> (shift - keep)
    midpoint = e == -23  # [2**-23, 2**-22): the rest is measured against 2**-22
    f = np.where(midpoint, (fraction >> (src_bits - keep + 1)) + (1 << (keep - 1)), f)
    kept = np.where(midpoint, 0, kept)
    if half_lsb is None:
        t = np.where(midpoint, fraction, rest) & ((1 << keep) - 1)
    else:
        t = 2 * np.asarray(half_lsb, np.int64) + 1
    up = f >= t
    carry = up & (kept == (1 << frac_bits) - 1)
    frac = np.where(carry, 0, kept + up)
    e2 = np.where(carry, e + 1, e)
    frac_bits2 = np.where(carry, np.select([np.abs(e2) <= 3, np.abs(e2) <= 7], [3, 2], 1),
                          frac_bits)
    code = _hif8_code(e2, frac, np.where(e2 < -15, 0, frac_bits2))
    code = np.where(code != 0, code | (np.signbit(x) << 7), code)
    return np.where(use, code, out).astype(np.uint8)
