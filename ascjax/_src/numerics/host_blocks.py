"""Host NumPy work over blocks of rows, on every core the process may use.

NumPy's ufunc loops release the GIL, so blocks of rows summed by threads run in parallel:
the float32 adjacent tree over 4096 x 4096 took 11-12 ms on two threads against 19.7 on one
(2-core Xeon, benchmarks/precision_speed.py). Each block is summed by the same calls as the
whole array would be, so the bits do not depend on the number of threads.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import numpy as np

BLOCK_ELEMENTS = 1 << 20  # elements per block of rows: a block's temporaries stay in cache


def host_threads() -> int:
    """The cores this process may run on (its CPU affinity, not the machine's count)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return max(1, os.cpu_count() or 1)


@functools.cache
def _pool(threads: int) -> ThreadPoolExecutor:
    return ThreadPoolExecutor(threads, thread_name_prefix="ascjax-host")


def map_row_blocks(fn: Callable, x: np.ndarray, block_elements: int = BLOCK_ELEMENTS):
    """``fn`` over blocks of rows of ``x`` (rows, n), its results joined along axis 0.

    ``fn`` returns an array or a tuple of arrays, one row of output per row of its block, and
    must not depend on where its block starts. It runs in worker threads: NumPy's error state
    (``np.errstate``) is per thread, so ``fn`` sets its own.
    """
    step = max(1, block_elements // max(x.shape[-1], 1))
    starts = range(0, x.shape[0], step)
    threads = min(host_threads(), len(starts))
    if threads <= 1:
        parts = [fn(x[start:start + step]) for start in starts] or [fn(x)]
    else:
        parts = list(_pool(threads).map(lambda start: fn(x[start:start + step]), starts))
    if isinstance(parts[0], tuple):
        return tuple(np.concatenate(column) for column in zip(*parts, strict=True))
    return np.concatenate(parts)
