"""asc_gather (SPEC 6; every form), Reg::Gather and AscendC::Gather, on bit patterns: plain
loops written from the pages."""

from __future__ import annotations

from typing import Any

import numpy as np

from ascjax._src.config import Config
from ascjax._src.formats import FORMATS

from ._reduce import _repeat_mask
from ._scalar import UINT, VL_BYTES, element_mask, format_name, lane_bytes, type_name
from ._vector_mask import call_rows

# Reg::Gather's table 3 (dst, src) -> index, 64-bit rows left out.
_REG_ROWS = {("int16_t", "int8_t"): "uint16_t", ("int16_t", "int16_t"): "uint16_t",
             ("uint16_t", "uint8_t"): "uint16_t", ("uint16_t", "uint16_t"): "uint16_t",
             ("half", "half"): "uint16_t", ("bfloat16_t", "bfloat16_t"): "uint16_t",
             ("int32_t", "int32_t"): "uint32_t", ("uint32_t", "uint32_t"): "uint32_t",
             ("float", "float"): "uint32_t"}
_B16_B32 = ("int16_t", "uint16_t", "half", "bfloat16_t", "int32_t", "uint32_t", "float")
# Gather page: T per product.
_GATHER_T = {"950": ("int8_t", "uint8_t") + _B16_B32, "A3": _B16_B32, "A2": _B16_B32,
             "200I/500 A2": ("int8_t", "uint8_t", "int16_t", "uint16_t", "half", "int32_t",
                             "uint32_t", "float"),
             "inference AI Core": ("int16_t", "uint16_t", "half", "int32_t", "uint32_t",
                                   "float")}


def _from_ub(src: Any, index: Any, mask: Any, dst_dtype: Any, dtype: Any) -> np.ndarray:
    """Reference ``asc_gather`` for one index register: ``dst[i] = src[index[i]]`` on bits."""
    src = np.asarray(src)
    index = np.asarray(index)
    src_name = format_name(src, dtype)
    dst_name = str(dst_dtype) if dst_dtype is not None else src_name
    src_w, dst_w = lane_bytes(src_name), lane_bytes(dst_name)
    if index.dtype not in (np.uint16, np.uint32) or index.shape != (VL_BYTES // index.itemsize,):
        raise TypeError(f"asc_gather: index must be uint16 (128,) or uint32 (64,), got "
                        f"{index.dtype} {index.shape}")
    index_lanes = index.size
    mask = element_mask(mask, index_lanes, index.itemsize, "asc_gather")
    dst_lanes = VL_BYTES // dst_w
    # b8 -> b16 widening: one dst lane per index lane. Same type narrower than the index: value
    # i goes to dst element 2i, odd elements stay 0.
    step = dst_lanes // index_lanes
    if step not in (1, 2) or (dst_w != src_w and (src_w, dst_w) != (1, 2)):
        raise TypeError(f"asc_gather: unsupported ({dst_name}, {src_name}, {index.dtype})")
    src_bits = src.reshape(-1).view(UINT[src_w])
    dst_bits = np.zeros(dst_lanes, UINT[dst_w])
    for i in range(index_lanes):
        if not mask[i]:
            continue                    # inactive: never range-checked, dst lane 0
        j = int(index[i])
        if j >= src_bits.size:
            raise IndexError(f"asc_gather: active lane {i} reads src element {j}, past its end "
                             f"{src_bits.size}")
        dst_bits[step * i] = src_bits[j]    # unsigned bits: zero extension when widening
    return dst_bits.view(FORMATS[dst_name].storage)


def _from_register(src: Any, index: Any, dtype: Any, config: Config) -> np.ndarray:
    """``asc_gather(dst, src, index)`` on registers: ``dst[i] = src[index[i] % lanes]``."""
    if config.product != "950":
        raise TypeError("asc_gather: the register forms are on the 950 only")
    src = np.asarray(src)
    index = np.asarray(index)
    name = format_name(src, dtype)
    width = lane_bytes(name)
    lanes = VL_BYTES // width
    if index.dtype != UINT[width] or index.shape != (lanes,) or src.shape != (lanes,):
        raise TypeError(f"asc_gather: register form needs ({lanes},) {name} and uint{8 * width} "
                        f"registers, got {src.shape} and {index.dtype} {index.shape}")
    bits = src.view(UINT[width])
    dst = np.zeros(lanes, UINT[width])
    for i in range(lanes):
        dst[i] = bits[int(index[i]) % lanes]    # the page: an index past the register wraps
    return dst.view(src.dtype)


def _byte_gather(where: str, dst: Any, src: Any, src_offset: Any, base: int, args: tuple,
                 types: dict, config: Config, mask_state: Any, c_api: bool) -> np.ndarray:
    """Gather / asc_gather on UB: lane n reads ``src_offset[n]`` bytes past ``base`` of src."""
    dst = np.array(dst, copy=True)
    src = np.asarray(src)
    offsets = np.asarray(src_offset)
    name = type_name(src.dtype)
    if config.product not in types or name not in types[config.product]:
        raise TypeError(f"{where}: {name} is not supported on product {config.product!r}")
    if dst.dtype != src.dtype or offsets.dtype != np.uint32:
        raise TypeError(f"{where}: dst must be {name} and src_offset uint32")
    size = src.itemsize
    if not 0 <= base < 2**32 or base % size:
        raise ValueError(f"{where}: src_base_addr {base} must be a multiple of {size}")
    narrow = config.product in ("950", "200I/500 A2")
    limit = {1: 2**16 - 1, 2: 2**17 - 1}.get(size, 2**32 - 1) if narrow else 2**32 - 1
    nop = config.product in ("A2", "A3")
    lanes_written = []                  # (lane number, src_offset element, dst element)
    if len(args) == 1:
        count = int(args[0])
        if not 0 <= count <= min(dst.size, offsets.size):
            raise ValueError(f"{where}: count {count} out of range")
        lanes_written = [(i, i, i) for i in range(count)]
        empty = count == 0
    else:
        if config.product == "950" and name in ("int8_t", "uint8_t"):
            raise TypeError(f"{where}: {name} takes only the first-n form on the 950")
        if c_api:
            stride, repeat_time = args
            mask, is_set_mask = None, False
        else:
            mask, repeat_time, stride = args
            is_set_mask, mask_state = True, None
        if not 0 <= stride <= 65535:
            raise ValueError(f"{where}: dst repeat stride {stride} out of range")
        # 4 DataBlocks a repeat for 8-bit T on the 950 / 200I/500 A2 (page; A32), else 8.
        blocks = 4 if size == 1 and narrow else 8
        lanes = blocks * 32 // size
        rows = call_rows(mask, repeat_time, lanes, is_set_mask, mask_state, config, where,
                         _repeat_mask)
        epb = 32 // size
        for r, row in enumerate(rows):
            for e in range(lanes):
                if row[e]:
                    target = r * stride * epb + e
                    k = r * lanes + e if config.gather_offsets == "repeat" else target
                    lanes_written.append((r * lanes + e, k, target))
        empty = not rows
    if empty:
        if config.gather_empty == "raise" and not nop:
            raise ValueError(f"{where}: count / repeat 0 rejected (gather_empty='raise')")
        return dst
    src_bits = src.view(UINT[size])
    dst_bits = dst.view(UINT[size])
    for lane, k, target in lanes_written:   # in order: a later repeat's write wins
        if k >= offsets.size or target >= dst.size:
            raise ValueError(f"{where}: lane {lane} touches src_offset[{k}] / dst[{target}] "
                             f"past the end of the LocalTensor")
        off = int(offsets[k])
        if off % size or off > limit or base + off >= src.size * size:
            raise IndexError(f"{where}: active lane {lane} has srcOffset {off} bytes")
        dst_bits[target] = src_bits[(base + off) // size]
    return dst


def asc_gather(*args: Any, dst_dtype: Any = None, dtype: Any = None, mask_state: Any = None,
               config: Config | None = None) -> np.ndarray:
    """Reference ``asc_gather`` in every form, told apart by the number of arguments: (src,
    index, mask) from the UB, (src, index) between registers, (dst, src, src_offset, count) and
    (dst, src, src_offset, dst_repeat_stride, repeat) UB -> UB (A2 / A3)."""
    config = config or Config()
    if len(args) == 3:
        return _from_ub(*args, dst_dtype, dtype)
    if len(args) == 2:
        return _from_register(*args, dtype, config)
    dst, src, src_offset, *rest = args
    return _byte_gather("asc_gather", dst, src, src_offset, 0, tuple(rest),
                        {p: _B16_B32 for p in ("A2", "A3")}, config, mask_state, True)


def gather(dst: Any, src: Any, src_offset: Any, *args: Any,
           config: Config | None = None) -> np.ndarray:
    """Reference ``AscendC::Gather``: ``dst[i] = src[(srcBaseAddr + srcOffset[i]) / sizeof(T)]``
    (the page's pseudo-code), first-n or mask/repeat form."""
    config = config or Config()
    base, *rest = args
    return _byte_gather("gather", dst, src, src_offset, int(base), tuple(rest), _GATHER_T,
                        config, None, False)


def reg_gather(base_addr: Any, index: Any, mask: Any, *, dst_dtype: Any = None,
               dtype: Any = None, config: Config | None = None) -> np.ndarray:
    """Reference ``Reg::Gather``: the seed gather over Reg::Gather's table 3."""
    config = config or Config()
    if config.product != "950":
        raise TypeError("reg_gather: 950 only")
    src_name = format_name(np.asarray(base_addr), dtype)
    index_name = type_name(np.asarray(index).dtype)
    # no dst_dtype: the table's one dst type for src and index (int8 -> int16_t), else src's
    dsts = [d for (d, s), i in _REG_ROWS.items() if (s, i) == (src_name, index_name)]
    dst_name = str(dst_dtype) if dst_dtype is not None else (
        dsts[0] if len(dsts) == 1 else src_name)
    dst_dtype = dst_name
    if _REG_ROWS.get((dst_name, src_name)) != index_name:
        raise TypeError(f"reg_gather: ({dst_name}, {src_name}, {np.asarray(index).dtype}) is "
                        f"not in Reg::Gather's table")
    return _from_ub(base_addr, index, mask, dst_dtype, dtype)
