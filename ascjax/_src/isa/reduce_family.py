"""The reduce family around the seeds (SPEC 10): BlockReduceSum, WholeReduceSum, RepeatReduceSum
and ReduceSum, at LocalTensor level, with ``pair_reduce_sum``'s conventions.

Every instruction here reads repeats of 256 bytes: element e of repeat r comes from element
offset ``(r*src_rep_stride + (e // epb)*src_blk_stride)*epb + e % epb`` (epb elements per
32-byte DataBlock), masked-off elements enter as +0 (``config.masked_lanes``), and every add is
one IEEE add rounded to T (half or float; subnormals kept, NaN canonical). The sums are
adjacent-pair trees: level 1 adds (e0+e1), (e2+e3), ...; level 2 adds adjacent level-1
results; and so on.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from ..config import Config
from ..formats import BLOCKS_PER_REGISTER, Format
from ..numerics.bits import from_bits, to_bits
from .lanes import (
    Adder,
    check_int,
    kernel,
    padded_pair_tree,
    pair_tree,
    sequential_sum,
)
from .reduce import _pair_mask, _repeat_call, _setup, _strides, repeat_reads

_ALL_PRODUCTS = ("950", "A3", "A2", "200I/500 A2", "inference AI Core", "training")
_HALF_FLOAT = ("half", "float")

# Data types per product, from each instruction's vendor page (the 950 also takes 32-bit
# integers for some of them; not emulated here).
BLOCK_REDUCE_SUM_TYPES = {p: _HALF_FLOAT for p in _ALL_PRODUCTS} | {"training": ("half",)}
WHOLE_REDUCE_SUM_TYPES = {p: _HALF_FLOAT for p in _ALL_PRODUCTS}
REPEAT_REDUCE_SUM_TYPES = {p: _HALF_FLOAT for p in ("950", "A2", "inference AI Core", "training")}
REDUCE_SUM_TYPES = {p: _HALF_FLOAT for p in _ALL_PRODUCTS}

# ReduceSum's order across repeat results, per product: (first-n "count" API, level-0
# mask/repeat API). 1 = adjacent-pair tree across repeat results, 2 = sequential (documented).
REDUCE_SUM_MODES = {p: (1, 1) for p in _ALL_PRODUCTS} | {"A3": (2, 1), "A2": (2, 1)}


# --- shared addressing ----------------------------------------------------------------------

def last_writes(targets: np.ndarray, written: np.ndarray, dst_len: int, where: str):
    """``(sel, pos)``: flat result indices to keep and the dst offsets they go to.

    Repeats run in order, so when two writes hit one element (a destination stride of 0)
    only the later one is kept. Raises if a write falls past the end of dst.
    """
    flat = np.where(np.broadcast_to(written, targets.shape), targets, -1).ravel()
    last = np.zeros(flat.shape, bool)
    _, first_from_end = np.unique(flat[::-1], return_index=True)
    last[flat.size - 1 - first_from_end] = True
    last &= flat >= 0
    if flat[last].max(initial=-1) >= dst_len:
        raise ValueError(f"{where}: dst has {dst_len} elements but the repeats write element "
                         f"{int(flat[last].max())}; the LocalTensor is too short")
    return np.nonzero(last)[0], flat[last]


def _scatter_forward(adder: Adder, d, sums, sel, pos):
    """dst with ``sums`` (..., R, k) written at ``pos`` (bit-exact, NaN payloads of dst kept)."""
    sums = sums.reshape(sums.shape[:-2] + (-1,))[..., sel]
    bits = to_bits(d, adder.dst).at[..., pos].set(
        to_bits(adder.store(sums), adder.dst), unique_indices=True)
    return from_bits(bits, adder.dst)


# --- BlockReduceSum -------------------------------------------------------------------------

_EMPTY_BLOCK = ("zero", "keep")


def block_reduce_sum(dst: Any, src: Any, repeat_time: int, mask: Any, dst_rep_stride: int,
                     src_blk_stride: int, src_rep_stride: int, *, empty_block: str = "zero",
                     product: str | None = None, config: Config | None = None) -> jax.Array:
    """``BlockReduceSum<T>(dst, src, repeatTime, mask, dstRepStride, srcBlkStride, srcRepStride)``.

    ``dst``, ``src``: LocalTensors ``(..., n)`` of half or float (training series: half);
    leading axes are independent tensors. For each repeat r and each DataBlock b of its 8, the
    block's elements (masked ones as +0) are summed by an adjacent-pair tree,
    ``((e0+e1)+(e2+e3))+...``, each add rounded to T, and written to element
    ``(r*dst_rep_stride + 0)*8 + b`` (dst_rep_stride is in units of 8 elements: 16 bytes for
    half, 32 for float). ``mask``: an int (the first ``mask`` elements) or uint64 words (bit
    mode), the same every repeat. A block with no active element writes +0
    (``empty_block="zero"``, **assumed**) or leaves dst unchanged (``"keep"``). Returns the new
    dst; ``repeat_time`` in [0, 255], the mask and strides are static Python ints.

    Differentiable in ``dst`` and ``src`` as the exact operation.
    """
    where = "block_reduce_sum"
    config, fmt, dst, src, repeats, st, active = _repeat_call(
        where, dst, src, BLOCK_REDUCE_SUM_TYPES, product, config, repeat_time, mask,
        dst_rep_stride=dst_rep_stride, src_blk_stride=src_blk_stride,
        src_rep_stride=src_rep_stride)
    if empty_block not in _EMPTY_BLOCK:
        raise ValueError(f"{where}: empty_block={empty_block!r} is not one of {_EMPTY_BLOCK}")
    if repeats == 0:
        return dst
    reads = repeat_reads(fmt, repeats, st["src_blk_stride"], st["src_rep_stride"], active,
                         src.shape[-1], where)
    block_active = active.reshape(BLOCKS_PER_REGISTER, fmt.per_block).any(axis=1)
    written = np.ones(BLOCKS_PER_REGISTER, bool) if empty_block == "zero" else block_active
    targets = (np.arange(repeats)[:, None] * st["dst_rep_stride"] * BLOCKS_PER_REGISTER
               + np.arange(BLOCKS_PER_REGISTER))
    sel, pos = last_writes(targets, written, dst.shape[-1], where)
    return _block(Adder(fmt, fmt, config), dst, src, reads, active, block_active, sel, pos)


def _blocks(x, fmt: Format):
    return x.reshape(x.shape[:-1] + (BLOCKS_PER_REGISTER, fmt.per_block))


def _block_forward(adder: Adder, d, s, reads, active, block_active, sel, pos):
    w = adder.masked(adder.load(s[..., reads]), active)
    sums = jnp.where(block_active, pair_tree(_blocks(w, adder.src), adder.add), adder.zeros(()))
    return _scatter_forward(adder, d, sums, sel, pos)


def _block_linear(adder: Adder, td, ts, reads, active, block_active, sel, pos):
    t = jnp.where(active, ts[..., reads], jnp.zeros((), ts.dtype))
    sums = pair_tree(_blocks(t, adder.src), jnp.add)
    sums = sums.reshape(sums.shape[:-2] + (-1,))[..., sel]
    return td.at[..., pos].set(sums, unique_indices=True)


_block = kernel(_block_forward, _block_linear, num_diff=2)


# --- WholeReduceSum / RepeatReduceSum -------------------------------------------------------

def whole_reduce_sum(dst: Any, src: Any, mask: Any, repeat_time: int, dst_rep_stride: int,
                     src_blk_stride: int, src_rep_stride: int, *, product: str | None = None,
                     config: Config | None = None) -> jax.Array:
    """``WholeReduceSum<T>(dst, src, mask, repeatTimes, dstRepStride, srcBlkStride, srcRepStride)``.

    Note the Ascend argument order: mask before repeatTimes. For each repeat r, its lanes
    (masked ones as +0) are summed by one adjacent-pair tree over the whole 256-byte repeat
    (7 levels for half, 6 for float), each add rounded to T, and the sum is written to element
    ``r*dst_rep_stride`` (in elements). Otherwise as ``block_reduce_sum``; a repeat always has
    an active lane (the mask checks forbid an empty one).

    Differentiable in ``dst`` and ``src`` as the exact operation.
    """
    where = "whole_reduce_sum"
    config, fmt, dst, src, repeats, st, active = _repeat_call(
        where, dst, src, WHOLE_REDUCE_SUM_TYPES, product, config, repeat_time, mask,
        dst_rep_stride=dst_rep_stride, src_blk_stride=src_blk_stride,
        src_rep_stride=src_rep_stride)
    return _whole(where, config, fmt, dst, src, repeats, active, st)


def repeat_reduce_sum(dst: Any, src: Any, repeat_time: int, mask: int, dst_blk_stride: int,
                      src_blk_stride: int, dst_rep_stride: int, src_rep_stride: int, *,
                      product: str | None = None, config: Config | None = None) -> jax.Array:
    """``RepeatReduceSum<T>(dst, src, repeatTime, mask, dstBlkStride, srcBlkStride, dstRepStride,
    srcRepStride)``: ``whole_reduce_sum`` with a continuous mask only.

    ``dst_blk_stride`` has no effect (vendor page: "invalid, any value"); it is still checked to
    be an int. Not available on Atlas A3 and Atlas 200I/500 A2.
    """
    where = "repeat_reduce_sum"
    config, fmt, dst, src = _setup(where, dst, src, REPEAT_REDUCE_SUM_TYPES, product, config)
    if not isinstance(mask, (int, np.integer)) or isinstance(mask, (bool, np.bool_)):
        raise TypeError(f"{where}: mask must be an int (continuous mode only), got {mask!r}")
    repeats = check_int(repeat_time, 0, 255, where=where, arg="repeat_time")
    check_int(dst_blk_stride, -2**31, 2**31 - 1, where=where, arg="dst_blk_stride")
    st = _strides(where, config, dst_rep_stride=dst_rep_stride, src_blk_stride=src_blk_stride,
                  src_rep_stride=src_rep_stride)
    return _whole(where, config, fmt, dst, src, repeats, _pair_mask(mask, fmt, where), st)


def _whole(where, config, fmt, dst, src, repeats, active, st):
    if repeats == 0:
        return dst
    reads = repeat_reads(fmt, repeats, st["src_blk_stride"], st["src_rep_stride"], active,
                         src.shape[-1], where)
    targets = np.arange(repeats)[:, None] * st["dst_rep_stride"]
    sel, pos = last_writes(targets, np.ones(1, bool), dst.shape[-1], where)
    return _repeat(Adder(fmt, fmt, config), dst, src, reads, active, sel, pos)


def _repeat_forward(adder: Adder, d, s, reads, active, sel, pos):
    w = adder.masked(adder.load(s[..., reads]), active)
    return _scatter_forward(adder, d, pair_tree(w, adder.add)[..., None], sel, pos)


def _repeat_linear(adder: Adder, td, ts, reads, active, sel, pos):
    t = jnp.where(active, ts[..., reads], jnp.zeros((), ts.dtype))
    return td.at[..., pos].set(pair_tree(t, jnp.add)[..., sel], unique_indices=True)


_repeat = kernel(_repeat_forward, _repeat_linear, num_diff=2)


# --- ReduceSum ------------------------------------------------------------------------------

def tensor_sum(w, adder: Adder, mode: int):
    """ReduceSum's order on working values ``(..., R, lanes)`` (masked lanes already +0).

    Each repeat is summed by an adjacent-pair tree; then the R repeat results are summed by an
    adjacent-pair tree padded with +0 to a power of two (mode 1: the hardware re-reduces them
    as a partly masked tensor) or sequentially, ``((s0 + s1) + s2) + ...`` (mode 2).
    """
    sums = pair_tree(w, adder.add)
    if mode == 1:
        return padded_pair_tree(sums, adder.add, adder.zeros(()))
    return sequential_sum(sums, adder.add)


def reduce_sum(dst: Any, src: Any, shared_tmp_buffer: Any, *args: Any, mode: int | None = None,
               product: str | None = None, config: Config | None = None) -> jax.Array:
    """``ReduceSum<T>``: the sum of a tensor, written to ``dst[..., 0]``. Two call forms:

    * first n elements: ``reduce_sum(dst, src, shared_tmp_buffer, count)``; repeat r covers
      elements ``[r*lanes, (r+1)*lanes)``, the last one partly (its other lanes +0);
    * level 0: ``reduce_sum(dst, src, shared_tmp_buffer, mask, repeat_time, src_rep_stride)``;
      repeat r reads ``(r*src_rep_stride + e // epb)*epb + e % epb`` under ``mask`` (int or
      uint64 words); ``repeat_time`` 0 leaves dst unchanged.

    Each repeat is summed by an adjacent-pair tree; the repeat results are then summed by an
    adjacent-pair tree padded with +0 to a power of two (``mode=1``) or in order,
    ``((s0 + s1) + s2) + ...`` (``mode=2``). Every add rounds to T. ``mode=None`` takes the
    product's documented default: mode 1 everywhere, except the first-n form on Atlas A2 and
    A3, which uses mode 2 (``REDUCE_SUM_MODES``). ``shared_tmp_buffer`` is the vendor's work
    space; the emulator neither reads nor returns it. Only ``dst[..., 0]`` changes.

    Differentiable in ``dst`` and ``src`` as the exact operation.

    >>> import numpy as np, ascjax
    >>> x = np.ones(640, np.float16); x[0] = 2047; x[128::128] = 2  # repeat sums 2174, 129 x 4
    >>> dst = np.zeros(1, np.float16)
    >>> [float(ascjax.reduce_sum(dst, x, None, 640, product=p)[0]) for p in ("950", "A2")]
    [2692.0, 2688.0]
    """
    where = "reduce_sum"
    config, fmt, dst, src = _setup(where, dst, src, REDUCE_SUM_TYPES, product, config)
    del shared_tmp_buffer  # work space only
    lanes = fmt.lanes
    if len(args) == 1:
        count = check_int(args[0], 1, src.shape[-1], where=where, arg="count")
        repeats = -(-count // lanes)
        reads = np.arange(repeats * lanes).reshape(repeats, lanes)
        active = reads < count
        reads = np.where(active, reads, 0)
        default = REDUCE_SUM_MODES[config.product][0]
    elif len(args) == 3:
        mask, repeat_time, src_rep_stride = args
        repeats = check_int(repeat_time, 0, 255, where=where, arg="repeat_time")
        st = _strides(where, config, src_rep_stride=src_rep_stride)
        active = _pair_mask(mask, fmt, where)
        if repeats == 0:
            return dst
        reads = repeat_reads(fmt, repeats, 1, st["src_rep_stride"], active, src.shape[-1], where)
        active = np.broadcast_to(active, reads.shape)
        default = REDUCE_SUM_MODES[config.product][1]
    else:
        raise TypeError(f"{where}: expected (dst, src, shared_tmp_buffer, count) or (dst, src, "
                        f"shared_tmp_buffer, mask, repeat_time, src_rep_stride); got "
                        f"{3 + len(args)} positional arguments")
    mode = default if mode is None else mode
    if mode not in (1, 2):
        raise ValueError(f"{where}: mode={mode!r} is not 1 (tree across repeats) or 2 "
                         f"(sequential across repeats)")
    if dst.shape[-1] < 1:
        raise ValueError(f"{where}: dst has no element to write the sum to")
    return _reduce_sum(Adder(fmt, fmt, config), mode, dst, src, reads, active)


def _reduce_sum_forward(spec, d, s, reads, active):
    adder, mode = spec
    total = tensor_sum(adder.masked(adder.load(s[..., reads]), active), adder, mode)
    bits = to_bits(d, adder.dst).at[..., 0].set(to_bits(adder.store(total),
                                                                    adder.dst))
    return from_bits(bits, adder.dst)


def _reduce_sum_linear(spec, td, ts, reads, active):
    # Tangents are real numbers: the derivative of the exact sum may use any order.
    t = jnp.where(active, ts[..., reads], jnp.zeros((), ts.dtype))
    return td.at[..., 0].set(jnp.sum(t, axis=(-2, -1)))


_reduce_sum_kernel = kernel(_reduce_sum_forward, _reduce_sum_linear, num_diff=2)


def _reduce_sum(adder, mode, dst, src, reads, active):
    return _reduce_sum_kernel((adder, mode), dst, src, reads, active)
