"""Compaction kernels for XLA's CPU backend (``compaction.cc``), built on first use.

XLA has no compaction primitive. Its CPU code for one, a per-lane search over the mask words
and then a gather (``squeeze._search``), runs GatherMask's 1024-lane rows at a quarter of
memory speed; the C++ kernels move 32 lanes an instruction with AVX-512 VBMI2's vpcompress
(a scalar loop elsewhere). They move bits only and give the XLA path's bits exactly
(``tests/test_native.py``), so they are a speed path, not a second model:

* ``source_lanes(words)``: each output lane's source lane and the count, as
  ``squeeze.word_source_lanes`` gives them (the gather stays in XLA, so tangents through it
  transpose as before);
* ``compress(values, words, fill, n)``: the selected values moved to the front of ``n``
  lanes, ``fill`` (or zeros) from the count on, for the bit patterns of a forward pass.

Both run only on CPU (``lax.platform_dependent``: a GPU lowers the XLA path). The library is
compiled once per source, jaxlib and compiler, against the installed jaxlib's FFI headers, into
``$ASCJAX_CACHE`` (default ``~/.cache/ascjax``); where that fails (no C++ compiler) a warning
says why and the XLA path runs. ``ASCJAX_NATIVE=0`` turns the kernels off.
"""

from __future__ import annotations

import contextlib
import ctypes
import hashlib
import os
import platform
import shlex
import shutil
import subprocess
import sys
import tempfile
import threading
import warnings
from pathlib import Path

import jax
import jax.numpy as jnp
import jaxlib
import numpy as np
from jax import lax
from jax.custom_batching import custom_vmap
from jax.experimental.custom_partitioning import custom_partitioning
from jax.sharding import NamedSharding, PartitionSpec

SOURCE = Path(__file__).with_name("compaction.cc")
_FLAGS = ("-O2", "-std=c++17", "-shared", "-fPIC")
_TARGETS = {"ascjax_source_lanes": "AscjaxSourceLanes", "ascjax_compress": "AscjaxCompress"}


_switched_off = False


def enabled() -> bool:
    """Whether the kernels run on CPU: built (or cached) and registered, and not turned off."""
    return not _switched_off and _library() is not None


@contextlib.contextmanager
def compaction_kernels_off():
    """XLA's compaction everywhere inside (``ascjax.compaction_kernels_off``): for
    ``jax.export``, which cannot serialize a custom call, and for tests that compare the two
    paths. Functions traced before are traced again: JAX's caches are cleared on entry and on
    exit."""
    global _switched_off
    jax.clear_caches()
    _switched_off = True
    try:
        yield
    finally:
        _switched_off = False
        jax.clear_caches()


def _cache_dir() -> Path:
    root = os.environ.get("ASCJAX_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "ascjax")
    return Path(root)


def _compiler() -> list[str] | None:
    """The C++ compiler's command (``CXX`` may hold several words, as ``ccache g++``)."""
    if os.environ.get("CXX"):
        return shlex.split(os.environ["CXX"])
    found = shutil.which("c++") or shutil.which("g++") or shutil.which("clang++")
    return [found] if found else None


_LOCK = threading.Lock()
_LOADED: list = []  # [the library or None] once tried: a failure warns once, not per call


def _library() -> ctypes.CDLL | None:
    if os.environ.get("ASCJAX_NATIVE", "1") == "0":
        return None
    with _LOCK:
        if not _LOADED:
            _LOADED.append(None)  # before the warning, which "-W error" makes an exception
            try:
                _LOADED[0] = _load()
            except (OSError, RuntimeError, subprocess.SubprocessError) as err:
                warnings.warn(f"ascjax: the native compaction kernels are off ({err}); squeeze "
                              "and GatherMask run XLA's compaction on CPU (the same bits, 2-3x "
                              "slower). Set ASCJAX_NATIVE=0 to silence this.", RuntimeWarning,
                              stacklevel=3)
    return _LOADED[0]


def _load() -> ctypes.CDLL:
    """The library built (or cached), loaded and its targets registered; a cached file that
    does not load (cut short, another machine's) is built again once."""
    try:
        lib = ctypes.CDLL(str(_build()))
    except OSError:
        lib = ctypes.CDLL(str(_build(again=True)))
    for target, symbol in _TARGETS.items():
        jax.ffi.register_ffi_target(target, jax.ffi.pycapsule(getattr(lib, symbol)),
                                    platform="cpu")
    return lib


def _build(again: bool = False) -> Path:
    """The compiled library's path, compiling it if this source, jaxlib, compiler and machine
    have none yet, or ``again`` (to a temporary name, then renamed: processes building at once
    do not clash)."""
    compiler = _compiler()
    if compiler is None:
        raise RuntimeError("no C++ compiler found (CXX, c++, g++ or clang++); install one")
    version = subprocess.run([*compiler, "--version"], check=False, capture_output=True,
                             text=True, timeout=60).stdout
    key = hashlib.sha256(b"\0".join(part.encode() if isinstance(part, str) else part for part in (
        SOURCE.read_bytes(), jaxlib.__version__, " ".join(compiler), version, " ".join(_FLAGS),
        sys.platform, platform.machine())))
    target = _cache_dir() / f"compaction-{key.hexdigest()[:16]}.so"
    if target.exists() and not again:
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".building-", suffix=".so", dir=target.parent)
    os.close(fd)
    try:
        done = subprocess.run([*compiler, *_FLAGS, f"-I{jax.ffi.include_dir()}", str(SOURCE),
                               "-o", tmp], check=False, capture_output=True, text=True,
                              timeout=300)
        if done.returncode:
            raise RuntimeError(f"{' '.join(compiler)} failed: {done.stderr.strip()[-2000:]}")
        os.replace(tmp, target)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return target


def _on_cpu(native, portable, *args):
    """``native(*args)`` where the computation lowers for CPU and the kernels are built, else
    ``portable(*args)`` (same outputs)."""
    if not enabled():
        return portable(*args)
    return lax.platform_dependent(*args, cpu=native, default=portable)


def source_lanes(words, portable):
    """``(source, count)`` of uint32 mask words ``(..., W)``: ``portable(words)``'s values
    (``squeeze._search``; source uint8 up to 256 lanes, else uint16), by the kernel on CPU."""
    lanes = 32 * words.shape[-1]
    narrow = np.min_scalar_type(lanes - 1)

    def native(w):
        return _row_call("ascjax_source_lanes", (((lanes,), narrow), ((), jnp.int32)), w)

    if words.size == 0 or narrow.itemsize > 2:
        return portable(words)
    return _on_cpu(native, portable, words)


def compress(values, words, fill, n: int, portable):
    """``(out, count)``: the values ``(..., 32W)`` selected by uint32 ``words`` ``(..., W)`` in
    ``out``'s first lanes of ``n``, then ``fill``'s lanes (``(..., n)``, or zeros where None);
    ``portable(values, words, fill)`` gives the same. ``values`` may be of any type of 1, 2,
    4 or 8 bytes: the kernel moves their bits (so the caller need not bitcast them to integers,
    which XLA's CPU backend does as a copy before a custom call). It has no derivative. A
    pattern shared by the batch is broadcast (words are 1/32 of the bits they select)."""
    batch = values.shape[:-1]

    def native(v, w, f):
        zero_fill = f is None
        f = jnp.zeros(batch + (0,), v.dtype) if zero_fill else f
        return _row_call("ascjax_compress", (((n,), v.dtype), ((), jnp.int32)),
                         v, jnp.broadcast_to(w, batch + w.shape[-1:]), f, zero_fill=zero_fill)

    usable = (_whole_bytes(values.dtype) and values.size and n
              and values.shape[-1] == 32 * words.shape[-1])
    if not usable:
        return portable(values, words, fill)
    return _on_cpu(native, portable, values, words, fill)


def _row_call(target: str, results, *args, **attributes):
    """Kernel ``target`` on ``args`` whose leading dimensions (the same in each) are rows,
    returning arrays of the rows' shapes plus ``results``' ``(trailing shape, dtype)``.

    Rows are independent, and JAX is told so twice: under ``vmap`` the batch becomes more rows
    (``custom_vmap``), and a sharding over the rows splits the call, each device running its own
    rows (``custom_partitioning``, with a Shardy rule that names the leading factors as shared):
    a custom call XLA knows nothing of would be all-gathered and run whole on every device."""
    if args[0].ndim == 1:  # one row: as a batch of one
        return jax.tree.map(lambda r: r[0], _row_call(target, results,
                                                      *(a[None] for a in args), **attributes))

    def call(*operands):
        rows = operands[0].shape[:-1]
        return tuple(jax.ffi.ffi_call(target, tuple(jax.ShapeDtypeStruct(rows + shape, dtype)
                                                    for shape, dtype in results))(
            *operands, **attributes))

    lead = " ".join(f"r{i}" for i in range(args[0].ndim - 1))
    rule = ", ".join(f"{lead} a{k}" for k in range(len(args))) + " -> " + ", ".join(
        f"{lead} o{k}" if shape else lead for k, (shape, _) in enumerate(results))

    def shardings(mesh, arg_shapes):
        rows = tuple(arg_shapes[0].sharding.spec)[:args[0].ndim - 1]
        return tuple(NamedSharding(mesh, PartitionSpec(*rows, *(None,) * len(shape)))
                     for shape, _ in results), NamedSharding(mesh, PartitionSpec(*rows, None))

    def partition(mesh, arg_shapes, result_shape):
        out, operand = shardings(mesh, arg_shapes)
        return mesh, call, out, (operand,) * len(args)

    split = custom_partitioning(call)
    split.def_partition(partition=partition, sharding_rule=rule,
                        infer_sharding_from_operands=lambda m, a, r: shardings(m, a)[0])

    @custom_vmap
    def batchable(*operands):
        return split(*operands)

    @batchable.def_vmap
    def more_rows(axis_size, in_batched, *operands):
        operands = [o if b else _broadcast_bits(o, (axis_size,) + o.shape)
                    for o, b in zip(operands, in_batched, strict=True)]
        return _row_call(target, results, *operands, **attributes), (True,) * len(results)

    return batchable(*args)


def _broadcast_bits(x, shape):
    """``x`` broadcast to ``shape``, every bit kept: as unsigned patterns in a buffer of their
    own, then read as ``x``'s dtype (XLA's CPU backend may broadcast bfloat16 through float32,
    as ``lanes.kernel`` says)."""
    if x.dtype.kind == "u" or x.dtype == np.bool_ or not _whole_bytes(x.dtype):
        return jnp.broadcast_to(x, shape)
    bits = lax.bitcast_convert_type(x, np.dtype(f"uint{8 * x.dtype.itemsize}"))
    return lax.bitcast_convert_type(lax.optimization_barrier(jnp.broadcast_to(bits, shape)),
                                    x.dtype)


def _whole_bytes(dtype) -> bool:
    """Whether ``dtype``'s elements are 1, 2, 4 or 8 whole bytes (not int4, float4 pairs)."""
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return True
    try:
        bits = (np.iinfo if dtype.kind in "iu" else jnp.finfo)(dtype).bits
    except ValueError:  # ml_dtypes' int4 and uint4
        return False
    return bits == 8 * dtype.itemsize and dtype.itemsize in (1, 2, 4, 8)
