"""Issue 17 part A: the study's probabilistic bounds, conditioning sweep, percentiles and the
hardware's long-vector patterns."""

import csv
import math
import re

import ml_dtypes
import numpy as np
import pytest

import ascjax
from ascjax import precision
from ascjax._src.cli import main
from ascjax._src.study import study as study_module

U_HALF = 2.0 ** -11


def _bits(a):
    a = np.asarray(a)
    return a.view(f"uint{a.dtype.itemsize * 8}")


# --- the bound formulas ---

def test_gamma_tilde_by_hand():
    # k = 4, u = 2^-11, lambda = 2: exponent 2 * 2 * 2^-11 + 4 * 2^-22 / (1 - 2^-11)
    # = 2^-9 + 2^-20 * 2048/2047, worked out by hand.
    expo = 2.0 ** -9 + 2.0 ** -20 * 2048 / 2047
    assert precision.gamma_tilde(4, U_HALF, 2.0) == pytest.approx(math.exp(expo) - 1, rel=1e-14)
    assert precision.gamma_tilde(0, U_HALF, 5.0) == 0.0
    # ~ lambda sqrt(k) u for small k u
    assert precision.gamma_tilde(10**4, 2.0 ** -24, 3.0) == pytest.approx(3 * 100 * 2.0 ** -24,
                                                                          rel=1e-4)


def test_lambda_and_failure_probability_invert_each_other():
    lam = precision.higham_mary_lambda(16, U_HALF, 1e-3)
    # sqrt(2 ln(32 / 1e-3)) / (1 - u): ln 32000 = 10.3734 -> 4.5549 / (1 - 2^-11)
    assert lam == pytest.approx(math.sqrt(2 * math.log(32000)) / (1 - U_HALF), rel=1e-14)
    assert lam == pytest.approx(4.557, abs=1e-3)
    assert precision.higham_mary_failure(16, U_HALF, lam) == pytest.approx(1e-3, rel=1e-9)
    assert precision.higham_mary_failure(16, U_HALF, 1.0) == 1.0  # lambda 1 says nothing
    with pytest.raises(ValueError, match=re.escape("failure=0.0 is outside the valid range")):
        precision.higham_mary_lambda(16, U_HALF, 0.0)


def test_probabilistic_bound_is_finite_where_higham_is_inf():
    # Sequential half from n = 2049 on: k u >= 1.
    assert precision.higham_gamma("sequential", 4096, "half") == math.inf
    g = precision.higham_mary_gamma("sequential", 4096, "half")
    lam = precision.higham_mary_lambda(4096, U_HALF)
    by_hand = math.expm1(lam * math.sqrt(4095) * U_HALF + 4095 * U_HALF ** 2 / (1 - U_HALF))
    assert g == pytest.approx(by_hand, rel=1e-14) and 0.1 < g < 0.3
    # Trees use their own depth: ceil(log2 4096) = 12.
    tree = precision.higham_mary_gamma("adjacent_tree", 4096, "half")
    assert tree == pytest.approx(math.expm1(lam * math.sqrt(12) * U_HALF
                                            + 12 * U_HALF ** 2 / (1 - U_HALF)), rel=1e-14)
    assert precision.higham_mary_gamma("kahan", 4096, "half") == 2 * U_HALF


def test_probabilistic_bound_per_trial():
    x = precision.make_inputs("uniform(-1, 1)", 300, 4, "half", seed=2)
    xs = np.abs(x.astype(np.float64)).sum(-1)
    got = precision.probabilistic_bound(x, order="sequential")
    np.testing.assert_allclose(got, precision.higham_mary_gamma("sequential", 300, "half") * xs,
                               rtol=1e-15)
    exact = precision.exact_sum_float64(x)
    pw = precision.probabilistic_bound(x, order="numpy_pairwise", exact_value=exact)
    u32 = 2.0 ** -24
    g32 = precision.gamma_tilde(precision.tree_depth("numpy_pairwise", 300, "half"), u32,
                                precision.higham_mary_lambda(300, u32))
    np.testing.assert_allclose(pw, U_HALF * np.abs(exact) + (1 + U_HALF) * g32 * xs, rtol=1e-15)


# --- kappa workloads ---

@pytest.mark.parametrize("fmt, kappas", [("half", (10, 1e3, 1e5)),
                                         ("bfloat16_t", (10, 1e3, 1e6)),
                                         ("float", (10, 1e4, 1e8))])
def test_kappa_workloads_hit_their_kappa(fmt, kappas):
    for kappa in kappas:
        x = precision.make_inputs(f"kappa({kappa:g})", 1024, 8, fmt, seed=5)
        measured = (np.abs(x.astype(np.float64)).sum(-1)
                    / np.abs(precision.exact_sum_float64(x)))
        assert np.all((measured > kappa / 2) & (measured < kappa * 2)), (kappa, measured)
    assert np.all(np.abs(precision.make_inputs("kappa(1)", 64, 2, fmt)) ==
                  precision.make_inputs("kappa(1)", 64, 2, fmt))  # K = 1: one sign
    with pytest.raises(ValueError, match="finite K >= 1"):
        precision.make_inputs("kappa(0.5)", 8, 1, fmt)


# --- the long-vector patterns ---

def test_whole_reduce_chain_is_whole_reduce_sum_level_by_level():
    """The chain against the registry's WholeReduceSum, called as a kernel would: full
    repeats with mask 128, then the repeat sums with a mask of their count."""
    n = 3 * 128 + 5
    x = precision.make_inputs("normal", n, 1, "half", seed=4)[0]
    got = precision.order_sum(x[None], "whole_reduce_chain", "half")[0]
    src = np.zeros(512, np.float16)
    src[:n] = x
    level = np.asarray(ascjax.whole_reduce_sum(np.zeros(4, np.float16), src, 128, 4, 1, 1, 8))
    last = np.zeros(128, np.float16)
    last[:4] = level
    want = np.asarray(ascjax.whole_reduce_sum(np.zeros(1, np.float16), last, 4, 1, 1, 1, 8))[0]
    assert _bits(got) == _bits(want)
    # depth: ceil(log2 128) + ceil(log2 4) by hand; 2^20 halves: 7 + 7 + 6 levels.
    assert precision.order_depth("whole_reduce_chain", n, "half") == 9
    assert precision.order_depth("whole_reduce_chain", 1 << 20, "half") == 20


def test_float_accumulated_pattern_is_cast_reduce_sum_cast():
    """Cast half -> float (exact), ReduceSum first-n method 1 in float, Cast back (RNE)."""
    x = precision.make_inputs("uniform", 1000, 1, "half", seed=6)[0]
    got = precision.order_sum(x[None], "float_acc_repeat_sequential", "half")[0]
    f = x.astype(np.float32)
    acc, _ = ascjax.reduce_sum(np.zeros(1, np.float32), f, np.zeros(64, np.float32), 1000,
                               method=1)
    acc = np.asarray(acc)[0]
    assert _bits(got) == _bits(np.float16(acc))  # NumPy's float32 -> half cast is RNE


def test_long_vector_study_runs_small():
    study = precision.run_long_vectors(sizes=[1024, 4096], distributions=["uniform"], trials=2)
    assert study.formats == ("half",) and study.orders == precision.LONG_ORDERS
    rows = {(r["n"], r["order"]): r for r in study.rows}
    for order in precision.LONG_ORDERS:
        assert rows[4096, order]["over_prob_bound"] == 0 or order == "sequential"
    assert rows[4096, "whole_reduce_chain"]["depth"] == 7 + 5
    assert math.isinf(rows[4096, "sequential"]["bound_over_sum_abs"])
    assert math.isfinite(rows[4096, "sequential"]["prob_bound_over_sum_abs"])


# --- the study's report ---

@pytest.fixture(scope="module")
def small_study():
    return precision.run_study(formats=["half"], sizes=[16, 4096], trials=4,
                               distributions=["uniform", "ones", "normal"],
                               kappas=(10.0, 1e3), kappa_n=256)


def test_study_rows_hold_percentiles_and_both_bounds(small_study):
    r = next(r for r in small_study.rows if (r["distribution"], r["n"], r["order"])
             == ("uniform", 4096, "adjacent_tree"))
    assert r["p50_rel_err"] <= r["p90_rel_err"] <= r["p99_rel_err"] <= r["max_rel_err"]
    assert r["depth"] == 12 and r["failure"] == precision.DEFAULT_FAILURE
    assert r["prob_bound_over_sum_abs"] == precision.higham_mary_gamma("adjacent_tree", 4096,
                                                                       "half")
    assert r["median_kappa"] == 1.0  # uniform [0, 1): one sign
    ones = next(r for r in small_study.rows if (r["distribution"], r["n"], r["order"])
                == ("ones", 4096, "sequential"))
    # 4096 ones sum to 2048 in half: error 1/2 of sum|x|, above gamma~ (about 0.19).
    assert ones["over_prob_bound"] == 4 and not ones["random_model"]
    cond = small_study.conditioning
    assert cond.sizes == (256,) and cond.distributions == ("kappa(1e+01)", "kappa(1e+03)")
    assert all(r["sweep"] == "kappa" for r in cond.rows)


def test_findings_name_every_order_and_flag_the_model(small_study):
    lines = precision.findings(small_study)
    for order in small_study.orders:
        line = next(line for line in lines if line.startswith(f"- half, `{order}`"))
        if order == "kahan":  # 2u is the first-order term of its bound, no bound
            assert "above the first-order term 2u" in line and "none is flagged" in line
        else:
            assert "above the probabilistic bound:" in line and "deterministic bound:" in line
    seq = next(line for line in lines if line.startswith("- half, `sequential`"))
    assert "ones, n = 4096: 4 - not covered by the model" in seq
    # gamma_4095 is inf in half (k u >= 1); gamma~ about 0.19 < 1 still says something.
    assert "From n = 4096 on the deterministic bound is vacuous" in seq
    assert "inf once k u >= 1); the probabilistic one still says something: 1.9e-01" in seq
    assert any("relative error against kappa (n = 256)" in line for line in lines)
    text = precision.markdown(small_study)
    assert "Theorem 2.4" in text and "SIAM J. Sci. Comput. 41(5)" in text
    assert "## half: relative error vs kappa (n = 256)" in text


def test_csv_columns_and_plots(small_study, tmp_path):
    paths = precision.write_study(small_study, tmp_path)
    names = sorted(p.name for p in paths)
    assert names == ["error_distribution_half.png", "error_vs_kappa_half.png",
                     "error_vs_n_half.png", "study.csv", "study.md", "study_trials.csv"]
    with (tmp_path / "study.csv").open() as f:
        rows = list(csv.DictReader(f))
    for column in ("p50_rel_err", "p90_rel_err", "p99_rel_err", "max_rel_err",
                   "bound_over_sum_abs", "prob_bound_over_sum_abs", "lambda", "failure",
                   "over_bound", "over_prob_bound", "median_kappa", "depth", "sweep"):
        assert column in rows[0], column
    assert {r["sweep"] for r in rows} == {"n", "kappa"}
    with (tmp_path / "study_trials.csv").open() as f:
        trials = list(csv.DictReader(f))
    assert set(trials[0]) == {"sweep", "format", "distribution", "n", "order", "trial", "kappa",
                              "rel_err", "err_over_sum_abs", "overflow"}
    # 3 distributions x 2 sizes + 2 kappas, 7 orders, 4 trials
    assert len(trials) == (3 * 2 + 2) * 7 * 4


def test_study_command_new_options(tmp_path, capsys, monkeypatch):
    base = ["study", "--out", str(tmp_path), "--formats", "half", "--sizes", "16",
            "--distributions", "uniform", "--orders", "sequential,whole_reduce_chain",
            "--trials", "2", "--no-progress"]
    assert main([*base, "--kappas", "none"]) == 0
    assert not (tmp_path / "error_vs_kappa_half.png").exists()
    with pytest.raises(SystemExit):
        main([*base, "--kappas", "0.5"])
    assert "argument --kappas: 0.5 is outside the valid range [1, inf)" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main([*base, "--failure-probability", "2"])
    assert ("argument --failure-probability: 2 is outside the valid range (0, 1)"
            in capsys.readouterr().err)
    calls = []
    real = precision.run_long_vectors

    def small(**kw):  # 2 trials of 1024: test_long_vector_study_runs_small's programs serve
        calls.append(kw)
        return real(sizes=[1024], trials=2, distributions=["uniform"], seed=kw["seed"])

    monkeypatch.setattr(precision, "run_long_vectors", small)
    assert main([*base, "--kappas", "10", "--kappa-n", "64", "--long-vectors"]) == 0
    assert calls and (tmp_path / "long_vectors.md").exists()
    assert (tmp_path / "long_vectors_error_vs_n_half.png").exists()
    assert "Long vectors in half" in (tmp_path / "long_vectors.md").read_text()
    assert (tmp_path / "error_vs_kappa_half.png").exists()


# --- overflow, vacuous bounds, the formats the study sums, values in their own format ---

E4M3 = "fp8_e4m3fn_t"


def _e4m3_chain(x, kahan=False):
    """The sequential or Kahan sum of ``x`` in ml_dtypes' float8_e4m3fn arithmetic (each op the
    exact float32 result rounded once, overflow to NaN): a reference apart from ascjax."""
    t = ml_dtypes.float8_e4m3fn
    s, e = t(x[0]), t(0)
    for v in x[1:]:
        if kahan:
            y = t(v) - e
            s, e = s + y, ((s + y) - s) - y
        else:
            s = s + t(v)
    return float(s)


def _fixed_inputs(monkeypatch, values):
    """Make every cell of a study sum ``values`` (trials, n), rounded to the cell's format."""
    from ascjax._src.study import study as study_module

    monkeypatch.setattr(study_module, "make_inputs", lambda dist, n, trials, fmt, seed=0:
                        precision.to_format(np.array(values, np.float64), fmt))


@pytest.fixture(scope="module")
def e4m3_ones():
    return precision.run_study(formats=[E4M3], sizes=[16, 1000], distributions=["ones"],
                               trials=2, kappas=(), orders=["sequential", "adjacent_tree", "kahan"])


def test_e4m3_overflow_is_named_nan_and_neither_ranked_nor_bounded(e4m3_ones, tmp_path):
    """1000 ones: the exact sum is past e4m3fn's largest finite value 448 = 1.75 x 2^8, and the
    format has no inf (ml_dtypes rounds 1000 to NaN). The stagnating sums stay finite."""
    assert ml_dtypes.finfo(ml_dtypes.float8_e4m3fn).max == 448
    assert np.isnan(np.float32(1000).astype(ml_dtypes.float8_e4m3fn))
    seq, kahan = _e4m3_chain(np.ones(1000)), _e4m3_chain(np.ones(1000), kahan=True)
    assert seq == 16  # 16 + 1 = 17 ties 16 and 18 (spacing 2): to even, 16 forever
    assert math.isfinite(kahan)
    rows = {r["order"]: r for r in e4m3_ones.rows if r["n"] == 1000}
    for order, returned in (("sequential", "16"), ("adjacent_tree", "NaN"),
                            ("kahan", f"{kahan:g}")):
        r = rows[order]
        assert (r["overflow_trials"], r["checked_trials"]) == (2, 0), order
        assert (r["over_bound"], r["over_prob_bound"], r["within_bound"]) == (0, 0, True)
        assert r["overflow_results"] == returned
        assert math.isnan(r["max_err_over_sum_abs"]) and math.isnan(r["correctly_rounded"])
    text = "\n".join(precision.findings(e4m3_ones))
    assert ("- **fp8_e4m3fn_t, ones, n = 1000: overflow.** adjacent_tree returned NaN; "
            f"sequential returned 16; kahan returned {kahan:g}. In 2 of 2 trials (mean exact "
            "sum 1000) the exact sum is beyond fp8_e4m3fn_t's largest finite value 448, so its "
            "correctly rounded value is NaN (fp8_e4m3fn_t has no inf)") in text
    assert "returned inf" not in text
    assert "most accurate" not in text and "bound exceeded" not in text
    md = precision.markdown(e4m3_ones)
    assert "| ones | 1000 | overflow (returned 16) | overflow (returned NaN) |" in md
    precision.write_study(e4m3_ones, tmp_path)
    with (tmp_path / "study.csv").open() as f:
        table = list(csv.reader(f))
    assert {len(row) for row in table} == {len(table[0])}
    csv_rows = {(r["n"], r["order"]): r for r in (dict(zip(table[0], row, strict=True))
                                                   for row in table[1:])}
    assert csv_rows["1000", "sequential"]["overflow_results"] == "16"
    assert csv_rows["1000", "sequential"]["max_err_over_sum_abs"] == "nan"
    assert csv_rows["16", "sequential"]["overflow_trials"] == "0"
    with (tmp_path / "study_trials.csv").open() as f:
        trials = list(csv.DictReader(f))
    assert {t["overflow"] for t in trials if t["n"] == "1000"} == {"True"}
    assert {t["overflow"] for t in trials if t["n"] == "16"} == {"False"}


def test_overflow_value_follows_the_format_table():
    """What each summable format gives past its range, as NumPy / ml_dtypes round 2 x max."""
    from ascjax._src.study.study import overflow_value

    for name in precision.SUM_FORMATS:
        with np.errstate(over="ignore"):
            big = np.float64(2 * ascjax.finfo(name).max).astype(np.float32)
            got = big.astype(ascjax.resolve_format(name).storage_dtype).astype(np.float64)
        assert overflow_value(name) == ("NaN" if np.isnan(got) else "inf"), name
    assert overflow_value(E4M3) == "NaN" and overflow_value("half") == "inf"


def test_a_trial_whose_exact_sum_overflows_is_left_out_of_its_cell(monkeypatch):
    # e4m3fn values (208 = 2^7 x 13/8, 40 = 2^5 x 10/8): 208 + 208 + 64 = 480 is past 464
    # (halfway from 448 to 480, no e4m3fn value): NaN. 208 + 208 + 40 = 456 rounds to 448,
    # in range; sequentially 416 + 40 = 456 -> 448 too: error |448 - 456| = 8.
    _fixed_inputs(monkeypatch, [[208, 208, 64], [208, 208, 40]])
    study = precision.run_study(formats=[E4M3], sizes=[3], distributions=["ones"], trials=2,
                                kappas=(), orders=["sequential"])
    (r,) = study.rows
    assert (r["overflow_trials"], r["checked_trials"], r["overflow_results"]) == (1, 1, "NaN")
    assert r["max_abs_err"] == 8 and r["correctly_rounded"] == 1.0
    assert [t["overflow"] for t in study.trial_rows] == [True, False]
    assert "[1 of 2 overflow]" in precision.markdown(study)
    assert "In 1 of 2 trials" in "\n".join(precision.findings(study))


def test_a_partial_sum_overflow_is_an_infinite_error_not_a_bound_failure(monkeypatch):
    # Half: 60000 + 60000 = 120000 > 65520 -> inf, and inf - 60000 = inf, though the exact sum
    # (0) is in range.
    _fixed_inputs(monkeypatch, [[60000, 60000, -60000, -60000], [1, 2, 3, 4]])
    study = precision.run_study(formats=["half"], sizes=[4], distributions=["ones"], trials=2,
                                kappas=(), orders=["sequential"])
    (r,) = study.rows
    assert (r["overflow_trials"], r["checked_trials"], r["over_bound"]) == (0, 1, 0)
    assert math.isinf(r["max_err_over_sum_abs"])
    text = "\n".join(precision.findings(study))
    assert ("- **half, ones, n = 4: sequential overflowed in a partial sum** in 1 of the 2 "
            "trials whose exact sum is in range") in text
    assert ": overflow.**" not in text  # no exact sum overflowed


def test_a_bound_of_sum_abs_or_more_is_called_vacuous(e4m3_ones):
    u = 2.0 ** -4  # e4m3fn: 3 mantissa bits
    # sequential, n = 16, k = 15: gamma_15 = (15/16) / (1 - 15/16) = 15 sum|x|
    rows = {(r["order"], r["n"]): r for r in e4m3_ones.rows}
    assert rows["sequential", 16]["bound_over_sum_abs"] == 15
    lam = math.sqrt(2 * math.log(2 * 16 / 1e-3)) / (1 - u)
    assert math.exp(lam * math.sqrt(15) * u + 15 * u * u / (1 - u)) - 1 > 1  # about 2.45
    seq = next(line for line in precision.findings(e4m3_ones)
               if line.startswith("- fp8_e4m3fn_t, `sequential`"))
    assert ("From n = 16 on the deterministic bound is vacuous (>= 1 x sum|x|: it allows an "
            "error as large as sum|x| itself; inf once k u >= 1); the probabilistic one is "
            "vacuous too from n = 16 on") in seq
    assert "speaks" not in seq and "still says something" not in seq


def test_a_finite_deterministic_bound_above_one_is_vacuous():
    # half, sequential, n = 1500: k u = 1499 / 2048, gamma = 1499 / 549 (finite, > 1); gamma~
    # with lambda = sqrt(2 ln(3000 / 1e-3)) / (1 - 2^-11) is about 0.11 (< 1).
    lam = math.sqrt(2 * math.log(2 * 1500 / 1e-3)) / (1 - U_HALF)
    prob = math.exp(lam * math.sqrt(1499) * U_HALF + 1499 * U_HALF ** 2 / (1 - U_HALF)) - 1
    assert prob < 1
    study = precision.run_study(formats=["half"], sizes=[1500], distributions=["uniform"],
                                trials=1, kappas=(), orders=["sequential"])
    assert study.rows[0]["bound_over_sum_abs"] == pytest.approx(1499 / 549, rel=1e-12)
    seq = next(line for line in precision.findings(study) if "`sequential`" in line)
    assert ("From n = 1500 on the deterministic bound is vacuous (>= 1 x sum|x|: it allows an "
            "error as large as sum|x| itself); the probabilistic one still says something: "
            f"{prob:.1e} of sum|x| at n = 1500") in seq


def test_study_formats_help_and_errors_list_exactly_the_summable_formats(tmp_path, capsys):
    with pytest.raises(SystemExit):
        main(["study", "--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    assert f"--formats FORMATS comma-separated formats, from {', '.join(precision.SUM_FORMATS)} " \
           "(the ones a sum is emulated in; default half,bfloat16_t,float)" in help_text
    valid = str(list(precision.SUM_FORMATS))
    for bad, message in (("foo", "unknown format 'foo'"),
                         ("hifloat8_t", "'hifloat8_t' cannot be summed here")):
        with pytest.raises(SystemExit) as done:
            main(["study", "--out", str(tmp_path), "--formats", f"half,{bad}", "--no-progress"])
        err = capsys.readouterr().err
        assert done.value.code == 2
        assert f"argument --formats: {message}; valid: {valid}" in err, err
        with pytest.raises(ValueError if "summed" in message else TypeError,
                           match=f"study: formats: {re.escape(message)}; valid:"):
            precision.check_study(formats=["half", bad], sizes=[16], distributions=["ones"],
                                  trials=1, orders=["sequential"])
        assert "int8_t" not in err and "fp4x2" not in err
    # The list is the one the sums check: a format outside it is refused there too.
    with pytest.raises(TypeError, match="not supported"):
        precision.sum(np.zeros((1, 2), np.uint8), dtype="hifloat8_t")


@pytest.mark.parametrize("fmt, value, text", [
    ("float", np.float32(0.1), "0.1"),  # float64's repr: 0.10000000149011612
    ("float", np.float32(1) / np.float32(3), "0.33333334"),
    ("float", np.finfo(np.float32).max, "3.4028235e+38"),
    ("half", np.float16(1) / np.float16(3), "0.3333"),
    ("bfloat16_t", 0.1, "0.1"),  # 0.10009765625, the nearest bfloat16
    (E4M3, 256, "256"), (E4M3, 16, "16"), (E4M3, np.nan, "NaN"), ("fp8_e5m2_t", -np.inf, "-inf"),
])
def test_value_text_is_the_shortest_decimal_of_the_format(fmt, value, text):
    from ascjax._src.study.study import value_text

    assert value_text([value], fmt) == [text]


def test_float_values_read_as_float32_in_the_report():
    # uniform on [1e38, 2e38): 4 of them sum past float's largest value, 3.4028235e+38
    # (NumPy's shortest float32 repr; float64 would print 3.4028234663852886e+38).
    assert str(np.finfo(np.float32).max) == "3.4028235e+38"
    study = precision.run_study(formats=["float"], sizes=[4], distributions=["uniform(1e38,2e38)"],
                                trials=1, kappas=(), orders=["sequential"])
    text = precision.markdown(study)
    assert "float's largest finite value 3.4028235e+38, so its correctly rounded value is inf" \
        in text
    assert "3.4028234663852886e+38" not in text
    assert "sequential returned inf" in text


# --- a new user's trial: bad arguments, every study order, np.sum's orders, plots ---

U = U_HALF


@pytest.mark.parametrize("call, error, message", [
    (lambda: precision.higham_gamma("sequential", 0, "half"), ValueError,
     "higham_gamma: n=0 is outside the valid range [1, "),
    (lambda: precision.higham_gamma("sequential", -3, "half"), ValueError,
     "higham_gamma: n=-3 is outside the valid range [1, "),
    (lambda: precision.higham_gamma("sequential", 2.5, "half"), TypeError,
     "higham_gamma: n must be a Python int"),
    (lambda: precision.higham_gamma("sequential", 10, "hifloat8_t"), TypeError,
     "higham_gamma: dtype hifloat8_t is not supported"),
    (lambda: precision.higham_gamma("bogus", 10, "half"), ValueError,
     "higham_gamma: unknown order 'bogus'; valid: ['sequential', "),
    (lambda: precision.tree_depth("adjacent_tree", 0), ValueError,
     "tree_depth: n=0 is outside the valid range [1, "),
    (lambda: precision.tree_depth("adjacent_tree", -1), ValueError,
     "tree_depth: n=-1 is outside the valid range [1, "),
    (lambda: precision.tree_depth("kahan", 8), ValueError,
     "tree_depth: kahan is not a summation tree"),
    (lambda: precision.order_tree("sequential", 0), ValueError,
     "order_tree: n=0 is outside the valid range [1, "),
    (lambda: precision.higham_mary_gamma("sequential", 0, "half"), ValueError,
     "higham_mary_gamma: n=0 is outside the valid range [1, "),
    (lambda: precision.higham_mary_gamma("sequential", 8, "half", failure=1.0), ValueError,
     "higham_mary_gamma: failure=1.0 is outside the valid range (0, 1)"),
    (lambda: precision.higham_mary_lambda(0, U), ValueError,
     "higham_mary_lambda: n=0 is outside the valid range [1, "),
    (lambda: precision.higham_mary_lambda(10, -1), ValueError,
     "higham_mary_lambda: u=-1 is outside the valid range (0, 1)"),
    (lambda: precision.higham_mary_lambda(10, U, 0.0), ValueError,
     "higham_mary_lambda: failure=0.0 is outside the valid range (0, 1)"),
    (lambda: precision.higham_mary_failure(10, U, 0.0), ValueError,
     "higham_mary_failure: lam=0.0 is outside the valid range (0, inf)"),
    (lambda: precision.higham_mary_failure(0, U, 3.0), ValueError,
     "higham_mary_failure: n=0 is outside the valid range [1, "),
    (lambda: precision.gamma(-1, U), ValueError,
     "gamma: k=-1 is outside the valid range [0, "),
    (lambda: precision.gamma(np.array([1, -2]), U), ValueError,
     "gamma: k=-2 is outside the valid range [0, "),
    (lambda: precision.gamma(2.5, U), TypeError, "gamma: k (adds on a path) must be an int"),
    (lambda: precision.gamma(2, 1.0), ValueError, "gamma: u=1.0 is outside the valid range (0, 1)"),
    (lambda: precision.gamma_tilde(10, U, -1.0), ValueError,
     "gamma_tilde: lam=-1.0 is outside the valid range (0, inf)"),
    (lambda: precision.gamma_tilde(10, 0.0, 2.0), ValueError,
     "gamma_tilde: u=0.0 is outside the valid range (0, 1)"),
    (lambda: precision.probabilistic_bound(np.ones((1, 4), np.float16), order="sequential",
                                           failure=0), ValueError,
     "probabilistic_bound: failure=0 is outside the valid range (0, 1)"),
    (lambda: precision.error_bound(np.ones((1, 4), np.float16), order="bogus"), ValueError,
     "error_bound: unknown order 'bogus'"),
    (lambda: precision.order_depth("sequential", 0, "half"), ValueError,
     "order_depth: n=0 is outside the valid range [1, "),
    (lambda: precision.order_gammas("sequential", 16, "half", 1.5), ValueError,
     "order_gammas: failure=1.5 is outside the valid range (0, 1)"),
])
def test_bound_helpers_refuse_arguments_outside_their_range(call, error, message):
    """They returned -0.000488 (n = 0), a depth of 1 for n = 0, nan, lambda 3.9 for n = 0,
    accepted u < 0 and lambda < 0, or raised an AttributeError of n = 2.5."""
    with pytest.raises(error, match=re.escape(message)):
        call()


@pytest.mark.parametrize("order", precision.STUDY_ORDERS)
def test_bound_helpers_take_every_order_the_study_takes(order):
    """higham_gamma refused whole_reduce_chain and float_acc_repeat_sequential, which
    order_gammas and `ascjax study --orders` take: one list now, STUDY_ORDERS."""
    n, x = 300, np.ones((2, 300), np.float16)
    det = precision.higham_gamma(order, n, "half")
    prob = precision.higham_mary_gamma(order, n, "half")
    assert precision.order_gammas(order, n, "half")[:2] == (det, prob)
    np.testing.assert_allclose(precision.error_bound(x, order=order), det * 300, rtol=1e-12)
    np.testing.assert_allclose(precision.probabilistic_bound(x, order=order), prob * 300,
                               rtol=1e-12)
    tree = precision.order_tree(order, n, "half")
    if order == "kahan":
        assert tree is None and det == prob == 2 * U
        return
    k = precision.tree_depth(order, n, "half")
    assert k == precision.order_depth(order, n, "half")
    from ascjax._src.study import orders as orders_module
    assert k == orders_module.tree_depth(tree), order  # the closed form is the tree's
    u = 2.0 ** -24 if order in ("numpy_pairwise", "float_acc_repeat_sequential") else U
    final = U if u != U else 0.0  # one more rounding, float32 to half
    assert det == pytest.approx(final + (1 + final) * float(precision.gamma(k, u)), rel=1e-15)


def test_pattern_trees_are_what_the_patterns_add():
    """order_tree of the two patterns is the tree reveal_order finds in their sums."""
    for order, n in (("whole_reduce_chain", 300), ("float_acc_repeat_sequential", 150)):
        got = precision.reveal_order(lambda x, o=order: precision.order_sum(x, o, "half"), n,
                                     dtype="half")
        assert got == precision.order_tree(order, n, "half"), order
    assert precision.tree_depth("whole_reduce_chain", 300, "half") == 7 + 2


def test_np_sum_of_bfloat16_is_sequential_not_numpy_pairwise():
    """The numpy_pairwise description said "np.sum ... in float32": for ml_dtypes bfloat16,
    np.sum adds in order in bfloat16; float16's np.sum is numpy_pairwise."""
    rng = np.random.default_rng(5)
    x = rng.uniform(0, 1, (50, 300))
    bf = x.astype(ml_dtypes.bfloat16)
    golden = np.array([np.sum(row) for row in bf])
    seq = np.asarray(precision.sum(bf, order="sequential"))
    pairwise = np.asarray(precision.sum(bf, order="numpy_pairwise"))
    assert np.array_equal(_bits(seq), _bits(golden))
    assert not np.array_equal(_bits(pairwise), _bits(golden))
    half = x.astype(np.float16)
    assert np.array_equal(_bits(precision.sum(half, order="numpy_pairwise")),
                          _bits(np.sum(half, axis=-1)))
    described = " ".join(precision.ORDER_DESCRIPTIONS["numpy_pairwise"].split())
    assert "np.sum of an ml_dtypes bfloat16 array is not this" in described
    assert "(`sequential`)" in described and not described.startswith("np.sum")
    doc = " ".join(precision.sum.__doc__.split())
    assert "``np.sum`` of an ml_dtypes bfloat16 array is not" in doc


def test_make_inputs_refuses_bad_n_trials_and_seed():
    """n = -1 gave NumPy's bare "expected non-negative integer"; trials = 0 an empty array."""
    for kwargs, message in (({"n": -1}, "make_inputs: n=-1 is outside the valid range [1, "),
                            ({"n": 0}, "make_inputs: n=0 is outside the valid range [1, "),
                            ({"trials": 0}, "make_inputs: trials=0 is outside the valid range"),
                            ({"seed": -1}, "make_inputs: seed=-1 is outside the valid range [0,")):
        args = {"n": 4, "trials": 2, **kwargs}
        seed = args.pop("seed", 0)
        with pytest.raises(ValueError, match=re.escape(message)):
            precision.make_inputs("uniform", args["n"], args["trials"], "half", seed=seed)
    with pytest.raises(TypeError, match="make_inputs: n must be a Python int"):
        precision.make_inputs("uniform", 4.0, 2, "half")


@pytest.mark.parametrize("arg, values, message", [
    ("sizes", [16, 32, 16], "study: sizes: 16 is given more than once in [16, 32, 16]"),
    ("formats", ["half", "float16"], ("study: formats: 'float16' is given more than once "
                                     "(as 'half')")),
    ("distributions", ["ones", "ones"], "study: distributions: 'ones' is given more than once"),
    ("orders", ["kahan", "sequential", "kahan"], "study: orders: 'kahan' is given more than once"),
    ("kappas", [1e3, 1000], "study: kappas: 1000 is given more than once"),
])
def test_study_refuses_a_value_given_twice(arg, values, message):
    """--sizes 16,16 wrote every row twice."""
    settings = {"formats": ["half"], "sizes": [16], "distributions": ["uniform"], "trials": 1,
                "orders": ["sequential"], "kappas": ()}
    with pytest.raises(ValueError, match=re.escape(message)):
        precision.check_study(**{**settings, arg: values})
    with pytest.raises(ValueError, match=re.escape(message)):
        precision.run_study(**{**settings, arg: values})


def test_study_memory_error_names_the_python_and_cli_arguments(monkeypatch):
    """It said "lower --sizes or --trials" to a Python caller, who passes sizes= / trials=."""
    from ascjax._src.study import study as study_module

    monkeypatch.setattr(study_module, "available_memory", lambda: 1 << 30)
    # 16 trials x 2 distributions x 2^20 x 128 bytes = 2^32 bytes = 4 GiB
    settings = {"formats": ["half"], "sizes": [1 << 20], "distributions": ["uniform", "normal"],
                "trials": 16, "orders": ["sequential"], "kappas": ()}
    message = ("study: n=1048576 needs about 4.0 GiB (16 trials x 2 distributions x n x ~128 "
               "bytes), more than the 1.0 GiB this machine has available; lower sizes or "
               "trials (--sizes / --trials)")
    with pytest.raises(MemoryError, match=re.escape(message)):
        precision.check_study(**settings)
    with pytest.raises(MemoryError, match=re.escape(message)):
        precision.run_study(**settings)


def test_kappa_workload_names_keep_their_kappa():
    """kappa_name rounded K to one digit: --kappas 1500 measured K = 2000."""
    from ascjax._src.study.study import kappa_name

    assert kappa_name(1e3) == "kappa(1e+03)" and kappa_name(1500) == "kappa(1.5e+03)"
    x = precision.make_inputs(kappa_name(1500), 256, 4, "float", seed=2)
    kappa = np.abs(x.astype(np.float64)).sum(axis=1) / np.abs(precision.exact_sum_float64(x))
    assert np.all(np.abs(kappa / 1500 - 1) < 0.01), kappa


@pytest.mark.parametrize("args, message", [
    (["--seed", "-1"], "argument --seed: -1 is outside the valid range [0, 18446744073709551615]"),
    (["--seed", "x"], "argument --seed: 'x' is not an integer; valid: an integer in [0, "),
    (["--sizes", "abc"], ("argument --sizes: 'abc' is not an integer; valid: an integer in "
                         "[1, 2147483648]")),
    (["--sizes", "16,0"], "argument --sizes: 0 is outside the valid range [1, 2147483648]"),
    (["--sizes", ","], "argument --sizes: no value in ','; give at least one"),
    (["--formats", "fp16"], "argument --formats: unknown format 'fp16'; valid: ['half', "),
    (["--kappa-n", "2"], "argument --kappa-n: 2 is outside the valid range [3, 2147483648]"),
    (["--failure-probability", "0"], ("argument --failure-probability: 0 is outside the valid "
                                     "range (0, 1)")),
    (["--sizes", "16,16"], "argument --sizes: 16 is given more than once in [16, 16]"),
    (["--formats", "half,float16"], ("argument --formats: 'float16' is given more than once "
                                    "(as 'half') in ['half', 'float16']")),
    (["--distributions", "ones,uniform(0,1),ones"], ("argument --distributions: 'ones' is given "
                                                    "more than once")),
    (["--orders", "kahan,kahan"], "argument --orders: 'kahan' is given more than once"),
    (["--kappas", "10,1e1"], "argument --kappas: 10.0 is given more than once"),
])
def test_study_option_errors_name_the_option_value_and_range(tmp_path, capsys, args, message):
    """`--seed -1` said "ascjax study: expected non-negative integer", `--sizes abc` "invalid
    literal for int() with base 10"; --sizes 16,16 ran every cell twice."""
    with pytest.raises(SystemExit) as done:
        main(["study", "--out", str(tmp_path / "o"), *args, "--no-progress"])
    err = capsys.readouterr().err
    assert done.value.code == 2
    assert err.startswith(f"ascjax study: error: {message}"), err
    assert err.endswith("\n(see ascjax study --help)\n") and err.count("\n") == 2
    assert not (tmp_path / "o").exists()


def test_plots_of_a_format_the_study_lacks_name_its_formats(small_study):
    """plot(study, "float") raised KeyError: ('float', 'uniform', 16, 'sequential')."""
    for draw in (precision.plot, precision.plot_kappa, precision.plot_distribution):
        with pytest.raises(ValueError, match=re.escape(
                f"{draw.__name__}: the study has no 'float' rows; its formats: ['half']")):
            draw(small_study, "float")


def test_bound_lines_leave_the_panel_instead_of_levelling_off():
    """error_vs_kappa: kappa gamma_k was np.clip'ed at the panel's top, so the bounds looked
    flat from some kappa on; error_vs_n flattened an inf bound onto the overflow edge."""
    study = precision.run_study(formats=["half"], sizes=[16, 4096], distributions=["uniform"],
                                trials=2, orders=["sequential"], kappas=(10.0, 1e7), kappa_n=64)
    det, prob, _ = precision.order_gammas("sequential", 64, "half")
    ax = precision.plot_kappa(study, "half").axes[0]
    lines = {line.get_label(): line for line in ax.get_lines()}
    for label, gamma in (("kappa gamma_k", det), ("kappa gamma~_k", prob)):
        kappas, ys = lines[label].get_xdata(), lines[label].get_ydata()
        np.testing.assert_array_equal(ys, kappas * gamma)
    # kappa ~ 1e7 times gamma_63 ~ 0.03: far above the panel, which ends at the top.
    assert lines["kappa gamma_k"].get_ydata().max() > ax.get_ylim()[1]
    ax = precision.plot(study, "half").axes[0]
    rows = {r["n"]: r for r in study.rows}
    dashed = next(line for line in ax.get_lines() if line.get_linestyle() == "--")
    dotted = next(line for line in ax.get_lines() if line.get_linestyle() == ":")
    np.testing.assert_array_equal(dashed.get_ydata(),
                                  [rows[n]["bound_over_sum_abs"] for n in study.sizes])
    assert math.isinf(dashed.get_ydata()[-1])  # gamma_4095 in half: not drawn
    np.testing.assert_array_equal(dotted.get_ydata(),
                                  [rows[n]["prob_bound_over_sum_abs"] for n in study.sizes])


# --- stagnation, kahan's first-order term, degenerate kappas, ties (a numerical review) ---

def test_lost_addends_by_hand():
    # half at 2048: ULP 2, so addends below 1 are lost; 0.5 (after 2048) and 0.25 (after
    # 2050) are, 1.5 (after 2048.5) is not: 2 of the 3 addends after the first.
    x = np.array([[2048, 0.5, 1.5, 0.25], [1, 1, 1, 1]], np.float16)
    np.testing.assert_array_equal(precision.lost_addends(x, "half"), [2 / 3, 0])
    assert precision.lost_addends(np.ones((2, 1), np.float16), "half").tolist() == [0, 0]
    # 4096 ones: from 2048 on each 1 is half an ULP, a tie that rounds back to the even sum
    assert precision.lost_addends(np.ones((1, 4096), np.float16), "half") == 2048 / 4095


@pytest.fixture(scope="module")
def e5m2_study():
    return precision.run_study(formats=["fp8_e5m2_t"], sizes=[3, 16, 100], trials=4,
                               distributions=["uniform", "ones", "normal"],
                               kappas=(10.0, 1e7), kappa_n=256)


def test_stagnating_sums_are_named_and_left_out_of_the_growth_fit(e5m2_study, small_study):
    """A one-signed sequential cell where 10% or more of the addends are each below half an
    ULP of the running sum before them stagnates: its error sits at its ceiling, so it is no
    sqrt(k) growth (e5m2 sequential on uniform data was said to follow sqrt(k) u)."""
    rows = {(r["distribution"], r["n"], r["order"]): r for r in e5m2_study.rows}
    assert [rows["uniform", n, "sequential"]["stagnates"] for n in (3, 16, 100)] == \
        [False, True, True]
    assert not rows["normal", 100, "sequential"]["stagnates"]  # both signs: errors unbiased
    assert math.isnan(rows["uniform", 100, "adjacent_tree"]["lost_addends"])
    seq = next(line for line in precision.findings(e5m2_study)
               if line.startswith("- fp8_e5m2_t, `sequential`"))
    assert "stagnates on same-sign data from n = 16 on, leaving too few sizes" in seq
    assert "grows like" not in seq
    # half: 4096 uniform values lose a third of their addends; 16 of them none
    half = {(r["distribution"], r["n"]): r for r in small_study.rows
            if r["order"] == "sequential"}
    assert half["uniform", 4096]["stagnates"] and not half["uniform", 16]["stagnates"]
    assert 0.2 < half["uniform", 4096]["lost_addends"] < 0.5
    tree_vs_seq = next(line for line in precision.findings(small_study)
                       if line.startswith("- **half, uniform, n = 4096:**"))
    assert "the sequential sum stagnates: " in tree_vs_seq and "% of the addends" in tree_vs_seq
    ones = next(line for line in precision.findings(small_study)
                if line.startswith("- **half, ones, n = 4096:**"))
    assert "stagnates: 50% of the addends" in ones


def test_kahan_above_its_first_order_term_is_counted_not_flagged(e5m2_study):
    """Higham's (4.8) is (2u + O(n u^2)) sum|x|: in e5m2 at n = 100, n u^2 is 6x 2u, so
    trials above 2u are no exceeded bound (they were listed as one, and as a model violated)."""
    lines = precision.findings(e5m2_study)
    kahan = next(line for line in lines if line.startswith("- fp8_e5m2_t, `kahan`"))
    assert "above the first-order term 2u of Higham's (4.8)" in kahan
    assert "model violated" not in kahan and "probabilistic bound:" not in kahan
    assert not any("bound exceeded" in line and "kahan" in line for line in lines)
    over = [r for r in e5m2_study.rows if r["order"] == "kahan" and r["over_bound"]]
    # counted honestly in the CSV (within_bound False), flagged nowhere
    assert over and all(not r["within_bound"] and r["first_order_bound"] for r in over)
    table = precision.markdown(e5m2_study).split("## fp8_e5m2_t: error / sum|x|")[1]
    assert all(" !" not in line.split("|")[-2] and " ?" not in line.split("|")[-2]
               for line in table.splitlines() if line.startswith("| ones |"))


def test_a_kappa_workload_whose_exact_sum_is_zero_is_degenerate(e5m2_study):
    """kappa(1e7) in e5m2: its one-signed part rounds to 0, the exact sum is 0 and kappa is
    undefined; it was reported as the sweep's end, relative errors inf, 'as predicted'."""
    cond = {(r["distribution"], r["order"]): r for r in e5m2_study.conditioning.rows}
    assert cond["kappa(1e+07)", "sequential"]["zero_exact_trials"] == 4
    assert cond["kappa(1e+01)", "sequential"]["zero_exact_trials"] == 0
    lines = precision.findings(e5m2_study)
    assert any("degenerate workloads** (kappa(1e+07) in 4 of 4 trials)" in line
               for line in lines)
    kappa = next(line for line in lines if "relative error against kappa" in line)
    assert "at kappa 10 (measured median)" in kappa and " inf" not in kappa
    assert "| kappa(1e+07) | inf | degenerate (exact sum 0 in 4 of 4) |" in \
        precision.markdown(e5m2_study)


def test_most_and_least_accurate_name_every_tied_order(e5m2_study, small_study):
    for study in (e5m2_study, small_study):
        fmt, n = study.formats[0], max(study.sizes)
        for line in precision.findings(study):
            match = re.match(rf"- {fmt}, (\w+), n = {n}: most accurate (.*) \((\S+)\), "
                             r"least (.*) \((\S+)\)\.$", line)
            if not match:
                continue
            errors = {r["order"]: r["max_err_over_sum_abs"] for r in study.rows
                      if (r["distribution"], r["n"]) == (match[1], n)}
            for named, pick in ((match[2], min), (match[4], max)):
                best = pick(e for e in errors.values() if math.isfinite(e))
                tied = [o for o, e in errors.items() if e == best]
                assert named == (tied[0] if len(tied) == 1 else
                                 ", ".join(tied[:-1]) + " and " + tied[-1]), line


def test_higham_gamma_is_inf_from_2049_halves_on():
    # k = n - 1 and u = 2^-11: k u >= 1 from n = 2049 (the text said 2048)
    assert precision.higham_gamma("sequential", 2048, "half") == 2047.0
    assert precision.higham_gamma("sequential", 2049, "half") == math.inf
    assert "sequential sums of 2049 or more halves" in " ".join(study_module.COLUMNS)


def test_the_csv_holds_the_stagnation_and_first_order_columns(e5m2_study, tmp_path):
    precision.write_study(e5m2_study, tmp_path)
    with (tmp_path / "study.csv").open() as f:
        rows = list(csv.DictReader(f))
    for column in ("lost_addends", "stagnates", "first_order_bound", "zero_exact_trials"):
        assert column in rows[0] and column in " ".join(study_module.COLUMNS), column
    seq = next(r for r in rows if (r["distribution"], r["n"], r["order"], r["sweep"])
               == ("uniform", "100", "sequential", "n"))
    assert seq["stagnates"] == "True" and float(seq["lost_addends"]) > 0.5


@pytest.mark.parametrize("args, message", [
    # inputs beyond the format's range were measured as if valid (NaN / inf inputs)
    (["--formats", E4M3, "--distributions", "uniform(0,1000)"],
     f"'uniform(0,1000)' reaches 1000, beyond {E4M3}'s largest finite value 448"),
    (["--formats", "half", "--distributions", "uniform(-1e6,1e6)"],
     "'uniform(-1e6,1e6)' reaches 1e+06, beyond half's largest finite value 65504"),
    # kappa(K) at n = 2 has no cancelling pair: it measured kappa 1 as "kappa 1000"
    (["--sizes", "2,16", "--distributions", "kappa(1000)"],
     "'kappa(1000)' needs n >= 3 (a cancelling pair x, -x and a one-signed part), got n=2"),
    # a K near 1 scales the one-signed part beyond a narrow format (NaN inputs, measured)
    (["--formats", E4M3, "--sizes", "16", "--kappas", "1.0001", "--kappa-n", "256"],
     (f"kappas: 'kappa(1.0001e+00)' at n=256 scales its one-signed part up to 4.68e+04, "
      f"beyond {E4M3}'s largest finite value 448")),
    (["--kappa-n", "100", "--kappas", "none"],
     "--kappa-n sets the conditioning sweep's n, and --kappas none skips the sweep"),
    (["--out", ""], "--out is empty; name the directory"),
    # the memory estimate blamed --sizes for the sweep's --kappa-n
    (["--sizes", "16", "--kappas", "10", "--kappa-n", "2147483648"],
     "the conditioning sweep needs about 4.0 TiB (16 trials x 1 kappas x kappa_n=2147483648"),
])
def test_study_settings_a_review_found_measured_or_blamed_wrongly(tmp_path, capsys, args,
                                                                  message, monkeypatch):
    """A numerical analyst's review (stop 44): each of these ran, measured something other
    than what it said, or named the wrong option."""
    monkeypatch.setattr(study_module, "available_memory", lambda: 24 << 30)
    argv = ["study", "--out", str(tmp_path / "o"), "--no-progress", *args]
    assert main(argv) == 2
    assert message in capsys.readouterr().err


@pytest.mark.parametrize("given, again", [("kappa(10)", "kappa(1e1)"), ("uniform", "uniform(0,1)"),
                                          ("uniform(0,2)", "uniform(0, 2.0)")])
def test_one_distribution_in_two_spellings_is_refused(tmp_path, capsys, given, again):
    with pytest.raises(SystemExit):
        main(["study", "--out", str(tmp_path), "--distributions", f"{given},{again}"])
    assert "is given more than once" in capsys.readouterr().err
    with pytest.raises(ValueError, match="is given more than once"):
        precision.check_study(formats=["half"], sizes=[16], distributions=[given, again],
                              trials=1, orders=["sequential"])


@pytest.mark.parametrize("dist", ["kappa(inf)", "uniform(0,inf)", "uniform(nan,1)"])
def test_non_finite_parameters_get_the_range_message(dist):
    with pytest.raises(ValueError,
                       match=re.escape(repr(dist)) + " needs (finite a < b|a finite K)"):
        precision.make_inputs(dist, 16, 1, "half")


def test_csv_ulps_agree_with_the_markdown_and_kahan_is_counted(e5m2_study, tmp_path):
    """The Markdown said n/a for cells whose exact sums are all 0, the CSV gave ULPs of the
    least subnormal (6.6e+04); kahan's `within_bound` was True with trials above its 2u."""
    study = precision.run_study(formats=["half"], sizes=[16], trials=3,
                                distributions=["cancelling"], kappas=(),
                                orders=["sequential", "kahan"])
    rows = [r for r in study.rows if r["exact_is_zero"]]
    assert rows and all(math.isnan(r["max_ulps"]) and math.isnan(r["mean_ulps"]) for r in rows)
    assert "| n/a (" in precision.markdown(study)
    kahan = [r for r in e5m2_study.rows if r["order"] == "kahan"]
    assert all(r["within_bound"] == (r["over_bound"] == 0) for r in kahan)


def test_lambda_in_the_bounds_text_follows_the_failure_probability():
    """The text said "about 4.6 at n = 16, 6.1 at n = 65536" at any failure probability."""
    assert "(about 4.6 at n = 16, 6.1 at n = 65536)" in " ".join(study_module.bounds_text(1e-3))
    text = " ".join(study_module.bounds_text(0.05))
    want = [math.sqrt(2 * math.log(2 * n / 0.05)) for n in (16, 65536)]
    assert f"(about {want[0]:.2g} at n = 16, {want[1]:.2g} at n = 65536)" in text


def test_growth_range_names_the_sizes_fitted_and_ties_are_ties():
    """"grows like k^1.50 over n = 1..3" while n = 1 (k = 0) was not fitted; two orders with
    one error were "the sequential sum is 1.0x more accurate"."""
    study = precision.run_study(formats=["bfloat16_t"], sizes=[1, 2, 3], trials=1,
                                distributions=["uniform"], kappas=(),
                                orders=["sequential", "adjacent_tree"])
    lines = precision.findings(study)
    assert any("over n = 2..3" in line for line in lines), lines
    assert not any("over n = 1.." in line or "1.0x more accurate" in line for line in lines)
    tie = next(line for line in lines if line.startswith("- **bfloat16_t, uniform, n = 3:**"))
    by = {r["order"]: r["max_err_over_sum_abs"] for r in study.rows if r["n"] == 3}
    assert by["sequential"] == by["adjacent_tree"]  # n = 3: the two orders are one
    assert "equally accurate" in tie or "exact" in tie


def test_a_rerun_into_the_same_folder_leaves_no_stale_plots(tmp_path):
    out = tmp_path / "o"
    kw = {"sizes": [16], "trials": 1, "distributions": ["uniform"], "orders": ["sequential"]}
    precision.write_study(precision.run_study(formats=["half", "float"], kappas=(10.0,),
                                              kappa_n=16, **kw), out)
    assert (out / "error_vs_kappa_float.png").exists()
    precision.write_study(precision.run_study(formats=["half"], kappas=(), **kw), out)
    assert sorted(p.name for p in out.glob("*.png")) == [
        "error_distribution_half.png", "error_vs_n_half.png"]


def test_lost_addends_of_the_repeat_chains_by_hand():
    """ReduceSum's methods 1 and 3 add in chains too (the repeats' sums; each lane over the
    repeats): half, 128 lanes a repeat; 4096's ULP is 4, so an addend of 1 is lost, 3 is not."""
    x = np.zeros((2, 3 * 128))
    x[:, 0] = 4096
    x[0, [128, 256]], x[1, [128, 256]] = 1, 3
    assert precision.lost_addends(x, "half", "repeat_sequential").tolist() == [1.0, 0.0]
    y = np.zeros((2, 129))  # lanes 1..127 have no second addend: only lane 0's counts
    y[:, 0], y[0, 128], y[1, 128] = 4096, 1, 3
    assert precision.lost_addends(y, "half", "repeat_vector_merge").tolist() == [1.0, 0.0]
    with pytest.raises(ValueError, match="order 'adjacent_tree' adds no chain"):
        precision.lost_addends(x, "half", "adjacent_tree")


def test_a_stagnating_repeat_chain_is_not_a_violated_model():
    """The review's long vectors: 2^20 halves uniform on [0, 1/16) sum to about 32768, and
    ReduceSum's method 1 returned 16384 (each repeat's sum of about 4 lost once the chain
    reaches 16384): that was "model violated"."""
    study = precision.run_long_vectors(sizes=[1 << 20], distributions=["uniform(0,0.0625)"],
                                       trials=1, orders=["repeat_sequential"])
    (row,) = study.rows
    assert row["stagnates"] and row["lost_addends"] > 0.5 and row["over_prob_bound"] == 1
    line = next(line for line in precision.findings(study) if "`repeat_sequential`" in line)
    assert "not covered by the model, the sum stagnates" in line and "violated" not in line


# --- a numerical analyst's review: what the study reports of float32-accumulating orders and
# --- of conditioning, and where numpy_pairwise is np.sum's order

def test_kappa_brackets_scale_only_the_float32_part_of_a_one_rounding_bound():
    """numpy_pairwise in half: the bound is u |S| + (1 + u) gamma~(float32) sum|x|, so the
    relative error it allows is u + kappa (1 + u) gamma~, not kappa (u + (1 + u) gamma~): at
    kappa 1e7 the table said 4.9e3 where each trial's own bound over |S| is about 16."""
    x = precision.make_inputs("kappa(1e7)", 4096, 4, "half", seed=0)
    exact = precision.exact_sum_float64(x)
    kappa = np.abs(x.astype(np.float64)).sum(-1) / np.abs(exact)
    per_trial = np.asarray(precision.probabilistic_bound(x, order="numpy_pairwise")) / np.abs(exact)
    _, prob, _ = precision.order_gammas("numpy_pairwise", 4096, "half")
    shown = study_module.relative_bound(prob, "numpy_pairwise", "half", kappa)
    np.testing.assert_allclose(shown, per_trial, rtol=1e-9)
    assert np.all(kappa * prob > 100 * per_trial)  # what the table and the plot showed
    # orders that round every add carry no separate last rounding: kappa gamma as before
    _, seq, _ = precision.order_gammas("sequential", 4096, "half")
    assert study_module.relative_bound(seq, "sequential", "half", 1e7) == 1e7 * seq
    assert study_module.final_rounding("numpy_pairwise", "float") == 0.0


def test_conditioning_finding_says_growth_only_where_the_error_grew():
    """"it grows with kappa" was printed whatever the errors did (kappa 1 -> 2, every order's
    median fell), and the ends were the first and last --kappas given, not the least and most
    conditioned."""
    study = precision.run_study(formats=["half"], sizes=[16], distributions=["uniform"],
                                trials=8, orders=["sequential", "adjacent_tree"],
                                kappas=(1e5, 1.0), kappa_n=256)
    text = " ".join(study_module.conditioning_findings(study.conditioning))
    assert "from kappa 1 to 1e+05" in text  # ordered by measured kappa
    rows = {(r["distribution"], r["order"]): r for r in study.conditioning.rows}
    for order in ("sequential", "adjacent_tree"):  # each order's median did grow here
        assert rows["kappa(1e+05)", order]["p50_rel_err"] > 1.5 * rows["kappa(1e+00)", order][
            "p50_rel_err"]
    assert "grows with kappa (more than 1.5x) for every order" in text

    def by_key(lo, hi):
        return {("a", "s"): {"p50_rel_err": lo}, ("b", "s"): {"p50_rel_err": hi},
                ("a", "t"): {"p50_rel_err": 1.0}, ("b", "t"): {"p50_rel_err": 1.2}}

    fell = study_module._kappa_trend(by_key(2.0, 1.0), "a", "b", ["s", "t"])
    assert "for no order" in fell
    mixed = study_module._kappa_trend(by_key(1.0, 9.0), "a", "b", ["s", "t"])
    assert "for s, as kappa gamma allows; not for t" in mixed


def test_a_float32_accumulating_order_gets_no_growth_fit_in_a_narrow_format():
    """half float_acc_repeat_sequential: every result correctly rounded, yet the study fitted
    its error (the last rounding to half) against float32's depth and said it "follows the
    deterministic bound's k u"."""
    study = precision.run_study(formats=["half", "float"], sizes=[16, 256, 4096], trials=4,
                                distributions=["uniform"],
                                orders=["numpy_pairwise", "float_acc_repeat_sequential"],
                                kappas=())
    half = [line for line in study_module.order_findings(study, "half")]
    assert len(half) == 2
    for line in half:
        assert "rounds once to half" in line and "no growth with k is fitted" in line, line
        assert "grows like" not in line and "follows" not in line
    # in float the same orders are no one-rounding orders: their growth is fitted as before
    assert all("rounds once to" not in line for line in study_module.order_findings(study, "float"))


@pytest.mark.parametrize("dtype", [np.float16, np.float32])
def test_np_sum_along_a_strided_axis_is_sequential(dtype):
    """numpy_pairwise is np.sum's order along a contiguous last axis only: summed along axis 0
    (or a Fortran-ordered array's rows), NumPy adds one element at a time in the array's type."""
    x = np.random.default_rng(1).uniform(0, 1, (5000, 3)).astype(dtype)
    rows = np.ascontiguousarray(x.T)
    sequential = np.asarray(precision.sum(rows, order="sequential"))
    assert np.array_equal(_bits(np.sum(x, axis=0)), _bits(sequential))
    assert np.array_equal(_bits(np.sum(np.asfortranarray(rows), axis=-1)), _bits(sequential))
    assert np.array_equal(_bits(np.sum(rows, axis=-1)),
                          _bits(precision.sum(rows, order="numpy_pairwise")))
    assert not np.array_equal(_bits(np.sum(x, axis=0)),
                              _bits(precision.sum(rows, order="numpy_pairwise")))
    described = " ".join(precision.ORDER_DESCRIPTIONS["numpy_pairwise"].split())
    assert "along a contiguous last axis" in described
    assert "along another axis" in " ".join(precision.sum.__doc__.split())


def test_the_vacuity_sentence_sets_the_bound_against_random_data_only():
    """"probabilistic ... 1.9e-01 of sum|x| at n = 4096, against a measured 5.0e-01" quoted
    the all-ones cell, which the probabilistic model does not cover."""
    def row(dist, err):
        return {"n": 4096, "bound_over_sum_abs": math.inf, "prob_bound_over_sum_abs": 0.19,
                "max_err_over_sum_abs": err, "random_model": dist != "ones"}

    text = study_module._vacuity([row("uniform", 0.02), row("ones", 0.5)])
    assert "against a measured 2.0e-02 on random data" in text and "5.0e-01" not in text
    assert "against a measured" not in study_module._vacuity([row("ones", 0.5)])
