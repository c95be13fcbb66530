#!/usr/bin/env bash
# scripts/gpu-check.sh: the one prepared check of the CUDA backend on a GPU machine (issue #24 point 8,
# docs/cuda.md). Configures and builds the CUDA targets (all cores), runs the gpu-labelled ctest suite (every
# CUDA op against its CPU reference, the device layer, the GPU model against the CPU model), the device CLI tests,
# the op perf mode, the whole-step parity of the tiny preset (20 steps, a resume across devices) and the 1B-preset
# bench, and writes a summary (markdown) naming the commit it ran on. Nothing here needs the network.
#
#   bash scripts/gpu-check.sh [--build DIR] [--out DIR] [--jobs N] [--quick]
#
# --build: build folder (default build-gpu, beside the sources); --out: where the summary and logs go (default
# the build folder; on the device machine pass "$OUT" so they come back); --quick: the perf mode's small shapes.
# Exit status: 0 every step passed on a GPU; 3 no usable GPU (tests skipped: nothing was proven); 1 a step failed.
set -u
SRC=$(cd "$(dirname "$0")/.." && pwd)
BUILD=$SRC/build-gpu
OUTDIR=
JOBS=$(nproc 2>/dev/null || echo 16)
QUICK=
FULL=
while [ $# -gt 0 ]; do
  case $1 in
    --build) BUILD=$2; shift 2 ;;
    --out) OUTDIR=$2; shift 2 ;;
    --jobs) JOBS=$2; shift 2 ;;
    --quick) QUICK=--quick; shift ;;
    --full) FULL=1; shift ;;
    *) echo "usage: $0 [--full] [--build DIR] [--out DIR] [--jobs N] [--quick]" >&2; exit 2 ;;
  esac
done
OUTDIR=${OUTDIR:-$BUILD}
mkdir -p "$BUILD" "$OUTDIR"
SUMMARY=$OUTDIR/gpu-check-summary.md
LOG=$OUTDIR/gpu-check.log
: >"$LOG"

# TREX_COMMIT=<hash>: the commit to name when the copy of the tree has no .git (the device run tool copies files)
commit=${TREX_COMMIT:-$(git -C "$SRC" rev-parse HEAD 2>/dev/null || echo "unknown (no git; pass TREX_COMMIT)")}
dirty=$(git -C "$SRC" status --porcelain 2>/dev/null | grep -vc '^??' || true)
start=$(date +%s)
status=0
{
  echo "# gpu-check $(date -u '+%Y-%m-%d %H:%M UTC')"
  echo
  echo "- commit: $commit$([ "${dirty:-0}" != 0 ] && echo " + $dirty modified tracked files (uncommitted)")"
  echo "- host: $(nproc) cores, $(uname -sr)"
  if command -v nvidia-smi >/dev/null 2>&1; then
    echo "- nvidia-smi: $(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1 | head -1)"
  else
    echo "- nvidia-smi: not found"
  fi
  echo "- nvcc: $(nvcc --version 2>/dev/null | tail -1 || echo 'not found')"
  echo
  echo "| step | result | seconds |"
  echo "|---|---|---:|"
} >"$SUMMARY"

# step NAME COMMAND...: runs COMMAND with its output in the log, adds a row to the summary; returns its status.
step() {
  local name=$1; shift
  local t0=$(date +%s) rc
  echo "=== $name: $*" >>"$LOG"
  "$@" >>"$LOG" 2>&1
  rc=$?
  local res=ok
  [ $rc -ne 0 ] && res="FAILED (rc $rc)"
  [ $rc -eq 3 ] && [ "$name" != build ] && res="no usable GPU (rc 3)"
  echo "| $name | $res | $(( $(date +%s) - t0 )) |" >>"$SUMMARY"
  echo "$name: $res"
  return $rc
}

finish() {
  {
    echo
    echo "Total: $(( $(date +%s) - start )) s. Log: $(basename "$LOG") beside this file."
  } >>"$SUMMARY"
  cat "$SUMMARY"
  exit "$1"
}

if [ -n "$FULL" ]; then
  step configure cmake -S "$SRC" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DTREX_CUDA=ON || finish 1
  if ! grep -q 'trex: CUDA backend ON' "$LOG"; then
    echo "| cuda | FAILED: configure found no CUDA compiler (see the log) | 0 |" >>"$SUMMARY"
    finish 1
  fi
  step build cmake --build "$BUILD" -j "$JOBS" --target trex_cuda_gpu_tests trex_cuda_op_perf trex_cuda_model_perf \
    trex_cuda_tests trex || finish 1
else
  DEPS=$SRC/build-gpudeps/root
  if ls "$SRC"/build-gpudeps/debs/*.deb >/dev/null 2>&1; then
    # dpkg -x where dpkg exists, else the .deb's data member through ar + tar (binutils is there with the compiler)
    unpack() {
      mkdir -p "$DEPS" || return 1
      for f in "$SRC"/build-gpudeps/debs/*.deb; do
        if command -v dpkg >/dev/null 2>&1; then dpkg -x "$f" "$DEPS" || return 1
        else (cd "$DEPS" && ar p "$f" data.tar.xz | tar -xJ) || return 1; fi
      done
    }
    step "unpack build-gpudeps" unpack || finish 1
    # the carried OpenBLAS and its Fortran runtime, for the binaries (and gtest's discovery run at build time)
    lib=$DEPS/usr/lib/x86_64-linux-gnu
    export LD_LIBRARY_PATH=$lib/openblas-pthread:$lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  fi
  step configure cmake -S "$SRC/cmake/gpu-check" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DTREX_GPU_DEPS="$DEPS" \
    ${TREX_GPU_DEPS_ONLY:+-DTREX_GPU_DEPS_ONLY=ON} || finish 1
  step build cmake --build "$BUILD" -j "$JOBS" --target trex_cuda_gpu_tests trex_cuda_op_perf trex_cuda_model_perf \
    || finish 1
fi

# ctest: the gpu label, then the device layer's CPU-side tests (the --device CLI answers on this machine).
ctest_gpu() { (cd "$BUILD" && ctest -L gpu --output-on-failure --no-tests=error -j 1); }
step "ctest -L gpu" ctest_gpu || status=1
ctest_line=$(grep -E 'tests passed|tests failed' "$LOG" | tail -1)
skipped=$(awk '/=== ctest -L gpu/{f=1} f && /\(Skipped\)/{n++} END{print n+0}' "$LOG")
echo "| gpu tests | ${ctest_line:-no summary line}; $skipped skipped | |" >>"$SUMMARY"
if [ -n "$FULL" ]; then
  ctest_dev() { (cd "$BUILD" && ctest -R '^Cuda(Device|OpCompare)\.' --output-on-failure --no-tests=error -j 1); }
  step "ctest device layer (CPU side)" ctest_dev || status=1
fi

perf() { "$BUILD/trex_cuda_op_perf" --out "$OUTDIR/op-perf.jsonl" $QUICK; }
step "op perf" perf
prc=$?
{
  echo
  echo "## op perf (trex_cuda_op_perf $QUICK; MFU references: 989 TFLOP/s nominal bf16, ~790 measured, MACHINE.md §9)"
  echo '```'
  awk '/=== op perf/{f=1; next} f && /^=== /{f=0} f' "$LOG"
  echo '```'
} >>"$SUMMARY"
# the GPU model: tiny-preset parity (one step, 20 AdamW steps with a resume across devices, the trainer's step, the
# decoder) and the 1B bench (training step MFU, decoder tokens/s)
model() { "$BUILD/trex_cuda_model_perf" --out "$OUTDIR/model-perf.jsonl" ${QUICK:+--steps 2 --seq 1024}; }
step "model parity + 1B bench" model
mrc=$?
{
  echo
  echo "## GPU model (trex_cuda_model_perf: tiny-preset parity against the CPU model and decoder; the 1B preset's bench)"
  echo '```'
  awk '/=== model parity/{f=1; next} f && /^=== /{f=0} f' "$LOG"
  echo '```'
} >>"$SUMMARY"
trc=0
if [ -n "$FULL" ]; then
  # end to end: trex train --device cuda against --device cpu, a CPU checkpoint resumed on the GPU, and trex
  # generate --device cuda against --device cpu
  train_check() { bash "$SRC/scripts/gpu-train-check.sh" "$BUILD/trex" "$BUILD/train-check"; }
  step "trex train / generate --device cuda vs cpu" train_check
  trc=$?
fi
if [ $prc -eq 3 ] || [ $mrc -eq 3 ] || [ $trc -eq 3 ] || [ "$skipped" -gt 0 ]; then
  echo >>"$SUMMARY"
  echo "**No usable GPU: the gpu tests were skipped, nothing about the GPU path was proven.**" >>"$SUMMARY"
  finish 3
fi
[ $prc -ne 0 ] && status=1
[ $mrc -ne 0 ] && status=1
[ $trc -ne 0 ] && status=1
finish $status
