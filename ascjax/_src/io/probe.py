"""``ascjax probe``: input files that settle the conformance table's assumptions on an NPU.

A probe is one instruction call on tiny inputs (``input_*.bin``) whose output (``output.bin``,
and ``output_<part>.bin`` for a second result) differs under each reading of one assumption:
running it on a real NPU tells which reading the hardware takes. Order probes lay out the FPRev
queries (``reveal.reveal_order``: M at leaf i, -M at leaf j, s elsewhere, one row per pair i < j)
as files, so that the output's row sums give the size of every pair's lowest common ancestor
and hence the instruction's summation tree.

* ``plan(out, product)`` writes a folder per probe (inputs, ``README.md``, the outputs each
  reading predicts under ``expected/<reading>/``) and ``manifest.json`` (every probe, what it
  decides, the SHA-256 of each reading's outputs, and the assumptions no output can show).
* ``emulate(plan_dir, out, overrides)`` writes the outputs the emulator predicts from the
  plan's input files, under ``Config(product=..., **overrides)``.
* ``decide(plan_dir, outputs)`` says, for each probe, which reading the outputs match
  (``none`` with the first differing element, or ``missing``); for an order probe, the
  revealed tree and whether it equals the emulator's.

Every call goes through the public instructions; nothing here computes a value itself.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import itertools
import json
import os
import shutil
from collections.abc import Callable
from typing import Any

import numpy as np

import ascjax

from ..config import _CHOICES, PRODUCTS, Config
from ..formats import FORMATS
from ..registry import ASSUMPTIONS, INSTRUCTIONS
from ..study.orders import ORDERS, order_tree
from ..study.reveal import probe_values, reveal_order

MANIFEST = "manifest.json"
VERSION = 1


class ProbeError(ValueError):
    """Bad input to ``probe``: a missing or malformed plan folder, an unknown option."""


@dataclasses.dataclass(frozen=True)
class Probe:
    """One probe: an instruction call on ``inputs`` whose ``outputs`` tell readings apart.

    ``kind``: ``"assumption"`` (each combination of the explicit values of the ``Config``
    ``fields`` is a reading), ``"check"`` (an assumption with no second reading to predict:
    the one reading ``"assumed"``, which the output confirms or refutes) or ``"order"`` (rows
    of FPRev queries; ``fields`` are the ``Config`` fields its tree depends on, each
    combination a reading; none: the one reading ``"emulator"``). ``run(inputs,
    config)`` maps input stems to arrays and returns output stems to arrays; ``call`` says in
    vendor terms what the kernel does.
    """

    name: str
    kind: str
    decides: tuple[str, ...]
    instruction: str
    call: str
    inputs: dict
    outputs: tuple[tuple[str, str], ...]
    run: Callable
    fields: tuple[str, ...] = ()
    order: dict | None = None  # order probes: n, dtype, positions, output element
    products: tuple[str, ...] | None = None  # where the call exists, if narrower than the
    # instruction's own checks say

    def readings(self) -> dict[str, dict]:
        """Reading name -> the Config fields it sets: each combination of the explicit values
        of ``fields`` (an assumption probe of one field names a reading by its value)."""
        if self.kind == "check":
            return {"assumed": {}}
        if not self.fields:
            return {"emulator": {}}
        combos = itertools.product(*(
            [v for v in _CHOICES[f] if v is not None] for f in self.fields))
        named = self.kind == "assumption" and len(self.fields) == 1
        return {str(c[0]) if named else ",".join(
            f"{f}={v}" for f, v in zip(self.fields, c, strict=True)):
                dict(zip(self.fields, c, strict=True)) for c in combos}


def input_file(stem: str) -> str:
    return f"input_{stem}.bin"


def output_file(stem: str) -> str:
    return "output.bin" if stem == "dst" else f"output_{stem}.bin"


def _np(x: Any, dtype: str) -> np.ndarray:
    """An output as the array of ``dtype`` it is (never a value conversion)."""
    a = np.asarray(x)
    if a.dtype != FORMATS[dtype].storage_dtype:
        # a bug in a probe, not a product that lacks the call: not a ValueError / TypeError
        raise RuntimeError(f"probe: an output of dtype {a.dtype} is not {dtype}")
    return a


def _bits(values: list[int], dtype: str) -> np.ndarray:
    """An array of ``dtype`` from its bit patterns."""
    fmt = FORMATS[dtype]
    return np.array(values, f"uint{8 * fmt.width}").view(fmt.storage_dtype)


def _hw_mask(active: list[int], dtype: str) -> np.ndarray:
    """The 32-byte hardware form (bit j: byte j // 8, bit j % 8) of a mask of ``dtype``'s
    lanes ``active``."""
    bits = np.zeros(256, bool)
    bits[[i * FORMATS[dtype].width for i in active]] = True
    return np.packbits(bits, bitorder="little")


def _unpack(mask: np.ndarray) -> np.ndarray:
    return np.unpackbits(np.asarray(mask, np.uint8), bitorder="little").astype(bool)


# --- the assumption probes --------------------------------------------------------------------
# Each builder returns a Probe (inputs chosen by hand so that every pair of readings differs in
# at least one output element; ``plan`` and the tests check it).

def _register_probe(name, keys, field, ins, call, dtype, src, mask, kind="assumption",
                    extra=()):
    """A register call ``ins(src, mask)`` with the mask from ``input_mask.bin`` (hardware
    form), or from a pattern (``mask`` a callable of the config)."""
    function = getattr(ascjax, ins)
    inputs = {"src": (src, dtype)}
    if not callable(mask):
        inputs["mask"] = (mask, "uint8_t")

    def run(x, config):
        m = mask(config) if callable(mask) else _unpack(x["mask"])
        out = function(x["src"], m, dtype=dtype, config=config)
        if isinstance(out, tuple):
            return {"dst": _np(out[0], dtype), **{k: np.asarray(v) for k, v in
                                                   zip(extra, out[1:], strict=True)}}
        return {"dst": _np(out, dtype)}

    out_types = (("dst", dtype),) + tuple((k, "int32_t") for k in extra)
    return Probe(name, kind, keys, ins, call, inputs, out_types, run, _fields(field))


def _fields(field) -> tuple[str, ...]:
    return () if field is None else (field,) if isinstance(field, str) else tuple(field)


def _pattern(pattern, dtype):
    def make(config):
        return ascjax.create_mask(pattern, dtype, config=config)
    return make


def _assumption_probes() -> list[Probe]:
    f32 = "float"
    probes = [
        _register_probe(
            "A1_mask_layout", ("A1",), "mask_layout", "reduce_sum_datablock",
            "vector_bool m = asc_create_mask_b32(PAT_ALL); asc_reduce_sum_datablock(dst, src, m) "
            "with src a vector_half of input_src.bin; store dst to output.bin",
            "half", np.ones(128, np.float16), _pattern("PAT_ALL", "b32")),
        _register_probe(
            "A2_vl_overflow", ("A2",), "vl_overflow", "reduce_sum_datablock",
            "vector_bool m = asc_create_mask_b32(PAT_VL128); asc_reduce_sum_datablock(dst, src, "
            "m) with src a vector_float of input_src.bin; store dst to output.bin",
            f32, np.ones(64, np.float32), _pattern("PAT_VL128", f32)),
        _register_probe(
            # block 0: 65504 + 65504 overflows; block 1: inf + -inf is a NaN
            "A3_float_overflow", ("A3",), "float_overflow", "reduce_sum_datablock",
            "asc_reduce_sum_datablock(dst, src, asc_create_mask_b16(PAT_ALL)) with src a "
            "vector_half of input_src.bin; store dst to output.bin",
            "half", np.array([65504, 65504] + [0] * 14 + [np.inf, -np.inf] + [0] * 110,
                             np.float16), _pattern("PAT_ALL", "half")),
        _register_probe(
            # four -0 lanes and four masked lanes in block 0: +0 if a masked lane adds +0
            "A7_masked_lanes", ("A7",), "masked_lanes", "reduce_sum_datablock",
            "asc_reduce_sum_datablock(dst, src, asc_create_mask_b32(PAT_VL4)) with src a "
            "vector_float of input_src.bin (all -0); store dst to output.bin",
            f32, np.full(64, -0.0, np.float32), _pattern("PAT_VL4", f32)),
        _register_probe(
            # inf + -inf in block 0; a signalling NaN with a payload plus 1 in block 1
            "A8_nan_result", ("A8",), None, "reduce_sum_datablock",
            "asc_reduce_sum_datablock(dst, src, asc_create_mask_b32(PAT_ALL)) with src a "
            "vector_float of input_src.bin; store dst to output.bin",
            f32, _bits([0x7F800000, 0xFF800000] + [0] * 6 + [0x7F800123, 0x3F800000]
                       + [0] * 54, f32), _pattern("PAT_ALL", f32), kind="check"),
        _register_probe(
            # a negative NaN with a payload at lane 3: the type's quiet NaN or its own bits
            "A19_extreme_nan", ("A19",), "extreme_nan", "asc_reduce_max",
            "asc_reduce_max(dst, src, asc_create_mask_b32(PAT_ALL)) with src a vector_float of "
            "input_src.bin; store dst to output.bin",
            f32, _bits([0x3F800000] * 3 + [0xFFC01234] + [0x3F800000] * 60, f32),
            _pattern("PAT_ALL", f32)),
        _register_probe(
            # every active lane is -inf, lanes 0 and 1 are masked: index 0 or 2
            "A20_masked_extreme", ("A20",), "masked_extreme", "asc_reduce_max",
            "asc_reduce_max(dst, src, mask) with src a vector_float of input_src.bin (all "
            "-inf) and mask the vector_bool of input_mask.bin (lanes 2.. active); store dst "
            "to output.bin",
            f32, np.full(64, -np.inf, np.float32), _hw_mask(list(range(2, 64)), f32)),
        _register_probe(
            "A42_squeeze_status", ("A42",), "squeeze_status", "squeeze_with_status",
            "asc_squeeze_with_status(dst, src, asc_create_mask_b32(PAT_M4)) with src a "
            "vector_float of input_src.bin; store dst to output.bin and "
            "asc_get_squeeze_status() as one int32 to output_ar.bin",
            f32, np.arange(64, dtype=np.float32), _pattern("PAT_M4", f32), extra=("ar",)),
        _register_probe(
            # mask lanes 0 and 63: lanes 1.. read 1 if lane i counts lanes before it, 0 (and
            # lane 63 1) if it counts lanes 1..i
            "A48_unsqueeze_count", ("A48",), "unsqueeze_count", "unsqueeze",
            "asc_unsqueeze(dst, mask) with dst a vector_int32_t (input_src.bin; its values are "
            "not read) and mask the vector_bool of input_mask.bin (lanes 0 and 63 active); "
            "store dst to output.bin",
            "int32_t", np.zeros(64, np.int32), _hw_mask([0, 63], "int32_t")),
        _register_probe(
            # one active lane, 5: the max in lane 0 and its index in lane 1, or broadcast
            "A49_reduce_max_lanes", ("A49",), None, "asc_reduce_max",
            "asc_reduce_max(dst, src, mask) with src a vector_float of input_src.bin (1..64) "
            "and mask the vector_bool of input_mask.bin (lane 5 alone); store dst to "
            "output.bin",
            f32, np.arange(1, 65, dtype=np.float32), _hw_mask([5], f32), kind="check"),
    ]

    def gather_block(x, config):
        out = ascjax.gather_datablock(x["src"], x["index"], create_mask_for(config),
                                      dtype=f32, config=config)
        return {"dst": _np(out, f32)}

    def create_mask_for(config):
        return ascjax.create_mask("PAT_VL1", f32, config=config)

    probes.append(Probe(
        "A34_datablock_mask", "assumption", ("A34",), "gather_datablock",
        "asc_gather_datablock(dst, src, index, asc_create_mask_b32(PAT_VL1)) with src the 256 "
        "bytes of input_src.bin (float) at a 32-byte aligned UB address and index the uint32 "
        "register of input_index.bin; store dst to output.bin",
        {"src": (np.arange(1, 65, dtype=np.float32), f32),
         "index": (np.arange(64, dtype=np.uint32) % 8 * 32, "uint32_t")},
        (("dst", f32),), gather_block, ("datablock_mask",)))
    probes += _tensor_probes()
    return probes


def _tensor(name, keys, field, ins, call, inputs, run, outputs=(("dst", "float"),),
            kind="assumption", products=None):
    return Probe(name, kind, keys, ins, call, inputs, outputs, run, _fields(field),
                 products=products)


def _tensor_probes() -> list[Probe]:
    f32 = "float"
    seven = np.full(64, 7.0, np.float32)
    big = 2.0 ** 24

    def pair(x, c):
        return {"dst": _np(ascjax.pair_reduce_sum(x["dst"], x["src"], 1, 2, 1, 1, 8,
                                                  config=c), "half")}

    def block(x, c):
        return {"dst": _np(ascjax.block_reduce_sum(x["dst"], x["src"], 1, 8, 1, 1, 8,
                                                   config=c), f32)}

    def first_n(count):
        def run(x, c):
            dst, _ = ascjax.reduce_sum(x["dst"], x["src"], None, count, config=c)
            return {"dst": _np(dst, f32)}
        return run

    a17 = np.zeros(65, np.float32)
    a17[[0, 1, 64]] = [big, -big, 1.0]  # method 3: (2^24 + 1) - 2^24 = 0; method 2: 0 + 1
    a18 = np.zeros(256, np.float32)
    a18[[0, 64, 128, 192]] = [1.0, 0.0, 1.0, big]  # ((1+0)+1)+2^24 vs (1+0)+(1+2^24)

    def reduce_max(*args):
        def run(x, c):
            work = np.zeros(1024, np.float32)  # sharedTmpBuffer: its size only is checked
            dst, _ = ascjax.reduce_max(x["dst"], x["src"], work, *args, cal_index=True,
                                       config=c)
            return {"dst": _np(dst, f32)}
        return run

    def reduce_max_spr(x, c):  # A46: ReduceMax, then GetReduceRepeatMaxMinSpr
        work = np.zeros(1024, np.float32)
        dst, spr = ascjax.reduce_max(x["dst"], x["src"], work, 64, 2, 8, True, config=c)
        value, index = ascjax.get_reduce_repeat_max_min_spr(spr, config=c)
        return {"dst": _np(dst, f32), "spr": _np(value, f32), "spr_index": _np(index, f32)}

    def reduce_sum_spr(x, c):  # A47: ReduceSum's level-0 form, then GetReduceRepeatSumSpr
        dst, spr = ascjax.reduce_sum(x["dst"], x["src"], None, 64, 2, 16, config=c)
        return {"dst": _np(dst, f32),
                "spr": _np(ascjax.get_reduce_repeat_sum_spr(spr, config=c), f32)}

    def c_repeat_sum(x, c):  # A3 on A2/A3: the C API page's own example
        return {"dst": _np(ascjax.asc_repeat_reduce_sum(x["dst"], x["src"], 128, config=c),
                           "half")}

    a3 = np.zeros(128, np.float16)
    a3[:4] = [60000, 60000, -30000, 100]  # inf (IEEE) or 65504 - 29904 -> 35584 (saturating)
    a21 = np.array([1.0, np.nan, 3.0] + [0.0] * 61, np.float32)
    a25 = np.zeros(256, np.float32)
    a25[130] = 5.0  # repeat 1 (srcRepStride 16) lane 2: offset 130 or index 66
    a46 = np.arange(128, dtype=np.float32) % 7  # distinct maximum 9 at element 69 (repeat 1)
    a46[69] = 9.0
    a47 = np.arange(256, dtype=np.float32) % 5  # small integers: every order sums exactly

    def repeat_sum(x, c):
        dst, spr = ascjax.reduce_repeat(x["dst"], x["src"], 1, 4, 1, 1, 8, reduce_type="sum",
                                        config=c)
        return {"dst": _np(dst, f32), "spr": _np(ascjax.get_reduce_repeat_sum_spr(spr,
                                                                                  config=c), f32)}

    a23 = np.zeros(256, np.float32)
    a23[[0, 64, 128, 192]] = [1.0, 0.0, 1.0, big]

    def repeat_max(x, c):
        dst, spr = ascjax.reduce_repeat(x["dst"], x["src"], 64, 2, 1, 1, 16, reduce_type="max",
                                        config=c)
        value, index = ascjax.get_reduce_repeat_max_min_spr(spr, config=c)
        return {"dst": _np(dst, f32), "spr": _np(value, f32),
                "spr_index": _np(index, f32)}

    def zero_mask(x, c):
        state = ascjax.set_vector_mask(0, 2**64 - 1, dtype=f32, config=c)
        state = ascjax.set_vector_mask(0, 0, dtype=f32, state=state, config=c)
        out = ascjax.block_reduce_sum(x["dst"], x["src"], 1, ascjax.MASK_PLACEHOLDER, 1, 1, 8,
                                      is_set_mask=False, mask_state=state, config=c)
        return {"dst": _np(out, f32)}

    def gather(x, c):
        return {"dst": _np(ascjax.gather(x["dst"], x["src"], x["offset"], 0, 64, 2, 16,
                                         config=c), f32)}

    def scatter_first(x, c):
        return {"dst": _np(ascjax.scatter(x["dst"], x["src"], x["offset"], 0, 2, config=c),
                           f32)}

    def scatter_mask(x, c):
        return {"dst": _np(ascjax.scatter(x["dst"], x["src"], x["offset"], 0, 64, 2, 16,
                                          config=c), f32)}

    def gather_mask(x, c):
        dst, cnt = ascjax.gather_mask(x["dst"], x["src"], x["pattern"], False, 0, (1, 1, 8, 0),
                                      config=c)
        return {"dst": _np(dst, f32), "cnt": _np(cnt, "uint32_t")}

    def squeeze_ub(x, c):
        return {"dst": _np(ascjax.squeeze(x["dst"], x["src"], x["src1"], 1, 1, 1, 1, 8, 8, 8,
                                          config=c), "uint32_t")}

    def store(x, c):
        mask = ascjax.create_mask("PAT_VL4", f32, config=c)
        return {"dst": _np(ascjax.storealign(x["dst"], 0, x["src"], mask, config=c),
                           "uint8_t")}

    def gather8(x, c):
        return {"dst": _np(ascjax.gather(x["dst"], x["src"], x["offset"], 0, 128, 2, 4,
                                         config=c), "int8_t")}

    def gather_blocks(x, c):
        return {"dst": _np(ascjax.gather_datablock(x["dst"], x["src"], x["offset"], 8, 0, 1,
                                                   config=c), "uint32_t")}

    def counter(x, c):  # A28: 70 elements in Counter mode, repeatTime 1 has no effect
        out = ascjax.block_reduce_sum(x["dst"], x["src"], 1, ascjax.MASK_PLACEHOLDER, 1, 1, 8,
                                      is_set_mask=False,
                                      mask_state=ascjax.MaskState("counter", 0, 70), config=c)
        return {"dst": _np(out, f32)}

    ar = np.arange(1, 257, dtype=np.float32)
    offsets = (np.arange(256, dtype=np.uint32) * 4)[::-1].copy()  # element k reads 255 - k
    squeeze_src1 = np.zeros(64, np.uint32)
    squeeze_src1[[0, 5]] = [0b1010, 1]  # elements 0, 5 nonzero; as bits: elements 1, 3, 160
    return [
        _tensor("A4_store_masked", ("A4",), "store_masked", "storealign",
                "asc_storealign(dst, src, asc_create_mask_b32(PAT_VL4)) of a vector_float of "
                "input_src.bin into a 256-byte UB buffer first filled with input_dst.bin; "
                "copy those 256 bytes to output.bin",
                {"dst": (np.full(256, 0x77, np.uint8), "uint8_t"),
                 "src": (np.ones(64, np.float32), f32)}, store, (("dst", "uint8_t"),)),
        _tensor("A5_masked_pair", ("A5",), "masked_pair", "pair_reduce_sum",
                "PairReduceSum<half>(dst, src, 1, 2, 1, 1, 8) (repeatTime 1, mask 2: pairs "
                "1.. have both elements masked) with src input_src.bin, dst input_dst.bin",
                {"dst": (np.full(64, 7.0, np.float16), "half"),
                 "src": (np.ones(128, np.float16), "half")}, pair, (("dst", "half"),)),
        _tensor("A11_empty_block", ("A11",), "empty_block", "block_reduce_sum",
                "BlockReduceSum<float>(dst, src, 1, 8, 1, 1, 8) (mask 8: DataBlocks 1..7 have "
                "no active element) with src input_src.bin, dst input_dst.bin",
                {"dst": (seven[:8].copy(), f32), "src": (np.ones(64, np.float32), f32)}, block),
        _tensor("A17_first_n_mask_mode", ("A17",), "first_n_mask_mode", "reduce_sum",
                "ReduceSum<float>(dst, src, sharedTmpBuffer, 65) (260 bytes: the first-n form "
                "with 2 repeats) with src input_src.bin, dst input_dst.bin",
                {"dst": (np.zeros(1, np.float32), f32), "src": (a17, f32)}, first_n(65)),
        _tensor("A18_vector_merge", ("A18",), "vector_merge", "reduce_sum",
                "ReduceSum<float>(dst, src, sharedTmpBuffer, 256) (1024 bytes: 4 repeats "
                "merged by vector adds) with src input_src.bin, dst input_dst.bin",
                {"dst": (np.zeros(1, np.float32), f32), "src": (a18, f32)}, first_n(256)),
        _tensor("A21_max_min_nan", ("A21",), "max_min_nan", "reduce_max",
                "ReduceMax<float>(dst, src, sharedTmpBuffer, 64, true) (count 64, calIndex) "
                "with src input_src.bin (a NaN at element 1), dst input_dst.bin",
                {"dst": (np.zeros(2, np.float32), f32), "src": (a21, f32)}, reduce_max(64)),
        _tensor("A22_signed_zero", ("A22",), "signed_zero", "reduce_max",
                "ReduceMax<float>(dst, src, sharedTmpBuffer, 64, true) (count 64, calIndex) "
                "with src input_src.bin (-0, +0, then -1), dst input_dst.bin",
                {"dst": (np.zeros(2, np.float32), f32),
                 "src": (np.array([-0.0, 0.0] + [-1.0] * 62, np.float32), f32)},
                reduce_max(64)),
        _tensor("A23_sum_spr", ("A23",), "sum_spr", "reduce_repeat",
                "ReduceRepeat<ReduceType::SUM, float>(dst, src, 1, 4, 1, 1, 8) (mask 1, 4 "
                "repeats) with src input_src.bin, dst input_dst.bin; dst to output.bin, "
                "GetReduceRepeatSumSpr<float>() to output_spr.bin",
                {"dst": (np.zeros(4, np.float32), f32), "src": (a23, f32)}, repeat_sum,
                (("dst", f32), ("spr", f32))),
        _tensor("A24_spr_index", ("A24",), "spr_index", "reduce_repeat",
                "ReduceRepeat<ReduceType::MAX, float>(dst, src, 64, 2, 1, 1, 16) (srcRepStride "
                "16) with src input_src.bin, dst input_dst.bin; dst to output.bin, "
                "GetReduceRepeatMaxMinSpr<float>(value, index) to output_spr.bin and "
                "output_spr_index.bin (the index's bits in a float, as the SPR returns it)",
                {"dst": (np.zeros(4, np.float32), f32), "src": (a25, f32)}, repeat_max,
                (("dst", f32), ("spr", f32), ("spr_index", f32))),
        _tensor("A25_reduce_max_index", ("A25",), "reduce_max_index", "reduce_max",
                "ReduceMax<float>(dst, src, sharedTmpBuffer, 64, 2, 16, true) (mask 64, "
                "repeatTime 2, srcRepStride 16, calIndex) with src input_src.bin, dst "
                "input_dst.bin",
                {"dst": (np.zeros(2, np.float32), f32), "src": (a25, f32)},
                reduce_max(64, 2, 16)),
        _tensor("A46_reduce_max_spr_index", ("A46",), None, "reduce_max",
                "ReduceMax<float>(dst, src, sharedTmpBuffer, 64, 2, 8, true) (mask 64, "
                "repeatTime 2, srcRepStride 8: the page's continuous case, the maximum at "
                "element 69) with src input_src.bin, dst input_dst.bin; dst to output.bin, "
                "GetReduceRepeatMaxMinSpr<float>(value, index) to output_spr.bin and "
                "output_spr_index.bin (the index's bits in a float)",
                {"dst": (np.zeros(2, np.float32), f32), "src": (a46, f32)}, reduce_max_spr,
                (("dst", f32), ("spr", f32), ("spr_index", f32)), kind="check",
                products=("A2", "A3")),
        _tensor("A47_reduce_sum_spr_level0", ("A47",), None, "reduce_sum",
                "ReduceSum<float>(dst, src, sharedTmpBuffer, 64, 2, 16) (the level-0 form: "
                "mask 64, repeatTime 2, srcRepStride 16) with src input_src.bin, dst "
                "input_dst.bin; dst to output.bin, GetReduceRepeatSumSpr<float>() to "
                "output_spr.bin",
                {"dst": (np.zeros(1, np.float32), f32), "src": (a47, f32)}, reduce_sum_spr,
                (("dst", f32), ("spr", f32)), kind="check", products=("950", "A2", "A3")),
        _tensor("A3_float_overflow_c_api", ("A3",), "float_overflow", "asc_repeat_reduce_sum",
                "asc_repeat_reduce_sum(dst, src, 128) (count 128: the page's example, whose "
                "text says 35604) with src the half input_src.bin ([60000, 60000, -30000, "
                "100], then 0), dst input_dst.bin; dst to output.bin",
                {"dst": (np.zeros(1, np.float16), "half"), "src": (a3, "half")}, c_repeat_sum,
                (("dst", "half"),), products=("A2", "A3")),
        _tensor("A29_zero_vector_mask", ("A29",), "zero_vector_mask", "set_vector_mask",
                "SetVectorMask<float>(0, UINT64_MAX); SetVectorMask<float>(0, 0); then "
                "BlockReduceSum<float, false>(dst, src, 1, MASK_PLACEHOLDER, 1, 1, 8) with src "
                "input_src.bin, dst input_dst.bin",
                {"dst": (seven[:8].copy(), f32), "src": (np.ones(64, np.float32), f32)},
                zero_mask),
        _tensor("A30_gather_offsets", ("A30",), "gather_offsets", "gather",
                "Gather<float>(dst, src, srcOffset, 0, 64, 2, 16) (mask 64, repeatTime 2, "
                "dstRepStride 16) with src input_src.bin, srcOffset input_offset.bin (uint32 "
                "bytes), dst input_dst.bin",
                {"dst": (np.zeros(256, np.float32), f32), "src": (ar, f32),
                 "offset": (offsets, "uint32_t")}, gather),
        _tensor("A35_scatter_duplicates", ("A35",), "scatter_duplicates", "scatter",
                "Scatter<float>(dst, src, dstOffset, 0, 2) (count 2, both to byte 0) with src "
                "input_src.bin, dstOffset input_offset.bin, dst input_dst.bin",
                {"dst": (seven[:8].copy(), f32), "src": (np.array([1, 2], np.float32), f32),
                 "offset": (np.zeros(2, np.uint32), "uint32_t")}, scatter_first),
        _tensor("A37_scatter_offset", ("A37",), "scatter_offset", "scatter",
                "Scatter<float>(dst, src, dstOffset, 0, 64, 2, 16) (mask 64, repeatTime 2, "
                "srcRepStride 16) with src input_src.bin, dstOffset input_offset.bin, dst "
                "input_dst.bin",
                {"dst": (np.zeros(256, np.float32), f32), "src": (ar, f32),
                 "offset": (offsets, "uint32_t")}, scatter_mask),
        _tensor("A39_gather_mask_tail", ("A39",), "gather_mask_tail", "gather_mask",
                "GatherMask<float, uint32_t>(dst, src, src1, false, 0, {1, 1, 8, 0}, rsvdCnt) "
                "with src input_src.bin, src1 input_pattern.bin (keeps elements 0..2), dst "
                "input_dst.bin; dst to output.bin, rsvdCnt (uint32) to output_cnt.bin",
                {"dst": (seven.copy(), f32), "src": (np.arange(64, dtype=np.float32), f32),
                 "pattern": (np.array([7, 0], np.uint32), "uint32_t")}, gather_mask,
                (("dst", f32), ("cnt", "uint32_t"))),
        _tensor("A43_A44_squeeze_ub", ("A43", "A44"), ("squeeze_ub_mask", "squeeze_ub_tail"),
                "squeeze",
                "asc_squeeze(dst, src0, src1, 1, 1, 1, 1, 8, 8, 8) (uint32, repeat 1) with "
                "src0 input_src.bin, src1 input_src1.bin, dst input_dst.bin",
                {"dst": (np.full(64, 7, np.uint32), "uint32_t"),
                 "src": (np.arange(100, 164, dtype=np.uint32), "uint32_t"),
                 "src1": (squeeze_src1, "uint32_t")}, squeeze_ub, (("dst", "uint32_t"),)),
        _tensor("A28_counter_mode", ("A28",), None, "block_reduce_sum",
                "SetMaskCount(); SetVectorMask<float, MaskMode::COUNTER>(70); "
                "BlockReduceSum<float, false>(dst, src, 1, MASK_PLACEHOLDER, 1, 1, 8); "
                "SetMaskNorm() with src input_src.bin, dst input_dst.bin",
                {"dst": (np.zeros(16, np.float32), f32),  # 0: the empty blocks' fill or kept
                 "src": (np.ones(128, np.float32), f32)}, counter, kind="check"),
        *_empty_call_probes(),
        _tensor("A32_gather_int8", ("A32",), None, "gather",
                "Gather<int8_t>(dst, src, srcOffset, 0, 128, 2, 4) (mask 128, repeatTime 2, "
                "dstRepStride 4: a repeat is 4 DataBlocks) with src input_src.bin, srcOffset "
                "input_offset.bin (uint32 bytes), dst input_dst.bin",
                {"dst": (np.zeros(256, np.int8), "int8_t"),
                 "src": (np.arange(256).astype(np.uint8).view(np.int8), "int8_t"),
                 "offset": (np.arange(256, dtype=np.uint32)[::-1].copy(), "uint32_t")},
                gather8, (("dst", "int8_t"),), kind="check", products=("200I/500 A2",)),
        _tensor("A38_gatherb_block_stride", ("A38",), None, "gather_datablock",
                "asc_gather_datablock(dst, src, src_offset, 8, 0, 1) (uint32_t; "
                "dst_repeat_stride 8, dst_block_stride 0, repeat 1) with src input_src.bin, "
                "src_offset input_offset.bin (uint32 bytes, 8 DataBlocks), dst input_dst.bin",
                {"dst": (np.full(64, 7, np.uint32), "uint32_t"),
                 "src": (np.arange(64, dtype=np.uint32), "uint32_t"),
                 "offset": (np.arange(8, dtype=np.uint32)[::-1] * 32, "uint32_t")},
                gather_blocks, (("dst", "uint32_t"),), kind="check", products=("A2", "A3")),
        _tensor("A45_squeeze_ub_no_mask", ("A45",), None, "squeeze",
                "SetVectorMask<uint32_t>(0, 0xF) (lanes 0..3 only), then asc_squeeze(dst, src0, "
                "src1, 1, 1, 1, 1, 8, 8, 8) (uint32, repeat 1) with src0 input_src.bin, src1 "
                "input_src1.bin (every bit set), dst input_dst.bin",
                {"dst": (np.full(64, 7, np.uint32), "uint32_t"),
                 "src": (np.arange(100, 164, dtype=np.uint32), "uint32_t"),
                 # all bits set: every lane selected read as elements or as bits (A43), so
                 # no tail (A44) either
                 "src1": (np.full(64, 0xFFFFFFFF, np.uint32), "uint32_t")}, squeeze_ub,
                (("dst", "uint32_t"),), kind="check"),
    ]


def _empty_call_probes() -> list[Probe]:
    """A call with nothing to do: dst unchanged (the assumed reading). The other reading is
    the emulator refusing the call, which no output shows: ``emulate`` under it writes
    nothing for the probe."""
    f32 = "float"
    seven = np.full(64, 7.0, np.float32)

    def reduce_empty(x, c):
        dst, _ = ascjax.reduce_sum(x["dst"], x["src"], None, 64, 0, 8, config=c)
        return {"dst": _np(dst, f32)}

    def gather_empty(x, c):
        return {"dst": _np(ascjax.gather(x["dst"], x["src"], x["offset"], 0, 0, config=c), f32)}

    def scatter_empty(x, c):
        return {"dst": _np(ascjax.scatter(x["dst"], x["src"], x["offset"], 0, 0, config=c), f32)}

    def mask_counter(x, c):
        dst, cnt = ascjax.gather_mask(x["dst"], x["src"], 7, True, 100, (1, 1, 8, 0), config=c)
        return {"dst": _np(dst, f32), "cnt": _np(cnt, "uint32_t")}

    def mask_empty(x, c):
        dst, cnt = ascjax.gather_mask(x["dst"], x["src"], 7, False, 0, (1, 0, 8, 0), config=c)
        return {"dst": _np(dst, f32), "cnt": _np(cnt, "uint32_t")}

    src = np.arange(1, 129, dtype=np.float32)
    offsets = np.zeros(64, np.uint32)
    both = (("dst", f32), ("cnt", "uint32_t"))
    return [
        _tensor("A26_reduce_empty", ("A26",), None, "reduce_sum",
                "ReduceSum<float>(dst, src, sharedTmpBuffer, 64, 0, 8) (mask 64, repeatTime 0) "
                "with src input_src.bin, dst input_dst.bin",
                {"dst": (seven[:1].copy(), f32), "src": (src[:64].copy(), f32)}, reduce_empty,
                kind="check"),
        _tensor("A31_gather_empty", ("A31",), None, "gather",
                "Gather<float>(dst, src, srcOffset, 0, 0) (count 0) with src input_src.bin, "
                "srcOffset input_offset.bin, dst input_dst.bin",
                {"dst": (seven.copy(), f32), "src": (src[:64].copy(), f32),
                 "offset": (offsets, "uint32_t")}, gather_empty, kind="check"),
        _tensor("A36_scatter_empty", ("A36",), None, "scatter",
                "Scatter<float>(dst, src, dstOffset, 0, 0) (count 0) with src input_src.bin, "
                "dstOffset input_offset.bin, dst input_dst.bin",
                {"dst": (seven.copy(), f32), "src": (src[:64].copy(), f32),
                 "offset": (offsets, "uint32_t")}, scatter_empty, kind="check"),
        _tensor("A40_gather_mask_counter", ("A40",), None, "gather_mask",
                "GatherMask<float, uint32_t>(dst, src, 7, true, 100, {1, 1, 8, 0}, rsvdCnt) "
                "(Counter mode, 100 elements in one repeat, pattern 7: all) with src "
                "input_src.bin, dst input_dst.bin; dst to output.bin, rsvdCnt (uint32) to "
                "output_cnt.bin",
                # dst zeros: the tail past the count reads the same under both A39 readings
                {"dst": (np.zeros(128, np.float32), f32), "src": (src, f32)}, mask_counter,
                both, kind="check"),
        _tensor("A41_gather_mask_empty", ("A41",), None, "gather_mask",
                "GatherMask<float, uint32_t>(dst, src, 7, false, 0, {1, 0, 8, 0}, rsvdCnt) "
                "(repeatTimes 0) with src input_src.bin, dst input_dst.bin; dst to output.bin, "
                "rsvdCnt (uint32) to output_cnt.bin",
                {"dst": (seven.copy(), f32), "src": (src[:64].copy(), f32)}, mask_empty, both,
                kind="check"),
    ]


# --- the order probes ---------------------------------------------------------------------------

def _order_layout(n: int, dtype: str, width: int, positions: list[int]) -> np.ndarray:
    """One row per pair i < j of the n leaves: M at leaf i, -M at leaf j, s at the other
    leaves, 0 at the row's other positions (``width`` elements)."""
    big, small = probe_values(dtype)
    pairs = list(itertools.combinations(range(n), 2))
    x = np.zeros((len(pairs), width), np.float64)
    x[:, positions] = small
    rows = np.arange(len(pairs))
    pos = np.asarray(positions)
    x[rows, pos[[i for i, _ in pairs]]] = big
    x[rows, pos[[j for _, j in pairs]]] = -big
    return x.astype(FORMATS[dtype].storage_dtype)


def _order(name, ins, call, dtype, width, positions, run, dst_width=1, element=0, part="dst",
           fields=(), keys=(), out_types=None) -> Probe:
    n = len(positions)
    src = _order_layout(n, dtype, width, positions)
    inputs = {"src": (src, dtype)}
    if dst_width:
        inputs["dst"] = (np.zeros((len(src), dst_width), FORMATS[dtype].storage_dtype), dtype)
    return Probe(name, "order", ("order", *keys), ins, call, inputs,
                 out_types or (("dst", dtype),), run, fields=fields,
                 order={"n": n, "dtype": dtype, "positions": list(positions), "part": part,
                        "element": element})


def _order_probes() -> list[Probe]:
    def register(function, dtype, **kw):
        def run(x, c):
            mask = ascjax.create_mask("PAT_ALL", dtype, config=c)
            return {"dst": _np(function(x["src"], mask, dtype=dtype, config=c, **kw), dtype)}
        return run

    def tensor(function, *args, dtype="float", **keywords):
        def run(x, c):
            out = function(x["dst"], x["src"], *args, config=c, **keywords)
            # dst, or (dst, spr) from a call that also sets the SPRs (ReduceSum)
            return {"dst": _np(out[0] if isinstance(out, tuple) else out, dtype)}
        return run

    def spr_sum(x, c):
        _, spr = ascjax.reduce_repeat(x["dst"], x["src"], 8, 4, 1, 1, 1, reduce_type="sum",
                                      config=c)
        return {"spr": _np(ascjax.get_reduce_repeat_sum_spr(spr, config=c), "float")}

    def repeat_sum(x, c):  # ReduceRepeat's dst (its SPR has a probe of its own)
        dst, _ = ascjax.reduce_repeat(x["dst"], x["src"], 64, 1, 1, 1, 8, reduce_type="sum",
                                      config=c)
        return {"dst": _np(dst, "float")}

    f32, f16 = "float", "half"
    out = []
    for dtype, lanes, block in ((f32, 64, 8), (f16, 128, 16)):
        short = "f32" if dtype == f32 else "f16"
        width = 128 // lanes * 16  # the mask's bits per lane: b16 for half, b32 for float
        out += [
            _order(f"order_reduce_sum_datablock_{short}", "reduce_sum_datablock",
                   f"asc_reduce_sum_datablock(dst, src, asc_create_mask_b{width}(PAT_ALL)) per "
                   f"row of input_src.bin (a vector_{dtype}); the sum of DataBlock 0 is dst "
                   "lane 0", dtype, lanes, list(range(block)),
                   register(ascjax.reduce_sum_datablock, dtype), dst_width=0),
            _order(f"order_block_reduce_sum_{short}", "block_reduce_sum",
                   f"BlockReduceSum<{dtype}>(dst, src, 1, {lanes}, 1, 1, 8) per row of "
                   f"input_src.bin and input_dst.bin; DataBlock 0's sum is dst element 0",
                   dtype, lanes, list(range(block)),
                   tensor(ascjax.block_reduce_sum, 1, lanes, 1, 1, 8, dtype=dtype), dst_width=8),
            _order(f"order_asc_reduce_sum_{short}", "asc_reduce_sum",
                   f"asc_reduce_sum(dst, src, asc_create_mask_b{width}(PAT_ALL)) per row of "
                   f"input_src.bin (a vector_{dtype}); dst lane 0", dtype, lanes,
                   list(range(lanes)), register(ascjax.asc_reduce_sum, dtype), dst_width=0),
            _order(f"order_reg_reduce_data_block_{short}", "reg_reduce_data_block",
                   "Reg::ReduceDataBlock<ReduceType::SUM>(dst, src, mask) (mask all lanes) per "
                   f"row of input_src.bin (a {dtype} RegTensor); dst lane 0", dtype, lanes,
                   list(range(block)), register(ascjax.reg_reduce_data_block, dtype),
                   dst_width=0),
            _order(f"order_reduce_data_block_{short}", "reduce_data_block",
                   f"ReduceDataBlock<ReduceType::SUM, {dtype}>(dst, src, {lanes}, 1, 1, 1, 8) "
                   "per row of input_src.bin and input_dst.bin; DataBlock 0's sum is dst "
                   "element 0", dtype, lanes, list(range(block)),
                   tensor(ascjax.reduce_data_block, lanes, 1, 1, 1, 8, reduce_type="sum",
                          dtype=dtype), dst_width=8),
            _order(f"order_datablock_reduce_sum_{short}", "datablock_reduce_sum",
                   f"asc_datablock_reduce_sum(dst, src, {lanes}) (count {lanes}) per row of "
                   "input_src.bin and input_dst.bin; DataBlock 0's sum is dst element 0", dtype,
                   lanes, list(range(block)),
                   tensor(ascjax.datablock_reduce_sum, lanes, dtype=dtype), dst_width=8),
        ]
    out += [
        _order("order_reg_reduce_f32", "reg_reduce",
               "Reg::Reduce<ReduceType::SUM>(dst, src, mask) (mask all lanes) per row of "
               "input_src.bin (a float RegTensor); dst lane 0", f32, 64, list(range(64)),
               register(ascjax.reg_reduce, f32), dst_width=0),
        _order("order_reduce_repeat_f32", "reduce_repeat",
               "ReduceRepeat<ReduceType::SUM, float>(dst, src, 64, 1, 1, 1, 8) per row of "
               "input_src.bin and input_dst.bin; dst element 0", f32, 64, list(range(64)),
               repeat_sum),
        _order("order_repeat_reduce_sum_f32", "repeat_reduce_sum",
               "RepeatReduceSum<float>(dst, src, 1, 64, 0, 1, 1, 8) per row of input_src.bin and "
               "input_dst.bin; dst element 0", f32, 64, list(range(64)),
               tensor(ascjax.repeat_reduce_sum, 1, 64, 0, 1, 1, 8)),
        _order("order_asc_repeat_reduce_sum_f32", "asc_repeat_reduce_sum",
               "asc_repeat_reduce_sum(dst, src, 64) (count 64) per row of input_src.bin and "
               "input_dst.bin; dst element 0", f32, 64, list(range(64)),
               tensor(ascjax.asc_repeat_reduce_sum, 64)),
        _order("order_whole_reduce_sum_f32", "whole_reduce_sum",
               "WholeReduceSum<float>(dst, src, 64, 1, 1, 1, 8) per row of input_src.bin and "
               "input_dst.bin; dst element 0", f32, 64, list(range(64)),
               tensor(ascjax.whole_reduce_sum, 64, 1, 1, 1, 8)),
        _order("order_reduce_sum_first_n_f32", "reduce_sum",
               "ReduceSum<float>(dst, src, sharedTmpBuffer, 65) per row of input_src.bin and "
               "input_dst.bin (260 bytes: 2 repeats); dst element 0", f32, 65, list(range(65)),
               tensor(ascjax.reduce_sum, None, 65), fields=("first_n_mask_mode",),
               keys=("A17",)),
        _order("order_reduce_sum_level0_f32", "reduce_sum",
               "ReduceSum<float>(dst, src, sharedTmpBuffer, 8, 3, 1) (mask 8, repeatTime 3, "
               "srcRepStride 1: 8 elements of each of 3 repeats) per row of input_src.bin and "
               "input_dst.bin; dst element 0", f32, 80, list(range(24)),
               tensor(ascjax.reduce_sum, None, 8, 3, 1), keys=("A12",)),
        _order("order_reduce_repeat_spr_f32", "reduce_repeat",
               "ReduceRepeat<ReduceType::SUM, float>(dst, src, 8, 4, 1, 1, 1) (mask 8, 4 "
               "repeats, srcRepStride 1) per row of input_src.bin and input_dst.bin; "
               "GetReduceRepeatSumSpr<float>() to output_spr.bin", f32, 88, list(range(32)),
               spr_sum, dst_width=4, part="spr", fields=("sum_spr",), keys=("A23",),
               out_types=(("spr", f32),)),
    ]
    return out


# --- undecidable assumptions -------------------------------------------------------------------

UNDECIDABLE = {
    "A6": "no instruction reads an fp8_e8m0 value (they move its bits); the reading is the host "
          "codec's (encode / decode), not an NPU output",
    "A9": "a range of strides the emulator accepts: whether a call is accepted, not an output",
    "A10": "a type the emulator accepts (a compile-time question), not an output",
    "A13": "encode's default round mode: a host codec, not an NPU instruction",
    "A14": "encode's default overflow: a host codec, not an NPU instruction",
    "A15": "HiFloat8 rounding of the vendor host codec, not an NPU instruction",
    "A16": "encode's intermediate type: a host codec, not an NPU instruction",
    "A27": "argument checks (work-space size, index range): whether a call is accepted, not an "
           "output",
    "A33": "a misaligned offset is an error in the emulator: whether a call is accepted, not an "
           "output",
    "A50": "a type row the emulator accepts (a compile-time question), not an output",
    "A51": "a range of repeats the emulator accepts: whether a call is accepted, not an output",
}


def all_probes() -> list[Probe]:
    """Every probe, on any product (``plan`` keeps those the product runs)."""
    return list(_built_probes())


@functools.cache
def _built_probes() -> tuple[Probe, ...]:
    """The probes, built once a process: they are fixed data (frozen, their inputs drawn from
    fixed seeds), and building them (the order probes' FPRev layouts) takes ~20 ms, which
    ``emulate`` and ``decide`` paid on every call."""
    return tuple(_assumption_probes() + _order_probes())


def probes_by_name() -> dict[str, Probe]:
    return {p.name: p for p in _built_probes()}


# --- running a probe --------------------------------------------------------------------------

def _config(product: str, fields: dict) -> Config:
    return Config(product=product, **fields)


_CACHE: dict = {}
_CACHE_SIZE = 256


def compute(probe: Probe, inputs: dict, config: Config) -> dict[str, np.ndarray]:
    """The outputs ``probe`` predicts under ``config`` from ``inputs`` (stem -> array).

    The instructions are pure functions of their inputs and the Config: results are kept by
    (probe, config, input bytes), so a plan and an emulate in one process compute a reading
    once."""
    key = (probe.name, config, tuple(
        (k, np.shape(v), hashlib.sha256(np.ascontiguousarray(v).tobytes()).hexdigest())
        for k, v in sorted(inputs.items())))
    if key not in _CACHE:
        out = probe.run(inputs, config)
        if len(_CACHE) >= _CACHE_SIZE:
            _CACHE.pop(next(iter(_CACHE)))
        _CACHE[key] = {stem: _np(out[stem], dtype) for stem, dtype in probe.outputs}
    return {k: v.copy() for k, v in _CACHE[key].items()}


def _digest(arrays: dict) -> dict[str, str]:
    return {output_file(k): hashlib.sha256(np.ascontiguousarray(v).tobytes()).hexdigest()
            for k, v in arrays.items()}


def _tree_json(tree):
    return int(tree) if isinstance(tree, (int, np.integer)) else [_tree_json(t) for t in tree]


def _tree_tuple(tree):
    return tree if isinstance(tree, int) else tuple(_tree_tuple(t) for t in tree)


def reveal_from_output(order: dict, values: np.ndarray):
    """The summation tree the row sums ``values`` (one per pair i < j) reveal."""
    n, dtype = order["n"], order["dtype"]
    big, small = probe_values(dtype)
    pairs = list(itertools.combinations(range(n), 2))
    if len(values) != len(pairs):
        raise ValueError(f"{len(values)} sums for {len(pairs)} pairs")
    measured = dict(zip(pairs, np.asarray(values, np.float64), strict=True))

    def lookup(x):
        x = np.asarray(x, np.float64)
        out = np.zeros(len(x))
        for k, row in enumerate(x):
            hi, lo = np.flatnonzero(row == big), np.flatnonzero(row == -big)
            if len(hi) and len(lo):
                out[k] = measured[tuple(sorted((int(hi[0]), int(lo[0]))))]
        return out

    return reveal_order(lookup, n, dtype=dtype, big=big, small=small)


def describe_tree(tree, n: int, dtype: str) -> str:
    """A known order's name (``"adjacent pairs"``, ``"sequential"``, ``"repeat_vector_merge"``),
    ``"sequential over K groups of adjacent pairs"`` (repeat results added in order), or the
    nested tuple."""
    names = {"adjacent_tree": "adjacent pairs"}
    for o in ORDERS:
        if o != "kahan" and order_tree(o, n, FORMATS[dtype]) == tree:
            return names.get(o, o)
    for size in range(2, n // 2 + 1):  # repeat results added in order: a chain of groups
        if n % size == 0 and tree == _chain([_shift(order_tree("adjacent_tree", size,
                                                               FORMATS[dtype]), k)
                                             for k in range(0, n, size)]):
            return f"sequential over {n // size} groups of {size} in adjacent pairs"
    return repr(tree).replace(" ", "")


def _chain(items: list):
    t = items[0]
    for item in items[1:]:
        t = (t, item)
    return t


def _leaf_list(tree) -> list[int]:
    return [tree] if isinstance(tree, int) else [x for t in tree for x in _leaf_list(t)]


def _shift(tree, k: int):
    return tree + k if isinstance(tree, int) else tuple(_shift(t, k) for t in tree)


def _order_values(probe: Probe, arrays: dict) -> np.ndarray:
    part = arrays[probe.order["part"]]
    rows = len(probe.inputs["src"][0])
    return part.reshape(rows, -1)[:, probe.order["element"]].astype(np.float64)


# The register (c-reg) calls and the UB register loads / stores: the 950's API only (the
# emulating functions take no product, so the plan says so itself).
REGISTER_ONLY = ("reduce_sum_datablock", "asc_reduce_sum", "asc_reduce_max", "asc_reduce_min",
                 "squeeze_with_status", "gather_datablock", "storealign",
                 "reg_reduce", "reg_reduce_data_block")


def _runs_on(probe: Probe, product: str) -> str | None:
    """Why ``probe`` cannot run on ``product`` (None: it can)."""
    if probe.products is not None:
        return None if product in probe.products else (
            f"the probe's call is one of {list(probe.products)} only")
    if probe.instruction in REGISTER_ONLY and product != "950":
        return f"{INSTRUCTIONS[probe.instruction].ascend}: a register call of the 950 only"
    return None


def _chosen(names: list[str] | None, where: str) -> list[Probe]:
    probes = all_probes()
    if names is None:
        return probes
    known = {p.name for p in probes}
    unknown = [n for n in names if n not in known]
    if unknown:
        raise ProbeError(f"probe {where}: unknown probe(s) {unknown}; valid: {sorted(known)}")
    return [p for p in probes if p.name in names]


# --- plan ---------------------------------------------------------------------------------------

def _check_product(product: str) -> str:
    if product not in PRODUCTS:
        raise ProbeError(f"probe: --product {product!r} is not one of {list(PRODUCTS)}")
    return product


def _write(path: str, array: np.ndarray) -> None:
    np.ascontiguousarray(array).tofile(path)


def plan(out: str, product: str = "950", names: list[str] | None = None) -> dict:
    """Write the probes ``product`` runs (of ``names``, default all) into ``out``; return the
    manifest."""
    _check_product(product)
    chosen = _chosen(names, "plan")
    if os.path.exists(out) and not os.path.isdir(out):
        raise ProbeError(f"probe plan: --out {out} exists and is not a directory")
    os.makedirs(out, exist_ok=True)
    default = Config(product=product)
    entries, skipped = [], []
    for probe in chosen:
        inputs = {k: a for k, (a, _) in probe.inputs.items()}
        readings = probe.readings()
        why = _runs_on(probe, product)
        if why:
            skipped.append({"probe": probe.name, "decides": list(probe.decides), "reason": why})
            continue
        try:
            results = {r: compute(probe, inputs, _config(product, f))
                       for r, f in readings.items()}
            emulator = compute(probe, inputs, default)
        except (ValueError, TypeError) as error:  # the product has no such call
            skipped.append({"probe": probe.name, "decides": list(probe.decides),
                            "reason": " ".join(str(error).split())})
            continue
        distinct = len({json.dumps(_digest(a), sort_keys=True) for a in results.values()})
        if probe.kind == "assumption" and distinct < len(results):
            skipped.append({"probe": probe.name, "decides": list(probe.decides),
                            "reason": f"its readings give the same outputs on {product} (the "
                                      f"assumption does not apply there)"})
            continue
        entry = _entry(probe, product, results, emulator)
        if probe.kind == "order" and probe.fields and distinct == 1:  # one tree whatever
            entry["decides"] = entry["decides"][:1]  # the fields: it settles none of theirs
        folder = os.path.join(out, probe.name)
        if os.path.isdir(folder):
            shutil.rmtree(folder)
        os.makedirs(folder)
        for stem, (array, _) in probe.inputs.items():
            _write(os.path.join(folder, input_file(stem)), array)
        for reading, arrays in results.items():
            sub = os.path.join(folder, "expected", _safe(reading))
            os.makedirs(sub)
            for stem, array in arrays.items():
                _write(os.path.join(sub, output_file(stem)), array)
        with open(os.path.join(folder, "README.md"), "w") as f:
            f.write(_readme(probe, entry))
        entries.append(entry)
    manifest = {"version": VERSION, "product": product, "probes": entries,
                "skipped": skipped, "undecidable": [
                    {"assumption": k, "decidable": False, "reason": r}
                    for k, r in UNDECIDABLE.items()]}
    with open(os.path.join(out, MANIFEST), "w") as f:
        json.dump(manifest, f, indent=1, sort_keys=True)
        f.write("\n")
    return manifest


def _safe(reading: str) -> str:
    return reading.replace("=", "-").replace(",", "_")


def _entry(probe: Probe, product: str, results: dict, emulator: dict) -> dict:
    ins = INSTRUCTIONS[probe.instruction]
    entry = {
        "name": probe.name, "kind": probe.kind, "decides": list(probe.decides),
        "fields": list(probe.fields), "instruction": probe.instruction,
        "vendor": ins.ascend, "product": product, "call": probe.call,
        "inputs": [{"file": input_file(k), "dtype": t, "elements": int(np.size(a))}
                   for k, (a, t) in probe.inputs.items()],
        "outputs": [{"file": output_file(k), "dtype": t,
                     "elements": int(np.size(emulator[k]))} for k, t in probe.outputs],
        "readings": {r: {"sha256": _digest(a), "files": f"expected/{_safe(r)}/"}
                     for r, a in results.items()},
        "emulator": sorted(r for r, a in results.items() if _digest(a) == _digest(emulator)),
    }
    if probe.kind == "order":
        order = probe.order
        trees = {r: reveal_from_output(order, _order_values(probe, a)) for r, a in results.items()}
        entry["order"] = dict(order, rows=len(probe.inputs["src"][0]),
                              big=probe_values(order["dtype"])[0],
                              small=probe_values(order["dtype"])[1])
        for r, tree in trees.items():
            entry["readings"][r]["tree"] = _tree_json(tree)
            entry["readings"][r]["described"] = describe_tree(tree, order["n"], order["dtype"])
    return entry


def _readme(probe: Probe, entry: dict) -> str:
    ins = INSTRUCTIONS[probe.instruction]
    lines = [f"# Probe {probe.name}", ""]
    if probe.kind == "order":
        o = entry["order"]
        lines.append(f"Reveals the summation tree of `{ins.ascend}` ({o['dtype']}, {o['n']} "
                     f"leaves) on {entry['product']} by the FPRev method: row k of the inputs "
                     f"puts M = {o['big']:g} at leaf i, -M at leaf j (the k-th pair i < j in "
                     f"lexicographic order), s = {o['small']:g} at the other leaves (elements "
                     f"{_span(o['positions'])} of each src row) and 0 elsewhere; the sum is "
                     f"(n - size of the subtree joining i and j) * s.")
        if entry["decides"][1:]:
            lines += ["", "It also settles " + ", ".join(entry["decides"][1:]) + "."]
    else:
        keys = ", ".join(probe.decides)
        text = {k: (t, o) for k, t, o in ASSUMPTIONS}
        verb = "Checks" if probe.kind == "check" else "Decides"
        lines += [f"{verb} {keys} on {entry['product']}:", ""]
        lines += [f"> {k}: {text[k][0]} (other reading: {text[k][1]})" for k in probe.decides]
        if probe.kind == "check":
            other = ("no Config field gives another" if text[probe.decides[0]][1].startswith(
                "none") else "the other is the emulator refusing the call, which no output "
                "shows")
            lines += ["", (f"One reading is predicted (`assumed`): {other}. An output that "
                      f"differs refutes the assumption.")]
    lines += ["", "## Run", "", f"Kernel: {probe.call}.", ""]
    rows = len(next(iter(probe.inputs.values()))[0]) if probe.kind == "order" else 1
    if probe.kind == "order":
        lines += [(f"Run it once per row: the inputs hold {rows} rows (one call each); "
                   f"write the rows of each output one after another."), ""]
    lines += ["| file | type | elements |", "|---|---|---|"]
    lines += [f"| `{i['file']}` (input) | {i['dtype']} | {i['elements']} |"
              for i in entry["inputs"]]
    lines += [f"| `{o['file']}` (output) | {o['dtype']} | {o['elements']} |"
              for o in entry["outputs"]]
    if any(i["file"] == input_file("mask") for i in entry["inputs"]):
        lines += ["", (f"`{input_file('mask')}` is a register mask in the hardware's 32-byte "
                       "form: bit j of the 256 (byte j // 8, bit j % 8, least significant "
                       "first) enables register byte j, so element i of a 2-byte type is bit "
                       "2i and of a 4-byte type bit 4i; load it as the `vector_bool` the "
                       "call takes (e.g. with `asc_loadalign` from UB).")]
    if probe.kind == "order" and entry["order"]["dtype"] == "half":
        lines += ["", ("The leaves hold half subnormals (s above): an NPU that flushed them "
                       "would write zeros, which reveal no tree; `decide` then names no "
                       "reading.")]
    lines += ["", "## Readings", "", "| reading | SHA-256 of the outputs | files |",
              "|---|---|---|"]
    for r, v in entry["readings"].items():
        digest = ", ".join(f"{f}: {h[:16]}..." for f, h in v["sha256"].items())
        extra = f" ({v['described'][:60]})" if "described" in v else ""
        lines.append(f"| {r}{extra} | {digest} | `{v['files']}` |")
    lines += ["", f"The emulator's default reading: {', '.join(entry['emulator']) or 'none'}.",
              "", "Put the NPU's output files in `OUTDIR/" + probe.name + "/` and run "
              "`ascjax probe decide PLAN OUTDIR`.", ""]
    return "\n".join(lines)


def _span(positions: list[int]) -> str:
    if positions == list(range(positions[0], positions[-1] + 1)):
        return f"{positions[0]}..{positions[-1]}"
    return ", ".join(map(str, positions))


# --- emulate ------------------------------------------------------------------------------------

def load_manifest(plan_dir: str) -> dict:
    path = os.path.join(plan_dir, MANIFEST)
    try:
        with open(path) as f:
            manifest = json.load(f)
    except FileNotFoundError:
        raise ProbeError(f"probe: {plan_dir} holds no {MANIFEST} (make one with "
                         f"`ascjax probe plan --out DIR`)") from None
    except (OSError, json.JSONDecodeError) as error:
        raise ProbeError(f"probe: {path} cannot be read: {error}") from None
    if not isinstance(manifest, dict) or manifest.get("version") != VERSION or not isinstance(
            manifest.get("probes"), list):
        raise ProbeError(f"probe: {path} is not a version-{VERSION} probe manifest")
    return manifest


def parse_overrides(items: list[str]) -> dict:
    """``FIELD=VALUE`` items as Config fields (``None`` for the per-product readings)."""
    fields = {}
    for item in items:
        field, sep, value = item.partition("=")
        if not sep or field not in _CHOICES or field == "out_of_range":
            valid = [f for f in _CHOICES if f != "out_of_range"]
            raise ProbeError(f"probe emulate: --config {item!r} must be FIELD=VALUE with FIELD "
                             f"one of {valid}")
        choices = {str(c): c for c in _CHOICES[field]}
        if value not in choices:
            raise ProbeError(f"probe emulate: --config {field}={value!r} is not one of "
                             f"{list(choices)}")
        fields[field] = choices[value]
    return fields


def _read_inputs(probe: Probe, folder: str) -> dict:
    arrays = {}
    for stem, (array, dtype) in probe.inputs.items():
        path = os.path.join(folder, input_file(stem))
        try:
            data = np.fromfile(path, FORMATS[dtype].storage_dtype)
        except OSError as error:
            raise ProbeError(f"probe emulate: {path} cannot be read: {error}") from None
        if data.size != np.size(array):
            raise ProbeError(f"probe emulate: {path} holds {data.size} elements of {dtype}, "
                             f"the probe {np.size(array)}")
        arrays[stem] = data.reshape(np.shape(array))
    return arrays


def emulate(plan_dir: str, out: str, overrides: dict | None = None,
            names: list[str] | None = None) -> dict:
    """Write the emulator's outputs for every probe of the plan (of ``names``, default all)
    under ``Config(product=<the plan's>, **overrides)``.

    Returns ``{"written": [files], "refused": {probe: message}}``: a probe whose call the
    emulator refuses under these readings (``reduce_empty="raise"`` and the like) writes
    nothing, as no NPU output can show a refusal."""
    manifest = load_manifest(plan_dir)
    config = _config(manifest["product"], overrides or {})
    known = probes_by_name()
    planned = [e.get("name") for e in manifest["probes"]]
    if names is not None and set(names) - set(planned):
        raise ProbeError(f"probe emulate: {sorted(set(names) - set(planned))} are not probes "
                         f"of {plan_dir}; it holds {planned}")
    written, refused = [], {}
    for entry in manifest["probes"]:
        if names is not None and entry.get("name") not in names:
            continue
        probe = known.get(entry.get("name"))
        if probe is None:
            raise ProbeError(f"probe emulate: {plan_dir} names an unknown probe "
                             f"{entry.get('name')!r} (made by another ascjax version?)")
        inputs = _read_inputs(probe, os.path.join(plan_dir, probe.name))
        try:
            arrays = compute(probe, inputs, config)
        except (ValueError, TypeError) as error:
            refused[probe.name] = " ".join(str(error).split())
            continue
        folder = os.path.join(out, probe.name)
        os.makedirs(folder, exist_ok=True)
        for stem, array in arrays.items():
            _write(os.path.join(folder, output_file(stem)), array)
            written.append(os.path.join(folder, output_file(stem)))
    return {"written": written, "refused": refused}


# --- decide -------------------------------------------------------------------------------------

def _first_difference(probe: Probe, entry: dict, got: dict, expected: dict) -> dict:
    for o in entry["outputs"]:
        name, dtype = o["file"], o["dtype"]
        a, b = got[name], expected[name]
        if a.size != b.size:
            return {"file": name, "element": None,
                    "detail": f"{a.size} elements, expected {b.size}"}
        ua = a.view(f"uint{8 * FORMATS[dtype].width}")
        ub = b.view(ua.dtype)
        diff = np.flatnonzero(ua != ub)
        if len(diff):
            k = int(diff[0])
            width = 2 * FORMATS[dtype].width
            return {"file": name, "element": k, "got": f"0x{int(ua[k]):0{width}x}",
                    "expected": f"0x{int(ub[k]):0{width}x}"}
    return {}


def decide(plan_dir: str, outputs: str) -> dict:
    """For each probe of the plan: the readings the outputs in ``outputs`` match."""
    manifest = load_manifest(plan_dir)
    if not os.path.isdir(outputs):
        raise ProbeError(f"probe decide: {outputs} is not a directory")
    known = probes_by_name()
    results = []
    for entry in manifest["probes"]:
        probe = known.get(entry.get("name"))
        if probe is None:
            raise ProbeError(f"probe decide: {plan_dir} names an unknown probe "
                             f"{entry.get('name')!r}")
        results.append(_decide_one(probe, entry, plan_dir, os.path.join(outputs, probe.name)))
    by_name = {r["name"]: r for r in results}
    for name, (first, shows) in SHOWN_ONLY_UNDER.items():
        r, p = by_name.get(name), by_name.get(first)
        if r and p and r["status"] == "match" and p["status"] == "match" and not (
                set(p["readings"]) & set(shows)):
            r |= {"status": "not shown", "because": f"{first} reads "
                  f"{', '.join(p['readings'])}, under which this output shows nothing of "
                  f"{', '.join(r['decides'])}"}
    if results and all(r["status"] == "missing" for r in results):
        first = manifest["probes"][0]
        raise ProbeError(f"probe decide: {outputs} holds no probe's output (e.g. "
                         f"{os.path.join(outputs, first['name'], first['outputs'][0]['file'])}"
                         f"): give the folder the NPU's outputs were put in, one subfolder per "
                         f"probe")
    exit_code = 2 if any(r["status"] == "bad dump" for r in results) else \
        1 if any(r["status"] == "none" for r in results) else 0
    return {"product": manifest["product"], "probes": results,
            "undecidable": manifest.get("undecidable", []), "skipped": manifest.get("skipped", []),
            "decided": sum(r["status"] == "match" and (len(r["readings"]) == 1
                                                       or r["kind"] == "order")
                           for r in results), "exit": exit_code}


# Probes whose output means something only under a reading of another probe's assumption:
# name -> (that probe, the readings under which it shows its own). A18's vector merge runs
# only in Counter mode (A17); under A17's normal reading its output is the tree reading's.
SHOWN_ONLY_UNDER = {"A18_vector_merge": ("A17_first_n_mask_mode", ("counter",))}


def _read(path: str, dtype: str) -> np.ndarray | None:
    if not os.path.isfile(path):
        return None
    return np.fromfile(path, FORMATS[dtype].storage_dtype)


def _decide_one(probe: Probe, entry: dict, plan_dir: str, folder: str) -> dict:
    result = {"name": probe.name, "kind": probe.kind, "decides": entry["decides"],
              "fields": entry.get("fields", []), "emulator": entry["emulator"]}
    got = {o["file"]: _read(os.path.join(folder, o["file"]), o["dtype"])
           for o in entry["outputs"]}
    if any(v is None for v in got.values()):
        missing = [f for f, v in got.items() if v is None]
        return result | {"status": "missing", "readings": [], "missing": missing}
    wrong = [f"{o['file']} holds {size} bytes, expected {o['elements'] * width} "
             f"({o['elements']} {o['dtype']})" for o in entry["outputs"]
             if (size := os.path.getsize(os.path.join(folder, o["file"])))
             != o["elements"] * (width := FORMATS[o["dtype"]].width)]
    if wrong:  # a dump of another length or type: the kernel wrote it wrong, not the reading
        return result | {"status": "bad dump", "readings": [], "bad": wrong}
    if probe.kind == "order":
        return result | _decide_order(probe, entry, got)
    digest = {f: hashlib.sha256(v.tobytes()).hexdigest() for f, v in got.items()}
    matches = [r for r, v in entry["readings"].items() if v["sha256"] == digest]
    result |= {"status": "match" if matches else "none", "readings": matches}
    if not matches:
        reading = entry["emulator"][0] if entry["emulator"] else next(iter(entry["readings"]))
        sub = os.path.join(plan_dir, probe.name, entry["readings"][reading]["files"])
        expected = {o["file"]: _read(os.path.join(sub, o["file"]), o["dtype"])
                    for o in entry["outputs"]}
        if any(v is None for v in expected.values()):
            raise ProbeError(f"probe decide: the plan's expected files under {sub} are missing")
        result["first_difference"] = dict(_first_difference(probe, entry, got, expected),
                                          reading=reading)
    return result


def _decide_order(probe: Probe, entry: dict, got: dict) -> dict:
    order = entry["order"]
    part = got[output_file(order["part"])]
    rows = order["rows"]
    if part.size % rows:
        return {"status": "none", "readings": [], "tree": None,
                "error": f"{part.size} elements is not {rows} rows"}
    values = part.reshape(rows, -1)[:, order["element"]].astype(np.float64)
    try:
        tree = reveal_from_output(order, values)
    except (ValueError, KeyError) as error:
        return {"status": "none", "readings": [], "tree": None, "error": str(error)}
    matches = [r for r, v in entry["readings"].items() if _tree_tuple(v["tree"]) == tree]
    emulator = [r for r in entry["emulator"] if r in matches]
    return {"status": "match" if matches else "none", "readings": matches,
            "tree": describe_tree(tree, order["n"], order["dtype"]),
            "emulator_tree": entry["readings"][entry["emulator"][0]]["described"]
            if entry["emulator"] else None,
            "equals_emulator": bool(emulator)}


def format_decision(report: dict) -> str:
    """One line per probe, then the undecidable assumptions."""
    lines = [f"product {report['product']}"]
    for r in report["probes"]:
        what = ", ".join(r["decides"])
        if r.get("fields") and r["kind"] != "order":
            what += f" ({', '.join(r['fields'])})"
        if r["status"] == "missing":
            lines.append(f"{r['name']}: missing ({', '.join(r['missing'])})")
            continue
        if r["status"] == "not shown":
            lines.append(f"{r['name']}: {what}: not shown ({r['because']})")
            continue
        if r["status"] == "bad dump":
            lines.append(f"{r['name']}: bad dump, not compared: {'; '.join(r['bad'])}")
            continue
        if r["kind"] == "order":
            same = "equals the emulator's" if r.get("equals_emulator") else \
                f"differs from the emulator's ({r.get('emulator_tree')})"
            tree = r.get("tree") or f"not a tree: {r.get('error')}"
            reading = f" [{', '.join(r['readings'])}]" if r["readings"] else ""
            lines.append(f"{r['name']}: {r['status']}{reading}: tree {tree}; "
                         f"{same if r.get('tree') else ''}".rstrip("; "))
            continue
        if r["status"] == "match":
            agree = "the emulator's default" if set(r["readings"]) & set(r["emulator"]) else \
                "NOT the emulator's default"
            both = " - ambiguous: these readings give this output alike" if len(
                r["readings"]) > 1 else ""
            lines.append(f"{r['name']}: {what}: {', '.join(r['readings'])} ({agree}){both}")
        else:
            d = r["first_difference"]
            where = (f"{d['file']} element {d['element']}: got {d.get('got')}, "
                     f"{d['reading']} gives {d.get('expected')}") if d.get("element") is not None \
                else f"{d.get('file')}: {d.get('detail')}"
            lines.append(f"{r['name']}: {what}: none ({where})")
    lines.append(f"decided: {report.get('decided', 0)} of {len(report['probes'])} probes "
                 f"(a missing, ambiguous or bad output decides nothing)")
    if report["skipped"]:
        lines.append("not on this product: " + ", ".join(
            f"{s['probe']}" for s in report["skipped"]) + " (reasons in manifest.json)")
    if report["undecidable"]:
        lines.append("no output shows: " + ", ".join(u["assumption"] for u in report[
            "undecidable"]) + " (reasons in manifest.json)")
    return "\n".join(lines)
