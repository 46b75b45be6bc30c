"""Gatherb, asc_gather_datablock (UB and register forms), Reg::GatherB: the pages' loops, on
bit patterns (whole DataBlocks of bytes are copied)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ascjax._src.config import Config

from ._scalar import BLOCK_BYTES, format_name, lane_bytes

_GATHERB = {"950": ("int8_t", "uint8_t", "int16_t", "uint16_t", "half", "bfloat16_t", "int32_t",
                    "uint32_t", "float"),
            "A3": ("uint16_t", "uint32_t"), "A2": ("uint16_t", "uint32_t")}
_GATHERB["200I/500 A2"] = _GATHERB["950"]
_UB = {"A3": ("uint16_t", "uint32_t"), "A2": ("uint16_t", "uint32_t")}


def _block(src_bytes: np.ndarray, offset: int, where: str, what: str) -> np.ndarray:
    """The 32 bytes at byte ``offset`` of src, after the page's constraints."""
    if offset % BLOCK_BYTES or offset + BLOCK_BYTES > src_bytes.size:
        raise IndexError(f"{where}: {what} holds byte offset {offset}, not a 32-byte aligned "
                         f"DataBlock inside src ({src_bytes.size} bytes)")
    return src_bytes[offset:offset + BLOCK_BYTES]


def _ub_gather(where, dst, src, offset, repeat, blk_stride, rep_stride, table, config):
    config = config or Config()
    dst, src, offset = np.array(dst), np.asarray(src), np.asarray(offset)
    name = format_name(src, None)
    if config.product not in table or name not in table[config.product]:
        raise TypeError(f"{where}: {name} on product {config.product!r} is not supported")
    if repeat == 0:
        if config.empty_move == "raise" and config.product not in ("A2", "A3"):
            raise ValueError(f"{where}: repeat_time 0")
        return dst
    if blk_stride == 0:                  # the page: dstBlkStride 0 is taken as 1
        blk_stride = 1
    src_bytes = src.reshape(-1).view(np.uint8)
    out = dst.reshape(-1).view(np.uint8).copy()
    # The page's pseudo code: for i in range(repeatTime): for j in range(8): ...
    for i in range(repeat):
        for j in range(8):
            block = _block(src_bytes, int(offset[i * 8 + j]), where, f"offset element {i * 8 + j}")
            start = i * BLOCK_BYTES * rep_stride + j * BLOCK_BYTES * blk_stride
            if start + BLOCK_BYTES > out.size:
                raise ValueError(f"{where}: dst too short")
            out[start:start + BLOCK_BYTES] = block
    return out.view(dst.dtype)


def gatherb(dst: Any, src: Any, offset: Any, repeat_time: int, repeat_params: Any, *,
            config: Config | None = None) -> np.ndarray:
    """Reference ``AscendC::Gatherb``: the page's pseudo code on bytes."""
    blk, rep = repeat_params[0], repeat_params[1]
    return _ub_gather("gatherb", dst, src, offset, repeat_time, blk, rep, _GATHERB, config)


def _register(where, src, index, mask, dtype, element, config):
    config = config or Config()
    if config.product != "950":
        raise TypeError(f"{where}: not on product {config.product!r}")
    src, index = np.asarray(src), np.asarray(index)
    name = format_name(src, dtype)
    width = lane_bytes(name)
    lanes = 256 // width
    src_bytes = src.reshape(-1).view(np.uint8)
    out = np.zeros(256, np.uint8)
    if mask is None:
        on = np.ones(lanes, bool)
        blocks = np.ones(8, bool)
    else:
        m = np.asarray(mask, bool)
        # Hardware form: one bit per byte; a per-element mask sets each element's lowest bit.
        hw = m if m.size == 256 else np.repeat(m, width) & np.tile(np.arange(width) == 0, lanes)
        on = hw[::width]                          # element e of T: bit e * width
        blocks = hw[0:32:4]                       # DataBlock k: bit 4k (b32 element k)
    for k in range(8):
        if element:
            lanes_k = on[k * (32 // width):(k + 1) * (32 // width)]
            if not lanes_k.any():
                continue
            block = _block(src_bytes, int(index[k]), where, f"index lane {k}")
            for e, keep in enumerate(lanes_k):
                if keep:
                    out[k * 32 + e * width:k * 32 + (e + 1) * width] = \
                        block[e * width:(e + 1) * width]
        elif blocks[k]:
            out[k * 32:(k + 1) * 32] = _block(src_bytes, int(index[k]), where, f"index lane {k}")
    return out.view(src.dtype)


def gather_datablock(*args: Any, dtype: Any = None, config: Config | None = None) -> np.ndarray:
    """Reference ``asc_gather_datablock``: registers ``(src, index[, mask])`` or UB ``(dst, src,
    src_offset, dst_repeat_stride, dst_block_stride, repeat)``."""
    if len(args) == 6:
        dst, src, offset, rep, blk, repeat = args
        return _ub_gather("gather_datablock", dst, src, offset, repeat, blk, rep, _UB, config)
    src, index, *mask = args
    element = (config or Config()).datablock_mask == "element"
    return _register("gather_datablock", src, index, mask[0] if mask else None, dtype, element,
                     config)


def reg_gather_b(base_addr: Any, index: Any, mask: Any, *, dtype: Any = None,
                 config: Config | None = None) -> np.ndarray:
    """Reference ``Reg::GatherB``: the page's ``gather_b`` (index[:8], offset // 32), masked
    per DataBlock by bits 0, 4, ..., 28."""
    return _register("reg_gather_b", base_addr, index, mask, dtype, False, config)
