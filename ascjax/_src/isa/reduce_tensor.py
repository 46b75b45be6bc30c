"""Reductions over LocalTensors (SPEC 5, 10): PairReduceSum, BlockReduceSum, WholeReduceSum,
RepeatReduceSum and ReduceSum.

Every instruction here reads repeats of 256 bytes through a ``RepeatPlan`` (``repeat.py``):
masked-off elements enter as +0 (``config.masked_lanes``), and every add is one IEEE add rounded
to T (half or float; subnormals kept, NaN canonical). The sums are adjacent-pair trees over
groups of a repeat's lanes: pairs (PairReduceSum), DataBlocks (BlockReduceSum) or the whole
repeat (WholeReduceSum, RepeatReduceSum); ReduceSum then sums the repeat results.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from ..config import Config
from ..formats import BLOCKS_PER_REGISTER, Format, resolve
from ..numerics.bits import from_bits, to_bits, with_nan_as
from .lanes import (
    Adder,
    check_int,
    extreme_first_lane,
    extreme_value,
    extreme_with_index,
    is_nan_bits,
    kernel,
    materialize,
    padded_pair_tree,
    pair_tree,
    select_extreme,
    sequential_sum,
    split_last,
    traced_hint,
)
from .repeat import (
    RepeatCall,
    RepeatPlan,
    active_rows,
    group_written,
    repeat_call,
    tensor_reduce_call,
)
from .vector_mask import MaskState

_ALL_PRODUCTS = ("950", "A3", "A2", "200I/500 A2", "inference AI Core", "training")
_HALF_FLOAT = ("half", "float")

# Data types per product, from each instruction's vendor page. ReduceSum's 950 row also lists
# int64_t / uint64_t (first-n form only): not emulated, JAX runs with 64-bit types off.
PAIR_REDUCE_SUM_TYPES = {p: _HALF_FLOAT for p in _ALL_PRODUCTS} | {"training": ("half",)}
BLOCK_REDUCE_SUM_TYPES = {p: _HALF_FLOAT for p in _ALL_PRODUCTS} | {"training": ("half",)}
WHOLE_REDUCE_SUM_TYPES = {p: _HALF_FLOAT for p in _ALL_PRODUCTS}
REPEAT_REDUCE_SUM_TYPES = {p: _HALF_FLOAT for p in ("950", "A2", "inference AI Core", "training")}
REDUCE_SUM_TYPES = {p: _HALF_FLOAT for p in _ALL_PRODUCTS} | {
    "950": (*_HALF_FLOAT, "int32_t", "uint32_t"), "training": ("half",)}

# ReduceSum's methods, numbered as its vendor page numbers them (关键特性说明): how the repeats'
# results are added, after a pair tree inside each repeat. 1: in order; 2: by an adjacent-pair
# tree; 3: the repeats' registers first merged into one by vector adds, then the tree in it.
REDUCE_SUM_METHODS = {"sequential": 1, "tree": 2, "vector_merge": 3}

# Each product's documented method per call form: (first-n "count" form, level-0 mask/repeat
# form). The 950's first-n form uses method 3 for REDUCE_SUM_MERGE_BYTES of data in counter mask
# mode (config.first_n_mask_mode, A17), method 2 otherwise.
REDUCE_SUM_DEFAULTS = {p: (2, 2) for p in _ALL_PRODUCTS} | {"A3": (1, 2), "A2": (1, 2)}
REDUCE_SUM_MERGE_BYTES = (256, 1024)


# --- the special registers the reductions set ------------------------------------------------

class ReduceSpr(NamedTuple):
    """The special registers a reduction leaves: arrays over the call's batch shape.

    ``sum`` (dst's type: int32 / uint32 for a 16-bit integer src): what GetReduceRepeatSumSpr
    reads; ``value`` (T) and ``index`` (uint32): the max / min and where it is, what
    GetReduceRepeatMaxMinSpr and asc_get_reduce_max_cnt / min_cnt read. ReduceRepeat and the C
    API's asc_repeat_reduce_* set them, and so do ReduceSum (``sum``) and ReduceMax / ReduceMin
    (``value``, ``index``). ``reduce_spr_reset`` gives the reset state (0s).
    """

    sum: Any
    value: Any
    index: Any


def reduce_spr_reset(dtype: Any = jnp.float16, batch: tuple = (),
                     sum_dtype: Any = None) -> ReduceSpr:
    """The SPRs before any reduction: every field 0 (``sum`` in ``sum_dtype``, default
    ``dtype``)."""
    zeros = jnp.zeros(batch, dtype)
    sums = zeros if sum_dtype is None else jnp.zeros(batch, sum_dtype)
    return ReduceSpr(sums, zeros, jnp.zeros(batch, jnp.uint32))


def spr_in(where: str, spr: Any, batch: tuple, dtype: Any, sum_dtype: Any) -> ReduceSpr:
    """The SPRs a call starts from: ``spr`` (a ``ReduceSpr``) or, for None, the reset state;
    each field an array of its type (``sum_dtype``, ``dtype``, uint32) over ``batch``."""
    if spr is None:
        return reduce_spr_reset(dtype, batch, sum_dtype)
    if not isinstance(spr, ReduceSpr):
        raise TypeError(f"{where}: spr must be a ReduceSpr (or None, the reset state), got "
                        f"{type(spr).__name__}")
    return ReduceSpr(*(jnp.broadcast_to(jnp.asarray(x, t), batch) for x, t in
                       zip(spr, (sum_dtype, dtype, jnp.uint32), strict=True)))


# --- the group reductions: one kernel for sum / max / min over pairs, blocks, repeats --------

# ReduceRepeat's ReduceOrder values (snake_case): how a repeat's max/min value and its index
# are laid out in dst.
ORDERS = ("value_index", "index_value", "only_value", "only_index")


def order_slots(order: str | None, fmt: Format) -> int:
    """dst elements one repeat's result takes: the page's dstRepStride unit (表3) over T."""
    if order in ("value_index", "index_value"):
        return 2
    if order == "only_index":  # a uint32 index, whatever T is
        return 4 // fmt.width
    return 1


def layout(value, index, order: str | None, fmt: Format):
    """``(..., R, G)`` values and int32 indexes as the ``order`` stores them: ``(..., R, slots)``.

    An index is stored as T's bits (uint16 for half, uint32 for float); ``only_index`` stores a
    uint32 whatever T is, little-endian (half: low half first). Works on tangents too (pass
    zero indexes).
    """
    if order is None:
        return value
    v, i = value[..., 0], index[..., 0]
    if order == "value_index":
        return jnp.stack([v, i.astype(v.dtype)], -1)
    if order == "index_value":
        return jnp.stack([i.astype(v.dtype), v], -1)
    if order == "only_value":
        return v[..., None]
    if fmt.width == 2:
        return jnp.stack([(i & 0xFFFF).astype(v.dtype), (i >> 16).astype(v.dtype)], -1)
    return i.astype(v.dtype)[..., None]


def extreme_index(bits, active, fmt: Format, kind: str, config: Config):
    """``select_extreme``'s index under ``config.signed_zero`` and ``config.max_min_nan``
    (its leading-axis form: faster inside the LocalTensor kernels, the same answer)."""
    leading = True
    # select_extreme orders integers by their values: a 16-bit int's bits (uint16) would
    # zero-extend, so signed ones are compared as stored (int16).
    key = bits if fmt.is_float else from_bits(bits, fmt)
    if fmt.is_float and config.signed_zero == "equal":  # -0 compares as +0: the first wins
        key = jnp.where(bits == np.array(1 << (fmt.bits - 1), bits.dtype),
                        jnp.zeros((), bits.dtype), bits)
    index, _, _ = select_extreme(key, active, fmt, kind, leading=leading)
    if fmt.is_float and config.max_min_nan == "ignore":
        ordinary = active & ~is_nan_bits(bits, fmt)
        number, any_number, _ = select_extreme(key, ordinary, fmt, kind, leading=leading)
        index = jnp.where(any_number, number, index)
    return index


def _default_readings(config: Config) -> bool:
    """A19, A21 and A22 as the emulator reads them by default (the fast max/min paths)."""
    return (config.signed_zero == "ordered" and config.max_min_nan == "propagate"
            and config.extreme_nan == "canonical")


def _value_only(spec, fmt: Format) -> bool:
    """Whether a max/min group kernel takes ``lanes.extreme_value`` (no index): under the
    default readings, for DataBlocks and ReduceRepeat's only_value."""
    return _default_readings(spec.adder.config) and spec.order in (None, "only_value")


class GroupSpec(NamedTuple):
    """A group kernel's static spec: sums or the max/min of ``group`` adjacent lanes."""

    adder: Adder
    plan: RepeatPlan
    group: int
    kind: str = "sum"
    order: str | None = None  # ReduceRepeat's layout of a max/min and its index
    fill: int = 0             # bits an empty group writes where it is written


def _plan(call: RepeatCall, outputs: int, dst_unit: int, write_empty: bool) -> RepeatPlan:
    st = call.strides
    return call.plan(st["src_blk_stride"], st["src_rep_stride"], outputs=outputs,
                     dst_rep_stride=st["dst_rep_stride"], dst_unit=dst_unit,
                     written=group_written(call.rows, outputs, write_empty))


def group_reduce(where: str, call: RepeatCall, plan: RepeatPlan, group: int, kind: str = "sum",
                 order: str | None = None, fill: int = 0,
                 dst_fmt: Format | None = None) -> jax.Array:
    """Each repeat's sum / max / min of ``group`` adjacent lanes, stored as ``plan`` says.

    ``dst_fmt``: dst's type where a sum widens (ReduceRepeat's int16 -> int32 on the 950);
    None: src's."""
    plan.check(call.src.shape[-1], call.dst.shape[-1], where)
    spec = GroupSpec(Adder(call.fmt, dst_fmt or call.fmt, call.config), plan, group, kind, order,
                     fill)
    return _groups(spec, call.dst, call.src, call.src)


def _group_sums(where: str, call: RepeatCall, plan: RepeatPlan, group: int) -> jax.Array:
    return group_reduce(where, call, plan, group)


def _groups_forward(spec: GroupSpec, d, s, _):
    # plan.active is (R, lanes): Counter mode's last repeat may be partial.
    adder, plan, group = spec.adder, spec.plan, spec.group
    fmt, active = adder.dst, plan.active
    grouped = split_last(active, group)
    group_active = grouped.any(axis=-1)
    if spec.kind == "sum":
        if fmt.is_float and group > 1 and group & (group - 1) == 0:
            # Float sums over the repeats' lanes as one flat axis (groups are power-of-two
            # runs of it): 1.2-4x faster than the leading-axis tree
            out = adder.flat_sums(plan.load_flat(s), active.reshape(-1), group)
            out = out.reshape(out.shape[:-1] + group_active.shape)
        else:
            out = adder.reduce_blocks(plan.load(s), active, group, leading=True)
        if not group_active.all():  # an all-masked group sums to +0 even when lanes are skipped
            out = jnp.where(group_active, out, adder.zeros(()))
        out = to_bits(adder.store(out), fmt)
    else:
        bits = to_bits(plan.load(s), fmt)
        bits = split_last(bits, group)
        fill = np.array(spec.fill, bits.dtype)
        if _value_only(spec, fmt):
            # No index is stored: the value straight from the order keys (2-3x faster), over
            # the repeats' lanes as one flat axis (groups are power-of-two runs of it).
            flat = plan.load_flat(s)  # sliced before any conversion (see extreme_value)
            values = flat if fmt.is_float else from_bits(to_bits(flat, fmt), fmt)
            out = extreme_value(values, active.reshape(-1), fmt, spec.kind, fill, group=group)
            out = out if fmt.is_float else to_bits(out, fmt)
            out = out.reshape(bits.shape[:-1])
            index = jnp.zeros(out.shape, jnp.int32)  # not stored
        elif (_default_readings(adder.config) and fmt.bits == 16 and group > 1
              and group & (group - 1) == 0):
            out, index, _ = extreme_with_index(plan.load_flat(s), active.reshape(-1), fmt,
                                               spec.kind, group)
            out, index = (x.reshape(bits.shape[:-1]) for x in (out, index))
        elif _default_readings(adder.config) and group % 32 == 0:
            # a whole repeat's value, then the first lane holding it (lanes.extreme_first_lane:
            # float32 ReduceRepeat<MAX> 0.41-0.56 -> 0.50-0.67 of the limit, the same runs)
            values = bits if fmt.is_float else from_bits(bits, fmt)
            out, index = extreme_first_lane(values, grouped, fmt, spec.kind, fill)
            out = to_bits(out, fmt)
        else:
            index = extreme_index(bits, grouped, fmt, spec.kind, adder.config)
            out = jnp.take_along_axis(bits, index[..., None], -1)[..., 0]
            out = with_nan_as(out, fmt, adder.config.extreme_nan)
        if not group_active.all():
            out = jnp.where(group_active, out, fill)
        out = layout(out, index, spec.order, fmt)
    if not plan.rewrites(d.shape[-1]):
        # The results get a buffer of their own first: fused into the merge with dst, XLA's CPU
        # backend loses their vectorization (strided half BlockReduceSum 2-5x slower).
        out = materialize(out)
    return from_bits(plan.store(to_bits(d, fmt), out), fmt)


def _groups_linear(spec: GroupSpec, td, ts, s):
    # Sums: the exact sum's derivative; max / min: the cotangent of the selected lane; an index
    # gets none.
    adder, plan, group = spec.adder, spec.plan, spec.group
    active = plan.active
    grouped = split_last(active, group)
    t = jnp.where(active, plan.load(ts), jnp.zeros((), ts.dtype))
    t = split_last(t, group)
    if spec.kind == "sum":
        return plan.store(td, pair_tree(t, jnp.add).astype(td.dtype))
    bits = to_bits(plan.load(s), adder.dst)
    index = extreme_index(split_last(bits, group), grouped, adder.dst,
                          spec.kind, adder.config)
    picked = jnp.take_along_axis(t, index[..., None], -1)[..., 0]
    return plan.store(td, layout(picked, jnp.zeros_like(index), spec.order, adder.dst))


_groups = kernel(_groups_forward, _groups_linear, num_diff=2)


# The mask keywords every LocalTensor repeat instruction takes (their docstrings share it).
MASK_KEYWORDS_DOC = """``is_set_mask`` (isSetMask) False makes ``mask`` a placeholder
    (``ascjax.MASK_PLACEHOLDER``) and takes the mask from ``mask_state`` (an
    ``ascjax.MaskState``; None: the power-on state). In Counter mode
    (``mask_state.mode == "counter"``) the mask is the number of elements over the whole call:
    ``ceil(mask / lanes)`` repeats, the last one partial, and ``repeat_time`` has no effect
    (A28). A mask of 0 (or repeat_time 0) leaves dst unchanged on Atlas A2/A3."""


# --- PairReduceSum --------------------------------------------------------------------------

def pair_reduce_sum(dst: Any, src: Any, repeat_time: int, mask: Any, dst_rep_stride: int,
                    src_blk_stride: int, src_rep_stride: int, *, is_set_mask: bool = True,
                    mask_state: MaskState | None = None,
                    config: Config | None = None) -> jax.Array:
    """``PairReduceSum<T>(dst, src, repeatTime, mask, dstRepStride, srcBlkStride, srcRepStride)``.

    ``dst`` and ``src`` are LocalTensors: arrays ``(..., n)`` of half or float (leading axes are
    independent tensors). Repeat r reads element e from
    ``(r*src_rep_stride + (e // epb)*src_blk_stride)*epb + e % epb`` (epb elements per 32-byte
    block) and writes ``a[2k] + a[2k+1]`` (one rounding, masked elements as +0) to
    ``r*dst_rep_stride*(lanes/2) + k``. ``mask`` is an int (the first ``mask`` elements) or
    uint64 words (bit mode); it is the same every repeat. A pair with both elements masked
    leaves dst unchanged, or writes 0 on Atlas 200I/500 A2 (``config.masked_pair`` overrides).
    Repeats run in order, so a later write to the same element wins; src is read before any
    write. Returns the new dst. ``repeat_time``, ``mask`` and the strides are static Python
    ints, checked when traced.

    {mask_keywords}

    Differentiable in ``dst`` and ``src`` as the exact operation.
    """
    where = "pair_reduce_sum"
    call = repeat_call(where, dst, src, PAIR_REDUCE_SUM_TYPES, config, repeat_time, mask,
                       is_set_mask=is_set_mask, mask_state=mask_state,
                       dst_rep_stride=dst_rep_stride, src_blk_stride=src_blk_stride,
                       src_rep_stride=src_rep_stride)
    if call.repeats == 0:
        return call.dst
    plan = pair_reduce_sum_plan(call.fmt, call.repeats, call.active, dst_rep_stride,
                                src_blk_stride, src_rep_stride, call.config.zero_masked_pairs,
                                count=call.count)
    return _group_sums(where, call, plan, 2)


def pair_reduce_sum_plan(fmt: Format, repeats: int, active: np.ndarray, dst_rep_stride: int,
                         src_blk_stride: int, src_rep_stride: int,
                         zero_masked_pairs: bool, count: int | None = None) -> RepeatPlan:
    """Where PairReduceSum reads and writes (the instruction, its checks and ``viz`` use it).

    Output k of repeat r is ``a[2k] + a[2k+1]``; a pair with both elements masked (by the
    mask, or past Counter mode's ``count``) writes nothing unless ``zero_masked_pairs``.
    """
    half = fmt.lanes // 2
    written = group_written(active_rows(active, repeats, count), half, zero_masked_pairs)
    return RepeatPlan(fmt, repeats, src_blk_stride, src_rep_stride, tuple(active.tolist()),
                      count=count, outputs=half, dst_rep_stride=dst_rep_stride, dst_unit=half,
                      written=written)


# --- BlockReduceSum -------------------------------------------------------------------------

def block_reduce_sum(dst: Any, src: Any, repeat_time: int, mask: Any, dst_rep_stride: int,
                     src_blk_stride: int, src_rep_stride: int, *, is_set_mask: bool = True,
                     mask_state: MaskState | None = None,
                     config: Config | None = None) -> jax.Array:
    """``BlockReduceSum<T>(dst, src, repeatTime, mask, dstRepStride, srcBlkStride, srcRepStride)``.

    ``dst``, ``src``: LocalTensors ``(..., n)`` of half or float (training series: half);
    leading axes are independent tensors. For each repeat r and each DataBlock b of its 8, the
    block's elements (masked ones as +0) are summed by an adjacent-pair tree,
    ``((e0+e1)+(e2+e3))+...``, each add rounded to T, and written to element
    ``(r*dst_rep_stride + 0)*8 + b`` (dst_rep_stride is in units of 8 elements: 16 bytes for
    half, 32 for float). ``mask``: an int (the first ``mask`` elements) or uint64 words (bit
    mode), the same every repeat. A block with no active element leaves dst unchanged on
    Atlas A2 / A3 and writes +0 elsewhere (the ReduceDataBlock page; inference AI Core and
    training **assumed**, A11; ``config.empty_block`` forces one reading). Returns
    the new dst; ``repeat_time`` in [0, 255], the mask and strides are static Python ints.

    {mask_keywords}

    Differentiable in ``dst`` and ``src`` as the exact operation.
    """
    where = "block_reduce_sum"
    call = repeat_call(where, dst, src, BLOCK_REDUCE_SUM_TYPES, config, repeat_time, mask,
                       is_set_mask=is_set_mask, mask_state=mask_state,
                       dst_rep_stride=dst_rep_stride, src_blk_stride=src_blk_stride,
                       src_rep_stride=src_rep_stride)
    if call.repeats == 0:
        return call.dst
    plan = _plan(call, BLOCKS_PER_REGISTER, BLOCKS_PER_REGISTER,
                 call.config.empty_block_fill())
    return _group_sums(where, call, plan, call.fmt.per_block)


# --- WholeReduceSum / RepeatReduceSum -------------------------------------------------------

def whole_reduce_sum(dst: Any, src: Any, mask: Any, repeat_time: int, dst_rep_stride: int,
                     src_blk_stride: int, src_rep_stride: int, *, is_set_mask: bool = True,
                     mask_state: MaskState | None = None,
                     config: Config | None = None) -> jax.Array:
    """``WholeReduceSum<T>(dst, src, mask, repeatTimes, dstRepStride, srcBlkStride, srcRepStride)``.

    Note the Ascend argument order: mask before repeatTimes. For each repeat r, its lanes
    (masked ones as +0) are summed by one adjacent-pair tree over the whole 256-byte repeat
    (7 levels for half, 6 for float), each add rounded to T, and the sum is written to element
    ``r*dst_rep_stride`` (in elements). Otherwise as ``block_reduce_sum``; a repeat always has
    an active lane (the mask checks forbid an empty one; Counter mode's repeats all have one).

    {mask_keywords}

    Differentiable in ``dst`` and ``src`` as the exact operation.
    """
    where = "whole_reduce_sum"
    call = repeat_call(where, dst, src, WHOLE_REDUCE_SUM_TYPES, config, repeat_time, mask,
                       is_set_mask=is_set_mask, mask_state=mask_state,
                       dst_rep_stride=dst_rep_stride, src_blk_stride=src_blk_stride,
                       src_rep_stride=src_rep_stride)
    return _whole(where, call)


def repeat_reduce_sum(dst: Any, src: Any, repeat_time: int, mask: int, dst_blk_stride: int,
                      src_blk_stride: int, dst_rep_stride: int, src_rep_stride: int, *,
                      is_set_mask: bool = True, mask_state: MaskState | None = None,
                      config: Config | None = None) -> jax.Array:
    """``RepeatReduceSum<T>(dst, src, repeatTime, mask, dstBlkStride, srcBlkStride, dstRepStride,
    srcRepStride)``: ``whole_reduce_sum`` with a continuous mask only.

    ``dst_blk_stride`` has no effect (vendor page: "invalid, any value"); it is still checked to
    be an int. Not available on Atlas A3 and Atlas 200I/500 A2. ``is_set_mask`` and
    ``mask_state`` as ``whole_reduce_sum`` (with ``is_set_mask=False`` the state's words may
    hold any bit mask).
    """
    where = "repeat_reduce_sum"
    if is_set_mask is True and (not isinstance(mask, (int, np.integer))
                                or isinstance(mask, (bool, np.bool_))):
        raise TypeError(f"{where}: mask must be an int (continuous mode only), got {mask!r}")
    check_int(dst_blk_stride, -2**31, 2**31 - 1, where=where, arg="dst_blk_stride")
    return _whole(where, repeat_call(where, dst, src, REPEAT_REDUCE_SUM_TYPES, config,
                                     repeat_time, mask, is_set_mask=is_set_mask,
                                     mask_state=mask_state, dst_rep_stride=dst_rep_stride,
                                     src_blk_stride=src_blk_stride,
                                     src_rep_stride=src_rep_stride))


def _whole(where: str, call: RepeatCall) -> jax.Array:
    if call.repeats == 0:
        return call.dst
    return _group_sums(where, call, _plan(call, 1, 1, True), call.fmt.lanes)


# --- ReduceSum ------------------------------------------------------------------------------

def tensor_sum(w, adder: Adder, method: int, merge: str):
    """ReduceSum's order on working values ``(..., R, lanes)`` (masked lanes already +0).

    Method 1: each repeat summed by an adjacent-pair tree, the R results added in order,
    ``((s0 + s1) + s2) + ...``. Method 2: the same repeat sums, then an adjacent-pair tree over
    them padded with +0 to a power of two. Method 3: the R registers merged lane by lane into
    one, in repeat order ``((r0 + r1) + r2) + ...`` (``merge="sequential"``) or by an
    adjacent-pair tree of registers padded with +0 registers (``merge="tree"``), then the
    adjacent-pair tree over that register's lanes. Every add is ``adder.add``.
    """
    if method == 3:
        registers = jnp.moveaxis(w, -2, -1)  # (..., lanes, R): lane-wise adds over repeats
        if merge == "tree":
            merged = padded_pair_tree(registers, adder.add, adder.zeros(()))
        else:
            merged = sequential_sum(registers, adder.add)
        return pair_tree(merged, adder.add)
    sums = pair_tree(w, adder.add)
    if method == 2:
        return padded_pair_tree(sums, adder.add, adder.zeros(()))
    return sequential_sum(sums, adder.add)


def reduce_sum_method(method: int | str | None, config: Config, count: int | None,
                      fmt: Format) -> int:
    """The page's number of ``method`` (a number or a ``REDUCE_SUM_METHODS`` name), or the
    product's default for the form (``count`` for the first-n form, None for level 0)."""
    if method is None:
        if count is None:
            return REDUCE_SUM_DEFAULTS[config.product][1]
        lo, hi = REDUCE_SUM_MERGE_BYTES
        if (config.product == "950" and config.first_n_mask_mode == "counter"
                and lo <= count * fmt.bits // 8 <= hi):
            return 3
        return REDUCE_SUM_DEFAULTS[config.product][0]
    if isinstance(method, str) and method in REDUCE_SUM_METHODS:
        return REDUCE_SUM_METHODS[method]
    if (isinstance(method, (int, np.integer)) and not isinstance(method, (bool, np.bool_))
            and int(method) in REDUCE_SUM_METHODS.values()):
        return int(method)
    choices = ", ".join([*map(str, REDUCE_SUM_METHODS.values()), *map(repr, REDUCE_SUM_METHODS)])
    if isinstance(method, jax.core.Tracer):
        raise TypeError(f"reduce_sum: method is a traced value{traced_hint(method)}")
    raise ValueError(f"reduce_sum: method={method!r} is not one of {choices}")


def check_tmp_tensor(where: str, tmp: Any, prototype: str) -> None:
    """sharedTmpBuffer is None or an array, checked before the other arguments: anything else
    is most often the buffer left out, the next argument (a count, a mask) in its place."""
    if tmp is None or (hasattr(tmp, "shape") and hasattr(tmp, "dtype")):
        return
    value = f" {tmp!r}" if isinstance(tmp, (int, float, np.number)) else ""
    raise TypeError(f"{where}: shared_tmp_buffer must be None or a LocalTensor of T (an array), "
                    f"got {type(tmp).__name__}{value}: the third argument is the buffer, "
                    f"{prototype} (None where the kernel passes none)")


def check_tmp_dtype(where: str, fmt: Format, tmp: Any) -> None:
    """A given sharedTmpBuffer holds T (ReduceSum, ReduceMax, ReduceMin: a LocalTensor<T>)."""
    if np.dtype(tmp.dtype) != fmt.storage_dtype:
        raise TypeError(f"{where}: shared_tmp_buffer dtype {np.dtype(tmp.dtype)} differs from "
                        f"T {fmt.name} ({fmt.storage_dtype})")


def reduce_sum_tmp_size(dtype: Any, first_repeats: int) -> int:
    """Elements of T (``dtype``) ReduceSum's method 2 requires of ``sharedTmpBuffer``
    (关键特性说明) for firstMaxRepeat ``first_repeats``: ``DivCeil(firstMaxRepeat,
    elementsPerBlock) * elementsPerBlock``, the first pass's one output per repeat rounded up
    to whole DataBlocks (no index: half ReduceMax's ``2 *``). ``ascjax.reduce_sum_tmp_size(
    "float", 4)`` is 8."""
    fmt = resolve(dtype, where="reduce_sum_tmp_size")
    check_int(first_repeats, 0, 2**31 - 1, where="reduce_sum_tmp_size", arg="first_repeats")
    epb = fmt.per_block
    return -(-first_repeats // epb) * epb


def _check_sum_tmp(where: str, call, tmp: Any, method: int) -> None:
    if tmp is None:  # the work space is not modelled; None is accepted unchecked
        return
    check_tmp_dtype(where, call.fmt, tmp)
    if method != 2:  # the page: method 1 never uses it; method 3 gives no size
        return
    need = reduce_sum_tmp_size(call.fmt, call.first_repeats)
    have = tmp.shape[-1] if len(tmp.shape) else 0
    if have < need:
        raise ValueError(f"{where}: shared_tmp_buffer has {have} elements; method 2 requires "
                         f"at least {need} ({need * call.fmt.width} bytes) for firstMaxRepeat="
                         f"{call.first_repeats} (the page: DivCeil(firstMaxRepeat, "
                         f"{call.fmt.per_block}) * {call.fmt.per_block}; methods 1 and 3 take "
                         f"any size)")


def reduce_sum(dst: Any, src: Any, shared_tmp_buffer: Any, *args: Any,
               method: int | str | None = None, spr: ReduceSpr | None = None,
               is_set_mask: bool = True, mask_state: MaskState | None = None,
               config: Config | None = None) -> tuple[jax.Array, ReduceSpr]:
    """``ReduceSum<T>``: the sum of a tensor, written to ``dst[..., 0]``. Two call forms:

    * first n elements: ``reduce_sum(dst, src, shared_tmp_buffer, count)``; repeat r covers
      elements ``[r*lanes, (r+1)*lanes)``, the last one partly (its other lanes +0);
    * level 0: ``reduce_sum(dst, src, shared_tmp_buffer, mask, repeat_time, src_rep_stride)``;
      repeat r reads ``(r*src_rep_stride + e // epb)*epb + e % epb`` under ``mask`` (int or
      uint64 words); ``repeat_time`` up to 2**31 - 1 (the page), ``src_rep_stride`` in
      [0, 65535].

    ``repeat.tensor_reduce_call`` checks both forms for ReduceSum, ReduceMax and ReduceMin.
    ``repeat_time`` 0 leaves dst and the SPRs unchanged (A26).

    The call also sets the sum register: returns ``(dst, spr)``, a ``ReduceSpr`` built on
    ``spr`` (the registers before the call; None: reset) whose ``sum`` (T) is the sum written to
    ``dst[..., 0]``, bit for bit; ``value`` and ``index`` keep their bits.
    ``get_reduce_repeat_sum_spr`` reads it (GetReduceRepeatSumSpr: "the sum of the first n").
    The page supports that getter after the first-n form only; the level-0 form sets the same
    register here (A47).

    ``method`` is the vendor page's number (方式一/二/三; SPEC 10's "mode 1" / "mode 2" are
    numbered the other way round) or its name for how the repeats are added; every
    add is one IEEE add rounded to T (the 950's int32_t / uint32_t: an integer add that wraps,
    or saturates under ``config.int_overflow``, where the order shows):

    * 1, ``"sequential"``: each repeat summed by an adjacent-pair tree, then the repeat results
      in order, ``((s0 + s1) + s2) + ...``;
    * 2, ``"tree"``: the same repeat sums, then an adjacent-pair tree over them padded with +0
      to a power of two (A12);
    * 3, ``"vector_merge"``: the repeats' registers added lane by lane into one register,
      ``acc = r0 + r1; acc = acc + r2; ...`` (``config.vector_merge="tree"``: an adjacent-pair
      tree of registers padded with +0 registers; A18), masked lanes +0, then the
      adjacent-pair tree over that register's lanes.

    ``method=None`` takes the product's documented method: Atlas A2
    and A3 use 1 for the first-n form and 2 for the level-0 form; the other products use 2,
    except that the 950's first-n form with 256 to 1024 bytes of data uses 3 (it runs in
    counter mask mode, A17; ``config.first_n_mask_mode="normal"`` gives 2).
    ``shared_tmp_buffer`` is the vendor's work space; the emulator neither reads nor returns
    it. None is accepted and not checked (the work space is not modelled). A buffer that is
    given must be a LocalTensor of T and, where the method used is 2, hold the page's
    ``DivCeil(firstMaxRepeat, elementsPerBlock) * elementsPerBlock`` elements on its last axis
    (``ascjax.reduce_sum_tmp_size``; firstMaxRepeat is ``repeat_time``, or ``count // lanes`` and at
    least 1); methods 1 and 3 take any size. Only ``dst[..., 0]`` changes.

    ``is_set_mask`` (isSetMask, first-n form only): on Atlas A2/A3, False makes ``count`` a
    placeholder and the count is ``mask_state.low``, the Counter-mode mask SetVectorMask
    wrote (the form switches to Counter mode itself, so ``mask_state.mode`` does not matter;
    guide scenario 3); on the other products the page says the flag has no effect and
    ``count`` is used. A count of 0 leaves dst unchanged on Atlas A2/A3 (page). The level-0
    form has no isSetMask and sets its own mask; it runs in Normal mode only (the page does not
    describe it under a Counter-mode ``mask_state``, which raises).

    Differentiable in ``dst`` and ``src`` (half, float) as the exact operation; the SPRs carry
    no gradient.

    >>> import numpy as np, ascjax
    >>> x = np.ones(640, np.float16); x[0] = 2047; x[128::128] = 2  # repeat sums 2174, 129 x 4
    >>> dst = np.zeros(1, np.float16)
    >>> [float(ascjax.reduce_sum(dst, x, None, 640, config=ascjax.Config(product=p))[0][0])
    ...  for p in ("950", "A2")]
    [2692.0, 2688.0]
    >>> dst, spr = ascjax.reduce_sum(np.zeros(1, np.float32), np.ones(128, np.float32), None, 128)
    >>> float(ascjax.get_reduce_repeat_sum_spr(spr))  # GetReduceRepeatSumSpr<float>()
    128.0
    """
    where = "reduce_sum"
    check_tmp_tensor(where, shared_tmp_buffer, "reduce_sum(dst, src, shared_tmp_buffer, count) "
                     "or (dst, src, shared_tmp_buffer, mask, repeat_time, src_rep_stride)")
    call = tensor_reduce_call(where, dst, src, REDUCE_SUM_TYPES, config, args,
                              is_set_mask=is_set_mask, mask_state=mask_state)
    config, fmt, dst = call.config, call.fmt, call.dst
    method = reduce_sum_method(method, config, call.count, fmt)
    _check_sum_tmp(where, call, shared_tmp_buffer, method)
    spr = spr_in(where, spr, dst.shape[:-1], fmt.storage_dtype, fmt.storage_dtype)
    if call.plan is None:
        return dst, spr
    if dst.shape[-1] < 1:
        raise ValueError(f"{where}: dst has no element to write the sum to")
    out = _reduce_sum((Adder(fmt, fmt, config), call.plan, method), dst, call.src)
    # the sum register holds what dst[0] got (A47 for the level-0 form); no gradient
    return out, spr._replace(sum=jax.lax.stop_gradient(out[..., 0]))


def _reduce_sum_forward(spec, d, s):
    adder, plan, method = spec
    w = adder.masked(adder.load(plan.load(s)), plan.active)
    total = tensor_sum(w, adder, method, adder.config.vector_merge)
    bits = to_bits(d, adder.dst).at[..., 0].set(to_bits(adder.store(total), adder.dst))
    return from_bits(bits, adder.dst)


def _reduce_sum_linear(spec, td, ts):
    # Tangents are real numbers: the derivative of the exact sum may use any order.
    _, plan, _ = spec
    t = jnp.where(plan.active, plan.load(ts), jnp.zeros((), ts.dtype))
    return td.at[..., 0].set(jnp.sum(t, axis=(-2, -1)))


_reduce_sum = kernel(_reduce_sum_forward, _reduce_sum_linear, num_diff=2)


for _f in (pair_reduce_sum, block_reduce_sum, whole_reduce_sum):
    _f.__doc__ = _f.__doc__.replace("{mask_keywords}", MASK_KEYWORDS_DOC)
