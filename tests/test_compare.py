"""``ascjax.compare`` / ``ascjax compare``: bit mismatches, ULPs, locations, CANN verdicts."""

import json
import math
import os
import re
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from strategies import few_examples

import ascjax
from ascjax._src.cli import main
from ascjax._src.io import compare as ascjax_compare

RNG = np.random.default_rng(7)


def _half(n=1024):
    return RNG.uniform(0.5, 4, n).astype(np.float16)


def _samples_verdict(real, golden):
    """The samples' verify_result.py decision, written out as the script does it."""
    loss, minimum = 1e-3, 10e-10
    with np.errstate(all="ignore"):
        result = np.abs(real - golden)
        deno = np.maximum(np.abs(real), np.abs(golden))
        atol_ok = np.less_equal(result, loss)
        rtol_ok = np.less_equal(result / np.add(deno, minimum), loss)
    if not rtol_ok.all() and not atol_ok.all():  # noqa: SIM102 (the script's own shape)
        if (np.sum(~rtol_ok) > real.size * loss) and (np.sum(~atol_ok) > real.size * loss):
            return False
    return True


def _criteria(report):
    return {c.name: c for c in report.criteria}


def test_one_ulp_differences_are_found_and_located():
    golden = _half()
    actual = golden.copy()
    where = [3, 130, 777]
    actual[where] = np.nextafter(golden[where], np.float16(np.inf))
    r = ascjax.compare(actual, golden, dtype="half")
    assert (r.elements, r.mismatches, r.max_ulp, r.ulp_histogram) == (1024, 3, 1, {"1": 3})
    # half: 128 lanes a register, 16 lanes a block.
    got = [(m.index, m.register, m.block, m.lane, m.ulp) for m in r.first_mismatches]
    assert got == [(3, 0, 0, 3, 1), (130, 1, 0, 2, 1), (777, 6, 0, 777 - 768, 1)]
    m = r.first_mismatches[1]
    assert (m.actual, m.golden) == (float(actual[130]), float(golden[130]))
    assert m.golden_bits == f"0x{int(golden.view(np.uint16)[130]):04x}"
    assert r.passed and {c.name: c.passed for c in r.criteria} == {
        "isclose": True, "loss": True, "mere_mare": True, "bit_exact": False}
    assert [c.name for c in r.criteria if c.applied] == ["isclose"]
    strict = ascjax.compare(actual, golden, dtype="half", bit_exact=True)
    assert not strict.passed and strict.criteria[-1].name == "bit_exact"


def test_block_and_lane_for_float_and_packed_nibbles():
    g = np.zeros(128, np.float32)
    a = g.copy()
    a[64 + 8 * 5 + 3] = 1.0  # register 1, block 5, lane 43
    m = ascjax.compare(a, g, dtype="float").first_mismatches[0]
    assert (m.register, m.block, m.lane) == (1, 5, 43)
    g4 = np.zeros(512, np.uint8)
    a4 = g4.copy()
    a4[300] = 0x20  # high nibble of byte 300 = byte 44 of register 1: element 2*300 + 1
    m = ascjax.compare(a4, g4, dtype="fp4x2_e2m1_t").first_mismatches[0]
    # lane: the element's index in its register (512 a register); byte: the byte holding it
    assert (m.index, m.register, m.block, m.lane, m.byte, m.actual, m.golden) == (
        601, 1, 1, 601 - 512, 44, 1.0, 0.0)


@pytest.mark.parametrize("a, g, ulp", [
    (0x0000, 0x8000, 0),  # +0 vs -0: bits differ, same value
    (0x0001, 0x8001, 2),  # smallest subnormals either side of zero
    (0x7C00, 0x7BFF, 1),  # inf is one past the largest finite value
    (0x3C00, 0xBC00, 2 * 0x3C00),
])
def test_ulp_on_ordered_integers(a, g, ulp):
    r = ascjax.compare(np.array([a], np.uint16), np.array([g], np.uint16), dtype="half")
    assert (r.mismatches, r.max_ulp) == (1, ulp)


def test_nan_and_inf_are_compared_explicitly():
    g = np.array([0x7E00, 0x7E00, 0x3C00, 0x7C00, 0x7C00, 0x3C00], np.uint16)
    a = np.array([0x7E00, 0x7D01, 0x7E00, 0x7C00, 0xFC00, 0x3C00], np.uint16)
    r = ascjax.compare(a, g, dtype="half")
    assert (r.nan_pairs, r.nan_payload_differs, r.nan_vs_number) == (2, 1, 1)
    # the NaN of another payload is a bit mismatch, located (a data movement keeps payloads)
    assert (r.mismatches, r.inf_mismatches, r.max_ulp) == (3, 1, math.inf)
    assert r.ulp_histogram == {"32769-65536": 1, "inf": 1, "NaN payload": 1}  # +-inf: 2 * 0x7C00
    assert [m.index for m in r.first_mismatches] == [1, 2, 4]
    assert math.isnan(r.first_mismatches[0].ulp) and "payload" in str(r)
    d = json.loads(r.to_json())  # non-finite distances as strings, as values are
    assert d["max_ulp"] == "inf" and d["first_mismatches"][0]["ulp"] == "nan"
    assert d["first_mismatches"][1]["ulp"] == "inf" and d["first_mismatches"][1]["actual"] == "nan"
    assert d["first_mismatches"][2]["actual"] == "-inf"
    assert d["criteria"]["mere_mare"]["figures"]["mare"] == "inf" and not d["pass"]


def test_hifloat8_ulps_follow_values_not_codes():
    # 0x0F = 1.875 and 0x10 = 2.0 are neighbours; between 0x18 = 0.5 and 0x08 = 1.0 lie the
    # seven values 0.5 * (1 + m/8), codes 0x19..0x1F.
    a = np.array([0x0F, 0x18], np.uint8)
    g = np.array([0x10, 0x08], np.uint8)
    r = ascjax.compare(a, g, dtype="hifloat8_t", first=2)
    assert [m.ulp for m in r.first_mismatches] == [1, 8]
    assert [m.golden for m in r.first_mismatches] == [2.0, 1.0]


@pytest.mark.parametrize("name", list(ascjax.FORMATS))
def test_identical_files_pass_for_every_format(name):
    fmt = ascjax.FORMATS[name]
    data = RNG.integers(0, 256, 512, dtype=np.uint8).view(fmt.storage_dtype)
    r = ascjax.compare(data, data.copy(), dtype=name, bit_exact=True)
    assert r.mismatches == 0 and r.max_ulp == 0 and r.first_mismatches == ()
    assert r.criteria[-1].passed


@pytest.mark.parametrize("dtype, np_dtype", [("half", np.float16), ("float", np.float32)])
@pytest.mark.parametrize("bad", [0, 10, 11, 200])
def test_thousandth_verdict_is_verify_result_py(dtype, np_dtype, bad):
    golden = RNG.uniform(-2, 2, 10_000).astype(np_dtype)
    golden[:50] = 0  # exact zeros: in float16 10e-10 rounds away and 0/0 fails rtol
    actual = golden.copy()
    idx = RNG.choice(np.arange(50, 10_000), bad, replace=False)
    actual[idx] = golden[idx] + np_dtype(0.05)  # fails both tests: |d| > 1e-3, |d|/2.05 too
    r = ascjax.compare(actual, golden, dtype=dtype)
    loss = _criteria(r)["loss"]
    assert loss.passed == _samples_verdict(actual, golden) == (bad <= 10)


def test_mere_mare_by_hand_and_real_errors_fail():
    golden = RNG.uniform(0.5, 2, 4096).astype(np.float32)
    actual = (golden * np.float32(1 + 2**-12)).astype(np.float32)
    a64, g64 = actual.astype(np.float64), golden.astype(np.float64)
    rel = np.abs(a64 - g64) / (np.abs(g64) + 1e-7)
    r = ascjax.compare(actual, golden, dtype="float")
    c = {x.name: x for x in r.criteria}["mere_mare"]
    assert c.figures["mere"] == pytest.approx(rel.mean(), rel=1e-12)
    assert c.figures["mare"] == rel.max()
    assert c.figures["threshold"] == 2.0**-13
    assert not c.passed and not c.applied  # MERE 2^-12 > 2^-13, reported; isclose decides
    assert not ascjax.compare(actual, golden, dtype="float", rules="mere_mare").passed
    assert _criteria(r)["loss"].passed  # ... while within one thousandth


@pytest.mark.parametrize("name, t", [("bfloat16_t", 2**-7), ("fp8_e4m3fn_t", 2**-3),
                                     ("fp8_e5m2_t", 2**-2), ("half", 2**-10)])
def test_thresholds_per_dtype(name, t):
    x = np.zeros(4, ascjax.FORMATS[name].storage_dtype)
    c = {x.name: x for x in ascjax.compare(x, x, dtype=name).criteria}
    assert c["mere_mare"].figures["threshold"] == t
    assert "mere_mare" not in {x.name for x in ascjax.compare(np.zeros(4, np.int32),
                                                               np.zeros(4, np.int32),
                                                               dtype="int32_t").criteria}


def test_chunked_comparison_equals_whole():
    golden = _half(5000)
    actual = golden.copy()
    actual[::7] = np.nextafter(actual[::7], np.float16(0))
    whole = ascjax.compare(actual, golden, dtype="half", first=50)
    pieces = ascjax.compare(actual, golden, dtype="half", first=50, chunk=333)
    assert whole.as_dict() == pieces.as_dict()


def test_bad_input():
    with pytest.raises(ValueError, match="actual has 3 half elements but golden has 4"):
        ascjax.compare(np.zeros(3, np.float16), np.zeros(4, np.float16), dtype="half")
    with pytest.raises(TypeError, match="actual has dtype float32; half is stored as float16"):
        ascjax.compare(np.zeros(4, np.float32), np.zeros(4, np.float16), dtype="half")


def test_a_padded_dump_is_compared_over_its_first_count_elements(tmp_path, capsys):
    """A dump of a GM buffer padded past the output (a review, stop 46, asked for it): the
    length error says --count, which compares the first N of each and says what it left."""
    golden = _half()
    padded = np.concatenate([golden, np.full(32, np.nan, np.float16)])   # 32 pad elements
    padded[7] = np.nextafter(golden[7], np.float16(np.inf))
    g, a = tmp_path / "golden.bin", tmp_path / "actual.bin"
    golden.tofile(g)
    padded.tofile(a)
    n = golden.size
    assert main(["compare", str(a), str(g), "--dtype", "half"]) == 2
    assert f"--count {n} / count={n} compares the first {n} elements" in capsys.readouterr().err
    assert main(["compare", str(a), str(g), "--dtype", "half", "--count", str(n), "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert (d["elements"], d["mismatches"], d["uncompared"]) == (n, 1, [32, 0])
    assert d["first_mismatches"][0]["index"] == 7
    assert main(["compare", str(a), str(g), "--dtype", "half", "--count", "16"]) == 0
    assert (f"count: the first 16 elements of each compared; actual's {n + 16} and golden's "
            f"{n - 16} after them were not") in capsys.readouterr().out
    report = ascjax.compare(padded, golden, dtype="half", count=n, bit_exact=True)
    assert (report.elements, report.mismatches, report.passed) == (n, 1, False)
    with pytest.raises(ValueError, match=rf"count={n + 1} must be an int in \[0, {n}\]"):
        ascjax.compare(padded, golden, dtype="half", count=n + 1)
    nibbles = np.zeros(8, np.uint8)
    with pytest.raises(ValueError, match="count=3 must be even for int4b_t"):
        ascjax.compare(nibbles, nibbles, dtype="int4b_t", count=3)
    assert ascjax.compare(nibbles, nibbles[:4], dtype="int4b_t", count=8).uncompared == (8, 0)


def test_cli_exit_codes_json_and_table(tmp_path, capsys):
    golden = _half()
    actual = golden.copy()
    actual[5] = np.nextafter(golden[5], np.float16(0))
    g, a = tmp_path / "golden.bin", tmp_path / "actual.bin"
    golden.tofile(g)
    actual.tofile(a)
    assert main(["compare", str(a), str(g), "--dtype", "half", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    for key in ("elements", "mismatches", "max_ulp", "first_mismatches", "criteria", "pass"):
        assert key in d
    assert d["first_mismatches"] == [{"index": 5, "register": 0, "block": 0, "lane": 5,
                                      "actual": float(actual[5]), "golden": float(golden[5]),
                                      "actual_bits": f"0x{int(actual.view(np.uint16)[5]):04x}",
                                      "golden_bits": f"0x{int(golden.view(np.uint16)[5]):04x}",
                                      "ulp": 1, "close": True,
                                      # one half ulp below golden: 2^(exponent - 11)
                                      "abs_diff": 2.0 ** (math.frexp(float(actual[5]))[1] - 11),
                                      "rel_diff": 2.0 ** (math.frexp(float(actual[5]))[1] - 11)
                                      / float(golden[5])}]
    assert main(["compare", str(a), str(g), "--dtype", "half", "--bit-exact"]) == 1
    table = capsys.readouterr().out
    assert "first mismatches" in table and "FAIL" in table
    (golden * np.float16(1.5)).tofile(a)
    assert main(["compare", str(a), str(g), "--dtype", "half"]) == 1
    capsys.readouterr()
    golden[:-1].tofile(a)
    assert main(["compare", str(a), str(g), "--dtype", "half"]) == 2
    assert "lengths must match" in capsys.readouterr().err
    assert main(["compare", str(a), str(tmp_path / "none.bin"), "--dtype", "half"]) == 2
    assert main(["compare", str(a), str(g), "--dtype", "half7"]) == 2
    (tmp_path / "odd.bin").write_bytes(b"\0" * 3)
    assert main(["compare", str(tmp_path / "odd.bin"), str(g), "--dtype", "half"]) == 2
    assert "not a whole number of half elements" in capsys.readouterr().err


def test_cli_subprocess_json(tmp_path):
    x = np.arange(256, dtype=np.float32)
    x.tofile(tmp_path / "x.bin")
    out = subprocess.run([sys.executable, "-m", "ascjax", "compare", str(tmp_path / "x.bin"),
                          str(tmp_path / "x.bin"), "--dtype", "float", "--json"],
                         capture_output=True, text=True, check=False, timeout=120)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["pass"] is True


def test_agreeing_nan_and_inf_are_counted_where_the_loss_rule_fails_them(tmp_path):
    a = np.ones(128, np.float16)
    a[3], a[5] = np.nan, np.inf
    a.tofile(tmp_path / "a.bin")
    report = ascjax.compare(str(tmp_path / "a.bin"), str(tmp_path / "a.bin"), dtype="half",
                            bit_exact=True)
    loss, bit_exact = _criteria(report)["loss"], report.criteria[-1]
    assert bit_exact.passed and report.mismatches == 0
    assert not loss.passed and loss.figures["nan_inf_agreeing"] == 2
    assert "fail this rule even where both files agree" in str(report)


def test_pairs_of_zeros_the_loss_rule_fails_in_half_are_counted(tmp_path):
    """Identical half files with zeros reported "rtol_failures 960" and nothing more: the
    script's float16 arithmetic makes 0 / (0 + 10e-10) a 0/0. The report counts those pairs
    and says why; float, where 10e-10 survives, has none."""
    a = np.zeros(1024, np.float16)
    a[::16] = np.arange(1, 65)
    a.tofile(tmp_path / "h.bin")
    report = ascjax.compare(str(tmp_path / "h.bin"), str(tmp_path / "h.bin"), dtype="half")
    loss = _criteria(report)["loss"]
    assert loss.passed and loss.figures["rtol_failures"] == loss.figures["zeros_agreeing"] == 960
    assert "a pair of exact zeros fails the relative test" in str(report)
    b = a.astype(np.float32)
    b[1] = 1.0                          # a zero against a one is no agreeing pair
    b.tofile(tmp_path / "f.bin")
    a.astype(np.float32).tofile(tmp_path / "g.bin")
    report = ascjax.compare(str(tmp_path / "f.bin"), str(tmp_path / "g.bin"), dtype="float")
    loss = _criteria(report)["loss"]
    assert (loss.figures["rtol_failures"], loss.figures["zeros_agreeing"]) == (1, 0)
    assert "exact zeros" not in str(report)


# --- the samples' isclose rule ------------------------------------------------------------------

def _vendor_verify_result(output, golden, relative_tol, absolute_tol, error_tol):
    """Literal copy of the samples' verify_result.py body (np.isclose form), files read as there.
    """
    different_element_results = np.isclose(output, golden, rtol=relative_tol,
                                           atol=absolute_tol, equal_nan=True)
    different_element_indexes = np.where(different_element_results == False)[0]
    error_ratio = float(different_element_indexes.size) / golden.size
    return error_ratio <= error_tol, error_ratio


def _noisy(np_dtype, n, scale, rng):
    """Random data with NaN, +-inf, zeros and subnormals, and an actual perturbed around the
    tolerances (so verdicts land on both sides)."""
    golden = rng.uniform(-4, 4, n).astype(np_dtype)
    special = rng.choice(n, n // 20, replace=False)
    golden[special] = rng.choice(np.array([np.nan, np.inf, -np.inf, 0.0, -0.0,
                                           np.finfo(np_dtype).smallest_subnormal], np_dtype),
                                 special.size)
    actual = (golden.astype(np.float64) * (1 + rng.normal(0, scale, n))).astype(np_dtype)
    flip = rng.choice(n, n // 50, replace=False)  # NaN/inf against numbers and each other
    actual[flip] = rng.choice(np.array([np.nan, np.inf, -np.inf, 1.0], np_dtype), flip.size)
    return actual, golden


@pytest.mark.parametrize("preset", list(ascjax_compare.PRESETS))
@pytest.mark.parametrize("dtype, np_dtype", [("half", np.float16), ("float", np.float32)])
@pytest.mark.parametrize("scale", [0.0, 1e-6, 1e-4, 1e-3])
def test_isclose_verdict_and_ratio_are_the_vendor_scripts(tmp_path, preset, dtype, np_dtype,
                                                          scale):
    rng = np.random.default_rng(hash((preset, dtype, scale)) % 2**32)
    actual, golden = _noisy(np_dtype, 5000, scale, rng)
    actual.tofile(tmp_path / "output.bin")
    golden.tofile(tmp_path / "golden.bin")
    r, a, e = ascjax_compare.PRESETS[preset]
    want = _vendor_verify_result(np.fromfile(tmp_path / "output.bin", dtype=np_dtype),
                                 np.fromfile(tmp_path / "golden.bin", dtype=np_dtype), r, a, e)
    report = ascjax.compare(str(tmp_path / "output.bin"), str(tmp_path / "golden.bin"),
                            dtype=dtype, preset=preset, chunk=1000)
    got = _criteria(report)["isclose"]
    assert (got.passed, got.figures["error_ratio"]) == want == (report.passed, want[1])
    assert f"error ratio: {want[1]:.4f}, tolerance: {e:.4f}" in str(report)


def test_isclose_tolerance_at_the_edge_and_options():
    golden = np.ones(10_000, np.float32)
    actual = golden.copy()
    actual[:10] = 2  # 10 failures: ratio exactly 1e-3
    assert ascjax.compare(actual, golden, dtype="float").passed  # <= E passes, as the script
    actual[10] = 2
    report = ascjax.compare(actual, golden, dtype="float")
    assert not report.passed and _criteria(report)["isclose"].figures["failures"] == 11
    assert ascjax.compare(actual, golden, dtype="float", error_ratio=0.0011).passed
    assert ascjax.compare(actual, golden, dtype="float", atol=1.0).passed
    # one ulp of float at 1 fails only the tightest preset's rtol 1e-6 ... no: 1.19e-7 passes
    actual = np.full(100, np.nextafter(np.float32(1), np.float32(2)))
    assert ascjax.compare(actual, np.ones(100, np.float32), dtype="float",
                          preset="r1e-6-a1e-9-e1e-4").passed
    for kwargs, message in [({"rtol": -1e-3}, "rtol=-0.001 is not a finite number >= 0"),
                            ({"atol": math.inf}, "atol=inf is not a finite number >= 0"),
                            ({"error_ratio": 1.5}, "error_ratio=1.5 is not a number in [0, 1]"),
                            ({"preset": "tight"}, "unknown preset 'tight'"),
                            ({"rules": "exactish"}, "choose one or more of"),
                            ({"layout": "tiles"}, "layout='tiles' is not one of"),
                            ({"first": -1}, "first=-1 must be an int >= 0")]:
        with pytest.raises(ValueError, match=re.escape(message)):
            ascjax.compare(golden, golden, dtype="float", **kwargs)


def test_half_block_sums_the_loss_rule_passes_and_isclose_fails():
    """Block sums of uniform(1, 2) half data (about 24, one ulp 2^-6) a few ulps off: within
    1e-3 relative, so the LOSS rule (both tests must fail) passes; the stricter presets fail."""
    rng = np.random.default_rng(3)
    golden = rng.uniform(1, 2, (4096, 16)).sum(axis=1).astype(np.float16)
    actual = golden.copy()
    off = rng.random(golden.size) < 0.266
    actual[off] = np.nextafter(golden[off], np.float16(np.inf))
    by_rule = {rule: ascjax.compare(actual, golden, dtype="half", rules=rule).passed
               for rule in ("loss", "mere-mare", "isclose")}
    assert by_rule == {"loss": True, "mere-mare": True, "isclose": True}
    for preset in ("r1e-4-a1e-5-e1e-4", "r1e-6-a1e-9-e1e-4"):
        want = _vendor_verify_result(actual, golden, *ascjax_compare.PRESETS[preset])
        report = ascjax.compare(actual, golden, dtype="half", preset=preset)
        assert not want[0] and not report.passed
        assert _criteria(report)["isclose"].figures["error_ratio"] == want[1]


def test_rules_decide_and_json_gives_every_rule(tmp_path, capsys):
    golden = np.ones(256, np.float32)
    actual = golden.copy()
    actual[7] = 1.5
    golden.tofile(tmp_path / "g.bin")
    actual.tofile(tmp_path / "a.bin")
    base = ["compare", str(tmp_path / "a.bin"), str(tmp_path / "g.bin"), "--dtype", "float"]
    assert main(base + ["--json"]) == 1  # 1/256 > 1e-3
    d = json.loads(capsys.readouterr().out)
    assert d["rules"] == ["isclose"] and set(d["criteria"]) == {
        "isclose", "loss", "mere_mare", "bit_exact"}
    assert d["criteria"]["isclose"]["figures"]["error_ratio"] == 1 / 256
    assert d["criteria"]["loss"]["applied"] is False
    assert main(base + ["--error-ratio", "0.004"]) == 0
    assert "error ratio: 0.0039, tolerance: 0.0040" in capsys.readouterr().out
    # the rules asked for decide, whatever isclose's tolerance: 1 > 256 * LOSS fails LOSS
    assert main(base + ["--error-ratio", "0.004", "--rule", "loss"]) == 1
    out = capsys.readouterr().out  # the report names the rule as --rule does
    assert "loss       FAIL" in out and "rules (deciding: loss;" in out
    assert main(base + ["--error-ratio", "0.004", "--rule", "isclose", "--bit-exact"]) == 1
    assert main(base + ["--error-ratio", "0.004", "--rule", "isclose", "--rule", "mere-mare"]) == 1
    capsys.readouterr()
    assert main(base + ["--layout", "flat", "--json"]) == 1
    m = json.loads(capsys.readouterr().out)["first_mismatches"][0]
    assert m == {"index": 7, "actual": 1.5, "golden": 1.0, "actual_bits": "0x3fc00000",
                 "golden_bits": "0x3f800000", "ulp": 1 << 22, "close": False,
                 "abs_diff": 0.5, "rel_diff": 0.5}
    assert main(base + ["--layout", "flat"]) == 1
    assert "register" not in capsys.readouterr().out
    for bad in (["--rtol", "-1"], ["--error-ratio", "2"]):
        assert main(base + bad) == 2
        err = capsys.readouterr().err
        assert err.startswith("ascjax compare: ") and f"({bad[0]})" in err
    for bad in (["--rtol", "x"], ["--atol", "nan"], ["--first", "-1"], ["--preset", "p"]):
        with pytest.raises(SystemExit) as done:
            main(base + bad)
        assert done.value.code == 2 and bad[0] in capsys.readouterr().err


@pytest.mark.parametrize("dtype, np_dtype", [("int16_t", np.int16), ("int32_t", np.int32),
                                             ("uint8_t", np.uint8)])
def test_isclose_on_integers_is_the_vendor_scripts(tmp_path, dtype, np_dtype):
    rng = np.random.default_rng(5)
    info = np.iinfo(np_dtype)
    golden = rng.integers(info.min, info.max, 4000, dtype=np_dtype, endpoint=True)
    actual = golden.copy()
    idx = rng.choice(4000, 40, replace=False)
    actual[idx] = rng.integers(info.min, info.max, 40, dtype=np_dtype, endpoint=True)
    actual[:3] = golden[:3] + np_dtype(1)  # off by one: within rtol of large values only
    golden.tofile(tmp_path / "g.bin")
    actual.tofile(tmp_path / "a.bin")
    for preset, (r, a, e) in ascjax_compare.PRESETS.items():
        want = _vendor_verify_result(np.fromfile(tmp_path / "a.bin", np_dtype),
                                     np.fromfile(tmp_path / "g.bin", np_dtype), r, a, e)
        got = _criteria(ascjax.compare(str(tmp_path / "a.bin"), str(tmp_path / "g.bin"),
                                       dtype=dtype, preset=preset))["isclose"]
        assert (got.passed, got.figures["error_ratio"]) == want
        for error_ratio in (want[1], np.nextafter(want[1], 0)):  # the edge, both sides
            got = ascjax.compare(actual, golden, dtype=dtype, preset=preset,
                                 error_ratio=float(error_ratio))
            assert got.passed == (want[1] <= error_ratio)


def _adversarial_codes(name: str, rng, n: int) -> np.ndarray:
    """Stored units of ``name``: random bits mixed with its zeros, NaNs (several payloads),
    infinities, subnormals and extremes, so agreeing and differing pairs of every class meet."""
    fmt = ascjax.FORMATS[name]
    size = np.dtype(fmt.storage_dtype).itemsize
    bits = rng.integers(0, 256, n * size, dtype=np.uint8).view(f"u{size}")
    width = 8 * bits.itemsize
    top = 1 << (width - 1)
    edges = [0, top, 1, top | 1, top - 1, (1 << width) - 1]
    if fmt.is_float and fmt.bits >= 16:
        exp = ((1 << fmt.exponent_bits) - 1) << fmt.mantissa_bits
        edges += [exp, exp | top, exp | 1, exp | (1 << (fmt.mantissa_bits - 1)), exp - 1]
    pool = np.array(edges, bits.dtype)
    pick = rng.random(bits.size) < 0.3
    bits[pick] = rng.choice(pool, pick.sum())
    return bits.view(fmt.storage_dtype)


@pytest.mark.parametrize("name", list(ascjax.FORMATS))
@given(seed=st.integers(0, 2**32 - 1), share=st.sampled_from([0.0, 0.01, 0.5, 1.0]),
       chunk=st.sampled_from([1, 4096, 10_000, 1 << 22]))
@few_examples(8)
def test_judging_agreeing_pairs_by_class_equals_judging_every_element(name, seed, share,
                                                                       chunk):
    """The speed path (only differing elements through the model, agreeing ones per class)
    gives the plain model's report to the last figure, for every format and special value."""
    rng = np.random.default_rng(seed)
    fmt = ascjax.FORMATS[name]
    golden = _adversarial_codes(name, rng, 6000)
    actual = golden.copy()
    change = rng.random(golden.size) < share
    actual[change] = _adversarial_codes(name, rng, golden.size)[change]
    tol = ascjax_compare.tolerance()
    reports = [ascjax_compare._tally(
        actual, golden, ascjax_compare._Tally(fmt, 20, tol, "registers", split=split),
        chunk).report(("isclose",), None).as_dict() for split in (False, True)]
    assert reports[0] == reports[1]
    whole = ascjax_compare._tally(actual, golden, ascjax_compare._Tally(fmt, 20, tol,
                                                                      "registers"), 1 << 22)
    assert whole.report(("isclose",), None).as_dict() == reports[1]


def test_the_compare_docstring_names_every_rule_and_preset():
    """They are spelled out there (the tables are not public names): kept in step."""
    from ascjax._src.io.compare import PRESETS, RULE_NAMES, RULES
    for name in (*RULES, *PRESETS, *RULE_NAMES):
        assert name in ascjax.compare.__doc__, name


# --- locations in the user's layout, 4-bit lanes, the closing verdict, wording, value text -------

def test_mismatches_located_in_a_given_shape_as_index_tuples():
    golden = _half(1024 * 16)
    actual = golden.copy()
    flat = np.array([16 * 5, 16 * 700 + 3, 16 * 1023 + 15])
    actual[flat] = np.nextafter(golden[flat], np.float16(0))
    want = [tuple(int(i) for i in t) for t in zip(*np.unravel_index(flat, (1024, 16)),
                                                  strict=True)]
    for shape in ((1024, 16), (-1, 16), [1024, -1], (64, 16, 16)):
        r = ascjax.compare(actual, golden, dtype="half", shape=shape)
        full = tuple(np.empty((1024 * 16,)).reshape(shape).shape)
        expect = [tuple(int(i) for i in t) for t in zip(*np.unravel_index(flat, full),
                                                        strict=True)]
        assert (r.layout, r.shape) == ("shape", full)
        assert [m.position for m in r.first_mismatches] == expect
        assert [m.index for m in r.first_mismatches] == flat.tolist()
        assert all(m.register is m.lane is m.block is None for m in r.first_mismatches)
    assert expect != want  # the 3-d shape locates them elsewhere
    r = ascjax.compare(actual, golden, dtype="half", shape=(1024, 16))
    assert [m.position for m in r.first_mismatches] == want == [(5, 0), (700, 3), (1023, 15)]
    d = json.loads(r.to_json())
    assert d["layout"] == "shape" and d["shape"] == [1024, 16]
    assert [m["position"] for m in d["first_mismatches"]] == [list(w) for w in want]
    assert "register" not in d["first_mismatches"][0]
    table = str(r)
    assert "first mismatches (shape (1024, 16)):" in table and "(700, 3)" in table
    # arrays of more than one dimension are located in their own shape by default ...
    r2 = ascjax.compare(actual.reshape(1024, 16), golden.reshape(1024, 16), dtype="half")
    assert (r2.layout, r2.shape) == ("shape", (1024, 16))
    assert [m.position for m in r2.first_mismatches] == want
    assert r2.as_dict() == r.as_dict()
    # ... unless a layout is asked for; flat arrays and files stay registers
    r3 = ascjax.compare(actual.reshape(1024, 16), golden.reshape(1024, 16), dtype="half",
                        layout="registers")
    assert [(m.register, m.lane) for m in r3.first_mismatches] == [
        (int(i) // 128, int(i) % 128) for i in flat]
    assert ascjax.compare(actual, golden, dtype="half").layout == "registers"


def test_packed_arrays_take_their_element_shape_and_a_shape_counts_elements():
    rng = np.random.default_rng(11)
    golden = rng.integers(0, 256, (4, 64), dtype=np.uint8)  # 4 rows of 128 fp4 elements
    actual = golden.copy()
    actual[2, 10] ^= 0x10  # the high nibble: element 2 * 10 + 1 of row 2
    for kwargs in ({}, {"shape": (4, 128)}, {"shape": (-1, 128)}):
        r = ascjax.compare(actual, golden, dtype="fp4x2_e2m1_t", **kwargs)
        assert r.shape == (4, 128) and r.first_mismatches[0].position == (2, 21)
        assert r.first_mismatches[0].index == 2 * 128 + 21
    with pytest.raises(ValueError, match=re.escape("shape=(4, 64) holds 256 elements but the "
                                                   "inputs hold 512 fp4x2_e2m1_t elements")):
        ascjax.compare(actual, golden, dtype="fp4x2_e2m1_t", shape=(4, 64))


def test_bad_shapes_name_the_argument_the_value_and_the_count():
    x = np.zeros(16384, np.float16)
    for kwargs, message in [
            ({"shape": (1000, 16)}, ("shape=(1000, 16) holds 16000 elements but the inputs "
                                     "hold 16384 half elements (--shape)")),
            ({"shape": 100}, ("shape=(100,) holds 100 elements but the inputs hold 16384 half "
                              "elements (--shape)")),
            ({"shape": (-1, 1000)}, ("shape=(-1, 1000) cannot hold the 16384 half elements "
                                     "compared: 16384 is not a multiple of 1000 (--shape)")),
            ({"shape": (-1, -1)}, "shape=(-1, -1) is not a shape"),
            ({"shape": (2.5, 4)}, "shape=(2.5, 4) is not a shape"),
            ({"shape": ()}, "shape=() is not a shape"),
            ({"shape": (1024, 16), "layout": "flat"},
             "layout='flat' and shape=(1024, 16) both say how to locate mismatches"),
            ({"layout": "shape"}, "layout='shape' needs shape=")]:
        with pytest.raises(ValueError, match=re.escape(message)):
            ascjax.compare(x, x, dtype="half", **kwargs)
    with pytest.raises(ValueError, match=re.escape("actual has shape (2, 8192) but golden has "
                                                   "shape (8192, 2)")):
        ascjax.compare(x.reshape(2, -1), x.reshape(-1, 2), dtype="half")
    assert ascjax.compare(x.reshape(2, -1), x.reshape(-1, 2), dtype="half",
                          shape=(128, 128)).shape == (128, 128)


def test_cli_locates_a_localtensor_run_output_by_tensor_and_element(tmp_path, capsys):
    """The user's case: ``ascjax run ReduceSum --tensors T --dst-len 16`` writes T tensors of 16
    elements; ``compare --shape T,16`` (or ``--shape -1,16``) says (tensor, element)."""
    rng = np.random.default_rng(2)
    rng.uniform(1, 2, 8 * 128).astype(np.float16).tofile(tmp_path / "src.bin")
    summary = ascjax.run_bin("ReduceSum", src=str(tmp_path / "src.bin"), dtype="half",
                             tensors=8, count=128, dst_len=16, out=str(tmp_path / "golden.bin"))
    assert (summary.rows, summary.unit) == (8, "tensors")  # what `run` prints: "8 tensors"
    golden = np.fromfile(tmp_path / "golden.bin", np.float16)
    assert golden.size == 8 * 16
    actual = golden.copy()
    flat = [6 * 16 + 0, 7 * 16 + 9]
    actual.view(np.uint16)[flat] ^= 1  # one ulp (or a subnormal's worth) apart
    actual.tofile(tmp_path / "npu_out.bin")
    want = [[int(i) for i in np.unravel_index(k, (8, 16))] for k in flat]
    base = ["compare", str(tmp_path / "npu_out.bin"), str(tmp_path / "golden.bin"), "--dtype",
            "half", "--rule", "bit-exact", "--json"]
    # "--shape -1,16" as written: argparse alone took "-1,16" for an option and said --shape
    # has no value
    for shape in (["--shape", "8,16"], ["--shape=-1,16"], ["--shape", "-1,16"]):
        assert main(base + shape) == 1
        d = json.loads(capsys.readouterr().out)
        assert [m["position"] for m in d["first_mismatches"]] == want == [[6, 0], [7, 9]]
        assert [m["index"] for m in d["first_mismatches"]] == flat
    assert main(base[:-1] + ["--shape", "8,16"]) == 1
    assert "(7, 9)" in capsys.readouterr().out
    assert main(base + ["--shape", "9,16"]) == 2
    assert capsys.readouterr().err.strip() == (
        "ascjax compare: shape=(9, 16) holds 144 elements but the inputs hold 128 half "
        "elements (--shape)")
    assert main(base + ["--shape", "8,16", "--layout", "flat"]) == 2
    capsys.readouterr()
    with pytest.raises(SystemExit) as done:
        main(base + ["--shape", "8x16"])
    assert done.value.code == 2 and "--shape" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["compare", "--help"])
    help_text = capsys.readouterr().out
    assert "--shape N,LEN" in help_text and "LocalTensor" in help_text


@pytest.mark.parametrize("name", [n for n, f in ascjax.FORMATS.items() if f.packed])
def test_packed_types_report_the_element_lane_and_the_byte_apart(name):
    rng = np.random.default_rng(4)
    golden = rng.integers(0, 256, 3 * 256, dtype=np.uint8)  # 3 registers of 512 elements
    actual = golden.copy()
    elements = np.sort(rng.choice(3 * 512, 6, replace=False))
    for e in elements:  # flip one bit of element e's nibble: element 2k is the low nibble
        actual[e // 2] ^= 1 << (4 * (e % 2))
    r = ascjax.compare(actual, golden, dtype=name, first=6)
    got = [(m.index, m.register, m.lane, m.byte, m.block) for m in r.first_mismatches]
    want = [(int(e), int(e) // 512, int(e) % 512, int(e) % 512 // 2, int(e) % 512 // 2 // 32)
            for e in elements]
    assert got == want
    d = json.loads(r.to_json())["first_mismatches"][0]
    assert (d["lane"], d["byte"]) == (want[0][2], want[0][3])
    table = str(r)
    assert re.search(r"index\s+register\s+block\s+lane\s+byte", table)
    assert "lane = the element's index in its register, 0-511" in table
    one = ascjax.compare(np.ones(4, np.float16), np.zeros(4, np.float16), dtype="half")
    assert one.first_mismatches[0].byte is None
    assert "byte" not in one.first_mismatches[0].as_dict() and " byte" not in str(one)


def test_the_closing_lines_are_the_deciding_rules():
    golden = np.ones(1000, np.float32)
    actual = golden + np.float32(1e-5)  # within LOSS, far outside the tightest isclose preset
    strict = "r1e-6-a1e-9-e1e-4"
    r = ascjax.compare(actual, golden, dtype="float", preset=strict, rules="loss")
    c = _criteria(r)
    assert r.passed and c["loss"].applied and not c["isclose"].passed
    lines = str(r).splitlines()
    assert "error ratio" not in str(r)
    assert lines[-2] == ("  loss: 0 over the relative limit, 0 over the absolute limit (LOSS "
                         "1e-3); fails when both exceed 1")
    assert lines[-1] == "  PASS (loss)"
    # isclose is reported, in parentheses: not the verdict
    assert any(x.startswith("    isclose    (fail)  (") for x in lines)
    # the former name is still accepted and decides as the loss rule
    assert ascjax.compare(actual, golden, dtype="float", preset=strict,
                          rules="thousandth").rules == ("loss",)
    bits = ascjax.compare(actual, golden, dtype="float", rules="bit-exact")
    assert str(bits).splitlines()[-2:] == ["  bit-exact: 1000 bit mismatches",
                                           "  FAIL (bit-exact)"]
    both = ascjax.compare(actual, golden, dtype="float", preset=strict,
                          rules=["isclose", "mere-mare"])
    c = _criteria(both)
    want_mm = (f"  mere-mare: MERE {c['mere_mare'].figures['mere']:.4g} (limit "
               f"{2.0**-13:.4g}), MARE {c['mere_mare'].figures['mare']:.4g} (limit "
               f"{10 * 2.0**-13:.4g})")
    assert str(both).splitlines()[-3:] == [
        "  error ratio: 1.0000, tolerance: 0.0001", want_mm, "  FAIL (isclose)"]
    assert c["mere_mare"].passed  # rel about 1e-5 < 2^-13
    default = str(ascjax.compare(golden, golden, dtype="float")).splitlines()
    assert default[-2:] == ["  error ratio: 0.0000, tolerance: 0.0010", "  PASS (isclose)"]


def test_counts_are_worded_in_the_singular_and_the_plural():
    def first_line(n, bad):
        g = np.zeros(n, np.float16)
        a = g.copy()
        a[:bad] = 1
        return str(ascjax.compare(a, g, dtype="half")).splitlines()[0]
    assert first_line(1, 1) == ("compare half: 1 element, 1 bit mismatch in 1 register, max "
                                "15360 ulp")
    assert first_line(2, 1) == ("compare half: 2 elements, 1 bit mismatch in 1 register, max "
                                "15360 ulp")
    assert first_line(3, 2) == ("compare half: 3 elements, 2 bit mismatches in 1 register, max "
                                "15360 ulp")
    assert first_line(300, 200) == ("compare half: 300 elements, 200 bit mismatches in 2 "
                                     "registers, max 15360 ulp")
    assert first_line(3, 0) == "compare half: 3 elements, 0 bit mismatches, max 0 ulp"
    assert "bit-exact: 1 bit mismatch\n" in str(ascjax.compare(
        np.ones(1, np.float16), np.zeros(1, np.float16), dtype="half", bit_exact=True))


def _significant(text):
    """Significant digits of a printed number: '-96.0' 2, '0.0625' 3, '1.5e-05' 2."""
    return len(text.lstrip("-").split("e")[0].replace(".", "").strip("0"))


def _printed_values(report):
    """The actual values of the report's table of first mismatches, as printed."""
    rows = re.split(r"\n  (?:rules|first isclose)", str(report).split("isclose\n", 1)[1])[0]
    rows = rows.splitlines()
    return [re.split(r"\s+", row.strip())[1] for row in rows]


@pytest.mark.parametrize("name, np_dtype", [("float", np.float32), ("half", np.float16)])
def test_values_are_printed_in_their_own_formats_shortest_form(name, np_dtype):
    rng = np.random.default_rng(9)
    values = np.concatenate([np.array([0.1, 1 / 3, 65504, 6e-8, -2.5e-5, 1e10, -0.0, np.inf,
                                       np.nan], np.float64),
                             rng.standard_normal(20) * 10.0 ** rng.integers(-6, 6, 20)])
    with np.errstate(over="ignore"):
        actual = values.astype(np_dtype)
    golden = np.full(actual.size, 7, np_dtype)
    r = ascjax.compare(actual, golden, dtype=name, layout="flat", first=actual.size)
    want = [str(v) for v in actual]  # NumPy's shortest repr that round-trips in the type
    assert _printed_values(r) == want
    if name == "float":
        assert want[0] == "0.1" and "0.10000000149011612" not in str(r)


@pytest.mark.parametrize("name", ["bfloat16_t", "fp8_e4m3fn_t", "fp8_e5m2_t", "hifloat8_t",
                                  "fp4x2_e2m1_t"])
def test_small_float_values_print_short_and_read_back_to_their_codes(name):
    fmt = ascjax.FORMATS[name]
    rng = np.random.default_rng(1)
    if fmt.packed:
        codes = np.arange(16, dtype=np.uint8)
        actual, golden = codes | (codes << 4), np.full(16, 0x77, np.uint8)
        values = np.asarray(ascjax.decode(np.repeat(codes, 2), name), np.float64)[::2]
    else:
        codes = rng.integers(0, 1 << fmt.bits, 40).astype(fmt.bits_dtype)
        actual = codes
        golden = np.full(codes.size, 1, fmt.bits_dtype)  # a code no random draw wins often
        values = np.asarray(ascjax.decode(codes, name), np.float64)
    with np.errstate(invalid="ignore"):  # NaN codes
        every = np.asarray(ascjax.decode(np.arange(1 << fmt.bits).astype(
            np.uint8 if fmt.packed else fmt.bits_dtype), name), np.float64)
    every = np.unique(every[np.isfinite(every)])  # the type's finite values
    r = ascjax.compare(actual, golden, dtype=name, layout="flat", first=10_000)
    shown = {m.index: t for m, t in zip(r.first_mismatches, _printed_values(r), strict=True)}
    step = 2 if fmt.packed else 1
    for index, text in shown.items():
        value = values[index // step]
        if np.isnan(value):
            assert text == "nan"
            continue
        # the text reads back to the same code (the codec's own rounding) ...
        back = np.asarray(ascjax.encode(np.array([float(text)], np.float32), name))
        back = back & 0xF if fmt.packed else back
        want = codes[index // step] & 0xF if fmt.packed else codes[index]
        if value == 0:  # -0 and +0 are two codes of one value
            assert float(text) == 0 and str(value) == text
            continue
        assert int(back[0]) == int(want), (text, value)
        # ... and has no more significant digits than the float64 repr of the value, and one
        # fewer (the nearest such decimal) is not nearer to the value than to all the others
        digits = _significant(text)
        assert digits <= _significant(repr(float(value))), (text, value)
        if digits > 1:
            shorter = float(f"{value:.{digits - 1}g}")
            distance = np.abs(every - shorter)
            nearest = every[distance == distance.min()]
            assert nearest.tolist() != [value], (text, shorter)
    if name == "bfloat16_t":
        r = ascjax.compare(np.array([0x3DCD], np.uint16), np.array([0], np.uint16), dtype=name,
                           layout="flat")
        assert _printed_values(r) == ["0.1"]  # bfloat16's 0.10009765625


# --- valid counts (GatherMask's rsvdCnt) and the absolute difference -------------------------

def _stale_rows():
    """4 rows of 16 half elements whose first (16, 3, 0, 10) are defined; the NPU's dump has
    other data past them and one real error at row 3, element 7."""
    rng = np.random.default_rng(5)
    golden = rng.uniform(1, 2, (4, 16)).astype(np.float16)
    actual = golden.copy()
    counts = np.array([16, 3, 0, 10], np.uint32)
    for t, n in enumerate(counts):
        actual[t, n:] = rng.uniform(3, 4, 16 - n).astype(np.float16)  # stale: never equal
    actual[3, 7] = -actual[3, 7]
    return actual, golden, counts


def test_valid_counts_compare_only_the_defined_elements_of_each_row(tmp_path):
    """A new user's GatherMask check: 523,953 mismatches in the undefined tails (dst past
    rsvdCnt, `undefined` on the vendor page) buried one real error."""
    actual, golden, counts = _stale_rows()
    stale = (16 - 16) + (16 - 3) + (16 - 0) + (16 - 10)
    assert ascjax.compare(actual, golden, dtype="half").mismatches == stale + 1
    counts.tofile(tmp_path / "cnt.bin")
    for counted in (counts, counts.astype(np.int64).tolist(), str(tmp_path / "cnt.bin")):
        for kwargs in ({}, {"shape": (4, 16)}, {"shape": (-1, 16)}):
            a, g = (x.reshape(-1) if kwargs else x for x in (actual, golden))  # rows: 2-D
            r = ascjax.compare(a, g, dtype="half", bit_exact=True, valid_counts=counted,
                               **kwargs)
            assert (r.elements, r.excluded, r.mismatches) == (16 + 3 + 0 + 10, 64 - 29, 1)
            m = r.first_mismatches[0]
            assert (m.position, m.index) == ((3, 7), 3 * 16 + 7) and not r.passed
    d = json.loads(r.to_json())
    assert d["excluded"] == 35 and d["elements"] == 29
    assert "  valid counts: 35 elements past each row's count excluded as undefined (not " \
           "compared)" in str(r).splitlines()
    assert "excluded" not in str(ascjax.compare(actual, golden, dtype="half"))
    assert ascjax.compare(actual, golden, dtype="half").excluded is None
    fixed = actual.copy()
    fixed[3, 7] = golden[3, 7]
    assert ascjax.compare(fixed, golden, dtype="half", bit_exact=True,
                          valid_counts=counts).passed


def test_valid_counts_give_the_same_report_in_any_chunk_size():
    rng = np.random.default_rng(6)
    golden = rng.uniform(1, 2, (50, 1000)).astype(np.float16)
    counts = rng.integers(0, 1001, 50)
    actual = golden.copy()
    actual[np.arange(1000) >= counts[:, None]] = 9  # stale tails
    flips = [(t, int(rng.integers(0, n))) for t, n in enumerate(counts) if n][:30]
    for t, e in flips:
        actual[t, e] = np.nextafter(golden[t, e], np.float16(0))
    whole = ascjax.compare(actual, golden, dtype="half", valid_counts=counts, first=100)
    assert whole.mismatches == len(flips) and whole.excluded == 50 * 1000 - counts.sum()
    assert [m.position for m in whole.first_mismatches] == flips
    for chunk in (4096, 3 * 4096):
        assert ascjax.compare(actual, golden, dtype="half", valid_counts=counts, first=100,
                              chunk=chunk).as_dict() == whole.as_dict()


def test_bad_valid_counts_name_the_numbers():
    actual, golden, counts = _stale_rows()
    for kwargs, error, message in [
            ({"valid_counts": [1, 2, 3, 4, 5]}, ValueError,
             ("valid_counts holds 5 counts but the half data has 4 rows of 16 (shape (4, 16)); "
              "give one count per row (--valid-counts)")),
            ({"valid_counts": [16, 17, 0, 0]}, ValueError,
             "valid_counts: row 1 has count 17, outside [0, 16] (a row holds 16 elements)"),
            ({"valid_counts": [16, -1, 0, 0]}, ValueError, "row 1 has count -1, outside"),
            ({"valid_counts": counts, "layout": "flat"}, ValueError,
             ("valid_counts limits each row to its count, so it needs rows: give shape=(N, "
              "LEN) (--shape N,LEN) or 2-D arrays; got no row layout (--valid-counts)")),
            ({"valid_counts": counts, "shape": (4, 4, 4)}, ValueError,
             "got shape=(4, 4, 4) (--valid-counts)"),
            ({"valid_counts": np.array([1.0, 2, 3, 4])}, TypeError,
             "valid_counts has dtype float64; give integers"),
            ({"valid_counts": [0, 0, 0, 0]}, ValueError,
             "every valid count is 0; nothing was compared")]:
        with pytest.raises(error, match=re.escape(message)):
            ascjax.compare(actual, golden, dtype="half", **kwargs)
    with pytest.raises(ValueError, match="needs rows"):  # a flat file: no rows
        ascjax.compare(actual.reshape(-1), golden.reshape(-1), dtype="half",
                       valid_counts=counts)


def test_cli_valid_counts_from_a_gather_mask_run_end_to_end(tmp_path, capsys):
    """``ascjax run gather_mask --cnt-out`` then ``compare --valid-counts``: pattern 1 keeps
    the even elements, 64 of each 128-element half repeat, so 128 of each 256-element tensor
    are defined; the NPU dump holds stale data past them."""
    rng = np.random.default_rng(8)
    rng.uniform(1, 2, (8, 256)).astype(np.float16).tofile(tmp_path / "src.bin")
    golden, cnt, npu = (str(tmp_path / f) for f in ("golden.bin", "cnt.bin", "npu.bin"))
    assert main(["run", "gather_mask", "--src", str(tmp_path / "src.bin"), "--dtype", "half",
                 "--tensors", "8", "--src1-pattern", "1", "--repeat-times", "2", "--out",
                 golden, "--cnt-out", cnt]) == 0
    capsys.readouterr()
    assert np.fromfile(cnt, np.uint32).tolist() == [128] * 8
    dump = np.fromfile(golden, np.float16).reshape(8, 256)
    dump[:, 128:] = rng.uniform(5, 6, (8, 128)).astype(np.float16)  # stale UB data
    dump.tofile(npu)
    base = ["compare", npu, golden, "--dtype", "half", "--shape", "8,256", "--bit-exact"]
    assert main(base) == 1  # the tails bury everything
    assert "1024 bit mismatches" in capsys.readouterr().out
    assert main(base + ["--valid-counts", cnt]) == 0
    out = capsys.readouterr().out
    assert out.startswith("compare half: 1024 elements, 0 bit mismatches")
    assert "valid counts: 1024 elements past each row's count excluded as undefined" in out
    dump[6, 100] = np.nextafter(dump[6, 100], np.float16(0))  # one real error
    dump.tofile(npu)
    assert main(base + ["--valid-counts", cnt, "--json"]) == 1
    d = json.loads(capsys.readouterr().out)
    assert (d["mismatches"], d["excluded"]) == (1, 1024)
    assert d["first_mismatches"][0]["position"] == [6, 100]
    assert main(base[:-3] + ["--shape", "4,512", "--valid-counts", cnt]) == 2
    assert capsys.readouterr().err.strip() == (
        "ascjax compare: valid_counts holds 8 counts but the half data has 4 rows of 512 "
        "(shape (4, 512)); give one count per row (--valid-counts)")
    assert main(base[:-3] + ["--valid-counts", cnt]) == 2
    assert "needs rows" in capsys.readouterr().err


def test_mismatch_rows_give_the_absolute_difference():
    """|actual - golden| in float64 beside the values: nan where a side is NaN, inf where one
    is infinite (values worked out by hand)."""
    pairs = [(1.5, 1.0, 0.5), (np.nan, 2.0, math.nan), (np.inf, 1.0, math.inf),
             (-np.inf, np.inf, math.inf), (-0.0, 0.0, 0.0),
             (65504.0, -65504.0, 131008.0),  # past half's largest: float64 holds it
             (1.0009765625, 1.0, 0.0009765625)]  # one ulp at 1
    actual = np.array([a for a, _, _ in pairs], np.float16)
    golden = np.array([g for _, g, _ in pairs], np.float16)
    r = ascjax.compare(actual, golden, dtype="half", layout="flat")
    got = [m.abs_diff for m in r.first_mismatches]
    want = [d for _, _, d in pairs]
    assert len(got) == 7 and all(g == w or (math.isnan(g) and math.isnan(w))
                                 for g, w in zip(got, want, strict=True))
    table = str(r).split("isclose\n", 1)
    assert "abs diff" in table[0].splitlines()[-1]
    rows = re.split(r"\n  (?:rules|first isclose)", table[1])[0].splitlines()
    assert [row.split()[5] for row in rows] == ["0.5", "nan", "inf", "inf", "0.0", "131008.0",
                                                "0.0009765625"]
    d = json.loads(r.to_json())
    assert [m["abs_diff"] for m in d["first_mismatches"]] == [0.5, "nan", "inf", "inf", 0.0,
                                                              131008.0, 0.0009765625]
    ints = ascjax.compare(np.array([5], np.int32), np.array([-3], np.int32), dtype="int32_t",
                          layout="flat")
    assert ints.first_mismatches[0].abs_diff == 8.0
    assert str(ints).split("isclose\n", 1)[1].split()[5] == "8"


def test_bit_exact_fails_a_nan_of_another_payload(tmp_path):
    """A review: asc_gather moved a NaN 0x7e00, the dump held 0xfe01; --bit-exact said
    "0 bit mismatches ... PASS", though data movement keeps every bit (NaN payloads too)."""
    golden = np.array([0x3C00, 0x7E00, 0x0001], np.uint16)
    npu = np.array([0x3C00, 0xFE01, 0x0001], np.uint16)
    r = ascjax.compare(npu, golden, dtype="half", bit_exact=True)
    assert not r.passed and r.mismatches == 1 and r.nan_payload_differs == 1
    assert r.criteria[-1].name == "bit_exact" and not r.criteria[-1].passed
    assert r.first_mismatches[0].index == 1 and r.first_mismatches[0].actual_bits == "0xfe01"
    assert ascjax.compare(npu, golden, dtype="half").passed  # isclose: NaN pairs are equal
    golden.tofile(tmp_path / "g.bin"), npu.tofile(tmp_path / "a.bin")
    assert main(["compare", str(tmp_path / "a.bin"), str(tmp_path / "g.bin"), "--dtype",
                 "half", "--bit-exact"]) == 1


def _late_failures(n=128 * 64):
    """A review's case: a 1-ulp flip every 100 elements (close), then 1500 elements near the
    end off by 0.5 (isclose fails them); the first mismatches show only the harmless ones."""
    golden = np.random.default_rng(6).uniform(1, 2, n).astype(np.float16)
    actual = golden.copy()
    actual.view(np.uint16)[::100] += 1
    actual[n - 2000:n - 500] += np.float16(0.5)
    return actual, golden


def test_a_failing_isclose_lists_its_first_failures_and_where_the_max_ulp_is(tmp_path, capsys):
    actual, golden = _late_failures()
    fails = np.flatnonzero(~np.isclose(actual, golden, rtol=1e-3, atol=1e-3, equal_nan=True))
    ulps = np.abs(actual.view(np.uint16).astype(int) - golden.view(np.uint16))  # all positive
    top = int(np.argmax(ulps))  # the first of the largest
    assert fails[0] > 1000 and (ulps == ulps[top]).sum() > 1  # ties: the first one is named
    r = ascjax.compare(actual, golden, dtype="half", first=5)
    assert all(m.close for m in r.first_mismatches)
    assert [m.index for m in r.first_isclose_failures] == fails[:5].tolist()
    assert not any(m.close for m in r.first_isclose_failures)
    at = r.max_ulp_at
    assert (at.index, at.ulp, at.register, at.block, at.lane) == (
        top, r.max_ulp, top // 128, top % 128 // 16, top % 128)
    for chunk in (4096, 3 * 4096):  # the same first failures and max across chunks
        assert ascjax.compare(actual, golden, dtype="half", first=5,
                              chunk=chunk).as_dict() == r.as_dict()
    actual.tofile(tmp_path / "a.bin"), golden.tofile(tmp_path / "g.bin")
    files = ["compare", str(tmp_path / "a.bin"), str(tmp_path / "g.bin"), "--dtype", "half"]
    assert main([*files, "--first", "5", "--json"]) == 1
    d = json.loads(capsys.readouterr().out)
    assert [m["index"] for m in d["first_isclose_failures"]] == fails[:5].tolist()
    assert d["max_ulp_at"] == at.as_dict() and d["max_ulp_at"]["lane"] == top % 128
    assert main([*files, "--first", "5"]) == 1
    text = capsys.readouterr().out
    assert (f"max ulp {r.max_ulp} at index {top} (register {top // 128}, block "
            f"{top % 128 // 16}, lane {top % 128}): actual ") in text
    table = text.split("first isclose failures (registers):\n")[1].splitlines()
    assert [int(line.split()[0]) for line in table[1:6]] == fails[:5].tolist()
    assert table[1].split()[1:4] == [str(fails[0] // 128), str(fails[0] % 128 // 16),
                                     str(fails[0] % 128)] and table[1].endswith("  no")
    # only where isclose decides and fails; --shape places both as the mismatch table does
    assert main([*files, "--rule", "loss"]) == 1
    assert "first isclose failures" not in capsys.readouterr().out
    assert main([*files, "--shape", "-1,16", "--json"]) == 1
    d = json.loads(capsys.readouterr().out)
    assert d["max_ulp_at"]["position"] == [top // 16, top % 16]
    assert d["first_isclose_failures"][0]["position"] == [fails[0] // 16, fails[0] % 16]
    same = ascjax.compare(golden, golden, dtype="half")
    assert (same.max_ulp_at, same.first_isclose_failures) == (None, ())
    assert "max ulp" not in str(same) and same.as_dict()["max_ulp_at"] is None


def test_a_missing_file_is_named_by_its_argument(tmp_path, capsys):
    g = tmp_path / "g.bin"
    np.ones(16, np.float16).tofile(g)
    nope = str(tmp_path / "nope.bin")
    for args, said in [([nope, str(g)], f"actual {nope}: no such file"),
                       ([str(g), nope], f"golden {nope}: no such file"),
                       ([str(g), str(g), "--shape", "1,16", "--valid-counts", nope],
                        f"--valid-counts {nope}: no such file")]:
        assert main(["compare", *args, "--dtype", "half"]) == 2
        assert capsys.readouterr().err == f"ascjax compare: {said}\n"


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
@pytest.mark.parametrize("json_flag", [[], ["--json"]])
def test_a_report_that_cannot_be_written_is_exit_code_2_not_fail(tmp_path, json_flag):
    """Exit code 1 is FAIL: a report lost to a full disk is not one, nor a traceback."""
    np.ones(256, np.float16).tofile(tmp_path / "g.bin")
    with open("/dev/full", "w") as full:
        out = subprocess.run([sys.executable, "-m", "ascjax", "compare", str(tmp_path / "g.bin"),
                              str(tmp_path / "g.bin"), "--dtype", "half", *json_flag],
                             stdout=full, stderr=subprocess.PIPE, text=True, check=False,
                             timeout=120)
    assert out.returncode == 2
    assert out.stderr == ("ascjax compare: cannot write to stdout: [Errno 28] No space left on "
                          "device\n")


def test_a_nan_does_not_hide_the_largest_finite_error_or_pass_unremarked():
    """A review's fake dump (a kernel developer's): 1-ulp errors, one NaN, a -0 for +0 and a
    register shifted by a lane passed isclose with only "NaN vs number 1" to show for it, and
    the summary's max ulp was the NaN's, so the shifted register (thousands of ulp) was seen
    only with --first 2000. The counts here are worked out apart from compare."""
    rng = np.random.default_rng(5)
    golden = rng.standard_normal(1 << 18).astype(np.float16)
    golden[77] = 0
    actual = golden.copy()
    bits = actual.view(np.uint16)
    bits[rng.choice(1 << 18, 40, replace=False)] ^= 1            # 1-ulp errors
    actual[300] = np.nan
    actual[77] = -0.0
    actual[1280:1408] = np.roll(golden[1280:1408], 1)            # register 10 shifted a lane
    report = ascjax.compare(actual, golden, dtype="half")
    differ = np.flatnonzero(actual.view(np.uint16) != golden.view(np.uint16))
    assert report.mismatches == differ.size
    assert report.mismatched_rows == np.unique(differ // 128).size
    assert report.signed_zero_mismatches == 1 and report.nan_vs_number == 1
    assert report.passed and report.max_ulp == math.inf
    assert report.max_ulp_at.index == 300  # the NaN (int32 ulp keys once put a finite one here)
    finite = differ[np.isfinite(actual[differ])]
    keys = golden.view(np.uint16).astype(np.int64), actual.view(np.uint16).astype(np.int64)
    ordered = [np.where(k >> 15, -(k & 0x7FFF), k & 0x7FFF) for k in keys]
    distance = np.abs(ordered[0] - ordered[1])[finite]
    assert report.max_finite_ulp == distance.max()
    assert report.max_finite_ulp_at.index == finite[np.argmax(distance)]
    assert report.max_finite_ulp_at.register == 10
    text = str(report)
    assert f"max finite ulp {distance.max()} (both values finite) at index" in text
    assert "+0 vs -0 1" in text
    assert "note: 1 NaN against a number passed within the share of failing elements" in text
    assert text.splitlines()[-1] == "  PASS (isclose)"
    m = report.max_finite_ulp_at
    assert m.rel_diff == abs(m.actual - m.golden) / abs(m.golden)
    assert report.as_dict()["max_finite_ulp_at"]["rel_diff"] == m.rel_diff


def test_rows_with_a_mismatch_are_counted_once_across_chunks():
    """Rows of 1000 elements straddle the 4096-element chunks: a row is counted once."""
    golden = np.zeros(20000, np.float32)
    actual = golden.copy()
    actual[[4095, 4096, 4097, 8191, 15000, 19999]] = 1  # rows 4, 8, 15, 19
    for chunk in (4096, 1 << 20):
        report = ascjax.compare(actual, golden, dtype="float", shape=(-1, 1000), chunk=chunk)
        assert report.mismatched_rows == 4
        assert "6 bit mismatches in 4 rows of shape (20, 1000)" in str(report)
    assert ascjax.compare(actual, golden, dtype="float", layout="flat").mismatched_rows is None
