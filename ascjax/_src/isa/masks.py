"""Masks (``vector_bool``), SPEC section 2.

The hardware form is 256 bools, one per register byte; element i of a w-byte type is governed
by bit ``i*w``. ``create_mask`` / ``update_mask`` build *canonical* masks (only the lowest bit
of each group set, **assumed** like ARM SVE predicates), so a b32 mask used on b16 data
activates only even elements. Instructions also accept the per-element form ``(..., lanes)``.
"""

from __future__ import annotations

import enum
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from ..config import Config
from ..formats import VL_BYTES, Format, resolve
from .lanes import REGISTER_PRODUCTS, as_array, check_product, traced_hint


class Pattern(enum.IntEnum):
    """``asc_create_mask_bW`` patterns, with their Ascend C enum values."""

    PAT_ALL = 0
    PAT_VL1 = 1
    PAT_VL2 = 2
    PAT_VL3 = 3
    PAT_VL4 = 4
    PAT_VL8 = 5
    PAT_VL16 = 6
    PAT_VL32 = 7
    PAT_VL64 = 8
    PAT_VL128 = 9
    PAT_M3 = 10
    PAT_M4 = 11
    PAT_H = 12
    PAT_Q = 13
    PAT_ALLF = 15


def _width_of(dtype: Any, where: str) -> int:
    """Bytes per element of a mask for ``dtype`` (Ascend type, NumPy dtype, "b8"/"b16"/"b32")."""
    if isinstance(dtype, str) and dtype in ("b8", "b16", "b32"):
        return int(dtype[1:]) // 8
    return resolve(dtype, where=where).width


def pattern_of(pattern: Any) -> Pattern:
    """The ``Pattern`` a name ("PAT_ALL" or "ALL") or a value means; an error naming the valid
    ones (create_mask's check, shared with the CLI's)."""
    if isinstance(pattern, jax.core.Tracer):
        raise TypeError(f"create_mask: pattern is a traced value{traced_hint(pattern)}")
    try:
        if isinstance(pattern, str):
            return Pattern[pattern if pattern.startswith("PAT_") else "PAT_" + pattern]
        return Pattern(pattern)
    except (KeyError, ValueError):
        raise ValueError(f"create_mask: unknown pattern {pattern!r}; valid: "
                         f"{[p.name for p in Pattern]} or their values 0..13, 15") from None


def _pattern_elements(pattern: Pattern, n: int, vl_overflow: str) -> np.ndarray:
    idx = np.arange(n)
    if pattern == Pattern.PAT_ALL:
        return np.ones(n, bool)
    if pattern == Pattern.PAT_ALLF:
        return np.zeros(n, bool)
    if pattern == Pattern.PAT_M3:
        return idx % 3 == 0
    if pattern == Pattern.PAT_M4:
        return idx % 4 == 0
    if pattern == Pattern.PAT_H:
        return idx < n // 2
    if pattern == Pattern.PAT_Q:
        return idx < n // 4
    count = int(pattern.name[len("PAT_VL"):])  # PAT_VLn: the lowest n elements
    if count > n and vl_overflow == "empty":  # SPEC 11.2: clamp (assumed) or no element
        return np.zeros(n, bool)
    return idx < count


def _spread(elements, width: int, layout: str):
    """Hardware form of a per-element mask: bit i*width set for active element i.

    ``layout="replicated"`` (``Config.mask_layout``) sets all ``width`` bits of an active
    element's group instead (the other reading of SPEC 11.1: then a b32 mask on b16 data
    activates element pairs).
    """
    elements = jnp.asarray(elements)
    rest = (jnp.broadcast_to(elements[..., None], elements.shape + (width - 1,))
            if layout == "replicated" else jnp.zeros(elements.shape + (width - 1,), bool))
    return jnp.concatenate([elements[..., None], rest], axis=-1).reshape(
        elements.shape[:-1] + (VL_BYTES,))


def create_mask(pattern: Any, dtype: Any, *, config: Config | None = None) -> jax.Array:
    """``asc_create_mask_bW(pattern)``: a hardware-form mask, bool ``(256,)``.

    ``pattern`` is a ``Pattern``, its name (``"PAT_M3"`` or ``"M3"``) or its enum value;
    ``dtype`` chooses the element width W (an Ascend type name, a NumPy dtype or ``"b16"``).
    ``config.mask_layout``: ``"canonical"`` (only each group's lowest bit set, **assumed**, A1)
    or ``"replicated"``. ``config.vl_overflow``: PAT_VLn with n > lanes gives all lanes
    (``"clamp"``, **assumed**, A2) or none (``"empty"``).

    >>> int(create_mask("PAT_VL3", "float")[::4].sum())
    3
    """
    config = check_product(config, REGISTER_PRODUCTS, "create_mask")
    width = _width_of(dtype, "create_mask")
    elements = _pattern_elements(pattern_of(pattern), VL_BYTES // width, config.vl_overflow)
    return _spread(elements, width, config.mask_layout)


def update_mask(count: Any, dtype: Any, *,
                config: Config | None = None) -> tuple[jax.Array, Any]:
    """``asc_update_mask_bW(count)``: ``(mask of the lowest min(count, N) elements,
    max(count - N, 0))``.

    ``count`` is a ``uint32_t``: a Python int or 64-bit NumPy scalar in [0, 2^32), or an
    integer array or narrower NumPy scalar (jittable), converted to uint32 as C converts an
    argument (an int32 -1 is 2^32 - 1); the count left is then a uint32 array.
    ``config.mask_layout`` as for ``create_mask``.
    """
    layout = check_product(config, REGISTER_PRODUCTS, "update_mask").mask_layout
    width = _width_of(dtype, "update_mask")
    n = VL_BYTES // width
    if isinstance(count, (bool, np.bool_)):
        raise TypeError(f"update_mask: count must be an int in [0, 2^32), got {count!r}")
    # untyped (a Python int), or a 64-bit NumPy scalar (what NumPy arithmetic on sizes gives;
    # JAX would narrow it): its value must be a uint32_t's. Narrower typed counts convert, as C.
    if isinstance(count, int) or (isinstance(count, np.integer) and count.dtype.itemsize == 8):
        if not 0 <= int(count) < 2**32:
            raise ValueError(f"update_mask: count={count} is outside uint32_t [0, 2^32)")
        count = int(count)
        return _spread(np.arange(n) < count, width, layout), max(count - n, 0)
    count = as_array(count, where="update_mask", arg="count", accepts=("uint32_t",))
    if not jnp.issubdtype(count.dtype, jnp.integer):
        raise TypeError(f"update_mask: count must be an integer, got dtype {count.dtype}")
    count = count.astype(jnp.uint32)  # an int8 count wrapped arange(256) and n (a review)
    mask = _spread(jnp.arange(n, dtype=jnp.uint32) < count[..., None], width, layout)
    return mask, jnp.where(count > np.uint32(n), count - np.uint32(n), np.uint32(0))


def element_mask(mask: Any, fmt: Format, *, where: str, arg: str = "mask") -> jax.Array:
    """Per-element bool mask ``(..., fmt.lanes)`` from either accepted form.

    A hardware-form mask ``(..., 256)`` is read at bit ``i * width`` for element i.
    """
    if isinstance(mask, str):
        raise TypeError(f"{where}: {arg}={mask!r} is a pattern name, not a mask; build the mask "
                        f"with ascjax.create_mask({mask!r}, {fmt.name!r})")
    if isinstance(mask, (int, np.integer)) and not isinstance(mask, (bool, np.bool_)):
        raise TypeError(f"{where}: {arg}={mask!r} is an int; a register call takes a mask "
                        f"register, a bool array: ascjax.update_mask({mask}, {fmt.name!r})[0] "
                        f"for the first {mask} lanes, ascjax.create_mask(\"PAT_ALL\", "
                        f"{fmt.name!r}) for all (an int mask is the LocalTensor calls')")
    mask = as_array(mask, where=where, arg=arg, accepts=("bool",))
    if mask.dtype != jnp.bool_:
        hint = f" (0/1 values: {arg}.astype(bool))" if mask.dtype.kind in "iu" else ""
        raise TypeError(f"{where}: {arg} must be a bool array (hardware form (..., 256) or "
                        f"per-element form (..., {fmt.lanes})), got dtype {mask.dtype}{hint}")
    if mask.ndim >= 1 and mask.shape[-1] == fmt.lanes:
        return mask
    if mask.ndim >= 1 and mask.shape[-1] == VL_BYTES:
        return mask[..., :: fmt.width]
    raise ValueError(f"{where}: {arg} has shape {mask.shape}; expected (..., {VL_BYTES}) "
                     f"(hardware form) or (..., {fmt.lanes}) (one per {fmt.name} lane)")
