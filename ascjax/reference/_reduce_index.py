"""ReduceMax / ReduceMin (vendor pages cpp-memory/ReduceMax.md, ReduceMin.md), as plain loops.

Each active element is visited in index order with its index; the running best is replaced only
by a strictly better element, so ties keep the smallest index (the pages). NaN, signed zeros,
the level-0 index and repeat_time 0 follow ``Config`` (A19, A21, A22, A25, A26). Both return
(dst, ReduceSpr): the value written to dst[0] and the index found go to the max / min
registers (GetReduceRepeatMaxMinSpr; A46, A47).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ascjax._src.config import Config

from ._reduce import _repeat_mask, spr_before
from ._scalar import BLOCK_BYTES, CANONICAL_NAN_BITS, UINT, VL_BYTES, type_name

_FLOATS = (np.float16, np.float32)
_TYPES = {"950": (np.int16, np.uint16, np.float16, np.int32, np.uint32, np.float32),
          "training": (np.float16,)}


def _tmp_size(itemsize: int, first_max_repeat: int, cal_index: bool) -> int:
    """The pages' sharedTmpBuffer minimum, in elements (关键特性说明, line by line)."""
    elements_per_block = 32 // itemsize
    elements_per_repeat = 256 // itemsize

    def round_up(a, b):         # the page's RoundUp / DivCeil: a quotient rounded up
        return (a + b - 1) // b

    iter1_output_count = first_max_repeat * 2
    if not cal_index:
        return round_up(iter1_output_count, elements_per_block) * elements_per_block
    iter2_align_start = round_up(iter1_output_count, elements_per_block) * elements_per_block
    iter2_output_count = round_up(iter1_output_count, elements_per_repeat) * 2
    iter2_align_end = round_up(iter2_output_count, elements_per_block) * elements_per_block
    final = iter2_align_start + iter2_align_end
    if iter2_output_count > 2:
        iter3_align_start = iter2_align_end
        iter3_output_count = round_up(iter2_output_count, elements_per_repeat) * 2
        iter3_align_end = round_up(iter3_output_count, elements_per_block) * elements_per_block
        final = iter2_align_start + iter3_align_start + iter3_align_end
    return final


def _better(a, b, kind: str, zero: str) -> bool:
    """Whether element ``a`` beats ``b`` (neither NaN) for ``kind``."""
    if isinstance(a, _FLOATS):
        ka, kb = float(a), float(b)
        if ka == kb == 0.0 and zero == "ordered":      # -0 < +0 (A22)
            ka, kb = math.copysign(1.0, ka), math.copysign(1.0, kb)
    else:
        ka, kb = int(a), int(b)
    return ka > kb if kind == "max" else ka < kb


def _reduce(kind: str, dst, src, shared_tmp_buffer, args, cal_index, spr, config):
    config = config or Config()
    where = f"reduce_{kind}"
    dst, src = np.array(dst, copy=True), np.asarray(src)
    if src.dtype != dst.dtype or src.dtype.type not in _TYPES.get(config.product, _FLOATS):
        raise TypeError(f"{where}: T {src.dtype} not supported on {config.product}")
    spr = spr_before(spr, src.dtype)
    lanes = VL_BYTES // src.itemsize
    epb = BLOCK_BYTES // src.itemsize
    if len(args) in (2, 4):
        if cal_index is not None:
            raise TypeError(f"{where}: cal_index given twice")
        *args, cal_index = args
    cal_index = bool(cal_index)
    elements = []                       # (index, src offset) of every active element
    if len(args) == 1:
        (count,) = args
        first_max_repeat = max(count // lanes, 1)
        elements = [(i, i) for i in range(count)]
    else:
        mask, repeat_time, src_rep_stride = args
        first_max_repeat = repeat_time
        active = _repeat_mask(mask, lanes, where)
        for r in range(repeat_time):
            for e in range(lanes):
                if active[e]:
                    offset = (r * src_rep_stride + e // epb) * epb + e % epb
                    index = offset if config.reduce_max_index == "offset" else r * lanes + e
                    elements.append((index, offset))
    if not elements:                    # count 0 (Atlas A2/A3) or repeat_time 0: a NOP
        if len(args) == 1 and config.product not in ("A2", "A3"):
            raise ValueError(f"{where}: count 0 is a NOP only on Atlas A2/A3")
        if config.reduce_empty == "raise" and config.product not in ("A2", "A3"):
            raise ValueError(f"{where}: repeat_time 0")
        return dst, spr                 # the registers unchanged too
    if config.product != "950":
        tmp = np.asarray(shared_tmp_buffer)
        if tmp.size < _tmp_size(src.itemsize, first_max_repeat, cal_index):
            raise ValueError(f"{where}: sharedTmpBuffer too small")
    elements.sort(key=lambda iv: iv[0])           # index order (stable)
    nans = [iv for iv in elements if src.dtype.kind == "f" and np.isnan(src[iv[1]])]
    if nans and (config.max_min_nan == "propagate" or len(nans) == len(elements)):
        best = nans[0]                  # the NaN with the smallest index (A21)
    else:
        best = None
        for iv in elements:
            if src.dtype.kind == "f" and np.isnan(src[iv[1]]):
                continue
            if best is None or _better(src[iv[1]], src[best[1]], kind, config.signed_zero):
                best = iv
    index, offset = best
    if cal_index and src.itemsize == 2 and max(i for i, _ in elements) > 65535:
        raise ValueError(f"{where}: a 16-bit index cannot exceed 65535")
    bits = UINT[src.itemsize]
    dst.view(bits)[0] = src.view(bits)[offset]    # moved as bits, NaN payload included
    if best in nans and config.extreme_nan == "canonical":       # A19: the type's quiet NaN
        dst.view(bits)[0] = CANONICAL_NAN_BITS[type_name(src.dtype)]
    if cal_index:
        dst.view(bits)[1] = index
    # The registers: the value as written (its bits), the index found, calIndex or not (A46).
    return dst, spr._replace(value=np.array(dst[0], src.dtype), index=np.uint32(index))


def reduce_max(dst: Any, src: Any, shared_tmp_buffer: Any, *args: Any, cal_index: Any = None,
               spr: Any = None, config: Config | None = None) -> tuple:
    """Reference ``ReduceMax<T>``: ``(count[, cal_index])`` or ``(mask, repeat_time,
    src_rep_stride[, cal_index])``; the max to ``dst[0]``, its index's bits to ``dst[1]``;
    returns (dst, ReduceSpr) with the max and its index in the registers."""
    return _reduce("max", dst, src, shared_tmp_buffer, args, cal_index, spr, config)


def reduce_min(dst: Any, src: Any, shared_tmp_buffer: Any, *args: Any, cal_index: Any = None,
               spr: Any = None, config: Config | None = None) -> tuple:
    """Reference ``ReduceMin<T>``: as ``reduce_max`` for the smallest element."""
    return _reduce("min", dst, src, shared_tmp_buffer, args, cal_index, spr, config)
