"""Slow, plain scalar reference models of the ascjax instructions (like JAX's ``lax_reference``).

Each model is written from SPEC.md and the vendor pseudo-code in ``seeds/``, independently of the
fast implementation in ``ascjax._src`` (only ``Config`` and the format table are shared): one
register (or one LocalTensor) at a time, Python loops over elements, NumPy / ml_dtypes scalars, a
Python ``bytearray``-style UB. Every instruction of the registry (``ascjax.INSTRUCTIONS``) has a
model here under the same name and argument order, so a test can compare the two by name
(``tests/test_registry.py`` does, for all of them). Masks may be per-element (one bool per lane)
or the hardware form ``(256,)`` that ``create_mask`` returns, read at bit ``i * width``.

Floating adds are NumPy scalar adds in the destination type: one IEEE-754 round-to-nearest-even
rounding with subnormals kept (NumPy on CPU never flushes them). For binary16 NumPy adds in a wider
type and rounds once more, which is exact here: 24 >= 2*11 + 2 bits makes the double rounding
innocuous. A NaN result of any add is the canonical quiet NaN (assumption A8). ``add`` is the one
scalar add, shared by the instruction models and the summation orders at the end.

Use it in tests only: it is orders of magnitude slower than the fast functions.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import ml_dtypes
import numpy as np

from ascjax._src.config import Config
from ascjax._src.formats import FORMATS, resolve

__all__ = [
    "SUMMATION_ORDERS", "SqueezeState", "add", "block_reduce_sum", "copy_gm2ub_align",
    "copy_ub2gm_align", "create_mask", "gather", "get_squeeze_status", "loadalign",
    "pair_reduce_sum", "reduce_sum", "reduce_sum_datablock", "repeat_reduce_sum",
    "squeeze_and_storeunalign", "squeeze_and_storeunalign_finalize",
    "squeeze_and_storeunalign_init", "storealign", "sum_adjacent_tree", "sum_datablock",
    "sum_kahan", "sum_numpy_pairwise", "sum_sequential", "update_mask", "whole_reduce_sum",
]

VL_BYTES = 256          # one vector register, every dtype (SPEC 1)
BLOCK_BYTES = 32        # one DataBlock
HALF_MAX = np.float16(65504.0)
# Assumption A8: every NaN an add produces is the default quiet NaN of its type.
CANONICAL_NAN_BITS = {"half": 0x7E00, "bfloat16_t": 0x7FC0, "float": 0x7FC00000,
                      "fp8_e5m2_t": 0x7E, "fp8_e4m3fn_t": 0x7F}
_UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32}
# Formats whose adds are emulated; the narrow ones add in float32, then round once to the type.
_FLOAT_TYPES = {"half": np.float16, "bfloat16_t": ml_dtypes.bfloat16, "float": np.float32,
                "fp8_e5m2_t": ml_dtypes.float8_e5m2, "fp8_e4m3fn_t": ml_dtypes.float8_e4m3fn}


def _name(dtype: Any) -> str:
    """Ascend type name of a type name or NumPy dtype (through the format table)."""
    return resolve(dtype, where="reference").name


# ---------------------------------------------------------------- scalar arithmetic (SPEC 3)

def add(a, b, dtype: Any, config: Config | None = None):
    """One hardware add of two ``dtype`` scalars (a type name or NumPy dtype).

    Floats: IEEE RNE in the type (half and float directly; bfloat16 and fp8 through float32,
    where the double rounding is innocuous at these widths; fp8_e4m3fn overflows to NaN),
    canonical NaN, half saturating under ``float_overflow="saturate"``. Integers: wrap mod
    2^bits, or saturate under ``int_overflow="saturate"`` (CTRL[53]).
    """
    config = config or Config()
    name = _name(dtype)
    if name not in _FLOAT_TYPES:
        info = np.iinfo(FORMATS[name].storage)
        s = int(a) + int(b)
        if config.int_overflow == "saturate":
            s = min(max(s, info.min), info.max)
        else:
            s = (s - info.min) % 2 ** info.bits + info.min
        return np.dtype(FORMATS[name].storage).type(s)
    t = _FLOAT_TYPES[name]
    with np.errstate(all="ignore"):     # overflow to inf and inf - inf are results, not errors
        s = t(t(a) + t(b)) if name in ("half", "float") else t(np.float32(a) + np.float32(b))
    if name == "half" and config.float_overflow == "saturate":
        if np.isnan(s):
            return np.float16(0.0)
        if np.isinf(s):
            return HALF_MAX if s > 0 else -HALF_MAX
    if np.isnan(np.float32(s)):
        return np.array(CANONICAL_NAN_BITS[name], _UINT[np.dtype(t).itemsize]).view(t)[()]
    return s


def _masked_value(dtype: np.dtype, config: Config):
    """What a masked-off lane enters a sum as: +0 (SPEC 3), or -0 under ``masked_lanes="skip"``.

    -0 is the exact identity of IEEE addition, Config's reading of "takes no part". The adds
    still happen, so a lone active NaN still comes out canonical and a lone inf still saturates.
    """
    if dtype.kind == "f" and config.masked_lanes == "skip":
        return dtype.type(-0.0)
    return dtype.type(0)


def _element_mask(mask: Any, lanes: int, width: int, where: str) -> np.ndarray:
    """Per-element bools ``(lanes,)`` from a per-element or hardware-form (256,) mask."""
    mask = np.asarray(mask)
    if mask.dtype == np.bool_ and mask.shape == (lanes,):
        return mask
    if mask.dtype == np.bool_ and mask.shape == (VL_BYTES,):
        return mask[::width]            # element i is governed by bit i*width (SPEC 2)
    raise ValueError(f"{where}: reference mask must be bool ({lanes},) or ({VL_BYTES},), got "
                     f"{mask.dtype} {mask.shape}")


def _tree(values: list, add_) -> Any:
    """Adjacent-pair tree over a power-of-two list: (v0+v1), (v2+v3), ..., then their pairs."""
    while len(values) > 1:
        values = [add_(values[j], values[j + 1]) for j in range(0, len(values), 2)]
    return values[0]


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
    mask = _element_mask(mask, lanes, src.itemsize, "reduce_sum_datablock")
    # int16 / uint16 are widened to 32 bits before any add.
    dst_dtype = {np.dtype(np.int16): np.dtype(np.int32),
                 np.dtype(np.uint16): np.dtype(np.uint32)}.get(src.dtype, src.dtype)
    elems_per_block = BLOCK_BYTES // src.itemsize
    dst = np.zeros(VL_BYTES // dst_dtype.itemsize, dst_dtype)     # other lanes are 0
    for b in range(VL_BYTES // BLOCK_BYTES):
        values = []
        for j in range(elems_per_block):
            i = b * elems_per_block + j
            values.append(dst_dtype.type(src[i]) if mask[i] else _masked_value(dst_dtype, config))
        total = _tree(values, lambda a, b: add(a, b, dst_dtype, config))  # rounded to dst
        # A block with no active element gives +0 (seed), also when masked lanes enter as -0.
        dst[b] = total if mask[b * elems_per_block:(b + 1) * elems_per_block].any() else 0
    return dst


# ---------------------------------------------------------------- repeats (SPEC 5, 10)

def _repeat_mask(mask: Any, lanes: int, where: str) -> list[bool]:
    """Per-element mask of one repeat: continuous int, uint64 bit-mode words, or bools."""
    if isinstance(mask, (int, np.integer)) and not isinstance(mask, bool):
        if not 1 <= mask <= lanes:
            raise ValueError(f"{where}: mask must be in [1, {lanes}], got {mask}")
        return [e < mask for e in range(lanes)]
    if isinstance(mask, np.ndarray) and mask.dtype == np.bool_:
        return list(_element_mask(mask, lanes, VL_BYTES // lanes, where))
    words = [int(w) for w in mask]
    if len(words) == 2 and lanes == 64 and words[1] == 0:
        words = words[:1]               # uint64_t mask[2] for a 32-bit type: word 1 unused
    if len(words) != lanes // 64 or not all(0 <= w < 2 ** 64 for w in words) or not any(words):
        raise ValueError(f"{where}: bit-mode mask must be {lanes // 64} uint64 words, "
                         f"not all 0, got {mask}")
    return [bool(words[e // 64] >> (e % 64) & 1) for e in range(lanes)]


def _check_tensors(dst: np.ndarray, src: np.ndarray, where: str):
    if src.dtype not in (np.float16, np.float32) or dst.dtype != src.dtype:
        raise TypeError(f"{where}: T must be half or float, got {src.dtype}/{dst.dtype}")


def _read_repeat(src: np.ndarray, r: int, active: list[bool], blk_stride: int,
                 rep_stride: int, masked, where: str) -> list:
    """The lanes of repeat r: element e from ``(r*rep + (e // epb)*blk)*epb + e % epb``."""
    epb = BLOCK_BYTES // src.itemsize
    values = []
    for e, on in enumerate(active):
        if not on:
            values.append(masked)       # masked lanes are never read
            continue
        offset = (r * rep_stride + (e // epb) * blk_stride) * epb + e % epb
        if offset >= src.size:
            raise IndexError(f"{where}: src element {offset} past its end {src.size}")
        values.append(src[offset])
    return values


def _write(dst: np.ndarray, i: int, value, where: str) -> None:
    if i >= dst.size:
        raise IndexError(f"{where}: dst element {i} past its end {dst.size}")
    dst[i] = value


# ---------------------------------------------------------------- PairReduceSum (SPEC 5)

def pair_reduce_sum(dst: Any, src: Any, repeat_time: int, mask: Any, dst_rep_stride: int,
                    src_blk_stride: int, src_rep_stride: int, *,
                    config: Config | None = None) -> np.ndarray:
    """Reference ``PairReduceSum<T>`` on 1-D LocalTensors; returns the new dst."""
    config = config or Config()
    product = config.product
    where = "pair_reduce_sum"
    dst = np.array(dst, copy=True)
    src = np.asarray(src)
    _check_tensors(dst, src, where)
    if product == "training" and src.dtype != np.float16:
        raise TypeError("pair_reduce_sum: Atlas training series supports half only")
    if not 0 <= repeat_time <= 255:
        raise ValueError(f"pair_reduce_sum: repeat_time must be in [0, 255], got {repeat_time}")
    if min(dst_rep_stride, src_blk_stride, src_rep_stride) < 0:
        raise ValueError("pair_reduce_sum: strides must be >= 0")
    if product == "training" and dst_rep_stride == 0:
        raise ValueError("pair_reduce_sum: Atlas training series does not support dst_rep_stride 0")
    lanes = VL_BYTES // src.itemsize
    active = _repeat_mask(mask, lanes, where)
    if config.masked_pair is None:
        zero_both = product == "200I/500 A2"
    else:
        zero_both = config.masked_pair == "zero"
    masked = _masked_value(src.dtype, config)
    # src is read in full before any write (a repeat's dst may overlap a later repeat's src).
    reads = [_read_repeat(src, r, active, src_blk_stride, src_rep_stride, masked, where)
             for r in range(repeat_time)]
    for r, a in enumerate(reads):
        for k in range(lanes // 2):
            out = r * dst_rep_stride * (lanes // 2) + k
            if not active[2 * k] and not active[2 * k + 1]:
                if zero_both:
                    _write(dst, out, 0, where)
                elif out >= dst.size:
                    raise IndexError(f"{where}: dst element {out} past its end {dst.size}")
                continue
            _write(dst, out, add(a[2 * k], a[2 * k + 1], src.dtype, config), where)
    return dst


# ---------------------------------------------------------------- reduce family (SPEC 10)

def block_reduce_sum(dst: Any, src: Any, repeat_time: int, mask: Any, dst_rep_stride: int,
                     src_blk_stride: int, src_rep_stride: int, *,
                     config: Config | None = None) -> np.ndarray:
    """Reference ``BlockReduceSum<T>``: each DataBlock of each repeat summed by a pair tree to
    ``dst[r*dst_rep_stride*8 + b]``; an empty block writes +0 or keeps dst
    (``config.empty_block``)."""
    config = config or Config()
    where = "block_reduce_sum"
    dst, src = np.array(dst, copy=True), np.asarray(src)
    _check_tensors(dst, src, where)
    lanes = VL_BYTES // src.itemsize
    epb = lanes // 8
    active = _repeat_mask(mask, lanes, where)
    masked = _masked_value(src.dtype, config)
    for r in range(repeat_time):
        values = _read_repeat(src, r, active, src_blk_stride, src_rep_stride, masked, where)
        for b in range(8):
            if any(active[b * epb:(b + 1) * epb]):
                total = _tree(values[b * epb:(b + 1) * epb],
                              lambda x, y: add(x, y, src.dtype, config))
            elif config.empty_block == "keep":
                continue
            else:
                total = 0               # +0 even when masked lanes enter as -0
            _write(dst, r * dst_rep_stride * 8 + b, total, where)
    return dst


def whole_reduce_sum(dst: Any, src: Any, mask: Any, repeat_time: int, dst_rep_stride: int,
                     src_blk_stride: int, src_rep_stride: int, *,
                     config: Config | None = None) -> np.ndarray:
    """Reference ``WholeReduceSum<T>`` (mask before repeatTimes): each repeat summed by one
    pair tree over its lanes to ``dst[r*dst_rep_stride]``."""
    config = config or Config()
    where = "whole_reduce_sum"
    dst, src = np.array(dst, copy=True), np.asarray(src)
    _check_tensors(dst, src, where)
    active = _repeat_mask(mask, VL_BYTES // src.itemsize, where)
    masked = _masked_value(src.dtype, config)
    for r in range(repeat_time):
        values = _read_repeat(src, r, active, src_blk_stride, src_rep_stride, masked, where)
        _write(dst, r * dst_rep_stride,
               _tree(values, lambda x, y: add(x, y, src.dtype, config)), where)
    return dst


def repeat_reduce_sum(dst: Any, src: Any, repeat_time: int, mask: int, dst_blk_stride: int,
                      src_blk_stride: int, dst_rep_stride: int, src_rep_stride: int, *,
                      config: Config | None = None) -> np.ndarray:
    """Reference ``RepeatReduceSum<T>``: ``whole_reduce_sum`` with a continuous mask;
    ``dst_blk_stride`` has no effect (vendor page)."""
    if not isinstance(mask, (int, np.integer)) or isinstance(mask, bool):
        raise TypeError(f"repeat_reduce_sum: mask must be an int (continuous mode), got {mask!r}")
    del dst_blk_stride
    return whole_reduce_sum(dst, src, mask, repeat_time, dst_rep_stride, src_blk_stride,
                            src_rep_stride, config=config)


# ReduceSum's documented order across repeat results per product: (first-n form, level-0 form);
# 1 = pair tree padded with +0 to a power of two (A12), 2 = sequential.
_REDUCE_SUM_MODES = {"A3": (2, 1), "A2": (2, 1)}


def reduce_sum(dst: Any, src: Any, shared_tmp_buffer: Any, *args: Any, mode: int | None = None,
               config: Config | None = None) -> np.ndarray:
    """Reference ``ReduceSum<T>``: ``(count)`` or level-0 ``(mask, repeat_time, src_rep_stride)``
    forms; the sum goes to ``dst[0]``."""
    config = config or Config()
    where = "reduce_sum"
    del shared_tmp_buffer
    dst, src = np.array(dst, copy=True), np.asarray(src)
    _check_tensors(dst, src, where)
    lanes = VL_BYTES // src.itemsize
    masked = _masked_value(src.dtype, config)
    sums = []
    if len(args) == 1:
        (count,) = args
        for r in range(-(-count // lanes)):
            active = [r * lanes + e < count for e in range(lanes)]
            sums.append(_tree(_read_repeat(src, r, active, 1, 8, masked, where),
                              lambda x, y: add(x, y, src.dtype, config)))
        form = 0
    else:
        mask, repeat_time, src_rep_stride = args
        active = _repeat_mask(mask, lanes, where)
        for r in range(repeat_time):
            sums.append(_tree(_read_repeat(src, r, active, 1, src_rep_stride, masked, where),
                              lambda x, y: add(x, y, src.dtype, config)))
        form = 1
    if not sums:
        return dst                      # repeat_time 0
    mode = mode or _REDUCE_SUM_MODES.get(config.product, (1, 1))[form]
    if mode == 2:
        dst[0] = sum_sequential(sums, src.dtype, config)
    else:
        zero = src.dtype.type(0)
        width = 1 << (len(sums) - 1).bit_length()
        dst[0] = _tree(sums + [zero] * (width - len(sums)),
                       lambda x, y: add(x, y, src.dtype, config))
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


def gather(src: Any, index: Any, mask: Any, *, dst_dtype: Any = None, dtype: Any = None,
           config: Config | None = None) -> np.ndarray:
    """Reference ``asc_gather`` for one index register: ``dst[i] = src[index[i]]`` on bits."""
    del config                          # no reading changes a gather of in-range lanes
    src = np.asarray(src)
    index = np.asarray(index)
    src_name = _format_name(src, dtype)
    dst_name = str(dst_dtype) if dst_dtype is not None else src_name
    src_w, dst_w = _lane_bytes(src_name), _lane_bytes(dst_name)
    if index.dtype not in (np.uint16, np.uint32) or index.shape != (VL_BYTES // index.itemsize,):
        raise TypeError(f"gather: index must be uint16 (128,) or uint32 (64,), got "
                        f"{index.dtype} {index.shape}")
    index_lanes = index.size
    mask = _element_mask(mask, index_lanes, index.itemsize, "gather")
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
    width = _lane_bytes(_format_name(src1, dtype))
    lanes = VL_BYTES // width
    if src1.shape != (lanes,):
        raise ValueError(f"squeeze_and_storeunalign: src1 must be ({lanes},), got {src1.shape}")
    mask = _element_mask(squeeze_mask, lanes, width, "squeeze_and_storeunalign")
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


# ---------------------------------------------------------------- masks (SPEC 2)

# asc_create_mask_bW patterns, by the Ascend C enum values.
_PATTERNS = {"PAT_ALL": 0, "PAT_VL1": 1, "PAT_VL2": 2, "PAT_VL3": 3, "PAT_VL4": 4, "PAT_VL8": 5,
             "PAT_VL16": 6, "PAT_VL32": 7, "PAT_VL64": 8, "PAT_VL128": 9, "PAT_M3": 10,
             "PAT_M4": 11, "PAT_H": 12, "PAT_Q": 13, "PAT_ALLF": 15}


def _mask_width(dtype: Any) -> int:
    if isinstance(dtype, str) and dtype in ("b8", "b16", "b32"):
        return int(dtype[1:]) // 8
    return _lane_bytes(_name(dtype))


def _hardware(active: list[bool], width: int, config: Config) -> np.ndarray:
    """Bit i*width per active element i; the group's other bits too under "replicated"."""
    hw = np.zeros(VL_BYTES, bool)
    for i, on in enumerate(active):
        hw[i * width] = on
        if config.mask_layout == "replicated":
            hw[i * width:(i + 1) * width] = on
    return hw


def create_mask(pattern: Any, dtype: Any, *, config: Config | None = None) -> np.ndarray:
    """Reference ``asc_create_mask_bW(pattern)``: hardware form, bool (256,)."""
    config = config or Config()
    width = _mask_width(dtype)
    n = VL_BYTES // width
    if isinstance(pattern, str):
        value = _PATTERNS[pattern if pattern.startswith("PAT_") else "PAT_" + pattern]
    else:
        value = int(pattern)
    name = {v: k for k, v in _PATTERNS.items()}[value]
    if name == "PAT_ALL":
        active = [True] * n
    elif name == "PAT_ALLF":
        active = [False] * n
    elif name in ("PAT_M3", "PAT_M4"):
        active = [i % int(name[-1]) == 0 for i in range(n)]
    elif name in ("PAT_H", "PAT_Q"):
        active = [i < n // (2 if name == "PAT_H" else 4) for i in range(n)]
    else:
        count = int(name[len("PAT_VL"):])
        if count > n:                   # A2: clamp to all lanes, or none
            count = n if config.vl_overflow == "clamp" else 0
        active = [i < count for i in range(n)]
    return _hardware(active, width, config)


def update_mask(count: int, dtype: Any, *, config: Config | None = None):
    """Reference ``asc_update_mask_bW(count)``: (mask of the lowest min(count, N) elements,
    max(count - N, 0))."""
    config = config or Config()
    width = _mask_width(dtype)
    n = VL_BYTES // width
    count = int(count)
    if not 0 <= count < 2 ** 32:
        raise ValueError(f"update_mask: count={count} is outside uint32_t")
    return _hardware([i < count for i in range(n)], width, config), max(count - n, 0)


# ---------------------------------------------------------------- UB and GM (SPEC 9)

def _ub(ub: Any) -> bytearray:
    ub = np.asarray(ub)
    if ub.dtype != np.uint8 or ub.ndim != 1:
        raise TypeError(f"reference: ub must be uint8 (size,), got {ub.dtype} {ub.shape}")
    return bytearray(ub.tobytes())


def _check_addr(addr: int, size: int, ub_size: int, where: str) -> None:
    if addr % BLOCK_BYTES or addr < 0 or addr + size > ub_size:
        raise ValueError(f"{where}: addr={addr} with {size} bytes is not a 32-aligned range "
                         f"inside the {ub_size}-byte UB")


def _to_bytes(values: np.ndarray) -> bytes:
    """Little-endian bytes of each element's bit pattern."""
    width = values.itemsize
    return b"".join(int(v).to_bytes(width, "little")
                    for v in values.reshape(-1).view(_UINT[width]))


def _from_bytes(data: bytes, dtype: np.dtype) -> np.ndarray:
    width = dtype.itemsize
    words = [int.from_bytes(data[i:i + width], "little") for i in range(0, len(data), width)]
    return np.array(words, _UINT[width]).view(dtype)


def loadalign(ub: Any, addr: int, dtype: Any) -> np.ndarray:
    """Reference ``asc_loadalign``: the register of ``dtype`` in the 256 bytes at ``addr``."""
    data = _ub(ub)
    _check_addr(addr, VL_BYTES, len(data), "loadalign")
    return _from_bytes(bytes(data[addr:addr + VL_BYTES]), np.dtype(FORMATS[_name(dtype)].storage))


def storealign(ub: Any, addr: int, src: Any, mask: Any, *, dtype: Any = None,
               config: Config | None = None) -> np.ndarray:
    """Reference ``asc_storealign``: the active elements' bytes at ``addr``; masked-off bytes
    kept or zeroed (``config.store_masked``, A4)."""
    config = config or Config()
    data = _ub(ub)
    src = np.asarray(src)
    width = _lane_bytes(_format_name(src, dtype))
    lanes = VL_BYTES // width
    _check_addr(addr, VL_BYTES, len(data), "storealign")
    active = _element_mask(mask, lanes, width, "storealign")
    raw = _to_bytes(src)
    for i in range(lanes):
        for k in range(i * width, (i + 1) * width):
            if active[i]:
                data[addr + k] = raw[k]
            elif config.store_masked == "zero":
                data[addr + k] = 0
    return np.frombuffer(bytes(data), np.uint8).copy()


def copy_gm2ub_align(ub: Any, addr: int, gm: Any, size: int) -> np.ndarray:
    """Reference ``asc_copy_gm2ub_align``: the first ``size`` bytes of ``gm`` to ``addr``."""
    data = _ub(ub)
    raw = _to_bytes(np.asarray(gm))
    if not 0 <= size <= len(raw):
        raise ValueError(f"copy_gm2ub_align: size={size} past the {len(raw)} bytes of gm")
    _check_addr(addr, size, len(data), "copy_gm2ub_align")
    data[addr:addr + size] = raw[:size]
    return np.frombuffer(bytes(data), np.uint8).copy()


def copy_ub2gm_align(gm: Any, ub: Any, addr: int, size: int) -> np.ndarray:
    """Reference ``asc_copy_ub2gm_align``: ``gm`` with its first ``size`` bytes from ``addr``."""
    data = _ub(ub)
    gm = np.asarray(gm)
    raw = bytearray(_to_bytes(gm))
    if not 0 <= size <= len(raw) or size % gm.itemsize:
        raise ValueError(f"copy_ub2gm_align: size={size} must be whole elements of gm")
    _check_addr(addr, size, len(data), "copy_ub2gm_align")
    raw[:size] = data[addr:addr + size]
    return _from_bytes(bytes(raw), gm.dtype).reshape(gm.shape)


# ---------------------------------------------------------------- summation orders

def sum_sequential(x, dtype: Any, config: Config | None = None):
    """``((x0 + x1) + x2) + ...``, each add rounded to the type."""
    s = x[0]
    for v in x[1:]:
        s = add(s, v, dtype, config)
    return s


def sum_adjacent_tree(x, dtype: Any, carry: bool = True):
    """Adjacent pairs per level; an odd last element moves up (carry) or meets +0."""
    zero = np.dtype(FORMATS[_name(dtype)].storage).type(0)
    x = list(x)
    while len(x) > 1:
        if len(x) % 2 and not carry:
            x.append(zero)
        nxt = [add(x[i], x[i + 1], dtype) for i in range(0, len(x) - 1, 2)]
        x = nxt + x[-1:] if len(x) % 2 else nxt
    return x[0]


def sum_datablock(x, dtype: Any, mode: int):
    """ReduceSum's count form: 256-byte repeats each by a pair tree (the last padded with +0),
    then their results by a +0-padded pair tree (mode 1) or in order (mode 2)."""
    name = _name(dtype)
    lanes = VL_BYTES // _lane_bytes(name)
    zero = np.dtype(FORMATS[name].storage).type(0)
    repeats = []
    for r in range(0, len(x), lanes):
        block = list(x[r:r + lanes]) + [zero] * (lanes - len(x[r:r + lanes]))
        repeats.append(sum_adjacent_tree(block, dtype))
    if mode == 2:
        return sum_sequential(repeats, dtype)
    width = 1 << (len(repeats) - 1).bit_length()
    return sum_adjacent_tree(repeats + [zero] * (width - len(repeats)), dtype)


def sum_numpy_pairwise(x, dtype: Any):
    """NumPy's pairwise_sum (loops_utils.h.src), float32 accumulators, then one rounding."""
    f = np.float32

    def pw(a):
        n = len(a)
        if n < 8:
            res = f(-0.0)
            for v in a:
                res = f(res + f(v))
            return res
        if n <= 128:
            r = [f(v) for v in a[:8]]
            i = 8
            while i < n - n % 8:
                r = [f(r[j] + f(a[i + j])) for j in range(8)]
                i += 8
            res = f(f(f(r[0] + r[1]) + f(r[2] + r[3])) + f(f(r[4] + r[5]) + f(r[6] + r[7])))
            for v in a[i:]:
                res = f(res + f(v))
            return res
        half = n // 2
        half -= half % 8
        return f(pw(a[:half]) + pw(a[half:]))

    with np.errstate(all="ignore"):
        return _FLOAT_TYPES[_name(dtype)](f(f(0.0) + pw(list(x))))


def sum_kahan(x, dtype: Any):
    """Kahan's compensated sum, every operation rounded to the type."""
    s, e = x[0], np.dtype(FORMATS[_name(dtype)].storage).type(0)
    for v in x[1:]:
        y = add(v, -e, dtype)
        t = add(s, y, dtype)
        e = add(add(t, -s, dtype), -y, dtype)
        s = t
    return s


# ascjax.precision's order names -> the models above, as f(x, dtype).
SUMMATION_ORDERS = {
    "sequential": sum_sequential,
    "adjacent_tree": sum_adjacent_tree,
    "datablock_mode1": lambda x, dtype: sum_datablock(x, dtype, 1),
    "datablock_mode2": lambda x, dtype: sum_datablock(x, dtype, 2),
    "numpy_pairwise": sum_numpy_pairwise,
    "kahan": sum_kahan,
}
