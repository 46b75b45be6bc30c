"""GatherMask (class library, LocalTensor) and ``asc_reduce`` (C API on UB): compaction of the
elements a gather mask selects (cpp-memory/GatherMask.md, c-memory/asc_reduce.md).

Repeat r reads its elements from src0 through the strides as every repeat instruction does
(element e at ``(r*src0RepeatStride + (e // epb)*src0BlockStride)*epb + e % epb``, strides in
32-byte DataBlocks). The gather mask gives one bit per element, 1 = keep: a built-in pattern
(``src1Pattern`` 1..7, the same every repeat) or a user tensor of uint8 / uint16 / uint32 words
(the width of T) read LSB first, bit e of the repeat's bit string at word ``e // bits``, the
repeat's string starting ``r*src1RepeatStride`` DataBlocks into src1 ("迭代内src1Pattern连续消耗").
Every kept element, in repeat then element order, is written to dst from element 0 on; the
count of them is rsvdCnt. Data movement only: every bit is kept (NaN payloads, -0, subnormals).

reduceMode false (Normal): each repeat covers 256 bytes (``lanes`` elements), ``mask`` has no
effect. reduceMode true (Counter): on the 950, Atlas A2/A3 and Atlas 200I/500 A2 each of the
``repeatTimes`` repeats covers ``mask`` elements (配置方式一; past the first 256 bytes a repeat
goes on through the block stride, A40); on Atlas inference AI Core ``mask`` is the total over
the call (配置方式二): ``ceil(mask / lanes)`` repeats, the last one partial, repeatTimes has no
effect.

64-bit types: none on these pages. The rsvdCnt out-parameter (uint64_t) is returned as uint32
(JAX's x64 is off; a count never exceeds the UB's elements).
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from .. import native
from ..config import Config
from ..formats import DATABLOCK_BYTES, Format
from ..numerics.bits import U32, from_bits, to_bits
from .lanes import (
    as_array,
    batch_index,
    check_batch,
    check_flag,
    check_int,
    first_true,
    kernel,
    merge_last,
    runtime_check,
    split_last,
    struct_fields,
    traced_hint,
)
from .repeat import RepeatPlan, fit_last_axis, same_type_tensors
from .squeeze import source_lanes, word_source_lanes

_B16_B32 = ("int16_t", "uint16_t", "half", "int32_t", "uint32_t", "float")
# 数据类型 tables: T per product (src0 = dst; the user pattern is the unsigned type of T's width).
GATHER_MASK_TYPES = {
    "950": ("int8_t", "uint8_t", "int16_t", "uint16_t", "half", "bfloat16_t", "int32_t",
            "uint32_t", "float"),
    "A3": _B16_B32 + ("bfloat16_t",),
    "A2": _B16_B32 + ("bfloat16_t",),
    "200I/500 A2": _B16_B32,
    "inference AI Core": _B16_B32,
}
PATTERN_TYPES = {8: "uint8_t", 16: "uint16_t", 32: "uint32_t"}
# Built-in patterns per product (功能说明): inference AI Core has modes 1-6 only.
PATTERN_MODES = {p: tuple(range(1, 8)) for p in GATHER_MASK_TYPES} | {
    "inference AI Core": tuple(range(1, 7))}
# Counter mode's mask is the count over the whole call (配置方式二) here, per repeat elsewhere.
COUNTER_PER_CALL = ("inference AI Core",)
# asc_reduce: Atlas A2 / A3, uint16_t and uint32_t (its prototypes).
ASC_REDUCE_TYPES = {"A3": ("uint16_t", "uint32_t"), "A2": ("uint16_t", "uint32_t")}

# GatherMaskParams' field widths (asc_reduce's prototype: uint8_t block / src1 strides, uint16_t
# src0 repeat stride); repeatTimes is the repeat field of 高维切分, [0, 255].
REPEAT_MAX = 255
BYTE_STRIDE_MAX = 255
REPEAT_STRIDE_MAX = 65535
MASK_MAX = 2**32 - 1


class GatherMaskParams(NamedTuple):
    """``GatherMaskParams`` in its field order, as the page's ``{1, 4, 8, 0}`` writes it:
    ``(src0_block_stride, repeat_times, src0_repeat_stride, src1_repeat_stride)``. The
    defaults are the struct's (``kernel_struct_gather.h``: ``DEFAULT_BLK_STRIDE`` 1,
    ``repeatTimes`` 0, ``DEFAULT_REPEAT_STRIDE`` 8 for both repeat strides; the page gives
    none), so ``GatherMaskParams(repeat_times=2)`` reads as ``GatherMaskParams p;
    p.repeatTimes = 2;`` does: the next 256 bytes each repeat."""

    src0_block_stride: int = 1
    repeat_times: int = 0
    src0_repeat_stride: int = 8
    src1_repeat_stride: int = 8


def pattern_bits(pattern: int, n: int) -> np.ndarray:
    """The first ``n`` bits of built-in pattern 1..7, element e's bit first: 1 even elements,
    2 odd ones, 3..6 element 0..3 of every four, 7 all."""
    e = np.arange(n)
    if pattern in (1, 2):
        return e % 2 == pattern - 1
    if pattern == 7:
        return np.ones(n, bool)
    return e % 4 == pattern - 3


@dataclasses.dataclass(frozen=True)
class Plan:
    """Where one call reads: hashable static ints in, NumPy arrays out.

    ``repeats`` repeats of ``per_repeat`` elements; ``count`` (Counter mode over the call) masks
    element ``r*per_repeat + e >= count``. ``pattern`` is 1..7, or 0 for a user tensor whose
    repeat r starts at word ``r*src1_rep_words``. ``tail`` is ``config.gather_mask_tail``.
    """

    fmt: Format
    repeats: int
    per_repeat: int
    blk: int
    rep: int
    pattern: int
    src1_rep_words: int = 0
    count: int | None = None
    tail: str = "keep"
    out_of_range: str = "raise"

    @functools.cached_property
    def reads(self) -> np.ndarray:
        """``(R*E,)`` src0 offsets in processing order (repeat, then element)."""
        epb = self.fmt.per_block
        e = np.arange(self.per_repeat)
        r = np.arange(self.repeats)[:, None]
        return ((r * self.rep + (e // epb) * self.blk) * epb + e % epb).reshape(-1)

    @functools.cached_property
    def active(self) -> np.ndarray:
        n = self.repeats * self.per_repeat
        return np.arange(n) < (n if self.count is None else self.count)

    @functools.cached_property
    def words(self) -> np.ndarray:
        """``(R*E,)`` the src1 word holding each element's bit (user pattern)."""
        bits = self.fmt.bits
        e = np.arange(self.per_repeat)
        r = np.arange(self.repeats)[:, None]
        return (r * self.src1_rep_words + e // bits).reshape(-1)

    @functools.cached_property
    def static_selected(self) -> np.ndarray | None:
        """Built-in pattern: the processing positions kept (static); None for a user tensor."""
        if not self.pattern:
            return None
        bits = np.tile(pattern_bits(self.pattern, self.per_repeat), self.repeats)
        return np.nonzero(bits & self.active)[0]


def _load(plan: Plan, s):
    """``(..., R*E)``: the call's src0 elements in processing order. Whole 256-byte repeats load
    by strided slices (``RepeatPlan.load``); XLA's CPU gather is far slower."""
    if plan.per_repeat == plan.fmt.lanes and plan.repeats:
        rp = RepeatPlan(plan.fmt, plan.repeats, plan.blk, plan.rep, (True,) * plan.fmt.lanes)
        loaded = rp.load(s)
        return merge_last(loaded)
    return s[..., plan.reads]


def _string_words(plan: Plan, pattern):
    """``(..., R, wpr)``: the pattern words of each repeat's bit string."""
    wpr = -(-plan.per_repeat // plan.fmt.bits)  # words of one repeat's string
    stride, repeats = plan.src1_rep_words, plan.repeats
    if stride == 0:
        words = jnp.broadcast_to(pattern[..., None, :wpr], pattern.shape[:-1] + (repeats, wpr))
    elif stride >= wpr:
        words = fit_last_axis(pattern, repeats * stride).reshape(
            pattern.shape[:-1] + (repeats, stride))
        words = words[..., :wpr]
    else:                                       # overlapping strings: a gather
        words = pattern[..., (np.arange(repeats)[:, None] * stride
                              + np.arange(wpr)[None, :])]
    return words


def _select(plan: Plan, pattern):
    """``(..., R*E)`` bool: the elements a user pattern keeps (bit e of repeat r's string)."""
    bits, per, repeats = plan.fmt.bits, plan.per_repeat, plan.repeats
    words = _string_words(plan, pattern)
    wpr = words.shape[-1]
    shift = jnp.arange(bits, dtype=pattern.dtype)
    keep = (words[..., None] >> shift) & 1
    keep = keep.reshape(keep.shape[:-3] + (repeats, wpr * bits))[..., :per]
    return merge_last(keep).astype(bool) & plan.active


_SHORT_WORDS = 64  # a selection of up to 64 32-bit words packs by squeeze's select network


def _selection_words(plan: Plan, pattern):
    """``(..., R*E/32)`` uint32: the selection as ``word_source_lanes`` reads it, straight from
    the pattern's words (no lane of bools in between); None where a repeat's string is not
    whole 32-bit words or Counter mode cuts the call short."""
    if plan.per_repeat % 32 or not plan.active.all():
        return None
    words = _string_words(plan, pattern)
    per_word = 32 // plan.fmt.bits              # pattern words in a uint32, the first lowest
    if per_word > 1:
        words = lax.bitcast_convert_type(split_last(words, per_word), U32)
    return merge_last(words)


def _pack(vals, sel, n: int):
    """``(..., n)``: the selected elements of ``vals`` from the front, in order (zeros past
    them). A short call (up to 2048 elements, 8 repeats of floats) packs as ``asc_squeeze``
    does, elementwise on the selection's words and one gather within each row (20-50x faster
    on XLA's CPU backend than a scatter); a longer one by ``_pack_by_scatter``."""
    total = vals.shape[-1]
    if total % 32 or total // 32 > _SHORT_WORDS:
        return _pack_by_scatter(vals, sel, n)
    return _take_front(vals, source_lanes(sel)[0], n)


def _take_front(vals, source, n: int):
    """``(..., n)``: ``vals``' lanes ``source`` (``source_lanes``), zeros past ``vals``."""
    total = vals.shape[-1]
    m = min(n, total)
    packed = jnp.take_along_axis(vals, source[..., :m], axis=-1)
    if n > total:
        packed = jnp.concatenate([packed, jnp.zeros(vals.shape[:-1] + (n - total,), vals.dtype)],
                                 -1)
    return packed


def _pack_by_scatter(vals, sel, n: int):
    """``(..., n)``: the selected elements of ``vals`` from the front, in order (zeros past
    them). One scatter of int32 source positions over the flattened batch (each row's selected
    element i goes to its rank; the others to distinct places past the end, dropped), then a
    gather of the values: no scatter on the data's bits (XLA's CPU backend may run one in
    bfloat16, flushing subnormals), and linear in ``vals``."""
    batch, size = vals.shape[:-1], vals.shape[-1]
    rows = int(np.prod(batch, dtype=np.int64))
    # an associative scan: XLA's CPU cumsum is a quadratic reduce_window
    rank = jax.lax.associative_scan(jnp.add, sel.astype(jnp.int32), axis=sel.ndim - 1) - 1
    base = (np.arange(rows, dtype=np.int32) * n).reshape(batch + (1,))
    spare = rows * n + np.arange(rows * size, dtype=np.int32).reshape(batch + (size,))
    target = jnp.where(sel & (rank < n), rank + base, spare).reshape(-1)
    source = jnp.full(rows * n, rows * size, jnp.int32).at[target].set(
        jnp.arange(rows * size, dtype=jnp.int32), mode="drop", unique_indices=True)
    flat = jnp.concatenate([vals.reshape(-1), jnp.zeros(1, vals.dtype)])
    return flat[source].reshape(batch + (n,))


def _compose(n: int, vals, words, d):
    """``(out, count)``: dst ``d`` ``(..., n)`` with the elements of ``vals`` that ``words``
    select written from 0 on; a pattern shared by the batch is searched once."""
    source, count = word_source_lanes(words)
    batch = vals.shape[:-1]
    packed = _take_front(vals, jnp.broadcast_to(source, batch + source.shape[-1:]), n)
    count = jnp.broadcast_to(count, batch)
    return jnp.where(np.arange(n) < count[..., None], packed, d), count


def _compact(plan: Plan, d, s, pattern):
    """dst ``d`` with the kept elements of ``s`` (bit patterns or tangents) written from 0 on."""
    n = d.shape[-1]
    vals = _load(plan, s)
    k = np.arange(n)
    if plan.static_selected is not None:
        count = plan.static_selected.size
        period = 1 if plan.pattern == 7 else 2 if plan.pattern in (1, 2) else 4
        phase = {1: 0, 2: 1, 7: 0}.get(plan.pattern, plan.pattern - 3)
        if plan.per_repeat % period == 0:       # the pattern runs on across repeats: a slice
            head = vals[..., :int(plan.active.sum())][..., phase::period]
        else:
            head = vals[..., plan.static_selected]
        out = jnp.concatenate([head, d[..., count:]], -1)
    else:
        words = _selection_words(plan, pattern)
        if words is not None and words.shape[-1] <= _SHORT_WORDS:
            batch = jnp.broadcast_shapes(vals.shape[:-1], words.shape[:-1], d.shape[:-1])
            vals, d = (jnp.broadcast_to(a, batch + a.shape[-1:]) for a in (vals, d))
            out, count = _compose(n, vals, words, d)
        else:
            sel = _select(plan, pattern)
            batch = jnp.broadcast_shapes(vals.shape[:-1], sel.shape[:-1])
            packed = _pack(jnp.broadcast_to(vals, batch + vals.shape[-1:]),
                           jnp.broadcast_to(sel, batch + sel.shape[-1:]), n)
            count = jnp.sum(sel, axis=-1, dtype=jnp.int32)
            out = jnp.where(k < count[..., None], packed, d)
        count = count[..., None]
    if plan.tail == "zero_block":
        # a select, not a scatter: XLA's CPU backend may move the bitcast through a scatter
        # and run it in bfloat16, flushing subnormals
        epb = plan.fmt.per_block
        out = jnp.where((k >= count) & (k < -(-count // epb) * epb), jnp.zeros((), out.dtype),
                        out)
    return out


def _kernel_words(plan: Plan, pattern):
    """The selection's words where the compaction kernel can take the call (a user pattern
    of whole words, contiguous repeats, no block of zeros after), else None."""
    if (plan.static_selected is not None or plan.tail == "zero_block"
            or plan.per_repeat != plan.fmt.lanes or not plan.repeats
            or not RepeatPlan(plan.fmt, plan.repeats, plan.blk, plan.rep,
                              (True,) * plan.fmt.lanes).contiguous):
        return None
    words = _selection_words(plan, pattern)
    return words if words is not None and words.shape[-1] <= _SHORT_WORDS else None


def _forward(plan: Plan, d, s, pattern):
    words = _kernel_words(plan, pattern)
    # The kernel takes the values as they are: XLA's CPU backend would copy them to bitcast
    # them to integers first. Contiguous repeats load by a reshape, which moves no value; a
    # dst or src shared by a batch would need a broadcast, which XLA's CPU backend may run in
    # float32 for bfloat16 (see lanes.kernel): those calls move bits by XLA's path.
    n, vals = d.shape[-1], _load(plan, s)
    if words is None or vals.shape[:-1] != d.shape[:-1] or (
            jnp.broadcast_shapes(vals.shape[:-1], words.shape[:-1]) != vals.shape[:-1]):
        out = _compact(plan, to_bits(d, plan.fmt), to_bits(s, plan.fmt), pattern)
        return from_bits(out, plan.fmt)

    def portable(v, w, f):
        out, count = _compose(n, to_bits(v, plan.fmt), w, to_bits(f, plan.fmt))
        return from_bits(out, plan.fmt), count

    return native.compress(vals, words, d, n, portable)[0]


def _linear(plan: Plan, dt, st, pattern):
    return _compact(plan, dt, st, pattern)


_gather_mask = kernel(_forward, _linear, num_diff=2)


@functools.partial(jax.jit, static_argnums=0)
def _user_count(plan: Plan, pattern):
    words = _selection_words(plan, pattern)
    if words is None:
        return jnp.sum(_select(plan, pattern), axis=-1, dtype=jnp.uint32)
    return jnp.sum(lax.population_count(words), axis=-1, dtype=jnp.uint32)


def _check_plan(plan: Plan, n_src: int, n_dst: int, n_src1: int | None, where: str,
                src1_arg: str) -> None:
    """Static range checks: every element a repeat reads lies in src0, every pattern word in
    src1, and (built-in pattern) the kept elements fit in dst."""
    reads = plan.reads[plan.active]
    if reads.size and reads.max() >= n_src:
        i = int(np.argmax(plan.active & (plan.reads >= n_src)))
        raise ValueError(f"{where}: src0 has {n_src} elements but repeat {i // plan.per_repeat} "
                         f"reads element {int(plan.reads[i])}; the LocalTensor is too short")
    if n_src1 is not None:
        words = plan.words[plan.active]
        if words.size and words.max() >= n_src1:
            i = int(np.argmax(plan.active & (plan.words >= n_src1)))
            raise ValueError(f"{where}: {src1_arg} has {n_src1} words but repeat "
                             f"{i // plan.per_repeat} reads its bits from word "
                             f"{int(plan.words[i])}; the pattern tensor is too short")
    elif plan.static_selected.size > n_dst:
        raise ValueError(f"{where}: pattern {plan.pattern} keeps {plan.static_selected.size} "
                         f"elements but dst has {n_dst}; the LocalTensor is too short")


def _run(where: str, plan: Plan, config: Config, dst, src0, pattern, src1_arg: str):
    """(new dst, rsvdCnt) of a checked call."""
    batch = check_batch(where, dst=dst, src0=src0,
                        **({} if pattern is None else {src1_arg: pattern}))
    dst = jnp.broadcast_to(dst, batch + dst.shape[-1:])
    src0 = jnp.broadcast_to(src0, batch + src0.shape[-1:])
    _check_plan(plan, src0.shape[-1], dst.shape[-1], None if pattern is None else
                pattern.shape[-1], where, src1_arg)
    if plan.repeats == 0:
        return dst, jnp.zeros(batch, jnp.uint32)
    if pattern is None:
        count = jnp.full(batch, plan.static_selected.size, jnp.uint32)
        dummy = jnp.zeros((0,), plan.fmt.bits_dtype)
        return _gather_mask(plan, dst, src0, dummy), count
    pattern = jax.lax.stop_gradient(pattern)
    # over the call's batch shape: a pattern shared by a batch of tensors is searched once
    count = jnp.broadcast_to(_user_count(plan, pattern), batch)
    n = dst.shape[-1]
    bad = count > n
    if count.size and count.ndim:  # a batch: name the first tensor that overflows (a review)
        at = first_true(bad)
        detail = (count[tuple(at)], at)
    else:  # one tensor, or an empty batch (nothing to check)
        detail = jnp.max(count, initial=0)

    def message(w, at=None):
        index = "" if at is None else f" in tensor {batch_index(at)}"
        return (f"{where}: the gather mask keeps {w} elements{index} but dst has {n} (the "
                f"hardware writes past the LocalTensor)")

    runtime_check(bad, message, detail, mode=config.out_of_range)
    return _gather_mask(plan, dst, src0, pattern), count


def _tensors(where: str, dst: Any, src0: Any, table: dict, config: Config | None):
    return same_type_tensors(where, table, config, dst, src0, "src0")


def _user_pattern(where: str, arg: str, pattern: Any, fmt: Format):
    if pattern is None:
        raise TypeError(f"{where}: {arg} is None; the user pattern is a LocalTensor of "
                        f"{PATTERN_TYPES[fmt.bits]}")
    want = PATTERN_TYPES[fmt.bits]
    pattern = as_array(pattern, where=where, arg=arg, accepts=(want,))
    if pattern.dtype != np.dtype(want.removesuffix("_t")):
        raise TypeError(f"{where}: {arg} has dtype {pattern.dtype}; with T={fmt.name} the user "
                        f"pattern is {want} (the page's 数据类型 table)")
    if pattern.ndim == 0:
        raise ValueError(f"{where}: {arg} must be a LocalTensor (..., n) of {want}, got a scalar")
    return pattern


def _words_per_block(fmt: Format) -> int:
    return DATABLOCK_BYTES * 8 // fmt.bits


def gather_mask(dst: Any, src0: Any, src1_pattern: Any, reduce_mode: bool, mask: int,
                gather_mask_params: Any, *,
                config: Config | None = None) -> tuple[jax.Array, jax.Array]:
    """``GatherMask<T, U>(dst, src0, src1Pattern, reduceMode, mask, gatherMaskParams, rsvdCnt)``:
    the elements of src0 the gather mask keeps, packed into dst from element 0 on.

    ``dst``, ``src0``: LocalTensors ``(..., n)`` of T (the page's 数据类型 table per product:
    int16_t, uint16_t, half, int32_t, uint32_t, float everywhere; bfloat16_t on the 950 and Atlas
    A2/A3; int8_t, uint8_t on the 950). ``src1_pattern``: a built-in pattern, the int 1..7
    (1 even elements, 2 odd, 3..6 element 0..3 of every four, 7 all; inference AI Core 1..6),
    or the user tensor ``(..., m)`` of uint8 / uint16 / uint32 (T's width), bit e of a
    repeat's string (LSB first) keeping its element e; ``src1RepeatStride`` (DataBlocks) moves
    the string each repeat, and has no effect on a built-in pattern.

    ``reduce_mode``: False, Normal mode: ``repeat_times`` repeats of 256 bytes, ``mask`` has no
    effect (any uint32, the page suggests 0). True, Counter mode: ``mask`` in [1, 2**32 - 1]
    elements per repeat (950, A2, A3, 200I/500 A2: ``repeat_times`` repeats, A40), or over the
    whole call (inference AI Core: ``ceil(mask / lanes)`` repeats). ``gather_mask_params``: a
    ``GatherMaskParams``, a tuple in its field order ``(src0_block_stride, repeat_times,
    src0_repeat_stride, src1_repeat_stride)``, as the page's ``{1, 4, 8, 0}``, or a dict of
    fields by the page's names (``{"repeatTimes": 4}``) or snake_case, the others at the
    struct's defaults (``GatherMaskParams``); repeat_times 0 is a NOP (A41).

    Returns ``(dst, rsvd_cnt)``: the new dst (elements past the count keep their bits, A39;
    the page shows them as undefined) and the count kept (uint32, over the batch shape).
    The page's rsvdCnt is a ``uint64_t``; it comes back as uint32 because JAX's x64 is off.
    The call leaves the hardware in Normal mask mode (约束说明): a caller in Counter mode sets
    it again, as on the device. Differentiable in ``dst`` and ``src0``: the cotangent of dst
    element k goes back to the src0 element written there; the count has no gradient.

    A user pattern that keeps more elements than dst holds raises ``IndexError`` eagerly, and
    under ``jit`` as ``Config.out_of_range`` says.
    """
    where = "gather_mask"
    config, fmt, dst, src0 = _tensors(where, dst, src0, GATHER_MASK_TYPES, config)
    params = _params(where, gather_mask_params)
    blk = check_int(params[0], 0, BYTE_STRIDE_MAX, where=where, arg="src0_block_stride")
    repeat_times = check_int(params[1], 0, REPEAT_MAX, where=where, arg="repeat_times")
    rep = check_int(params[2], 0, REPEAT_STRIDE_MAX, where=where, arg="src0_repeat_stride")
    src1_rep = check_int(params[3], 0, BYTE_STRIDE_MAX, where=where, arg="src1_repeat_stride")
    reduce_mode = check_flag(reduce_mode, where=where, arg="reduce_mode",
                             meaning="False: Normal, True: Counter")
    if isinstance(src1_pattern, (int, np.integer)) and not isinstance(src1_pattern, bool):
        modes = PATTERN_MODES[config.product]
        pattern_mode = check_int(src1_pattern, modes[0], modes[-1], where=where,
                                 arg=f"src1_pattern (built-in modes on product "
                                     f"{config.product!r})")
        pattern = None
    elif np.ndim(src1_pattern) == 0 and src1_pattern is not None:
        modes = PATTERN_MODES[config.product]
        raise TypeError(f"{where}: src1_pattern={src1_pattern!r} is neither a built-in pattern "
                        f"(a Python int in [{modes[0]}, {modes[-1]}] on product "
                        f"{config.product!r}) nor a user pattern (a LocalTensor (..., n) of "
                        f"{PATTERN_TYPES[fmt.bits]}){traced_hint(src1_pattern)}")
    else:
        pattern_mode = 0
        pattern = _user_pattern(where, "src1_pattern", src1_pattern, fmt)
    lanes = fmt.lanes
    count = None
    if not reduce_mode:
        check_int(mask, 0, MASK_MAX, where=where, arg="mask (Normal mode: no effect)")
        repeats, per_repeat = repeat_times, lanes
    else:
        mask = check_int(mask, 1, MASK_MAX, where=where, arg="mask (Counter mode)")
        if config.product in COUNTER_PER_CALL:
            repeats, per_repeat, count = -(-mask // lanes), lanes, mask
        else:
            if mask > lanes and config.gather_mask_counter == "raise":
                raise ValueError(f"{where}: mask={mask} (Counter mode, elements per repeat) is "
                                 f"more than the {lanes} {fmt.name} elements of 256 bytes; "
                                 f"Config(gather_mask_counter=\"raise\") rejects it (A40)")
            repeats, per_repeat = repeat_times, mask
        ub = config.ub_bytes * 8 // fmt.bits
        if repeats * per_repeat > ub:
            raise ValueError(f"{where}: mask={mask} (Counter mode) with repeat_times="
                             f"{repeat_times} covers {repeats * per_repeat} elements, more than "
                             f"the {ub} {fmt.name} elements the Unified Buffer holds")
    if repeats == 0 and config.gather_mask_empty == "raise":
        raise ValueError(f"{where}: repeat_times=0; Config(gather_mask_empty=\"raise\") rejects "
                         f"it (A41)")
    plan = Plan(fmt, repeats, per_repeat, blk, rep, pattern_mode,
                src1_rep * _words_per_block(fmt), count, config.gather_mask_tail,
                config.out_of_range)
    return _run(where, plan, config, dst, src0, pattern, "src1_pattern")


def _params(where: str, params: Any) -> tuple:
    return struct_fields(params, GatherMaskParams, where=where, arg="gather_mask_params")


def asc_reduce(dst: Any, src0: Any, src1: Any, *args: int,
               config: Config | None = None) -> jax.Array:
    """``asc_reduce`` (``asc_reduce_sync``: the first-n form alone): the C API's gather-mask
    compaction on UB.

    Two forms, as the C overloads: first n, ``(dst, src0, src1, count)``: the first ``count``
    elements of src0, element e kept where bit e of src1 (LSB first, continuously over the
    words, as the page's example sizes src1 ``total_length / 16``) is 1; high-dimensional,
    ``(dst, src0, src1, repeat, src0_block_stride, pattern_mode, src0_repeat_stride,
    src1_repeat_stride)``: ``gather_mask`` in Normal mode, 256 bytes per repeat, with
    ``pattern_mode`` 0 taking the user mask src1 and 1..7 a built-in pattern (src1 unused: pass
    None or anything). The hardware vector mask has no effect (约束说明).

    ``dst``, ``src0``, ``src1``: UB tensors ``(..., n)`` of uint16 or uint32, all one type (any
    16/32-bit data moves as these bits: ``.view`` it). Atlas A2 / A3. Returns the new dst:
    the kept elements from element 0 on, the rest keep their bits (A39). The page gives no way
    to read the count (no getter), so none is returned; ``gather_mask`` returns it.
    """
    where = "asc_reduce"
    config, fmt, dst, src0 = _tensors(where, dst, src0, ASC_REDUCE_TYPES, config)
    if len(args) == 1:
        count = check_int(args[0], 1, max(src0.shape[-1], 1), where=where, arg="count")
        if count > fmt.lanes and config.gather_mask_counter == "raise":
            raise ValueError(f"{where}: count={count} is more than the {fmt.lanes} {fmt.name} "
                             f"elements of 256 bytes; Config(gather_mask_counter=\"raise\") "
                             f"rejects it (A40)")
        plan = Plan(fmt, 1, count, 1, 0, 0, 0, None, config.gather_mask_tail,
                    config.out_of_range)
        pattern = _user_pattern(where, "src1", src1, fmt)
    elif len(args) == 5:
        # A51: the 8-bit repeat field, or its prototype's uint16_t
        most = REPEAT_MAX if config.asc_reduce_repeat == "field" else REPEAT_STRIDE_MAX
        repeat = check_int(args[0], 0, most, where=where,
                           arg=f"repeat (Config(asc_reduce_repeat={config.asc_reduce_repeat!r}))")
        blk = check_int(args[1], 0, BYTE_STRIDE_MAX, where=where, arg="src0_block_stride")
        mode = check_int(args[2], 0, 7, where=where, arg="pattern_mode")
        rep = check_int(args[3], 0, REPEAT_STRIDE_MAX, where=where, arg="src0_repeat_stride")
        src1_rep = check_int(args[4], 0, BYTE_STRIDE_MAX, where=where, arg="src1_repeat_stride")
        if repeat == 0 and config.gather_mask_empty == "raise":
            raise ValueError(f"{where}: repeat=0; Config(gather_mask_empty=\"raise\") rejects "
                             f"it (A41)")
        plan = Plan(fmt, repeat, fmt.lanes, blk, rep, mode, src1_rep * _words_per_block(fmt),
                    None, config.gather_mask_tail, config.out_of_range)
        pattern = _user_pattern(where, "src1", src1, fmt) if mode == 0 else None
    else:
        raise TypeError(f"{where}: expected (dst, src0, src1, count) or (dst, src0, src1, repeat, "
                        f"src0_block_stride, pattern_mode, src0_repeat_stride, "
                        f"src1_repeat_stride); got {3 + len(args)} positional arguments")
    return _run(where, plan, config, dst, src0, pattern, "src1")[0]
