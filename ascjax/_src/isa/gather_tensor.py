"""Element gathers by byte offset on LocalTensors / UB: ``AscendC::Gather`` (``gather``) and the
UB -> UB forms of the C API ``asc_gather`` (``asc_gather``'s 4- and 5-argument forms).

Lane n of a call reads the ``uint32`` byte offset ``o`` of ``srcOffset`` and writes
``src[(srcBaseAddr + o) / sizeof(T)]`` to its dst element; data movement, so every bit is kept.

* first n (``count``): lane i reads ``srcOffset[i]`` and writes ``dst[i]``, i < count;
* mask / repeat: lane e of repeat r reads ``srcOffset[r*lanes + e]`` (A30) and writes
  ``dst[r*dstRepStride*epb + e]`` (strides in 32-byte DataBlocks) where the mask enables lane e;
  the repeats run in order, so with ``dstRepStride`` < 8 a later repeat's write wins. A repeat
  covers 8 DataBlocks of dst, 4 for 8-bit T on the 950 / Atlas 200I/500 A2 (page; A32: its mask
  then has 128 lanes).

dst elements no lane writes keep their bits. Offsets are bytes: an active lane whose offset is
not a multiple of sizeof(T) (A33), exceeds the product's offset range (page: 950 and Atlas
200I/500 A2, [0, 2^16-1] for 8-bit T, [0, 2^17-1] for 16-bit T) or reads past the end of src
raises ``IndexError`` naming the lane and its offset (eagerly; under ``jit`` as
``Config.out_of_range`` says). Inactive lanes are never checked. count 0 / repeatTime 0 leave
dst unchanged on every product (A31; ``Config(gather_empty="raise")`` rejects them where the page
does not call them a NOP). int64_t / uint64_t (950) are not emulated (no 64-bit arrays with x64
off).

Differentiable in dst and src (floating T): the cotangent of a written dst element is added to
the src element it came from (a scatter-add); an unwritten element passes its cotangent to dst.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from ..config import Config
from ..formats import FORMATS, Format
from ..numerics.bits import from_bits, to_bits
from .lanes import (
    as_array,
    check_batch,
    check_int,
    first_true,
    kernel,
    one_report,
    placed,
    runtime_check,
)
from .repeat import active_rows, mask_source, setup
from .vector_mask import ZERO_MASK_NOP

_B16_B32 = ("int16_t", "uint16_t", "half", "bfloat16_t", "int32_t", "uint32_t", "float")
# Gather page, 数据类型: T per product (int64_t / uint64_t on the 950 not emulated).
GATHER_TYPES = {
    "950": ("int8_t", "uint8_t", *_B16_B32),
    "A3": _B16_B32,
    "A2": _B16_B32,
    "200I/500 A2": ("int8_t", "uint8_t", "int16_t", "uint16_t", "half", "int32_t", "uint32_t",
                    "float"),
    "inference AI Core": ("int16_t", "uint16_t", "half", "int32_t", "uint32_t", "float"),
}
# 950: int8_t / uint8_t take only the first-n form (page).
FIRST_N_ONLY = {"950": ("int8_t", "uint8_t")}
# Products whose offsets are limited by T's width (page: 8-bit [0, 2^16-1], 16-bit
# [0, 2^17-1]); elsewhere an offset only has to fit uint32_t.
NARROW_OFFSETS = ("950", "200I/500 A2")
# Products where a repeat of 8-bit T covers 4 DataBlocks (page).
HALF_REPEAT_B8 = ("950", "200I/500 A2")
# c-memory asc_gather: A2 / A3, these T.
UB_GATHER_TYPES = {p: _B16_B32 for p in ("A3", "A2")}
OFFSET_MAX = 2**32 - 1


def offset_limit(fmt: Format, product: str) -> int:
    """The largest byte offset the product takes for T."""
    if product in NARROW_OFFSETS:
        return {8: 2**16 - 1, 16: 2**17 - 1}.get(fmt.bits, OFFSET_MAX)
    return OFFSET_MAX


@dataclasses.dataclass(frozen=True)
class GatherPlan:
    """Static layout of one call: lane n (in processing order) reads ``srcOffset[offsets[n]]``
    and writes ``dst[targets[n]]`` where ``active[n]``."""

    fmt: Format
    n_dst: int
    n_src: int
    base: int
    limit: int
    count: int | None = None           # the first-n form's count
    repeats: int = 0
    lanes: int = 0
    mask: tuple = ()
    mask_count: int | None = None      # Counter mode: elements over the call
    dst_rep_stride: int = 0
    offsets_by: str = "repeat"
    where: str = "gather"

    @functools.cached_property
    def targets(self) -> np.ndarray:
        if self.count is not None:
            return np.arange(self.count)
        e = np.arange(self.lanes)
        r = np.arange(self.repeats)[:, None]
        return (r * self.dst_rep_stride * self.fmt.per_block + e).ravel()

    @functools.cached_property
    def offsets(self) -> np.ndarray:
        if self.count is not None or self.offsets_by == "repeat":
            return np.arange(self.targets.size)
        return self.targets

    @functools.cached_property
    def active(self) -> np.ndarray:
        if self.count is not None:
            return np.ones(self.count, bool)
        return active_rows(self.mask, self.repeats, self.mask_count).ravel()

    @functools.cached_property
    def final(self) -> np.ndarray:
        """``(n_dst,)``: the lane whose write each dst element keeps (the last), or -1."""
        final = np.full(self.n_dst, -1)
        lanes = np.nonzero(self.active)[0]
        final[self.targets[lanes]] = lanes      # NumPy keeps the last of repeated targets
        return final

    def check(self, n_offsets: int) -> None:
        """Static: dst and srcOffset hold every element an active lane touches."""
        where, lanes = self.where, np.nonzero(self.active)[0]
        if not lanes.size:
            return
        for name, at, size in (("dst", self.targets, self.n_dst),
                               ("src_offset", self.offsets, n_offsets)):
            past = lanes[at[lanes] >= size]
            if past.size:       # the first lane past the end
                raise ValueError(f"{where}: {name} has {size} elements but lane {past[0]} "
                                 f"{'writes' if name == 'dst' else 'reads'} {name}"
                                 f"[{at[past[0]]}]; the LocalTensor is too short")


def _elements(plan: GatherPlan, off):
    """(src element, whether it may be read) of byte offsets ``off`` (uint32)."""
    size = plan.fmt.width
    room = plan.n_src * size - plan.base     # bytes of src from srcBaseAddr on
    element = off // np.uint32(size) + np.uint32(plan.base // size)
    ok = (off % np.uint32(size) == 0) & (off <= np.uint32(plan.limit)) & (
        off < np.uint32(max(room, 0)))
    return element, ok


def pick_lanes(off, index: np.ndarray):
    """``off[..., index]`` for a static index: a slice where the index is a contiguous run
    (the usual layout; XLA's CPU gather is far slower than a slice)."""
    if index.size and (index == index[0] + np.arange(index.size)).all():
        return off[..., int(index[0]):int(index[0]) + index.size]
    return jnp.take(off, index, axis=-1)


# Why a byte offset faults, one per kind in locate_faults' order; Scatter words its own
# faults with these too (its tensor is dst).
_WHY = ("is not a multiple of sizeof({t}) = {size} ({note})",
        "exceeds the largest offset {limit} this product takes for {t}",
        ("{past} ({n} {t} elements from its start, {base_arg} {base}; the hardware raises an "
         "address exception)"))


def locate_faults(off, lanes: np.ndarray, size: int, limit: int, room: int):
    """Traced, in the caller's jit: per fault kind of the uint32 byte offsets ``off`` (...,
    k) (not a multiple of ``size``, above ``limit``, at or past ``room`` bytes), whether one
    has it, the first such (batch indices, then ``lanes[i]`` for position i) and its offset.
    Clean offsets (the usual case) cost one fused pass: the lanes are located only if some
    lane is at fault."""
    def faults(o):
        return (o % np.uint32(size) != 0, o > np.uint32(limit),
                o >= np.uint32(max(room, 0)))

    def locate(o):  # the lane as the tensor numbers it: its position among all lanes
        out = []
        for bad in faults(o):
            at = first_true(bad)
            out.append((jnp.any(bad), at.at[-1].set(jnp.asarray(lanes, jnp.int32)[at[-1]]),
                        o[tuple(at)]))
        return out

    def clean(o):
        return [(jnp.zeros((), bool), jnp.zeros(o.ndim, jnp.int32),
                 jnp.zeros((), jnp.uint32))] * 3

    a, b, c = faults(off)
    return lax.cond(jnp.any(a | b | c), locate, clean, off)


@functools.partial(jax.jit, static_argnums=0)
def _faults(plan: GatherPlan, src_offset):
    """``locate_faults`` of the active lanes (misaligned, beyond the product's range, past
    src); one compiled call."""
    lanes = np.nonzero(plan.active)[0]
    off = pick_lanes(src_offset, plan.offsets[lanes]).astype(jnp.uint32)
    room = plan.n_src * plan.fmt.width - plan.base     # bytes of src from srcBaseAddr on
    return locate_faults(off, lanes, plan.fmt.width, plan.limit, room)


def report_faults(faults, text, mode: str, **why) -> None:
    """One ``runtime_check`` per kind of ``locate_faults``: ``text(at, offset, reason)`` words
    the first lane at fault, ``reason`` being ``_WHY``'s for the kind, formatted with ``why``
    (t, size, note, limit, past, n, base_arg, base)."""
    with one_report():  # a lane both misaligned and past src: the first kind is named
        for (bad, lane, off), reason in zip(faults, _WHY, strict=True):
            reason = reason.format(**why)
            runtime_check(bad, lambda at, o, reason=reason: text(at, o, reason), (lane, off),
                          mode=mode)


def check_offsets(plan: GatherPlan, src_offset, mode: str) -> None:
    """The value-dependent faults of the active lanes, each naming the first lane (and tensor,
    in a batch) and its offset (lanes numbered in processing order: repeat r's lane e is
    ``r*lanes + e``)."""
    if mode == "ignore" or not plan.active.any() or src_offset.size == 0:  # nothing is read
        return
    fmt = plan.fmt
    report_faults(_faults(plan, src_offset),
                  lambda at, o, why: f"{plan.where}: active {placed(at, 'lane', 'tensor')} has "
                  f"srcOffset {o} bytes, which {why}", mode,
                  t=fmt.name, size=fmt.width, note="A33", limit=plan.limit,
                  past="reads past the end of src", n=plan.n_src, base_arg="srcBaseAddr",
                  base=plan.base)


def _values(plan: GatherPlan, data, off):
    """``(..., n_dst)``: what each dst element's final lane reads from ``data`` (0 where no
    lane writes it or the read is out of range), and where a lane writes."""
    final = plan.final
    written = final >= 0
    o = pick_lanes(off, plan.offsets[np.where(written, final, 0)]).astype(jnp.uint32)
    element, ok = _elements(plan, o)
    ok = ok & written
    batch = jnp.broadcast_shapes(data.shape[:-1], o.shape[:-1])
    index = jnp.broadcast_to(jnp.where(ok, element, 0).astype(jnp.int32), batch + o.shape[-1:])
    data = jnp.broadcast_to(data, batch + data.shape[-1:])
    values = jnp.take_along_axis(data, index, axis=-1)
    return jnp.where(ok, values, jnp.zeros((), data.dtype)), written


def _forward(plan: GatherPlan, dst, src, off):
    values, written = _values(plan, to_bits(src, plan.fmt), off)
    bits = to_bits(dst, plan.fmt)
    return from_bits(jnp.where(written, values, bits), plan.fmt)


def _linear(plan: GatherPlan, t_dst, t_src, off):
    values, written = _values(plan, t_src, off)
    return jnp.where(written, values, t_dst)


_gather = kernel(_forward, _linear, num_diff=2)


def _check_offset_tensor(src_offset: Any, where: str):
    src_offset = as_array(src_offset, where=where, arg="src_offset", accepts=("uint32_t",))
    if src_offset.ndim == 0 or src_offset.dtype != jnp.uint32:
        raise TypeError(f"{where}: src_offset must be a uint32 LocalTensor (..., n) of byte "
                        f"offsets, got {src_offset.dtype} {src_offset.shape}")
    return src_offset


def _empty(where: str, config: Config, arg: str) -> None:
    """count / repeatTime 0: a NOP on Atlas A2/A3 (page), **assumed** elsewhere (A31)."""
    if config.gather_empty == "raise" and config.product not in ZERO_MASK_NOP:
        raise ValueError(f"{where}: {arg}=0 is a NOP only on {list(ZERO_MASK_NOP)} (page); "
                         f"Config(gather_empty=\"raise\") rejects it on product "
                         f"{config.product!r}")


def _unchanged(fmt: Format, dst, src, src_offset):
    """A NOP: dst itself, or (batched src / src_offset) dst's bits broadcast to the call's
    batch shape. Not jitted: XLA's CPU code for a fused bfloat16 output, and a bfloat16
    broadcast, flush subnormals, so the bits are broadcast as integers and bitcast alone."""
    batch = jnp.broadcast_shapes(dst.shape[:-1], src.shape[:-1], src_offset.shape[:-1])
    if dst.shape[:-1] == batch:
        return dst
    return from_bits(jnp.broadcast_to(to_bits(dst, fmt), batch + dst.shape[-1:]), fmt)


def tensor_gather(where: str, dst: Any, src: Any, src_offset: Any, base: int, args: tuple,
                  table: dict, config: Config | None, *, mask_state: Any = None,
                  repeat_form: str = "mask") -> jax.Array:
    """The checks and the kernel of every byte-offset gather.

    ``args`` is ``(count,)`` or the repeat form: ``(mask, repeat_time, dst_rep_stride)``
    (``repeat_form="mask"``, Gather) or ``(dst_repeat_stride, repeat)`` under ``mask_state``
    (``repeat_form="state"``, the C API).
    """
    config, fmt, _, _ = setup(where, dst, src, table, config)
    # The arrays as given: an eager broadcast of a bfloat16 array flushes its subnormals on
    # CPU, so batch axes are broadcast on bit patterns (in the kernel, or ``_unchanged``).
    dst, src = jnp.asarray(dst), jnp.asarray(src)
    src_offset = _check_offset_tensor(src_offset, where)
    check_batch(where, dst=dst, src=src, src_offset=src_offset)
    base = check_int(base, 0, OFFSET_MAX, where=where, arg="src_base_addr")
    if base % fmt.width:
        raise ValueError(f"{where}: src_base_addr={base} is not a multiple of sizeof({fmt.name})"
                         f" = {fmt.width} (the page: the data would be misplaced; A33)")
    common = {"fmt": fmt, "n_dst": dst.shape[-1], "n_src": src.shape[-1], "base": base,
              "limit": offset_limit(fmt, config.product), "where": where}
    if len(args) == 1:
        limit = min(dst.shape[-1], src_offset.shape[-1])
        count = check_int(args[0], 0, limit, where=where,
                          arg=f"count (at most the {dst.shape[-1]} elements of dst and the "
                              f"{src_offset.shape[-1]} of src_offset)")
        if count == 0:
            _empty(where, config, "count")
            return _unchanged(fmt, dst, src, src_offset)
        plan = GatherPlan(count=count, **common)
    else:
        if fmt.name in FIRST_N_ONLY.get(config.product, ()):
            raise TypeError(f"{where}: {fmt.name} takes only the first-n (count) form on product "
                            f"{config.product!r} (page)")
        if repeat_form == "mask":
            mask, repeat_time, stride = args
            is_set_mask, state = True, None
        else:
            stride, repeat_time = args
            mask, is_set_mask, state = None, False, mask_state
        stride = check_int(stride, 0, 65535, where=where,
                           arg="dst_rep_stride" if repeat_form == "mask" else "dst_repeat_stride")
        # 8-bit T: a repeat of 4 DataBlocks, 128 lanes (A32), its mask as a 16-bit type's.
        mfmt = (dataclasses.replace(FORMATS["uint16_t"], name=fmt.name)
                if fmt.bits == 8 and config.product in HALF_REPEAT_B8 else fmt)
        repeats, active, mcount = mask_source(where, mfmt, config, repeat_time, mask,
                                              is_set_mask, state)
        if repeats == 0:
            _empty(where, config, "repeat_time" if repeat_form == "mask" else "repeat")
            return _unchanged(fmt, dst, src, src_offset)
        plan = GatherPlan(repeats=repeats, lanes=mfmt.lanes, mask=tuple(active.tolist()),
                          mask_count=mcount, dst_rep_stride=stride,
                          offsets_by=config.gather_offsets, **common)
    plan.check(src_offset.shape[-1])
    check_offsets(plan, src_offset, config.out_of_range)
    return _gather(plan, dst, src, src_offset)


_FORMS = """Forms (told apart by the arguments, as C++ does):

    * ``{name}(dst, src, src_offset{base}, count)``: lanes i < count;
    * ``{name}(dst, src, src_offset{base}, {repeat})``: {mask}.

    dst / src are LocalTensors (1-D, or with leading batch axes) of T, src_offset a uint32
    LocalTensor of byte offsets; the new dst is returned, elements no lane writes keep their
    bits. See the module docstring for the layout, the checks and the gradient."""


def gather(dst: Any, src: Any, src_offset: Any, *args: Any, config: Config | None = None,
           **legacy: Any) -> jax.Array:
    """``AscendC::Gather(dst, src, srcOffset, srcBaseAddr, ...)``: ``dst[i] =
    src[(srcBaseAddr + srcOffset[i]) / sizeof(T)]``, offsets in bytes.

    {forms}
    """
    where = "gather"
    unknown = sorted(set(legacy) - {"dst_dtype", "dtype"})
    if unknown:
        raise TypeError(f"{where}: unexpected keyword argument(s) {unknown}; Gather takes "
                        f"config= only")
    if legacy or not args:
        given = ", ".join(legacy) if legacy else "3 positional arguments"
        raise TypeError(f"gather is AscendC::Gather on LocalTensors: gather(dst, src, src_offset, "
                        f"src_base_addr, count) or gather(dst, src, src_offset, src_base_addr, "
                        f"mask, repeat_time, dst_rep_stride); got {given}. The register gather "
                        f"from the UB (asc_gather(src, index, mask), formerly ascjax.gather) is "
                        f"now ascjax.asc_gather")
    base, rest = args[0], args[1:]
    if len(rest) not in (1, 3):
        raise TypeError(f"{where}: expected (dst, src, src_offset, src_base_addr, count) or (dst, "
                        f"src, src_offset, src_base_addr, mask, repeat_time, dst_rep_stride); "
                        f"got {3 + len(args)} positional arguments")
    return tensor_gather(where, dst, src, src_offset, base, rest, GATHER_TYPES, config)


gather.__doc__ = gather.__doc__.format(forms=_FORMS.format(
    name="gather", base=", src_base_addr",
    repeat="mask, repeat_time, dst_rep_stride",
    mask="the mask (an int: the first lanes, continuous mode; uint64 words: bit mode) enables "
         "the same lanes every repeat, in Normal mask mode"))


def ub_gather(dst: Any, src: Any, src_offset: Any, args: tuple, mask_state: Any,
              config: Config | None) -> jax.Array:
    """``asc_gather`` / ``asc_gather_sync`` on UB (A2 / A3): Gather with srcBaseAddr 0."""
    return tensor_gather("asc_gather", dst, src, src_offset, 0, args, UB_GATHER_TYPES, config,
                         mask_state=mask_state, repeat_form="state")


UB_FORMS = _FORMS.format(
    name="asc_gather", base="", repeat="dst_repeat_stride, repeat",
    mask="under the hardware mask ``mask_state`` (a ``MaskState``; None: all lanes; Counter "
         "mode: a count of elements over the call, A28)")

