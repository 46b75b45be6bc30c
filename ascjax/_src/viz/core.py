"""Pictures of registers, masks and reduction trees (matplotlib, imported only when drawing).

Every function returns a ``matplotlib.figure.Figure`` built without pyplot, so drawing changes
no global state. Values are those the instructions return (``reduce_sum_datablock_levels``
for the tree), formatted here and nowhere recomputed; value texts carry a ``gid`` so a test can
read back what was drawn. Shared drawing helpers live here; ``viz_memory`` draws the UB-addressing
instructions (PairReduceSum, gather, squeeze).
"""

from __future__ import annotations

import functools
import io
import weakref
from fractions import Fraction
from typing import TYPE_CHECKING, Any

import numpy as np

from ..config import Config
from ..formats import BLOCKS_PER_REGISTER, CODEC_FORMATS, Format, resolve
from ..isa.codecs import decode, unpack_nibbles
from ..isa.lanes import check_register, resolve_dtypes
from ..isa.masks import _spread, element_mask
from ..isa.reduce_register import reduce_sum_datablock_levels

if TYPE_CHECKING:
    from matplotlib.figure import Figure

ACTIVE = "#dbe9f6"
MASKED = "#e3e3e3"
MASKED_EDGE = "#9a9a9a"
ROUNDED = "#d62728"
WRAPPED = "#ff7f0e"
_CHAR = 0.62  # width of a digit, in font sizes (DejaVu Sans)
_PENDING: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # axes -> queued cells


# --- figures and cells ----------------------------------------------------------------------

@functools.cache
def _figure_class() -> type:
    from matplotlib.figure import Figure

    class ShownFigure(Figure):
        """A Figure that shows itself in notebooks (``_repr_png_``), with no pyplot backend."""

        def _repr_png_(self) -> bytes:
            buf = io.BytesIO()
            self.savefig(buf, format="png", dpi=100)
            return buf.getvalue()

    return ShownFigure


def new_figure(width: float, height: float) -> Figure:
    """A Figure of ``width`` x ``height`` inches, built without pyplot."""
    return _figure_class()(figsize=(width, height))


def points_per_unit(ax) -> tuple[float, float]:
    """Typographic points per data unit along x and y of an axes placed with a fixed rect."""
    fig, box = ax.figure, ax.get_position()
    (x0, x1), (y0, y1) = ax.get_xlim(), ax.get_ylim()
    return (fig.get_figwidth() * box.width * 72 / abs(x1 - x0),
            fig.get_figheight() * box.height * 72 / abs(y1 - y0))


def fits(text: str, width_pt: float, height_pt: float, fontsize: float) -> bool:
    lines = text.split("\n")
    return (max(len(s) for s in lines) * _CHAR * fontsize <= 0.92 * width_pt
            and len(lines) * 1.25 * fontsize <= height_pt)


def put_text(ax, x: float, y: float, candidates: list[str], width: float, height: float, *,
             fontsize: float = 8, **kw: Any):
    """The first of ``candidates`` that fits a ``width`` x ``height`` (data units) cell, centred
    at (x, y); nothing when none fits. Returns the Text or None."""
    px, py = points_per_unit(ax)
    for text in candidates:
        if fits(text, width * px, height * py, fontsize):
            return ax.text(x, y, text, ha="center", va="center", fontsize=fontsize, **kw)
    return None


def cell(ax, x: float, y: float, w: float, h: float, *, face: Any = "white",
         edge: Any = "#555555", hatch: str | None = None, lw: float = 0.6,
         zorder: float = 1) -> None:
    """Queue a rectangle on ``ax``; ``flush(fig)`` adds the queued ones as a few
    PatchCollections (one per hatch style): single patches are slow to add by the thousand."""
    from matplotlib.patches import Rectangle

    key = (hatch, edge if hatch else None, zorder)
    _PENDING.setdefault(ax, {}).setdefault(key, []).append(
        (Rectangle((x, y), w, h), face, edge, lw))


def flush(fig):
    """Add every queued cell of ``fig``'s axes; returns ``fig``."""
    from matplotlib.collections import PatchCollection

    for ax in fig.axes:
        for (hatch, _, zorder), items in _PENDING.pop(ax, {}).items():
            rects, faces, edges, widths = zip(*items)
            ax.add_collection(PatchCollection(rects, facecolors=faces, edgecolors=edges,
                                              linewidths=widths, hatch=hatch, zorder=zorder),
                              autolim=False)
    return fig


def legend(target, entries: list[tuple[str, dict]], **kw: Any) -> None:
    """A legend of patches ``(label, Patch keyword arguments)`` under an axes, or at the
    bottom of a figure."""
    from matplotlib.figure import Figure
    from matplotlib.patches import Patch

    handles = [Patch(label=label, **{"edgecolor": "#555555", **props}) for label, props in entries]
    where = ({"loc": "lower center", "bbox_to_anchor": (0.5, 0.005)} if isinstance(target, Figure)
             else {"loc": "upper center", "bbox_to_anchor": (0.5, -0.02)})
    target.legend(handles=handles, **{**where, "ncol": len(handles), "frameon": False,
                                      "fontsize": 8, **kw})


def blend(color: Any, amount: float) -> tuple:
    """``color`` mixed with white (``amount`` = 0: the colour, 1: white)."""
    from matplotlib.colors import to_rgb

    return tuple(c + (1 - c) * amount for c in to_rgb(color))


# --- values and their labels ----------------------------------------------------------------

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


def _tidy(text: str) -> str:
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
    if fmt.storage_dtype.kind == "u":  # hifloat8, fp4 pairs: no NumPy type to round-trip
        return _tidy(f"{value:.4g}")
    positional = 1e-4 <= abs(value) < 1e7
    for digits in range(1, 18):
        text = (np.format_float_positional(value, precision=digits, fractional=False, trim="-")
                if positional else f"{value:.{digits}g}")
        if float(np.array(float(text)).astype(fmt.storage_dtype)) == value:
            return _tidy(text)
    return repr(value)


def labels(value: float, fmt: Format) -> list[str]:
    """Label candidates for one value, longest and most exact first."""
    if fmt.kind != "float":
        return [str(int(value)), _tidy(f"{value:.2g}")]
    if not np.isfinite(value):
        return [str(value)]
    out = [exact_text(value, fmt)] + [_tidy(f"{value:.{d}g}") for d in (4, 3, 2, 1)]
    return list(dict.fromkeys(out))


def single_register(values: Any, fmt: Format, where: str, arg: str) -> np.ndarray:
    x = check_register(values, fmt, where=where, arg=arg)
    if x.ndim != 1:
        raise ValueError(f"{where}: draws one register; {arg} has shape {x.shape} (pick one, "
                         f"e.g. {arg}[0])")
    return np.asarray(x)


def lane_mask(mask: Any, fmt: Format, where: str, arg: str = "mask") -> np.ndarray:
    if mask is None:
        return np.ones(fmt.lanes, bool)
    active = np.asarray(element_mask(mask, fmt, where=where, arg=arg))
    if active.ndim != 1:
        raise ValueError(f"{where}: draws one register; {arg} has shape {active.shape}")
    return active


# --- a register as a lane grid --------------------------------------------------------------

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
    fig = new_figure(11, height)
    ax = fig.add_axes((0.15, 0.7 / height, 0.83, 1 - 1.6 / height))
    draw_lanes(ax, element_values(x, fmt), active, fmt)
    n_on = int(active.sum())
    unit = "byte-pair lanes (2 elements each)" if fmt.packed else "lanes"
    ax.set_title(title or f"vector_{fmt.name}: {fmt.lanes} {unit} of {fmt.width} B, 8 DataBlocks "
                 f"of {fmt.per_block}; {n_on} active", fontsize=11)
    legend(ax, [("active lane", {"facecolor": ACTIVE}),
                ("masked off", {"facecolor": MASKED, "hatch": "///", "edgecolor": MASKED_EDGE})])
    return flush(fig)


def _lanes_per_row(fmt: Format) -> int:
    """Byte-wide lanes take two rows per DataBlock, so that their values fit."""
    return min(fmt.per_block, 16)


def draw_lanes(ax, values: np.ndarray, active: np.ndarray, fmt: Format, *, gid: str = "lane",
               fontsize: float = 8) -> None:
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
            cell(ax, x0, b, 1 / k, 1, face=ACTIVE if on else MASKED,
                 hatch=None if on else "///", edge="#555555" if on else MASKED_EDGE,
                 lw=0.4 if part else 0.7)
            put_text(ax, x0 + 0.5 / k, b + 0.5, labels(values[lane, part], fmt), 1 / k, 1,
                     fontsize=fontsize, color="black" if on else "#6b6b6b",
                     gid=f"{gid}:{lane}:{part}")
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


# --- a mask's 256 bits ----------------------------------------------------------------------

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
    width = int(dtype[1:]) // 8 if dtype in ("b8", "b16", "b32") else resolve(dtype).width
    fmt = resolve({1: "uint8_t", 2: "uint16_t", 4: "uint32_t"}[width])
    bits = np.asarray(mask)
    if bits.ndim != 1:
        raise ValueError(f"{where}: draws one mask; got shape {bits.shape}")
    if bits.dtype == np.bool_ and bits.shape[0] == fmt.lanes and fmt.lanes != 256:
        bits = np.asarray(_spread(bits, width))
    active = lane_mask(bits, fmt, where)
    bits = np.asarray(bits, bool)
    fig = new_figure(11, 4.6)
    ax = fig.add_axes((0.1, 0.16, 0.88, 0.68))
    ax.set_xlim(0, 32)
    ax.set_ylim(8, 0)
    for byte in range(256):
        row, col = divmod(byte, 32)
        cell(ax, col, row, 1, 1, face="#3b6ea5" if bits[byte] else "white", lw=0.3,
             edge="#999999")
    for i in range(fmt.lanes):
        row, col = divmod(i * width, 32)
        cell(ax, col, row, width, 1, face="none", edge="black", lw=1.4)
        color = "white" if bits[i * width] else "#444444"
        put_text(ax, col + 0.5, row + 0.5, [str(i)], 1, 1, fontsize=7, color=color,
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
    legend(ax, [("bit set", {"facecolor": "#3b6ea5"}), ("bit clear", {"facecolor": "white"}),
                (f"one b{8 * width} element (its number on its governing bit)",
                 {"facecolor": "none", "edgecolor": "black", "lw": 1.4})])
    return flush(fig)


# --- reduce_sum_datablock's adjacent-pair tree ----------------------------------------------

def _exact(a: Any, b: Any, fmt: Format):
    """The exact sum of two values, or None when either is inf/NaN."""
    if fmt.kind != "float":
        return int(a) + int(b)
    if not (np.isfinite(a) and np.isfinite(b)):
        return None
    return Fraction(float(a)) + Fraction(float(b))


def _exact_label(delta: Any) -> str:
    return _tidy(f"{float(delta):+.3g}")


def reduce_sum_datablock(src: Any, mask: Any, *, block: int = 0, dtype: Any = None,
                         config: Config | None = None) -> Figure:
    """The adjacent-pair tree ``asc_reduce_sum_datablock`` builds for DataBlock ``block``: every
    level's values as the instruction rounded them (``reduce_sum_datablock_levels``), inputs
    at the bottom, ``dst[block]`` at the top. An add whose rounding changed the exact sum of
    its two operands is outlined red with the change (rounded - exact); an integer add that wrapped,
    orange. Masked-off lanes enter as +0, grey. Values are the shortest decimals that read back
    as the same bits. ``src`` is one register ``(lanes,)``; ``mask`` as for the instruction.

    >>> import numpy as np, ascjax
    >>> from ascjax import viz
    >>> x = np.ones(128, np.float16); x[::16] = 2048
    >>> fig = viz.reduce_sum_datablock(x, ascjax.create_mask("PAT_ALL", "half"))
    """
    where = "viz.reduce_sum_datablock"
    fmt = resolve_dtypes(src, dtype, where=where, arg="src")
    single_register(src, fmt, where, "src")
    if not (isinstance(block, (int, np.integer)) and 0 <= block < BLOCKS_PER_REGISTER):
        raise ValueError(f"{where}: block={block!r} must be an int in [0, 8)")
    levels = reduce_sum_datablock_levels(src, mask, dtype=dtype, config=config)
    dst_fmt = resolve(np.asarray(levels[0]).dtype)
    active = lane_mask(mask, fmt, where)[block * fmt.per_block:(block + 1) * fmt.per_block]
    values = [element_values(np.asarray(level)[block], dst_fmt)[:, 0] for level in levels]
    texts = [[exact_text(v, dst_fmt) for v in level] for level in values]
    longest = max(len(t) for level in texts for t in level)
    n = len(values[0])
    unit_pt = max(longest, 7) * _CHAR * 8 / 0.8 + 4
    fig = new_figure(max(8.0, 2.4 + n * unit_pt / 72), 2.0 + 0.95 * len(values))
    ax = fig.add_axes((1.9 / fig.get_figwidth(), 1.1 / fig.get_figheight(),
                       1 - 2.1 / fig.get_figwidth(), 1 - 2.0 / fig.get_figheight()))
    ax.set_xlim(-0.5, n - 0.5)
    ax.set_ylim(-0.6, len(values) - 0.4)
    _draw_tree_levels(ax, values, texts, active, dst_fmt)
    start = block * fmt.per_block
    ax.set_xticks(range(n), [str(start + i) for i in range(n)], fontsize=7)
    ax.set_xlabel(f"src lane (DataBlock {block})", fontsize=9)
    ax.set_yticks(range(len(values)), ["inputs (masked: +0)"]
                  + [f"level {lv}" for lv in range(1, len(values) - 1)] + [f"dst[{block}]"],
                  fontsize=9)
    ax.tick_params(length=0)
    for side in ("top", "right", "left"):
        ax.spines[side].set_visible(False)
    ax.set_title(_tree_title(values, active, fmt, dst_fmt, block), fontsize=10)
    wrap = ("integer add wrapped (wrapped - exact)", {"facecolor": "white", "edgecolor": WRAPPED,
                                                       "lw": 2})
    rounding = ("rounding changed the exact sum (rounded - exact)",
                {"facecolor": "white", "edgecolor": ROUNDED, "lw": 2})
    legend(fig, [("input", {"facecolor": ACTIVE}),
                 ("masked lane (+0)", {"facecolor": MASKED, "hatch": "///"}),
                 rounding if dst_fmt.is_float else wrap])
    return flush(fig)


def _draw_tree_levels(ax, values, texts, active, fmt: Format) -> None:
    for lv, level in enumerate(values):
        span = 2 ** lv
        for k, value in enumerate(level):
            x = (k + 0.5) * span - 0.5
            face, edge, lw, hatch = ACTIVE, "#555555", 0.7, None
            if lv == 0 and not active[k]:
                face, edge, hatch = MASKED, MASKED_EDGE, "///"
            note = None
            if lv:
                exact = _exact(values[lv - 1][2 * k], values[lv - 1][2 * k + 1], fmt)
                rounded = value if fmt.kind != "float" else Fraction(float(value)) \
                    if np.isfinite(value) else None
                if exact is not None and rounded != exact:
                    edge, lw = (ROUNDED if fmt.is_float else WRAPPED), 2.2
                    note = "overflow" if rounded is None else _exact_label(rounded - exact)
                for child in (2 * k, 2 * k + 1):
                    cx = (child + 0.5) * span / 2 - 0.5
                    ax.plot([cx, x], [lv - 1 + 0.22, lv - 0.22], color="#777777", lw=0.8,
                            zorder=0)
            half_w = 0.42 * min(span, 2)
            cell(ax, x - half_w, lv - 0.22, 2 * half_w, 0.44, face=face, edge=edge, lw=lw,
                 hatch=hatch, zorder=2)
            ax.text(x, lv + (0.08 if note else 0), texts[lv][k], ha="center", va="center",
                    fontsize=8, zorder=3, gid=f"level:{lv}:{k}",
                    color="black" if face == ACTIVE else "#555555")
            if note:
                ax.text(x, lv - 0.11, note, ha="center", va="center", fontsize=7, color=edge,
                        zorder=3)


def _tree_title(values, active, src_fmt: Format, fmt: Format, block: int) -> str:
    result = values[-1][0]
    head = (f"asc_reduce_sum_datablock, {src_fmt.name} -> {fmt.name}, DataBlock {block}: "
            f"{int(active.sum())} of {len(active)} lanes active")
    if fmt.kind != "float":
        exact = sum(int(v) for v in values[0])
        return f"{head}\nsum {int(result)}; exact {exact}" + (
            f" (wrapped by {int(result) - exact:+d})" if exact != int(result) else "")
    if not np.all(np.isfinite(values[0])):
        return f"{head}\nsum {exact_text(result, fmt)}"
    exact = sum((Fraction(float(v)) for v in values[0]), Fraction(0))
    if np.isfinite(result) and Fraction(float(result)) == exact:
        return f"{head}\nsum {exact_text(result, fmt)} = the exact sum"
    error = "" if not np.isfinite(result) else \
        f", error {_exact_label(Fraction(float(result)) - exact)}"
    return (f"{head}\nsum {exact_text(result, fmt)}; exact sum of the inputs "
            f"{_tidy(f'{float(exact):.10g}')}{error}")


# --- a summation tree given as nested tuples ------------------------------------------------

def summation_tree(tree: Any, *, title: str | None = None) -> Figure:
    """A summation tree as nested tuples of input indices (what ``reveal_order`` returns):
    leaves at the bottom in tree order, each add one level above its highest child.

    >>> import ascjax
    >>> from ascjax import viz
    >>> fig = viz.summation_tree((((0, 1), 2), (3, 4)), title="five inputs")
    """
    from ..study.reveal import draw_tree, leaves

    fig = new_figure(min(max(6.0, 2 + 0.35 * len(leaves(tree))), 14), 4)
    ax = fig.add_subplot()
    draw_tree(tree, title=title, ax=ax)
    return fig
