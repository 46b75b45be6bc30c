"""``AscendC::Scatter``: each src element to the dst byte offset ``dstBaseAddr + dstOffset[i]``.

Data movement: every bit is kept. An offset must be a multiple of sizeof(T), within the page's
range for the product and width, and land inside dst; a bad offset of an element that takes
part raises ``IndexError`` naming its dst_offset element, the offset and the condition it fails
(under ``jit`` as ``Config.out_of_range`` says; ``"ignore"`` drops that element). Masked-off
elements are never checked. Two elements at one offset (the page: "not predictable"): the later
one in processing order wins (A35; ``Config.scatter_duplicates="first"``).

The 950's int64_t / uint64_t rows are not emulated: JAX runs with 64-bit types off.
"""

from __future__ import annotations

import functools
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from ..config import Config
from ..formats import FORMATS, Format
from ..numerics.bits import from_bits, to_bits
from .gather_tensor import locate_faults, pick_lanes, report_faults
from .lanes import check_batch, check_int, kernel, placed
from .repeat import offset_tensors, repeat_mask

_ALL = ("int8_t", "uint8_t", "int16_t", "uint16_t", "half", "bfloat16_t", "int32_t", "uint32_t",
        "float")
# 数据类型 per product (the 950's int64_t / uint64_t not emulated).
SCATTER_TYPES = {"950": _ALL,
                 "200I/500 A2": ("int8_t", "uint8_t", "int16_t", "uint16_t", "half", "int32_t",
                                 "uint32_t", "float"),
                 "inference AI Core": ("uint16_t", "half", "uint32_t", "float")}
# The 950 takes 8-bit T in the first-n form only (page).
FIRST_N_ONLY = {"950": ("int8_t", "uint8_t")}


def offset_max(fmt: Format, product: str) -> int:
    """The page's range of a dstOffset: 8-bit [0, 2^16-1], 16-bit [0, 2^17-1], 32-bit uint32_t
    on the 950 and Atlas 200I/500 A2; uint32_t on inference AI Core."""
    if product in ("950", "200I/500 A2"):
        return {1: 2**16 - 1, 2: 2**17 - 1}.get(fmt.width, 2**32 - 1)
    return 2**32 - 1


def repeat_lanes(fmt: Format) -> int:
    """Elements per repeat of the mask form: 8 DataBlocks, 4 for an 8-bit T (page)."""
    return fmt.lanes // 2 if fmt.width == 1 else fmt.lanes


class _Spec(NamedTuple):
    fmt: Format
    src_index: tuple        # the src element of each element taking part, in processing order
    offset_index: tuple     # the dstOffset element it reads
    base: int               # dstBaseAddr in bytes
    limit: int              # the largest good offset
    first: bool             # the first element at an offset wins (else the last)


def _move(spec: _Spec, dst, src, offset):
    n, w = dst.shape[-1], spec.fmt.width
    off = offset[..., np.array(spec.offset_index, int)].astype(jnp.uint32)
    good = (off % np.uint32(w) == 0) & (off <= np.uint32(max(spec.limit, 0))) & (spec.limit >= 0)
    pos = jnp.where(good, (off + np.uint32(spec.base)) // np.uint32(w), np.uint32(n))
    pos = pos.astype(jnp.int32)
    values = src[..., np.array(spec.src_index, int)]
    batch = jnp.broadcast_shapes(dst.shape[:-1], pos.shape[:-1], values.shape[:-1])
    order = jnp.arange(pos.shape[-1], dtype=jnp.int32)

    def one(d, p, v):
        if spec.first:
            winner = jnp.full(n, pos.shape[-1], jnp.int32).at[p].min(order, mode="drop")
            hit = winner < pos.shape[-1]
        else:
            winner = jnp.full(n, -1, jnp.int32).at[p].max(order, mode="drop")
            hit = winner >= 0
        return jnp.where(hit, v[jnp.clip(winner, 0, pos.shape[-1] - 1)], d)

    if not batch:
        return one(dst, pos, values)
    flat = [jnp.broadcast_to(x, batch + x.shape[-1:]).reshape((-1,) + x.shape[-1:])
            for x in (dst, pos, values)]
    return jax.vmap(one)(*flat).reshape(batch + (n,))


def _forward(spec: _Spec, dst, src, offset):
    return from_bits(_move(spec, to_bits(dst, spec.fmt), to_bits(src, spec.fmt), offset),
                     spec.fmt)


def _linear(spec: _Spec, t_dst, t_src, offset):
    return _move(spec, t_dst, t_src, offset)


_scatter = kernel(_forward, _linear, num_diff=2)


@functools.partial(jax.jit, static_argnums=(0, 1, 2))
def _faults(spec: _Spec, top: int, room: int, dst_offset):
    """Gather's ``locate_faults`` of the offsets the call reads (misaligned, beyond the
    page's range ``top``, at or past the ``room`` bytes of dst from dstBaseAddr), each named by
    its dst_offset element; one compiled call."""
    index = np.array(spec.offset_index, int)
    off = pick_lanes(dst_offset, index).astype(jnp.uint32)
    return locate_faults(off, index, spec.fmt.width, top, room)


def scatter(dst: Any, src: Any, dst_offset: Any, dst_base_addr: int, *args: Any,
            config: Config | None = None) -> jax.Array:
    """``AscendC::Scatter(dst, src, dstOffset, dstBaseAddr, ...)``: src element i is written to
    dst at byte ``dstBaseAddr + dstOffset[i]``. Returns the new dst; elements not written keep
    their bits.

    * first n: ``scatter(dst, src, dst_offset, dst_base_addr, count)``: elements 0..count-1;
    * mask form: ``scatter(dst, src, dst_offset, dst_base_addr, mask, repeat_time,
      src_rep_stride)``: lane e of repeat r (``mask`` an int count or uint64 words, the same
      every repeat) reads src element ``r*srcRepStride*epb + e`` (srcRepStride in DataBlocks)
      and dstOffset element ``r*lanes + e`` (A37; ``Config.scatter_offset="src"``: the
      element beside src's). A repeat covers 8 DataBlocks, 4 for an 8-bit T (page); the 950
      takes 8-bit T in the first-n form only.

    ``dst`` / ``src`` are 1-D LocalTensors of one type T, ``dst_offset`` a uint32 LocalTensor
    of byte offsets, ``dst_base_addr`` a static byte offset from dst's start (a multiple of
    sizeof(T)). count or repeat_time 0 leaves dst unchanged (A36; ``Config.empty_move``).
    Differentiable in dst and src (floating T): the gradient of src element i is the
    cotangent of the dst element it wrote (a gather), 0 when a later element overwrote it.
    """
    where = "scatter"
    config, fmt, dst, src, dst_offset = offset_tensors(where, dst, src, dst_offset, "dst_offset",
                                                       SCATTER_TYPES, config)
    base = check_int(dst_base_addr, 0, 2**32 - 1, where=where, arg="dst_base_addr")
    if base % fmt.width:
        raise ValueError(f"{where}: dst_base_addr={base} is not a multiple of sizeof({fmt.name})"
                         f" = {fmt.width} (the page: data would be misplaced)")
    src_index, offset_index, empty = _elements(where, fmt, config, args, src.shape[-1],
                                               dst_offset.shape[-1])
    batch = check_batch(where, dst=dst, src=src, dst_offset=dst_offset)
    if empty:
        if config.empty_move == "raise":
            raise ValueError(f"{where}: a count or repeat_time of 0 is not a documented NOP "
                             f"(the 950 page: not guaranteed); Config(empty_move=\"raise\") "
                             f"rejects it")
        return jnp.broadcast_to(dst, batch + dst.shape[-1:])
    if src_index.size == 0:     # no active element (a mask enabling none is rejected)
        return jnp.broadcast_to(dst, batch + dst.shape[-1:])
    top = int(offset_index.max())
    if dst_offset.shape[-1] <= top:
        raise ValueError(f"{where}: dst_offset has {dst_offset.shape[-1]} elements but the call "
                         f"reads element {top}; the LocalTensor is too short")
    n, w = dst.shape[-1], fmt.width
    top = offset_max(fmt, config.product)
    limit = min(top, n * w - base - w)
    spec = _Spec(fmt, tuple(src_index.tolist()), tuple(offset_index.tolist()), base, limit,
                 config.scatter_duplicates == "first")
    if config.out_of_range != "ignore" and dst_offset.size:
        # gather's wording, one message per fault kind: the user sees which condition failed
        report_faults(_faults(spec, top, n * w - base, dst_offset),
                      lambda at, o, why: f"{where}: dst_offset {placed(at, 'element', 'tensor')}"
                      f" holds byte offset {o}, which {why}", config.out_of_range,
                      t=fmt.name, size=w, note="the page: unexpected behaviour", limit=top,
                      past="lands past the end of dst", n=n, base_arg="dstBaseAddr", base=base)
    return _scatter(spec, dst, src, dst_offset)


def _elements(where: str, fmt: Format, config: Config, args: tuple, n_src: int, n_off: int):
    """(src elements, dstOffset elements, empty?) of the call, in processing order."""
    if len(args) == 1:
        # element i reads src[i] and dstOffset[i] (dst is reached through the offsets)
        count = check_int(args[0], 0, min(n_src, n_off), where=where,
                          arg=f"count (at most the {n_src} elements of src and the {n_off} of "
                              f"dst_offset)")
        i = np.arange(count)
        return i, i, count == 0
    if len(args) != 3:
        raise TypeError(f"{where}: expected (dst, src, dst_offset, dst_base_addr, count) or "
                        f"(dst, src, dst_offset, dst_base_addr, mask, repeat_time, "
                        f"src_rep_stride); got {4 + len(args)} positional arguments")
    if fmt.name in FIRST_N_ONLY.get(config.product, ()):
        raise TypeError(f"{where}: {fmt.name} takes only the first-n (count) form on product "
                        f"{config.product!r} (page)")
    mask, repeat_time, src_rep_stride = args
    lanes = repeat_lanes(fmt)
    # An 8-bit repeat covers 128 elements: its mask is read as a 16-bit one (128 lanes).
    active = repeat_mask(mask, FORMATS["uint16_t"] if fmt.width == 1 else fmt, where)
    repeats = check_int(repeat_time, 0, 255, where=where, arg="repeat_time")
    rep = check_int(src_rep_stride, 0, 255, where=where, arg="src_rep_stride")
    epb = fmt.per_block
    r, e = np.nonzero(np.broadcast_to(active, (repeats, lanes)))
    src_index = r * rep * epb + e
    offset_index = r * lanes + e if config.scatter_offset == "repeat" else src_index
    if src_index.size and src_index.max() >= n_src:
        worst = int(np.argmax(src_index))
        raise ValueError(f"{where}: src has {n_src} elements but repeat {int(r[worst])} reads "
                         f"element {int(src_index.max())}; the LocalTensor is too short")
    return src_index, offset_index, repeats == 0
