"""The register reductions of the 950 (c-reg pages asc_reduce_sum / max / min and their
DataBlock forms, asc_pair_reduce_sum; cpp-reg pages Reduce, ReduceDataBlock, PairReduceElem):
one register at a time, plain loops over lanes."""

from __future__ import annotations

from typing import Any

import numpy as np

from ascjax._src.config import Config

from ._reduce import _masked_value, _tree, reduce_sum_datablock
from ._scalar import BLOCK_BYTES, CANONICAL_NAN_BITS, UINT, VL_BYTES, add, element_mask, type_name

_SUM = {np.dtype(np.int16): np.dtype(np.int32), np.dtype(np.uint16): np.dtype(np.uint32)}
_SUM_TYPES = (np.int16, np.uint16, np.float16, np.int32, np.uint32, np.float32)
_EXTREME_TYPES = (np.uint16, np.int16, np.float16, np.uint32, np.int32, np.float32)


def _register(src, mask, where: str, types) -> tuple[np.ndarray, np.ndarray]:
    src = np.asarray(src)
    if src.dtype not in [np.dtype(t) for t in types]:
        raise TypeError(f"{where}: unsupported src dtype {src.dtype}")
    lanes = VL_BYTES // src.itemsize
    if src.shape != (lanes,):
        raise ValueError(f"{where}: src must be ({lanes},), got {src.shape}")
    return src, element_mask(mask, lanes, src.itemsize, where)


def _masked_sum(src, mask, lo: int, hi: int, dst_dtype, config: Config):
    """Adjacent-pair tree of src[lo:hi] (masked lanes as 0), each add rounded to dst; a range
    with no active lane is 0 (+0 for floats) whatever a masked lane enters as."""
    values = [dst_dtype.type(src[i]) if mask[i] else _masked_value(dst_dtype, config)
              for i in range(lo, hi)]
    total = _tree(values, lambda a, b: add(a, b, dst_dtype, config))
    return total if any(mask[lo:hi]) else dst_dtype.type(0)


# ---------------------------------------------------------------- sums

def asc_reduce_sum(src: Any, mask: Any, *, config: Config | None = None) -> np.ndarray:
    """Reference ``asc_reduce_sum``: dst[0] = the adjacent-pair tree sum of the register."""
    config = config or Config()
    src, mask = _register(src, mask, "asc_reduce_sum", _SUM_TYPES)
    dst_dtype = _SUM.get(src.dtype, src.dtype)
    dst = np.zeros(VL_BYTES // dst_dtype.itemsize, dst_dtype)
    dst[0] = _masked_sum(src, mask, 0, len(src), dst_dtype, config)
    return dst


def asc_pair_reduce_sum(src: Any, mask: Any, *rest: Any,
                        config: Config | None = None) -> np.ndarray:
    """Reference register ``asc_pair_reduce_sum``: dst[k] = src[2k] + src[2k+1], upper half 0."""
    if rest:
        raise TypeError("asc_pair_reduce_sum: the register form takes (src, mask)")
    config = config or Config()
    src, mask = _register(src, mask, "asc_pair_reduce_sum", (np.float16, np.float32))
    dst = np.zeros_like(src)
    for k in range(len(src) // 2):
        dst[k] = _masked_sum(src, mask, 2 * k, 2 * k + 2, src.dtype, config)
    return dst


# ---------------------------------------------------------------- max / min

def _empty_value(dtype: np.dtype, kind: str):
    """What masked lanes are treated as, and what no active lane gives: -inf / +inf, or the
    integer type's lowest / highest value."""
    if dtype.kind == "f":
        return dtype.type(-np.inf if kind == "max" else np.inf)
    info = np.iinfo(dtype)
    return dtype.type(info.min if kind == "max" else info.max)


def _beats(v, best, kind: str) -> bool:
    """v strictly better than best (ties keep the earlier lane); max(-0, +0) = +0."""
    if v == best:
        if v == 0 and np.issubdtype(type(v), np.floating):
            return bool(np.signbit(best) and not np.signbit(v)) if kind == "max" else bool(
                np.signbit(v) and not np.signbit(best))
        return False
    return bool(v > best) if kind == "max" else bool(v < best)


def _extreme(src, mask, lo: int, hi: int, kind: str, config: Config):
    """(bits of the value, index within [lo, hi)) of the max / min of the active lanes."""
    utype = UINT[src.itemsize]
    bits = src.view(utype)
    empty = _empty_value(src.dtype, kind)
    best, index = None, 0
    for i in range(lo, hi):
        v, active = src[i], bool(mask[i])
        if not active and config.masked_extreme == "fill":
            v, active = empty, True           # a masked lane holds the empty value
        if not active:
            continue
        if src.dtype.kind == "f" and np.isnan(v):   # the first NaN wins
            if config.extreme_nan == "canonical":
                return utype(CANONICAL_NAN_BITS[type_name(src.dtype)]), i - lo
            return bits[i], i - lo
        if best is None or _beats(v, best, kind):
            best, index = v, i - lo
    if best is None:
        best = empty
    return np.array(best, src.dtype).view(utype)[()], index


def _whole(where: str, kind: str, src, mask, config):
    config = config or Config()
    src, mask = _register(src, mask, where, _EXTREME_TYPES)
    value, index = _extreme(src, mask, 0, len(src), kind, config)
    dst = np.zeros(len(src), UINT[src.itemsize])
    dst[0], dst[1] = value, index      # the index is stored as the dst type's bits
    return dst.view(src.dtype)


def _per_block(where: str, kind: str, src, mask, config):
    config = config or Config()
    src, mask = _register(src, mask, where, _EXTREME_TYPES)
    per = BLOCK_BYTES // src.itemsize
    dst = np.zeros(len(src), UINT[src.itemsize])
    for b in range(VL_BYTES // BLOCK_BYTES):
        dst[b] = _extreme(src, mask, b * per, (b + 1) * per, kind, config)[0]
    return dst.view(src.dtype)


def asc_reduce_max(src: Any, mask: Any, *, config: Config | None = None) -> np.ndarray:
    """Reference ``asc_reduce_max``: dst[0] the max, dst[1] its first index, others 0."""
    return _whole("asc_reduce_max", "max", src, mask, config)


def asc_reduce_min(src: Any, mask: Any, *, config: Config | None = None) -> np.ndarray:
    """Reference ``asc_reduce_min``: dst[0] the min, dst[1] its first index, others 0."""
    return _whole("asc_reduce_min", "min", src, mask, config)


def reduce_max_datablock(src: Any, mask: Any, *, config: Config | None = None) -> np.ndarray:
    """Reference ``asc_reduce_max_datablock``: dst[b] the max of DataBlock b, others 0."""
    return _per_block("reduce_max_datablock", "max", src, mask, config)


def reduce_min_datablock(src: Any, mask: Any, *, config: Config | None = None) -> np.ndarray:
    """Reference ``asc_reduce_min_datablock``: dst[b] the min of DataBlock b, others 0."""
    return _per_block("reduce_min_datablock", "min", src, mask, config)


# ---------------------------------------------------------------- AscendC::Reg

def _mode(mode: str, where: str) -> None:
    if mode != "zeroing":
        raise ValueError(f"{where}: only mode='zeroing' is supported, got {mode!r}")


def reg_reduce(src: Any, mask: Any, *, reduce_type: str = "sum", mode: str = "zeroing",
               config: Config | None = None) -> np.ndarray:
    """Reference ``Reg::Reduce<reduce_type>``: the whole-register sum, or max / min + index."""
    _mode(mode, "reg_reduce")
    if reduce_type == "sum":
        return asc_reduce_sum(src, mask, config=config)
    return _whole("reg_reduce", reduce_type, src, mask, config)


def reg_reduce_data_block(src: Any, mask: Any, *, reduce_type: str = "sum",
                          mode: str = "zeroing", config: Config | None = None) -> np.ndarray:
    """Reference ``Reg::ReduceDataBlock<reduce_type>``: per-DataBlock sum, max or min."""
    _mode(mode, "reg_reduce_data_block")
    if reduce_type == "sum":
        return reduce_sum_datablock(src, mask, config=config)
    return _per_block("reg_reduce_data_block", reduce_type, src, mask, config)


def reg_pair_reduce_elem(src: Any, mask: Any, *, reduce_type: str = "sum",
                         mode: str = "zeroing", config: Config | None = None) -> np.ndarray:
    """Reference ``Reg::PairReduceElem<PairReduce::SUM>``."""
    _mode(mode, "reg_pair_reduce_elem")
    if reduce_type != "sum":
        raise ValueError(f"reg_pair_reduce_elem: reduce_type must be 'sum', got {reduce_type!r}")
    return asc_pair_reduce_sum(src, mask, config=config)
