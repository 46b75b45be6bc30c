"""Scale-out really run: two ``jax.distributed`` processes on localhost, two CPU host devices
each, give the bytes of a one-process run (issue 14 item 7).

Each worker process calls ``jax.distributed.initialize`` with a localhost coordinator and runs
``ascjax.run_bin`` (the engine behind ``ascjax run``): process p computes the p-th share of the
rows on its two devices and writes ``OUT.part<p>``; process 0 joins the parts (``engine``).
"""

import os
import socket
import subprocess
import sys

import numpy as np
import pytest

import ascjax

RNG = np.random.default_rng(14)

_WORKER = """
import json, sys, jax
coordinator, pid, d, tag = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
jax.distributed.initialize(coordinator_address=coordinator, num_processes=2, process_id=pid,
                           initialization_timeout=60)
import ascjax
assert jax.process_count() == 2 and len(jax.local_devices()) == 2, jax.devices()
runs = [
    ascjax.run_bin("reduce_sum_datablock", src=d + "/r_src.bin", dtype="half",
                   mask=d + "/r_mask.bin", out=d + f"/r{tag}.bin", chunk=8),
    ascjax.run_bin("asc_gather", src=d + "/g_src.bin", dtype="float", index=d + "/g_idx.bin",
                   mask=d + "/g_mask.bin", out=d + f"/g{tag}.bin", chunk=4),
    ascjax.run_bin("squeeze_and_storeunalign", src=d + "/s_src.bin", dtype="float",
                   pattern="PAT_M3", group=2, out=d + f"/s{tag}.bin", ub_out=d + f"/u{tag}.bin"),
]
print(json.dumps([[r.rows, r.devices, r.processes] for r in runs]))
jax.distributed.shutdown()
"""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("localhost", 0))
        return s.getsockname()[1]


def _inputs(d):
    # Every bit pattern: NaN, inf, -0 and subnormals included. Odd row counts, so the two
    # processes' shares differ in size and the last chunk of each is padded.
    RNG.integers(0, 1 << 16, (37, 128), dtype=np.uint32).astype(np.uint16).tofile(
        d / "r_src.bin")
    (RNG.random((37, 128)) < 0.8).astype(np.uint8).tofile(d / "r_mask.bin")
    RNG.integers(0, 1 << 32, 300, dtype=np.uint64).astype(np.uint32).tofile(d / "g_src.bin")
    RNG.integers(0, 300, (23, 64)).astype(np.uint32).tofile(d / "g_idx.bin")
    (RNG.random((23, 64)) < 0.7).astype(np.uint8).tofile(d / "g_mask.bin")
    RNG.integers(0, 1 << 32, (14, 64), dtype=np.uint64).astype(np.uint32).tofile(
        d / "s_src.bin")


def test_two_processes_give_the_bytes_of_one(tmp_path):
    _inputs(tmp_path)
    d = str(tmp_path)
    # One process, one device: the reference bytes (the bulk path's own bits are checked
    # against the register API in test_bulk.py).
    ascjax.run_bin("reduce_sum_datablock", src=d + "/r_src.bin", dtype="half",
                   mask=d + "/r_mask.bin", out=d + "/r1.bin")
    ascjax.run_bin("asc_gather", src=d + "/g_src.bin", dtype="float", index=d + "/g_idx.bin",
                   mask=d + "/g_mask.bin", out=d + "/g1.bin")
    ascjax.run_bin("squeeze_and_storeunalign", src=d + "/s_src.bin", dtype="float",
                   pattern="PAT_M3", group=2, out=d + "/s1.bin", ub_out=d + "/u1.bin")

    env = dict(os.environ, XLA_FLAGS="--xla_force_host_platform_device_count=2",
               JAX_PLATFORMS="cpu")
    coordinator = f"localhost:{_free_port()}"
    workers = [subprocess.Popen([sys.executable, "-c", _WORKER, coordinator, str(p), d, "2"],
                                env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True) for p in (0, 1)]
    results = []
    for w in workers:
        try:
            out, err = w.communicate(timeout=120)
        except subprocess.TimeoutExpired:
            for other in workers:
                other.kill()
            raise
        results.append((w.returncode, out, err))
    if any("initialize" in err and code != 0 for code, _, err in results) and not any(
            code == 0 for code, _, _ in results):
        errors = "\n".join(err[-2000:] for _, _, err in results)
        if "DEADLINE_EXCEEDED" in errors or "UNAVAILABLE" in errors:
            pytest.skip(f"jax.distributed could not start on localhost: {errors[-500:]}")
    for code, _, err in results:
        assert code == 0, err[-4000:]
    for _, out, _ in results:  # rows, local devices, processes of each run
        assert out.strip().splitlines()[-1] == "[[37, 2, 2], [23, 2, 2], [7, 2, 2]]"
    for name in ("r", "g", "s", "u"):
        one = (tmp_path / f"{name}1.bin").read_bytes()
        assert one and (tmp_path / f"{name}2.bin").read_bytes() == one, name
    # The parts are joined and removed; no temporary file is left behind.
    assert not [f for f in os.listdir(tmp_path) if ".part" in f or f.endswith(".tmp")]
