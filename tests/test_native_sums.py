"""The float32 row-sum kernels (``ascjax/_src/native/sums.cc``): sequential and Kahan give the
bits of XLA's loop (``orders.native_column_fast`` with the kernels off) and of a NumPy chain
written from ``orders._chain_step``, on every layout ``binio.rows_in_place`` hands over, eager,
under jit and vmap; the float64 sums ``exact_sum`` certifies from lie within their bound of
the exact sums; and ``precision.sum`` / ``exact_sum`` give the same bits with the kernels off.
Each instruction-set path runs (``test_native.py``'s subprocess test, ``ASCJAX_NATIVE_ISA``)."""

from __future__ import annotations

import math

import jax
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from strategies import assert_bits_equal, few_examples, register_values

import ascjax
from ascjax import precision
from ascjax._src import native
from ascjax._src.io.binio import rows_in_place
from ascjax._src.study import orders

pytestmark = pytest.mark.skipif(not native.enabled(), reason="no C++ compiler: kernels off")

TINY = np.float32(2.0 ** -103)


def chain_reference(x: np.ndarray, order: str) -> np.ndarray:
    """float32 sequential or Kahan along the last axis of ``x``, every add a NumPy float32 add
    (``orders._chain_step``), after ``add.tiny_to_nan`` (nonzero values below 2^-103 read as
    NaN)."""
    x = np.where((x != 0) & (np.abs(x) < TINY), np.float32(np.nan), x).astype(np.float32)
    s, e = x[..., 0].copy(), np.zeros(x.shape[:-1], np.float32)
    with np.errstate(invalid="ignore", over="ignore"):
        for j in range(1, x.shape[-1]):
            if order == "sequential":
                s = s + x[..., j]
            else:
                y = x[..., j] + -e
                t = s + y
                e = (t + -s) + -y
                s = t
    return s


def assert_same_sums(got, want, what: str):
    """Bits equal where ``want`` is a number; a NaN where it is one (a NaN sends the caller to
    the carrier adder, so its payload is never seen)."""
    got, want = np.asarray(got), np.asarray(want)
    nan = np.isnan(want)
    assert (np.isnan(got) == nan).all(), f"{what}: NaN rows differ"
    assert_bits_equal(got[~nan], want[~nan], what)


def rows_of(seed: int, rows: int, n: int) -> np.ndarray:
    """float32 rows: most of them normal numbers over 12 binades (sums with no NaN, so bits to
    compare), some adversarial (NaN, inf, -0, subnormals and tiny values, overflow)."""
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal((rows, n)) * 2.0 ** rng.integers(-6, 6, (rows, n))).astype(
        np.float32)
    odd = rng.random(rows) < 0.3
    if odd.any():
        x[odd] = register_values(rng, "float", (int(odd.sum()), n), 0.05)
    return x


def _uses(fn, target: str, *args) -> bool:
    return f'custom_call_target="{target}"' in jax.jit(fn).lower(*args).as_text("hlo")


@few_examples(12)
@given(seed=st.integers(0, 2**32 - 1), rows=st.sampled_from([1, 7, 8, 9, 16, 17, 40]),
       n=st.sampled_from([1, 2, 7, 8, 15, 16, 17, 48, 100]),
       order=st.sampled_from(["sequential", "kahan"]))
def test_the_chain_kernel_adds_as_xla_and_the_reference_do(seed, rows, n, order):
    """Rows in blocks of 16 and 8 and one by one, whole 16-column tiles and the columns past
    them: the kernel's sums are the NumPy chain's and XLA's loop's, eagerly, under jit and
    under vmap."""
    x = rows_of(seed, rows, n)

    def fast(x):
        return orders.native_column_fast(x, order)

    assert _uses(fast, "ascjax_chain_sums", x)
    with native.native_kernels_off():
        xla = np.asarray(jax.jit(fast)(x))
    want = chain_reference(x, order)
    assert_same_sums(xla, want, "XLA's loop")  # the reference itself, checked once more
    for got in (fast(x), jax.jit(fast)(x), jax.vmap(fast)(x[:, None])[:, 0]):
        assert_same_sums(got, want, order)


def test_tiny_and_special_inputs_reach_the_result_as_xla_says():
    """A tiny input (nonzero, below 2^-103) makes its row's sum a NaN, whatever else the row
    holds; 2^-103 itself, subnormal-free rows near it, -0, inf and overflow as IEEE adds give
    them (Kahan's inf - inf is a NaN)."""
    x = np.ones((24, 40), np.float32)
    x[0, 5] = np.float32(1e-40)            # subnormal: tiny
    x[1, 39] = -np.nextafter(TINY, 0)     # the largest tiny
    x[2, 0] = TINY                         # not tiny
    x[3] = -0.0
    x[4, 3] = np.inf
    x[5, :2] = np.finfo(np.float32).max    # overflow to inf
    x[6, 7], x[6, 8] = np.inf, -np.inf
    x[7] = TINY * np.arange(40)            # multiples of 2^-103: sums stay normal
    for order in ("sequential", "kahan"):
        got = np.asarray(jax.jit(lambda x, order=order: orders.native_column_fast(x, order))(x))
        assert_same_sums(got, chain_reference(x, order), order)
        assert np.isnan(got[:2]).all() and not np.isnan(got[2])
        assert_bits_equal(got[3], np.float32(-0.0), "-0 + -0")


def test_batch_axes_and_vmap_are_more_rows():
    """(a, b, n) and vmap over a leading axis: the rows of one call, the same sums."""
    x = rows_of(3, 6 * 5, 33).reshape(6, 5, 33)
    for order in ("sequential", "kahan"):
        want = chain_reference(x, order)

        def fast(x, order=order):
            return orders.native_column_fast(x, order)

        assert_same_sums(jax.jit(fast)(x), want, "batch axes")
        assert_same_sums(jax.vmap(fast)(x), want, "vmap")
        assert_same_sums(jax.vmap(jax.vmap(fast), in_axes=1, out_axes=1)(x), want, "vmap twice")


def _shifted(seed: int, rows: int, n: int, skip: int) -> tuple[np.ndarray, tuple]:
    """Host rows ``skip`` float32s past a 64-byte boundary (>= 1 MiB, so handed over in
    place) and ``rows_in_place``'s parts of them."""
    base = np.empty(rows * n + 32, np.float32)
    start = (-base.ctypes.data % 64) // 4 + skip
    x = base[start:start + rows * n].reshape(rows, n)
    x[...] = rows_of(seed, rows, n)
    return x, rows_in_place(x)


@pytest.mark.parametrize(("skip", "n"), [(0, 1000), (1, 1000), (3, 1024), (7, 1024), (15, 1024)])
def test_the_shifted_layout_reads_each_row_in_order(skip, n):
    """``binio.rows_in_place``'s body / head / rest (row 0 from two pieces, rows from the
    middle of body's rows, the copied rest): the chains and the wide sums of the plain rows.
    Rows of 1024 share an alignment, so the kernel starts them row by row up to it."""
    x, parts = _shifted(skip, 271, n, skip)
    assert len(parts) == (1 if skip == 0 else 3)
    cols = orders.columns_of(parts)
    for order in ("sequential", "kahan"):
        def fast(*parts, order=order):
            return orders.native_column_fast(orders.columns_of(parts), order)

        if skip:
            assert _uses(fast, "ascjax_chain_sums_shifted", *parts)
        assert_same_sums(jax.jit(fast)(*parts), chain_reference(x, order), order)
    with jax.enable_x64(True):
        s, t, terms = jax.jit(lambda *p: orders.columns_of(p).wide_sums())(*parts)
    assert terms == cols.wide_terms()
    _assert_within_bound(np.asarray(s), np.asarray(t), x)


def _assert_within_bound(s: np.ndarray, t: np.ndarray, x: np.ndarray):
    """Finite rows: s within (n - 1) 2^-53 sum|x| of the exact sum (math.fsum), and t within
    as much of sum|x|, the bound ``exact.certified_float_bits`` takes (plus n 2^-126 for a
    backend that reads subnormals as zero); other rows non-finite as NumPy's float64 sum."""
    with np.errstate(invalid="ignore"):  # a signalling NaN widens with a warning
        wide = x.astype(np.float64)
    n = x.shape[-1]
    for r in range(x.shape[0]):
        row = wide[r]
        if not np.isfinite(row).all():
            with np.errstate(invalid="ignore", over="ignore"):
                assert np.isnan(s[r]) == np.isnan(row.sum()), r
            continue
        magnitude = math.fsum(np.abs(row))
        slack = 1.01 * (n - 1) * 2.0 ** -53 * magnitude + n * 2.0 ** -126
        assert abs(s[r] - math.fsum(row)) <= slack, r
        assert abs(t[r] - magnitude) <= slack, r


@few_examples(8)
@given(seed=st.integers(0, 2**32 - 1), rows=st.sampled_from([1, 5, 33]),
       n=st.sampled_from([1, 15, 16, 17, 200]))
def test_the_wide_sums_are_within_their_bound(seed, rows, n):
    """The float64 sums of values and magnitudes ``exact_sum`` certifies from, by the kernel,
    eagerly and under jit, against math.fsum."""
    x = rows_of(seed, rows, n)

    def sums(x):
        return orders.Columns(x).wide_sums()[:2]

    with jax.enable_x64(True):
        assert _uses(sums, "ascjax_wide_sums", x)
        for s, t in (sums(x), jax.jit(sums)(x)):
            _assert_within_bound(np.asarray(s), np.asarray(t), x)


@pytest.mark.parametrize("skip", [0, 3])
def test_precision_sums_are_the_same_bits_with_the_kernels_off(skip):
    """The public calls on host rows >= 1 MiB (in place, shifted where ``skip``), with a tiny
    value, a NaN and an inf - inf among them (those rows take the carrier adder):
    ``precision.sum`` sequential and kahan and ``exact_sum``, kernels on and off."""
    x, _ = _shifted(11 + skip, 300, 1024, skip)
    x[4, 100], x[9, 0], x[17, 3], x[17, 4] = 1e-41, np.nan, np.inf, -np.inf
    calls = {"exact_sum": precision.exact_sum,
             **{order: lambda x, order=order: precision.sum(x, order=order)
                for order in ("sequential", "kahan")}}
    for name, call in calls.items():
        got = np.asarray(call(x))
        with ascjax.native_kernels_off():
            want = np.asarray(call(x))
        assert_bits_equal(got, want, name)
        assert not np.isnan(got[4]), name  # the tiny row went to the carrier adder


@pytest.mark.parametrize("order", ["adjacent_tree", "repeat_sequential", "repeat_tree"])
@pytest.mark.parametrize(("n", "skip"), [(2, 0), (3, 1), (63, 0), (64, 5), (65, 0), (129, 3),
                                         (192, 2), (1000, 0), (1024, 7), (4097, 1)])
def test_the_tree_kernel_adds_as_numpys_host_path_does(order, n, skip, monkeypatch):
    """The float32 tree orders of host rows >= 1 MiB (``orders.host_order``): the kernel's sums
    are NumPy's path's bits, over odd and even levels, whole and padded repeats, plain and
    shifted layouts, with adversarial rows (a tiny input's row summed again by NumPy, NaNs
    canonical)."""
    rows = (1 << 20) // (4 * n) + 3
    x, _ = _shifted(n + skip, rows, n, skip)
    x[1, n // 2] = 1e-41  # tiny: this row comes out NaN from the kernel, then NumPy's
    x[2] = -0.0  # repeat_tree pads 3 repeat sums (n = 192) with +0: -0 + +0 is +0
    calls = []
    monkeypatch.setattr(native, "tree_sums_host",
                        lambda *a, real=native.tree_sums_host: calls.append(a) or real(*a))
    fmt = ascjax.FORMATS["float"]
    got = orders.host_order(x, order, fmt)
    assert len(calls) == native.trees_enabled()  # NumPy's levels where there is no AVX-512
    want = orders.host_order(x, order, fmt, native_path=False)
    assert_bits_equal(got, want, order)
    assert not np.isnan(got[1])
