"""Pictures of the instructions that address the UB: PairReduceSum's strided reads and writes,
gather's index arrows, and the squeeze store's bytes, pending tail and AR after each call.

Every value drawn comes from the instruction itself (its output, its state, or for PairReduceSum
``pair_reduce_sum_plan``, the addressing the instruction checks its operands with).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from ..config import Config, resolve_config
from ..formats import DATABLOCK_BYTES, Format, resolve
from ..isa.gather import gather as _gather
from ..isa.lanes import resolve_dtypes
from ..isa.memory import make_ub
from ..isa.reduce_tensor import pair_reduce_sum as _pair_reduce_sum
from ..isa.reduce_tensor import pair_reduce_sum_plan
from ..isa.repeat import repeat_mask
from ..isa.squeeze import squeeze_and_storeunalign as _squeeze
from ..isa.squeeze import squeeze_and_storeunalign_finalize, squeeze_and_storeunalign_init
from .core import (
    ACTIVE,
    MASKED,
    MASKED_EDGE,
    blend,
    cell,
    element_values,
    flush,
    labels,
    lane_mask,
    legend,
    new_figure,
    put_text,
)

if TYPE_CHECKING:
    from matplotlib.figure import Figure

_ROWS_SHOWN = 8  # rows of 256 bytes in PairReduceSum's overview


def _color(i: int):
    from matplotlib import colormaps

    return colormaps["tab10"](i % 10)


def _one_d(x: Any, where: str, arg: str) -> np.ndarray:
    x = np.asarray(x)
    if x.ndim != 1:
        raise ValueError(f"{where}: draws one tensor; {arg} has shape {x.shape} (pick one, "
                         f"e.g. {arg}[0])")
    return x


# --- PairReduceSum --------------------------------------------------------------------------

def pair_reduce_sum(dst: Any, src: Any, repeat_time: int, mask: Any, dst_rep_stride: int,
                    src_blk_stride: int, src_rep_stride: int, *, repeat: int = 0,
                    config: Config | None = None) -> Figure:
    """What ``PairReduceSum`` reads and writes, and the sums of one repeat.

    Top: the src and dst LocalTensors as rows of 256 bytes (8 DataBlocks); a block read by
    repeat r as its DataBlock k is labelled ``r{r} b{k}`` in repeat r's colour, a dst block
    holds the outputs ``k`` a repeat wrote there; arrows follow repeat ``repeat``'s blocks.
    Bottom: repeat ``repeat``'s 8 DataBlocks with their values, each pair's sum (as dst now
    holds it) under the two elements it adds. Masked elements are grey; a pair with both
    elements masked keeps dst's old value (hatched). Arguments as for
    ``ascjax.pair_reduce_sum``; ``dst`` and ``src`` are 1-D.

    >>> import numpy as np, ascjax
    >>> from ascjax import viz
    >>> src = np.arange(256, dtype=np.float16)
    >>> fig = viz.pair_reduce_sum(np.zeros(128, np.float16), src, 2, 100, 1, 1, 8)
    """
    where = "viz.pair_reduce_sum"
    dst_a, src_a = _one_d(dst, where, "dst"), _one_d(src, where, "src")
    out = np.asarray(_pair_reduce_sum(dst, src, repeat_time, mask, dst_rep_stride,
                                      src_blk_stride, src_rep_stride, config=config))
    if not 0 <= repeat < repeat_time:
        raise ValueError(f"{where}: repeat={repeat} must be in [0, repeat_time={repeat_time})")
    fmt = resolve(src_a.dtype)
    active = repeat_mask(mask, fmt, where)
    plan = pair_reduce_sum_plan(fmt, repeat_time, active, dst_rep_stride, src_blk_stride,
                                src_rep_stride, resolve_config(config).zero_masked_pairs)
    reads, writes = plan.reads, plan.writes
    rows = max(_overview_rows(len(src_a), fmt), _overview_rows(len(dst_a), fmt))
    height = 5.6 + 0.42 * rows
    fig = new_figure(13, height)
    top = 0.42 * rows / height
    ax_src = fig.add_axes((0.09, 1 - top - 0.75 / height, 0.38, top))
    ax_dst = fig.add_axes((0.59, 1 - top - 0.75 / height, 0.38, top))
    _pair_overview(ax_src, ax_dst, fmt, reads, writes, active, len(src_a), len(dst_a))
    _pair_detail(fig, fmt, src_a, dst_a, out, reads[repeat], writes[repeat], active, repeat)
    fig.suptitle(f"PairReduceSum<{fmt.name}>(dst, src, repeatTime={repeat_time}, mask, "
                 f"dstRepStride={dst_rep_stride}, srcBlkStride={src_blk_stride}, "
                 f"srcRepStride={src_rep_stride}): {int(active.sum())} of {fmt.lanes} elements "
                 f"active", fontsize=11)
    legend(fig, [("read / written by a repeat (its colour)", {"facecolor": blend("C0", 0.55)}),
                 ("masked element", {"facecolor": MASKED, "hatch": "///"}),
                 ("both masked: dst keeps its value", {"facecolor": "white", "hatch": "xx"}),
                 ("not addressed", {"facecolor": "white"})])
    return flush(fig)


def _overview_rows(n: int, fmt: Format) -> int:
    return min(_ROWS_SHOWN, -(-n // (8 * fmt.per_block)))


def _pair_overview(ax_src, ax_dst, fmt: Format, reads, writes, active, n_src: int,
                   n_dst: int) -> None:
    """Blocks of src labelled by the (repeat, DataBlock) reading them, blocks of dst by the
    (repeat, outputs) landing there."""
    epb = fmt.per_block
    src_blocks: dict[int, list] = {}
    for r in range(reads.shape[0]):
        for k in range(8):
            on = bool(active[k * epb:(k + 1) * epb].any())
            src_blocks.setdefault(int(reads[r, k * epb]) // epb, []).append((r, k, on))
    dst_blocks: dict[int, list] = {}
    for r in range(writes.shape[0]):
        for k in np.nonzero(writes[r] >= 0)[0]:
            dst_blocks.setdefault(int(writes[r, k]) // epb, []).append((r, int(k)))
    for ax, blocks, n, name in ((ax_src, src_blocks, n_src, "src"),
                                (ax_dst, dst_blocks, n_dst, "dst")):
        rows = _overview_rows(n, fmt)
        ax.set_xlim(0, 8)
        ax.set_ylim(rows, 0)
        for b in range(rows * 8):
            row, col = divmod(b, 8)
            entries = blocks.get(b, [])
            face, hatch, text = "white", None, ""
            if b * epb >= n:
                continue  # past the end of the tensor
            if entries and name == "src":
                face = blend(_color(entries[0][0]), 0.55) if any(e[2] for e in entries) else MASKED
                hatch = "///" if not any(e[2] for e in entries) else None
                names = [f"r{r} b{k}" for r, k, _ in entries]
                text = "\n".join(names if len(names) <= 3 else names[:2] + [f"+{len(names) - 2}"])
            elif entries:
                face = blend(_color(entries[-1][0]), 0.55)
                r = entries[-1][0]
                ks = [k for rr, k in entries if rr == r]
                text = f"r{r}\nk{_ranges(ks)}"
            cell(ax, col, row, 1, 1, face=face, hatch=hatch)
            put_text(ax, col + 0.5, row + 0.5,
                     [text, text.split("\n")[0] + f"\nk{min(ks)}-{max(ks)}" if entries and
                      name == "dst" else f"{len(entries)}x" if entries else ""],
                     1, 1, fontsize=7)
        ax.set_xticks([c + 0.5 for c in range(8)], [str(c) for c in range(8)], fontsize=8)
        ax.xaxis.tick_top()
        ax.set_yticks([r + 0.5 for r in range(rows)],
                      [f"{name}[{r * 8 * epb}:{min((r + 1) * 8 * epb, n)}]" for r in range(rows)],
                      fontsize=8)
        ax.tick_params(length=0)
        ax.set_title(f"{name} ({n} elements), 32-byte blocks" + (
            f" (first {rows * 8} shown)" if rows * 8 * epb < n else ""), fontsize=9, pad=14)


def _ranges(ks: list[int]) -> str:
    """``[0, 1, 4, 5]`` as ``"0-1,4-5"``."""
    ks = sorted(ks)
    runs, start = [], ks[0]
    for a, b in zip(ks, ks[1:] + [None]):
        if b != a + 1:
            runs.append(f"{start}-{a}" if a > start else str(start))
            start = b
    return ",".join(runs)


def _pair_detail(fig, fmt: Format, src, dst, out, reads, writes, active, repeat: int) -> None:
    epb, half = fmt.per_block, fmt.per_block // 2
    values = element_values(src[np.where(active, reads, 0)], fmt)[:, 0]
    for side in range(2):
        ax = fig.add_axes((0.09 + 0.5 * side, 0.6 / fig.get_figheight(), 0.38,
                           3.6 / fig.get_figheight()))
        ax.set_xlim(0, epb)
        ax.set_ylim(4 * 2.5, 0)
        ax.set_axis_off()
        for g in range(4):
            k_block = 4 * side + g
            y = g * 2.5
            first = k_block * epb
            ax.text(-0.2, y + 0.5, f"b{k_block}  src[{reads[first]}:{reads[first] + epb}]",
                    ha="right", va="center", fontsize=7)
            for j in range(epb):
                e = first + j
                on = bool(active[e])
                cell(ax, j, y, 1, 1, face=blend(_color(repeat), 0.7) if on else MASKED,
                     hatch=None if on else "///", edge="#555555" if on else MASKED_EDGE)
                put_text(ax, j + 0.5, y + 0.5, labels(values[e], fmt) if on else ["off"], 1, 1,
                         fontsize=7, color="black" if on else "#777777")
            for p in range(half):
                k = k_block * half + p
                _pair_output(ax, fmt, 2 * p, y + 1.1, k, writes[k], out, dst, active)
            targets = [int(t) for t in writes[k_block * half:(k_block + 1) * half] if t >= 0]
            where = f"dst[{min(targets)}:{max(targets) + 1}]" if targets else "nothing written"
            ax.text(-0.2, y + 1.6, f"→ {where}", ha="right", va="center", fontsize=7)
        if side == 0:
            ax.set_title(f"repeat {repeat}: its 8 DataBlocks; under each pair a[2k], a[2k+1] the "
                         f"output k = a[2k] + a[2k+1] (one rounding) as dst now holds it",
                         fontsize=9, loc="left", x=-0.2)


def _pair_output(ax, fmt: Format, x: float, y: float, k: int, target: int, out, dst,
                 active) -> None:
    both_masked = not (active[2 * k] or active[2 * k + 1])
    if target < 0:
        text = "kept" if both_masked else "overwritten"
        cell(ax, x, y, 2, 1, face="white", hatch="xx", edge="#c8c8c8")
        cell(ax, x, y, 2, 1, face="none", edge="#555555", zorder=1.5)
        put_text(ax, x + 1, y + 0.5, [text, text[:4]], 2, 1, fontsize=7, color="#333333",
                 bbox={"facecolor": "white", "edgecolor": "none", "pad": 0.6})
        return
    value = element_values(out[target:target + 1], fmt)[0, 0]
    cell(ax, x, y, 2, 1, face=ACTIVE, lw=0.9)
    put_text(ax, x + 1, y + 0.5, labels(value, fmt), 2, 1, fontsize=7, gid=f"out:{k}:{target}")


# --- gather ---------------------------------------------------------------------------------

def gather(src: Any, index: Any, mask: Any, *, dst_dtype: Any = None, dtype: Any = None,
           lanes: tuple[int, int] = (0, 16), config: Config | None = None) -> Figure:
    """Where ``asc_gather`` takes each lane from. Top: every index lane's source element
    (inactive lanes grey crosses, never read). Bottom: index lanes ``lanes = (first, stop)``
    as arrows from the source elements they read to the dst elements they fill, values as the
    instruction returned them; widening (b8 -> b16, zero extension) and the even-position
    layout (narrow data, wide index: value i in dst element 2i, odd elements 0) are shown.
    Arguments as for ``ascjax.gather``; ``index`` is one register.

    >>> import numpy as np, ascjax
    >>> from ascjax import viz
    >>> fig = viz.gather(np.arange(100, dtype=np.float32),
    ...                  np.arange(64, dtype=np.uint32)[::-1],
    ...                  ascjax.create_mask("PAT_VL8", "float"))
    """
    where = "viz.gather"
    out = np.asarray(_gather(src, index, mask, dst_dtype=dst_dtype, dtype=dtype, config=config))
    src_fmt = resolve_dtypes(src, dtype, where=where, arg="src")
    idx = _one_d(index, where, "index")
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
    fig = new_figure(13, 7.2)
    top = fig.add_axes((0.07, 0.63, 0.68, 0.27))
    _gather_overview(top, idx, active, lo, hi)
    fig.suptitle(f"asc_gather: dst={dst_fmt.name}, src={src_fmt.name}, index={idx_fmt.name} "
                 f"({idx_fmt.lanes} lanes, {int(active.sum())} active); {layout}", fontsize=11)
    bottom = fig.add_axes((0.07, 0.08, 0.9, 0.42))
    _gather_detail(bottom, np.asarray(src), src_fmt, idx, active, out, dst_fmt, lo, hi, even)
    odd = [("odd element of the even-position layout: 0", {"facecolor": "white",
                                                              "hatch": ".."})]
    legend(fig, [("active lane: src element and the dst element it fills",
                  {"facecolor": ACTIVE}),
                 ("inactive lane: 0, never read", {"facecolor": MASKED, "hatch": "///"}),
                 *(odd if even else [])])
    return flush(fig)


def _gather_overview(ax, idx, active, lo: int, hi: int) -> None:
    lane = np.arange(idx.shape[0])
    ax.axvspan(lo - 0.5, hi - 0.5, color="#fff2cc", zorder=0, label="lanes drawn below")
    ax.scatter(lane[active], idx[active].astype(np.int64), s=14, color="C0", zorder=2,
               label="active lane reads src[index]")
    ax.scatter(lane[~active], idx[~active].astype(np.int64), s=14, marker="x", color="#999999",
               zorder=2, label="inactive lane (dst 0, index ignored)")
    ax.set_xlim(-0.5, idx.shape[0] - 0.5)
    ax.set_xlabel("index lane i", fontsize=9)
    ax.set_ylabel("index[i] (src element)", fontsize=9)
    ax.tick_params(labelsize=8)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)


def _gather_detail(ax, src, src_fmt: Format, idx, active, out, dst_fmt: Format, lo: int,
                   hi: int, even: bool) -> None:
    window = range(lo, hi)
    used = sorted({int(idx[i]) for i in window if active[i]})
    # Source cells: the elements read, in order, with a gap wherever they are not contiguous.
    src_x, x = {}, 0.0
    for j, e in enumerate(used):
        if j and e != used[j - 1] + 1:
            x += 0.6
        src_x[e] = x
        x += 1
    per_lane = 2 if even else 1
    n_dst = (hi - lo) * per_lane
    width = max(x, n_dst)
    ax.set_xlim(-0.3, width + 0.3)
    ax.set_ylim(4.8, -0.3)
    ax.set_axis_off()
    shift = (width - x) / 2
    src_vals = element_values(src[used], src_fmt)[:, 0] if used else []
    for e, v in zip(used, src_vals):
        sx = src_x[e] + shift
        cell(ax, sx, 0.5, 1, 1, face=ACTIVE)
        put_text(ax, sx + 0.5, 1.0, labels(v, src_fmt), 1, 1, fontsize=7)
        put_text(ax, sx + 0.5, 0.2, [f"src[{e}]", str(e)], 1, 0.5, fontsize=6.5)
    ax.text(-0.25, 1.0, "src", ha="right", va="center", fontsize=9)
    ax.text(-0.25, 3.5, "dst", ha="right", va="center", fontsize=9)
    ax.text(-0.25, 4.55, "index lane", ha="right", va="center", fontsize=7)
    dshift = (width - n_dst) / 2
    dst_vals = element_values(out, dst_fmt)[:, 0]
    for i in window:
        for part in range(per_lane):
            d = i * per_lane + part
            dx = (i - lo) * per_lane + part + dshift
            on = bool(active[i]) and part == 0
            face, hatch = (ACTIVE, None) if on else ((MASKED, "///") if part == 0 else
                                                     ("white", ".."))
            cell(ax, dx, 3.0, 1, 1, face=face, hatch=hatch,
                 edge="#555555" if on else MASKED_EDGE)
            put_text(ax, dx + 0.5, 3.5, labels(dst_vals[d], dst_fmt), 1, 1, fontsize=7,
                     gid=f"dst:{d}")
            put_text(ax, dx + 0.5, 4.2, [f"dst[{d}]", str(d)], 1, 0.4, fontsize=6.5)
            if part == 0:
                put_text(ax, dx + 0.5, 4.55, [f"lane {i}", str(i)], 1, 0.4, fontsize=6.5,
                         color="C0" if on else "#888888")
            if on:
                ax.annotate("", xy=(dx + 0.5, 2.95), xytext=(src_x[int(idx[i])] + shift + 0.5,
                                                              1.55),
                            arrowprops={"arrowstyle": "->", "color": _color(i - lo), "lw": 1.1,
                                        "shrinkA": 0, "shrinkB": 0})
    ax.set_title(f"index lanes {lo}-{hi - 1}: arrows from the element read to the dst element "
                 f"filled", fontsize=9, loc="left")


# --- the squeeze store ----------------------------------------------------------------------

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
    regs = np.asarray(src1)
    regs = regs[None] if regs.ndim == 1 else regs
    masks = np.asarray(squeeze_mask)
    masks = masks if masks.ndim == 2 else np.broadcast_to(masks, (regs.shape[0],) + masks.shape)
    fmt = resolve_dtypes(regs, dtype, where="viz.squeeze_and_storeunalign", arg="src1")
    ub = make_ub() if ub is None else ub
    state = squeeze_and_storeunalign_init()
    steps = []
    for c in range(regs.shape[0]):
        ub, _, state = _squeeze(ub, dst_addr, state, regs[c], masks[c], dtype=dtype,
                                config=config)
        steps.append((f"call {c + 1}", np.asarray(ub), *(np.asarray(s) for s in state)))
    if finalize:
        ub, state = squeeze_and_storeunalign_finalize(ub, dst_addr, state)
        steps.append(("finalize", np.asarray(ub), *(np.asarray(s) for s in state)))
    return _squeeze_figure(steps, fmt, dst_addr)


def _squeeze_figure(steps, fmt: Format, dst_addr: int):
    end = dst_addr + int(steps[-1][2])
    base = dst_addr - dst_addr % DATABLOCK_BYTES
    rows = max(1, -(-(end - base) // DATABLOCK_BYTES))
    pending = int(steps[-1][3])
    notes = ([f"no _finalize: the last {pending} bytes never reach the UB"] if pending else []) \
        + (["4-bit pairs as bytes in hex: the low digit is element 2k"] if fmt.packed else [])
    panel_h, top = 0.3 * (rows + 1) + 0.75, 0.45 + 0.2 * len(notes)
    fig = new_figure(12, 0.9 + top + panel_h * len(steps))
    starts = [dst_addr] + [dst_addr + int(s[2]) for s in steps if s[0] != "finalize"]
    prev_in_ub = dst_addr
    for i, (name, ub, ar, pending, tail) in enumerate(steps):
        bottom = (0.9 + panel_h * (len(steps) - 1 - i)) / fig.get_figheight()
        ax = fig.add_axes((0.12, bottom, 0.8, (panel_h - 0.6) / fig.get_figheight()))
        in_ub = dst_addr + int(ar) - int(pending)
        _squeeze_panel(ax, fmt, ub, tail, base, rows, dst_addr, int(ar), in_ub, prev_in_ub,
                       starts)
        wrote = (f"UB [{prev_in_ub:#x}, {in_ub:#x}) written" if in_ub > prev_in_ub
                 else "nothing written to the UB")
        added = "" if name == "finalize" else \
            f"{starts[i + 1] - starts[i]} bytes selected, AR {starts[i] - dst_addr} -> {int(ar)}; "
        ax.set_title(f"after {name}: {added}{wrote}; {int(pending)} bytes pending in src0",
                     fontsize=9, loc="left")
        prev_in_ub = in_ub
    ax.set_xlabel("byte within the 32-byte block (UB address % 32)", fontsize=8)
    head = (f"asc_squeeze_and_storeunalign, {fmt.name}, dst_addr = {dst_addr:#x}: only whole "
            f"32-byte blocks (absolute UB addresses) are written by a call")
    fig.suptitle("\n".join([head, *notes]), fontsize=11)
    _squeeze_legend(fig, len(starts) - 1)
    return flush(fig)


def _squeeze_legend(fig, calls: int) -> None:
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    handles = [Patch(facecolor=blend(_color(c), 0.3), edgecolor="#555555",
                     label=f"written now, call {c + 1}'s bytes") for c in range(min(calls, 4))]
    handles += [Patch(facecolor=blend("C0", 0.72), edgecolor="#555555", label="written earlier"),
                Patch(facecolor="white", hatch="////", edgecolor="C0",
                      label="pending in src0 (not in the UB yet)"),
                Patch(facecolor="#eeeeee", edgecolor="#aaaaaa",
                      label="outside [dst_addr, dst_addr + AR): untouched"),
                Line2D([], [], color="black", lw=2.2, label="dst_addr"),
                Line2D([], [], color="C3", lw=2.2, label="dst_addr + AR (next byte)")]
    fig.legend(handles=handles, loc="lower center", bbox_to_anchor=(0.5, 0.0), ncol=4,
               frameon=False, fontsize=8)


def _squeeze_panel(ax, fmt: Format, ub, tail, base: int, rows: int, dst_addr: int, ar: int,
                   in_ub: int, prev_in_ub: int, starts: list[int]) -> None:
    end, stop = starts[-1], dst_addr + ar
    ax.set_xlim(0, DATABLOCK_BYTES)
    ax.set_ylim(rows + 1.2, 0)
    seen = np.zeros(rows * DATABLOCK_BYTES, np.uint8)  # the bytes as this step leaves them
    for off in range(rows * DATABLOCK_BYTES):
        a = base + off
        row, col = divmod(off, DATABLOCK_BYTES)
        owner = int(np.searchsorted(starts, a, side="right")) - 1
        face, hatch = "#eeeeee", None
        if a < dst_addr or a >= end:
            face = "#eeeeee"
        elif a < in_ub:
            face = blend(_color(owner), 0.3 if a >= prev_in_ub else 0.72)
            seen[off] = ub[a]
        elif a < stop:
            face, hatch = "white", "////"
            seen[off] = tail[a % DATABLOCK_BYTES]
        else:
            face = "white"
        cell(ax, col, row, 1, 1, face=face, hatch=hatch, lw=0.3,
             edge=_color(owner) if hatch else "#aaaaaa")
    _squeeze_values(ax, fmt, seen, base, dst_addr, in_ub, stop)
    for r in range(rows + 1):
        ax.axhline(r, color="black", lw=1.2)
    y = rows + 0.2
    for col in range(DATABLOCK_BYTES):  # the unaligned register: pending bytes at A % 32
        a = in_ub + (col - in_ub) % DATABLOCK_BYTES
        pending = in_ub <= a < stop
        owner = int(np.searchsorted(starts, a, side="right")) - 1
        cell(ax, col, y, 1, 1, face="white", hatch="////" if pending else None, lw=0.3,
             edge=_color(owner) if pending else "#aaaaaa")
        if pending:
            put_text(ax, col + 0.5, y + 0.5, [f"{int(tail[col]):02x}"], 1, 1, fontsize=6.5,
                     bbox={"facecolor": "white", "edgecolor": "none", "pad": 0.5})
    _mark(ax, dst_addr - base, rows, "black")
    _mark(ax, stop - base, rows, "C3")
    ax.set_xticks([c + 0.5 for c in range(0, DATABLOCK_BYTES, 4)],
                  [str(c) for c in range(0, DATABLOCK_BYTES, 4)], fontsize=7)
    ax.set_yticks([r + 0.5 for r in range(rows)] + [y + 0.5],
                  [f"UB {base + DATABLOCK_BYTES * r:#06x}" for r in range(rows)]
                  + ["src0 (unaligned reg)"],
                  fontsize=7)
    ax.tick_params(length=0)


def _squeeze_values(ax, fmt: Format, seen, base: int, dst_addr: int, in_ub: int,
                    stop: int) -> None:
    """Element values over the bytes they occupy (every element lies inside one block)."""
    w = fmt.width
    first = dst_addr - base
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
        put_text(ax, col + w / 2, row + 0.5, texts, w, 1, fontsize=7.5 if w > 1 else 6.5, **kw)
        if w > 1:
            ax.plot([col, col], [row, row + 1], color="#444444", lw=0.8)


def _mark(ax, off: int, rows: int, color: str) -> None:
    """A bar at the left edge of UB byte ``off`` (relative to the first row)."""
    row, col = divmod(off, DATABLOCK_BYTES)
    if col == 0 and row == rows:
        row, col = rows - 1, DATABLOCK_BYTES
    ax.plot([col, col], [row - 0.15, row + 1.15], color=color, lw=2.4, solid_capstyle="butt")

