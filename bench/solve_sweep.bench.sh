#!/usr/bin/env bash
# Solve sweep: trex (our reader + CLP/CBC, and GLPK) on the 344 B4O-Feasible reference LPs, then the
# peer in the same command: Debian's `cbc` command-line solver (coinor-cbc) on the same non-quadratic
# files, with the same 120 s limit. Prints per-file times, totals and the ratio.
set -uo pipefail
: "${TREX_BUILD_DIR:?}" "${TREX_BENCHMARKS:?}"
export OPENBLAS_NUM_THREADS=1
unset OPENBLAS_CORETYPE OPENBLAS_L2_SIZE
list=$(mktemp)
trap 'rm -f "$list"' EXIT

out=$("$TREX_BUILD_DIR/bench/bench_solve_sweep" "$TREX_BENCHMARKS" --list "$list") || { echo "$out"; exit 1; }
echo "$out"
trex_cbc=$(echo "$out" | awk '/^TOTAL cbc/ {print $5}')
trex_glpk=$(echo "$out" | awk '/^TOTAL glpk/ {print $5}')

if ! command -v cbc >/dev/null; then
  echo "peer: cbc command not found (install coinor-cbc: scripts/install-deps.sh)"
  exit 0
fi
echo "--- peer: cbc CLI $(cbc -quit 2>/dev/null | awk '/^Version/ {print $2}') (reads the LP itself with CoinLpIO)"
peer_total=0
n=0
while read -r f; do
  t0=$(date +%s.%N)
  res=$(timeout 130 cbc "$f" -sec 120 -solve -quit 2>&1 | awk '/^Result -|Objective value:/' | tr -s ' ' | tr '\n' ' ')
  t1=$(date +%s.%N)
  dt=$(awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.6f", b - a}')
  peer_total=$(awk -v a="$peer_total" -v b="$dt" 'BEGIN {printf "%.6f", a + b}')
  n=$((n + 1))
  printf "%-40s %8.3f  %s\n" "$(basename "$f")" "$dt" "$res"
done < "$list"
printf "PEER cbc CLI %d files: %.3f s (process start and LP parsing included)\n" "$n" "$peer_total"
printf "trex cbc %.3f s, trex glpk %.3f s, peer cbc CLI %.3f s\n" "$trex_cbc" "$trex_glpk" "$peer_total"
awk -v p="$peer_total" -v t="$trex_cbc" 'BEGIN {printf "ratio peer/trex-cbc: %.2fx\n", p / t}'
