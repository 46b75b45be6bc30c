"""asc_squeeze and asc_unsqueeze on one register: src lanes, the mask and dst lanes, with arrows
from where each dst lane's value comes from."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from ..config import Config
from ..isa.lanes import resolve_dtypes
from ..isa.squeeze import _register_form
from ..isa.squeeze import squeeze as _squeeze
from ..isa.squeeze import unsqueeze as _unsqueeze
from .canvas import ACTIVE, MASKED, MASKED_EDGE, Canvas, palette
from .values import element_values, labels, lane_mask, single_register

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

_SRC, _MASK, _DST = 0.4, 1.75, 3.4      # rows (top edges, data units; y grows downwards)


def _window(lanes: tuple[int, int], total: int, where: str) -> range:
    lo, hi = lanes
    if not 0 <= lo < hi <= total:
        raise ValueError(f"{where}: lanes={lanes} must satisfy 0 <= first < stop <= {total}")
    return range(lo, hi)


def _frame(ax: Axes, window: range, rows: list[tuple[float, str]]) -> None:
    ax.set_xlim(-0.3, len(window) + 0.3)
    ax.set_ylim(4.9, -0.1)
    ax.set_axis_off()
    for y, name in rows:
        ax.text(-0.25, y, name, ha="right", va="center", fontsize=9)


def _mask_cell(canvas: Canvas, ax: Axes, x: float, lane: int, on: bool) -> None:
    canvas.cell(ax, x + 0.15, _MASK, 0.7, 0.45, face="#2b6cb0" if on else "white",
                edge="#555555" if on else MASKED_EDGE)
    ax.text(x + 0.5, _MASK + 0.225, "1" if on else "0", ha="center", va="center", fontsize=7,
            color="white" if on else "#777777", gid=f"mask:{lane}")


def squeeze_register(src: Any, mask: Any, *, dtype: Any = None, lanes: tuple[int, int] = (0, 16),
                     config: Config | None = None) -> Figure:
    """What ``asc_squeeze(dst, src, mask)`` does to one register: the src lanes ``lanes =
    (first, stop)``, the mask bit of each, and the dst lanes, with an arrow from every selected
    src lane to the dst lane it lands in (the n-th selected lane goes to dst lane n; dst lanes
    past the selected count are 0). Arguments and types as for ``ascjax.squeeze``'s register
    form (``asc_squeeze``; the squeeze store's ``ascjax.squeeze_register`` is the same
    compaction over more types, fp4 pairs among them, which this picture does not draw).

    >>> import numpy as np, ascjax
    >>> from ascjax import viz
    >>> fig = viz.squeeze_register(np.arange(64, dtype=np.float32),
    ...                            ascjax.create_mask("PAT_M3", "float"))
    """
    where = "viz.squeeze_register"
    fmt, _, _ = _register_form(where, src, mask, dtype, config)  # errors name the picture
    out = np.asarray(_squeeze(src, mask, dtype=dtype, config=config))
    x = single_register(src, fmt, where, "src")
    active = lane_mask(mask, fmt, where)
    window = _window(lanes, fmt.lanes, where)
    rank = np.cumsum(active) - 1                 # dst lane of each selected src lane
    count = int(active.sum())
    canvas = Canvas(max(8.0, 0.55 * len(window) + 2), 4.6)
    ax = canvas.axes((0.07, 0.14, 0.9, 0.72))
    _frame(ax, window, [(_SRC + 0.5, "src"), (_MASK + 0.22, "mask"), (_DST + 0.5, "dst")])
    src_vals = element_values(x, fmt)[:, 0]
    dst_vals = element_values(out, fmt)[:, 0]
    lo = window.start
    for i in window:
        c = i - lo
        on = bool(active[i])
        colour = palette(int(rank[i])) if on else None
        canvas.cell(ax, c, _SRC, 1, 1, face=ACTIVE if on else MASKED,
                    hatch=None if on else "///", edge="#555555" if on else MASKED_EDGE)
        canvas.put_text(ax, c + 0.5, _SRC + 0.5, labels(src_vals[i], fmt), 1, 1, fontsize=7,
                        gid=f"src:{i}", required=True)
        canvas.put_text(ax, c + 0.5, _SRC - 0.2, [f"lane {i}", str(i)], 1, 0.4, fontsize=6.5)
        _mask_cell(canvas, ax, c, i, on)
        filled = i < count
        canvas.cell(ax, c, _DST, 1, 1, face=ACTIVE if filled else "white",
                    edge="#555555" if filled else MASKED_EDGE)
        canvas.put_text(ax, c + 0.5, _DST + 0.5, labels(dst_vals[i], fmt), 1, 1, fontsize=7,
                        gid=f"dst:{i}", required=True)
        canvas.put_text(ax, c + 0.5, _DST + 1.2, [f"dst[{i}]", str(i)], 1, 0.4, fontsize=6.5)
        if on and lo <= rank[i] < window.stop:
            ax.annotate("", xy=(rank[i] - lo + 0.5, _DST - 0.05), xytext=(c + 0.5, _MASK + 0.5),
                        arrowprops={"arrowstyle": "->", "color": colour, "lw": 1.2,
                                    "shrinkA": 0, "shrinkB": 0})
    canvas.figure.suptitle(f"asc_squeeze: {fmt.name}, {fmt.lanes} lanes, {count} selected -> "
                           f"dst lanes 0-{count - 1}, the rest 0" if count else
                           f"asc_squeeze: {fmt.name}, no lane selected: dst is 0", fontsize=11)
    ax.set_title(f"lanes {lo}-{window.stop - 1}: each selected src lane to the dst lane it "
                 f"fills", fontsize=9, loc="left")
    canvas.legend([("selected src lane / filled dst lane", {"facecolor": ACTIVE}),
                   ("lane not selected", {"facecolor": MASKED, "hatch": "///"}),
                   ("dst lane past the selected count: 0", {"facecolor": "white"})])
    return canvas.flush()


def unsqueeze_register(dst: Any, mask: Any, *, dtype: Any = None,
                       lanes: tuple[int, int] = (0, 16), config: Config | None = None) -> Figure:
    """What ``asc_unsqueeze(dst, mask)`` writes: the mask bits of ``lanes = (first, stop)`` and
    the dst lanes, ``dst[i] = dst[i-1] + mask[i-1]`` (dst[0] = 0), with a coloured "+1" arrow
    from each set mask bit to the next lane and a grey one where the count stays. Arguments as
    for ``ascjax.unsqueeze`` (``dst`` gives the type).

    >>> import numpy as np, ascjax
    >>> from ascjax import viz
    >>> fig = viz.unsqueeze_register(np.zeros(64, np.uint32),
    ...                              ascjax.create_mask("PAT_M3", "float"))
    """
    where = "viz.unsqueeze_register"
    out = np.asarray(_unsqueeze(dst, mask, dtype=dtype, config=config))
    fmt = resolve_dtypes(dst, dtype, where=where, arg="dst")
    single_register(dst, fmt, where, "dst")
    active = lane_mask(mask, fmt, where)
    window = _window(lanes, fmt.lanes, where)
    canvas = Canvas(max(8.0, 0.55 * len(window) + 2), 4.2)
    ax = canvas.axes((0.07, 0.14, 0.9, 0.72))
    _frame(ax, window, [(_MASK + 0.22, "mask"), (_DST + 0.5, "dst")])
    values = element_values(out, fmt)[:, 0]
    lo = window.start
    for i in window:
        c = i - lo
        on = bool(active[i])
        _mask_cell(canvas, ax, c, i, on)
        canvas.put_text(ax, c + 0.5, _MASK - 0.25, [f"lane {i}", str(i)], 1, 0.4, fontsize=6.5)
        canvas.cell(ax, c, _DST, 1, 1, face=ACTIVE)
        canvas.put_text(ax, c + 0.5, _DST + 0.5, labels(values[i], fmt), 1, 1, fontsize=7,
                        gid=f"dst:{i}", required=True)
        if i + 1 < window.stop:                  # mask[i] feeds dst[i + 1]
            ax.annotate("", xy=(c + 1.5, _DST - 0.05), xytext=(c + 0.5, _MASK + 0.5),
                        arrowprops={"arrowstyle": "->", "lw": 1.2 if on else 0.6,
                                    "color": palette(i) if on else "#bbbbbb",
                                    "shrinkA": 0, "shrinkB": 0})
            if on:
                ax.text(c + 1.05, (_MASK + _DST) / 2 + 0.25, "+1", fontsize=6.5,
                        color=palette(i))
    canvas.figure.suptitle(f"asc_unsqueeze: {fmt.name}, dst[0] = 0, dst[i] = dst[i-1] + "
                           f"mask[i-1]; {int(active[:-1].sum())} counted, the top lane's bit "
                           f"is ignored", fontsize=11)
    ax.set_title(f"lanes {lo}-{window.stop - 1}", fontsize=9, loc="left")
    canvas.legend([("mask bit 1: the next lane counts one more", {"facecolor": "#2b6cb0"}),
                   ("mask bit 0", {"facecolor": "white", "edgecolor": MASKED_EDGE})])
    return canvas.flush()
