#!/usr/bin/env bash
# dist: data-parallel training of the `bench` preset with `trex dist-train` (synthetic batches, global batch 8 x
# 256 tokens, 6 steps, warm steps timed). Figures: 2 ranks x 1 thread vs 1 rank x 2 threads (same global batch,
# ratio printed), and the exposed-communication share of the 2-rank step with the bucketed all-reduce overlapped
# with backward vs blocking after backward (--no-overlap), and the 2-rank expert-parallel step (--ep 2: token
# dispatch/combine overlapped with the shared expert, vs --no-overlap) with its exposed-communication share, and
# the 2-stage pipeline (--pp 2, 1F1B over 4 micro-batches of 2 rows) with its bubble and exposed-communication
# shares (its 1-rank peer accumulates the same 4 micro-batches), and each layout's per-rank memory (parameters +
# gradients + optimizer state: ep 2 holds half the routed experts, pp 2 its stage's layers, dp 2 half the
# optimizer state under ZeRO-1). Both sides run with the glibc malloc tunables of
# MACHINE.md §3-§4 (no MPI large-message cliff) and OPENBLAS_CORETYPE / OPENBLAS_L2_SIZE unset.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${TREX_BUILD_DIR:-$here/../build}
steps=${DIST_BENCH_STEPS:-6}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
tun=glibc.malloc.mmap_max=0:glibc.malloc.trim_threshold=17179869184
args=(dist-train --config bench --global-batch 8 --seq-len 256 --steps "$steps" --watchdog 600)
one=$(env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE GLIBC_TUNABLES=$tun OMP_NUM_THREADS=2 OMP_WAIT_POLICY=passive \
  OPENBLAS_NUM_THREADS=1 "$build/trex" "${args[@]}") || { echo "1-rank run failed"; exit 1; }
echo "1 rank x 2 threads          : $one"
two=$(env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE mpirun -np 2 --oversubscribe -x GLIBC_TUNABLES=$tun \
  -x OMP_NUM_THREADS=1 -x OPENBLAS_NUM_THREADS=1 "$build/trex" "${args[@]}" --dp 2) || { echo "2-rank run failed"; exit 1; }
echo "2 ranks x 1 thread, overlap : $two"
blk=$(env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE mpirun -np 2 --oversubscribe -x GLIBC_TUNABLES=$tun \
  -x OMP_NUM_THREADS=1 -x OPENBLAS_NUM_THREADS=1 "$build/trex" "${args[@]}" --dp 2 --no-overlap) || {
  echo "2-rank blocking run failed"; exit 1; }
echo "2 ranks x 1 thread, blocking: $blk"
ep=$(env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE mpirun -np 2 --oversubscribe -x GLIBC_TUNABLES=$tun \
  -x OMP_NUM_THREADS=1 -x OPENBLAS_NUM_THREADS=1 "$build/trex" "${args[@]}" --ep 2) || {
  echo "2-rank expert-parallel run failed"; exit 1; }
echo "2 ranks x 1 thread, ep 2    : $ep"
epb=$(env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE mpirun -np 2 --oversubscribe -x GLIBC_TUNABLES=$tun \
  -x OMP_NUM_THREADS=1 -x OPENBLAS_NUM_THREADS=1 "$build/trex" "${args[@]}" --ep 2 --no-overlap) || {
  echo "2-rank expert-parallel blocking run failed"; exit 1; }
echo "2 ranks x 1 thread, ep 2, blocking: $epb"
onem=$(env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE GLIBC_TUNABLES=$tun OMP_NUM_THREADS=2 OMP_WAIT_POLICY=passive \
  OPENBLAS_NUM_THREADS=1 "$build/trex" "${args[@]}" --micro-batches 4) || { echo "1-rank micro-batched run failed"; exit 1; }
echo "1 rank x 2 threads, 4 micro-batches: $onem"
pp=$(env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE mpirun -np 2 --oversubscribe -x GLIBC_TUNABLES=$tun \
  -x OMP_NUM_THREADS=1 -x OPENBLAS_NUM_THREADS=1 "$build/trex" "${args[@]}" --pp 2 --micro-batches 4) || {
  echo "2-stage pipeline run failed"; exit 1; }
echo "2 ranks x 1 thread, pp 2    : $pp"
/usr/bin/python3 - "$one" "$two" "$blk" "$ep" "$epb" "$onem" "$pp" <<'PY'
import json, sys
one, two, blk, ep, epb, onem, pp = (json.loads(a.strip().splitlines()[-1]) for a in sys.argv[1:8])
print(f"warm step: 1 rank x 2 threads {one['warm_step_seconds']:.3f} s, 2 ranks x 1 thread "
      f"{two['warm_step_seconds']:.3f} s; ratio (2 ranks / 1 rank) {two['warm_step_seconds'] / one['warm_step_seconds']:.2f}")
print(f"exposed communication share of the 2-rank step: overlap {100 * two['comm_exposed_share']:.1f}%, "
      f"blocking {100 * blk['comm_exposed_share']:.1f}%")
print(f"expert parallel (ep 2) warm step {ep['warm_step_seconds']:.3f} s "
      f"(ratio to 1 rank x 2 threads {ep['warm_step_seconds'] / one['warm_step_seconds']:.2f}), "
      f"exposed communication share: overlap {100 * ep['comm_exposed_share']:.1f}%, "
      f"blocking {100 * epb['comm_exposed_share']:.1f}%")
print(f"pipeline (pp 2, 4 micro-batches, stages {pp['stages']}): warm step {pp['warm_step_seconds']:.3f} s vs "
      f"1 rank x 2 threads with the same micro-batches {onem['warm_step_seconds']:.3f} s, ratio "
      f"{pp['warm_step_seconds'] / onem['warm_step_seconds']:.2f}; bubble {100 * pp['bubble_share']:.1f}%, "
      f"exposed communication {100 * pp['comm_exposed_share']:.1f}% of the step")
def mib(x): return x / 1048576
print("per-rank memory, MiB (parameters + gradients + optimizer state = total):")
for name, r in (("1 rank", one), ("dp 2 (ZeRO-1)", two), ("dp 2, no overlap", blk), ("ep 2", ep), ("pp 2", pp)):
    print(f"  {name:18s}: " + "; ".join(
        f"rank {m['rank']} {mib(m['param_bytes']):.1f} + {mib(m['grad_bytes']):.1f} + {mib(m['optimizer_bytes']):.1f}"
        f" = {mib(m['total_bytes']):.1f}" for m in r["memory_per_rank"]))
PY
