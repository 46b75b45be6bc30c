"""The bulk path's speed against what a kernel developer would otherwise run (issue 14).

Prints ratios against baselines measured in the same run, on the same files:

* ``compare``: ``ascjax.compare`` (every rule's figures) against the vendor samples'
  ``verify_result.py`` rule as a NumPy script (``np.fromfile`` both files, ``np.isclose(...,
  equal_nan=True)``, the error ratio), on 2^k half elements (default 2^24; the issue's size
  is ``--log2 27``, 256 MiB per file).
* ``run``: ``ascjax.run_bin("reduce_sum_datablock")`` in this process (start-up excluded,
  reported separately as ``ascjax --version``'s wall time) against NumPy reading the same src
  file and writing an output of the golden's size.

    python benchmarks/bulk_path.py [--log2 24] [--registers-log2 20] [--repeats 3]

It prints its figures (best of ``--repeats`` timed calls each); the committed ones are in
``benchmarks/results/issue14/bulk_path.txt`` (``--log2 27 --repeats 5``).
"""

from __future__ import annotations

import argparse
import os
import pathlib
import subprocess
import sys
import tempfile
import time

import numpy as np

import ascjax
from ascjax._src.cli import _int_in  # the CLI's own range-checked int


def best_of(fn, repeats: int, *, settle: bool = False) -> float:
    """The fastest of ``repeats`` calls (seconds): the machine's noise only slows a run.
    ``settle``: write the page cache's dirty pages out before each call (untimed), so no call
    pays for the writeback of an earlier one's output (or of the compare files)."""
    times = []
    for _ in range(repeats):
        if settle:
            os.sync()
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def vendor_isclose(output_path, golden_path, rtol=1e-3, atol=1e-3, error_tol=1e-3) -> bool:
    """verify_result.py's rule, as the samples write it."""
    output = np.fromfile(output_path, dtype=np.float16)
    golden = np.fromfile(golden_path, dtype=np.float16)
    different = np.isclose(output, golden, rtol=rtol, atol=atol, equal_nan=True)
    different_element_indexes = np.where(different == 0)[0]
    error_ratio = float(different_element_indexes.size) / golden.size
    return error_ratio <= error_tol


def bench_compare(tmp: pathlib.Path, log2: int, repeats: int) -> None:
    rng = np.random.default_rng(0)
    n = 1 << log2
    golden = rng.uniform(1, 2, n).astype(np.float16)
    output = golden.copy()
    bump = rng.random(n) < 0.0005                  # 1 ulp off on 0.05% of the elements
    output.view(np.uint16)[bump] += 1
    golden.tofile(tmp / "golden.bin")
    output.tofile(tmp / "output.bin")
    script = best_of(lambda: vendor_isclose(tmp / "output.bin", tmp / "golden.bin"), repeats)
    ours = best_of(lambda: ascjax.compare(str(tmp / "output.bin"), str(tmp / "golden.bin"),
                                          dtype="half"), repeats)
    report = ascjax.compare(str(tmp / "output.bin"), str(tmp / "golden.bin"), dtype="half")
    assert report.passed == vendor_isclose(tmp / "output.bin", tmp / "golden.bin")
    print(f"compare, 2^{log2} half elements: ascjax.compare {ours:.2f} s, the NumPy isclose "
          f"script {script:.2f} s: x{script / ours:.2f} the script's speed (target >= 3)")


def bench_run(tmp: pathlib.Path, log2: int, repeats: int) -> None:
    rng = np.random.default_rng(1)
    registers = 1 << log2
    src = rng.standard_normal((registers, 64)).astype(np.float32)
    src.tofile(tmp / "src.bin")
    out = tmp / "golden.bin"

    def numpy_copy():  # read the same bytes, write the golden's size
        np.fromfile(tmp / "src.bin", np.float32).tofile(out)

    def ours():
        ascjax.run_bin("reduce_sum_datablock", src=str(tmp / "src.bin"), dtype="float",
                       pattern="PAT_ALL", out=str(out))

    ours()  # compile once; a command-line run pays it every time (below, with start-up)
    base, mine = best_of(numpy_copy, repeats, settle=True), best_of(ours, repeats, settle=True)
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "ascjax", "--version"], check=True,
                   capture_output=True)
    startup = time.perf_counter() - start
    print(f"run reduce_sum_datablock, 2^{log2} float registers ({src.nbytes >> 20} MiB): "
          f"{mine:.2f} s in process, NumPy read+write {base:.2f} s: x{base / mine:.2f} "
          f"(target >= 0.5); process start-up and import {startup:.2f} s on top")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--log2", type=_int_in(4, 40), default=24,
                        help="compare: 2^k half elements (default 24)")
    parser.add_argument("--registers-log2", type=_int_in(1, 32), default=20,
                        help="run: 2^k float registers (default 20)")
    parser.add_argument("--repeats", type=_int_in(1, 1000), default=3,
                        help="timed calls of each, the best reported (default 3)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        bench_compare(pathlib.Path(tmp), args.log2, args.repeats)
        bench_run(pathlib.Path(tmp), args.registers_log2, args.repeats)
    return 0


if __name__ == "__main__":
    sys.exit(main())
