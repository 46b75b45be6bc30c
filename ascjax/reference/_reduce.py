"""asc_reduce_sum_datablock (SPEC 4), PairReduceSum (SPEC 5) and the reduce family (SPEC 10)."""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from ascjax._src.config import Config

from ._orders import sum_sequential
from ._scalar import BLOCK_BYTES, VL_BYTES, add, element_mask
from ._vector_mask import call_rows


def _masked_value(dtype: np.dtype, config: Config):
    """What a masked-off lane enters a sum as: +0 (SPEC 3), or -0 under ``masked_lanes="skip"``.

    -0 is the exact identity of IEEE addition, Config's reading of "takes no part". The adds
    still happen, so a lone active NaN still comes out canonical and a lone inf still saturates.
    """
    if dtype.kind == "f" and config.masked_lanes == "skip":
        return dtype.type(-0.0)
    return dtype.type(0)


class ReduceSpr(NamedTuple):
    """The registers: the sum (dst's type), the max / min (T) and its index (uint32)."""

    sum: Any
    value: Any
    index: Any


def _reset(dtype, sum_dtype=None) -> ReduceSpr:
    return ReduceSpr(np.zeros((), sum_dtype or dtype), np.zeros((), dtype), np.uint32(0))


def spr_before(spr, dtype, sum_dtype=None) -> ReduceSpr:
    """The registers a call starts from: ``spr`` with each field as its type, or reset (None)."""
    if spr is None:
        return _reset(dtype, sum_dtype)
    total, value, index = spr
    return ReduceSpr(np.asarray(total, sum_dtype or dtype), np.asarray(value, dtype),
                     np.uint32(np.asarray(index, np.uint32)))


def _tree(values: list, add_) -> Any:
    """Adjacent-pair tree over a power-of-two list: (v0+v1), (v2+v3), ..., then their pairs."""
    while len(values) > 1:
        values = [add_(values[j], values[j + 1]) for j in range(0, len(values), 2)]
    return values[0]


# ---------------------------------------------------------------- asc_reduce_sum_datablock (SPEC 4)

def reduce_sum_datablock(src: Any, mask: Any, *, config: Config | None = None) -> np.ndarray:
    """Reference ``asc_reduce_sum_datablock`` for one register, as the seed's pseudo-code."""
    config = config or Config()
    src = np.asarray(src)
    if src.dtype not in (np.int16, np.uint16, np.float16, np.int32, np.uint32, np.float32):
        raise TypeError(f"reduce_sum_datablock: unsupported src dtype {src.dtype}")
    lanes = VL_BYTES // src.itemsize
    if src.shape != (lanes,):
        raise ValueError(f"reduce_sum_datablock: src must be ({lanes},), got {src.shape}")
    mask = element_mask(mask, lanes, src.itemsize, "reduce_sum_datablock")
    # int16 / uint16 are widened to 32 bits before any add.
    dst_dtype = {np.dtype(np.int16): np.dtype(np.int32),
                 np.dtype(np.uint16): np.dtype(np.uint32)}.get(src.dtype, src.dtype)
    elems_per_block = BLOCK_BYTES // src.itemsize
    dst = np.zeros(VL_BYTES // dst_dtype.itemsize, dst_dtype)     # other lanes are 0
    for b in range(VL_BYTES // BLOCK_BYTES):
        values = []
        for j in range(elems_per_block):
            i = b * elems_per_block + j
            values.append(dst_dtype.type(src[i]) if mask[i] else _masked_value(dst_dtype, config))
        total = _tree(values, lambda a, b: add(a, b, dst_dtype, config))  # rounded to dst
        # A block with no active element gives +0 (seed), also when masked lanes enter as -0.
        dst[b] = total if mask[b * elems_per_block:(b + 1) * elems_per_block].any() else 0
    return dst


# ---------------------------------------------------------------- repeats (SPEC 5, 10)

def _writes_empty(config: Config) -> bool:
    """Whether a DataBlock with no active element is written (ReduceDataBlock page: Atlas A2 /
    A3 keep dst, the others write a fill)."""
    if config.empty_block is not None:
        return config.empty_block == "fill"
    return config.product not in ("A2", "A3")


def _repeat_mask(mask: Any, lanes: int, where: str) -> list[bool]:
    """Per-element mask of one repeat: continuous int, uint64 bit-mode words, or bools."""
    if isinstance(mask, (int, np.integer)) and not isinstance(mask, bool):
        if not 1 <= mask <= lanes:
            raise ValueError(f"{where}: mask must be in [1, {lanes}], got {mask}")
        return [e < mask for e in range(lanes)]
    if isinstance(mask, np.ndarray) and mask.dtype == np.bool_:
        return list(element_mask(mask, lanes, VL_BYTES // lanes, where))
    words = [int(w) for w in mask]
    if len(words) == 2 and lanes == 64 and words[1] == 0:
        words = words[:1]               # uint64_t mask[2] for a 32-bit type: word 1 unused
    if len(words) != lanes // 64 or not all(0 <= w < 2 ** 64 for w in words) or not any(words):
        raise ValueError(f"{where}: bit-mode mask must be {lanes // 64} uint64 words, "
                         f"not all 0, got {mask}")
    return [bool(words[e // 64] >> (e % 64) & 1) for e in range(lanes)]


def _check_tensors(dst: np.ndarray, src: np.ndarray, where: str,
                   types: tuple = (np.float16, np.float32)):
    if src.dtype not in types or dst.dtype != src.dtype:
        raise TypeError(f"{where}: T must be one of {[np.dtype(t).name for t in types]}, got "
                        f"{src.dtype}/{dst.dtype}")


def _read_repeat(src: np.ndarray, r: int, active: list[bool], blk_stride: int,
                 rep_stride: int, masked, where: str) -> list:
    """The lanes of repeat r: element e from ``(r*rep + (e // epb)*blk)*epb + e % epb``."""
    epb = BLOCK_BYTES // src.itemsize
    values = []
    for e, on in enumerate(active):
        if not on:
            values.append(masked)       # masked lanes are never read
            continue
        offset = (r * rep_stride + (e // epb) * blk_stride) * epb + e % epb
        if offset >= src.size:
            raise IndexError(f"{where}: src element {offset} past its end {src.size}")
        values.append(src[offset])
    return values


def _write(dst: np.ndarray, i: int, value, where: str) -> None:
    if i >= dst.size:
        raise IndexError(f"{where}: dst element {i} past its end {dst.size}")
    dst[i] = value


# ---------------------------------------------------------------- PairReduceSum (SPEC 5)

def pair_reduce_sum(dst: Any, src: Any, repeat_time: int, mask: Any, dst_rep_stride: int,
                    src_blk_stride: int, src_rep_stride: int, *, is_set_mask: bool = True,
                    mask_state=None, config: Config | None = None,
                    zero_products: tuple[str, ...] = ("200I/500 A2",)) -> np.ndarray:
    """Reference ``PairReduceSum<T, isSetMask>`` on 1-D LocalTensors; returns the new dst.
    ``zero_products``: where a pair with both elements masked is written 0 (this page: Atlas
    200I/500 A2; ReducePairElem's page adds the 950)."""
    config = config or Config()
    product = config.product
    where = "pair_reduce_sum"
    dst = np.array(dst, copy=True)
    src = np.asarray(src)
    _check_tensors(dst, src, where)
    if product == "training" and src.dtype != np.float16:
        raise TypeError("pair_reduce_sum: Atlas training series supports half only")
    if not 0 <= repeat_time <= 255:
        raise ValueError(f"pair_reduce_sum: repeat_time must be in [0, 255], got {repeat_time}")
    if min(dst_rep_stride, src_blk_stride, src_rep_stride) < 0:
        raise ValueError("pair_reduce_sum: strides must be >= 0")
    if product == "training" and dst_rep_stride == 0:
        raise ValueError("pair_reduce_sum: Atlas training series does not support dst_rep_stride 0")
    lanes = VL_BYTES // src.itemsize
    rows = call_rows(mask, repeat_time, lanes, is_set_mask, mask_state, config, where,
                     _repeat_mask)
    if config.masked_pair is None:  # the products the page says write 0
        zero_both = product in zero_products
    else:
        zero_both = config.masked_pair == "zero"
    masked = _masked_value(src.dtype, config)
    # src is read in full before any write (a repeat's dst may overlap a later repeat's src).
    reads = [_read_repeat(src, r, active, src_blk_stride, src_rep_stride, masked, where)
             for r, active in enumerate(rows)]
    for r, a in enumerate(reads):
        active = rows[r]
        for k in range(lanes // 2):
            out = r * dst_rep_stride * (lanes // 2) + k
            if not active[2 * k] and not active[2 * k + 1]:
                if zero_both:
                    _write(dst, out, 0, where)
                continue  # nothing written, so nothing past dst's end is touched
            _write(dst, out, add(a[2 * k], a[2 * k + 1], src.dtype, config), where)
    return dst


# ---------------------------------------------------------------- reduce family (SPEC 10)

def block_reduce_sum(dst: Any, src: Any, repeat_time: int, mask: Any, dst_rep_stride: int,
                     src_blk_stride: int, src_rep_stride: int, *, is_set_mask: bool = True,
                     mask_state=None, config: Config | None = None) -> np.ndarray:
    """Reference ``BlockReduceSum<T>``: each DataBlock of each repeat summed by a pair tree to
    ``dst[r*dst_rep_stride*8 + b]``; an empty block keeps dst on Atlas A2 / A3 and writes +0
    elsewhere (ReduceDataBlock page; ``config.empty_block`` forces one)."""
    config = config or Config()
    where = "block_reduce_sum"
    dst, src = np.array(dst, copy=True), np.asarray(src)
    _check_tensors(dst, src, where)
    lanes = VL_BYTES // src.itemsize
    epb = lanes // 8
    rows = call_rows(mask, repeat_time, lanes, is_set_mask, mask_state, config, where,
                     _repeat_mask)
    masked = _masked_value(src.dtype, config)
    for r, active in enumerate(rows):
        values = _read_repeat(src, r, active, src_blk_stride, src_rep_stride, masked, where)
        for b in range(8):
            if any(active[b * epb:(b + 1) * epb]):
                total = _tree(values[b * epb:(b + 1) * epb],
                              lambda x, y: add(x, y, src.dtype, config))
            elif not _writes_empty(config):
                continue
            else:
                total = 0               # +0 even when masked lanes enter as -0
            _write(dst, r * dst_rep_stride * 8 + b, total, where)
    return dst


def whole_reduce_sum(dst: Any, src: Any, mask: Any, repeat_time: int, dst_rep_stride: int,
                     src_blk_stride: int, src_rep_stride: int, *, is_set_mask: bool = True,
                     mask_state=None, config: Config | None = None) -> np.ndarray:
    """Reference ``WholeReduceSum<T>`` (mask before repeatTimes): each repeat summed by one
    pair tree over its lanes to ``dst[r*dst_rep_stride]``."""
    config = config or Config()
    where = "whole_reduce_sum"
    dst, src = np.array(dst, copy=True), np.asarray(src)
    _check_tensors(dst, src, where)
    rows = call_rows(mask, repeat_time, VL_BYTES // src.itemsize, is_set_mask, mask_state,
                     config, where, _repeat_mask)
    masked = _masked_value(src.dtype, config)
    for r, active in enumerate(rows):
        values = _read_repeat(src, r, active, src_blk_stride, src_rep_stride, masked, where)
        _write(dst, r * dst_rep_stride,
               _tree(values, lambda x, y: add(x, y, src.dtype, config)), where)
    return dst


def repeat_reduce_sum(dst: Any, src: Any, repeat_time: int, mask: int, dst_blk_stride: int,
                      src_blk_stride: int, dst_rep_stride: int, src_rep_stride: int, *,
                      is_set_mask: bool = True, mask_state=None,
                      config: Config | None = None) -> np.ndarray:
    """Reference ``RepeatReduceSum<T>``: ``whole_reduce_sum`` with a continuous mask;
    ``dst_blk_stride`` has no effect (vendor page)."""
    if is_set_mask and (not isinstance(mask, (int, np.integer)) or isinstance(mask, bool)):
        raise TypeError(f"repeat_reduce_sum: mask must be an int (continuous mode), got {mask!r}")
    del dst_blk_stride
    return whole_reduce_sum(dst, src, mask, repeat_time, dst_rep_stride, src_blk_stride,
                            src_rep_stride, is_set_mask=is_set_mask, mask_state=mask_state,
                            config=config)


# ReduceSum's vendor page (关键特性说明), its three ways of adding the repeats: 1 (方式一) the
# repeat results in order, 2 (方式二) by a binary tree, 3 (方式三) the repeats merged into one by
# vector adds, then the tree inside it.
_METHOD_NAMES = {"sequential": 1, "tree": 2, "vector_merge": 3}
# Method per product: (first-n form, level-0 form). Atlas A2 / A3 say so per form; the 950 uses
# 2 except in counter mask mode with 256 to 1024 bytes of data (3), which the first-n form is
# (A17, config.first_n_mask_mode); every other product uses 2.
_METHODS = {"A3": (1, 2), "A2": (1, 2)}


def _method(method, config: Config, count_bytes: int | None) -> int:
    if method is None:
        if (count_bytes is not None and config.product == "950"
                and config.first_n_mask_mode == "counter" and 256 <= count_bytes <= 1024):
            return 3
        return _METHODS.get(config.product, (2, 2))[0 if count_bytes is not None else 1]
    method = _METHOD_NAMES.get(method, method) if isinstance(method, str) else method
    if isinstance(method, bool) or method not in (1, 2, 3):
        raise ValueError(f"reduce_sum: method={method!r} is not one of 1, 2, 3, 'sequential', "
                         f"'tree', 'vector_merge'")
    return int(method)


def _padded_tree(values: list, zero, add_):
    """Adjacent-pair tree over a list padded with ``zero`` to a power of two."""
    width = 1 << (len(values) - 1).bit_length()
    return _tree(values + [zero] * (width - len(values)), add_)


def reduce_sum(dst: Any, src: Any, shared_tmp_buffer: Any, *args: Any,
               method: int | str | None = None, spr: Any = None, is_set_mask: bool = True,
               mask_state=None, config: Config | None = None) -> tuple:
    """Reference ``ReduceSum<T>``: ``(count)`` or level-0 ``(mask, repeat_time, src_rep_stride)``
    forms; the sum goes to ``dst[0]``. Each repeat's lanes (masked ones as +0) are read, then
    added by ``method`` (the page's numbers; the product's default when None). isSetMask
    (first-n form) counts only on Atlas A2/A3: false takes the count from the mask state's
    low word; a count of 0 there is a NOP. Returns (dst, ReduceSpr): the sum register holds the
    sum dst[0] got (GetReduceRepeatSumSpr; A47 for the level-0 form), the others keep theirs; a
    NOP changes no register."""
    del shared_tmp_buffer
    dst, wrote = _reduce_sum(dst, src, args, method, is_set_mask, mask_state,
                             config or Config())
    spr = spr_before(spr, np.asarray(src).dtype, dst.dtype)
    return dst, (spr._replace(sum=np.array(dst[0], dst.dtype)) if wrote else spr)


def _reduce_sum(dst, src, args, method, is_set_mask, mask_state, config: Config):
    """(the new dst, whether the call wrote it): ``reduce_sum``'s work."""
    where = "reduce_sum"
    dst, src = np.array(dst, copy=True), np.asarray(src)
    _check_tensors(dst, src, where, (np.float16, np.float32, np.int32, np.uint32))
    if config.product == "training" and src.dtype != np.float16:
        raise TypeError("reduce_sum: Atlas training series supports half only")
    lanes = VL_BYTES // src.itemsize
    masked = _masked_value(src.dtype, config)
    registers = []
    a2_a3 = config.product in ("A2", "A3")
    if len(args) == 1:
        (count,) = args
        if not is_set_mask and a2_a3:
            count = mask_state.low if mask_state is not None else (1 << 64) - 1
        if not (0 if a2_a3 else 1) <= count <= src.size:
            raise ValueError(f"{where}: count {count} out of range")
        if count == 0:
            return dst, False
        method = _method(method, config, count * src.itemsize)
        for r in range(-(-count // lanes)):
            active = [r * lanes + e < count for e in range(lanes)]
            registers.append(_read_repeat(src, r, active, 1, 8, masked, where))
    else:
        mask, repeat_time, src_rep_stride = args
        if not is_set_mask or (mask_state is not None and mask_state.mode == "counter"):
            raise ValueError(f"{where}: the level-0 form has no isSetMask and runs in Normal "
                             f"mode")
        method = _method(method, config, None)
        active = _repeat_mask(mask, lanes, where)
        for r in range(repeat_time):
            registers.append(_read_repeat(src, r, active, 1, src_rep_stride, masked, where))
    if not registers:
        return dst, False               # repeat_time 0

    def add_(x, y):
        return add(x, y, src.dtype, config)

    zero = src.dtype.type(0)
    if method == 3:
        if config.vector_merge == "tree":
            merged = [_padded_tree([reg[e] for reg in registers], zero, add_)
                      for e in range(lanes)]
        else:
            merged = list(registers[0])
            for reg in registers[1:]:
                merged = [add_(a, b) for a, b in zip(merged, reg, strict=True)]
        dst[0] = _tree(merged, add_)
        return dst, True
    sums = [_tree(list(reg), add_) for reg in registers]
    if method == 1:
        dst[0] = sum_sequential(sums, src.dtype, config)
    else:
        dst[0] = _padded_tree(sums, zero, add_)
    return dst, True
