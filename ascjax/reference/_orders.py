"""Summation orders (the models of ``ascjax.precision``'s orders), over the one scalar add."""

from __future__ import annotations

from typing import Any

import numpy as np

from ascjax._src.config import Config
from ascjax._src.formats import FORMATS

from ._scalar import FLOAT_TYPES, VL_BYTES, add, lane_bytes, type_name


def sum_sequential(x, dtype: Any, config: Config | None = None):
    """``((x0 + x1) + x2) + ...``, each add rounded to the type."""
    s = x[0]
    for v in x[1:]:
        s = add(s, v, dtype, config)
    return s


def sum_adjacent_tree(x, dtype: Any, carry: bool = True):
    """Adjacent pairs per level; an odd last element moves up (carry) or meets +0."""
    zero = np.dtype(FORMATS[type_name(dtype)].storage).type(0)
    x = list(x)
    while len(x) > 1:
        if len(x) % 2 and not carry:
            x.append(zero)
        nxt = [add(x[i], x[i + 1], dtype) for i in range(0, len(x) - 1, 2)]
        x = nxt + x[-1:] if len(x) % 2 else nxt
    return x[0]


def sum_repeats(x, dtype: Any, method: int):
    """ReduceSum's first-n form with its page's ``method``: 256-byte repeats (the last padded
    with +0), each by a pair tree, then their results in order (1) or by a +0-padded pair tree
    (2); or (3) the repeats added lane by lane in repeat order, then a pair tree over the
    lanes."""
    name = type_name(dtype)
    lanes = VL_BYTES // lane_bytes(name)
    zero = np.dtype(FORMATS[name].storage).type(0)
    repeats = []
    for r in range(0, len(x), lanes):
        repeats.append(list(x[r:r + lanes]) + [zero] * (lanes - len(x[r:r + lanes])))
    if method == 3:
        merged = repeats[0]
        for reg in repeats[1:]:
            merged = [add(a, b, dtype) for a, b in zip(merged, reg, strict=True)]
        return sum_adjacent_tree(merged, dtype)
    sums = [sum_adjacent_tree(reg, dtype) for reg in repeats]
    if method == 1:
        return sum_sequential(sums, dtype)
    width = 1 << (len(sums) - 1).bit_length()
    return sum_adjacent_tree(sums + [zero] * (width - len(sums)), dtype)


def sum_numpy_pairwise(x, dtype: Any):
    """NumPy's pairwise_sum (loops_utils.h.src), float32 accumulators, then one rounding."""
    f = np.float32

    def pw(a):
        n = len(a)
        if n < 8:
            res = f(-0.0)
            for v in a:
                res = f(res + f(v))
            return res
        if n <= 128:
            r = [f(v) for v in a[:8]]
            i = 8
            while i < n - n % 8:
                r = [f(r[j] + f(a[i + j])) for j in range(8)]
                i += 8
            res = f(f(f(r[0] + r[1]) + f(r[2] + r[3])) + f(f(r[4] + r[5]) + f(r[6] + r[7])))
            for v in a[i:]:
                res = f(res + f(v))
            return res
        half = n // 2
        half -= half % 8
        return f(pw(a[:half]) + pw(a[half:]))

    with np.errstate(all="ignore"):
        return FLOAT_TYPES[type_name(dtype)](f(f(0.0) + pw(list(x))))


def sum_kahan(x, dtype: Any):
    """Kahan's compensated sum, every operation rounded to the type."""
    s, e = x[0], np.dtype(FORMATS[type_name(dtype)].storage).type(0)
    for v in x[1:]:
        y = add(v, -e, dtype)
        t = add(s, y, dtype)
        e = add(add(t, -s, dtype), -y, dtype)
        s = t
    return s


# ascjax.precision's order names -> the models above, as f(x, dtype).
SUMMATION_ORDERS = {
    "sequential": sum_sequential,
    "adjacent_tree": sum_adjacent_tree,
    "repeat_sequential": lambda x, dtype: sum_repeats(x, dtype, 1),
    "repeat_tree": lambda x, dtype: sum_repeats(x, dtype, 2),
    "repeat_vector_merge": lambda x, dtype: sum_repeats(x, dtype, 3),
    "numpy_pairwise": sum_numpy_pairwise,
    "kahan": sum_kahan,
}
