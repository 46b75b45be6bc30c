"""Goldens for whole files of registers: streamed in fixed chunks, sharded over devices.

``map_registers`` runs a function over the leading (register) axis of arrays that may be far
larger than memory (``np.memmap``): a fixed number of registers at a time (the last chunk
padded, so ``jit`` compiles once), each chunk split over the local devices along that axis
(``Mesh`` + ``NamedSharding``), with the next chunk dispatched while the previous one is
copied back. Registers are independent, so the bits do not depend on the chunk size or the
device count.

``run_bin`` is the same for one instruction over .bin files (what ``ascjax run`` calls): each
instruction's options are listed in ``RUNNERS``, whose names and type choices come from the
instruction registry. Outputs are written atomically. Under ``jax.distributed`` with several
processes, process p computes the p-th contiguous share of the registers on its own devices,
writes it to ``OUT.part<p>``, and process 0 joins the parts into ``OUT`` once every process is
done.
"""

from __future__ import annotations

import dataclasses
import os
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax
from jax.experimental import checkify
from jax.sharding import Mesh, NamedSharding, PartitionSpec

from ..config import _CHOICES, PRODUCTS, Config
from ..formats import BY_ALIAS, DATABLOCK_BYTES, FORMATS, VL_BYTES, Format, resolve
from ..isa.gather import gather
from ..isa.lanes import check_int
from ..isa.masks import Pattern, create_mask
from ..isa.reduce_register import REDUCE_SUM_DATABLOCK_TYPES, reduce_sum_datablock
from ..isa.reduce_tensor import pair_reduce_sum
from ..isa.squeeze import (
    SqueezeState,
    get_squeeze_status,
    squeeze_and_storeunalign,
    squeeze_and_storeunalign_finalize,
)
from ..registry import INSTRUCTIONS
from .binio import BinFileError, atomic_outputs, count_units, read_bin, to_little
from .progress import Progress

CHUNK = 1 << 16  # registers per compiled call: 16 MiB of input at 256 bytes a register
AXIS = "registers"


# --- the streaming, sharded engine ----------------------------------------------------------

def chunk_size(count: int, chunk: int, devices: int) -> int:
    """Registers per call: ``chunk``, or the power of two >= ``count`` if smaller, rounded up to
    a multiple of the device count (each device gets an equal share)."""
    size = min(chunk, 1 << max(count - 1, 0).bit_length())
    return -(-size // devices) * devices


def _pad(block: np.ndarray, size: int) -> np.ndarray:
    if len(block) == size:
        return block
    padded = np.zeros((size,) + block.shape[1:], block.dtype)  # zero registers, masked off
    padded[: len(block)] = block
    return padded


def iter_chunks(fn: Callable, batched: Sequence[Any], shared: Sequence[Any] = (), *,
                chunk: int = CHUNK, devices: Sequence[Any] | None = None,
                progress: bool = False, label: str = "ascjax",
                unit: str = "registers") -> Iterator[tuple]:
    """Yield ``(start, stop, outputs)`` for ``fn(*batched[start:stop], *shared)``, chunk by chunk.

    ``batched`` arrays share their leading length n (registers, tensors or groups) and may be
    ``np.memmap``; ``shared`` arrays go whole to every device. ``fn`` returns an array or a
    tuple of arrays with the same leading axis; ``outputs`` is a tuple of NumPy arrays of
    ``stop - start`` rows. Each call has the same shape (``chunk_size``), split over
    ``devices`` (default: all local devices) along the leading axis.
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

    compiled = jax.jit(checked, in_shardings=(rows,) * len(batched) + (whole,) * len(shared),
                       out_shardings=(whole, rows))
    shared = [jax.device_put(np.asarray(s), whole) for s in shared]
    bar = Progress(count, label, enabled=progress, unit=unit)
    pending = None
    # Dispatch is asynchronous: chunk k+1 is queued before chunk k is copied back to the host.
    for start in range(0, count, size):
        stop = min(start + size, count)
        parts = [jax.device_put(_pad(np.asarray(b[start:stop]), size), rows) for b in batched]
        current = (start, stop, compiled(*parts, *shared))
        if pending is not None:
            yield _fetch(pending, bar)
        pending = current
    if pending is not None:
        yield _fetch(pending, bar)
    bar.close()


def _fetch(pending: tuple, bar: Progress) -> tuple:
    start, stop, (err, out) = pending
    message = err.get()
    if message is not None:
        raise IndexError(message.removesuffix(" (`check` failed)"))
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
    pieces = [out for _, _, out in iter_chunks(fn, batched, shared, chunk=chunk, devices=devices,
                                                progress=progress)]
    joined = tuple(np.concatenate(p) for p in zip(*pieces))
    return joined[0] if len(joined) == 1 else joined


# --- instruction runners over .bin files ----------------------------------------------------

@dataclasses.dataclass(frozen=True)
class Option:
    """One parameter of a bulk run: ``--name-with-dashes`` on the command line."""

    name: str
    help: str
    type: Callable = str
    default: Any = None
    choices: tuple | None = None
    required: bool = False
    flag: bool = False


@dataclasses.dataclass(frozen=True)
class Output:
    """One output file: its path, the format written, and how to get its rows from a chunk."""

    path: str
    fmt: Format
    take: Callable[[tuple], np.ndarray]


@dataclasses.dataclass(frozen=True)
class Plan:
    """Everything ``run_bin`` needs: the function, its inputs and its outputs."""

    fn: Callable
    batched: list
    shared: list
    outputs: list
    unit: str = "registers"
    row_registers: int = 1  # registers' worth of data in one row: scales the chunk down


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


@dataclasses.dataclass(frozen=True)
class Runner:
    name: str
    options: tuple[Option, ...]
    plan: Callable[..., Plan]

    @property
    def instruction(self):
        return INSTRUCTIONS[self.name]


def _type_choices(name: str, column: int = 0) -> tuple[str, ...]:
    """The types the registry lists for an instruction (one column of its type rows)."""
    return tuple(dict.fromkeys(row[column] for row in INSTRUCTIONS[name].types))


def _config_options() -> tuple[Option, ...]:
    """One option per ``Config`` field (out-of-range faults always raise ``IndexError`` in a
    bulk run, checked per chunk)."""
    opts = [Option("product", "Ascend product (Config.product)", default="950",
                   choices=tuple(PRODUCTS))]
    for field, choices in _CHOICES.items():
        if field != "out_of_range":
            default = getattr(Config(), field)
            shown = "as the --product's page says" if default is None else default
            opts.append(Option(field, f"Config.{field} (default {shown})", default=default,
                               choices=choices))
    opts.append(Option("ub_bytes", "usable UB size in bytes (Config.ub_bytes)", int,
                       Config().ub_bytes))
    return tuple(opts)


CONFIG_OPTIONS = _config_options()
_MASK_OPTIONS = (
    Option("mask", "mask file: one uint8 0/1 per lane, for one register (used for all) or for "
           "each; with --mask-bits the 32-byte hardware form (bit j of the 256 = byte j//8, "
           "bit j%8, LSB first)"),
    Option("mask_bits", "the mask file holds the 32-byte hardware form", flag=True),
    Option("pattern", "mask pattern when no --mask is given (asc_create_mask_bW): "
           f"{', '.join(Pattern.__members__)} (default PAT_ALL)", default="PAT_ALL"),
)


def _config(opts: dict) -> Config:
    return Config(**{o.name: opts[o.name] for o in CONFIG_OPTIONS}, out_of_range="checkify")


def _registers(path: str, fmt: Format, arg: str) -> np.ndarray:
    return read_bin(path, fmt, registers=True, mmap=True, arg=arg)


def _mask(opts: dict, fmt: Format, count: int, dtype: Any) -> tuple[list, list, Callable]:
    """(batched, shared, to_mask) for the mask options: a per-register or a common mask."""
    path = opts.get("mask")
    if path is None:
        return [], [create_mask(opts["pattern"], dtype)], lambda m: m
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


def _plan_reduce_sum_datablock(opts: dict) -> Plan:
    fmt = resolve(opts["dtype"], where="reduce_sum_datablock")
    src = _registers(opts["src"], fmt, "--src")
    batched, shared, to_mask = _mask(opts, fmt, len(src), fmt.name)
    config = _config(opts)
    dst_fmt = FORMATS[REDUCE_SUM_DATABLOCK_TYPES.get(fmt.name, fmt.name)]

    def fn(s, m):
        return reduce_sum_datablock(s, to_mask(m), dtype=fmt.name, config=config)

    return Plan(fn, [src, *batched], shared, [Output(opts["out"], dst_fmt, _first)])


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
    config, mask = _config(opts), _parse_pair_mask(str(opts["mask"]))
    strides = (opts["repeat_time"], mask, opts["dst_rep_stride"], opts["src_blk_stride"],
               opts["src_rep_stride"])

    def fn(d, s):
        return pair_reduce_sum(d, s, *strides, config=config)

    rows = -(-max(src.shape[1], dst.shape[1]) // fmt.lanes)
    return Plan(fn, [dst, src], [], [Output(opts["out"], fmt, _first)], unit="tensors",
                row_registers=rows)


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
    batched, shared, to_mask = _mask(opts, idx_fmt, len(index), idx_fmt.name)
    config = _config(opts)

    def fn(i, *rest):
        m, s = (rest[0], rest[1]) if batched else (rest[1], rest[0])
        return gather(s, i, to_mask(m), dtype=src_fmt.name, dst_dtype=dst_fmt.name,
                      config=config)

    shared = [data, *shared]
    return Plan(fn, [index, *batched], shared, [Output(opts["out"], dst_fmt, _first)])


def _plan_squeeze(opts: dict) -> Plan:
    where = "squeeze_and_storeunalign"
    fmt = resolve(opts["dtype"], where=where)
    src = _registers(opts["src"], fmt, "--src")
    config = _config(opts)
    group = opts.get("group") or len(src)
    if len(src) == 0 or len(src) % group:
        raise BinFileError(f"--src {opts['src']}: {len(src)} registers is not a whole number "
                           f"of groups of {group} (--group)")
    addr = check_int(opts["dst_addr"], 0, config.ub_bytes - 1, where=where, arg="dst_addr")
    if addr % fmt.width:
        raise ValueError(f"{where}: dst_addr={addr} must be aligned to sizeof({fmt.name}) = "
                         f"{fmt.width} (a UB byte address in [0, {config.ub_bytes}))")
    # Only UB addresses modulo 32 matter to the byte model, so each group gets a small UB that
    # starts at floor32(dst_addr); the end of the real UB is checked from AR afterwards.
    off = addr % DATABLOCK_BYTES
    size = min(-(-(off + group * VL_BYTES) // DATABLOCK_BYTES) * DATABLOCK_BYTES,
               config.ub_bytes - (addr - off))
    quiet = config.replace(out_of_range="ignore")
    batched, shared, to_mask = _mask(opts, fmt, len(src), fmt.name)
    groups = [b.reshape(-1, group, b.shape[-1]) for b in (src, *batched)]
    finalize = not opts.get("no_finalize")

    def fn(s, m):
        g = s.shape[0]
        m = jnp.broadcast_to(to_mask(m), s.shape[:2] + to_mask(m).shape[-1:])
        state = SqueezeState(jnp.zeros(g, jnp.int32), jnp.zeros(g, jnp.int32),
                             jnp.zeros((g, DATABLOCK_BYTES), jnp.uint8))

        def step(carry, xs):
            ub, st = carry
            ub, dst, st = squeeze_and_storeunalign(ub, off, st, xs[0], xs[1], dtype=fmt.name,
                                                   config=quiet)
            return (ub, st), dst

        (ub, st), dst = lax.scan(step, (jnp.zeros((g, size), jnp.uint8), state),
                                 (jnp.moveaxis(s, 1, 0), jnp.moveaxis(m, 1, 0)))
        if finalize:
            ub, st = squeeze_and_storeunalign_finalize(ub, off, st)
        return jnp.moveaxis(dst, 0, 1), ub, get_squeeze_status(st)

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


def ascend_type(text: str) -> str:
    """An Ascend type name from it or an alias (float16 -> half); unknown names pass through
    to argparse's choices check, which lists the valid ones."""
    return BY_ALIAS[text].name if text in BY_ALIAS else text


def byte_address(text: str) -> int:
    """A byte address as written in kernels: decimal or 0x hex."""
    return int(text, 0)


_OUT = Option("out", "output .bin file (dst registers / tensors)", required=True)

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
    depend on either. Under ``jax.distributed`` each process takes its share (module doc).

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
    _check_output_paths(plan, [opts[name] for name in INPUT_FILES if opts.get(name)])
    devices = list(jax.local_devices() if devices is None else devices)
    rows = _execute(plan, chunk=chunk, devices=devices, progress=progress, label=instruction)
    return RunSummary(instruction, rows, plan.unit, tuple(o.path for o in plan.outputs),
                      len(devices), jax.process_count(), time.perf_counter() - begin)


INPUT_FILES = ("src", "mask", "index", "dst")  # the runners' options that name input files


def _check_output_paths(plan: Plan, inputs: list) -> None:
    """No output may replace an input file (links included) or another output of the run."""
    outputs = [os.path.realpath(o.path) for o in plan.outputs]
    for o, path in zip(plan.outputs, outputs):
        if outputs.count(path) > 1:
            raise ValueError(f"{os.fspath(o.path)}: named for two outputs of one run")
        for given in inputs:  # (PairReduceSum's --mask is a value, not a file)
            if os.path.isfile(given) and os.path.exists(path) and os.path.samefile(path, given):
                raise ValueError(f"{os.fspath(o.path)}: this output file is also an input "
                                 f"({os.fspath(given)}); write it elsewhere")


def _execute(plan: Plan, *, chunk: int, devices: list, progress: bool, label: str) -> int:
    count = len(plan.batched[0])
    rank, procs = jax.process_index(), jax.process_count()
    lo, hi = count * rank // procs, count * (rank + 1) // procs
    paths = [o.path if procs == 1 else f"{o.path}.part{rank}" for o in plan.outputs]
    with atomic_outputs(paths) as handles:
        if hi > lo:
            rows = max(chunk // plan.row_registers, 1)
            for _, _, out in iter_chunks(plan.fn, [b[lo:hi] for b in plan.batched], plan.shared,
                                         chunk=rows, devices=devices, progress=progress,
                                         label=label, unit=plan.unit):
                for handle, o in zip(handles, plan.outputs):
                    to_little(np.asarray(o.take(out), o.fmt.storage_dtype), o.fmt).tofile(handle)
    if procs > 1:
        _join_parts([o.path for o in plan.outputs], rank, procs)
    return count


def _join_parts(paths: list[str], rank: int, procs: int) -> None:
    """Process 0 concatenates every process's ``.part<p>`` files once all are written."""
    from jax.experimental import multihost_utils

    multihost_utils.sync_global_devices("ascjax.run_bin: parts written")
    if rank == 0:
        with atomic_outputs(paths) as handles:
            for handle, path in zip(handles, paths):
                for p in range(procs):
                    with open(f"{path}.part{p}", "rb") as part:
                        while block := part.read(1 << 24):
                            handle.write(block)
        for path in paths:
            for p in range(procs):
                os.unlink(f"{path}.part{p}")
    multihost_utils.sync_global_devices("ascjax.run_bin: parts joined")
