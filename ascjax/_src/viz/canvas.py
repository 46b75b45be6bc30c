"""``Canvas``: a figure and the cells queued on its axes, the one drawing surface of ``viz``.

matplotlib is imported only when a picture is drawn, and never pyplot: drawing changes no
global state, and a figure shows itself in notebooks through ``_repr_png_``.
"""

from __future__ import annotations

import functools
import io
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

ACTIVE = "#dbe9f6"
MASKED = "#e3e3e3"
MASKED_EDGE = "#9a9a9a"
ROUNDED = "#d62728"
WRAPPED = "#ff7f0e"
DIGIT_WIDTH = 0.62  # width of a digit, in font sizes (DejaVu Sans)


@functools.cache
def _figure_class() -> type:
    from matplotlib.figure import Figure

    class ShownFigure(Figure):
        """A Figure that shows itself in notebooks (``_repr_png_``), with no pyplot backend."""

        def _repr_png_(self) -> bytes:
            buf = io.BytesIO()
            self.savefig(buf, format="png", dpi=100)
            return buf.getvalue()

        def show(self, warn: bool = True) -> None:
            """Show the figure in a notebook from anywhere in a cell (a loop, before other
            statements), where a cell's last value alone is shown. ``plt.show()`` does not
            know these figures: they are not pyplot's. Outside IPython, save it instead."""
            try:
                from IPython import get_ipython
                from IPython.display import display
            except ImportError:
                get_ipython = None
            if get_ipython is None or get_ipython() is None:
                raise RuntimeError("ascjax.viz figures are not pyplot's and show only in a "
                                   "notebook (IPython); in a script save one: "
                                   "fig.savefig(\"picture.png\")")
            display(self)

    return ShownFigure


def _points_per_unit(ax: Axes) -> tuple[float, float]:
    """Typographic points per data unit along x and y of an axes placed with a fixed rect."""
    fig, box = ax.figure, ax.get_position()
    (x0, x1), (y0, y1) = ax.get_xlim(), ax.get_ylim()
    return (fig.get_figwidth() * box.width * 72 / abs(x1 - x0),
            fig.get_figheight() * box.height * 72 / abs(y1 - y0))


def _fits(text: str, width_pt: float, height_pt: float, fontsize: float) -> bool:
    lines = text.split("\n")
    return (max(len(s) for s in lines) * DIGIT_WIDTH * fontsize <= 0.92 * width_pt
            and len(lines) * 1.25 * fontsize <= height_pt)


def blend(color: Any, amount: float) -> tuple:
    """``color`` mixed with white (``amount`` = 0: the colour, 1: white)."""
    from matplotlib.colors import to_rgb

    return tuple(c + (1 - c) * amount for c in to_rgb(color))


def palette(i: int) -> tuple:
    """The colour of the i-th repeat, call or lane in a picture (tab10, cycling)."""
    from matplotlib import colormaps

    return colormaps["tab10"](i % 10)


MIN_FONTSIZE = 4.5  # points: smaller is no longer read


class Canvas:
    """A ``width`` x ``height`` inch figure. Cells are queued per axes and added by ``flush``
    as a few PatchCollections (one per hatch style): single patches are slow to add by the
    thousand."""

    def __init__(self, width: float, height: float) -> None:
        self.figure: Figure = _figure_class()(figsize=(width, height))
        self._cells: dict[Any, dict[tuple, list]] = {}

    def axes(self, rect: tuple[float, float, float, float]) -> Axes:
        """New axes at ``rect`` (left, bottom, width, height; figure fractions)."""
        return self.figure.add_axes(rect)

    def cell(self, ax: Axes, x: float, y: float, w: float, h: float, *, face: Any = "white",
             edge: Any = "#555555", hatch: str | None = None, lw: float = 0.6,
             zorder: float = 1) -> None:
        """Queue a ``w`` x ``h`` rectangle at (x, y) on ``ax``."""
        from matplotlib.patches import Rectangle

        key = (hatch, edge if hatch else None, zorder)
        self._cells.setdefault(ax, {}).setdefault(key, []).append(
            (Rectangle((x, y), w, h), face, edge, lw))

    def put_text(self, ax: Axes, x: float, y: float, candidates: list[str], width: float,
                 height: float, *, fontsize: float = 8, required: bool = False,
                 **kw: Any) -> Any:
        """The first of ``candidates`` that fits a ``width`` x ``height`` (data units) cell,
        centred at (x, y). Where none fits: nothing (a caption, a lane number), or for a
        ``required`` text (a value) the first in a smaller font (down to ``MIN_FONTSIZE``),
        else an ellipsis, so a value's cell is never blank as if it held nothing. Returns the
        Text or None."""
        if not candidates:
            return None
        px, py = _points_per_unit(ax)
        sizes = [fontsize]
        while required and sizes[-1] > MIN_FONTSIZE:
            sizes.append(max(MIN_FONTSIZE, sizes[-1] * 0.85))
        # a required text: the first (exact) a little smaller before a rounding of it, and
        # much smaller after
        tries = ([(candidates[0], size) for size in sizes[:3]]
                 + [(text, fontsize) for text in candidates[1:]]
                 + [(candidates[0], size) for size in sizes[3:]]) if required else \
            [(text, fontsize) for text in candidates]
        for text, size in tries:
            if _fits(text, width * px, height * py, size):
                return ax.text(x, y, text, ha="center", va="center", fontsize=size, **kw)
        if not required:
            return None
        return ax.text(x, y, "\u2026", ha="center", va="center", fontsize=fontsize, **kw)

    def legend(self, entries: list[tuple[str, dict]], *, under: Axes | None = None,
               **kw: Any) -> None:
        """A legend of patches ``(label, Patch keyword arguments)`` under the axes ``under``,
        or at the bottom of the figure."""
        from matplotlib.patches import Patch

        handles = [Patch(label=label, **{"edgecolor": "#555555", **props})
                   for label, props in entries]
        target, where = ((self.figure, {"loc": "lower center", "bbox_to_anchor": (0.5, 0.005)})
                         if under is None else
                         (under, {"loc": "upper center", "bbox_to_anchor": (0.5, -0.02)}))
        target.legend(handles=handles, **{**where, "ncol": len(handles), "frameon": False,
                                          "fontsize": 8, **kw})

    def flush(self) -> Figure:
        """Add every queued cell; returns the figure."""
        from matplotlib.collections import PatchCollection

        for ax in self.figure.axes:
            for (hatch, _, zorder), items in self._cells.pop(ax, {}).items():
                rects, faces, edges, widths = zip(*items, strict=True)
                ax.add_collection(PatchCollection(rects, facecolors=faces, edgecolors=edges,
                                                  linewidths=widths, hatch=hatch,
                                                  zorder=zorder), autolim=False)
        return self.figure
