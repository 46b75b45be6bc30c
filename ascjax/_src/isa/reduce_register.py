"""``asc_reduce_sum_datablock`` (SPEC 4): a register in, a register out."""

from __future__ import annotations

import functools
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from ..config import Config, resolve_config
from ..formats import BLOCKS_PER_REGISTER, FORMATS
from .lanes import (
    Adder,
    check_register,
    check_supported,
    kernel,
    materialize,
    pair_tree,
    resolve_dtypes,
)
from .masks import element_mask

# src type -> dst type (seed table); 16-bit integers are widened before any add.
REDUCE_SUM_DATABLOCK_TYPES = {
    "int16_t": "int32_t", "uint16_t": "uint32_t", "half": "half",
    "int32_t": "int32_t", "uint32_t": "uint32_t", "float": "float",
}


def _block_sums(adder: Adder, src, emask, levels=None):
    """Per-DataBlock adjacent-pair sums of the masked register, as ``adder`` working values."""
    sums = adder.reduce_blocks(src, emask, adder.src.per_block, levels=levels)
    if adder.dst.is_float and adder.config.masked_lanes == "skip":  # an empty block is +0
        shape = emask.shape[:-1] + (BLOCKS_PER_REGISTER, adder.src.per_block)
        sums = jnp.where(jnp.any(emask.reshape(shape), axis=-1), sums, adder.zeros(()))
    return sums


def _place_low(values, lanes: int):
    """Registers whose lowest lanes hold ``values`` (..., k) and whose other lanes are 0.

    The padding moves bit patterns (a float pad could meet flush-to-zero).
    """
    unsigned = np.dtype(f"uint{values.dtype.itemsize * 8}")
    bits = materialize(lax.bitcast_convert_type(values, unsigned)
                       if jnp.issubdtype(values.dtype, jnp.floating) else values)
    out = _pad_low(bits, lanes)
    return lax.bitcast_convert_type(out, values.dtype) if out.dtype != values.dtype else out


def _pad_low(values, lanes: int):
    return jnp.pad(values, [(0, 0)] * (values.ndim - 1) + [(0, lanes - values.shape[-1])])


def reduce_sum_datablock(src: Any, mask: Any, *, dtype: Any = None,
                         config: Config | None = None) -> jax.Array:
    """``asc_reduce_sum_datablock(dst, src, mask)``: the sum of each 32-byte DataBlock.

    ``src`` is a register ``(..., lanes)`` of half, float, int16/uint16 (widened to 32 bits
    before any add) or int32/uint32; ``mask`` is hardware form ``(..., 256)`` or per-element
    ``(..., lanes)``. For each block b of 8, its elements (masked ones as +0) are summed by a
    tree of adjacent pairs, ``((e0+e1)+(e2+e3))+...``, each add rounded to the dst type (IEEE
    RNE, subnormals kept). ``dst[..., b]`` is block b's sum; every other lane is 0. Integers wrap
    (or saturate, ``config.int_overflow``). Leading axes are independent registers.

    Differentiable in ``src``: the derivative is that of the exact sum (rounding passes
    gradients straight through). ``reduce_sum_datablock_levels`` gives every level of the tree.

    >>> import numpy as np, ascjax
    >>> x = np.arange(1, 65, dtype=np.uint32)
    >>> ascjax.reduce_sum_datablock(x, ascjax.create_mask("PAT_ALL", "uint32_t"))[:8].tolist()
    [36, 100, 164, 228, 292, 356, 420, 484]
    """
    return _reduce(*_checked("reduce_sum_datablock", src, mask, dtype, config))


def reduce_sum_datablock_levels(src: Any, mask: Any, *, dtype: Any = None,
                                config: Config | None = None) -> list[jax.Array]:
    """Every level of ``reduce_sum_datablock``'s trees as the instruction rounds it: dst-typed
    arrays ``(..., 8, n)`` for n = per-block count, its half, ..., 1 (the first being the
    masked, widened input; the last holds the block sums). Arguments as for the instruction.
    """
    return _levels(*_checked("reduce_sum_datablock_levels", src, mask, dtype, config))


def _checked(where: str, src, mask, dtype, config):
    """``(adder, src, per-element mask)`` after the checks of ``reduce_sum_datablock``."""
    config = resolve_config(config)
    fmt = resolve_dtypes(src, dtype, where=where, arg="src")
    check_supported(fmt, REDUCE_SUM_DATABLOCK_TYPES, where=where, arg="src dtype")
    src = check_register(src, fmt, where=where, arg="src")
    emask = element_mask(mask, fmt, where=where)
    dst_fmt = FORMATS[REDUCE_SUM_DATABLOCK_TYPES[fmt.name]]
    return Adder(fmt, dst_fmt, config), src, emask


def _reduce_forward(adder: Adder, src, emask):
    return _place_low(adder.store(_block_sums(adder, src, emask)), adder.dst.lanes)


def _reduce_linear(adder: Adder, t, emask):
    t = jnp.where(emask, t, jnp.zeros((), t.dtype))
    blocks = t.reshape(t.shape[:-1] + (BLOCKS_PER_REGISTER, adder.src.per_block))
    return _pad_low(pair_tree(blocks, jnp.add), adder.dst.lanes)


@functools.partial(jax.jit, static_argnums=0)
def _levels(adder: Adder, src, emask):
    levels: list = []
    _block_sums(adder, src, emask, levels)
    return [adder.store(v) for v in levels]


_reduce = kernel(_reduce_forward, _reduce_linear)
