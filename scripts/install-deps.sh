#!/usr/bin/env bash
# Installs exactly the Debian packages trex needs to build, test and run (idempotent).
# Runs `apt-get update` once, and only when something is missing. Pass --with-torch to also
# install the PyTorch twin's packages (only needed to regenerate fixtures or run the peer benchmarks).
# Everything the product needs comes from Debian. The references trex is checked against (Hugging Face
# tokenizers, gurobipy, ...) come from PyPI into a virtual environment outside the repo, built by
# scripts/reference-env.sh (python3-venv below) when a test or bench needs it; nothing comes from npm.
set -euo pipefail

packages=(
  build-essential cmake pkg-config git
  coinor-libcbc-dev coinor-libclp-dev coinor-libosi-dev coinor-libcoinutils-dev coinor-libcgl-dev
  coinor-libipopt-dev coinor-libbonmin-dev
  libglpk-dev
  coinor-cbc glpk-utils
  libopenblas-dev
  libopenmpi-dev openmpi-bin
  nlohmann-json3-dev libcli11-dev libcpp-httplib-dev libfmt-dev libspdlog-dev libtomlplusplus-dev
  libssl-dev libpcre2-dev zlib1g-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  python3 python3-numpy python3-pandas python3-venv
  python3-pulp
)
if [[ "${1:-}" == "--with-torch" ]]; then
  packages+=(python3-torch)
fi

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if ((${#missing[@]} == 0)); then
  echo "install-deps: all ${#packages[@]} packages present"
  exit 0
fi

echo "install-deps: installing ${#missing[@]} missing package(s): ${missing[*]}"
SUDO=""
if [[ $(id -u) -ne 0 ]]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "install-deps: done"
