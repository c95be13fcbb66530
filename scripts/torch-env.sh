#!/usr/bin/env bash
# Builds the current-PyTorch environment: a Python virtual environment, outside the repository, holding PyPI's
# torch (the second PyTorch peer of bench/train_throughput.bench.sh, beside Debian's python3-torch 1.13), every
# package at the exact version of scripts/torch-requirements.txt. Heavy (~5 GB with the nvidia-* wheels PyPI's
# torch depends on; it runs on the CPU without a GPU): `make test` never builds it. Idempotent: a complete
# environment for the same requirements and interpreter is reused at once; a half-built one (an interrupted run)
# is removed and rebuilt.
#
#   scripts/torch-env.sh [--wrapper FILE]
#     prints the environment's folder on its last line; --wrapper writes FILE, an executable that runs the
#     environment's python with its arguments.
# Where: $TREX_TORCH_ENV_CACHE (default ${XDG_CACHE_HOME:-$HOME/.cache}/trex), one folder per requirements hash.
# Interpreter: Debian's /usr/bin/python3 (python3-venv), or $TREX_TORCH_PYTHON_BASE.
set -euo pipefail
src=$(cd "$(dirname "$0")" && pwd)
req="$src/torch-requirements.txt"
NAME=torch-env
DESC="The current-PyTorch environment"
# shellcheck source=venv-common.sh
source "$src/venv-common.sh"
venv_parse_args "$@"
fail() { echo "error: torch environment: $*" >&2; exit 1; }

base=${TREX_TORCH_PYTHON_BASE:-/usr/bin/python3}
[[ -x "$base" ]] || fail "step 1/4 (interpreter): $base not found (Debian's python3; scripts/install-deps.sh installs it)"
"$base" -c 'import venv, ensurepip' 2>/dev/null \
  || fail "step 1/4 (interpreter): $base lacks the venv/ensurepip modules (Debian package python3-venv)"
[[ -r "$req" ]] || fail "step 1/4: $req is missing"

key=$( (cat "$req"; "$base" -c 'import sys; print(sys.version)') | sha256sum | cut -c1-12)
cache=${TREX_TORCH_ENV_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/trex}
env_dir="$cache/torch-env-$key"
mkdir -p "$cache" || fail "step 2/4 (cache folder): cannot create $cache"

venv_lock_or_reuse
echo "torch-env: building $env_dir from $(basename "$req") (first time only; downloads ~3 GB from PyPI)" >&2
"$base" -m venv "$env_dir" || fail "step 2/4 (venv): '$base -m venv $env_dir' failed"
"$env_dir/bin/python" -m pip install --quiet --disable-pip-version-check --no-input --no-deps --only-binary=:all: \
  -r "$req" >&2 || { rm -rf "$env_dir"; fail "step 3/4 (pip install -r $req): failed (is PyPI reachable? ~5 GB of disk free?)"; }
"$env_dir/bin/python" - <<'PY' || { rm -rf "$env_dir"; fail "step 4/4 (import check): torch does not import or run on the CPU"; }
import torch
a = torch.randn(64, 64)
with torch.autocast(device_type="cpu", dtype=torch.bfloat16):
    assert (a @ a).dtype == torch.bfloat16
print("torch-env: torch", torch.__version__, "runs on the CPU (", torch.get_num_threads(), "threads )")
PY
"$env_dir/bin/python" -m pip check >&2 \
  || { rm -rf "$env_dir"; fail "step 4/4 (pip check): the pinned set is not consistent; update $req"; }
touch "$env_dir/.complete"
venv_write_wrapper
echo "$env_dir"
