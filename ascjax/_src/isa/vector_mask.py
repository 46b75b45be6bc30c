"""The vector unit's mask mode and mask registers for the LocalTensor (Memory) instructions:
SetMaskCount, SetMaskNorm, SetVectorMask, ResetMask and their C API spellings
asc_set_mask_count, asc_set_mask_norm, asc_set_vector_mask (vendor pages cpp-memory/掩码操作,
c-memory/asc_set_*; guide 如何使用掩码操作API).

The hardware keeps one mode bit (Normal or Counter) and a 128-bit mask (maskHigh:maskLow)
between calls. Here that is an explicit, immutable ``MaskState`` of static Python ints: each
setter takes the state (``state=None`` is the power-on / reset state: Normal mode, every bit 1)
and returns the new one, and a LocalTensor instruction called with ``is_set_mask=False`` reads
it (``mask_state=``); ``repeat.repeat_call`` says how.

* Normal mode: bit j of ``high:low`` (bit j of ``low`` for j < 64) enables lane j of every
  repeat; a 32-bit type reads ``low`` only.
* Counter mode: ``low`` is the number of elements the whole call processes (``high`` has no
  effect); the repeats are derived from it and the call's repeatTime has no effect.

``SetVectorMask<T, mode>``'s ``mode`` only says how its arguments are packed into the
register (a continuous length becomes the bits of the first ``len`` lanes); it does not
switch the unit's mode, which SetMaskCount / SetMaskNorm do (the guide's scenario 3 sets a
Counter mask while the unit is still in Normal mode, for a first-n call that switches by
itself). 64-bit types (int64_t / uint64_t: maskLow in [0, 2^32-1]) are not emulated.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from ..config import Config
from ..formats import resolve
from .lanes import check_int, check_product, enum_name

WORD = 2**64 - 1
MODES = ("normal", "counter")
# The placeholder the pages pass as the mask argument when isSetMask is false; the value carries
# no meaning (the instruction reads the mask registers instead).
MASK_PLACEHOLDER = 0

# Products each page lists as supported (Kirin products are not emulated).
_NOT_TRAINING = ("950", "A3", "A2", "200I/500 A2", "inference AI Core")
MODE_PRODUCTS = _NOT_TRAINING                      # SetMaskCount, SetMaskNorm, ResetMask
VECTOR_MASK_PRODUCTS = _NOT_TRAINING + ("training",)  # SetVectorMask
C_API_PRODUCTS = ("A3", "A2")                      # asc_set_mask_count/_norm/_vector_mask
# Atlas A2 / A3: a mask of 0 makes the vector instruction a NOP (SetVectorMask and the reduce
# pages); elsewhere the pages leave it unspecified, and the emulator rejects it.
ZERO_MASK_NOP = ("A3", "A2")


@dataclasses.dataclass(frozen=True)
class MaskState:
    """The vector mask registers and mode bit: ``mode`` ("normal" or "counter"), ``high`` and
    ``low`` (the two uint64 mask words, static Python ints). Hashable; the default is the
    power-on / ResetMask state (Normal mode, every bit 1)."""

    mode: str = "normal"
    high: int = WORD
    low: int = WORD

    def __post_init__(self):
        if self.mode not in MODES:
            raise ValueError(f"MaskState: mode={self.mode!r} is not one of {MODES}")
        for name in ("high", "low"):
            check_int(getattr(self, name), 0, WORD, where="MaskState", arg=name)

    def lane_mask(self, lanes: int) -> list[bool]:
        """Normal mode: which of ``lanes`` lanes the mask words enable (bit j -> lane j)."""
        bits = self.high << 64 | self.low
        return [bool(bits >> j & 1) for j in range(lanes)]


def resolve_state(state: Any, where: str, arg: str = "mask_state") -> MaskState:
    """``state``, or the power-on state for None; a TypeError for anything else."""
    if state is None:
        return MaskState()
    if not isinstance(state, MaskState):
        raise TypeError(f"{where}: {arg} must be an ascjax.MaskState or None, got "
                        f"{type(state).__name__}")
    return state


def set_mask_count(*, state: MaskState | None = None,
                   config: Config | None = None) -> MaskState:
    """``SetMaskCount()``: switch the vector unit to Counter mode; the mask words are kept.

    Returns the new state. Not available on the Atlas training series.
    """
    where = "set_mask_count"
    check_product(config, MODE_PRODUCTS, where)
    return dataclasses.replace(resolve_state(state, where, "state"), mode="counter")


def set_mask_norm(*, state: MaskState | None = None,
                  config: Config | None = None) -> MaskState:
    """``SetMaskNorm()``: switch the vector unit to Normal mode (the default); the mask words
    are kept. Returns the new state. Not available on the Atlas training series."""
    where = "set_mask_norm"
    check_product(config, MODE_PRODUCTS, where)
    return dataclasses.replace(resolve_state(state, where, "state"), mode="normal")


def reset_mask(*, state: MaskState | None = None, config: Config | None = None) -> MaskState:
    """``ResetMask()``: every mask bit back to 1 (each repeat's lanes all take part); the mode
    is kept. Returns the new state. Not available on the Atlas training series."""
    where = "reset_mask"
    check_product(config, MODE_PRODUCTS, where)
    return dataclasses.replace(resolve_state(state, where, "state"), high=WORD, low=WORD)


def _store(state: MaskState, high: int, low: int, config: Config) -> MaskState:
    """The new mask words; under ``config.zero_vector_mask="ignored"`` (A29) a mask of 0 on
    Atlas A2/A3 leaves the registers as they were (the setter itself is the NOP)."""
    zero = low == 0 if state.mode == "counter" else high == low == 0
    if zero and config.product in ZERO_MASK_NOP and config.zero_vector_mask == "ignored":
        return state
    return dataclasses.replace(state, high=high, low=low)


def set_vector_mask(*args: int, dtype: Any, mode: str = "normal",
                    state: MaskState | None = None, config: Config | None = None) -> MaskState:
    """``SetVectorMask<T, mode>(maskHigh, maskLow)`` or ``SetVectorMask<T, mode>(len)``: write
    the mask registers. ``dtype`` is T (a 16- or 32-bit type); ``mode`` ("normal" or
    "counter", MaskMode) says what the arguments mean:

    * ``"normal"``, ``(mask_high, mask_low)``: bit mode, bit j enables lane j. 16-bit T: both
      in [0, 2^64-1], not both 0; 32-bit T: ``mask_high`` 0, ``mask_low`` in [0, 2^64-1].
    * ``"normal"``, ``(len)``: continuous mode, the first ``len`` lanes (16-bit [0, 128],
      32-bit [0, 64]), stored as those bits.
    * ``"counter"``, ``(mask_high, mask_low)``: ``mask_high`` must be 0; ``mask_low`` is the
      number of elements a whole call processes. ``(len)``: the same count, [0, 2^31-1].

    It does not switch the unit's mode (``set_mask_count`` / ``set_mask_norm`` do). On Atlas
    A2/A3 a mask of 0 makes the following vector instructions NOPs (page); 16-bit bit mode
    with both words 0 is accepted there only. Returns the new state.
    """
    where = "set_vector_mask"
    config = check_product(config, VECTOR_MASK_PRODUCTS, where)
    state = resolve_state(state, where, "state")
    fmt = resolve(dtype, where=where, arg="T (dtype)")
    if fmt.bits not in (16, 32):
        raise TypeError(f"{where}: T (dtype) {fmt.name} is {fmt.bits}-bit; the emulator takes "
                        f"16- and 32-bit types (64-bit types are not emulated)")
    mode = enum_name(mode, where, "mode", MODES, "MaskMode")
    lanes = fmt.lanes
    if len(args) == 1:
        if mode == "counter":
            return _store(state, 0, check_int(args[0], 0, 2**31 - 1, where=where,
                                              arg="len (Counter mode)"), config)
        n = check_int(args[0], 0, lanes, where=where, arg=f"len (Normal mode, {fmt.name})")
        bits = (1 << n) - 1
        return _store(state, bits >> 64, bits & WORD, config)
    if len(args) != 2:
        raise TypeError(f"{where}: expected (mask_high, mask_low) or (len), got {len(args)} "
                        f"positional arguments")
    high = check_int(args[0], 0, 0 if mode == "counter" or fmt.bits == 32 else WORD,
                     where=where, arg=f"mask_high ({mode.capitalize()} mode, {fmt.name})")
    low = check_int(args[1], 0, WORD, where=where, arg="mask_low")
    if (mode == "normal" and fmt.bits == 16 and high == low == 0
            and config.product not in ZERO_MASK_NOP):
        raise ValueError(f"{where}: mask_high and mask_low are both 0; for 16-bit T they must "
                         f"not both be 0 (a mask of 0 is a NOP only on {list(ZERO_MASK_NOP)})")
    return _store(state, high, low, config)


def asc_set_mask_count(*, state: MaskState | None = None,
                       config: Config | None = None) -> MaskState:
    """``asc_set_mask_count()``: Counter mode (C API, Atlas A2/A3). Returns the new state."""
    where = "asc_set_mask_count"
    check_product(config, C_API_PRODUCTS, where)
    return dataclasses.replace(resolve_state(state, where, "state"), mode="counter")


def asc_set_mask_norm(*, state: MaskState | None = None,
                      config: Config | None = None) -> MaskState:
    """``asc_set_mask_norm()``: Normal mode (C API, Atlas A2/A3). Returns the new state."""
    where = "asc_set_mask_norm"
    check_product(config, C_API_PRODUCTS, where)
    return dataclasses.replace(resolve_state(state, where, "state"), mode="normal")


def asc_set_vector_mask(mask1: int, mask0: int, *, state: MaskState | None = None,
                        config: Config | None = None) -> MaskState:
    """``asc_set_vector_mask(mask1, mask0)`` (C API, Atlas A2/A3): write the mask words as the
    state's mode reads them. Normal mode: ``mask1`` the high word, ``mask0`` the low word,
    each in [0, 2^64-1], not both 0 (a 32-bit type reads ``mask0`` only, which must then be
    nonzero). Counter mode: ``mask1`` must be 0 and ``mask0`` is the element count. Returns
    the new state."""
    where = "asc_set_vector_mask"
    config = check_product(config, C_API_PRODUCTS, where)
    state = resolve_state(state, where, "state")
    counter = state.mode == "counter"
    high = check_int(mask1, 0, 0 if counter else WORD, where=where,
                     arg=f"mask1 ({state.mode.capitalize()} mode)")
    low = check_int(mask0, 0, WORD, where=where, arg="mask0")
    if not counter and high == low == 0:
        raise ValueError(f"{where}: mask1 and mask0 are both 0; in Normal mode they must not "
                         f"both be 0")
    return _store(state, high, low, config)
