"""ascjax probe: plan / emulate / decide round trips, wrong trees, missing outputs, sizes,
coverage of the conformance table, exit codes and the --json schema."""

import json
import os

import numpy as np
import pytest

from ascjax._src import cli
from ascjax._src.io import probe
from ascjax._src.registry import ASSUMPTIONS

# The probes whose instructions the 950 lacks (Atlas A2 / A3 only).
A2_PROBES = ["A24_spr_index", "A46_reduce_max_spr_index", "A29_zero_vector_mask",
             "A43_A44_squeeze_ub", "A38_gatherb_block_stride", "A45_squeeze_ub_no_mask",
             "order_datablock_reduce_sum_f32", "order_asc_repeat_reduce_sum_f32"]
# Gather with 8-bit T in the mask form: Atlas 200I/500 A2 only.
SMALL_PROBES = ["A32_gather_int8"]


@pytest.fixture(scope="module")
def plans(tmp_path_factory):
    root = tmp_path_factory.mktemp("plans")
    out = {"950": str(root / "950"), "A2": str(root / "A2"), "200I/500 A2": str(root / "200I")}
    manifests = {"950": probe.plan(out["950"], "950"),
                 "A2": probe.plan(out["A2"], "A2", A2_PROBES),
                 "200I/500 A2": probe.plan(out["200I/500 A2"], "200I/500 A2", SMALL_PROBES)}
    for product in ("A2", "200I/500 A2"):  # every probe asked for runs there
        assert manifests[product]["skipped"] == []
    return out, manifests


def _reading_fields(name, reading):
    return probe.probes_by_name()[name].readings()[reading]


def test_round_trip_every_probe_and_reading(plans, tmp_path):
    dirs, manifests = plans
    for product, manifest in manifests.items():
        for entry in manifest["probes"]:
            for k, reading in enumerate(entry["readings"]):
                out = str(tmp_path / product.replace("/", "_") / entry["name"] / str(k))
                probe.emulate(dirs[product], out, _reading_fields(entry["name"], reading),
                              [entry["name"]])
                report = probe.decide(dirs[product], out)
                (got,) = [r for r in report["probes"] if r["name"] == entry["name"]]
                assert got["status"] == "match", (entry["name"], reading, got)
                assert reading in got["readings"], (entry["name"], reading, got)
                if entry["kind"] == "assumption":  # the readings' outputs all differ
                    assert got["readings"] == [reading]


def test_emulate_computes_each_reading_afresh(plans, tmp_path):
    """Every field at its second reading at once (no result the plan computed): each probe
    names the reading its own fields take."""
    dirs, _ = plans
    probe._CACHE.clear()
    second = {f: [v for v in c if v is not None][1] for f, c in probe._CHOICES.items()
              if f != "out_of_range"}
    for product, plan_dir in dirs.items():
        out = str(tmp_path / product.replace("/", "_"))
        refused = probe.emulate(plan_dir, out, second)["refused"]
        report = probe.decide(plan_dir, out)
        assert report["exit"] == 0
        # the other reading of a NOP is a refusal: those probes write nothing
        planned = {r["name"] for r in report["probes"]}
        assert set(refused) == planned & {"A26_reduce_empty", "A31_gather_empty",
                                          "A36_scatter_empty", "A40_gather_mask_counter",
                                          "A41_gather_mask_empty"}
        for r in report["probes"]:
            if r["name"] in refused:
                assert r["status"] == "missing"
                continue
            p = probe.probes_by_name()[r["name"]]
            want = {n for n, f in p.readings().items()
                    if all(second[k] == v for k, v in f.items())}
            assert set(r["readings"]) == want, r


def test_readings_differ_in_an_element(plans):
    dirs, manifests = plans
    for product, manifest in manifests.items():
        for entry in manifest["probes"]:
            if entry["kind"] != "assumption":
                continue
            files = {r: [np.fromfile(os.path.join(dirs[product], entry["name"], v["files"],
                                                  o["file"]), np.uint8)
                         for o in entry["outputs"]] for r, v in entry["readings"].items()}
            names = list(files)
            assert len(names) >= 2
            for i, a in enumerate(names):
                for b in names[i + 1:]:
                    assert any(x.size != y.size or np.any(x != y)
                               for x, y in zip(files[a], files[b], strict=True)), (entry["name"],
                                                                                   a, b)


def test_wrong_tree_is_none_with_the_revealed_order(plans, tmp_path):
    dirs, _ = plans
    name = "order_whole_reduce_sum_f32"
    src = np.fromfile(os.path.join(dirs["950"], name, "input_src.bin"), np.float32)
    rows = src.reshape(-1, 64)
    acc = rows[:, 0].copy()
    for i in range(1, 64):  # a sequential sum instead of the adjacent pairs
        acc = (acc + rows[:, i]).astype(np.float32)
    os.makedirs(tmp_path / name)
    acc.tofile(tmp_path / name / "output.bin")
    report = probe.decide(dirs["950"], str(tmp_path))
    (got,) = [r for r in report["probes"] if r["name"] == name]
    assert got["status"] == "none" and got["tree"] == "sequential"
    assert got["emulator_tree"] == "adjacent pairs" and not got["equals_emulator"]
    assert report["exit"] == 1
    assert f"{name}: none: tree sequential" in probe.format_decision(report)


def test_missing_outputs_and_first_difference(plans, tmp_path):
    dirs, _ = plans
    # a folder with no probe's output is an error (a mistyped path read as all missing, exit 0)
    with pytest.raises(probe.ProbeError, match=r"holds no probe's output \(e\.g\. .*"
                                               r"A1_mask_layout/output\.bin\)"):
        probe.decide(dirs["950"], str(tmp_path))
    name = "A7_masked_lanes"
    probe.emulate(dirs["950"], str(tmp_path), names=[name])
    path = tmp_path / name / "output.bin"
    dst = np.fromfile(path, np.uint32)
    dst[3] = 0x3F800000  # 1.0 where every reading gives a zero
    dst.tofile(path)
    (got,) = [r for r in probe.decide(dirs["950"], str(tmp_path))["probes"] if r["name"] == name]
    assert got["status"] == "none"
    assert got["first_difference"] == {"file": "output.bin", "element": 3, "got": "0x3f800000",
                                       "expected": "0x00000000", "reading": "zero"}


def test_plan_is_small_and_deterministic(plans, tmp_path):
    dirs, _ = plans
    total = sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(dirs["950"])
                for f in fs)
    assert total < 10_000_000
    again = str(tmp_path / "again")
    probe.plan(again, "950")
    for d, _, fs in os.walk(dirs["950"]):
        for f in fs:
            rel = os.path.relpath(os.path.join(d, f), dirs["950"])
            with open(os.path.join(d, f), "rb") as a, open(os.path.join(again, rel), "rb") as b:
                assert a.read() == b.read(), rel


def test_every_decidable_assumption_has_a_probe(plans):
    _, manifests = plans
    covered = {k for m in manifests.values() for e in m["probes"] for k in e["decides"]}
    keys = {k for k, _, _ in ASSUMPTIONS}
    # the justified list: host codecs (A6, A13-A16) and whether a call is accepted (accepted
    # ranges, types, argument checks: A9, A10, A27, A33, A50, A51)
    assert set(probe.UNDECIDABLE) == {"A6", "A9", "A10", "A13", "A14", "A15", "A16", "A27",
                                      "A33", "A50", "A51"}
    assert keys - set(probe.UNDECIDABLE) <= covered
    assert {u["assumption"] for u in manifests["950"]["undecidable"]} == set(probe.UNDECIDABLE)
    assert all(u["decidable"] is False and u["reason"] for u in manifests["950"]["undecidable"])
    # every float sum tree shape has an order probe, one float and one half where shown
    orders = {e["name"] for e in manifests["950"]["probes"] if e["kind"] == "order"}
    assert {"order_reduce_sum_datablock_f32", "order_reduce_sum_datablock_f16",
            "order_asc_reduce_sum_f16", "order_block_reduce_sum_f16",
            "order_whole_reduce_sum_f32", "order_reduce_sum_first_n_f32",
            "order_reduce_sum_level0_f32", "order_reduce_repeat_spr_f32"} <= orders


def test_cli_exit_codes_and_json(plans, tmp_path, capsys):
    dirs, _ = plans
    out = str(tmp_path / "out")
    names = ["A3_float_overflow", "order_block_reduce_sum_f32"]
    args = [a for n in names for a in ("--probe", n)]
    assert cli.main(["probe", "emulate", dirs["950"], "--out", out,
                     "--config", "float_overflow=saturate", *args]) == 0
    capsys.readouterr()
    assert cli.main(["probe", "decide", dirs["950"], out, "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert set(report) == {"product", "probes", "undecidable", "skipped", "decided", "exit"}
    by_name = {r["name"]: r for r in report["probes"]}
    assert by_name["A3_float_overflow"]["readings"] == ["saturate"]
    assert by_name["A3_float_overflow"]["emulator"] == ["ieee"]
    assert by_name["order_block_reduce_sum_f32"]["tree"] == "adjacent pairs"
    for r in report["probes"]:
        assert {"name", "kind", "decides", "fields", "emulator", "status",
                "readings"} <= set(r)
        assert r["status"] in ("match", "none", "missing")
    np.zeros(128, np.float16).tofile(os.path.join(out, "A3_float_overflow", "output.bin"))
    assert cli.main(["probe", "decide", dirs["950"], out]) == 1
    assert "A3_float_overflow: A3 (float_overflow): none (output.bin element 0" in \
        capsys.readouterr().out
    assert cli.main(["probe", "decide", str(tmp_path / "nothing"), out]) == 2
    assert "manifest.json" in capsys.readouterr().err
    assert cli.main(["probe", "emulate", dirs["950"], "--out", out,
                     "--config", "masked_lanes=maybe"]) == 2
    assert "masked_lanes" in capsys.readouterr().err
    assert cli.main(["probe", "plan", "--out", out, "--probe", "nonesuch"]) == 2


def test_a_bad_dump_a_dependent_probe_and_an_assumption_of_another_probe(plans, tmp_path):
    """A review's simulated NPU: the A40 check failed when the NPU took A39's other reading
    (its dst tail); A18 claimed 'tree' when the NPU took A17's normal reading (no vector merge
    runs); a dump of the wrong length or type was blamed on the hardware (exit 1)."""
    dirs, _ = plans
    names = ["A39_gather_mask_tail", "A40_gather_mask_counter", "A17_first_n_mask_mode",
             "A18_vector_merge", "A7_masked_lanes"]
    out = str(tmp_path / "o")
    probe.emulate(dirs["950"], out, {"gather_mask_tail": "zero_block",
                                     "first_n_mask_mode": "normal"}, names=names)
    report = probe.decide(dirs["950"], out)
    by = {r["name"]: r for r in report["probes"] if r["status"] != "missing"}
    assert by["A39_gather_mask_tail"]["readings"] == ["zero_block"]
    assert by["A40_gather_mask_counter"]["status"] == "match"  # not blamed for A39
    assert by["A17_first_n_mask_mode"]["readings"] == ["normal"]
    assert by["A18_vector_merge"]["status"] == "not shown"
    text = probe.format_decision(report)
    assert ("A18_vector_merge: A18 (vector_merge): not shown (A17_first_n_mask_mode reads "
            "normal" in text)
    assert report["decided"] == 4 and report["exit"] == 0
    path = os.path.join(out, "A7_masked_lanes", "output.bin")
    np.fromfile(path, np.float32)[:63].tofile(path)  # 63 floats: a kernel's dump, cut short
    report = probe.decide(dirs["950"], out)
    (bad,) = [r for r in report["probes"] if r["name"] == "A7_masked_lanes"]
    assert bad["status"] == "bad dump" and report["exit"] == 2
    assert "output.bin holds 252 bytes, expected 256 (64 float)" in probe.format_decision(report)
