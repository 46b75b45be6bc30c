"""``ascjax run``: one registry instruction over .bin files, as a table of runners.

Each ``Runner`` record names a registry instruction, its options (whose type choices are the
registry's type rows) and how they become an engine ``Plan``: which files are streamed rows,
which go whole to every device, and which outputs are written. ``run_bin`` checks the options
as the command line does and executes the plan (``engine.execute``).
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from ..cli_options import CONFIG_OPTIONS, Option, ascend_type, byte_address, config_from_options
from ..formats import DATABLOCK_BYTES, FORMATS, Format, resolve
from ..isa.gather import gather
from ..isa.lanes import check_int
from ..isa.masks import Pattern, create_mask
from ..isa.reduce_register import REDUCE_SUM_DATABLOCK_TYPES, reduce_sum_datablock
from ..isa.reduce_tensor import pair_reduce_sum
from ..isa.squeeze import squeeze_sequence, squeeze_window
from ..registry import INSTRUCTIONS
from .binio import BinFileError, check_output_paths, count_units, read_bin
from .engine import CHUNK, Output, Plan, execute

INPUT_FILES = ("src", "mask", "index", "dst")  # the runners' options that name input files


@dataclasses.dataclass(frozen=True)
class Runner:
    """``ascjax run NAME``: the registry instruction, its options, and the plan they make."""

    name: str
    options: tuple[Option, ...]
    plan: Callable[[dict], Plan]

    @property
    def instruction(self):
        return INSTRUCTIONS[self.name]


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

    def __str__(self) -> str:
        rate = self.rows / self.seconds if self.seconds else float("inf")
        return (f"{self.instruction}: {self.rows} {self.unit} -> {', '.join(self.outputs)} "
                f"on {self.devices} device(s) x {self.processes} process(es) in "
                f"{self.seconds:.2f} s ({rate:,.0f} {self.unit}/s)")


def _type_choices(name: str, column: int = 0) -> tuple[str, ...]:
    """The types the registry lists for an instruction (one column of its type rows)."""
    return tuple(dict.fromkeys(row[column] for row in INSTRUCTIONS[name].types))


# --- inputs shared by several runners -------------------------------------------------------

_MASK_OPTIONS = (
    Option("mask", "mask file: one uint8 0/1 per lane, for one register (used for all) or for "
           "each; with --mask-bits the 32-byte hardware form (bit j of the 256 = byte j//8, "
           "bit j%8, LSB first)"),
    Option("mask_bits", "the mask file holds the 32-byte hardware form", flag=True),
    Option("pattern", "mask pattern when no --mask is given (asc_create_mask_bW): "
           f"{', '.join(Pattern.__members__)} (default PAT_ALL)", default="PAT_ALL"),
)
_OUT = Option("out", "output .bin file (dst registers / tensors)", required=True)


def _registers(path: str, fmt: Format, arg: str) -> np.ndarray:
    return read_bin(path, fmt, registers=True, mmap=True, arg=arg)


def _mask(opts: dict, fmt: Format, count: int, dtype: Any) -> tuple[list, list, Callable]:
    """(batched, shared, to_mask) for the mask options: a per-register or a common mask."""
    path = opts.get("mask")
    if path is None:
        mask = create_mask(opts["pattern"], dtype, config=config_from_options(opts))
        return [], [mask], lambda m: m
    units = count_units(path, FORMATS["uint8_t"], arg="--mask")
    lanes = DATABLOCK_BYTES if opts.get("mask_bits") else fmt.lanes
    if units not in (lanes, count * lanes):
        form = "32-byte hardware masks" if opts.get("mask_bits") else f"{lanes} uint8 0/1 lanes"
        raise BinFileError(f"--mask {path}: {units} bytes is neither one mask nor one per "
                           f"register ({count} x {lanes} bytes: {form})")
    data = read_bin(path, "uint8_t", mmap=True, arg="--mask").reshape(-1, lanes)
    if opts.get("mask_bits"):
        def to_mask(m):  # LSB-first, as the bit-mode words of PairReduceSum
            return jnp.unpackbits(m, axis=-1, bitorder="little").astype(bool)
    else:
        for start in range(0, len(data), CHUNK):
            if data[start:start + CHUNK].max(initial=0) > 1:
                raise BinFileError(f"--mask {path}: values must be 0 or 1 (one uint8 a lane)")

        def to_mask(m):
            return m != 0
    if len(data) == 1:
        return [], [data[0]], to_mask
    return [data], [], to_mask


def _first(out: tuple) -> np.ndarray:
    return out[0]


def _masked_registers(opts: dict, registers: np.ndarray, fmt: Format, call: Callable,
                      out: Output, data: Sequence[Any] = ()) -> Plan:
    """A plan for an instruction of a register file and a mask of ``fmt``'s lanes:
    ``call(registers, mask, *data)`` chunk by chunk, ``data`` whole on every device."""
    batched, shared, to_mask = _mask(opts, fmt, len(registers), fmt.name)

    def fn(r, *rest):
        m, rest = (rest[0], rest[1:]) if batched else (rest[-1], rest[:-1])
        return call(r, to_mask(m), *rest)

    return Plan(fn, [registers, *batched], [*data, *shared], [out])


# --- one plan per instruction ---------------------------------------------------------------

def _plan_reduce_sum_datablock(opts: dict) -> Plan:
    fmt = resolve(opts["dtype"], where="reduce_sum_datablock")
    src = _registers(opts["src"], fmt, "--src")
    config = config_from_options(opts)
    dst_fmt = FORMATS[REDUCE_SUM_DATABLOCK_TYPES.get(fmt.name, fmt.name)]

    def call(s, m):
        return reduce_sum_datablock(s, m, dtype=fmt.name, config=config)

    return _masked_registers(opts, src, fmt, call, Output(opts["out"], dst_fmt, _first))


def _gather_index_type(dst: str, src: str, given: str | None) -> str:
    """The index type: as given, or the only one the registry's rows allow for (dst, src)."""
    if given is not None:
        return given
    table = INSTRUCTIONS["gather"].types
    rows = [r[2] for r in table if r[:2] == (dst, src)]
    if not rows:
        pairs = ", ".join(sorted({f"{d}<-{s}" for d, s, _ in table}))
        raise TypeError(f"gather: dst={dst} from src={src} is not in the seed's table; "
                        f"supported dst<-src: {pairs}")
    if len(rows) != 1:
        raise TypeError(f"gather: give --index-dtype, one of {rows} for dst={dst}, src={src}")
    return rows[0]


def _plan_gather(opts: dict) -> Plan:
    src_fmt = resolve(opts["dtype"], where="gather")
    dst_fmt = resolve(opts.get("dst_dtype") or src_fmt.name, where="gather", arg="dst_dtype")
    idx_fmt = resolve(_gather_index_type(dst_fmt.name, src_fmt.name, opts.get("index_dtype")),
                      where="gather", arg="index_dtype")
    data = read_bin(opts["src"], src_fmt, arg="--src")
    if data.size == 0:
        raise BinFileError(f"--src {opts['src']}: the file is empty; it holds the UB data the "
                           f"indices read")
    index = _registers(opts["index"], idx_fmt, "--index")
    config = config_from_options(opts)

    def call(i, m, s):
        return gather(s, i, m, dtype=src_fmt.name, dst_dtype=dst_fmt.name, config=config)

    return _masked_registers(opts, index, idx_fmt, call, Output(opts["out"], dst_fmt, _first),
                             data=[data])


def _parse_pair_mask(text: str) -> Any:
    """``--mask 128`` (continuous mode) or ``--mask 0xFFFF,0x0`` (bit-mode uint64 words)."""
    try:
        words = [int(w, 0) for w in text.split(",")]
    except ValueError:
        raise ValueError(f"pair_reduce_sum: --mask {text!r} must be an int (continuous mode) "
                         f"or comma-separated uint64 words (bit mode)") from None
    return words[0] if "," not in text else words


def _tensors(path: str, fmt: Format, tensors: int, arg: str) -> np.ndarray:
    data = read_bin(path, fmt, mmap=True, arg=arg)
    if tensors < 1 or len(data) % tensors:
        raise BinFileError(f"{arg} {path}: {len(data)} elements is not a whole number of "
                           f"{tensors} LocalTensors")
    return data.reshape(tensors, -1)


def _plan_pair_reduce_sum(opts: dict) -> Plan:
    fmt = resolve(opts["dtype"], where="pair_reduce_sum")
    src = _tensors(opts["src"], fmt, opts["tensors"], "--src")
    if opts.get("dst") is not None:
        dst = _tensors(opts["dst"], fmt, opts["tensors"], "--dst")
    else:
        length = opts["dst_len"] if opts.get("dst_len") is not None else src.shape[1]
        dst = np.zeros((len(src), length), fmt.storage_dtype)
    config, mask = config_from_options(opts), _parse_pair_mask(str(opts["mask"]))
    strides = (opts["repeat_time"], mask, opts["dst_rep_stride"], opts["src_blk_stride"],
               opts["src_rep_stride"])

    def fn(d, s):
        return pair_reduce_sum(d, s, *strides, config=config)

    rows = -(-max(src.shape[1], dst.shape[1]) // fmt.lanes)
    return Plan(fn, [dst, src], [], [Output(opts["out"], fmt, _first)], unit="tensors",
                row_registers=rows)


def _plan_squeeze(opts: dict) -> Plan:
    where = "squeeze_and_storeunalign"
    fmt = resolve(opts["dtype"], where=where)
    src = _registers(opts["src"], fmt, "--src")
    config = config_from_options(opts)
    group = opts.get("group") or len(src)
    if len(src) == 0 or len(src) % group:
        raise BinFileError(f"--src {opts['src']}: {len(src)} registers is not a whole number "
                           f"of groups of {group} (--group)")
    addr = check_int(opts["dst_addr"], 0, config.ub_bytes - 1, where=where, arg="dst_addr")
    if addr % fmt.width:
        raise ValueError(f"{where}: dst_addr={addr} must be aligned to sizeof({fmt.name}) = "
                         f"{fmt.width} (a UB byte address in [0, {config.ub_bytes}))")
    # Each group runs on the few UB bytes it can write; the end of the real UB is checked from
    # AR afterwards (the store's own check sees only that window).
    off, size = squeeze_window(addr, group, config.ub_bytes)
    quiet = config.replace(out_of_range="ignore")
    batched, shared, to_mask = _mask(opts, fmt, len(src), fmt.name)
    groups = [b.reshape(-1, group, b.shape[-1]) for b in (src, *batched)]
    finalize = not opts.get("no_finalize")

    def fn(s, m):
        return squeeze_sequence(s, to_mask(m), off, size, dtype=fmt.name, finalize=finalize,
                                config=quiet)

    def checked_ar(out):  # every output checks it: a store past the UB end is a fault
        ar = out[2].astype(np.int64)
        if len(ar) and addr + ar.max() > config.ub_bytes:
            raise IndexError(f"{where}: the store reaches UB byte {addr + int(ar.max())}, past "
                             f"the end of the {config.ub_bytes}-byte UB (dst_addr + AR); use "
                             f"a smaller --group")
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


# --- the table ------------------------------------------------------------------------------

RUNNERS: dict[str, Runner] = {r.name: r for r in (
    Runner("reduce_sum_datablock", (
        Option("src", "src registers (.bin)", required=True),
        Option("dtype", "src type", ascend_type, required=True,
               choices=_type_choices("reduce_sum_datablock")),
        *_MASK_OPTIONS, _OUT), _plan_reduce_sum_datablock),
    Runner("pair_reduce_sum", (
        Option("src", "src LocalTensor(s) (.bin)", required=True),
        Option("dtype", "T", ascend_type, required=True,
               choices=_type_choices("pair_reduce_sum")),
        Option("tensors", "the src (and dst) file holds this many LocalTensors", int, 1),
        Option("dst", "initial dst LocalTensor(s) (.bin); default zeros"),
        Option("dst_len", "elements of each zero dst when no --dst (default: src length)", int),
        Option("repeat_time", "repeatTime", int, required=True),
        Option("mask", "mask: an int (continuous mode) or uint64 words 'w0,w1' (bit mode)",
               required=True),
        Option("dst_rep_stride", "dstRepStride (128-byte units)", int, 1),
        Option("src_blk_stride", "srcBlkStride (32-byte blocks)", int, 1),
        Option("src_rep_stride", "srcRepStride (32-byte blocks)", int, 8),
        _OUT), _plan_pair_reduce_sum),
    Runner("gather", (
        Option("src", "UB data from the source address on (.bin)", required=True),
        Option("dtype", "src type", ascend_type, required=True,
               choices=_type_choices("gather", 1)),
        Option("index", "index registers (.bin)", required=True),
        Option("index_dtype", "index type (default: the one the seed's table allows)",
               ascend_type, choices=_type_choices("gather", 2)),
        Option("dst_dtype", "dst type (default: the src type)", ascend_type,
               choices=_type_choices("gather", 0)),
        *_MASK_OPTIONS, _OUT), _plan_gather),
    Runner("squeeze_and_storeunalign", (
        Option("src", "src1 registers (.bin)", required=True),
        Option("dtype", "type", ascend_type, required=True,
               choices=_type_choices("squeeze_and_storeunalign")),
        *_MASK_OPTIONS,
        Option("group", "registers per init ... finalize sequence (default: the whole file)",
               int),
        Option("dst_addr", "dst_addr, UB byte address (decimal or 0x hex)",
               byte_address, 0),
        Option("no_finalize", "skip _finalize (the pending tail stays out of the UB)",
               flag=True),
        Option("ub_out", "file for the UB bytes [dst_addr, dst_addr + AR) of each group"),
        Option("ar_out", "file for AR (uint32) of each group"),
        _OUT), _plan_squeeze),
)}


def run_bin(instruction: str, *, chunk: int = CHUNK, devices: Sequence[Any] | None = None,
            progress: bool = False, **options: Any) -> RunSummary:
    """Run ``instruction`` over .bin files; write its outputs atomically; return a summary.

    ``options`` are those of ``RUNNERS[instruction]`` (the ``ascjax run INSTRUCTION`` options,
    with underscores), plus the ``Config`` fields. Registers are streamed ``chunk`` at a time
    (memory stays bounded) over ``devices`` (default: all local devices); the bits do not
    depend on either. Under ``jax.distributed`` each process takes its share (``engine``).

    >>> import numpy as np, tempfile, os, ascjax
    >>> d = tempfile.mkdtemp()
    >>> np.ones((2, 128), np.float16).tofile(os.path.join(d, "src.bin"))
    >>> s = ascjax.run_bin("reduce_sum_datablock", src=os.path.join(d, "src.bin"),
    ...                    dtype="half", out=os.path.join(d, "dst.bin"))
    >>> ascjax.read_bin(os.path.join(d, "dst.bin"), "half")[:8].tolist()
    [16.0, 16.0, 16.0, 16.0, 16.0, 16.0, 16.0, 16.0]
    """
    if instruction not in RUNNERS:
        raise ValueError(f"run: unknown instruction {instruction!r}; bulk runs exist for "
                         f"{list(RUNNERS)}")
    runner = RUNNERS[instruction]
    known = {o.name: o for o in runner.options + CONFIG_OPTIONS}
    unknown = sorted(set(options) - set(known))
    if unknown:
        raise TypeError(f"run {instruction}: unknown option(s) {unknown}; valid: {list(known)}")
    opts = {name: (False if o.flag else o.default) for name, o in known.items()} | options
    missing = [name for name, o in known.items() if o.required and opts[name] is None]
    if missing:
        raise TypeError(f"run {instruction}: missing option(s) {missing}")
    for name, o in known.items():
        if isinstance(opts[name], str) and o.type is not str:
            opts[name] = o.type(opts[name])  # as on the command line: aliases, 0x addresses
        if o.choices is not None and opts[name] is not None and opts[name] not in o.choices:
            raise ValueError(f"{instruction}: {name}={opts[name]!r} is not one of "
                             f"{list(o.choices)}")
    check_int(chunk, 1, 1 << 30, where=f"run {instruction}", arg="chunk")
    begin = time.perf_counter()
    plan = runner.plan(opts)
    check_output_paths([o.path for o in plan.outputs],  # (PairReduceSum's --mask is a value)
                       [opts[name] for name in INPUT_FILES if opts.get(name)])
    devices = list(jax.local_devices() if devices is None else devices)
    rows = execute(plan, chunk=chunk, devices=devices, progress=progress, label=instruction)
    return RunSummary(instruction, rows, plan.unit, tuple(o.path for o in plan.outputs),
                      len(devices), jax.process_count(), time.perf_counter() - begin)
