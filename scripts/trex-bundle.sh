#!/usr/bin/env bash
# scripts/trex-bundle.sh [BUILD]: the trex executable of a full CUDA build (default build/, brought up to date
# first) packed with the shared libraries it loads (ldd's closure, less glibc's own) into
# build-gpudeps/trex-bundle.tar.xz (git-ignored; about 20 MB), with the tree hash of the sources it was built from.
# Why: the GPU machine has none of trex's Debian packages (no COIN-OR, Open MPI, ...) and no network, so it cannot
# build the trex executable; scripts/gpu-check.sh, finding the bundle, runs the trainer and the decoder end to end
# with it (scripts/gpu-train-check.sh: `trex train` / `trex generate --device cuda` against `--device cpu`). The
# CUDA code in it is this machine's nvcc's, for sm_90 (cmake/Cuda.cmake); the CPU kernels are x86-64-v3.
# Carry it beside the debs: run(..., carry=["build-gpudeps/debs", "build-gpudeps/trex-bundle.tar.xz"]).
set -euo pipefail
SRC=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${1:-$SRC/build}
OUT=$SRC/build-gpudeps/trex-bundle.tar.xz
if ! grep -q '^TREX_CUDA:BOOL=ON' "$BUILD/CMakeCache.txt" 2>/dev/null ||
   ! grep -q '^CMAKE_CUDA_COMPILER:.*nvcc' "$BUILD/CMakeCache.txt"; then
  echo "trex-bundle: $BUILD is not a configured CUDA build (cmake -S . -B $BUILD with nvcc on PATH)" >&2
  exit 1
fi
cmake --build "$BUILD" --target trex -j "$(nproc)" >/dev/null
# a build whose trex has no CUDA backend would only test the CPU twice
if "$BUILD/trex" train --device cuda --config tiny --data /nonexistent --mode cpt --steps 1 --out /nonexistent/x 2>&1 |
   grep -q "built without the CUDA backend"; then
  echo "trex-bundle: $BUILD/trex was built without the CUDA backend" >&2
  exit 1
fi
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/bin" "$stage/lib"
cp "$BUILD/trex" "$stage/bin/"
if ldd "$BUILD/trex" | grep -q "not found"; then
  echo "trex-bundle: $BUILD/trex does not load here:" >&2
  ldd "$BUILD/trex" | grep "not found" >&2
  exit 1
fi
# every library but glibc's own (the GPU machine's newer glibc runs what glibc 2.36 built)
ldd "$BUILD/trex" | awk '$3 ~ /^\// { print $3 }' |
  grep -Ev '/(libc|libm|libpthread|libdl|librt|libresolv)\.so|/ld-linux' |
  while read -r lib; do cp -L "$lib" "$stage/lib/"; done
bash "$SRC/scripts/gpu-check.sh" --tree-hash >"$stage/TREE_HASH"
git -C "$SRC" rev-parse HEAD >"$stage/COMMIT" 2>/dev/null || echo unknown >"$stage/COMMIT"
mkdir -p "$(dirname "$OUT")"
tar -cJf "$OUT.tmp" -C "$stage" .
mv "$OUT.tmp" "$OUT"
echo "trex-bundle: $OUT ($(du -h "$OUT" | cut -f1); $(ls "$stage/lib" | wc -l) libraries; tree $(cat "$stage/TREE_HASH"))"
