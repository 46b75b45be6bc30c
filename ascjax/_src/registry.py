"""The one registry of emulated instructions, the name lookup and the conformance table derived
from it."""

from __future__ import annotations

import dataclasses
import difflib
import functools
import inspect
import re
from collections.abc import Callable

from .config import resolve_config
from .isa import gather as _gather
from .isa import gather_block as _gblock
from .isa import gather_mask as _gmask
from .isa import gather_tensor as _gtensor
from .isa import memory as _memory
from .isa import reduce_register as _register
from .isa import reduce_register_minmax as _rminmax
from .isa import reduce_tensor as _tensor
from .isa import reduce_tensor_index as _index
from .isa import reduce_tensor_minmax as _tminmax
from .isa import scatter as _scatter
from .isa import squeeze as _squeeze
from .isa import vector_mask as _vmask
from .isa.masks import create_mask, update_mask

# The products of a call form whose name does not list them (asc_gather's UB -> UB form: the
# C API's memory pages are the A2/A3 ones).
FORM_PRODUCTS = {"UB -> UB": ("A2", "A3")}


@dataclasses.dataclass(frozen=True)
class Instruction:
    """One emulated Ascend C call.

    ``types`` are the supported type rows (named by ``columns``); ``assumed`` maps a row's key
    (its first column, the type the conformance table files it under), or a whole row where
    rows of one type differ (a register and a UB form), to the keys of the ``ASSUMPTIONS`` its
    results rest on (``assumptions(row)``). ``aliases`` are other names the pages give the same
    call with the same arguments (an older class-library name, the C API spelling of a
    class-library call); ``variants`` maps a vendor name to the template keywords it fixes
    (``"WholeReduceMax": {"reduce_type": "max"}``): ``instruction(name)`` returns the function
    with those keywords bound. ``sync`` maps each of those names that is a C API synchronous
    call (``asc_gather_sync``) to its one prototype's parameters: the pages give it for one
    form alone (UB, first-n), so the name refuses the function's other forms.
    """

    name: str
    ascend: str
    function: Callable
    spec: str
    seed: str | None
    columns: tuple[str, ...]
    types: tuple[tuple[str, ...], ...]
    assumed: dict = dataclasses.field(default_factory=dict)
    aliases: tuple[str, ...] = ()
    variants: dict = dataclasses.field(default_factory=dict)
    sync: dict = dataclasses.field(default_factory=dict)

    def __post_init__(self):
        object.__setattr__(self, "function", with_keyword_check(self.function))

    def assumptions(self, row: tuple) -> tuple[str, ...]:
        """The assumption keys a type row rests on: its own entry, else its key's."""
        return self.assumed.get(tuple(row)) or self.assumed.get(row[0]) or ()

    def products(self, row: tuple) -> tuple[str, ...]:
        """The products a type row runs on: its products column, else its form's (a form
        names them, "UB (A2, A3)", or is in ``FORM_PRODUCTS``), else the 950 (every c-reg and
        cpp-reg page lists it alone)."""
        if "products" in self.columns:
            return tuple(row[self.columns.index("products")].split(", "))
        form = row[self.columns.index("form")] if "form" in self.columns else ""
        if form in FORM_PRODUCTS:
            return FORM_PRODUCTS[form]
        return tuple(form[form.index("(") + 1:-1].split(", ")) if "(" in form else ("950",)

    @property
    def vendor_names(self) -> tuple[str, ...]:
        """The names the pages write: ``ascend`` and the aliases, a width family spelled out
        (``asc_create_mask_b8/b16/b32`` is three names), class-library names also with their
        ``AscendC::`` namespace. Variant names are not among them (``instruction`` finds
        them too)."""
        names = []
        for name in (self.ascend, *self.aliases):
            stem, widths = width_family(name)
            names += [f"{stem}_b{w}" for w in widths] if widths else [name]
        return tuple(names + [f"AscendC::{n}" for n in names if not n.startswith("asc_")])


def with_keyword_check(function: Callable) -> Callable:
    """``function``, refusing a keyword it does not take with the name it does: a porter writes
    the page's camelCase (``reduceMode=``, ``repeatTime=``), which here is ``reduce_mode=``,
    ``repeat_time=``. A function that takes ``**kwargs`` checks its own."""
    if getattr(function, "_keywords_checked", False):
        return function
    params = inspect.signature(function).parameters
    if any(p.kind is p.VAR_KEYWORD for p in params.values()):
        return function
    names = [n for n, p in params.items() if p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD)]

    @functools.wraps(function)
    def checked(*args, **kwargs):
        for key in kwargs:
            if key not in params:
                raise TypeError(_unknown_keyword(function.__name__, key, names))
        if "config" in kwargs:  # checked here, where the instruction's name is known
            resolve_config(kwargs["config"], function.__name__)
        return function(*args, **kwargs)

    checked._keywords_checked = True
    return checked


def _unknown_keyword(where: str, key: str, names: list[str]) -> str:
    snake = re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", key).lower()
    if snake in names and snake != key:
        hint = f"; the page's {key} is {snake}= here"
    else:  # reduceOrder: ReduceRepeat's order=
        near = ([n for n in names if snake.endswith("_" + n)]
                or difflib.get_close_matches(snake, names, n=1, cutoff=0.6))
        hint = f"; did you mean {near[0]}=?" if near else ""
    return f"{where}: no keyword {key!r}{hint} (its keywords: {', '.join(names)})"


def width_family(name: str) -> tuple[str, tuple[str, ...]]:
    """``("asc_create_mask", ("8", "16", "32"))`` for a width family written
    ``asc_create_mask_b8/b16/b32`` (one name per element width), ``(name, ())`` otherwise."""
    match = re.fullmatch(r"(.*?)_b(\d+)((?:/b\d+)+)", name)
    if not match:
        return name, ()
    return match[1], (match[2], *match[3].split("/b")[1:])


def python_name(vendor: str, class_library: frozenset = frozenset()) -> str:
    """The Python name the one naming rule gives a vendor name.

    A C API name (``asc_...``) drops its ``asc_``; a class-library name is written in
    snake_case (``ReduceRepeat`` -> ``reduce_repeat``, ``GetReduceRepeatSumSpr`` ->
    ``get_reduce_repeat_sum_spr``), and one of the register class library
    (``AscendC::Reg::``, written ``Reg::ReduceDataBlock`` in the registry) keeps ``reg_`` in
    front (``reg_reduce_data_block``: on registers, beside the LocalTensor
    ``ReduceDataBlock``). Where a C API name would take the Python name of a class-library call
    (``asc_reduce_sum`` and ``ReduceSum``; ``asc_reduce`` and ``Reduce``, the older name of
    ``Reg::Reduce``; ``class_library`` holds the Python names of the class-library calls and
    of their aliases, ``class_library_names()``), the C API function keeps its ``asc_``
    prefix.
    Overloads of one vendor name (a register and a UB form, a first-n and a mask form) are one
    Python function that tells them apart by its arguments, as C++ does.
    """
    if vendor.startswith("asc_"):
        bare = vendor[len("asc_"):]
        return vendor if bare in class_library else bare
    if vendor.startswith("Reg::"):
        return "reg_" + python_name(vendor[len("Reg::"):])
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", "_", vendor).lower()


def class_library_names(instructions) -> frozenset:
    """The collision set of ``python_name``: the Python names the naming rule gives every
    class-library vendor name of ``instructions`` (``ascend`` and aliases, not ``asc_``)."""
    return frozenset(python_name(n) for i in instructions for n in (i.ascend, *i.aliases)
                     if not n.startswith("asc_"))


def _gather_mask_rows(table: dict) -> tuple:
    """(T, products, pattern U) rows of GatherMask, every T some product takes."""
    names = dict.fromkeys(t for ts in table.values() for t in ts)
    bits = {"int8_t": 8, "uint8_t": 8, "int32_t": 32, "uint32_t": 32, "float": 32}
    return tuple((t, ", ".join(p for p, ts in table.items() if t in ts),
                  _gmask.PATTERN_TYPES[bits.get(t, 16)]) for t in names)


_FLOAT_SUM = ("A3", "A7", "A8")
# The C API reductions' synchronous calls: (dst, src, count) on UB, the first-n form alone.
_SYNC_FIRST_N = ("dst", "src", "count")
_MAX_MIN = ("A21", "A22")


_EXTREME = ("A19", "A20")   # whole-register max / min: the NaN written, the index on ties


def _register_rows(sums: dict, extremes: dict) -> tuple:
    """(src, dst, reduce_type) rows of a Reg class-library call from its two type tables."""
    return (tuple((s, d, "sum") for s, d in sums.items())
            + tuple((s, d, k) for s, d in extremes.items() for k in ("max", "min")))


def _by_type(table: dict) -> tuple:
    """(T, products) rows from a product -> types table: every type some product takes, in
    the table's order."""
    types = dict.fromkeys(t for ts in table.values() for t in ts)
    return tuple((t, ", ".join(p for p, ts in table.items() if t in ts)) for t in types)


def _repeat_rows(table: dict, sum_dst: dict) -> tuple:
    """(T, products, SUM dst) rows of ReduceRepeat: every src type some product takes, the
    products taking it, and the dst type its SUM writes (MAX / MIN write T)."""
    names = ("half", "float", *(t for t in sum_dst if t not in ("half", "float")))
    return tuple((t, ", ".join(p for p, ts in table.items() if t in ts), sum_dst[t])
                 for t in names)


def _extreme_rows(table: dict) -> tuple:
    """(T, products) rows of ReduceMax / ReduceMin, every type some product takes."""
    names = sorted(dict.fromkeys(t for ts in table.values() for t in ts),
                   key=lambda t: (t not in ("half", "float"), t))
    return tuple((t, ", ".join(p for p, ts in table.items() if t in ts)) for t in names)


def _product_rows(table: dict) -> tuple:
    """(T, products) rows in table order: every type some product takes."""
    names = dict.fromkeys(t for ts in table.values() for t in ts)
    return tuple((t, ", ".join(p for p, ts in table.items() if t in ts)) for t in names)


def _datablock_rows() -> tuple:
    """(T, form) rows of asc_gather_datablock: the register form's types, then the UB form's."""
    ub = dict.fromkeys(t for ts in _gblock.UB_TYPES.values() for t in ts)
    return (tuple((t, "register (950)") for t in _gblock.REGISTER_TYPES)
            + tuple((t, "UB (A2, A3)") for t in ub))


def _c_api_types() -> tuple:
    """The types some product takes in the C API's UB reductions."""
    return tuple(dict.fromkeys(t for ts in _tminmax.C_API_TYPES.values() for t in ts))


def _extreme_assumed(table: dict) -> dict:
    # A19 / A21 (NaN) and A22 (signed zeros) only matter for floats.
    return {t: ("A19",) + _MAX_MIN + ("A25", "A26", "A27", "A46", "A47")
            if t in ("half", "float") else ("A25", "A26", "A27", "A46", "A47")
            for t, _ in _extreme_rows(table)}


def _asc_gather_rows() -> tuple:
    """(form, dst, src, index) rows of every asc_gather form: from the UB into a register (the
    seed's table 1), register to register, UB to UB (byte offsets, uint32)."""
    return (tuple(("UB -> register", *row) for row in _gather.GATHER_TYPES)
            + tuple(("register", t, t, i) for t, i in _gather.REGISTER_GATHER_TYPES.items())
            + tuple(("UB -> UB", t, t, "uint32_t") for t in _gtensor.UB_GATHER_TYPES["A2"]))


INSTRUCTIONS: dict[str, Instruction] = {
    i.name: i
    for i in (
        Instruction("reduce_sum_datablock", "asc_reduce_sum_datablock",
                    _register.reduce_sum_datablock, "4", "asc_reduce_sum_datablock.md",
                    ("src", "dst"), tuple(_register.REDUCE_SUM_DATABLOCK_TYPES.items()),
                    {"half": _FLOAT_SUM, "float": _FLOAT_SUM}),
        Instruction("asc_reduce_sum", "asc_reduce_sum", _register.asc_reduce_sum, "-",
                    "asc_reduce_sum.md", ("src", "dst"),
                    tuple(_register.REDUCE_SUM_TYPES.items()),
                    {"half": _FLOAT_SUM, "float": _FLOAT_SUM}),
        Instruction("asc_reduce_max", "asc_reduce_max", _rminmax.asc_reduce_max, "-",
                    "asc_reduce_max.md", ("src", "dst"),
                    tuple(_rminmax.REDUCE_EXTREME_TYPES.items()),
                    {t: (_EXTREME if t in ("half", "float") else ("A20",)) + ("A49",)
                     for t in _rminmax.REDUCE_EXTREME_TYPES}),
        Instruction("asc_reduce_min", "asc_reduce_min", _rminmax.asc_reduce_min, "-",
                    "asc_reduce_min.md", ("src", "dst"),
                    tuple(_rminmax.REDUCE_EXTREME_TYPES.items()),
                    {t: (_EXTREME if t in ("half", "float") else ("A20",)) + ("A49",)
                     for t in _rminmax.REDUCE_EXTREME_TYPES}),
        Instruction("reduce_max_datablock", "asc_reduce_max_datablock",
                    _rminmax.reduce_max_datablock, "-", "asc_reduce_max_datablock.md",
                    ("src", "dst"), tuple(_rminmax.REDUCE_EXTREME_TYPES.items()),
                    {"half": ("A19",), "float": ("A19",)}),
        Instruction("reduce_min_datablock", "asc_reduce_min_datablock",
                    _rminmax.reduce_min_datablock, "-", "asc_reduce_min_datablock.md",
                    ("src", "dst"), tuple(_rminmax.REDUCE_EXTREME_TYPES.items()),
                    {"half": ("A19",), "float": ("A19",)}),
        # The register form (950) and the UB form (Atlas A2 / A3, PairReduceSum's plan: its
        # masked pairs, A5, and strides, A9).
        Instruction("asc_pair_reduce_sum", "asc_pair_reduce_sum", _tminmax.asc_pair_reduce_sum,
                    "-", "asc_pair_reduce_sum.md", ("T", "form"),
                    tuple((t, "register (950)") for t in _register.PAIR_REDUCE_SUM_TYPES)
                    + tuple((t, "UB (A2, A3)") for t in _c_api_types()),
                    {**{(t, "register (950)"): _FLOAT_SUM
                        for t in _register.PAIR_REDUCE_SUM_TYPES},
                     **{(t, "UB (A2, A3)"): _FLOAT_SUM + ("A5", "A9", "A28")
                        for t in _c_api_types()}},
                    aliases=("asc_pair_reduce_sum_sync",),
                    sync={"asc_pair_reduce_sum_sync": _SYNC_FIRST_N}),
        Instruction("reg_reduce", "Reg::Reduce", _rminmax.reg_reduce, "-", "Reduce.md",
                    ("src", "dst", "reduce_type"),
                    _register_rows(_register.REDUCE_SUM_TYPES, _rminmax.REDUCE_EXTREME_TYPES),
                    {"half": _FLOAT_SUM + _EXTREME, "float": _FLOAT_SUM + _EXTREME,
                     **{t: ("A20",) for t in ("int16_t", "uint16_t", "int32_t", "uint32_t")}},
                    aliases=("Reduce",)),
        Instruction("reg_reduce_data_block", "Reg::ReduceDataBlock", _rminmax.reg_reduce_data_block,
                    "-", "ReduceDataBlock.md", ("src", "dst", "reduce_type"),
                    _register_rows(_register.REDUCE_SUM_TYPES, _rminmax.REDUCE_EXTREME_TYPES),
                    {"half": _FLOAT_SUM + ("A19",), "float": _FLOAT_SUM + ("A19",),
                     ("int16_t", "int32_t", "sum"): ("A50",),
                     ("uint16_t", "uint32_t", "sum"): ("A50",)}),
        Instruction("reg_pair_reduce_elem", "Reg::PairReduceElem", _rminmax.reg_pair_reduce_elem,
                    "-", "PairReduceElem.md", ("T",),
                    tuple((t,) for t in _register.PAIR_REDUCE_SUM_TYPES),
                    {"half": _FLOAT_SUM, "float": _FLOAT_SUM}, aliases=("PairReduceElem",)),
        Instruction("pair_reduce_sum", "PairReduceSum", _tensor.pair_reduce_sum, "5",
                    "PairReduceSum.md", ("T", "products"), _by_type(_tensor.PAIR_REDUCE_SUM_TYPES),
                    {"half": _FLOAT_SUM + ("A5", "A9", "A26", "A28"),
                     "float": _FLOAT_SUM + ("A5", "A9", "A26", "A28")}),
        Instruction("block_reduce_sum", "BlockReduceSum", _tensor.block_reduce_sum, "10", None,
                    ("T", "products"), _by_type(_tensor.BLOCK_REDUCE_SUM_TYPES),
                    {"half": _FLOAT_SUM + ("A9", "A11", "A26", "A28"),
                     "float": _FLOAT_SUM + ("A9", "A11", "A26", "A28")}),
        Instruction("whole_reduce_sum", "WholeReduceSum", _tensor.whole_reduce_sum, "10", None,
                    ("T", "products"), _by_type(_tensor.WHOLE_REDUCE_SUM_TYPES),
                    {"half": _FLOAT_SUM + ("A9", "A26", "A28"),
                     "float": _FLOAT_SUM + ("A9", "A26", "A28")}),
        Instruction("repeat_reduce_sum", "RepeatReduceSum", _tensor.repeat_reduce_sum, "10", None,
                    ("T", "products"), _by_type(_tensor.REPEAT_REDUCE_SUM_TYPES),
                    {"half": _FLOAT_SUM + ("A9", "A26", "A28"),
                     "float": _FLOAT_SUM + ("A9", "A26", "A28")}),
        Instruction("reduce_sum", "ReduceSum", _tensor.reduce_sum, "10", None,
                    ("T", "products"), _by_type(_tensor.REDUCE_SUM_TYPES),
                    {"half": _FLOAT_SUM + ("A9", "A12", "A17", "A18", "A26", "A47"),
                     "float": _FLOAT_SUM + ("A9", "A12", "A17", "A18", "A26", "A47"),
                     # integer adds wrap (or saturate, where the order shows): the same orders
                     **dict.fromkeys(("int32_t", "uint32_t"), ("A9", "A12", "A17", "A18",
                                                               "A26", "A47"))}),
        Instruction("reduce_data_block", "ReduceDataBlock", _tminmax.reduce_data_block, "10",
                    None, ("T", "products"), _by_type(_tminmax.REDUCE_DATA_BLOCK_TYPES),
                    {t: _FLOAT_SUM + _MAX_MIN + ("A9", "A11", "A26", "A28")
                     for t in ("half", "float")}),
        Instruction("block_reduce_max", "BlockReduceMax", _tminmax.block_reduce_max, "10", None,
                    ("T", "products"), _by_type(_tminmax.REDUCE_DATA_BLOCK_TYPES),
                    {t: _MAX_MIN + ("A9", "A11", "A26", "A28") for t in ("half", "float")}),
        Instruction("block_reduce_min", "BlockReduceMin", _tminmax.block_reduce_min, "10", None,
                    ("T", "products"), _by_type(_tminmax.REDUCE_DATA_BLOCK_TYPES),
                    {t: _MAX_MIN + ("A9", "A11", "A26", "A28") for t in ("half", "float")}),
        Instruction("reduce_repeat", "ReduceRepeat", _tminmax.reduce_repeat, "10", None,
                    ("T", "products", "SUM dst"),
                    _repeat_rows(_tminmax.REDUCE_REPEAT_TYPES, _tminmax.REDUCE_REPEAT_SUM_DST),
                    {t: (_FLOAT_SUM + _MAX_MIN if t in ("half", "float") else ())
                     + ("A9", "A23", "A24", "A26", "A28") for t in _tminmax.REDUCE_REPEAT_SUM_DST},
                    variants={"WholeReduceMax": {"reduce_type": "max"},
                              "WholeReduceMin": {"reduce_type": "min"}}),
        Instruction("reduce_pair_elem", "ReducePairElem", _tminmax.reduce_pair_elem, "5", None,
                    ("T", "products"), _by_type(_tminmax.REDUCE_PAIR_ELEM_TYPES),
                    {t: _FLOAT_SUM + ("A9", "A26", "A28") for t in ("half", "float")}),
        Instruction("get_reduce_repeat_sum_spr", "GetReduceRepeatSumSpr",
                    _tminmax.get_reduce_repeat_sum_spr, "10", None, ("T", "products"),
                    _by_type({p: ("half", "float") for p in _tminmax.SUM_SPR_PRODUCTS}),
                    {t: _FLOAT_SUM + ("A23", "A47") for t in ("half", "float")}),
        Instruction("get_reduce_repeat_max_min_spr", "GetReduceRepeatMaxMinSpr",
                    _tminmax.get_reduce_repeat_max_min_spr, "10", None, ("T", "products"),
                    _by_type({p: ("half", "float") for p in _tminmax.MAX_MIN_SPR_PRODUCTS}),
                    {t: _MAX_MIN + ("A24", "A46", "A47") for t in ("half", "float")}),
        Instruction("get_reduce_max_cnt", "asc_get_reduce_max_cnt", _tminmax.get_reduce_max_cnt,
                    "10", None, ("T", "products"), _by_type(_tminmax.C_API_TYPES),
                    {t: _MAX_MIN + ("A24",) for t in ("half", "float")}),
        Instruction("get_reduce_min_cnt", "asc_get_reduce_min_cnt", _tminmax.get_reduce_min_cnt,
                    "10", None, ("T", "products"), _by_type(_tminmax.C_API_TYPES),
                    {t: _MAX_MIN + ("A24",) for t in ("half", "float")}),
        *(Instruction(f"datablock_reduce_{k}", f"asc_datablock_reduce_{k}",
                      getattr(_tminmax, f"datablock_reduce_{k}"), "10", None, ("T", "products"),
                      _by_type(_tminmax.C_API_TYPES),
                      {t: (_FLOAT_SUM if k == "sum" else _MAX_MIN) + ("A9", "A28")
                       for t in ("half", "float")},
                      aliases=(f"asc_datablock_reduce_{k}_sync",),
                      sync={f"asc_datablock_reduce_{k}_sync": _SYNC_FIRST_N})
          for k in ("sum", "max", "min")),
        Instruction("asc_repeat_reduce_sum", "asc_repeat_reduce_sum",
                    _tminmax.asc_repeat_reduce_sum, "10", None, ("T", "products"),
                    _by_type(_tminmax.C_API_TYPES),
                    {t: _FLOAT_SUM + ("A9", "A28") for t in ("half", "float")},
                    aliases=("asc_repeat_reduce_sum_sync",),
                    sync={"asc_repeat_reduce_sum_sync": _SYNC_FIRST_N}),
        *(Instruction(f"repeat_reduce_{k}", f"asc_repeat_reduce_{k}",
                      getattr(_tminmax, f"repeat_reduce_{k}"), "10", None, ("T", "products"),
                      _by_type(_tminmax.C_API_TYPES),
                      {t: _MAX_MIN + ("A9", "A24", "A28") for t in ("half", "float")},
                      variants={f"asc_repeat_reduce_{k}_{o}{sync}": {"order": o}
                                for o in _tensor.ORDERS for sync in ("", "_sync")},
                      sync={f"asc_repeat_reduce_{k}_{o}_sync": _SYNC_FIRST_N
                            for o in _tensor.ORDERS})
          for k in ("max", "min")),
        Instruction("reduce_max", "ReduceMax", _index.reduce_max, "10", "ReduceMax.md",
                    ("T", "products"), _extreme_rows(_index.REDUCE_MAX_TYPES),
                    _extreme_assumed(_index.REDUCE_MAX_TYPES)),
        Instruction("reduce_min", "ReduceMin", _index.reduce_min, "10", "ReduceMin.md",
                    ("T", "products"), _extreme_rows(_index.REDUCE_MIN_TYPES),
                    _extreme_assumed(_index.REDUCE_MIN_TYPES)),
        Instruction("set_mask_count", "SetMaskCount", _vmask.set_mask_count, "masks",
                    "SetMaskCount.md", ("state", "products"),
                    (("mode bit", ", ".join(_vmask.MODE_PRODUCTS)),)),
        Instruction("set_mask_norm", "SetMaskNorm", _vmask.set_mask_norm, "masks",
                    "SetMaskNorm.md", ("state", "products"),
                    (("mode bit", ", ".join(_vmask.MODE_PRODUCTS)),)),
        Instruction("set_vector_mask", "SetVectorMask", _vmask.set_vector_mask, "masks",
                    "SetVectorMask.md", ("T", "products"),
                    tuple((t, ", ".join(_vmask.VECTOR_MASK_PRODUCTS))
                          for t in ("16-bit", "32-bit")),
                    {"16-bit": ("A29",), "32-bit": ("A29",)}),
        Instruction("reset_mask", "ResetMask", _vmask.reset_mask, "masks", "ResetMask.md",
                    ("state", "products"), (("mask words", ", ".join(_vmask.MODE_PRODUCTS)),)),
        Instruction("asc_set_mask_count", "asc_set_mask_count", _vmask.asc_set_mask_count,
                    "masks", "asc_set_mask_count.md", ("state", "products"),
                    (("mode bit", ", ".join(_vmask.C_API_PRODUCTS)),)),
        Instruction("asc_set_mask_norm", "asc_set_mask_norm", _vmask.asc_set_mask_norm,
                    "masks", "asc_set_mask_norm.md", ("state", "products"),
                    (("mode bit", ", ".join(_vmask.C_API_PRODUCTS)),)),
        Instruction("asc_set_vector_mask", "asc_set_vector_mask", _vmask.asc_set_vector_mask,
                    "masks", "asc_set_vector_mask.md", ("state", "products"),
                    (("mask words", ", ".join(_vmask.C_API_PRODUCTS)),),
                    {"mask words": ("A29",)}),
        Instruction("asc_gather", "asc_gather", _gather.asc_gather, "6", "asc_gather.md",
                    ("form", "dst", "src", "index"), _asc_gather_rows(),
                    {"UB -> UB": ("A30", "A31", "A33")},
                    aliases=("asc_gather_sync",),
                    sync={"asc_gather_sync": ("dst", "src", "src_offset", "count")}),
        Instruction("gather", "Gather", _gtensor.gather, "-", "Gather.md", ("T", "products"),
                    _extreme_rows(_gtensor.GATHER_TYPES),
                    {t: ("A30", "A31", "A33") + (("A32",) if t in ("int8_t", "uint8_t") else ())
                     for t, _ in _extreme_rows(_gtensor.GATHER_TYPES)}),
        Instruction("reg_gather", "Reg::Gather", _gather.reg_gather, "6", "离散搬入（Gather）.md",
                    ("dst", "src", "index"), _gather.REG_GATHER_TYPES),
        Instruction("gatherb", "Gatherb", _gblock.gatherb, "-", "Gatherb(ISASI).md",
                    ("T", "products"), _product_rows(_gblock.GATHERB_TYPES),
                    {t: ("A36",) for ts in _gblock.GATHERB_TYPES.values() for t in ts}),
        Instruction("gather_datablock", "asc_gather_datablock", _gblock.gather_datablock, "-",
                    "asc_gather_datablock.md", ("T", "form"), _datablock_rows(),
                    {**{(t, "register (950)"): ("A34",) for t in _gblock.REGISTER_TYPES},
                     **{(t, "UB (A2, A3)"): ("A38",)
                        for ts in _gblock.UB_TYPES.values() for t in ts}},
                    aliases=("asc_gather_datablock_sync",),
                    sync={"asc_gather_datablock_sync": ("dst", "src", "src_offset",
                                                        "dst_repeat_stride", "dst_block_stride",
                                                        "repeat")}),
        Instruction("reg_gather_b", "Reg::GatherB", _gblock.reg_gather_b, "-", "GatherB.md",
                    ("T",), tuple((t,) for t in _gblock.REGISTER_TYPES),
                    {t: ("A34",) for t in _gblock.REGISTER_TYPES}, aliases=("GatherB",)),
        Instruction("scatter", "Scatter", _scatter.scatter, "-", "Scatter(ISASI).md",
                    ("T", "products"), _product_rows(_scatter.SCATTER_TYPES),
                    {t: ("A35", "A36", "A37") for ts in _scatter.SCATTER_TYPES.values()
                     for t in ts}),
        Instruction("gather_mask", "GatherMask", _gmask.gather_mask, "-", "GatherMask.md",
                    ("T", "products", "pattern"), _gather_mask_rows(_gmask.GATHER_MASK_TYPES),
                    {t: ("A39", "A40", "A41")
                     for t, *_ in _gather_mask_rows(_gmask.GATHER_MASK_TYPES)}),
        Instruction("asc_reduce", "asc_reduce", _gmask.asc_reduce, "-", "asc_reduce.md",
                    ("T", "products", "pattern"), _gather_mask_rows(_gmask.ASC_REDUCE_TYPES),
                    {t: ("A39", "A40", "A41", "A51") for t in ("uint16_t", "uint32_t")},
                    aliases=("asc_reduce_sync",),
                    sync={"asc_reduce_sync": ("dst", "src0", "src1", "count")}),
        Instruction("squeeze_and_storeunalign", "asc_squeeze_and_storeunalign",
                    _squeeze.squeeze_and_storeunalign, "7", "asc_squeeze_and_storeunalign.md",
                    ("dtype",), tuple((t,) for t in _squeeze.SQUEEZE_TYPES),
                    {"hifloat8_t": ("A10",)}),
        Instruction("squeeze", "asc_squeeze", _squeeze.squeeze, "7", None, ("T", "form"),
                    tuple((t, "register (950)") for t in _squeeze.REGISTER_SQUEEZE_TYPES)
                    + tuple((t, "UB (A2, A3)") for t in _squeeze.UB_SQUEEZE_TYPES),
                    {(t, "UB (A2, A3)"): ("A43", "A44", "A45") for t in _squeeze.UB_SQUEEZE_TYPES}),
        Instruction("squeeze_with_status", "asc_squeeze_with_status",
                    _squeeze.squeeze_with_status, "7", None, ("T",),
                    tuple((t,) for t in _squeeze.REGISTER_SQUEEZE_TYPES),
                    {t: ("A42",) for t in _squeeze.REGISTER_SQUEEZE_TYPES},
                    aliases=("asc_squeeze_v2",)),
        Instruction("unsqueeze", "asc_unsqueeze", _squeeze.unsqueeze, "7", None, ("T",),
                    tuple((t,) for t in _squeeze.UNSQUEEZE_TYPES),
                    {t: ("A48",) for t in _squeeze.UNSQUEEZE_TYPES}),
        Instruction("get_mask_spr", "asc_get_mask_spr_b16/b32", _squeeze.get_mask_spr, "masks",
                    None, ("width",), (("b16/b32",),)),
        Instruction("create_mask", "asc_create_mask_b8/b16/b32", create_mask, "2", None,
                    ("width",), (("b8/b16/b32",),), {"b8/b16/b32": ("A1", "A2")}),
        Instruction("update_mask", "asc_update_mask_b8/b16/b32", update_mask, "2", None,
                    ("width",), (("b8/b16/b32",),), {"b8/b16/b32": ("A1",)}),
        Instruction("loadalign", "asc_loadalign", _memory.loadalign, "9", None, ("dtype",),
                    (("any",),)),
        Instruction("storealign", "asc_storealign", _memory.storealign, "9", None, ("dtype",),
                    (("any",),), {"any": ("A4",)}),
        Instruction("copy_gm2ub_align", "asc_copy_gm2ub_align", _memory.copy_gm2ub_align, "9",
                    None, ("dtype",), (("any",),)),
        Instruction("copy_ub2gm_align", "asc_copy_ub2gm_align", _memory.copy_ub2gm_align, "9",
                    None, ("dtype",), (("any",),)),
    )
}

# Calls the pages pair with an instruction that are not instructions of their own (no type
# rows, no results to check): the squeeze store's hidden-state set-up, flush and read-out, and
# the sync calls, no-ops in a sequential emulator. ``instruction`` finds them by vendor name and
# by Python name.
COMPANIONS: dict[str, Callable] = {
    "asc_squeeze_and_storeunalign_init": _squeeze.squeeze_and_storeunalign_init,
    "asc_squeeze_and_storeunalign_finalize": _squeeze.squeeze_and_storeunalign_finalize,
    "asc_get_squeeze_status": _squeeze.get_squeeze_status,
    "asc_sync": _memory.sync,
    "asc_sync_notify": _memory.sync_notify,
    "asc_sync_wait": _memory.sync_wait,
}


@functools.cache
def _by_name() -> dict[str, tuple[Instruction, dict]]:
    """Every name ``instruction`` finds -> (the instruction, the template keywords it fixes);
    a companion call -> (its function, None)."""
    index = {n: (f, None) for vendor, f in COMPANIONS.items()
             for n in (vendor, python_name(vendor))}
    for ins in INSTRUCTIONS.values():
        index |= {n: (ins, {}) for n in (ins.name, *ins.vendor_names)}
        for vendor in (ins.ascend, *ins.aliases):  # asc_create_mask_b16: dtype="b16" bound
            stem, widths = width_family(vendor)
            index |= {f"{stem}_b{w}": (ins, {"dtype": f"b{w}"}) for w in widths}
        for vendor, fixed in ins.variants.items():
            index |= {n: (ins, fixed) for n in (vendor, f"AscendC::{vendor}")
                      if not n.startswith("AscendC::asc_")}
    return index


@functools.cache
def _bound(name: str) -> Callable:
    ins, fixed = _by_name()[name]
    if fixed is None:  # a companion call
        return ins
    prototype = ins.sync.get(name)
    if not fixed and not prototype:
        return ins.function

    @functools.wraps(ins.function)
    def bound(*args, **kwargs):
        if prototype and len(args) != len(prototype):
            raise TypeError(
                f"{name}: the page gives one prototype, {name}({', '.join(prototype)}) on UB; "
                f"got {len(args)} positional arguments (the other forms are "
                f"ascjax.instruction({ins.ascend!r}))")
        for key, value in fixed.items():  # the name fixes it: another value is a mistake
            given = kwargs.get(key, value)
            if str(given).lower() != str(value).lower():
                raise TypeError(f"{name} fixes {key}={value!r}; got {key}={given!r} (call "
                                f"ascjax.{ins.name} to choose {key})")
        return ins.function(*args, **(kwargs | fixed))

    bound.func, bound.keywords = ins.function, dict(fixed)  # as functools.partial has them
    keywords = ", ".join(f"{k}={v!r}" for k, v in fixed.items())
    what = [f"with {keywords}"] if fixed else []
    what += [f"in the form {name}({', '.join(prototype)}) alone"] if prototype else []
    bound.__doc__ = (f"``{name}``: ``{ins.name}`` {' and '.join(what)}.\n\n"
                     f"{ins.function.__doc__}")
    return bound


def instruction(name: str) -> Callable:
    """The emulating function of an instruction, by any name the vendor pages write for it.

    Accepts the C API name (``"asc_gather"``, ``"asc_create_mask_b16"``), the class-library
    name with or without its namespace (``"PairReduceSum"``, ``"AscendC::ReduceSum"``), older
    names the pages still give, names that fix a template parameter or a width (the function
    comes back with that keyword bound: ``"WholeReduceMax"`` with ``reduce_type="max"``,
    ``"asc_create_mask_b16"`` with ``dtype="b16"``), the calls that go with an instruction
    (``COMPANIONS``: ``"asc_get_squeeze_status"``, ``"asc_sync"``) and the Python name
    (``"pair_reduce_sum"``; ``python_name`` states the rule). An unknown name raises
    ``KeyError`` listing the nearest names.

    >>> import ascjax
    >>> ascjax.instruction("AscendC::PairReduceSum") is ascjax.pair_reduce_sum
    True
    """
    if not isinstance(name, str):
        raise TypeError(f"ascjax.instruction: name must be a str, got {type(name).__name__}")
    index = _by_name()
    if name in index:
        return _bound(name)
    template = re.fullmatch(r"(.+?)\s*<.*>", name)
    if template and template.group(1) in index:
        # ReduceSum<half>: T is read from the arrays (dtype= where their storage is ambiguous)
        raise UnknownInstruction(
            f"ascjax.instruction: name {name!r} carries template arguments; give the name "
            f"alone, {template.group(1)!r}: T is read from the arrays (dtype= names it where "
            f"the storage is ambiguous, e.g. hifloat8_t in uint8), other template parameters "
            f"are keywords (reduce_type=\"max\")")
    # names compared case-blind and without underscores: GATHER, reducesum find theirs
    folded: dict[str, list[str]] = {}
    for n in index:
        folded.setdefault(_fold(n), []).append(n)
    key = _fold(name)
    close = difflib.get_close_matches(key, folded, n=12, cutoff=0.5) or difflib.get_close_matches(
        key, folded, n=12, cutoff=0.3)
    near = [n for k in ([key] if key in folded else []) + close for n in folded[k]]
    shown = {}  # one name per instruction (per fixed template keywords), a vendor name first
    for n in near:
        ins, fixed = index[n]
        if fixed is None:  # a companion call: its vendor name, once
            shown.setdefault(ins, next(v for v, f in COMPANIONS.items() if f is ins))
            continue
        key = (ins.name, tuple(sorted(fixed.items())))
        shown.setdefault(key, ins.vendor_names[0] if n == ins.name else n)
    shown = list(shown.values())[:5]
    raise UnknownInstruction(f"ascjax.instruction: no instruction is named {name!r}; nearest: "
                             f"{', '.join(shown) if shown else 'none'} (all: ascjax.INSTRUCTIONS, "
                             f"ascjax.COMPANIONS)")


def _fold(name: str) -> str:
    """A name as ``instruction``'s suggestions compare it: no namespace, case or underscores."""
    return re.sub(r"[_\s]", "", re.sub(r"^AscendC::", "", name)).lower()


class UnknownInstruction(KeyError):
    """``ascjax.instruction`` of a name no page gives an emulated instruction."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0])


# SPEC section 11's open questions and the emulator's own, with the option that flips each.
ASSUMPTIONS = (
    ("A1", ("Ignored mask bits are 0 (canonical masks): a b32 mask on b16 data activates only "
     "even elements"),
     'Config(mask_layout="replicated")'),
    ("A2", "PAT_VLn with n > lanes is clamped to all lanes",
     'Config(vl_overflow="empty")'),
    ("A3", ("Float overflow gives IEEE inf/NaN by default, on every product (ReduceDataBlock's "
            "page: half defaults to the non-saturating mode); the A2/A3 C API pages of "
            "asc_repeat_reduce_sum and asc_datablock_reduce_sum say instead that a half pair sum "
            "above 65504 is stored as 65504 ([60000, 60000, -30000, 100] -> 35604)"),
     'Config(float_overflow="saturate")'),
    ("A4", "A masked asc_storealign leaves masked-off UB bytes untouched",
     'Config(store_masked="zero")'),
    ("A5", ("PairReduceSum, both elements of a pair masked: dst unchanged on the 950 (the seed "
     "page; ReducePairElem's page and the 950 implementation code write 0)"),
     'Config(masked_pair="zero") or Config(product="200I/500 A2")'),
    ("A6", ("fp8_e8m0 code 0x00 decodes as +0 (the hardware cast), not the format's 2^-127; "
     "instructions only move e8m0 bits, which no reading changes"),
     'Config(e8m0="format")'),
    ("A7", "Masked lanes enter a float sum as +0, so -0 plus a masked lane is +0",
     'Config(masked_lanes="skip")'),
    ("A8", ("A NaN result of an add is the canonical quiet NaN (0x7FC00000 / 0x7E00 / 0x7FC0); "
     "payloads are kept by data movement"),
     "none (CPU and GPU NaNs differ)"),
    ("A9", "PairReduceSum strides are accepted in [0, 65535] (the seed gives no range)",
     "none"),
    ("A10", ("asc_squeeze_and_storeunalign takes hifloat8_t (SPEC 7 lists it; the seed page "
     "does not)"),
     "none"),
    ("A11", ("ReduceDataBlock / BlockReduceSum/Max/Min on inference AI Core and training (the "
     "page gives A2 / A3: keep dst; 950, 200I/500 A2: a fill): a DataBlock with no active "
     "element writes the 950's fill (+0 SUM, -inf MAX, +inf MIN); the reduce family's strides "
     "are accepted in [0, 65535], as A9"),
     'Config(empty_block="keep") (or "fill" on A2 / A3)'),
    ("A12", ("ReduceSum method 2 (the page's binary tree across repeat results) with a repeat "
     "count that is not a power of two: the repeat results are summed by an "
     "adjacent-pair tree padded with +0 (as the hardware's re-reduction of a partly masked "
     "tensor would)"),
     "none (method=1 / 2 / 3 pick the documented orders)"),
    ("A13", ("encode: round_mode defaults to the format's first Cast mode (rint; round for "
     "hifloat8_t, which has no rint)"),
     "encode(round_mode=...)"),
    ("A14", ("encode: overflow is not saturated by default (inf, NaN or the largest value as the "
     "format allows); the Cast page saturates by default"),
     "encode(saturate=True)"),
    ("A15", ("HiFloat8 hybrid rounding follows the vendor host codec: round up when the top "
     "dropped bits F >= T (an exact float32 16.0 becomes 20.0)"),
     "none"),
    ("A16", ("encode rounds once from float32; the hardware reaches fp4 through bfloat16 and "
     "int4 through half"),
     "encode into the intermediate type first"),
    ("A17", ("ReduceSum's first-n form runs in counter mask mode on the 950, so 256 to 1024 "
     "bytes use method 3 (the page gives the method per mask mode, not the form's mode)"),
     'Config(first_n_mask_mode="normal") (method 2)'),
    ("A18", ("ReduceSum method 3 merges the repeats' registers lane by lane in repeat order, "
     "((r0 + r1) + r2) + ..., each add rounded to T (the page says only \"by vector adds\")"),
     'Config(vector_merge="tree")'),
    ("A19", ("A max / min whose result is a NaN (registers: asc_reduce_max/min, their "
     "DataBlock forms, Reg::Reduce, Reg::ReduceDataBlock; LocalTensors: ReduceDataBlock, "
     "ReduceRepeat, ReduceMax/Min, the SPRs) writes the type's quiet NaN (0x7E00 / 0x7FC00000; "
     "the Reg pages: \"该数据类型的nan\"), not the first NaN's own bits; the index is the "
     "first NaN's"),
     'Config(extreme_nan="first")'),
    ("A20", ("asc_reduce_max/min, Reg::Reduce MAX/MIN: when the extreme equals the value masked "
     "lanes are \"treated as\" (-inf / +inf, the integer type's lowest / highest), the index is "
     "the first active lane holding it (masked lanes take no part; no active lane: index 0)"),
     'Config(masked_extreme="fill") (a masked lane before it wins the tie)'),
    ("A21", ("Max/min reductions on LocalTensors (ReduceDataBlock, ReduceRepeat, ReduceMax/Min, "
     "their SPRs) "
     "with a NaN among the active elements give a NaN (bits as A19) at the first NaN's index, "
     "as the register pages say for theirs; the LocalTensor pages do not say"),
     'Config(max_min_nan="ignore")'),
    ("A22", ("Max/min order -0 below +0: max(-0, +0) = +0 and min = -0 wherever they stand; the "
     "pages only say the first index wins among equal values"),
     'Config(signed_zero="equal")'),
    ("A23", ("ReduceRepeat<SUM> leaves in the sum SPR (GetReduceRepeatSumSpr) its repeat results "
     "added in repeat order, ((s0 + s1) + s2) + ..., each rounded to T (the page documents the "
     "SPR after ReduceSum's first-n form, whose A2 / A3 order this is)"),
     'Config(sum_spr="tree")'),
    ("A24", ("The max/min SPR index (GetReduceRepeatMaxMinSpr, asc_get_reduce_max_cnt) is "
     "r * lanes + i for repeat r's lane i, the element offset in the pages' contiguous case "
     "(srcBlkStride 1, srcRepStride 8; the pages support no other)"),
     'Config(spr_index="offset") (the src element offset)'),
    ("A25", ("ReduceMax/ReduceMin level-0 index: the winning element's offset in src, "
     "r*srcRepStride*epb + e (the vendor's A2 and 950 implementations; the pages only say it is "
     "derived from the repeat and the in-repeat index); it differs from r*lanes + e only when "
     "srcRepStride != 8"),
     'Config(reduce_max_index="repeat")'),
    ("A26", ("A LocalTensor reduction with repeatTime 0 (ReduceSum/ReduceMax/ReduceMin's level-0 "
     "form, ReduceRepeat, ReduceDataBlock, ReducePairElem and the older PairReduceSum, "
     "BlockReduce*, WholeReduce*, RepeatReduceSum) leaves dst (and the SPRs it sets) unchanged "
     "on every product (a NOP on Atlas A2/A3, as the pages say of count 0 too; the 950 pages "
     "say a NOP is not guaranteed, the others are silent); count 0 is rejected off Atlas "
     "A2/A3"),
     'Config(reduce_empty="raise")'),
    ("A27", ("ReduceMax/ReduceMin checks: sharedTmpBuffer holds the page's "
     "finalWorkLocalNeedSize elements of T (first-n form: firstMaxRepeat = count // lanes, at "
     "least 1, as ReduceSum's page says; any size on the 950); with calIndex, a 16-bit T "
     "(half, and int16_t/uint16_t on the 950) rejects a call whose index can exceed 65535"),
     "none (pass a larger buffer or a shorter tensor)"),
    ("A28", ("Counter mask mode on a repeat/stride instruction: the count N makes ceil(N / "
     "lanes) repeats (no 255 limit; repeatTime has no effect, as the guide says) and element "
     "n of the call, lane n % lanes of repeat n // lanes read through the strides, takes part "
     "iff n < N, so only the last repeat is partial (the guide says only that N is the "
     "elements of the whole computation)"),
     "none"),
    ("A29", ("SetVectorMask / asc_set_vector_mask with a mask of 0 on Atlas A2/A3 (\"treated as "
     "a NOP\"): the registers hold 0 and the vector instructions that read them do nothing"),
     'Config(zero_vector_mask="ignored") (the setter itself does nothing)'),
    ("A30", ("Gather's mask/repeat form and asc_gather's (UB) repeat form: lane e of repeat r "
     "reads srcOffset[r * lanes + e] (one register's lanes of offsets per repeat, as the page's "
     "example consumes them) and writes dst[r * dstRepStride * epb + e]; repeats run in order, "
     "so where dstRepStride < 8 makes them overlap the later write wins"),
     'Config(gather_offsets="dst") (the offset at the lane\'s dst position)'),
    ("A31", ("Gather / asc_gather (UB) with count 0 or repeatTime 0 leave dst unchanged on every "
     "product (a NOP on Atlas A2/A3 as the page says; the 950 page says a NOP is not "
     "guaranteed, the others are silent)"),
     'Config(gather_empty="raise")'),
    ("A32", ("Gather's mask/repeat form with 8-bit T on Atlas 200I/500 A2 (4 DataBlocks a repeat, "
     "page): the mask governs the repeat's 128 lanes (continuous mode [1, 128], two uint64 "
     "words in bit mode) and lane e of repeat r writes dst[r * dstRepStride * 32 + e]"),
     "none"),
    ("A33", ("A srcOffset or srcBaseAddr that is not a multiple of sizeof(T) is an error (the "
     "page: \"unexpected behaviour\", data misplaced without a fault); an active lane's offset is "
     "checked like an address past the UB (Config.out_of_range), srcBaseAddr at trace time"),
     "none"),
    ("A34", ("The register DataBlock gathers (asc_gather_datablock's register form, "
     "Reg::GatherB) gather DataBlock k iff mask bit 4k (b32 element k) is set, as the "
     "Reg::GatherB page says; a block not gathered is 0 in dst (the c-reg page: unselected "
     "elements are zeroed; the Reg page says only \"not updated\"). The c-reg page's "
     "per-element wording is read as the same instruction"),
     'Config(datablock_mask="element") (asc_gather_datablock: per element of T)'),
    ("A35", ("Scatter with two active elements at one dst offset (the page: not predictable): "
     "the later element in processing order wins"),
     'Config(scatter_duplicates="first")'),
    ("A36", ("Gatherb with repeatTime 0 and Scatter with count or repeatTime 0 leave dst "
     "unchanged on every product (a NOP, as the Gatherb page says for Atlas A2/A3; the 950 "
     "pages say a NOP is not guaranteed, the others are silent)"),
     'Config(empty_move="raise")'),
    ("A37", ("Scatter's mask form: lane e of repeat r reads dstOffset[r*lanes + e] (the offsets "
     "consumed in order, whatever srcRepStride); an 8-bit repeat (4 DataBlocks, the page) is "
     "128 elements under a 128-lane mask (a count in [1, 128] or two uint64 words)"),
     'Config(scatter_offset="src") (dstOffset[r*srcRepStride*epb + e])'),
    ("A38", ("asc_gather_datablock's UB form is Gatherb's instruction: a dst_block_stride of 0 is "
     "taken as 1 (Gatherb's note for Atlas A2/A3), repeat in [0, 255] and strides in their "
     "prototype types' ranges (uint16_t dst_repeat_stride, uint8_t dst_block_stride)"),
     "none"),
    ("A39", ("GatherMask / asc_reduce leave the dst elements past the count they report with "
     "their bits (the page shows them as undefined)"),
     'Config(gather_mask_tail="zero_block") (the rest of the last 32-byte DataBlock is 0)'),
    ("A40", ("GatherMask in Counter mode (950, Atlas A2/A3, 200I/500 A2: mask elements per "
     "repeat) with mask above one repeat's 256 bytes: the repeat goes on through the block "
     "stride, element e at (r*src0RepeatStride + (e // epb)*src0BlockStride)*epb + e % epb, "
     "its pattern bit e of the repeat's string; so also asc_reduce's first-n form, whose page "
     "gives count alone: above 256 bytes its elements and src1's bits run on continuously"),
     'Config(gather_mask_counter="raise")'),
    ("A41", ("GatherMask / asc_reduce with repeatTimes 0 leave dst unchanged and report a count "
     "of 0 (the pages give no range)"),
     'Config(gather_mask_empty="raise")'),
    ("A42", ("asc_squeeze_with_status / asc_squeeze_v2 leave in AR this call's selected bytes "
     "(elements x sizeof(T); set, not added to the AR before): the page's \"有效数据大小\" that "
     "asc_storeunalign_postupdate uses as its store offset, in the seed's unit of AR"),
     'Config(squeeze_status="elements")'),
    ("A43", ("asc_squeeze on UB: src1 (\"比较掩码\") is read element by element through its "
     "block/repeat strides like src0, and a nonzero element selects src0's element (the page's "
     "example sizes src1 like src0)"),
     ('Config(squeeze_ub_mask="bits") (a bit mask, bit e of the repeat\'s src1 words, as '
      'asc_reduce)')),
    ("A44", ("asc_squeeze on UB: a repeat's selected elements fill its dst lanes 0.. in order "
     "(through dst's strides) and its other dst lanes are written 0, as the register form's "
     "\"剩余位置元素置为0\""),
     'Config(squeeze_ub_tail="keep")'),
    ("A45", ("asc_squeeze on UB reads every element of a repeat: the vector mask (MaskState) "
     "takes no part (the page names no mask; vreducev2's page: \"该接口中MASK被忽略\")"),
     "none (clear src1's elements to leave lanes out)"),
    ("A46", ("ReduceMax/ReduceMin leave in the max/min SPR (GetReduceRepeatMaxMinSpr) the value "
     "they write to dst[0] and, as its index, the index they find (dst[1]'s with calIndex, "
     "as A25 reads it; set with calIndex false too). The page gives the value and calls that "
     "index \"not accurate\" (take it from dst); the vendor's A2 code reduces in "
     "ReduceRepeat passes over sharedTmpBuffer, so the hardware's is likely its last pass's "
     "lane"),
     "none (read the index from dst[1], as the page says)"),
    ("A47", ("The SPRs after a form the getter pages do not cover are set as after the ones "
     "they do: ReduceSum's level-0 form leaves its dst[0] in the sum SPR as the first-n form "
     "does (GetReduceRepeatSumSpr: first-n form only); ReduceMax/ReduceMin with srcRepStride "
     "!= 8 (or in Counter mode) leave the value and index of A46 "
     "(GetReduceRepeatMaxMinSpr: srcRepStride 8, srcBlkStride 1, Normal mode only)"),
     "none (read dst: the pages leave the registers unspecified there)"),
    ("A48", ("asc_unsqueeze writes to lane i the number of mask 1s among lanes 0..i-1, the top "
     "lane's bit counted nowhere (the page's first sentence, \"mask最高位被忽略\"); its next "
     "sentence, read literally, gives dst[i] = dst[i-1] + mask[i] (lane 0's bit ignored)"),
     'Config(unsqueeze_count="through")'),
    ("A49", ("asc_reduce_max / asc_reduce_min write the max / min to dst lane 0, its index to "
     "lane 1 and 0 to every other lane (the page's first paragraph, its constraints, its "
     "all-masked rule and Reduce.md), not its sentence \"结果广播写入dst的所有有效元素\" (the "
     "result broadcast to dst's active lanes)"),
     "none (the broadcast sentence has no lane for the index and no all-masked value)"),
    ("A50", ("Reg::ReduceDataBlock's SUM takes table 3's widening rows (int16_t -> int32_t, "
     "uint16_t -> uint32_t, as asc_reduce_sum_datablock does), though its prototype gives "
     "dstReg and srcReg one type U"),
     "none (refusing them is not an output)"),
    ("A51", ("asc_reduce's repeat is accepted in [0, 255], the 8-bit repeat field of 高维切分 "
     "that GatherMask's repeatTimes fills; its prototype types it uint16_t and gives no range"),
     'Config(asc_reduce_repeat="prototype") (accepted in [0, 65535])'),
)


def conformance_table() -> str:
    """Markdown: instruction x type, each cell documented or assumed, then the assumptions.

    A cell is ``documented`` when the seed page (or SPEC's documented sections) fixes every
    bit of the result; otherwise it names the assumptions it rests on.
    """
    lines = ["| instruction | Ascend C | SPEC | type | status |", "|---|---|---|---|---|"]
    for ins in INSTRUCTIONS.values():
        # one line per type, or per set of its rows that rest on the same assumptions
        for group in dict.fromkeys((row[0], ins.assumptions(row)) for row in ins.types):
            variants = [row for row in ins.types if (row[0], ins.assumptions(row)) == group]
            detail = "; ".join(", ".join(f"{c}={v}" for c, v in zip(ins.columns, row, strict=True))
                               for row in variants)
            keys = group[1]
            status = f"assumed ({', '.join(keys)})" if keys else "documented"
            lines.append(f"| `{ins.name}` | `{ins.ascend}` | {ins.spec} | {detail} | {status} |")
    lines += ["", "| # | assumption | option for the other reading |", "|---|---|---|"]
    lines += [f"| {key} | {text} | {option} |" for key, text, option in ASSUMPTIONS]
    return "\n".join(lines)
