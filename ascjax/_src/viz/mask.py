"""A mask's 256 bits, grouped into the elements of a type."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

import numpy as np

from ..formats import resolve
from ..isa.masks import _spread
from .canvas import Canvas
from .values import lane_mask

if TYPE_CHECKING:
    from matplotlib.figure import Figure


_MASK_TYPES = ("b8", "b16", "b32")


def mask(mask: Any, dtype: Any = "b8", *, title: str | None = None) -> Figure:
    """A ``vector_bool`` as its 256 bits (one per register byte, 8 rows of 32) grouped into
    the elements of ``dtype``; the bit that governs each element (bit ``i*width``) is outlined
    and the element numbered, so a mask built for another width shows which lanes it really
    activates. ``mask``: hardware form ``(256,)``, or per-element ``(lanes of dtype,)`` (drawn
    in canonical form). ``dtype``: an Ascend type, a NumPy dtype or "b8"/"b16"/"b32".

    >>> import ascjax
    >>> from ascjax import viz
    >>> fig = viz.mask(ascjax.create_mask("PAT_M3", "float"), "half")
    """
    where = "viz.mask"
    if isinstance(dtype, str) and re.fullmatch(r"b\d+", dtype):
        if dtype not in _MASK_TYPES:
            raise TypeError(f"{where}: dtype {dtype!r} is not a mask type; valid: "
                            f"{', '.join(_MASK_TYPES)}, or an Ascend or NumPy type")
        width = int(dtype[1:]) // 8
    else:
        width = resolve(dtype, where=where, arg="dtype").width
    if width not in (1, 2, 4):
        raise TypeError(f"{where}: dtype {dtype!r} has {width}-byte elements; a mask governs "
                        f"1-, 2- or 4-byte elements ({', '.join(_MASK_TYPES)})")
    fmt = resolve({1: "uint8_t", 2: "uint16_t", 4: "uint32_t"}[width])
    bits = np.asarray(mask)
    if bits.ndim != 1:
        raise ValueError(f"{where}: draws one mask; got shape {bits.shape}")
    if bits.dtype == np.bool_ and bits.shape[0] == fmt.lanes and fmt.lanes != 256:
        bits = np.asarray(_spread(bits, width, "canonical"))
    active = lane_mask(bits, fmt, where)
    bits = np.asarray(bits, bool)
    canvas = Canvas(11, 4.6)
    ax = canvas.axes((0.1, 0.16, 0.88, 0.68))
    ax.set_xlim(0, 32)
    ax.set_ylim(8, 0)
    for byte in range(256):
        row, col = divmod(byte, 32)
        canvas.cell(ax, col, row, 1, 1, face="#3b6ea5" if bits[byte] else "white", lw=0.3,
                    edge="#999999")
    for i in range(fmt.lanes):
        row, col = divmod(i * width, 32)
        canvas.cell(ax, col, row, width, 1, face="none", edge="black", lw=1.4)
        color = "white" if bits[i * width] else "#444444"
        canvas.put_text(ax, col + 0.5, row + 0.5, [str(i)], 1, 1, fontsize=7, color=color,
                        fontweight="bold" if active[i] else "normal")
    ax.set_xticks([c + 0.5 for c in range(0, 32, 4)], [str(c) for c in range(0, 32, 4)],
                  fontsize=8)
    ax.xaxis.tick_top()
    ax.set_yticks([r + 0.5 for r in range(8)], [f"bytes {32 * r}-{32 * r + 31}" for r in range(8)],
                  fontsize=8)
    ax.tick_params(length=0)
    ax.set_title(title or f"vector_bool read as b{8 * width}: {int(active.sum())} of "
                 f"{fmt.lanes} elements active (element i is governed by bit {width}i)",
                 fontsize=11)
    canvas.legend([("bit set", {"facecolor": "#3b6ea5"}), ("bit clear", {"facecolor": "white"}),
                   (f"one b{8 * width} element (its number on its governing bit)",
                    {"facecolor": "none", "edgecolor": "black", "lw": 1.4})], under=ax)
    return canvas.flush()
