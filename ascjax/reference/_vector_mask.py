"""Mask-mode setters (SetMaskCount, SetMaskNorm, SetVectorMask, ResetMask and the C API
asc_set_*), written from the vendor pages; and how a LocalTensor call reads its mask.

A state is anything with ``mode`` ("normal" / "counter"), ``high`` and ``low`` (the two
uint64 mask words); the models return this module's ``MaskState``.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from ascjax._src.config import Config

from ._scalar import lane_bytes, type_name

ALL_ONES = (1 << 64) - 1


class MaskState(NamedTuple):
    mode: str = "normal"
    high: int = ALL_ONES
    low: int = ALL_ONES


def _state(state) -> MaskState:
    if state is None:
        return MaskState()              # power-on: Normal mode, ResetMask's all ones
    return MaskState(state.mode, state.high, state.low)


def _require(config: Config, products: tuple, where: str) -> None:
    if config.product not in products:
        raise TypeError(f"{where}: not available on product {config.product}")


_MODE_PAGES = ("950", "A3", "A2", "200I/500 A2", "inference AI Core")  # not training
_C_API = ("A3", "A2")


def set_mask_count(*, state=None, config: Config | None = None) -> MaskState:
    _require(config or Config(), _MODE_PAGES, "set_mask_count")
    return _state(state)._replace(mode="counter")


def set_mask_norm(*, state=None, config: Config | None = None) -> MaskState:
    _require(config or Config(), _MODE_PAGES, "set_mask_norm")
    return _state(state)._replace(mode="normal")


def reset_mask(*, state=None, config: Config | None = None) -> MaskState:
    _require(config or Config(), _MODE_PAGES, "reset_mask")
    return _state(state)._replace(high=ALL_ONES, low=ALL_ONES)


def _write(state: MaskState, high: int, low: int, config: Config) -> MaskState:
    # Atlas A2/A3: "mask = 0 ... NOP". Config.zero_vector_mask="ignored" reads it as the setter
    # doing nothing; the default keeps the 0 (the instructions then do nothing).
    empty = low == 0 if state.mode == "counter" else (high == 0 and low == 0)
    if empty and config.product in ("A2", "A3") and config.zero_vector_mask == "ignored":
        return state
    return state._replace(high=high, low=low)


def _is_int(x) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def set_vector_mask(*args, dtype: Any, mode: str = "normal", state=None,
                    config: Config | None = None) -> MaskState:
    config = config or Config()
    where = "set_vector_mask"
    _require(config, _MODE_PAGES + ("training",), where)
    state = _state(state)
    width = lane_bytes(type_name(dtype)) * 8
    if width not in (16, 32):
        raise TypeError(f"{where}: T must be a 16- or 32-bit type")
    if mode not in ("normal", "counter"):
        raise ValueError(f"{where}: unknown mode {mode!r}")
    if not all(_is_int(a) for a in args):
        raise TypeError(f"{where}: arguments must be ints")
    if len(args) == 1:
        (n,) = args
        if mode == "counter":           # int32_t len: elements over the whole computation
            if not 0 <= n <= 2**31 - 1:
                raise ValueError(f"{where}: len out of range")
            return _write(state, 0, n, config)
        limit = 128 if width == 16 else 64   # continuous mode: [0, 128] / [0, 64]
        if not 0 <= n <= limit:
            raise ValueError(f"{where}: len out of range")
        low = ALL_ONES if n >= 64 else (1 << n) - 1
        high = (1 << (n - 64)) - 1 if n > 64 else 0
        return _write(state, high, low, config)
    if len(args) != 2:
        raise TypeError(f"{where}: (mask_high, mask_low) or (len)")
    high, low = args
    if not (0 <= high <= ALL_ONES and 0 <= low <= ALL_ONES):
        raise ValueError(f"{where}: mask words out of range")
    if mode == "counter" and high != 0:   # "Counter模式：需要置0"
        raise ValueError(f"{where}: mask_high must be 0 in Counter mode")
    if mode == "normal" and width == 32 and high != 0:
        raise ValueError(f"{where}: mask_high must be 0 for a 32-bit type")
    if (mode == "normal" and width == 16 and high == 0 and low == 0
            and config.product not in ("A2", "A3")):
        raise ValueError(f"{where}: mask words both 0")
    return _write(state, high, low, config)


def asc_set_mask_count(*, state=None, config: Config | None = None) -> MaskState:
    _require(config or Config(), _C_API, "asc_set_mask_count")
    return _state(state)._replace(mode="counter")


def asc_set_mask_norm(*, state=None, config: Config | None = None) -> MaskState:
    _require(config or Config(), _C_API, "asc_set_mask_norm")
    return _state(state)._replace(mode="normal")


def asc_set_vector_mask(mask1: int, mask0: int, *, state=None,
                        config: Config | None = None) -> MaskState:
    config = config or Config()
    where = "asc_set_vector_mask"
    _require(config, _C_API, where)
    state = _state(state)
    if not (_is_int(mask1) and _is_int(mask0)):
        raise TypeError(f"{where}: mask words must be ints")
    if not (0 <= mask1 <= ALL_ONES and 0 <= mask0 <= ALL_ONES):
        raise ValueError(f"{where}: mask words out of range")
    if state.mode == "counter" and mask1 != 0:
        raise ValueError(f"{where}: mask1 must be 0 in Counter mode")
    if state.mode == "normal" and mask1 == 0 and mask0 == 0:
        raise ValueError(f"{where}: mask1 and mask0 both 0")
    return _write(state, mask1, mask0, config)


# ---------------------------------------------------------------- how an instruction reads it

def call_rows(mask: Any, repeat_time: int, lanes: int, is_set_mask: bool, mask_state,
              config: Config, where: str, parse_mask) -> list[list[bool]]:
    """The active lanes of each repeat a LocalTensor repeat/mask call makes (guide
    如何使用掩码操作API). ``parse_mask(mask, lanes, where)`` reads a mask argument (it raises
    on 0). An empty list: no repeat (repeatTime 0, or a mask of 0 on Atlas A2/A3, a NOP)."""
    state = _state(mask_state)
    if not 0 <= repeat_time <= 255:
        raise ValueError(f"{where}: repeat_time must be in [0, 255], got {repeat_time}")
    nop_products = ("A2", "A3")
    if state.mode == "counter":
        if config.product == "training":
            raise ValueError(f"{where}: no Counter mode on the training series")
        if is_set_mask:
            if not _is_int(mask):
                raise TypeError(f"{where}: Counter-mode mask must be an int count")
            n = mask
            if not 0 <= n <= 2**31 - 1:
                raise ValueError(f"{where}: Counter-mode count out of range")
        else:
            n = state.low
        if n == 0 and config.product not in nop_products:
            raise ValueError(f"{where}: Counter-mode count 0")
        # repeatTime "不生效": element k of the call is lane k % lanes of repeat k // lanes.
        repeats = (n + lanes - 1) // lanes
        return [[r * lanes + e < n for e in range(lanes)] for r in range(repeats)]
    if is_set_mask:
        zero = (_is_int(mask) and mask == 0) or (not _is_int(mask) and not isinstance(
            mask, bool) and hasattr(mask, "__len__") and all(int(w) == 0 for w in mask))
        if zero and config.product in nop_products:
            return []
        active = list(parse_mask(mask, lanes, where))
    else:
        bits = state.high << 64 | state.low
        active = [bool(bits >> e & 1) for e in range(lanes)]
        if not any(active):
            if config.product in nop_products:
                return []
            raise ValueError(f"{where}: the mask state enables no lane")
    return [list(active) for _ in range(repeat_time)]
