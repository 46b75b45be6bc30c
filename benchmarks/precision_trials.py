"""Time 10^5 trials of n = 4096 half sums per order (``ascjax.precision.sum``), the exact sum
and the error metrics, against ``np.sum`` over the same data measured in the same run.

Not a test: run ``python benchmarks/precision_trials.py [--trials 100000] [--n 4096]
[--chunk 12500]``. Each order is timed twice per chunk size: the first call includes the JIT
compile, the second is the steady state; ratios are steady-state seconds over np.sum's.
"""

from __future__ import annotations

import argparse
import sys
import time

import jax
import numpy as np

from ascjax import precision
from ascjax._src.cli import _int_in  # the CLI's own range-checked int


def timed(fn, chunks) -> float:
    start = time.perf_counter()
    for chunk in chunks:
        jax.block_until_ready(fn(chunk))
    return time.perf_counter() - start


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--trials", type=_int_in(1, 1 << 31), default=100_000,
                        help="trials (rows) in all (default 100000)")
    parser.add_argument("--n", type=_int_in(1, 1 << 31), default=4096,
                        help="elements a trial (default 4096)")
    parser.add_argument("--chunk", type=_int_in(1, 1 << 31), default=12_500,
                        help="trials per call (default 12500)")
    parser.add_argument("--dtype", default="half", choices=precision.SUM_FORMATS,
                        help="the format summed (default half)")
    parser.add_argument("--repeats", type=_int_in(1, 100), default=3,
                        help="timed passes over the chunks once compiled, the best reported "
                             "(default 3)")
    args = parser.parse_args(argv)

    rng = np.random.default_rng(0)
    storage = precision.make_inputs("normal", 1, 1, args.dtype).dtype
    chunks = [rng.standard_normal((min(args.chunk, args.trials - k), args.n)).astype(storage)
              for k in range(0, args.trials, args.chunk)]
    print(f"{args.trials} trials x n={args.n} in {args.dtype}, {len(chunks)} chunk(s) of "
          f"<= {args.chunk}; {jax.device_count()} {jax.default_backend()} device(s)")
    timed(lambda c: np.sum(c, axis=-1), chunks[:1])  # warm-up: page faults, caches
    baseline = min(timed(lambda c: np.sum(c, axis=-1), chunks) for _ in range(args.repeats))
    print(f"{'np.sum (baseline)':<28} {baseline:8.2f} s")
    rows = [(f"sum order={order}", lambda c, o=order: precision.sum(c, order=o))
            for order in precision.ORDERS]
    rows += [("exact_sum", precision.exact_sum),
             ("exact_sum_float64", precision.exact_sum_float64),
             ("errors vs exact (sequential)", lambda c: precision.errors(
                 precision.sum(c, order="sequential"), precision.exact_sum_float64(c),
                 dtype=args.dtype))]
    print(f"{'':<28} {'1st (jit)':>9} {'steady':>8} {'x np.sum':>9}")
    for label, fn in rows:
        first = timed(fn, chunks[:1]) + timed(fn, chunks[1:])
        steady = min(timed(fn, chunks) for _ in range(args.repeats))
        print(f"{label:<28} {first:8.2f}s {steady:7.2f}s {steady / baseline:8.1f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
