"""The squeeze family (SPEC 7): SPEC 7's byte model over a Python SqueezeState."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ascjax._src.config import Config

from ._scalar import BLOCK_BYTES, UINT, VL_BYTES, element_mask, format_name, lane_bytes


@dataclass(frozen=True)
class SqueezeState:
    """The emulator's ``SqueezeState`` fields as plain Python: AR (bytes stored since init), the
    count of pending bytes and the unaligned register src0 (32 bytes; pending byte at UB address
    a sits at ``tail[a % 32]``; the emulator leaves its other bytes unspecified, here 0)."""

    ar: int = 0
    pending: int = 0
    tail: bytes = bytes(BLOCK_BYTES)


def squeeze_and_storeunalign_init() -> SqueezeState:
    """Reference ``asc_squeeze_and_storeunalign_init()``: AR = 0, nothing pending."""
    return SqueezeState()


def get_squeeze_status(state: SqueezeState) -> int:
    """Reference ``asc_get_squeeze_status()``: AR."""
    return state.ar


def _pending_bytes(dst_addr: int, state: SqueezeState) -> bytes:
    p = dst_addr + state.ar
    return bytes(state.tail[a % BLOCK_BYTES] for a in range(p - state.pending, p))


def _with_pending(ar: int, start: int, pending: bytes) -> SqueezeState:
    tail = bytearray(BLOCK_BYTES)
    for i, byte in enumerate(pending):
        tail[(start + i) % BLOCK_BYTES] = byte
    return SqueezeState(ar, len(pending), bytes(tail))


def _tail(state: Any) -> bytes:
    tail = state.tail
    return bytes(tail) if isinstance(tail, (bytes, bytearray)) else np.asarray(
        tail, np.uint8).tobytes()


def _check_state(state: Any, dst_addr: int, ub_size: int, where: str) -> None:
    """A passed-in state the byte model can have left: AR in [0, UB size - dst_addr], pending
    in [0, min(AR, (dst_addr + AR) % 32)], a 32-byte unaligned register."""
    if not hasattr(state, "ar") or not hasattr(state, "pending") or not hasattr(state, "tail"):
        got = "None" if state is None else type(state).__name__
        raise TypeError(f"{where}: state must be a SqueezeState, got {got}")
    if len(_tail(state)) != BLOCK_BYTES:
        raise ValueError(f"{where}: state.tail must hold {BLOCK_BYTES} bytes, got "
                         f"{len(_tail(state))}")
    ar, pending = int(state.ar), int(state.pending)
    if not 0 <= ar <= ub_size - dst_addr:
        raise IndexError(f"{where}: state.ar={ar} is outside the valid range [0, "
                         f"{ub_size - dst_addr}]")
    top = min(ar, (dst_addr + ar) % BLOCK_BYTES)
    if not 0 <= pending <= top:
        raise IndexError(f"{where}: state.pending={pending} is outside the valid range [0, "
                         f"{top}]")


def squeeze_and_storeunalign(ub: Any, dst_addr: int, state: SqueezeState, src1: Any,
                             squeeze_mask: Any, *, dtype: Any = None,
                             config: Config | None = None):
    """Reference ``asc_squeeze_and_storeunalign``: SPEC 7's byte model, line for line."""
    del config                          # no reading changes an in-range store
    ub = np.array(ub, dtype=np.uint8, copy=True)
    src1 = np.asarray(src1)
    width = lane_bytes(format_name(src1, dtype))
    lanes = VL_BYTES // width
    if src1.shape != (lanes,):
        raise ValueError(f"squeeze_and_storeunalign: src1 must be ({lanes},), got {src1.shape}")
    mask = element_mask(squeeze_mask, lanes, width, "squeeze_and_storeunalign")
    if dst_addr < 0 or dst_addr % width:
        raise ValueError(f"squeeze_and_storeunalign: dst_addr={dst_addr} not aligned to {width}")
    _check_state(state, dst_addr, ub.size, "squeeze_and_storeunalign")
    state = SqueezeState(int(state.ar), int(state.pending), _tail(state))
    bits = src1.view(UINT[width])
    dst_bits = np.zeros(lanes, UINT[width])
    selected = b""
    n_sel = 0
    for i in range(lanes):
        if mask[i]:
            dst_bits[n_sel] = bits[i]
            n_sel += 1
            selected += int(bits[i]).to_bytes(width, "little")
    n = len(selected)
    p = dst_addr + state.ar                     # where this call's bytes start
    if p + n > ub.size:
        raise IndexError(f"squeeze_and_storeunalign: store to [{p}, {p + n}) past the UB end "
                         f"{ub.size}")
    start = p - state.pending                   # pending bytes cover [start, p)
    stream = _pending_bytes(dst_addr, state) + selected     # covers [start, p + n)
    b = (p + n) // BLOCK_BYTES * BLOCK_BYTES    # end of the last complete aligned block
    if b > start:
        ub[start:b] = np.frombuffer(stream[:b - start], np.uint8)
        new = _with_pending(state.ar + n, b, stream[b - start:])
    else:
        new = _with_pending(state.ar + n, start, stream)
    return ub, dst_bits.view(src1.dtype), new


def squeeze_and_storeunalign_finalize(ub: Any, dst_addr: int, state: SqueezeState):
    """Reference ``asc_squeeze_and_storeunalign_finalize``: write the pending bytes; AR kept."""
    ub = np.array(ub, dtype=np.uint8, copy=True)
    _check_state(state, dst_addr, ub.size, "squeeze_and_storeunalign_finalize")
    state = SqueezeState(int(state.ar), int(state.pending), _tail(state))
    p_end = dst_addr + state.ar
    if state.pending:
        ub[p_end - state.pending:p_end] = np.frombuffer(_pending_bytes(dst_addr, state), np.uint8)
    return ub, SqueezeState(state.ar, 0, state.tail)


# --- the compaction family on registers (Ascend 950) and asc_squeeze on UB (Atlas A2/A3) ----

def _register(src: Any, mask: Any, dtype: Any, where: str):
    src = np.asarray(src)
    width = lane_bytes(format_name(src, dtype))
    lanes = VL_BYTES // width
    if src.shape != (lanes,):
        raise ValueError(f"{where}: src must be ({lanes},), got {src.shape}")
    return src, width, lanes, element_mask(mask, lanes, width, where)


def _squeeze_register(src: Any, mask: Any, dtype: Any, where: str):
    """dst bits and the number of selected lanes, one lane at a time."""
    src, width, lanes, active = _register(src, mask, dtype, where)
    bits = src.view(UINT[width])
    out = np.zeros(lanes, UINT[width])
    n = 0
    for i in range(lanes):
        if active[i]:                   # the n-th selected lane goes to dst lane n
            out[n] = bits[i]
            n += 1
    return out.view(src.dtype), n, width


def squeeze(*args: Any, dtype: Any = None, config: Config | None = None):
    """Reference ``asc_squeeze``: ``(src, mask)`` on a register, or the UB form's ten
    arguments (``squeeze_ub``)."""
    if len(args) == 2:
        return _squeeze_register(args[0], args[1], dtype, "squeeze")[0]
    return squeeze_ub(*args, config=config)


def squeeze_with_status(src: Any, mask: Any, *, dtype: Any = None,
                        config: Config | None = None):
    """Reference ``asc_squeeze_with_status``: (dst, AR), AR this call's selected bytes (A42)
    or elements (``squeeze_status="elements"``)."""
    config = config or Config()
    dst, n, width = _squeeze_register(src, mask, dtype, "squeeze_with_status")
    return dst, np.int32(n * (width if config.squeeze_status == "bytes" else 1))


def unsqueeze(dst: Any, mask: Any, *, dtype: Any = None, config: Config | None = None):
    """Reference ``asc_unsqueeze``: dst[0] = 0, dst[i] = dst[i-1] + mask[i-1] (the page's first
    sentence; ``unsqueeze_count="through"``: + mask[i], its second read literally), modulo
    2^bits in the lane type."""
    config = config or Config()
    step = 0 if config.unsqueeze_count == "through" else 1
    dst, width, lanes, active = _register(dst, mask, dtype, "unsqueeze")
    out = np.zeros(lanes, UINT[width])
    for i in range(1, lanes):
        out[i] = (int(out[i - 1]) + int(active[i - step])) % 2 ** (8 * width)
    return out.view(dst.dtype)


def get_mask_spr(dtype: Any, *, state: Any = None, config: Config | None = None):
    """Reference ``asc_get_mask_spr_b16/b32``: b16 copies each of the 128 bits MASK1:MASK0
    into 2 mask bits, b32 each of MASK0's 64 bits into 4; the power-on SPR is all ones."""
    del config
    high, low = (2**64 - 1, 2**64 - 1) if state is None else (state.high, state.low)
    width = int(dtype[1:]) // 8 if dtype in ("b16", "b32") else lane_bytes(format_name(
        np.zeros(0, np.uint8), dtype))
    spr = (high << 64 | low) if width == 2 else low
    out = np.zeros(VL_BYTES, bool)
    for byte in range(VL_BYTES):
        out[byte] = bool(spr >> (byte // width) & 1)
    return out


def squeeze_ub(dst: Any, src0: Any, src1: Any, repeat: int, dst_block_stride: int,
               src0_block_stride: int, src1_block_stride: int, dst_repeat_stride: int,
               src0_repeat_stride: int, src1_repeat_stride: int, *,
               config: Config | None = None):
    """Reference ``asc_squeeze`` on UB: per repeat, the selected src0 elements (src1 nonzero,
    A43, or src1's bits) in order to dst lanes 0.., the rest 0 (A44) or kept; strides in
    DataBlocks of 32 bytes."""
    config = config or Config()
    dst = np.array(dst, copy=True)
    src0, src1 = np.asarray(src0), np.asarray(src1)
    bits = 8 * dst.itemsize
    lanes, epb = VL_BYTES * 8 // bits, BLOCK_BYTES * 8 // bits

    def at(r, e, block, rep):
        return (r * rep + (e // epb) * block) * epb + e % epb

    for r in range(repeat):
        selected = []
        for e in range(lanes):
            if config.squeeze_ub_mask == "elements":
                take = src1[at(r, e, src1_block_stride, src1_repeat_stride)] != 0
            else:
                word = src1[r * src1_repeat_stride * epb + e // bits]
                take = (int(word) >> (e % bits)) & 1 == 1
            if take:
                selected.append(src0[at(r, e, src0_block_stride, src0_repeat_stride)])
        for e in range(lanes):
            where = at(r, e, dst_block_stride, dst_repeat_stride)
            if e < len(selected):
                dst[where] = selected[e]
            elif config.squeeze_ub_tail == "zero":
                dst[where] = 0
    return dst
