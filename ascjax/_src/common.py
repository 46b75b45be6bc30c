"""Helpers every instruction shares: checks, the element adder, the adjacent-pair tree, gradients."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import checkify

from . import arith
from .config import Config
from .formats import Format, resolve


def check_register(x: Any, fmt: Format, *, where: str, arg: str) -> jax.Array:
    """``x`` as a register array ``(..., fmt.lanes)``, or a ValueError naming the argument."""
    x = jnp.asarray(x)
    if x.ndim == 0 or x.shape[-1] != fmt.lanes:
        raise ValueError(f"{where}: {arg} has shape {x.shape}; a vector_{fmt.name} register is "
                         f"(..., {fmt.lanes}) ({fmt.lanes} lanes of {fmt.width} bytes)")
    return x


def check_supported(fmt: Format, table: Sequence[str], *, where: str, arg: str = "dtype") -> None:
    if fmt.name not in table:
        raise TypeError(f"{where}: {arg} {fmt.name} is not supported; supported: {list(table)}")


def check_int(value: Any, lo: int, hi: int, *, where: str, arg: str) -> int:
    """A static integer argument in [lo, hi] (hardware immediates are Python ints here)."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{where}: {arg} must be a Python int (a static value), got {value!r}")
    if not lo <= int(value) <= hi:
        raise ValueError(f"{where}: {arg}={value} is outside the valid range [{lo}, {hi}]")
    return int(value)


@dataclasses.dataclass(frozen=True)
class Adder:
    """Adds ``src`` elements into ``dst``-typed results, rounding where the hardware rounds.

    Floats work on uint32 float32 carriers (``arith``); integers are widened to ``dst`` first
    (int16 -> int32, uint16 -> uint32) and wrap or saturate per ``config.int_overflow``.
    """

    src: Format
    dst: Format
    config: Config

    def load(self, x):
        if self.src.is_float:
            return arith.to_carrier(arith.to_bits(x, self.src), self.src)
        return jnp.asarray(x).astype(self.dst.storage_dtype)

    def add(self, a, b):
        if self.dst.is_float:
            return arith.float_add(a, b, self.dst, self.config)
        return arith.int_add(a, b, self.dst, self.config)

    def store(self, w):
        if self.dst.is_float:
            return arith.from_bits(arith.from_carrier(w, self.dst), self.dst)
        return w

    def zeros(self, shape):
        dtype = arith.U32 if self.dst.is_float else self.dst.storage_dtype
        return jnp.zeros(shape, dtype)

    def masked(self, values, active):
        """Working values with masked-off lanes replaced as ``config.masked_lanes`` says."""
        fill = self.zeros(())
        if self.dst.is_float and self.config.masked_lanes == "skip":
            fill = arith.SIGN32  # -0: x + (-0) == x for every x, so the lane takes no part
        return jnp.where(active, values, fill)


def pair_tree(values, add: Callable, *, levels: list | None = None):
    """Adjacent-pair tree over the last axis (a power of two): (e0+e1), (e2+e3), ... per level.

    The order is written out so that no compiler can reassociate it. If ``levels`` is a list,
    every level's values (the input first) are appended to it.
    """
    if levels is not None:
        levels.append(values)
    while values.shape[-1] > 1:
        values = add(values[..., 0::2], values[..., 1::2])
        if levels is not None:
            levels.append(values)
    return values[..., 0]


def kernel(forward: Callable, linear: Callable | None = None, *, num_diff: int = 1) -> Callable:
    """An instruction body: jitted once per static ``spec``, differentiable as the exact op.

    ``forward(spec, *arrays)`` computes the bits; ``spec`` is a hashable static value (formats,
    config, shapes). ``linear(spec, *tangents, *rest)`` is the derivative of the exact real
    operation, linear in the tangents of the first ``num_diff`` arrays (rounding passes
    gradients straight through); JAX transposes it for reverse mode. Jitting the body makes
    eager calls one compiled dispatch instead of dozens of small ones.
    """
    if linear is None:
        return jax.jit(forward, static_argnums=0)
    body = jax.custom_jvp(forward, nondiff_argnums=(0,))

    def jvp(spec, primals, tangents):
        diff = [jnp.zeros_like(p) if t.dtype == jax.dtypes.float0 else t
                for p, t in zip(primals[:num_diff], tangents[:num_diff])]
        return body(spec, *primals), linear(spec, *diff, *primals[num_diff:])

    body.defjvp(jvp)
    return jax.jit(body, static_argnums=0)


def resolve_dtypes(x, dtype, *, where: str, arg: str) -> Format:
    """Format of ``x``: ``dtype`` (an Ascend type name) when given, checked against x's storage."""
    if dtype is None:
        return resolve(jnp.asarray(x).dtype, where=where, arg=f"{arg}.dtype")
    fmt = resolve(dtype, where=where)
    actual = np.dtype(jnp.asarray(x).dtype)
    if actual != fmt.storage_dtype:
        raise TypeError(f"{where}: {arg} has dtype {actual}, but {fmt.name} is stored as "
                        f"{fmt.storage_dtype}")
    return fmt


def runtime_check(bad, message: Callable[[Any], str], detail, *, mode: str = "raise") -> None:
    """A fault that depends on values (an address past the UB): ``bad`` is a bool array.

    Concrete values raise ``IndexError`` at once. Under ``jit`` (values unknown to Python):
    ``mode="raise"`` raises from a host callback when the computation runs, ``"checkify"``
    emits a ``checkify.check`` (the caller wraps with ``checkify.checkify``), ``"ignore"`` checks
    nothing. ``message(detail)`` builds the text from ``detail``, an array reduced from the data.
    """
    if mode == "ignore":
        return
    if not isinstance(bad, jax.core.Tracer) and not isinstance(detail, jax.core.Tracer):
        if bool(jnp.any(bad)):
            raise IndexError(message(np.asarray(detail).item()))
        return
    if mode == "checkify":
        checkify.check(~jnp.any(bad), message("{detail}"), detail=detail)
        return

    def report(any_bad, value):
        if bool(any_bad):
            raise IndexError(message(np.asarray(value).item()))

    jax.debug.callback(report, jnp.any(bad), detail)
