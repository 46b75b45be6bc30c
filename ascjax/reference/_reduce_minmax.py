"""ReduceDataBlock, ReduceRepeat, ReducePairElem, BlockReduceMax/Min, the reduce SPRs and the C
API on UB (asc_datablock_reduce_*, asc_repeat_reduce_*, asc_pair_reduce_sum on UB), one element
at a time, from the vendor pages."""

from __future__ import annotations

from typing import Any

import numpy as np

from ascjax._src.config import Config

from ._reduce import (
    ReduceSpr,
    _check_tensors,
    _masked_value,
    _read_repeat,
    _repeat_mask,
    _reset,
    _tree,
    _writes_empty,
    block_reduce_sum,
    pair_reduce_sum,
    whole_reduce_sum,
)
from ._reduce_register import asc_pair_reduce_sum as register_pair_reduce_sum
from ._scalar import VL_BYTES, add
from ._vector_mask import MaskState, call_rows

_ORDERS = ("value_index", "index_value", "only_value", "only_index")
# ReduceRepeat's 约束说明: the orders each product supports.
_PRODUCT_ORDERS = {"200I/500 A2": ("value_index", "only_value"),
                   "inference AI Core": ("value_index", "index_value"),
                   "training": ("value_index",)}


def _uint(dtype) -> type:
    return {2: np.uint16, 4: np.uint32}[np.dtype(dtype).itemsize]


def _is_better(kind: str, x, best, config: Config) -> bool:
    """x beats best (both numbers): larger for max, smaller for min; -0 < +0 unless
    ``config.signed_zero == "equal"``."""
    if x == best:
        if x == 0 and config.signed_zero == "ordered" and np.signbit(x) != np.signbit(best):
            return bool(np.signbit(best)) if kind == "max" else bool(np.signbit(x))
        return False
    return bool(x > best) if kind == "max" else bool(x < best)


def _extreme(values: list, active: list, kind: str, config: Config):
    """(index of the first extreme among the active values, or None): the first NaN wins
    (``max_min_nan="propagate"``) or NaNs are passed over unless all active values are NaN."""
    best = None
    for i, (v, on) in enumerate(zip(values, active, strict=True)):
        if not on:
            continue
        if np.isnan(v):
            if config.max_min_nan == "propagate":
                return i
            continue
        if best is None or _is_better(kind, v, values[best], config):
            best = i
    if best is None:
        return next((i for i, on in enumerate(active) if on), None)
    return best


def _result_bits(bits: int, dtype, config: Config) -> int:
    """A selected element's bits as the result: a max / min moves data, but a NaN result is
    the type's quiet NaN unless ``extreme_nan="first"`` (payload kept)."""
    dtype = np.dtype(dtype)
    value = np.array(bits, f"uint{8 * dtype.itemsize}").view(dtype)
    if dtype.kind == "f" and np.isnan(value) and config.extreme_nan == "canonical":
        return {2: 0x7E00, 4: 0x7FC00000}[dtype.itemsize]
    return int(bits)


def _fill_bits(kind: str, dtype, config: Config) -> int:
    """An empty DataBlock's fill (ReduceDataBlock page), as bits."""
    dtype = np.dtype(dtype)
    if kind == "sum":
        value = 0.0
    elif config.product == "200I/500 A2" and dtype == np.float16:
        value = -65504.0 if kind == "max" else 65504.0
    else:
        value = -np.inf if kind == "max" else np.inf
    return int(np.array(value, dtype).view(_uint(dtype)))


def _put(bits: np.ndarray, i: int, value: int, where: str) -> None:
    if i >= bits.size:
        raise IndexError(f"{where}: dst element {i} past its end {bits.size}")
    bits[i] = value


def _check_common(dst, src, where, config, repeat_time, dst_rep_stride, src_blk_stride,
                  src_rep_stride, *, types: bool = True):
    if types:  # False: the caller checked the types (ReduceRepeat's 950 integer rows)
        _check_tensors(dst, src, where)
    if config.product == "training" and src.dtype != np.float16:
        raise TypeError(f"{where}: Atlas training series supports half only")
    if not 0 <= repeat_time <= 255:
        raise ValueError(f"{where}: repeat_time must be in [0, 255], got {repeat_time}")
    if min(dst_rep_stride, src_blk_stride, src_rep_stride) < 0:
        raise ValueError(f"{where}: strides must be >= 0")


def _repeat_actives(active: list, repeats: int, count: int | None, lanes: int) -> list:
    """Each repeat's active lanes: the mask, and in a first-n form lanes before ``count``."""
    if count is None:
        return [active] * repeats
    return [[e < count - r * lanes for e in range(lanes)] for r in range(repeats)]


# ---------------------------------------------------------------- ReduceDataBlock

def _data_block(dst, src, actives: list, dst_rep_stride, src_blk_stride, src_rep_stride, kind,
                config, where):
    dst, src = np.array(dst, copy=True), np.asarray(src)
    bits, src_bits = dst.view(_uint(dst.dtype)), src.view(_uint(src.dtype))
    lanes = VL_BYTES // src.itemsize
    epb = lanes // 8
    masked = _masked_value(src.dtype, config)
    reads = [_read_repeat(src, r, a, src_blk_stride, src_rep_stride, masked, where)
             for r, a in enumerate(actives)]
    for r, (values, active) in enumerate(zip(reads, actives, strict=True)):
        for b in range(8):
            block, on = values[b * epb:(b + 1) * epb], active[b * epb:(b + 1) * epb]
            out = r * dst_rep_stride * 8 + b
            if not any(on):
                if _writes_empty(config):
                    _put(bits, out, _fill_bits(kind, src.dtype, config), where)
                continue
            if kind == "sum":
                total = _tree(block, lambda x, y: add(x, y, src.dtype, config))
                _put(bits, out, int(np.array(total, src.dtype).view(bits.dtype)), where)
            else:
                i = _extreme(block, on, kind, config)
                offset = (r * src_rep_stride + b * src_blk_stride) * epb + i
                _put(bits, out, _result_bits(src_bits[offset], src.dtype, config), where)
    return dst


def _rows(mask, repeat_time, src, is_set_mask, mask_state, config, where) -> list:
    """Each repeat's active lanes under the mask argument or the hardware mask state."""
    return call_rows(mask, repeat_time, VL_BYTES // src.itemsize, is_set_mask, mask_state,
                     config, where, _repeat_mask)


def reduce_data_block(dst: Any, src: Any, mask: Any, repeat_time: int, dst_rep_stride: int,
                      src_blk_stride: int, src_rep_stride: int, *, reduce_type: str,
                      is_set_mask: bool = True, mask_state: Any = None,
                      config: Config | None = None) -> np.ndarray:
    """Reference ``ReduceDataBlock<reduceType, T>``."""
    config = config or Config()
    where = "reduce_data_block"
    dst, src = np.asarray(dst), np.asarray(src)
    _check_common(dst, src, where, config, repeat_time, dst_rep_stride, src_blk_stride,
                  src_rep_stride)
    if reduce_type == "sum":
        return block_reduce_sum(dst, src, repeat_time, mask, dst_rep_stride, src_blk_stride,
                                src_rep_stride, is_set_mask=is_set_mask, mask_state=mask_state,
                                config=config)
    rows = _rows(mask, repeat_time, src, is_set_mask, mask_state, config, where)
    return _data_block(dst, src, rows, dst_rep_stride, src_blk_stride, src_rep_stride,
                       reduce_type, config, where)


def block_reduce_max(dst: Any, src: Any, repeat_time: int, mask: Any, dst_rep_stride: int,
                     src_blk_stride: int, src_rep_stride: int, *, is_set_mask: bool = True,
                     mask_state: Any = None, config: Config | None = None) -> np.ndarray:
    """Reference ``BlockReduceMax<T>`` (repeatTime before mask)."""
    return reduce_data_block(dst, src, mask, repeat_time, dst_rep_stride, src_blk_stride,
                             src_rep_stride, reduce_type="max", is_set_mask=is_set_mask,
                             mask_state=mask_state, config=config)


def block_reduce_min(dst: Any, src: Any, repeat_time: int, mask: Any, dst_rep_stride: int,
                     src_blk_stride: int, src_rep_stride: int, *, is_set_mask: bool = True,
                     mask_state: Any = None, config: Config | None = None) -> np.ndarray:
    """Reference ``BlockReduceMin<T>`` (repeatTime before mask)."""
    return reduce_data_block(dst, src, mask, repeat_time, dst_rep_stride, src_blk_stride,
                             src_rep_stride, reduce_type="min", is_set_mask=is_set_mask,
                             mask_state=mask_state, config=config)


# ---------------------------------------------------------------- ReduceRepeat and the SPRs

def _repeat(dst, src, actives: list, dst_rep_stride, src_blk_stride, src_rep_stride, kind,
            order, spr, config, where):
    dst, src = np.array(dst, copy=True), np.asarray(src)
    spr = _reset(src.dtype, dst.dtype) if spr is None else ReduceSpr(*spr)
    if not actives:
        return dst, spr
    bits, src_bits = dst.view(_uint(dst.dtype)), src.view(_uint(src.dtype))
    lanes = VL_BYTES // src.itemsize
    epb = lanes // 8
    masked = _masked_value(src.dtype, config)
    reads = [_read_repeat(src, r, a, src_blk_stride, src_rep_stride, masked, where)
             for r, a in enumerate(actives)]

    def offset(r, e):
        return (r * src_rep_stride + (e // epb) * src_blk_stride) * epb + e % epb

    if kind == "sum":
        # Sums are in dst's type: an int16 / uint16 src is widened to int32 / uint32 first.
        out = dst.dtype

        def add_(x, y):
            return add(x, y, out, config)

        sums = []
        for r, values in enumerate(reads):
            sums.append(_tree([out.type(v) for v in values], add_))
            _put(bits, r * dst_rep_stride, int(np.array(sums[-1], out).view(bits.dtype)), where)
        if config.sum_spr == "sequential":
            total = sums[0]
            for s in sums[1:]:
                total = add_(total, s)
        else:
            width = 1 << (len(sums) - 1).bit_length()
            total = _tree(sums + [out.type(0)] * (width - len(sums)), add_)
        return dst, spr._replace(sum=np.array(total, out))
    slots = {"value_index": 2, "index_value": 2, "only_value": 1,
             "only_index": 4 // src.itemsize}[order]
    for r, (values, active) in enumerate(zip(reads, actives, strict=True)):
        i = _extreme(values, active, kind, config)
        v = _result_bits(src_bits[offset(r, i)], src.dtype, config)
        base = r * dst_rep_stride * slots
        if order == "value_index":
            _put(bits, base, v, where)
            _put(bits, base + 1, i, where)
        elif order == "index_value":
            _put(bits, base, i, where)
            _put(bits, base + 1, v, where)
        elif order == "only_value":
            _put(bits, base, v, where)
        else:                           # a uint32, little-endian over T's elements
            for k in range(slots):
                _put(bits, base + k, (i >> (16 * k)) & (0xFFFF if slots == 2 else 0xFFFFFFFF),
                     where)
    flat_values = [v for values in reads for v in values]
    flat_active = [on for active in actives for on in active]
    j = _extreme(flat_values, flat_active, kind, config)
    r, i = divmod(j, lanes)
    value = np.array(_result_bits(src_bits[offset(r, i)], src.dtype, config),
                     src_bits.dtype).view(src.dtype)
    index = j if config.spr_index == "repeat" else offset(r, i)
    return dst, spr._replace(value=np.array(value, src.dtype), index=np.uint32(index))


def _check_order(order, kind, config, where):
    if order not in _ORDERS:
        raise ValueError(f"{where}: unknown order {order!r}")
    if kind != "sum" and order not in _PRODUCT_ORDERS.get(config.product, _ORDERS):
        raise ValueError(f"{where}: order {order!r} is not supported on {config.product}")
    return order


# ReduceRepeat's 数据类型 section: the 950's integer rows; SUM's (dst, src) pairs there.
_REPEAT_INTS = (np.int16, np.uint16, np.int32, np.uint32)
_REPEAT_SUM_DST = {np.dtype(np.int16): np.int32, np.dtype(np.uint16): np.uint32,
                   np.dtype(np.int32): np.int32, np.dtype(np.uint32): np.uint32}


def _check_repeat_types(dst, src, kind, config, where):
    if src.dtype not in _REPEAT_INTS:
        _check_tensors(dst, src, where)
        return
    if config.product != "950":
        raise TypeError(f"{where}: {src.dtype} is a 950 type only")
    want = _REPEAT_SUM_DST[src.dtype] if kind == "sum" else src.dtype
    if dst.dtype != want:
        raise TypeError(f"{where}: {kind} of {src.dtype} writes {np.dtype(want)}, not "
                        f"{dst.dtype}")


def reduce_repeat(dst: Any, src: Any, mask: Any, repeat_time: int, dst_rep_stride: int,
                  src_blk_stride: int, src_rep_stride: int, order: str = "value_index", *,
                  reduce_type: str, spr: Any = None, is_set_mask: bool = True,
                  mask_state: Any = None, config: Config | None = None) -> tuple:
    """Reference ``ReduceRepeat<reduceType, T, U>``: returns (dst, ReduceSpr). The 950's
    integer rows: MAX / MIN on the type itself, SUM into int32 / uint32, each element widened
    before the adds (which wrap or saturate as ``config.int_overflow`` says)."""
    config = config or Config()
    where = "reduce_repeat"
    dst, src = np.asarray(dst), np.asarray(src)
    _check_repeat_types(dst, src, reduce_type, config, where)
    _check_common(dst, src, where, config, repeat_time, dst_rep_stride, src_blk_stride,
                  src_rep_stride, types=False)
    order = _check_order(order, reduce_type, config, where)
    rows = _rows(mask, repeat_time, src, is_set_mask, mask_state, config, where)
    if reduce_type == "sum" and rows and src.dtype.kind == "f":
        # dst as WholeReduceSum writes it; the SPR from the same repeat sums.
        new = whole_reduce_sum(dst, src, mask, repeat_time, dst_rep_stride, src_blk_stride,
                               src_rep_stride, is_set_mask=is_set_mask, mask_state=mask_state,
                               config=config)
        _, spr = _repeat(dst, src, rows, dst_rep_stride, src_blk_stride, src_rep_stride, "sum",
                         order, spr, config, where)
        return new, spr
    return _repeat(dst, src, rows, dst_rep_stride, src_blk_stride, src_rep_stride, reduce_type,
                   order, spr, config, where)


def _product(config, products, where):
    config = config or Config()
    if config.product not in products:
        raise TypeError(f"{where}: not available on {config.product}")


def get_reduce_repeat_sum_spr(spr: Any, *, config: Config | None = None):
    """Reference ``GetReduceRepeatSumSpr<T>()``."""
    _product(config, ("950", "A3", "A2"), "get_reduce_repeat_sum_spr")
    return np.asarray(spr.sum)


def get_reduce_repeat_max_min_spr(spr: Any, *, config: Config | None = None) -> tuple:
    """Reference ``GetReduceRepeatMaxMinSpr<T>(value, index)``: the index in T's bits."""
    _product(config, ("A3", "A2", "inference AI Core"), "get_reduce_repeat_max_min_spr")
    value = np.asarray(spr.value)
    index = np.array(int(spr.index) & (0xFFFF if value.itemsize == 2 else 0xFFFFFFFF),
                     _uint(value.dtype))
    return value, index.view(value.dtype)


def get_reduce_max_cnt(spr: Any, *, config: Config | None = None) -> tuple:
    """Reference ``asc_get_reduce_max_cnt(val, index)``."""
    _product(config, ("A3", "A2"), "get_reduce_max_cnt")
    return np.asarray(spr.value), np.uint32(spr.index)


def get_reduce_min_cnt(spr: Any, *, config: Config | None = None) -> tuple:
    """Reference ``asc_get_reduce_min_cnt(val, index)``."""
    _product(config, ("A3", "A2"), "get_reduce_min_cnt")
    return np.asarray(spr.value), np.uint32(spr.index)


# ---------------------------------------------------------------- ReducePairElem

def reduce_pair_elem(dst: Any, src: Any, mask: Any, repeat_time: int, dst_rep_stride: int,
                     src_blk_stride: int, src_rep_stride: int, *, reduce_type: str,
                     is_set_mask: bool = True, mask_state: Any = None,
                     config: Config | None = None) -> np.ndarray:
    """Reference ``ReducePairElem<SUM, T>``: PairReduceSum with mask before repeatTime; a pair
    with both elements masked is written 0 on the 950 and Atlas 200I/500 A2 (this page)."""
    if reduce_type != "sum":
        raise ValueError(f"reduce_pair_elem: reduce_type must be 'sum', got {reduce_type!r}")
    return pair_reduce_sum(dst, src, repeat_time, mask, dst_rep_stride, src_blk_stride,
                           src_rep_stride, is_set_mask=is_set_mask, mask_state=mask_state,
                           config=config, zero_products=("950", "200I/500 A2"))


# ---------------------------------------------------------------- the C API on UB

def _c_form(dst, src, args, config, where, mask_state=None):
    """(actives, dst_rep_stride, src_blk_stride, src_rep_stride): first n, or high-dimensional
    under the hardware mask ``mask_state`` (None: the reset state, every lane)."""
    config = config or Config()
    if config.product not in ("A2", "A3"):
        raise TypeError(f"{where}: Atlas A2 / A3 only")
    dst, src = np.asarray(dst), np.asarray(src)
    _check_tensors(dst, src, where)
    lanes = VL_BYTES // src.itemsize
    if len(args) == 1:
        count = args[0]
        if not 1 <= count <= src.size:
            raise ValueError(f"{where}: count {count} outside [1, {src.size}]")
        repeats = -(-count // lanes)
        return config, _repeat_actives([True] * lanes, repeats, count, lanes), 1, 1, 8
    repeat, dst_stride, blk, rep = args
    state = mask_state if mask_state is not None else MaskState()
    actives = call_rows(None, repeat, lanes, False, state, config, where, _repeat_mask)
    return config, actives, dst_stride, blk, rep


def _datablock(dst, src, args, kind, config, where, mask_state):
    config, actives, dst_stride, blk, rep = _c_form(dst, src, args, config, where, mask_state)
    return _data_block(dst, src, actives, dst_stride, blk, rep, kind, config, where)


def datablock_reduce_sum(dst: Any, src: Any, *args: int, mask_state: Any = None,
                         config: Config | None = None) -> np.ndarray:
    """Reference ``asc_datablock_reduce_sum`` (first n or high-dimensional, reset mask)."""
    return _datablock(dst, src, args, "sum", config, "datablock_reduce_sum", mask_state)


def datablock_reduce_max(dst: Any, src: Any, *args: int, mask_state: Any = None,
                         config: Config | None = None) -> np.ndarray:
    """Reference ``asc_datablock_reduce_max``."""
    return _datablock(dst, src, args, "max", config, "datablock_reduce_max", mask_state)


def datablock_reduce_min(dst: Any, src: Any, *args: int, mask_state: Any = None,
                         config: Config | None = None) -> np.ndarray:
    """Reference ``asc_datablock_reduce_min``."""
    return _datablock(dst, src, args, "min", config, "datablock_reduce_min", mask_state)


def _c_repeat(dst, src, args, kind, order, spr, config, where, mask_state):
    config, actives, dst_stride, blk, rep = _c_form(dst, src, args, config, where, mask_state)
    return _repeat(dst, src, actives, dst_stride, blk, rep, kind, order, spr, config, where)


def asc_repeat_reduce_sum(dst: Any, src: Any, *args: int, mask_state: Any = None,
                          config: Config | None = None) -> np.ndarray:
    """Reference ``asc_repeat_reduce_sum``."""
    return _c_repeat(dst, src, args, "sum", "value_index", None, config,
                     "asc_repeat_reduce_sum", mask_state)[0]


def repeat_reduce_max(dst: Any, src: Any, *args: int, order: str = "value_index",
                      spr: Any = None, mask_state: Any = None,
                      config: Config | None = None) -> tuple:
    """Reference ``asc_repeat_reduce_max_<order>``: (dst, ReduceSpr)."""
    return _c_repeat(dst, src, args, "max", order, spr, config, "repeat_reduce_max", mask_state)


def repeat_reduce_min(dst: Any, src: Any, *args: int, order: str = "value_index",
                      spr: Any = None, mask_state: Any = None,
                      config: Config | None = None) -> tuple:
    """Reference ``asc_repeat_reduce_min_<order>``: (dst, ReduceSpr)."""
    return _c_repeat(dst, src, args, "min", order, spr, config, "repeat_reduce_min", mask_state)


def pair_reduce_sum_ub(dst: Any, src: Any, *args: int, mask_state: Any = None,
                       config: Config | None = None) -> np.ndarray:
    """Reference ``asc_pair_reduce_sum`` on UB under the reset mask: the high-dimensional form
    is PairReduceSum with every lane; the first-n form is its full repeats, then one repeat
    over the remaining elements (a continuous mask), written after them."""
    config = config or Config()
    if config.product not in ("A2", "A3"):
        raise TypeError("pair_reduce_sum_ub: Atlas A2 / A3 only")
    lanes = VL_BYTES // np.asarray(src).itemsize
    if len(args) == 4:
        state = mask_state if mask_state is not None else MaskState()
        return pair_reduce_sum(dst, src, args[0], None, *args[1:], is_set_mask=False,
                               mask_state=state, config=config)
    (count,) = args
    dst, src = np.array(dst), np.asarray(src)
    full, rest = divmod(count, lanes)
    if full:
        dst = pair_reduce_sum(dst, src, full, lanes, 1, 1, 8, config=config)
    if rest:
        head = full * lanes // 2
        dst[head:] = pair_reduce_sum(dst[head:], src[full * lanes:], 1, rest, 1, 1, 8,
                                     config=config)
    return dst


def asc_pair_reduce_sum(*args: Any, mask_state: Any = None,
                        config: Config | None = None) -> np.ndarray:
    """Reference ``asc_pair_reduce_sum``: the register form ``(src, mask)`` or the UB forms."""
    if len(args) == 2:
        return register_pair_reduce_sum(*args, config=config)
    return pair_reduce_sum_ub(*args, mask_state=mask_state, config=config)
