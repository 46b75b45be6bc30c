"""Register max / min reductions (950), and the ``AscendC::Reg`` reduce class library.

``asc_reduce_max`` / ``asc_reduce_min`` (value and index of the whole register),
``asc_reduce_max_datablock`` / ``asc_reduce_min_datablock`` (the value of each DataBlock), and
``Reg::Reduce<ReduceType>``, ``Reg::ReduceDataBlock<ReduceType>``, ``Reg::PairReduceElem<SUM>``,
which share these kernels with the C API (their sums with ``reduce_register``'s).

Max and min are exact: which lane wins is ``lanes.select_extreme`` (first index on ties,
``max(-0, +0) = +0``, ``min(-0, +0) = -0``, the first NaN wins). What the pages leave open:
the NaN written (A19, ``Config.extreme_nan``) and where the index points when the extreme equals
the value masked lanes are "treated as" (A20, ``Config.masked_extreme``). The class library's
int64/uint64 rows are not emulated (JAX holds no 64-bit integers with x64 off).
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from ..config import Config
from ..formats import Format
from ..numerics.bits import from_bits, quiet_nan_bits, to_bits
from .lanes import (
    check_reduce_type,
    enum_name,
    extreme_first_lane,
    extreme_value,
    extreme_with_index,
    kernel,
    pad_low,
    place_low,
    select_extreme,
)
from .reduce_register import _checked, pair_sums, register_sum

# The prototypes of asc_reduce_max/min(_datablock) and Reg tables 4: dst type = src type.
REDUCE_EXTREME_TYPES = {t: t for t in ("uint16_t", "int16_t", "half", "uint32_t", "int32_t",
                                       "float")}


def _empty(fmt: Format, kind: str):
    """What a max (min) of no active element writes, and what masked lanes are treated as:
    -inf (+inf) for floats, the type's lowest (highest) value for integers, in the key domain
    (bit patterns for floats, values for integers)."""
    if fmt.is_float:
        inf = ((1 << fmt.exponent_bits) - 1) << fmt.mantissa_bits
        return np.asarray(inf | (1 << (fmt.bits - 1)) if kind == "max" else inf, fmt.bits_dtype)
    info = np.iinfo(fmt.storage_dtype)
    return np.asarray(info.min if kind == "max" else info.max, fmt.storage_dtype)


def _select(spec, src, emask):
    """``(value, index, active)`` per block: the extreme (key domain), where it is, the mask."""
    fmt, kind, block, config = spec
    shape = src.shape[:-1] + (fmt.lanes // block, block)
    values = (to_bits(src, fmt) if fmt.is_float else src).reshape(shape)
    active = jnp.broadcast_to(emask, src.shape).reshape(shape)
    considered = active
    if config.masked_extreme == "fill":  # masked lanes hold the empty value and can win ties
        values, considered = jnp.where(active, values, _empty(fmt, kind)), True
    index, any_active, nan = select_extreme(values, considered, fmt, kind)
    value = jnp.take_along_axis(values, index[..., None], axis=-1)[..., 0]
    if fmt.is_float and config.extreme_nan == "canonical":
        value = jnp.where(nan, quiet_nan_bits(fmt), value)
    return jnp.where(any_active, value, _empty(fmt, kind)), index, active


def _forward(spec, src, emask, _):
    fmt, kind, block, config = spec
    defaults = config.masked_extreme != "fill" and config.extreme_nan == "canonical"
    if block == fmt.lanes and defaults and fmt.bits == 16:  # one packed max (4x faster)
        value, index, found = extreme_with_index(src, emask, fmt, kind, block)
        value = jnp.where(found, value if fmt.is_float else from_bits(value, fmt),
                          _empty(fmt, kind))
        low = jnp.concatenate([value, index.astype(value.dtype)], axis=-1)
    elif block == fmt.lanes and defaults:  # the value, then the first lane holding it
        values = to_bits(src, fmt) if fmt.is_float else src
        value, index = extreme_first_lane(values, emask, fmt, kind, _empty(fmt, kind))
        low = jnp.stack([value, index.astype(value.dtype)], axis=-1)
        # placed as bit patterns: placed as float32 the update was 1.7x slower (the same run)
        return from_bits(place_low(low, fmt.lanes), fmt)
    elif block == fmt.lanes:  # the register's value and index
        value, index, _ = _select(spec, src, emask)
        low = jnp.concatenate([value, index.astype(value.dtype)], axis=-1)
    elif config.extreme_nan == "canonical":  # one value per DataBlock: no index needed
        values = to_bits(src, fmt) if fmt.is_float else src
        shape = src.shape[:-1] + (fmt.lanes // block, block)
        active = jnp.broadcast_to(emask, src.shape).reshape(shape)
        low = extreme_value(values.reshape(shape), active, fmt, kind, _empty(fmt, kind))
    else:
        low, _, _ = _select(spec, src, emask)
    return from_bits(pad_low(low, fmt.lanes), fmt) if fmt.is_float else pad_low(low, fmt.lanes)


def _linear(spec, t, emask, src):
    """The cotangent goes to the lane the instruction selected (none when it was masked)."""
    fmt, _, block, _ = spec
    _, index, active = _select(spec, src, emask)
    t = t.reshape(active.shape)
    chosen = jnp.take_along_axis(active, index[..., None], axis=-1)[..., 0]
    low = jnp.where(chosen, jnp.take_along_axis(t, index[..., None], axis=-1)[..., 0],
                    jnp.zeros((), t.dtype))
    if block == fmt.lanes:
        low = jnp.concatenate([low, jnp.zeros_like(low)], axis=-1)  # no gradient for the index
    return pad_low(low, fmt.lanes)


_extreme_kernel = kernel(_forward, _linear)


def _extreme(where: str, kind: str, per_block: bool, src, mask, dtype, config) -> jax.Array:
    adder, src, emask = _checked(where, src, mask, dtype, config, REDUCE_EXTREME_TYPES)
    fmt = adder.src
    spec = (fmt, kind, fmt.per_block if per_block else fmt.lanes, adder.config)
    return _extreme_kernel(spec, src, emask, src)


_EXTREME_DOC = """``asc_reduce_{kind}(dst, src, mask)``: the {word} of the register's active
    elements in lane 0, its index in lane 1.
    Called with ``(src, mask)``: the register ``dst`` is returned, not passed.

    ``src`` is a register ``(..., lanes)`` of half, float, int16/uint16 or int32/uint32;
    ``mask`` hardware form ``(..., 256)`` or per-element ``(..., lanes)``. ``dst[..., 0]`` is
    the {word} (exact; ``{kind}(-0, +0) = {zero}``), ``dst[..., 1]`` the smallest index holding
    it, stored as the dst type's bits (read a half dst's index through ``.view(np.uint16)``);
    every other lane is 0. An active NaN wins: the type's quiet NaN (A19,
    ``config.extreme_nan``) and the first NaN's index. No active element: ``{empty}`` (the
    type's {end} value for integers) and index 0. Masked lanes are "treated as" that value;
    where the index points when the {word} equals it is A20 (``config.masked_extreme``).

    (The page's sentence "结果广播写入dst的所有有效元素" contradicts its own constraints and the
    class-library page, which put the value in lane 0 and the index in lane 1: those are taken,
    A49.)

    Differentiable in ``src``: the cotangent of lane 0 goes to the selected lane.
    """


def asc_reduce_max(src: Any, mask: Any, *, dtype: Any = None,
                   config: Config | None = None) -> jax.Array:
    return _extreme("asc_reduce_max", "max", False, src, mask, dtype, config)


def asc_reduce_min(src: Any, mask: Any, *, dtype: Any = None,
                   config: Config | None = None) -> jax.Array:
    return _extreme("asc_reduce_min", "min", False, src, mask, dtype, config)


asc_reduce_max.__doc__ = _EXTREME_DOC.format(kind="max", word="maximum", zero="+0",
                                             empty="-inf", end="lowest") + """
    >>> import numpy as np, ascjax
    >>> x = np.array([3, 9, 1, 9] + [0] * 60, np.int32)
    >>> ascjax.asc_reduce_max(x, ascjax.create_mask("PAT_VL4", "int32_t"))[:3].tolist()
    [9, 1, 0]
    """
asc_reduce_min.__doc__ = _EXTREME_DOC.format(kind="min", word="minimum", zero="-0",
                                             empty="+inf", end="highest")

_DATABLOCK_DOC = """``asc_reduce_{kind}_datablock(dst, src, mask)``: the {word} of each 32-byte
    DataBlock's active elements, in dst's lowest 8 lanes.
    Called with ``(src, mask)``: the register ``dst`` is returned, not passed.

    Types and masks as ``asc_reduce_{kind}``. ``dst[..., b]`` is block b's {word} (exact;
    ``{kind}(-0, +0) = {zero}``; an active NaN gives the type's NaN, A19); a block with no
    active element gives ``{empty}`` (the type's {end} value for integers). No index is
    written; every other lane is 0. Differentiable: each block's cotangent goes to its selected
    lane.
    """


def reduce_max_datablock(src: Any, mask: Any, *, dtype: Any = None,
                         config: Config | None = None) -> jax.Array:
    return _extreme("reduce_max_datablock", "max", True, src, mask, dtype, config)


def reduce_min_datablock(src: Any, mask: Any, *, dtype: Any = None,
                         config: Config | None = None) -> jax.Array:
    return _extreme("reduce_min_datablock", "min", True, src, mask, dtype, config)


reduce_max_datablock.__doc__ = _DATABLOCK_DOC.format(kind="max", word="maximum", zero="+0",
                                                     empty="-inf", end="lowest")
reduce_min_datablock.__doc__ = _DATABLOCK_DOC.format(kind="min", word="minimum", zero="-0",
                                                     empty="+inf", end="highest")


# --- AscendC::Reg class library --------------------------------------------------------------

def _check_mode(mode: Any, where: str) -> None:
    """MaskMergeMode: the pages support ZEROING only ("MERGING，当前不支持")."""
    if isinstance(mode, str) and mode.rsplit("::", 1)[-1].lower() == "merging":
        raise ValueError(f"{where}: mode={mode!r} (MaskMergeMode::MERGING) is not supported "
                         f"(the page: 当前不支持); only mode='zeroing'")
    enum_name(mode, where, "mode", ("zeroing",), "MaskMergeMode")


def reg_reduce(src: Any, mask: Any, *, reduce_type: str = "sum", mode: str = "zeroing",
               dtype: Any = None, config: Config | None = None) -> jax.Array:
    """``AscendC::Reg::Reduce<reduce_type, T, U, mode>(dstReg, srcReg, mask)``.

    ``reduce_type="sum"`` is ``asc_reduce_sum`` (table 3: half, float, int32, uint32, and
    int16 -> int32, uint16 -> uint32); ``"max"`` / ``"min"`` are ``asc_reduce_max`` /
    ``asc_reduce_min`` (table 4: dst type = src type; value in lane 0, index in lane 1). ``mode``
    is MaskMergeMode: only ``"zeroing"`` (the page: MERGING is not supported).
    """
    kind = check_reduce_type(reduce_type, "reg_reduce")
    _check_mode(mode, "reg_reduce")
    if kind == "sum":
        return register_sum("reg_reduce", src, mask, dtype, config, per_block=False)
    return _extreme("reg_reduce", kind, False, src, mask, dtype, config)


def reg_reduce_data_block(src: Any, mask: Any, *, reduce_type: str = "sum",
                          mode: str = "zeroing", dtype: Any = None,
                          config: Config | None = None) -> jax.Array:
    """``AscendC::Reg::ReduceDataBlock<reduce_type, T, mode>(dstReg, srcReg, mask)``.

    ``reduce_type="sum"`` is ``asc_reduce_sum_datablock`` (table 3, with int16 -> int32 and
    uint16 -> uint32, though the prototype gives dstReg and srcReg one type U: A50);
    ``"max"`` / ``"min"`` are ``asc_reduce_max_datablock`` / ``asc_reduce_min_datablock``
    (table 4). ``mode``: only ``"zeroing"``.
    """
    kind = check_reduce_type(reduce_type, "reg_reduce_data_block")
    _check_mode(mode, "reg_reduce_data_block")
    if kind == "sum":
        return register_sum("reg_reduce_data_block", src, mask, dtype, config, per_block=True)
    return _extreme("reg_reduce_data_block", kind, True, src, mask, dtype, config)


def reg_pair_reduce_elem(src: Any, mask: Any, *, reduce_type: str = "sum",
                         mode: str = "zeroing", dtype: Any = None,
                         config: Config | None = None) -> jax.Array:
    """``AscendC::Reg::PairReduceElem<PairReduce::SUM, T, mode>(dstReg, srcReg, mask)``.

    The register ``asc_pair_reduce_sum``: half or float, ``dst[k] = src[2k] + src[2k+1]`` (a
    masked element as 0), the upper half 0. ``reduce_type``: PairReduce, only ``"sum"``;
    ``mode``: only ``"zeroing"``.
    """
    check_reduce_type(reduce_type, "reg_pair_reduce_elem", ("sum",))
    _check_mode(mode, "reg_pair_reduce_elem")
    return pair_sums("reg_pair_reduce_elem", src, mask, dtype, config)
