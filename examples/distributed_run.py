"""Bulk goldens on several hosts: ``jax.distributed`` + ``ascjax.run_bin``.

Start one process per host, with the same arguments except ``--process-id``::

    python examples/distributed_run.py --coordinator host0:12355 --num-processes 2 \
        --process-id 0 --src src.bin --dtype half --out dst.bin      # on host0
    python examples/distributed_run.py --coordinator host0:12355 --num-processes 2 \
        --process-id 1 --src src.bin --dtype half --out dst.bin      # on host1

``src.bin`` must be readable by every process (a shared file system) and ``dst.bin``'s
directory writable by all. Process p computes the p-th contiguous share of the registers on
its own local devices (sharded over them) and writes ``dst.bin.part<p>``; process 0 joins the
parts into ``dst.bin`` once all are written. Registers are independent, so the bits are
those of a one-process run.

Without ``--src`` the script makes a demo input in a temporary directory and checks the
result bit for bit against a plain ``ascjax.reduce_sum_datablock`` call; with one process it
runs on one machine::

    python examples/distributed_run.py --coordinator localhost:12355 --num-processes 1 \
        --process-id 0
"""

from __future__ import annotations

import argparse
import os
import tempfile

import jax
import numpy as np

import ascjax


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--coordinator", required=True, help="HOST:PORT of process 0")
    p.add_argument("--num-processes", type=int, required=True)
    p.add_argument("--process-id", type=int, required=True)
    p.add_argument("--src", help="src registers (.bin); default: a demo input")
    p.add_argument("--dtype", default="half")
    p.add_argument("--out", help="output .bin (default: next to the demo input)")
    p.add_argument("--registers", type=int, default=4096, help="demo input size")
    args = p.parse_args(argv)

    jax.distributed.initialize(coordinator_address=args.coordinator,
                               num_processes=args.num_processes, process_id=args.process_id)
    demo = args.src is None
    port = args.coordinator.rsplit(":", 1)[-1]  # the same name in every process
    src = args.src or os.path.join(tempfile.gettempdir(), f"ascjax_demo_{port}.bin")
    out = args.out or src + ".out"
    if demo:  # every process writes the same deterministic bytes
        rng = np.random.default_rng(0)
        x = rng.standard_normal((args.registers, 128)).astype(np.float16)
        ascjax.write_bin(src, x)

    summary = ascjax.run_bin("reduce_sum_datablock", src=src, dtype=args.dtype, out=out)
    print(f"process {jax.process_index()}/{jax.process_count()}: {summary}")
    ok = True
    if demo and jax.process_index() == 0:
        golden = np.asarray(ascjax.reduce_sum_datablock(x, ascjax.create_mask("PAT_ALL", "half")))
        report = ascjax.compare(out, golden, dtype="half", bit_exact=True)
        ok = report.passed
        print(f"bit-exact against one reduce_sum_datablock call: {ok}")
        for path in (src, out):  # run_bin returns after every process is done with them
            os.unlink(path)
    jax.distributed.shutdown()
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
