"""The tree-versus-sequential study behind ``ascjax study``: workloads, measurements, reports.

For each format, size n and input distribution, ``trials`` random vectors are summed along
every order; each result is compared with the exact sum (``exact_sum_float64``), with
Higham's deterministic bound for its order and with Higham & Mary's probabilistic one. A second
sweep sets the relative error against the condition number of the sum, kappa = sum|x| / |sum x|
(``kappa(K)`` workloads); an optional third runs the hardware's long-vector patterns (ReduceSum's
methods, WholeReduceSum chained over repeats, half accumulated in float) over 2^10..2^20 halves.
``write_study`` turns the rows into Markdown, CSV files and PNG plots. A trial whose exact sum
is beyond the format's finite range is reported apart (what each order returned, inf or NaN as
the format has it): it is neither measured, ranked nor held against the bounds.
"""

from __future__ import annotations

import csv
import dataclasses
import functools
import math
import os
import re
import zlib
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from ..config import resolve_config
from ..formats import Format, finfo, resolve
from ..io.progress import Progress
from ..isa.lanes import check_int, pair_tree
from ..isa.masks import create_mask
from ..isa.reduce_register import reduce_sum_datablock
from . import orders as _orders
from . import precision
from .orders import ORDERS, PATTERN_ORDERS, STUDY_ORDERS

DISTRIBUTIONS = {
    "uniform": "uniform on [0, 1)",
    "normal": "standard normal",
    "ones": "all ones",
    "cancelling": ("n/2 standard normal values and their negatives (and one 0 where n is odd), "
                   "shuffled (exact sum 0)"),
}
# Where Higham & Mary's model (independent, mean-zero rounding errors) cannot hold: constant
# inputs make every rounding error a fixed function of the step, not a random draw.
NOT_RANDOM = {"ones": "constant inputs: each rounding error is determined, not random"}
# A chain of adds (``CHAIN_ORDERS``) on one-signed data stagnates where at least this share of
# its addends is each at most half an ULP of the running sum before it (``lost_addends``): those
# adds return the running sum unchanged, every one erring the same way, which the probabilistic
# model excludes.
STAGNATION_SHARE = 0.1
# Kahan's bound is Higham's (4.8), (2u + O(n u^2)) sum|x|: the study holds trials against its
# first-order term 2u alone, which is no bound once n u is not small (and Higham & Mary give no
# probabilistic bound for compensated summation): trials above it are counted, not flagged.
FIRST_ORDER_ORDERS = ("kahan",)
DEFAULT_FORMATS = ("half", "bfloat16_t", "float")
DEFAULT_SIZES = (16, 256, 4096, 65536)
DEFAULT_DISTRIBUTIONS = tuple(DISTRIBUTIONS)
DEFAULT_TRIALS = 16
_NUMBER = r"\s*([^,()\s]+)\s*"  # read by float(): inf and nan get the range message
_UNIFORM = re.compile(rf"^uniform\({_NUMBER},{_NUMBER}\)$")
_KAPPA = re.compile(rf"^kappa\({_NUMBER}\)$")
# The conditioning sweep: kappa(K) workloads at one n, every format and order. Four kappas at
# n = 4096 make (4 x trials, 4096) arrays, the main cells' shape: no new compiles (+2 s).
DEFAULT_KAPPAS = (1e1, 1e3, 1e5, 1e7)
DEFAULT_KAPPA_N = 4096
KAPPA_MIN_N = 3  # kappa(K > 1): a pair x, -x and a one-signed part
# check_study draws one trial of each kappa workload up to this n to check its range (larger
# ones are checked as they are drawn)
_DRAWN_IN_CHECK = 1 << 16
# The long-vector sweep (``--long-vectors``): half, 2^10..2^20 elements, the hardware's patterns.
LONG_SIZES = tuple(1 << e for e in range(10, 21))
# uniform on [0, 1/16): 2^20 of them sum to about 32768, inside half's range (uniform [0, 1)
# would overflow from n = 2^17 on, for every order).
LONG_DISTRIBUTIONS = ("uniform(0,0.0625)", "normal")
LONG_TRIALS = 4
# The study's upper limit of n, trials and kappa_n (``check_study``, ``make_inputs``), and the
# seed's range (NumPy's SeedSequence takes any non-negative int; 64 bits are plenty).
MAX_SIZE = 1 << 31
MAX_SEED = (1 << 64) - 1


def overflow_value(dtype: Any) -> str:
    """What ``dtype`` gives for a sum beyond its largest finite value, read off the format
    table as the rounding does (``numerics.rounding``): "inf" where the table has an inf code,
    "NaN" where it has a NaN code but no inf (fp8_e4m3fn). A format without codec codes (float)
    is IEEE: "inf"."""
    fmt = resolve(dtype, where="overflow_value")
    if not fmt.is_float:
        raise TypeError(f"overflow_value: {fmt.name} is not a float format")
    if fmt.inf_code is None and fmt.nan_code is not None:
        return "NaN"
    if fmt.inf_code is None and fmt.round_modes:  # codec codes, none for inf or NaN: saturates
        raise ValueError(f"overflow_value: {fmt.name} saturates; the study sums "
                         f"{list(precision.SUM_FORMATS)}")
    return "inf"


def _decimal(x: float, digits: int) -> str:
    """``x`` with ``digits`` digits after the point: positional for 1e-4 <= |x| < 1e6 (the
    integer part always whole, so 256 never reads as 2.6e+02), scientific otherwise."""
    if x == 0 or 1e-4 <= abs(x) < 1e6:
        return np.format_float_positional(x, precision=digits, unique=False, fractional=True,
                                          trim="-")
    return np.format_float_scientific(x, precision=digits, unique=False, trim="-")


def value_text(values: Any, dtype: Any) -> list[str]:
    """Values of ``dtype`` as the shortest decimals (``_decimal``) that round back to the same
    bits in ``dtype``: float32 0.1 reads 0.1, not float64's 0.10000000149011612; NaN, inf
    and -inf as such."""
    fmt = resolve(dtype, where="value_text")
    held = precision.to_format(np.asarray(values, np.float64).ravel(), fmt)  # exact
    wide = held.astype(np.float32).astype(np.float64)
    texts = []
    for bits, x in zip(_bits(held), wide, strict=True):
        if not math.isfinite(x):
            texts.append("NaN" if math.isnan(x) else ("inf" if x > 0 else "-inf"))
            continue
        # 17 digits after the point (or of the mantissa) hold every float32 value.
        tries = [_decimal(float(x), d) for d in range(18)]
        back = _bits(precision.to_format(np.array([float(t) for t in tries]), fmt))
        texts.append(tries[int(np.argmax(back == bits))])
    return texts


def make_inputs(distribution: str, n: int, trials: int, dtype: Any, *, seed: int = 0
                ) -> np.ndarray:
    """``trials`` input vectors ``(trials, n)`` in ``dtype``'s storage dtype.

    ``distribution``: one of ``DISTRIBUTIONS``, ``"uniform(a, b)"`` or ``"kappa(K)"`` (K >= 1):
    a cancelling part, p standard normal values and their negatives (exact sum 0 after
    rounding, as the format rounds x and -x alike), mixed with a random part of m = n - 2p
    values (about n/4) uniform on (0, 1], scaled so that sum|x| / |sum x| = K before rounding;
    the measured kappa of each trial differs by the rounding of the random part (more where
    it falls into the format's subnormals). Values are drawn in float64 and rounded once
    (``to_format``); the stream depends only on (seed, distribution, n). n and trials in
    [1, ``MAX_SIZE``], seed in [0, ``MAX_SEED``].
    """
    fmt = resolve(dtype, where="make_inputs")
    if not isinstance(distribution, str):
        raise TypeError(f"make_inputs: distribution must be a str, got {distribution!r}")
    n = check_int(n, 1, MAX_SIZE, where="make_inputs", arg="n")
    trials = check_int(trials, 1, MAX_SIZE, where="make_inputs", arg="trials")
    seed = check_int(seed, 0, MAX_SEED, where="make_inputs", arg="seed")
    rng = np.random.default_rng([seed, zlib.crc32(distribution.encode()), n])
    match = _UNIFORM.match(distribution)
    kappa = _KAPPA.match(distribution)
    if match:
        low, high = (_number(v, distribution) for v in match.groups())
        if not -math.inf < low < high < math.inf:
            raise ValueError(f"make_inputs: {distribution!r} needs finite a < b")
        top = float(finfo(fmt.name).max)
        if max(-low, high) > top:
            raise ValueError(f"make_inputs: {distribution!r} reaches {max(-low, high):g}, "
                             f"beyond {fmt.name}'s largest finite value {top:g}: its draws "
                             f"would round to inf or NaN; keep a and b within +-{top:g}")
        x = rng.uniform(low, high, (trials, n))
    elif kappa:
        target = _number(kappa[1], distribution)
        if not 1 <= target < math.inf:
            raise ValueError(f"make_inputs: {distribution!r} needs a finite K >= 1")
        if target > 1 and n < KAPPA_MIN_N:
            raise ValueError(f"make_inputs: {distribution!r} needs n >= {KAPPA_MIN_N} (a "
                             f"cancelling pair x, -x and a one-signed part), got n={n}")
        pairs = 0 if target == 1 else (n - max(1, n // 4)) // 2
        v = precision.to_format(rng.standard_normal((trials, pairs)), fmt).astype(np.float64)
        w = 1.0 - rng.uniform(0.0, 1.0, (trials, n - 2 * pairs))  # (0, 1]
        cancel = 2 * np.abs(v).sum(axis=1, keepdims=True)
        # sum|x| / sum x = (cancel + W) / W = K  =>  W = cancel / (K - 1) (K = 1: no pairs)
        total = cancel / (target - 1) if target > 1 and pairs else w.sum(axis=1, keepdims=True)
        w *= total / w.sum(axis=1, keepdims=True)
        x = rng.permuted(np.concatenate([v, -v, w], axis=1), axis=1)
        top = float(finfo(fmt.name).max)
        if np.abs(w).max(initial=0) > top:  # K near 1: the one-signed part outweighs the rest
            raise ValueError(f"make_inputs: {distribution!r} at n={n} scales its one-signed "
                             f"part up to {np.abs(w).max():.3g}, beyond {fmt.name}'s largest "
                             f"finite value {top:g}: a K this close to 1 needs a wider format")
    elif distribution == "uniform":
        x = rng.uniform(0.0, 1.0, (trials, n))
    elif distribution == "normal":
        x = rng.standard_normal((trials, n))
    elif distribution == "ones":
        x = np.ones((trials, n))
    elif distribution == "cancelling":
        v = precision.to_format(rng.standard_normal((trials, n // 2)), fmt).astype(np.float64)
        x = np.concatenate([v, -v, np.zeros((trials, n % 2))], axis=1)
        x = rng.permuted(x, axis=1)
    else:
        raise ValueError(f"make_inputs: unknown distribution {distribution!r}; valid: "
                         f"{list(DISTRIBUTIONS)}, 'uniform(a, b)' or 'kappa(K)'")
    return precision.to_format(x, fmt)


def _number(text: str, distribution: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise ValueError(f"make_inputs: {distribution!r}: {text!r} is not a number") from None


def distribution_key(distribution: str) -> tuple:
    """What makes two distribution names one workload: ``uniform`` is ``uniform(0,1)``, and
    ``kappa(10)`` is ``kappa(1e1)`` (names ``check_distribution`` has accepted)."""
    if distribution == "uniform":
        return ("uniform", 0.0, 1.0)
    if match := _UNIFORM.match(distribution):
        return ("uniform", *map(float, match.groups()))
    if match := _KAPPA.match(distribution):
        return ("kappa", float(match[1]))
    return (distribution,)


# --- the hardware's long-vector patterns (study orders beyond ``ORDERS``) --------------------

@functools.partial(jax.jit, static_argnums=1)
def _whole_reduce_chain(x, fmt: Format):
    c = _orders.load(x, fmt)
    add = _orders.Arith(fmt, resolve_config(None)).add
    while c.shape[-1] > 1:
        m, lanes = c.shape[-1], fmt.lanes
        repeats = -(-m // lanes)
        # The last repeat's mask leaves its other lanes out: +0 (carrier bits 0) in the tree.
        c = jnp.pad(c, [(0, 0)] * (c.ndim - 1) + [(0, repeats * lanes - m)])
        c = pair_tree(c.reshape(c.shape[:-1] + (repeats, lanes)), add)
    return _orders.store(c[..., 0], fmt)


def _float_accumulated(x, fmt: Format):
    # Cast to float is exact for every narrower format; one rounding back (CAST_RINT).
    wide = np.asarray(precision.sum(np.asarray(x).astype(np.float32), dtype="float",
                                    order="repeat_sequential"))
    return precision.to_format(wide, fmt) if fmt.name != "float" else wide


PATTERNS = {
    "whole_reduce_chain": "WholeReduceSum chained over repeats: each 256-byte repeat summed "
                          "by its adjacent-pair tree (a partial repeat's other lanes +0), the "
                          "repeat sums written contiguously and reduced again, until one value",
    "float_acc_repeat_sequential": "no ReduceSum accumulates half in float (its pages list "
                                   "half and float, each summed in its own type): the kernel "
                                   "pattern Cast to float (exact), ReduceSum method 1 in float "
                                   "(64 lanes a repeat), Cast back with CAST_RINT",
}
assert tuple(PATTERNS) == PATTERN_ORDERS  # STUDY_ORDERS (orders.py): ORDERS, then these
LONG_ORDERS = ("sequential", "adjacent_tree", "repeat_sequential", "repeat_tree",
               "repeat_vector_merge", "whole_reduce_chain", "float_acc_repeat_sequential")


def order_sum(x: Any, order: str, dtype: Any) -> np.ndarray:
    """The sums of ``x`` (trials, n) along a study order (``ORDERS`` or ``PATTERNS``)."""
    fmt = resolve(dtype, where="order_sum")
    if order in ORDERS:
        return np.asarray(precision.sum(x, dtype=fmt.name, order=order))
    x = np.asarray(x).astype(fmt.storage_dtype)
    if order == "whole_reduce_chain":
        return np.asarray(_whole_reduce_chain(jnp.asarray(x), fmt))
    if order == "float_acc_repeat_sequential":
        return _float_accumulated(x, fmt)
    raise ValueError(f"order_sum: unknown order {order!r}; valid: {list(STUDY_ORDERS)}")


def order_depth(order: str, n: int, dtype: Any) -> int | None:
    """Most adds on one input's way to the result (the k of the bounds, ``tree_depth``); None
    for kahan."""
    precision.check_args("order_depth", order=order, n=n)
    fmt = resolve(dtype, where="order_depth")
    return None if order == "kahan" else precision.tree_depth(order, n, fmt.name)


def order_gammas(order: str, n: int, dtype: Any, failure: float = precision.DEFAULT_FAILURE
                 ) -> tuple[float, float, float]:
    """(deterministic, probabilistic bound, lambda) of ``order`` in units of sum|x|: Higham's
    gamma_k and Higham & Mary's gamma~_k(lambda), lambda for ``failure`` (``higham_gamma``,
    ``higham_mary_gamma``; float32's u where the order accumulates in float32)."""
    precision.check_args("order_gammas", order=order, n=n, failure=failure)
    fmt = resolve(dtype, where="order_gammas")
    u = precision.unit_roundoff(fmt.name)
    lam_u = 2.0 ** -24 if precision.final_rounding(order, fmt) else u
    return (precision.higham_gamma(order, n, fmt.name),
            precision.higham_mary_gamma(order, n, fmt.name, failure=failure),
            precision.higham_mary_lambda(n, lam_u, failure))


def final_rounding(order: str, fmt: Any) -> float:
    """The term of ``order_gammas``' bounds that is no accumulated error
    (``precision.final_rounding``): shown per sum|x|, such a bound is u + (1 + u) gamma by
    |S| <= sum|x|; 0 for every order that rounds each add."""
    return precision.final_rounding(order, resolve(fmt, where="final_rounding"))


def relative_bound(per_sum_abs: float, order: str, fmt: Any, kappa):
    """The relative error a bound of ``per_sum_abs`` sum|x| (``order_gammas``) allows at
    condition number ``kappa``: kappa times it, but the final rounding to a narrower format
    (``final_rounding``) is relative to |S| itself, not scaled by kappa."""
    last = final_rounding(order, fmt)
    return last + kappa * (per_sum_abs - last)


def _bounds(x, fmt: Format, order: str, exact, failure: float):
    """Per-trial (deterministic, probabilistic) bounds on |computed - exact|."""
    return (precision.error_bound(x, dtype=fmt.name, order=order, exact_value=exact),
            precision.probabilistic_bound(x, dtype=fmt.name, order=order, exact_value=exact,
                                          failure=failure))


def measure(x: Any, *, dtype: Any = None, orders: Sequence[str] = ORDERS,
            failure: float = precision.DEFAULT_FAILURE) -> dict:
    """Every order's sums of ``x`` (trials, n) with their errors and bounds.

    ``orders``: from ``ORDERS`` and ``PATTERNS``. Returns ``{"exact": float64 (trials,),
    "sum_abs": float64 (trials,), "overflow": bool (trials,), order: {"value", "abs", "rel",
    "ulps", "bound", "prob_bound", "correctly_rounded"}}`` (per-trial arrays; ``overflow``
    where the exact sum is beyond the format's finite range, so that its correctly rounded
    value is ``overflow_value``; ``bound`` Higham's, ``prob_bound`` Higham & Mary's for
    ``failure``).
    """
    for order in orders:
        precision.check_args("measure", order=order)
    precision.check_args("measure", failure=failure)
    fmt = resolve(np.asarray(x).dtype if dtype is None else dtype, where="measure")
    x = np.asarray(x).astype(fmt.storage_dtype)
    rounded, exact = precision.exact_sums(x, dtype=fmt.name)
    out: dict = {"exact": exact, "sum_abs": np.abs(x.astype(np.float64)).sum(axis=-1),
                 "overflow": np.isfinite(exact) & ~np.isfinite(rounded.astype(np.float64))}
    for order in orders:
        value = order_sum(x, order, fmt)
        metrics = precision.errors(value, exact, dtype=fmt.name)
        bound, prob_bound = _bounds(x, fmt, order, exact, failure)
        same = _bits(value) == _bits(rounded)
        out[order] = dict(metrics, value=value, bound=bound, prob_bound=prob_bound,
                          correctly_rounded=same)
    return out


def _bits(a: np.ndarray) -> np.ndarray:
    return a.view(f"uint{a.dtype.itemsize * 8}")


@dataclasses.dataclass(frozen=True)
class Study:
    """The measured rows (one per format, distribution, n, order) and the settings.

    ``trial_rows``: one row per trial (its measured kappa, relative error and error / sum|x|,
    and whether its exact sum overflowed the format),
    over this study and its ``conditioning`` sweep (a Study of kappa(K) workloads at one n, or
    None)."""

    rows: list
    formats: tuple
    sizes: tuple
    distributions: tuple
    orders: tuple
    trials: int
    seed: int
    failure: float = precision.DEFAULT_FAILURE
    trial_rows: list = dataclasses.field(default_factory=list)
    conditioning: Study | None = None


# Peak memory per summed element (trials x distributions x n) of one (format, n) cell: about
# 72 bytes for half and 95 for float measured (float64 inputs, carriers, every order's levels,
# the exact sums); 128 leaves room.
BYTES_PER_ELEMENT = 128


def available_memory() -> int | None:
    """Bytes this machine can still give (MemAvailable), or None where it cannot tell."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def _size(nbytes: float) -> str:
    """A memory size as the error shows it: GiB, TiB from 1024 GiB on."""
    gib = nbytes / 2**30
    return f"{gib / 1024:.1f} TiB" if gib >= 1024 else f"{gib:.1f} GiB"


def study_format(spec: Any) -> str:
    """The name of a format the study can sum (``precision.SUM_FORMATS``: the list that
    ``precision.sum`` checks), else an error listing exactly those."""
    valid = list(precision.SUM_FORMATS)
    try:
        name = resolve(spec, where="study", arg="formats").name
    except TypeError:  # resolve's own list names every Ascend type, most not summable
        raise TypeError(f"study: formats: unknown format {spec!r}; valid: {valid}") from None
    if name not in valid:
        raise ValueError(f"study: formats: {name!r} cannot be summed here; valid: {valid}")
    return name


def check_unique(values: Sequence, *, where: str, arg: str, keys: Sequence | None = None
                 ) -> None:
    """A ValueError naming the first value of ``values`` that repeats an earlier one (by
    ``keys``, one per value, where given: two spellings of one format), else nothing: a
    repeated size, format, distribution, order or kappa would measure, and write, its rows
    twice."""
    keys = list(values) if keys is None else list(keys)
    for i, key in enumerate(keys):
        if key in keys[:i]:
            first = list(values)[keys.index(key)]
            same = "" if first == list(values)[i] else f" (as {first!r})"
            raise ValueError(f"{where}: {arg}: {list(values)[i]!r} is given more than once"
                             f"{same} in {list(values)}; give each once")


def check_distribution(dist: Any, where: str = "study", dtype: str = "float",
                       n: int = KAPPA_MIN_N) -> str:
    """A distribution ``make_inputs`` knows, and can draw in ``dtype`` at ``n``, else its
    error naming ``where``."""
    try:
        make_inputs(dist, n, 1, dtype)  # raises on an unknown name, cheaply
    except (TypeError, ValueError) as error:
        raise type(error)(f"{where}: distributions: "
                          f"{str(error).removeprefix('make_inputs: ')}") from None
    return dist


def check_study(*, formats: Sequence[str], sizes: Sequence[int], distributions: Sequence[str],
                trials: int, orders: Sequence[str], kappas: Sequence[float] = (),
                kappa_n: int = DEFAULT_KAPPA_N, failure: float = precision.DEFAULT_FAILURE,
                seed: int = 0) -> tuple:
    """Every setting checked before any work (the format names are returned): known formats
    that can be summed, sizes, trials and kappa_n in [1 (kappa_n: 2), ``MAX_SIZE``], a seed
    in [0, ``MAX_SEED``], known distributions and orders, kappas >= 1, none of these given
    twice, a failure probability in (0, 1), and the largest cell's memory against what this
    machine has available."""
    where = "study"
    for arg, given in (("formats", formats), ("distributions", distributions),
                       ("orders", orders)):
        if isinstance(given, str):  # would be read letter by letter
            raise TypeError(f"{where}: {arg} must be a sequence of names, got the str "
                            f"{given!r}; write [{given!r}]")
    names = tuple(study_format(f) for f in formats)
    check_unique(formats, where=where, arg="formats", keys=names)
    check_int(trials, 1, MAX_SIZE, where=where, arg="trials")
    for n in sizes:
        check_int(n, 1, MAX_SIZE, where=where, arg="sizes (each n)")
    check_unique(sizes, where=where, arg="sizes")
    check_int(kappa_n, KAPPA_MIN_N, MAX_SIZE, where=where, arg="kappa_n")
    check_int(seed, 0, MAX_SEED, where=where, arg="seed")
    for order in orders:
        if order not in STUDY_ORDERS:
            raise ValueError(f"{where}: unknown order {order!r}; valid: {list(STUDY_ORDERS)}")
    check_unique(orders, where=where, arg="orders")
    for dist in distributions:
        check_distribution(dist, where)
        for name in names:  # its range in each format, and n >= 3 for a kappa(K)
            check_distribution(dist, where, name, min([KAPPA_MIN_N, *sizes]))
            if _KAPPA.match(dist):  # a K near 1 may outgrow the format: one trial at each n
                for n in sizes:
                    if n <= _DRAWN_IN_CHECK:
                        check_distribution(dist, where, name, n)
    check_unique(distributions, where=where, arg="distributions",
                 keys=[distribution_key(d) for d in distributions])
    for kappa in kappas:
        if (isinstance(kappa, (bool, np.bool_))
                or not isinstance(kappa, (int, float, np.integer, np.floating))):
            raise TypeError(f"{where}: kappas: each kappa must be a real number, got {kappa!r}")
        if not 1 <= kappa < math.inf:
            raise ValueError(f"{where}: kappas: {kappa} is outside the valid range [1, inf)")
    # The workload's name holds its K: kappas with one name would be one workload.
    check_unique(kappas, where=where, arg="kappas", keys=[kappa_name(k) for k in kappas])
    if kappa_n <= _DRAWN_IN_CHECK:  # a K near 1 may outgrow a narrow format
        for kappa in kappas:
            for name in names:
                try:
                    make_inputs(kappa_name(kappa), kappa_n, 1, name)
                except ValueError as error:
                    raise ValueError(f"{where}: kappas: "
                                     f"{str(error).removeprefix('make_inputs: ')}") from None
    precision.check_args(where, failure=failure)
    if not (names and sizes and distributions and orders):
        raise ValueError(f"{where}: nothing to measure (formats, sizes, distributions and "
                         f"orders must each name at least one)")
    cells, sweep = len(distributions) * max(sizes), len(kappas) * kappa_n
    need = trials * max(cells, sweep) * BYTES_PER_ELEMENT
    have = available_memory()
    if have is not None and need > have:
        what = (f"n={max(sizes)} needs about {_size(need)} ({trials} trials x "
                f"{len(distributions)} distributions x n" if cells >= sweep else
                f"the conditioning sweep needs about {_size(need)} ({trials} trials x "
                f"{len(kappas)} kappas x kappa_n={kappa_n}")
        lower = "sizes or trials (--sizes" if cells >= sweep else "kappa_n or trials (--kappa-n"
        raise MemoryError(f"{where}: {what} x ~{BYTES_PER_ELEMENT} bytes), more than the "
                          f"{_size(have)} this machine has available; lower {lower} / "
                          f"--trials)")
    return names


def prepare_output(out: str | Path) -> Path:
    """The output directory, created and proven writable before any work is done."""
    if not str(out).strip():  # an unset variable: the study would land in the working dir
        raise ValueError("study: --out is empty; name the directory to write the study into")
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise NotADirectoryError(f"study: --out {str(out)!r} exists and is not a directory")
    try:
        out.mkdir(parents=True, exist_ok=True)
        probe = out / f".study-write-test-{os.getpid()}"
        probe.write_bytes(b"")
        probe.unlink()
    except OSError as error:
        raise OSError(f"study: cannot write into --out {str(out)!r}: "
                      f"{error.strerror or error}") from None
    return out


def _quantile(a: np.ndarray, q: float) -> float:
    """A sample of ``a`` (no interpolation: inf and 0 stay what they are)."""
    return float(np.quantile(a, q, method="inverted_cdf"))


ERROR_COLUMNS = ("max_abs_err", "mean_rel_err", "p50_rel_err", "p90_rel_err", "p99_rel_err",
                 "max_rel_err", "mean_ulps", "max_ulps", "p50_err_over_sum_abs",
                 "p90_err_over_sum_abs", "p99_err_over_sum_abs", "max_err_over_sum_abs")


def _error_stats(r: dict, scaled: np.ndarray, keep: np.ndarray, exact: np.ndarray) -> dict:
    """The ``ERROR_COLUMNS`` of one row over the trials ``keep`` (exact sum in range); NaN
    where there are none: an overflow has no rounding error to measure. ULPs only over the
    trials whose exact sum is not 0 (an ULP at 0 is the least subnormal's: n/a, as in the
    Markdown), NaN where there are none."""
    if not keep.any():
        return dict.fromkeys(ERROR_COLUMNS, math.nan)
    nonzero = keep & (exact != 0)
    ulps = r["ulps"][nonzero] if nonzero.any() else np.array([math.nan])
    rel, scaled = r["rel"][keep], scaled[keep]
    return {"max_abs_err": float(np.max(r["abs"][keep])), "mean_rel_err": float(np.mean(rel)),
            "p50_rel_err": _quantile(rel, 0.5), "p90_rel_err": _quantile(rel, 0.9),
            "p99_rel_err": _quantile(rel, 0.99), "max_rel_err": float(np.max(rel)),
            "mean_ulps": float(np.mean(ulps)), "max_ulps": float(np.max(ulps)),
            "p50_err_over_sum_abs": _quantile(scaled, 0.5),
            "p90_err_over_sum_abs": _quantile(scaled, 0.9),
            "p99_err_over_sum_abs": _quantile(scaled, 0.99),
            "max_err_over_sum_abs": float(np.max(scaled))}


def _returned(values: np.ndarray, fmt: str) -> str:
    """What an order returned in its overflow trials, in the format's own decimals: the
    distinct values, up to three ("NaN", "inf; 2048"), then "..."; "" without such trials."""
    distinct = np.unique(values.astype(np.float64))  # one NaN at the end, at most
    return "; ".join(value_text(distinct[:3], fmt) + ["..."] * (distinct.size > 3))


# The orders whose adds run as chains, each add taking the running sum and one addend: the
# sequential sum; ReduceSum's method 1 (the repeats' sums in a chain); its method 3 (each lane
# a chain over the repeats). Each can stagnate.
CHAIN_ORDERS = ("sequential", "repeat_sequential", "repeat_vector_merge")


def _chains(x: np.ndarray, order: str, lanes: int) -> tuple[np.ndarray, np.ndarray]:
    """``order``'s chains of ``x`` (trials, n) as addends (trials, chains, steps), in float64
    (a repeat's sum exact), and which steps hold an addend (a short last repeat leaves lanes
    of method 3 without one)."""
    trials, n = x.shape
    if order == "sequential":
        return x[:, None, :], np.ones((1, 1, n), bool)
    repeats = -(-n // lanes)
    held = np.arange(repeats * lanes) < n
    blocks = np.zeros((trials, repeats * lanes))
    blocks[:, :n] = x
    blocks = blocks.reshape(trials, repeats, lanes)
    if order == "repeat_sequential":
        return blocks.sum(axis=-1)[:, None, :], np.ones((1, 1, repeats), bool)
    return blocks.transpose(0, 2, 1), held.reshape(repeats, lanes).T[None]


def lost_addends(x: Any, dtype: Any, order: str = "sequential") -> np.ndarray:
    """Per trial of ``x`` (trials, n): the share of a chain order's addends (each after the
    first of its chain: x_1 .. x_{n-1} for ``sequential``; the repeats' sums for
    ``repeat_sequential``; each lane's elements for ``repeat_vector_merge``) whose magnitude
    is at most half an ULP of ``dtype`` at the exact running sum before them. Where a chain's
    running sum has reached that value, round to nearest returns it unchanged (below half an
    ULP; at half an ULP, a tie, whenever the running sum is even, as 2048 + 1 in half): the
    addend is lost, and on one-signed data every lost addend errs the same way
    (stagnation)."""
    fmt = resolve(dtype, where="lost_addends")
    if order not in CHAIN_ORDERS:
        raise ValueError(f"lost_addends: order {order!r} adds no chain; valid: "
                         f"{list(CHAIN_ORDERS)}")
    x = np.asarray(x, np.float64).reshape(-1, np.shape(x)[-1])
    addends, held = _chains(x, order, fmt.lanes)
    if addends.shape[-1] < 2:
        return np.zeros(x.shape[0])
    running = np.cumsum(addends, axis=-1)[..., :-1]
    lost = (np.abs(addends[..., 1:]) <= precision.ulp(running, fmt.name) / 2) & held[..., 1:]
    return lost.sum(axis=(1, 2)) / held[..., 1:].sum()


def _cells(fmt: str, n: int, distributions: Sequence[str], trials: int, seed: int,
           orders: Sequence[str], failure: float, sweep: str) -> tuple[list, list]:
    """The rows and trial rows of one (format, n) over every distribution and order.

    A trial whose exact sum is beyond the format's finite range (``overflow_trials``) is left
    out of the error columns and of the bound counts: its correctly rounded sum is inf or NaN
    (``overflow_value``), so a finite result there is no accuracy (``overflow_results`` says
    what each order returned). ``checked_trials`` are those held against the bounds: exact sum
    in range and a finite result (an overflowed partial sum is no rounding error either)."""
    x = np.concatenate([make_inputs(d, n, trials, fmt, seed=seed) for d in distributions])
    m = measure(x, dtype=fmt, orders=orders, failure=failure)
    rows, trial_rows = [], []
    for k, dist in enumerate(distributions):
        part = slice(k * trials, (k + 1) * trials)
        sum_abs, exact, beyond = m["sum_abs"][part], m["exact"][part], m["overflow"][part]
        with np.errstate(divide="ignore", invalid="ignore"):
            kappa = np.where(sum_abs == 0, 1.0, sum_abs / np.abs(exact))
        one_sign = _quantile(kappa, 0.5) <= 1 + 1e-9
        lost = {order: _quantile(lost_addends(x[part], fmt, order), 0.5)
                for order in orders if order in CHAIN_ORDERS}
        for order in orders:
            r = {key: v[part] for key, v in m[order].items()}
            with np.errstate(invalid="ignore", divide="ignore"):
                scaled = np.where(r["abs"] == 0, 0.0, r["abs"] / sum_abs)
            det, prob, lam = order_gammas(order, n, fmt, failure)
            checked = ~beyond & np.isfinite(r["abs"])
            over_bound = int(np.sum(checked & (r["abs"] > r["bound"])))
            first_order = order in FIRST_ORDER_ORDERS
            rows.append({
                "format": fmt, "distribution": dist, "n": n, "order": order,
                "trials": trials, "sweep": sweep,
                **_error_stats(r, scaled, ~beyond, exact),
                "depth": order_depth(order, n, fmt),
                "bound_over_sum_abs": det,
                "prob_bound_over_sum_abs": prob,
                "lambda": lam,
                "failure": failure,
                "over_bound": over_bound,
                "over_prob_bound": int(np.sum(checked & (r["abs"] > r["prob_bound"]))),
                "within_bound": over_bound == 0,
                "first_order_bound": first_order,
                "median_kappa": _quantile(kappa, 0.5),
                "random_model": dist not in NOT_RANDOM,
                "correctly_rounded": (float(np.mean(r["correctly_rounded"][~beyond]))
                                      if not beyond.all() else math.nan),
                "mean_exact": float(np.mean(exact)),
                "exact_is_zero": bool(np.all(exact == 0)),
                # kappa undefined: the exact sum of values not all zero is 0 (a kappa(K)
                # workload whose one-signed part rounded to 0 in a narrow format)
                "zero_exact_trials": int(np.sum((exact == 0) & (sum_abs > 0))),
                "lost_addends": lost.get(order, math.nan),
                "stagnates": bool(one_sign and lost.get(order, 0) >= STAGNATION_SHARE),
                "overflow_trials": int(beyond.sum()),
                "overflow_results": _returned(r["value"][beyond], fmt),
                "checked_trials": int(checked.sum()),
            })
            trial_rows += [{"sweep": sweep, "format": fmt, "distribution": dist, "n": n,
                            "order": order, "trial": t, "kappa": float(kappa[t]),
                            "rel_err": float(r["rel"][t]),
                            "err_over_sum_abs": float(scaled[t]),
                            "overflow": bool(beyond[t])} for t in range(trials)]
    return rows, trial_rows


def kappa_name(kappa: float) -> str:
    """The distribution name of a kappa: ``kappa(1e+03)``, ``kappa(1.5e+03)``: the fewest
    digits that read back as the same kappa (the workload takes its K from the name)."""
    text = next(t for d in range(18) if float(t := f"{kappa:.{d}e}") == kappa)
    return f"kappa({text})"


def run_study(*, formats: Sequence[str] = DEFAULT_FORMATS, sizes: Sequence[int] = DEFAULT_SIZES,
              distributions: Sequence[str] = DEFAULT_DISTRIBUTIONS, trials: int = DEFAULT_TRIALS,
              seed: int = 0, orders: Sequence[str] = ORDERS, progress: bool = False,
              kappas: Sequence[float] = DEFAULT_KAPPAS, kappa_n: int = DEFAULT_KAPPA_N,
              failure: float = precision.DEFAULT_FAILURE) -> Study:
    """Measure every (format, n, distribution, order) cell over ``trials`` random inputs, and
    (unless ``kappas`` is empty) the conditioning sweep: ``kappa(K)`` workloads for each K at
    n = ``kappa_n``, same formats, orders and trials.

    Each row holds the maxima, means and percentiles (p50, p90, p99) over the trials whose
    exact sum is in the format's range (``_cells``) of the relative error and of the error /
    sum|x|, the ULP errors, Higham's bound
    (``higham_gamma``) and Higham & Mary's probabilistic bound for ``failure``
    (``higham_mary_gamma``, with its lambda) in units of sum|x|, how many trials exceeded
    each, the median measured kappa and the share of trials that gave the correctly rounded
    sum. ``orders`` may name ``PATTERNS`` too.
    """
    formats = check_study(formats=formats, sizes=sizes, distributions=distributions,
                          trials=trials, orders=orders, kappas=kappas, kappa_n=kappa_n,
                          failure=failure, seed=seed)
    cells = len(formats) * (len(sizes) + bool(kappas))
    bar = Progress(cells, "study", enabled=progress, unit="cells")
    rows, trial_rows, kappa_rows = [], [], []
    for fmt in formats:
        for n in sizes:
            r, t = _cells(fmt, n, distributions, trials, seed, orders, failure, "n")
            rows += r
            trial_rows += t
            bar.update(note=f"{fmt} n={n}")
        if kappas:
            r, t = _cells(fmt, kappa_n, [kappa_name(k) for k in kappas], trials, seed, orders,
                          failure, "kappa")
            kappa_rows += r
            trial_rows += t
            bar.update(note=f"{fmt} kappa")
    bar.close()
    conditioning = None
    if kappas:
        conditioning = Study(kappa_rows, formats, (kappa_n,),
                             tuple(kappa_name(k) for k in kappas), tuple(orders), trials, seed,
                             failure)
    return Study(rows, formats, tuple(sizes), tuple(distributions), tuple(orders), trials, seed,
                 failure, trial_rows, conditioning)


def run_long_vectors(*, sizes: Sequence[int] = LONG_SIZES,
                     distributions: Sequence[str] = LONG_DISTRIBUTIONS,
                     trials: int = LONG_TRIALS, seed: int = 0, orders: Sequence[str] = LONG_ORDERS,
                     failure: float = precision.DEFAULT_FAILURE, progress: bool = False
                     ) -> Study:
    """The hardware's long-vector patterns in half: ReduceSum's three methods, WholeReduceSum
    chained over repeats and the float-accumulated pattern (with the sequential sum and the
    plain adjacent-pair tree beside them) over ``sizes`` (default 2^10..2^20), few trials."""
    return run_study(formats=("half",), sizes=sizes, distributions=distributions,
                     trials=trials, seed=seed, orders=orders, progress=progress, kappas=(),
                     failure=failure)


# --- reports --------------------------------------------------------------------------------

def _fmt(v: float) -> str:
    if v == 0:
        return "0"
    if math.isnan(v):  # a statistic over no trial (every one overflowed)
        return "n/a"
    if math.isinf(v):
        return "inf"
    return f"{v:.1e}"


ORDER_DESCRIPTIONS = {
    "sequential": "((x0 + x1) + x2) + ..., every add rounded to the format",
    "adjacent_tree": "adjacent pairs level by level (the hardware's DataBlock / register "
                     "tree), every add rounded",
    "repeat_sequential": "ReduceSum method 1: each 256-byte repeat by the adjacent-pair tree, "
                         "the repeat sums added in order",
    "repeat_tree": "ReduceSum method 2: the repeat sums by an adjacent-pair tree (padded "
                   "with +0)",
    "repeat_vector_merge": "ReduceSum method 3: the repeats merged lane by lane in order, then "
                           "the tree over the merged register",
    "numpy_pairwise": "NumPy's pairwise summation (blocks of 128, 8 accumulators) "
                      "accumulated in float32, rounded once to the format: np.sum's order for "
                      "float16 and float32 arrays along a contiguous last axis (along another "
                      "axis NumPy adds one element at a time in the array's type: "
                      "`sequential`). np.sum of an ml_dtypes bfloat16 array is not this: "
                      "NumPy adds it sequentially in bfloat16 (`sequential`)",
    "kahan": "Kahan's compensated sum in the format",
    **PATTERNS,
}

COLUMNS = (
    ("**error / sum|x|: p50 / max (bounds)**: the median and the largest |computed - exact| "
    "over the trials divided by sum|x| (so cells of different n compare), then, in brackets, "
    "the two bounds in the same unit: Higham's deterministic gamma_k = k u / (1 - k u) and "
    "Higham & Mary's probabilistic gamma~_k(lambda) (see Bounds), with u the format's unit "
    "roundoff and k the most adds on one path of the order's tree (kahan: 2u for both, the "
    "first-order term of Higham's (4.8), (2u + O(n u^2)) sum|x|: no bound once n u is not "
    "small, so trials above it are counted but not flagged). A bound of 1 or more is "
    "vacuous: it allows an error as large as sum|x| itself, which says nothing; `inf` as a "
    "bound means k u >= 1 (sequential sums of 2049 or more halves, k = n - 1). The "
    "probabilistic one stays finite, but is vacuous too where lambda "
    "sqrt(k) u reaches about 1 (as in fp8). `overflow (returned R)` is a cell where every "
    "trial's exact sum is beyond the format's largest finite value, so its correctly rounded "
    "value is inf (NaN in a format without inf, such as fp8_e4m3fn_t): R is what the order "
    "returned there, and the cell is neither measured nor ranked; `[m of t overflow]` a cell "
    "where m trials did so, measured over the others. `inf` as an error means the order's "
    "result is not finite though the exact sum is in range (a partial sum overflowed). A `!` "
    "marks a cell where some trial with neither kind of overflow exceeded the deterministic "
    "bound, a `?` one where some such trial exceeded the probabilistic bound. For an order "
    "that accumulates in float32 and rounds once to a narrower format (numpy_pairwise, "
    "float_acc_repeat_sequential) the bound on a trial is u |S| + (1 + u) gamma(float32) "
    "sum|x|; the cell shows its largest value over |S| <= sum|x|, u + (1 + u) gamma, which is "
    "loose where the sum cancels (u |S| is then small); the `!` and `?` marks and the counts "
    "use each trial's own bound."),
    ("**max ULPs (correctly rounded)**: the largest error in units in the last place of the "
    "format at the exact sum, over the trials whose exact sum is not 0 (n/a where every one "
    "is), then the share of trials whose "
    "result equals the exact sum rounded once to the format, both over the trials whose exact "
    "sum is in range. Where the exact sum itself is beyond the format's largest finite value, "
    "the correctly rounded result is inf or NaN, and an order that returns it is not accurate "
    "there: such trials are left out (`overflow`), which is not a contradiction."),
    ("**relative error vs kappa**: per kappa(K) workload, the median measured kappa = "
    "sum|x| / |exact sum|, then per order the median and largest relative error |computed - "
    "exact| / |exact| over the trials and, in brackets, kappa times the probabilistic bound "
    "(the relative error it allows at the median kappa; for an order that accumulates in "
    "float32 and rounds once to a narrower format, u + kappa (1 + u) gamma~(float32): that last "
    "rounding is relative to the sum itself); `degenerate` where the exact sum is "
    "0 in most trials (the one-signed part rounded to 0 in a narrow format), so that kappa "
    "is undefined."),
    ("The CSV files hold every row (`sweep`: `n` for the main cells, `kappa` for the "
    "conditioning sweep) with the mean, p50, p90, p99 and max of the relative error (each "
    "percentile one measured trial, NumPy's inverted_cdf: no interpolation, so inf and 0 stay "
    "what they are; p50 of an even count is the lower middle trial, and below 100 trials p99 "
    "is the largest), the "
    "max absolute error, p50 to max of the error / sum|x|, the mean and max ULPs (NaN where "
    "every exact sum is 0), the share of trials correctly rounded (`correctly_rounded`), the "
    "depth k, both bounds, lambda, the failure probability, the number of trials above each "
    "bound and whether there were none (`within_bound`, for kahan against its first-order "
    "term), whether the distribution is one the probabilistic model covers (`random_model`: "
    "not `ones`), the mean exact sum and whether every exact sum is 0 (`mean_exact`, "
    "`exact_is_zero`), the median kappa, the trials whose exact sum overflowed "
    "(`overflow_trials`, left out of the error columns, which are NaN where every trial "
    "did), what the order returned there (`overflow_results`), the trials held against "
    "the bounds (`checked_trials`), a sequential cell's median share of lost addends and "
    "whether it stagnates (`lost_addends`, `stagnates`; also for the repeat chains of "
    "repeat_sequential and repeat_vector_merge), whether the order's bound is a "
    "first-order term only (`first_order_bound`: kahan) and the trials whose exact sum is 0 "
    "though their values are not (`zero_exact_trials`); `study_trials.csv` holds each "
    "trial's kappa, errors and whether its exact sum overflowed."),
)


def _lambda_about(n: int, failure: float) -> float:
    return math.sqrt(2 * math.log(2 * n / failure))  # (1 - u) ~ 1


def bounds_text(failure: float = precision.DEFAULT_FAILURE) -> list[str]:
    """The two bounds stated in words, with the constant, the probability and the reference."""
    return [
        ("- Deterministic (Higham, Accuracy and Stability of Numerical Algorithms, 2nd ed., "
        "2002, section 4.2): |computed - exact| <= gamma_k sum|x|, gamma_k = "
        "k u / (1 - k u), for every input and every rounding; inf once k u >= 1."),
        (f"- Probabilistic ({precision.HIGHAM_MARY}; Theorem 2.4 for one product of k "
        "rounding errors, Theorem 3.1 for inner products, summation being the product with a "
        "vector of ones): if the rounding errors are independent random variables of mean 0, "
        "|computed - exact| <= gamma~_k(lambda) sum|x| with gamma~_k(lambda) = "
        "exp(lambda sqrt(k) u + k u^2 / (1 - u)) - 1 ~ lambda sqrt(k) u, with probability at "
        "least 1 - 2n exp(-lambda^2 (1 - u)^2 / 2) (a union over the n inputs' products). The "
        f"study fixes that failure probability at {failure:g} and takes lambda = "
        f"sqrt(2 ln(2n / {failure:g})) / (1 - u) (about {_lambda_about(16, failure):.2g} at "
        f"n = 16, {_lambda_about(65536, failure):.2g} at n = 65536): "
        "a bound that grows like sqrt(k) u, finite for every k (but vacuous, 1 or more, once "
        "lambda sqrt(k) u is about 1). For small k it is larger than gamma_k (lambda sqrt(k) > "
        "k); it is the tighter one from k of about lambda^2 on."),
        ("- k is each order's own depth: n - 1 sequential, ceil(log2 n) adjacent_tree, "
        "ceil(log2 lanes) plus the repeats' chain (repeat_sequential, repeat_vector_merge) or "
        "tree (repeat_tree) for ReduceSum, NumPy's plan for numpy_pairwise (in float32, plus "
        "u |S| for the one rounding to a narrower format), the sum over levels for "
        "whole_reduce_chain."),
        ("- What the model covers: round-to-nearest is deterministic; its errors behave like "
        "independent mean-zero draws on random data whose partial sums keep many bits below "
        "the addends. It does not cover constant inputs (`ones`: every rounding error is the "
        "same function of the step) nor a running sum whose ULP has outgrown its addends "
        f"(stagnation: a chain of adds on one-signed data (the sequential sum; ReduceSum's "
        f"repeat sums in a chain, repeat_sequential; each lane's chain over the repeats, "
        f"repeat_vector_merge) where at least "
        f"{STAGNATION_SHARE:.0%} of the addends are each at most half an ULP of the exact "
        "running sum before them, so that adding them changes nothing and every such error "
        "has the same sign; its error has reached its ceiling, and the growth fits leave it "
        "out). Cells where the measured error exceeds the probabilistic bound are flagged (`?`) "
        "and listed in the findings, with the reason where the model does not cover them."),
    ]


def _distribution_text(dist: str) -> str:
    match = _UNIFORM.match(dist)
    if match:
        return f"uniform on [{match[1]}, {match[2]})"
    kappa = _KAPPA.match(dist)
    if kappa:
        return (f"standard normal values with their negatives (about 3n/4) and a uniform (0, 1] "
                f"part scaled so that sum|x| / |sum x| = {float(kappa[1]):g} before rounding")
    return DISTRIBUTIONS.get(dist, dist)


def _rel(a: float, b: float) -> str:
    """How many times larger a is than b, in words."""
    if b == 0:
        return "infinitely" if a else "equally"
    return f"{a / b:.1f}x"


def findings(study: Study) -> list[str]:
    """The study's findings in words, each with the numbers behind it (Markdown bullets)."""
    by_key = {(r["format"], r["distribution"], r["n"], r["order"]): r for r in study.rows}
    n_max = max(study.sizes)
    lines = []
    for fmt in study.formats:
        rows = [r for r in study.rows if r["format"] == fmt]
        lines += overflow_findings(study, fmt)
        for dist in study.distributions:
            if "sequential" not in study.orders or "adjacent_tree" not in study.orders:
                continue
            seq_row = by_key[fmt, dist, n_max, "sequential"]
            seq = seq_row["max_err_over_sum_abs"]
            tree = by_key[fmt, dist, n_max, "adjacent_tree"]["max_err_over_sum_abs"]
            if seq == tree == 0:
                continue
            if not (math.isfinite(seq) and math.isfinite(tree)):  # overflow (NaN: none kept)
                continue
            if tree == 0:
                verdict = "the tree is exact"
            elif tree == seq:
                verdict = "the two are equally accurate"
            else:
                better = "tree" if tree < seq else "sequential sum"
                verdict = f"the {better} is {_rel(max(seq, tree), min(seq, tree))} more accurate"
            if seq_row["stagnates"]:
                verdict += (f" (the sequential sum stagnates: {_percent(seq_row)} of the "
                            "addends are at most half an ULP of the running sum before them, "
                            "and adding one changes nothing)")
            lines.append(f"- **{fmt}, {dist}, n = {n_max}:** the hardware's adjacent-pair "
                         f"tree's largest error is {_fmt(tree)} of sum|x|, the sequential "
                         f"sum's {_fmt(seq)}: {verdict}.")
        for dist in study.distributions:
            cells = {o: by_key[fmt, dist, n_max, o]["max_err_over_sum_abs"]
                     for o in study.orders}
            finite = {o: e for o, e in cells.items() if math.isfinite(e)}
            if len(finite) > 1 and len(set(finite.values())) > 1:
                best, worst = min(finite.values()), max(finite.values())
                lines.append(f"- {fmt}, {dist}, n = {n_max}: most accurate "
                             f"{_those(finite, best)} ({_fmt(best)}), least "
                             f"{_those(finite, worst)} ({_fmt(worst)}).")
        broken = [r for r in rows if not r["within_bound"]  # counted without overflows
                  and not r["first_order_bound"]]  # kahan's 2u: counted in its own line
        if broken:
            listed = "; ".join(f"{r['order']} on {r['distribution']}, n = {r['n']}"
                               for r in broken)
            lines.append(f"- **{fmt}: bound exceeded** without an overflow: {listed}.")
        else:
            lines.append(f"- {fmt}: every finite error lies within Higham's bound for its "
                         f"order.")
        lines += order_findings(study, fmt)
    if study.conditioning is not None:
        lines += conditioning_findings(study.conditioning)
    return lines


def _those(errors: dict, value: float) -> str:
    """The orders whose error is ``value``, in words (every one of a tie)."""
    tied = [order for order, error in errors.items() if error == value]
    return tied[0] if len(tied) == 1 else ", ".join(tied[:-1]) + " and " + tied[-1]


def _percent(row: dict) -> str:
    """The median share of lost addends of a sequential row, in percent."""
    return f"{100 * row['lost_addends']:.0f}%"


def _overflow_cell(study: Study, fmt: str, dist: str, n: int) -> str | None:
    """The finding of one cell whose exact sum overflowed in some trial, or None."""
    cell = [r for r in study.rows if (r["format"], r["distribution"], r["n"]) == (fmt, dist, n)]
    count = cell[0]["overflow_trials"] if cell else 0
    if not count:
        return None
    word = overflow_value(fmt)
    groups: dict[str, list] = {}
    for r in sorted(cell, key=lambda r: r["overflow_results"] != word):  # the format's first
        groups.setdefault(r["overflow_results"], []).append(r["order"])
    returned = "; ".join(f"{', '.join(orders)} returned {what.replace('; ', ' or ')}"
                         for what, orders in groups.items())
    rounds_to = f"NaN ({fmt} has no inf)" if word == "NaN" else "inf"
    top = value_text([finfo(fmt).max], fmt)[0]
    finite = [r["order"] for r in cell  # np.unique puts finite values before inf and NaN
              if set(r["overflow_results"].split("; ")) - {"NaN", "inf", "-inf", "..."}]
    return (f"- **{fmt}, {dist}, n = {n}: overflow.** {returned}. In {count} of "
            f"{cell[0]['trials']} trials (mean exact sum {cell[0]['mean_exact']:.6g}) the exact "
            f"sum is beyond {fmt}'s largest finite value {top}, so its correctly rounded value "
            f"is {rounds_to}. These trials are neither ranked nor held against the bounds"
            + (f"; a finite result there ({', '.join(finite)}) is a sum that lost addends, "
               f"not an accurate one." if finite else "."))


def overflow_findings(study: Study, fmt: str) -> list[str]:
    """Per cell: trials whose exact sum is beyond the format's range (what each order returned,
    left out of the ranking and the bounds), then orders whose partial sum overflowed though
    the exact sum is in range (an infinite error, no rounding error: not held against the
    bounds either). Markdown bullets."""
    lines = [line for dist in study.distributions for n in study.sizes
             if (line := _overflow_cell(study, fmt, dist, n))]
    word = overflow_value(fmt)
    what = "inf, or NaN where +inf met -inf" if word == "inf" else word
    for r in study.rows:
        partial = r["trials"] - r["overflow_trials"] - r["checked_trials"]
        if r["format"] == fmt and partial:
            lines.append(f"- **{fmt}, {r['distribution']}, n = {r['n']}: {r['order']} "
                         f"overflowed in a partial sum** in {partial} of the "
                         f"{r['trials'] - r['overflow_trials']} trials whose exact sum is in "
                         f"range (it returned {what}): an infinite error, not a rounding "
                         f"error, so not held against the bounds.")
    return lines


def _growth(study: Study, fmt: str, order: str) -> tuple[float, list, float, list, list] | None:
    """The log-log slope of the median error / sum|x| against the depth k (n for kahan) over
    the sizes, averaged over the random-model distributions of one sign (median kappa 1, so
    that sum|x| is |sum x| and the partial sums grow with k, as the bounds assume) with a
    nonzero finite median at two or more depths; those distributions; the ratio of the
    largest to the smallest k fitted; the sizes left out because the sum stagnates there
    (its error has reached its ceiling: no rate); and the sizes fitted (not n = 1, k = 0, nor
    a size whose trials all overflowed). None without such data."""
    by_key = {(r["distribution"], r["n"]): r for r in study.rows
              if r["format"] == fmt and r["order"] == order}
    slopes, used, spans, stagnant, fitted = [], [], [], set(), set()
    for dist in study.distributions:
        if dist in NOT_RANDOM or any(by_key[dist, n]["median_kappa"] > 1 + 1e-9
                                     for n in study.sizes):
            continue
        stagnant |= {n for n in study.sizes if by_key[dist, n]["stagnates"]}
        pts = [(n, by_key[dist, n]["depth"] or n, by_key[dist, n]["p50_err_over_sum_abs"])
               for n in study.sizes if not by_key[dist, n]["stagnates"]]
        pts = [(n, k, e) for n, k, e in pts if k > 0 and 0 < e < math.inf]
        if len({k for _, k, _ in pts}) >= 2:
            fitted |= {n for n, _, _ in pts}
            k, e = np.log(np.array([p[1:] for p in pts], float)).T
            slopes.append(float(np.polyfit(k, e, 1)[0]))
            used.append(dist)
            spans.append(float(np.exp(k.max() - k.min())))
    if not slopes:
        return None
    return float(np.mean(slopes)), used, min(spans), sorted(stagnant), sorted(fitted)


def order_findings(study: Study, fmt: str) -> list[str]:
    """Per order: which bound its measured errors follow (the growth of the median error with
    the depth k: sqrt(k) for the probabilistic bound, k for the deterministic one) and how
    often each bound was exceeded (Markdown bullets)."""
    rows = [r for r in study.rows if r["format"] == fmt]
    n_max = max(study.sizes)
    u = precision.unit_roundoff(fmt)
    lines = []
    for order in study.orders:
        mine = [r for r in rows if r["order"] == order]
        total = sum(r["checked_trials"] for r in mine)  # no overflow: see overflow_findings
        det = sum(r["over_bound"] for r in mine)
        prob = sum(r["over_prob_bound"] for r in mine)
        top = next((r for r in mine if r["n"] == n_max), None)
        depth = top["depth"] if top else None
        text = f"- {fmt}, `{order}`"
        text += f" (k = {depth} at n = {n_max}): " if depth is not None else ": "
        growth = None
        stagnant = sorted({r["n"] for r in mine if r["stagnates"]})
        last = final_rounding(order, fmt)
        if top and last and top["prob_bound_over_sum_abs"] - last < last:
            # float32's accumulated error is below the one rounding to fmt at every size: a
            # slope against float32's k would fit how the sums sit in fmt's binades
            rounded = [r["correctly_rounded"] for r in mine if r["median_kappa"] <= 1 + 1e-9
                       and math.isfinite(r["correctly_rounded"])]
            text += (f"it accumulates in float32 (probabilistic bound "
                     f"{_fmt(top['prob_bound_over_sum_abs'] - last)} of sum|x| at n = "
                     f"{n_max}) and rounds once to {fmt}, whose u = {_fmt(last)} is larger: "
                     f"on same-sign data its error is that last rounding"
                     + (" (every trial correctly rounded)" if rounded and min(rounded) == 1
                        else f" ({100 * min(rounded):.0f}% or more of each such cell's trials "
                             f"correctly rounded)" if rounded else "")
                     + ", so no growth with k is fitted. ")
        else:
            growth = _growth(study, fmt, order)
        if growth is None and stagnant:
            text += (f"the sum stagnates on same-sign data from n = {stagnant[0]} on, leaving "
                     f"too few sizes to fit a growth rate. ")
        if growth is not None:
            slope, used, span, left_out, fitted = growth
            if order == "kahan":
                verdict = ("does not grow with n like either bound's k: the first-order "
                           "2u term rules" if slope < 0.25 else "grows with n")
                text += (f"on same-sign data ({', '.join(used)}) the median error / sum|x| "
                         f"grows like n^{slope:.2f}; it {verdict}. ")
            else:
                if span < 16:  # k = 4..12 (a tree): sqrt(k) and k differ by < 4x
                    follows = ("its depth varies too little over these sizes to tell sqrt(k) "
                               "from k growth")
                elif slope < 0.25:
                    follows = ("it hardly grows with k: its last roundings set it, well inside "
                               "the probabilistic bound's sqrt(k) u")
                elif slope < 0.75:
                    follows = "it follows the probabilistic bound's sqrt(k) u"
                else:
                    follows = ("it follows the deterministic bound's k u (errors of one sign "
                               "add up)")
                text += (f"on same-sign data ({', '.join(used)}) the median error / sum|x| "
                         f"grows like k^{slope:.2f} over n = {min(fitted)}..{max(fitted)}"
                         + (f" (n = {', '.join(map(str, left_out))} left out: the sum "
                            f"stagnates there, its error at its ceiling)" if left_out else "")
                         + f": {follows}")
                typical = [r for r in mine if r["n"] == n_max and r["distribution"] in used
                           and not r["stagnates"]
                           and math.isfinite(r["p50_err_over_sum_abs"])]
                if depth and typical:
                    r = max(typical, key=lambda r: r["p50_err_over_sum_abs"])
                    unit = 2.0 ** -24 if last else u  # the accumulation's own u
                    text += (f"; at n = {n_max} it is "
                             f"{r['p50_err_over_sum_abs'] / (math.sqrt(depth) * unit):.2g} "
                             f"sqrt(k) u{'(float32)' if last else ''}, "
                             f"{r['p50_err_over_sum_abs'] / r['prob_bound_over_sum_abs']:.2g} "
                             f"of the probabilistic bound")
                text += ". "
        if order in FIRST_ORDER_ORDERS:
            over = [r for r in mine if r["over_bound"]]
            text += (f"Trials above the first-order term 2u of Higham's (4.8), (2u + O(n u^2)) "
                     f"sum|x|: {det} of {total}"
                     + (" (" + "; ".join(f"{r['distribution']}, n = {r['n']}: "
                                         f"{r['over_bound']}, n u = {r['n'] * u:.2g}"
                                         for r in over) + ")" if over else "")
                     + "; 2u is no bound once n u is not small, and Higham & Mary give no "
                       "probabilistic bound for compensated summation, so none is flagged")
            lines.append(text + ".")
            continue
        text += (f"Trials above the deterministic bound: {det} of {total}; above the "
                 f"probabilistic bound: {prob} of {total}")
        over = [r for r in mine if r["over_prob_bound"]]
        if over:
            text += " (" + "; ".join(
                f"{r['distribution']}, n = {r['n']}: {r['over_prob_bound']}" + _uncovered(r)
                for r in over) + ")"
        text += _vacuity(mine)
        lines.append(text + ".")
    return lines


def _uncovered(row: dict) -> str:
    """Why the probabilistic model does not cover a cell above its bound, or that it fails."""
    if row["distribution"] in NOT_RANDOM:
        return " - not covered by the model, " + NOT_RANDOM[row["distribution"]]
    if row["stagnates"]:
        return (f" - not covered by the model, the sum stagnates ({_percent(row)} of the "
                f"addends lost, each rounding the same way)")
    return " - model violated"


# A bound of sum|x| or more allows an error as large as sum|x| itself (a sum of 0 for one-signed
# data): it says nothing about the result.
VACUOUS = 1.0


def _vacuity(rows: list) -> str:
    """Where the bounds of one order's rows are vacuous (>= ``VACUOUS`` x sum|x|), in words
    (a sentence starting ". "), with the probabilistic bound and the largest measured error at
    the largest n; "" where neither bound is."""
    det = [r["n"] for r in rows if r["bound_over_sum_abs"] >= VACUOUS]
    prob = [r["n"] for r in rows if r["prob_bound_over_sum_abs"] >= VACUOUS]
    if not det and not prob:
        return ""
    n = max(r["n"] for r in rows)
    at_n = [r for r in rows if r["n"] == n]
    # the largest error the bound speaks of: on data its model covers (not all-ones rows)
    errors = [r["max_err_over_sum_abs"] for r in at_n
              if r["random_model"] and math.isfinite(r["max_err_over_sum_abs"])]
    value = (f"{_fmt(at_n[0]['prob_bound_over_sum_abs'])} of sum|x| at n = {n}"
             + (f", against a measured {_fmt(max(errors))} on random data" if errors else ""))
    what = (f"vacuous (>= {VACUOUS:g} x sum|x|: it allows an error as large as sum|x| itself"
            + ("; inf once k u >= 1" if any(math.isinf(r["bound_over_sum_abs"]) for r in rows)
               else "") + ")")
    if not det:
        return f". From n = {min(prob)} on the probabilistic bound is {what}: {value}"
    text = f". From n = {min(det)} on the deterministic bound is {what}; the probabilistic one "
    if not prob:
        return text + f"still says something: {value}"
    return text + f"is vacuous too from n = {min(prob)} on: {value}"


def _degenerate(row: dict) -> bool:
    """A kappa cell whose exact sum is 0 in most trials (kappa undefined, a relative error of
    inf or 0): the workload's one-signed part rounded to 0 in the format."""
    return 2 * row["zero_exact_trials"] > row["trials"]


def conditioning_findings(cond: Study) -> list[str]:
    """Per format: how the relative error follows kappa (Markdown bullets)."""
    lines = []
    for fmt in cond.formats:
        by_key = {(r["distribution"], r["order"]): r for r in cond.rows if r["format"] == fmt}
        first = cond.orders[0]
        degenerate = [d for d in cond.distributions if _degenerate(by_key[d, first])]
        if degenerate:
            counts = ", ".join(f"{d} in {by_key[d, first]['zero_exact_trials']} of "
                               f"{by_key[d, first]['trials']} trials" for d in degenerate)
            lines.append(f"- **{fmt}, kappa sweep: degenerate workloads** ({counts}): the "
                         f"one-signed part rounds to 0 in {fmt}, so the exact sum is 0, kappa "
                         f"is undefined and a relative error is inf or 0; they are left out "
                         f"of the kappa findings.")
        kept = [d for d in cond.distributions if d not in degenerate]
        if not kept:
            continue
        # held against kappa gamma~: the orders with a bound (not kahan's first-order 2u)
        rows = [r for r in cond.rows if r["format"] == fmt and r["distribution"] in kept
                and not r["first_order_bound"]]
        # the least and the most conditioned workloads, by measured kappa (not --kappas order)
        lo = min(kept, key=lambda d: by_key[d, first]["median_kappa"])
        hi = max(kept, key=lambda d: by_key[d, first]["median_kappa"])
        k_lo, k_hi = by_key[lo, first]["median_kappa"], by_key[hi, first]["median_kappa"]
        if lo == hi:
            parts = [f"{o} {_fmt(by_key[lo, o]['p50_rel_err'])}" for o in cond.orders]
            trend = f"at kappa {k_lo:.2g} (measured median) the median relative error is"
        else:
            parts = [f"{o} {_fmt(by_key[lo, o]['p50_rel_err'])} -> "
                     f"{_fmt(by_key[hi, o]['p50_rel_err'])}" for o in cond.orders]
            trend = (f"from kappa {k_lo:.2g} to {k_hi:.2g} (measured medians) the median "
                     f"relative error goes")
        over = sum(r["over_prob_bound"] for r in rows)
        total = sum(r["checked_trials"] for r in rows)
        lines.append(f"- **{fmt}, relative error against kappa (n = {cond.sizes[0]}):** "
                     f"{trend} {'; '.join(parts)}"
                     + (_kappa_trend(by_key, lo, hi, cond.orders) if lo != hi else "")
                     + f". Trials above kappa gamma~ (every order but kahan): {over} of "
                       f"{total}.")
    return lines


# A median relative error that rose by less than this from the least to the most conditioned
# workload is not called growth (a few trials' medians move by tens of percent at random).
KAPPA_GROWTH = 1.5


def _kappa_trend(by_key: dict, lo: str, hi: str, orders: Sequence[str]) -> str:
    """Which orders' median relative error grew (by more than ``KAPPA_GROWTH``) from workload
    ``lo`` to ``hi`` (more conditioned), as the bound (relative error <= kappa gamma) allows,
    and which did not."""
    grew = [o for o in orders
            if by_key[hi, o]["p50_rel_err"] > KAPPA_GROWTH * by_key[lo, o]["p50_rel_err"]]
    rest = [o for o in orders if o not in grew]
    if not rest:
        return (f": it grows with kappa (more than {KAPPA_GROWTH:g}x) for every order, as kappa "
                f"times the bound per sum|x| allows (relative error <= kappa gamma)")
    if not grew:
        return (f": it grows with kappa (more than {KAPPA_GROWTH:g}x) for no order here, though "
                f"kappa gamma would allow it")
    return (f": it grows with kappa (more than {KAPPA_GROWTH:g}x) for {', '.join(grew)}, as "
            f"kappa gamma allows; not for {', '.join(rest)}")


def _marks(r: dict) -> str:
    if r["first_order_bound"]:  # no bound to exceed
        return ""
    return ("" if r["over_bound"] == 0 or math.isinf(r["bound_over_sum_abs"]) else " !") + \
        ("" if r["over_prob_bound"] == 0 else " ?")


def _cell(r: dict, measured: Callable[[dict], str]) -> str:
    """A table cell: ``measured(r)`` over the trials whose exact sum is in range, or where
    every trial's overflowed, what the order returned there."""
    if r["overflow_trials"] == r["trials"]:
        return f"overflow (returned {r['overflow_results'].replace('; ', ' or ')})"
    some = r["overflow_trials"]
    return measured(r) + (f" [{some} of {r['trials']} overflow]" if some else "")


def _kappa_cell(r: dict, kappa: float) -> str:
    if _degenerate(r):
        return f"degenerate (exact sum 0 in {r['zero_exact_trials']} of {r['trials']})"
    allowed = relative_bound(r["prob_bound_over_sum_abs"], r["order"], r["format"], kappa)
    return (f"{_fmt(r['p50_rel_err'])} / {_fmt(r['max_rel_err'])} "
            f"({_fmt(allowed)}){_marks(r)}")


def markdown(study: Study, title: str = "Summation error: hardware trees vs sequential vs "
             "others") -> str:
    """The study as Markdown: findings in words, the bounds and definitions, then per format
    the error / sum|x| (median and largest) against both bounds, the ULP errors, and the
    relative error against kappa."""
    lines = [f"# {title}", "",
             (f"{study.trials} random inputs (trials) per cell, seed {study.seed}; each sum is "
             f"compared with the exact sum (computed without rounding)."), "",
             "## Findings", "", *findings(study), "",
             "## Bounds", "", *bounds_text(study.failure), "",
             "## What was measured", "", ("Distributions (values drawn in float64, then "
             "rounded once to the format):"), ""]
    dists = list(study.distributions)
    if study.conditioning is not None:
        dists += [d for d in study.conditioning.distributions if d not in dists]
    lines += [f"- `{d}`: {_distribution_text(d)}" for d in dists]
    lines += ["", "Orders (the columns):", ""]
    lines += [f"- `{o}`: {ORDER_DESCRIPTIONS[o]}" for o in study.orders]
    lines += ["", "Tables:", ""] + [f"- {c}" for c in COLUMNS] + [""]
    by_key = {(r["format"], r["distribution"], r["n"], r["order"]): r for r in study.rows}
    head = "| distribution | n | " + " | ".join(study.orders) + " |"
    rule = "|---|---|" + "---|" * len(study.orders)
    for fmt in study.formats:
        for title_, cell in (
                ("error / sum|x|: p50 / max (bounds)", lambda r: (
                    f"{_fmt(r['p50_err_over_sum_abs'])} / {_fmt(r['max_err_over_sum_abs'])} "
                    f"({_fmt(r['bound_over_sum_abs'])}; {_fmt(r['prob_bound_over_sum_abs'])})"
                    f"{_marks(r)}")),
                ("max ULPs (correctly rounded)", lambda r: (
                    "n/a" if math.isnan(r["max_ulps"]) else _fmt(r["max_ulps"]))
                 + f" ({100 * r['correctly_rounded']:.0f}%)")):
            lines += [f"## {fmt}: {title_}", "", head, rule]
            for dist in study.distributions:
                for n in study.sizes:
                    cells = [_cell(by_key[fmt, dist, n, o], cell) for o in study.orders]
                    lines.append(f"| {dist} | {n} | " + " | ".join(cells) + " |")
            lines.append("")
    cond = study.conditioning
    if cond is not None:
        ckey = {(r["format"], r["distribution"], r["order"]): r for r in cond.rows}
        for fmt in cond.formats:
            lines += [(f"## {fmt}: relative error vs kappa (n = {cond.sizes[0]}): p50 / max "
                      f"(kappa x probabilistic bound)"), "",
                      "| workload | kappa | " + " | ".join(cond.orders) + " |",
                      "|---|---|" + "---|" * len(cond.orders)]
            for dist in cond.distributions:
                kappa = ckey[fmt, dist, cond.orders[0]]["median_kappa"]
                cells = [_cell(r, functools.partial(_kappa_cell, kappa=kappa))
                         for r in (ckey[fmt, dist, o] for o in cond.orders)]
                lines.append(f"| {dist} | {_fmt(kappa)} | " + " | ".join(cells) + " |")
            lines.append("")
    return "\n".join(lines)


def _plotted_format(study: Study, fmt: Any, where: str) -> str:
    """The name of ``fmt``, one of the study's formats, else a ValueError listing them."""
    name = resolve(fmt, where=where).name
    if name not in study.formats:
        raise ValueError(f"{where}: the study has no {name!r} rows; its formats: "
                         f"{list(study.formats)}")
    return name


def plot(study: Study, fmt: str) -> Any:
    """A matplotlib Figure for one format: one panel per distribution, the largest error /
    sum|x| against n for every order (solid), Higham's bound for it (dashed, same colour) and
    Higham & Mary's probabilistic bound (dotted).
    Exact results sit on the bottom edge, below every nonzero error, overflows (inf) on the top
    edge; each order is shifted slightly along n so coinciding orders stay visible. The bounds
    are drawn at their values: one above the panel leaves it at the top (inf: not drawn)."""
    from matplotlib.figure import Figure  # no pyplot: no GUI backend, nothing to close

    fmt = _plotted_format(study, fmt, "plot")
    u = precision.unit_roundoff(fmt)
    errors = [r["max_err_over_sum_abs"] for r in study.rows if r["format"] == fmt]
    finite = [e for e in errors if 0 < e < math.inf]
    # Below every nonzero error (none is drawn as exact) and above every finite one.
    floor = min([u * u / 16] + [e / 4 for e in finite])
    ceiling = max([4.0] + [e * 4 for e in finite])
    dists = study.distributions
    cols = min(len(dists), 2)
    rows = -(-len(dists) // cols)
    fig = Figure(figsize=(4.8 * cols, 3.4 * rows))
    axes = fig.subplots(rows, cols, squeeze=False)
    by_key = {(r["format"], r["distribution"], r["n"], r["order"]): r for r in study.rows}
    for ax, dist in zip(axes.ravel()[:len(dists)], dists, strict=True):
        for k, order in enumerate(study.orders):
            color = f"C{k}"
            ns = list(study.sizes)
            err = [by_key[fmt, dist, n, order]["max_err_over_sum_abs"] for n in ns]
            err = np.clip(np.nan_to_num(err, nan=ceiling, posinf=ceiling), floor, ceiling)
            bound = [by_key[fmt, dist, n, order]["bound_over_sum_abs"] for n in ns]
            # Orders often coincide (adjacent_tree and datablock sums on powers of two): each
            # order is shifted a little along n, with thinner lines and smaller markers for
            # later orders, so every one stays visible.
            shift = 2.0 ** (0.05 * (k - (len(study.orders) - 1) / 2))
            xs = [n * shift for n in ns]
            ax.plot(xs, err, "-", marker="osD^vxP"[k % 7], color=color, label=order,
                    lw=2.4 - 0.3 * k, ms=6 - 0.7 * k, alpha=0.85)
            # Unclipped: a bound above the panel leaves it (an inf one is not drawn), never
            # flattened onto the overflow edge.
            ax.plot(xs, bound, "--", color=color, lw=0.8)
            prob = [by_key[fmt, dist, n, order]["prob_bound_over_sum_abs"] for n in ns]
            ax.plot(xs, prob, ":", color=color, lw=0.8)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_ylim(floor / 2, ceiling * 2)
        for level, text in ((floor, "exact (0)"),  # the edges
                            (ceiling, f"overflow ({overflow_value(fmt)})")):
            ax.axhline(level, color="0.8", lw=0.6, ls=":", zorder=0)
            ax.annotate(text, (0.01, level), xycoords=("axes fraction", "data"), fontsize=6,
                        color="0.45", va="bottom")
        ax.set_title(f"{fmt}, {dist}", fontsize=9)
        ax.set_xlabel("n")
        ax.set_ylabel("max |error| / sum|x|")
    for ax in axes.ravel()[len(dists):]:
        ax.set_axis_off()
    fig.suptitle(f"{fmt}: largest error over {study.trials} trials against the bounds\n"
                 "(exact (0) on the bottom edge, below every nonzero error; overflow on the top "
                 "edge; orders shifted slightly along n where they coincide)", fontsize=9)
    _legend_below(fig, axes[0, 0], "solid: measured, dashed: Higham's bound, dotted: Higham & "
                  "Mary's probabilistic bound")
    return fig


def _legend_below(fig: Any, ax: Any, title: str | None = None) -> None:
    """``ax``'s legend under the panels (not over the first one's data), in as many columns as
    the figure's width holds, with room kept for it; then the layout."""
    import textwrap

    handles, labels = ax.get_legend_handles_labels()
    width, height = fig.get_size_inches()
    per_entry = 0.5 + 0.06 * max(len(label) for label in labels)  # inches at 7 points
    ncol = max(1, min(len(labels), int(width // per_entry)))
    if title:
        title = "\n".join(textwrap.wrap(title, max(20, int(width / 0.06))))
    fig.legend(handles, labels, loc="lower center", ncol=ncol, fontsize=7, title=title,
               title_fontsize=7, frameon=False)
    lines = -(-len(labels) // ncol) + (title.count("\n") + 1 if title else 0)
    fig.tight_layout(rect=(0, min(0.5, (0.18 * lines + 0.1) / height), 1, 1))


def _panels(count: int, width: float = 3.6, height: float = 3.0):
    from matplotlib.figure import Figure  # no pyplot: no GUI backend, nothing to close

    cols = min(count, 4)
    rows = -(-count // cols)
    fig = Figure(figsize=(width * cols, height * rows))
    axes = fig.subplots(rows, cols, squeeze=False)
    for ax in axes.ravel()[count:]:
        ax.set_axis_off()
    return fig, axes.ravel()[:count]


def plot_kappa(study: Study, fmt: str) -> Any:
    """Relative error against the measured kappa of each trial of the conditioning sweep
    (log-log), one panel per order, with kappa gamma_k (dashed) and kappa gamma~_k (dotted):
    the relative errors each bound allows, drawn at their values (a line above the panel
    leaves it at the top). Exact results sit on the bottom edge."""
    cond = study.conditioning
    if cond is None:
        raise ValueError("plot_kappa: the study has no conditioning sweep (kappas=())")
    fmt = _plotted_format(study, fmt, "plot_kappa")
    n = cond.sizes[0]
    points = [t for t in study.trial_rows if t["sweep"] == "kappa" and t["format"] == fmt
              and not t["overflow"]]  # no rounding error to draw
    finite = [t["rel_err"] for t in points if 0 < t["rel_err"] < math.inf]
    floor = min([precision.unit_roundoff(fmt) ** 2] + [e / 4 for e in finite])
    ceiling = max([1e3] + [e * 4 for e in finite])
    kap = [t["kappa"] for t in points if 0 < t["kappa"] < math.inf] or [1.0, 10.0]
    line_k = np.geomspace(min(kap) / 2, max(kap) * 2, 50)
    fig, axes = _panels(len(cond.orders))
    for k, (ax, order) in enumerate(zip(axes, cond.orders, strict=True)):
        mine = [t for t in points if t["order"] == order]
        ks = np.array([t["kappa"] for t in mine])
        rel = np.clip(np.nan_to_num([t["rel_err"] for t in mine], nan=ceiling, posinf=ceiling),
                      floor, ceiling)
        ax.scatter(ks, rel, s=8, color=f"C{k}", alpha=0.6, label="trials")
        det, prob, _ = order_gammas(order, n, fmt, cond.failure)
        # Unclipped (matplotlib clips at the panel): np.clip would flatten a line at the top
        # edge, as if the bound levelled off.
        if not math.isinf(det):
            ax.plot(line_k, relative_bound(det, order, fmt, line_k), "--", color="0.3", lw=0.8,
                    label="kappa gamma_k")
        ax.plot(line_k, relative_bound(prob, order, fmt, line_k), ":", color="0.1", lw=1.0,
                label="kappa gamma~_k")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_ylim(floor / 2, ceiling * 2)
        ax.set_title(order, fontsize=8)
        ax.set_xlabel("kappa = sum|x| / |sum x|", fontsize=7)
        ax.set_ylabel("relative error", fontsize=7)
        ax.legend(fontsize=6, loc="lower right")
    fig.suptitle(f"{fmt}, n = {n}: relative error against the condition number of the sum "
                 f"({cond.trials} trials per kappa; exact results on the bottom edge)", fontsize=9)
    fig.tight_layout()
    return fig


def plot_distribution(study: Study, fmt: str) -> Any:
    """The distribution of error / sum|x| over the trials at the largest n: one panel per
    distribution, the empirical CDF of every order (log x axis), the probabilistic bound of
    each order as a dotted vertical line, the deterministic one dashed. Exact results (0) are
    drawn at the left edge; a bound right of the panel is not drawn."""
    fmt = _plotted_format(study, fmt, "plot_distribution")
    n = max(study.sizes)
    points = [t for t in study.trial_rows if t["sweep"] == "n" and t["format"] == fmt
              and t["n"] == n and not t["overflow"]]  # no rounding error to draw
    by_row = {(r["distribution"], r["order"]): r for r in study.rows
              if r["format"] == fmt and r["n"] == n}
    finite = [t["err_over_sum_abs"] for t in points if 0 < t["err_over_sum_abs"] < math.inf]
    left = min([precision.unit_roundoff(fmt) ** 2] + [e / 4 for e in finite])
    right = max([4.0] + [e * 4 for e in finite])
    fig, axes = _panels(len(study.distributions), width=4.2)
    for ax, dist in zip(axes, study.distributions, strict=True):
        if not any(t["distribution"] == dist for t in points):
            ax.text(0.5, 0.5, f"every trial's exact sum\noverflows {fmt}:\nno error to draw",
                    transform=ax.transAxes, ha="center", va="center", fontsize=8, color="0.4")
        for k, order in enumerate(study.orders):
            e = np.sort(np.clip(np.nan_to_num(
                [t["err_over_sum_abs"] for t in points
                 if t["distribution"] == dist and t["order"] == order], nan=right, posinf=right),
                left, right))
            ax.step(e, np.arange(1, e.size + 1) / e.size, where="post", color=f"C{k}",
                    label=order, lw=1.2)
            r = by_row[dist, order]
            ax.axvline(r["prob_bound_over_sum_abs"], color=f"C{k}", ls=":", lw=0.7)
            if not math.isinf(r["bound_over_sum_abs"]):
                ax.axvline(r["bound_over_sum_abs"], color=f"C{k}", ls="--", lw=0.5)
        ax.set_xscale("log")
        ax.set_xlim(left / 2, right * 2)
        ax.set_ylim(0, 1.02)
        ax.axvline(left, color="0.8", lw=0.6, ls=":", zorder=0)
        ax.annotate("exact (0)", (left, 0.5), rotation=90, fontsize=6, color="0.45",
                    ha="right", va="center")
        ax.set_title(f"{fmt}, {dist}, n = {n}", fontsize=8)
        ax.set_xlabel("error / sum|x|", fontsize=7)
        ax.set_ylabel("share of trials <=", fontsize=7)
    fig.suptitle(f"{fmt}: distribution of the error over {study.trials} trials (dotted: "
                 f"probabilistic bound, dashed: deterministic bound;\nexact results (0) on the "
                 f"left edge, overflows of a partial sum on the right)", fontsize=9)
    _legend_below(fig, axes[0])
    return fig


def _write_csv(path: Path, rows: list) -> None:
    with path.open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)


def write_study(study: Study, out: str | Path, *, name: str = "study",
                title: str | None = None) -> list[Path]:
    """Write ``<name>.md``, ``<name>.csv`` (every row, the conditioning sweep's too, told
    apart by ``sweep``), ``<name>_trials.csv`` (one row per trial) and per format the plots
    ``error_vs_n_<format>.png``, ``error_distribution_<format>.png`` and, with a
    conditioning sweep, ``error_vs_kappa_<format>.png`` under ``out`` (plot names prefixed
    with ``<name>_`` unless ``name`` is "study"); plots of those names that this study does
    not draw (left by an earlier one) are removed."""
    out = prepare_output(out)
    paths = [out / f"{name}.md", out / f"{name}.csv", out / f"{name}_trials.csv"]
    args = {} if title is None else {"title": title}
    paths[0].write_text(markdown(study, **args) + "\n")
    cond_rows = study.conditioning.rows if study.conditioning is not None else []
    _write_csv(paths[1], study.rows + cond_rows)
    _write_csv(paths[2], study.trial_rows)
    prefix = "" if name == "study" else f"{name}_"
    for fmt in study.formats:
        figures = [("error_vs_n", plot), ("error_distribution", plot_distribution)]
        if study.conditioning is not None:
            figures.append(("error_vs_kappa", plot_kappa))
        for stem, draw in figures:
            path = out / f"{prefix}{stem}_{fmt}.png"
            draw(study, fmt).savefig(path, dpi=110)
            paths.append(path)
    # An earlier study's plots (another format, a sweep not run now) would sit beside this
    # study's files as if they were its own.
    for stem in ("error_vs_n", "error_distribution", "error_vs_kappa"):
        for fmt in precision.SUM_FORMATS:
            stale = out / f"{prefix}{stem}_{fmt}.png"
            if stale not in paths:
                stale.unlink(missing_ok=True)
    return paths


def golden_mismatch(distribution: str, dtype: Any, *, blocks: int = 4096, seed: int = 0
                    ) -> float:
    """Share of DataBlocks whose NumPy golden differs in bits from the hardware's sum.

    A sample ``gen_data.py`` writes its golden as ``np.sum`` over each 32-byte DataBlock;
    ``reduce_sum_datablock`` sums the block by an adjacent-pair tree, rounding every add to
    the format. ``dtype``: half or float (the instruction's float types).
    """
    fmt = resolve(dtype, where="golden_mismatch")
    if fmt.name not in ("half", "float"):
        raise TypeError(f"golden_mismatch: reduce_sum_datablock sums half or float, not {fmt.name}")
    per_register = 8 * fmt.per_block
    registers = -(-blocks // 8)
    x = make_inputs(distribution, per_register, registers, fmt, seed=seed)
    golden = np.sum(x.reshape(registers, 8, fmt.per_block), axis=-1)
    hardware = np.asarray(reduce_sum_datablock(x, create_mask("PAT_ALL", fmt.name)))
    hardware = hardware[:, :8]
    return float(np.mean((_bits(golden) != _bits(hardware)).ravel()[:blocks]))
