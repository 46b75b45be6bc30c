"""Host NumPy work over blocks of rows, on every core the process may use.

NumPy's ufunc loops release the GIL, so blocks of rows summed by threads run in parallel:
the float32 adjacent tree over 4096 x 4096 took 11-12 ms on two threads against 19.7 on one
(2-core Xeon, benchmarks/precision_speed.py). Each block is summed by the same calls as the
whole array would be, so the bits do not depend on the number of threads.
"""

from __future__ import annotations

import functools
import os
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import numpy as np

BLOCK_ELEMENTS = 1 << 20  # elements per block of rows: a block's temporaries stay in cache
_worker = threading.local()  # set in the pool's threads: a nested call runs in place


def host_threads() -> int:
    """The cores this process may run on (its CPU affinity; a cgroup quota is not seen)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return max(1, os.cpu_count() or 1)


def _mark_worker() -> None:
    _worker.active = True


@functools.cache
def _pool() -> ThreadPoolExecutor:
    return ThreadPoolExecutor(host_threads(), thread_name_prefix="ascjax-host",
                              initializer=_mark_worker)


if hasattr(os, "register_at_fork"):  # a child's copy of the pool has no threads: a new one
    os.register_at_fork(after_in_child=_pool.cache_clear)


def map_row_blocks(fn: Callable, x: np.ndarray, block_elements: int = BLOCK_ELEMENTS):
    """``fn`` over blocks of rows of ``x`` (rows, n), its results joined along axis 0.

    ``fn`` returns an array or a tuple of arrays, one row of output per row of its block, and
    must not depend on where its block starts. It runs in worker threads: NumPy's error state
    (``np.errstate``) is per thread, so ``fn`` sets its own. Called from inside ``fn``, the
    blocks run in place (the workers are busy with the outer call).
    """
    step = max(1, block_elements // max(x.shape[-1], 1))
    starts = range(0, x.shape[0], step)
    if len(starts) <= 1 or host_threads() == 1 or getattr(_worker, "active", False):
        parts = [fn(x[start:start + step]) for start in starts] or [fn(x)]
    else:
        parts = list(_pool().map(lambda start: fn(x[start:start + step]), starts))
    if isinstance(parts[0], tuple):
        return tuple(np.concatenate(column) for column in zip(*parts, strict=True))
    return np.concatenate(parts)
