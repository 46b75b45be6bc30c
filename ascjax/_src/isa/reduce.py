"""Reductions: ``asc_reduce_sum_datablock`` (SPEC 4) and ``PairReduceSum`` (SPEC 5)."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from ..config import Config, resolve_config
from ..formats import BLOCKS_PER_REGISTER, FORMATS, Format
from ..numerics.bits import from_bits, to_bits
from .lanes import (
    Adder,
    check_int,
    check_register,
    check_supported,
    kernel,
    materialize,
    pair_tree,
    resolve_dtypes,
)
from .masks import element_mask

# src type -> dst type (seed table); 16-bit integers are widened before any add.
REDUCE_SUM_DATABLOCK_TYPES = {
    "int16_t": "int32_t", "uint16_t": "uint32_t", "half": "half",
    "int32_t": "int32_t", "uint32_t": "uint32_t", "float": "float",
}


def _block_sums(adder: Adder, src, emask, levels=None):
    """Per-DataBlock adjacent-pair sums of the masked register, as ``adder`` working values."""
    sums = adder.reduce_blocks(src, emask, adder.src.per_block, levels=levels)
    if adder.dst.is_float and adder.config.masked_lanes == "skip":  # an empty block is +0
        shape = emask.shape[:-1] + (BLOCKS_PER_REGISTER, adder.src.per_block)
        sums = jnp.where(jnp.any(emask.reshape(shape), axis=-1), sums, adder.zeros(()))
    return sums


def _place_low(values, lanes: int):
    """Registers whose lowest lanes hold ``values`` (..., k) and whose other lanes are 0.

    The padding moves bit patterns (a float pad could meet flush-to-zero).
    """
    bits = materialize(lax.bitcast_convert_type(values, np.dtype(f"uint{values.dtype.itemsize * 8}"))
                       if jnp.issubdtype(values.dtype, jnp.floating) else values)
    out = _pad_low(bits, lanes)
    return lax.bitcast_convert_type(out, values.dtype) if out.dtype != values.dtype else out


def _pad_low(values, lanes: int):
    return jnp.pad(values, [(0, 0)] * (values.ndim - 1) + [(0, lanes - values.shape[-1])])


def reduce_sum_datablock(src: Any, mask: Any, *, dtype: Any = None,
                         config: Config | None = None, return_partials: bool = False) -> Any:
    """``asc_reduce_sum_datablock(dst, src, mask)``: the sum of each 32-byte DataBlock.

    ``src`` is a register ``(..., lanes)`` of half, float, int16/uint16 (widened to 32 bits
    before any add) or int32/uint32; ``mask`` is hardware form ``(..., 256)`` or per-element
    ``(..., lanes)``. For each block b of 8, its elements (masked ones as +0) are summed by a
    tree of adjacent pairs, ``((e0+e1)+(e2+e3))+...``, each add rounded to the dst type (IEEE
    RNE, subnormals kept). ``dst[..., b]`` is block b's sum; every other lane is 0. Integers wrap
    (or saturate, ``config.int_overflow``). Leading axes are independent registers.

    Differentiable in ``src``: the derivative is that of the exact sum (rounding passes
    gradients straight through). ``return_partials=True`` also returns every tree level, as
    dst-typed arrays ``(..., 8, n)`` (the first being the masked, widened input).

    >>> import numpy as np, ascjax
    >>> x = np.arange(1, 65, dtype=np.uint32)
    >>> ascjax.reduce_sum_datablock(x, ascjax.create_mask("PAT_ALL", "uint32_t"))[:8].tolist()
    [36, 100, 164, 228, 292, 356, 420, 484]
    """
    where = "reduce_sum_datablock"
    config = resolve_config(config)
    fmt = resolve_dtypes(src, dtype, where=where, arg="src")
    check_supported(fmt, REDUCE_SUM_DATABLOCK_TYPES, where=where, arg="src dtype")
    src = check_register(src, fmt, where=where, arg="src")
    emask = element_mask(mask, fmt, where=where)
    dst_fmt = FORMATS[REDUCE_SUM_DATABLOCK_TYPES[fmt.name]]
    adder = Adder(fmt, dst_fmt, config)
    if return_partials:
        return _reduce_partials(adder, src, emask)
    return _reduce(adder, src, emask)


def _reduce_forward(adder: Adder, src, emask):
    return _place_low(adder.store(_block_sums(adder, src, emask)), adder.dst.lanes)


def _reduce_linear(adder: Adder, t, emask):
    t = jnp.where(emask, t, jnp.zeros((), t.dtype))
    blocks = t.reshape(t.shape[:-1] + (BLOCKS_PER_REGISTER, adder.src.per_block))
    return _pad_low(pair_tree(blocks, jnp.add), adder.dst.lanes)


@functools.partial(jax.jit, static_argnums=0)
def _reduce_partials(adder: Adder, src, emask):
    levels: list = []
    sums = _block_sums(adder, src, emask, levels)
    return _place_low(adder.store(sums), adder.dst.lanes), [adder.store(v) for v in levels]


_reduce = kernel(_reduce_forward, _reduce_linear)


# --- PairReduceSum --------------------------------------------------------------------------

# Data types per product, from the seed's template-parameter table.
PAIR_REDUCE_SUM_TYPES = {
    "950": ("half", "float"), "A3": ("half", "float"), "A2": ("half", "float"),
    "200I/500 A2": ("half", "float"), "inference AI Core": ("half", "float"),
    "training": ("half",),
}
_STRIDE_MAX = 65535  # **assumed** field width; the seed gives no range


def _pair_mask(mask: Any, fmt: Format, where: str) -> np.ndarray:
    """Per-element mask of one repeat from continuous (int) or bit mode (uint64 words)."""
    lanes = fmt.lanes
    if isinstance(mask, (int, np.integer)) and not isinstance(mask, (bool, np.bool_)):
        n = check_int(mask, 1, lanes, where=where, arg="mask (continuous mode)")
        return np.arange(lanes) < n
    if not isinstance(mask, (Sequence, np.ndarray)):
        raise TypeError(f"{where}: mask must be an int (continuous mode) or a sequence of "
                        f"uint64 words (bit mode), got {type(mask).__name__}")
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
    if not any(words):
        raise ValueError(f"{where}: bit-mode mask words are all 0; at least one bit must be set")
    return np.array([(words[j // 64] >> (j % 64)) & 1 for j in range(lanes)], bool)


def pair_reduce_sum(dst: Any, src: Any, repeat_time: int, mask: Any, dst_rep_stride: int,
                    src_blk_stride: int, src_rep_stride: int, *, product: str | None = None,
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

    Differentiable in ``dst`` and ``src`` as the exact operation.
    """
    where = "pair_reduce_sum"
    call = _repeat_call(where, dst, src, PAIR_REDUCE_SUM_TYPES, product, config, repeat_time,
                        mask, dst_rep_stride=dst_rep_stride, src_blk_stride=src_blk_stride,
                        src_rep_stride=src_rep_stride)
    config, fmt, dst, src, repeats, st, active = call
    d_stride, b_stride, r_stride = st["dst_rep_stride"], st["src_blk_stride"], st["src_rep_stride"]
    if repeats == 0:
        return dst

    repeat_reads(fmt, repeats, b_stride, r_stride, active, src.shape[-1], where)  # range check
    _, writes = pair_reduce_sum_plan(fmt, repeats, active, d_stride, b_stride, r_stride,
                                     config.zero_masked_pairs)
    if writes.max() >= dst.shape[-1]:
        raise ValueError(f"{where}: dst has {dst.shape[-1]} elements but the repeats write "
                         f"element {int(writes.max())}; the LocalTensor is too short")
    spec = _PairSpec(Adder(fmt, fmt, config), repeats, d_stride, b_stride, r_stride,
                     tuple(bool(a) for a in active), config.zero_masked_pairs)
    return _pair(spec, dst, src)


def _setup(where: str, dst: Any, src: Any, table: dict, product: str | None,
           config: Config | None):
    """Config, format and (dst, src) arrays broadcast to one batch shape, after the type checks."""
    config = resolve_config(config)
    if product is not None:
        config = config.replace(product=product)
    if config.product not in table:
        raise TypeError(f"{where}: not available on product {config.product!r}; available on "
                        f"{list(table)}")
    fmt = resolve_dtypes(src, None, where=where, arg="src")
    check_supported(fmt, table[config.product], where=where, arg=f"T on product {config.product!r}")
    dst_fmt = resolve_dtypes(dst, None, where=where, arg="dst")
    if dst_fmt != fmt:
        raise TypeError(f"{where}: dst dtype {dst_fmt.name} differs from src dtype {fmt.name}")
    src, dst = jnp.asarray(src), jnp.asarray(dst)
    for name, x in (("src", src), ("dst", dst)):
        if x.ndim == 0:
            raise ValueError(f"{where}: {name} must be a LocalTensor (..., n), got a scalar")
    batch = jnp.broadcast_shapes(dst.shape[:-1], src.shape[:-1])
    dst = jnp.broadcast_to(dst, batch + dst.shape[-1:])
    src = jnp.broadcast_to(src, batch + src.shape[-1:])
    return config, fmt, dst, src


class _RepeatCall(NamedTuple):
    """A checked LocalTensor call: config, T, dst/src on one batch shape, repeats, strides, mask."""

    config: Config
    fmt: Format
    dst: Any
    src: Any
    repeats: int
    strides: dict
    active: np.ndarray


def _repeat_call(where: str, dst: Any, src: Any, table: dict, product: str | None,
                 config: Config | None, repeat_time: int, mask: Any, **strides: int) -> _RepeatCall:
    """The checks every repeat/stride/mask instruction starts with, in the same order."""
    config, fmt, dst, src = _setup(where, dst, src, table, product, config)
    repeats = check_int(repeat_time, 0, 255, where=where, arg="repeat_time")
    checked = _strides(where, config, **strides)
    return _RepeatCall(config, fmt, dst, src, repeats, checked, _pair_mask(mask, fmt, where))


def _strides(where: str, config: Config, **strides: int) -> dict:
    """Static stride arguments in [0, 65535] (**assumed**); the training series rejects a 0
    destination repeat stride (vendor pages)."""
    out = {}
    for name, value in strides.items():
        lo = 1 if name == "dst_rep_stride" and config.product == "training" else 0
        out[name] = check_int(value, lo, _STRIDE_MAX, where=where, arg=name)
    return out


def repeat_offsets(fmt: Format, repeats: int, blk_stride: int, rep_stride: int) -> np.ndarray:
    """Element offsets ``(repeats, lanes)``: element e of repeat r is read from
    ``(r*rep_stride + (e // epb)*blk_stride)*epb + e % epb`` (strides in DataBlocks)."""
    epb = fmt.per_block
    e = np.arange(fmt.lanes)
    return (np.arange(repeats)[:, None] * rep_stride + (e // epb) * blk_stride) * epb + e % epb


def repeat_reads(fmt: Format, repeats: int, blk_stride: int, rep_stride: int, active: np.ndarray,
                 src_len: int, where: str) -> np.ndarray:
    """Element offsets ``(repeats, lanes)`` each repeat reads; masked-off lanes read offset 0.

    Raises if an active lane reads past the end of src (a LocalTensor too short).
    """
    reads = repeat_offsets(fmt, repeats, blk_stride, rep_stride)
    active = np.broadcast_to(active, reads.shape)
    needed = np.where(active, reads, -1)
    if needed.max(initial=-1) >= src_len:
        r = int(np.argmax(needed.max(axis=1) >= src_len))
        raise ValueError(f"{where}: src has {src_len} elements but repeat {r} reads element "
                         f"{int(needed.max())}; the LocalTensor is too short")
    return np.where(active, reads, 0)


def pair_reduce_sum_plan(fmt: Format, repeats: int, active: np.ndarray, dst_rep_stride: int,
                         src_blk_stride: int, src_rep_stride: int, zero_masked_pairs: bool):
    """Where PairReduceSum reads and writes: ``(reads (R, lanes), writes (R, lanes/2))``.

    ``reads[r, e]`` is the src element offset of element e of repeat r; ``writes[r, k]`` the
    dst offset output k of repeat r lands at, or -1 where it writes nothing (both elements
    masked and not ``zero_masked_pairs``) or a later repeat overwrites it.
    """
    half = fmt.lanes // 2
    reads = repeat_offsets(fmt, repeats, src_blk_stride, src_rep_stride)
    written = np.ones(half, bool) if zero_masked_pairs else active[0::2] | active[1::2]
    writes = np.arange(repeats)[:, None] * dst_rep_stride * half + np.arange(half)
    writes = np.where(written[None, :], writes, -1)
    if dst_rep_stride == 0:  # every repeat writes the same outputs: the last one wins
        writes[:-1] = -1
    return reads, writes


class _PairSpec(NamedTuple):
    adder: Adder
    repeats: int
    d_stride: int
    b_stride: int
    r_stride: int
    active: tuple
    zero_masked_pairs: bool


def _pair_rows(spec: _PairSpec, s):
    """The repeats' source registers ``(..., R, lanes)``: 8 strided block slices, no gather."""
    epb = spec.adder.src.per_block
    if spec.b_stride == 1 and spec.r_stride == 8:  # contiguous repeats: a reshape
        size = spec.repeats * 8 * epb
        s = s[..., :size] if s.shape[-1] >= size else jnp.pad(
            s, [(0, 0)] * (s.ndim - 1) + [(0, size - s.shape[-1])])
        return s.reshape(s.shape[:-1] + (spec.repeats, 8 * epb))
    r_span = (spec.repeats - 1) * spec.r_stride + 1
    n_blocks = r_span + 7 * spec.b_stride
    size = n_blocks * epb
    s = s[..., :size] if s.shape[-1] >= size else jnp.pad(
        s, [(0, 0)] * (s.ndim - 1) + [(0, size - s.shape[-1])])
    blocks = s.reshape(s.shape[:-1] + (n_blocks, epb))
    rows = []
    for b in range(8):
        first = b * spec.b_stride
        if spec.r_stride:
            rows.append(blocks[..., first:first + r_span:spec.r_stride, :])
        else:
            rows.append(jnp.broadcast_to(blocks[..., first:first + 1, :],
                                         blocks.shape[:-2] + (spec.repeats, epb)))
    rows = jnp.stack(rows, axis=-2)
    return rows.reshape(rows.shape[:-2] + (8 * epb,))


def _pair_write(spec: _PairSpec, d, sums, written):
    """dst with the repeats' outputs ``(..., R, half)`` stored where ``written`` (per k)."""
    half = sums.shape[-1]
    n = d.shape[-1]
    if written.all() and spec.d_stride == 1 and n == spec.repeats * half:  # dst fully rewritten
        return sums.reshape(d.shape)
    if spec.d_stride == 0:
        new = jnp.where(written, sums[..., -1, :], d[..., :half])
        return jnp.concatenate([new, d[..., half:]], axis=-1)
    span = spec.repeats * spec.d_stride * half
    padded = d if n >= span else jnp.pad(d, [(0, 0)] * (d.ndim - 1) + [(0, span - n)])
    rows = padded[..., :span].reshape(d.shape[:-1] + (spec.repeats, spec.d_stride * half))
    rows = jnp.concatenate([jnp.where(written, sums, rows[..., :half]), rows[..., half:]], -1)
    return jnp.concatenate([rows.reshape(d.shape[:-1] + (span,)), padded[..., span:]], -1)[..., :n]


def _pair_masks(spec: _PairSpec):
    active = np.array(spec.active)
    pair_active = active[0::2] | active[1::2]
    written = np.ones_like(pair_active) if spec.zero_masked_pairs else pair_active
    return active, pair_active, written


def _pair_forward(spec: _PairSpec, d, s):
    adder = spec.adder
    active, pair_active, written = _pair_masks(spec)
    sums = adder.reduce_blocks(_pair_rows(spec, s), active, 2)
    if not pair_active.all():
        sums = jnp.where(pair_active, sums, adder.zeros(()))
    bits = _pair_write(spec, to_bits(d, adder.dst),
                       to_bits(adder.store(sums), adder.dst), written)
    return from_bits(bits, adder.dst)


def _pair_linear(spec: _PairSpec, td, ts):
    active, pair_active, written = _pair_masks(spec)
    t = jnp.where(active, _pair_rows(spec, ts), jnp.zeros((), ts.dtype))
    sums = jnp.where(pair_active, t[..., 0::2] + t[..., 1::2], jnp.zeros((), ts.dtype))
    return _pair_write(spec, td, sums, written)


_pair = kernel(_pair_forward, _pair_linear, num_diff=2)
