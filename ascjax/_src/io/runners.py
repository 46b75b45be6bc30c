"""``ascjax run``: one registry instruction over .bin files, as a table of runners.

Each ``Runner`` record names a registry instruction, its options (whose type choices are the
registry's type rows) and how they become an engine ``Plan``: which files are streamed rows,
which go whole to every device, and which outputs are written. Most runners come from one line
of ``FAMILIES`` (a register or a LocalTensor family, ``families``); gather and the squeezing
store have plans of their own, and a name whose call forms differ in kind (asc_squeeze,
asc_gather_datablock, asc_pair_reduce_sum: on registers and on UB) is its forms' runners joined
by ``call_forms``.
``run_bin`` checks the options as the command line does and executes the plan
(``engine.execute``).
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import stat
import time
from collections.abc import Callable, Sequence
from typing import Any

import jax
import numpy as np

from ..cli_options import Option, ascend_type, byte_address, config_from_options
from ..formats import FORMATS, resolve
from ..isa.gather import GATHER_TYPES, REG_GATHER_TYPES, asc_gather, reg_gather
from ..isa.gather_block import gather_datablock, gatherb, reg_gather_b
from ..isa.gather_mask import MASK_MAX, PATTERN_TYPES, asc_reduce, gather_mask
from ..isa.gather_tensor import gather
from ..isa.lanes import REDUCE_TYPES, check_int
from ..isa.reduce_register import asc_pair_reduce_sum as register_pair_reduce_sum
from ..isa.reduce_tensor import ORDERS, REDUCE_SUM_METHODS
from ..isa.reduce_tensor_minmax import pair_reduce_sum_ub
from ..isa.scatter import scatter
from ..isa.squeeze import squeeze, squeeze_sequence, squeeze_window
from .binio import BinFileError, OutputError, check_output_paths, read_bin
from .engine import CHUNK, Output, Plan, execute
from .families import (
    MASK_OPTIONS,
    OUT,
    Register,
    Runner,
    Template,
    Tensor,
    argument_option,
    call_forms,
    config_options,
    given,
    int_or_name,
    integer,
    load_tensors,
    mask_input,
    masked_registers,
    parse_mask,
    registers,
    tensor_options,
    tensor_registers,
    tensors,
    type_choices,
)


@dataclasses.dataclass(frozen=True)
class RunSummary:
    """What a bulk run did: rows computed, files written, devices used, wall time."""

    instruction: str
    rows: int
    unit: str
    outputs: tuple[str, ...]
    devices: int
    processes: int
    seconds: float
    row_elements: tuple[int | None, ...] = ()  # per output: elements in one row of it
    exact: str | None = None  # why any difference is a bug, where it is (``exact_reason``)
    notes: tuple[str, ...] = ()  # lines for the user (``_notes``)
    output_types: tuple[str, ...] = ()  # per output: its Ascend type (compare's --dtype)

    def __str__(self) -> str:
        rate = self.rows / self.seconds if self.seconds else float("inf")
        rows = self.unit.removesuffix("s") if self.rows == 1 else self.unit  # 1 tensor
        line = (f"{self.instruction}: {self.rows} {rows} -> {', '.join(self.outputs)} "
                f"on {self.devices} device(s) x {self.processes} process(es) in "
                f"{self.seconds:.2f} s ({rate:,.0f} {self.unit}/s)")
        # how `ascjax compare` should read each output: in its own type (a sum of int16 is
        # int32, a count uint32: read as --src's type, a mismatch is misplaced and mis-sized);
        # rows that are not registers located by (row, element); data movement held to every
        # bit (compare's default, isclose, passes a NaN or a sign flip among enough elements)
        compares, shaped = [], False
        types = self.output_types or (None,) * len(self.outputs)
        for path, n, dtype in zip(self.outputs, self.row_elements, types, strict=False):
            flags = [f"--dtype {dtype}"] if dtype else []
            if self.unit != "registers" and n and n > 1:
                flags.append(f"--shape {self.rows},{n}")
                shaped = True
            if self.exact:
                flags.append("--bit-exact")
            if flags:
                compares.append(f"{path} with {' '.join(flags)}")
        why = ([f"mismatches by ({rows.removesuffix('s')}, element)"] if shaped else []) + (
            [f"{self.exact}, any difference is a bug"] if self.exact else [])
        if compares:
            line += f"\n  (compare {', '.join(compares)}" + (f": {'; '.join(why)})" if why
                                                             else ")")
        return "\n".join([line, *(f"  note: {note}" for note in self.notes)])


# The isa modules whose instructions only move bits (each module's docstring says "data
# movement"): the gathers, Gatherb / asc_gather_datablock, GatherMask / asc_reduce, Scatter,
# squeeze / unsqueeze. A module not listed counts as computing (reductions: isclose).
MOVES_BITS_MODULES = ("gather", "gather_block", "gather_tensor", "gather_mask", "scatter",
                      "squeeze")


def moves_bits(name: str) -> bool:
    """Whether registry instruction ``name`` only moves bits, so that any difference between
    its golden and an NPU dump is a bug (``ascjax run``'s summary then says ``--bit-exact``)."""
    from ..registry import INSTRUCTIONS

    module = INSTRUCTIONS[name].function.__module__
    return module.rsplit(".", 1)[-1] in MOVES_BITS_MODULES


def exact_reason(name: str, opts: dict) -> str | None:
    """Why a run's golden must match an NPU dump to the bit, or None (a sum rounds, so a
    tolerance may apply): data movement, or a max / min, which selects one of its inputs and
    stores its index in dst's bits (a wrong index is a few ulp of a subnormal)."""
    if moves_bits(name):
        return "data movement"
    if opts.get("reduce_type") in ("max", "min") or {"max", "min"} & set(name.split("_")):
        return "a max / min selects an input and its index"
    return None


def _first(out: tuple) -> np.ndarray:
    return out[0]


# --- the instructions no family fits: their own plans --------------------------------------

def _column(rows: tuple, k: int) -> tuple[str, ...]:
    return tuple(dict.fromkeys(row[k] for row in rows))


def _gather_index_type(dst: str, src: str, given: str | None, table: tuple = GATHER_TYPES,
                       where: str = "asc_gather") -> str:
    """The index type: as given, or the only one the table's rows allow for (dst, src)."""
    if given is not None:
        return given
    rows = [r[2] for r in table if r[:2] == (dst, src)]
    if not rows:
        pairs = ", ".join(sorted({f"{d}<-{s}" for d, s, _ in table}))
        raise TypeError(f"{where}: dst={dst} from src={src} is not in its table; "
                        f"supported dst<-src: {pairs}")
    if len(rows) != 1:
        raise TypeError(f"{where}: give --index-dtype, one of {rows} for dst={dst}, src={src}")
    return rows[0]


def _plan_gather(opts: dict, table: tuple = GATHER_TYPES, function=asc_gather,
                 where: str = "asc_gather") -> Plan:
    src_fmt = resolve(opts["dtype"], where=where)
    dst_fmt = resolve(opts.get("dst_dtype") or src_fmt.name, where=where, arg="dst_dtype")
    idx_fmt = resolve(_gather_index_type(dst_fmt.name, src_fmt.name, opts.get("index_dtype"),
                                         table, where), where=where, arg="index_dtype")
    data = read_bin(opts["src"], src_fmt, arg="--src")
    if data.size == 0:
        raise BinFileError(f"--src {opts['src']}: the file is empty; it holds the UB data the "
                           f"indices read")
    index = registers(opts["index"], idx_fmt, "--index")
    config = config_from_options(opts)

    def call(i, m, s):
        return function(s, i, m, dtype=src_fmt.name, dst_dtype=dst_fmt.name, config=config)

    return masked_registers(opts, index, idx_fmt, call, [Output(opts["out"], dst_fmt, _first)],
                             data=[data])


def _plan_tensor_gather(opts: dict) -> Plan:
    """Gather over files of LocalTensors: src, srcOffset and dst, one row per call."""
    where = "gather"
    fmt = resolve(opts["dtype"], where=where)
    src = tensors(opts["src"], fmt, opts["tensors"], "--src")
    offsets = tensors(opts["src_offset"], FORMATS["uint32_t"], opts["tensors"], "--src-offset")
    if opts.get("dst") is not None:
        dst = tensors(opts["dst"], fmt, opts["tensors"], "--dst")
    else:
        length = opts["dst_len"] if opts.get("dst_len") is not None else offsets.shape[1]
        dst = np.zeros((len(src), length), fmt.storage_dtype)
    if opts.get("count") is not None:
        if any(opts.get(a) is not None for a in ("mask", "repeat_time")):
            raise TypeError(f"{where}: give --count, or --mask --repeat-time [--dst-rep-stride]")
        args = (opts["count"],)
    elif opts.get("mask") is not None and opts.get("repeat_time") is not None:
        args = (parse_mask(opts["mask"], where), opts["repeat_time"], opts["dst_rep_stride"])
    else:
        raise TypeError(f"{where}: give --count, or --mask --repeat-time [--dst-rep-stride]")
    config = config_from_options(opts)

    def fn(d, s, o):
        return (gather(d, s, o, opts["src_base_addr"], *args, config=config),)

    rows = tensor_registers(src, fmt, dst)
    return Plan(fn, [dst, src, offsets], [], [Output(opts["out"], fmt, _first)],
                unit="tensors", row_registers=rows)


def _gather_runner(name: str, table: tuple, function, what: str,
                   form: str | None = None) -> Runner:
    """A register gather's runner; ``form``: the registry form it runs (asc_gather: the seed's
    UB -> register), whose rows give the Config options (--product 950 alone)."""
    options = (
        Option("src", "UB data from the source address on (.bin)", required=True),
        Option("dtype", "src type", ascend_type, required=True, choices=_column(table, 1)),
        Option("index", "index registers (.bin)", required=True),
        Option("index_dtype", f"index type (default: the one {what} allows)",
               ascend_type, choices=_column(table, 2)),
        Option("dst_dtype", "dst type (default: the src type)", ascend_type,
               choices=_column(table, 0)),
        *MASK_OPTIONS, OUT)
    return Runner(name, options, lambda opts: _plan_gather(opts, table, function, name),
                  config_options(name, options, form=form), inputs=("src", "index", "mask"))


def _plan_squeeze(opts: dict) -> Plan:
    where = "squeeze_and_storeunalign"
    fmt = resolve(opts["dtype"], where=where)
    src = registers(opts["src"], fmt, "--src")
    config = config_from_options(opts)
    addr = check_int(opts["dst_addr"], 0, config.ub_bytes - 1, where=where, arg="dst_addr")
    group = opts.get("group")
    if group is None:
        # The largest group dividing the registers whose store (256 bytes a register at most)
        # cannot pass the UB end: any file size runs.
        most = max((config.ub_bytes - addr) // 256, 1)
        group = max((g for g in range(1, min(most, len(src)) + 1) if len(src) % g == 0),
                    default=1)
    if len(src) % group:
        raise BinFileError(f"--src {opts['src']}: {len(src)} registers is not a whole number "
                           f"of groups of {group} (--group)")
    if addr % fmt.width:
        raise ValueError(f"{where}: dst_addr={addr} must be aligned to sizeof({fmt.name}) = "
                         f"{fmt.width} (a UB byte address in [0, {config.ub_bytes}))")
    # Each group runs on the few UB bytes it can write; the end of the real UB is checked from
    # AR afterwards (the store's own check sees only that window).
    off, size = squeeze_window(addr, group, config.ub_bytes)
    quiet = config.replace(out_of_range="ignore")
    batched, shared, to_mask = mask_input(opts, fmt, len(src), fmt.name)
    groups = [b.reshape(-1, group, b.shape[-1]) for b in (src, *batched)]
    finalize = not opts.get("no_finalize")

    def fn(s, m):
        return squeeze_sequence(s, to_mask(m), off, size, dtype=fmt.name, finalize=finalize,
                                config=quiet)

    def checked_ar(out):  # every output checks it: a store past the UB end is a fault
        ar = out[2].astype(np.int64)
        if len(ar) and addr + ar.max() > config.ub_bytes:
            hint = ("a smaller --group" if group > 1 else
                    f"a lower --dst-addr: {config.ub_bytes - addr} bytes lie between it and "
                    f"the UB end, fewer than one register stores")
            raise IndexError(f"{where}: the store reaches UB byte {addr + int(ar.max())}, past "
                             f"the end of the {config.ub_bytes}-byte UB (dst_addr + AR); use "
                             f"{hint}")
        return ar

    def region(out):
        ub, ar = out[1], checked_ar(out)
        pos = np.arange(ub.shape[1]) - off
        return ub[(pos >= 0) & (pos < ar[:, None])]

    def dst(out):
        checked_ar(out)
        return out[0].reshape(-1, out[0].shape[-1])

    outputs = [Output(opts["out"], fmt, dst)]
    if opts.get("ub_out"):
        outputs.append(Output(opts["ub_out"], FORMATS["uint8_t"], region))
    if opts.get("ar_out"):
        outputs.append(Output(opts["ar_out"], FORMATS["uint32_t"],
                              lambda out: checked_ar(out).astype(np.uint32)))
    return Plan(fn, groups, shared, outputs, unit="groups", row_registers=group)


# --- DataBlock gathers and Scatter: a third input (byte offsets, an index register) ----------

def _plan_block_register(name: str, function):
    """Reg::GatherB / asc_gather_datablock's register form: index registers (uint32) and masks
    as rows, the UB data from the source address whole on every device."""
    def plan(opts: dict) -> Plan:
        fmt = resolve(opts["dtype"], where=name)
        data = read_bin(opts["src"], fmt, arg="--src")
        if data.size == 0:
            raise BinFileError(f"--src {opts['src']}: the file is empty; it holds the UB data "
                               f"the index reads")
        index = registers(opts["index"], FORMATS["uint32_t"], "--index")
        config = config_from_options(opts)

        # The mask options read a mask of T's lanes (or the 32-byte hardware form).
        batched, shared, to_mask = mask_input(opts, fmt, len(index), fmt.name)

        def fn(i, *rest):
            m, rest = (rest[0], rest[1:]) if batched else (rest[-1], rest[:-1])
            return function(rest[0], i, to_mask(m), dtype=fmt.name, config=config)

        return Plan(fn, [index, *batched], [data, *shared], [Output(opts["out"], fmt, _first)])
    return plan


def _tensor_files(name: str, opts: dict, offset_arg: str):
    """(format, dst, src, offsets) LocalTensor rows of a Gatherb / Scatter run."""
    fmt = resolve(opts["dtype"], where=name)
    dst, src = load_tensors(opts, fmt)
    flag = "--" + offset_arg.replace("_", "-")
    return fmt, dst, src, tensors(opts[offset_arg], FORMATS["uint32_t"], opts["tensors"], flag)


# Gatherb's arguments as each name spells them, in its prototype's order: role -> (option,
# vendor name). asc_gather_datablock's UB form is Gatherb with the arguments in another order.
_GATHERB_ARGS = {
    "gatherb": {"offset": ("offset", "offset"), "repeat": ("repeat_time", "repeatTime"),
                "blk": ("dst_blk_stride", "GatherRepeatParams.dstBlkStride"),
                "rep": ("dst_rep_stride", "GatherRepeatParams.dstRepStride")},
    "gather_datablock": {"offset": ("src_offset", "src_offset"),
                         "rep": ("dst_repeat_stride", "dst_repeat_stride"),
                         "blk": ("dst_block_stride", "dst_block_stride"),
                         "repeat": ("repeat", "repeat")},
}


_GATHERB_HELP = {"offset": "uint32 {} LocalTensor(s) (.bin): byte offsets of the DataBlocks, "
                           "8 per repeat",
                 "repeat": "{}", "blk": "{} (DataBlocks; 0 is taken as 1)",
                 "rep": "{} (DataBlocks)"}
_GATHERB_DEFAULTS = {"blk": 1, "rep": 8}


def _gatherb_options(name: str, form: str | None = None) -> tuple:
    """Gatherb's options as ``name`` spells its arguments (the offset file, then ints)."""
    return (*_tensor_options(name, form),
            *(Option(option, _GATHERB_HELP[role].format(vendor),
                     str if role == "offset" else integer, _GATHERB_DEFAULTS.get(role),
                     required=role not in _GATHERB_DEFAULTS)
              for role, (option, vendor) in _GATHERB_ARGS[name].items()), OUT)


def _gatherb_plan(name: str, call: Callable) -> Callable[[dict], Plan]:
    """Gatherb's plan under ``name``'s options: dst, src and offset LocalTensors as rows;
    ``call(dst, src, offset, repeat, dst_blk_stride, dst_rep_stride, config)``."""
    args = {role: option for role, (option, _) in _GATHERB_ARGS[name].items()}

    def plan(opts: dict) -> Plan:
        fmt, dst, src, offset = _tensor_files(name, opts, args["offset"])
        config = config_from_options(opts)
        static = [opts[args[role]] for role in ("repeat", "blk", "rep")]

        def fn(d, s, o):
            return call(d, s, o, *static, config)

        return Plan(fn, [dst, src, offset], [], [Output(opts["out"], fmt, _first)],
                    unit="tensors", row_registers=tensor_registers(src, fmt, dst))
    return plan


def _plan_scatter(opts: dict) -> Plan:
    where = "scatter"
    fmt, dst, src, offset = _tensor_files(where, opts, "dst_offset")
    config = config_from_options(opts)
    if opts.get("count") is not None:
        if any(opts.get(a) is not None for a in ("mask", "repeat_time")):
            raise TypeError(f"{where}: give --count, or --mask --repeat-time [--src-rep-stride]")
        args = (opts["count"],)
    elif opts.get("mask") is not None and opts.get("repeat_time") is not None:
        args = (parse_mask(opts["mask"], where), opts["repeat_time"], opts["src_rep_stride"])
    else:
        raise TypeError(f"{where}: give --count, or --mask --repeat-time [--src-rep-stride]")

    def fn(d, s, o):
        return scatter(d, s, o, opts["dst_base_addr"], *args, config=config)

    return Plan(fn, [dst, src, offset], [], [Output(opts["out"], fmt, _first)], unit="tensors",
                row_registers=tensor_registers(src, fmt, dst))


def _tensor_options(name: str, form: str | None = None) -> tuple:
    return (Option("src", "src LocalTensor(s) (.bin)", required=True),
            Option("dtype", "T (the src and dst type)", ascend_type, required=True,
                   choices=type_choices(name, form=form)),
            *tensor_options("each file holds this many LocalTensors"))


def _register_block_options(name: str, form: str | None = None) -> tuple:
    return (Option("src", "UB data from the 32-byte aligned source address on (.bin)",
                   required=True),
            Option("dtype", "T (the src and dst type)", ascend_type, required=True,
                   choices=type_choices(name, form=form)),
            Option("index", "uint32 index registers (.bin): byte offsets, the first 8 lanes "
                   "of each count", required=True),
            *MASK_OPTIONS, OUT)


def _compaction_tensors(name: str, opts: dict, src1_is_t: bool = False):
    """(format, dst rows, src0 rows, src1 rows or None) of a GatherMask / asc_reduce run (src1
    a pattern of T's width) or an asc_squeeze UB run (``src1_is_t``: a compare mask of T)."""
    fmt = resolve(opts["dtype"], where=name)
    dst, src = load_tensors(opts, fmt)
    src1 = None
    if opts.get("src1") is not None:
        src1_fmt = fmt if src1_is_t else FORMATS[PATTERN_TYPES[fmt.bits]]
        src1 = tensors(opts["src1"], src1_fmt, opts["tensors"], "--src1")
    return fmt, dst, src, src1


def _compaction_plan(fmt, dst, src, src1, call, outputs) -> Plan:
    batched = [dst, src] + ([] if src1 is None else [src1])
    return Plan(call, batched, [], outputs, unit="tensors",
                row_registers=tensor_registers(src, fmt, dst))


def _plan_gather_mask(opts: dict) -> Plan:
    where = "gather_mask"
    if (opts.get("src1") is None) == (opts.get("src1_pattern") is None):
        raise TypeError(f"{where}: give exactly one of --src1-pattern (a built-in pattern 1..7) "
                        f"and --src1 (the user pattern LocalTensor file)")
    if opts["reduce_mode"] and opts.get("mask") is None:  # 0 would say "outside [1, ...]"
        raise TypeError(f"{where}: Counter mode (--reduce-mode, reduceMode true) needs --mask: "
                        f"the elements each repeat processes (on inference AI Core: the "
                        f"elements of the whole call), an integer in [1, {MASK_MAX}]")
    fmt, dst, src, src1 = _compaction_tensors(where, opts)
    config = config_from_options(opts)
    params = (opts["src0_block_stride"], opts["repeat_times"], opts["src0_repeat_stride"],
              opts["src1_repeat_stride"])
    mask = 0 if opts.get("mask") is None else opts["mask"]  # Normal mode: no effect, the page's 0
    static = (bool(opts["reduce_mode"]), mask, params)

    def call(d, s, *p):
        return gather_mask(d, s, p[0] if p else opts["src1_pattern"], *static, config=config)

    outputs = [Output(opts["out"], fmt, _first)]
    if opts.get("cnt_out"):
        outputs.append(Output(opts["cnt_out"], FORMATS["uint32_t"], lambda out: out[1]))
    return _compaction_plan(fmt, dst, src, src1, call, outputs)


def _plan_asc_reduce(opts: dict) -> Plan:
    where = "asc_reduce"
    fmt, dst, src, src1 = _compaction_tensors(where, opts)
    config = config_from_options(opts)
    high = ("repeat", "src0_block_stride", "pattern_mode", "src0_repeat_stride",
            "src1_repeat_stride")
    if opts.get("count") is not None:
        if any(opts.get(a) is not None for a in high):
            raise TypeError(f"{where}: --count is the first-n form; the repeat form's options "
                            f"are {['--' + a.replace('_', '-') for a in high]}")
        args = (opts["count"],)
    else:
        missing = [a for a in high if opts.get(a) is None]
        if missing:
            raise TypeError(f"{where}: give --count, or every option of the repeat form "
                            f"(missing: {['--' + a.replace('_', '-') for a in missing]})")
        args = tuple(opts[a] for a in high)

    def call(d, s, p):
        return (asc_reduce(d, s, p, *args, config=config),)

    return _compaction_plan(fmt, dst, src, src1, call, [Output(opts["out"], fmt, _first)])


_SQUEEZE_UB = ("repeat", "dst_block_stride", "src0_block_stride", "src1_block_stride",
               "dst_repeat_stride", "src0_repeat_stride", "src1_repeat_stride")


def _plan_squeeze_ub(opts: dict) -> Plan:
    """asc_squeeze's UB form: dst, src0 and its compare mask src1, LocalTensors of T, as rows."""
    where = "squeeze"
    fmt, dst, src, src1 = _compaction_tensors(where, opts, src1_is_t=True)
    config = config_from_options(opts)
    args = tuple(opts[a] for a in _SQUEEZE_UB)

    def call(d, s, m):
        return (squeeze(d, s, m, *args, config=config),)

    return _compaction_plan(fmt, dst, src, src1, call, [Output(opts["out"], fmt, _first)])


_COMPACTION_TENSORS = (
    Option("src", "src0 LocalTensor(s) (.bin)", required=True),
    *tensor_options("the src, dst and src1 files hold this many LocalTensors"),
)


def _runner_of_form(name: str, form: str | None, options: tuple, plan: Callable,
                    inputs: tuple) -> Runner:
    """A runner of one call form (the registry's form column; None: of every row)."""
    return Runner(name, options, plan, config_options(name, options, form=form), inputs)


def _compaction_runner(name: str, options: tuple, plan: Callable,
                       form: str | None = None) -> Runner:
    return _runner_of_form(name, form, options, plan, ("src", "dst", "src1"))


# The call forms of asc_squeeze, asc_gather_datablock and asc_pair_reduce_sum: the registry's
# form column.
_REGISTER, _UB = "register (950)", "UB (A2, A3)"


# --- the table ------------------------------------------------------------------------------

# One line per instruction whose runner a family derives (``families``): the registry name, its
# family, and what the signature cannot say (template choices, units, call forms, extra parts).
# The C API on UB: its two overloads; the SPR parts (ReduceRepeat's, ReduceSum's, ReduceMax's,
# ReduceMin's), each to an optional file.
_C_FORMS = (("count",), ("repeat", "dst_repeat_stride", "src_block_stride", "src_repeat_stride"))
_SPR = ("spr_sum", "spr_value", "spr_index")
_SUM_SPR, _MAX_MIN_SPR = ("spr_sum", None, None), (None, "spr_value", "spr_index")  # what each sets

FAMILIES = {
    "reduce_sum_datablock": Register(),
    "pair_reduce_sum": Tensor(units={"dst_rep_stride": "128-byte units"}),
    "block_reduce_sum": Tensor(units={"dst_rep_stride": "units of 8 elements"}),
    "whole_reduce_sum": Tensor(units={"dst_rep_stride": "elements"}),
    "repeat_reduce_sum": Tensor(units={"dst_rep_stride": "elements",
                                       "dst_blk_stride": "no effect: the page says any value"}),
    "reduce_sum": Tensor(forms=(("count",), ("mask", "repeat_time", "src_rep_stride")),
                         templates={"method": Template(
                             (*REDUCE_SUM_METHODS.values(), *REDUCE_SUM_METHODS), int_or_name,
                             "how the repeats are added (default: the product's)")},
                         outputs=_SUM_SPR),
    **{name: Register() for name in (
        "asc_reduce_sum", "asc_reduce_max", "asc_reduce_min", "reduce_max_datablock",
        "reduce_min_datablock", "reg_pair_reduce_elem")},
    **{name: Register(templates={"reduce_type": REDUCE_TYPES})
       for name in ("reg_reduce", "reg_reduce_data_block")},
    # The register forms (asc_squeeze's and asc_pair_reduce_sum's, with their UB forms:
    # call_forms below).
    "squeeze_with_status": Register(outputs=("ar",), adds=False),
    "unsqueeze": Register(adds=False),
    "reduce_data_block": Tensor(templates={"reduce_type": REDUCE_TYPES},
                                units={"dst_rep_stride": "units of 8 elements"}),
    **{name: Tensor(units={"dst_rep_stride": "units of 8 elements"})
       for name in ("block_reduce_max", "block_reduce_min")},
    "reduce_repeat": Tensor(templates={"reduce_type": REDUCE_TYPES, "order": ORDERS},
                            outputs=_SPR),
    "reduce_pair_elem": Tensor(templates={"reduce_type": ("sum",)},
                               units={"dst_rep_stride": "128-byte units"}),
    **{name: Tensor(forms=_C_FORMS) for name in (
        "datablock_reduce_sum", "datablock_reduce_max", "datablock_reduce_min",
        "asc_repeat_reduce_sum")},
    **{name: Tensor(forms=_C_FORMS, templates={"order": ORDERS}, outputs=_SPR)
       for name in ("repeat_reduce_max", "repeat_reduce_min")},
    **{name: Tensor(forms=(("count",), ("mask", "repeat_time", "src_rep_stride")),
                    templates={"cal_index": (False, True)}, outputs=_MAX_MIN_SPR)
       for name in ("reduce_max", "reduce_min")},
}

RUNNERS: dict[str, Runner] = {name: family.runner(name) for name, family in FAMILIES.items()}
RUNNERS |= {r.name: r for r in (
    _gather_runner("asc_gather", GATHER_TYPES, asc_gather, "the seed's table",
                   form="UB -> register"),
    _gather_runner("reg_gather", REG_GATHER_TYPES, reg_gather, "Reg::Gather's table"),
    Runner("gather", (
        Option("src", "src LocalTensor(s) (.bin)", required=True),
        Option("dtype", "T (the src and dst type)", ascend_type, required=True,
               choices=type_choices("gather")),
        Option("src_offset", "srcOffset LocalTensor(s): uint32 byte offsets (.bin)",
               required=True),
        Option("tensors", "the src, src-offset (and dst) files hold this many LocalTensors",
               int, 1),
        Option("dst", "initial dst LocalTensor(s) (.bin); default zeros"),
        Option("dst_len", "elements of each zero dst when no --dst (default: src-offset "
               "length)", int),
        Option("src_base_addr", "srcBaseAddr (bytes)", integer, 0),
        Option("count", "count: the first-n form (lanes i < count)", integer),
        Option("mask", "mask (with --repeat-time): an int (continuous mode) or comma-separated "
               "uint64 words (bit mode)"),
        Option("repeat_time", "repeatTime (with --mask)", integer),
        Option("dst_rep_stride", "dstRepStride (32-byte DataBlocks)", integer, 8),
        OUT), _plan_tensor_gather, inputs=("src", "src_offset", "dst")),
    Runner("squeeze_and_storeunalign", (
        Option("src", "src1 registers (.bin)", required=True),
        Option("dtype", "type", ascend_type, required=True,
               choices=type_choices("squeeze_and_storeunalign")),
        *MASK_OPTIONS,
        Option("group", "registers per init ... finalize sequence (default: the largest that "
               "divides the file's registers and cannot store past the UB end)", int, low=1),
        Option("dst_addr", "dst_addr, UB byte address (decimal or 0x hex)",
               byte_address, 0),
        Option("no_finalize", "skip _finalize (the pending tail stays out of the UB)",
               flag=True),
        Option("ub_out", "file for the UB bytes [dst_addr, dst_addr + AR) of each group"),
        Option("ar_out", "file for AR (uint32) of each group"),
        OUT), _plan_squeeze, inputs=("src", "mask")),
    Runner("reg_gather_b", _register_block_options("reg_gather_b"),
           _plan_block_register("reg_gather_b", reg_gather_b),
           inputs=("src", "index", "mask")),
    # The register form (the 950); the UB form (Atlas A2 / A3) is Gatherb's plan.
    call_forms("gather_datablock", {
        _REGISTER: _runner_of_form("gather_datablock", _REGISTER,
                                   _register_block_options("gather_datablock", _REGISTER),
                                   _plan_block_register("gather_datablock", gather_datablock),
                                   ("src", "index", "mask")),
        _UB: _runner_of_form("gather_datablock", _UB, _gatherb_options("gather_datablock", _UB),
                             _gatherb_plan("gather_datablock", lambda d, s, o, n, blk, rep, c:
                                           gather_datablock(d, s, o, rep, blk, n, config=c)),
                             ("src", "dst", "src_offset"))}),
    Runner("gatherb", _gatherb_options("gatherb"),
           _gatherb_plan("gatherb", lambda d, s, o, n, blk, rep, c:
                         gatherb(d, s, o, n, (blk, rep), config=c)),
           inputs=("src", "dst", "offset")),
    Runner("scatter", (
        *_tensor_options("scatter"),
        Option("dst_offset", "uint32 dstOffset LocalTensor(s) (.bin): byte offsets in dst",
               required=True),
        Option("dst_base_addr", "dstBaseAddr, bytes from dst's start", integer, 0),
        Option("count", "count (the first count elements of src); call form --count", integer),
        Option("mask", "mask: continuous count or uint64 words (0x hex, comma-separated); call "
               "form --mask --repeat-time --src-rep-stride"),
        Option("repeat_time", "repeatTime; call form --mask --repeat-time --src-rep-stride",
               integer),
        Option("src_rep_stride", "srcRepStride (DataBlocks), default 8", integer, 8),
        OUT), _plan_scatter, inputs=("src", "dst", "dst_offset")),
    _compaction_runner("gather_mask", (
        *_COMPACTION_TENSORS,
        Option("dtype", "T (src0 and dst)", ascend_type, required=True,
               choices=type_choices("gather_mask")),
        Option("src1_pattern", "built-in pattern 1..7 (src1Pattern as a uint8_t)", integer),
        Option("src1", "user pattern LocalTensor(s) (.bin) of uint8/16/32 (T's width)"),
        Option("reduce_mode", "Counter mode (reduceMode true)", flag=True),
        Option("mask", "mask: no effect in Normal mode (default 0); Counter mode "
               "(--reduce-mode, which needs it): elements per repeat, or over the whole call "
               "on inference AI Core", integer),
        Option("src0_block_stride", "src0BlockStride, DataBlocks", integer, 1),
        Option("repeat_times", "repeatTimes", integer, required=True),
        Option("src0_repeat_stride", "src0RepeatStride, DataBlocks", integer, 8),
        Option("src1_repeat_stride", "src1RepeatStride, DataBlocks", integer, 0),
        OUT, Option("cnt_out", "file for rsvdCnt (uint32) of each tensor")), _plan_gather_mask),
    _compaction_runner("asc_reduce", (
        *_COMPACTION_TENSORS,
        Option("dtype", "T (dst, src0, src1)", ascend_type, required=True,
               choices=type_choices("asc_reduce")),
        Option("src1", "gather mask LocalTensor(s) (.bin), T's type", required=True),
        Option("count", "first-n form: elements", integer),
        Option("repeat", "repeat form: repeats", integer),
        Option("src0_block_stride", "repeat form: DataBlocks", integer),
        Option("pattern_mode", "repeat form: 0 (src1) or a built-in pattern 1..7", integer),
        Option("src0_repeat_stride", "repeat form: DataBlocks", integer),
        Option("src1_repeat_stride", "repeat form: DataBlocks", integer),
        OUT), _plan_asc_reduce),
    # The register form (the 950) and the UB form (Atlas A2 / A3) in its two C overloads.
    call_forms("asc_pair_reduce_sum", {
        _REGISTER: Register(form=_REGISTER, function=register_pair_reduce_sum)
        .runner("asc_pair_reduce_sum"),
        _UB: Tensor(forms=_C_FORMS, form=_UB, function=pair_reduce_sum_ub,
                    units={"dst_repeat_stride": "one repeat's reduced length: lanes / 2 "
                                                "elements"})
        .runner("asc_pair_reduce_sum")}),
    call_forms("squeeze", {
        _REGISTER: Register(adds=False, form=_REGISTER).runner("squeeze"),
        _UB: _compaction_runner("squeeze", (
            *_COMPACTION_TENSORS,
            Option("dtype", "T (dst, src0, src1)", ascend_type, required=True,
                   choices=type_choices("squeeze", form=_UB)),
            Option("src1", "src1 LocalTensor(s) (.bin), T: the compare mask", required=True),
            *(argument_option(a, {"dst_repeat_stride": "32-byte blocks"},
                              8 if a == "dst_repeat_stride" else None)
              for a in _SQUEEZE_UB), OUT), _plan_squeeze_ub, form=_UB)}),
)}


def _parsed(instruction: str, option: Option, value: Any) -> Any:
    """A value given as text, parsed as the command line parses it (aliases, 0x ints); a type
    also as a NumPy type (``dtype=np.float16``), as everywhere else in the API."""
    if option.type is ascend_type and value is not None:
        return ascend_type(value)
    if not isinstance(value, str) or option.type is str:
        return value
    try:
        return option.type(value)
    except argparse.ArgumentTypeError as error:  # the parser's own message
        raise ValueError(f"{instruction}: {error}") from None
    except (ValueError, TypeError) as error:
        kind = getattr(option.type, "__name__", "value")
        why = "" if option.type in (int, integer) else f": {error}"  # int's own text is noise
        raise ValueError(f"{instruction}: {option.name}={value!r} is not a valid {kind} "
                         f"(--{option.name.replace('_', '-')}){why}") from None


def _check_low(instruction: str, option: Option, value: Any) -> None:
    flag = "--" + option.name.replace("_", "-")
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < option.low:
        raise ValueError(f"{instruction}: {flag} {value!r} must be an integer >= "
                         f"{option.low}")


def resolve_runner(name: str) -> tuple[str, dict]:
    """The runner for ``name`` (a runner's name or any name ``ascjax.instruction`` accepts) and
    the template keywords that name fixes: ``"WholeReduceMax"`` -> ``("reduce_repeat",
    {"reduce_type": "max"})``. A name without a runner raises ``ValueError`` saying so."""
    if name in RUNNERS:
        return name, {}
    from ..registry import UnknownInstruction, _by_name, instruction

    if name not in _by_name():
        try:
            instruction(name)  # raises, naming the nearest names
        except UnknownInstruction as error:
            raise ValueError(f"{str(error).removeprefix('ascjax.instruction: ')}; `ascjax run "
                             f"--help` lists the instructions with a runner") from None
    ins, fixed = _by_name()[name]
    if fixed is None or ins.name not in RUNNERS:
        what = ins.__name__ if fixed is None else ins.name
        raise ValueError(f"{name} ({what}) has no runner for .bin files; `ascjax run --help` "
                         f"lists the instructions with one")
    return ins.name, fixed


def run_bin(instruction: str, *, chunk: int = CHUNK, devices: Sequence[Any] | None = None,
            progress: bool = False, allow_empty: bool = False, **options: Any) -> RunSummary:
    """Run ``instruction`` over .bin files; write its outputs atomically; return a summary.

    ``instruction`` is a runner's name or any vendor name of it (``"WholeReduceMax"`` runs
    ``reduce_repeat`` with ``reduce_type="max"``). ``options`` are those of the runner (the
    ``ascjax run INSTRUCTION`` options, with underscores), plus the ``Config`` fields the
    instruction reads (``runner.config_options``). Registers are streamed ``chunk`` at a time
    (memory stays bounded) over ``devices`` (default: all local devices); the bits do not
    depend on either. Under ``jax.distributed`` each process takes its share (``engine``).
    A run over zero rows is an error unless ``allow_empty=True`` (then empty outputs are
    written); an int option below its least value raises ``ValueError`` naming it.

    >>> import numpy as np, tempfile, os, ascjax
    >>> d = tempfile.mkdtemp()
    >>> np.ones((2, 128), np.float16).tofile(os.path.join(d, "src.bin"))
    >>> s = ascjax.run_bin("reduce_sum_datablock", src=os.path.join(d, "src.bin"),
    ...                    dtype="half", out=os.path.join(d, "dst.bin"))
    >>> ascjax.read_bin(os.path.join(d, "dst.bin"), "half")[:8].tolist()
    [16.0, 16.0, 16.0, 16.0, 16.0, 16.0, 16.0, 16.0]
    """
    given = instruction
    instruction, fixed = resolve_runner(instruction)
    for keyword, value in fixed.items():
        if options.setdefault(keyword, value) != value:
            raise ValueError(f"run: the name given fixes {keyword}={value!r} ({instruction} "
                             f"with it); got {keyword}={options[keyword]!r}")
    runner = RUNNERS[instruction]
    known = {o.name: o for o in runner.options + runner.config_options}
    unknown = sorted(set(options) - set(known))
    if unknown:
        raise TypeError(f"run {instruction}: unknown option(s) {unknown}; valid: {list(known)}")
    opts = {name: (False if o.flag else o.default) for name, o in known.items()} | options
    missing = [name for name, o in known.items() if o.required and opts[name] is None]
    if missing:
        raise TypeError(f"run {instruction}: missing option(s) {missing}")
    for name, o in known.items():
        opts[name] = _parsed(instruction, o, opts[name])
        if o.choices is not None and opts[name] is not None and opts[name] not in o.choices:
            raise ValueError(f"{instruction}: {name}={opts[name]!r} is not one of "
                             f"{list(o.choices)}")
        if o.low is not None and opts[name] is not None:
            _check_low(instruction, o, opts[name])
    _check_conflicts(instruction, opts)
    named = {n for n, v in options.items() if v is not None and v is not False}
    refused = sync_form_error(given, instruction, named)
    if refused:
        raise TypeError(f"run {refused}")
    outputs = _check_outputs(instruction, opts)
    check_int(chunk, 1, 1 << 30, where=f"run {instruction}", arg="chunk")
    begin = time.perf_counter()
    try:
        plan = runner.plan(opts)
        if len(plan.batched[0]) == 0 and not allow_empty:
            files = ", ".join(f"--{n} {opts[n]}" for n in runner.inputs if opts.get(n))
            raise ValueError(f"run {instruction}: the input holds 0 {plan.unit} ({files}); "
                             f"nothing to compute (give --allow-empty if an empty output is "
                             f"expected)")
        check_output_paths([o.path for o in plan.outputs],
                           [opts[name] for name in runner.inputs if opts.get(name)])
        devices = list(jax.local_devices() if devices is None else devices)
        rows = execute(plan, chunk=chunk, devices=devices, progress=progress, label=instruction)
    except OutputError as error:  # name the option too: "--out big.bin: cannot be written"
        raise OutputError(error.path, error.reason, outputs.get(error.path, "")) from error
    except IndexError as error:  # a fault (an offset or index): say how the data was read
        hint = _dtype_hint(opts, runner.inputs)
        if hint:
            error.add_note(hint)  # Python shows it under the error; the CLI prints run_hint
            error.run_hint = hint
        raise
    return RunSummary(instruction, rows, plan.unit, tuple(o.path for o in plan.outputs),
                      len(devices), jax.process_count(), time.perf_counter() - begin,
                      tuple(_row_elements(o, rows) for o in plan.outputs),
                      exact_reason(instruction, opts),
                      _notes(opts, rows, tensors_given="tensors" in options),
                      tuple(o.fmt.name for o in plan.outputs))


# Options of which one makes the other meaningless: given together, one would be ignored.
_CONFLICTS = (("mask", "pattern", "--pattern builds the mask when no --mask file is given"),
              ("dst", "dst_len", "--dst-len sizes the zero dst made when no --dst is given"))
# Options that only describe another one's input.
_NEEDS = (("mask_bits", "mask", "--mask-bits says how the --mask file is laid out"),)


# The options of the C API's repeat forms: a _sync name whose page gives the first-n form
# (count) refuses them.
_REPEAT_FORM_OPTIONS = frozenset((
    "repeat", "dst_repeat_stride", "src_block_stride", "src_repeat_stride", "src0_block_stride",
    "pattern_mode", "src0_repeat_stride", "src1_repeat_stride", "mask_state"))


def sync_form_error(given: str, instruction: str, options: set[str]) -> str | None:
    """Why a ``_sync`` name cannot run with the options given (their names), or None. Its
    page gives it one prototype, on UB (``Instruction.sync``): a runner of register forms alone
    refuses it, one of register and UB forms (``call_forms``) needs the UB form's options, and
    a first-n prototype refuses the repeat form's."""
    from ..registry import INSTRUCTIONS

    prototype = INSTRUCTIONS[instruction].sync.get(given)
    if not prototype:
        return None
    page = f"{given}: its page gives one prototype, {given}({', '.join(prototype)}) on UB"
    groups = {o.name: o.group or "" for o in RUNNERS[instruction].options}
    if "dst" not in groups:
        return (f"{page}; `ascjax run {instruction}` runs its register forms"
                + (" (`ascjax run gather` runs UB gathers by byte offsets, srcBaseAddr 0)"
                   if instruction == "asc_gather" else ""))
    register = sorted(n for n in options if "register" in groups.get(n, ""))
    if register or (any("register" in g for g in groups.values())
                    and not any("UB" in groups.get(n, "") for n in options)):
        return (f"{page}; give the UB form's options (--dst or --dst-len), not the register "
                f"form's" + (f" ({', '.join('--' + n.replace('_', '-') for n in register)})"
                             if register else ""))
    repeat = sorted(n for n in options & _REPEAT_FORM_OPTIONS if n not in prototype)
    if repeat:
        flags = ", ".join("--" + n.replace("_", "-") for n in repeat)
        return f"{page}, the first-n form: {flags} belong to {instruction}'s repeat form"
    return None


def _check_outputs(instruction: str, opts: dict) -> dict[str, str]:
    """Refuse, before any work, an output option (``--out``, ``--*-out``) given a value that
    cannot name a file to write: empty (an optional one given "" is not dropped silently),
    ending in a separator, a directory, or in a directory that does not exist. Returns each
    output path's option (``{"big.bin": "--out"}``)."""
    flags = {}
    for name in (n for n in opts if n == "out" or n.endswith("_out")):
        if opts[name] is None:
            continue
        path, flag = os.fspath(opts[name]), "--" + name.replace("_", "-")
        parent = os.path.dirname(os.path.abspath(path))
        why = ("is empty" if not path else
               "ends in a path separator" if path.endswith((os.sep, os.altsep or os.sep)) else
               "is a directory" if os.path.isdir(path) else
               f"is in {parent}, which does not exist" if not os.path.exists(parent) else
               f"is in {parent}, which is not a directory" if not os.path.isdir(parent) else "")
        if why:
            raise ValueError(f"{instruction}: {flag} {path!r} {why}; give the path of the "
                             f"file to write")
        flags[path] = flag
    return flags


def _check_conflicts(instruction: str, opts: dict) -> None:
    """Refuse options that another given option would leave unread (nothing is ignored)."""
    for a, b, why in _CONFLICTS:
        if given(opts.get(a)) and given(opts.get(b)):
            raise TypeError(f"{instruction}: give --{a.replace('_', '-')} or "
                            f"--{b.replace('_', '-')}, not both ({why})")
    for a, b, why in _NEEDS:
        if given(opts.get(a)) and not given(opts.get(b)):
            raise TypeError(f"{instruction}: --{a.replace('_', '-')} without --"
                            f"{b.replace('_', '-')} ({why})")


def _dtype_hint(opts: dict, inputs: tuple) -> str | None:
    """How the data files were read (a wrong --dtype shows as a bad count or offset)."""
    if not opts.get("dtype"):
        return None
    try:
        bits = resolve(opts["dtype"], where="run").bits
        sizes = {n: os.path.getsize(opts[n]) * 8 // bits for n in ("src", "dst")
                 if n in inputs and opts.get(n)}
    except (ValueError, OSError):
        return None
    if not sizes:
        return None
    tensors = opts.get("tensors") or 1
    held = ", ".join(f"--{n} {size} elements" + (f" ({tensors} tensors of {size // tensors})"
                                                 if tensors > 1 else "")
                     for n, size in sizes.items())
    return (f"(the data was read as --dtype {opts['dtype']}, {bits} bits an element: {held}; "
            f"if the files hold another type, give its --dtype)")


# Argument names of the LocalTensor calls: the first-n form's count, and the repeat count.
_REPEATS = ("repeat_time", "repeat_times", "repeat")


def _reads_per_call(opts: dict) -> int | None:
    """At most how many src elements one LocalTensor call reads, from its arguments: the
    first-n form's count, else repeats x the elements of a repeat (256 bytes; GatherMask's
    Counter mode: mask per repeat, or over the call); None where the options do not say."""
    if opts.get("count") is not None:
        return opts["count"]
    repeats = next((opts[a] for a in _REPEATS if opts.get(a) is not None), None)
    if repeats is None:
        return None
    if opts.get("reduce_mode"):  # mask per repeat, or the whole call's (inference AI Core)
        return max(repeats, 1) * opts["mask"]
    return repeats * resolve(opts["dtype"], where="run").lanes


def _notes(opts: dict, rows: int, *, tensors_given: bool) -> tuple[str, ...]:
    """Lines for the user: with ``--cnt-out``, how to compare dst with a dump; when a
    LocalTensor run took --src as one tensor (--tensors not given) of which one call reads
    under 1%, that most likely the file holds many tensors and --tensors was forgotten (not an
    error: a LocalTensor may be longer than what a call reads)."""
    notes = ()
    if opts.get("cnt_out"):  # GatherMask: the NPU leaves dst past rsvdCnt undefined (the page)
        undefined = ("dst past each tensor's count is undefined on the NPU: compare a dump "
                     f"with --valid-counts {opts['cnt_out']}")
        notes = (undefined,)
    path = opts.get("src")
    if "tensors" not in opts or tensors_given or rows != 1 or not path:
        return notes
    reads = _reads_per_call(opts)
    st = os.stat(path)
    if not reads or not stat.S_ISREG(st.st_mode):  # a pipe's size is gone once read
        return notes
    fmt = resolve(opts["dtype"], where="run")
    held = st.st_size * 8 // fmt.bits
    if reads * 100 >= held:
        return notes
    example = (f" (e.g. --tensors {held // reads} for tensors of {reads} elements)"
               if held % reads == 0 else "")
    forgot = (f"--src {path} holds {held} {fmt.name} elements, run as 1 tensor, but one call "
              f"reads at most {reads} of them; if the file holds N tensors, give --tensors N"
              f"{example}")
    return (*notes, forgot)


def _row_elements(output: Output, rows: int) -> int | None:
    """Elements in one row of a written output (None where this process has not the file)."""
    if not rows or not os.path.exists(output.path):
        return None
    return os.path.getsize(output.path) * 8 // output.fmt.bits // rows
