"""asc_create_mask_bW / asc_update_mask_bW (SPEC 2), in the hardware form."""

from __future__ import annotations

from typing import Any

import numpy as np

from ascjax._src.config import Config

from ._scalar import VL_BYTES, lane_bytes, type_name

# asc_create_mask_bW patterns, by the Ascend C enum values.
_PATTERNS = {"PAT_ALL": 0, "PAT_VL1": 1, "PAT_VL2": 2, "PAT_VL3": 3, "PAT_VL4": 4, "PAT_VL8": 5,
             "PAT_VL16": 6, "PAT_VL32": 7, "PAT_VL64": 8, "PAT_VL128": 9, "PAT_M3": 10,
             "PAT_M4": 11, "PAT_H": 12, "PAT_Q": 13, "PAT_ALLF": 15}


def _mask_width(dtype: Any) -> int:
    if isinstance(dtype, str) and dtype in ("b8", "b16", "b32"):
        return int(dtype[1:]) // 8
    return lane_bytes(type_name(dtype))


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
