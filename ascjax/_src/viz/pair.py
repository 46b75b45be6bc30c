"""PairReduceSum: the blocks each repeat reads and writes, and the sums of one repeat.

The addresses are ``pair_reduce_sum_plan``'s, the addressing the instruction checks its
operands with; the sums are the instruction's output."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

import numpy as np

from ..config import Config, resolve_config
from ..formats import Format, resolve
from ..isa.reduce_tensor import pair_reduce_sum as _pair_reduce_sum
from ..isa.reduce_tensor import pair_reduce_sum_plan
from ..isa.repeat import active_rows, mask_source
from ..isa.vector_mask import MaskState
from .canvas import ACTIVE, MASKED, MASKED_EDGE, Canvas, blend, palette
from .values import element_values, labels, one_tensor

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

_ROWS_SHOWN = 8  # rows of 256 bytes in the overview


@dataclasses.dataclass(frozen=True)
class _Run:
    """One PairReduceSum call: its tensors, output, element masks (``active[r, e]``: repeat
    r's element e, Counter mode's count included) and address plan (``reads[r, e]``: src
    element of repeat r's element e; ``writes[r, k]``: dst element of its output k, or -1);
    ``own`` and ``own_writes``: dst after the drawn repeat, the last run, and where its outputs
    went (a later repeat may overwrite them in ``out``)."""

    fmt: Format
    src: np.ndarray
    dst: np.ndarray
    out: np.ndarray
    active: np.ndarray
    reads: np.ndarray
    writes: np.ndarray
    own: np.ndarray
    own_writes: np.ndarray


def pair_reduce_sum(dst: Any, src: Any, repeat_time: int, mask: Any, dst_rep_stride: int,
                    src_blk_stride: int, src_rep_stride: int, *, repeat: int = 0,
                    is_set_mask: bool = True, mask_state: MaskState | None = None,
                    config: Config | None = None) -> Figure:
    """What ``PairReduceSum`` reads and writes, and the sums of one repeat.

    Top: the src and dst LocalTensors as rows of 256 bytes (8 DataBlocks); a block read by
    repeat r as its DataBlock k is labelled ``r{r} b{k}`` in repeat r's colour, a dst block
    holds the outputs ``k`` a repeat wrote there.
    Bottom: repeat ``repeat``'s 8 DataBlocks with their values, each pair's sum under the two
    elements it adds (as dst now holds it; dotted where a later repeat overwrote it, with the
    value this repeat wrote). Masked elements are grey; a pair with both elements masked keeps
    dst's old value (hatched). Arguments as for
    ``ascjax.pair_reduce_sum`` (the product is ``config.product``; ``is_set_mask=False`` takes
    the mask from ``mask_state``, and in its Counter mode the elements past the count are
    masked); ``dst`` and ``src`` are 1-D.

    >>> import numpy as np, ascjax
    >>> from ascjax import viz
    >>> src = np.arange(256, dtype=np.float16)
    >>> fig = viz.pair_reduce_sum(np.zeros(128, np.float16), src, 2, 100, 1, 1, 8)
    """
    where = "viz.pair_reduce_sum"
    dst_a, src_a = one_tensor(dst, where, "dst"), one_tensor(src, where, "src")
    modes = {"is_set_mask": is_set_mask, "mask_state": mask_state, "config": config}
    out = np.asarray(_pair_reduce_sum(dst, src, repeat_time, mask, dst_rep_stride,
                                      src_blk_stride, src_rep_stride, **modes))
    fmt, resolved = resolve(src_a.dtype), resolve_config(config)
    repeats, active, count = mask_source(where, fmt, resolved, repeat_time, mask, is_set_mask,
                                         mask_state)
    if not 0 <= repeat < repeats:
        made = (f"repeat_time={repeat_time}" if count is None else
                f"{repeats}: Counter mode's {count} elements make {repeats} repeats")
        raise ValueError(f"{where}: repeat={repeat} must be in [0, {made})")

    def plan(n: int, cut: int | None):
        return pair_reduce_sum_plan(fmt, n, active, dst_rep_stride, src_blk_stride,
                                    src_rep_stride, resolved.zero_masked_pairs, count=cut)

    # The drawn repeat's own outputs: the call cut short after it, so that none is overwritten
    # (in Counter mode a count of its repeats, all whole but the call's last).
    cut = None if count is None else min(count, (repeat + 1) * fmt.lanes)
    if repeat == repeats - 1:
        own = out
    elif count is None:
        own = np.asarray(_pair_reduce_sum(dst, src, repeat + 1, mask, dst_rep_stride,
                                          src_blk_stride, src_rep_stride, **modes))
    else:
        own = np.asarray(_pair_reduce_sum(dst, src, repeat_time, cut, dst_rep_stride,
                                          src_blk_stride, src_rep_stride, is_set_mask=True,
                                          mask_state=mask_state, config=config))
    whole = plan(repeats, count)
    run = _Run(fmt, src_a, dst_a, out, active_rows(active, repeats, count), whole.reads,
               whole.writes, own, plan(repeat + 1, cut).writes[repeat])
    rows = max(_overview_rows(len(src_a), fmt), _overview_rows(len(dst_a), fmt))
    height = 5.6 + 0.42 * rows
    canvas = Canvas(13, height)
    top = 0.42 * rows / height
    ax_src = canvas.axes((0.09, 1 - top - 0.75 / height, 0.38, top))
    ax_dst = canvas.axes((0.59, 1 - top - 0.75 / height, 0.38, top))
    _overview(canvas, run, ax_src=ax_src, ax_dst=ax_dst)
    _detail(canvas, run, repeat)
    if count is not None:
        masked = f"Counter mode, {count} elements over {repeats} repeats"
    else:
        masked = f"{int(active.sum())} of {fmt.lanes} elements active" + (
            "" if is_set_mask else " (the mask state's)")
    canvas.figure.suptitle(
        f"PairReduceSum<{fmt.name}{'' if is_set_mask else ', false'}>(dst, src, "
        f"repeatTime={repeat_time}, mask, dstRepStride={dst_rep_stride}, "
        f"srcBlkStride={src_blk_stride}, srcRepStride={src_rep_stride}): {masked}",
        fontsize=11)
    canvas.legend([("read / written by a repeat (its colour)", {"facecolor": blend("C0", 0.55)}),
                   ("masked element", {"facecolor": MASKED, "hatch": "///"}),
                   ("both masked: dst keeps its value", {"facecolor": "white", "hatch": "xx"}),
                   ("written, then overwritten by a later repeat",
                    {"facecolor": ACTIVE, "hatch": "..", "linestyle": ":"}),
                   ("not addressed", {"facecolor": "white"})])
    return canvas.flush()


def _overview_rows(n: int, fmt: Format) -> int:
    return min(_ROWS_SHOWN, -(-n // (8 * fmt.per_block)))


def _overview(canvas: Canvas, run: _Run, *, ax_src: Axes, ax_dst: Axes) -> None:
    """Blocks of src labelled by the (repeat, DataBlock) reading them, blocks of dst by the
    (repeat, outputs) landing there."""
    epb = run.fmt.per_block
    src_blocks: dict[int, list] = {}
    for r in range(run.reads.shape[0]):
        for k in range(8):
            on = bool(run.active[r, k * epb:(k + 1) * epb].any())
            src_blocks.setdefault(int(run.reads[r, k * epb]) // epb, []).append((r, k, on))
    dst_blocks: dict[int, list] = {}
    for r in range(run.writes.shape[0]):
        for k in np.nonzero(run.writes[r] >= 0)[0]:
            dst_blocks.setdefault(int(run.writes[r, k]) // epb, []).append((r, int(k)))
    for ax, blocks, n, name in ((ax_src, src_blocks, len(run.src), "src"),
                                (ax_dst, dst_blocks, len(run.dst), "dst")):
        rows = _overview_rows(n, run.fmt)
        ax.set_xlim(0, 8)
        ax.set_ylim(rows, 0)
        for b in range(rows * 8):
            row, col = divmod(b, 8)
            entries = blocks.get(b, [])
            face, hatch, text = "white", None, ""
            if b * epb >= n:
                continue  # past the end of the tensor
            if entries and name == "src":
                face = (blend(palette(entries[0][0]), 0.55) if any(e[2] for e in entries)
                        else MASKED)
                hatch = "///" if not any(e[2] for e in entries) else None
                names = [f"r{r} b{k}" for r, k, _ in entries]
                text = "\n".join(names if len(names) <= 3 else names[:2] + [f"+{len(names) - 2}"])
            elif entries:
                face = blend(palette(entries[-1][0]), 0.55)
                r = entries[-1][0]
                ks = [k for rr, k in entries if rr == r]
                text = f"r{r}\nk{_ranges(ks)}"
            canvas.cell(ax, col, row, 1, 1, face=face, hatch=hatch)
            canvas.put_text(ax, col + 0.5, row + 0.5,
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
    for a, b in zip(ks, ks[1:] + [None], strict=True):
        if b != a + 1:
            runs.append(f"{start}-{a}" if a > start else str(start))
            start = b
    return ",".join(runs)


def _detail(canvas: Canvas, run: _Run, repeat: int) -> None:
    """Repeat ``repeat``'s 8 DataBlocks, each pair's output under the two elements it adds."""
    fmt, active, reads, writes = run.fmt, run.active[repeat], run.reads[repeat], \
        run.writes[repeat]
    epb, half = fmt.per_block, fmt.per_block // 2
    values = element_values(run.src[np.where(active, reads, 0)], fmt)[:, 0]
    height = canvas.figure.get_figheight()
    for side in range(2):
        ax = canvas.axes((0.09 + 0.5 * side, 0.6 / height, 0.38, 3.6 / height))
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
                canvas.cell(ax, j, y, 1, 1, face=blend(palette(repeat), 0.7) if on else MASKED,
                            hatch=None if on else "///", edge="#555555" if on else MASKED_EDGE)
                canvas.put_text(ax, j + 0.5, y + 0.5, labels(values[e], fmt) if on else ["off"],
                                1, 1, fontsize=7, color="black" if on else "#777777", required=True)
            for p in range(half):
                k = k_block * half + p
                _output(canvas, ax, run, k=k, target=int(writes[k]), x=2 * p, y=y + 1.1)
            outputs = slice(k_block * half, (k_block + 1) * half)
            targets = [int(t) for t in run.own_writes[outputs] if t >= 0]
            where = f"dst[{min(targets)}:{max(targets) + 1}]" if targets else "nothing written"
            if targets and not (writes[outputs] >= 0).any():
                where += ", overwritten later"
            ax.text(-0.2, y + 1.6, f"→ {where}", ha="right", va="center", fontsize=7)
        if side == 0:
            ax.set_title(f"repeat {repeat}: its 8 DataBlocks; under each pair a[2k], a[2k+1] the "
                         f"output k = a[2k] + a[2k+1] (one rounding) as dst now holds it",
                         fontsize=9, loc="left", x=-0.2)


def _output(canvas: Canvas, ax: Axes, run: _Run, *, k: int, target: int, x: float,
            y: float) -> None:
    """Output ``k`` of a repeat at (x, y): its value in dst, or why nothing was written."""
    own_target = int(run.own_writes[k])
    if target < 0 and own_target >= 0:  # written, then overwritten: the value it wrote
        value = element_values(run.own[own_target:own_target + 1], run.fmt)[0, 0]
        canvas.cell(ax, x, y, 2, 1, face=ACTIVE, hatch="..", edge="#555555", lw=0.9)
        canvas.put_text(ax, x + 1, y + 0.5, labels(value, run.fmt), 2, 1, fontsize=7,
                        gid=f"overwritten:{k}:{own_target}", required=True,
                        bbox={"facecolor": "white", "edgecolor": "none", "pad": 0.4})
        return
    if target < 0:  # both elements masked: dst keeps its value
        text = "kept"
        canvas.cell(ax, x, y, 2, 1, face="white", hatch="xx", edge="#c8c8c8")
        canvas.cell(ax, x, y, 2, 1, face="none", edge="#555555", zorder=1.5)
        canvas.put_text(ax, x + 1, y + 0.5, [text, text[:4]], 2, 1, fontsize=7, color="#333333",
                        bbox={"facecolor": "white", "edgecolor": "none", "pad": 0.6})
        return
    value = element_values(run.out[target:target + 1], run.fmt)[0, 0]
    canvas.cell(ax, x, y, 2, 1, face=ACTIVE, lw=0.9)
    canvas.put_text(ax, x + 1, y + 0.5, labels(value, run.fmt), 2, 1, fontsize=7,
                    gid=f"out:{k}:{target}", required=True)
