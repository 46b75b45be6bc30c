"""The streaming, sharded engine: functions over whole files of registers.

``map_registers`` runs a function over the leading (register) axis of arrays that may be far
larger than memory (``read_bin(..., mmap=True)``, rows read as used): a fixed number of
registers at a time (the last chunk padded, so ``jit`` compiles once), each chunk split over
the local devices along that axis (``Mesh`` + ``NamedSharding``), with the next chunk
dispatched while the previous one is copied back. Registers are independent, so the bits do
not depend on the chunk size or the device count.

``execute`` runs a ``Plan`` (what ``ascjax run`` builds for one instruction, see ``runners``)
the same way and writes its outputs atomically. Under ``jax.distributed`` with several
processes, process p computes the p-th contiguous share of the rows on its own devices,
writes it to ``OUT.part<p>``, and process 0 joins the parts into ``OUT`` once every process is
done.
"""

from __future__ import annotations

import dataclasses
import hashlib
import math
import os
import re
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

import jax
import numpy as np
from jax.experimental import checkify
from jax.sharding import Mesh, NamedSharding, PartitionSpec

from ..formats import Format
from .binio import aligned_empty, atomic_outputs, output_errors, write_to
from .progress import Progress

CHUNK = 1 << 16  # registers per compiled call: 16 MiB of input at 256 bytes a register
AXIS = "registers"


def chunk_size(count: int, chunk: int, devices: int) -> int:
    """Registers per call: ``chunk``, or the power of two >= ``count`` if smaller, rounded up to
    a multiple of the device count (each device gets an equal share)."""
    size = min(chunk, 1 << max(count - 1, 0).bit_length())
    return -(-size // devices) * devices


def _pad(block: np.ndarray, size: int) -> np.ndarray:
    if len(block) == size:
        return block
    padded = aligned_empty(size * math.prod(block.shape[1:]), block.dtype).reshape(
        (size,) + block.shape[1:])
    padded[: len(block)] = block
    padded[len(block):] = 0  # zero registers, masked off
    return padded


def iter_chunks(fn: Callable, batched: Sequence[Any], shared: Sequence[Any] = (), *,
                chunk: int = CHUNK, devices: Sequence[Any] | None = None,
                progress: bool = False, label: str = "ascjax",
                unit: str = "registers", first_row: int = 0) -> Iterator[tuple]:
    """Yield ``(start, stop, outputs)`` for ``fn(*batched[start:stop], *shared)``, chunk by chunk.

    ``batched`` arrays share their leading length n (registers, tensors or groups) and may be
    ``binio.BinArray`` (rows read as used); ``shared`` arrays go whole to every device. ``fn``
    returns an array or a tuple of arrays with the same leading axis; ``outputs`` is a tuple of
    NumPy arrays of ``stop - start`` rows. Each call has the same shape (``chunk_size``), split over
    ``devices`` (default: all local devices) along the leading axis. A fault names its register
    or tensor by its row of the input (``first_row``: the input's row of ``batched[0]``, this
    process's share under ``jax.distributed``), not its row within the chunk.
    """
    if not batched:
        raise ValueError("iter_chunks: at least one batched array is needed")
    count = len(batched[0])
    for i, b in enumerate(batched):
        if len(b) != count:
            raise ValueError(f"iter_chunks: batched[{i}] has {len(b)} rows, batched[0] {count}")
    devices = list(jax.local_devices() if devices is None else devices)
    size = chunk_size(count, chunk, len(devices))
    mesh = Mesh(np.array(devices), (AXIS,))
    rows, whole = NamedSharding(mesh, PartitionSpec(AXIS)), NamedSharding(mesh, PartitionSpec())

    def checked(*args):
        # Value-dependent faults (Config(out_of_range="checkify")) come back as an error value
        # per chunk and are raised on the host: no callback leaves the runtime in a bad state.
        err, out = checkify.checkify(fn)(*args)
        return err, out if isinstance(out, tuple) else (out,)

    jitted = jax.jit(checked, in_shardings=(rows,) * len(batched) + (whole,) * len(shared),
                     out_shardings=(whole, rows))
    compiled = None
    shared = [jax.device_put(np.asarray(s), whole) for s in shared]
    bar = Progress(count, label, enabled=progress, unit=unit)
    pending = None
    # Dispatch is asynchronous: chunk k+1 is queued before chunk k is copied back to the host.
    for start in range(0, count, size):
        stop = min(start + size, count)
        parts = [jax.device_put(_pad(np.asarray(b[start:stop]), size), rows) for b in batched]
        compiled = compiled or _compile(jitted, devices, *parts, *shared)
        current = (start, stop, compiled(*parts, *shared))
        if pending is not None:
            yield _fetch(pending, bar, first_row)
        pending = current
    if pending is not None:
        yield _fetch(pending, bar, first_row)
    bar.close()


_COMPILED: dict[tuple, Any] = {}  # executables by the content of the program they run


def _compile(jitted: Callable, devices: Sequence[Any], *args: Any) -> Any:
    """``jitted`` compiled for ``args``' shapes, reusing an executable of the same program.

    Each run builds its function afresh (a closure over its options), so ``jax.jit``'s own
    cache, keyed on the function object, would compile it again every time (0.2-0.5 s). The
    key here is the lowered program itself (its text with every constant, without the source
    locations, which differ by call site) with the devices it runs on, in order: the same
    program, the same executable.
    """
    lowered = jitted.lower(*args)
    text = lowered.compiler_ir().operation.get_asm(enable_debug_info=False,
                                                   large_elements_limit=None)
    key = (hashlib.sha256(text.encode()).digest(), tuple(d.id for d in devices),
           jax.process_index())
    if key not in _COMPILED:
        if len(_COMPILED) >= 64:  # a bound: long sessions run many distinct programs
            _COMPILED.pop(next(iter(_COMPILED)))
        _COMPILED[key] = lowered.compile()
    return _COMPILED[key]


def _fetch(pending: tuple, bar: Progress, first_row: int) -> tuple:
    start, stop, (err, out) = pending
    message = err.get()
    if message is not None:
        message = message.removesuffix(" (`check` failed)")
        row = first_row + start  # the input's row where this chunk starts
        if row:  # the register or tensor named is counted within the chunk: name the input's
            message = re.sub(r" of (register|tensor) (\d+)\b",
                             lambda m: f" of {m[1]} {row + int(m[2])}", message, count=1)
        raise IndexError(message)
    result = tuple(np.asarray(o)[: stop - start] for o in out)
    bar.update(stop - start)
    return start, stop, result


def map_registers(fn: Callable, *batched: Any, shared: Sequence[Any] = (), chunk: int = CHUNK,
                  devices: Sequence[Any] | None = None, progress: bool = False) -> Any:
    """``fn(*batched, *shared)`` computed chunk by chunk over the leading axis, sharded.

    For notebooks: ``batched`` arrays (e.g. ``ascjax.read_bin(..., registers=True,
    mmap=True)``) are streamed ``chunk`` rows at a time over ``devices`` (default: all local
    devices); the result (one array, or a tuple if ``fn`` returns one) is gathered in host
    memory. Bits are those of ``fn`` applied to the whole arrays at once.

    >>> import numpy as np, ascjax
    >>> x = np.ones((3, 64), np.float32)
    >>> mask = ascjax.create_mask("PAT_ALL", "float")
    >>> ascjax.map_registers(lambda s, m: ascjax.reduce_sum_datablock(s, m), x,
    ...                      shared=[mask])[:, :8].tolist()[0]
    [8.0, 8.0, 8.0, 8.0, 8.0, 8.0, 8.0, 8.0]
    """
    joined = None  # each output filled in place: one copy of it in memory, not two
    for start, stop, out in iter_chunks(fn, batched, shared, chunk=chunk, devices=devices,
                                        progress=progress):
        if joined is None:
            joined = tuple(np.empty((len(batched[0]),) + o.shape[1:], o.dtype) for o in out)
        for whole, part in zip(joined, out, strict=True):
            whole[start:stop] = part
    if joined is None:
        raise ValueError("map_registers: the batched arrays have no rows")
    return joined[0] if len(joined) == 1 else joined


# --- running a plan over .bin files --------------------------------------------------------

@dataclasses.dataclass(frozen=True)
class Output:
    """One output file: its path, the format written, and how to get its rows from a chunk."""

    path: str
    fmt: Format
    take: Callable[[tuple], np.ndarray]


@dataclasses.dataclass(frozen=True)
class Plan:
    """One run over files: ``fn`` of each chunk of the ``batched`` rows (and the whole
    ``shared`` arrays), and the outputs written from what it returns."""

    fn: Callable
    batched: list
    shared: list
    outputs: list
    unit: str = "registers"
    row_registers: int = 1  # registers' worth of data in one row: scales the chunk down


def execute(plan: Plan, *, chunk: int, devices: list, progress: bool, label: str) -> int:
    """Run ``plan`` (this process's share of its rows) and write its outputs atomically;
    returns the number of rows."""
    count = len(plan.batched[0])
    rank, procs = jax.process_index(), jax.process_count()
    lo, hi = count * rank // procs, count * (rank + 1) // procs
    paths = [o.path if procs == 1 else f"{o.path}.part{rank}" for o in plan.outputs]
    with atomic_outputs(paths) as handles, ThreadPoolExecutor(1) as writer:
        if hi > lo:
            rows = max(chunk // plan.row_registers, 1)
            written: list[Future] = []
            for _, _, out in iter_chunks(plan.fn, [b[lo:hi] for b in plan.batched], plan.shared,
                                         chunk=rows, devices=devices, progress=progress,
                                         label=label, unit=plan.unit, first_row=lo):
                # One writer thread, in order: a chunk is written while the next computes.
                while len(written) > 1:
                    written.pop(0).result()
                arrays = [np.asarray(o.take(out), o.fmt.storage_dtype) for o in plan.outputs]
                written.append(writer.submit(_write_chunk, handles, arrays, plan.outputs))
            for w in written:
                w.result()
    if procs > 1:
        _join_parts([o.path for o in plan.outputs], rank, procs)
    return count


def _write_chunk(handles: list, arrays: list[np.ndarray], outputs: list[Output]) -> None:
    for handle, array, o in zip(handles, arrays, outputs, strict=True):
        with output_errors(o.path):
            write_to(handle, array, o.fmt)


def _join_parts(paths: list[str], rank: int, procs: int) -> None:
    """Process 0 concatenates every process's ``.part<p>`` files once all are written."""
    from jax.experimental import multihost_utils

    multihost_utils.sync_global_devices("ascjax.run_bin: parts written")
    if rank == 0:
        with atomic_outputs(paths) as handles:
            for handle, path in zip(handles, paths, strict=True):
                for p in range(procs):
                    with open(f"{path}.part{p}", "rb") as part:
                        while block := part.read(1 << 24):
                            handle.write(block)
        for path in paths:
            for p in range(procs):
                os.unlink(f"{path}.part{p}")
    multihost_utils.sync_global_devices("ascjax.run_bin: parts joined")
