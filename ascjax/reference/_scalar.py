"""The one scalar add, and what every model shares: register geometry, type names, masks."""

from __future__ import annotations

from typing import Any

import ml_dtypes
import numpy as np

from ascjax._src.config import Config
from ascjax._src.formats import FORMATS, resolve

VL_BYTES = 256          # one vector register, every dtype (SPEC 1)
BLOCK_BYTES = 32        # one DataBlock
HALF_MAX = np.float16(65504.0)
# Assumption A8: every NaN an add produces is the default quiet NaN of its type.
CANONICAL_NAN_BITS = {"half": 0x7E00, "bfloat16_t": 0x7FC0, "float": 0x7FC00000,
                      "fp8_e5m2_t": 0x7E, "fp8_e4m3fn_t": 0x7F}
UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32}
# Formats whose adds are emulated; the narrow ones add in float32, then round once to the type.
FLOAT_TYPES = {"half": np.float16, "bfloat16_t": ml_dtypes.bfloat16, "float": np.float32,
                "fp8_e5m2_t": ml_dtypes.float8_e5m2, "fp8_e4m3fn_t": ml_dtypes.float8_e4m3fn}


def type_name(dtype: Any) -> str:
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
    name = type_name(dtype)
    if name not in FLOAT_TYPES:
        info = np.iinfo(FORMATS[name].storage)
        s = int(a) + int(b)
        if config.int_overflow == "saturate":
            s = min(max(s, info.min), info.max)
        else:
            s = (s - info.min) % 2 ** info.bits + info.min
        return np.dtype(FORMATS[name].storage).type(s)
    t = FLOAT_TYPES[name]
    with np.errstate(all="ignore"):     # overflow to inf and inf - inf are results, not errors
        s = t(t(a) + t(b)) if name in ("half", "float") else t(np.float32(a) + np.float32(b))
    if name == "half" and config.float_overflow == "saturate":
        if np.isnan(s):
            return np.float16(0.0)
        if np.isinf(s):
            return HALF_MAX if s > 0 else -HALF_MAX
    if np.isnan(np.float32(s)):
        return np.array(CANONICAL_NAN_BITS[name], UINT[np.dtype(t).itemsize]).view(t)[()]
    return s


def element_mask(mask: Any, lanes: int, width: int, where: str) -> np.ndarray:
    """Per-element bools ``(lanes,)`` from a per-element or hardware-form (256,) mask."""
    mask = np.asarray(mask)
    if mask.dtype == np.bool_ and mask.shape == (lanes,):
        return mask
    if mask.dtype == np.bool_ and mask.shape == (VL_BYTES,):
        return mask[::width]            # element i is governed by bit i*width (SPEC 2)
    raise ValueError(f"{where}: reference mask must be bool ({lanes},) or ({VL_BYTES},), got "
                     f"{mask.dtype} {mask.shape}")


_NUMPY_NAMES = {np.dtype(f.storage): f.name for f in reversed(FORMATS.values())}


def format_name(x: np.ndarray, dtype: Any) -> str:
    """Ascend type name: ``dtype`` when given (byte-stored formats), else from the NumPy dtype."""
    if dtype is not None:
        return str(dtype)
    return _NUMPY_NAMES[x.dtype]


def lane_bytes(name: str) -> int:
    """Bytes per register lane; the 4-bit types are handled as byte pairs."""
    return max(FORMATS[name].bits // 8, 1)
