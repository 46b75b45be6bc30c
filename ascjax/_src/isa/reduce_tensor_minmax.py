"""LocalTensor reductions by DataBlock, repeat and pair with SUM / MAX / MIN (ReduceDataBlock,
ReduceRepeat, ReducePairElem; the older BlockReduceMax/Min, WholeReduceMax/Min), the special
registers ReduceRepeat (and ReduceSum, ReduceMax, ReduceMin) leave behind
(GetReduceRepeatSumSpr, GetReduceRepeatMaxMinSpr, asc_get_reduce_max_cnt /
asc_get_reduce_min_cnt), and the C API on UB memory
(asc_datablock_reduce_*, asc_repeat_reduce_*, asc_pair_reduce_sum's UB form).

Every call runs the one group kernel of ``reduce_tensor`` (``group_reduce``): sums are
adjacent-pair trees, each add rounded to T; a max / min is exact (``lanes.select_extreme``: the
first index among equal values, -0 < +0, the first NaN wins; A21, A22). A max/min index is stored
in the dst element's bits (uint16 in a half, uint32 in a float; ``only_index`` a uint32 in any
T). The SPRs are explicit: ``reduce_repeat`` takes and returns a ``ReduceSpr`` (the class
lives in ``reduce_tensor``, where ``reduce_sum`` sets it too).

The class-library calls take ``is_set_mask`` (isSetMask) and ``mask_state`` as
``block_reduce_sum`` does: False makes ``mask`` a placeholder and takes the mask from
``mask_state`` (Counter mode: an element count over the whole call). The C API calls have no
mask argument: their high-dimensional form runs under ``mask_state``.

T is half or float; ReduceRepeat on the 950 also takes int16_t, uint16_t, int32_t and
uint32_t (its 数据类型 section): MAX / MIN keep dst = src, SUM writes int32_t from int16_t /
int32_t and uint32_t from uint16_t / uint32_t, each element widened before any add, and the
adds wrap or saturate (``config.int_overflow``). The rest of the family is half / float only.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from ..config import Config
from ..formats import BLOCKS_PER_REGISTER, Format
from ..numerics.bits import U32, from_bits, to_bits, with_nan_as
from .lanes import (
    Adder,
    check_int,
    check_product,
    check_reduce_type,
    check_ub_overload,
    enum_name,
    kernel,
    merge_last,
    padded_pair_tree,
    resolve_dtypes,
    sequential_sum,
)
from .reduce_register import asc_pair_reduce_sum as register_pair_reduce_sum
from .reduce_tensor import (
    BLOCK_REDUCE_SUM_TYPES,
    ORDERS,
    PAIR_REDUCE_SUM_TYPES,
    ReduceSpr,
    RepeatCall,
    _plan,
    extreme_index,
    group_reduce,
    order_slots,
    pair_reduce_sum_plan,
    spr_in,
)
from .repeat import REPEAT_MAX, check_strides, mask_source, repeat_call, setup
from .vector_mask import MaskState

_ALL_PRODUCTS = ("950", "A3", "A2", "200I/500 A2", "inference AI Core", "training")

REDUCE_DATA_BLOCK_TYPES = BLOCK_REDUCE_SUM_TYPES
REDUCE_REPEAT_TYPES = ({p: ("half", "float") for p in _ALL_PRODUCTS}
                       | {"950": ("int16_t", "uint16_t", "half", "int32_t", "uint32_t", "float"),
                          "training": ("half",)})
# ReduceRepeat<SUM>'s dst type per src type on the 950 (数据类型 table); elsewhere dst = src.
REDUCE_REPEAT_SUM_DST = {"int16_t": "int32_t", "uint16_t": "uint32_t", "half": "half",
                         "int32_t": "int32_t", "uint32_t": "uint32_t", "float": "float"}
REDUCE_REPEAT_SUM_PAIRS = {"950": tuple((d, s) for s, d in REDUCE_REPEAT_SUM_DST.items())}
REDUCE_PAIR_ELEM_TYPES = PAIR_REDUCE_SUM_TYPES
# Products whose ReducePairElem writes 0 for a pair with both elements masked (约束说明); the
# seed PairReduceSum page names Atlas 200I/500 A2 only.
REDUCE_PAIR_ELEM_ZEROES = ("950", "200I/500 A2")
# The C API on UB memory: Atlas A2 / A3 only (its pages).
C_API_TYPES = {p: ("half", "float") for p in ("A3", "A2")}

# ReduceRepeat's ReduceOrder per product (约束说明).
REDUCE_ORDERS = {"950": ORDERS, "A3": ORDERS, "A2": ORDERS,
                 "200I/500 A2": ("value_index", "only_value"),
                 "inference AI Core": ("value_index", "index_value"),
                 "training": ("value_index",)}
SUM_SPR_PRODUCTS = ("950", "A3", "A2")                        # GetReduceRepeatSumSpr
MAX_MIN_SPR_PRODUCTS = ("A3", "A2", "inference AI Core")      # GetReduceRepeatMaxMinSpr
CNT_PRODUCTS = ("A3", "A2")                                   # asc_get_reduce_max/min_cnt


def empty_fill(kind: str, fmt: Format, config: Config) -> int:
    """Bits an empty DataBlock writes (ReduceDataBlock page): +0 for SUM, -inf / +inf for MAX /
    MIN; Atlas 200I/500 A2 writes -65504 / 65504 for half."""
    if kind == "sum":
        return 0
    magnitude = ((1 << fmt.exponent_bits) - 1) << fmt.mantissa_bits  # inf
    if config.product == "200I/500 A2" and fmt.name == "half":
        magnitude -= 1  # the largest finite half, 65504
    return magnitude | ((1 << (fmt.bits - 1)) if kind == "max" else 0)


# --- ReduceDataBlock / BlockReduceMax / BlockReduceMin ---------------------------------------

def _data_block(where: str, call: RepeatCall, kind: str):
    if call.repeats == 0:
        return call.dst
    plan = _plan(call, BLOCKS_PER_REGISTER, BLOCKS_PER_REGISTER, call.config.empty_block_fill())
    return group_reduce(where, call, plan, call.fmt.per_block, kind,
                        fill=empty_fill(kind, call.fmt, call.config))


def reduce_data_block(dst: Any, src: Any, mask: Any, repeat_time: int, dst_rep_stride: int,
                      src_blk_stride: int, src_rep_stride: int, *, reduce_type: str,
                      is_set_mask: bool = True, mask_state: MaskState | None = None,
                      config: Config | None = None) -> jax.Array:
    """``ReduceDataBlock<reduceType, T>(dst, src, mask, repeatTime, dstRepStride, srcBlkStride,
    srcRepStride)``: the sum, max or min (``reduce_type="sum"|"max"|"min"``) of each 32-byte
    DataBlock of each repeat.

    ``dst``, ``src``: LocalTensors ``(..., n)`` of half or float (training series: half);
    leading axes are independent tensors. Block b of repeat r (read as in ``block_reduce_sum``)
    goes to element ``r*dst_rep_stride*8 + b``. SUM: an adjacent-pair tree, each add rounded to
    T. MAX / MIN: exact; -0 < +0 (A22); a NaN gives the first NaN (A21). ``mask`` is an int
    (the first ``mask`` elements) or uint64 words (bit mode), the same every repeat. A block
    with no active element leaves dst unchanged on Atlas A2 / A3 and writes the page's fill
    elsewhere (+0; -inf / +inf for MAX / MIN, -65504 / 65504 for half on Atlas 200I/500 A2;
    inference AI Core and training assumed, A11; ``config.empty_block``). Returns the new dst.

    Differentiable in ``dst`` and ``src``: a sum as the exact sum, a max / min passes the
    cotangent to the lane it selected.
    """
    where = "reduce_data_block"
    kind = check_reduce_type(reduce_type, where)
    call = repeat_call(where, dst, src, REDUCE_DATA_BLOCK_TYPES, config, repeat_time, mask,
                       is_set_mask=is_set_mask, mask_state=mask_state,
                       dst_rep_stride=dst_rep_stride, src_blk_stride=src_blk_stride,
                       src_rep_stride=src_rep_stride)
    return _data_block(where, call, kind)


def _block_reduce(where: str, kind: str, dst, src, repeat_time, mask, dst_rep_stride,
                  src_blk_stride, src_rep_stride, config, is_set_mask, mask_state):
    call = repeat_call(where, dst, src, REDUCE_DATA_BLOCK_TYPES, config, repeat_time, mask,
                       is_set_mask=is_set_mask, mask_state=mask_state,
                       dst_rep_stride=dst_rep_stride, src_blk_stride=src_blk_stride,
                       src_rep_stride=src_rep_stride)
    return _data_block(where, call, kind)


def block_reduce_max(dst: Any, src: Any, repeat_time: int, mask: Any, dst_rep_stride: int,
                     src_blk_stride: int, src_rep_stride: int, *, is_set_mask: bool = True,
                     mask_state: MaskState | None = None,
                     config: Config | None = None) -> jax.Array:
    """``BlockReduceMax<T>(dst, src, repeatTime, mask, dstRepStride, srcBlkStride,
    srcRepStride)``: the older name of ``reduce_data_block(..., reduce_type="max")``, with
    repeatTime before mask (as ``block_reduce_sum``)."""
    return _block_reduce("block_reduce_max", "max", dst, src, repeat_time, mask, dst_rep_stride,
                         src_blk_stride, src_rep_stride, config, is_set_mask, mask_state)


def block_reduce_min(dst: Any, src: Any, repeat_time: int, mask: Any, dst_rep_stride: int,
                     src_blk_stride: int, src_rep_stride: int, *, is_set_mask: bool = True,
                     mask_state: MaskState | None = None,
                     config: Config | None = None) -> jax.Array:
    """``BlockReduceMin<T>(dst, src, repeatTime, mask, dstRepStride, srcBlkStride,
    srcRepStride)``: the older name of ``reduce_data_block(..., reduce_type="min")``."""
    return _block_reduce("block_reduce_min", "min", dst, src, repeat_time, mask, dst_rep_stride,
                         src_blk_stride, src_rep_stride, config, is_set_mask, mask_state)


# --- ReduceRepeat and its SPRs ---------------------------------------------------------------

def check_order(order: Any, config: Config, where: str, kind: str) -> str | None:
    """ReduceOrder on this product, as snake_case; None for SUM (the page: no effect). The
    page's spelling, with or without its namespace (``AscendC::ReduceOrder::ORDER_ONLY_INDEX``),
    names the same order."""
    order = enum_name(order, where, "order", ORDERS, "ReduceOrder", "order_")
    if kind == "sum":
        return None
    allowed = REDUCE_ORDERS[config.product]
    if order not in allowed:
        raise ValueError(f"{where}: order={order!r} is not supported on product "
                         f"{config.product!r}; supported: {list(allowed)}")
    return order


def _repeat(where: str, call: RepeatCall, kind: str, order: str | None, spr: Any):
    """dst and the SPRs after a ReduceRepeat-shaped call (any form)."""
    batch = call.dst.shape[:-1]
    dtype = call.fmt.storage_dtype
    # dst's type: src's, or a SUM's wider integer (checked by setup's pairs)
    dst_fmt = resolve_dtypes(call.dst, None, where=where, arg="dst")
    spr = spr_in(where, spr, batch, dtype, dst_fmt.storage_dtype)
    if call.repeats == 0:
        return call.dst, spr
    slots = order_slots(order, call.fmt) if kind != "sum" else 1
    plan = _plan(call, slots, slots, True)
    dst = group_reduce(where, call, plan, call.fmt.lanes, kind, order, dst_fmt=dst_fmt)
    adder = Adder(call.fmt, dst_fmt, call.config)
    # The SPR carries no gradient.
    value, index = _spr((adder, plan, kind), jax.lax.stop_gradient(call.src))
    value = from_bits(value, dst_fmt)
    if kind == "sum":
        return dst, spr._replace(sum=value)
    return dst, spr._replace(value=value, index=index)


def _spr_forward(spec, s):
    """The SPRs over all repeats: the sum of the repeat sums (``config.sum_spr``, A23), or the
    max / min with its first index ``r*lanes + i`` (``config.spr_index``, A24)."""
    adder, plan, kind = spec
    fmt, config = adder.dst, adder.config  # a max / min has dst = src
    active = plan.active
    loaded = plan.load(s)
    if kind == "sum":
        sums = adder.reduce_blocks(loaded, active, adder.src.lanes)[..., 0]
        if config.sum_spr == "sequential":
            total = sequential_sum(sums, adder.add)
        else:
            total = padded_pair_tree(sums, adder.add, adder.zeros(()))
        total = to_bits(adder.store(total), fmt)
        return total, jnp.zeros(total.shape, U32)
    bits = to_bits(loaded, fmt)
    flat = merge_last(bits)
    index = extreme_index(flat, active.reshape(-1), fmt, kind, config)
    value = with_nan_as(jnp.take_along_axis(flat, index[..., None], -1)[..., 0], fmt,
                        config.extreme_nan)
    if config.spr_index == "offset":
        return value, jnp.asarray(plan.reads.reshape(-1).astype(np.uint32))[index]
    return value, index.astype(U32)


_spr = kernel(_spr_forward)


def reduce_repeat(dst: Any, src: Any, mask: Any, repeat_time: int, dst_rep_stride: int,
                  src_blk_stride: int, src_rep_stride: int, order: str = "value_index", *,
                  reduce_type: str, spr: ReduceSpr | None = None,
                  is_set_mask: bool = True, mask_state: MaskState | None = None,
                  config: Config | None = None) -> tuple[jax.Array, ReduceSpr]:
    """``ReduceRepeat<reduceType, T>(dst, src, mask, repeatTime, dstRepStride, srcBlkStride,
    srcRepStride, order)``: the sum, max or min of each repeat (``reduce_type``).

    ``dst``, ``src``: LocalTensors ``(..., n)``; half or float (training series: half); the 950
    also int16_t, uint16_t, int32_t, uint32_t. MAX / MIN: dst has src's type. SUM: dst has
    src's type, except on the 950, whose table gives int32_t for an int16_t or int32_t src and
    uint32_t for a uint16_t or uint32_t src (a 16-bit src with a 16-bit dst is a TypeError);
    an integer is widened to dst's type before any add, and the adds wrap or saturate
    (``config.int_overflow``).

    Repeat r reads its lanes as ``whole_reduce_sum`` does. SUM: one adjacent-pair tree over the
    repeat, written to ``dst[r*dst_rep_stride]``. MAX / MIN: the extreme of the active lanes
    and the first lane index holding it (0 .. lanes-1, within the repeat), written at
    ``r*dst_rep_stride*slots`` as ``order`` says (ReduceOrder in snake_case):
    ``"value_index"`` [value, index] (default), ``"index_value"`` [index, value],
    ``"only_value"`` [value], ``"only_index"`` [index as a uint32: two half elements or one
    float]; the page's spelling (``"ORDER_INDEX_VALUE"``, ``"ReduceOrder::ORDER_INDEX_VALUE"``)
    reads the same. As on the page, ``order`` is the argument after ``src_rep_stride``. An
    index is stored in T's bits (read it with ``.view(np.uint16)`` for half, int16_t and
    uint16_t, ``np.uint32`` for float and the 32-bit integers). The 950, A3 and A2
    support every order; 200I/500 A2 value_index and only_value, inference AI Core
    value_index and index_value, training value_index only.

    The call also sets the special registers: returns ``(dst, spr)``, a ``ReduceSpr`` built on
    ``spr`` (the registers before the call; None: reset). SUM sets ``spr.sum`` (dst's type) to
    the repeat results added in repeat order (A23); MAX / MIN set ``spr.value`` / ``spr.index``, the
    extreme over all repeats and its first index ``r*lanes + i`` (A24).
    ``get_reduce_repeat_sum_spr`` / ``get_reduce_repeat_max_min_spr`` read them. A
    ``repeat_time`` of 0 changes neither dst nor the SPRs.

    Differentiable in ``dst`` and ``src`` (the SPRs carry no gradient).
    """
    where = "reduce_repeat"
    kind = check_reduce_type(reduce_type, where)
    call = repeat_call(where, dst, src, REDUCE_REPEAT_TYPES, config, repeat_time, mask,
                       is_set_mask=is_set_mask, mask_state=mask_state,
                       pairs=REDUCE_REPEAT_SUM_PAIRS if kind == "sum" else None,
                       dst_rep_stride=dst_rep_stride, src_blk_stride=src_blk_stride,
                       src_rep_stride=src_rep_stride)
    return _repeat(where, call, kind, check_order(order, call.config, where, kind), spr)


def _check_spr(spr: Any, where: str, field: str) -> ReduceSpr:
    """``spr``, whose ``field`` a getter reads, checked: a ReduceSpr of half or float (the
    getters' pages give T half and float alone; an int32 sum of ReduceSum or ReduceRepeat is
    not theirs to read)."""
    if not isinstance(spr, ReduceSpr):
        raise TypeError(f"{where}: spr must be the ReduceSpr a reduction returned, got "
                        f"{type(spr).__name__}")
    dtype = jnp.asarray(getattr(spr, field)).dtype
    if dtype not in (jnp.float16, jnp.float32):
        raise TypeError(f"{where}: T is half or float (its page); spr.{field} holds {dtype}, "
                        f"the SPR of an integer reduction, which it does not read")
    return spr


def get_reduce_repeat_sum_spr(spr: ReduceSpr, *, config: Config | None = None) -> jax.Array:
    """``GetReduceRepeatSumSpr<T>()``: the sum register (``spr.sum``, the SUM's dst type) of
    the last call that set it: ReduceSum (the sum it wrote to dst[0]; the page supports its
    first-n form, A47 the others) or ReduceRepeat<SUM> (A23). 950, A2, A3."""
    where = "get_reduce_repeat_sum_spr"
    check_product(config, SUM_SPR_PRODUCTS, where)
    return _check_spr(spr, where, "sum").sum


def get_reduce_repeat_max_min_spr(spr: ReduceSpr, *,
                                  config: Config | None = None) -> tuple[jax.Array, jax.Array]:
    """``GetReduceRepeatMaxMinSpr<T>(maxMinValue, maxMinIndex)``: the max / min over all repeats
    of the last ReduceRepeat<MAX/MIN> and its index (A24), or the max / min of the last
    ReduceMax / ReduceMin and the index it found (which the page calls not accurate: A46, A47),
    both T; the index is stored in T's bits (``.view(np.uint16)`` for half, which keeps the low
    16 bits). Atlas A2 / A3; inference AI Core's one-argument form is the first element."""
    where = "get_reduce_repeat_max_min_spr"
    config = check_product(config, MAX_MIN_SPR_PRODUCTS, where)
    spr = _check_spr(spr, where, "value")
    value = jnp.asarray(spr.value)
    bits = jnp.asarray(spr.index, U32).astype(np.dtype(f"uint{8 * value.dtype.itemsize}"))
    return value, jax.lax.bitcast_convert_type(bits, value.dtype)


def _cnt(where: str, spr: Any, config: Config | None):
    check_product(config, CNT_PRODUCTS, where)
    spr = _check_spr(spr, where, "value")
    return jnp.asarray(spr.value), jnp.asarray(spr.index, U32)


def get_reduce_max_cnt(spr: ReduceSpr, *, config: Config | None = None):
    """``asc_get_reduce_max_cnt(val, index)``: ``(val, index)``, the max over all repeats of the
    last asc_repeat_reduce_max (T) and its first index (uint32). Atlas A2 / A3."""
    return _cnt("get_reduce_max_cnt", spr, config)


def get_reduce_min_cnt(spr: ReduceSpr, *, config: Config | None = None):
    """``asc_get_reduce_min_cnt(val, index)``: as ``get_reduce_max_cnt`` for the min."""
    return _cnt("get_reduce_min_cnt", spr, config)


# --- ReducePairElem -------------------------------------------------------------------------

def reduce_pair_elem(dst: Any, src: Any, mask: Any, repeat_time: int, dst_rep_stride: int,
                     src_blk_stride: int, src_rep_stride: int, *, reduce_type: str,
                     is_set_mask: bool = True, mask_state: MaskState | None = None,
                     config: Config | None = None) -> jax.Array:
    """``ReducePairElem<ReduceType::SUM, T>(dst, src, mask, repeatTime, dstRepStride,
    srcBlkStride, srcRepStride)``: ``pair_reduce_sum`` with mask before repeatTime;
    ``reduce_type`` must be ``"sum"`` (the page's only one). A pair with both elements masked
    is written 0 on the 950 and Atlas 200I/500 A2 and left unchanged elsewhere, as this page
    says (约束说明; PairReduceSum's page zeroes on Atlas 200I/500 A2 only;
    ``config.masked_pair`` overrides)."""
    where = "reduce_pair_elem"
    check_reduce_type(reduce_type, where, ("sum",))
    call = repeat_call(where, dst, src, REDUCE_PAIR_ELEM_TYPES, config, repeat_time, mask,
                       is_set_mask=is_set_mask, mask_state=mask_state,
                       dst_rep_stride=dst_rep_stride, src_blk_stride=src_blk_stride,
                       src_rep_stride=src_rep_stride)
    return _pair(where, call, REDUCE_PAIR_ELEM_ZEROES)


def _pair(where: str, call: RepeatCall, zero_products: tuple[str, ...] = ("200I/500 A2",)):
    if call.repeats == 0:
        return call.dst
    st = call.strides
    plan = pair_reduce_sum_plan(call.fmt, call.repeats, call.active, st["dst_rep_stride"],
                                st["src_blk_stride"], st["src_rep_stride"],
                                call.config.zero_masked_pairs_on(zero_products), count=call.count)
    return group_reduce(where, call, plan, 2)


# --- the C API on UB memory -----------------------------------------------------------------

def _c_call(where: str, dst: Any, src: Any, args: tuple, config: Config | None,
            mask_state: Any) -> RepeatCall:
    """A C API call's checks: the first-n form ``(count)`` (contiguous repeats, the last one
    partial) or the high-dimensional form ``(repeat, dst_repeat_stride, src_block_stride,
    src_repeat_stride)`` under the hardware mask ``mask_state`` (None: the power-on state)."""
    config, fmt, dst, src = setup(where, dst, src, C_API_TYPES, config)
    if len(args) == 1:
        count = check_int(args[0], 1, max(src.shape[-1], 1), where=where, arg="count")
        strides = {"dst_rep_stride": 1, "src_blk_stride": 1, "src_rep_stride": BLOCKS_PER_REGISTER}
        return RepeatCall(config, fmt, dst, src, -(-count // fmt.lanes), strides,
                          np.ones(fmt.lanes, bool), count)
    if len(args) == 4:
        check_int(args[0], 0, REPEAT_MAX, where=where, arg="repeat")
        repeats, active, count = mask_source(where, fmt, config, args[0], None, False,
                                             mask_state)
        st = check_strides(where, config, dst_repeat_stride=args[1], src_block_stride=args[2],
                           src_repeat_stride=args[3])
        strides = {"dst_rep_stride": st["dst_repeat_stride"],
                   "src_blk_stride": st["src_block_stride"],
                   "src_rep_stride": st["src_repeat_stride"]}
        return RepeatCall(config, fmt, dst, src, repeats, strides, active, count)
    raise TypeError(f"{where}: expected (dst, src, count) or (dst, src, repeat, "
                    f"dst_repeat_stride, src_block_stride, src_repeat_stride); got "
                    f"{2 + len(args)} positional arguments")


def _c_datablock(where: str, kind: str, dst, src, args, mask_state, config):
    return _data_block(where, _c_call(where, dst, src, args, config, mask_state), kind)


_C_FORMS = """Two forms, as the C API's overloads: first n, ``(dst, src, count)`` (the
    ``_sync`` spelling takes this form alone): contiguous repeats over the first ``count``
    elements, the last repeat partly; high-dimensional, ``(dst, src, repeat,
    dst_repeat_stride, src_block_stride, src_repeat_stride)`` under the hardware mask:
    ``mask_state``, the ``ascjax.MaskState`` asc_set_vector_mask / asc_set_mask_count left
    (None: the power-on state, Normal mode, every lane; in Counter mode its count covers the
    call and ``repeat`` has no effect). ``dst``, ``src``: UB tensors ``(..., n)`` of half or
    float. Atlas A2 / A3."""


def datablock_reduce_sum(dst: Any, src: Any, *args: int, mask_state: Any = None,
                         config: Config | None = None) -> jax.Array:
    """``asc_datablock_reduce_sum``: ``reduce_data_block(..., reduce_type="sum")`` on UB.

    {forms}
    """
    return _c_datablock("asc_datablock_reduce_sum", "sum", dst, src, args, mask_state, config)


def datablock_reduce_max(dst: Any, src: Any, *args: int, mask_state: Any = None,
                         config: Config | None = None) -> jax.Array:
    """``asc_datablock_reduce_max``: ``reduce_data_block(..., reduce_type="max")`` on UB.

    {forms}
    """
    return _c_datablock("asc_datablock_reduce_max", "max", dst, src, args, mask_state, config)


def datablock_reduce_min(dst: Any, src: Any, *args: int, mask_state: Any = None,
                         config: Config | None = None) -> jax.Array:
    """``asc_datablock_reduce_min``: ``reduce_data_block(..., reduce_type="min")`` on UB.

    {forms}
    """
    return _c_datablock("asc_datablock_reduce_min", "min", dst, src, args, mask_state, config)


def _c_repeat(where: str, kind: str, dst, src, args, order, spr, mask_state, config):
    call = _c_call(where, dst, src, args, config, mask_state)
    return _repeat(where, call, kind, check_order(order, call.config, where, kind), spr)


def asc_repeat_reduce_sum(dst: Any, src: Any, *args: int, mask_state: Any = None,
                          config: Config | None = None) -> jax.Array:
    """``asc_repeat_reduce_sum``: each repeat's sum (``reduce_repeat``'s SUM) on UB; the
    result of repeat r goes to ``dst[r*dst_repeat_stride]``.

    {forms}
    """
    return _c_repeat("asc_repeat_reduce_sum", "sum", dst, src, args, "value_index", None,
                     mask_state, config)[0]


def repeat_reduce_max(dst: Any, src: Any, *args: int, order: str = "value_index",
                      spr: ReduceSpr | None = None, mask_state: Any = None,
                      config: Config | None = None) -> tuple[jax.Array, ReduceSpr]:
    """``asc_repeat_reduce_max_<order>``: each repeat's max and its first index, laid out as
    ``order`` says (``reduce_repeat``), on UB. Returns ``(dst, spr)``; ``get_reduce_max_cnt``
    reads the max over all repeats and its first index.

    {forms}
    """
    return _c_repeat("asc_repeat_reduce_max", "max", dst, src, args, order, spr, mask_state, config)


def repeat_reduce_min(dst: Any, src: Any, *args: int, order: str = "value_index",
                      spr: ReduceSpr | None = None, mask_state: Any = None,
                      config: Config | None = None) -> tuple[jax.Array, ReduceSpr]:
    """``asc_repeat_reduce_min_<order>``: as ``repeat_reduce_max`` for the min
    (``get_reduce_min_cnt`` reads its SPR).

    {forms}
    """
    return _c_repeat("asc_repeat_reduce_min", "min", dst, src, args, order, spr, mask_state, config)


def pair_reduce_sum_ub(dst: Any, src: Any, *args: int, mask_state: Any = None,
                       config: Config | None = None) -> jax.Array:
    """``asc_pair_reduce_sum`` on UB: ``pair_reduce_sum`` (sums of adjacent pairs).

    {forms}
    """
    where = "asc_pair_reduce_sum"  # the C name a user called, not this function's
    return _pair(where, _c_call(where, dst, src, args, config, mask_state))


def asc_pair_reduce_sum(*args: Any, mask_state: Any = None, dtype: Any = None,
                        config: Config | None = None) -> jax.Array:
    """``asc_pair_reduce_sum``: the C name's overloads, told apart by their arguments as C++
    does. On registers, ``asc_pair_reduce_sum(src, mask)`` returns the dst register
    (``reduce_register.asc_pair_reduce_sum``); on UB, ``asc_pair_reduce_sum(dst, src, count)``
    or ``(dst, src, repeat, dst_repeat_stride, src_block_stride, src_repeat_stride)`` returns
    the new dst (``pair_reduce_sum_ub``; the mask is ``mask_state``). ``asc_pair_reduce_sum_sync``
    is the UB count form alone.

    >>> import numpy as np, ascjax
    >>> x = np.arange(64, dtype=np.float32)
    >>> ascjax.asc_pair_reduce_sum(x, ascjax.create_mask("PAT_ALL", "float"))[:3].tolist()
    [1.0, 5.0, 9.0]
    >>> a2 = ascjax.Config(product="A2")
    >>> ascjax.asc_pair_reduce_sum(np.zeros(32, np.float32), x, 64, config=a2)[:3].tolist()
    [1.0, 5.0, 9.0]
    """
    if len(args) not in (2, 3, 6):
        raise TypeError(f"asc_pair_reduce_sum: got {len(args)} positional arguments; the forms "
                        f"are (src, mask) on registers, (dst, src, count) and (dst, src, repeat, "
                        f"dst_repeat_stride, src_block_stride, src_repeat_stride) on UB")
    if len(args) == 2:
        if mask_state is not None:
            raise TypeError("asc_pair_reduce_sum: the register form (src, mask) takes its mask "
                            "as an argument, not mask_state")
        return register_pair_reduce_sum(*args, dtype=dtype, config=config)
    check_ub_overload(config, C_API_TYPES, "asc_pair_reduce_sum", len(args),
                      "asc_pair_reduce_sum(src, mask)")
    if dtype is not None:
        raise TypeError("asc_pair_reduce_sum: dtype= belongs to the register form (src, mask); "
                        "the UB form's T is its tensors' dtype")
    return pair_reduce_sum_ub(*args, mask_state=mask_state, config=config)


for _f in (datablock_reduce_sum, datablock_reduce_max, datablock_reduce_min,
           asc_repeat_reduce_sum, repeat_reduce_max, repeat_reduce_min, pair_reduce_sum_ub):
    _f.__doc__ = _f.__doc__.replace("{forms}", _C_FORMS)
