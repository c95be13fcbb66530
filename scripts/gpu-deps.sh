#!/usr/bin/env bash
# scripts/gpu-deps.sh: downloads (apt-get download, on a machine with Debian's apt and network) the few packages
# the standalone GPU check needs beyond nvcc and CMake — OpenBLAS (library + cblas.h), its Fortran runtime,
# googletest's sources, fmt's and nlohmann-json's headers (src/model's config and checkpoints) — into
# build-gpudeps/debs/ (git-ignored; ≈ 13 MB). The GPU machine has no network: carry build-gpudeps/debs there (the
# run tool's `carry`; not build-gpudeps/root, 106 MB unpacked), and scripts/gpu-check.sh unpacks them with dpkg -x
# into build-gpudeps/root (never into /) and builds cmake/gpu-check against it.
set -euo pipefail
SRC=$(cd "$(dirname "$0")/.." && pwd)
DEST=$SRC/build-gpudeps/debs
mkdir -p "$DEST"
cd "$DEST"
pkgs="libopenblas0-pthread libopenblas-pthread-dev libgfortran5 libquadmath0 googletest libfmt-dev nlohmann-json3-dev"
apt-get download $pkgs 2>&1 | grep -v '^W: Download is performed unsandboxed' || true
for p in $pkgs; do
  ls ${p}_*.deb >/dev/null 2>&1 || { echo "gpu-deps: $p was not downloaded" >&2; exit 1; }
done
du -sh "$DEST"
