"""LocalTensor repeats: the checks, addresses, mask and loads/stores of every repeat/stride
instruction (PairReduceSum, BlockReduceSum, WholeReduceSum, RepeatReduceSum, ReduceSum).

A repeat covers one 256-byte register's worth of src: element e of repeat r is read from element
offset ``(r*src_rep_stride + (e // epb)*src_blk_stride)*epb + e % epb`` (epb elements per 32-byte
DataBlock, strides in DataBlocks) under a mask that is the same every repeat. Repeat r writes its
``outputs`` results to ``r*dst_rep_stride*dst_unit + k``; repeats run in order, so a later write
to the same element wins, and src is read before any write.

``RepeatPlan`` computes these addresses once, with NumPy, from the static ints. The range
checks, the pictures (``viz``) and the kernels' loads and stores all read the same plan.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Sequence
from typing import Any, NamedTuple

import jax.numpy as jnp
import numpy as np

from ..config import Config, resolve_config
from ..formats import BLOCKS_PER_REGISTER, Format
from .lanes import check_int, check_supported, resolve_dtypes

REPEAT_MAX = 255
STRIDE_MAX = 65535  # **assumed** field width; the seed gives no range


# --- checks ---------------------------------------------------------------------------------

def setup(where: str, dst: Any, src: Any, table: dict, config: Config | None):
    """Config, format and (dst, src) arrays broadcast to one batch shape, after the type checks."""
    config = resolve_config(config)
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


def repeat_mask(mask: Any, fmt: Format, where: str) -> np.ndarray:
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
    """A checked LocalTensor call: config, T, dst/src on one batch shape, repeats, strides, mask."""

    config: Config
    fmt: Format
    dst: Any
    src: Any
    repeats: int
    strides: dict
    active: np.ndarray


def repeat_call(where: str, dst: Any, src: Any, table: dict, config: Config | None,
                repeat_time: int, mask: Any, **strides: int) -> RepeatCall:
    """The checks every repeat/stride/mask instruction starts with, in the same order."""
    config, fmt, dst, src = setup(where, dst, src, table, config)
    repeats = check_repeats(repeat_time, where)
    checked = check_strides(where, config, **strides)
    return RepeatCall(config, fmt, dst, src, repeats, checked, repeat_mask(mask, fmt, where))


# --- the address plan -----------------------------------------------------------------------

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
    repeat; ``count`` (ReduceSum's first-n form) also masks every element at offset >= count.
    Each repeat writes ``outputs`` results; output k of repeat r goes to
    ``r*dst_rep_stride*dst_unit + k`` where ``written[k]`` (``dst_unit >= outputs``, so only a
    dst stride of 0 makes two repeats write one element); ``written`` may also be per repeat,
    ``(R, outputs)`` (a first-n form's last, partly active repeat).
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
        active = np.broadcast_to(np.array(self.mask, bool), self.reads.shape)
        return active if self.count is None else active & (self.reads < self.count)

    @functools.cached_property
    def writes(self) -> np.ndarray:
        """``(R, outputs)``: the dst offset output k of repeat r lands at, or -1 where it writes
        nothing or a later repeat overwrites it."""
        k = np.arange(self.outputs)
        targets = np.arange(self.repeats)[:, None] * self.dst_rep_stride * self.dst_unit + k
        flat = np.where(np.array(self.written, bool), targets, -1).ravel()
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
        needed = np.where(self.active, self.reads, -1)
        if needed.max(initial=-1) >= src_len:
            r = int(np.argmax(needed.max(axis=1) >= src_len))
            raise ValueError(f"{where}: src has {src_len} elements but repeat {r} reads element "
                             f"{int(needed.max())}; the LocalTensor is too short")
        if self.writes.max(initial=-1) >= dst_len:
            raise ValueError(f"{where}: dst has {dst_len} elements but the repeats write "
                             f"element {int(self.writes.max())}; the LocalTensor is too short")

    def load(self, s):
        """The repeats' src elements ``(..., R, lanes)`` at ``reads``, without a gather.

        Contiguous repeats are a reshape; otherwise each of the 8 DataBlocks is one strided
        slice over the repeats (XLA's CPU gather is far slower). A DataBlock no element of the
        mask reads loads zeros, so the span stops at the last block read.
        """
        epb, repeats = self.fmt.per_block, self.repeats
        if self.contiguous:
            s = _fit(s, repeats * self.fmt.lanes)
            return s.reshape(s.shape[:-1] + (repeats, self.fmt.lanes))
        read = np.array(self.mask, bool).reshape(BLOCKS_PER_REGISTER, epb).any(axis=1)
        r_span = (repeats - 1) * self.src_rep_stride + 1
        n_blocks = r_span + int(np.nonzero(read)[0][-1]) * self.src_blk_stride
        s = _fit(s, n_blocks * epb)
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

    def rewrites(self, dst_len: int) -> bool:
        """Whether the results, in order, are the whole new dst (nothing of the old dst stays)."""
        return (bool(np.array(self.written, bool).all())
                and self.dst_rep_stride * self.dst_unit == self.outputs
                and dst_len == self.repeats * self.outputs)

    def store(self, d, values):
        """``d`` with ``values`` ``(..., R, outputs)`` stored at ``writes``, by slices.

        Works on bit patterns (forward) and on tangents alike.
        """
        k, n = self.outputs, d.shape[-1]
        written = np.array(self.written, bool)
        step = self.dst_rep_stride * self.dst_unit
        if self.rewrites(n):
            return values.reshape(d.shape)
        if step == 0:  # every repeat writes the same outputs: the last one wins
            values, step = values[..., -1:, :], k
            written = written[-1:] if written.ndim == 2 else written
        span = values.shape[-2] * step
        padded = _fit(d, max(n, span))
        rows = padded[..., :span].reshape(d.shape[:-1] + (values.shape[-2], step))
        rows = jnp.concatenate([jnp.where(written, values, rows[..., :k]), rows[..., k:]], -1)
        return jnp.concatenate([rows.reshape(d.shape[:-1] + (span,)), padded[..., span:]],
                               -1)[..., :n]


def _fit(x, size: int):
    """The first ``size`` elements of the last axis, padded with zeros where x is shorter."""
    if x.shape[-1] >= size:
        return x[..., :size]
    return jnp.pad(x, [(0, 0)] * (x.ndim - 1) + [(0, size - x.shape[-1])])
