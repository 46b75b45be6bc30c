"""A register as a grid of lanes: a DataBlock per row, masked-off lanes grey and hatched."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from ..formats import BLOCKS_PER_REGISTER, Format
from ..isa.lanes import resolve_dtypes
from .canvas import ACTIVE, MASKED, MASKED_EDGE, Canvas
from .values import element_values, labels, lane_mask, single_register

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure


def register(values: Any, mask: Any = None, *, dtype: Any = None,
             title: str | None = None) -> Figure:
    """A register ``(lanes,)`` as 8 rows (its 32-byte DataBlocks) of lanes, values printed where
    they fit, masked-off lanes grey and hatched.

    ``mask``: hardware form ``(256,)`` or per-element ``(lanes,)``; None: all active. ``dtype``
    names the Ascend type when the storage is ambiguous (uint8 holds hifloat8_t and the nibble
    pairs ``int4b_t``/``fp4x2_*``, drawn as two half-cells: low nibble = element 2k, left).
    Returns a Figure.

    >>> import numpy as np, ascjax
    >>> from ascjax import viz
    >>> fig = viz.register(np.arange(64, dtype=np.float32),
    ...                    ascjax.create_mask("PAT_M3", "float"))
    """
    where = "viz.register"
    fmt = resolve_dtypes(values, dtype, where=where, arg="values")
    x = single_register(values, fmt, where, "values")
    active = lane_mask(mask, fmt, where)
    rows = fmt.lanes // _lanes_per_row(fmt)
    height = 1.6 + 0.36 * rows
    canvas = Canvas(11, height)
    ax = canvas.axes((0.15, 0.7 / height, 0.83, 1 - 1.6 / height))
    draw_lanes(canvas, ax, element_values(x, fmt), active, fmt)
    n_on = int(active.sum())
    unit = "byte-pair lanes (2 elements each)" if fmt.packed else "lanes"
    ax.set_title(title or f"vector_{fmt.name}: {fmt.lanes} {unit} of {fmt.width} B, 8 DataBlocks "
                 f"of {fmt.per_block}; {n_on} active", fontsize=11)
    canvas.legend([("active lane", {"facecolor": ACTIVE}),
                   ("masked off", {"facecolor": MASKED, "hatch": "///",
                                   "edgecolor": MASKED_EDGE})], under=ax)
    return canvas.flush()


def _lanes_per_row(fmt: Format) -> int:
    """Byte-wide lanes take two rows per DataBlock, so that their values fit."""
    return min(fmt.per_block, 16)


def draw_lanes(canvas: Canvas, ax: Axes, values: np.ndarray, active: np.ndarray, fmt: Format,
               *, gid: str = "lane", fontsize: float = 8) -> None:
    """Lanes ``(lanes, k)`` as a grid on ``ax``: a DataBlock per row (two rows for byte-wide
    lanes), thick lines between DataBlocks (x: lane within the row)."""
    epb, per_row = fmt.per_block, _lanes_per_row(fmt)
    sub = epb // per_row
    rows = BLOCKS_PER_REGISTER * sub
    ax.set_xlim(0, per_row)
    ax.set_ylim(rows, 0)
    k = values.shape[1]
    for lane in range(values.shape[0]):
        b, j = divmod(lane, per_row)
        on = bool(active[lane])
        for part in range(k):
            x0 = j + part / k
            canvas.cell(ax, x0, b, 1 / k, 1, face=ACTIVE if on else MASKED,
                        hatch=None if on else "///", edge="#555555" if on else MASKED_EDGE,
                        lw=0.4 if part else 0.7)
            canvas.put_text(ax, x0 + 0.5 / k, b + 0.5, labels(values[lane, part], fmt), 1 / k,
                            1, fontsize=fontsize, color="black" if on else "#6b6b6b",
                            gid=f"{gid}:{lane}:{part}", required=True)
    for r in range(rows + 1):
        ax.axhline(r, color="black", lw=1.6 if r % sub == 0 else 0.7)
    ax.set_xticks([j + 0.5 for j in range(per_row)], [str(j) for j in range(per_row)],
                  fontsize=8)
    ax.xaxis.tick_top()
    ax.set_xlabel(("lane within the DataBlock" if sub == 1 else "lane within the row (two rows "
                   "per DataBlock)") + (", low nibble (element 2k) left" if fmt.packed else ""),
                  fontsize=9)
    ax.xaxis.set_label_position("top")
    ax.set_yticks([r + 0.5 for r in range(rows)],
                  [("" if r % sub else f"block {r // sub}  ")
                   + f"lanes {r * per_row}-{(r + 1) * per_row - 1}" for r in range(rows)],
                  fontsize=8)
    ax.tick_params(length=0)
