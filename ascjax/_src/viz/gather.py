"""asc_gather: where each lane takes its element from, drawn as arrows."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

import numpy as np

from ..config import Config
from ..formats import Format, resolve
from ..isa.gather import asc_gather as _gather
from ..isa.lanes import resolve_dtypes
from .canvas import ACTIVE, MASKED, MASKED_EDGE, Canvas, palette
from .values import element_values, labels, lane_mask, one_tensor

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure


@dataclasses.dataclass(frozen=True)
class _Run:
    """One gather call: its operands and output, and the layout of dst it used (``even``:
    narrow data under a wide index, value i in dst element 2i)."""

    src: np.ndarray
    src_fmt: Format
    index: np.ndarray
    active: np.ndarray
    out: np.ndarray
    dst_fmt: Format
    even: bool


def asc_gather(src: Any, index: Any, mask: Any, *, dst_dtype: Any = None, dtype: Any = None,
           lanes: tuple[int, int] = (0, 16), config: Config | None = None) -> Figure:
    """Where ``asc_gather`` takes each lane from. Top: every index lane's source element
    (inactive lanes grey crosses, never read). Bottom: index lanes ``lanes = (first, stop)``
    as arrows from the source elements they read to the dst elements they fill, values as the
    instruction returned them; widening (b8 -> b16, zero extension) and the even-position
    layout (narrow data, wide index: value i in dst element 2i, odd elements 0) are shown.
    Arguments as for ``ascjax.asc_gather``; ``index`` is one register.

    >>> import numpy as np, ascjax
    >>> from ascjax import viz
    >>> fig = viz.asc_gather(np.arange(100, dtype=np.float32),
    ...                  np.arange(64, dtype=np.uint32)[::-1],
    ...                  ascjax.create_mask("PAT_VL8", "float"))
    """
    where = "viz.asc_gather"
    out = np.asarray(_gather(src, index, mask, dst_dtype=dst_dtype, dtype=dtype, config=config))
    src_fmt = resolve_dtypes(src, dtype, where=where, arg="src")
    idx = one_tensor(index, where, "index")
    idx_fmt = resolve(idx.dtype)
    dst_fmt = src_fmt if dst_dtype is None else resolve(dst_dtype)
    active = lane_mask(mask, idx_fmt, where)
    lo, hi = lanes
    if not 0 <= lo < hi <= idx_fmt.lanes:
        raise ValueError(f"{where}: lanes={lanes} must satisfy 0 <= first < stop <= "
                         f"{idx_fmt.lanes}")
    widen = dst_fmt.width > src_fmt.width
    even = not widen and src_fmt.width < idx_fmt.width  # the instruction's order of checks
    layout = ("b8 -> b16: the source byte is zero-extended" if widen else
              "value i goes to dst element 2i; odd elements are 0" if even else
              "dst[i] = src[index[i]]")
    run = _Run(np.asarray(src), src_fmt, idx, active, out, dst_fmt, even)
    window = range(lo, hi)
    # wide enough for every value (as the compaction pictures): ~0.55 inch a cell
    cells = max(_src_positions(run, window)[1], len(window) * (2 if even else 1))
    canvas = Canvas(max(13.0, 0.55 * cells / 0.9 + 1.5), 7.2)
    top = canvas.axes((0.07, 0.63, 0.68, 0.27))
    _overview(top, idx, active, lo, hi)
    canvas.figure.suptitle(f"asc_gather: dst={dst_fmt.name}, src={src_fmt.name}, "
                           f"index={idx_fmt.name} ({idx_fmt.lanes} lanes, {int(active.sum())} "
                           f"active); {layout}", fontsize=11)
    bottom = canvas.axes((0.07, 0.08, 0.9, 0.42))
    _detail(canvas, bottom, run, window)
    odd = [("odd element of the even-position layout: 0", {"facecolor": "white",
                                                              "hatch": ".."})]
    canvas.legend([("active lane: src element and the dst element it fills",
                    {"facecolor": ACTIVE}),
                   ("inactive lane: 0, never read", {"facecolor": MASKED, "hatch": "///"}),
                   *(odd if even else [])])
    return canvas.flush()


def _overview(ax: Axes, idx: np.ndarray, active: np.ndarray, lo: int, hi: int) -> None:
    lane = np.arange(idx.shape[0])
    ax.axvspan(lo - 0.5, hi - 0.5, color="#fff2cc", zorder=0, label="lanes drawn below")
    ax.scatter(lane[active], idx[active].astype(np.int64), s=14, color="C0", zorder=2,
               label="active lane reads src[index]")
    # The axis is the active lanes': an inactive lane's index is never read, and a wild one
    # (0xFFFFFFF0) would flatten every active lane onto 0. Those above are drawn at the top.
    top = max(int(idx[active].max(initial=0)), 1) * 1.08 + 1
    ignored = idx[~active].astype(np.int64)
    ax.scatter(lane[~active], np.minimum(ignored, top), s=14, marker="x", color="#999999",
               zorder=2, label="inactive lane (dst 0, index ignored)")
    if (ignored > top).any():
        ax.scatter(lane[~active][ignored > top], np.full((ignored > top).sum(), top), s=18,
                   marker="^", color="#999999", zorder=2,
                   label="inactive lane, index above the axis")
    ax.set_ylim(-0.05 * top - 0.5, top * 1.04)
    ax.set_xlim(-0.5, idx.shape[0] - 0.5)
    ax.set_xlabel("index lane i", fontsize=9)
    ax.set_ylabel("index[i] (src element)", fontsize=9)
    ax.tick_params(labelsize=8)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)


def _src_positions(run: _Run, window: range) -> tuple[dict, float]:
    """Source cells: the elements the lanes in ``window`` read, in order, with a gap wherever
    they are not contiguous; each element's x, and the width they take."""
    used = sorted({int(run.index[i]) for i in window if run.active[i]})
    src_x, x = {}, 0.0
    for j, e in enumerate(used):
        if j and e != used[j - 1] + 1:
            x += 0.6
        src_x[e] = x
        x += 1
    return src_x, x


def _detail(canvas: Canvas, ax: Axes, run: _Run, window: range) -> None:
    """The index lanes in ``window``: arrows from the src elements read to the dst filled."""
    idx, active, lo = run.index, run.active, window.start
    src_x, x = _src_positions(run, window)
    used = list(src_x)
    per_lane = 2 if run.even else 1
    n_dst = len(window) * per_lane
    width = max(x, n_dst)
    ax.set_xlim(-0.3, width + 0.3)
    ax.set_ylim(4.8, -0.3)
    ax.set_axis_off()
    shift = (width - x) / 2
    src_vals = element_values(run.src[used], run.src_fmt)[:, 0] if used else []
    for e, v in zip(used, src_vals, strict=True):
        sx = src_x[e] + shift
        canvas.cell(ax, sx, 0.5, 1, 1, face=ACTIVE)
        canvas.put_text(ax, sx + 0.5, 1.0, labels(v, run.src_fmt), 1, 1, fontsize=7, required=True)
        canvas.put_text(ax, sx + 0.5, 0.2, [f"src[{e}]", str(e)], 1, 0.5, fontsize=6.5)
    ax.text(-0.25, 1.0, "src", ha="right", va="center", fontsize=9)
    ax.text(-0.25, 3.5, "dst", ha="right", va="center", fontsize=9)
    ax.text(-0.25, 4.55, "index lane", ha="right", va="center", fontsize=7)
    dshift = (width - n_dst) / 2
    dst_vals = element_values(run.out, run.dst_fmt)[:, 0]
    for i in window:
        for part in range(per_lane):
            d = i * per_lane + part
            dx = (i - lo) * per_lane + part + dshift
            on = bool(active[i]) and part == 0
            face, hatch = (ACTIVE, None) if on else ((MASKED, "///") if part == 0 else
                                                     ("white", ".."))
            canvas.cell(ax, dx, 3.0, 1, 1, face=face, hatch=hatch,
                        edge="#555555" if on else MASKED_EDGE)
            canvas.put_text(ax, dx + 0.5, 3.5, labels(dst_vals[d], run.dst_fmt), 1, 1,
                            fontsize=7, gid=f"dst:{d}", required=True)
            canvas.put_text(ax, dx + 0.5, 4.2, [f"dst[{d}]", str(d)], 1, 0.4, fontsize=6.5)
            if part == 0:
                canvas.put_text(ax, dx + 0.5, 4.55, [f"lane {i}", str(i)], 1, 0.4, fontsize=6.5,
                                color="C0" if on else "#888888")
            if on:
                ax.annotate("", xy=(dx + 0.5, 2.95),
                            xytext=(src_x[int(idx[i])] + shift + 0.5, 1.55),
                            arrowprops={"arrowstyle": "->", "color": palette(i - lo), "lw": 1.1,
                                        "shrinkA": 0, "shrinkB": 0})
    ax.set_title(f"index lanes {lo}-{window.stop - 1}: arrows from the element read to the dst "
                 f"element filled", fontsize=9, loc="left")
