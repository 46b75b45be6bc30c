"""``asc_gather`` from the UB (SPEC 6): data movement, so every bit is kept."""

from __future__ import annotations

from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from ..config import Config, resolve_config
from ..formats import Format, resolve
from ..numerics.bits import from_bits, to_bits
from .lanes import check_register, kernel, resolve_dtypes, runtime_check
from .masks import element_mask

# (dst, src, index) rows of the seed's table 1.
GATHER_TYPES = (
    ("int16_t", "int8_t", "uint16_t"), ("int8_t", "int8_t", "uint16_t"),
    ("uint16_t", "uint8_t", "uint16_t"), ("uint8_t", "uint8_t", "uint16_t"),
    ("hifloat8_t", "hifloat8_t", "uint16_t"), ("fp8_e8m0_t", "fp8_e8m0_t", "uint16_t"),
    ("fp8_e5m2_t", "fp8_e5m2_t", "uint16_t"), ("fp8_e4m3fn_t", "fp8_e4m3fn_t", "uint16_t"),
    ("int16_t", "int16_t", "uint16_t"), ("int16_t", "int16_t", "uint32_t"),
    ("uint16_t", "uint16_t", "uint16_t"), ("uint16_t", "uint16_t", "uint32_t"),
    ("half", "half", "uint16_t"), ("half", "half", "uint32_t"),
    ("bfloat16_t", "bfloat16_t", "uint16_t"), ("bfloat16_t", "bfloat16_t", "uint32_t"),
    ("int32_t", "int32_t", "uint32_t"), ("uint32_t", "uint32_t", "uint32_t"),
    ("float", "float", "uint32_t"),
)


def _check_combination(dst: Format, src: Format, index: Format, where: str) -> None:
    if (dst.name, src.name, index.name) not in GATHER_TYPES:
        rows = "\n  ".join(f"dst={d}, src={s}, index={i}" for d, s, i in GATHER_TYPES)
        raise TypeError(f"{where}: (dst={dst.name}, src={src.name}, index={index.name}) is not a "
                        f"supported combination; supported (seed table 1):\n  {rows}")


def _check_range(index, active, n_src: int, mode: str, where: str):
    """Raise when an active lane reads at or past the end of src (eagerly, or as ``mode`` says).

    The max of all indices settles the usual case alone; only when it is out of range does the
    max over the active ones run (a masked reduction costs 8x a plain one on XLA's CPU backend).
    """
    if mode == "ignore":
        return
    zero = np.zeros((), index.dtype)  # reduced in the index's own type: a widening copies

    def active_top():
        return jnp.max(jnp.where(active, index, zero), initial=zero).astype(jnp.uint32)

    top = jnp.max(index, initial=zero).astype(jnp.uint32)
    if isinstance(top, jax.core.Tracer):
        top = lax.cond(top >= np.uint32(n_src), active_top, lambda: top)
    elif int(top) >= n_src:  # eagerly a Python branch: an eager cond copies its operands
        top = active_top()
    runtime_check(top >= np.uint32(n_src), lambda w: f"{where}: an active index lane reads "
                  f"element {w} but src has {n_src} elements (the hardware raises an address "
                  f"exception)", top, mode=mode)


class _Spec(NamedTuple):
    src: Format
    dst: Format
    index: Format


def _place(spec: _Spec, values):
    """Gathered values (..., index lanes) as a dst register."""
    if spec.dst.width > spec.src.width:  # b8 -> b16: zero-extend the source byte
        return values.astype(spec.dst.bits_dtype)
    if spec.src.width < spec.index.width:  # value i to element 2i, odd elements 0
        values = jnp.stack([values, jnp.zeros_like(values)], axis=-1)
        return values.reshape(values.shape[:-2] + (spec.dst.lanes,))
    return values


def _take(data, index, active):
    """``data[index]`` on active lanes that lie inside ``data``, else 0."""
    take = active & (index.astype(jnp.uint32) < np.uint32(data.shape[0]))
    return jnp.where(take, data[jnp.where(take, index, 0).astype(jnp.int32)],
                     jnp.zeros((), data.dtype))


def _forward(spec: _Spec, src, index, active):
    values = _take(to_bits(src, spec.src), index, active)
    return from_bits(_place(spec, values), spec.dst)


def _linear(spec: _Spec, t, index, active):
    return _place(spec, _take(t, index, active))


_gather = kernel(_forward, _linear, num_diff=1)


def gather(src: Any, index: Any, mask: Any, *, dst_dtype: Any = None, dtype: Any = None,
           config: Config | None = None) -> jax.Array:
    """``asc_gather(dst, src, index, mask)``: ``dst[i] = src[index[i]]`` on active lanes, else 0.

    ``src`` is a 1-D array holding the UB contents from the (32-byte aligned) source address
    onward, in the source type; name the type with ``dtype=`` when its storage is ambiguous
    (``"hifloat8_t"`` is stored as uint8). ``index`` is a uint16 ``(..., 128)`` or uint32
    ``(..., 64)`` register of element offsets; ``mask`` is read per index lane (hardware form
    ``(..., 256)`` or ``(..., index lanes)``). ``dst_dtype`` picks the destination type when the
    seed's table offers several (``"int16_t"`` from int8 src: zero extension, -40 -> 216).
    When the data is narrower than the index (b8 data, uint16 index; b16 data, uint32 index)
    value i goes to dst element 2i and odd elements are 0. Bits are moved unchanged (NaN
    payloads, -0, subnormals). (Ascend C offers the two widening rows only in the reference-
    output form; a functional port returns dst either way.)

    An active lane at or past the end of ``src`` raises ``IndexError``; under ``jit`` see
    ``Config.out_of_range``. Inactive lanes are never checked. Differentiable in ``src``
    (floating types): the cotangent of dst lane i is added to ``src[index[i]]``.
    """
    where = "gather"
    config = resolve_config(config)
    src = jnp.asarray(src)
    if src.ndim != 1:
        raise ValueError(f"{where}: src must be 1-D (the UB from the source address on), got "
                         f"shape {src.shape}")
    src_fmt = resolve_dtypes(src, dtype, where=where, arg="src")
    index = jnp.asarray(index)
    idx_fmt = resolve(index.dtype, where=where, arg="index.dtype")
    dst_fmt = src_fmt if dst_dtype is None else resolve(dst_dtype, where=where, arg="dst_dtype")
    _check_combination(dst_fmt, src_fmt, idx_fmt, where)
    index = check_register(index, idx_fmt, where=where, arg="index")
    active = element_mask(mask, idx_fmt, where=where)
    _check_range(index, active, src.shape[0], config.out_of_range, where)
    return _gather(_Spec(src_fmt, dst_fmt, idx_fmt), src, index, active)

