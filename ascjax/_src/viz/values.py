"""What the pictures print: display values of lanes, their labels, and the checks that a
picture gets one register (or one tensor)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..formats import CODEC_FORMATS, FORMATS, Format
from ..isa.codecs import decode, unpack_nibbles
from ..isa.lanes import check_register
from ..isa.masks import element_mask


def element_values(x: Any, fmt: Format) -> np.ndarray:
    """Display values ``(n, k)`` of ``n`` lanes: k = 2 for nibble pairs (low nibble first),
    else 1. Integers as int64, floats as float64 (exact: every format fits float32)."""
    x = np.asarray(x).reshape(-1)
    if fmt.kind != "float" and not fmt.packed:
        return x.astype(np.int64).reshape(-1, 1)
    if fmt.name not in CODEC_FORMATS:
        return x.astype(np.float64).reshape(-1, 1)
    # Decode padded to whole registers: one compiled decode per format, whatever the count.
    n = x.shape[0]
    padded = np.zeros(-(-n // fmt.lanes) * fmt.lanes or fmt.lanes, x.dtype)
    padded[:n] = x
    if fmt.packed:
        codes = np.asarray(unpack_nibbles(padded.astype(np.uint8)))
        return np.asarray(decode(codes, fmt), np.float64)[:2 * n].reshape(-1, 2)
    return np.asarray(decode(padded, fmt), np.float64)[:n].reshape(-1, 1)


def tidy(text: str) -> str:
    """A number's text without exponent padding (1e+05 -> 1e5)."""
    return text.replace("e+0", "e").replace("e-0", "e-").replace("e+", "e")


def exact_text(value: float, fmt: Format) -> str:
    """The shortest decimal that reads back as ``value`` in ``fmt`` (its exact identity), or
    the integer; hifloat8 and fp4 values (no NumPy type) to 4 significant digits."""
    if fmt.kind != "float":
        return str(int(value))
    if not np.isfinite(value):
        return str(value)
    if value == 0:
        return "-0" if np.signbit(value) else "0"
    storage = FORMATS[fmt.name].storage_dtype  # the table's: fp8 given as uint8 bits too
    if storage.kind == "u":  # hifloat8, fp4 pairs: no NumPy type to round-trip
        return tidy(f"{value:.4g}")
    positional = 1e-4 <= abs(value) < 1e7
    for digits in range(1, 18):
        text = (np.format_float_positional(value, precision=digits, fractional=False, trim="-")
                if positional else f"{value:.{digits}g}")
        with np.errstate(over="ignore"):  # a rounding of 65504 to "7e4" is past half's max
            if float(np.array(float(text)).astype(storage)) == value:
                return tidy(text)
    return repr(value)


APPROXIMATE = "\u2248"  # marks a label that is not the value itself


def labels(value: float, fmt: Format) -> list[str]:
    """Label candidates for one value: the exact one first, then shorter roundings, each
    marked as approximate (65504 as "\u22487e4", never a bare "7e4" that reads as 70000)."""
    if fmt.kind != "float":
        exact, shorter = str(int(value)), [tidy(f"{value:.2g}")]
    elif not np.isfinite(value):
        return [str(value)]
    else:
        exact, shorter = exact_text(value, fmt), [tidy(f"{value:.{d}g}") for d in (4, 3, 2, 1)]
    # a shorter text that reads back as the value is exact too (448 in fp8_e4m3fn_t, whose
    # shortest round trip is "450"); one that does not is marked
    rounded = [t if _reads_back(t, value, fmt) else APPROXIMATE + t
               for t in dict.fromkeys(shorter) if t != exact]
    return [exact, *rounded]


def _reads_back(text: str, value: float, fmt: Format) -> bool:
    return float(text) == value if fmt.kind != "float" else float(text) == float(value)


def single_register(values: Any, fmt: Format, where: str, arg: str) -> np.ndarray:
    x = check_register(values, fmt, where=where, arg=arg)
    if x.ndim != 1:
        raise ValueError(f"{where}: draws one register; {arg} has shape {x.shape} (pick one, "
                         f"e.g. {arg}[0])")
    return np.asarray(x)


def one_tensor(x: Any, where: str, arg: str) -> np.ndarray:
    x = np.asarray(x)
    if x.ndim != 1:
        raise ValueError(f"{where}: draws one tensor; {arg} has shape {x.shape} (pick one, "
                         f"e.g. {arg}[0])")
    return x


def lane_mask(mask: Any, fmt: Format, where: str, arg: str = "mask") -> np.ndarray:
    if mask is None:
        return np.ones(fmt.lanes, bool)
    active = np.asarray(element_mask(mask, fmt, where=where, arg=arg))
    if active.ndim != 1:
        raise ValueError(f"{where}: draws one register; {arg} has shape {active.shape}")
    return active
