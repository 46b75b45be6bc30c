#!/usr/bin/env bash
# One prepared GPU check (issue 5): the throughput benchmark on the GPU up to 2^22 registers,
# then the same sizes on the host CPU, and the outputs' SHA-256s compared bit for bit.
# Usage on a GPU machine, from the repo root:  bash benchmarks/gpu_check.sh [OUT_DIR]
# MIN_LOG2 / MAX_LOG2 / STEP override the sizes (e.g. MIN_LOG2=10 MAX_LOG2=10 ALLOW_CPU=1 for a
# smoke test on a machine without a GPU).
set -euo pipefail
out="${1:-benchmarks/results}"
sizes=(--min-log2 "${MIN_LOG2:-18}" --max-log2 "${MAX_LOG2:-22}" --step "${STEP:-4}")
# CASES overrides the case-name substrings (e.g. CASES="asc_reduce reduce_repeat").
read -r -a case_names <<< "${CASES:-reduce_sum_datablock/float32 reduce_sum_datablock/float16 gather squeeze pair}"
cases=(--cases "${case_names[@]}")
export PYTHONUNBUFFERED=1
# A CPU-only jaxlib (what `pip install .` gives) would compare the CPU with itself and pass.
backend=$(python -c "import jax; print(jax.default_backend())")
if [[ "$backend" != gpu && "${ALLOW_CPU:-0}" != 1 ]]; then
    echo "gpu_check: JAX sees no GPU (backend: $backend). Install a CUDA jaxlib first" \
         "(pip install -U 'jax[cuda12]'), or set ALLOW_CPU=1 to smoke-test the script." >&2
    exit 2
fi
python benchmarks/throughput.py "${sizes[@]}" --no-numpy "${cases[@]}" --out "$out/device"
device_json=$(ls -t "$out"/device/throughput-*.json | head -n 1)  # this run's, by backend name
JAX_PLATFORMS=cpu python benchmarks/throughput.py "${sizes[@]}" --no-numpy "${cases[@]}" \
    --out "$out/cpu" --compare-bits "$device_json"
python - "$device_json" <<'PY'
import json, sys
result = json.load(open(sys.argv[1]))
rows = [r for r in result["rows"] if r["case"] == "reduce_sum_datablock/float32"]
if rows:  # the issue-5 target, where this run measured it
    r = max(rows, key=lambda r: r["log2_registers"])  # the largest batch measured
    print(f"{result['backend']} ({result['devices'][0]}): float32 reduction at "
          f"2^{r['log2_registers']} registers runs at {r['vs_copy_bandwidth']:.3f} of the copy "
          f"bandwidth ({result['copy_gb_per_s']:.0f} GB/s; target >= 0.50): "
          f"{'met' if r['vs_copy_bandwidth'] >= 0.5 else 'MISSED'}")
PY
