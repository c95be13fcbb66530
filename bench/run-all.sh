#!/usr/bin/env bash
# `make bench`: runs every benchmark script bench/*.bench.sh in name order. Each script runs trex and
# its peer in the same command and prints both figures and their ratio. Not a test: it never fails CI.
set -uo pipefail
BUILD_DIR=${1:-build}
export TREX_BUILD_DIR=$(cd "$BUILD_DIR" && pwd)
export TREX_BENCHMARKS=${TREX_BENCHMARKS:-$(cd "$(dirname "$0")/../.." && pwd)/shared/benchmarks}
cd "$(dirname "$0")"
shopt -s nullglob
for script in *.bench.sh; do
  echo "=== ${script%.bench.sh}"
  bash "$script" || echo "(benchmark $script exited with status $?)"
  echo
done
