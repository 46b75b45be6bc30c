"""Native kernels for XLA's CPU backend, built on first use: compaction (``compaction.cc``),
gathers from one shared source (``gather.cc``) and float32 row sums (``sums.cc``).

Each does what an XLA program of ascjax does, bit for bit (``tests/test_native.py``), where XLA
runs it far below memory speed; so they are a speed path, not a second model.

XLA has no compaction primitive. Its CPU code for one, a per-lane search over the mask words
and then a gather (``squeeze._search``), runs GatherMask's 1024-lane rows at a quarter of
memory speed; the C++ kernels compress a vector by its mask bits a step (32 lanes with
AVX-512 VBMI2's vpcompress, 16 with AVX-512F, 8 by AVX2 shuffles, else a scalar loop):

* ``source_lanes(words)``: each output lane's source lane and the count, as
  ``squeeze.word_source_lanes`` gives them (the gather stays in XLA, so tangents through it
  transpose as before);
* ``compress(values, words, fill, n)``: the selected values moved to the front of ``n``
  lanes, ``fill`` (or zeros) from the count on, for the bit patterns of a forward pass.

``block_gather(table, offsets, keep)`` moves ``asc_gather_datablock``'s 32-byte blocks one
move each, in the table's own dtype (a result of bits would cost XLA's CPU backend a copy to
bitcast it). ``table_gather(table, index, keep)`` gathers the elements of the UB
``asc_gather`` and ``Reg::Gather`` (AVX-512 or AVX2 gathers) and each register's largest index
in one pass, from which the range check starts: XLA read the indices once for the check and
again for its gather.

A float32 sequential or Kahan sum is a chain of dependent adds per row, which XLA's loop over
columns (``orders.column_sum``) ran at a third of ``np.sum``'s speed; the sums kernel adds 16
rows at once, one vector lane each:

* ``chain_sums(parts, kahan)``: ``orders.native_column_fast``'s sums;
* ``wide_sums(parts)``: the float64 sums of values and magnitudes ``exact_sum`` certifies from;
* ``tree_sums_host(parts, order)``: the float32 adjacent-tree and repeat orders of host rows
  (``orders.host_order``), one pass over memory where NumPy made one per tree level.

All run only on CPU (``lax.platform_dependent``: a GPU lowers the XLA path). The library is
compiled once per source, jaxlib and compiler, against the installed jaxlib's FFI headers, into
``$ASCJAX_CACHE`` (default ``~/.cache/ascjax``); where that fails (no C++ compiler) a warning
says why and the XLA path runs. ``ASCJAX_NATIVE=0`` turns the kernels off;
``ASCJAX_NATIVE_ISA=scalar``, ``avx2`` or ``avx512`` (AVX-512 without VBMI2) caps the
instructions they use (the tests run each).
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
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

SOURCES = tuple(Path(__file__).with_name(name)
                for name in ("compaction.cc", "gather.cc", "sums.cc"))
HEADERS = (Path(__file__).with_name("rows.h"),)
# No -ffast-math: each float add must be the IEEE add the source writes, in its order.
_FLAGS = ("-O2", "-std=c++17", "-ffp-contract=off", "-fPIC")
_TARGETS = {"ascjax_source_lanes": "AscjaxSourceLanes", "ascjax_compress": "AscjaxCompress",
            "ascjax_chain_sums": "AscjaxChainSums",
            "ascjax_chain_sums_shifted": "AscjaxChainSumsShifted",
            "ascjax_wide_sums": "AscjaxWideSums",
            "ascjax_wide_sums_shifted": "AscjaxWideSumsShifted",
            "ascjax_block_gather": "AscjaxBlockGather",
            "ascjax_table_gather": "AscjaxTableGather",
            "ascjax_tree_sums": "AscjaxTreeSums",
            "ascjax_tree_sums_shifted": "AscjaxTreeSumsShifted"}


_switched_off = False


def enabled() -> bool:
    """Whether the kernels run on CPU: built (or cached) and registered, and not turned off."""
    return not _switched_off and _library() is not None


@contextlib.contextmanager
def native_kernels_off():
    """XLA's paths everywhere inside (``ascjax.native_kernels_off``): for ``jax.export``, which
    cannot serialize a custom call, and for tests that compare the two paths. Functions
    traced before are traced again: JAX's caches are cleared on entry and on exit."""
    global _switched_off
    before = _switched_off  # nested blocks: the outer one's setting comes back
    jax.clear_caches()
    _switched_off = True
    try:
        yield
    finally:
        _switched_off = before
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


ISA_CAPS = ("scalar", "avx2", "avx512")  # ASCJAX_NATIVE_ISA's values (rows.h reads it)


def _library() -> ctypes.CDLL | None:
    if os.environ.get("ASCJAX_NATIVE", "1") == "0":
        return None
    cap = os.environ.get("ASCJAX_NATIVE_ISA")
    if cap is not None and cap not in ISA_CAPS:
        raise ValueError(f"ASCJAX_NATIVE_ISA={cap!r}: valid values are {', '.join(ISA_CAPS)} "
                         "(unset: the widest instructions this CPU has)")
    with _LOCK:
        if not _LOADED:
            _LOADED.append(None)  # before the warning, which "-W error" makes an exception
            try:
                _LOADED[0] = _load()
            except (OSError, RuntimeError, subprocess.SubprocessError) as err:
                warnings.warn(f"ascjax: the native kernels are off ({err}); squeeze, "
                              "GatherMask, the register gathers and float32 sequential and "
                              "Kahan sums run XLA's code on CPU (the same bits, up to 3x "
                              "slower). Set ASCJAX_NATIVE=0 to silence this.",
                              RuntimeWarning, stacklevel=3)
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
        *(path.read_bytes() for path in SOURCES + HEADERS), jaxlib.__version__,
        " ".join(compiler), version, " ".join(_FLAGS), sys.platform, platform.machine())))
    target = _cache_dir() / f"kernels-{key.hexdigest()[:16]}.so"
    if target.exists() and not again:
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=".building-", dir=target.parent) as tmp:
        # one compiler per source at once (each takes about 3 s), then one link
        objects = [os.path.join(tmp, f"{source.stem}.o") for source in SOURCES]
        _run_all([[*compiler, *_FLAGS, f"-I{jax.ffi.include_dir()}", "-c", str(source), "-o",
                   obj] for source, obj in zip(SOURCES, objects, strict=True)], compiler)
        library = os.path.join(tmp, "kernels.so")
        _run_all([[*compiler, "-shared", *objects, "-o", library]], compiler)
        os.replace(library, target)
    return target


def _run_all(commands: list[list[str]], compiler: list[str]) -> None:
    """Runs the commands side by side; a RuntimeError with the compiler's words if one fails."""
    running = [subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True) for command in commands]
    failures = []
    for process in running:
        try:
            _, err = process.communicate(timeout=300)
        except subprocess.TimeoutExpired:
            process.kill()
            _, err = process.communicate()
        if process.returncode:
            failures.append(err.strip()[-2000:])
    if failures:
        raise RuntimeError(f"{' '.join(compiler)} failed: {failures[0]}")


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


def block_gather(table, offsets, keep, portable):
    """The DataBlock gather of ``asc_gather_datablock`` (``gather_block._reg_blocks`` is
    ``portable``): ``(..., 8 * 32 / itemsize)`` of ``table``'s dtype, block k the 32 bytes at
    byte ``offsets[..., k]`` (uint32) of the 1-D ``table`` where ``keep[..., k]``, else zeros.
    The caller has checked every kept offset (a multiple of 32, the block inside ``table``)."""
    lanes = 8 * 32 // table.dtype.itemsize

    def native(table, offsets, keep):
        batch = jnp.broadcast_shapes(offsets.shape[:-1], keep.shape[:-1])
        rows = int(np.prod(batch, dtype=np.int64))
        out = jax.ffi.ffi_call("ascjax_block_gather", jax.ShapeDtypeStruct(
            (rows, lanes), table.dtype))(
                table, jnp.broadcast_to(offsets, batch + (8,)).reshape(rows, 8),
                jnp.broadcast_to(keep, batch + (8,)).reshape(rows, 8))
        return out.reshape(batch + (lanes,))

    return _from_shared_table(native, portable, table, offsets, keep)


def table_gather(table, index, keep, portable):
    """The element gather of the UB ``asc_gather`` and ``Reg::Gather`` (``gather._forward``'s
    ``by_xla`` is ``portable``):
    ``(out, top)``, ``out[..., j] = table[index[..., j]]`` (uint16 or uint32 index into the 1-D
    ``table``, in its dtype) where ``keep`` and the index lies inside ``table``, else zeros;
    ``top`` (uint32, one per register) each register's largest index, masked or not, for the
    range check: one pass where XLA read the indices twice. ``keep`` may be shared by the batch
    (``(lanes,)``: the kernel reads it for every row)."""
    if (index.dtype not in (np.uint16, np.uint32) or keep.shape[-1:] != index.shape[-1:]
            or not index.shape[-1] or table.dtype.itemsize > 4 or table.size >= 2**31):
        return portable(table, index, keep)
    lanes = index.shape[-1]

    def native(table, index, keep):
        batch = jnp.broadcast_shapes(index.shape[:-1], keep.shape[:-1])
        rows = int(np.prod(batch, dtype=np.int64))
        shared = int(np.prod(keep.shape[:-1], dtype=np.int64)) == 1
        keep = keep.reshape(1, lanes) if shared else jnp.broadcast_to(
            keep, batch + (lanes,)).reshape(rows, lanes)
        out, top = jax.ffi.ffi_call("ascjax_table_gather", (
            jax.ShapeDtypeStruct((rows, lanes), table.dtype),
            jax.ShapeDtypeStruct((rows,), jnp.uint32)))(
                table, jnp.broadcast_to(index, batch + (lanes,)).reshape(rows, lanes), keep)
        return out.reshape(batch + (lanes,)), top.reshape(batch)

    return _from_shared_table(native, portable, table, index, keep)


def _from_shared_table(native, portable, table, *per_row):
    """``native(table, *per_row)`` on CPU, else ``portable``: a kernel reading one shared 1-D
    ``table`` for each row of the ``per_row`` arrays. Under vmap the batch becomes more rows,
    and a table batched by it takes ``portable``."""
    if table.ndim != 1 or not _whole_bytes(table.dtype) or table.size == 0:
        return portable(table, *per_row)

    @custom_vmap
    def call(table, *per_row):
        return _on_cpu(native, portable, table, *per_row)

    @call.def_vmap
    def more_rows(axis_size, in_batched, table, *per_row):
        if in_batched[0]:  # a table per instance: XLA's gather
            axes = tuple(0 if batched else None for batched in in_batched)
            out = jax.vmap(portable, in_axes=axes)(table, *per_row)
        else:
            # the instances' own axes aligned from the right, as broadcasting does, the vmapped
            # axis in front (size 1 where an array is shared: the kernel broadcasts it)
            inner = [x.shape[b:] for x, b in zip(per_row, in_batched[1:], strict=True)]
            ndim = max(map(len, inner))
            out = _from_shared_table(native, portable, table, *(
                x.reshape((x.shape[0] if b else 1,) + (1,) * (ndim - len(shape)) + shape)
                for x, b, shape in zip(per_row, in_batched[1:], inner, strict=True)))
        return out, jax.tree.map(lambda _: True, out)

    return call(table, *per_row)


def chain_sums(parts, kahan: bool, portable):
    """float32 sequential (or Kahan) sums of the rows ``parts`` hold, as
    ``portable(*parts)`` gives them (``orders.native_column_fast``: a tiny input makes its row's
    sum a NaN): ``parts`` is ``(x,)``, ``x`` (..., n), or ``binio.rows_in_place``'s
    ``(body, head, rest)``, whose rows (m + k,) come back in order."""
    return _sums("ascjax_chain_sums", (((), jnp.float32),), parts, lambda *p: (portable(*p),),
                 kahan=kahan)[0]


TREE_METHODS = {"adjacent_tree": 0, "repeat_sequential": 1, "repeat_tree": 2}
ISA_NAMES = ("scalar", "avx2", "avx512", "avx512vbmi2")  # rows.h's Isa, in its order


def isa() -> str | None:
    """The instructions the kernels use on this CPU (``ISA_NAMES``; ``ASCJAX_NATIVE_ISA`` caps
    them), or None where they are off."""
    return ISA_NAMES[_library().AscjaxIsa()] if enabled() else None


def trees_enabled() -> bool:
    """Whether ``tree_sums_host`` beats NumPy's levels: with AVX-512 (its scalar loop took 3.3x
    ``np.sum`` where NumPy's path takes about 2x)."""
    return isa() in ("avx512", "avx512vbmi2")


def tree_sums_host(parts, order: str):
    """float32 sums of the host rows ``binio.rows_in_place`` handed over (``parts``), along a
    ``TREE_METHODS`` order as ``orders.host_order`` gives them (a tiny input makes its row's
    sum a NaN, for the caller to sum again). CPU only: the caller checks ``trees_enabled()``
    and that JAX's default backend is the CPU (there is no portable branch)."""
    return _tree_sums(TREE_METHODS[order], *parts)


@functools.partial(jax.jit, static_argnums=0)
def _tree_sums(method: int, *parts):
    return _host_rows_call("ascjax_tree_sums", (jnp.float32,), parts,
                           method=np.int32(method))[0]


def _host_rows_call(target: str, dtypes, parts, **attributes):
    """Row kernel ``target`` on host rows as ``binio.rows_in_place`` hands them over: ``(x,)``,
    x (rows, n), or ``(body, head, rest)`` (the ``_shifted`` target); one (rows,) result per
    dtype."""
    shifted = len(parts) == 3
    rows = parts[0].shape[0] + (parts[2].shape[0] if shifted else 0)
    return tuple(jax.ffi.ffi_call(target + ("_shifted" if shifted else ""), tuple(
        jax.ShapeDtypeStruct((rows,), dtype) for dtype in dtypes))(*parts, **attributes))


def wide_sums(parts, portable):
    """``(sum, magnitude)`` per row of ``parts`` (as ``chain_sums``'s): the float64 sums of the
    float32 values and of their magnitudes, in an order of the kernel's, where
    ``portable(*parts)`` gives ``Columns.wide_sums``' own (any order serves
    ``exact.certified_float_bits``). float64 results: under x64 only."""
    if jax.dtypes.canonicalize_dtype(np.float64) != np.float64:
        return portable(*parts)
    return _sums("ascjax_wide_sums", (((), np.float64),) * 2, parts, portable)


def _sums(target: str, results, parts, portable, **attributes):
    """A row-sums kernel on ``parts`` (``chain_sums``): a tuple of ``results`` (``_row_call``'s
    form), as the tuple ``portable(*parts)`` gives off CPU. Plain rows
    go through ``_row_call`` (vmap and sharding add or split rows); the shifted layout, only ever
    concrete host rows, calls the ``_shifted`` target directly."""
    x = parts[0]
    if x.dtype != np.float32 or x.size == 0 or any(p.dtype != np.float32 for p in parts):
        return portable(*parts)
    if len(parts) == 1:
        def native(x):
            return _row_call(target, results, x, **attributes)
    else:
        def native(*parts):
            return _host_rows_call(target, [dtype for _, dtype in results], parts, **attributes)
    return tuple(_on_cpu(native, lambda *p: tuple(portable(*p)), *parts))


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
