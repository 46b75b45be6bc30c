"""An independent judge for the emulator's arithmetic: GNU MPFR (through gmpy2), at a format's
precision, exponent range and subnormals, round to nearest, ties to even.

MPFR writes a number as m * 2^e with m in [0.5, 1), so an IEEE-like format with p significand
bits, least normal exponent emin and overflow threshold 2^emax (NumPy's ``finfo`` names) is
MPFR's ``precision=p, emin=emin - p + 2, emax=emax`` with ``subnormalize=True``: gmpy2 then
applies ``mpfr_check_range`` and ``mpfr_subnormalize`` after every operation, which makes each
result the IEEE one (overflow to inf, gradual underflow, one rounding). Nothing here imports
the emulator's numerics; values cross over as float64 (every value of these formats is one).
"""

from __future__ import annotations

import gmpy2
import numpy as np

import ascjax

EXACT_BITS = 1024  # above any float32 sum's bit span (2^128 .. 2^-149, plus log2 n)


def context(name: str):
    """The MPFR context of format ``name`` ("half", "bfloat16_t", "float")."""
    info = ascjax.finfo(name)
    p = info.nmant + 1
    return gmpy2.context(precision=p, emin=info.minexp - p + 2, emax=info.maxexp,
                         subnormalize=True, round=gmpy2.RoundToNearest)


def wide_context():
    """Exact for any sum of float32 values the tests draw (no rounding, no overflow)."""
    return gmpy2.context(precision=EXACT_BITS, emin=-(1 << 20), emax=1 << 20,
                         round=gmpy2.RoundToNearest)


def storage(name: str) -> np.dtype:
    return np.dtype(ascjax.FORMATS[name].storage)


def to_mpfr(values: np.ndarray, ctx) -> list:
    """MPFR numbers of format values (exact: they are representable in ``ctx``)."""
    with np.errstate(invalid="ignore"):  # a signalling NaN widens with a warning
        wide = np.asarray(values).astype(np.float64).tolist()
    with ctx:
        return [gmpy2.mpfr(v) for v in wide]


def to_format(results: list, name: str) -> np.ndarray:
    """MPFR results already on the format's grid, as an array of its storage dtype (NaN: the
    float64 NaN cast, which the callers compare by NaN-ness only)."""
    with np.errstate(invalid="ignore", over="ignore"):
        return np.array([float(r) for r in results], np.float64).astype(storage(name))


def add(a: np.ndarray, b: np.ndarray, name: str) -> np.ndarray:
    """a + b per element, one IEEE add in format ``name``."""
    ctx = context(name)
    xs, ys = to_mpfr(a, ctx), to_mpfr(b, ctx)
    with ctx:
        return to_format([x + y for x, y in zip(xs, ys, strict=True)], name)


def tree_sum(values: list, tree, ctx):
    """The sum of MPFR ``values`` along a summation tree (nested tuples of indices, as
    ``ascjax.precision.order_tree`` gives it), every add rounded in ``ctx``; iterative, so a
    sequential chain of any length is fine."""
    out: list = []
    stack = [(tree, False)]
    with ctx:
        while stack:
            node, expanded = stack.pop()
            if isinstance(node, (int, np.integer)):
                out.append(values[int(node)])
            elif not expanded:
                stack.append((node, True))
                stack += [(child, False) for child in reversed(node)]
            else:
                kids = [out.pop() for _ in node][::-1]
                total = kids[0]
                for kid in kids[1:]:
                    total = total + kid
                out.append(total)
    return out[0]


def order_sum(row: np.ndarray, name: str, order: str):
    """The sum of one vector in format ``name`` along ``order``, by MPFR (an MPFR number)."""
    ctx = context(name)
    values = to_mpfr(row, ctx)
    if order == "kahan":
        with ctx:
            s, e = values[0], gmpy2.mpfr(0)
            for x in values[1:]:
                y = x - e
                t = s + y
                e = (t - s) - y
                s = t
            return s
    tree = ascjax.precision.order_tree(order, len(values), name)
    if order != "numpy_pairwise":
        return tree_sum(values, tree, ctx)
    # NumPy's pairwise sum accumulates in float32, then 0 + total, rounded once to the format.
    f32 = context("float")
    total = tree_sum(values, tree, f32)
    with f32:
        total = gmpy2.mpfr(0) + total
    with ctx:
        return +total  # unary plus: the one rounding (with range checks) in ctx


def exact_sum(row: np.ndarray, name: str):
    """The exact sum of one vector (no rounding), then rounded once to format ``name``."""
    wide = wide_context()
    values = to_mpfr(row, wide)
    with wide:
        total = gmpy2.mpfr(0) if values else None
        zero_signs = all(v == 0 and gmpy2.is_signed(v) for v in values)
        for v in values:
            total = total + v
    with context(name):
        total = +total
    if zero_signs:  # IEEE: a sum of -0 only is -0 (the +0 start above made it +0)
        total = -total
    return total
