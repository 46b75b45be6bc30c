"""Summation trees: the adjacent-pair tree of ``asc_reduce_sum_datablock`` with the values it
rounded, and any summation tree given as nested tuples (what ``reveal_order`` returns)."""

from __future__ import annotations

from fractions import Fraction
from typing import TYPE_CHECKING, Any

import numpy as np

from ..config import Config
from ..formats import BLOCKS_PER_REGISTER, Format, resolve
from ..isa.lanes import resolve_dtypes
from ..isa.reduce_register import _checked, reduce_sum_datablock_levels
from ..study.reveal import leaves
from .canvas import ACTIVE, DIGIT_WIDTH, MASKED, MASKED_EDGE, ROUNDED, WRAPPED, Canvas
from .values import element_values, exact_text, lane_mask, single_register, tidy

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure


# --- reduce_sum_datablock's adjacent-pair tree ----------------------------------------------

def _exact(a: Any, b: Any, fmt: Format):
    """The exact sum of two values, or None when either is inf/NaN."""
    if fmt.kind != "float":
        return int(a) + int(b)
    if not (np.isfinite(a) and np.isfinite(b)):
        return None
    return Fraction(float(a)) + Fraction(float(b))


def _exact_label(delta: Any) -> str:
    return tidy(f"{float(delta):+.3g}")


def reduce_sum_datablock(src: Any, mask: Any, *, block: int = 0, dtype: Any = None,
                         config: Config | None = None) -> Figure:
    """The adjacent-pair tree ``asc_reduce_sum_datablock`` builds for DataBlock ``block``: every
    level's values as the instruction rounded them (``reduce_sum_datablock_levels``), inputs at
    the bottom, ``dst[block]`` at the top. An add whose rounding changed the exact sum of its two
    operands is outlined red with the change (rounded - exact); an integer add that wrapped,
    orange. Masked-off lanes enter as +0, grey. Values are the shortest decimals that read back
    as the same bits. ``src`` is one register ``(lanes,)``; ``mask`` as for the instruction.

    >>> import numpy as np, ascjax
    >>> from ascjax import viz
    >>> x = np.ones(128, np.float16); x[::16] = 2048
    >>> fig = viz.reduce_sum_datablock(x, ascjax.create_mask("PAT_ALL", "half"))
    """
    where = "viz.reduce_sum_datablock"
    _checked(where, src, mask, dtype, config)  # the instruction's checks, named for the picture
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
    unit_pt = max(longest, 7) * DIGIT_WIDTH * 8 / 0.8 + 4
    canvas = Canvas(max(8.0, 2.4 + n * unit_pt / 72), 2.0 + 0.95 * len(values))
    width, height = canvas.figure.get_figwidth(), canvas.figure.get_figheight()
    ax = canvas.axes((1.9 / width, 1.1 / height, 1 - 2.1 / width, 1 - 2.0 / height))
    ax.set_xlim(-0.5, n - 0.5)
    ax.set_ylim(-0.6, len(values) - 0.4)
    _draw_levels(canvas, ax, values=values, texts=texts, active=active, fmt=dst_fmt)
    start = block * fmt.per_block
    ax.set_xticks(range(n), [str(start + i) for i in range(n)], fontsize=7)
    ax.set_xlabel(f"src lane (DataBlock {block})", fontsize=9)
    ax.set_yticks(range(len(values)), ["inputs (masked: +0)"]
                  + [f"level {lv}" for lv in range(1, len(values) - 1)] + [f"dst[{block}]"],
                  fontsize=9)
    ax.tick_params(length=0)
    for side in ("top", "right", "left"):
        ax.spines[side].set_visible(False)
    ax.set_title(_title(values=values, active=active, src_fmt=fmt, fmt=dst_fmt, block=block),
                 fontsize=10)
    wrap = ("integer add wrapped (wrapped - exact)", {"facecolor": "white", "edgecolor": WRAPPED,
                                                       "lw": 2})
    rounding = ("rounding changed the exact sum (rounded - exact)",
                {"facecolor": "white", "edgecolor": ROUNDED, "lw": 2})
    canvas.legend([("input", {"facecolor": ACTIVE}),
                   ("masked lane (+0)", {"facecolor": MASKED, "hatch": "///"}),
                   rounding if dst_fmt.is_float else wrap])
    return canvas.flush()


def _draw_levels(canvas: Canvas, ax: Axes, *, values: list, texts: list, active: np.ndarray,
                 fmt: Format) -> None:
    """Each level's values over the two it adds, outlined where the add rounded or wrapped."""
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
            canvas.cell(ax, x - half_w, lv - 0.22, 2 * half_w, 0.44, face=face, edge=edge, lw=lw,
                        hatch=hatch, zorder=2)
            ax.text(x, lv + (0.08 if note else 0), texts[lv][k], ha="center", va="center",
                    fontsize=8, zorder=3, gid=f"level:{lv}:{k}",
                    color="black" if face == ACTIVE else "#555555")
            if note:
                ax.text(x, lv - 0.11, note, ha="center", va="center", fontsize=7, color=edge,
                        zorder=3)


def _title(*, values: list, active: np.ndarray, src_fmt: Format, fmt: Format,
           block: int) -> str:
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
            f"{tidy(f'{float(exact):.10g}')}{error}")


# --- a summation tree given as nested tuples ------------------------------------------------

def summation_tree(tree: Any, *, title: str | None = None) -> Figure:
    """A summation tree as nested tuples of input indices (what ``reveal_order`` and
    ``order_tree`` return): leaves at the bottom in tree order, each add one level above its
    highest child.

    >>> import ascjax
    >>> from ascjax import viz
    >>> fig = viz.summation_tree((((0, 1), 2), (3, 4)), title="five inputs")
    """
    _check_tree(tree, "viz.summation_tree")
    order = leaves(tree)
    canvas = Canvas(min(max(6.0, 2 + 0.35 * len(order)), 14), 4)
    ax = canvas.figure.add_subplot()
    x, y = _place(ax, tree, {leaf: float(k) for k, leaf in enumerate(order)},
                  label=len(order) <= 64)
    ax.plot([x], [y], "o", color="C3", ms=4)
    ax.set_axis_off()
    if title:
        ax.set_title(title)
    return canvas.flush()


def _check_tree(tree: Any, where: str) -> None:
    """A TypeError unless ``tree`` is an input index (an int >= 0) or a tuple of two or more
    trees (a str was walked letter by letter for ever; a list gave int()'s error)."""
    stack = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, tuple) and len(node) >= 2:
            stack += node
        elif not (isinstance(node, (int, np.integer)) and not isinstance(node, bool)
                  and node >= 0):
            raise TypeError(f"{where}: a tree is nested tuples of input indices (ints >= 0), "
                            f"each add a tuple of two or more, as reveal_order and order_tree "
                            f"return, e.g. ((0, 1), 2); got {type(node).__name__} {node!r}"
                            + (" in it" if node is not tree else ""))


def _place(ax: Axes, tree: Any, x_of: dict[int, float], *, label: bool) -> tuple[float, float]:
    """(x, y) of the root, drawing every edge below it; iterative, so that deep (sequential)
    trees need no recursion."""
    stack, pos = [(tree, False)], {}

    def key(node):
        return id(node) if isinstance(node, tuple) else -1 - int(node)

    while stack:
        node, expanded = stack.pop()
        if isinstance(node, (int, np.integer)):
            pos[key(node)] = (x_of[int(node)], 0.0)
            if label:
                ax.annotate(str(int(node)), (x_of[int(node)], 0.0), xytext=(0, -12),
                            textcoords="offset points", ha="center", fontsize=8)
            continue
        if not expanded:
            stack.append((node, True))
            stack += [(child, False) for child in node]
            continue
        kids = [pos[key(c)] for c in node]
        x = sum(k[0] for k in kids) / len(kids)
        y = max(k[1] for k in kids) + 1
        for kx, ky in kids:
            ax.plot([x, kx], [y, ky], color="0.4", lw=0.8)
        pos[key(node)] = (x, y)
    return pos[key(tree)]
