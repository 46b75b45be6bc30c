"""The one registry of emulated instructions, and the conformance table derived from it."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from . import gather as _gather
from . import memory as _memory
from . import reduce as _reduce
from . import squeeze as _squeeze
from .masks import create_mask, update_mask


@dataclasses.dataclass(frozen=True)
class Instruction:
    """One emulated Ascend C call.

    ``types`` are the supported type rows (named by ``columns``); ``assumed`` maps a row's key
    (its first column, the type the conformance table files it under) to the keys of the
    ``ASSUMPTIONS`` its results rest on.
    """

    name: str
    ascend: str
    function: Callable
    spec: str
    seed: str | None
    columns: tuple[str, ...]
    types: tuple[tuple[str, ...], ...]
    assumed: dict = dataclasses.field(default_factory=dict)


_FLOAT_SUM = ("A3", "A7", "A8")

INSTRUCTIONS: dict[str, Instruction] = {
    i.name: i
    for i in (
        Instruction("reduce_sum_datablock", "asc_reduce_sum_datablock",
                    _reduce.reduce_sum_datablock, "4", "asc_reduce_sum_datablock.md",
                    ("src", "dst"), tuple(_reduce.REDUCE_SUM_DATABLOCK_TYPES.items()),
                    {"half": _FLOAT_SUM, "float": _FLOAT_SUM}),
        Instruction("pair_reduce_sum", "PairReduceSum", _reduce.pair_reduce_sum, "5",
                    "PairReduceSum.md", ("T", "products"),
                    tuple((t, ", ".join(p for p, ts in _reduce.PAIR_REDUCE_SUM_TYPES.items()
                                        if t in ts)) for t in ("half", "float")),
                    {"half": _FLOAT_SUM + ("A5", "A9"), "float": _FLOAT_SUM + ("A5", "A9")}),
        Instruction("gather", "asc_gather", _gather.gather, "6", "asc_gather.md",
                    ("dst", "src", "index"), _gather.GATHER_TYPES),
        Instruction("squeeze_and_storeunalign", "asc_squeeze_and_storeunalign",
                    _squeeze.squeeze_and_storeunalign, "7", "asc_squeeze_and_storeunalign.md",
                    ("dtype",), tuple((t,) for t in _squeeze.SQUEEZE_TYPES),
                    {"hifloat8_t": ("A10",)}),
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

# SPEC section 11's open questions and the emulator's own, with the option that flips each.
ASSUMPTIONS = (
    ("A1", "Ignored mask bits are 0 (canonical masks): a b32 mask on b16 data activates only "
     "even elements", 'create_mask / update_mask(layout="replicated")'),
    ("A2", "PAT_VLn with n > lanes is clamped to all lanes",
     'create_mask(vl_overflow="empty")'),
    ("A3", "Float overflow gives IEEE inf/NaN by default on 950",
     'Config(float_overflow="saturate")'),
    ("A4", "A masked asc_storealign leaves masked-off UB bytes untouched",
     'storealign(masked="zero")'),
    ("A5", "PairReduceSum, both elements of a pair masked: dst unchanged (seed; 950 "
     "implementation code writes 0)", 'Config(masked_pair="zero") or product="200I/500 A2"'),
    ("A6", "fp8_e8m0 conversions (inf -> 0xFF or 0xFE, 0x00 -> +0 or 2^-127): the core "
     "emulator only moves e8m0 bits, which no reading changes", "none needed"),
    ("A7", "Masked lanes enter a float sum as +0, so -0 plus a masked lane is +0",
     'Config(masked_lanes="skip")'),
    ("A8", "A NaN result of an add is the canonical quiet NaN (0x7FC00000 / 0x7E00 / 0x7FC0); "
     "payloads are kept by data movement", "none (CPU and GPU NaNs differ)"),
    ("A9", "PairReduceSum strides are accepted in [0, 65535] (the seed gives no range)",
     "none"),
    ("A10", "asc_squeeze_and_storeunalign takes hifloat8_t (SPEC 7 lists it; the seed page "
     "does not)", "none"),
)


def conformance_table() -> str:
    """Markdown: instruction x type, each cell documented or assumed, then the assumptions.

    A cell is ``documented`` when the seed page (or SPEC's documented sections) fixes every
    bit of the result; otherwise it names the assumptions it rests on.
    """
    lines = ["| instruction | Ascend C | SPEC | type | status |", "|---|---|---|---|---|"]
    for ins in INSTRUCTIONS.values():
        for key in dict.fromkeys(row[0] for row in ins.types):
            variants = [row for row in ins.types if row[0] == key]
            detail = "; ".join(", ".join(f"{c}={v}" for c, v in zip(ins.columns, row))
                               for row in variants)
            keys = ins.assumed.get(key)
            status = f"assumed ({', '.join(keys)})" if keys else "documented"
            lines.append(f"| `{ins.name}` | `{ins.ascend}` | {ins.spec} | {detail} | {status} |")
    lines += ["", "| # | assumption | option for the other reading |", "|---|---|---|"]
    lines += [f"| {key} | {text} | {option} |" for key, text, option in ASSUMPTIONS]
    return "\n".join(lines)
