"""The tree-versus-sequential study behind ``ascjax study``: workloads, measurements, reports.

For each format, size n and input distribution, ``trials`` random vectors are summed along
every order; each result is compared with the exact sum (``exact_sum_float64``) and with
Higham's bound for its order. ``write_study`` turns the rows into a Markdown table, a CSV file
and one PNG plot per format.
"""

from __future__ import annotations

import csv
import dataclasses
import math
import os
import re
import zlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..formats import resolve
from ..io.progress import Progress
from ..isa.lanes import check_int
from ..isa.masks import create_mask
from ..isa.reduce_register import reduce_sum_datablock
from . import precision
from .orders import ORDERS

DISTRIBUTIONS = {
    "uniform": "uniform on [0, 1)",
    "normal": "standard normal",
    "ones": "all ones",
    "cancelling": "n/2 standard normal values and their negatives, shuffled (exact sum 0)",
}
DEFAULT_FORMATS = ("half", "bfloat16_t", "float")
DEFAULT_SIZES = (16, 256, 4096, 65536)
DEFAULT_DISTRIBUTIONS = tuple(DISTRIBUTIONS)
DEFAULT_TRIALS = 16
_UNIFORM = re.compile(r"^uniform\(\s*([-+0-9.eE]+)\s*,\s*([-+0-9.eE]+)\s*\)$")


def make_inputs(distribution: str, n: int, trials: int, dtype: Any, *, seed: int = 0
                ) -> np.ndarray:
    """``trials`` input vectors ``(trials, n)`` in ``dtype``'s storage dtype.

    ``distribution``: one of ``DISTRIBUTIONS`` or ``"uniform(a, b)"``. Values are drawn in
    float64 and rounded once (``to_format``); the stream depends only on (seed, distribution,
    n).
    """
    fmt = resolve(dtype, where="make_inputs")
    rng = np.random.default_rng([seed, zlib.crc32(distribution.encode()), n])
    match = _UNIFORM.match(distribution)
    if match:
        low, high = float(match[1]), float(match[2])
        if not low < high:
            raise ValueError(f"make_inputs: {distribution!r} needs a < b")
        x = rng.uniform(low, high, (trials, n))
    elif distribution == "uniform":
        x = rng.uniform(0.0, 1.0, (trials, n))
    elif distribution == "normal":
        x = rng.standard_normal((trials, n))
    elif distribution == "ones":
        x = np.ones((trials, n))
    elif distribution == "cancelling":
        v = precision.to_format(rng.standard_normal((trials, n // 2)), fmt).astype(np.float64)
        x = np.concatenate([v, -v, np.zeros((trials, n % 2))], axis=1)
        x = rng.permuted(x, axis=1)
    else:
        raise ValueError(f"make_inputs: unknown distribution {distribution!r}; valid: "
                         f"{list(DISTRIBUTIONS)} or 'uniform(a, b)'")
    return precision.to_format(x, fmt)


def measure(x: Any, *, dtype: Any = None, orders: Sequence[str] = ORDERS) -> dict:
    """Every order's sums of ``x`` (trials, n) with their errors and bounds.

    Returns ``{"exact": float64 (trials,), "sum_abs": float64 (trials,), order: {"value",
    "abs", "rel", "ulps", "bound", "correctly_rounded"}}`` (per-trial arrays).
    """
    fmt = resolve(np.asarray(x).dtype if dtype is None else dtype, where="measure")
    x = np.asarray(x).astype(fmt.storage_dtype)
    rounded, exact = precision.exact_sums(x, dtype=fmt.name)
    out: dict = {"exact": exact, "sum_abs": np.abs(x.astype(np.float64)).sum(axis=-1)}
    for order in orders:
        value = np.asarray(precision.sum(x, dtype=fmt.name, order=order))
        metrics = precision.errors(value, exact, dtype=fmt.name)
        bound = precision.error_bound(x, dtype=fmt.name, order=order, exact_value=exact)
        same = _bits(value) == _bits(rounded)
        out[order] = dict(metrics, value=value, bound=bound, correctly_rounded=same)
    return out


def _bits(a: np.ndarray) -> np.ndarray:
    return a.view(f"uint{a.dtype.itemsize * 8}")


@dataclasses.dataclass(frozen=True)
class Study:
    """The measured rows (one per format, distribution, n, order) and the settings."""

    rows: list
    formats: tuple
    sizes: tuple
    distributions: tuple
    orders: tuple
    trials: int
    seed: int


# Peak memory per summed element (trials x distributions x n) of one (format, n) cell: about
# 72 bytes for half and 95 for float measured (float64 inputs, carriers, every order's levels,
# the exact sums); 128 leaves room.
BYTES_PER_ELEMENT = 128


def available_memory() -> int | None:
    """Bytes this machine can still give (MemAvailable), or None where it cannot tell."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def _size(nbytes: float) -> str:
    """A memory size as the error shows it: GiB, TiB from 1024 GiB on."""
    gib = nbytes / 2**30
    return f"{gib / 1024:.1f} TiB" if gib >= 1024 else f"{gib:.1f} GiB"


def check_study(*, formats: Sequence[str], sizes: Sequence[int], distributions: Sequence[str],
                trials: int, orders: Sequence[str]) -> tuple:
    """Every setting checked before any work (the format names are returned): known formats
    that can be summed, sizes and trials in range, known distributions and orders, and the
    largest cell's memory against what this machine has available."""
    where = "study"
    names = tuple(resolve(f, where=where, arg="formats").name for f in formats)
    for name in names:
        if name not in precision.SUM_FORMATS:
            raise ValueError(f"{where}: format {name!r} cannot be summed here; valid: "
                             f"{list(precision.SUM_FORMATS)}")
    check_int(trials, 1, 1 << 31, where=where, arg="trials")
    for n in sizes:
        check_int(n, 1, 1 << 31, where=where, arg="sizes (each n)")
    for order in orders:
        if order not in ORDERS:
            raise ValueError(f"{where}: unknown order {order!r}; valid: {list(ORDERS)}")
    for dist in distributions:
        make_inputs(dist, 2, 1, "float")  # raises on an unknown name, cheaply
    if not (names and sizes and distributions and orders):
        raise ValueError(f"{where}: nothing to measure (formats, sizes, distributions and "
                         f"orders must each name at least one)")
    need = trials * len(distributions) * max(sizes) * BYTES_PER_ELEMENT
    have = available_memory()
    if have is not None and need > have:
        raise MemoryError(f"{where}: n={max(sizes)} needs about {_size(need)} ({trials} trials "
                          f"x {len(distributions)} distributions x n x ~{BYTES_PER_ELEMENT} "
                          f"bytes), more than the {_size(have)} this machine has available; "
                          f"lower --sizes or --trials")
    return names


def prepare_output(out: str | Path) -> Path:
    """The output directory, created and proven writable before any work is done."""
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise NotADirectoryError(f"study: --out {str(out)!r} exists and is not a directory")
    try:
        out.mkdir(parents=True, exist_ok=True)
        probe = out / f".study-write-test-{os.getpid()}"
        probe.write_bytes(b"")
        probe.unlink()
    except OSError as error:
        raise OSError(f"study: cannot write into --out {str(out)!r}: "
                      f"{error.strerror or error}") from None
    return out


def run_study(*, formats: Sequence[str] = DEFAULT_FORMATS, sizes: Sequence[int] = DEFAULT_SIZES,
              distributions: Sequence[str] = DEFAULT_DISTRIBUTIONS, trials: int = DEFAULT_TRIALS,
              seed: int = 0, orders: Sequence[str] = ORDERS, progress: bool = False) -> Study:
    """Measure every (format, n, distribution, order) cell over ``trials`` random inputs.

    Each row holds the maxima and means over trials of the absolute, relative and ULP errors,
    the largest error divided by sum|x| next to Higham's bound in the same unit
    (``higham_gamma``), whether every trial met its bound, and the share of trials that gave
    the correctly rounded sum.
    """
    formats = check_study(formats=formats, sizes=sizes, distributions=distributions,
                          trials=trials, orders=orders)
    bar = Progress(len(formats) * len(sizes), "study", enabled=progress, unit="cells")
    rows = []
    for fmt in formats:
        for n in sizes:
            x = np.concatenate([make_inputs(d, n, trials, fmt, seed=seed) for d in distributions])
            m = measure(x, dtype=fmt, orders=orders)
            for k, dist in enumerate(distributions):
                part = slice(k * trials, (k + 1) * trials)
                sum_abs = m["sum_abs"][part]
                for order in orders:
                    r = {key: v[part] for key, v in m[order].items()}
                    with np.errstate(invalid="ignore", divide="ignore"):
                        scaled = np.where(r["abs"] == 0, 0.0, r["abs"] / sum_abs)
                    rows.append({
                        "format": fmt, "distribution": dist, "n": n, "order": order,
                        "trials": trials,
                        "max_abs_err": float(np.max(r["abs"])),
                        "mean_rel_err": float(np.mean(r["rel"])),
                        "max_rel_err": float(np.max(r["rel"])),
                        "mean_ulps": float(np.mean(r["ulps"])),
                        "max_ulps": float(np.max(r["ulps"])),
                        "max_err_over_sum_abs": float(np.max(scaled)),
                        "bound_over_sum_abs": precision.higham_gamma(order, n, fmt),
                        "within_bound": bool(np.all(r["abs"] <= r["bound"])),
                        "correctly_rounded": float(np.mean(r["correctly_rounded"])),
                        "mean_exact": float(np.mean(m["exact"][part])),
                        "exact_is_zero": bool(np.all(m["exact"][part] == 0)),
                    })
            bar.update(note=f"{fmt} n={n}")
    bar.close()
    return Study(rows, formats, tuple(sizes), tuple(distributions), tuple(orders), trials, seed)


# --- reports --------------------------------------------------------------------------------

def _fmt(v: float) -> str:
    if v == 0:
        return "0"
    if math.isinf(v):
        return "inf"
    return f"{v:.1e}"


ORDER_DESCRIPTIONS = {
    "sequential": "((x0 + x1) + x2) + ..., every add rounded to the format",
    "adjacent_tree": "adjacent pairs level by level (the hardware's DataBlock / register "
                     "tree), every add rounded",
    "repeat_sequential": "ReduceSum method 1: each 256-byte repeat by the adjacent-pair tree, "
                         "the repeat sums added in order",
    "repeat_tree": "ReduceSum method 2: the repeat sums by an adjacent-pair tree (padded "
                   "with +0)",
    "repeat_vector_merge": "ReduceSum method 3: the repeats merged lane by lane in order, then "
                           "the tree over the merged register",
    "numpy_pairwise": "np.sum: NumPy's pairwise sum (blocks of 128, 8 accumulators) in "
                      "float32, rounded once to the format",
    "kahan": "Kahan's compensated sum in the format",
}

COLUMNS = (
    ("**error / sum|x| (bound)**: the largest |computed - exact| over the trials divided by "
    "sum|x| (so cells of different n compare), then, in brackets, Higham's bound in the same "
    "unit: gamma_k = k u / (1 - k u) with u the format's unit roundoff and k the most adds on "
    "one path of the order's tree (kahan: 2u, first order only). `inf` as a bound means "
    "k u >= 1: the bound says nothing (sequential sums of 2048 or more halves). `inf` as an "
    "error means the computed sum overflowed to inf. A `!` marks a cell where some trial "
    "exceeded its bound."),
    ("**max ULPs (correctly rounded)**: the largest error in units in the last place of the "
    "format at the exact sum (n/a where every exact sum is 0), then the share of trials whose "
    "result equals the exact sum rounded once to the format. Where the exact sum itself is "
    "beyond the format's largest finite value, the correctly rounded result is inf: such a "
    "cell shows 100% next to an infinite error, and that is not a contradiction."),
)


def _distribution_text(dist: str) -> str:
    match = _UNIFORM.match(dist)
    if match:
        return f"uniform on [{match[1]}, {match[2]})"
    return DISTRIBUTIONS.get(dist, dist)


def _rel(a: float, b: float) -> str:
    """How many times larger a is than b, in words."""
    if b == 0:
        return "infinitely" if a else "equally"
    return f"{a / b:.1f}x"


def findings(study: Study) -> list[str]:
    """The study's findings in words, each with the numbers behind it (Markdown bullets)."""
    by_key = {(r["format"], r["distribution"], r["n"], r["order"]): r for r in study.rows}
    n_max = max(study.sizes)
    lines = []
    for fmt in study.formats:
        rows = [r for r in study.rows if r["format"] == fmt]
        overflow = sorted({(r["distribution"], r["n"]) for r in rows
                           if math.isinf(r["max_err_over_sum_abs"])})
        for dist, n in overflow:
            orders = [o for o in study.orders
                      if math.isinf(by_key[fmt, dist, n, o]["max_err_over_sum_abs"])]
            exact = by_key[fmt, dist, n, orders[0]]["mean_exact"]
            lines.append(f"- **{fmt}, {dist}, n = {n}: overflow.** {', '.join(orders)} "
                         f"returned inf (mean exact sum {exact:.6g}, beyond the format's "
                         f"largest finite value where every order overflows); the error is "
                         f"infinite, not a failure of the order.")
        for dist in study.distributions:
            if ("sequential" not in study.orders or "adjacent_tree" not in study.orders
                    or (dist, n_max) in overflow):
                continue
            seq = by_key[fmt, dist, n_max, "sequential"]["max_err_over_sum_abs"]
            tree = by_key[fmt, dist, n_max, "adjacent_tree"]["max_err_over_sum_abs"]
            if seq == tree == 0:
                continue
            if math.isinf(seq) or math.isinf(tree):
                continue
            if tree == 0:
                verdict = "the tree is exact"
            else:
                better = "tree" if tree < seq else "sequential sum"
                verdict = f"the {better} is {_rel(max(seq, tree), min(seq, tree))} more accurate"
            if seq > 0.1:  # a running sum whose ULP outgrew the addends: adds are lost
                verdict += (" (the sequential sum stagnates: once its running sum's ULP exceeds "
                            "twice an addend, adding it changes nothing)")
            lines.append(f"- **{fmt}, {dist}, n = {n_max}:** the hardware's adjacent-pair "
                         f"tree's largest error is {_fmt(tree)} of sum|x|, the sequential "
                         f"sum's {_fmt(seq)}: {verdict}.")
        for dist in study.distributions:
            cells = {o: by_key[fmt, dist, n_max, o]["max_err_over_sum_abs"]
                     for o in study.orders}
            finite = {o: e for o, e in cells.items() if not math.isinf(e)}
            if len(finite) > 1 and len(set(finite.values())) > 1:
                best = min(finite, key=finite.get)
                worst = max(finite, key=finite.get)
                lines.append(f"- {fmt}, {dist}, n = {n_max}: most accurate {best} "
                             f"({_fmt(finite[best])}), least {worst} ({_fmt(finite[worst])}).")
        broken = [r for r in rows if not r["within_bound"]
                  and not math.isinf(r["max_err_over_sum_abs"])]
        if broken:
            listed = "; ".join(f"{r['order']} on {r['distribution']}, n = {r['n']}"
                               for r in broken)
            lines.append(f"- **{fmt}: bound exceeded** without an overflow: {listed}.")
        else:
            lines.append(f"- {fmt}: every finite error lies within Higham's bound for its "
                         f"order.")
    return lines


def markdown(study: Study) -> str:
    """The study as Markdown: findings in words, the definitions, then per format the error /
    sum|x| against Higham's bound and the ULP errors."""
    lines = ["# Summation error: hardware trees vs sequential vs others", "",
             (f"{study.trials} random inputs (trials) per cell, seed {study.seed}; each sum is "
             f"compared with the exact sum (computed without rounding)."), "",
             "## Findings", "", *findings(study), "",
             "## What was measured", "", ("Distributions (values drawn in float64, then "
             "rounded once to the format):"), ""]
    lines += [f"- `{d}`: {_distribution_text(d)}" for d in study.distributions]
    lines += ["", "Orders (the columns):", ""]
    lines += [f"- `{o}`: {ORDER_DESCRIPTIONS[o]}" for o in study.orders]
    lines += ["", "Tables:", ""] + [f"- {c}" for c in COLUMNS] + [""]
    by_key = {(r["format"], r["distribution"], r["n"], r["order"]): r for r in study.rows}
    head = "| distribution | n | " + " | ".join(study.orders) + " |"
    rule = "|---|---|" + "---|" * len(study.orders)
    for fmt in study.formats:
        for title, cell in (
                ("error / sum|x| (bound)", lambda r: f"{_fmt(r['max_err_over_sum_abs'])} "
                 f"({_fmt(r['bound_over_sum_abs'])}){'' if r['within_bound'] else ' !'}"),
                ("max ULPs (correctly rounded)", lambda r: (
                    "n/a" if r["exact_is_zero"] else _fmt(r["max_ulps"]))
                 + f" ({100 * r['correctly_rounded']:.0f}%)")):
            lines += [f"## {fmt}: {title}", "", head, rule]
            for dist in study.distributions:
                for n in study.sizes:
                    cells = [cell(by_key[fmt, dist, n, o]) for o in study.orders]
                    lines.append(f"| {dist} | {n} | " + " | ".join(cells) + " |")
            lines.append("")
    return "\n".join(lines)


def plot(study: Study, fmt: str) -> Any:
    """A matplotlib Figure for one format: one panel per distribution, the largest error /
    sum|x| against n for every order (solid), Higham's bound for it (dashed, same colour).
    Exact results sit on the bottom edge, below every nonzero error, overflows (inf) on the top
    edge; each order is shifted slightly along n so coinciding orders stay visible."""
    from matplotlib.figure import Figure  # no pyplot: no GUI backend, nothing to close

    fmt = resolve(fmt, where="plot").name
    u = precision.unit_roundoff(fmt)
    errors = [r["max_err_over_sum_abs"] for r in study.rows if r["format"] == fmt]
    finite = [e for e in errors if 0 < e < math.inf]
    # Below every nonzero error (none is drawn as exact) and above every finite one.
    floor = min([u * u / 16] + [e / 4 for e in finite])
    ceiling = max([4.0] + [e * 4 for e in finite])
    dists = study.distributions
    cols = min(len(dists), 2)
    rows = -(-len(dists) // cols)
    fig = Figure(figsize=(4.8 * cols, 3.4 * rows))
    axes = fig.subplots(rows, cols, squeeze=False)
    by_key = {(r["format"], r["distribution"], r["n"], r["order"]): r for r in study.rows}
    for ax, dist in zip(axes.ravel(), dists, strict=True):
        for k, order in enumerate(study.orders):
            color = f"C{k}"
            ns = list(study.sizes)
            err = [by_key[fmt, dist, n, order]["max_err_over_sum_abs"] for n in ns]
            err = np.clip(np.nan_to_num(err, nan=ceiling, posinf=ceiling), floor, ceiling)
            bound = [by_key[fmt, dist, n, order]["bound_over_sum_abs"] for n in ns]
            # Orders often coincide (adjacent_tree and datablock sums on powers of two): each
            # order is shifted a little along n, with thinner lines and smaller markers for
            # later orders, so every one stays visible.
            shift = 2.0 ** (0.05 * (k - (len(study.orders) - 1) / 2))
            xs = [n * shift for n in ns]
            ax.plot(xs, err, "-", marker="osD^vxP"[k % 7], color=color, label=order,
                    lw=2.4 - 0.3 * k, ms=6 - 0.7 * k, alpha=0.85)
            ax.plot(xs, np.clip(bound, floor, ceiling), "--", color=color, lw=0.8)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_ylim(floor / 2, ceiling * 2)
        for level, text in ((floor, "exact (0)"), (ceiling, "overflow (inf)")):  # the edges
            ax.axhline(level, color="0.8", lw=0.6, ls=":", zorder=0)
            ax.annotate(text, (0.01, level), xycoords=("axes fraction", "data"), fontsize=6,
                        color="0.45", va="bottom")
        ax.set_title(f"{fmt}, {dist}", fontsize=9)
        ax.set_xlabel("n")
        ax.set_ylabel("max |error| / sum|x|")
    for ax in axes.ravel()[len(dists):]:
        ax.set_axis_off()
    axes[0, 0].legend(fontsize=7, title="solid: measured, dashed: bound", title_fontsize=7)
    fig.suptitle(f"{fmt}: largest error over {study.trials} trials against Higham's bound\n"
                 "(exact (0) on the bottom edge, below every nonzero error; overflow on the top "
                 "edge; orders shifted slightly along n where they coincide)", fontsize=9)
    fig.tight_layout()
    return fig


def write_study(study: Study, out: str | Path) -> list[Path]:
    """Write ``study.md``, ``study.csv`` and ``error_vs_n_<format>.png`` under ``out``."""
    out = prepare_output(out)
    paths = [out / "study.md", out / "study.csv"]
    paths[0].write_text(markdown(study) + "\n")
    with paths[1].open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(study.rows[0]))
        writer.writeheader()
        writer.writerows(study.rows)
    for fmt in study.formats:
        path = out / f"error_vs_n_{fmt}.png"
        plot(study, fmt).savefig(path, dpi=110)
        paths.append(path)
    return paths


def golden_mismatch(distribution: str, dtype: Any, *, blocks: int = 4096, seed: int = 0
                    ) -> float:
    """Share of DataBlocks whose NumPy golden differs in bits from the hardware's sum.

    A sample ``gen_data.py`` writes its golden as ``np.sum`` over each 32-byte DataBlock;
    ``reduce_sum_datablock`` sums the block by an adjacent-pair tree, rounding every add to
    the format. ``dtype``: half or float (the instruction's float types).
    """
    fmt = resolve(dtype, where="golden_mismatch")
    if fmt.name not in ("half", "float"):
        raise TypeError(f"golden_mismatch: reduce_sum_datablock sums half or float, not {fmt.name}")
    per_register = 8 * fmt.per_block
    registers = -(-blocks // 8)
    x = make_inputs(distribution, per_register, registers, fmt, seed=seed)
    golden = np.sum(x.reshape(registers, 8, fmt.per_block), axis=-1)
    hardware = np.asarray(reduce_sum_datablock(x, create_mask("PAT_ALL", fmt.name)))
    hardware = hardware[:, :8]
    return float(np.mean((_bits(golden) != _bits(hardware)).ravel()[:blocks]))
