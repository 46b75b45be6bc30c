"""Helpers every instruction shares: checks, the element adder, the adjacent-pair tree and
gradients."""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import logging
import math
import threading
from collections.abc import Callable, Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax import custom_batching, lax
from jax._src import core as jax_core  # trace_ctx: which trace a group's checks belong to
from jax.experimental import checkify

from ..config import Config, resolve_config
from ..formats import Format, finfo, resolve
from ..numerics.add import canonical_nan, float_add, half_add, int_add, is_tiny, native_add
from ..numerics.bits import (
    INF32,
    MAG32,
    QNAN32,
    SIGN32,
    U32,
    from_bits,
    from_carrier,
    keep_where,
    quiet_nan_bits,
    to_bits,
    to_carrier,
)
from ..numerics.rounding import round_carrier


def _numpy_name(name: str) -> str:
    return "bool_" if name == "bool" else resolve(name).storage_dtype.name


# The cast a 64-bit array's error suggests, by its kind: the widest accepted type of that kind
# keeps most values (float64 data cast to int16 would be zeros).
_CLOSEST = {"f": ("float", "half", "bfloat16_t"), "i": ("int32_t", "int16_t", "int8_t"),
            "u": ("uint32_t", "uint16_t", "uint8_t")}


def _closest(wide: np.dtype, accepts: Sequence[str]) -> str:
    return next((name for name in _CLOSEST[wide.kind] if name in accepts), accepts[0])


def as_array(x: Any, *, where: str, arg: str, accepts: Sequence[str] = ()) -> jax.Array:
    """``x`` as a JAX array, or a TypeError naming the argument: None, a string and anything
    else JAX cannot hold, and 64-bit arrays, which JAX (64-bit types off) would narrow to 32
    bits silently (int64 2**40 + 3 becomes 3). ``accepts`` names the types the caller takes for
    ``arg`` (C names, e.g. ``("uint16_t",)``, or ``("bool",)``), so the hint is a cast that
    will then be taken. A Python list (or tuple, nested) of numbers has no dtype: it is
    converted, exactly and checked, to the one type in ``accepts``, else refused (``_list_as``),
    closed over under ``jit`` too (a list passed as a traced argument arrives as JAX scalars)."""
    wide = np.dtype(getattr(x, "dtype", np.int8))
    if wide.itemsize == 8 and wide.kind in "iuf" and not jax.config.jax_enable_x64:
        narrow = {"f": "float32", "i": "int32", "u": "uint32"}[wide.kind]
        hint = (f"e.g. {arg}.astype(np.{narrow})" if not accepts else
                f"to {' or '.join(accepts)}, the {arg} type{'s' if len(accepts) > 1 else ''} "
                f"taken here, e.g. {arg}.astype(np.{_numpy_name(_closest(wide, accepts))})")
        raise TypeError(f"{where}: {arg} has dtype {wide}, which JAX (64-bit types off) would "
                        f"narrow to {narrow} silently; the pages' 64-bit rows (int64_t / "
                        f"uint64_t) are not emulated: cast it yourself, {hint}, after checking "
                        f"the values fit")
    if x is None or isinstance(x, str | bytes):
        raise TypeError(f"{where}: {arg} is {x!r}; expected an array")
    leaves = _python_leaves(x)
    if leaves is not None:
        return jnp.asarray(_list_as(leaves, accepts, where=where, arg=arg))
    try:
        return jnp.asarray(x)
    except (TypeError, ValueError) as error:
        raise TypeError(f"{where}: {arg} is not an array JAX can hold ({error})") from None


def _python_leaves(x: Any) -> np.ndarray | None:
    """The elements of ``x`` (an object array of its shape) when ``x`` is a list or tuple,
    nested or not, of Python bools, ints and floats only: numbers with no dtype of their own.
    None for anything else (arrays, lists holding arrays or NumPy scalars, ragged lists)."""
    if not isinstance(x, list | tuple):
        return None
    leaves = np.array(x, dtype=object)  # ragged: an element is a list, refused below
    if not all(type(v) in (bool, int, float) for v in leaves.flat):
        return None
    return leaves


_FLOAT64_MAX = float(np.finfo(np.float64).max)


def _built_as(name: str, arg: str) -> str:
    """How to build ``arg`` as an array of type ``name``."""
    dtype = np.dtype(bool) if name == "bool" else resolve(name).storage_dtype
    module = "np" if dtype.kind in "biuf" else "ml_dtypes"
    return f"np.array({arg}, {module}.{dtype.name}) for {name}"


def _list_as(leaves: np.ndarray, accepts: Sequence[str], *, where: str, arg: str) -> np.ndarray:
    """A Python list of numbers (``_python_leaves``) as the one type ``arg`` takes, every value
    exactly: a ValueError names the first value that does not fit. A TypeError where ``arg``
    takes several types or any (data): a list has no dtype, and JAX's pick (int32, float32)
    would be a guess, then read as the caller's choice."""
    if len(accepts) != 1:
        floats = any(type(v) is float for v in leaves.flat)
        kinds = accepts or (("half", "float", "bfloat16_t") if floats else
                            ("int8_t", "uint8_t", "int16_t", "uint16_t", "int32_t", "uint32_t"))
        # the types of the list's kind first: a list of floats is most likely meant as one
        kinds = [k for k in kinds if k == "bool" or resolve(k).is_float == floats] or kinds
        takes = f", and {arg} takes {' or '.join(accepts)}" if accepts else ""
        raise TypeError(f"{where}: {arg} is a Python list, which has no dtype of its own{takes}; "
                        f"build it as an array of the type you mean: "
                        f"{', '.join(_built_as(k, arg) for k in kinds)}")
    name = accepts[0]
    if name == "bool":
        for at in np.ndindex(leaves.shape):
            if type(leaves[at]) is not bool:
                raise TypeError(f"{where}: {arg} is a Python list holding {leaves[at]!r} at "
                                f"{list(at)}; a bool mask is built from True / False (from 0/1 "
                                f"values: np.array({arg}) != 0)")
        return leaves.astype(bool)
    fmt = resolve(name)
    dtype = fmt.storage_dtype
    if fmt.kind != "float" and not fmt.packed:
        info = np.iinfo(dtype)
        for at in np.ndindex(leaves.shape):
            v = leaves[at]
            if type(v) is not int or not info.min <= v <= info.max:
                raise ValueError(f"{where}: {arg}{list(at)}={v!r} is not a {name} value "
                                 f"(integers in [{info.min}, {info.max}])")
        return leaves.astype(dtype)
    if fmt.kind == "float" and dtype.kind != "u":  # not hifloat8 / fp4: a NumPy type rounds
        wide = np.array([v if not abs(v) > _FLOAT64_MAX else math.inf if v > 0 else -math.inf
                         for v in leaves.flat], np.float64)  # an int past float64: inf
        with np.errstate(all="ignore"):
            out = wide.astype(dtype).reshape(leaves.shape)
        for at in np.ndindex(leaves.shape):
            v, got = leaves[at], float(out[at])
            if type(v) is bool or not (got == v or math.isnan(got) and math.isnan(v)):
                raise ValueError(f"{where}: {arg}{list(at)}={v!r} is not exactly a {name} "
                                 f"value (one it holds: finite up to {finfo(fmt).max}, or "
                                 f"inf / nan where it has them)")
        return out
    raise TypeError(f"{where}: {arg} is a Python list; {name} has no NumPy type to take its "
                    f"values exactly: pass the bit patterns, np.array({arg}, np.{dtype.name})")


def check_register(x: Any, fmt: Format, *, where: str, arg: str) -> jax.Array:
    """``x`` as a register array ``(..., fmt.lanes)``, or a ValueError naming the argument."""
    x = as_array(x, where=where, arg=arg)
    if x.ndim == 0 or x.shape[-1] != fmt.lanes:
        raise ValueError(f"{where}: {arg} has shape {x.shape}; a vector_{fmt.name} register is "
                         f"(..., {fmt.lanes}) ({fmt.lanes} lanes of {fmt.width} bytes)")
    return x


def check_batch(where: str, **arrays) -> tuple:
    """The batch shape the arrays' leading axes broadcast to, or a ValueError naming them."""
    shapes = {arg: tuple(np.shape(x))[:-1] for arg, x in arrays.items()}
    try:
        return np.broadcast_shapes(*shapes.values())
    except ValueError:
        listed = ", ".join(f"{arg} {np.shape(x)}" for arg, x in arrays.items())
        raise ValueError(f"{where}: the batch axes (all but the last) of {listed} do not "
                         f"broadcast together") from None


def check_supported(fmt: Format, table: Sequence[str], *, where: str, arg: str = "dtype",
                    product: str | None = None) -> None:
    if fmt.name not in table:
        on = "" if product is None else f" on product {product!r}"
        raise TypeError(f"{where}: {arg} {fmt.name} is not supported{on}; supported: "
                        f"{list(table)}")


# Every register call (a RegTensor / vector_T operand: the c-reg and cpp-reg pages, the seed
# pages): each of those pages lists the Ascend 950PR/950DT alone as supported.
REGISTER_PRODUCTS = ("950",)


def check_product(config: Config | None, products: Sequence[str], where: str) -> Config:
    """The resolved Config, or a TypeError when the call is not on its product."""
    config = resolve_config(config, where)
    if config.product not in products:
        raise TypeError(f"{where}: not available on product {config.product!r}; available on "
                        f"{list(products)}")
    return config


def check_ub_overload(config: Config | None, products: Sequence[str], where: str, got: int,
                      register_forms: str) -> None:
    """A C name whose overloads the argument count tells apart (``asc_gather``): ``got``
    arguments picked its UB form; on a product without it, a TypeError that says so and
    gives the register forms, where a porter most often passed the returned dst."""
    product = resolve_config(config, where).product
    if product not in products:
        raise TypeError(f"{where}: {got} positional arguments is the UB form, which the pages "
                        f"give on {', '.join(products)}; on product {product!r} call "
                        f"{register_forms}: a register form returns the destination register, "
                        f"which is not passed")


def traced_hint(value: Any) -> str:
    """How to keep an immediate static, when ``value`` is a traced one."""
    if not isinstance(value, jax.core.Tracer):
        return ""
    return ("; under jax.jit pass it as a static argument (static_argnums / static_argnames, or "
            "a functools.partial)")


def check_int(value: Any, lo: int, hi: int, *, where: str, arg: str) -> int:
    """A static integer argument in [lo, hi] (hardware immediates are Python ints here)."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{where}: {arg} must be a Python int (a static value), got {value!r}"
                        f"{traced_hint(value)}")
    if not lo <= int(value) <= hi:
        raise ValueError(f"{where}: {arg}={value} is outside the valid range [{lo}, {hi}]")
    return int(value)


def check_flag(value: Any, *, where: str, arg: str, meaning: str = "") -> bool:
    """A C++ ``bool`` parameter: True or False, or 0 or 1 as C++ code may write it (any other
    int would be silently true there; here it is an error). ``meaning`` says what each does."""
    if isinstance(value, (bool, np.bool_)) or (isinstance(value, (int, np.integer))
                                               and int(value) in (0, 1)):
        return bool(value)
    detail = f" ({meaning})" if meaning else ""
    raise TypeError(f"{where}: {arg} must be a bool{detail}, got {value!r}{traced_hint(value)}")


@dataclasses.dataclass(frozen=True)
class Adder:
    """Adds ``src`` elements into ``dst``-typed results, rounding where the hardware rounds.

    Floats work on uint32 float32 carriers (``numerics.bits``); integers are widened to ``dst``
    first
    (int16 -> int32, uint16 -> uint32) and wrap or saturate per ``config.int_overflow``.
    """

    src: Format
    dst: Format
    config: Config
    carriers: bool = False  # half sums on float32 carriers too (their levels keep NaN quiet)

    @property
    def narrow(self) -> bool:
        """Half into half, IEEE overflow: the working values are the half patterns (uint16),
        added by ``half_add``: the same bits as on carriers, in vectors half as wide."""
        return (self.src.name == self.dst.name == "half" and not self.carriers
                and self.config.float_overflow == "ieee")

    def load(self, x):
        if self.narrow:  # a NaN is made canonical by the first add it meets
            return to_bits(x, self.src)
        if self.src.is_float:
            return to_carrier(to_bits(x, self.src), self.src)
        return jnp.asarray(x).astype(self.dst.storage_dtype)

    def add(self, a, b):
        if self.narrow:
            return half_add(a, b)
        if self.dst.is_float:
            return float_add(a, b, self.dst, self.config)
        return int_add(a, b, self.dst, self.config)

    def tree(self, values, *, levels: list | None = None, depth: int | None = None,
             leading: bool = False):
        """``pair_tree`` of ``add`` over the last axis, bit-exact, with a fast path.

        For float and bfloat16 the exact add pays for subnormal handling on every element.
        When no input is tiny (``is_tiny``), native float32 adds are already exact, so
        the tree runs on them and the exact tree runs only if some input needs it.

        ``leading``: the tree runs over a leading axis instead, exact adds only: each level adds
        two contiguous slabs. Inside the LocalTensor kernels (strided loads, stores into dst)
        XLA's CPU backend runs this 3-4x faster than the minor-axis tree behind a ``cond``;
        for a bare register batch the ``cond`` fast path is faster. Same pairs, same bits.
        """
        if leading and levels is None and values.ndim > 1 and values.shape[-1] > 2:
            out = pair_tree(jnp.moveaxis(values, -1, 0), self.add, depth=depth, axis=0)
            return out if depth is None else jnp.moveaxis(out, 0, -1)
        if (levels is not None or self.dst.name not in ("float", "bfloat16_t")
                or depth == 1 or values.shape[-1] == 2):  # one level: exact adds beat a cond
            return pair_tree(values, self.add, levels=levels, depth=depth)

        def fast_add(a, b):
            return round_carrier(native_add(a, b), self.dst)

        def fast():
            return canonical_nan(pair_tree(values, fast_add, depth=depth))

        def exact():
            return pair_tree(values, self.add, depth=depth)

        return lax.cond(jnp.any(is_tiny(values)), exact, fast)

    def store(self, w):
        if self.narrow:
            return from_bits(w, self.dst)
        if self.dst.is_float:
            return from_bits(from_carrier(w, self.dst), self.dst)
        return w

    def zeros(self, shape):
        dtype = jnp.uint16 if self.narrow else U32 if self.dst.is_float else \
            self.dst.storage_dtype
        return jnp.zeros(shape, dtype)

    def masked(self, values, active):
        """Working values with masked-off lanes replaced as ``config.masked_lanes`` says."""
        if isinstance(active, np.ndarray) and active.all():  # a static full mask: no select
            return values
        fill = 0
        if self.dst.is_float and self.config.masked_lanes == "skip":
            # -0: x + (-0) == x for every x, so the lane takes no part
            fill = np.uint16(0x8000) if self.narrow else SIGN32
        return keep_where(active, values, _unfoldable(fill, values, active))

    def reduce_blocks(self, src, active, block: int, *, levels: list | None = None,
                      leading: bool = False):
        """Adjacent-pair tree sums of each ``block`` consecutive lanes of ``src`` (masked).

        Returns working values ``(..., lanes // block)``. For 16-bit half/int16/uint16 sources
        the first level reads each (even, odd) pair as one 32-bit word: the same adds, but
        contiguous loads instead of stride-2 ones, which XLA's CPU backend vectorizes badly.
        """
        lanes = src.shape[-1]
        if self.narrow and levels is None and block > 1:
            pairs = self._first_half_level(src, active)
            return self.tree(pairs.reshape(src.shape[:-1] + (lanes // block, block // 2)),
                             leading=leading)
        if levels is None and self.src.name in ("half", "int16_t", "uint16_t") and block > 1:
            even, odd = self._load_pairs(src, active)
            pairs = self.add(even, odd).reshape(src.shape[:-1] + (lanes // block, block // 2))
            return self.tree(pairs, leading=leading)
        if (levels is None and not leading and self.dst.name in ("float", "bfloat16_t")
                and block == lanes and lanes > 2 and not lanes & (lanes - 1)):
            # A whole register's float tree over the flat lanes: 1.2-1.4x faster than over a
            # reshape (float32 asc_reduce_sum); a DataBlock's 8 lanes were slower so (0.9x).
            return self.flat_sums(src, active, block)
        w = self.masked(self.load(src), active)
        return self.tree(w.reshape(src.shape[:-1] + (lanes // block, block)), levels=levels,
                         leading=leading)

    def flat_sums(self, x, active, group: int):
        """Adjacent-pair tree sums of every run of ``group`` (a power of two, > 1) consecutive
        float elements of the last axis of ``x`` (src values), masked by ``active`` (a static
        mask or an array broadcastable to ``x``), as working values ``(..., n // group)``:
        ``reduce_blocks``' tree over a flat axis (``flat_pairs``: no reshape), the lanes
        loaded after the first slicing (XLA's CPU backend computes a loaded input into a buffer
        of its own first, 2-6x slower).

        float / bfloat16: native adds on the lanes with every tiny input made a NaN, in one
        pass; only if a result is a NaN (a tiny input, or a real NaN) does the exact tree run
        (``tree``'s fast path without its second pass over the input: 1.4x faster).
        """
        assert self.dst.is_float and group > 1 and not group & (group - 1)
        if self.narrow:
            return flat_pairs(self._first_half_level(x, active), group // 2, half_add)
        # the mask sliced as the lanes are, a static one staying NumPy (a full one: no select)
        shape = jnp.broadcast_shapes(np.shape(active), x.shape[x.ndim - np.ndim(active):])
        on = (np.broadcast_to(active, shape) if isinstance(active, np.ndarray)
              else jnp.broadcast_to(active, shape))

        def lanes(part):
            w = self.load(x[..., part::2])
            static_full = isinstance(on, np.ndarray) and on[..., part::2].all()
            return w if static_full else self.masked(w, on[..., part::2])

        def tree(add):  # each use reads the lanes afresh: shared, they would be buffered
            return flat_pairs(add(lanes(0), lanes(1)), group // 2, add)

        if self.dst.name not in ("float", "bfloat16_t") or group == 2:
            return tree(self.add)

        def fast_add(a, b):
            return round_carrier(native_add(a, b), self.dst)

        def flagged(part):  # a tiny input poisons its group's native sum
            w = lanes(part)
            return jnp.where(is_tiny(w), np.uint32(QNAN32), w)

        fast = flat_pairs(fast_add(flagged(0), flagged(1)), group // 2, fast_add)
        suspect = jnp.any((fast & MAG32) > INF32)
        return lax.cond(suspect, lambda: tree(self.add), lambda: fast)

    def _first_half_level(self, src, active):
        """The pair sums (e0+e1), (e2+e3), ... of a half register, masked, as half patterns.

        The pairs are strided slices of the half array itself, widened inside the add: XLA's
        CPU backend then fuses the whole tree into one loop over the input (4-6x faster than
        after a bitcast or a select of the whole input, which it computes into a buffer first).
        """
        x = jnp.asarray(src)
        if not (isinstance(active, np.ndarray) and active.all()):
            x = self.masked(to_bits(x, self.src), active)
        return half_add(x[..., 0::2], x[..., 1::2])

    def _load_pairs(self, src, active):
        fill = np.uint16(0)
        if self.src.is_float and self.config.masked_lanes == "skip":
            fill = np.uint16(0x8000)
        bits = to_bits(src, self.src)
        if not (isinstance(active, np.ndarray) and active.all()):
            bits = keep_where(active, bits, _unfoldable(fill, bits, active))
        words = lax.bitcast_convert_type(split_last(bits, 2), U32)
        if self.src.is_float:  # little-endian: element 2k is the low half of word k
            return (to_carrier(words & np.uint32(0xFFFF), self.src),
                    to_carrier(words >> np.uint32(16), self.src))
        if self.src.kind == "uint":
            return words & np.uint32(0xFFFF), words >> np.uint32(16)
        signed = lax.bitcast_convert_type(words, jnp.int32)
        return (signed << 16) >> 16, signed >> 16


def _unfoldable(fill, values, active):
    """A masked lane's ``fill`` word, hidden from the compiler where the mask is static.

    With a static mask the masked lanes are compile-time constants, and XLA's algebraic
    simplifier folds ``x + 0.0`` to ``x``: wrong for x = -0 (IEEE: -0 + +0 = +0). A fill that
    depends on ``values`` (always ``fill``) cannot be folded into the adds.
    """
    if not isinstance(active, np.ndarray) or values.size == 0:
        return fill
    hidden = (~_opaque_true(values)).astype(values.dtype)  # always 0
    return jnp.asarray(fill, values.dtype) | hidden


def materialize(x):
    """``x``, computed into its own buffer before any consumer runs.

    XLA's CPU backend fuses a reduction tree into a padded output's loop, where it loses
    vectorization (5x slower), and it expands ``optimization_barrier`` away. A ``cond`` on a
    predicate it cannot fold (always true) keeps the fusion boundary on every backend.
    """
    return computed_apart(lambda a: a, x)


def computed_apart(fn: Callable, x):
    """``fn(x)``, computed into buffers of its own (``materialize``) by a loop that writes them
    directly: the outputs are not copied, and the unwritten branch's zeros never run."""
    if x.size == 0:
        return fn(x)

    def zeros(a):
        return jax.tree.map(lambda o: jnp.zeros(o.shape, o.dtype), jax.eval_shape(fn, a))

    return lax.cond(_opaque_true(x), fn, zeros, x)


def _opaque_true(x):
    """A scalar True that no compiler can fold: it depends on ``x``'s first element."""
    first = x.reshape(-1)[0]
    if jnp.iscomplexobj(first):
        first = lax.real(first)
    word = lax.bitcast_convert_type(first, U32) if first.dtype.itemsize == 4 else \
        first.astype(jnp.int32)
    return (word | 1) != 0


def pad_low(values, lanes: int):
    """``values`` ``(..., k)`` padded with zeros to ``(..., lanes)``."""
    return jnp.pad(values, [(0, 0)] * (values.ndim - 1) + [(0, lanes - values.shape[-1])])


def place_low(values, lanes: int):
    """Registers ``(..., lanes)`` whose lowest lanes hold ``values`` ``(..., k)`` and whose
    other lanes are 0 (+0), every bit moved unchanged (no arithmetic, no select).

    An in-place update of a zero array at an offset XLA cannot fold (always 0): the update's
    loop runs over ``values`` alone, with their producer fused into it. A pad, a concatenate or
    an update at a constant offset (XLA makes it a pad) runs the producer inside a loop over
    every lane with a branch per element, which XLA's CPU backend does not vectorize (1.6x
    slower for a pair sum); ``materialize`` before the pad costs a copy. Any op after the
    update (a bitcast) fuses it back into one loop over every lane: callers pass values of the
    final type, except where the backend would not move that type's bits unchanged: XLA's
    CPU backend updates bfloat16 through float32, quieting NaN payloads, so other float types
    than float32 and half move as bit patterns (bfloat16 also from a buffer of them: on an
    AVX-512 machine the bitcast alone still went through float32). Not for a linear (tangent)
    function: a transpose cannot use an offset computed from the tangent. Under ``vmap`` the
    batch is one more leading axis of the same update (a batched offset would make it a
    scatter).
    """
    if values.size == 0:
        return pad_low(values, lanes)
    if jnp.issubdtype(values.dtype, jnp.floating) and values.dtype not in (jnp.float32,
                                                                           jnp.float16):
        unsigned = np.dtype(f"uint{values.dtype.itemsize * 8}")
        out = place_low(lax.bitcast_convert_type(values, unsigned), lanes)
        return bfloat16_kept(lax.bitcast_convert_type(out, values.dtype))
    return _update_low(lanes)(values)


@functools.cache
def _update_low(lanes: int):
    @custom_batching.custom_vmap
    def update(values):
        zero = (~_opaque_true(values)).astype(jnp.int32)
        return lax.dynamic_update_slice(jnp.zeros(values.shape[:-1] + (lanes,), values.dtype),
                                        values, (zero,) * values.ndim)

    @update.def_vmap
    def _batched(axis_size, in_batched, values):
        return update(values), True  # the batch axis (0) is one more leading axis

    return update


def pair_tree(values, add: Callable, *, levels: list | None = None, depth: int | None = None,
              axis: int = -1):
    """Adjacent-pair tree over the last axis (a power of two): (e0+e1), (e2+e3), ... per level.

    The order is written out so that no compiler can reassociate it. If ``levels`` is a list,
    every level's values (the input first) are appended to it. ``depth`` stops after that many
    levels and returns the last level whole (``depth=1``: the pair sums); by default the tree
    runs to one value, returned without its axis. ``axis=0`` runs it over the first axis.
    """
    def half(i):
        return values[i::2] if axis == 0 else values[..., i::2]

    if levels is not None:
        levels.append(values)
    for _ in range(depth if depth is not None else values.shape[axis].bit_length() - 1):
        values = add(half(0), half(1))
        if levels is not None:
            levels.append(values)
    if depth is not None:
        return values
    return values[0] if axis == 0 else values[..., 0]


def padded_pair_tree(values, add: Callable, zero):
    """Adjacent-pair tree over the last axis of any length >= 1, padded with ``zero``.

    The hardware sums a partly filled register, or a count of repeat results that is not a
    power of two, with the empty lanes as +0: padding to the next power of two *is* its order.
    """
    n = values.shape[-1]
    width = 1 << (n - 1).bit_length()
    if width != n:
        pad = jnp.broadcast_to(jnp.asarray(zero, values.dtype), values.shape[:-1] + (width - n,))
        values = jnp.concatenate([values, pad], axis=-1)
    return pair_tree(values, add)


def sequential_sum(values, add: Callable, *, unroll: int = 1):
    """``(((v0 + v1) + v2) + ...)`` over the last axis (length >= 1), as a ``lax.scan``.

    One add per step in index order; a scan compiles to a loop, so a long sum does not unroll
    into a huge program.
    """
    if values.shape[-1] == 1:
        return values[..., 0]
    rest = jnp.moveaxis(values[..., 1:], -1, 0)
    total, _ = jax.lax.scan(lambda acc, v: (add(acc, v), None), values[..., 0], rest,
                            unroll=min(unroll, rest.shape[0]))
    return total


def kernel(forward: Callable, linear: Callable | None = None, *, num_diff: int = 1) -> Callable:
    """An instruction body: jitted once per static ``spec``, differentiable as the exact op.

    ``forward(spec, *arrays)`` computes the bits; ``spec`` is a hashable static value (formats,
    config, shapes). ``linear(spec, *tangents, *rest)`` is the derivative of the exact real
    operation, linear in the tangents of the first ``num_diff`` arrays (rounding passes
    gradients straight through); JAX transposes it for reverse mode. Jitting the body makes
    eager calls one compiled dispatch instead of dozens of small ones.
    """
    forward = _bfloat16_kept(forward)
    if linear is None:
        return jax.jit(forward, static_argnums=0)
    body = jax.custom_jvp(forward, nondiff_argnums=(0,))

    def jvp(spec, primals, tangents):
        diff = [jnp.zeros_like(p) if t.dtype == jax.dtypes.float0 else t
                for p, t in zip(primals[:num_diff], tangents[:num_diff], strict=True)]
        return body(spec, *primals), linear(spec, *diff, *primals[num_diff:])

    body.defjvp(jvp)
    return jax.jit(body, static_argnums=0)


def _bfloat16_kept(forward: Callable) -> Callable:
    """``forward`` whose bfloat16 outputs get a buffer of their own as bit patterns first.

    XLA's CPU backend runs a fusion that moves bfloat16 values through a vector shuffle (a
    broadcast, a concatenate of copies: a zero stride) in float32, flushing subnormals and
    quieting NaN payloads (0x8074 -> 0x8000), even when the fusion moves uint16 patterns and
    only its last op is the bitcast to bfloat16. A bitcast of a buffer moves every bit.
    """
    @functools.wraps(forward)
    def kept(spec, *arrays):
        return jax.tree.map(bfloat16_kept, forward(spec, *arrays))

    return kept


def bfloat16_kept(x):
    """``x`` as is, or a bfloat16 ``x`` from a buffer of its bit patterns (see
    ``_bfloat16_kept``)."""
    if x.dtype != jnp.bfloat16 or x.size == 0:
        return x
    bits = materialize(lax.bitcast_convert_type(x, jnp.uint16))
    return lax.bitcast_convert_type(bits, jnp.bfloat16)


def resolve_dtypes(x, dtype, *, where: str, arg: str, accepts: Sequence[str] = ()) -> Format:
    """Format of ``x``: ``dtype`` (an Ascend type name) when given, checked against x's storage.

    A uint8 ``x`` with ``dtype`` an 8-bit float type (fp8_e5m2_t, fp8_e4m3fn_t, fp8_e8m0_t)
    holds that type's bit patterns, as an NPU dump does: the format comes back stored as uint8,
    as hifloat8_t always is, so the kernels move the bytes unconverted (``to_bits`` /
    ``from_bits`` are identities) and return uint8. A uint8 array without ``dtype`` stays
    uint8_t. A 64-bit array is refused (``as_array``).
    """
    x = as_array(x, where=where, arg=arg, accepts=accepts)  # accepts: a list's hint
    if dtype is None:
        return resolve(x.dtype, where=where, arg=f"{arg}.dtype")
    fmt = resolve(dtype, where=where)
    actual = np.dtype(x.dtype)
    if actual == fmt.storage_dtype:
        return fmt
    if fmt.is_float and fmt.bits == 8 and actual == np.uint8:
        # Bits only: no kernel reads an 8-bit float's values through its storage dtype, where
        # an integer's (int8_t) values would change meaning read from uint8.
        return dataclasses.replace(fmt, storage=np.uint8)
    raw = " (or as its bit patterns, uint8)" if fmt.is_float and fmt.bits == 8 else ""
    raise TypeError(f"{where}: {arg} has dtype {actual}, but {fmt.name} is stored as "
                    f"{fmt.storage_dtype}{raw}")


def first_true(bad):
    """Where ``bad`` (ndim >= 1) is first True, row-major, as int32 ``(bad.ndim,)``: the batch
    indices (which register or tensor), then the index in the last axis (which lane). An empty
    ``bad`` (an empty batch) has no True: zeros."""
    if bad.size == 0:
        return jnp.zeros(bad.ndim, jnp.int32)
    return jnp.stack(jnp.unravel_index(jnp.argmax(bad.reshape(-1)), bad.shape)).astype(jnp.int32)


def placed(at, noun: str, batch: str) -> str:
    """``"lane 5 of register 2"`` from ``first_true``'s ``(batch indices..., k)``: values, or
    the placeholders of a checkify message; without batch axes ``"lane 5"``."""
    *outer, k = at
    if not outer:
        return f"{noun} {k}"
    return f"{noun} {k} of {batch} {batch_index(outer)}"


def batch_index(outer) -> str:
    """A batch position as a message names it: ``2``, or ``(1, 2)`` over several axes."""
    return str(outer[0]) if len(outer) == 1 else "(" + ", ".join(map(str, outer)) + ")"


def runtime_check(bad, message: Callable[..., str], detail, *, mode: str = "raise") -> None:
    """A fault that depends on values (an address past the UB): ``bad`` is a bool array.

    Concrete values raise ``IndexError`` at once. Under ``jit`` (values unknown to Python):
    ``mode="raise"`` raises from a host callback when the computation runs, ``"checkify"``
    emits a ``checkify.check`` (the caller wraps with ``checkify.checkify``), ``"ignore"`` checks
    nothing. ``message(detail)`` builds the text from ``detail``, an array reduced from the data:
    a scalar, or a 1-D array of several fields (the message then gets a tuple); a tuple of such
    arrays (a lane and its offset) is passed as ``message(*detail)``. Inside ``one_report``
    a traced ``"raise"`` check joins the call's one callback.
    """
    if mode == "ignore":
        return
    details = detail if isinstance(detail, tuple) else (detail,)
    if not any(isinstance(x, jax.core.Tracer) for x in (bad, *details)):
        if bool(jnp.any(bad)):
            raise IndexError(message(*(_detail_value(d) for d in details)))
        return
    if mode == "checkify":  # one placeholder per field
        fields, args = {}, []
        for i, d in enumerate(details):
            if jnp.ndim(d) == 0:
                fields[f"d{i}"] = d
                args.append(f"{{d{i}}}")
            else:
                keys = [f"d{i}_{j}" for j in range(jnp.shape(d)[0])]
                fields.update({k: d[j] for j, k in enumerate(keys)})
                args.append(tuple("{" + k + "}" for k in keys))
        checkify.check(~jnp.any(bad), message(*args), **fields)
        return

    open_reports = _open_reports()
    if open_reports and open_reports[-1][0] is _current_trace():
        # a call's later checks report after its first (a check traced in a nested scan body
        # or jit is another trace's: it reports on its own, its tracers cannot leave it)
        open_reports[-1][1].append((jnp.any(bad), message, details))
        return
    _report_first([(jnp.any(bad), message, details)])


_OPEN_REPORTS = threading.local()  # per thread: tracing runs in the caller's


def _open_reports() -> list:
    if not hasattr(_OPEN_REPORTS, "stack"):
        _OPEN_REPORTS.stack = []
    return _OPEN_REPORTS.stack


@contextlib.contextmanager
def one_report():
    """The traced ``runtime_check``s made inside (in ``"raise"`` mode) report through one host
    callback: the first of them that fails, in the order they were made. Host callbacks run in
    no set order, so two checks that both fail (a squeeze store's dst_addr past the UB, and the
    store's end past it) would otherwise report either. Open it around one call's checks, at
    the level they are traced (not around a nested ``scan`` body's)."""
    _open_reports().append((_current_trace(), checks := []))
    try:
        yield
    finally:
        _open_reports().pop()
    if checks:
        _report_first(checks)


def _current_trace():
    """The trace JAX is recording into now (an eager one outside ``jit``)."""
    return jax_core.trace_ctx.trace


def _report_first(checks) -> None:
    """One host callback over ``checks`` (``(any_bad, message, details)``, in order): raises
    the first failing one's message."""
    sizes = [len(details) for _, _, details in checks]

    def report(any_bad, *values):
        if not bool(any_bad):
            return
        flags, values = values[:len(checks)], values[len(checks):]
        for flag, (_, message, _), size in zip(flags, checks, sizes, strict=True):
            if bool(flag):
                fault = AddressFault(message(*(_detail_value(v) for v in values[:size])))
                raise fault.with_traceback(_caller_free_traceback(fault))
            values = values[size:]

    flags = [bad for bad, _, _ in checks]
    any_bad = functools.reduce(jnp.logical_or, flags)
    _report_once(report)(any_bad, *flags, *(d for _, _, details in checks for d in details))


def _report_once(report: Callable):
    """``report(any_bad, *details)`` as a host callback that runs once per call, under ``vmap``
    too: the batching rule hands it the first faulting element's details. (``jax.debug.callback``
    batches by unrolling, one callback per element: a vmap over 512 registers compiled in 7 s
    and ran eagerly in 34 s.)"""
    @custom_batching.custom_vmap
    def once(any_bad, *details):
        jax.debug.callback(report, any_bad, *details)
        return any_bad

    @once.def_vmap
    def _batched(axis_size, in_batched, any_bad, *details):
        if axis_size == 0:  # no instance, nothing to check
            return any_bad, in_batched[0]
        first = jnp.argmax(any_bad) if in_batched[0] else 0
        once(*(x[first] if batched else x
               for x, batched in zip((any_bad, *details), in_batched, strict=True)))
        return any_bad, in_batched[0]

    return once


class AddressFault(IndexError):
    """An access the hardware faults on, found while a jitted computation ran."""


def _caller_free_traceback(fault: BaseException):
    """A traceback of one frame with no caller, for ``fault``.

    The JaxRuntimeError that carries a callback's exception embeds a traceback that XLA's
    binding formats from the deepest frame up through every caller (about 15 frames of JAX
    internals before the message). A generator's frame has no caller once it is suspended, so
    the embedded text shrinks to this one frame and the message."""
    def fault_found_while_running():
        try:
            raise fault
        except AddressFault as raised:
            yield raised.__traceback__

    frames = fault_found_while_running()
    traceback = next(frames)
    # Left suspended, not closed: closing runs the frame once more on the caller's stack, and
    # Python >= 3.12 then links it to every caller (16-48 lines instead of 3). The fault holds
    # the generator, so it stays suspended as long as the fault lives.
    fault._frames = frames
    return traceback


class _QuietAddressFaults:
    """Drops JAX's logged copy of an ``AddressFault``'s traceback ("jax.debug.callback
    failed"): the exception itself still reaches the caller, once."""

    def filter(self, record) -> bool:
        return not (record.exc_info and isinstance(record.exc_info[1], AddressFault))


logging.getLogger("jax._src.debugging").addFilter(_QuietAddressFaults())


def _detail_value(detail):
    value = np.asarray(detail)
    return value.item() if value.ndim == 0 else tuple(value.tolist())


# --- max / min: where the extreme of the active lanes is ------------------------------------

REDUCE_TYPES = ("sum", "max", "min")


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.capitalize() for part in rest)


def struct_fields(value: Any, struct: type, *, where: str, arg: str,
                  deprecated: Sequence[str] = ()) -> tuple:
    """The fields of a parameter struct (a NamedTuple class, snake_case fields with the C++
    struct's defaults) given as one, as a tuple in field order (C++'s ``{1, 4, 8, 0}``), or as
    a dict of fields by the page's name (``repeatTimes``) or the snake_case one, the missing
    ones at their defaults. ``deprecated``: the page's names of trailing fields it lists as
    having no effect; a tuple or dict may carry them (ints), and they are dropped."""
    names = struct._fields
    camel = {_camel(n): n for n in names}
    if isinstance(value, struct):
        return tuple(value)
    if isinstance(value, dict):
        unknown = [k for k in value if camel.get(k, k) not in names and k not in deprecated]
        if not unknown:
            return tuple(struct(**{camel.get(k, k): v for k, v in value.items()
                                   if k not in deprecated}))
        raise TypeError(f"{where}: {arg} has no field {', '.join(map(repr, unknown))}; its "
                        f"fields are {', '.join(camel)} (or {', '.join(names)}), the ones left "
                        f"out at the struct's defaults {dict(struct._field_defaults)}")
    if (isinstance(value, (tuple, list)) and len(names) <= len(value) <= len(names)
            + len(deprecated) and all(isinstance(v, (int, np.integer)) for v in
                                      value[len(names):])):
        return tuple(value[:len(names)])
    sizes = f"{len(names)}" + (f" to {len(names) + len(deprecated)}" if deprecated else "")
    raise TypeError(f"{where}: {arg} must be a {struct.__name__}, a tuple of {sizes} ints in "
                    f"its field order ({', '.join(camel)}"
                    + (f"; then {', '.join(deprecated)}, which have no effect" if deprecated
                       else "") + f") or a dict of its fields, got {value!r}")


def enum_name(value: Any, where: str, arg: str, allowed: Sequence[str], enum: str,
              prefix: str = "") -> str:
    """A template enum keyword as one of ``allowed`` (snake_case): ours (``"max"``) or the
    page's spelling, any case, with or without its namespaces (``"MAX"``, ``"ReduceType::MAX"``,
    ``"AscendC::MaskMode::COUNTER"``) and the enum's own ``prefix`` (``ORDER_``)."""
    name = (value.rsplit("::", 1)[-1].lower().removeprefix(prefix)
            if isinstance(value, str) else None)
    if name not in allowed:
        raise ValueError(f"{where}: {arg}={value!r} is not one of {list(allowed)} (or the "
                         f"page's {enum}::{prefix.upper()}... names)")
    return name


def check_reduce_type(reduce_type: Any, where: str, allowed: Sequence[str] = REDUCE_TYPES) -> str:
    """``reduce_type`` (the pages' ReduceType) as one of ``allowed`` (``enum_name``)."""
    return enum_name(reduce_type, where, "reduce_type", allowed, "ReduceType")


def order_key(bits, fmt: Format):
    """Integer keys in the format's order, ``-0 < +0`` (NaN lanes get an arbitrary key): int16
    for 16-bit formats (twice the lanes per vector op of int32), int32 for 32-bit ones.

    Floats are sign-magnitude: a negative value's key is ``-magnitude - 1``, so -0 sits just
    below +0 and comparing keys never meets a float (no backend can flush or quiet anything).
    Unsigned integers flip their top bit to keep their order in the signed type.
    """
    signed = jnp.int16 if fmt.bits == 16 else jnp.int32
    unsigned = jnp.uint16 if fmt.bits == 16 else U32
    if fmt.is_float:
        bits = lax.bitcast_convert_type(bits.astype(unsigned), signed)
        magnitude = bits & np.array((1 << (fmt.bits - 1)) - 1, signed)
        return jnp.where(bits < 0, -magnitude - np.array(1, signed), magnitude)
    if fmt.kind == "uint":
        return lax.bitcast_convert_type(bits.astype(unsigned) ^ np.array(1 << (fmt.bits - 1),
                                                                          unsigned), signed)
    return bits.astype(signed)


def is_nan_bits(bits, fmt: Format):
    """NaN lanes of a float bit pattern (all False for integers)."""
    if not fmt.is_float:
        return jnp.zeros(bits.shape, bool)
    width = fmt.bits
    magnitude = bits.astype(U32) & np.uint32((1 << (width - 1)) - 1)
    return magnitude > np.uint32(((1 << fmt.exponent_bits) - 1) << fmt.mantissa_bits)


def select_extreme(bits, active, fmt: Format, kind: str, *, leading: bool = False):
    """Where the max (``kind="max"``) or min of each row's active lanes is, over the last axis.

    ``bits``: ``(..., n)`` bit patterns of ``fmt``; ``active``: bool, broadcastable. Returns
    ``(index, any_active, nan)`` over the leading axes: ``index`` (int32) is the first active
    NaN lane if there is one (``nan`` True), else the first lane holding the extreme value,
    with ``max(-0, +0) = +0`` and ``min(-0, +0) = -0``; 0 where no lane is active. Max and min
    are exact, so the result does not depend on the order the hardware compares in.
    ``leading`` reduces over the lanes moved to a leading axis, in stages of 16 (the same
    answer): inside the LocalTensor kernels XLA's CPU backend runs it several times faster.
    """
    key = order_key(bits, fmt)
    if kind == "min":
        key = ~key  # reverses the order, bijectively: the min becomes the max
    top, bottom = jnp.iinfo(key.dtype).max, jnp.iinfo(key.dtype).min
    if fmt.is_float:  # a NaN outranks every value (no float's key reaches the type's max)
        key = jnp.where(is_nan_bits(bits, fmt), top, key)
    n = bits.shape[-1]
    active = jnp.broadcast_to(active, bits.shape)
    key = jnp.where(active, key, bottom)
    if leading and n > 16 and n % 16 == 0:
        # Two stages: the first extreme of each 16 lanes over a leading axis, then the first
        # group holding the overall one (the first lane of the first such group is the first
        # lane overall). Same answer; the long minor-axis reductions XLA does not vectorize.
        shape = key.shape[:-1] + (n // 16, 16)
        best1, first1 = _first_max(key.reshape(shape), active.reshape(shape), True)
        found = first1 < 16
        best = jnp.max(jnp.where(found, best1, bottom), axis=-1)
        start = lax.broadcasted_iota(jnp.int32, first1.shape, first1.ndim - 1) * 16
        index = jnp.min(jnp.where(found & (best1 == best[..., None]), start + first1, n), axis=-1)
    else:
        best, index = _first_max(key, active, leading)
    has_nan = (best == top) if fmt.is_float else jnp.zeros(index.shape, bool)
    return jnp.where(index < n, index, 0), index < n, has_nan


def extreme_value(bits, active, fmt: Format, kind: str, empty, group: int | None = None):
    """The bits of the max (min) of each row's active lanes, over the last axis, where no
    index is wanted: a NaN as the format's quiet NaN, ``empty`` where no lane is active.

    The value ``select_extreme``'s lane holds (with ``Config.extreme_nan="canonical"``), from
    integer maxima (minima) of order keys turned back into bits; no index, no gather of the
    winner. For a whole register's row of 16-bit lanes the maxima are taken of halves,
    elementwise: XLA's CPU backend vectorizes neither a 16-bit integer reduction nor one over
    a computed input (4-10x slower there); the halves fuse into one vectorized loop. A row of
    32-bit lanes takes runs of 8 lanes instead (below). Over a DataBlock's 8 or 16 lanes the
    plain reduction is the faster one.

    ``bits``: the lanes' patterns, or for floats their storage-dtype values (bits come out).
    ``group``: the rows are runs of ``group`` consecutive lanes of a flat last axis,
    ``(..., k * group) -> (..., k)``, reduced by adjacent pairs without a reshape
    (``flat_pairs``) when ``group`` is a power of two.
    """
    signed = jnp.int16 if fmt.bits == 16 else jnp.int32
    info = jnp.iinfo(signed)
    # A NaN wins and a masked lane loses: no float's key reaches the type's max or min.
    win, lose = (info.max, info.min) if kind == "max" else (info.min, info.max)
    pick = jnp.maximum if kind == "max" else jnp.minimum

    def keys(x, on):
        b = to_bits(x, fmt)
        key = order_key(b, fmt)
        if fmt.is_float:
            key = jnp.where(is_nan_bits(b, fmt), np.array(win, signed), key)
        if not (isinstance(on, np.ndarray) and on.all()):
            key = jnp.where(on, key, np.array(lose, signed))
        return key

    if group in WORD_PAIR_GROUPS and fmt.bits == 16:
        best = _word_pair_extreme(bits, active, fmt, kind, win, lose, group)
    elif group is not None and group > 1 and group & (group - 1) == 0:
        # The lanes read and keyed after slicing: XLA's CPU backend would otherwise compute
        # every lane's key into a buffer first (3-10x slower).
        on = _broadcast(active, bits.shape)
        first = pick(keys(bits[..., 0::2], on[..., 0::2]), keys(bits[..., 1::2], on[..., 1::2]))
        # Three levels as flat pairs, the rest (max / min are order-free) as a reduction of a
        # reshape: a long flat tree splits into fusions with a large buffer between them
        # (3x slower at 2^20 registers), a reshape of the whole input loses vectorization.
        flat = min(group // 2, 4)
        best = flat_pairs(first, flat, pick)
        if group // 2 > flat:
            best = split_last(best, group // 2 // flat)
            best = jnp.max(best, axis=-1) if kind == "max" else jnp.min(best, axis=-1)
    elif group is None and fmt.bits == 32 and bits.shape[-1] >= 64 and bits.shape[-1] % 8 == 0:
        # A whole row of 32-bit lanes as runs of 8: the runs' maxima elementwise, each run
        # keyed after slicing, then one reduction over 8. XLA's CPU backend vectorizes the
        # runs with contiguous loads; halves of the row it runs per row, lane by lane (float32
        # asc_reduce_max at 2^18..2^20 registers: 0.56-0.74 of the limit against 0.44-0.58).
        on = _broadcast(active, bits.shape)
        best = keys(bits[..., :8], on[..., :8])
        for start in range(8, bits.shape[-1], 8):
            best = pick(best, keys(bits[..., start:start + 8], on[..., start:start + 8]))
        best = jnp.max(best, axis=-1) if kind == "max" else jnp.min(best, axis=-1)
    else:
        key = keys(bits, active)
        if group is not None:  # not a power of two: rows of a reshape
            key = split_last(key, group)
        n = key.shape[-1]
        if n < 64 or n & (n - 1):  # a DataBlock's lanes: the plain reduction is faster
            best = jnp.max(key, axis=-1) if kind == "max" else jnp.min(key, axis=-1)
        else:
            while key.shape[-1] > 1:
                half = key.shape[-1] // 2
                key = pick(key[..., :half], key[..., half:])
            best = key[..., 0]
    value = key_bits(best, fmt)
    if not fmt.is_float:  # an integer's empty value is the key's losing end: nothing to mend
        return value if bits.dtype == fmt.bits_dtype else from_bits(value, fmt)
    value = jnp.where(best == lose, np.array(empty, fmt.bits_dtype), value)
    return jnp.where(best == win, quiet_nan_bits(fmt), value)


# The group sizes where reading 16-bit lanes as word pairs is the faster form on XLA's CPU
# backend (half, 2^18 registers: 16 lanes 2.4 ms against 6.8, 32: 2.1 / 6.8, 64: 2.0 / 2.5; but
# 128 lanes 26 ms against 1.6, 4 and 8 lanes 2-4x slower). A DataBlock of a 16-bit type is 16.
WORD_PAIR_GROUPS = (16, 32, 64)


def _word_pair_extreme(values, active, fmt: Format, kind: str, win: int, lose: int, group: int):
    """``extreme_value``'s best int16 key of every run of ``group`` lanes of a 16-bit format,
    with the lanes read as int32 words, two a word: the first level of pairs is each word's
    two halves, the rest one int32 reduction of a reshape. XLA's CPU backend runs this at
    memory speed, where 16-bit slices or reductions run 2.5x slower (half ReduceDataBlock<MAX>
    at 2^18 registers: 2.6 ms against 7 ms). Keys are ``order_key``'s, widened to int32."""
    words = lax.bitcast_convert_type(split_last(to_bits(values, fmt), 2), jnp.int32)
    on = _broadcast(active, values.shape)
    pick = jnp.maximum if kind == "max" else jnp.minimum

    def keys(lane, on):  # lane: the 16-bit pattern in the low half of an int32, sign-extended
        if fmt.kind == "uint":
            key = (lane & 0xFFFF) - (1 << 15)
        elif fmt.is_float:
            magnitude = lane & 0x7FFF
            key = lane ^ ((lane >> 31) & 0x7FFF)  # -magnitude - 1 where the sign is set
            infinity = ((1 << fmt.exponent_bits) - 1) << fmt.mantissa_bits
            key = jnp.where(magnitude > infinity, np.int32(win), key)
        else:
            key = lane
        if not (isinstance(on, np.ndarray) and on.all()):
            key = jnp.where(on, key, np.int32(lose))
        return key

    # little-endian words: lane 2i is the low half (as in gather_block._words)
    first = pick(keys((words << 16) >> 16, on[..., 0::2]), keys(words >> 16, on[..., 1::2]))
    if group > 2:
        first = split_last(first, group // 2)
        first = jnp.max(first, axis=-1) if kind == "max" else jnp.min(first, axis=-1)
    return first.astype(jnp.int16)


def extreme_with_index(values, active, fmt: Format, kind: str, group: int):
    """``(value bits, index, any active)`` of the max (min) of every run of ``group`` (a power
    of two up to 256) lanes of a 16-bit format's flat last axis, ``(..., k * group) ->
    (..., k)`` (``values``: storage dtype or bits), under the default readings:
    ``select_extreme``'s lane (-0 < +0, a NaN wins, the first lane on a tie), a NaN as the
    quiet NaN; index 0 where no lane is active (the caller fills the value).

    One integer max over (active, order key, -lane) packed into an int32, by adjacent pairs
    without a reshape (``flat_pairs``), the lanes read and packed after slicing, the last
    levels (order-free) as a reduction of a reshape; no gather of the winner. (For float the
    keys and lanes side by side were 4x slower than ``select_extreme``.)
    """
    assert fmt.bits == 16, "extreme_with_index: 16-bit formats"
    on = _broadcast(active, values.shape)

    def packed(part: int):  # read and packed after slicing: XLA's CPU backend would otherwise
        b = to_bits(values[..., part::2], fmt)  # compute every lane's key into a buffer first
        key = order_key(b, fmt).astype(jnp.int32)
        if kind == "min":
            key = ~key  # reverses the order within int16's range: the min becomes the max
        if fmt.is_float:  # a NaN outranks every value (no float's key reaches int16's max)
            key = jnp.where(is_nan_bits(b, fmt), np.int32(32767), key)
        lane = (2 * lax.broadcasted_iota(jnp.int32, b.shape, b.ndim - 1) + part) & (group - 1)
        return (on[..., part::2].astype(jnp.int32) << 24) | ((key + 32768) << 8) | (255 - lane)

    flat = min(group // 2, 4)  # levels as flat pairs after the first (see extreme_value)
    best = flat_pairs(jnp.maximum(packed(0), packed(1)), flat, jnp.maximum)
    if group > 2 * flat:
        best = jnp.max(split_last(best, group // 2 // flat), axis=-1)
    found = best >> 24 != 0
    key = ((best >> 8) & 0xFFFF) - 32768
    nan = key == 32767 if fmt.is_float else None
    value = key_bits((~key if kind == "min" else key).astype(jnp.int16), fmt)
    if fmt.is_float:
        value = jnp.where(nan, quiet_nan_bits(fmt), value)
    return value, jnp.where(found, 255 - (best & 255), 0), found


def extreme_first_lane(values, active, fmt: Format, kind: str, empty):
    """``(value, index)`` of the max (min) of each row's active lanes over the whole last axis
    (a multiple of 32 lanes), under the default readings: ``select_extreme``'s lane and
    ``extreme_value``'s value, as it returns it (a NaN as the quiet NaN, ``empty`` where no
    lane is active, index 0 there).

    Two passes instead of a reduction of keys and one of lane numbers: the value by
    ``extreme_value``, then the first active lane holding it (the first active NaN for a NaN;
    order keys are one-to-one, so equal bits are equal keys) from the row's hits as mask words.
    XLA's CPU backend vectorizes both; the lane-number reduction it does not (float32
    ``asc_reduce_max`` at 2^20 registers: 106 ms against 145 ms, the same run).
    """
    value = extreme_value(values, active, fmt, kind, empty)
    bits, value_bits = to_bits(values, fmt), to_bits(value, fmt)
    hit = bits == value_bits[..., None]
    if fmt.is_float:
        hit = jnp.where(is_nan_bits(value_bits, fmt)[..., None], is_nan_bits(bits, fmt), hit)
    index = first_lane(_broadcast(active, bits.shape) & hit)
    return value, jnp.where(index < bits.shape[-1], index, 0)


def split_last(x, k: int):
    """``x`` ``(..., n)`` as ``(..., n // k, k)``. The sizes are spelt out: reshape cannot
    infer a -1 beside an empty batch axis (a batch of no registers)."""
    return x.reshape(x.shape[:-1] + (x.shape[-1] // k, k))


def merge_last(x):
    """``x`` ``(..., a, b)`` as ``(..., a * b)`` (sizes spelt out, as ``split_last``)."""
    return x.reshape(x.shape[:-2] + (x.shape[-2] * x.shape[-1],))


def mask_words(active):
    """A bool mask ``(..., n)``, n a multiple of 32, as uint32 words ``(..., n / 32)``: lane i
    at bit i % 32 of word i // 32. Popcounts of the words count lanes elementwise, which XLA's
    CPU backend vectorizes (a cumsum or a reduction of lane numbers it does not)."""
    words = split_last(active, 32).astype(U32)
    return jnp.bitwise_or.reduce(words << jnp.arange(32, dtype=U32), axis=-1)


def first_lane(hit):
    """The first True lane of each row of ``hit`` ``(..., n)`` (n a multiple of 32), or n where
    there is none (int32): the first word holding a bit, then its trailing zeros."""
    words = mask_words(hit)
    index = jnp.full(words.shape[:-1], hit.shape[-1], jnp.int32)
    for w in reversed(range(words.shape[-1])):
        word = words[..., w]
        trailing = lax.population_count(~word & (word - np.uint32(1))).astype(jnp.int32)
        index = jnp.where(word != 0, 32 * w + trailing, index)
    return index


def key_bits(key, fmt: Format):
    """The bit patterns (``fmt.bits_dtype``) whose ``order_key`` is ``key`` (int16 / int32)."""
    if fmt.is_float:  # sign-magnitude back from -magnitude - 1
        key = jnp.where(key < 0, ~key | np.array(np.iinfo(key.dtype).min, key.dtype), key)
    bits = lax.bitcast_convert_type(key, fmt.bits_dtype)
    if fmt.kind == "uint":
        bits = bits ^ np.array(1 << (fmt.bits - 1), fmt.bits_dtype)
    return bits


def _broadcast(active, shape):
    """``active`` broadcast to ``shape``, staying a NumPy array (a static mask) if it is one."""
    if isinstance(active, np.ndarray):
        return np.broadcast_to(active, shape)
    return jnp.broadcast_to(jnp.asarray(active), shape)


def flat_pairs(x, group: int, combine: Callable):
    """``combine`` over every run of ``group`` (a power of two) consecutive elements of the
    last axis, ``(..., k * group) -> (..., k)``, as adjacent pairs level by level:
    ``combine(x[..., 0::2], x[..., 1::2])``. The same pairs as a tree over
    ``x.reshape(..., k, group)``, but with no reshape, which XLA's CPU backend fuses by
    computing each element's indices with divisions (10x slower)."""
    for _ in range(group.bit_length() - 1):
        x = combine(x[..., 0::2], x[..., 1::2])
    return x


def _first_max(key, active, leading: bool):
    """(the largest key over the last axis, the first active lane holding it or n): masked
    lanes hold the type's minimum, and ``active`` keeps them from matching an integer minimum
    an active lane holds. The first lane is a min over lane numbers, a plain integer reduction
    that XLA vectorizes (argmax's (value, index) reduction does not); ``leading`` reduces over
    the lanes moved to a leading axis (contiguous slabs)."""
    n = key.shape[-1]
    if leading:
        key, active = jnp.moveaxis(key, -1, 0), jnp.moveaxis(active, -1, 0)
    axis = 0 if leading else -1
    best = jnp.max(key, axis=axis, keepdims=True)
    lane = lax.broadcasted_iota(key.dtype if n < 2**15 else jnp.int32, key.shape,
                                0 if leading else key.ndim - 1)
    index = jnp.min(jnp.where(active & (key == best), lane, n), axis=axis).astype(jnp.int32)
    return jnp.squeeze(best, axis), index
