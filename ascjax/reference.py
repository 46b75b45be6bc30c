"""Slow, plain scalar reference models of the ascjax instructions (like JAX's ``lax_reference``).

Each model is written from SPEC.md and the vendor pseudo-code in ``seeds/``, independently of the
fast implementation in ``ascjax._src``: one register (or one LocalTensor) at a time, Python loops
over elements, NumPy / ml_dtypes scalars, a Python ``bytearray``-style UB. The names and argument
order are those of the fast public functions, so a test can compare the two by name. Masks are
per-element only: a 1-D bool array with one entry per lane (per index lane for ``gather``).

Floating adds are NumPy scalar adds in the destination type: one IEEE-754 round-to-nearest-even
rounding with subnormals kept (NumPy on CPU never flushes them). For binary16 NumPy adds in a wider
type and rounds once more, which is exact here: 24 >= 2*11 + 2 bits makes the double rounding
innocuous. A NaN result of any add is the canonical quiet NaN (assumption A8).

Use it in tests only: it is orders of magnitude slower than the fast functions.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ascjax._src.config import Config
from ascjax._src.formats import FORMATS

__all__ = [
    "SqueezeState", "gather", "get_squeeze_status", "pair_reduce_sum", "reduce_sum_datablock",
    "squeeze_and_storeunalign", "squeeze_and_storeunalign_finalize",
    "squeeze_and_storeunalign_init",
]

VL_BYTES = 256          # one vector register, every dtype (SPEC 1)
BLOCK_BYTES = 32        # one DataBlock
HALF_MAX = np.float16(65504.0)
CANONICAL_NAN = {       # assumption A8: every NaN an add produces is the default quiet NaN
    np.dtype(np.float16): np.array(0x7E00, np.uint16).view(np.float16)[()],
    np.dtype(np.float32): np.array(0x7FC00000, np.uint32).view(np.float32)[()],
}
_UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32}


# ---------------------------------------------------------------- scalar arithmetic (SPEC 3)

def _float_add(a, b, dtype: np.dtype, config: Config):
    """One hardware add of two ``dtype`` scalars: IEEE RNE, canonical NaN, optional saturation."""
    with np.errstate(all="ignore"):     # overflow to inf and inf - inf are results, not errors
        s = dtype.type(a) + dtype.type(b)
    if dtype == np.float16 and config.float_overflow == "saturate":
        if np.isnan(s):
            return np.float16(0.0)
        if np.isinf(s):
            return HALF_MAX if s > 0 else -HALF_MAX
    if np.isnan(s):
        return CANONICAL_NAN[dtype]
    return s


def _int_add(a, b, dtype: np.dtype, config: Config):
    """One hardware add of two ``dtype`` integers: wrap mod 2^bits, or saturate (CTRL[53])."""
    info = np.iinfo(dtype)
    s = int(a) + int(b)
    if config.int_overflow == "saturate":
        s = min(max(s, info.min), info.max)
    else:
        s = (s - info.min) % 2 ** info.bits + info.min
    return dtype.type(s)


def _adder(dtype: np.dtype, config: Config):
    if dtype.kind == "f":
        return lambda a, b: _float_add(a, b, dtype, config)
    return lambda a, b: _int_add(a, b, dtype, config)


def _masked_value(dtype: np.dtype, config: Config):
    """What a masked-off lane enters a sum as: +0 (SPEC 3), or -0 under ``masked_lanes="skip"``.

    -0 is the exact identity of IEEE addition, Config's reading of "takes no part". The adds
    still happen, so a lone active NaN still comes out canonical and a lone inf still saturates.
    """
    if dtype.kind == "f" and config.masked_lanes == "skip":
        return dtype.type(-0.0)
    return dtype.type(0)


def _per_element_mask(mask: Any, lanes: int, where: str) -> np.ndarray:
    mask = np.asarray(mask)
    if mask.dtype != np.bool_ or mask.shape != (lanes,):
        raise ValueError(f"{where}: reference mask must be bool ({lanes},), got "
                         f"{mask.dtype} {mask.shape}")
    return mask


# ---------------------------------------------------------------- asc_reduce_sum_datablock (SPEC 4)

def reduce_sum_datablock(src: Any, mask: Any, *, config: Config | None = None) -> np.ndarray:
    """Reference ``asc_reduce_sum_datablock`` for one register, as the seed's pseudo-code."""
    config = config or Config()
    src = np.asarray(src)
    if src.dtype not in (np.int16, np.uint16, np.float16, np.int32, np.uint32, np.float32):
        raise TypeError(f"reduce_sum_datablock: unsupported src dtype {src.dtype}")
    lanes = VL_BYTES // src.itemsize
    if src.shape != (lanes,):
        raise ValueError(f"reduce_sum_datablock: src must be ({lanes},), got {src.shape}")
    mask = _per_element_mask(mask, lanes, "reduce_sum_datablock")
    # int16 / uint16 are widened to 32 bits before any add.
    dst_dtype = {np.dtype(np.int16): np.dtype(np.int32),
                 np.dtype(np.uint16): np.dtype(np.uint32)}.get(src.dtype, src.dtype)
    add = _adder(dst_dtype, config)
    elems_per_block = BLOCK_BYTES // src.itemsize
    dst = np.zeros(VL_BYTES // dst_dtype.itemsize, dst_dtype)     # other lanes are 0
    for b in range(VL_BYTES // BLOCK_BYTES):
        values = []
        for j in range(elems_per_block):
            i = b * elems_per_block + j
            values.append(dst_dtype.type(src[i]) if mask[i] else _masked_value(dst_dtype, config))
        while len(values) > 1:          # adjacent-pair tree, each add rounded to dst
            values = [add(values[j], values[j + 1]) for j in range(0, len(values), 2)]
        # A block with no active element gives +0 (seed), also when masked lanes enter as -0.
        dst[b] = values[0] if mask[b * elems_per_block:(b + 1) * elems_per_block].any() else 0
    return dst


# ---------------------------------------------------------------- PairReduceSum (SPEC 5)

def _pair_mask(mask: Any, lanes: int) -> list[bool]:
    """Per-element mask of one repeat: continuous int, uint64 bit-mode words, or bools."""
    if isinstance(mask, (int, np.integer)) and not isinstance(mask, bool):
        if not 1 <= mask <= lanes:
            raise ValueError(f"pair_reduce_sum: mask must be in [1, {lanes}], got {mask}")
        return [e < mask for e in range(lanes)]
    if isinstance(mask, np.ndarray) and mask.dtype == np.bool_:
        return list(_per_element_mask(mask, lanes, "pair_reduce_sum"))
    words = [int(w) for w in mask]
    if len(words) != lanes // 64 or not all(0 <= w < 2 ** 64 for w in words) or not any(words):
        raise ValueError(f"pair_reduce_sum: bit-mode mask must be {lanes // 64} uint64 words, "
                         f"not all 0, got {mask}")
    return [bool(words[e // 64] >> (e % 64) & 1) for e in range(lanes)]


def pair_reduce_sum(dst: Any, src: Any, repeat_time: int, mask: Any, dst_rep_stride: int,
                    src_blk_stride: int, src_rep_stride: int, *, product: str | None = None,
                    config: Config | None = None) -> np.ndarray:
    """Reference ``PairReduceSum<T>`` on 1-D LocalTensors; returns the new dst."""
    config = config or Config()
    product = product or config.product
    dst = np.array(dst, copy=True)
    src = np.asarray(src)
    if src.dtype not in (np.float16, np.float32) or dst.dtype != src.dtype:
        raise TypeError(f"pair_reduce_sum: T must be half or float, got {src.dtype}/{dst.dtype}")
    if product == "training" and src.dtype != np.float16:
        raise TypeError("pair_reduce_sum: Atlas training series supports half only")
    if not 0 <= repeat_time <= 255:
        raise ValueError(f"pair_reduce_sum: repeat_time must be in [0, 255], got {repeat_time}")
    if min(dst_rep_stride, src_blk_stride, src_rep_stride) < 0:
        raise ValueError("pair_reduce_sum: strides must be >= 0")
    if product == "training" and dst_rep_stride == 0:
        raise ValueError("pair_reduce_sum: Atlas training series does not support dst_rep_stride 0")
    lanes = VL_BYTES // src.itemsize
    epb = BLOCK_BYTES // src.itemsize
    active = _pair_mask(mask, lanes)
    if config.masked_pair is None:
        zero_both = product == "200I/500 A2"
    else:
        zero_both = config.masked_pair == "zero"
    add = _adder(src.dtype, config)
    masked = _masked_value(src.dtype, config)
    for r in range(repeat_time):
        a = []
        for e in range(lanes):
            offset = (r * src_rep_stride + (e // epb) * src_blk_stride) * epb + e % epb
            if offset >= src.size:
                raise IndexError(f"pair_reduce_sum: src element {offset} past its end {src.size}")
            a.append(src[offset])
        for k in range(lanes // 2):
            out = r * dst_rep_stride * (lanes // 2) + k
            if out >= dst.size:
                raise IndexError(f"pair_reduce_sum: dst element {out} past its end {dst.size}")
            if not active[2 * k] and not active[2 * k + 1]:
                if zero_both:
                    dst[out] = 0
                continue
            x = a[2 * k] if active[2 * k] else masked
            y = a[2 * k + 1] if active[2 * k + 1] else masked
            dst[out] = add(x, y)
    return dst


# ---------------------------------------------------------------- asc_gather (SPEC 6)

_NUMPY_NAMES = {np.dtype(f.storage): f.name for f in reversed(FORMATS.values())}


def _format_name(x: np.ndarray, dtype: Any) -> str:
    """Ascend type name: ``dtype`` when given (byte-stored formats), else from the NumPy dtype."""
    if dtype is not None:
        return str(dtype)
    return _NUMPY_NAMES[x.dtype]


def _lane_bytes(name: str) -> int:
    """Bytes per register lane; the 4-bit types are handled as byte pairs."""
    return max(FORMATS[name].bits // 8, 1)


def gather(src: Any, index: Any, mask: Any, *, dst_dtype: Any = None,
           dtype: Any = None) -> np.ndarray:
    """Reference ``asc_gather`` for one index register: ``dst[i] = src[index[i]]`` on bits."""
    src = np.asarray(src)
    index = np.asarray(index)
    src_name = _format_name(src, dtype)
    dst_name = str(dst_dtype) if dst_dtype is not None else src_name
    src_w, dst_w = _lane_bytes(src_name), _lane_bytes(dst_name)
    if index.dtype not in (np.uint16, np.uint32) or index.shape != (VL_BYTES // index.itemsize,):
        raise TypeError(f"gather: index must be uint16 (128,) or uint32 (64,), got "
                        f"{index.dtype} {index.shape}")
    index_lanes = index.size
    mask = _per_element_mask(mask, index_lanes, "gather")
    dst_lanes = VL_BYTES // dst_w
    # b8 -> b16 widening: one dst lane per index lane. Same type narrower than the index: value
    # i goes to dst element 2i, odd elements stay 0.
    step = dst_lanes // index_lanes
    if step not in (1, 2) or (dst_w != src_w and (src_w, dst_w) != (1, 2)):
        raise TypeError(f"gather: unsupported ({dst_name}, {src_name}, {index.dtype})")
    src_bits = src.reshape(-1).view(_UINT[src_w])
    dst_bits = np.zeros(dst_lanes, _UINT[dst_w])
    for i in range(index_lanes):
        if not mask[i]:
            continue                    # inactive: never range-checked, dst lane 0
        j = int(index[i])
        if j >= src_bits.size:
            raise IndexError(f"gather: active lane {i} reads src element {j}, past its end "
                             f"{src_bits.size}")
        dst_bits[step * i] = src_bits[j]    # unsigned bits: zero extension when widening
    return dst_bits.view(FORMATS[dst_name].storage)


# ---------------------------------------------------------------- squeeze family (SPEC 7)

@dataclass(frozen=True)
class SqueezeState:
    """AR (bytes stored since init) and the bytes waiting in the unaligned register src0."""
    ar: int = 0
    pending: bytes = b""


def squeeze_and_storeunalign_init() -> SqueezeState:
    """Reference ``asc_squeeze_and_storeunalign_init()``: AR = 0, nothing pending."""
    return SqueezeState()


def get_squeeze_status(state: SqueezeState) -> int:
    """Reference ``asc_get_squeeze_status()``: AR."""
    return state.ar


def squeeze_and_storeunalign(ub: Any, dst_addr: int, state: SqueezeState, src1: Any,
                             squeeze_mask: Any, *, dtype: Any = None):
    """Reference ``asc_squeeze_and_storeunalign``: SPEC 7's byte model, line for line."""
    ub = np.array(ub, dtype=np.uint8, copy=True)
    src1 = np.asarray(src1)
    width = _lane_bytes(_format_name(src1, dtype))
    lanes = VL_BYTES // width
    if src1.shape != (lanes,):
        raise ValueError(f"squeeze_and_storeunalign: src1 must be ({lanes},), got {src1.shape}")
    mask = _per_element_mask(squeeze_mask, lanes, "squeeze_and_storeunalign")
    if dst_addr < 0 or dst_addr % width:
        raise ValueError(f"squeeze_and_storeunalign: dst_addr={dst_addr} not aligned to {width}")
    bits = src1.view(_UINT[width])
    dst_bits = np.zeros(lanes, _UINT[width])
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
    start = p - len(state.pending)              # pending bytes cover [start, p)
    stream = state.pending + selected           # covers [start, p + n)
    b = (p + n) // BLOCK_BYTES * BLOCK_BYTES    # end of the last complete aligned block
    if b > start:
        ub[start:b] = np.frombuffer(stream[:b - start], np.uint8)
        pending = stream[b - start:]
    else:
        pending = stream
    return ub, dst_bits.view(src1.dtype), SqueezeState(state.ar + n, pending)


def squeeze_and_storeunalign_finalize(ub: Any, dst_addr: int, state: SqueezeState):
    """Reference ``asc_squeeze_and_storeunalign_finalize``: write the pending bytes; AR kept."""
    ub = np.array(ub, dtype=np.uint8, copy=True)
    p_end = dst_addr + state.ar
    if state.pending:
        ub[p_end - len(state.pending):p_end] = np.frombuffer(state.pending, np.uint8)
    return ub, SqueezeState(state.ar, b"")
