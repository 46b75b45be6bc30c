"""The register sums (950, ``__simd_callee__``): a register in, a register out.

``asc_reduce_sum_datablock`` (SPEC 4), ``asc_reduce_sum`` (the whole register) and the register
form of ``asc_pair_reduce_sum`` share one kernel: adjacent-pair trees over blocks of 8 / 16
lanes (a DataBlock), of the whole register, or of 2 lanes. The max / min reductions and the
``AscendC::Reg`` class library (``Reduce``, ``ReduceDataBlock``, ``PairReduceElem``) are in
``reduce_register_minmax.py``. The class library's int64/uint64 rows are not emulated (JAX
holds no 64-bit integers with x64 off).
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any

import jax
import jax.numpy as jnp

from ..config import Config
from ..formats import FORMATS
from ..numerics.bits import from_bits, to_bits
from .lanes import (
    REGISTER_PRODUCTS,
    Adder,
    check_batch,
    check_product,
    check_register,
    check_supported,
    kernel,
    materialize,
    pad_low,
    pair_tree,
    place_low,
    resolve_dtypes,
)
from .masks import element_mask

# src type -> dst type (seed table); 16-bit integers are widened before any add.
REDUCE_SUM_DATABLOCK_TYPES = {
    "int16_t": "int32_t", "uint16_t": "uint32_t", "half": "half",
    "int32_t": "int32_t", "uint32_t": "uint32_t", "float": "float",
}
# asc_reduce_sum's prototypes and Reg::Reduce<SUM>'s table 3 (less int64/uint64): the same rows.
REDUCE_SUM_TYPES = dict(REDUCE_SUM_DATABLOCK_TYPES)
PAIR_REDUCE_SUM_TYPES = {"half": "half", "float": "float"}


def _block_sums(adder: Adder, src, emask, block: int, levels=None):
    """Adjacent-pair sums of each ``block`` lanes of the masked register, as working values.

    A block with no active lane is +0 (the pages: "将0写入", "+0" for floats), also when masked
    lanes enter as -0 (``masked_lanes="skip"``).
    """
    sums = adder.reduce_blocks(src, emask, block, levels=levels)
    if adder.dst.is_float and adder.config.masked_lanes == "skip":
        shape = emask.shape[:-1] + (emask.shape[-1] // block, block)
        sums = jnp.where(jnp.any(emask.reshape(shape), axis=-1), sums, adder.zeros(()))
    return sums


def reduce_sum_datablock(src: Any, mask: Any, *, dtype: Any = None,
                         config: Config | None = None) -> jax.Array:
    """``asc_reduce_sum_datablock(dst, src, mask)``: the sum of each 32-byte DataBlock.
    Called with ``(src, mask)``: the register ``dst`` is returned, not passed.

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
    adder, src, emask = _checked("reduce_sum_datablock", src, mask, dtype, config)
    return _reduce((adder, adder.src.per_block), src, emask)


def asc_reduce_sum(src: Any, mask: Any, *, dtype: Any = None,
                   config: Config | None = None) -> jax.Array:
    """``asc_reduce_sum(dst, src, mask)``: the sum of the register's active elements, in lane 0.
    Called with ``(src, mask)``: the register ``dst`` is returned, not passed.

    ``src`` is a register ``(..., lanes)`` of half, float, int16/uint16 (widened to
    int32/uint32 before any add, and dst is int32/uint32) or int32/uint32; ``mask`` is hardware
    form ``(..., 256)`` or per-element ``(..., lanes)``. The elements (masked ones as +0) are
    summed by a binary tree of adjacent pairs over the whole register, ``(e0+e1)``,
    ``(e2+e3)``, ..., then adjacent pairs of those, each add rounded to the dst type (IEEE RNE,
    subnormals kept). ``dst[..., 0]`` is the sum; every other lane is 0; no active element
    gives 0 (+0 for floats). Integers wrap (or saturate, ``config.int_overflow``).

    Differentiable in ``src`` as the exact sum.

    >>> import numpy as np, ascjax
    >>> x = np.arange(1, 65, dtype=np.int32)
    >>> ascjax.asc_reduce_sum(x, ascjax.create_mask("PAT_VL4", "int32_t"))[:2].tolist()
    [10, 0]
    """
    adder, src, emask = _checked("asc_reduce_sum", src, mask, dtype, config, REDUCE_SUM_TYPES)
    return _reduce((adder, adder.src.lanes), src, emask)


_PAIR_FORM = "asc_pair_reduce_sum(src, mask, *, dtype=None, config=None)"


def asc_pair_reduce_sum(src: Any, mask: Any, *rest: Any, dtype: Any = None,
                        config: Config | None = None, **other: Any) -> jax.Array:
    """``asc_pair_reduce_sum(dst, src, mask)``, the register form: sums of adjacent pairs.

    ``src`` is a half or float register ``(..., lanes)``; ``mask`` hardware form ``(..., 256)``
    or per-element ``(..., lanes)``. ``dst[..., k] = src[2k] + src[2k+1]`` for k < lanes / 2,
    rounded to the type (IEEE RNE), a masked element entering as 0 (a pair with no active
    element gives +0); the upper half of dst is 0. Differentiable as the exact sum.

    The UB-memory form of the same C name takes other arguments; this one raises a TypeError
    naming its own.

    >>> import numpy as np, ascjax
    >>> x = np.arange(64, dtype=np.float32)
    >>> ascjax.asc_pair_reduce_sum(x, ascjax.create_mask("PAT_ALL", "float"))[:3].tolist()
    [1.0, 5.0, 9.0]
    """
    if rest or other:
        got = f"{2 + len(rest)} positional arguments" + (
            f" and keywords {sorted(other)}" if other else "")
        raise TypeError(f"asc_pair_reduce_sum: the register form takes {_PAIR_FORM}; got {got}")
    return pair_sums("asc_pair_reduce_sum", src, mask, dtype, config)


def pair_sums(where: str, src, mask, dtype, config) -> jax.Array:
    """``asc_pair_reduce_sum`` / ``Reg::PairReduceElem<SUM>`` after their checks."""
    adder, src, emask = _checked(where, src, mask, dtype, config, PAIR_REDUCE_SUM_TYPES)
    return _reduce((adder, 2), src, emask)


def register_sum(where: str, src, mask, dtype, config, *, per_block: bool) -> jax.Array:
    """``Reg::Reduce<SUM>`` (``per_block=False``) / ``Reg::ReduceDataBlock<SUM>``."""
    adder, src, emask = _checked(where, src, mask, dtype, config, REDUCE_SUM_TYPES)
    return _reduce((adder, adder.src.per_block if per_block else adder.src.lanes), src, emask)


def reduce_sum_datablock_levels(src: Any, mask: Any, *, dtype: Any = None,
                                config: Config | None = None) -> list[jax.Array]:
    """Every level of ``reduce_sum_datablock``'s trees as the instruction rounds it: dst-typed
    arrays ``(..., 8, n)`` for n = per-block count, its half, ..., 1 (the first being the
    masked, widened input; the last holds the block sums). Arguments as for the instruction.
    """
    adder, src, emask = _checked("reduce_sum_datablock_levels", src, mask, dtype, config)
    return _levels(dataclasses.replace(adder, carriers=True), src, emask)


def _checked(where: str, src, mask, dtype, config, table=REDUCE_SUM_DATABLOCK_TYPES):
    """``(adder, src, per-element mask)`` after the checks: ``table`` maps src -> dst type."""
    config = check_product(config, REGISTER_PRODUCTS, where)
    fmt = resolve_dtypes(src, dtype, where=where, arg="src", accepts=tuple(table))
    check_supported(fmt, table, where=where, arg="src dtype")
    src = check_register(src, fmt, where=where, arg="src")
    emask = element_mask(mask, fmt, where=where)
    check_batch(where, src=src, mask=emask)
    return Adder(fmt, FORMATS[table[fmt.name]], config), src, emask


def _reduce_forward(spec, src, emask):
    adder, block = spec
    sums = adder.store(_block_sums(adder, src, emask, block))
    if block == 2:  # half the lanes: their adds run in the update's loop
        return place_low(sums, adder.dst.lanes)
    # a few sums per register: each tree runs vectorized into a buffer of its own first, and
    # the padding moves bit patterns (a float pad could meet flush-to-zero)
    fmt = adder.dst
    bits = pad_low(materialize(to_bits(sums, fmt) if fmt.is_float else sums), fmt.lanes)
    return from_bits(bits, fmt) if fmt.is_float else bits


def _reduce_linear(spec, t, emask):
    adder, block = spec
    t = jnp.where(emask, t, jnp.zeros((), t.dtype))
    blocks = t.reshape(t.shape[:-1] + (t.shape[-1] // block, block))
    return pad_low(pair_tree(blocks, jnp.add), adder.dst.lanes)


@functools.partial(jax.jit, static_argnums=0)
def _levels(adder: Adder, src, emask):
    levels: list = []
    _block_sums(adder, src, emask, adder.src.per_block, levels)
    return [adder.store(v) for v in levels]


_reduce = kernel(_reduce_forward, _reduce_linear)
