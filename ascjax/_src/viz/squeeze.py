"""The squeeze store: the UB's bytes, the pending tail and AR after each call of a run."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

import numpy as np

from ..config import Config
from ..formats import DATABLOCK_BYTES, Format
from ..isa.lanes import resolve_dtypes
from ..isa.memory import make_ub
from ..isa.squeeze import squeeze_and_storeunalign as _squeeze
from ..isa.squeeze import squeeze_and_storeunalign_finalize, squeeze_and_storeunalign_init
from .canvas import Canvas, blend, palette
from .values import element_values, labels

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure


@dataclasses.dataclass(frozen=True)
class _Step:
    """The UB and the squeeze state after one call (or the finalize)."""

    name: str
    ub: np.ndarray
    ar: int
    pending: int
    tail: np.ndarray


@dataclasses.dataclass(frozen=True)
class _Layout:
    """What every panel shares: the rows of 32-byte blocks from ``base`` and where each call's
    bytes start (``starts[c]``: UB address of call c's first byte; the last: the end)."""

    fmt: Format
    dst_addr: int
    base: int
    rows: int
    starts: list[int]


def squeeze_and_storeunalign(src1: Any, squeeze_mask: Any, *, dst_addr: int = 0,
                             ub: Any = None, dtype: Any = None, finalize: bool = True,
                             config: Config | None = None) -> Figure:
    """A run of ``asc_squeeze_and_storeunalign``: init, one call per register of ``src1``
    (``(calls, lanes)``, or one register), then ``_finalize`` (unless ``finalize=False``).

    One panel per step shows the UB by absolute 32-byte block (rows, byte offset across):
    bytes a step wrote in the colour of the call that selected them (paler once written
    earlier), bytes waiting in the unaligned register src0 hatched (they are not in the UB
    yet), element values where they fit, the bytes src0 holds (at UB address % 32), and the
    write position ``dst_addr + AR``. ``squeeze_mask`` is one mask for every call or one per
    call (``(calls, 256)`` / ``(calls, lanes)``). ``ub`` defaults to a zeroed UB.

    >>> import numpy as np, ascjax
    >>> from ascjax import viz
    >>> regs = np.arange(128, dtype=np.float32).reshape(2, 64)
    >>> fig = viz.squeeze_and_storeunalign(regs, ascjax.create_mask("PAT_M3", "float"),
    ...                                    dst_addr=4)
    """
    where = "viz.squeeze_and_storeunalign"
    regs = np.asarray(src1)
    regs = regs[None] if regs.ndim == 1 else regs
    masks = np.asarray(squeeze_mask)
    if regs.ndim != 2 or masks.ndim not in (1, 2) or (masks.ndim == 2
                                                       and masks.shape[0] != regs.shape[0]):
        raise ValueError(f"{where}: src1 is one register or (calls, lanes), squeeze_mask one "
                         f"mask or one per call; got src1 {regs.shape}, squeeze_mask "
                         f"{masks.shape}")
    masks = masks if masks.ndim == 2 else np.broadcast_to(masks, (regs.shape[0],) + masks.shape)
    fmt = resolve_dtypes(regs, dtype, where=where, arg="src1")
    ub = make_ub() if ub is None else ub
    state = squeeze_and_storeunalign_init()
    steps = []
    for c in range(regs.shape[0]):
        ub, _, state = _squeeze(ub, dst_addr, state, regs[c], masks[c], dtype=dtype,
                                config=config)
        steps.append(_step(f"call {c + 1}", ub, state))
    if finalize:
        ub, state = squeeze_and_storeunalign_finalize(ub, dst_addr, state)
        steps.append(_step("finalize", ub, state))
    return _figure(steps, fmt, dst_addr)


def _step(name: str, ub: Any, state: Any) -> _Step:
    return _Step(name, np.asarray(ub), int(state.ar), int(state.pending), np.asarray(state.tail))


def _figure(steps: list[_Step], fmt: Format, dst_addr: int) -> Figure:
    end = dst_addr + steps[-1].ar
    base = dst_addr - dst_addr % DATABLOCK_BYTES
    rows = max(1, -(-(end - base) // DATABLOCK_BYTES))
    pending = steps[-1].pending
    notes = ([f"no _finalize: the last {pending} bytes never reach the UB"] if pending else []) \
        + (["4-bit pairs as bytes in hex: the low digit is element 2k"] if fmt.packed else [])
    panel_h, top = 0.3 * (rows + 1) + 0.75, 0.45 + 0.2 * len(notes)
    canvas = Canvas(12, 0.9 + top + panel_h * len(steps))
    height = canvas.figure.get_figheight()
    starts = [dst_addr] + [dst_addr + s.ar for s in steps if s.name != "finalize"]
    layout = _Layout(fmt, dst_addr, base, rows, starts)
    prev_in_ub = dst_addr
    for i, step in enumerate(steps):
        bottom = (0.9 + panel_h * (len(steps) - 1 - i)) / height
        ax = canvas.axes((0.12, bottom, 0.8, (panel_h - 0.6) / height))
        in_ub = dst_addr + step.ar - step.pending
        _panel(canvas, ax, layout, step, in_ub=in_ub, prev_in_ub=prev_in_ub)
        wrote = (f"UB [{prev_in_ub:#x}, {in_ub:#x}) written" if in_ub > prev_in_ub
                 else "nothing written to the UB")
        added = "" if step.name == "finalize" else \
            f"{starts[i + 1] - starts[i]} bytes selected, AR {starts[i] - dst_addr} -> {step.ar}; "
        ax.set_title(f"after {step.name}: {added}{wrote}; {step.pending} bytes pending in src0",
                     fontsize=9, loc="left")
        prev_in_ub = in_ub
    ax.set_xlabel("byte within the 32-byte block (UB address % 32)", fontsize=8)
    head = (f"asc_squeeze_and_storeunalign, {fmt.name}, dst_addr = {dst_addr:#x}: only whole "
            f"32-byte blocks (absolute UB addresses) are written by a call")
    canvas.figure.suptitle("\n".join([head, *notes]), fontsize=11)
    _legend(canvas, len(starts) - 1)
    return canvas.flush()


def _legend(canvas: Canvas, calls: int) -> None:
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    handles = [Patch(facecolor=blend(palette(c), 0.3), edgecolor="#555555",
                     label=f"written now, call {c + 1}'s bytes") for c in range(min(calls, 4))]
    handles += [Patch(facecolor=blend("C0", 0.72), edgecolor="#555555", label="written earlier"),
                Patch(facecolor="white", hatch="////", edgecolor="C0",
                      label="pending in src0 (not in the UB yet)"),
                Patch(facecolor="#eeeeee", edgecolor="#aaaaaa",
                      label="outside [dst_addr, dst_addr + AR): untouched"),
                Line2D([], [], color="black", lw=2.2, label="dst_addr"),
                Line2D([], [], color="C3", lw=2.2, label="dst_addr + AR (next byte)")]
    canvas.figure.legend(handles=handles, loc="lower center", bbox_to_anchor=(0.5, 0.0), ncol=4,
                         frameon=False, fontsize=8)


def _panel(canvas: Canvas, ax: Axes, layout: _Layout, step: _Step, *, in_ub: int,
           prev_in_ub: int) -> None:
    """The UB rows after ``step`` (bytes below ``in_ub`` are in the UB, those up to
    ``dst_addr + AR`` pending) and the unaligned register under them."""
    base, rows, starts = layout.base, layout.rows, layout.starts
    end, stop = starts[-1], layout.dst_addr + step.ar
    ax.set_xlim(0, DATABLOCK_BYTES)
    ax.set_ylim(rows + 1.2, 0)
    seen = np.zeros(rows * DATABLOCK_BYTES, np.uint8)  # the bytes as this step leaves them
    for off in range(rows * DATABLOCK_BYTES):
        a = base + off
        row, col = divmod(off, DATABLOCK_BYTES)
        owner = int(np.searchsorted(starts, a, side="right")) - 1
        face, hatch = "#eeeeee", None
        if a < layout.dst_addr or a >= end:
            face = "#eeeeee"
        elif a < in_ub:
            face = blend(palette(owner), 0.3 if a >= prev_in_ub else 0.72)
            seen[off] = step.ub[a]
        elif a < stop:
            face, hatch = "white", "////"
            seen[off] = step.tail[a % DATABLOCK_BYTES]
        else:
            face = "white"
        canvas.cell(ax, col, row, 1, 1, face=face, hatch=hatch, lw=0.3,
                    edge=palette(owner) if hatch else "#aaaaaa")
    _values(canvas, ax, layout, seen, in_ub=in_ub, stop=stop)
    for r in range(rows + 1):
        ax.axhline(r, color="black", lw=1.2)
    y = rows + 0.2
    for col in range(DATABLOCK_BYTES):  # the unaligned register: pending bytes at A % 32
        a = in_ub + (col - in_ub) % DATABLOCK_BYTES
        pending = in_ub <= a < stop
        owner = int(np.searchsorted(starts, a, side="right")) - 1
        canvas.cell(ax, col, y, 1, 1, face="white", hatch="////" if pending else None, lw=0.3,
                    edge=palette(owner) if pending else "#aaaaaa")
        if pending:
            canvas.put_text(ax, col + 0.5, y + 0.5, [f"{int(step.tail[col]):02x}"], 1, 1,
                            fontsize=6.5,
                            bbox={"facecolor": "white", "edgecolor": "none", "pad": 0.5})
    _mark(ax, layout.dst_addr - base, rows, "black")
    _mark(ax, stop - base, rows, "C3")
    ax.set_xticks([c + 0.5 for c in range(0, DATABLOCK_BYTES, 4)],
                  [str(c) for c in range(0, DATABLOCK_BYTES, 4)], fontsize=7)
    ax.set_yticks([r + 0.5 for r in range(rows)] + [y + 0.5],
                  [f"UB {base + DATABLOCK_BYTES * r:#06x}" for r in range(rows)]
                  + ["src0 (unaligned reg),\nbytes in hex"],
                  fontsize=7)
    ax.tick_params(length=0)


def _values(canvas: Canvas, ax: Axes, layout: _Layout, seen: np.ndarray, *, in_ub: int,
            stop: int) -> None:
    """Element values over the bytes they occupy (every element lies inside one block)."""
    fmt, dst_addr = layout.fmt, layout.dst_addr
    w = fmt.width
    first = dst_addr - layout.base
    count = (stop - dst_addr) // w
    if not count:
        return
    # The UB is little-endian, as NumPy's storage on every host JAX runs on.
    raw = seen[first:first + count * w]
    values = None if fmt.packed else element_values(raw.view(fmt.storage_dtype), fmt)
    for i in range(count):
        row, col = divmod(first + i * w, DATABLOCK_BYTES)
        # Nibble pairs as the byte in hex (two values rarely fit a byte's cell).
        texts = [f"{int(raw[i]):02x}"] if values is None else labels(values[i, 0], fmt)
        kw = {"bbox": {"facecolor": "white", "edgecolor": "none", "pad": 0.5}} \
            if dst_addr + i * w >= in_ub else {}
        canvas.put_text(ax, col + w / 2, row + 0.5, texts, w, 1,
                        fontsize=7.5 if w > 1 else 6.5, required=True, **kw)
        if w > 1:
            ax.plot([col, col], [row, row + 1], color="#444444", lw=0.8)


def _mark(ax: Axes, off: int, rows: int, color: str) -> None:
    """A bar at the left edge of UB byte ``off`` (relative to the first row)."""
    row, col = divmod(off, DATABLOCK_BYTES)
    if col == 0 and row == rows:
        row, col = rows - 1, DATABLOCK_BYTES
    ax.plot([col, col], [row - 0.15, row + 1.15], color=color, lw=2.4, solid_capstyle="butt")
