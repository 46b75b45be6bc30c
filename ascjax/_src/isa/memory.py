"""The Unified Buffer and the data-movement calls the seeds' programs need (SPEC 9).

The UB is a uint8 array, byte-addressed; calls take it and return the new one. GM buffers are
arrays of any dtype. Everything here moves bits and never rounds, canonicalizes or flushes.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from ..config import Config, resolve_config
from ..formats import DATABLOCK_BYTES, VL_BYTES, Format, resolve
from ..numerics.bits import from_bits, to_bits
from .lanes import (
    REGISTER_PRODUCTS,
    as_array,
    check_product,
    check_register,
    resolve_dtypes,
    split_last,
    traced_hint,
)
from .masks import element_mask


def to_bytes(x, fmt: Format):
    """Little-endian bytes ``(..., n * width)`` of ``(..., n)`` values, by shifts (no bitcast)."""
    bits = to_bits(x, fmt)
    if fmt.width == 1:
        return bits.astype(jnp.uint8)
    shifts = jnp.arange(fmt.width, dtype=bits.dtype) * 8
    out = (bits[..., None] >> shifts).astype(jnp.uint8)
    return out.reshape(bits.shape[:-1] + (bits.shape[-1] * fmt.width,))


def from_bytes(b, fmt: Format):
    """Values ``(..., n)`` of ``fmt`` from little-endian bytes ``(..., n * width)``."""
    b = jnp.asarray(b, jnp.uint8)
    if fmt.width == 1:
        return from_bits(b, fmt)
    groups = split_last(b, fmt.width).astype(fmt.bits_dtype)
    shifts = jnp.arange(fmt.width, dtype=fmt.bits_dtype) * 8
    bits = groups[..., 0]
    for k in range(1, fmt.width):
        bits = bits | (groups[..., k] << shifts[k])
    return from_bits(bits, fmt)


def make_ub(size: int | None = None, *, config: Config | None = None) -> jax.Array:
    """A zeroed UB of ``size`` bytes (default ``config.ub_bytes``, 256 KiB)."""
    config = resolve_config(config, "make_ub")
    size = config.ub_bytes if size is None else size
    if not (isinstance(size, int) and 0 < size <= config.ub_bytes):
        raise ValueError(f"make_ub: size={size!r} must be an int in [1, {config.ub_bytes}]")
    return jnp.zeros(size, jnp.uint8)


def check_ub(ub: Any, where: str, config: Config | None = None) -> jax.Array:
    """``ub`` as a uint8 array (..., size), size at most ``config.ub_bytes``: every address is
    checked against the array's size, so a larger array would pass addresses the NPU has not."""
    ub = as_array(ub, where=where, arg="ub")
    if ub.dtype != jnp.uint8 or ub.ndim == 0:
        raise TypeError(f"{where}: ub must be a uint8 array (..., size) of UB bytes, got "
                        f"{ub.dtype} {ub.shape}")
    most = resolve_config(config, where).ub_bytes
    if ub.shape[-1] > most:
        raise ValueError(f"{where}: ub holds {ub.shape[-1]} bytes, more than the {most}-byte "
                         f"Unified Buffer (Config.ub_bytes; ascjax.make_ub() makes one)")
    return ub


def check_addr(addr: Any, size: int, ub_bytes: int, align: int, *, where: str, arg: str) -> int:
    """A static UB byte address, aligned, with ``size`` bytes inside the UB."""
    if isinstance(addr, (bool, np.bool_)) or not isinstance(addr, (int, np.integer)):
        raise TypeError(f"{where}: {arg} must be a Python int byte address, got {addr!r}"
                        f"{traced_hint(addr)}")
    addr = int(addr)
    if addr % align:
        raise ValueError(f"{where}: {arg}={addr} is not aligned to {align} bytes")
    if addr < 0 or addr + size > ub_bytes:
        raise ValueError(f"{where}: {arg}={addr} with {size} bytes is outside the UB "
                         f"[0, {ub_bytes})")
    return addr


def loadalign(ub: Any, addr: int, dtype: Any) -> jax.Array:
    """``asc_loadalign(dst, src)``: the ``dtype`` register in the 256 bytes at ``addr``.

    ``addr`` is 32-byte aligned.
    """
    where = "loadalign"
    ub = check_ub(ub, where)
    fmt = resolve(dtype, where=where)
    addr = check_addr(addr, VL_BYTES, ub.shape[-1], DATABLOCK_BYTES, where=where, arg="addr")
    return from_bytes(ub[..., addr:addr + VL_BYTES], fmt)


def storealign(ub: Any, addr: int, src: Any, mask: Any, *, dtype: Any = None,
               config: Config | None = None) -> jax.Array:
    """``asc_storealign(dst, src, mask)``: write the active elements of ``src`` at ``addr``.

    Bytes of masked-off elements keep their UB contents (``config.store_masked="keep"``,
    **assumed**, A4, SPEC 11.4) or are written as 0 (``"zero"``).
    """
    where = "storealign"
    masked = check_product(config, REGISTER_PRODUCTS, where).store_masked
    ub = check_ub(ub, where)
    fmt = resolve_dtypes(src, dtype, where=where, arg="src")
    src = check_register(src, fmt, where=where, arg="src")
    active = element_mask(mask, fmt, where=where)
    addr = check_addr(addr, VL_BYTES, ub.shape[-1], DATABLOCK_BYTES, where=where, arg="addr")
    byte_active = jnp.repeat(active, fmt.width, axis=-1)
    old = ub[..., addr:addr + VL_BYTES] if masked == "keep" else jnp.zeros((), jnp.uint8)
    new = jnp.where(byte_active, to_bytes(src, fmt), old)
    batch = jnp.broadcast_shapes(ub.shape[:-1], new.shape[:-1])
    ub = jnp.broadcast_to(ub, batch + ub.shape[-1:])
    return ub.at[..., addr:addr + VL_BYTES].set(jnp.broadcast_to(new, batch + new.shape[-1:]))


def ub_view(ub: Any, addr: int, dtype: Any) -> jax.Array:
    """The UB from byte ``addr`` to its end as a 1-D array of ``dtype`` (whole elements only).

    This is what an Ascend C ``__ubuf__ T*`` pointer gives an instruction such as ``gather``.
    """
    where = "ub_view"
    ub = check_ub(ub, where)
    fmt = resolve(dtype, where=where)
    addr = check_addr(addr, 0, ub.shape[-1], DATABLOCK_BYTES, where=where, arg="addr")
    count = (ub.shape[-1] - addr) // fmt.width
    return from_bytes(ub[..., addr:addr + count * fmt.width], fmt)


def _gm_bytes(gm: Any, where: str):
    gm = as_array(gm, where=where, arg="gm")
    fmt = resolve(gm.dtype, where=where, arg="gm.dtype")
    return to_bytes(gm if gm.ndim else gm[None], fmt), fmt


def copy_gm2ub_align(ub: Any, addr: int, gm: Any, size: int) -> jax.Array:
    """``asc_copy_gm2ub_align(dst, src, size)``: the first ``size`` bytes of ``gm`` to ``addr``."""
    where = "copy_gm2ub_align"
    ub = check_ub(ub, where)
    data, _ = _gm_bytes(gm, where)
    if not (isinstance(size, int) and 0 <= size <= data.shape[-1]):
        raise ValueError(f"{where}: size={size!r} must be in [0, {data.shape[-1]}] (bytes of gm)")
    addr = check_addr(addr, size, ub.shape[-1], DATABLOCK_BYTES, where=where, arg="addr")
    return ub.at[..., addr:addr + size].set(data[..., :size])


def copy_ub2gm_align(gm: Any, ub: Any, addr: int, size: int) -> jax.Array:
    """``asc_copy_ub2gm_align(dst, src, size)``: ``gm``, its first ``size`` bytes from ``addr``."""
    where = "copy_ub2gm_align"
    ub = check_ub(ub, where)
    gm = as_array(gm, where=where, arg="gm")
    data, fmt = _gm_bytes(gm, where)
    if not (isinstance(size, int) and 0 <= size <= data.shape[-1] and size % fmt.width == 0):
        raise ValueError(f"{where}: size={size!r} must be a multiple of {fmt.width} in "
                         f"[0, {data.shape[-1]}] (bytes of gm)")
    addr = check_addr(addr, size, ub.shape[-1], DATABLOCK_BYTES, where=where, arg="addr")
    data = data.at[..., :size].set(ub[..., addr:addr + size])
    return from_bytes(data, fmt).reshape(gm.shape)


def sync_notify(*_: Any) -> None:
    """``asc_sync_notify``: a no-op in a sequential emulator."""


def sync_wait(*_: Any) -> None:
    """``asc_sync_wait``: a no-op in a sequential emulator."""


def sync(*_: Any) -> None:
    """``asc_sync``: a no-op in a sequential emulator."""
