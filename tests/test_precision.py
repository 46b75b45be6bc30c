"""ascjax.precision: every order bit for bit against plain loops over NumPy scalars, the exact
sum against fractions, metrics, bounds, the study and its command."""

import importlib.util
import math
import pathlib
import re
from fractions import Fraction

import en_dtypes
import jax
import ml_dtypes
import numpy as np
import pytest
from strategies import DTYPES, NAN_BITS, bits

from ascjax import precision, reference
from ascjax._src.cli import main
from ascjax._src.study import orders

LANES = {"half": 128, "bfloat16_t": 128, "float": 64, "fp8_e5m2_t": 256, "fp8_e4m3fn_t": 256}
RNG = np.random.default_rng(11)


# The summation orders' reference models: ascjax.reference (module _orders).
REFERENCES = reference.SUMMATION_ORDERS


def inputs(name, rows, n):
    """Random values over a wide range plus adversarial rows: specials, subnormals, -0,
    overflow, exact cancellation."""
    dt = DTYPES[name]
    fi = ml_dtypes.finfo(dt)
    scale = np.exp2(RNG.integers(-6, 6, (rows, n)))
    x = (RNG.standard_normal((rows, n)) * scale).astype(dt)
    x[0, ::7] = fi.max  # overflow to inf along the way
    x[1, :] = -0.0
    x[1, n // 2] = np.inf
    x[2, 3] = np.nan
    x[2, ::5] = fi.smallest_subnormal
    x[3, ::3] = -fi.smallest_subnormal * 3
    half = n // 2
    x[4, :half] = x[5, :half]
    x[4, half:2 * half] = -x[5, :half]
    return x


@pytest.fixture(scope="module")
def data():
    return {name: inputs(name, 7, 300) for name in DTYPES}


@pytest.mark.parametrize("name", list(DTYPES))
@pytest.mark.parametrize("order", precision.ORDERS)
def test_orders_match_plain_loops(data, name, order):
    x = data[name]
    got = precision.sum(x, order=order)
    assert got.dtype == x.dtype and got.shape == (x.shape[0],)
    want = [REFERENCES[order](row, name) for row in x]
    np.testing.assert_array_equal(bits(got, name), bits(want, name))


@pytest.mark.parametrize("order", precision.ORDERS)
def test_short_half_sums_and_jit(order):
    x = inputs("half", 7, 13)
    eager = precision.sum(x, order=order)
    jitted = jax.jit(lambda v: precision.sum(v, order=order))(x)
    one = np.stack([precision.sum(row, order=order) for row in x[:2]])
    want = [REFERENCES[order](row, "half") for row in x]
    np.testing.assert_array_equal(bits(eager, "half"), bits(want, "half"))
    np.testing.assert_array_equal(bits(jitted, "half"), bits(eager, "half"))
    np.testing.assert_array_equal(bits(one, "half"), bits(eager[:2], "half"))


@pytest.mark.parametrize("name", ["half", "float"])
@pytest.mark.parametrize("n", [5, 8, 136, 300, 1037])
def test_numpy_pairwise_is_np_sum(name, n):
    x = (RNG.standard_normal((3, n)) * np.exp2(RNG.integers(-8, 8, (3, n)))).astype(DTYPES[name])
    np.testing.assert_array_equal(bits(precision.sum(x, order="numpy_pairwise"), name),
                                  bits(np.sum(x, axis=-1), name))


def test_half_ones_stagnate_sequentially_but_not_in_a_tree():
    ones = np.ones(4096, np.float16)
    assert float(precision.sum(ones, order="sequential")) == 2048.0
    for order in ("adjacent_tree", "repeat_sequential", "repeat_tree", "repeat_vector_merge",
                  "numpy_pairwise", "kahan"):
        assert float(precision.sum(ones, order=order)) == 4096.0


def test_to_format_rounds_once():
    x = np.array([1 + 2.0**-8 + 2.0**-30, 1 + 2.0**-8, -(1 + 3 * 2.0**-8), 1e39, 2.0**-140])
    got = precision.to_format(x, "bfloat16")
    assert got.dtype == ml_dtypes.bfloat16
    want = [round_exact(Fraction(float(v)), "bfloat16_t") for v in x]
    np.testing.assert_array_equal(bits(got, "bfloat16_t"), bits(want, "bfloat16_t"))
    assert float(got[0]) == 1 + 2.0**-7  # ml_dtypes' own cast gives 1 (rounds twice)
    e4 = precision.to_format(np.array([1 + 2.0**-4 + 2.0**-40, 500.0]), "fp8_e4m3fn_t")
    assert float(e4[0]) == 1.125 and np.isnan(float(e4[1]))


def _to_format_numpy(x, name):
    """to_format before it rounded through round_bits: float64 to float32 rounded to odd, then
    NumPy's / ml_dtypes' cast (the proof below holds it to the same bits)."""
    dt = DTYPES[name]
    x = np.asarray(x)
    with np.errstate(over="ignore", invalid="ignore"):
        if x.dtype == dt or name == "float" or x.dtype in (np.float32, np.float16,
                                                           ml_dtypes.bfloat16):
            return x.astype(dt)
        wide = x.astype(np.float64)
        f = wide.astype(np.float32)
        inexact = np.isfinite(f) & (f.astype(np.float64) != wide)
        even = (f.view(np.uint32) & 1) == 0
        toward = np.where(wide > f, np.float32(np.inf), np.float32(-np.inf))
        return np.where(inexact & even, np.nextafter(f, toward), f).astype(dt)


def _adversarial_float64(name):
    """Every value of the format (float: random ones), the midpoints between neighbours (ties)
    and one float64 / float32 step either side of them (double-rounding traps), the overflow
    border, float64 and float32 subnormals, +-0, +-inf, +-NaN; and random float64 patterns."""
    dt = DTYPES[name]
    width = np.dtype(dt).itemsize * 8
    rng = np.random.default_rng(5)
    codes = np.arange(1 << width) if width < 32 else rng.integers(0, 1 << 32, 1 << 16)
    codes = codes.astype(f"uint{width}")
    with np.errstate(invalid="ignore"):
        v = codes.view(dt).astype(np.float64)
        mid = (v + (codes + 1).view(dt).astype(np.float64)) / 2  # next code up in magnitude
    fi = ml_dtypes.finfo(dt)
    top = float(fi.max) + (float(fi.max) - float(np.nextafter(dt(fi.max), dt(0)))) / 2
    edges = np.array([top, 2 * float(fi.max), 1e300, 5e-324, 2.0**-149, 2.0**-150,
                      3 * 2.0**-151, 0.0, np.inf, np.nan])
    x = np.concatenate([v, mid, edges, rng.random(1000)])
    with np.errstate(over="ignore", invalid="ignore"):  # NaN payloads, beyond float32
        x32 = x.astype(np.float32)
        x = np.concatenate([x, np.nextafter(x, np.inf), np.nextafter(x, -np.inf),
                            np.nextafter(x32, np.float32(np.inf)).astype(np.float64),
                            np.nextafter(x32, np.float32(-np.inf)).astype(np.float64)])
    patterns = np.random.default_rng(7).integers(0, 1 << 63, 1 << 16, dtype=np.uint64)
    return np.concatenate([x, -x, patterns.view(np.float64), -patterns.view(np.float64)])


@pytest.mark.parametrize("name", list(DTYPES))
def test_to_format_is_the_numpy_cast_after_odd_float32(name):
    """to_format rounds through round_bits; it gives the bits the NumPy / ml_dtypes path gave
    for float64, float32, half, bfloat16 and integer inputs. A NaN it rounds is the canonical
    NaN with its sign (those casts kept float32 payload bits in half), so NaNs compare so."""
    x = _adversarial_float64(name)
    with np.errstate(over="ignore", invalid="ignore"):
        sources = [x, x.astype(np.float32), x.astype(np.float16), x.astype(ml_dtypes.bfloat16),
                   np.array([2**60 + 1, -(2**40 + 3), 7, 0, 1 << 62], np.int64)]
    uint = f"uint{np.dtype(DTYPES[name]).itemsize * 8}"
    top = np.array(1 << (np.dtype(uint).itemsize * 8 - 1), uint)

    def signed_bits(y):  # NaN -> the canonical NaN with y's sign
        raw = y.view(uint)
        return np.where(np.isnan(y.astype(np.float32)), (raw & top) | NAN_BITS[name], raw)

    for src in sources:
        with np.errstate(invalid="ignore"):  # float64 signalling NaN to float32
            got = precision.to_format(src, name)
        want = _to_format_numpy(src, name)
        assert got.dtype == want.dtype == DTYPES[name]
        np.testing.assert_array_equal(signed_bits(got), signed_bits(want), err_msg=str(src.dtype))
    if name != "float":  # float64 -> float32 stays NumPy's cast
        got = precision.to_format(x, name)
        np.testing.assert_array_equal(got.view(uint), signed_bits(got))


def test_to_format_supports_the_sum_formats_only():
    with pytest.raises(TypeError, match="to_format: dtype hifloat8_t is not supported"):
        precision.to_format([1.0], "hifloat8_t")


def test_dtype_argument_rounds_the_input_once():
    x = np.array([1.0, 2.0**-12, 2.0**-12])  # float64; in half 1 + 2^-12 rounds to 1
    assert float(precision.sum(x, dtype="half")) == 1.0
    assert float(precision.sum(x, dtype="float")) == 1.0 + 2.0**-11
    with pytest.raises(TypeError, match="sum: dtype"):
        precision.sum(x, dtype="int8_t")
    with pytest.raises(ValueError, match="unknown order"):
        precision.sum(x, dtype="half", order="reverse")
    with pytest.raises(ValueError, match="n >= 1"):
        precision.sum(np.zeros(0, np.float16))


def test_gradient_is_that_of_the_exact_sum():
    x = np.linspace(-1, 1, 10, dtype=np.float32)
    for order in ("sequential", "adjacent_tree", "kahan"):
        g = jax.grad(lambda v, o=order: precision.sum(v, order=o))(x)
        np.testing.assert_array_equal(np.asarray(g), np.ones(10, np.float32))


# --- the exact sum ----------------------------------------------------------------------------

def round_exact(s: Fraction, name):
    """The format value nearest to the fraction s, ties to even (a slow, obvious reference)."""
    dt = DTYPES[name]
    fi = ml_dtypes.finfo(dt)
    ulp_max = Fraction(2) ** (int(fi.maxexp) - 1 - fi.nmant)
    top = Fraction(float(fi.max)) + ulp_max / 2
    if abs(s) >= top:
        return dt(math.copysign(np.inf, s))
    with np.errstate(all="ignore"):
        c = np.array(float(s)).astype(dt)
    u = np.dtype(f"uint{np.dtype(dt).itemsize * 8}")
    b = int(c.view(u))
    cands = []
    for d in (-1, 0, 1):
        if 0 <= b + d < 2 ** (8 * np.dtype(dt).itemsize):
            v = np.array(b + d, u).view(dt)
            if np.isfinite(float(v)):
                cands.append(v)
    return min(cands, key=lambda v: (abs(Fraction(float(v)) - s), int(v.view(u)) & 1))


@pytest.mark.parametrize("name", list(DTYPES))
def test_exact_sum_is_the_exact_sum_rounded_once(name):
    dt = DTYPES[name]
    fi = ml_dtypes.finfo(dt)
    span = 4 if name.startswith("fp8") else 12
    x = (RNG.standard_normal((24, 40)) * np.exp2(RNG.integers(-span, span, (24, 40)))).astype(dt)
    x[:8, 20:] = -x[:8, :20]  # exact cancellation down to a few values
    x[8:12, 20:] = -x[8:12, :20]
    x[8:12, 0] = fi.smallest_subnormal
    x[12, :] = fi.max  # overflows
    x[13, :] = -fi.smallest_subnormal
    got = precision.exact_sum(x)
    want = [round_exact(sum((Fraction(float(v)) for v in row), Fraction(0)), name) for row in x]
    np.testing.assert_array_equal(bits(got, name), bits(want, name))
    f64 = precision.exact_sum_float64(x)
    np.testing.assert_array_equal(f64, [float(sum((Fraction(float(v)) for v in row),
                                                  Fraction(0))) for row in x])


def test_exact_sum_cancellation_and_specials():
    assert float(precision.exact_sum(np.array([1e8, 1, -1e8], np.float32))) == 1.0
    big = np.float32(2.0**100)
    tiny = np.float32(2.0**-149)
    x = np.array([big, tiny, -big, tiny, tiny], np.float32)
    assert precision.exact_sum(x).view(np.uint32) == 3  # three least subnormals survive
    assert bits(precision.exact_sum(np.array([np.inf, -np.inf, 1], np.float32)), "float") == \
        NAN_BITS["float"]
    assert bits(precision.exact_sum(np.array([-0.0, -0.0], np.float16)), "half") == 0x8000
    assert bits(precision.exact_sum(np.array([-0.0, 0.0], np.float16)), "half") == 0
    assert bits(precision.exact_sum(np.array([1.0, -1.0], np.float16)), "half") == 0
    assert float(precision.exact_sum(np.full(70000, 1, np.float16))) == np.inf
    # 70000 values: two int32 passes; 2^-24 * 70000 is exact
    many = np.full(70000, 2.0**-24, np.float16)
    assert float(precision.exact_sum(many, dtype="float")) == 70000 * 2.0**-24


def test_exact_sum_under_jit_and_grad():
    x = np.array([3.0, -1.5, 2.0**-20], np.float32)
    np.testing.assert_array_equal(np.asarray(jax.jit(precision.exact_sum)(x)),
                                  np.asarray(precision.exact_sum(x)))
    np.testing.assert_array_equal(np.asarray(jax.grad(precision.exact_sum)(x)), np.ones(3))


# --- metrics and bounds -----------------------------------------------------------------------

def test_metrics():
    assert precision.unit_roundoff("half") == 2.0**-11
    assert precision.unit_roundoff("bfloat16") == 2.0**-8
    assert float(precision.gamma(2, 2.0**-11)) == pytest.approx(2 * 2.0**-11 / (1 - 2 * 2.0**-11))
    assert float(precision.gamma(4096, 2.0**-11)) == np.inf
    assert float(precision.ulp(1.0, "half")) == 2.0**-10
    assert float(precision.ulp(0.0, "half")) == 2.0**-24
    e = precision.errors(np.array([2048.0, 4096.0], np.float16), np.array([4096.0, 4096.0]),
                         dtype="half")
    assert list(e["abs"]) == [2048.0, 0.0] and list(e["rel"]) == [0.5, 0.0]
    assert list(e["ulps"]) == [512.0, 0.0]
    e = precision.errors(np.array([np.inf], np.float16), np.array([1.0]), dtype="half")
    assert e["abs"][0] == np.inf
    assert precision.tree_depth("sequential", 4096) == 4095
    assert precision.tree_depth("adjacent_tree", 4096) == 12
    assert precision.tree_depth("adjacent_tree", 4097) == 13
    assert precision.tree_depth("repeat_sequential", 4096, "half") == 7 + 31
    assert precision.tree_depth("repeat_tree", 4096, "half") == 12
    assert precision.tree_depth("repeat_vector_merge", 4096, "half") == 31 + 7
    for order in ("repeat_sequential", "repeat_tree", "repeat_vector_merge", "numpy_pairwise"):
        for n in (1, 7, 8, 100, 128, 129, 300, 1000, 1031):
            assert precision.tree_depth(order, n, "half") == \
                orders.tree_depth(precision.order_tree(order, n, "half")), (order, n)


def test_numpy_pairwise_depth_needs_no_tree():
    """tree_depth of numpy_pairwise built the whole tree: n = 2^53 - 1 raised MemoryError and
    2^22 took 19 s. Its depth now follows NumPy's split; against the tree for every n to
    2048 and a few larger, and at 2^53 - 1 within the bounds NumPy's split gives (below)."""
    for n in [*range(1, 2049), 4095, 4096, 4097, 10007, 65536]:
        assert precision.tree_depth("numpy_pairwise", n) == \
            orders.tree_depth(precision.order_tree("numpy_pairwise", n)), n
    # 2^53 - 1 halves 46 or 47 times (2^53 / 2^46 = 128) before a block holds 128 or fewer,
    # one add each; a block adds at most 24 (127 elements: 15 adds in an accumulator, 3 in
    # the pair tree of the 8, 7 one by one).
    depth = precision.tree_depth("numpy_pairwise", 2**53 - 1)
    assert 46 <= depth <= 47 + 24


def test_hifloat8_is_tapered_no_unit_roundoff_and_its_own_ulp():
    """unit_roundoff gave 2^-4 and ulp a fixed 3-bit mantissa for hifloat8_t (2^-18 at 0, 64
    at 1000). By hand from the layout (numerics/hifloat8): 3 mantissa bits for |e| <= 3, 2 for
    4..7, 1 for 8..15, the codes 2^-22 .. 2^-16 one value per binade."""
    with pytest.raises(ValueError, match=re.escape(
            "unit_roundoff: hifloat8_t is tapered (its mantissa width varies with the "
            "exponent), so it has no single unit roundoff; use ulp(y, 'hifloat8_t') for the "
            "spacing at y")):
        precision.unit_roundoff("hifloat8")
    hand = {0.0: 2.0**-22, 3e-7: 2.0**-22,          # below 2^-21 the next value up is 2^-21
            2.0**-20: 2.0**-20, 2.0**-15: 2.0**-16,  # 2^-15 and 1.5 * 2^-15: 1 bit
            0.75: 2.0**-4, 1.0: 2.0**-3, -1.9: 2.0**-3, 2.0: 2.0**-2,
            100.0: 16.0, 1000.0: 256.0, 30000.0: 8192.0,  # 2, 1, 1 bits
            # past the largest finite value 2^15 its binade's 1 bit goes on, as for half
            32768.0: 2.0**14, 1e6: 2.0**18, math.inf: math.inf}
    got = precision.ulp(list(hand), "hifloat8_t")
    assert got.tolist() == list(hand.values())
    assert np.isnan(precision.ulp(np.nan, "hifloat8_t"))
    # every finite value's gap to the next, from en_dtypes' hifloat8 (an independent decoder)
    v = np.arange(256, dtype=np.uint8).view(en_dtypes.hifloat8).astype(np.float64)
    v = np.unique(v[np.isfinite(v) & (v >= 0)])
    np.testing.assert_array_equal(precision.ulp(v[:-1], "hifloat8_t"), np.diff(v))
    # half unchanged: the formula's values, and np.spacing at each finite value below max
    assert precision.ulp([1.0, 3.0, 65504.0, 70000.0, 2.0**-20, 0.0], "half").tolist() == \
        [2.0**-10, 2.0**-9, 32.0, 64.0, 2.0**-24, 2.0**-24]
    h = np.arange(0x7BFF, dtype=np.uint16).view(np.float16)
    np.testing.assert_array_equal(precision.ulp(h, "half"), np.spacing(h).astype(np.float64))


@pytest.mark.parametrize("order", precision.ORDERS[:-1])
def test_measured_errors_are_within_highams_bounds(order):
    x = precision.make_inputs("uniform(-1, 1)", 1000, 32, "half", seed=3)
    exact = precision.exact_sum_float64(x)
    err = precision.errors(precision.sum(x, order=order), exact, dtype="half")["abs"]
    bound = precision.error_bound(x, order=order)
    assert np.all(err <= bound)
    assert np.all(bound / np.abs(x.astype(np.float64)).sum(-1)
                  <= precision.higham_gamma(order, 1000, "half") * (1 + 1e-12))


# --- the study and its command ----------------------------------------------------------------

def test_make_inputs():
    x = precision.make_inputs("cancelling", 9, 3, "half", seed=1)
    assert x.dtype == np.float16 and x.shape == (3, 9)
    assert np.all(precision.exact_sum_float64(x) == 0)
    np.testing.assert_array_equal(x, precision.make_inputs("cancelling", 9, 3, "half", seed=1))
    assert np.all(precision.make_inputs("ones", 4, 2, "float") == 1)
    u = precision.make_inputs("uniform(1, 2)", 100, 2, "float")
    assert u.min() >= 1 and u.max() <= 2
    with pytest.raises(ValueError, match="unknown distribution"):
        precision.make_inputs("cauchy", 4, 2, "half")


def test_study_writes_markdown_csv_and_plots(tmp_path):
    study = precision.run_study(formats=["half"], sizes=[16, 32], trials=2, seed=1,
                                kappas=(10.0,), kappa_n=32)
    assert len(study.rows) == 2 * 4 * len(precision.ORDERS)
    assert len(study.conditioning.rows) == len(precision.ORDERS)
    ones = {(r["n"], r["order"]): r for r in study.rows if r["distribution"] == "ones"}
    assert ones[16, "sequential"]["max_abs_err"] == 0.0
    assert all(r["within_bound"] for r in study.rows)
    paths = precision.write_study(study, tmp_path / "out")
    names = sorted(p.name for p in paths)
    assert names == ["error_distribution_half.png", "error_vs_kappa_half.png",
                     "error_vs_n_half.png", "study.csv", "study.md", "study_trials.csv"]
    text = (tmp_path / "out" / "study.md").read_text()
    assert "| distribution | n | sequential |" in text


def test_study_command(tmp_path, capsys):
    code = main(["study", "--out", str(tmp_path), "--formats", "half", "--sizes", "16",
                 "--distributions", "ones,uniform(1;2)", "--orders", "sequential,adjacent_tree",
                 "--trials", "2", "--kappa-n", "64", "--no-progress"])
    assert code == 0
    assert (tmp_path / "study.csv").exists() and (tmp_path / "error_vs_n_half.png").exists()
    assert "study.md" in capsys.readouterr().out
    with pytest.raises(SystemExit) as done:
        main(["study", "--out", str(tmp_path), "--formats", "int8", "--no-progress"])
    assert done.value.code == 2 and "argument --formats:" in capsys.readouterr().err


def test_benchmark_script_runs(capsys):
    script = pathlib.Path(__file__).parents[1] / "benchmarks" / "precision_trials.py"
    spec = importlib.util.spec_from_file_location("precision_trials", script)
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    assert bench.main(["--trials", "3", "--n", "16", "--chunk", "2"]) == 0
    out = capsys.readouterr().out
    assert "np.sum (baseline)" in out and "sum order=kahan" in out


def test_golden_mismatch():
    # Float blocks of 8: NumPy's 8 accumulators meet in the same tree as the hardware's.
    assert precision.golden_mismatch("uniform(1, 2)", "float", blocks=256) == 0.0
    rate = precision.golden_mismatch("uniform(1, 2)", "half", blocks=1024)
    assert 0.1 < rate < 0.5


def test_study_command_rejects_bad_values_and_reads_uniform_with_a_comma(tmp_path, capsys):
    for args in (["--trials", "0"], ["--sizes", "8,0"], ["--sizes", "-4"]):
        with pytest.raises(SystemExit) as done:
            main(["study", "--out", str(tmp_path), *args])
        err = capsys.readouterr().err
        assert done.value.code == 2 and f"argument {args[0]}: " in err, err
        assert "is outside the valid range [1, 2147483648]" in err, err
    with pytest.raises(SystemExit) as done:
        main(["study", "--out", str(tmp_path), "--distributions", "uniform(2,1)"])
    assert done.value.code == 2
    assert "argument --distributions: 'uniform(2,1)' needs finite a < b" in capsys.readouterr().err
    assert main(["study", "--out", str(tmp_path), "--formats", "half", "--sizes", "8",
                 "--trials", "4", "--orders", "sequential", "--distributions",
                 "uniform(1,2),normal", "--kappas", "none", "--no-progress"]) == 0
    table = (tmp_path / "study.csv").read_text()
    assert "uniform(1,2)" in table and "normal" in table


@pytest.mark.parametrize("args, message", [
    (["--out", "{tmp}/file"], "exists and is not a directory"),
    (["--out", "/proc/ascjax-study"], "cannot write into --out '/proc/ascjax-study'"),
    (["--out", "{tmp}/o", "--sizes", "1000000000"],
     r"n=1000000000 needs about .* TiB .* lower sizes or trials \(--sizes / --trials\)"),
])
def test_study_checks_everything_before_any_work(tmp_path, capsys, monkeypatch, args, message):
    """Issue 15: a bad --out or size fails at once (it failed after ~50 s of work)."""
    from ascjax._src.study import study as study_module

    (tmp_path / "file").write_text("")
    monkeypatch.setattr(study_module, "run_study", lambda **_: pytest.fail("work was started"))
    monkeypatch.setattr(study_module, "available_memory", lambda: 8 << 30)
    args = [a.replace("{tmp}", str(tmp_path)) for a in args]
    assert main(["study", *args, "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert re.search(message, err), err
    assert err.count("\n") == 1  # one line, no traceback


@pytest.mark.parametrize("args, message", [
    (["--distributions", "cauchy"], "argument --distributions: unknown distribution 'cauchy'"),
    (["--formats", "hifloat8_t"], "argument --formats: 'hifloat8_t' cannot be summed here"),
    (["--orders", "sequential,bogus"], "argument --orders: unknown order 'bogus'"),
])
def test_study_refuses_a_bad_option_value_while_parsing(tmp_path, capsys, monkeypatch, args,
                                                      message):
    """Names, orders and formats are usage errors, in the parser's two lines, before any work
    (they were one-line errors from the run)."""
    from ascjax._src.study import study as study_module

    monkeypatch.setattr(study_module, "run_study", lambda **_: pytest.fail("work was started"))
    with pytest.raises(SystemExit) as done:
        main(["study", "--out", str(tmp_path / "o"), *args, "--no-progress"])
    err = capsys.readouterr().err
    assert done.value.code == 2 and err.startswith(f"ascjax study: error: {message}"), err
    assert err.count("\n") == 2 and "(see ascjax study --help)" in err
    assert not (tmp_path / "o").exists()


def test_study_markdown_explains_itself():
    """Findings in words with their numbers, every distribution and column defined, an
    overflow (half, ones, n = 65536 sums to 65536 > 65504) explained, not a contradiction."""
    study = precision.run_study(formats=["half"], sizes=[16, 65536], trials=1, kappas=(),
                                distributions=["ones", "uniform"],
                                orders=["sequential", "adjacent_tree"])
    text = precision.markdown(study)
    findings = text[text.index("## Findings"):text.index("## What was measured")]
    # The tree overflows; the sequential sum stagnates at 2048 (2048 + 1 rounds to 2048).
    assert "**half, ones, n = 65536: overflow.** adjacent_tree returned inf" in findings
    assert "mean exact sum 65536" in findings
    tree = next(r for r in study.rows if (r["distribution"], r["n"], r["order"])
                == ("uniform", 65536, "adjacent_tree"))
    assert f"tree's largest error is {tree['max_err_over_sum_abs']:.1e}" in findings
    assert "`uniform`: uniform on [0, 1)" in text and "`ones`: all ones" in text
    assert "`adjacent_tree`: adjacent pairs level by level" in text
    assert "`inf` as a bound means" in text and "not a contradiction" in text


def test_study_plot_never_draws_a_nonzero_error_as_exact():
    """Every nonzero error lies above the bottom (exact) edge; coinciding orders are apart."""
    study = precision.run_study(formats=["half"], sizes=[16, 256], trials=2, kappas=(),
                                distributions=["cancelling"],
                                orders=["adjacent_tree", "repeat_tree", "numpy_pairwise"])
    fig = precision.plot(study, "half")
    ax = fig.axes[0]
    bottom = ax.get_ylim()[0] * 2  # the floor: exact results are drawn there
    solid = [line for line in ax.get_lines() if line.get_linestyle() == "-"]
    rows = {(r["order"], r["n"]): r["max_err_over_sum_abs"] for r in study.rows}
    for line, order in zip(solid, study.orders, strict=True):
        for y, n in zip(line.get_ydata(), study.sizes, strict=True):
            assert (y > bottom) == (rows[order, n] > 0), (order, n, y, bottom)
    xs = [tuple(line.get_xdata()) for line in solid]
    assert len(set(xs)) == len(xs)  # each order shifted along n


def test_ulp_of_nan_is_nan_and_of_inf_is_inf():
    """ulp(nan) read NaN as 0 and gave the least subnormal's spacing (2^-24 in half)."""
    for fmt in ("half", "bfloat16_t", "float", "fp8_e5m2_t", "hifloat8_t"):
        got = precision.ulp(np.array([np.nan, -np.nan, np.inf, -np.inf, 1.0]), fmt)
        assert np.isnan(got[:2]).all() and (got[2:4] == np.inf).all(), fmt
        assert np.isnan(precision.ulp(float("nan"), fmt)), fmt
    assert precision.ulp(1.0, "half") == 2.0 ** -10  # the next half after 1 is 1 + 2^-10
