"""UB and GM moves (SPEC 9) over a Python bytearray UB."""

from __future__ import annotations

from typing import Any

import numpy as np

from ascjax._src.config import Config
from ascjax._src.formats import FORMATS

from ._scalar import BLOCK_BYTES, UINT, VL_BYTES, element_mask, format_name, lane_bytes, type_name


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
                    for v in values.reshape(-1).view(UINT[width]))


def _from_bytes(data: bytes, dtype: np.dtype) -> np.ndarray:
    width = dtype.itemsize
    words = [int.from_bytes(data[i:i + width], "little") for i in range(0, len(data), width)]
    return np.array(words, UINT[width]).view(dtype)


def loadalign(ub: Any, addr: int, dtype: Any) -> np.ndarray:
    """Reference ``asc_loadalign``: the register of ``dtype`` in the 256 bytes at ``addr``."""
    data = _ub(ub)
    _check_addr(addr, VL_BYTES, len(data), "loadalign")
    return _from_bytes(bytes(data[addr:addr + VL_BYTES]),
                       np.dtype(FORMATS[type_name(dtype)].storage))


def storealign(ub: Any, addr: int, src: Any, mask: Any, *, dtype: Any = None,
               config: Config | None = None) -> np.ndarray:
    """Reference ``asc_storealign``: the active elements' bytes at ``addr``; masked-off bytes
    kept or zeroed (``config.store_masked``, A4)."""
    config = config or Config()
    data = _ub(ub)
    src = np.asarray(src)
    width = lane_bytes(format_name(src, dtype))
    lanes = VL_BYTES // width
    _check_addr(addr, VL_BYTES, len(data), "storealign")
    active = element_mask(mask, lanes, width, "storealign")
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
