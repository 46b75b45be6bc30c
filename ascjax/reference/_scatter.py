"""AscendC::Scatter: one element at a time, in processing order, on bit patterns."""

from __future__ import annotations

from typing import Any

import numpy as np

from ascjax._src.config import Config

from ._scalar import BLOCK_BYTES, UINT, format_name, lane_bytes

_ALL = ("int8_t", "uint8_t", "int16_t", "uint16_t", "half", "bfloat16_t", "int32_t", "uint32_t",
        "float")
_TYPES = {"950": _ALL, "200I/500 A2": tuple(t for t in _ALL if t != "bfloat16_t"),
          "inference AI Core": ("uint16_t", "half", "uint32_t", "float")}


def _mask_bits(mask, lanes: int) -> np.ndarray:
    if isinstance(mask, (int, np.integer)):
        return np.arange(lanes) < int(mask)
    words = list(mask)[: max(lanes // 64, 1)]
    return np.array([(int(words[e // 64]) >> (e % 64)) & 1 for e in range(lanes)], bool)


def scatter(dst: Any, src: Any, dst_offset: Any, dst_base_addr: int, *args: Any,
            config: Config | None = None) -> np.ndarray:
    """Reference ``AscendC::Scatter``: ``dst[(base + dstOffset[i]) / sizeof(T)] = src[i]``."""
    config = config or Config()
    src, offset = np.asarray(src), np.asarray(dst_offset)
    name = format_name(src, None)
    if config.product not in _TYPES or name not in _TYPES[config.product]:
        raise TypeError(f"scatter: {name} on product {config.product!r} is not supported")
    w = lane_bytes(name)
    out = np.array(dst).reshape(-1).view(UINT[w]).copy()
    bits = src.reshape(-1).view(UINT[w])
    if len(args) == 1:
        pairs = [(i, i) for i in range(args[0])]
        empty = args[0] == 0
    else:
        mask, repeats, rep = args
        lanes = 128 if w == 1 else 256 // w       # an 8-bit repeat covers 4 DataBlocks
        on = _mask_bits(mask, lanes)
        epb = BLOCK_BYTES // w
        pairs = [(r * rep * epb + e, r * lanes + e if config.scatter_offset == "repeat"
                  else r * rep * epb + e)
                 for r in range(repeats) for e in range(lanes) if on[e]]
        empty = repeats == 0
    if empty and config.empty_move == "raise":
        raise ValueError("scatter: count / repeat_time 0")
    if w == 1 or config.product == "inference AI Core":
        top = 2**16 - 1 if (w == 1 and config.product != "inference AI Core") else 2**32 - 1
    else:
        top = 2**17 - 1 if w == 2 else 2**32 - 1
    written = set()
    for s, o in pairs:
        off = int(offset[o])
        target = dst_base_addr + off
        if off % w or off > top or target + w > out.size * w:
            raise IndexError(f"scatter: element {o} holds byte offset {off}")
        k = target // w
        if config.scatter_duplicates == "first" and k in written:
            continue                        # the first element at an offset stays
        written.add(k)
        out[k] = bits[s]
    return out.view(np.asarray(dst).dtype)
