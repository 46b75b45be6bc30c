"""Register gathers (SPEC 6): ``asc_gather`` from the UB (the seed) and from a vector register,
``Reg::Gather`` (``reg_gather``) on the same kernel, and ``asc_gather``'s one entry point for
all its forms (the UB -> UB forms live in ``gather_tensor``). Data movement: every bit is kept.

``Reg::Gather``'s int64_t / uint64_t rows (RegTraitNumOne / NumTwo) are not emulated (no 64-bit
arrays with x64 off).
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from .. import native
from ..config import Config
from ..formats import Format, resolve
from ..numerics.bits import from_bits, to_bits
from .gather_tensor import UB_FORMS, UB_GATHER_TYPES, ub_gather
from .lanes import (
    REGISTER_PRODUCTS,
    as_array,
    check_batch,
    check_product,
    check_register,
    check_ub_overload,
    first_true,
    kernel,
    placed,
    resolve_dtypes,
    runtime_check,
)
from .masks import element_mask

# (dst, src, index) rows of the seed's table 1.
GATHER_TYPES = (
    ("int16_t", "int8_t", "uint16_t"), ("int8_t", "int8_t", "uint16_t"),
    ("uint16_t", "uint8_t", "uint16_t"), ("uint8_t", "uint8_t", "uint16_t"),
    ("hifloat8_t", "hifloat8_t", "uint16_t"), ("fp8_e8m0_t", "fp8_e8m0_t", "uint16_t"),
    ("fp8_e5m2_t", "fp8_e5m2_t", "uint16_t"), ("fp8_e4m3fn_t", "fp8_e4m3fn_t", "uint16_t"),
    ("int16_t", "int16_t", "uint16_t"), ("int16_t", "int16_t", "uint32_t"),
    ("uint16_t", "uint16_t", "uint16_t"), ("uint16_t", "uint16_t", "uint32_t"),
    ("half", "half", "uint16_t"), ("half", "half", "uint32_t"),
    ("bfloat16_t", "bfloat16_t", "uint16_t"), ("bfloat16_t", "bfloat16_t", "uint32_t"),
    ("int32_t", "int32_t", "uint32_t"), ("uint32_t", "uint32_t", "uint32_t"),
    ("float", "float", "uint32_t"),
)

# Reg::Gather (its table 3, the int64_t / uint64_t rows left out).
REG_GATHER_TYPES = (
    ("int16_t", "int8_t", "uint16_t"), ("int16_t", "int16_t", "uint16_t"),
    ("uint16_t", "uint8_t", "uint16_t"), ("uint16_t", "uint16_t", "uint16_t"),
    ("half", "half", "uint16_t"), ("bfloat16_t", "bfloat16_t", "uint16_t"),
    ("int32_t", "int32_t", "uint32_t"), ("uint32_t", "uint32_t", "uint32_t"),
    ("float", "float", "uint32_t"),
)
# asc_gather from a vector register (c-reg page): T -> the index type of T's width.
REGISTER_GATHER_TYPES = {
    **{t: "uint8_t" for t in ("int8_t", "uint8_t", "hifloat8_t", "fp8_e8m0_t", "fp8_e5m2_t",
                              "fp8_e4m3fn_t")},
    **{t: "uint16_t" for t in ("int16_t", "uint16_t", "half", "bfloat16_t")},
    **{t: "uint32_t" for t in ("int32_t", "uint32_t")},
}


def _check_combination(dst: Format, src: Format, index: Format, where: str,
                       table: tuple = GATHER_TYPES, page: str = "seed table 1") -> None:
    if (dst.name, src.name, index.name) not in table:
        rows = "\n  ".join(f"dst={d}, src={s}, index={i}" for d, s, i in table)
        raise TypeError(f"{where}: (dst={dst.name}, src={src.name}, index={index.name}) is not a "
                        f"supported combination; supported ({page}):\n  {rows}")


def _check_range(index, active, n_src: int, top, mode: str, where: str):
    """Raise when an active lane reads at or past the end of src (eagerly, or as ``mode`` says),
    naming the first such lane (and its register: batch position) and what it reads.

    ``top``, each register's largest index (``_top``, from the gather's own pass), settles the
    usual case alone; only when it is out of range are the active lanes searched (a masked pass
    costs 8x a plain reduction on XLA's CPU backend).
    """
    shape = jnp.broadcast_shapes(index.shape, active.shape)
    if mode == "ignore" or math.prod(shape) == 0:  # an empty batch reads nothing
        return

    if n_src == 0:  # every lane reads past an empty src: only an active one faults
        first = first_true(jnp.broadcast_to(active, shape))
        runtime_check(jnp.any(active), lambda at: f"{where}: active index "
                      f"{placed(at, 'lane', 'register')} reads element 0.. but src has 0 "
                      f"elements (the hardware raises an address exception); an empty src "
                      f"needs every lane masked", first, mode=mode)
        return
    if n_src > np.iinfo(index.dtype).max:  # no index of this type reaches past the end
        return

    def past_end():  # active lanes at or past the end, compared in the index's own type
        return jnp.broadcast_to(active & (index >= np.asarray(n_src, index.dtype)), shape)

    def locate():  # the first such lane and its element: only when there is one
        at = first_true(past_end())
        return at, jnp.broadcast_to(index, shape)[tuple(at)].astype(jnp.uint32)

    def nowhere():
        return jnp.zeros(len(shape), jnp.int32), jnp.zeros((), jnp.uint32)

    # a lane past the end exists only if the largest index is
    concrete = not any(isinstance(x, jax.core.Tracer) for x in (index, active))
    if concrete and isinstance(top, jax.core.Tracer):  # vmap over src alone: still eager
        top = _top(index, active)
    top = jnp.max(top, initial=np.zeros((), jnp.uint32))
    if not concrete:  # (a vmapped mask too)
        bad = lax.cond(top >= np.uint32(n_src), lambda: jnp.any(past_end()),
                       lambda: jnp.zeros((), bool))
        first, element = lax.cond(bad, locate, nowhere)
    elif int(top) >= n_src:  # eagerly Python branches: an eager cond copies its operands
        bad = jnp.any(past_end())
        first, element = locate() if bool(bad) else nowhere()
    else:
        return
    runtime_check(bad, lambda w, at: f"{where}: active index {placed(at, 'lane', 'register')} "
                  f"reads element {w} but src has {n_src} elements (the hardware raises an "
                  f"address exception)", (element, first), mode=mode)


class _Spec(NamedTuple):
    src: Format
    dst: Format
    index: Format


def _place(spec: _Spec, values):
    """Gathered values (..., index lanes) as a dst register."""
    if spec.dst.width > spec.src.width:  # b8 -> b16: zero-extend the source byte
        return values.astype(spec.dst.bits_dtype)
    if spec.src.width < spec.index.width:  # value i to element 2i, odd elements 0
        values = jnp.stack([values, jnp.zeros_like(values)], axis=-1)
        return values.reshape(values.shape[:-2] + (spec.dst.lanes,))
    return values


def _take(data, index, active):
    """``data[index]`` on active lanes that lie inside ``data``, else 0."""
    if data.shape[0] == 0:  # nothing to read: every lane is 0 (an active one was refused)
        return jnp.zeros(jnp.broadcast_shapes(index.shape, active.shape), data.dtype)
    take = active & (index.astype(jnp.uint32) < np.uint32(data.shape[0]))
    return jnp.where(take, data[jnp.where(take, index, 0).astype(jnp.int32)],
                     jnp.zeros((), data.dtype))


def _top(index, active):
    """Each register's largest index (masked lanes too: a plain max is the cheap one), from
    which ``_check_range`` starts."""
    batch = jnp.broadcast_shapes(index.shape, active.shape)[:-1]
    top = jnp.max(index, axis=-1, initial=np.zeros((), index.dtype)).astype(jnp.uint32)
    return jnp.broadcast_to(top, batch)


def _take_with_top(data, index, active):
    return _take(data, index, active), _top(index, active)


def _forward(spec: _Spec, src, index, active):
    """``(dst, top)``: on CPU the values and ``top`` come from one pass of
    ``native.table_gather`` over the indices, in src's own dtype where dst is src's layout (a
    result of bits would cost XLA's CPU backend a copy to bitcast it); XLA's path moves bits."""
    src = jnp.asarray(src)

    def by_xla(src, index, active):
        values, top = _take_with_top(to_bits(src, spec.src), index, active)
        return from_bits(_place(spec, values), spec.dst), top

    placed = spec.dst.width != spec.src.width or spec.src.width < spec.index.width
    if placed or src.dtype != spec.dst.storage_dtype:
        values, top = native.table_gather(to_bits(src, spec.src), index, active, _take_with_top)
        return from_bits(_place(spec, values), spec.dst), top
    return native.table_gather(src, index, active, by_xla)


def _linear(spec: _Spec, t, index, active):
    top = jnp.zeros(jnp.broadcast_shapes(index.shape, active.shape)[:-1], jax.dtypes.float0)
    return _place(spec, _take(t, index, active)), top


_gather = kernel(_forward, _linear, num_diff=1)


def _from_ub(where: str, src: Any, index: Any, mask: Any, dst_dtype: Any, dtype: Any,
             config: Config | None, table: tuple = GATHER_TYPES,
             page: str = "seed table 1") -> jax.Array:
    config = check_product(config, REGISTER_PRODUCTS, where)
    src = as_array(src, where=where, arg="src")
    if src.ndim != 1:
        raise ValueError(f"{where}: src must be 1-D (the UB from the source address on), got "
                         f"shape {src.shape}")
    src_fmt = resolve_dtypes(src, dtype, where=where, arg="src")
    if src.shape[0] * src_fmt.bits > 8 * config.ub_bytes:  # SPEC 6: an address past the UB
        raise ValueError(f"{where}: src holds {src.shape[0] * src_fmt.bits // 8} bytes, more "
                         f"than the {config.ub_bytes}-byte Unified Buffer (Config.ub_bytes): "
                         f"src is the UB from the source address on, and an index past its "
                         f"end faults on the hardware")
    index = as_array(index, where=where, arg="index", accepts=sorted(
        {i for _, s, i in table if s == src_fmt.name}))
    idx_fmt = resolve(index.dtype, where=where, arg="index.dtype")
    if dst_dtype is None:  # src's type, or the one dst type the table gives (Reg::Gather int8)
        dsts = [d for d, s, i in table if (s, i) == (src_fmt.name, idx_fmt.name)]
        dst_dtype = dsts[0] if len(dsts) == 1 else src_fmt.name
    dst_fmt = resolve(dst_dtype, where=where, arg="dst_dtype")
    if dst_fmt.name == src_fmt.name:  # src's type in src's storage (fp8 bits given as uint8)
        dst_fmt = src_fmt
    _check_combination(dst_fmt, src_fmt, idx_fmt, where, table, page)
    index = check_register(index, idx_fmt, where=where, arg="index")
    active = element_mask(mask, idx_fmt, where=where)
    check_batch(where, index=index, mask=mask)
    dst, top = _gather(_Spec(src_fmt, dst_fmt, idx_fmt), src, index, active)
    _check_range(index, active, src.shape[0], top, config.out_of_range, where)
    return dst


def _wrapped(fmt: Format, index):
    """The page: an index past the register's lanes counts modulo them."""
    return index.astype(jnp.int32) % np.int32(fmt.lanes)


def _register_forward(fmt: Format, src, index):
    return from_bits(jnp.take_along_axis(to_bits(src, fmt), _wrapped(fmt, index), axis=-1), fmt)


def _register_linear(fmt: Format, t, index):
    return jnp.take_along_axis(t, _wrapped(fmt, index), axis=-1)


_register_gather = kernel(_register_forward, _register_linear, num_diff=1)


def _from_register(where: str, src: Any, index: Any, dst_dtype: Any, dtype: Any,
                   config: Config | None) -> jax.Array:
    check_product(config, REGISTER_PRODUCTS, where)
    fmt = resolve_dtypes(src, dtype, where=where, arg="src")
    if dst_dtype is not None and resolve(dst_dtype, where=where, arg="dst_dtype").name != fmt.name:
        raise TypeError(f"{where}: the register form writes src's type {fmt.name}; dst_dtype="
                        f"{dst_dtype!r} differs")
    wanted = REGISTER_GATHER_TYPES.get(fmt.name)
    index = as_array(index, where=where, arg="index", accepts=(wanted,) if wanted else ())
    idx_fmt = resolve(index.dtype, where=where, arg="index.dtype")
    if REGISTER_GATHER_TYPES.get(fmt.name) != idx_fmt.name:
        rows = ", ".join(f"{t} by {i}" for t, i in REGISTER_GATHER_TYPES.items())
        raise TypeError(f"{where}: a {fmt.name} register gathered by a {idx_fmt.name} index is "
                        f"not a supported register form; supported (c-reg page): {rows}")
    src = check_register(src, fmt, where=where, arg="src")
    index = check_register(index, idx_fmt, where=where, arg="index")
    batch = check_batch(where, src=src, index=index)
    return _register_gather(fmt, jnp.broadcast_to(src, batch + src.shape[-1:]),
                            jnp.broadcast_to(index, batch + index.shape[-1:]))


def asc_gather(*args: Any, dst_dtype: Any = None, dtype: Any = None, mask_state: Any = None,
               config: Config | None = None) -> jax.Array:
    """``asc_gather``, every form the pages give (``asc_gather_sync``: the UB first-n form
    alone), told apart by the number of arguments as C++ tells its overloads apart.

    Registers (950, c-reg page; the destination register is returned):

    * ``asc_gather(src, index, mask)``, from the UB (the seed): ``dst[i] = src[index[i]]`` on
      active lanes, else 0. ``src`` is a 1-D array holding the UB contents from the (32-byte
      aligned) source address onward, in the source type; name the type with ``dtype=`` when its
      storage is ambiguous (``"hifloat8_t"`` is stored as uint8). ``index`` is a uint16
      ``(..., 128)`` or uint32 ``(..., 64)`` register of element offsets; ``mask`` is read per
      index lane (hardware form ``(..., 256)`` or ``(..., index lanes)``). ``dst_dtype`` picks
      the destination type when the seed's table offers several (``"int16_t"`` from int8 src:
      zero extension, -40 -> 216). When the data is narrower than the index (b8 data, uint16
      index; b16 data, uint32 index) value i goes to dst element 2i and odd elements are 0.
      (Ascend C offers the two widening rows only in the reference-output form; a functional
      port returns dst either way.) An active lane at or past the end of ``src`` raises
      ``IndexError``; under ``jit`` see ``Config.out_of_range``. Inactive lanes are never
      checked.
    * ``asc_gather(src, index)``, from a vector register: ``dst[i] = src[index[i] % lanes]``
      (the page: an index past the register wraps), index of T's width (uint8 / uint16 /
      uint32), no mask.

    UB -> UB (Atlas A2 / A3, c-memory page; ``asc_gather_sync`` is the first-n call): srcBaseAddr
    0, offsets in bytes, as ``ascjax.gather``.

    {ub_forms}

    Bits are moved unchanged (NaN payloads, -0, subnormals). Differentiable in ``src`` (and
    the UB forms' ``dst``), floating types: the cotangent of dst lane i is added to the
    element it was read from.
    """
    where = "asc_gather"
    if mask_state is not None and len(args) != 5:
        raise TypeError(f"{where}: mask_state applies to the repeat form (dst, src, src_offset, "
                        f"dst_repeat_stride, repeat) only")
    if len(args) in (4, 5):
        if dst_dtype is not None or dtype is not None:
            raise TypeError(f"{where}: the UB -> UB forms take T from dst and src; dst_dtype / "
                            f"dtype apply to the register forms")
        check_ub_overload(config, UB_GATHER_TYPES, where, len(args),
                          f"{where}(src, index, mask) or {where}(src, index)")
        dst, src, src_offset, *rest = args
        return ub_gather(dst, src, src_offset, tuple(rest), mask_state, config)
    if len(args) == 3:
        return _from_ub(where, *args, dst_dtype, dtype, config)
    if len(args) == 2:
        return _from_register(where, *args, dst_dtype, dtype, config)
    raise TypeError(f"{where}: expected (src, index, mask) or (src, index) (registers), or (dst, "
                    f"src, src_offset, count) or (dst, src, src_offset, dst_repeat_stride, repeat) "
                    f"(UB); got {len(args)} positional arguments")


asc_gather.__doc__ = asc_gather.__doc__.format(ub_forms=UB_FORMS)


def reg_gather(base_addr: Any, index: Any, mask: Any, *, dst_dtype: Any = None,
               dtype: Any = None, config: Config | None = None) -> jax.Array:
    """``AscendC::Reg::Gather(dstReg, baseAddr, index, mask)``: ``dstReg[i] =
    baseAddr[index[i]]`` on active lanes, else 0; the destination register is returned.

    The seed ``asc_gather(src, index, mask)``'s kernel and arguments (``base_addr`` the UB from
    the base address on; ``dst_dtype`` / ``dtype`` as there) over Reg::Gather's type table
    (int16_t / uint16_t from int8_t / uint8_t zero-extended; no 8-bit dst, no uint32 index for
    16-bit data). 950 only.
    """
    where = "reg_gather"
    return _from_ub(where, base_addr, index, mask, dst_dtype, dtype, config, REG_GATHER_TYPES,
                    "Reg::Gather table 3")
