#!/usr/bin/env bash
# plan: the parallelism planner's prediction against a measurement on this machine (PLANNER_AND_TUNER.md §A7
# acceptance iv). For the three 2-rank layouts `trex dist-train` runs — data parallel (dp 2, ZeRO-1), expert
# parallel (ep 2) and a 2-stage pipeline (pp 2, 4 micro-batches) — `trex plan --cluster cpu2 --explain` predicts
# the step time, `dist-train` measures it (the `bench` preset, global batch 8 x 256 tokens, warm steps, the
# same settings as dist.bench.sh), and the script prints predicted / measured per layout and whether the planner
# orders the layouts as the machine does. Then the time the planner takes to search the DeepSeek-V4-Pro space on
# 512 CloudMatrix384 dies. Both sides run with OPENBLAS_CORETYPE / OPENBLAS_L2_SIZE unset.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${TREX_BUILD_DIR:-$here/../build}
config=${PLAN_BENCH_CONFIG:-bench}
steps=${PLAN_BENCH_STEPS:-6}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
tun=glibc.malloc.mmap_max=0:glibc.malloc.trim_threshold=17179869184
args=(dist-train --config "$config" --global-batch 8 --seq-len 256 --steps "$steps" --watchdog 600)
plan=(plan --model "$config" --cluster cpu2 --ranks 2 --gbs 8 --seq 256 --tp 1 --vpp 1 --etp 1 --recompute none
      --optimizer sharded --explain --json)
declare -A predicted measured
for layout in dp ep pp; do
  case $layout in
    dp) popt=(--pp 1 --ep 1 --mbs 4); dopt=(--dp 2) ;;
    ep) popt=(--pp 1 --ep 2 --mbs 4); dopt=(--ep 2) ;;
    pp) popt=(--pp 2 --ep 1 --mbs 2); dopt=(--pp 2 --micro-batches 4) ;;
  esac
  predicted[$layout]=$("$build/trex" "${plan[@]}" "${popt[@]}" |
    /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["ranked"][0]["step_s"])') || {
    echo "trex plan failed for $layout"; exit 1; }
  out=$(env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE mpirun -np 2 --oversubscribe -x GLIBC_TUNABLES=$tun \
    -x OMP_NUM_THREADS=1 -x OPENBLAS_NUM_THREADS=1 "$build/trex" "${args[@]}" "${dopt[@]}" 2>/dev/null) || {
    echo "dist-train failed for $layout"; exit 1; }
  measured[$layout]=$(echo "$out" | tail -1 | /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["warm_step_seconds"])')
done
/usr/bin/python3 - "${predicted[dp]}" "${measured[dp]}" "${predicted[ep]}" "${measured[ep]}" \
  "${predicted[pp]}" "${measured[pp]}" <<'PY'
import sys
v = list(map(float, sys.argv[1:]))
rows = {"dp 2": (v[0], v[1]), "ep 2": (v[2], v[3]), "pp 2, 4 micro-batches": (v[4], v[5])}
print(f"{'layout':<24}{'predicted s':>12}{'measured s':>12}{'predicted / measured':>22}")
for name, (p, m) in rows.items():
    print(f"{name:<24}{p:>12.3f}{m:>12.3f}{p / m:>22.2f}")
by_p = sorted(rows, key=lambda k: rows[k][0])
by_m = sorted(rows, key=lambda k: rows[k][1])
print("order predicted:", " < ".join(by_p))
print("order measured :", " < ".join(by_m), "(same)" if by_p == by_m else "(DIFFERENT)")
PY
start=$(date +%s.%N)
"$build/trex" plan --model "$here/../configs/deepseek-v4-pro.json" --cluster cm384 --ranks 512 --gbs 1024 \
  --top 1 --milp-top 1 | head -3
end=$(date +%s.%N)
echo "planner search, DeepSeek-V4-Pro on 512 dies (all configurations + one MILP): $(echo "$end - $start" | bc) s wall"
