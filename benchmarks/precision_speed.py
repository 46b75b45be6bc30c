"""Speed of ``precision.exact_sum`` and every order of ``precision.sum`` against ``np.sum``
(issue 17): each is timed on the same (rows, n) data as ``np.sum(x, axis=-1)`` on x in its
storage dtype (float16, ml_dtypes bfloat16, float32), measured in the same run; the target is
<= 3x np.sum. Concrete NumPy inputs take the host paths; each result is checked bit for bit
against the JAX path (the same call under ``jax.jit``) on the first rows, and between the two
layouts below on all of them.

    python benchmarks/precision_speed.py [--cases half:20000x4096 bfloat16_t:4096x4096
        float:4096x4096] [--repeats 3] [--check-rows 64] [--jax] [--out DIR]

``--out DIR`` writes ``DIR/precision_speed-<backend>.json`` (the issue's figures live in
``benchmarks/results/issue17/``). Times are the best of ``--repeats`` calls after one warm-up
call (which compiles the limb path for rows the float64 path cannot take). Each call is timed
on two copies of the data: as NumPy allocates it (16 bytes past a 64-byte boundary) and
64-byte aligned (as from a file map or another library), alternating with ``np.sum`` on the
same copy, so that both figures of a ratio come from the same minutes of a shared machine;
the worse layout is the figure. Lines read ``[layout call/np.sum ms, ...]``.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import platform
import sys
import time

import jax
import jax.numpy as jnp
import numpy as np

from ascjax import precision
from ascjax._src import native
from ascjax._src.cli import _int_in  # the CLI's own range-checked int
from ascjax._src.io.binio import aligned_empty

DEFAULT_CASES = ("half:20000x4096", "bfloat16_t:4096x4096", "float:4096x4096")
TARGET = 3.0


def best_of(fn, repeats: int) -> float:
    """The fastest of ``repeats`` calls (seconds): the machine's noise only slows a run."""
    return best_of_each([fn], repeats)[0]


def best_of_each(fns, repeats: int) -> list[float]:
    """The fastest of ``repeats`` calls of each of ``fns`` (seconds), the calls alternated:
    on a shared machine the speed drifts by 2x within minutes, and a ratio of two figures
    taken at different times would carry that drift."""
    best = [float("inf")] * len(fns)
    for _ in range(repeats):
        for i, fn in enumerate(fns):
            start = time.perf_counter()
            jax.block_until_ready(fn())
            best[i] = min(best[i], time.perf_counter() - start)
    return best


def parse_case(text: str) -> tuple[str, int, int]:
    """``FORMAT:ROWSxN`` (argparse type): a format the study sums and two positive sizes."""
    name, _, size = text.partition(":")
    rows, _, n = size.partition("x")
    if name not in precision.SUM_FORMATS:
        raise argparse.ArgumentTypeError(f"{text!r}: format {name!r} is not one of "
                                         f"{', '.join(precision.SUM_FORMATS)}")
    if not (rows.isdigit() and n.isdigit() and int(rows) > 0 and int(n) > 0):
        raise argparse.ArgumentTypeError(f"{text!r} is not FORMAT:ROWSxN with positive ROWS "
                                         f"and N, e.g. half:20000x4096")
    return name, int(rows), int(n)


def rows_of(name: str, rows: int, n: int) -> np.ndarray:
    """Standard normal data in the format's storage dtype (what np.sum is timed on)."""
    rng = np.random.default_rng(17)
    dtype = precision.make_inputs("normal", 1, 1, name).dtype
    x = np.empty((rows, n), dtype)
    step = max(1, (1 << 22) // n)
    for start in range(0, rows, step):  # drawn in blocks: float64 draws of it all need GiBs
        x[start:start + step] = rng.standard_normal((min(step, rows - start), n)).astype(dtype)
    return x


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", nargs="+", type=parse_case,
                        default=[parse_case(c) for c in DEFAULT_CASES],
                        help=f"FORMAT:ROWSxN (default {' '.join(DEFAULT_CASES)})")
    parser.add_argument("--repeats", type=_int_in(1, 1000), default=3,
                        help="timed calls of each, the best reported (default 3)")
    parser.add_argument("--check-rows", type=int, default=64,
                        help="rows compared bit for bit with the JAX path")
    parser.add_argument("--jax", action="store_true",
                        help="also time the JAX path (the call under jax.jit): the speed-up")
    parser.add_argument("--out", type=pathlib.Path, default=None)
    args = parser.parse_args(argv)

    print(f"{platform.processor() or platform.machine()}, {jax.default_backend()} backend, "
          f"native kernels {'on' if native.enabled() else 'off'}; "
          f"best of {args.repeats}; baseline np.sum(x, axis=-1) on x in its storage dtype, "
          f"timed alternating with each call; a call's figure is the worse of NumPy's layout "
          f"and 64-byte aligned")
    results = []
    mismatches = 0
    for name, rows, n in args.cases:
        x = rows_of(name, rows, n)
        aligned = aligned_empty(x.size, x.dtype).reshape(x.shape)
        aligned[...] = x
        layouts = {"numpy": x, "aligned": aligned}
        base = best_of(lambda x=x: np.sum(x, axis=-1), args.repeats)
        print(f"\n{name}: {rows} x {n} ({x.dtype}); np.sum {base * 1e3:.1f} ms")
        calls = [("exact_sum", precision.exact_sum, lambda v: precision.exact_sum(v))]
        calls += [(f"sum order={o}", lambda v, o=o: precision.sum(v, order=o),
                   lambda v, o=o: precision.sum(v, order=o)) for o in precision.ORDERS]
        head = x[:args.check_rows]
        for label, fn, traced in calls:
            same = bool(np.array_equal(np.asarray(fn(head)).view(np.uint8),
                                       np.asarray(jax.jit(traced)(jnp.asarray(head)))
                                       .view(np.uint8)))
            by_layout, bases, outs = {}, {}, []
            for layout, data in layouts.items():
                outs.append(np.asarray(fn(data)).view(np.uint8))  # and the warm-up
                by_layout[layout], bases[layout] = best_of_each(
                    [lambda fn=fn, v=data: fn(v), lambda v=data: np.sum(v, axis=-1)],
                    args.repeats)
            same_layouts = bool(np.array_equal(*outs))  # the whole data
            mismatches += not (same and same_layouts)
            slowest = max(layouts, key=lambda layout: by_layout[layout] / bases[layout])
            seconds, ratio = by_layout[slowest], by_layout[slowest] / bases[slowest]
            verdict = "meets" if ratio <= TARGET else "misses"
            row = {"format": name, "rows": rows, "n": n, "call": label, "seconds": seconds,
                   "seconds_by_layout": by_layout, "np_sum_seconds_by_layout": bases,
                   "np_sum_seconds": bases[slowest], "ratio": ratio,
                   "bits_match_jax_path": same, "bits_match_across_layouts": same_layouts}
            jax_note = ""
            if args.jax:
                jitted, device_x = jax.jit(traced), jnp.asarray(x)
                jax.block_until_ready(jitted(device_x))  # compile
                row["jax_seconds"] = best_of(lambda f=jitted, v=device_x: f(v), args.repeats)
                jax_note = f"  (JAX path x{row['jax_seconds'] / base:.1f})"
            layout_note = ", ".join(f"{layout} {by_layout[layout] * 1e3:.1f}/"
                                    f"{bases[layout] * 1e3:.1f}" for layout in layouts)
            print(f"  {label:<32} {seconds * 1e3:9.1f} ms  x{ratio:6.2f} np.sum  "
                  f"({verdict} <= {TARGET:g}x){'' if same else '  BITS DIFFER from JAX path'}"
                  f"{'' if same_layouts else '  BITS DIFFER between layouts'}"
                  f"  [{layout_note} ms]{jax_note}")
            results.append(row)
    if args.out is not None:
        args.out.mkdir(parents=True, exist_ok=True)
        path = args.out / f"precision_speed-{jax.default_backend()}.json"
        path.write_text(json.dumps({"machine": platform.machine(), "repeats": args.repeats,
                                    "native_kernels": native.enabled(),
                                    "target_ratio": TARGET, "rows": results}, indent=1))
        print(f"\nwrote {path}")
    return 1 if mismatches else 0


if __name__ == "__main__":
    sys.exit(main())
