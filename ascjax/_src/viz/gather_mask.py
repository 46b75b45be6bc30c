"""GatherMask's built-in patterns: which elements of one repeat each of src1Pattern 1..7 keeps."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..config import Config, resolve_config
from ..formats import resolve
from ..isa.gather_mask import GATHER_MASK_TYPES, PATTERN_MODES, PATTERN_TYPES
from ..isa.gather_mask import gather_mask as _gather_mask
from .canvas import MASKED, Canvas, palette

_BITS = {1: "0101...0101", 2: "1010...1010", 3: "0001...0001", 4: "0010...0010",
         5: "0100...0100", 6: "1000...1000", 7: "1111...1111"}


def _pattern_colour(pattern: int) -> tuple:
    """Pattern p's colour: tab10 without its grey (index 7), which read as "not kept"."""
    return palette((0, 1, 2, 3, 4, 5, 6, 8, 9)[pattern % 9])


NUMBERED_LANES = 64  # panels of more elements a repeat have cells too narrow for a number


def _numbers_legend(lanes: list[int]) -> str:
    numbered = [n <= NUMBERED_LANES for n in lanes]
    if all(numbered):
        return "number: the dst element it lands in"
    unnumbered = "the k-th kept element (from the left) lands in dst element k"
    if not any(numbered):
        return unnumbered
    return f"number: the dst element it lands in (panels without numbers: {unnumbered})"


def gather_mask_patterns(dtypes: Sequence[Any] = ("half", "float"),
                         patterns: Sequence[int] = tuple(range(1, 8)), *,
                         config: Config | None = None):
    """Which elements of one 256-byte repeat each built-in ``src1Pattern`` keeps, per T (one
    panel per dtype: b16 has 128 elements a repeat, b32 64). Row p is pattern p; a coloured
    cell is an element the call keeps, numbered by the dst element it lands in. The cells
    come from ``ascjax.gather_mask`` itself (src0 = the element numbers, Normal mode, one
    repeat); the page's bit string (element 0 rightmost) and rsvdCnt label each row.

    >>> from ascjax import viz
    >>> fig = viz.gather_mask_patterns(("half", "float"))
    """
    where = "viz.gather_mask_patterns"
    config = resolve_config(config)
    if isinstance(dtypes, str) or not hasattr(dtypes, "__len__") or len(dtypes) == 0:
        raise TypeError(f"{where}: dtypes must be a non-empty sequence of types, one panel "
                        f"each, e.g. ('half', 'float'); got {dtypes!r}")
    if isinstance(patterns, str) or not hasattr(patterns, "__len__") or len(patterns) == 0:
        raise TypeError(f"{where}: patterns must be a non-empty sequence of built-in pattern "
                        f"numbers, e.g. (1, 2, 7); got {patterns!r}")
    fmts = [resolve(d, where=where, arg="dtypes") for d in dtypes]
    modes = PATTERN_MODES.get(config.product, ())
    for p in patterns:
        if p not in modes:
            raise ValueError(f"{where}: pattern {p!r} is not a built-in pattern on product "
                             f"{config.product!r}; valid: {list(modes)}")
    for fmt in fmts:
        if fmt.name not in GATHER_MASK_TYPES.get(config.product, ()):
            raise TypeError(f"{where}: {fmt.name} is not a GatherMask type on product "
                            f"{config.product!r}")
    rows = len(patterns)
    canvas = Canvas(14, 1.0 + len(fmts) * (0.45 * rows + 0.9))
    height = 1 / len(fmts)
    for k, fmt in enumerate(fmts):
        lanes = fmt.lanes
        ax = canvas.axes((0.13, 1 - (k + 1) * height + 0.12 * height, 0.8, 0.72 * height))
        ax.set_xlim(-0.5, lanes + 0.5)
        ax.set_ylim(rows + 0.2, -0.2)
        ax.set_axis_off()
        ax.set_title(f"T = {fmt.name}: {lanes} elements a repeat, pattern words "
                     f"{PATTERN_TYPES[fmt.bits]}", fontsize=9, loc="left")
        src = np.arange(lanes).astype(fmt.bits_dtype).view(fmt.storage_dtype)
        for row, p in enumerate(patterns):
            dst, cnt = _gather_mask(np.zeros(lanes, fmt.storage_dtype), src, p, False, 0,
                                    (1, 1, 8, 0), config=config)
            kept = np.asarray(dst).view(fmt.bits_dtype)[:int(cnt)].astype(np.int64)
            order = {int(e): j for j, e in enumerate(kept)}
            for e in range(lanes):
                on = e in order
                canvas.cell(ax, e, row, 1, 0.8, face=_pattern_colour(p) if on else MASKED,
                            edge="#777777", lw=0.3)
                if on and lanes <= NUMBERED_LANES:
                    ax.text(e + 0.5, row + 0.4, str(order[e]), ha="center", va="center",
                            fontsize=5)
            ax.text(-1, row + 0.4, f"{p}: {_BITS[p]}", ha="right", va="center", fontsize=8)
            ax.text(lanes + 1, row + 0.4, f"rsvdCnt {int(cnt)}", ha="left", va="center",
                    fontsize=8, gid=f"count:{fmt.name}:{p}")
        for e in range(0, lanes + 1, 16):
            ax.text(e, rows + 0.1, str(e), ha="center", va="top", fontsize=6, color="#555555")
    canvas.figure.suptitle("GatherMask built-in patterns (src1Pattern 1..7): the elements of "
                           "one repeat each keeps, packed into dst in order", fontsize=11)
    canvas.legend([*((f"kept by pattern {p}" if i == 0 else str(p),
                      {"facecolor": _pattern_colour(p)}) for i, p in enumerate(patterns)),
                   ("not kept", {"facecolor": MASKED}),
                   (_numbers_legend([f.lanes for f in fmts]), {"facecolor": "none",
                                                                "edgecolor": "none"})])
    return canvas.flush()
