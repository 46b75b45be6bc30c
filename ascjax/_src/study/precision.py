"""Precision studies: sums in a chosen format along a chosen order, the exact sum, errors, bounds.

``sum(x, dtype=..., order=...)`` rounds exactly where the order rounds (``orders``);
``exact_sum`` rounds the exact sum once (``exact``). Errors are measured against the exact sum
(correctly rounded to float64, far below any error of the formats studied) and reported next
to two a-priori bounds for the same order: Higham's deterministic worst case (``error_bound``,
``higham_gamma``) and Higham & Mary's probabilistic bound (``probabilistic_bound``,
``higham_mary_gamma``), which grows like sqrt(k) u rather than k u.
"""

from __future__ import annotations

import functools
import math
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from ..config import Config, resolve_config
from ..formats import FORMATS, Format, finfo, is_tapered, resolve
from ..io.binio import rows_in_place, to_device
from ..isa.lanes import check_int, kernel
from ..numerics import exact
from ..numerics.bits import from_bits
from ..numerics.rounding import round_bits
from ..tables import format_spacing
from . import orders
from .orders import FLOAT32_ORDERS, ORDERS, STUDY_ORDERS, SUM_FORMATS


@functools.partial(jax.jit, static_argnums=1)
def _round_rint(bits, fmt: Format):
    return round_bits(bits, fmt, "rint")


def _sum_format(dtype: Any, where: str) -> Format:
    """The Format of ``dtype``, one a sum can be emulated in (``SUM_FORMATS``)."""
    fmt = resolve(dtype, where=where)
    if fmt.name not in SUM_FORMATS:
        raise TypeError(f"{where}: dtype {fmt.name} is not supported; supported: "
                        f"{list(SUM_FORMATS)}")
    return fmt


def to_format(x: Any, dtype: Any) -> np.ndarray:
    """``x`` (any real array-like) rounded once to the nearest value of ``dtype``, ties to even,
    as a NumPy array of its storage dtype (host-side). ``dtype``: one of ``SUM_FORMATS``.

    A value that is not already float32 (or half, bfloat16, exact in float32) goes to float32
    rounded to odd, which leaves the one rounding to the narrow format correct (float32 has at
    least two bits more), whichever way the installed ml_dtypes casts float64: a cast through
    float32 rounded to nearest rounds twice (1 + 2^-8 + 2^-30 -> 1 + 2^-8, a tie in bfloat16,
    -> 1). NaN becomes the format's canonical NaN, sign kept.
    """
    fmt = _sum_format(dtype, "to_format")
    x = np.asarray(x)
    if x.dtype == fmt.storage_dtype or fmt.name == "float":
        with np.errstate(over="ignore"):  # to float: NumPy's one rounding, ties to even
            return x.astype(fmt.storage_dtype)
    if x.dtype in (np.float32, np.float16, FORMATS["bfloat16_t"].storage_dtype):
        f = x.astype(np.float32)  # exact
    else:
        # round_bits takes float32 patterns: float64 comes down to float32 first, rounded to
        # odd so that the rounding below is still the only one that counts.
        wide = x.astype(np.float64)
        with np.errstate(over="ignore", invalid="ignore"):
            f = wide.astype(np.float32)
            inexact = np.isfinite(f) & (f.astype(np.float64) != wide)
            even = (f.view(np.uint32) & 1) == 0
            toward = np.where(wide > f, np.float32(np.inf), np.float32(-np.inf))
            f = np.where(inexact & even, np.nextafter(f, toward), f)
    # Padded to a power of two: a sweep over many sizes compiles a few kernels, not one each.
    flat = np.ravel(f).view(np.uint32)
    padded = np.zeros(max(1024, 1 << (flat.size - 1).bit_length()), np.uint32)
    padded[:flat.size] = flat
    codes = np.asarray(_round_rint(padded, fmt))[:flat.size]
    return codes.reshape(x.shape).view(fmt.storage_dtype)


def _format(x: Any, dtype: Any, where: str, host: bool = False) -> tuple[Format, Any]:
    """The sum format and ``x`` in its storage dtype (rounded once on the host if needed);
    ``host``: as a NumPy array where ``x`` is concrete (not traced), else a JAX array."""
    given = x.dtype if hasattr(x, "dtype") else np.asarray(x).dtype
    fmt = _sum_format(given if dtype is None else dtype, where)
    traced = isinstance(x, jax.core.Tracer)
    if np.dtype(given) != fmt.storage_dtype:
        if traced:
            raise TypeError(f"{where}: x has dtype {x.dtype} under a transformation; pass it "
                            f"already in {fmt.name} ({fmt.storage_dtype})")
        x = to_format(x, fmt)
    x = np.asarray(x) if host and not traced else jnp.asarray(x)
    if x.ndim == 0 or x.shape[-1] == 0:
        raise ValueError(f"{where}: x must have shape (..., n) with n >= 1, got {x.shape}")
    return fmt, x


HOST_FORMATS = ("half", "bfloat16_t", "float")  # formats with NumPy fast paths


def _pad_rows(x: np.ndarray) -> np.ndarray:
    """Rows padded with +0 to a power of two: the limb path compiles a few shapes, not one per
    count of rows it is left."""
    rows = x.shape[0]
    padded = np.zeros((1 << max(rows - 1, 0).bit_length(),) + x.shape[1:], x.dtype)
    padded[:rows] = x
    return padded


def _exact_host(fmt: Format, x: np.ndarray, float64: bool):
    """The exact sums of concrete ``x`` (..., n) on the host: ``exact.exact_sum_host`` where a
    float64 sum is exact by construction, the integer-limb kernel on the rows left (inf, NaN,
    spans beyond float64). Returns (rounded, float64 sums or None), both shaped x.shape[:-1]."""
    flat = x.reshape(-1, x.shape[-1])
    out, sums, done = exact.exact_sum_host(flat.view(fmt.bits_dtype), fmt)
    rest = np.flatnonzero(~done)
    if rest.size:
        part = _pad_rows(flat[rest])
        if float64:
            mag, negative, rounded = _exact_parts(fmt, part)
            wide = exact.limbs_to_float64(np.asarray(mag)[:rest.size],
                                          np.asarray(negative)[:rest.size], fmt, x.shape[-1])
            with np.errstate(invalid="ignore"):  # a signalling NaN widens with a warning
                finite = np.all(np.isfinite(flat[rest].astype(np.float64)), axis=-1)
            sums[rest] = np.where(finite, wide, np.nan)
        else:
            rounded = _exact_kernel(fmt, part)
        out[rest] = np.asarray(rounded)[:rest.size].view(fmt.bits_dtype)
    shape = x.shape[:-1]
    return out.view(fmt.storage_dtype).reshape(shape), sums.reshape(shape) if float64 else None


def _exact_host_float(x: np.ndarray) -> np.ndarray:
    """``exact_sum`` of concrete float32 ``x`` (..., n): certified float64 sums
    (``exact.certified_float_bits``), ``_exact_host`` for the rows they leave."""
    flat = np.ascontiguousarray(x.reshape(-1, x.shape[-1]))
    if flat.shape[-1] <= exact.CERTIFY_MAX_N // 2:
        with jax.enable_x64(True):
            out, certified = _certified_host(*rows_in_place(flat))
        out, certified = np.array(out), np.asarray(certified)  # out: a writable copy
    else:
        out, certified = np.zeros(flat.shape[0], np.uint32), np.zeros(flat.shape[0], bool)
    rest = np.flatnonzero(~certified)
    if rest.size:
        out[rest] = _exact_host(FORMATS["float"], flat[rest], float64=False)[0].view(np.uint32)
    return out.view(np.float32).reshape(x.shape[:-1])


def sum(x: Any, *, dtype: Any = None, order: str = "sequential",
        config: Config | None = None) -> jax.Array:
    """The sum of the last axis of ``x`` (..., n) in format ``dtype``, along ``order``: (...,).

    ``dtype``: "half", "bfloat16_t", "float", "fp8_e5m2_t" or "fp8_e4m3fn_t", or an alias
    ("bfloat16", "float8_e4m3fn", a NumPy dtype; default: x's own). An ``x`` of another dtype
    is first rounded to it once (``to_format``). Every add is one IEEE add rounded to the
    format (RNE, subnormals kept, NaN canonical, overflow to inf, or to NaN in fp8_e4m3fn,
    which has no inf; half follows ``config.float_overflow``), exactly where the order adds:

    * ``"sequential"``: ``((x0 + x1) + x2) + ...``.
    * ``"adjacent_tree"``: (x0+x1), (x2+x3), ... then adjacent pairs of those, level by level,
      over the whole vector; an odd element at the end of a level moves up unchanged (the
      same values as the hardware's padding with +0, but a lone -0 stays -0).
    * ``"repeat_sequential"``, ``"repeat_tree"``, ``"repeat_vector_merge"``: what
      ``reduce_sum``'s first-n form does on n elements with method 1, 2 or 3 (its vendor
      page's numbers). The n elements are cut into 256-byte repeats (128 lanes for 16-bit
      formats, 64 for float; the last padded with +0). repeat_sequential and repeat_tree sum
      each repeat by an adjacent-pair tree, then the repeat results in order,
      ``((s0 + s1) + s2) + ...``, or by an adjacent-pair tree padded with +0 to a power of two.
      repeat_vector_merge adds the repeats lane by lane in repeat order,
      ``((r0 + r1) + r2) + ...`` (ReduceSum's default reading, A18), then sums that one
      register by an adjacent-pair tree.
    * ``"numpy_pairwise"``: NumPy's pairwise summation, ``0 + pairwise_sum(x)`` with NumPy's
      recursion (halves rounded down to a multiple of 8 above 128 elements; blocks of <= 128
      summed by 8 accumulators r[j] += x[i+j], combined as ((r0+r1)+(r2+r3))+((r4+r5)+(r6+r7)),
      then the rest added one by one; below 8, -0 + x0 + x1 + ...), accumulated in float32
      and rounded once to the format at the end (as NumPy's half loop does). That is
      ``np.sum`` of a float16 or float32 array along its contiguous last axis; summed along
      another axis (axis 0 of a C-ordered array, the rows of a Fortran-ordered one), NumPy
      adds one element at a time in the array's own type: ``"sequential"``. ``np.sum`` of an
      ml_dtypes bfloat16 array is
      not: NumPy adds it sequentially in bfloat16, every add rounded, which is
      ``"sequential"`` (``reveal_order`` shows the tree; its fp8 arrays go in order too).
    * ``"kahan"``: s = x0, e = +0; for each next x: y = x - e; t = s + y; e = (t - s) - y; s = t.

    Differentiable (the derivative of the exact sum) and jittable (``dtype`` and ``order`` are
    static). A concrete (untraced) ``x`` under the default ``float_overflow="ieee"`` is
    summed on the host by NumPy along the same order where that is faster than the jitted
    path (``orders.USE_HOST``: numpy_pairwise, and some trees; the same bits). sequential
    and kahan loop over blocks of columns (``orders.column_sum``; a concrete ``x``'s rows
    are handed to JAX in place, ``binio.rows_in_place``); in float they add natively unless
    an input is tiny or a result NaN (``orders.native_column_sum``; the same bits).

    >>> import numpy as np
    >>> from ascjax import precision
    >>> ones = np.ones(4096, np.float16)
    >>> sequential = precision.sum(ones, order="sequential")
    >>> float(sequential), float(precision.sum(ones, order="adjacent_tree"))
    (2048.0, 4096.0)
    """
    if order not in ORDERS:
        raise ValueError(f"sum: unknown order {order!r}; valid: {list(ORDERS)}")
    fmt, x = _format(x, dtype, "sum", host=True)
    config = resolve_config(config, "sum")
    if (isinstance(x, np.ndarray) and order in orders.USE_HOST.get(fmt.name, ())
            and config.float_overflow == "ieee"):
        out = orders.host_order(x.reshape(-1, x.shape[-1]), order, fmt)
        return jnp.asarray(out.reshape(x.shape[:-1]))
    if isinstance(x, np.ndarray) and x.size and (
            order == "sequential" or (order == "kahan" and fmt.name == "float")):
        rows = np.ascontiguousarray(x.reshape(-1, x.shape[-1]))
        parts = rows_in_place(rows)
        if fmt.name == "float" and config.float_overflow == "ieee":
            # The native float32 loop alone, and the carrier adder's program only where a sum
            # came out NaN (a tiny input, or the data's own NaN or inf - inf): both in one
            # program (a cond) took 2-6x longer to compile, for a branch most data never takes.
            # Only the rows that came out NaN are summed again (a subnormal among 16 M values
            # made a whole 4096 x 4096 kahan call 30x slower), padded to a power of two rows
            # so that the exact program compiles for a few shapes.
            out = _stored_sum_host((fmt, order, config, "native"), *parts)
            redo = np.flatnonzero(np.isnan(np.asarray(out)))
            if redo.size:
                exact_rows = _stored_sum_host((fmt, order, config, "exact"),
                                              to_device(_pad_rows(rows[redo])))
                out = np.array(out)  # writable; the rows were read before this returned
                out[redo] = np.asarray(exact_rows)[:redo.size]
                out = jnp.asarray(out)
        else:
            out = _stored_sum_host((fmt, order, config, "checked"), *parts)
        # block: the rows may be read in place, and x is the caller's to change after return
        return out.block_until_ready().reshape(x.shape[:-1])
    if isinstance(x, np.ndarray) and order in orders.SCAN_ORDERS and x.shape[-1] > 1:
        # A scan over the last axis reads it strided when the transpose is part of the same
        # program (XLA CPU: 2x slower); transposed by a call of its own, each step reads one
        # contiguous slab. Same adds, same bits (tests/test_precision_host.py).
        return _scan_leading((fmt, order, config), _to_leading(to_device(x), order, fmt))
    return _sum_kernel((fmt, order, config), to_device(x) if isinstance(x, np.ndarray) else x)


def _sum_forward(spec, x):
    fmt, order, config = spec
    return orders.store(orders.stored_order(x, order, fmt, config), fmt)


def _sum_linear(spec, t):
    return jnp.sum(t, axis=-1)  # tangents are real numbers: any order is the exact derivative


_sum_kernel = kernel(_sum_forward, _sum_linear)


@functools.partial(jax.jit, static_argnums=0)
def _stored_sum_host(spec, *parts):
    """sequential or kahan of concrete rows handed over by ``binio.rows_in_place``, along
    ``orders.stored_sum``'s ``path``."""
    fmt, order, config, path = spec
    parts = [orders.stored_bits(part, fmt) for part in parts]
    x = parts[0] if len(parts) == 1 else orders.ShiftedColumns(*parts)  # an array may scan
    return orders.store(orders.stored_sum(x, order, fmt, config, path), fmt)


@jax.jit
def _certified_host(*parts):
    """``exact.certified_float_bits`` of float32 rows from ``binio.rows_in_place`` (x64)."""
    return exact.certified_float_bits(*orders.columns_of(parts).wide_sums())


_to_leading = jax.jit(orders.to_leading, static_argnums=(1, 2))


def _scan_leading_forward(spec, rows):
    """A scan order of concrete rows moved by ``_to_leading`` (patterns: nothing to
    differentiate)."""
    fmt, order, config = spec
    ar = orders.Arith(fmt, config)
    return orders.store(orders.leading_sum(rows, order, ar, lambda r: orders.load(r, fmt)), fmt)


_scan_leading = kernel(_scan_leading_forward)


def exact_sum(x: Any, *, dtype: Any = None) -> jax.Array:
    """The exact sum of the last axis of ``x`` (..., n), rounded once to ``dtype``: (...,).

    Computed with integer limbs (``exact``): no intermediate rounding at all, so cancelling
    inputs lose nothing (``exact_sum([1e8, 1, -1e8])`` is 1 in float). Ties round to even;
    beyond the format's range the result is inf; a NaN input, or +inf with -inf, gives NaN; a
    sum that is exactly zero is +0 unless every input is -0. Jittable and differentiable.

    A concrete (untraced) half, bfloat16 or float ``x`` is summed on the host in float64 where
    that is exact by construction (``exact.exact_sum_host``; the same bits, much faster);
    float first by a float64 sum with an error bound, which settles nearly every row
    (``exact.certified_float_bits``).
    """
    fmt, x = _format(x, dtype, "exact_sum", host=True)
    if isinstance(x, np.ndarray) and fmt.name == "float" and x.size:
        return jnp.asarray(_exact_host_float(x))
    if isinstance(x, np.ndarray) and fmt.name in HOST_FORMATS:
        return jnp.asarray(_exact_host(fmt, x, float64=False)[0])
    return _exact_kernel(fmt, jnp.asarray(x))


def _round_exact(c, fmt, limbs=None):
    """The exact sum of carriers c, rounded once to fmt, in fmt's storage dtype."""
    if fmt.name in orders.CODEC_SUMS:
        # Round to odd in float32 (>= 2 bits more than fmt), then once by the codec: the
        # result is the exact sum rounded once.
        c32 = exact.exact_sum_bits(c, fmt, limbs=limbs, target=FORMATS["float"], odd=True)
        return orders.store(c32, fmt)
    bits = exact.exact_sum_bits(c, fmt, limbs=limbs).astype(fmt.bits_dtype)
    return from_bits(bits, fmt)


def _exact_forward(fmt, x):
    return _round_exact(orders.load(x, fmt), fmt)


_exact_kernel = kernel(_exact_forward, _sum_linear)


@functools.partial(jax.jit, static_argnums=0)
def _exact_parts(fmt, x):
    """(magnitude limbs, negative, fmt bits of the rounded sum): one pass for both results."""
    c = orders.load(x, fmt)
    mag, negative = exact.exact_limbs(c, fmt)
    return mag, negative, _round_exact(c, fmt, (mag, negative))


def exact_sums(x: Any, *, dtype: Any = None) -> tuple[np.ndarray, np.ndarray]:
    """``(exact_sum(x), exact_sum_float64(x))`` from one exact accumulation (host arrays)."""
    fmt, x = _format(x, dtype, "exact_sums", host=True)
    if isinstance(x, np.ndarray) and fmt.name in HOST_FORMATS:
        return _exact_host(fmt, x, float64=True)
    x = jnp.asarray(x)
    mag, negative, rounded = _exact_parts(fmt, x)
    out = exact.limbs_to_float64(mag, negative, fmt, x.shape[-1])
    finite = np.all(np.isfinite(np.asarray(x).astype(np.float64)), axis=-1)
    return np.asarray(rounded), np.where(finite, out, np.nan)


def exact_sum_float64(x: Any, *, dtype: Any = None) -> np.ndarray:
    """The exact sum of the last axis of ``x``, correctly rounded to float64 (host NumPy).

    The reference for error measurements: the exact integer-limb sum, each limb an exact
    float64 term, combined by ``math.fsum``. Infinite or NaN inputs give NaN.
    """
    return exact_sums(x, dtype=dtype)[1]


# --- error metrics and bounds ---------------------------------------------------------------

# The largest n (and k) of the bound helpers: k u and 2n / failure are exact in float64.
MAX_N = 1 << 53
# The valid open range of each real argument of the bound helpers.
_OPEN_RANGES = {"u": (0.0, 1.0), "lam": (0.0, math.inf), "failure": (0.0, 1.0)}


def check_args(where: str, **given: Any) -> None:
    """Every argument of a bound helper in its valid range, else an error naming ``where``, the
    argument, its value and the range: ``order`` one of ``STUDY_ORDERS``; ``n`` (inputs) an int
    in [1, MAX_N]; ``k`` (adds on a path) an int or an integer array, each in [0, MAX_N]; ``u``
    (unit roundoff) and ``failure`` (a probability) in (0, 1); ``lam`` (lambda) in (0, inf)."""
    for arg, value in given.items():
        if arg == "order":
            if not isinstance(value, str) or value not in STUDY_ORDERS:
                raise ValueError(f"{where}: unknown order {value!r}; valid: "
                                 f"{list(STUDY_ORDERS)}")
        elif arg == "n":
            check_int(value, 1, MAX_N, where=where, arg="n")
        elif arg == "k":
            a = np.asarray(value)
            if a.dtype == bool or a.dtype.kind not in "iu":
                raise TypeError(f"{where}: k (adds on a path) must be an int or an array of "
                                f"ints, got {value!r}")
            bad = a[(a < 0) | (a > MAX_N)]
            if bad.size:
                raise ValueError(f"{where}: k={bad.flat[0]} is outside the valid range "
                                 f"[0, {MAX_N}]")
        else:
            lo, hi = _OPEN_RANGES[arg]
            if (isinstance(value, (bool, np.bool_))
                    or not isinstance(value, (int, float, np.integer, np.floating))):
                raise TypeError(f"{where}: {arg} must be a real number, got {value!r}")
            if not lo < value < hi:
                raise ValueError(f"{where}: {arg}={value} is outside the valid range "
                                 f"({lo:g}, {hi:g})")


def unit_roundoff(dtype: Any) -> float:
    """u = 2^-p of a format (p = mantissa bits + 1): 2^-11 half, 2^-8 bfloat16, 2^-24 float.

    A tapered format (hifloat8_t) has no single u: raises ValueError (use ``ulp``)."""
    fmt = resolve(dtype, where="unit_roundoff")
    if is_tapered(fmt):
        raise ValueError(f"unit_roundoff: {fmt.name} is tapered (its mantissa width varies "
                         f"with the exponent), so it has no single unit roundoff; use "
                         f"ulp(y, {fmt.name!r}) for the spacing at y")
    return orders.unit_roundoff(fmt)


def gamma(k: Any, u: float) -> Any:
    """Higham's gamma_k = k u / (1 - k u) (inf where k u >= 1): ``k`` an int >= 0 or an array
    of them, 0 < u < 1."""
    check_args("gamma", k=k, u=u)
    k = np.asarray(k, np.float64)
    with np.errstate(divide="ignore"):
        return np.where(k * u < 1, k * u / (1 - k * u), np.inf)


# The failure probability the probabilistic bounds are stated for (``higham_mary_lambda``).
DEFAULT_FAILURE = 1e-3

HIGHAM_MARY = ("N. J. Higham and T. Mary, A new approach to probabilistic rounding error "
               "analysis, SIAM J. Sci. Comput. 41(5), A2815-A2835, 2019")


def gamma_tilde(k: Any, u: float, lam: float) -> Any:
    """Higham & Mary's gamma~_k(lambda) = exp(lambda sqrt(k) u + k u^2 / (1 - u)) - 1.

    About lambda sqrt(k) u; finite for every k (unlike ``gamma``), inf only where the float64
    exponential overflows. gamma~_0 = 0. ``k`` an int >= 0 or an array of them, 0 < u < 1,
    lambda > 0.
    """
    check_args("gamma_tilde", k=k, u=u, lam=lam)
    k = np.asarray(k, np.float64)
    with np.errstate(over="ignore"):
        return np.expm1(lam * np.sqrt(k) * u + k * u * u / (1 - u))


def higham_mary_lambda(n: int, u: float, failure: float = DEFAULT_FAILURE) -> float:
    """The lambda for which the probabilistic bound on a sum of n terms fails with probability
    at most ``failure``: lambda = sqrt(2 ln(2n / failure)) / (1 - u).

    Higham & Mary 2019, Theorem 2.4: one product prod(1 + delta_i)^(+-1) of k independent,
    mean-zero rounding errors |delta_i| <= u lies within 1 +- gamma~_k(lambda) with probability
    at least 1 - 2 exp(-lambda^2 (1 - u)^2 / 2); a sum carries one such product per input
    (their Theorem 3.1 for inner products, summation being the case of ones), so by the union
    bound all n hold at once with probability at least 1 - 2n exp(-lambda^2 (1 - u)^2 / 2).
    Setting that failure term to ``failure`` gives lambda. n >= 1, 0 < u < 1, 0 < failure < 1.
    """
    check_args("higham_mary_lambda", n=n, u=u, failure=failure)
    return math.sqrt(2 * math.log(2 * n / failure)) / (1 - u)


def higham_mary_failure(n: int, u: float, lam: float) -> float:
    """The failure probability bound 2n exp(-lambda^2 (1 - u)^2 / 2) (capped at 1) of the
    probabilistic bound with a given lambda (lambda = 1 says nothing for n >= 1). n >= 1,
    0 < u < 1, lambda > 0."""
    check_args("higham_mary_failure", n=n, u=u, lam=lam)
    return min(1.0, 2 * n * math.exp(-lam * lam * (1 - u) ** 2 / 2))


def ulp(y: Any, dtype: Any) -> np.ndarray:
    """Spacing of the format's numbers at |y| (float64 in, float64 out): 2^(e - mantissa bits)
    for 2^e <= |y| < 2^(e+1), never below the least subnormal; inf gives inf, NaN gives NaN.

    A tapered format (hifloat8_t): the gap from the largest value <= |y| to the next one, read
    off the list of its finite values (``format_spacing``); past the largest finite value its
    last binade's spacing continues, 2^(e - mantissa bits there), as for the other formats;
    inf gives inf, NaN gives NaN."""
    fmt = resolve(dtype, where="ulp")
    if is_tapered(fmt):
        return _tapered_ulp(np.abs(np.asarray(y, np.float64)), fmt.name)
    info = finfo(fmt)
    y = np.abs(np.asarray(y, np.float64))
    emin = info.minexp
    with np.errstate(divide="ignore"):
        e = np.where(y > 0, np.floor(np.log2(np.where(y > 0, y, 1.0))), emin)
    # NaN is not > 0: without this it read as 0, the least subnormal's spacing
    return np.where(np.isnan(y), np.nan, np.exp2(np.maximum(e, emin) - info.nmant))[()]


@functools.cache
def _spacing(name: str):
    return format_spacing(name)


def _tapered_ulp(y: np.ndarray, name: str) -> np.ndarray:
    # No field formula: the mantissa width depends on the binade, so use the value list.
    values, gaps, bits = _spacing(name)
    i = np.searchsorted(values, y, side="right") - 1  # largest listed value <= y (-1: below)
    inside = np.concatenate([values[:1], gaps])[np.clip(i + 1, 0, gaps.size)]
    with np.errstate(divide="ignore", invalid="ignore"):
        e = np.floor(np.log2(y))
    beyond = np.exp2(e - bits[-1])  # y >= the largest finite value (absent from values)
    top = values[-1] + gaps[-1]
    return np.where(np.isnan(y), np.nan, np.where(y < top, inside, beyond))[()]


def errors(computed: Any, exact_value: Any, *, dtype: Any) -> dict[str, np.ndarray]:
    """Errors of computed sums against exact ones (float64), per element.

    ``abs`` = |computed - exact|; ``rel`` = abs / |exact| (0 when both are 0, inf when only the
    exact sum is 0); ``ulps`` = abs / ulp(exact) in the format. A non-finite computed value
    against a finite exact one gives inf everywhere.
    """
    c = np.asarray(np.asarray(computed).astype(np.float64))
    e = np.asarray(exact_value, np.float64)
    with np.errstate(invalid="ignore"):
        err = np.abs(c - e)
    err = np.where(np.isfinite(c) | ~np.isfinite(e), err, np.inf)
    err = np.where(np.isnan(err) & np.isfinite(e), np.inf, err)
    with np.errstate(divide="ignore", invalid="ignore"):
        rel = np.where(err == 0, 0.0, err / np.abs(e))
    return {"abs": err, "rel": rel, "ulps": err / ulp(e, dtype)}


def tree_depth(order: str, n: int, dtype: Any = "float") -> int:
    """Most adds on any input's way to the result along ``order`` (n - 1 for sequential,
    ceil(log2 n) for adjacent_tree); the k of Higham's gamma_k bound. ``order``: one of
    ``STUDY_ORDERS`` but kahan, which is no summation tree; n >= 1.

    whole_reduce_chain: the sum over its levels of ceil(log2 min(m, lanes)), m the values that
    level reduces (the +0 lanes add nothing); float_acc_repeat_sequential: the float
    ReduceSum's depth (its one rounding to the format is counted apart)."""
    check_args("tree_depth", order=order, n=n)
    return _tree_depth(order, int(n), resolve(dtype, where="tree_depth"))


@functools.lru_cache(maxsize=256)
def _tree_depth(order: str, n: int, fmt: Format) -> int:
    log2 = (n - 1).bit_length()  # ceil(log2 n)
    if order == "sequential":
        return n - 1
    if order == "adjacent_tree":
        return log2
    if order in orders.REPEAT_ORDERS:
        repeats = -(-n // fmt.lanes)
        if repeats == 1:
            return log2
        lanes = fmt.lanes.bit_length() - 1
        # repeat_vector_merge: repeats - 1 merge adds, then the tree over the lanes.
        return lanes + ((repeats - 1).bit_length() if order == "repeat_tree" else repeats - 1)
    if order == "whole_reduce_chain":
        depth, m = 0, n
        while m > 1:
            depth += (min(m, fmt.lanes) - 1).bit_length()
            m = -(-m // fmt.lanes)
        return depth
    if order == "float_acc_repeat_sequential":
        return _tree_depth("repeat_sequential", n, FORMATS["float"])
    if order == "numpy_pairwise":
        return orders.numpy_depth(n)
    if order == "kahan":
        raise ValueError("tree_depth: kahan is not a summation tree (it carries a compensation "
                         "term): it has no depth k; its bound is 2u sum|x| (higham_gamma)")
    return orders.tree_depth(orders.order_tree(order, n, fmt))


def order_tree(order: str, n: int, dtype: Any = "float") -> Any:
    """The summation tree of ``order`` over n inputs as nested tuples of input indices (what
    ``reveal_order`` recovers from the emulation); None for kahan. ``order``: one of
    ``STUDY_ORDERS``; n >= 1."""
    check_args("order_tree", order=order, n=n)
    return orders.order_tree(order, n, resolve(dtype, where="order_tree"))


def error_bound(x: Any, *, dtype: Any = None, order: str,
                exact_value: Any = None) -> np.ndarray:
    """Higham's a-priori bound on |computed - exact| for each sum of ``x`` (..., n): float64.

    Trees (sequential, adjacent_tree, datablock modes): gamma_k(u) * sum|x|, k = ``tree_depth``
    (n - 1 sequential, ceil(log2 n) adjacent_tree). numpy_pairwise: the same with float32's u
    and its own depth, plus u |S| for the final rounding when the format is narrower than
    float. kahan: the first-order term 2u * sum|x| only (Higham eq. 4.8; the O(n u^2) term has
    no published constant), so it is not a strict bound for large n u. ``order``: one of
    ``STUDY_ORDERS`` (float_acc_repeat_sequential like numpy_pairwise: float32, then u |S|).
    """
    check_args("error_bound", order=order)
    fmt, x = _format(x, dtype, "error_bound")
    return _per_trial(x, fmt, _order_ratio(order, x.shape[-1], fmt, _higham), exact_value)


def _order_ratio(order: str, n: int, fmt: Format, inner) -> tuple[float, float]:
    """``(g, f)`` of an order's bound ``f |S| + (1 + f) g sum|x|``: ``inner(k, u, n)`` is the
    bound per sum|x| of depth k at unit roundoff u (gamma_k or gamma~_k); ``f`` is the format's
    u where a float32 sum is rounded once more to it (numpy_pairwise in a narrow format), else
    0. kahan: its first-order 2u."""
    u = orders.unit_roundoff(fmt)
    if order == "kahan":
        return 2 * u, 0.0
    last = final_rounding(order, fmt)
    if last:
        return float(inner(tree_depth(order, n, fmt.name), 2.0 ** -24, n)), last
    return float(inner(tree_depth(order, n, fmt.name), u, n)), 0.0


def final_rounding(order: str, fmt: Format) -> float:
    """The ``f`` of ``_order_ratio``: the format's u where the order accumulates in float32
    and rounds once more to a narrower format (its bound u |S| + (1 + u) gamma(float32)
    sum|x|), else 0."""
    return orders.unit_roundoff(fmt) if order in FLOAT32_ORDERS and fmt.name != "float" else 0.0


def _per_trial(x, fmt: Format, ratio: tuple[float, float], exact_value) -> np.ndarray:
    """``f |S| + (1 + f) g sum|x|`` per sum of ``x`` (``ratio`` = (g, f)), float64."""
    g, f = ratio
    xs = np.abs(np.asarray(x).astype(np.float64)).sum(axis=-1)
    if not f:
        return g * xs
    s = exact_sum_float64(x) if exact_value is None else np.asarray(exact_value)
    return f * np.abs(s) + (1 + f) * g * xs


def _higham(k, u, n):
    return gamma(k, u)


def _higham_mary(failure: float):
    return lambda k, u, n: gamma_tilde(k, u, higham_mary_lambda(n, u, failure))


def higham_gamma(order: str, n: int, dtype: Any) -> float:
    """The bound of ``error_bound`` divided by sum|x| (kahan: 2u; numpy_pairwise and
    float_acc_repeat_sequential in a narrow format: float32's gamma plus u, since
    |S| <= sum|x|). ``order``: one of ``STUDY_ORDERS``; n >= 1; ``dtype``: one of
    ``SUM_FORMATS``."""
    check_args("higham_gamma", order=order, n=n)
    g, f = _order_ratio(order, n, _sum_format(dtype, "higham_gamma"), _higham)
    return f + (1 + f) * g  # |S| <= sum|x|


def probabilistic_bound(x: Any, *, dtype: Any = None, order: str, exact_value: Any = None,
                        failure: float = DEFAULT_FAILURE) -> np.ndarray:
    """Higham & Mary's probabilistic bound on |computed - exact| for each sum of ``x``: float64.

    gamma~_k(lambda) * sum|x| with k = ``tree_depth`` (the order's own depth: n - 1 sequential,
    ceil(log2 n) adjacent_tree, the repeat orders' and NumPy's their own) and lambda from
    ``higham_mary_lambda(n, u, failure)``: under the model of independent mean-zero rounding
    errors it holds with probability at least 1 - ``failure``. Round-to-nearest on constant or
    structured inputs (all ones) breaks the model: there the bound may be exceeded.
    numpy_pairwise in a narrow format: u |S| + (1 + u) gamma~_k in float32, like
    ``error_bound``. kahan: 2u sum|x|, the first-order term of ``error_bound``, which does not
    grow with n (Higham & Mary give no probabilistic form for it). 0 < failure < 1.
    """
    check_args("probabilistic_bound", order=order, failure=failure)
    fmt, x = _format(x, dtype, "probabilistic_bound")
    return _per_trial(x, fmt, _order_ratio(order, x.shape[-1], fmt, _higham_mary(failure)),
                      exact_value)


def higham_mary_gamma(order: str, n: int, dtype: Any, *, failure: float = DEFAULT_FAILURE,
                      final: bool = True) -> float:
    """The bound of ``probabilistic_bound`` divided by sum|x|: gamma~_k(lambda) with the
    order's depth k and lambda for ``failure`` (kahan: 2u; numpy_pairwise in a narrow format:
    float32's gamma~ plus u, the final rounding, unless ``final`` is False; so too
    float_acc_repeat_sequential). ``order``: one of ``STUDY_ORDERS``; n >= 1; ``dtype``: one
    of ``SUM_FORMATS``; 0 < failure < 1."""
    check_args("higham_mary_gamma", order=order, n=n, failure=failure)
    g, f = _order_ratio(order, n, _sum_format(dtype, "higham_mary_gamma"),
                        _higham_mary(failure))
    return f + (1 + f) * g if final else g
