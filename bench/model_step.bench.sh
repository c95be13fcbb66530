#!/usr/bin/env bash
# model_step: one forward+backward step of the `bench` preset (batch 8 x 256 tokens) in trex and in the PyTorch
# twin (tests/reference/model/twin.py) on the same config and the same tokens, in the same command. Both run with
# OPENBLAS_CORETYPE / OPENBLAS_L2_SIZE unset, OpenBLAS 2 threads, and the glibc malloc tunables of MACHINE.md §3;
# trex uses OpenMP 2 threads with passive wait (it drives OpenBLAS single-threaded and spreads its GEMMs over the
# OpenMP threads), torch 1 intra-op thread (its best FP32 setting, MACHINE.md §7). Prints both figures, the ratio,
# trex's CPU seconds per step (less noisy than wall time on a shared machine) and the machine load.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${TREX_BUILD_DIR:-$here/../build}
steps=${MODEL_STEP_STEPS:-3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
common=(env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE OPENBLAS_NUM_THREADS=2
        GLIBC_TUNABLES=glibc.malloc.mmap_max=0:glibc.malloc.trim_threshold=17179869184:glibc.malloc.top_pad=268435456)
trex_json=$("${common[@]}" OMP_NUM_THREADS=2 OMP_WAIT_POLICY=passive \
  "$build/bench/bench_model_step" --preset bench --batch 8 --seq 256 --steps "$steps" --warmup 1 --out-dir "$tmp") || {
  echo "bench_model_step failed"; exit 1; }
echo "trex : $trex_json"
twin_json=$("${common[@]}" /usr/bin/python3 "$here/../tests/reference/model/twin_bench.py" --config "$tmp/config.json" \
  --tokens "$tmp/tokens.bin" --batch 8 --seq 256 --steps "$steps" --warmup 1 --threads 1) || {
  echo "twin benchmark failed"; exit 1; }
echo "torch: $twin_json"
echo "machine load (1/5/15 min): $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores"
/usr/bin/python3 - "$trex_json" "$twin_json" <<'PY'
import json, sys
t, p = json.loads(sys.argv[1]), json.loads(sys.argv[2])
print(f"model_step bench preset B=8 T=256 fwd+bwd: trex {t['step_ms']:.1f} ms ({t['tok_per_s']:.0f} tok/s, "
      f"{t['cpu_ms']:.0f} CPU ms), torch twin {p['step_ms']:.1f} ms ({p['tok_per_s']:.0f} tok/s), "
      f"speed-up x{p['step_ms'] / t['step_ms']:.2f}")
PY
