#!/usr/bin/env bash
# tune: the kernel tiling tuner checked by measurement (PLANNER_AND_TUNER.md §B6). `trex tune gemm` chooses the
# bf16 GEMM cache blocking (kc, mc, nc) for the products of one `bench`-preset training step (512 tokens) with its
# MILP, then times every blocking of a 120-point space on one core (best of 3 per shape) — the exhaustive
# reference — plus the kernel's default and the BLIS analytical blocking. Printed: the measured rank of the MILP's
# choice, its time over the fastest measured (acceptance: within 1 / 0.9 and in the top 5), and the default's
# time over the choice. OPENBLAS_CORETYPE / OPENBLAS_L2_SIZE unset (they do not touch this kernel).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${TREX_BUILD_DIR:-$here/../build}
env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE OMP_NUM_THREADS=1 "$build/trex" tune gemm --model bench --tokens 512 \
  --kc 128 256 320 384 512 768 --mc 32 64 128 256 512 --nc 256 512 1024 4096 --exhaustive --reps 3 2>/dev/null ||
  { echo "trex tune gemm failed"; exit 1; }
