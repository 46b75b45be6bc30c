"""GatherMask and asc_reduce, one element at a time, from cpp-memory/GatherMask.md and
c-memory/asc_reduce.md (the readings A39-A41 from ``Config``)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ascjax._src.config import Config

from ._scalar import BLOCK_BYTES, UINT, VL_BYTES, format_name, lane_bytes

_TYPES = {
    "950": {"int8_t", "uint8_t", "int16_t", "uint16_t", "half", "bfloat16_t", "int32_t",
            "uint32_t", "float"},
    "A3": {"int16_t", "uint16_t", "half", "bfloat16_t", "int32_t", "uint32_t", "float"},
    "A2": {"int16_t", "uint16_t", "half", "bfloat16_t", "int32_t", "uint32_t", "float"},
    "200I/500 A2": {"int16_t", "uint16_t", "half", "int32_t", "uint32_t", "float"},
    "inference AI Core": {"int16_t", "uint16_t", "half", "int32_t", "uint32_t", "float"},
}


def _builtin(pattern: int, e: int) -> bool:
    """Bit e of built-in pattern 1..7 (the page's bit strings, element 0 the rightmost)."""
    if pattern == 1:
        return e % 2 == 0
    if pattern == 2:
        return e % 2 == 1
    if pattern == 7:
        return True
    return e % 4 == pattern - 3


def _compact(where, dst, src0, src1, pattern, repeats, per_repeat, total, blk, rep, src1_rep,
             config):
    """The kept elements of the call, written to a copy of dst's bits; (dst, count)."""
    name = format_name(src0, None)
    width = lane_bytes(name)
    bits = width * 8
    epb = BLOCK_BYTES // width
    s = np.asarray(src0).reshape(-1).view(UINT[width])
    out = np.array(np.asarray(dst).reshape(-1).view(UINT[width]))
    words = None if pattern else np.asarray(src1).reshape(-1)
    count = 0
    n = 0                                   # elements of the call processed so far
    for r in range(repeats):
        for e in range(per_repeat):
            if total is not None and n >= total:
                break
            n += 1
            if pattern:
                keep = _builtin(pattern, e)
            else:
                w = r * src1_rep * (BLOCK_BYTES * 8 // bits) + e // bits
                keep = (int(words[w]) >> (e % bits)) & 1 == 1
            if not keep:
                continue
            j = (r * rep + (e // epb) * blk) * epb + e % epb
            if count >= out.size:
                raise IndexError(f"{where}: the gather mask keeps more than the {out.size} "
                                 f"elements dst holds")
            out[count] = s[j]
            count += 1
    if config.gather_mask_tail == "zero_block":
        for k in range(count, min(-(-count // epb) * epb, out.size)):
            out[k] = 0
    return out.view(np.asarray(dst).dtype), count


def gather_mask(dst: Any, src0: Any, src1_pattern: Any, reduce_mode: bool, mask: int,
                gather_mask_params: Any, *, config: Config | None = None):
    """Reference GatherMask for one LocalTensor: ``(dst, rsvd_cnt)``."""
    config = config or Config()
    name = format_name(np.asarray(src0), None)
    if name not in _TYPES.get(config.product, ()):
        raise TypeError(f"gather_mask: {name} on {config.product}")
    lanes = VL_BYTES // lane_bytes(name)
    blk, repeat_times, rep, src1_rep = (int(x) for x in gather_mask_params)
    if isinstance(src1_pattern, (int, np.integer)):
        pattern, src1 = int(src1_pattern), None
    else:
        pattern, src1 = 0, src1_pattern
    total = None
    if not reduce_mode:                                  # Normal: 256 bytes a repeat
        repeats, per_repeat = repeat_times, lanes
    elif config.product == "inference AI Core":          # Counter, 配置方式二: mask in all
        repeats, per_repeat, total = -(-mask // lanes), lanes, mask
    else:                                                # Counter, 配置方式一: mask a repeat
        repeats, per_repeat = repeat_times, mask
    dst, count = _compact("gather_mask", dst, src0, src1, pattern, repeats, per_repeat, total,
                          blk, rep, src1_rep, config)
    return dst, np.uint32(count)


def asc_reduce(dst: Any, src0: Any, src1: Any, *args: int, config: Config | None = None):
    """Reference asc_reduce: first n ``(count)`` or ``(repeat, src0_block_stride,
    pattern_mode, src0_repeat_stride, src1_repeat_stride)``; returns dst."""
    config = config or Config()
    lanes = VL_BYTES // np.asarray(src0).itemsize
    if len(args) == 1:
        if int(args[0]) > lanes and config.gather_mask_counter == "raise":
            raise ValueError("asc_reduce: count above one repeat (A40 read as raise)")
        return _compact("asc_reduce", dst, src0, src1, 0, 1, int(args[0]), None, 1, 0, 0,
                        config)[0]
    repeat, blk, mode, rep, src1_rep = (int(a) for a in args)
    return _compact("asc_reduce", dst, src0, src1, mode, repeat, lanes, None, blk, rep,
                    src1_rep, config)[0]
