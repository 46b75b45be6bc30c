"""Host NumPy work over blocks of rows, on every core the process may use.

NumPy's ufunc loops release the GIL, so blocks of rows summed by threads run in parallel:
the float32 adjacent tree over 4096 x 4096 took 11-12 ms on two threads against 19.7 on one
(2-core Xeon, benchmarks/precision_speed.py). Each block is summed by the same calls as the
whole array would be, so the bits do not depend on the number of threads.
"""

from __future__ import annotations

import functools
import os
import pathlib
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import numpy as np

BLOCK_ELEMENTS = 1 << 20  # elements per block of rows: a block's temporaries stay in cache
_worker = threading.local()  # set in the pool's threads: a nested call runs in place


@functools.cache  # files read once: map_row_blocks asks on every call
def host_threads() -> int:
    """The cores this process may use: its CPU affinity, capped by a cgroup CPU quota (a
    container given 2 CPUs of a 64-core host sees 64 in its affinity; 64 threads would each
    get a thirty-second of the time and wait for one another)."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        cores = os.cpu_count() or 1
    quota = cgroup_quota_cores()
    return max(1, min(cores, quota) if quota else cores)


def cgroup_quota_cores(root: pathlib.Path = pathlib.Path("/sys/fs/cgroup")) -> int | None:
    """Whole cores the cgroup CPU quota allows this process (rounded up), or None when there
    is no quota or no cgroup file says: cgroup v2's ``cpu.max`` ("QUOTA PERIOD" or "max ...")
    in the process's own group, then the hierarchy's root; v1's ``cpu.cfs_quota_us`` (-1: none)
    over ``cpu.cfs_period_us``."""
    own = _own_cgroup()
    for group in dict.fromkeys((root / own, root)):
        text = _read(group / "cpu.max")
        if text is not None:
            quota, _, period = text.partition(" ")
            return None if quota == "max" else _cores(quota, period)
    v1 = root / "cpu"
    quota = _read(v1 / "cpu.cfs_quota_us")
    return None if quota is None else _cores(quota, _read(v1 / "cpu.cfs_period_us"))


def _own_cgroup() -> str:
    """The process's cgroup v2 path relative to the hierarchy's root ("" where unknown)."""
    for line in (_read(pathlib.Path("/proc/self/cgroup")) or "").splitlines():
        if line.startswith("0::"):
            return line[3:].strip("/")
    return ""


def _read(path: pathlib.Path) -> str | None:
    try:
        return path.read_text().strip()
    except OSError:
        return None


def _cores(quota: str, period: str | None) -> int | None:
    try:
        quota_us, period_us = int(quota), int(period or "")
    except ValueError:
        return None
    return -(-quota_us // period_us) if quota_us > 0 and period_us > 0 else None


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
