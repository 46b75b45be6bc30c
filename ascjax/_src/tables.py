"""Documentation derived from the format table and the codecs: summaries, value tables, spacing."""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from .config import Config
from .formats import CODEC_FORMATS, FORMATS, Format
from .isa.codecs import _codec_format, decode


def _layout(f: Format) -> str:
    if f.name == "hifloat8_t":
        return "sign, dot (2-4), exponent (0-4), mantissa (1-3): tapered"
    if f.kind == "int":
        return "two's complement"
    return f"{int(f.sign_bit)}-{f.exponent_bits}-{f.mantissa_bits}"


def _codes(f: Format) -> np.ndarray:
    return np.arange(1 << f.bits, dtype=f.bits_dtype)


def format_table() -> str:
    """Markdown table of every type with a codec: layout, bias, specials, round modes, library."""
    header = ("| type | bits | layout | bias | specials | round modes (default first) | "
              "Cast from | library | assumed |")
    rows = [header, "|---" * 9 + "|"]
    for name in CODEC_FORMATS:
        f = FORMATS[name]
        bias = f.bias if f.kind == "float" and f.name != "hifloat8_t" else ""
        rows.append(f"| `{name}` | {f.bits} | {_layout(f)} | {bias} | {f.specials} | "
                    f"{', '.join(f.round_modes)} | {', '.join(f.cast_from) or 'not listed'} | "
                    f"{f.library} | {f.assumed} |")
    return "\n".join(rows)


def _value(v: float) -> str:
    return str(np.float32(v))  # shortest text that reads back as the same float32


def value_table(fmt: Any, *, config: Config | None = None) -> str:
    """Markdown table of the values of ``fmt``'s codes.

    8-bit types: a 16 x 16 grid (row = high nibble, column = low nibble); 4-bit types: one row
    of 16 codes; 16-bit types: their landmark codes (smallest subnormal, ..., inf, NaN).
    ``config`` as in ``decode`` (its ``e8m0`` reading).
    """
    f = _codec_format(fmt, "value_table")
    if f.bits == 16:
        return _landmarks(f)
    values = np.asarray(decode(_codes(f), f, config=config))
    cols = min(16, values.size)
    rows = [f"| `{f.name}` | " + " | ".join(f"x{c:X}" for c in range(cols)) + " |",
            "|---" * (cols + 1) + "|"]
    for r in range(values.size // cols):
        cells = " | ".join(_value(v) for v in values[r * cols:(r + 1) * cols])
        rows.append(f"| **{r:X}x** | {cells} |")
    return "\n".join(rows)


def _landmarks(f: Format) -> str:
    m = f.mantissa_bits
    marks = {"smallest subnormal": 1, "largest subnormal": (1 << m) - 1,
             "smallest normal": 1 << m, "one": f.bias << m, "largest finite": f.max_code,
             "+inf": f.inf_code, "NaN (as encoded)": f.nan_code}
    codes = np.array(list(marks.values()), f.bits_dtype)
    values = np.asarray(decode(codes, f))
    rows = [f"| `{f.name}` | code | value |", "|---|---|---|"]
    rows += [f"| {k} | 0x{int(c):04X} | {_value(v)} |"
             for k, c, v in zip(marks, codes, values, strict=True)]
    return "\n".join(rows)


class Spacing(NamedTuple):
    """The finite positive values of a type in order, the gap from each to the next (its ULP),
    and the mantissa bits kept there: ``log2(2**floor(log2(value)) / ulp)``. float64 arrays,
    without the largest value (it has no next one)."""

    values: np.ndarray
    ulp: np.ndarray
    mantissa_bits: np.ndarray


def format_spacing(fmt: Any, *, config: Config | None = None) -> Spacing:
    """``Spacing(values, ulp, mantissa_bits)`` of ``fmt`` (``config`` as in ``decode``)."""
    f = _codec_format(fmt, "format_spacing")
    values = np.asarray(decode(_codes(f), f, config=config)).astype(np.float64)
    values = np.unique(values[np.isfinite(values) & (values > 0)])
    ulp = np.diff(values)
    # Every value and gap is a float with an exact binary exponent: frexp, not a rounded log.
    bits = np.frexp(values[:-1])[1] - np.frexp(ulp)[1]
    return Spacing(values[:-1], ulp, bits.astype(np.float64))
