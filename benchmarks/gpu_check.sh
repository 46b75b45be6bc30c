#!/usr/bin/env bash
# One prepared GPU check (issue 5): the throughput benchmark on the GPU up to 2^22 registers,
# then the same sizes on the host CPU, and the outputs' SHA-256s compared bit for bit.
# Usage on a GPU machine, from the repo root:  bash benchmarks/gpu_check.sh [OUT_DIR]
set -euo pipefail
out="${1:-benchmarks/results}"
export PYTHONUNBUFFERED=1
python benchmarks/throughput.py --min-log2 18 --max-log2 22 --step 4 --no-numpy \
    --cases reduce_sum_datablock/float32 reduce_sum_datablock/float16 gather squeeze pair \
    --out "$out/gpu"
JAX_PLATFORMS=cpu python benchmarks/throughput.py --min-log2 18 --max-log2 22 --step 4 \
    --no-numpy --cases reduce_sum_datablock/float32 reduce_sum_datablock/float16 gather \
    squeeze pair --out "$out/cpu" --compare-bits "$out/gpu/throughput-gpu.json"
python - "$out/gpu/throughput-gpu.json" <<'PY'
import json, sys
rows = json.load(open(sys.argv[1]))["rows"]
r = next(r for r in rows if r["case"] == "reduce_sum_datablock/float32" and r["log2_registers"] == 22)
print(f"float32 reduction at 2^22 registers: {r['vs_copy_bandwidth']:.2f} of the copy bandwidth "
      f"(target >= 0.50): {'met' if r['vs_copy_bandwidth'] >= 0.5 else 'MISSED'}")
PY
