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
    p_end = dst_addr + state.ar
    if state.pending:
        ub[p_end - state.pending:p_end] = np.frombuffer(_pending_bytes(dst_addr, state), np.uint8)
    return ub, SqueezeState(state.ar, 0, state.tail)
