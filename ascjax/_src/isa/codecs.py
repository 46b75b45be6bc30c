"""Value codecs for every Ascend data format (SPEC 8): ``encode``, ``decode`` and nibble pairs.

Values travel as float32 *bit patterns* (uint32) and every rounding step is integer arithmetic
(``numerics.rounding``), so results are exact on every backend despite XLA's float32
flush-to-zero on CPU. The formats, their round modes and special codes come from
``formats.FORMATS``.
"""

from __future__ import annotations

import functools
from typing import Any

import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np
from jax import lax

from ..config import Config, resolve_config
from ..formats import CODEC_FORMATS, FORMATS, ROUND_MODES, Format, finfo, resolve
from ..numerics import hifloat8
from ..numerics.bits import U32, widen16
from ..numerics.grid import magnitude_rule, quantize, round_up, split
from ..numerics.rounding import round_bits


def _codec_format(fmt: Any, where: str) -> Format:
    f = resolve(fmt, where=where, arg="fmt")
    if not f.round_modes:
        raise TypeError(f"{where}: {f.name} has no value codec; types with one: "
                        f"{', '.join(CODEC_FORMATS)}")
    return f


# --- encode ---------------------------------------------------------------------------------

def _input_bits(values: Any, where: str):
    """(uint32 float32 patterns, half mantissa lsbs or None) of ``values``, exactly.

    Half and bfloat16 inputs widen by integer operations (XLA may flush their subnormals in a
    float cast); float64, Python numbers and integers are rounded to float32 by NumPy (RNE).
    """
    if isinstance(values, jax.Array):
        dtype = values.dtype
        if dtype == jnp.float32:
            return lax.bitcast_convert_type(values, U32), None
        for name in ("half", "bfloat16_t"):
            if dtype == FORMATS[name].storage_dtype:
                bits = lax.bitcast_convert_type(values, jnp.uint16)
                return widen16(bits, FORMATS[name]), (bits & 1 if name == "half" else None)
        raise TypeError(f"{where}: a JAX array of values must be float32, float16 or bfloat16, "
                        f"got {dtype}")
    x = np.asarray(values)
    if x.dtype.kind not in "biuf" and x.dtype != ml_dtypes.bfloat16:
        raise TypeError(f"{where}: values must be real numbers, got dtype {x.dtype}")
    lsb = jnp.asarray(x.view(np.uint16) & 1) if x.dtype == np.float16 else None
    return jnp.asarray(x.astype(np.float32).view(np.uint32)), lsb


def _encode_int4(bits, mode: str):
    """int4b_t codes: round to an integer, saturate to [-8, 7] (NaN gives 0)."""
    s = split(bits)
    rule = magnitude_rule(mode, s.negative)
    kept, low, half, _ = quantize(s, jnp.zeros_like(s.e))
    n = kept.astype(jnp.int32) + round_up(rule, low, half, (kept & 1) == 1).astype(jnp.int32)
    n = jnp.where((s.e >= 4) | s.inf, 16, n)  # |x| >= 16 saturates whatever the rounding
    value = jnp.clip(jnp.where(s.negative, -n, n), -8, 7)
    return (jnp.where(s.nan, 0, value) & 0xF).astype(jnp.uint8)


@functools.partial(jax.jit, static_argnames=("name", "mode", "saturate", "e8m0"))
def _encode_kernel(bits, half_lsb, *, name: str, mode: str, saturate: bool, e8m0: str):
    if name == "int4b_t":
        return _encode_int4(bits, mode)
    return round_bits(bits, FORMATS[name], mode, saturate=saturate, e8m0=e8m0,
                      half_lsb=half_lsb)


def encode(values: Any, fmt: Any, *, round_mode: str | None = None, saturate: bool = False,
           config: Config | None = None) -> jax.Array:
    """Bit patterns of ``values`` converted to the Ascend type ``fmt``, as the hardware Cast does.

    ``values``: array-like of real numbers, any shape. float32 (NumPy or JAX) is read as bit
    patterns, so subnormals and NaN signs count; float16 and bfloat16 widen exactly; float64,
    Python numbers and integers are first rounded to float32 by NumPy (the hardware has no
    float64 source). Returns an array of the same shape: uint16 for ``half`` / ``bfloat16_t``,
    uint8 otherwise (one 4-bit code per element for ``int4b_t`` and ``fp4x2_*``; combine pairs
    with ``pack_nibbles``). Jittable and vmappable; one compiled kernel per (type, mode).

    ``fmt``: an Ascend type name (``ascjax.CODEC_FORMATS``) or alias. ``round_mode`` (default:
    the type's first mode, ``"rint"``, or ``"round"`` for hifloat8) must be one the hardware
    Cast offers for the type (``ascjax.FORMATS[fmt].round_modes``), else ``ValueError``:

    - ``"rint"`` nearest, ties to even; ``"round"`` nearest, ties away from zero; ``"floor"``,
      ``"ceil"``, ``"trunc"``; ``"odd"`` (half only) round to odd (Von Neumann);
    - ``"hybrid"`` (hifloat8 only, CAST_HYBRID, a data-driven stochastic rounding): as
      ``"round"`` for magnitudes in [2**-3, 2**4) or >= 40960; elsewhere it rounds up iff
      F >= T, F being the top discarded bits and T bits of the source. A float32 source (Cast
      from float): F = the top 14 discarded bits, T = the 14 low mantissa bits; a float16
      array (Cast from half): F = the top 2 discarded bits, T = 2 * mantissa lsb + 1. This
      follows Huawei's host reference codec (**assumed**); by it, an exact float32 value with
      |e| >= 4 rounds up (F = T = 0).

    Each value is rounded once, from its exact value. Overflow (a result beyond the largest
    finite value) gives +-inf (NaN for fp8_e4m3fn and fp8_e8m0, which have no inf; the largest
    value for fp4 and int4b_t, which have neither), except that a mode rounding toward zero
    gives the largest finite value, as IEEE directed rounding does. ``saturate=True`` (the
    hardware's saturation mode; the Cast page calls it the default, here it is opt-in) turns
    every overflow and +-inf into +-max finite and NaN into code 0. NaN otherwise encodes as the
    type's canonical NaN (``nan_code``; sign kept for half, bfloat16, fp8_e5m2, fp8_e4m3fn).
    Signed zero is kept where the type has -0 (not hifloat8, int4b_t, fp8_e8m0).

    hifloat8 "round" follows the vendor conversion rule: ties away from zero, |x| >= 40960
    overflows, |x| < 2**-23 gives 0 and 2**-23 itself rounds up to 2**-22. int4b_t always
    saturates to [-8, 7] (float-to-int casts saturate on Ascend). fp8_e8m0_t (unsigned powers
    of two) gives NaN 0xFF for negative inputs; ``config.e8m0`` picks what code 0x00 means:
    ``"cast"`` (default, the hardware cast: +0, so tiny values round between 0 and 2**-126) or
    ``"format"`` (the OCP definition: 2**-127, zero has no code and gives NaN, as in
    ml_dtypes), SPEC 11.6.

    >>> ascjax.encode([1.0, 1.0625, -40960.0], "hifloat8_t")  # 0x08, 0x09, 0xEF (-inf)
    Array([  8,   9, 239], dtype=uint8)
    """
    where = "encode"
    f = _codec_format(fmt, where)
    mode = f.round_modes[0] if round_mode is None else round_mode
    if mode not in f.round_modes:
        known = "" if mode in ROUND_MODES else f" (round modes: {', '.join(ROUND_MODES)})"
        raise ValueError(f"{where}: round_mode={mode!r} is not offered by the hardware Cast to "
                         f"{f.name}; valid: {', '.join(f.round_modes)}{known}")
    if not isinstance(saturate, (bool, np.bool_)):
        raise TypeError(f"{where}: saturate must be a Python bool, got {saturate!r}")
    e8m0 = resolve_config(config, where).e8m0
    bits, half_lsb = _input_bits(values, where)
    return _encode_kernel(bits, half_lsb, name=f.name, mode=mode, saturate=bool(saturate),
                          e8m0=e8m0)


# --- decode ---------------------------------------------------------------------------------

@functools.cache
def _decode_table(name: str, e8m0: str) -> np.ndarray:
    """uint32 float32 patterns of every code of an 8- or 4-bit type, by exact integer math."""
    fmt = FORMATS[name]
    if name == "hifloat8_t":
        return hifloat8.decode_table()
    codes = range(1 << fmt.bits)
    if name == "int4b_t":
        values = [c - 16 if c >= 8 else c for c in codes]
        return np.array(values, np.float32).view(np.uint32)
    info = finfo(fmt)
    m, sign_bit = info.nmant, 1 << (fmt.bits - 1) if fmt.sign_bit else 0
    table = np.zeros(1 << fmt.bits, np.uint32)
    for c in codes:
        mag = c & ~sign_bit
        sign = np.uint32(0x80000000 if c & sign_bit else 0)
        field, frac = mag >> m, mag & ((1 << m) - 1)
        if mag == fmt.inf_code:
            bits = 0x7F800000
        elif mag > fmt.max_code:
            bits = 0x7FC00000  # every NaN code decodes to the quiet NaN, sign kept
        else:
            if name == "fp8_e8m0_t" and e8m0 == "format":
                value = np.ldexp(1.0, mag - 127)
            elif field == 0:
                value = np.ldexp(float(frac), info.minexp - m)
            else:
                value = np.ldexp(float((1 << m) + frac), field - fmt.bias - m)
            bits = int(np.float32(value).view(np.uint32))  # exact: every value is a float32
        table[c] = np.uint32(bits) | sign
    return table


@functools.partial(jax.jit, static_argnames=("name", "e8m0"))
def _decode_kernel(bits, *, name: str, e8m0: str):
    fmt = FORMATS[name]
    if fmt.bits == 16:
        carrier = widen16(bits, fmt)
    else:
        codes = (bits & ((1 << fmt.bits) - 1)).astype(jnp.int32)
        carrier = jnp.asarray(_decode_table(name, e8m0))[codes]
    return lax.bitcast_convert_type(carrier, jnp.float32)


def _code_input(bits: Any, fmt: Format, where: str):
    """``bits`` as unsigned codes of ``fmt``'s lane width; concrete codes are range-checked."""
    lane = fmt.bits_dtype
    if isinstance(bits, jax.core.Tracer):
        if bits.dtype == fmt.storage_dtype and bits.dtype != lane:
            return lax.bitcast_convert_type(bits, lane)
        if not jnp.issubdtype(bits.dtype, jnp.integer):
            raise TypeError(f"{where}: bits must be unsigned integer codes, got {bits.dtype}")
        return bits.astype(lane)
    x = np.asarray(bits)
    if x.dtype == fmt.storage_dtype and x.dtype != lane:
        return jnp.asarray(x.view(lane))
    if x.dtype.kind not in "iu":
        raise TypeError(f"{where}: bits must be unsigned integer codes of {fmt.name}, got "
                        f"dtype {x.dtype}")
    if x.size and (x.min() < 0 or x.max() >= 1 << fmt.bits):
        hint = " (one code per element: unpack_nibbles first)" if fmt.packed else ""
        raise ValueError(f"{where}: {fmt.name} codes lie in [0, {(1 << fmt.bits) - 1}], got "
                         f"values in [{x.min()}, {x.max()}]{hint}")
    return jnp.asarray(x.astype(lane))


def decode(bits: Any, fmt: Any, *, config: Config | None = None) -> jax.Array:
    """float32 values of the ``fmt`` bit patterns ``bits`` (exact: every value is a float32).

    ``bits``: unsigned integer codes of any shape (uint8 for 8-bit types and for one 4-bit code
    per element, uint16 for half / bfloat16; other integer dtypes are accepted when in range),
    or an array of ``fmt``'s NumPy storage type (float16, ``ml_dtypes.float8_e4m3fn``, ...),
    read as its bits. Returns float32 of the same shape. NaN codes of 8- and 4-bit types decode
    to the quiet NaN (sign kept); half and bfloat16 NaN payloads are kept. Results below 2**-126
    (fp8_e8m0 2**-127 under ``config.e8m0="format"``) are float32 subnormals: they are returned
    intact, but XLA on CPU flushes them in later float arithmetic. ``config.e8m0``: what code
    0x00 of fp8_e8m0_t means, ``"cast"`` (+0, default) or ``"format"`` (2**-127); see ``encode``.
    Jittable and vmappable.

    >>> ascjax.decode(np.array([0x08, 0x6E, 0x80], np.uint8), "hifloat8_t")
    Array([1.0000e+00, 3.2768e+04,        nan], dtype=float32)
    """
    where = "decode"
    f = _codec_format(fmt, where)
    return _decode_kernel(_code_input(bits, f, where), name=f.name,
                          e8m0=resolve_config(config, where).e8m0)


# --- nibble pairs ---------------------------------------------------------------------------

def _integer_array(x: Any, where: str, arg: str) -> jax.Array:
    x = jnp.asarray(x)
    if not jnp.issubdtype(x.dtype, jnp.integer):
        raise TypeError(f"{where}: {arg} must be integer codes, got dtype {x.dtype}")
    return x


def pack_nibbles(codes: Any) -> jax.Array:
    """Pack 4-bit codes ``(..., 2n)`` into bytes ``(..., n)``: element 2k in the low nibble.

    This is the storage of ``int4b_t`` and ``fp4x2_*`` (SPEC 1). Only the low 4 bits of each
    code are used, so int4 values -8..7 pack as their two's complement.

    >>> ascjax.pack_nibbles(np.array([0x1, 0xF, 0x3, 0x4], np.uint8))
    Array([241,  67], dtype=uint8)
    """
    codes = _integer_array(codes, "pack_nibbles", "codes")
    if codes.ndim == 0 or codes.shape[-1] % 2:
        raise ValueError(f"pack_nibbles: codes need an even last axis, got shape {codes.shape}")
    nibbles = (codes & 0xF).astype(jnp.uint8)
    return nibbles[..., 0::2] | (nibbles[..., 1::2] << 4)


def unpack_nibbles(packed: Any) -> jax.Array:
    """Bytes ``(..., n)`` to 4-bit codes ``(..., 2n)`` (uint8): the low nibble is element 2k."""
    packed = _integer_array(packed, "unpack_nibbles", "packed").astype(jnp.uint8)
    if packed.ndim == 0:
        raise ValueError("unpack_nibbles: packed must have at least one axis")
    pairs = jnp.stack([packed & 0xF, packed >> 4], axis=-1)
    return pairs.reshape(packed.shape[:-1] + (2 * packed.shape[-1],))
