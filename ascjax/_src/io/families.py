"""Runner families: ``ascjax run`` for an instruction from its signature and registry record.

A family turns one line of ``runners.FAMILIES`` into a ``Runner``: its options (type choices
from the registry's type rows; one option per static argument of the signature, named and
explained by ``ARGUMENTS``, the table of vendor argument names; template keywords with declared
choices; the ``Config`` fields the instruction reads) and the plan that streams rows of .bin
files through it.

* ``Register``: ``f(src, mask, *, dtype=None, config=None, **template)`` returning the dst
  register, or a tuple whose first element is it. Rows are registers; the mask options are
  ``MASK_OPTIONS``.
* ``Tensor``: ``f(dst, src, <static ints and masks in vendor order>, *, config=None,
  **template)`` returning the new dst, or a tuple with dst first. Rows are LocalTensors
  (``--tensors`` per file, ``--dst`` or zeros). A ``*args`` signature (ReduceSum's two call
  forms) declares its ``forms``; a work-space argument (``shared_tmp_buffer``) gets ``None``.
* ``call_forms``: one name whose call forms need runners of different kinds (asc_squeeze on
  registers and on UB): the forms' runners as one, the options given picking the form.

Parts of a tuple result after dst (nested tuples flattened: an SPR NamedTuple is its fields, in
order) go to the optional files the line names in ``outputs`` (``--NAME-out``), each in the
format of its dtype.
"""

from __future__ import annotations

import argparse
import dataclasses
import inspect
import re
from collections.abc import Callable, Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import checkify

from ..cli_options import CONFIG_OPTIONS, Option, ascend_type, config_from_options, product_option
from ..config import PRODUCTS
from ..formats import DATABLOCK_BYTES, FORMATS, Format, resolve
from ..isa.lanes import check_int
from ..isa.masks import Pattern, create_mask, pattern_of
from ..registry import ASSUMPTIONS, INSTRUCTIONS
from .binio import BinFileError, count_units, read_bin
from .engine import CHUNK, Output, Plan

INPUT_FILES = ("src", "mask", "index", "dst")  # the options that may name input files


@dataclasses.dataclass(frozen=True)
class Runner:
    """``ascjax run NAME``: the registry instruction, its options, and the plan they make.

    ``config_options`` are the ``Config`` fields the instruction can read (``config_options``
    below); ``inputs`` the options that name input files (an output may not overwrite one);
    ``picks``: options none of which is required alone but one of which must be given (a
    ``Tensor`` runner's call-form arguments without a default: --count, --repeat), so that
    ``call_forms`` takes the runner's form only when one is.
    """

    name: str
    options: tuple[Option, ...]
    plan: Callable[[dict], Plan]
    config_options: tuple[Option, ...] = ()
    inputs: tuple[str, ...] = INPUT_FILES
    picks: tuple[str, ...] = ()

    def __post_init__(self):
        if not self.config_options:
            object.__setattr__(self, "config_options", config_options(self.name, self.options))

    @property
    def instruction(self):
        return INSTRUCTIONS[self.name]


# --- which Config fields a runner lists ------------------------------------------------------

# Fields an instruction reads that none of its assumptions names (the registry's ``assumed``
# gives the rest): the UB size of a store runner.
READS = {"squeeze_and_storeunalign": ("ub_bytes",)}


def _rows(name: str, form: str | None) -> list[tuple]:
    """The registry's type rows of ``name``; of one call form (a value of its form column)."""
    return [row for row in INSTRUCTIONS[name].types if form is None or form in row]


def config_options(name: str, options: Sequence[Option], adds: bool = False,
                   form: str | None = None) -> tuple[Option, ...]:
    """The ``Config`` options of ``ascjax run NAME``: ``product`` (type rows and behaviour are
    per product), the fields named by the assumptions its type rows rest on (the registry's
    ``assumed`` keys, ``Config(field=...)`` in ``ASSUMPTIONS``), ``int_overflow`` where the
    instruction ``adds`` (a reduction) and a type row is an integer type, ``mask_layout`` /
    ``vl_overflow`` where ``--pattern`` builds a mask, and ``READS``; of the rows of ``form``
    where the runner runs one call form (the registry's form column: "UB (A2, A3)")."""
    ins = INSTRUCTIONS[name]
    rows = _rows(name, form)
    keys = {k for row in rows for k in ins.assumptions(row)}
    fields = {"product", *READS.get(name, ())}
    for key, _, option in ASSUMPTIONS:
        if key in keys:
            fields.update(re.findall(r"Config\((\w+)=", option))
    if adds and any(v in FORMATS and not FORMATS[v].is_float for row in rows for v in row):
        fields.add("int_overflow")
    if any(o.name == "pattern" for o in options):
        fields.update(("mask_layout", "vl_overflow"))
    return tuple(_product_option(ins, rows) if o.name == "product" else o
                 for o in CONFIG_OPTIONS if o.name in fields)


def _product_option(ins, rows: list[tuple]) -> Option:
    """``--product`` offering the products the rows run on (a register call's is the 950
    alone), by default the 950 where it is one, else the first of them in ``PRODUCTS``."""
    listed = {product for row in rows for product in ins.products(row)}
    choices = tuple(product for product in PRODUCTS if product in listed)
    return product_option(choices, "950" if "950" in choices else choices[0])


# --- option types -----------------------------------------------------------------------------

def integer(text: str) -> int:
    """An int as written in kernels: decimal or 0x hex."""
    try:
        return int(text)
    except ValueError:
        return int(text, 0)


def boolean(text: str) -> bool:
    """A bool template parameter: true/false (or 1/0)."""
    value = {"true": True, "1": True, "false": False, "0": False}.get(text.strip().lower())
    if value is None:
        raise ValueError(f"{text!r} is not true or false")
    return value


def int_or_name(text: str) -> int | str:
    """A choice given by number or by name (ReduceSum's ``method``)."""
    return int(text) if text.strip().lstrip("-").isdigit() else text


def parse_mask(value: Any, where: str) -> Any:
    """``--mask 128`` (continuous mode) or ``--mask 0xFFFF,0x0`` (bit-mode uint64 words); an int
    or a sequence of words passes through (``run_bin`` from Python)."""
    if not isinstance(value, str):
        return value
    try:
        words = [int(w, 0) for w in value.split(",")]
    except ValueError:
        raise ValueError(f"{where}: --mask {value!r} must be an int (continuous mode) "
                         f"or comma-separated uint64 words (bit mode)") from None
    return words[0] if "," not in value else words


# --- the vendor argument names ----------------------------------------------------------------

@dataclasses.dataclass(frozen=True)
class Argument:
    """A static argument of the LocalTensor calls: its vendor name, units (the page's), default
    (``None``: required) and how its text is parsed (masks by ``parse_mask`` in the plan)."""

    vendor: str
    unit: str = ""
    default: Any = None
    type: Callable = integer


MASK_HELP = "an int (continuous mode) or uint64 words 'w0,w1' (bit mode)"
ARGUMENTS = {
    "repeat_time": Argument("repeatTime"),
    "mask": Argument("mask", type=str),
    "dst_rep_stride": Argument("dstRepStride", "units as the page says", 1),
    "dst_blk_stride": Argument("dstBlkStride", "32-byte blocks", 1),
    "src_blk_stride": Argument("srcBlkStride", "32-byte blocks", 1),
    "src_rep_stride": Argument("srcRepStride", "32-byte blocks", 8),
    "count": Argument("count", "the first count elements of src"),
    "cal_index": Argument("calIndex", "also find the index: true/false", False, boolean),
    # the C API on UB memory spells them in snake case
    "repeat": Argument("repeat"),
    "dst_repeat_stride": Argument("dst_repeat_stride", "units as the page says", 1),
    "src_block_stride": Argument("src_block_stride", "32-byte blocks", 1),
    "src_repeat_stride": Argument("src_repeat_stride", "32-byte blocks", 8),
    "dst_block_stride": Argument("dst_block_stride", "32-byte blocks", 1),
    "src0_block_stride": Argument("src0_block_stride", "32-byte blocks", 1),
    "src1_block_stride": Argument("src1_block_stride", "32-byte blocks", 1),
    "src0_repeat_stride": Argument("src0_repeat_stride", "32-byte blocks", 8),
    "src1_repeat_stride": Argument("src1_repeat_stride", "32-byte blocks", 8),
}
WORK_SPACE = {"shared_tmp_buffer": "sharedTmpBuffer"}  # the vendor's work space arguments


def _camel(name: str) -> str:
    return re.sub(r"_([a-z])", lambda m: m.group(1).upper(), name)


def argument_option(name: str, units: dict, default: Any = None, form: str = "") -> Option:
    """The option of static argument ``name``: ``ARGUMENTS`` (or its camelCase name, an int,
    the signature's default) with the unit the family line gives."""
    arg = ARGUMENTS.get(name) or Argument(_camel(name), default=default,
                                          type=boolean if isinstance(default, bool) else integer)
    unit = units.get(name, arg.unit)
    text = f"{arg.vendor}: {MASK_HELP}" if name == "mask" else arg.vendor
    text += f" ({unit})" if unit else ""
    default = arg.default if default is None else default
    if form:
        text += f"; call form {form}" + (f", default {default}" if default is not None else "")
        return Option(name, text, arg.type)
    return Option(name, text, arg.type, default, required=default is None)


# --- template keywords --------------------------------------------------------------------------

@dataclasses.dataclass(frozen=True)
class Template:
    """A template keyword as a run option (``--reduce-type max``): its declared choices (None:
    any value ``type`` parses) and how its text is parsed; the default is the signature's
    (none: required)."""

    choices: tuple | None
    type: Callable | None = None
    help: str = ""

    def option(self, name: str, function: Callable) -> Option:
        param = inspect.signature(function).parameters.get(name)
        if param is None:
            raise TypeError(f"runner: {function.__name__} has no keyword {name!r}")
        default = None if param.default is inspect.Parameter.empty else param.default
        kind = self.type or (boolean if all(isinstance(c, bool) for c in self.choices) else str)
        arg = ARGUMENTS.get(name)
        text = self.help or (f"{arg.vendor} ({arg.unit})" if arg else "template parameter " + name)
        if self.choices is not None:
            text += ": one of " + ", ".join(map(str, self.choices))
        text += "" if default is None else f" (default {default})"
        return Option(name, text, kind, default, self.choices, required=default is None
                      and param.default is inspect.Parameter.empty)


def parse_mask_state(text: str) -> Any:
    """``--mask-state``: the vector unit's mask mode and registers (``ascjax.MaskState``):
    ``normal`` (the power-on state), ``normal:HIGH,LOW`` (the maskHigh, maskLow words) or
    ``counter:N`` (N elements)."""
    from ..isa.vector_mask import MaskState  # only instructions that take mask_state need it

    mode, _, words = text.partition(":")
    try:
        values = [integer(w) for w in words.split(",")] if words else []
        if mode == "counter" and len(values) == 1:
            return MaskState("counter", low=values[0])
        if mode == "normal" and len(values) in (0, 2):
            return MaskState("normal", *values)
    except ValueError as error:  # a word that is no int, or out of its range (MaskState's)
        raise argparse.ArgumentTypeError(f"--mask-state {text!r}: {error}") from None
    raise argparse.ArgumentTypeError(f"--mask-state {text!r} is not normal, normal:HIGH,LOW "
                                     f"or counter:N")


# The hardware state a LocalTensor call reads (``repeat.repeat_call``): options for every
# instruction whose signature takes these keywords, without a line saying so.
STATE = {
    "is_set_mask": Template((False, True), help="isSetMask: false makes --mask a placeholder "
                            "(0) and takes the mask from --mask-state"),
    "mask_state": Template(None, parse_mask_state, "the mask mode and registers the call runs "
                           "under: normal (power-on), normal:HIGH,LOW (maskHigh, maskLow) or "
                           "counter:N (N elements over the call)"),
}


def _with_state(templates: dict, function: Callable) -> dict:
    """The line's template keywords, after the ``STATE`` keywords the function takes."""
    params = inspect.signature(function).parameters
    return {k: t for k, t in STATE.items() if k in params} | templates


def _templates(templates: dict, function: Callable) -> tuple[Option, ...]:
    return tuple((t if isinstance(t, Template) else Template(tuple(t))).option(k, function)
                 for k, t in templates.items())


def _keywords(opts: dict, templates: dict, function: Callable, **extra: Any) -> dict:
    """Template keywords from the options, and ``extra`` (dtype, config) where accepted."""
    params = inspect.signature(function).parameters
    return {k: opts[k] for k in templates} | {k: v for k, v in extra.items() if k in params}


# --- outputs ----------------------------------------------------------------------------------

def _format_of(dtype: np.dtype, hints: Sequence[str]) -> Format:
    """The Ascend format of an output array: the first of ``hints`` (the src type, the
    registry's types) stored as ``dtype``, else the first format that is (bool: uint8_t)."""
    if dtype == np.bool_:
        return FORMATS["uint8_t"]
    for name in (*hints, *FORMATS):
        if name in FORMATS and FORMATS[name].storage_dtype == dtype:
            return FORMATS[name]
    raise TypeError(f"run: an output of dtype {dtype} has no Ascend format")


def _leaves(result: Any) -> tuple:
    return tuple(jax.tree_util.tree_leaves(result))


def _outputs(name: str, plan: Plan, extras: Sequence[str], opts: dict, fmt: Format) -> list:
    """The plan's outputs: dst to ``--out``, the other parts to their ``--NAME-out`` files
    (when given); formats from the shapes the call returns for two rows."""
    def probe(b):
        return jax.ShapeDtypeStruct((2,) + tuple(b.shape[1:]), b.dtype)

    shared = [jax.ShapeDtypeStruct(jnp.shape(s), jnp.asarray(s).dtype) for s in plan.shared]
    _, parts = jax.eval_shape(checkify.checkify(plan.fn), *map(probe, plan.batched), *shared)
    if len(parts) != 1 + len(extras):
        raise TypeError(f"run {name}: the call returns {len(parts)} part(s), the runner table "
                        f"names dst and {list(extras)}")
    hints = (fmt.name, *(v for row in INSTRUCTIONS[name].types for v in row))
    outputs = []
    labels = ("out", *(e and f"{e}_out" for e in extras))  # None: a part not offered
    for i, (part, label) in enumerate(zip(parts, labels, strict=True)):
        if not part.shape or part.shape[0] != 2:
            raise TypeError(f"run {name}: part {i} of the result has shape {part.shape}, not "
                            f"one row per input row")
        if label and opts.get(label) is not None:  # given ("" is refused up front)
            outputs.append(Output(opts[label], _format_of(part.dtype, hints),
                                  lambda out, i=i: out[i]))
    return outputs


def _extra_options(extras: Sequence[str]) -> tuple[Option, ...]:
    return tuple(Option(f"{e}_out", f"file for {e} (optional; one entry per row)")
                 for e in extras if e)


OUT = Option("out", "output .bin file (dst registers / tensors)", required=True)


# --- inputs -----------------------------------------------------------------------------------

def type_choices(name: str, column: int = 0, form: str | None = None) -> tuple[str, ...]:
    """The types the registry lists for an instruction (one column of its type rows; of one
    call form's rows, as ``config_options``)."""
    return tuple(dict.fromkeys(row[column] for row in _rows(name, form)))


MASK_OPTIONS = (
    Option("mask", "mask file: one uint8 0/1 per lane, for one register (used for all) or for "
           "each; with --mask-bits the 32-byte hardware form (bit j of the 256 = byte j//8, "
           "bit j%8, LSB first; one bit per register byte, so element i of a 2-byte type is "
           "bit 2i, of a 4-byte type bit 4i)"),
    Option("mask_bits", "the mask file holds the 32-byte hardware form", flag=True),
    Option("pattern", "mask pattern when no --mask is given (asc_create_mask_bW): "
           f"{', '.join(Pattern.__members__)} (default PAT_ALL)"),
)
DEFAULT_PATTERN = "PAT_ALL"  # --pattern's default, applied where no option says otherwise


def registers(path: str, fmt: Format, arg: str) -> np.ndarray:
    return read_bin(path, fmt, registers=True, mmap=True, arg=arg)


def mask_input(opts: dict, fmt: Format, count: int, dtype: Any) -> tuple[list, list, Callable]:
    """(batched, shared, to_mask) for the mask options: a per-register or a common mask."""
    path = opts.get("mask")
    if path is None:
        pattern = DEFAULT_PATTERN if opts.get("pattern") is None else opts["pattern"]
        try:
            pattern_of(pattern)  # create_mask's own check; its message names no option
        except ValueError:
            raise ValueError(f"--pattern {pattern!r} is not a mask pattern; valid: "
                             f"{', '.join(Pattern.__members__)} (PAT_ may be left out)") from None
        mask = create_mask(pattern, dtype, config=config_from_options(opts))
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
            if np.asarray(data[start:start + CHUNK]).max(initial=0) > 1:
                raise BinFileError(f"--mask {path}: values must be 0 or 1 (one uint8 a lane)")

        def to_mask(m):
            return m != 0
    if len(data) == 1:
        return [], [data[0]], to_mask
    return [data], [], to_mask


def masked_registers(opts: dict, regs: np.ndarray, fmt: Format, call: Callable,
                     outputs: Sequence[Output], data: Sequence[Any] = ()) -> Plan:
    """A plan for an instruction of a register file and a mask of ``fmt``'s lanes:
    ``call(registers, mask, *data)`` chunk by chunk, ``data`` whole on every device."""
    batched, shared, to_mask = mask_input(opts, fmt, len(regs), fmt.name)

    def fn(r, *rest):
        m, rest = (rest[0], rest[1:]) if batched else (rest[-1], rest[:-1])
        return call(r, to_mask(m), *rest)

    return Plan(fn, [regs, *batched], [*data, *shared], list(outputs))


def tensors(path: str, fmt: Format, count: int, arg: str) -> np.ndarray:
    data = read_bin(path, fmt, mmap=True, arg=arg)
    if count < 1 or len(data) % count:
        raise BinFileError(f"{arg} {path}: {len(data)} elements is not a whole number of "
                           f"{count} LocalTensors")
    return data.reshape(count, -1)


# --- the families -----------------------------------------------------------------------------

@dataclasses.dataclass(frozen=True)
class Register:
    """``f(src, mask, *, dtype=None, config=None, **template)`` over a file of registers.

    ``templates``: keyword -> its choices (a tuple, or a ``Template``); ``outputs``: names of
    the parts after dst (``--NAME-out`` files; None for a part not offered); ``adds``: a
    reduction (its integer adds read ``Config.int_overflow``), False for data movement;
    ``form``: the call form it runs, where the name has others (the registry's form column:
    its types and assumptions only);
    ``function``: the form's own function, where the registry's tells the forms apart by their
    arguments (default: the registry's)."""

    templates: dict = dataclasses.field(default_factory=dict)
    outputs: tuple[str | None, ...] = ()
    adds: bool = True
    form: str | None = None
    function: Callable | None = None

    def runner(self, name: str) -> Runner:
        function = self.function or INSTRUCTIONS[name].function
        templates = _with_state(self.templates, function)
        options = (Option("src", "src registers (.bin)", required=True),
                   Option("dtype", "src type", ascend_type, required=True,
                          choices=type_choices(name, form=self.form)),
                   *MASK_OPTIONS, *_templates(templates, function), OUT,
                   *_extra_options(self.outputs))

        def plan(opts: dict) -> Plan:
            fmt = resolve(opts["dtype"], where=name)
            src = registers(opts["src"], fmt, "--src")
            keywords = _keywords(opts, templates, function, dtype=fmt.name,
                                 config=config_from_options(opts))

            def call(s, m):
                return _leaves(function(s, m, **keywords))

            p = masked_registers(opts, src, fmt, call, ())
            return dataclasses.replace(p, outputs=_outputs(name, p, self.outputs, opts, fmt))

        return Runner(name, options, plan,
                      config_options(name, options, adds=self.adds, form=self.form),
                      inputs=("src", "mask"))


def tensor_options(tensors_help: str) -> tuple:
    """--tensors, --dst, --dst-len of every LocalTensor runner."""
    return (Option("tensors", tensors_help, int, 1, low=1),
            Option("dst", "initial dst LocalTensor(s) (.bin); default zeros"),
            Option("dst_len", "elements of each zero dst when no --dst (default: src length)",
                   int, low=1))


def load_tensors(opts: dict, fmt: Format, dst_fmt: Format | None = None):
    """(dst, src) LocalTensor rows: --tensors of each per file; dst zeros of --dst-len (default
    src's length) when no --dst."""
    dst_fmt = dst_fmt or fmt
    src = tensors(opts["src"], fmt, opts["tensors"], "--src")
    if opts.get("dst") is not None:
        return tensors(opts["dst"], dst_fmt, opts["tensors"], "--dst"), src
    length = opts["dst_len"] if opts.get("dst_len") is not None else src.shape[1]
    return np.zeros((len(src), length), dst_fmt.storage_dtype), src


def tensor_registers(src, fmt: Format, dst, dst_fmt: Format | None = None) -> int:
    """Registers one LocalTensor row spans (the chunking unit), at least 1."""
    dst_fmt = dst_fmt or fmt
    return max(-(-src.shape[1] // fmt.lanes), -(-dst.shape[1] // dst_fmt.lanes), 1)


@dataclasses.dataclass(frozen=True)
class Tensor:
    """``f(dst, src, <static arguments>, *, config=None, **template)`` over LocalTensor files.

    ``templates`` and ``outputs`` as in ``Register``; ``units``: argument -> its unit as the
    page says (help text, overriding ``ARGUMENTS``); ``forms``: for a ``*args`` signature, the
    argument names of each call form (the given options pick the form). ``src_column`` is the
    registry type column of src; ``dst_column``, where dst has a type of its own
    (``LocalTensor<T> dst, LocalTensor<U> src``), that of dst (``--dst-dtype``). ``form`` and
    ``function`` as in ``Register``: one call form of a name of several (asc_pair_reduce_sum's
    UB form, ``pair_reduce_sum_ub``; its type rows and assumptions only)."""

    templates: dict = dataclasses.field(default_factory=dict)
    outputs: tuple[str | None, ...] = ()
    units: dict = dataclasses.field(default_factory=dict)
    forms: tuple[tuple[str, ...], ...] = ()
    src_column: int = 0
    dst_column: int | None = None
    form: str | None = None
    function: Callable | None = None

    def runner(self, name: str) -> Runner:
        function = self.function or INSTRUCTIONS[name].function
        templates = _with_state(self.templates, function)
        params = list(inspect.signature(function).parameters.values())[2:]
        positional = [p for p in params if p.name not in templates and p.kind in (
            inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)]
        if any(p.kind is inspect.Parameter.VAR_POSITIONAL for p in params) != bool(self.forms):
            raise TypeError(f"runner {name}: give forms= exactly when the signature has *args")
        static = []
        for p in positional:
            if p.name in WORK_SPACE:  # its size only: a zero LocalTensor of T, or None
                static.append(Option(f"{p.name}_len", f"{WORK_SPACE[p.name]}: elements of a "
                                     f"zero LocalTensor of T (default: none is passed; the "
                                     f"emulator checks only the size, where the page sets one)",
                                     integer))
            else:
                default = None if p.default is inspect.Parameter.empty else p.default
                static.append(argument_option(p.name, self.units, default))
        form_args = list(dict.fromkeys(a for form in self.forms for a in form))
        for a in form_args:
            shown = " ".join("--" + b.replace("_", "-") for f in self.forms if a in f for b in f)
            static.append(argument_option(a, self.units, form=shown))
        ins = INSTRUCTIONS[name]
        types = (Option("dtype", ins.columns[self.src_column] + " (the src type)", ascend_type,
                        required=True,
                        choices=type_choices(name, self.src_column, form=self.form)),)
        if self.dst_column is not None:
            types += (Option("dst_dtype", f"{ins.columns[self.dst_column]} (the dst type; "
                             f"default: the one the registry's rows give the src type)",
                             ascend_type, choices=type_choices(name, self.dst_column)),)
        options = (Option("src", "src LocalTensor(s) (.bin)", required=True), *types,
                   *tensor_options("the src (and dst) file holds this many LocalTensors"),
                   *static, *_templates(templates, function), OUT,
                   *_extra_options(self.outputs))

        def plan(opts: dict) -> Plan:
            fmt = resolve(opts["dtype"], where=name)
            dst_fmt = fmt if self.dst_column is None else resolve(self._dst_type(
                name, fmt.name, opts.get("dst_dtype")), where=name, arg="dst_dtype")
            dst, src = load_tensors(opts, fmt, dst_fmt)
            args = [_work_space(name, p.name, opts, fmt) if p.name in WORK_SPACE
                    else _value(name, p.name, opts) for p in positional]
            args += [_value(name, a, opts) for a in self._form(name, opts)]
            keywords = _keywords(opts, templates, function,
                                 config=config_from_options(opts))

            def fn(d, s):
                return _leaves(function(d, s, *args, **keywords))

            p = Plan(fn, [dst, src], [], [], unit="tensors",
                     row_registers=tensor_registers(src, fmt, dst, dst_fmt))
            return dataclasses.replace(p, outputs=_outputs(name, p, self.outputs, opts, dst_fmt))

        # The arguments one of which picks a call form (the rest have defaults).
        picks = tuple(a for a in form_args if ARGUMENTS.get(a, Argument("")).default is None)
        return Runner(name, options, plan,
                      config_options(name, options, adds=True, form=self.form),
                      inputs=("src", "dst"), picks=picks)

    def _dst_type(self, name: str, src: str, given: str | None) -> str:
        """The dst type: as given, or the only one the registry's rows give ``src``."""
        if given is not None:
            return given
        rows = INSTRUCTIONS[name].types
        found = list(dict.fromkeys(r[self.dst_column] for r in rows if r[self.src_column] == src))
        if len(found) != 1:
            raise TypeError(f"{name}: give --dst-dtype, one of "
                            f"{found or type_choices(name, self.dst_column)}, for src {src}")
        return found[0]

    def _form(self, name: str, opts: dict) -> tuple[str, ...]:
        """The call form the given options name: every option given is one of its arguments,
        and every argument without a default is given."""
        if not self.forms:
            return ()
        given = {a for f in self.forms for a in f if opts.get(a) is not None}
        fits = [f for f in self.forms if given <= set(f) and all(
            a in given or ARGUMENTS.get(a, Argument("")).default is not None for a in f)]
        if len(fits) != 1:
            forms = " or ".join(" ".join("--" + a.replace("_", "-") for a in f)
                                for f in self.forms)
            raise TypeError(f"{name}: give the options of one call form: {forms} (given: "
                            f"{sorted('--' + a.replace('_', '-') for a in given) or 'none'})")
        for a in fits[0]:
            if opts.get(a) is None:
                opts[a] = ARGUMENTS[a].default
        return fits[0]


def _work_space(name: str, arg: str, opts: dict, fmt: Format) -> Any:
    """The work space argument: None, or a zero LocalTensor of T of ``--ARG-len`` elements."""
    length = opts.get(f"{arg}_len")
    if length is None:
        return None
    return np.zeros(check_int(length, 0, 1 << 30, where=name, arg=f"{arg}_len"),
                    fmt.storage_dtype)


def _value(name: str, arg: str, opts: dict) -> Any:
    return parse_mask(opts[arg], name) if arg == "mask" else opts[arg]


# --- one name, call forms of different kinds ----------------------------------------------------

def _flag(option: Option) -> str:
    return "--" + option.name.replace("_", "-")


def given(value: Any) -> bool:
    """Whether an option's value was given: a flag's False is not; 0 is."""
    return value is not None and value is not False


def _shared(name: str, versions: dict[str, Option]) -> Option:
    """An option every form has (form label -> its version): one help (each form's, where they
    differ), the union of the choices, required where every form requires it; a default the
    forms do not share is the chosen form's."""
    first, *rest = versions.values()
    if any(o.type is not first.type or o.flag != first.flag for o in rest):
        raise TypeError(f"runner {name}: the forms' --{first.name} options differ in kind")
    helps = dict.fromkeys(o.help for o in versions.values())
    text = first.help if len(helps) == 1 else "; ".join(
        f"{label} form: {o.help}" for label, o in versions.items())
    choices = None if any(o.choices is None for o in versions.values()) else tuple(
        dict.fromkeys(c for o in versions.values() for c in o.choices))
    same = all(o.default == first.default for o in rest)
    return dataclasses.replace(first, help=text, choices=choices,
                               default=first.default if same else None,
                               required=all(o.required for o in versions.values()))


def call_forms(name: str, forms: dict[str, Runner]) -> Runner:
    """``ascjax run NAME`` for a name of several call forms whose runners differ in kind (label:
    the registry's form column, e.g. "UB (A2, A3)" -> that form's runner).

    Options every form has are listed once (``_shared``); the others in a ``--help`` section of
    their form, optional and without a default here: the form-only options given pick the form,
    as ``Tensor.forms`` does. Exactly one form must fit (every option given is its own, every
    option it requires is given, one of its ``picks`` where it has them): else a TypeError
    names each form's options. The chosen form's defaults fill the rest and its own type
    choices are checked. The ``Config`` options are those any form reads, each read by one
    form only saying which."""
    versions: dict[str, dict[str, Option]] = {}
    for label, runner in forms.items():
        for o in runner.options:
            versions.setdefault(o.name, {})[label] = o
    shared = {n: _shared(name, v) for n, v in versions.items() if len(v) == len(forms)}
    own = {label: tuple(o for o in r.options if o.name not in shared)
           for label, r in forms.items()}
    options = (*shared.values(), *(
        dataclasses.replace(o, default=False if o.flag else None, required=False,
                            group=f"call form {label}",
                            help=o.help if o.flag or o.default is None or "default" in o.help
                            else f"{o.help} (default {o.default})")
        for label, opts in own.items() for o in opts))

    readers = {}
    for label, runner in forms.items():
        for o in runner.config_options:
            readers.setdefault(o.name, []).append(label)
    # --product: any form's products; by default the chosen form's (checked against its own)
    products = {label: next(o for o in r.config_options if o.name == "product")
                for label, r in forms.items()}
    offered = tuple(p for p in PRODUCTS if any(p in o.choices for o in products.values()))
    defaults = "; ".join(f"{label}: {o.default}" for label, o in products.items())
    product = dataclasses.replace(product_option(offered, "the call form's"), default=None)
    product = dataclasses.replace(product, help=f"{product.help} ({defaults})")
    config = tuple(product if o.name == "product" else o if len(readers[o.name]) == len(forms)
                   else dataclasses.replace(
                       o, help=f"{o.help}; read by the {' and '.join(readers[o.name])} form")
                   for o in CONFIG_OPTIONS if o.name in readers)

    def describe(label: str) -> str:
        picks = forms[label].picks
        return f"{label}: " + " ".join(_flag(o) if o.required else f"[{_flag(o)}]"
                                       for o in own[label]) + (
            f" (with {' or '.join('--' + p.replace('_', '-') for p in picks)})"
            if picks else "")

    def plan(opts: dict) -> Plan:
        named = {o.name for opts_ in own.values() for o in opts_ if given(opts.get(o.name))}
        fits = [label for label, opts_ in own.items()
                if named <= {o.name for o in opts_}
                and all(o.name in named for o in opts_ if o.required)
                and (not forms[label].picks or named & set(forms[label].picks))]
        if len(fits) != 1:
            shown = sorted("--" + n.replace("_", "-") for n in named) or "none"
            raise TypeError(f"{name}: give the options of one call form: "
                            f"{' or '.join(map(describe, forms))} (given: {shown})")
        runner = forms[fits[0]]
        opts = dict(opts)
        for o in (*runner.options, products[fits[0]]):
            if opts.get(o.name) is None:
                opts[o.name] = o.default
            if o.required and opts[o.name] is None:  # a shared option only this form needs
                raise TypeError(f"{name}: the {fits[0]} form needs {_flag(o)}")
            if o.choices is not None and opts[o.name] not in (None, *o.choices):
                raise ValueError(f"{name}: {o.name}={opts[o.name]!r} is not one of "
                                 f"{list(o.choices)} (the {fits[0]} form)")
        return runner.plan(opts)

    inputs = tuple(dict.fromkeys(i for r in forms.values() for i in r.inputs))
    return Runner(name, options, plan, config, inputs=inputs)
