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


def timed(fn, chunks) -> float:
    start = time.perf_counter()
    for chunk in chunks:
        jax.block_until_ready(fn(chunk))
    return time.perf_counter() - start


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--trials", type=int, default=100_000)
    parser.add_argument("--n", type=int, default=4096)
    parser.add_argument("--chunk", type=int, default=12_500, help="trials per call")
    parser.add_argument("--dtype", default="half")
    args = parser.parse_args(argv)

    rng = np.random.default_rng(0)
    storage = precision.make_inputs("normal", 1, 1, args.dtype).dtype
    chunks = [rng.standard_normal((min(args.chunk, args.trials - k), args.n)).astype(storage)
              for k in range(0, args.trials, args.chunk)]
    print(f"{args.trials} trials x n={args.n} in {args.dtype}, {len(chunks)} chunk(s) of "
          f"<= {args.chunk}; {jax.device_count()} {jax.default_backend()} device(s)")
    baseline = timed(lambda c: np.sum(c, axis=-1), chunks)
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
        steady = timed(fn, chunks)
        print(f"{label:<28} {first:8.2f}s {steady:7.2f}s {steady / baseline:8.1f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
