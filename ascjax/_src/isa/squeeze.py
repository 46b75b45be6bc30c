"""``asc_squeeze_and_storeunalign`` and its init / finalize / status calls (SPEC 7); the
compaction family around it: ``asc_squeeze`` (register and UB forms), ``asc_squeeze_with_status``
(``asc_squeeze_v2``), ``asc_unsqueeze`` and ``asc_get_mask_spr_b16/b32`` (vendor pages
c-reg/asc_squeeze*.md, asc_unsqueeze.md, asc_get_mask_spr.md, c-memory/asc_squeeze.md).

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

from .. import native
from ..config import Config, resolve_config
from ..formats import DATABLOCK_BYTES, VL_BYTES, resolve
from ..numerics.bits import U32, from_bits, to_bits
from .lanes import (
    REGISTER_PRODUCTS,
    as_array,
    batch_index,
    check_batch,
    check_int,
    check_product,
    check_register,
    check_supported,
    computed_apart,
    first_true,
    kernel,
    mask_words,
    merge_last,
    one_report,
    resolve_dtypes,
    runtime_check,
)
from .masks import element_mask
from .memory import check_ub, to_bytes
from .repeat import repeat_offsets
from .vector_mask import MaskState, resolve_state

SQUEEZE_TYPES = ("int4b_t", "int8_t", "uint8_t", "fp4x2_e2m1_t", "fp4x2_e1m2_t", "fp8_e8m0_t",
                 "fp8_e5m2_t", "fp8_e4m3fn_t", "hifloat8_t", "int16_t", "uint16_t", "half",
                 "bfloat16_t", "int32_t", "uint32_t", "float")
# asc_squeeze / asc_squeeze_with_status / asc_squeeze_v2 on registers (their pages: no 4-bit row).
REGISTER_SQUEEZE_TYPES = ("int8_t", "uint8_t", "hifloat8_t", "fp8_e8m0_t", "fp8_e5m2_t",
                          "fp8_e4m3fn_t", "int16_t", "uint16_t", "half", "bfloat16_t", "int32_t",
                          "uint32_t", "float")
UNSQUEEZE_TYPES = ("int8_t", "uint8_t", "int16_t", "uint16_t", "int32_t", "uint32_t")
# asc_squeeze on UB (vreduce), Atlas A2 / A3 only.
UB_SQUEEZE_TYPES = ("uint16_t", "uint32_t")
UB_SQUEEZE_PRODUCTS = ("A3", "A2")
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


def source_lanes(active):
    """For each output lane j, the input lane of the (j+1)-th active lane; and the count.

    Works on the mask as words (bytes up to 256 lanes, 16-bit words past that): which word
    holds the j-th active lane comes from the words' popcounts (a short select chain), and the
    bit within it from a binary search on popcounts. Everything is elementwise per lane, which
    XLA vectorizes; a sort, a scatter, small gathers or a lane-shifting network are 3-30x
    slower on CPU.
    """
    return word_source_lanes(mask_words(active))


# Mask words per step of ``word_source_lanes``' chain: every output lane carries its candidate
# group's words through the chain, so groups of 4 make the chain 4x shorter for 4x the words
# carried and three more steps at the end: the source search of a 1024-lane GatherMask runs in
# 139 ms instead of 217-308 (131072 rows), the whole call 1.1-1.5x faster in half. (Measured
# on 32-bit words; on the 16-bit words it now searches, 4 a step was again faster than 8 or 16:
# 20 ms against 22 and 36 for 8192 rows of 1024 lanes.)
WORDS_PER_STEP = 4


def word_source_lanes(words):
    """``source_lanes`` of the mask held as uint32 words ``(..., W)``, lane i at bit i % 32 of
    word i // 32 (a mask that comes as words need not be spread into lanes first).

    The search runs apart from the gather that reads its result (``computed_apart``): fused
    into that gather's loop, which XLA's CPU backend does not vectorize, it ran 2.5-4.5x
    slower for the whole squeeze on an AVX2 machine (benchmarks/results/issue13/avx2). The
    source comes out in the narrowest unsigned type, converted back where the gather reads it.
    """
    narrow = np.min_scalar_type(32 * words.shape[-1] - 1)
    source, count = native.source_lanes(
        words, lambda w: computed_apart(lambda x: _search(x, narrow), w))
    return source.astype(jnp.int32), count


# Masks of up to this many lanes are searched in 8-bit words and uint8 arithmetic (every lane
# number fits), longer ones in 16-bit words and uint16: a vector holds twice the lanes of the
# next width, and the search is compute-bound (AVX2 AMD EPYC, 2^18 rows of 128 lanes: 9.4 ms
# against 23 in uint16; 2^17 of 256 lanes: 10.9 against 25).
BYTE_SEARCH_LANES = 256


def _search(words, narrow):
    """``word_source_lanes``' source in type ``narrow``, and the count. Each output lane j finds
    the group of ``WORDS_PER_STEP`` words holding the (j+1)-th set bit (a chain over the
    groups' running counts), then the word in the group, then the bit (halving the word).

    It runs on the narrowest words whose unsigned arithmetic holds every lane number and every
    count below the total: bytes in uint8 up to ``BYTE_SEARCH_LANES`` lanes (a group's start
    is at most lanes - 8 * group), 16-bit words in uint16 up to 2^15 lanes (the instructions
    search at most 2048). The total count is summed in int32. The uint32 words split into
    narrower ones by a bitcast, low bits first as on every platform JAX runs on (shifts and
    masks instead made the byte search up to 1.8x slower)."""
    lanes = 32 * words.shape[-1]
    if lanes > 1 << 15:
        raise ValueError(f"word_source_lanes: {lanes} lanes; the search counts in uint16")
    width = 8 if lanes <= BYTE_SEARCH_LANES else 16
    t = np.uint8 if width == 8 else np.uint16
    words = merge_last(lax.bitcast_convert_type(words, t))
    n_words = words.shape[-1]                   # lane i at bit i % width of word i // width
    group = WORDS_PER_STEP if n_words % WORDS_PER_STEP == 0 and n_words > WORDS_PER_STEP else 1
    shape = words.shape[:-1] + (lanes,)
    parts = [words[..., k::group] for k in range(group)]  # word k of each group
    counts = sum(lax.population_count(part) for part in parts)
    j = jnp.arange(lanes, dtype=t)
    start = jnp.zeros(counts.shape[:-1], t)
    index = jnp.zeros(shape, t)  # the group
    rank = jnp.broadcast_to(j, shape)
    held = [jnp.broadcast_to(part[..., :1], shape) for part in parts]
    for g in range(1, n_words // group):
        start = start + counts[..., g - 1]
        past = start[..., None] <= j
        index = jnp.where(past, t(g), index)
        rank = jnp.where(past, j - start[..., None], rank)
        held = [jnp.where(past, part[..., g:g + 1], h) for part, h in zip(parts, held, strict=True)]
    bits, pos = held[0], jnp.zeros(shape, t)
    for following in held[1:]:  # the word of the group
        below = lax.population_count(bits)
        skip = below <= rank
        bits = jnp.where(skip, following, bits)
        pos = pos + jnp.where(skip, t(width), t(0))
        rank = rank - jnp.where(skip, below, t(0))
    bit = jnp.zeros(shape, t)
    step = width // 2
    while step:  # the bit of the word
        below = lax.population_count((bits >> bit) & t((1 << step) - 1))
        skip = below <= rank
        bit = bit + jnp.where(skip, t(step), t(0))
        rank = rank - jnp.where(skip, below, t(0))
        step //= 2
    source = jnp.minimum(index * t(width * group) + pos + bit, t(lanes - 1))
    count = start.astype(jnp.int32) + counts[..., -1].astype(jnp.int32)
    return source.astype(narrow), count


def _compact(x, active):
    """Active lanes of ``x`` moved to the low lanes in source order; the rest 0.

    Callers pass bit patterns or tangents, never values a select could canonicalize.
    """
    return _pack(x, *source_lanes(active))


def _pack(x, source, count):
    """``x``'s lanes ``source`` (``source_lanes``) in the low lanes, the lanes from ``count``
    on 0. A mask shared by a batch of registers is searched once; its source is broadcast."""
    batch = jnp.broadcast_shapes(x.shape[:-1], source.shape[:-1])
    x, source = (jnp.broadcast_to(a, batch + a.shape[-1:]) for a in (x, source))
    count = jnp.broadcast_to(count, batch)
    lane = jnp.arange(x.shape[-1], dtype=jnp.int32)
    packed = jnp.take_along_axis(x, source, axis=-1)
    return jnp.where(lane < count[..., None], packed, jnp.zeros((), x.dtype))


def _squeeze_bits(fmt, x, active):
    """The squeeze of registers ``x`` in ``fmt``'s storage. The compaction kernel takes them as
    they are (XLA's CPU backend would copy them to bitcast them to integers first); registers
    shared by a batch of masks move bits by XLA's path (a broadcast of bfloat16 values may
    run in float32: see ``lanes.kernel``)."""
    if jnp.broadcast_shapes(x.shape[:-1], active.shape[:-1]) != x.shape[:-1]:
        return from_bits(_compact(to_bits(x, fmt), active), fmt)

    def portable(v, words, _):
        source, count = word_source_lanes(words)
        return from_bits(_pack(to_bits(v, fmt), source, count), fmt), \
            jnp.broadcast_to(count, v.shape[:-1])

    return native.compress(x, mask_words(active), None, x.shape[-1], portable)[0]


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


_STATE_FORM = ("an ascjax.SqueezeState (from squeeze_and_storeunalign_init() or a previous "
               "call)")


def check_state(state: Any, where: str) -> SqueezeState:
    """The static part of a passed-in ``SqueezeState``: its type, dtypes and shapes.

    AR and the pending count are integer scalars per register (``(...)``), the unaligned
    register uint8 ``(..., 32)``, all with one batch shape. Returns the state with int32 counts.
    """
    if not isinstance(state, SqueezeState):
        got = "None" if state is None else type(state).__name__
        raise TypeError(f"{where}: state must be {_STATE_FORM}, got {got}")
    fields = {}
    for name in ("ar", "pending"):
        x = as_array(getattr(state, name), where=where, arg=f"state.{name}")
        if not jnp.issubdtype(x.dtype, jnp.integer):
            raise TypeError(f"{where}: state.{name} must be an integer byte count, got dtype "
                            f"{x.dtype}")
        fields[name] = x.astype(jnp.int32)
    tail = jnp.asarray(state.tail)
    if tail.dtype != jnp.uint8 or tail.ndim == 0 or tail.shape[-1] != DATABLOCK_BYTES:
        raise ValueError(f"{where}: state.tail must be the 32-byte unaligned register, uint8 "
                         f"(..., {DATABLOCK_BYTES}); got {tail.dtype} {tail.shape}")
    shapes = {n: jnp.shape(x) for n, x in fields.items()} | {"tail[..., 0]": tail.shape[:-1]}
    if len(set(shapes.values())) != 1:
        listed = ", ".join(f"state.{n} {sh}" for n, sh in shapes.items())
        raise ValueError(f"{where}: the SqueezeState's fields must share one batch shape "
                         f"(one AR, pending count and 32-byte register per call); got {listed}")
    return SqueezeState(fields["ar"], fields["pending"], tail)


def check_state_values(state: SqueezeState, dst_addr: Any, ub_bytes: int, where: str,
                       mode: str) -> None:
    """The values of a passed-in state, against the UB and dst_addr.

    AR in [0, ub_bytes - dst_addr] (dst_addr + AR lies in the UB); pending in [0,
    min(AR, (dst_addr + AR) % 32)]: the pending bytes are the last ones stored, they lie in the
    unaligned register's 32-byte block, and a call only ever leaves such a state. Anything else
    would write UB bytes outside ``[dst_addr, dst_addr + AR)`` or lose bytes: a value fault,
    as a store past the UB is. Concrete values raise ``IndexError`` before anything is
    written; traced ones (under ``jit``/``vmap``) are checked when the computation runs, as
    ``mode`` (``Config.out_of_range``) says.
    """
    addr = jnp.asarray(dst_addr, jnp.int32)
    ar, pending = state.ar, state.pending
    p = addr + ar
    rules = (
        ("ar", ar, (ar < 0) | (p > ub_bytes), ub_bytes - addr,
         f"bytes stored since init; dst_addr + AR must lie in the {ub_bytes}-byte UB"),
        ("pending", pending, (pending < 0) | (pending > jnp.minimum(ar, p % DATABLOCK_BYTES)),
         jnp.minimum(ar, p % DATABLOCK_BYTES),
         ("the pending bytes are the last AR bytes that lie in the unaligned register's "
          "32-byte block [floor32(dst_addr + AR), dst_addr + AR)")),
    )
    for name, value, bad, hi, why in rules:
        bad, value, hi = jnp.broadcast_arrays(bad, value, hi)
        if not any(isinstance(x, jax.core.Tracer) for x in (bad, value, hi)):
            if bool(jnp.any(bad)):
                i = np.unravel_index(int(jnp.argmax(bad)), bad.shape)
                at = f"[{', '.join(map(str, i))}]" if bad.ndim else ""
                raise IndexError(f"{where}: state.{name}{at}={int(value[i])} is outside the "
                                 f"valid range [0, {int(hi[i])}] ({why}); a corrupt "
                                 f"SqueezeState, nothing written")
            continue  # AR first: the pending bound means nothing for a bad AR
        first = jnp.argmax(bad.ravel()) if bad.ndim else 0
        detail = jnp.stack([value.ravel()[first], hi.ravel()[first]]) if bad.ndim else \
            jnp.stack([value, hi])
        runtime_check(bad, lambda d, name=name, why=why: f"{where}: state.{name}={d[0]} is "
                      f"outside the valid range [0, {d[1]}] ({why}); a corrupt SqueezeState",
                      detail, mode=mode)


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

    ``state`` is checked as it comes in (``check_state``, ``check_state_values``): anything
    but a ``SqueezeState`` is a TypeError; fields of the wrong dtype or shape (tail not uint8
    (..., 32), batch shapes that differ) a TypeError / ValueError at trace time; AR outside
    [0, UB size - dst_addr] or a pending count outside [0, min(AR, (dst_addr + AR) % 32)] a
    ValueError naming the field and the range, before anything is written. Under ``jit`` those
    values are checked when the call runs, as ``Config.out_of_range`` says (``"raise"``: from a
    host callback; ``"checkify"``; ``"ignore"``: not at all).

    ``dst`` is differentiable in ``src1`` (floating types) as the exact selection.
    """
    return _squeeze_and_storeunalign(ub, dst_addr, state, src1, squeeze_mask, dtype, config,
                                     trusted=False)


def _squeeze_and_storeunalign(ub, dst_addr, state, src1, squeeze_mask, dtype, config, *,
                              trusted: bool):
    """``squeeze_and_storeunalign``; a ``trusted`` state (one this module's own loop carries
    from init) skips the value checks."""
    where = "squeeze_and_storeunalign"
    config = check_product(config, REGISTER_PRODUCTS, where)
    state = check_state(state, where)
    ub = check_ub(ub, where, config)
    fmt = resolve_dtypes(src1, dtype, where=where, arg="src1")
    check_supported(fmt, SQUEEZE_TYPES, where=where, arg="src1 dtype")
    src1 = check_register(src1, fmt, where=where, arg="src1")
    active = element_mask(squeeze_mask, fmt, where=where, arg="squeeze_mask")
    batch = check_batch(where, ub=ub, src1=src1, squeeze_mask=squeeze_mask,
                        **{"state.tail": state.tail})
    with one_report():  # under jit the first fault of these, in this order, is the one named
        _check_dst_addr(dst_addr, fmt.width, ub.shape[-1], where, config.out_of_range)
        if not trusted:
            check_state_values(state, dst_addr, ub.shape[-1], where, config.out_of_range)
        dst = _squeeze(fmt, src1, active)
        n = jnp.count_nonzero(active, axis=-1).astype(jnp.int32) * fmt.width
        _check_store_end(jnp.broadcast_to(jnp.asarray(dst_addr, jnp.int32) + state.ar + n,
                                          batch), ub.shape[-1], where, config.out_of_range)
    ub, state = _store(fmt, batch, ub, jnp.asarray(dst_addr, jnp.int32), state,
                       lax.stop_gradient(dst), n)
    return ub, dst, state


def _check_store_end(end, size: int, where: str, mode: str) -> None:
    """Each register's store ends within the UB (``end``: dst_addr + AR + selected bytes, one
    per register of the batch); the first register past it is named."""
    past = end > size
    if past.size == 0:  # an empty batch stores nothing
        return
    at = first_true(past) if past.ndim else ()
    runtime_check(past, lambda *f: f"{where}: the store{_of_register(f[:-1])} reaches UB byte "
                  f"{f[-1]}, past the end of the {size}-byte UB (dst_addr + AR + selected "
                  f"bytes)", (*(at[i] for i in range(past.ndim)), end[tuple(at)]), mode=mode)


def _of_register(at) -> str:
    return f" of register {batch_index(at)}" if at else ""


_squeeze = kernel(_squeeze_bits, lambda fmt, t, act: _compact(t, act))


def squeeze_register(src1: Any, squeeze_mask: Any, *, dtype: Any = None) -> jax.Array:
    """The register result of ``squeeze_and_storeunalign`` alone (no UB, no state).

    ``dst``: the elements of ``src1`` selected by ``squeeze_mask``, packed into the low lanes in
    source order, other lanes 0; bits unchanged. For bulk validation of the register part.
    It takes the seed's types (4-bit pairs included); ``asc_squeeze``'s register form is
    ``squeeze(src, mask)`` (the same kernel, its page's types, Ascend 950 only).
    """
    where = "squeeze_register"
    fmt = resolve_dtypes(src1, dtype, where=where, arg="src1")
    check_supported(fmt, SQUEEZE_TYPES, where=where, arg="src1 dtype")
    src1 = check_register(src1, fmt, where=where, arg="src1")
    active = element_mask(squeeze_mask, fmt, where=where, arg="squeeze_mask")
    check_batch(where, src1=src1, squeeze_mask=squeeze_mask)
    return _squeeze(fmt, src1, active)


def _register_form(where: str, src: Any, mask: Any, dtype: Any, config: Config | None):
    check_product(config, REGISTER_PRODUCTS, where)
    fmt = resolve_dtypes(src, dtype, where=where, arg="src")
    check_supported(fmt, REGISTER_SQUEEZE_TYPES, where=where, arg="src dtype")
    src = check_register(src, fmt, where=where, arg="src")
    active = element_mask(mask, fmt, where=where, arg="mask")
    check_batch(where, src=src, mask=mask)
    return fmt, src, active


_UB_FORM = ("dst", "src0", "src1", "repeat", "dst_block_stride", "src0_block_stride",
            "src1_block_stride", "dst_repeat_stride", "src0_repeat_stride", "src1_repeat_stride")


def squeeze(*args: Any, dtype: Any = None, config: Config | None = None) -> jax.Array:
    """``asc_squeeze``: the C name's two overloads, told apart by their arguments as C++ does.

    * Registers (Ascend 950), ``squeeze(src, mask)``: returns dst, the elements of ``src``
      that ``mask`` selects copied in order to the low lanes, every other lane 0 (page
      c-reg/asc_squeeze). Bits are moved unchanged; AR is not touched (that is
      ``squeeze_with_status``). Types: every 8-, 16- and 32-bit one the page lists
      (``ascjax.INSTRUCTIONS["squeeze"].types``; ``dtype=`` names a byte-stored one).
      Differentiable in ``src``: the cotangent of dst lane j goes back to the j-th selected
      lane.
    * UB (Atlas A2/A3), ``squeeze(dst, src0, src1, repeat, dst_block_stride,
      src0_block_stride, src1_block_stride, dst_repeat_stride, src0_repeat_stride,
      src1_repeat_stride)``: returns the new dst; see ``squeeze_ub``.

    ``squeeze_register`` is the register part of ``squeeze_and_storeunalign`` (the same kernel,
    with that seed's types, 4-bit pairs included, and no product check).

    >>> import numpy as np, ascjax
    >>> x = np.arange(64, dtype=np.float32)
    >>> ascjax.squeeze(x, ascjax.create_mask("PAT_M4", "float"))[:4].tolist()
    [0.0, 4.0, 8.0, 12.0]
    """
    if len(args) == 2:
        fmt, src, active = _register_form("squeeze", *args, dtype, config)
        return _squeeze(fmt, src, active)
    if len(args) == len(_UB_FORM):
        if dtype is not None:
            raise TypeError("squeeze: dtype= belongs to the register form (src, mask); the UB "
                            "form's T is its tensors' dtype")
        return squeeze_ub(*args, config=config)
    raise TypeError(f"squeeze: got {len(args)} positional arguments; the forms are (src, mask) "
                    f"on registers and ({', '.join(_UB_FORM)}) on UB")


def squeeze_with_status(src: Any, mask: Any, *, dtype: Any = None,
                        config: Config | None = None) -> tuple[jax.Array, jax.Array]:
    """``asc_squeeze_with_status(dst, src, mask)`` (and the deprecated ``asc_squeeze_v2``).
    Called with ``(src, mask)``: the register ``dst`` is returned, not passed.

    Returns ``(dst, ar)``: dst as ``squeeze``'s register form, and the value the call leaves in
    the AR register, the "有效数据大小" of this call that ``asc_get_squeeze_status`` reads and
    ``asc_storeunalign_postupdate`` uses as its store offset: the selected elements times
    sizeof(T) in bytes (int32, one per register; A42: set, not added to the previous AR;
    ``Config(squeeze_status="elements")`` counts elements). AR is the register the seed's
    ``SqueezeState.ar`` holds: ``state._replace(ar=ar)`` is the state a following
    ``squeeze_and_storeunalign`` would see (its pending bytes are untouched).
    """
    where = "squeeze_with_status"
    config = resolve_config(config, where)
    fmt, src, active = _register_form(where, src, mask, dtype, config)
    n = jnp.count_nonzero(active, axis=-1).astype(jnp.int32)
    return _squeeze(fmt, src, active), n * (fmt.width if config.squeeze_status == "bytes" else 1)


def _unsqueeze_bits(spec, active):
    fmt, shape, count = spec
    # dst[0] = 0, dst[i] = dst[i-1] + mask[i-1]: the exclusive prefix count; the last mask
    # bit enters no lane ("through", A48: dst[i] = dst[i-1] + mask[i], that count plus lane
    # i's bit less lane 0's). Counted on the mask as 32-bit words (the words before a lane's word,
    # then the lane's lower bits in it): elementwise popcounts, which XLA vectorizes, where a
    # cumsum is several times slower on CPU. Exact; narrowed modulo 2^bits to the lane type.
    lanes = active.shape[-1]
    n_words = lanes // 32
    words = mask_words(active)
    per_word = lax.population_count(words).astype(jnp.int32)
    before = [jnp.zeros(per_word.shape[:-1], jnp.int32)]
    for w in range(1, n_words):
        before.append(before[-1] + per_word[..., w - 1])
    below = (np.uint32(1) << np.arange(32, dtype=np.uint32)) - np.uint32(1)
    within = lax.population_count(words[..., None] & below).astype(jnp.int32)
    counts = (within + jnp.stack(before, axis=-1)[..., None]).reshape(active.shape)
    if count == "through":
        bit = active.astype(jnp.int32)
        counts = counts + bit - bit[..., :1]
    counts = jnp.broadcast_to(counts, shape)
    return from_bits(counts.astype(U32).astype(f"uint{fmt.bits}"), fmt)


_unsqueeze = kernel(_unsqueeze_bits)


def unsqueeze(dst: Any, mask: Any, *, dtype: Any = None,
              config: Config | None = None) -> jax.Array:
    """``asc_unsqueeze(dst, mask)``: returns the new dst, the unsqueeze (decompression) indices
    of ``mask``: lane 0 is 0 and lane i the number of mask 1s among lanes 0..i-1
    (``dst[i] = dst[i-1] + mask[i-1]``); the top lane's mask bit is counted nowhere (A48;
    ``config.unsqueeze_count="through"``: ``dst[i] = dst[i-1] + mask[i]``). Every lane
    is written, so dst's old bits only give the type (page c-reg/asc_unsqueeze; Ascend 950).
    Integer types ``UNSQUEEZE_TYPES``; an int8_t count past 127 wraps as the bits do.

    ``squeeze``'s selected lanes come back to their places by a gather of the squeezed
    register at these indices, masked by the same mask.
    """
    where = "unsqueeze"
    config = check_product(config, REGISTER_PRODUCTS, where)
    fmt = resolve_dtypes(dst, dtype, where=where, arg="dst")
    check_supported(fmt, UNSQUEEZE_TYPES, where=where, arg="dst dtype")
    dst = check_register(dst, fmt, where=where, arg="dst")
    active = element_mask(mask, fmt, where=where, arg="mask")
    shape = check_batch(where, dst=dst, mask=mask) + dst.shape[-1:]
    return _unsqueeze((fmt, shape, config.unsqueeze_count), active)


def get_mask_spr(dtype: Any, *, state: MaskState | None = None,
                 config: Config | None = None) -> jax.Array:
    """``asc_get_mask_spr_b16()`` / ``asc_get_mask_spr_b32()``: the mask SPR {MASK1, MASK0}
    as a ``vector_bool`` (hardware form, bool ``(256,)``), formatted by data type.

    The SPR is the vector mask registers that ``set_vector_mask`` / ``asc_set_vector_mask``
    write outside a vector function: ``state`` (an ``ascjax.MaskState``; None: the power-on
    state, every bit 1). ``dtype`` picks the form (``"b16"``, ``"b32"`` or a 16- / 32-bit
    type): b16 reads all 128 bits ``high:low`` and copies each into 2 mask bits, b32 reads the
    64 bits of ``low`` and copies each into 4 (page). The words' bits are read as they are,
    whatever the state's mode (a Counter-mode count is returned as its binary).
    """
    where = "get_mask_spr"
    check_product(config, REGISTER_PRODUCTS, where)
    state = resolve_state(state, where, "state")
    width = int(dtype[1:]) // 8 if dtype in ("b8", "b16", "b32") else resolve(
        dtype, where=where).width
    if width not in (2, 4):
        raise TypeError(f"{where}: dtype {dtype!r} is {8 * width}-bit; the forms are "
                        f"asc_get_mask_spr_b16 and asc_get_mask_spr_b32 (\"b16\" / \"b32\" or "
                        f"a 16- / 32-bit type)")
    bits = (state.high << 64 | state.low) if width == 2 else state.low
    lanes = VL_BYTES // width
    elements = np.array([bits >> j & 1 for j in range(lanes)], bool)
    return jnp.asarray(np.repeat(elements, width))


# --- asc_squeeze on UB (Atlas A2 / A3) ------------------------------------------------------

class _UbPlan(NamedTuple):
    """Static form of a UB squeeze: T, repeats, the six strides and the two readings."""

    fmt: Any
    repeats: int
    dst_block: int
    src0_block: int
    src1_block: int
    dst_repeat: int
    src0_repeat: int
    src1_repeat: int
    mask_reading: str
    tail: str

    def reads0(self):
        return repeat_offsets(self.fmt, self.repeats, self.src0_block, self.src0_repeat)

    def writes(self):
        return repeat_offsets(self.fmt, self.repeats, self.dst_block, self.dst_repeat)

    def mask_reads(self):
        """``(element offsets, bit)`` of src1 each lane's selection comes from."""
        if self.mask_reading == "elements":
            offsets = repeat_offsets(self.fmt, self.repeats, self.src1_block, self.src1_repeat)
            return offsets, None
        lane = np.arange(self.fmt.lanes)
        first = np.arange(self.repeats)[:, None] * self.src1_repeat * self.fmt.per_block
        return first + lane // self.fmt.bits, np.broadcast_to(lane % self.fmt.bits,
                                                              (self.repeats, self.fmt.lanes))

    def later_same(self):
        """``(lanes, lanes)``: lane e' > e of a repeat writes the same dst element as lane e
        (a dst block stride of 0); the same in every repeat."""
        w = self.writes()[0] if self.repeats else np.zeros(self.fmt.lanes, int)
        lane = np.arange(w.size)
        return (w[None, :] == w[:, None]) & (lane[None, :] > lane[:, None])


def _ub_squeeze_bits(plan: _UbPlan, dst, src0, src1):
    x = src0[..., plan.reads0()]
    offsets, bit = plan.mask_reads()
    m = src1[..., offsets]
    active = (m != 0) if bit is None else ((m >> bit.astype(m.dtype)) & 1) != 0
    source, count = source_lanes(active)
    packed = _pack(x, source, count)
    lane = jnp.arange(plan.fmt.lanes)
    writes = lane < count[..., None] if plan.tail == "keep" else jnp.ones(packed.shape, bool)
    later = jnp.asarray(plan.later_same())

    def step(d, xs):
        vals, w, addr = xs
        # Lanes in order, so a later lane writing the same element wins; only the survivor of
        # each element adds its difference, the others add 0 (integer adds: exact, any order).
        survive = w & ~jnp.any(later & w[..., None, :], axis=-1)
        old = d[..., addr]
        return d.at[..., addr].add(jnp.where(survive, vals - old, jnp.zeros((), d.dtype))), None

    out, _ = lax.scan(step, dst, (jnp.moveaxis(packed, -2, 0), jnp.moveaxis(writes, -2, 0),
                                  jnp.asarray(plan.writes(), jnp.int32)))
    return out


_ub_squeeze = kernel(_ub_squeeze_bits)


def squeeze_ub(dst: Any, src0: Any, src1: Any, repeat: int, dst_block_stride: int,
               src0_block_stride: int, src1_block_stride: int, dst_repeat_stride: int,
               src0_repeat_stride: int, src1_repeat_stride: int, *,
               config: Config | None = None) -> jax.Array:
    """``asc_squeeze`` on UB (Atlas A2/A3; vreduce): compress the vector src0 under the compare
    mask src1 into dst. Returns the new dst.

    ``dst``, ``src0``, ``src1``: 1-D uint16 / uint32 tensors (the UB from each operand's
    address on; leading axes batch). Repeat r reads src0's 256 bytes through the strides (in
    DataBlocks, ``repeat_offsets``), selects element e where src1's element e of the repeat,
    read the same way through its strides, is nonzero (A43; ``Config(squeeze_ub_mask="bits")``
    reads src1 as a bit mask), and writes the selected elements in order to lanes 0.. of the
    repeat's dst, through dst's strides; the repeat's other dst lanes are written 0 (A44;
    ``Config(squeeze_ub_tail="keep")`` leaves them). Every element of a repeat takes part: no
    vector mask (A45). Repeats run in order; a later write to an element wins. ``repeat`` and
    the strides are uint8_t, [0, 255]; repeat 0 leaves dst unchanged. An element read or
    written past a tensor's end is a ValueError naming the repeat, the lane and the element.
    """
    where = "squeeze_ub"
    config = check_product(config, UB_SQUEEZE_PRODUCTS, where)
    fmts = [resolve_dtypes(x, None, where=where, arg=n)
            for x, n in ((dst, "dst"), (src0, "src0"), (src1, "src1"))]
    for f, n in zip(fmts, ("dst", "src0", "src1"), strict=True):
        check_supported(f, UB_SQUEEZE_TYPES, where=where, arg=f"{n} dtype")
    if len({f.name for f in fmts}) != 1:
        raise TypeError(f"{where}: dst, src0 and src1 must have one type, got "
                        f"{[f.name for f in fmts]}")
    fmt = fmts[0]
    arrays = [jnp.asarray(x) for x in (dst, src0, src1)]
    for x, n in zip(arrays, ("dst", "src0", "src1"), strict=True):
        if x.ndim == 0:
            raise ValueError(f"{where}: {n} must be a UB tensor (..., n), got a scalar")
    ints = [check_int(v, 0, 255, where=where, arg=n)
            for v, n in zip((repeat, dst_block_stride, src0_block_stride, src1_block_stride,
                             dst_repeat_stride, src0_repeat_stride, src1_repeat_stride),
                            _UB_FORM[3:], strict=True)]
    plan = _UbPlan(fmt, *ints, config.squeeze_ub_mask, config.squeeze_ub_tail)
    if not plan.repeats:
        return arrays[0]
    offsets, _ = plan.mask_reads()
    for name, table, size in (("src0", plan.reads0(), arrays[1].shape[-1]),
                              ("src1", offsets, arrays[2].shape[-1]),
                              ("dst", plan.writes(), arrays[0].shape[-1])):
        if table.max() >= size:
            r, e = (int(i[0]) for i in np.nonzero(table >= size))
            verb = "writes" if name == "dst" else "reads"
            raise ValueError(f"{where}: {name} has {size} elements but repeat {r} lane {e} "
                             f"{verb} element {int(table[r, e])}; the tensor is too short")
    batch = check_batch(where, dst=arrays[0], src0=arrays[1], src1=arrays[2])
    dst, src0, src1 = (jnp.broadcast_to(x, batch + x.shape[-1:]) for x in arrays)
    return _ub_squeeze(plan, dst, src0, src1)


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


def _check_dst_addr(dst_addr: Any, align: int, size: int, where: str, mode: str) -> None:
    """dst_addr in [0, size) and aligned: at once, or for a traced one when the call runs
    (``mode``), compared in its own type (a uint32 of 2^31 or more wrapped to a negative int32
    and passed the end check, a review)."""
    if isinstance(dst_addr, jax.core.Tracer):
        if not jnp.issubdtype(dst_addr.dtype, jnp.integer):
            raise TypeError(f"{where}: dst_addr must be an integer byte address, got dtype "
                            f"{dst_addr.dtype}")
        outside = dst_addr >= np.asarray(size, dst_addr.dtype)
        if jnp.issubdtype(dst_addr.dtype, jnp.signedinteger):
            outside = outside | (dst_addr < 0)
        bad = outside | (dst_addr % np.asarray(align, dst_addr.dtype) != 0)
        runtime_check(bad, lambda a: f"{where}: dst_addr={a} must be a UB byte address in [0, "
                      f"{size}) aligned to sizeof(dtype) = {align}",
                      jnp.max(jnp.where(bad, dst_addr, jnp.zeros_like(dst_addr))), mode=mode)
        return
    values = np.asarray(dst_addr)
    if not np.issubdtype(values.dtype, np.integer):
        raise TypeError(f"{where}: dst_addr must be an integer byte address, got {dst_addr!r}")
    if np.any(values % align) or np.any(values < 0) or np.any(values >= size):
        raise ValueError(f"{where}: dst_addr={dst_addr} must be a UB byte address in [0, {size}) "
                         f"aligned to sizeof(dtype) = {align}")


def squeeze_and_storeunalign_finalize(ub: Any, dst_addr: Any, state: SqueezeState, *,
                                      config: Config | None = None):
    """``asc_squeeze_and_storeunalign_finalize(dst_addr, src0)``: write the pending bytes.

    Returns ``(ub, state)`` with nothing pending; AR is kept (only init clears it). ``state``
    is checked as ``squeeze_and_storeunalign`` checks it (values under ``jit``: as
    ``config.out_of_range`` says).
    """
    return _finalize_checked(ub, dst_addr, state, config, trusted=False)


def _finalize_checked(ub, dst_addr, state, config, *, trusted: bool):
    where = "squeeze_and_storeunalign_finalize"
    config = check_product(config, REGISTER_PRODUCTS, where)
    state = check_state(state, where)
    ub = check_ub(ub, where, config)
    batch = check_batch(where, ub=ub, **{"state.tail": state.tail})
    with one_report():
        _check_dst_addr(dst_addr, 1, ub.shape[-1], where, config.out_of_range)
        if not trusted:
            check_state_values(state, dst_addr, ub.shape[-1], where, config.out_of_range)
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
        ub, dst, state = _squeeze_and_storeunalign(ub, dst_addr, state, xs[0], xs[1], dtype,
                                                   config, trusted=True)
        return (ub, state), dst

    (ub, state), dst = lax.scan(call, (jnp.zeros(batch + (ub_size,), jnp.uint8), state),
                                (jnp.moveaxis(src1, -2, 0), jnp.moveaxis(masks, -2, 0)))
    if finalize:
        ub, state = _finalize_checked(ub, dst_addr, state, config, trusted=True)
    return jnp.moveaxis(dst, 0, -2), ub, get_squeeze_status(state)
