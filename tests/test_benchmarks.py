"""The benchmark scripts run (tiny sizes; no timing is asserted: the scripts measure speed)."""

import dataclasses
import importlib.util
import json
import os
import pathlib
import platform
import re
import shutil
import subprocess
import sys

import jax
import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
BACKEND = jax.default_backend()  # the JSON is named by backend: throughput-gpu.json on a GPU


def _load(name):
    spec = importlib.util.spec_from_file_location(name, ROOT / "benchmarks" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def test_throughput_script_runs_and_compares_bits(tmp_path, capsys):
    bench = _load("throughput")
    args = ["--min-log2", "10", "--max-log2", "10", "--cases", "reduce_sum_datablock/float16",
            "squeeze(register)/uint8", "--out", str(tmp_path)]
    assert bench.main(args) == 0
    saved = json.loads((tmp_path / f"throughput-{BACKEND}.json").read_text())
    assert {r["case"] for r in saved["rows"]} == {"reduce_sum_datablock/float16",
                                                  "squeeze(register)/uint8"}
    assert (tmp_path / f"throughput-{BACKEND}.png").stat().st_size > 0
    capsys.readouterr()
    saved_path = tmp_path / f"throughput-{BACKEND}.json"
    assert bench.main(args + ["--compare-bits", str(saved_path)]) == 0
    assert f"bits identical to {saved_path}: 2/2" in capsys.readouterr().out


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="--malloc sets glibc tunables")
def test_throughput_malloc_option_reruns_under_the_tunables(tmp_path):
    bench = _load("throughput")
    script = ROOT / "benchmarks" / "throughput.py"
    subprocess.run([sys.executable, str(script), "--malloc", "reuse", "--min-log2", "10",
                    "--max-log2", "10", "--no-numpy", "--cases", "squeeze(register)/uint8",
                    "--out", str(tmp_path)], check=True, capture_output=True, text=True)
    saved = json.loads((tmp_path / f"throughput-{BACKEND}-reuse.json").read_text())
    assert saved["malloc"] == "reuse"
    seen = set(saved["glibc_tunables"].split(":"))  # what the rerun process had
    assert set(bench.MALLOC["reuse"].split(":")) <= seen
    with pytest.raises(SystemExit):  # in-process calls cannot be rerun
        bench.main(["--malloc", "reuse", "--out", str(tmp_path)])


@pytest.mark.skipif(not shutil.which("bash"), reason="the prepared device check is a bash script")
def test_prepared_device_check_runs_end_to_end(tmp_path):
    """The one-shot GPU script, at 2^10 registers on whatever backend this machine has."""
    env = dict(os.environ, MIN_LOG2="10", MAX_LOG2="10",  # two cases: the script, not speed
               CASES="reduce_sum_datablock/float32 asc_gather/float32", ALLOW_CPU="1")
    done = subprocess.run(["bash", str(ROOT / "benchmarks" / "gpu_check.sh"), str(tmp_path)],
                          cwd=ROOT, env=env, check=True, capture_output=True, text=True)
    assert re.search(r"bits identical to \S+: (\d+)/\1\b", done.stdout)
    assert "float32 reduction at 2^10 registers runs at" in done.stdout


def test_bulk_path_script_runs(capsys):
    """benchmarks/bulk_path.py (issue 14's speed figures), on tiny files: it checks its own
    verdict against the vendor rule and prints both ratios."""
    bench = _load("bulk_path")
    assert bench.main(["--log2", "12", "--registers-log2", "6", "--repeats", "1"]) == 0
    out = capsys.readouterr().out
    assert "the NumPy isclose script" in out and "NumPy read+write" in out


def test_precision_speed_script_runs(tmp_path, capsys):
    """benchmarks/precision_speed.py (issue 17's speed figures), tiny: every call's bits match
    the JAX path (the script returns 1 otherwise) and each gets a ratio against np.sum."""
    bench = _load("precision_speed")
    args = ["--cases", "half:8x300", "float:4x70", "--repeats", "1", "--check-rows", "8",
            "--jax", "--out", str(tmp_path)]
    assert bench.main(args) == 0
    out = capsys.readouterr().out
    assert out.count("np.sum  (") == 2 * 8 and "BITS DIFFER" not in out
    saved = json.loads((tmp_path / f"precision_speed-{BACKEND}.json").read_text())
    assert {r["call"] for r in saved["rows"]} == {"exact_sum"} | {
        f"sum order={o}" for o in ("sequential", "adjacent_tree", "repeat_sequential",
                                   "repeat_tree", "repeat_vector_merge", "numpy_pairwise",
                                   "kahan")}
    assert all(r["bits_match_jax_path"] and r["jax_seconds"] > 0 for r in saved["rows"])
    assert all(set(r["seconds_by_layout"]) == {"numpy", "aligned"}
               and r["bits_match_across_layouts"] for r in saved["rows"])


@pytest.mark.skipif(not shutil.which("bash") or BACKEND == "gpu",
                    reason="the refusal is for a machine without a GPU")
def test_device_check_refuses_a_machine_without_a_gpu(tmp_path):
    """A review: with a CPU-only jaxlib it compared the CPU with itself and printed "met"."""
    env = {k: v for k, v in os.environ.items() if k != "ALLOW_CPU"}
    done = subprocess.run(["bash", str(ROOT / "benchmarks" / "gpu_check.sh"), str(tmp_path)],
                          check=False, cwd=ROOT, env=env, capture_output=True, text=True)
    assert done.returncode == 2 and "JAX sees no GPU (backend: cpu)" in done.stderr
    assert not any(tmp_path.iterdir())


def test_throughput_script_keeps_other_cases_and_refuses_what_matches_nothing(tmp_path):
    """A run of some cases replaced the whole results file (the README's table lost its
    file); a --cases typo ran nothing and wrote an empty one. Each row keeps the copy bandwidth
    of its own run (the file's is the last run's)."""
    bench = _load("throughput")
    small = ["--min-log2", "10", "--max-log2", "10", "--no-numpy", "--out", str(tmp_path)]
    saved_at = tmp_path / f"throughput-{BACKEND}.json"
    assert bench.main(small + ["--cases", "squeeze(register)/uint8"]) == 0
    first = json.loads(saved_at.read_text())
    assert bench.main(small + ["--cases", "unsqueeze/uint16"]) == 0
    saved = json.loads(saved_at.read_text())
    assert {r["case"] for r in saved["rows"]} == {"squeeze(register)/uint8", "unsqueeze/uint16"}
    copy = {r["case"]: r["copy_gb_per_s"] for r in saved["rows"]}
    assert copy == {"squeeze(register)/uint8": first["copy_gb_per_s"],
                    "unsqueeze/uint16": saved["copy_gb_per_s"]}
    with pytest.raises(SystemExit):
        bench.main(small + ["--cases", "nosuch"])


def test_the_no_retrace_check_can_fail():
    """It jitted the call inside, so it held whatever the instruction did; an eager
    gather_datablock traced its fault search's cond again on every call."""
    bench = _load("throughput")
    case = next(c for c in bench.CASES if c.name == "gather_datablock/float32")
    assert bench.check_no_retrace(case)
    fresh = dataclasses.replace(case, ascjax=lambda **kw: jax.jit(lambda x: x + 1)(
        next(iter(kw.values()))))
    assert not bench.check_no_retrace(fresh)
