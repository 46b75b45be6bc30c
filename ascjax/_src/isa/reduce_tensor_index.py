"""ReduceMax / ReduceMin over LocalTensors, with their index (AscendC::ReduceMax,
AscendC::ReduceMin; vendor pages cpp-memory/ReduceMax.md, ReduceMin.md).

Both read their elements as ReduceSum does (``repeat.tensor_reduce_call``: the first-n form or
the level-0 mask/repeat form) and write the extreme to ``dst[0]`` and, with ``calIndex``, its
index to ``dst[1]``, stored as the bit pattern of an unsigned integer of T's width (the pages:
read it back with ``reinterpret_cast<uint16_t*>`` for half, ``<uint32_t*>`` for float). The
index is therefore exact for every value: index 2049 in a half dst is the bit pattern 0x0801
(a subnormal), not the half value 2049, and 40000 is 0x9C40.

Max and min are exact: no rounding, no order of comparison can change a bit, so the vendor's
rounds over the repeats (the ``sharedTmpBuffer`` passes) are not replayed. Ties go to the
smallest index (the pages); the value is moved, bits and all. The 950's int64_t / uint64_t rows
are not emulated (JAX's x64 is off).

Both also set the max / min SPRs GetReduceRepeatMaxMinSpr reads (``ReduceSpr.value`` and
``.index``): they take and return a ``ReduceSpr``, as ``reduce_repeat`` does. The value is the
one written to ``dst[0]``; the index, which the GetReduceRepeatMaxMinSpr page calls "not
accurate" after ReduceMax / ReduceMin, is the index the call finds (A46), on every form (A47).
"""

from __future__ import annotations

import functools
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from ..config import Config
from ..formats import Format, resolve
from ..numerics.bits import from_bits, to_bits, with_nan_as
from .lanes import check_flag, check_int, kernel, merge_last
from .reduce_tensor import ReduceSpr, check_tmp_dtype, check_tmp_tensor, extreme_index, spr_in
from .repeat import RepeatPlan, tensor_reduce_call

_HALF_FLOAT = ("half", "float")
# Data types per product (数据类型 on both pages; the 950 also takes int64_t / uint64_t in the
# first-n form, not emulated).
REDUCE_MAX_TYPES = {"950": ("int16_t", "uint16_t", "half", "int32_t", "uint32_t", "float"),
                    "A3": _HALF_FLOAT, "A2": _HALF_FLOAT, "200I/500 A2": _HALF_FLOAT,
                    "inference AI Core": _HALF_FLOAT, "training": ("half",)}
REDUCE_MIN_TYPES = REDUCE_MAX_TYPES
# The pages: with half, indices up to 65535 (uint16_t) only; the 950's 16-bit integers store
# their index in the same 16 bits (A27).
INDEX_MAX_16 = 65535
# Products that need no sharedTmpBuffer (the 950: "任意大小的sharedTmpBuffer").
NO_TMP_PRODUCTS = ("950",)


def shared_tmp_size(dtype: Any, first_repeats: int, cal_index: bool) -> int:
    """Elements of T (``dtype``) ReduceMax / ReduceMin require of ``sharedTmpBuffer``
    (关键特性说明), as written there.

    ``first_repeats`` is the pages' firstMaxRepeat. Without the index only the first pass's
    ``2*firstMaxRepeat`` outputs, rounded up to whole DataBlocks; with it, each later pass's
    outputs too (the page's code stops after a third pass). ``ascjax.shared_tmp_size("half",
    8, True)`` is 32.
    """
    fmt = resolve(dtype, where="shared_tmp_size")
    check_int(first_repeats, 0, 2**31 - 1, where="shared_tmp_size", arg="first_repeats")
    epb, epr = fmt.per_block, fmt.lanes

    def blocks(n):  # rounded up to whole 32-byte DataBlocks
        return -(-n // epb) * epb

    iter1 = first_repeats * 2
    if not cal_index:
        return blocks(iter1)
    iter2_start = blocks(iter1)
    iter2 = -(-iter1 // epr) * 2
    iter2_end = blocks(iter2)
    if iter2 <= 2:
        return iter2_start + iter2_end
    iter3 = -(-iter2 // epr) * 2
    return iter2_start + iter2_end + blocks(iter3)


def reduce_max(dst: Any, src: Any, shared_tmp_buffer: Any, *args: Any, cal_index: Any = None,
               spr: ReduceSpr | None = None,
               config: Any = None) -> tuple[jax.Array, ReduceSpr]:
    """``ReduceMax<T>``: the largest element of a tensor to ``dst[0]``, its index to ``dst[1]``.

    Call forms (arguments in the page's order; ``cal_index``, the page's calIndex, may be given
    positionally in its place or as a keyword, default False):

    * first n elements: ``reduce_max(dst, src, shared_tmp_buffer, count[, cal_index])``; the
      index is the element's position in src;
    * level 0: ``reduce_max(dst, src, shared_tmp_buffer, mask, repeat_time, src_rep_stride[,
      cal_index])``; ``mask`` an int (continuous mode) or uint64 words (bit mode), the same
      every repeat; ``repeat_time`` up to 2**31 - 1; element e of repeat r is src element
      ``(r*src_rep_stride + e // epb)*epb + e % epb``, and that offset is its index
      (``config.reduce_max_index``, A25).

    ``dst``, ``src``: LocalTensors ``(..., n)`` of T (half or float; the 950 also int16_t,
    uint16_t, int32_t, uint32_t; the training series half only); leading axes are independent
    tensors. Returns ``(dst, spr)``. The new dst: ``dst[..., 0]`` is the maximum's bits; with
    ``cal_index``, ``dst[..., 1]`` holds its index as a uint16 (16-bit T) or uint32 bit pattern;
    nothing else changes. Several maxima: the smallest index (the page). -0 < +0 (A22); a NaN
    among the active elements is the result, the first one by index (A21), written as the
    type's quiet NaN (A19). repeat_time 0 leaves dst and the SPRs unchanged (A26); so does
    count 0 on Atlas A2/A3 (the page), which other products reject.

    The call also sets the max / min registers: the ``spr`` returned is a ``ReduceSpr`` built
    on the one passed (the registers before the call; None: reset), with ``value`` (T) the bits
    written to ``dst[..., 0]`` and ``index`` (uint32) the index this call finds, the one
    ``dst[..., 1]`` gets with ``cal_index`` (given or not; as ``config.reduce_max_index`` says,
    A25); ``sum`` keeps its bits. ``get_reduce_repeat_max_min_spr`` reads them
    (GetReduceRepeatMaxMinSpr). That page gives the exact value but says the index it reads
    after ReduceMax / ReduceMin is "not accurate" (take the index from dst): the exact one here
    is assumed (A46). It supports the continuous case only (srcRepStride 8, not Counter mode);
    the other forms set the registers the same way here (A47).

    ``shared_tmp_buffer`` (a LocalTensor of T) is the vendor's work space: its contents are not
    emulated, but on every product but the 950 it must hold the page's minimum
    (``ascjax.shared_tmp_size``; A27); on the 950 anything, None included, is accepted. With
    ``cal_index`` and a 16-bit T, a call that can reach an index above 65535 raises (the page:
    half supports indices up to 65535).

    Differentiable in ``dst`` and ``src``: the cotangent of ``dst[0]`` goes to the selected
    element of src; the index and the SPRs get none.

    >>> import numpy as np, ascjax
    >>> x = np.array([1, 5, 3, 5] + [0] * 124, np.float16)
    >>> out, spr = ascjax.reduce_max(np.zeros(2, np.float16), x, x, 128, 1, 8, True)
    >>> float(out[0]), int(np.asarray(out).view(np.uint16)[1]), float(spr.value)
    (5.0, 1, 5.0)
    """
    return _reduce_extreme("reduce_max", "max", REDUCE_MAX_TYPES, dst, src, shared_tmp_buffer,
                           args, cal_index, spr, config)


def reduce_min(dst: Any, src: Any, shared_tmp_buffer: Any, *args: Any, cal_index: Any = None,
               spr: ReduceSpr | None = None,
               config: Any = None) -> tuple[jax.Array, ReduceSpr]:
    """``ReduceMin<T>``: ``reduce_max`` for the smallest element (-0 < +0, so the min of -0
    and +0 is -0; A22), same forms, checks, index storage and ties (smallest index); returns
    ``(dst, spr)``, the min and its index in ``spr.value`` / ``spr.index`` (A46, A47)."""
    return _reduce_extreme("reduce_min", "min", REDUCE_MIN_TYPES, dst, src, shared_tmp_buffer,
                           args, cal_index, spr, config)


def _check_cal_index(where: str, positional: Any, keyword: Any) -> bool:
    if positional is not None and keyword is not None:
        raise TypeError(f"{where}: cal_index given both positionally and as a keyword")
    value = keyword if positional is None else positional
    if value is None:
        return False
    return check_flag(value, where=where, arg="cal_index", meaning="the page's calIndex")


class _Spec(NamedTuple):
    """The static side of one call: hashable, so the kernel compiles once per spec."""

    plan: RepeatPlan
    kind: str           # "max" | "min"
    cal_index: bool
    config: Config

    @property
    def fmt(self) -> Format:
        return self.plan.fmt


@functools.cache
def _layout(plan: RepeatPlan, reading: str) -> tuple[np.ndarray, np.ndarray | None]:
    """``(index, order)``: the index each of the ``R*lanes`` elements reports (A25), and the
    active elements sorted by index where the repeat-then-lane order is not already sorted
    (overlapping repeats, src_rep_stride < 8); None where it is."""
    if reading == "repeat" and plan.count is None:
        index = np.arange(plan.repeats)[:, None] * plan.fmt.lanes + np.arange(plan.fmt.lanes)
    else:
        index = plan.reads
    index = index.ravel()
    picked = np.nonzero(plan.active.ravel())[0]
    if np.all(np.diff(index[picked]) > 0):
        return index, None
    return index, picked[np.argsort(index[picked], kind="stable")]


def _check_tmp(where: str, call, tmp: Any, cal_index: bool) -> None:
    if call.config.product in NO_TMP_PRODUCTS:
        return
    if tmp is None or not hasattr(tmp, "shape") or not hasattr(tmp, "dtype"):
        raise TypeError(f"{where}: product {call.config.product!r} needs a sharedTmpBuffer (a "
                        f"LocalTensor of {call.fmt.name}), got {type(tmp).__name__}")
    check_tmp_dtype(where, call.fmt, tmp)
    need = shared_tmp_size(call.fmt, call.first_repeats, cal_index)
    have = tmp.shape[-1] if tmp.ndim else 0
    if have < need:
        raise ValueError(f"{where}: shared_tmp_buffer has {have} elements; the page requires at "
                         f"least {need} ({need * call.fmt.width} bytes) for firstMaxRepeat="
                         f"{call.first_repeats}, cal_index={cal_index} on product "
                         f"{call.config.product!r}")


def _reduce_extreme(where, kind, table, dst, src, tmp, args, cal_index, spr, config):
    check_tmp_tensor(where, tmp, f"{where}(dst, src, shared_tmp_buffer, count[, cal_index]) or "
                     f"(dst, src, shared_tmp_buffer, mask, repeat_time, src_rep_stride[, "
                     f"cal_index])")
    call = tensor_reduce_call(where, dst, src, table, config, args, optional=("cal_index",))
    cal_index = _check_cal_index(where, call.extra[0], cal_index)
    dtype = call.fmt.storage_dtype
    spr = spr_in(where, spr, call.dst.shape[:-1], dtype, dtype)
    if call.plan is None:
        return call.dst, spr
    fmt, plan, config = call.fmt, call.plan, call.config
    if call.dst.shape[-1] < 1 + cal_index:
        raise ValueError(f"{where}: dst has {call.dst.shape[-1]} element(s); the "
                         f"{'value and its index need 2' if cal_index else 'value needs 1'}")
    _check_tmp(where, call, tmp, cal_index)
    index, _ = _layout(plan, config.reduce_max_index)
    top = int(index[plan.active.ravel()].max())
    if cal_index and fmt.bits == 16 and top > INDEX_MAX_16:
        raise ValueError(f"{where}: with cal_index, a {fmt.name} tensor's index can reach {top}; "
                         f"the page supports indices up to {INDEX_MAX_16} (uint16_t) only")
    spec = _Spec(plan, kind, cal_index, config)
    out = _extreme(spec, call.dst, call.src, call.src)
    # The SPRs: the value dst[0] got, the index found (A46); no gradient. With calIndex the
    # index is dst[1]'s bits: no second pass over src.
    value = jax.lax.stop_gradient(out[..., 0])
    if cal_index:
        index = to_bits(jax.lax.stop_gradient(out[..., 1]), fmt).astype(jnp.uint32)
    else:
        index = _spr_index(spec, jax.lax.stop_gradient(call.src))
    return out, spr._replace(value=value, index=index)


def _candidates(spec: _Spec, x):
    """``x``'s elements ``(..., N)`` in index order (the first active one holding the extreme
    then has the smallest index), their active mask and indices. Floats as bits, integers as
    stored: ``order_key`` orders both."""
    index, order = _layout(spec.plan, spec.config.reduce_max_index)
    w = spec.plan.load(x)
    w = merge_last(w)
    if order is None:
        return w, spec.plan.active.ravel(), index
    return w[..., order], np.ones(order.size, bool), index[order]


def _select(spec: _Spec, s):
    """The candidates (bits), their indices and the position of the selected one
    (``config.signed_zero``, A22; ``config.max_min_nan``, A21)."""
    fmt = spec.fmt
    w, active, index = _candidates(spec, to_bits(s, fmt) if fmt.is_float else s)
    return w, index, extreme_index(w, active, fmt, spec.kind, spec.config)


def _extreme_forward(spec: _Spec, d, s, _):
    fmt = spec.fmt
    w, index, pos = _select(spec, s)
    value = jnp.take_along_axis(w, pos[..., None], axis=-1)[..., 0]
    value = with_nan_as(value, fmt, spec.config.extreme_nan)  # A19
    out = (to_bits(d, fmt) if fmt.is_float else d).at[..., 0].set(value)
    if spec.cal_index:  # the index's unsigned bit pattern in T's width
        unsigned = jnp.asarray(index, jnp.uint32)[pos].astype(fmt.bits_dtype)
        if not fmt.is_float:
            unsigned = lax.bitcast_convert_type(unsigned, fmt.storage_dtype)
        out = out.at[..., 1].set(unsigned)
    return from_bits(out, fmt) if fmt.is_float else out


def _extreme_linear(spec: _Spec, td, ts, s):
    # The selected element's tangent lands in dst[0]; the index slot gets none.
    _, _, pos = _select(spec, s)
    t, _, _ = _candidates(spec, ts)
    out = td.at[..., 0].set(jnp.take_along_axis(t, pos[..., None], axis=-1)[..., 0])
    if spec.cal_index:
        out = out.at[..., 1].set(jnp.zeros((), td.dtype))
    return out


_extreme = kernel(_extreme_forward, _extreme_linear, num_diff=2)


def _spr_index_forward(spec: _Spec, s):
    """The index the SPR gets: the selected element's (``dst[1]``'s with calIndex), uint32."""
    _, index, pos = _select(spec, s)
    return jnp.asarray(index, jnp.uint32)[pos]


_spr_index = kernel(_spr_index_forward)
