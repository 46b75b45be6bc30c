"""LocalTensor repeats: the checks, addresses, mask and loads/stores of every repeat/stride
instruction (PairReduceSum, BlockReduceSum, WholeReduceSum, RepeatReduceSum, ReduceSum,
ReduceMax, ReduceMin).

A repeat covers one 256-byte register's worth of src: element e of repeat r is read from element
offset ``(r*src_rep_stride + (e // epb)*src_blk_stride)*epb + e % epb`` (epb elements per 32-byte
DataBlock, strides in DataBlocks) under a mask that is the same every repeat. Repeat r writes its
``outputs`` results to ``r*dst_rep_stride*dst_unit + k``; repeats run in order, so a later write
to the same element wins, and src is read before any write.

``RepeatPlan`` computes these addresses once, with NumPy, from the static ints. The range
checks, the pictures (``viz``) and the kernels' loads and stores all read the same plan.

Mask modes (``vector_mask.py``, guide 如何使用掩码操作API): ``repeat_call`` takes the
instruction's ``is_set_mask`` template flag and the ``mask_state`` it runs under. In Normal mode
the mask (the argument, or the state's words when ``is_set_mask`` is false) enables the same
lanes every repeat. In Counter mode the mask is a count N of elements over the whole call: the
call makes ``ceil(N / lanes)`` repeats (its repeatTime has no effect) and element n of the call,
lane ``n % lanes`` of repeat ``n // lanes`` read through the strides, takes part iff n < N, so
only the last repeat is partial (A28).
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Sequence
from typing import Any, NamedTuple

import jax.numpy as jnp
import numpy as np

from ..config import Config
from ..formats import BLOCKS_PER_REGISTER, Format
from .lanes import (
    as_array,
    check_batch,
    check_flag,
    check_int,
    check_product,
    check_supported,
    merge_last,
    resolve_dtypes,
    traced_hint,
)
from .vector_mask import ZERO_MASK_NOP, MaskState, resolve_state

REPEAT_MAX = 255
STRIDE_MAX = 65535  # **assumed** field width; the seed gives no range
# ReduceMax / ReduceMin / ReduceSum split larger repeat counts themselves (归约计算 guide): their
# repeatTime only has to fit an int32_t.
TENSOR_REPEAT_MAX = 2**31 - 1


# --- checks ---------------------------------------------------------------------------------

def setup(where: str, dst: Any, src: Any, table: dict, config: Config | None,
          pairs: dict | None = None):
    """Config, format and (dst, src) arrays broadcast to one batch shape, after the type checks.

    dst must have src's type unless ``pairs`` (product -> the page's (dst, src) type name
    pairs) lists the product: then (dst, src) must be one of its pairs. The format returned
    is src's.
    """
    config = check_product(config, table, where)
    fmt = resolve_dtypes(src, None, where=where, arg="src", accepts=table[config.product])
    check_supported(fmt, table[config.product], where=where, arg="T",
                    product=config.product)
    dst_fmt = resolve_dtypes(dst, None, where=where, arg="dst")
    if pairs is not None and config.product in pairs:
        valid = pairs[config.product]
        if (dst_fmt.name, fmt.name) not in valid:
            listed = ", ".join(f"{d} <- {s}" for d, s in valid)
            raise TypeError(f"{where}: dst dtype {dst_fmt.name} with src dtype {fmt.name} is "
                            f"not a supported pair on product {config.product!r}; valid "
                            f"(dst <- src): {listed}")
    elif dst_fmt != fmt:
        raise TypeError(f"{where}: dst dtype {dst_fmt.name} differs from src dtype {fmt.name}")
    src, dst = jnp.asarray(src), jnp.asarray(dst)
    for name, x in (("src", src), ("dst", dst)):
        if x.ndim == 0:
            raise ValueError(f"{where}: {name} must be a LocalTensor (..., n), got a scalar")
    batch = check_batch(where, dst=dst, src=src)
    dst = jnp.broadcast_to(dst, batch + dst.shape[-1:])
    src = jnp.broadcast_to(src, batch + src.shape[-1:])
    return config, fmt, dst, src


def same_type_tensors(where: str, table: dict, config: Config | None, dst: Any, src: Any,
                      src_arg: str = "src", **others):
    """``(config, T, dst, src, *others)`` of a LocalTensor call whose dst has src's type T,
    after the checks: T supported on the product (``table``), every tensor at least 1-D."""
    config = check_product(config, table, where)
    fmt = resolve_dtypes(src, None, where=where, arg=src_arg, accepts=table[config.product])
    check_supported(fmt, table[config.product], where=where, arg="T",
                    product=config.product)
    dst_fmt = resolve_dtypes(dst, None, where=where, arg="dst")
    if dst_fmt != fmt:
        raise TypeError(f"{where}: dst dtype {dst_fmt.name} differs from {src_arg} dtype "
                        f"{fmt.name}")
    arrays = {"dst": dst, src_arg: src, **others}
    arrays = {name: as_array(x, where=where, arg=name) for name, x in arrays.items()}
    for name, x in arrays.items():
        if x.ndim == 0:
            raise ValueError(f"{where}: {name} must be a LocalTensor (..., n), got a scalar")
    return (config, fmt, *arrays.values())


def offset_tensors(where: str, dst: Any, src: Any, offsets: Any, offset_arg: str, table: dict,
                   config: Config | None):
    """``(config, T, dst, src, offsets)`` of a LocalTensor move by byte offsets (Gatherb,
    Scatter): ``same_type_tensors``, and the offsets uint32."""
    offsets = as_array(offsets, where=where, arg=offset_arg, accepts=("uint32_t",))
    config, fmt, dst, src, offsets = same_type_tensors(where, table, config, dst, src,
                                                       **{offset_arg: offsets})
    if offsets.dtype != np.uint32:
        raise TypeError(f"{where}: {offset_arg} must be a uint32 LocalTensor (byte offsets), got "
                        f"dtype {offsets.dtype}")
    return config, fmt, dst, src, offsets


def repeat_mask(mask: Any, fmt: Format, where: str, *, allow_zero: bool = False) -> np.ndarray:
    """Per-element mask of one repeat from continuous (int) or bit mode (uint64 words).

    A mask of 0 (the int 0, or words all 0) is rejected unless ``allow_zero`` (Atlas A2/A3,
    where it makes the instruction a NOP); it then gives no active lane.
    """
    lanes = fmt.lanes
    if isinstance(mask, (int, np.integer)) and not isinstance(mask, (bool, np.bool_)):
        n = check_int(mask, 0 if allow_zero else 1, lanes, where=where,
                      arg=f"mask (continuous mode, {fmt.name}: {lanes} lanes a repeat)")
        return np.arange(lanes) < n
    if not isinstance(mask, (Sequence, np.ndarray)):
        raise TypeError(f"{where}: mask must be an int (continuous mode) or a sequence of "
                        f"uint64 words (bit mode), got {type(mask).__name__}"
                        f"{traced_hint(mask)}")
    if isinstance(mask, np.ndarray) and mask.dtype == np.bool_:
        raise TypeError(f"{where}: mask is a bool array of shape {mask.shape}: that is a register "
                        f"mask; a LocalTensor call's mask is an int (continuous mode: the first "
                        f"n of {lanes} lanes) or {lanes // 64} uint64 word(s) (bit mode: bit e "
                        f"of word e // 64 for lane e)")
    words = list(mask)
    n_words = lanes // 64
    # Kernels often declare uint64_t mask[2] for every type; a 32-bit type reads mask[0] only,
    # so a second word is accepted when it is 0 (a set bit there would address no element).
    if len(words) == 2 and n_words == 1 and not isinstance(words[1], bool) and words[1] == 0:
        words = words[:1]
    if len(words) != n_words:
        raise ValueError(f"{where}: bit-mode mask for {fmt.name} has {n_words} uint64 "
                         f"word(s){' (or a second word of 0)' if n_words == 1 else ''}, got "
                         f"{len(words)}: {mask!r}")
    words = [check_int(w, 0, 2**64 - 1, where=where, arg=f"mask[{i}]") for i, w in enumerate(words)]
    if not any(words) and not allow_zero:
        raise ValueError(f"{where}: bit-mode mask words are all 0; at least one bit must be set")
    return np.array([(words[j // 64] >> (j % 64)) & 1 for j in range(lanes)], bool)


def check_repeats(repeat_time: int, where: str) -> int:
    return check_int(repeat_time, 0, REPEAT_MAX, where=where, arg="repeat_time")


def check_strides(where: str, config: Config, **strides: int) -> dict:
    """Static stride arguments in [0, 65535] (**assumed**); the training series rejects a 0
    destination repeat stride (vendor pages)."""
    out = {}
    for name, value in strides.items():
        lo = 1 if name == "dst_rep_stride" and config.product == "training" else 0
        out[name] = check_int(value, lo, STRIDE_MAX, where=where, arg=name)
    return out


class RepeatCall(NamedTuple):
    """A checked LocalTensor call: config, T, dst/src on one batch shape, repeats, strides, mask.

    ``active`` is the per-lane mask of every repeat; ``count`` (Counter mode) also masks element
    n >= count of the call (lane e of repeat r is element ``r*lanes + e``), so ``rows`` are the
    repeats' active lanes. ``repeats`` is 0 for a NOP (repeatTime 0, or a mask of 0 on Atlas
    A2/A3).
    """

    config: Config
    fmt: Format
    dst: Any
    src: Any
    repeats: int
    strides: dict
    active: np.ndarray
    count: int | None = None

    @property
    def rows(self) -> np.ndarray:
        """``(repeats, lanes)`` bool: the lanes of each repeat that take part."""
        return active_rows(self.active, self.repeats, self.count)

    def plan(self, src_blk_stride: int, src_rep_stride: int, **fields: Any) -> RepeatPlan:
        """The ``RepeatPlan`` of this call's reads (``fields``: its write fields)."""
        return RepeatPlan(self.fmt, self.repeats, src_blk_stride, src_rep_stride,
                          tuple(self.active.tolist()), count=self.count, **fields)


# Counter mode's count over a whole call: the int32_t mask argument / SetVectorMask(len) range;
# the emulator also bounds it by the elements of T the Unified Buffer holds (a NumPy plan of
# every element is built).
COUNT_MAX = 2**31 - 1


def _check_count(count: int, fmt: Format, config: Config, where: str, arg: str) -> int:
    ub = config.ub_bytes * 8 // fmt.bits
    if count > ub:
        raise ValueError(f"{where}: {arg}={count} (Counter mode: elements over the whole call) "
                         f"is more than the {ub} {fmt.name} elements the Unified Buffer holds "
                         f"(config.ub_bytes={config.ub_bytes})")
    return count


def check_placeholder(mask: Any, where: str, arg: str = "mask") -> None:
    """With ``is_set_mask=False`` the mask argument is only a placeholder: ``MASK_PLACEHOLDER``,
    None, or any int / sequence of ints (C++ ignores its value, so none is checked)."""
    if mask is None or (isinstance(mask, (int, np.integer)) and not isinstance(mask, bool)):
        return
    if isinstance(mask, (Sequence, np.ndarray)) and all(
            isinstance(w, (int, np.integer)) and not isinstance(w, bool) for w in mask):
        return
    raise TypeError(f"{where}: with is_set_mask=False the {arg} argument is a placeholder "
                    f"(ascjax.MASK_PLACEHOLDER, None, an int or uint64 words), got {mask!r}")


def mask_source(where: str, fmt: Format, config: Config, repeat_time: int, mask: Any,
                is_set_mask: Any, mask_state: Any) -> tuple[int, np.ndarray, int | None]:
    """(repeats, per-lane mask, count or None) of a repeat/mask call under a mask mode.

    Normal mode: ``repeat_time`` repeats under the mask argument (``is_set_mask``) or the
    state's words. Counter mode: the argument (an int, ``is_set_mask``) or the state's low
    word is the count N; ``ceil(N / lanes)`` repeats, ``repeat_time`` only checked. A mask or
    count of 0 is a NOP (0 repeats) on Atlas A2/A3 and an error elsewhere.
    """
    is_set_mask = check_flag(is_set_mask, where=where, arg="is_set_mask",
                             meaning="True: the mask argument, False: the mask state's")
    state: MaskState = resolve_state(mask_state, where)
    repeats = check_repeats(repeat_time, where)
    nop = config.product in ZERO_MASK_NOP
    lanes = fmt.lanes
    if not is_set_mask:
        check_placeholder(mask, where)
    if state.mode == "counter":
        if config.product == "training":
            raise ValueError(f"{where}: Counter mask mode is not available on product "
                             f"'training' (SetMaskCount is not supported there)")
        if is_set_mask:
            if isinstance(mask, bool) or not isinstance(mask, (int, np.integer)):
                raise TypeError(f"{where}: in Counter mode the mask argument is an element "
                                f"count (an int), got {mask!r}")
            count = check_int(mask, 0 if nop else 1, COUNT_MAX, where=where,
                              arg="mask (Counter mode: elements over the whole call)")
        else:
            count = state.low
            if count == 0 and not nop:
                raise ValueError(f"{where}: the Counter-mode mask (mask_state.low) is 0; a count "
                                 f"of 0 is a NOP only on {list(ZERO_MASK_NOP)}")
        count = _check_count(count, fmt, config, where,
                             "mask" if is_set_mask else "mask_state.low")
        return -(-count // lanes), np.ones(lanes, bool), count
    if is_set_mask:
        active = repeat_mask(mask, fmt, where, allow_zero=nop)
    else:
        active = np.array(state.lane_mask(lanes), bool)
        if not active.any() and not nop:
            raise ValueError(f"{where}: the mask_state words enable no lane of {fmt.name}; a "
                             f"mask of 0 is a NOP only on {list(ZERO_MASK_NOP)}")
    return (repeats if active.any() else 0), active, None


def repeat_call(where: str, dst: Any, src: Any, table: dict, config: Config | None,
                repeat_time: int, mask: Any, *, is_set_mask: bool = True,
                mask_state: MaskState | None = None, pairs: dict | None = None,
                **strides: int) -> RepeatCall:
    """The checks every repeat/stride/mask instruction starts with, in the same order.

    ``is_set_mask`` is the instruction's isSetMask template flag: False makes ``mask`` a
    placeholder (``ascjax.MASK_PLACEHOLDER``) and the mask comes from ``mask_state``, the
    ``MaskState`` the call runs under (None: the power-on state, Normal mode, all lanes).
    In Counter mode (``mask_state.mode``) the mask is an element count over the whole call
    (``mask_source``). ``pairs``: the (dst, src) type pairs ``setup`` allows.
    """
    config, fmt, dst, src = setup(where, dst, src, table, config, pairs)
    repeats, active, count = mask_source(where, fmt, config, repeat_time, mask, is_set_mask,
                                         mask_state)
    if repeat_time == 0 and resolve_state(mask_state, where).mode == "normal":
        refuse_empty(where, config)  # Counter mode reads no repeatTime
    checked = check_strides(where, config, **strides)
    return RepeatCall(config, fmt, dst, src, repeats, checked, active, count)


def refuse_empty(where: str, config: Config) -> None:
    """repeatTime 0: a NOP, documented on Atlas A2/A3 and **assumed** elsewhere (A26; the
    950's pages say a NOP is not guaranteed), or a ValueError under
    ``config.reduce_empty="raise"`` there."""
    if config.reduce_empty == "raise" and config.product not in ZERO_MASK_NOP:
        raise ValueError(f"{where}: repeat_time=0 is a NOP only on {list(ZERO_MASK_NOP)} "
                         f"(the page); Config(reduce_empty=\"raise\") rejects it on product "
                         f"{config.product!r}")


class TensorReduce(NamedTuple):
    """A checked whole-tensor reduction call (ReduceSum, ReduceMax, ReduceMin).

    ``plan`` is None when the call does nothing (count or repeat_time 0). ``count`` is the
    first-n form's count (None for level 0); ``first_repeats`` the repeats the first pass runs
    (the pages' firstMaxRepeat: ``count // lanes``, at least 1, or ``repeat_time``); ``extra``
    the trailing optional positional arguments, None where not given.
    """

    config: Config
    fmt: Format
    dst: Any
    src: Any
    plan: RepeatPlan | None
    count: int | None
    first_repeats: int
    extra: tuple


def tensor_reduce_call(where: str, dst: Any, src: Any, table: dict, config: Config | None,
                       args: tuple, optional: tuple[str, ...] = (), *, is_set_mask: Any = True,
                       mask_state: MaskState | None = None) -> TensorReduce:
    """The two call forms of ReduceSum / ReduceMax / ReduceMin after (dst, src, sharedTmpBuffer).

    * first n elements: ``(count, *optional)``: repeat r covers ``[r*lanes, (r+1)*lanes)``, the
      last one partly; ``count`` in [1, len(src)], or 0 (a NOP) on Atlas A2/A3 (the pages);
    * level 0: ``(mask, repeat_time, src_rep_stride, *optional)``: repeat r reads element
      ``(r*src_rep_stride + e // epb)*epb + e % epb`` under ``mask`` (int or uint64 words);
      ``repeat_time`` in [0, 2**31 - 1], ``src_rep_stride`` in [0, 65535] (the pages' ranges).
      repeat_time 0 is a NOP: documented on Atlas A2/A3, **assumed** elsewhere (A26;
      ``config.reduce_empty="raise"`` rejects it there).

    ``optional`` names trailing positional arguments the page gives a default (ReduceMax's
    calIndex). ``is_set_mask`` / ``mask_state`` are ReduceSum's isSetMask: on Atlas A2/A3,
    False takes the first-n form's count from ``mask_state.low`` (``count`` a placeholder); it
    has no effect elsewhere (page). The level-0 form has no isSetMask and runs in Normal mode.
    """
    config, fmt, dst, src = setup(where, dst, src, table, config)
    is_set_mask = check_flag(is_set_mask, where=where, arg="is_set_mask",
                             meaning="True: the mask argument, False: the mask state's")
    state = resolve_state(mask_state, where)
    nop = config.product in ZERO_MASK_NOP
    lanes, k = fmt.lanes, len(optional)
    if 1 <= len(args) <= 1 + k:
        if is_set_mask or not nop:  # isSetMask has no effect off Atlas A2/A3 (page)
            count = check_int(args[0], 0 if nop else 1, src.shape[-1], where=where, arg="count")
        else:
            check_placeholder(args[0], where, "count")
            if mask_state is None:  # the reset state's all-ones mask is no count
                raise ValueError(f"{where}: is_set_mask=False takes the count from the mask "
                                 f"SetVectorMask wrote in Counter mode, but no mask_state was "
                                 f"given: pass mask_state=ascjax.set_vector_mask(count, "
                                 f"dtype=T, mode=\"counter\", state=ascjax.set_mask_count("
                                 f"config=config), config=config)")
            count = check_int(state.low, 0, src.shape[-1], where=where,
                              arg="count (mask_state.low, is_set_mask=False)")
        extra = args[1:]
        repeats = -(-count // lanes)
        first = max(count // lanes, 1)
        plan = RepeatPlan(fmt, repeats, 1, BLOCKS_PER_REGISTER, (True,) * lanes, count=count)
    elif 3 <= len(args) <= 3 + k:
        if not is_set_mask:
            raise TypeError(f"{where}: the level-0 (mask, repeat_time, src_rep_stride) form has "
                            f"no isSetMask (page); is_set_mask=False applies to the first-n form")
        if state.mode == "counter":
            raise ValueError(f"{where}: the level-0 form runs in Normal mask mode; the page does "
                             f"not describe it under a Counter-mode mask_state")
        mask, repeat_time, src_rep_stride = args[:3]
        extra, count = args[3:], None
        repeats = check_int(repeat_time, 0, TENSOR_REPEAT_MAX, where=where, arg="repeat_time")
        st = check_strides(where, config, src_rep_stride=src_rep_stride)
        active = repeat_mask(mask, fmt, where)
        first = repeats
        plan = RepeatPlan(fmt, repeats, 1, st["src_rep_stride"], tuple(active.tolist()))
        if repeats:
            plan.check(src.shape[-1], dst.shape[-1], where)
        else:
            refuse_empty(where, config)
    else:
        tail = "".join(f"[, {name}]" for name in optional)
        raise TypeError(f"{where}: expected (dst, src, shared_tmp_buffer, count{tail}) or (dst, "
                        f"src, shared_tmp_buffer, mask, repeat_time, src_rep_stride{tail}); got "
                        f"{3 + len(args)} positional arguments")
    return TensorReduce(config, fmt, dst, src, plan if repeats else None, count, first,
                        tuple(extra) + (None,) * (k - len(extra)))


# --- the address plan -----------------------------------------------------------------------

def active_rows(mask: Any, repeats: int, count: int | None) -> np.ndarray:
    """``(repeats, lanes)`` bool: ``mask`` every repeat, and (``count``) only the call's
    elements ``r*lanes + e < count``, in processing order."""
    mask = np.asarray(mask, bool)
    rows = np.broadcast_to(mask, (repeats, mask.size))
    if count is None:
        return rows
    return rows & (np.arange(repeats * mask.size).reshape(repeats, mask.size) < count)


def group_written(rows: np.ndarray, outputs: int, write_empty: bool) -> tuple:
    """``written`` for a plan whose output k of a repeat sums lane group k (``lanes //
    outputs`` lanes): written where the group has an active lane, or always (``write_empty``).
    One row when every repeat is alike, else one per repeat."""
    groups = rows.reshape(rows.shape[0], outputs, -1).any(axis=2) | write_empty
    if groups.shape[0] == 0 or (groups == groups[:1]).all():
        return tuple((groups[0] if groups.shape[0] else np.ones(outputs, bool)).tolist())
    return tuple(tuple(g) for g in groups.tolist())


def repeat_offsets(fmt: Format, repeats: int, blk_stride: int, rep_stride: int) -> np.ndarray:
    """Element offsets ``(repeats, lanes)``: element e of repeat r is read from
    ``(r*rep_stride + (e // epb)*blk_stride)*epb + e % epb`` (strides in DataBlocks)."""
    epb = fmt.per_block
    e = np.arange(fmt.lanes)
    return (np.arange(repeats)[:, None] * rep_stride + (e // epb) * blk_stride) * epb + e % epb


@dataclasses.dataclass(frozen=True)
class RepeatPlan:
    """Where the repeats of one call read and write: static ints in, NumPy offsets out.

    Hashable, so a kernel takes it as its static spec. ``mask`` is the per-lane mask of every
    repeat; ``count`` (Counter mode, ReduceSum's first-n form) also masks every element
    ``r*lanes + e >= count`` of the call, in processing order (not by src offset: the strides
    may spread the repeats). Each repeat writes ``outputs`` results; output k of repeat r goes
    to ``r*dst_rep_stride*dst_unit + k`` where ``written[k]`` (or ``written[r][k]`` when the
    repeats differ; ``dst_unit >= outputs``, so only a dst stride of 0 makes two repeats write
    one element).
    """

    fmt: Format
    repeats: int
    src_blk_stride: int
    src_rep_stride: int
    mask: tuple[bool, ...]
    count: int | None = None
    outputs: int = 0
    dst_rep_stride: int = 0
    dst_unit: int = 1
    written: tuple = ()

    @functools.cached_property
    def reads(self) -> np.ndarray:
        """``(R, lanes)``: the src offset element e of repeat r reads, masked or not."""
        return repeat_offsets(self.fmt, self.repeats, self.src_blk_stride, self.src_rep_stride)

    @functools.cached_property
    def active(self) -> np.ndarray:
        """``(R, lanes)`` bool: the elements that take part."""
        return active_rows(self.mask, self.repeats, self.count)

    @functools.cached_property
    def written_rows(self) -> np.ndarray:
        """``(R, outputs)`` bool: which outputs each repeat writes."""
        written = np.array(self.written, bool).reshape(-1, self.outputs) if self.outputs else (
            np.zeros((1, 0), bool))
        return np.broadcast_to(written, (self.repeats, self.outputs))

    @functools.cached_property
    def writes(self) -> np.ndarray:
        """``(R, outputs)``: the dst offset output k of repeat r lands at, or -1 where it writes
        nothing or a later repeat overwrites it."""
        k = np.arange(self.outputs)
        targets = np.arange(self.repeats)[:, None] * self.dst_rep_stride * self.dst_unit + k
        flat = np.where(self.written_rows, targets, -1).ravel()
        last = np.zeros(flat.shape, bool)
        _, first_from_end = np.unique(flat[::-1], return_index=True)
        last[flat.size - 1 - first_from_end] = True
        return np.where(last & (flat >= 0), flat, -1).reshape(targets.shape)

    @property
    def contiguous(self) -> bool:
        """Repeat r reads elements ``[r*lanes, (r+1)*lanes)``."""
        return self.src_blk_stride == 1 and self.src_rep_stride == BLOCKS_PER_REGISTER

    def check(self, src_len: int, dst_len: int, where: str) -> None:
        """Raises if an active element is read past the end of src or a result written past the
        end of dst (a LocalTensor too short)."""
        past = self._first_read_past(src_len)
        if past is not None:
            r, element = past
            raise ValueError(f"{where}: src has {src_len} elements but repeat {r} reads element "
                             f"{element}; the LocalTensor is too short")
        if self.writes.max(initial=-1) >= dst_len:
            raise ValueError(f"{where}: dst has {dst_len} elements but the repeats write "
                             f"element {int(self.writes.max())}; the LocalTensor is too short")

    def _first_read_past(self, src_len: int) -> tuple[int, int] | None:
        """(the first repeat with an active element at or past ``src_len``, the last element it
        reads), or None. Worked out per kind of repeat, never as a (repeats, lanes) array: a
        repeatTime up to 2^31 - 1 with a short src would otherwise exhaust memory before the
        error could be raised. Every repeat has the same active lanes (``mask``) except, under
        ``count``, the one it cuts short and those after it (none)."""
        lanes = self.fmt.lanes
        lane_reads = repeat_offsets(self.fmt, 1, self.src_blk_stride, 0)[0]
        step = self.src_rep_stride * self.fmt.per_block   # elements between repeats
        mask = np.asarray(self.mask, bool)
        full = self.repeats if self.count is None else min(self.repeats, self.count // lanes)
        kinds = [(0, full, mask)]                        # (first repeat, end, active lanes)
        if full < self.repeats and self.count is not None and self.count % lanes:
            kinds.append((full, full + 1, mask & (np.arange(lanes) < self.count % lanes)))
        for first, end, active in kinds:
            if first >= end or not active.any():
                continue
            top = int(lane_reads[active].max())        # repeat r reads up to r * step + top
            if step > 0:
                r = max(first, -(-(src_len - top) // step))
            else:
                r = first if first * step + top >= src_len else end
            if r < end:
                return r, r * step + top
        return None

    def load(self, s):
        """The repeats' src elements ``(..., R, lanes)`` at ``reads``, without a gather.

        Contiguous repeats are a reshape; otherwise each of the 8 DataBlocks is one strided
        slice over the repeats (XLA's CPU gather is far slower). A DataBlock no element of the
        mask reads loads zeros, so the span stops at the last block read.
        """
        epb, repeats = self.fmt.per_block, self.repeats
        if self.contiguous:
            s = fit_last_axis(s, repeats * self.fmt.lanes)
            return s.reshape(s.shape[:-1] + (repeats, self.fmt.lanes))
        read = np.array(self.mask, bool).reshape(BLOCKS_PER_REGISTER, epb).any(axis=1)
        r_span = (repeats - 1) * self.src_rep_stride + 1
        n_blocks = r_span + int(np.nonzero(read)[0][-1]) * self.src_blk_stride
        s = fit_last_axis(s, n_blocks * epb)
        blocks = s.reshape(s.shape[:-1] + (n_blocks, epb))
        shape = blocks.shape[:-2] + (repeats, epb)
        rows = []
        for b in range(BLOCKS_PER_REGISTER):
            first = b * self.src_blk_stride
            if not read[b]:
                rows.append(jnp.zeros(shape, s.dtype))
            elif self.src_rep_stride:
                rows.append(blocks[..., first:first + r_span:self.src_rep_stride, :])
            else:
                rows.append(jnp.broadcast_to(blocks[..., first:first + 1, :], shape))
        rows = jnp.stack(rows, axis=-2)
        return rows.reshape(rows.shape[:-2] + (self.fmt.lanes,))

    def load_flat(self, s):
        """``load(s)`` with the repeats' lanes as one axis ``(..., R * lanes)``: for contiguous
        repeats a slice of ``s`` itself (no reshape: see ``lanes.flat_pairs``)."""
        if self.contiguous:
            return fit_last_axis(s, self.repeats * self.fmt.lanes)
        loaded = self.load(s)
        return merge_last(loaded)

    def rewrites(self, dst_len: int) -> bool:
        """Whether the results, in order, are the whole new dst (nothing of the old dst stays)."""
        return (bool(self.written_rows.all())
                and self.dst_rep_stride * self.dst_unit == self.outputs
                and dst_len == self.repeats * self.outputs)

    def store(self, d, values):
        """``d`` with ``values`` ``(..., R, outputs)`` stored at ``writes``, by slices.

        Works on bit patterns (forward) and on tangents alike.
        """
        k, n = self.outputs, d.shape[-1]
        written = self.written_rows
        step = self.dst_rep_stride * self.dst_unit
        if self.rewrites(n):
            return values.reshape(d.shape)
        if step == 0:  # every repeat writes the same outputs: the last one that writes wins
            last = self.repeats - 1 - np.argmax(written[::-1], axis=0)
            values = values[..., last, np.arange(k)][..., None, :]
            written, step = written.any(axis=0)[None], k
        span = values.shape[-2] * step
        padded = fit_last_axis(d, max(n, span))
        rows = padded[..., :span].reshape(d.shape[:-1] + (values.shape[-2], step))
        rows = jnp.concatenate([jnp.where(written, values, rows[..., :k]), rows[..., k:]], -1)
        return jnp.concatenate([rows.reshape(d.shape[:-1] + (span,)), padded[..., span:]],
                               -1)[..., :n]


def fit_last_axis(x, size: int):
    """The first ``size`` elements of the last axis, padded with zeros where x is shorter."""
    if x.shape[-1] >= size:
        return x[..., :size]
    return jnp.pad(x, [(0, 0)] * (x.ndim - 1) + [(0, size - x.shape[-1])])
