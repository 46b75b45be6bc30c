"""Throughput of every instruction against the machine's memory-traffic limit, in one run.

For each instruction and main dtype, and batches of 2^10 .. 2^MAX registers, this measures on
the same data and in the same process:

* ascjax: the jitted instruction (registers/s and GB/s of src + mask + dst traffic);
* limit: one fused pass that reads the same inputs and writes an output of the same size with
  trivial work (for the reduction ``jnp.where(mask, src, 0)``): the memory-traffic limit;
* numpy: the seed's pseudo-code vectorised with NumPy, as a gen_data.py author writes it
  (against ascjax's faster way: a plain call, or for a LocalTensor instruction the new dst
  fed back, donated, as a kernel loop does);
* literal: the plain scalar model (``ascjax.reference``, the seed's pseudo-code as loops) on a
  small batch, scaled per register;

plus compile time, the compiled program's memory (arguments + outputs + temporaries) and a
no-retrace check (a second eager call traces and compiles nothing). It prints ratios, saves
JSON and a plot, and a SHA-256 of every output so that runs on other backends can be compared
bit for bit (``--compare-bits other.json``).

    python benchmarks/throughput.py                    # 2^10 .. 2^20 registers, this backend
    python benchmarks/throughput.py --max-log2 22 --out benchmarks/results
    python benchmarks/throughput.py --malloc reuse     # outputs in reused memory (see MALLOC)

Every XLA CPU output over glibc's 32 MB mmap threshold is a fresh mapping, so from 2^18 registers
on each call page-faults its whole output: XLA's trivial pass streams at ~8 GB/s here, while NumPy
(which asks for transparent huge pages) gets ~24 GB/s and a reused buffer ~60 GB/s. ``--malloc``
reruns the script under glibc tunables that change this for every contender alike.
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import os
import pathlib
import platform
import sys
import time
import zlib
from collections.abc import Callable

import jax
import jax.numpy as jnp
import numpy as np

import ascjax
from ascjax import reference
from ascjax._src import native
from ascjax._src.cli import _int_in  # the CLI's own range-checked int

RNG = np.random.default_rng(2026)
LITERAL_REGISTERS = 32
# Limit ratio to reach at 2^18..2^20 registers, by element bytes (issue 5); none set for 8-bit.
TARGETS = {4: 0.5, 2: 0.4}
# glibc malloc settings for --malloc (read at process start, so the script re-executes itself).
_HUGE = 1 << 40
MALLOC = {
    "default": "",
    # large blocks get transparent huge pages, as NumPy's do: far fewer page faults
    "hugepages": "glibc.malloc.hugetlb=1",
    # one arena that never returns memory: a freed output is reused, no page faults at all
    "reuse": f"glibc.malloc.arena_max=1:glibc.malloc.mmap_threshold={_HUGE}"
             f":glibc.malloc.trim_threshold={_HUGE}",
}


@dataclasses.dataclass
class Case:
    """One instruction and dtype: how to make inputs and run each contender on them."""

    name: str
    elem_bytes: int
    make: Callable[[int], dict]  # registers -> NumPy inputs
    ascjax: Callable  # (**jax inputs) -> output
    limit: Callable  # (**jax inputs) -> output of the same size
    numpy: Callable  # (**numpy inputs) -> output
    literal: Callable  # (**numpy inputs of LITERAL_REGISTERS registers) -> None
    traffic: Callable[[dict], int]  # bytes read + written per call


def _random(dtype, shape):
    if np.dtype(dtype).kind == "f":
        return RNG.standard_normal(shape).astype(dtype)
    info = np.iinfo(dtype)
    return RNG.integers(info.min // 2, info.max // 2, shape).astype(dtype)


def _nbytes(d):
    return sum(np.asarray(v).nbytes for v in d.values())


# --- reduce_sum_datablock ---------------------------------------------------------------------

def _reduce_case(dtype, dst_dtype) -> Case:
    lanes = 256 // np.dtype(dtype).itemsize
    epb = lanes // 8
    dst_lanes = 256 // np.dtype(dst_dtype).itemsize

    def make(n):
        return {"src": _random(dtype, (n, lanes)), "mask": RNG.random((n, lanes)) < 0.9}

    def golden(src, mask):  # the seed's pseudo-code, vectorised: adjacent pairs, level by level
        v = np.where(mask, src, 0).astype(dst_dtype).reshape(-1, 8, epb)
        while v.shape[-1] > 1:
            v = v[..., 0::2] + v[..., 1::2]
        out = np.zeros((src.shape[0], dst_lanes), dst_dtype)
        out[:, :8] = v[..., 0]
        return out

    def literal(src, mask):
        for s, m in zip(src, mask, strict=True):
            reference.reduce_sum_datablock(s, m)

    return Case(f"reduce_sum_datablock/{np.dtype(dtype).name}", np.dtype(dtype).itemsize, make,
                lambda src, mask: ascjax.reduce_sum_datablock(src, mask),
                lambda src, mask: jnp.where(mask, src, jnp.zeros((), src.dtype)),
                golden, literal, lambda d: _nbytes(d) + d["src"].shape[0] * 256)


# --- the register reductions: groups of lanes summed, or their max / min (issue 12) ------------

def _pair_levels(v):
    while v.shape[-1] > 1:
        v = v[..., 0::2] + v[..., 1::2]
    return v[..., 0]


def _register_group_case(name: str, dtype, group: int | str, kind: str,
                         index: bool = False) -> Case:
    """``ascjax.<name>(src, mask)``: per ``group`` lanes (``"register"``, ``"block"`` or a
    number) their sum, or max / min (``index``: the whole-register form's value in lane 0, index
    bits in lane 1)."""
    dtype = np.dtype(dtype)
    lanes = 256 // dtype.itemsize
    group = {"register": lanes, "block": lanes // 8}.get(group, group)
    function, model = getattr(ascjax, name), getattr(reference, name)
    extreme = np.inf if dtype.kind == "f" else np.iinfo(dtype).max

    def make(n):
        return {"src": _random(dtype, (n, lanes)), "mask": RNG.random((n, lanes)) < 0.9}

    def golden(src, mask):  # vectorised NumPy, as a gen_data.py author writes it
        v = src.reshape(len(src), -1, group)
        m = mask.reshape(v.shape)
        out = np.zeros((len(src), lanes), dtype)
        if kind == "sum":
            values = _pair_levels(np.where(m, v, 0).astype(dtype))
        else:
            sign = -1 if kind == "max" else 1
            w = np.where(m, v, np.asarray(sign * extreme).astype(dtype))
            values = w.max(-1) if kind == "max" else w.min(-1)
            if index:
                at = w.argmax(-1) if kind == "max" else w.argmin(-1)
                out[:, 1] = at[:, 0].astype(f"uint{8 * dtype.itemsize}").view(dtype)
        out[:, :values.shape[-1]] = values
        return out

    def literal(src, mask):
        for x, m in zip(src, mask, strict=True):
            model(x, m)

    return Case(f"{name}/{dtype.name}", dtype.itemsize, make,
                lambda src, mask: function(src, mask),
                lambda src, mask: jnp.where(mask, src, jnp.zeros((), src.dtype)),
                golden, literal, lambda d: _nbytes(d) + d["src"].shape[0] * 256)


# --- pair_reduce_sum: LocalTensors of 8 repeats each, contiguous (strides 1, 1, 8) --------------

def _pair_case(dtype) -> Case:
    lanes = 256 // np.dtype(dtype).itemsize
    repeats = 8

    def make(n):
        tensors = max(n // repeats, 1)
        return {"dst": np.zeros((tensors, repeats * lanes // 2), dtype),
                "src": _random(dtype, (tensors, repeats * lanes))}

    def golden(dst, src):
        return (src[..., 0::2] + src[..., 1::2]).astype(dtype)

    def literal(dst, src):
        for d, s in zip(dst, src, strict=True):
            reference.pair_reduce_sum(d, s, repeats, lanes, 1, 1, 8)

    def limit(dst, src):  # read src, write dst's size, trivial work
        half = src.shape[-1] // 2
        return src[..., :half] + src[..., half:]

    return Case(f"pair_reduce_sum/{np.dtype(dtype).name}", np.dtype(dtype).itemsize, make,
                lambda dst, src: ascjax.pair_reduce_sum(dst, src, repeats, lanes, 1, 1, 8),
                limit, golden, literal,
                lambda d: d["src"].nbytes + 2 * d["dst"].nbytes)


# --- LocalTensor reductions over 8 contiguous repeats: sum / max / min of groups (issue 12) ----

def _tensor_group_case(label: str, dtype, group: str, kind: str, call: Callable,
                       model: Callable, outputs: int) -> Case:
    """``call(dst, src)`` on LocalTensors of 8 repeats: per repeat, the sum / max / min of each
    ``group`` (``"block"`` or ``"repeat"``) of lanes, ``outputs`` dst elements per repeat."""
    dtype = np.dtype(dtype)
    lanes, repeats = 256 // dtype.itemsize, 8
    size = lanes // 8 if group == "block" else lanes

    def make(n):
        tensors = max(n // repeats, 1)
        return {"dst": np.zeros((tensors, repeats * outputs), dtype),
                "src": _random(dtype, (tensors, repeats * lanes))}

    def golden(dst, src):  # vectorised NumPy: one value per group (and its index)
        v = src.reshape(len(src), -1, size)
        if kind == "sum":
            return _pair_levels(v).astype(dtype)
        out = np.zeros(dst.shape, dtype)
        best = v.max(-1) if kind == "max" else v.min(-1)
        if outputs == best.shape[-1] // repeats:
            return best
        at = (v.argmax(-1) if kind == "max" else v.argmin(-1)).astype(f"uint{8 * dtype.itemsize}")
        out[:, 0::2], out[:, 1::2] = best, at.view(dtype)
        return out

    def literal(dst, src):
        for d, x in zip(dst, src, strict=True):
            model(d, x)

    def limit(dst, src):  # read src, write dst's size: a native reduction of each group
        v = src.reshape(src.shape[:-1] + (-1, size))
        out = v.max(-1)
        return jnp.repeat(out, outputs // (out.shape[-1] // repeats), axis=-1)

    return Case(f"{label}/{dtype.name}", dtype.itemsize, make, call, limit, golden, literal,
                lambda d: d["src"].nbytes + 2 * d["dst"].nbytes)


def _tensor_cases(dtype) -> list[Case]:
    lanes = 256 // np.dtype(dtype).itemsize
    args = (lanes, 8, 1, 1, 8)  # mask, repeatTime, dstRepStride, srcBlkStride, srcRepStride
    return [
        _tensor_group_case(f"reduce_data_block<{k}>", dtype, "block", k,
                           lambda dst, src, k=k: ascjax.reduce_data_block(dst, src, *args,
                                                                          reduce_type=k),
                           lambda d, x, k=k: reference.reduce_data_block(d, x, *args,
                                                                         reduce_type=k), 8)
        for k in ("sum", "max")
    ] + [
        _tensor_group_case("reduce_repeat<max>", dtype, "repeat", "max",
                           lambda dst, src: ascjax.reduce_repeat(dst, src, *args,
                                                                 reduce_type="max")[0],
                           lambda d, x: reference.reduce_repeat(d, x, *args, reduce_type="max"),
                           2),
        _tensor_group_case("reduce_repeat<min,only_value>", dtype, "repeat", "min",
                           lambda dst, src: ascjax.reduce_repeat(
                               dst, src, lanes, 8, 1, 1, 8, reduce_type="min",
                               order="only_value")[0],
                           lambda d, x: reference.reduce_repeat(
                               d, x, lanes, 8, 1, 1, 8, reduce_type="min", order="only_value"),
                           1),
    ]


# --- asc_gather --------------------------------------------------------------------------------

def _gather_case(dtype, index_dtype) -> Case:
    lanes = 256 // np.dtype(index_dtype).itemsize
    table = _random(dtype, 4096)

    def make(n):
        return {"index": RNG.integers(0, 4096, (n, lanes)).astype(index_dtype),
                "mask": RNG.random((n, lanes)) < 0.9}

    def golden(index, mask):
        return np.where(mask, table[index], 0).astype(dtype)

    def literal(index, mask):
        for i, m in zip(index, mask, strict=True):
            reference.asc_gather(table, i, m)

    def limit(index, mask):
        return jnp.where(mask, index, 0).astype(np.dtype(f"uint{8 * np.dtype(dtype).itemsize}"))

    return Case(f"asc_gather/{np.dtype(dtype).name}<-{np.dtype(index_dtype).name}",
                np.dtype(dtype).itemsize, make,
                lambda index, mask: ascjax.asc_gather(table, index, mask),  # range check on
                limit, golden, literal,
                lambda d: _nbytes(d) + d["index"].shape[0] * lanes * np.dtype(dtype).itemsize)


# --- gather: AscendC::Gather on LocalTensors (byte offsets, first-n form) ----------------------

def _tensor_gather_case(dtype) -> Case:
    """Gather(dst, src, srcOffset, 0, count) on LocalTensors of 8 registers of dst each, from a
    4096-element src per tensor, by random aligned byte offsets."""
    dtype = np.dtype(dtype)
    count = 8 * 256 // dtype.itemsize

    def make(n):
        tensors = max(n // 8, 1)
        offsets = RNG.integers(0, 4096, (tensors, count)) * dtype.itemsize
        return {"dst": np.zeros((tensors, count), dtype), "src": _random(dtype, (tensors, 4096)),
                "src_offset": offsets.astype(np.uint32)}

    def golden(dst, src, src_offset):
        return np.take_along_axis(src, (src_offset // dtype.itemsize).astype(np.intp), -1)

    def literal(dst, src, src_offset):
        for d, s, o in zip(dst, src, src_offset, strict=True):
            reference.gather(d, s, o, 0, count)

    def limit(dst, src, src_offset):
        return jnp.take_along_axis(src, (src_offset // dtype.itemsize).astype(jnp.int32), -1)

    return Case(f"gather/{dtype.name}", dtype.itemsize, make,
                lambda dst, src, src_offset: ascjax.gather(dst, src, src_offset, 0, count),
                limit, golden, literal,
                lambda d: d["src_offset"].nbytes + 3 * d["dst"].nbytes)
# --- asc_gather_datablock (registers): 8 DataBlocks a register -------------------------------

def _gather_datablock_case(dtype) -> Case:
    lanes = 256 // np.dtype(dtype).itemsize
    epb = lanes // 8
    table = _random(dtype, 4096 * epb)          # 4096 DataBlocks of UB

    def make(n):
        index = np.zeros((n, 64), np.uint32)
        index[:, :8] = RNG.integers(0, 4096, (n, 8)) * 32
        return {"index": index, "mask": RNG.random((n, 256)) < 0.9}

    def golden(index, mask):
        blocks = table.reshape(-1, epb)[index[:, :8] // 32]            # (n, 8, epb)
        return np.where(mask[:, 0:32:4, None], blocks, 0).reshape(-1, lanes).astype(dtype)

    def literal(index, mask):
        for i, m in zip(index, mask, strict=True):
            reference.gather_datablock(table, i, m)

    def limit(index, mask):    # reads index and mask, writes a register of T's bits
        bits = jax.lax.bitcast_convert_type(index, np.dtype(f"uint{8 * np.dtype(dtype).itemsize}"))
        return jnp.where(mask[:, ::256 // lanes], bits.reshape(-1, lanes), 0)

    return Case(f"gather_datablock/{np.dtype(dtype).name}", np.dtype(dtype).itemsize, make,
                lambda index, mask: ascjax.gather_datablock(table, index, mask),  # range check on
                limit, golden, literal,
                lambda d: _nbytes(d) + d["index"].shape[0] * 256)
# --- GatherMask: user pattern, LocalTensors of 8 repeats (the runtime compaction) -----------------

def _gather_mask_case(dtype, shared: bool = False) -> Case:
    """GatherMask with a user pattern per tensor, or (``shared``) one pattern for every tensor
    (a kernel's fixed mask): its source search then runs once, not per tensor."""
    dtype = np.dtype(dtype)
    lanes, repeats, bits = 256 // dtype.itemsize, 8, 8 * dtype.itemsize
    udtype = np.dtype(f"uint{bits}")
    params = (1, repeats, 8, 1)  # each repeat's string one DataBlock of src1 on

    def make(n):
        tensors = max(n // repeats, 1)
        words = RNG.integers(0, 1 << bits, (1 if shared else tensors, repeats * 256 // bits),
                             dtype=np.uint64)
        return {"dst": np.zeros((tensors, repeats * lanes), dtype),
                "src": _random(dtype, (tensors, repeats * lanes)),
                "pattern": words.astype(udtype)}

    def keep(pattern):  # bit e of repeat r's DataBlock of pattern words
        w = pattern.reshape(len(pattern), repeats, -1)[..., :lanes // bits]
        return ((w[..., None] >> np.arange(bits, dtype=udtype)) & 1).reshape(len(pattern), -1)

    def golden(dst, src, pattern):
        k = keep(pattern).astype(bool)
        order = np.argsort(~k, axis=-1, kind="stable")
        packed = np.take_along_axis(src, order, axis=-1)
        return np.where(np.arange(src.shape[-1]) < k.sum(-1, keepdims=True), packed, dst)

    def literal(dst, src, pattern):
        for d, x, p in zip(dst, src, np.broadcast_to(pattern, (len(dst),) + pattern.shape[1:]),
                           strict=True):
            reference.gather_mask(d, x, p, False, 0, params)

    def limit(dst, src, pattern):
        w = pattern.reshape(pattern.shape[0], repeats, -1)[..., :lanes // bits]
        k = (w[..., None] >> jnp.arange(bits, dtype=udtype)) & 1
        return jnp.where(k.reshape(pattern.shape[:1] + src.shape[1:]) == 1, src, dst)

    kind = "shared user" if shared else "user"
    return Case(f"gather_mask({kind})/{dtype.name}", dtype.itemsize, make,
                lambda dst, src, pattern: ascjax.gather_mask(dst, src, pattern, False, 0,
                                                             params)[0],
                limit, golden, literal,
                lambda d: _nbytes(d) + d["dst"].nbytes)


# --- squeeze: the register part (dst), as the bulk validation uses it ---------------------------

def _squeeze_case(dtype) -> Case:
    lanes = 256 // np.dtype(dtype).itemsize

    def make(n):
        return {"src": _random(dtype, (n, lanes)), "mask": RNG.random((n, lanes)) < 0.5}

    def golden(src, mask):
        order = np.argsort(~mask, axis=-1, kind="stable")
        packed = np.take_along_axis(src, order, axis=-1)
        return np.where(np.arange(lanes) < mask.sum(-1, keepdims=True), packed, 0)

    def literal(src, mask):
        for s, m in zip(src, mask, strict=True):
            reference.squeeze_and_storeunalign(np.zeros(512, np.uint8), 0,
                                               reference.squeeze_and_storeunalign_init(), s, m)

    return Case(f"squeeze(register)/{np.dtype(dtype).name}", np.dtype(dtype).itemsize, make,
                lambda src, mask: ascjax.squeeze_register(src, mask),
                lambda src, mask: jnp.where(mask, src, jnp.zeros((), src.dtype)),
                golden, literal, lambda d: _nbytes(d) + d["src"].nbytes)


# --- unsqueeze: the prefix count of a mask register (asc_unsqueeze) -----------------------------

def _unsqueeze_case(dtype) -> Case:
    lanes = 256 // np.dtype(dtype).itemsize

    def make(n):
        return {"dst": np.zeros((n, lanes), dtype), "mask": RNG.random((n, lanes)) < 0.5}

    def golden(dst, mask):
        counts = np.cumsum(mask, axis=-1, dtype=np.int64) - mask
        return (counts % 2 ** (8 * np.dtype(dtype).itemsize)).astype(dtype)

    def literal(dst, mask):
        for d, m in zip(dst, mask, strict=True):
            reference.unsqueeze(d, m)

    return Case(f"unsqueeze/{np.dtype(dtype).name}", np.dtype(dtype).itemsize, make,
                lambda dst, mask: ascjax.unsqueeze(dst, mask),
                lambda dst, mask: jnp.where(mask, dst + 1, dst),
                golden, literal, lambda d: _nbytes(d) + d["dst"].nbytes)


CASES = [
    _reduce_case(np.float32, np.float32), _reduce_case(np.float16, np.float16),
    _reduce_case(np.int32, np.int32), _reduce_case(np.int16, np.int32),
    _pair_case(np.float32), _pair_case(np.float16),
    _gather_case(np.float32, np.uint32), _gather_case(np.float16, np.uint16),
    _tensor_gather_case(np.float32), _tensor_gather_case(np.float16),
    _gather_datablock_case(np.float32), _gather_datablock_case(np.float16),
    _squeeze_case(np.float32), _squeeze_case(np.float16), _squeeze_case(np.uint8),
    _unsqueeze_case(np.uint32), _unsqueeze_case(np.uint16),
    _gather_mask_case(np.float32), _gather_mask_case(np.float16),
    _gather_mask_case(np.float32, shared=True), _gather_mask_case(np.float16, shared=True),
    *[_register_group_case(name, dtype, group, kind, index)
      for name, group, kind, index in (("asc_reduce_sum", "register", "sum", False),
                                       ("asc_reduce_max", "register", "max", True),
                                       ("asc_reduce_min", "register", "min", True),
                                       ("reduce_max_datablock", "block", "max", False),
                                       ("reduce_min_datablock", "block", "min", False),
                                       ("asc_pair_reduce_sum", 2, "sum", False))
      for dtype in (np.float32, np.float16)],
    *_tensor_cases(np.float32), *_tensor_cases(np.float16),
]


def _best_time(fn, *args, repeat: int = 5) -> float:
    return _best_times([fn], args, repeat=repeat)[0]


def _best_times(fns: list, args, repeat: int = 5) -> list[float]:
    """The best time of each of ``fns`` on the same ``args``, their calls taken in turn: on a
    shared machine whose speed drifts within a run, a ratio of two contenders timed one after
    the other moved by up to 0.2; timed in turn they meet the same drift."""
    for fn in fns:
        jax.block_until_ready(fn(*args))
    best = [float("inf")] * len(fns)
    for _ in range(repeat):
        for k, fn in enumerate(fns):
            start = time.perf_counter()
            jax.block_until_ready(fn(*args))
            best[k] = min(best[k], time.perf_counter() - start)
    return best


def _updated_dst(keys: list[str], args: list, out: np.ndarray) -> int | None:
    """The position of a ``dst`` input the output replaces (same shape and type), else None.

    A LocalTensor instruction returns the new dst; a kernel loop feeds it to the next call, so
    the old buffer can be donated and written in place (no fresh, page-faulting output). The
    NumPy comparison takes the faster of the two ways; the limit ratio compares the plain
    calls of both contenders, as before.
    """
    if "dst" not in keys:
        return None
    i = keys.index("dst")
    return i if (args[i].shape, args[i].dtype) == (out.shape, out.dtype) else None


def _best_time_updating(fn, args: list, donate: int, repeat: int = 5) -> float:
    """``_best_time`` of ``jax.jit(fn)`` where each call's output is the next call's donated
    dst, as in a kernel loop (XLA may then write it in place)."""
    step = jax.jit(fn, donate_argnums=donate)
    args = list(args)
    args[donate] = step(*args[:donate], jnp.array(args[donate], copy=True),  # compiled here;
                        *args[donate + 1:])                              # the input stays valid
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        args[donate] = jax.block_until_ready(step(*args))
        best = min(best, time.perf_counter() - start)
    return best


def _numpy_time(fn, inputs, repeat: int = 3) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        fn(**inputs)
        best = min(best, time.perf_counter() - start)
    return best


def _reseed(case: Case, log2: int) -> None:
    """Same inputs for a (case, size) on every machine, whatever else the run measures."""
    global RNG
    RNG = np.random.default_rng(zlib.crc32(f"{case.name}/{log2}".encode()))


def copy_bandwidth(log2: int) -> float:
    """GB/s of one read + one write of 2^log2 registers: the device's copy bandwidth."""
    x = jnp.zeros((1 << log2, 64), jnp.float32) + 1
    t = _best_time(jax.jit(lambda a: a * 2), x)
    return 2 * x.nbytes / t / 1e9


def measure(case: Case, log2: int, with_numpy: bool) -> dict:
    _reseed(case, log2)
    host = case.make(1 << log2)
    registers = 1 << log2
    keys = list(host)
    args = [jax.device_put(host[k]) for k in keys]
    positional = lambda f: (lambda *a: f(**dict(zip(keys, a, strict=True))))
    start = time.perf_counter()
    compiled = jax.jit(positional(case.ascjax)).lower(*args).compile()
    compile_s = time.perf_counter() - start
    mem = compiled.memory_analysis()
    peak = None if mem is None else int(mem.argument_size_in_bytes + mem.output_size_in_bytes
                                         + mem.temp_size_in_bytes)
    t_ascjax, t_limit = _best_times([compiled, jax.jit(positional(case.limit))], args)
    out = np.asarray(compiled(*args))
    donate = _updated_dst(keys, args, out)
    # A kernel loop feeds the new dst to the next call: timed so for the NumPy comparison
    t_loop = t_ascjax if donate is None else _best_time_updating(positional(case.ascjax), args,
                                                                 donate)
    row = {"case": case.name, "log2_registers": log2, "registers": registers,
           "ascjax_s": t_ascjax, "limit_s": t_limit, "compile_s": compile_s,
           "peak_bytes": peak, "registers_per_s": registers / t_ascjax,
           "gb_per_s": case.traffic(host) / t_ascjax / 1e9,
           "limit_ratio": t_limit / t_ascjax,
           "sha256": hashlib.sha256(np.ascontiguousarray(out).view(np.uint8)).hexdigest()}
    if donate is not None:
        row["ascjax_dst_donated_s"] = t_loop
    if with_numpy:
        row["numpy_s"] = _numpy_time(case.numpy, host)
        row["vs_numpy"] = row["numpy_s"] / min(t_ascjax, t_loop)
        row["limit_vs_numpy"] = row["numpy_s"] / t_limit  # how much faster the limit pass is
    return row


def literal_per_register(case: Case) -> float:
    small = case.make(LITERAL_REGISTERS)
    start = time.perf_counter()
    case.literal(**small)
    return (time.perf_counter() - start) / LITERAL_REGISTERS


def check_no_retrace(case: Case) -> bool:
    """Called eagerly again on new arrays of the same shapes, the instruction neither traces
    nor compiles anything (JAX's own monitoring events; a fresh ``jax.jit`` inside the call,
    or a static argument that changes per call, would)."""
    host = case.make(1 << 10)
    jax.block_until_ready(case.ascjax(**{k: jnp.asarray(v) for k, v in host.items()}))
    events = []

    def listener(event, duration, **kw):
        if event.startswith("/jax/core/compile/"):
            events.append(event)

    jax.monitoring.register_event_duration_secs_listener(listener)
    try:
        for _ in range(2):
            jax.block_until_ready(case.ascjax(**{k: jnp.asarray(v) for k, v in host.items()}))
    finally:
        jax.monitoring.unregister_event_duration_listener(listener)
    return not events


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--min-log2", type=_int_in(0, 40), default=10,
                        help="smallest size, 2^N registers or elements (default 10)")
    parser.add_argument("--max-log2", type=_int_in(0, 40), default=20,
                        help="largest size, 2^N (default 20); the summary takes 2^18 on")
    parser.add_argument("--step", type=_int_in(1, 40), default=2,
                        help="step between sizes in N (default 2)")
    parser.add_argument("--cases", nargs="*", help="substrings of case names to run (default: "
                        "all)")
    parser.add_argument("--out", default="benchmarks/results",
                        help="folder of throughput-<backend>.json and .png (default "
                             "benchmarks/results); a run of some cases replaces their rows "
                             "and keeps the file's other cases")
    parser.add_argument("--compare-bits", help="a JSON from another backend: compare SHA-256s")
    parser.add_argument("--no-numpy", action="store_true", help="skip the NumPy baseline")
    parser.add_argument("--malloc", choices=list(MALLOC), default="default",
                        help="glibc malloc settings for the whole run (see the module doc)")
    args = parser.parse_args(argv)
    tunables = MALLOC[args.malloc]
    current = os.environ.get("GLIBC_TUNABLES", "")
    if tunables and not set(tunables.split(":")) <= set(current.split(":")):
        # glibc reads its tunables at process start: rerun this command line under them
        if platform.libc_ver()[0] != "glibc":
            parser.error("--malloc needs glibc (Linux)")
        if argv is not None:
            parser.error("--malloc reruns the process: give it on the command line")
        env = dict(os.environ, GLIBC_TUNABLES=f"{current}:{tunables}" if current else tunables)
        os.execve(sys.executable, sys.orig_argv, env)
    if args.min_log2 > args.max_log2:
        parser.error(f"--min-log2 {args.min_log2} is above --max-log2 {args.max_log2}")
    if args.compare_bits and not pathlib.Path(args.compare_bits).is_file():
        parser.error(f"--compare-bits {args.compare_bits}: no such file")
    cases = [c for c in CASES if not args.cases or any(s in c.name for s in args.cases)]
    if not cases:
        parser.error(f"--cases {' '.join(args.cases)} matches no case; the cases: "
                     f"{', '.join(c.name for c in CASES)}")
    backend = jax.default_backend()
    copy_gbps = copy_bandwidth(args.max_log2)
    print(f"{backend}: copy bandwidth {copy_gbps:.1f} GB/s at 2^{args.max_log2} registers; "
          f"malloc {args.malloc} (GLIBC_TUNABLES={os.environ.get('GLIBC_TUNABLES', '')!r}); "
          f"compaction kernels {'on' if native.enabled() else 'off'}")
    rows, summary = [], []
    for case in cases:
        literal = literal_per_register(case)
        retrace_ok = check_no_retrace(case)
        for log2 in range(args.min_log2, args.max_log2 + 1, args.step):
            row = measure(case, log2, with_numpy=not args.no_numpy)
            row["vs_literal"] = literal * row["registers"] / row["ascjax_s"]
            row["vs_copy_bandwidth"] = row["gb_per_s"] / copy_gbps
            row.setdefault("vs_numpy", float("nan"))
            row.setdefault("limit_vs_numpy", float("nan"))
            rows.append(row)
            print(f"{case.name:32s} 2^{log2:<2d} {row['registers_per_s'] / 1e6:8.2f} Mreg/s "
                  f"{row['gb_per_s']:6.2f} GB/s  limit x{row['limit_ratio']:.2f}  "
                  f"numpy x{row['vs_numpy']:.1f}  literal x{row['vs_literal']:.0f}  "
                  f"copy x{row['vs_copy_bandwidth']:.2f}  compile {row['compile_s']:.2f}s",
                  flush=True)
        big = [r for r in rows if r["case"] == case.name and r["log2_registers"] >= SUMMARY_LOG2]
        if big:
            target = TARGETS.get(case.elem_bytes)
            summary.append({
                "case": case.name, "limit_ratio": min(r["limit_ratio"] for r in big),
                "target": target, "vs_numpy": min(r["vs_numpy"] for r in big),
                "limit_vs_numpy": min(r["limit_vs_numpy"] for r in big),
                "vs_literal": min(r["vs_literal"] for r in big),
                "vs_copy_bandwidth": min(r["vs_copy_bandwidth"] for r in big),
                "compile_s": max(r["compile_s"] for r in rows if r["case"] == case.name),
                "no_retrace": retrace_ok})
    summarised = sorted({r["log2_registers"] for r in rows if r["log2_registers"] >= SUMMARY_LOG2})
    if not summarised:
        print(f"\nNo summary: no size of 2^{SUMMARY_LOG2} or more was run (--max-log2)")
    else:
        print(f"\nSummary over 2^{summarised[0]}..2^{summarised[-1]} registers on {backend} "
              f"({platform.processor() or 'cpu'}): worst ratio over those sizes (each the best "
              f"of its timed calls)")
    print(f"{'case':32s} {'x limit':>8s} {'target':>7s} {'x numpy':>8s} {'(limit)':>8s} "
          f"{'x literal':>10s} {'compile':>8s}  ok")
    for s in summary:
        checks = {"limit": s["target"] is None or s["limit_ratio"] >= s["target"],
                  "numpy": not s["vs_numpy"] <= 1, "literal": s["vs_literal"] >= 1000,
                  "compile": s["compile_s"] < 2, "retrace": s["no_retrace"]}
        s["missed"] = [k for k, ok in checks.items() if not ok]
        target = "-" if s["target"] is None else f"{s['target']:.1f}"
        print(f"{s['case']:32s} {s['limit_ratio']:8.2f} {target:>7s} {s['vs_numpy']:8.1f} "
              f"{s['limit_vs_numpy']:8.1f} {s['vs_literal']:10.0f} {s['compile_s']:7.2f}s  "
              f"{'yes' if not s['missed'] else 'missed: ' + ', '.join(s['missed'])}")
    print("\nAs Markdown (the README's table):\n" + summary_markdown(summary))
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    for row in rows:
        row["copy_gb_per_s"] = copy_gbps
    result = {"backend": backend, "devices": [str(d) for d in jax.devices()],
              "copy_gb_per_s": copy_gbps, "malloc": args.malloc,
              "glibc_tunables": os.environ.get("GLIBC_TUNABLES", ""),
              "jax": jax.__version__, "compaction_kernels": native.enabled(),
              "rows": rows, "summary": summary}
    stem = f"throughput-{backend}" + ("" if args.malloc == "default" else f"-{args.malloc}")
    earlier = _earlier_cases(out / f"{stem}.json", result, {c.name for c in cases})
    if earlier:
        result["rows"] = earlier["rows"] + rows
        result["summary"] = earlier["summary"] + summary
        rows = result["rows"]
        print(f"kept {len({r['case'] for r in earlier['rows']})} other cases of "
              f"{out / f'{stem}.json'} (run with --out elsewhere to start afresh)")
    (out / f"{stem}.json").write_text(json.dumps(result, indent=1))
    _plot(rows, out / f"{stem}.png", f"{backend}, malloc {args.malloc}")
    if args.compare_bits:
        other = {(r["case"], r["log2_registers"]): r["sha256"]
                 for r in json.loads(pathlib.Path(args.compare_bits).read_text())["rows"]}
        mine = [r for r in rows if r["case"] in {c.name for c in cases}]
        same = [other.get((r["case"], r["log2_registers"])) == r["sha256"] for r in mine
                if (r["case"], r["log2_registers"]) in other]
        absent = sorted({f"{r['case']} 2^{r['log2_registers']}" for r in mine
                         if (r["case"], r["log2_registers"]) not in other})
        print(f"bits identical to {args.compare_bits}: {sum(same)}/{len(same)}"
              + (f"; not in that file, so not compared: {', '.join(absent)}" if absent else ""))
    print(f"saved {out / f'{stem}.json'} and the plot beside it")
    return 0


# The summary (and the targets) hold at sizes where per-call overheads no longer count.
SUMMARY_LOG2 = 18


def _earlier_cases(path: pathlib.Path, result: dict, run: set) -> dict | None:
    """The rows and summary of the cases this run did not measure, from an earlier results
    file of the same backend, devices and malloc setting: a run of some cases updates the
    file rather than replacing every other case's figures."""
    if not path.is_file():
        return None
    try:
        old = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    if any(old.get(k) != result[k] for k in ("backend", "devices", "malloc")):
        return None
    # each kept row keeps the copy bandwidth of the run that measured it
    rows = [{"copy_gb_per_s": old.get("copy_gb_per_s"), **r}
            for r in old.get("rows", []) if r["case"] not in run]
    return {"rows": rows, "summary": [s for s in old.get("summary", []) if s["case"] not in run]}


def summary_markdown(summary) -> str:
    lines = ["| instruction / dtype | x limit | x numpy | (limit x numpy) | x literal | compile |",
             "|---|---|---|---|---|---|"]
    lines += [f"| {s['case']} | {s['limit_ratio']:.2f} | {s['vs_numpy']:.1f} | "
              f"{s['limit_vs_numpy']:.1f} | {s['vs_literal']:.0f} | {s['compile_s']:.2f} s |"
              for s in summary]
    return "\n".join(lines)


def _plot(rows, path, backend):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(9, 5.5))
    colors = plt.cm.tab20.colors
    for i, name in enumerate(dict.fromkeys(r["case"] for r in rows)):
        mine = [r for r in rows if r["case"] == name]
        ax.plot([r["registers"] for r in mine], [r["registers_per_s"] for r in mine], marker="o",
                color=colors[2 * (i % 10) + i // 10], linestyle=("-", "--", ":")[i % 3],
                label=name)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("registers per call")
    ax.set_ylabel("registers / s")
    ax.set_title(f"ascjax throughput on {backend}")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7, ncol=2)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


if __name__ == "__main__":
    raise SystemExit(main())
