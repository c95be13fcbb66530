#!/usr/bin/env bash
# scripts/gpu-check.sh: the one prepared check of the CUDA backend on a GPU machine (issue #24 point 8,
# docs/cuda.md). Configures and builds the CUDA targets (all cores), runs the gpu-labelled ctest suite (every
# CUDA op against its CPU reference, the device layer, the GPU model against the CPU model), the device CLI tests,
# the op perf mode, the whole-step parity of the tiny preset (20 steps, a resume across devices) and the 1B-preset
# bench, and writes a summary (markdown) naming the commit it ran on. Nothing here needs the network. With the trex
# executable — built here by --full, or carried prebuilt as build-gpudeps/trex-bundle.tar.xz (scripts/trex-bundle.sh;
# its tree hash must be this tree's) — last the trainer and the decoder end to end (scripts/gpu-train-check.sh).
#
#   bash scripts/gpu-check.sh [--full] [--build DIR] [--out DIR] [--jobs N] [--quick] [--trex-bundle FILE]
#
# --build: build folder (default build-gpu, beside the sources); --out: where the summary and logs go (default
# the build folder; on the device machine pass "$OUT" so they come back); --quick: the perf mode's small shapes;
# --full: the whole project instead of cmake/gpu-check (a machine with every Debian package) and the trainer's
# end-to-end check. TREX_GPU_CHECK_SECONDS (default 500): the time every step after the build must end within
# (each is killed at what is left), so one hung kernel cannot take the device session and the summary.
# Exit status: 0 every step passed on a GPU; 3 no usable GPU (nothing was proven); 1 a step failed or timed out.
set -u
SRC=$(cd "$(dirname "$0")/.." && pwd)
# sha256 (16 digits) over the sources a GPU run builds from, sorted paths and contents: the same on the device's copy
# of the tree (no .git, no ignored files) as here, so it names exactly what ran, committed or not
tree_hash() {
  (cd "$SRC" && find src tests cmake scripts CMakeLists.txt -type f ! -path '*/node_modules/*' \
    ! -path '*/__pycache__/*' ! -name '*.pyc' ! -name '*.tmp' -print0 | LC_ALL=C sort -z | xargs -0 sha256sum |
    sha256sum | cut -c1-16)
}
BUILD=$SRC/build-gpu
OUTDIR=
JOBS=$(nproc 2>/dev/null || echo 16)
QUICK=
FULL=
BUNDLE=$SRC/build-gpudeps/trex-bundle.tar.xz
while [ $# -gt 0 ]; do
  case $1 in
    --trex-bundle) BUNDLE=$2; shift 2 ;;
    --build) BUILD=$2; shift 2 ;;
    --out) OUTDIR=$2; shift 2 ;;
    --jobs) JOBS=$2; shift 2 ;;
    --quick) QUICK=--quick; shift ;;
    --full) FULL=1; shift ;;
    --tree-hash) tree_hash; exit 0 ;;
    *) echo "usage: $0 [--full] [--build DIR] [--out DIR] [--jobs N] [--quick] [--trex-bundle FILE] | --tree-hash" >&2
       exit 2 ;;
  esac
done
OUTDIR=${OUTDIR:-$BUILD}
BUDGET=${TREX_GPU_CHECK_SECONDS:-500}
# the toolkit's usual place, where the image does not put nvcc on PATH
command -v nvcc >/dev/null 2>&1 || { [ -x /usr/local/cuda/bin/nvcc ] && export PATH=/usr/local/cuda/bin:$PATH; }
mkdir -p "$BUILD" "$OUTDIR"
SUMMARY=$OUTDIR/gpu-check-summary.md
LOG=$OUTDIR/gpu-check.log
: >"$LOG"

# TREX_COMMIT=<hash>: the commit to name when the copy of the tree has no .git (the device run tool copies files)
commit=${TREX_COMMIT:-$(git -C "$SRC" rev-parse HEAD 2>/dev/null || echo "unknown (no git; pass TREX_COMMIT)")}
dirty=$(git -C "$SRC" status --porcelain 2>/dev/null | grep -vc '^??' || true)
# what the copy holds, whatever the commit says: compare with `bash scripts/gpu-check.sh --tree-hash` where it came from
tree=$(tree_hash)
start=$(date +%s)
status=0
ROWS=$OUTDIR/.gpu-check-rows
: >"$ROWS"
{
  echo "# gpu-check $(date -u '+%Y-%m-%d %H:%M UTC')"
  echo
  echo "- commit: $commit$([ "${dirty:-0}" != 0 ] && echo " + $dirty modified tracked files (uncommitted)")"
  echo "- tree: sha256 $tree of src, tests, cmake, scripts and the CMakeLists (scripts/gpu-check.sh --tree-hash)"
  echo "- host: $(nproc) cores, $(uname -sr); $(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | sed 's/.*: //'),
  AVX512_BF16 $(grep -q avx512_bf16 /proc/cpuinfo 2>/dev/null && echo yes || echo 'no (the CPU side of the bf16 checks is skipped)')"
  if command -v nvidia-smi >/dev/null 2>&1; then
    echo "- nvidia-smi: $(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1 | head -1)"
  else
    echo "- nvidia-smi: not found"
  fi
  echo "- nvcc: $(command -v nvcc >/dev/null 2>&1 && nvcc --version | tail -1 || echo 'not found')"
} >"$SUMMARY"

# step NAME COMMAND...: runs COMMAND with its output in the log, adds a row to the step table; returns its status.
# The device programs answer 3 when there is no usable GPU; 124 / 137 is timeout's (left's budget spent).
step() {
  local name=$1; shift
  local t0 rc res=ok
  t0=$(date +%s)
  echo "=== $name: $*" >>"$LOG"
  "$@" >>"$LOG" 2>&1
  rc=$?
  if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then res="TIMED OUT (rc $rc, the budget of $BUDGET s spent)"
  elif [ $rc -eq 3 ] && [ "${GPU_STEP:-}" = 1 ]; then res="no usable GPU (rc 3)"
  elif [ $rc -ne 0 ]; then res="FAILED (rc $rc)"; fi
  echo "| $name | $res | $(( $(date +%s) - t0 )) |" >>"$ROWS"
  echo "$name: $res"
  return $rc
}
# seconds left of the budget (at least 10: a step always gets to start and report)
left() {
  local l=$(( BUDGET - ($(date +%s) - start) ))
  [ $l -lt 10 ] && l=10
  echo $l
}

# The step table last: the summary's end is what a truncated reply still shows.
finish() {
  {
    echo
    echo "| step | result | seconds |"
    echo "|---|---|---:|"
    cat "$ROWS"
    echo
    echo "Total: $(( $(date +%s) - start )) s. Logs beside this file: $(basename "$LOG"), gpu-ctest.log (every gpu" \
      "test's output, the parity figures included), op-perf.jsonl, model-perf.jsonl."
  } >>"$SUMMARY"
  rm -f "$ROWS"
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

# ctest: the gpu label (each test's own TIMEOUT, tests/cuda/gpu.cmake, and the whole within the budget), then the
# device layer's CPU-side tests (the --device CLI answers on this machine). Every test's output comes back.
ctest_gpu() { (cd "$BUILD" && timeout -k 10 "$(left)" ctest -L gpu --output-on-failure --no-tests=error -j 1); }
step "ctest -L gpu" ctest_gpu || status=1
cp "$BUILD/Testing/Temporary/LastTest.log" "$OUTDIR/gpu-ctest.log" 2>/dev/null || true
ctest_line=$(awk '/=== ctest -L gpu/{f=1} f && /tests passed|tests failed/{l=$0} END{print l}' "$LOG")
ctest_total=$(awk '/=== ctest -L gpu/{f=1} f && /Test +#[0-9]+:/{n++} END{print n+0}' "$LOG")
skipped=$(awk '/=== ctest -L gpu/{f=1} f && /\(Skipped\)/{n++} END{print n+0}' "$LOG")
echo "| gpu tests | ${ctest_line:-no summary line}; $skipped of $ctest_total skipped | |" >>"$ROWS"
if [ -n "$FULL" ]; then
  ctest_dev() {
    (cd "$BUILD" && timeout -k 10 "$(left)" ctest -R '^Cuda(Device|OpCompare)\.' --output-on-failure --no-tests=error -j 1)
  }
  step "ctest device layer (CPU side)" ctest_dev || status=1
fi

perf() { timeout -k 10 "$(left)" "$BUILD/trex_cuda_op_perf" --out "$OUTDIR/op-perf.jsonl" $QUICK; }
GPU_STEP=1 step "op perf" perf
prc=$?
{
  echo
  echo "## op perf (trex_cuda_op_perf $QUICK; MFU references: 989 TFLOP/s nominal bf16, ~790 measured, MACHINE.md §9)"
  echo '```'
  awk '/=== op perf/{f=1; next} f && /^=== /{f=0} f' "$LOG"
  echo '```'
} >>"$SUMMARY"
# the GPU model's 1B bench (training step MFU, decoder tokens/s); its tiny-preset parity against the CPU model and
# decoder ran above as the CudaModel / CudaDecoder gpu tests (their figures in gpu-ctest.log)
model() {
  timeout -k 10 "$(left)" "$BUILD/trex_cuda_model_perf" --bench --out "$OUTDIR/model-perf.jsonl" \
    ${QUICK:+--steps 2 --seq 1024}
}
GPU_STEP=1 step "1B bench" model
mrc=$?
{
  echo
  echo "## GPU model (trex_cuda_model_perf --bench: the 1B preset's training step and decoder)"
  echo '```'
  awk '/=== 1B bench/{f=1; next} f && /^=== /{f=0} f' "$LOG"
  echo '```'
} >>"$SUMMARY"
trc=0
TREX_BIN=
if [ -n "$FULL" ]; then
  TREX_BIN=$BUILD/trex
elif [ -f "$BUNDLE" ]; then
  # the carried executable: unpacked beside the build, refused when built from other sources, run through a wrapper
  # that puts its libraries (and the toolkit's, for cuBLASLt and NCCL, opened at run time) on the loader's path
  bundle() {
    local d=$BUILD/trex-bundle cuda_bin libs=
    rm -rf "$d" && mkdir -p "$d" && tar -xJf "$BUNDLE" -C "$d" || return 1
    if [ "$(cat "$d/TREE_HASH" 2>/dev/null)" != "$tree" ]; then
      echo "the bundle was built from tree $(cat "$d/TREE_HASH" 2>/dev/null) (commit $(cat "$d/COMMIT" 2>/dev/null)), this is" \
        "tree $tree: run bash scripts/trex-bundle.sh on these sources"
      return 1
    fi
    cuda_bin=$(dirname "$(command -v nvcc 2>/dev/null || echo /usr/local/cuda/bin/nvcc)")
    for l in "$cuda_bin/../lib64" "$cuda_bin/../targets/x86_64-linux/lib"; do
      [ -d "$l" ] && libs=$libs:$(cd "$l" && pwd)
    done
    {
      echo '#!/usr/bin/env bash'
      echo 'D=$(dirname "$(readlink -f "$0")")'
      echo "export LD_LIBRARY_PATH=\"\$D/lib$libs\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}\""
      echo 'exec "$D/bin/trex" "$@"'
    } >"$d/trex" && chmod +x "$d/trex" || return 1
    if command -v ldd >/dev/null 2>&1; then
      (export LD_LIBRARY_PATH="$d/lib$libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"; ldd "$d/bin/trex") | tee "$d/ldd.txt"
      if grep -q "not found" "$d/ldd.txt"; then echo "the bundled trex lacks libraries here"; return 1; fi
    fi
    "$d/trex" --version
  }
  if step "unpack trex bundle" bundle; then
    TREX_BIN=$BUILD/trex-bundle/trex
  else
    status=1
    { echo; echo "## trex bundle: not usable"; echo '```'
      awk '/^=== unpack trex bundle/{f=1; next} f && /^=== /{f=0} f' "$LOG" | grep -v '=> /' | tail -20; echo '```'
    } >>"$SUMMARY"
  fi
else
  echo "| trex train / generate --device cuda vs cpu | not run: no trex executable (no --full, no $BUNDLE:" \
    "bash scripts/trex-bundle.sh where trex builds, and carry it) | |" >>"$ROWS"
fi
if [ -n "$TREX_BIN" ]; then
  # end to end: trex train --device cuda against --device cpu, a CPU checkpoint resumed on the GPU, and trex
  # generate --device cuda against --device cpu
  train_check() { timeout -k 10 "$(left)" bash "$SRC/scripts/gpu-train-check.sh" "$TREX_BIN" "$BUILD/train-check"; }
  GPU_STEP=1 step "trex train / generate --device cuda vs cpu" train_check
  trc=$?
  {
    echo
    echo "## trex train / generate --device cuda vs --device cpu (scripts/gpu-train-check.sh; every line in the log)"
    echo '```'
    awk '/^=== trex train \/ generate/{f=1; next} f && /^=== /{f=0} f' "$LOG" |
      grep -E 'worst rel|generate record|not run|failed|Error|error' | head -40
    echo '```'
  } >>"$SUMMARY"
fi
# A failure anywhere is a failure (1), also when some tests were skipped; "no usable GPU" (3) only when the device
# programs said so and nothing failed. Skips on a working GPU (the bf16 checks on a CPU without AVX512_BF16) are
# counted in the table, not hidden.
for rc in $prc $mrc $trc; do
  [ "$rc" -ne 0 ] && [ "$rc" -ne 3 ] && status=1
done
if [ $status -eq 0 ] && { [ $prc -eq 3 ] || [ $mrc -eq 3 ] || [ $trc -eq 3 ]; }; then
  echo >>"$SUMMARY"
  echo "**No usable GPU: the gpu tests were skipped, nothing about the GPU path was proven.**" >>"$SUMMARY"
  finish 3
fi
finish $status
