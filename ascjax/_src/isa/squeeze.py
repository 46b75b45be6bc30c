"""``asc_squeeze_and_storeunalign`` and its init / finalize / status calls (SPEC 7).

The hidden registers become an explicit ``SqueezeState``: AR (bytes stored since init), the
number of bytes pending in the 32-byte unaligned register, and that register, whose byte for
UB address A sits at ``tail[A % 32]``. Only complete 32-byte blocks at absolute UB addresses
reach the UB during a call; ``finalize`` writes the pending bytes.
"""

from __future__ import annotations

import functools
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from ..config import Config, resolve_config
from ..formats import DATABLOCK_BYTES, VL_BYTES
from ..numerics.bits import U32, from_bits, to_bits
from .lanes import check_register, check_supported, kernel, resolve_dtypes, runtime_check
from .masks import element_mask
from .memory import check_ub, to_bytes

SQUEEZE_TYPES = ("int4b_t", "int8_t", "uint8_t", "fp4x2_e2m1_t", "fp4x2_e1m2_t", "fp8_e8m0_t",
                 "fp8_e5m2_t", "fp8_e4m3fn_t", "hifloat8_t", "int16_t", "uint16_t", "half",
                 "bfloat16_t", "int32_t", "uint32_t", "float")
_WINDOW = VL_BYTES + DATABLOCK_BYTES  # bytes one call can touch, from floor32(dst_addr + AR)


class SqueezeState(NamedTuple):
    """AR, the count of pending bytes, and the unaligned register (a pytree; batchable)."""

    ar: jax.Array
    pending: jax.Array
    tail: jax.Array


def squeeze_and_storeunalign_init() -> SqueezeState:
    """``asc_squeeze_and_storeunalign_init()``: AR = 0, nothing pending."""
    return SqueezeState(jnp.zeros((), jnp.int32), jnp.zeros((), jnp.int32),
                        jnp.zeros(DATABLOCK_BYTES, jnp.uint8))


def get_squeeze_status(state: SqueezeState) -> jax.Array:
    """``asc_get_squeeze_status()``: AR, the bytes stored since the last init."""
    return state.ar


def _source_lanes(active):
    """For each output lane j, the input lane of the (j+1)-th active lane; and the count.

    Works on the mask as 32-bit words: which word holds the j-th active lane comes from the
    words' popcounts (a short select chain), and the bit within it from a 5-step binary search
    on popcounts. Everything is elementwise per lane, which XLA vectorizes; a sort, a scatter,
    small gathers or a lane-shifting network are 3-30x slower on CPU.
    """
    lanes = active.shape[-1]
    n_words = lanes // 32
    shifted = active.reshape(active.shape[:-1] + (n_words, 32)).astype(U32) \
        << jnp.arange(32, dtype=U32)
    words = jnp.bitwise_or.reduce(shifted, axis=-1)
    counts = lax.population_count(words).astype(jnp.int32)
    j = jnp.arange(lanes, dtype=jnp.int32)
    start = jnp.zeros(counts.shape[:-1], jnp.int32)
    word = jnp.zeros(active.shape, jnp.int32)
    rank = jnp.broadcast_to(j, active.shape)
    bits = jnp.broadcast_to(words[..., :1], active.shape)
    for w in range(1, n_words):
        start = start + counts[..., w - 1]
        past = start[..., None] <= j
        word = jnp.where(past, w, word)
        rank = jnp.where(past, j - start[..., None], rank)
        bits = jnp.where(past, words[..., w:w + 1], bits)
    pos = jnp.zeros(active.shape, U32)
    rank = rank.astype(U32)
    for step in (16, 8, 4, 2, 1):
        below = lax.population_count((bits >> pos) & np.uint32((1 << step) - 1))
        skip = below <= rank
        pos = pos + jnp.where(skip, np.uint32(step), np.uint32(0))
        rank = rank - jnp.where(skip, below, np.uint32(0))
    source = jnp.minimum(word * 32 + pos.astype(jnp.int32), lanes - 1)
    return source, start + counts[..., n_words - 1]


def _compact(x, active):
    """Active lanes of ``x`` moved to the low lanes in source order; the rest 0.

    Callers pass bit patterns or tangents, never values a select could canonicalize.
    """
    source, count = _source_lanes(active)
    packed = jnp.take_along_axis(x, source, axis=-1)
    lane = jnp.arange(x.shape[-1], dtype=jnp.int32)
    return jnp.where(lane < count[..., None], packed, jnp.zeros((), x.dtype))


def _squeeze_bits(fmt, x, active):
    return from_bits(_compact(to_bits(x, fmt), active), fmt)


def _write_one(ub, start, stop, base, stream):
    """UB with bytes [start, stop) from ``stream`` (addresses base + i), via a padded window."""
    padded = jnp.concatenate([ub, jnp.zeros(_WINDOW, jnp.uint8)])
    window = lax.dynamic_slice(padded, (base,), (_WINDOW,))
    addr = base + jnp.arange(_WINDOW)
    window = jnp.where((addr >= start) & (addr < stop), stream, window)
    return lax.dynamic_update_slice(padded, window, (base,))[: ub.shape[0]]


def _store_one(ub, dst_addr, ar, pending, tail, selected, n):
    """One register's call, SPEC 7's byte model: complete blocks go out, the rest waits."""
    p = dst_addr + ar
    start = p - pending
    base = p - p % DATABLOCK_BYTES
    addr = base + jnp.arange(_WINDOW)
    stream = jnp.where(addr < p, tail[addr % DATABLOCK_BYTES],
                       selected[jnp.clip(addr - p, 0, VL_BYTES - 1)])
    block_end = (p + n) - (p + n) % DATABLOCK_BYTES
    flushed = block_end > start
    ub = _write_one(ub, start, jnp.where(flushed, block_end, start), base, stream)
    new_pending = jnp.where(flushed, p + n - block_end, pending + n)
    # The unaligned register keeps the bytes from the last block boundary on, at A % 32.
    new_tail = jnp.where(flushed,
                         lax.dynamic_slice(stream, (block_end - base,), (DATABLOCK_BYTES,)),
                         stream[:DATABLOCK_BYTES])
    return ub, ar + n, new_pending, new_tail


def _batched(fn, batch_ndim: int):
    for _ in range(batch_ndim):
        fn = jax.vmap(fn)
    return fn


def squeeze_and_storeunalign(ub: Any, dst_addr: Any, state: SqueezeState, src1: Any,
                             squeeze_mask: Any, *, dtype: Any = None,
                             config: Config | None = None):
    """``asc_squeeze_and_storeunalign(dst_addr, dst, src0, src1, squeeze_mask)``.

    Returns ``(ub, dst, state)``. ``dst`` holds the elements of ``src1`` selected in this call,
    packed into the low lanes in source order, other lanes 0. Their n bytes go to UB address
    ``dst_addr + AR`` and AR grows by n; only complete 32-byte blocks at absolute UB
    addresses are written now, the others wait in ``state`` until a later call or
    ``squeeze_and_storeunalign_finalize``. UB bytes outside ``[dst_addr, dst_addr + AR)`` are
    never touched. 4-bit types are squeezed as byte pairs. ``dst_addr`` must be aligned to
    sizeof(dtype); writing past the end of ``ub`` raises (under ``jit``: see
    ``Config.out_of_range``).

    ``dst`` is differentiable in ``src1`` (floating types) as the exact selection.
    """
    where = "squeeze_and_storeunalign"
    config = resolve_config(config)
    ub = check_ub(ub, where)
    fmt = resolve_dtypes(src1, dtype, where=where, arg="src1")
    check_supported(fmt, SQUEEZE_TYPES, where=where, arg="src1 dtype")
    src1 = check_register(src1, fmt, where=where, arg="src1")
    active = element_mask(squeeze_mask, fmt, where=where, arg="squeeze_mask")
    _check_dst_addr(dst_addr, fmt.width, ub.shape[-1], where)

    dst = _squeeze(fmt, src1, active)
    batch = jnp.broadcast_shapes(ub.shape[:-1], dst.shape[:-1], jnp.shape(state.ar))
    n = jnp.count_nonzero(active, axis=-1).astype(jnp.int32) * fmt.width
    end = jnp.asarray(dst_addr, jnp.int32) + state.ar + n
    runtime_check(end > ub.shape[-1], lambda e: f"{where}: the store reaches UB byte {e}, past "
                  f"the end of the {ub.shape[-1]}-byte UB (dst_addr + AR + selected bytes)",
                  jnp.max(end), mode=config.out_of_range)
    if isinstance(dst_addr, jax.core.Tracer):  # a traced address: checked when it runs
        misaligned = (dst_addr % fmt.width != 0) | (dst_addr < 0)
        runtime_check(misaligned, lambda a: f"{where}: dst_addr={a} must be a UB byte address "
                      f"aligned to sizeof(dtype) = {fmt.width}", jnp.max(dst_addr),
                      mode=config.out_of_range)
    ub, state = _store(fmt, batch, ub, jnp.asarray(dst_addr, jnp.int32), state,
                       lax.stop_gradient(dst), n)
    return ub, dst, state


_squeeze = kernel(_squeeze_bits, lambda fmt, t, act: _compact(t, act))


def squeeze_register(src1: Any, squeeze_mask: Any, *, dtype: Any = None) -> jax.Array:
    """The register result of ``squeeze_and_storeunalign`` alone (no UB, no state).

    ``dst``: the elements of ``src1`` selected by ``squeeze_mask``, packed into the low lanes in
    source order, other lanes 0; bits unchanged. For bulk validation of the register part.
    """
    where = "squeeze_register"
    fmt = resolve_dtypes(src1, dtype, where=where, arg="src1")
    check_supported(fmt, SQUEEZE_TYPES, where=where, arg="src1 dtype")
    src1 = check_register(src1, fmt, where=where, arg="src1")
    return _squeeze(fmt, src1, element_mask(squeeze_mask, fmt, where=where, arg="squeeze_mask"))


@functools.partial(jax.jit, static_argnums=(0, 1))
def _store(fmt, batch, ub, addr, state, dst, n):
    """Broadcast everything to the batch and run the byte model once per register."""
    def expand(x, tail=()):
        return jnp.broadcast_to(x, batch + tail)

    selected = expand(to_bytes(dst, fmt), (VL_BYTES,))
    ub, ar, pending, tail = _batched(_store_one, len(batch))(
        expand(ub, ub.shape[-1:]), expand(addr), expand(state.ar), expand(state.pending),
        expand(state.tail, (DATABLOCK_BYTES,)), selected, expand(n))
    return ub, SqueezeState(ar, pending, tail)


def _check_dst_addr(dst_addr: Any, align: int, size: int, where: str) -> None:
    if isinstance(dst_addr, jax.core.Tracer):
        return
    values = np.asarray(dst_addr)
    if not np.issubdtype(values.dtype, np.integer):
        raise TypeError(f"{where}: dst_addr must be an integer byte address, got {dst_addr!r}")
    if np.any(values % align) or np.any(values < 0) or np.any(values >= size):
        raise ValueError(f"{where}: dst_addr={dst_addr} must be a UB byte address in [0, {size}) "
                         f"aligned to sizeof(dtype) = {align}")


def squeeze_and_storeunalign_finalize(ub: Any, dst_addr: Any, state: SqueezeState):
    """``asc_squeeze_and_storeunalign_finalize(dst_addr, src0)``: write the pending bytes.

    Returns ``(ub, state)`` with nothing pending; AR is kept (only init clears it).
    """
    where = "squeeze_and_storeunalign_finalize"
    ub = check_ub(ub, where)
    _check_dst_addr(dst_addr, 1, ub.shape[-1], where)
    batch = jnp.broadcast_shapes(ub.shape[:-1], jnp.shape(state.ar))
    return _finalize(batch, ub, jnp.asarray(dst_addr, jnp.int32), state)


def _flush_one(ub, addr, ar, pending, tail):
    p = addr + ar
    base = p - p % DATABLOCK_BYTES
    stream = tail[(base + jnp.arange(_WINDOW)) % DATABLOCK_BYTES]
    return _write_one(ub, p - pending, p, base, stream)


@functools.partial(jax.jit, static_argnums=0)
def _finalize(batch, ub, addr, state):
    def expand(x, tail=()):
        return jnp.broadcast_to(x, batch + tail)

    ar = expand(state.ar)
    ub = _batched(_flush_one, len(batch))(expand(ub, ub.shape[-1:]), expand(addr), ar,
                                          expand(state.pending), expand(state.tail, (32,)))
    return ub, SqueezeState(ar, jnp.zeros_like(ar), expand(state.tail, (DATABLOCK_BYTES,)))


def squeeze_window(dst_addr: int, calls: int, ub_bytes: int) -> tuple[int, int]:
    """``(offset, size)`` of the UB bytes ``calls`` calls and a finalize from ``dst_addr`` can
    write: whole 32-byte blocks from floor32(``dst_addr``), never past the ``ub_bytes`` end;
    ``dst_addr`` lies at ``offset`` in them. Only UB addresses modulo 32 matter to the byte
    model, so such a run may use a UB of just these bytes, at ``dst_addr = offset``."""
    offset = dst_addr % DATABLOCK_BYTES
    blocks = -(-(offset + calls * VL_BYTES) // DATABLOCK_BYTES)
    return offset, min(blocks * DATABLOCK_BYTES, ub_bytes - (dst_addr - offset))


def squeeze_sequence(src1: Any, squeeze_mask: Any, dst_addr: int, ub_size: int, *,
                     dtype: Any = None, finalize: bool = True, config: Config | None = None):
    """init, one ``squeeze_and_storeunalign`` per register along axis -2 of ``src1``
    (``(..., calls, lanes)``), then ``_finalize`` (unless ``finalize=False``), on a zeroed UB of
    ``ub_size`` bytes; ``squeeze_mask`` broadcasts to ``src1``'s calls. Returns
    ``(dst, ub, ar)``: every call's dst ``(..., calls, lanes)``, the UB and AR at the end."""
    batch = src1.shape[:-2]
    masks = jnp.broadcast_to(squeeze_mask, src1.shape[:-1] + squeeze_mask.shape[-1:])
    state = SqueezeState(jnp.zeros(batch, jnp.int32), jnp.zeros(batch, jnp.int32),
                         jnp.zeros(batch + (DATABLOCK_BYTES,), jnp.uint8))

    def call(carry, xs):
        ub, state = carry
        ub, dst, state = squeeze_and_storeunalign(ub, dst_addr, state, xs[0], xs[1], dtype=dtype,
                                                  config=config)
        return (ub, state), dst

    (ub, state), dst = lax.scan(call, (jnp.zeros(batch + (ub_size,), jnp.uint8), state),
                                (jnp.moveaxis(src1, -2, 0), jnp.moveaxis(masks, -2, 0)))
    if finalize:
        ub, state = squeeze_and_storeunalign_finalize(ub, dst_addr, state)
    return jnp.moveaxis(dst, 0, -2), ub, get_squeeze_status(state)
