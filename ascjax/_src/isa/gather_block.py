"""DataBlock gathers: ``Gatherb`` and ``asc_gather_datablock`` (UB -> UB), the register form of
``asc_gather_datablock`` and ``Reg::GatherB`` (UB -> vector register).

Each moves whole 32-byte DataBlocks of src, found by byte offsets, and keeps every bit (NaN
payloads, -0, subnormals, the 8-bit and packed 4-bit formats: bytes are moved). An offset must
be a multiple of 32 (src is 32-byte aligned, so the block it names is aligned) and its block
must lie inside src; a bad offset of a block that is read raises ``IndexError`` naming the
instruction, the offset's element and its value (under ``jit`` as ``Config.out_of_range``
says). Blocks that are not read (masked off) are never checked.

The pages' int64_t / uint64_t rows (Gatherb on the 950 and Atlas 200I/500 A2, the register
form's b64 rows) are not emulated: JAX runs with 64-bit types off.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from .. import native
from ..config import Config, resolve_config
from ..formats import BLOCKS_PER_REGISTER, DATABLOCK_BYTES, FORMATS, Format
from ..numerics.bits import from_bits, to_bits
from .lanes import (
    REGISTER_PRODUCTS,
    as_array,
    check_batch,
    check_int,
    check_product,
    check_register,
    check_supported,
    first_true,
    kernel,
    merge_last,
    placed,
    resolve_dtypes,
    runtime_check,
    split_last,
    struct_fields,
)
from .masks import element_mask
from .repeat import fit_last_axis, offset_tensors

_ALL_WIDTHS = ("int8_t", "uint8_t", "int16_t", "uint16_t", "half", "bfloat16_t", "int32_t",
               "uint32_t", "float")
# Gatherb's 数据类型 per product (int64_t / uint64_t not emulated).
GATHERB_TYPES = {"950": _ALL_WIDTHS, "A3": ("uint16_t", "uint32_t"),
                 "A2": ("uint16_t", "uint32_t"), "200I/500 A2": _ALL_WIDTHS}
# asc_gather_datablock on UB (c-memory): uint16_t and uint32_t, Atlas A2 / A3.
UB_TYPES = {"A3": ("uint16_t", "uint32_t"), "A2": ("uint16_t", "uint32_t")}
# asc_gather_datablock on registers (c-reg) and Reg::GatherB (b8 / b16 / b32): the 950.
REGISTER_TYPES = ("int4b_t", "int8_t", "uint8_t", "fp4x2_e2m1_t", "fp4x2_e1m2_t", "hifloat8_t",
                  "fp8_e8m0_t", "fp8_e5m2_t", "fp8_e4m3fn_t", "int16_t", "uint16_t", "half",
                  "bfloat16_t", "int32_t", "uint32_t", "float")
# Products whose Gatherb page calls repeatTime 0 a NOP.
NOP_PRODUCTS = ("A2", "A3")
DST_BLK_STRIDE_MAX, DST_REP_STRIDE_MAX = 255, 65535   # uint8_t / uint16_t fields

_U32 = FORMATS["uint32_t"]
BLOCK_WORDS = DATABLOCK_BYTES // 4


class GatherRepeatParams(NamedTuple):
    """``AscendC::GatherRepeatParams{dstBlkStride, dstRepStride}`` (in DataBlocks; the
    struct's defaults 1 and 8). Its other fields are deprecated and have no effect (page)."""

    dst_blk_stride: int = 1
    dst_rep_stride: int = 8


# --- offsets: the value-dependent check -----------------------------------------------------

def check_offsets(offsets, read, *, align: int, limit: int, where: str, what: str,
                  rule: str, mode: str, count: int | None = None, batch: str = "tensor"):
    """Raise (as ``runtime_check``) when a read element of ``offsets`` is not a multiple of
    ``align`` or exceeds ``limit``; return the bool array of good offsets.

    ``offsets`` uint32 ``(..., n)``, of which the first ``count`` (default: all) are checked;
    ``read`` bool, broadcastable: the elements that take part. Either may be a function of no
    arguments that gives it. The message names the first bad element (its position in the last
    axis, and which ``batch`` it is in) and its value. The bad element is located only when
    there is one, from ``offsets`` and ``read`` as given: XLA copies whatever a ``lax.cond``
    takes, so a caller passes the call's own arrays and lets the slicing happen here (a
    register gather's check: 6.4 -> 3.9 ms at 2^18 registers).
    """
    def bad_and_offsets():
        off = jnp.asarray(offsets() if callable(offsets) else offsets)
        off = (off if count is None else off[..., :count]).astype(jnp.uint32)
        if limit < 0:
            good = jnp.zeros(off.shape, bool)
        else:
            good = (off % np.uint32(align) == 0) & (off <= np.uint32(min(limit, 2**32 - 1)))
        active = read() if callable(read) else read
        shape = jnp.broadcast_shapes(jnp.shape(active), off.shape)  # a mask per register too
        return jnp.broadcast_to(active, shape) & ~good, off, good

    bad, _, good = bad_and_offsets()
    if mode != "ignore" and bad.size:  # an empty batch reads nothing
        def locate():  # only when some element is bad: an argmax is a slow reduction
            b, o, _ = bad_and_offsets()
            at = first_true(b)
            return at, jnp.broadcast_to(o, b.shape)[tuple(at)]

        def clean():
            return jnp.zeros(bad.ndim, jnp.int32), jnp.zeros((), jnp.uint32)

        if isinstance(bad, jax.core.Tracer):
            detail = lax.cond(jnp.any(bad), locate, clean)
        elif bool(jnp.any(bad)):  # eagerly a Python branch: an eager cond of these new
            detail = locate()     # closures traced them again on every call
        else:
            return good
        runtime_check(bad, lambda at, o: f"{where}: {placed(at, what, batch)} holds byte offset "
                      f"{o}; {rule} (the hardware raises an address exception)", detail,
                      mode=mode)
    return good


def _words(bits):
    """Bit patterns ``(..., n)`` as little-endian uint32 words ``(..., ceil(n / k))``, k
    elements a word. The DataBlock moves run on words: XLA's CPU backend computes a gather of
    bfloat16 values (which the bitcasts would otherwise fold into) in float32, flushing
    subnormals."""
    k = 4 // bits.dtype.itemsize
    if k == 1:
        return bits
    bits = fit_last_axis(bits, -(-bits.shape[-1] // k) * k)
    return lax.bitcast_convert_type(split_last(bits, k), jnp.uint32)


def _unwords(words, dtype, n: int):
    """The first ``n`` bit patterns of ``dtype`` in ``words`` (``_words`` undone)."""
    if np.dtype(dtype).itemsize == 4:
        return words[..., :n]
    bits = lax.bitcast_convert_type(words, dtype)
    return merge_last(bits)[..., :n]


def _blocks(src, epb: int):
    """src ``(..., n)`` as DataBlocks ``(..., nb + 1, epb)``, a zero block last (what a bad
    offset reads under ``out_of_range="ignore"``)."""
    nb = src.shape[-1] // epb + 1
    s = fit_last_axis(src, nb * epb)
    s = s.at[..., (nb - 1) * epb:].set(jnp.zeros((), s.dtype))
    return s.reshape(s.shape[:-1] + (nb, epb))


def _take_blocks(blocks, index, mode: str | None = None):
    """``blocks[..., index[..., k], :]`` per batch element: ``(..., K, epb)`` (``mode``: the
    gather's out-of-bounds mode, as ``.at[].get``'s)."""
    if blocks.ndim == 2:
        return blocks.at[index].get(mode=mode)
    batch = jnp.broadcast_shapes(blocks.shape[:-2], index.shape[:-1])
    b = jnp.broadcast_to(blocks, batch + blocks.shape[-2:]).reshape((-1,) + blocks.shape[-2:])
    i = jnp.broadcast_to(index, batch + index.shape[-1:]).reshape((-1,) + index.shape[-1:])
    return jax.vmap(lambda x, j: x.at[j].get(mode=mode))(b, i).reshape(
        batch + index.shape[-1:] + blocks.shape[-1:])


def _take_offsets(blocks, offsets, good):
    """The blocks at byte ``offsets`` ``(..., K, epb)``, the zero block (last) where an offset
    is bad."""
    blk = jnp.asarray(offsets).astype(jnp.uint32) // np.uint32(DATABLOCK_BYTES)
    zero = np.uint32(blocks.shape[-2] - 1)
    return _take_blocks(blocks, jnp.where(good, blk, zero).astype(jnp.int32))


# --- UB -> UB: Gatherb and asc_gather_datablock (c-memory) -----------------------------------

class _UbSpec(NamedTuple):
    fmt: Format
    count: int              # offsets read: 8 per repeat
    sources: tuple          # per dst block 0..len-1: the (i*8 + j) that writes it last, or -1
    n_src: int


def _ub_plan(repeats: int, blk_stride: int, rep_stride: int) -> np.ndarray:
    """Per dst DataBlock: which gathered block (i*8 + j) is written there last, or -1.

    Block j of repeat i lands at DataBlock ``i*rep_stride + j*blk_stride`` of dst; the writes
    run in (i, j) order, so a later one to the same block wins (the page's loop).
    """
    i, j = np.divmod(np.arange(repeats * BLOCKS_PER_REGISTER), BLOCKS_PER_REGISTER)
    targets = i * rep_stride + j * blk_stride
    sources = np.full(int(targets.max(initial=-1)) + 1, -1)
    sources[targets] = np.arange(targets.size)   # NumPy assigns in order: the last one stays
    return sources


def _ub_move(spec: _UbSpec, dst, src, offset, epb: int):
    """dst with the gathered blocks written; ``epb`` array elements a DataBlock (8 words, or
    the type's elements for tangents)."""
    gathered = _take_offsets(_blocks(src, epb), offset[..., :spec.count],
                             _good_blocks(spec, offset))
    sources = np.array(spec.sources, int)
    span = sources.size * epb
    batch = jnp.broadcast_shapes(dst.shape[:-1], gathered.shape[:-2])
    dst = jnp.broadcast_to(dst, batch + dst.shape[-1:])
    if span == 0:
        return dst
    old = dst[..., :span].reshape(batch + (sources.size, epb))
    new = jnp.where((sources >= 0)[:, None], gathered[..., np.maximum(sources, 0), :], old)
    return jnp.concatenate([new.reshape(batch + (span,)), dst[..., span:]], axis=-1)


def _good_blocks(spec: _UbSpec, offset):
    limit = spec.n_src * spec.fmt.width - DATABLOCK_BYTES
    off = jnp.asarray(offset[..., :spec.count]).astype(jnp.uint32)
    return (off % np.uint32(DATABLOCK_BYTES) == 0) & (off <= np.uint32(max(limit, 0))) & (
        limit >= 0)


def _ub_forward(spec: _UbSpec, dst, src, offset):
    out = _ub_move(spec, _words(to_bits(dst, spec.fmt)), _words(to_bits(src, spec.fmt)), offset,
                   BLOCK_WORDS)
    return from_bits(_unwords(out, spec.fmt.bits_dtype, dst.shape[-1]), spec.fmt)


def _ub_linear(spec: _UbSpec, t_dst, t_src, offset):
    return _ub_move(spec, t_dst, t_src, offset, spec.fmt.per_block)


_ub_gather = kernel(_ub_forward, _ub_linear, num_diff=2)


def _ub_call(where: str, dst, src, offset, repeat: int, blk_stride: int, rep_stride: int,
             table: dict, config: Config | None):
    config, fmt, dst, src, offset = offset_tensors(where, dst, src, offset, "offset", table,
                                                   config)
    batch = check_batch(where, dst=dst, src=src, offset=offset)
    repeat = check_int(repeat, 0, 255, where=where, arg="repeat_time")
    blk_stride = check_int(blk_stride, 0, DST_BLK_STRIDE_MAX, where=where, arg="dst_blk_stride")
    rep_stride = check_int(rep_stride, 0, DST_REP_STRIDE_MAX, where=where, arg="dst_rep_stride")
    blk_stride = blk_stride or 1          # the page: dstBlkStride 0 is taken as 1
    if repeat == 0:
        if config.empty_move == "raise" and config.product not in NOP_PRODUCTS:
            raise ValueError(f"{where}: repeat_time=0 is a NOP only on {list(NOP_PRODUCTS)} "
                             f"(the page); Config(empty_move=\"raise\") rejects it on product "
                             f"{config.product!r}")
        return jnp.broadcast_to(dst, batch + dst.shape[-1:])
    count = repeat * BLOCKS_PER_REGISTER
    if offset.shape[-1] < count:
        raise ValueError(f"{where}: offset has {offset.shape[-1]} elements but repeat_time="
                         f"{repeat} reads {count} (8 DataBlock offsets per repeat)")
    sources = _ub_plan(repeat, blk_stride, rep_stride)
    epb = fmt.per_block
    if sources.size * epb > dst.shape[-1]:
        raise ValueError(f"{where}: dst has {dst.shape[-1]} elements but the repeats write "
                         f"DataBlock {sources.size - 1} (elements up to {sources.size * epb - 1})"
                         f"; the LocalTensor is too short")
    n_src = src.shape[-1]
    check_offsets(offset, True, count=count, align=DATABLOCK_BYTES,
                  limit=n_src * fmt.width - DATABLOCK_BYTES, where=where, what="offset element",
                  rule=f"it must be a multiple of 32 and the DataBlock it names must lie inside "
                  f"src ({n_src * fmt.width} bytes)", mode=config.out_of_range)
    return _ub_gather(_UbSpec(fmt, count, tuple(sources.tolist()), n_src), dst, src, offset)


# GatherRepeatParams' fields after the two that count, in the page's table 3 order: deprecated,
# "不对其进行业务处理" (no effect).
_DEPRECATED_REPEAT_FIELDS = ("blockNumber", "src0BlkStride", "src1BlkStride", "src0RepStride",
                             "src1RepStride", "repeatStrideMode", "strideSizeMode")


def _repeat_params(params: Any, where: str) -> tuple[int, int]:
    return struct_fields(params, GatherRepeatParams, where=where, arg="repeat_params",
                         deprecated=_DEPRECATED_REPEAT_FIELDS)


def gatherb(dst: Any, src: Any, offset: Any, repeat_time: int, repeat_params: Any, *,
            config: Config | None = None) -> jax.Array:
    """``AscendC::Gatherb(dst, src, offset, repeatTime, repeatParams)``: gather DataBlocks.

    Repeat i, block j copies the 32-byte DataBlock at byte ``offset[i*8 + j]`` of ``src`` to
    DataBlock ``i*dstRepStride + j*dstBlkStride`` of ``dst`` (a ``dstBlkStride`` of 0 is taken
    as 1, the page's note), in that order, so a later block written to the same place wins.
    ``dst`` / ``src`` are 1-D LocalTensors of one type T (from their 32-byte aligned start);
    ``offset`` a uint32 LocalTensor of at least ``8 * repeat_time`` byte offsets, each a
    multiple of 32 naming a block inside src. ``repeat_params``: ``GatherRepeatParams``, the
    pair ``(dst_blk_stride, dst_rep_stride)`` as the page's ``{1, 8}`` (the table's seven
    deprecated fields may follow; they have no effect), or a dict of fields by the page's
    names or snake_case. Returns the new dst; elements not written
    keep their bits. repeat_time 0 leaves dst unchanged (A36; ``Config.empty_move``).
    Differentiable in dst and src (floating T): a block's cotangent flows back to the source
    block it was copied from.
    """
    where = "gatherb"
    blk, rep = _repeat_params(repeat_params, where)
    return _ub_call(where, dst, src, offset, repeat_time, blk, rep, GATHERB_TYPES, config)


# --- UB -> register: asc_gather_datablock (c-reg) and Reg::GatherB --------------------------

class _RegSpec(NamedTuple):
    fmt: Format
    element: bool           # the mask is per element of T (else per DataBlock)
    n_src: int


def _reg_take(spec: _RegSpec, src, index, active):
    """The 8 blocks the index names ``(..., lanes)`` in src's dtype (bits or tangents), zeros
    where a block is not read or its offset is bad (``_reg_blocks``)."""
    return _reg_blocks(spec, src, *_reg_plan(spec, index, active))


def _reg_plan(spec: _RegSpec, index, active):
    """(byte offsets ``(..., 8)``, the blocks to move ``(..., 8)``: read and good)."""
    offsets = index[..., :BLOCKS_PER_REGISTER].astype(jnp.uint32)
    return offsets, _good_register(spec, index) & _read_blocks(spec, active)


def _reg_blocks(spec: _RegSpec, src, offsets, keep):
    """Block k of the result: src's block at byte ``offsets[..., k]`` where ``keep``, else
    zeros (on CPU the forward bits move by ``native.block_gather``, the same bits).

    The gather reads block ``offset // 32``, clamped into src, and the bad and unread blocks
    are zeroed after it: XLA's CPU backend fuses whatever computes a gather's indices into its
    loop, once per element moved (selecting a zero block there: float32 at 2^18 registers
    1.2x slower).
    Blocks move at the type's own width: 16-bit patterns as uint16 (the bit-exactness tests
    cover bfloat16 subnormals and NaN payloads), 4-bit pairs as bytes.
    """
    epb = spec.fmt.per_block
    nb = src.shape[-1] // epb
    if nb == 0:  # no whole DataBlock: every offset is bad
        batch = jnp.broadcast_shapes(src.shape[:-1], offsets.shape[:-1], keep.shape[:-1])
        return jnp.zeros(batch + (spec.fmt.lanes,), src.dtype)
    blocks = src[..., :nb * epb].reshape(src.shape[:-1] + (nb, epb))
    taken = _take_blocks(blocks, (offsets // np.uint32(DATABLOCK_BYTES)).astype(jnp.int32),
                         mode="clip")
    taken = jnp.where(keep[..., None], taken, jnp.zeros((), taken.dtype))
    return taken.reshape(taken.shape[:-2] + (BLOCKS_PER_REGISTER * epb,))


def _active_lanes(spec: _RegSpec, active):
    return active if spec.element else jnp.repeat(active, spec.fmt.per_block, axis=-1)


def _read_blocks(spec: _RegSpec, active):
    """The DataBlocks an active mask reads ``(..., 8)``."""
    if not spec.element:
        return active
    return active.reshape(active.shape[:-1] + (BLOCKS_PER_REGISTER, -1)).any(axis=-1)


def _good_register(spec: _RegSpec, index):
    limit = spec.n_src * spec.fmt.width - DATABLOCK_BYTES
    off = index[..., :BLOCKS_PER_REGISTER].astype(jnp.uint32)
    return (off % np.uint32(DATABLOCK_BYTES) == 0) & (off <= np.uint32(max(limit, 0))) & (
        limit >= 0)


def _reg_forward(spec: _RegSpec, src, index, active):
    fmt = spec.fmt
    offsets, keep = _reg_plan(spec, index, active)

    def by_xla(src, offsets, keep):
        bits = _reg_blocks(spec, to_bits(src, fmt), offsets, keep)
        if spec.element:  # per-element mask: a select on bits, so no select sees a narrow float
            bits = jnp.where(_active_lanes(spec, active), bits, np.zeros((), bits.dtype))
        return from_bits(bits, fmt)

    if spec.element or src.dtype.itemsize * fmt.per_block != DATABLOCK_BYTES:  # 4-bit pairs
        return by_xla(src, offsets, keep)
    # On CPU the kernel moves src in its own dtype: XLA's CPU backend would copy a result of
    # bits to bitcast it (float32 at 2^20 registers: 82 ms for the gather, 110 for the copy).
    return native.block_gather(jnp.asarray(src), offsets, keep, by_xla)


def _reg_linear(spec: _RegSpec, t_src, index, active):
    values = _reg_take(spec, t_src, index, active)
    return jnp.where(_active_lanes(spec, active), values, jnp.zeros((), values.dtype))


_reg_gather = kernel(_reg_forward, _reg_linear, num_diff=1)


def _block_mask(mask: Any, fmt: Format, where: str):
    """DataBlock k is gathered iff mask bit 4k (b32 element k) is set: ``(..., 8)``.

    A per-element mask of T ``(..., lanes)`` stands for the canonical hardware form (A1):
    bit 4k is element ``4k / sizeof(T)``'s bit.
    """
    mask = as_array(mask, where=where, arg="mask", accepts=("bool",))
    if mask.dtype != jnp.bool_:
        raise TypeError(f"{where}: mask must be a bool array (hardware form (..., 256) or "
                        f"per-element form (..., {fmt.lanes})), got dtype {mask.dtype}")
    if mask.ndim >= 1 and mask.shape[-1] in (256, fmt.lanes):
        step = 4 if mask.shape[-1] == 256 else 4 // fmt.width
        return mask[..., 0:BLOCKS_PER_REGISTER * step:step]
    raise ValueError(f"{where}: mask has shape {mask.shape}; expected (..., 256) (hardware "
                     f"form) or (..., {fmt.lanes}) (one per {fmt.name} lane)")


def _register_call(where: str, src, index, mask, dtype, element: bool, config: Config | None):
    config = check_product(config, REGISTER_PRODUCTS, where)
    src = as_array(src, where=where, arg="src")
    if src.ndim != 1:
        raise ValueError(f"{where}: src must be 1-D (the UB from the 32-byte aligned source "
                         f"address on), got shape {src.shape}")
    fmt = resolve_dtypes(src, dtype, where=where, arg="src")
    check_supported(fmt, REGISTER_TYPES, where=where)
    index = as_array(index, where=where, arg="index", accepts=("uint32_t",))
    if index.dtype != np.uint32:
        raise TypeError(f"{where}: index must be a vector_uint32_t register (byte offsets), got "
                        f"dtype {index.dtype}")
    index = check_register(index, _U32, where=where, arg="index")

    def active_of():
        if mask is None:
            return np.ones(fmt.lanes if element else BLOCKS_PER_REGISTER, bool)
        return element_mask(mask, fmt, where=where) if element else _block_mask(mask, fmt, where)

    active = active_of()
    if mask is not None:
        check_batch(where, index=index, mask=mask)
    spec = _RegSpec(fmt, element, src.shape[0])
    check_offsets(index, lambda: _read_blocks(spec, jnp.asarray(active_of())),
                  count=BLOCKS_PER_REGISTER, align=DATABLOCK_BYTES, batch="register",
                  limit=src.shape[0] * fmt.width - DATABLOCK_BYTES, where=where,
                  what="index lane", rule=f"it must be a multiple of 32 and the DataBlock it "
                  f"names must lie inside src ({src.shape[0] * fmt.width} bytes)",
                  mode=config.out_of_range)
    return _reg_gather(spec, src, index, active)


def gather_datablock(*args: Any, dtype: Any = None, config: Config | None = None) -> jax.Array:
    """``asc_gather_datablock`` (``asc_gather_datablock_sync``: the UB form alone): gather
    DataBlocks by byte offsets. The two C API forms are told apart by their arguments:

    * registers (c-reg, the 950): ``gather_datablock(src, index[, mask])`` returns ``dst``, a
      register of src's type: DataBlock k of dst is the 32 bytes at byte ``index[k]`` of src,
      k < 8 (the first 8 uint32 lanes of ``index`` count; each a multiple of 32, inside src).
      ``src`` is the 1-D UB from the aligned source address in its type (``dtype=`` names a
      byte-stored type: ``"hifloat8_t"``, ``"int4b_t"``...). ``mask`` (hardware form (256,)
      or per element of T): by default DataBlock k is gathered iff mask bit 4k is set (A34;
      ``Config.datablock_mask="element"``: per element); the rest of dst is 0. Without a mask
      every block is gathered.
    * Unified Buffer (c-memory, Atlas A2 / A3): ``gather_datablock(dst, src, src_offset,
      dst_repeat_stride, dst_block_stride, repeat)`` is ``gatherb(dst, src, src_offset,
      repeat, (dst_block_stride, dst_repeat_stride))`` for uint16_t / uint32_t, returning the
      new dst (a dst_block_stride of 0 taken as 1, as on Gatherb: A38).

    Differentiable in src (and dst on UB), floating types.
    """
    where = "gather_datablock"
    if len(args) == 6:
        if dtype is not None:
            raise TypeError(f"{where}: dtype= names a register form's src type; the UB form "
                            f"takes T from its arrays")
        dst, src, offset, rep_stride, blk_stride, repeat = args
        return _ub_call(where, dst, src, offset, repeat, blk_stride, rep_stride, UB_TYPES,
                        config)
    if len(args) in (2, 3):
        src, index, *mask = args
        element = resolve_config(config, where).datablock_mask == "element"
        return _register_call(where, src, index, mask[0] if mask else None, dtype, element,
                              config)
    raise TypeError(f"{where}: expected (src, index[, mask]) (registers) or (dst, src, "
                    f"src_offset, dst_repeat_stride, dst_block_stride, repeat) (UB); got "
                    f"{len(args)} positional arguments")


def reg_gather_b(base_addr: Any, index: Any, mask: Any, *, dtype: Any = None,
                 config: Config | None = None) -> jax.Array:
    """``AscendC::Reg::GatherB(dstReg, baseAddr, index, mask)``: returns ``dstReg``.

    DataBlock k of dstReg (k < 8; only the first 8 elements of the uint32 ``index`` register
    count) is the 32 bytes at byte ``index[k]`` of ``base_addr`` (the 1-D UB from the 32-byte
    aligned base address, in T; ``dtype=`` names a byte-stored T), if mask bit 4k (b32
    element k) is set; other blocks are 0 (A34). Same kernel as ``gather_datablock``'s register
    form with the page's block mask. Differentiable in base_addr (floating T).
    """
    return _register_call("reg_gather_b", base_addr, index, mask, dtype, False, config)
