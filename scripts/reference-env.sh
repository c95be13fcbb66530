#!/usr/bin/env bash
# Builds the reference environment: a Python virtual environment, outside the repository, holding the external
# implementations trex is checked against (Hugging Face tokenizers, gurobipy, coptpy, numpy, safetensors), every package
# at the exact version of scripts/reference-requirements.txt. Idempotent: a complete environment for the same
# requirements and interpreter is reused at once; a half-built one (an interrupted run) is removed and rebuilt.
# The product (build, `make run`) never needs it; tests and benches that do get it through the ctest fixture
# reference_env (tests/reference/env.cmake) or by running this script.
#
#   scripts/reference-env.sh [--wrapper FILE]
#     prints the environment's folder on its last line; --wrapper writes FILE, an executable that runs the
#     environment's python with its arguments (what the tests call).
# Where: $TREX_REFERENCE_ENV_CACHE (default ${XDG_CACHE_HOME:-$HOME/.cache}/trex), one folder per requirements hash.
# Interpreter: Debian's /usr/bin/python3 (python3-venv), or $TREX_REFERENCE_PYTHON_BASE.
set -euo pipefail
src=$(cd "$(dirname "$0")" && pwd)
req="$src/reference-requirements.txt"
NAME=reference-env
DESC="The reference environment"
# shellcheck source=venv-common.sh
source "$src/venv-common.sh"
venv_parse_args "$@"
fail() { echo "error: reference environment: $*" >&2; exit 1; }

base=${TREX_REFERENCE_PYTHON_BASE:-/usr/bin/python3}
[[ -x "$base" ]] || fail "step 1/4 (interpreter): $base not found (Debian's python3; scripts/install-deps.sh installs it)"
"$base" -c 'import venv, ensurepip' 2>/dev/null \
  || fail "step 1/4 (interpreter): $base lacks the venv/ensurepip modules (Debian package python3-venv)"
[[ -r "$req" ]] || fail "step 1/4: $req is missing"

key=$( (cat "$req"; "$base" -c 'import sys; print(sys.version)') | sha256sum | cut -c1-12)
cache=${TREX_REFERENCE_ENV_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/trex}
env_dir="$cache/reference-env-$key"
mkdir -p "$cache" || fail "step 2/4 (cache folder): cannot create $cache"

venv_lock_or_reuse
echo "reference-env: building $env_dir from $(basename "$req") (first time only)" >&2
"$base" -m venv "$env_dir" || fail "step 2/4 (venv): '$base -m venv $env_dir' failed"
"$env_dir/bin/python" -m pip install --quiet --disable-pip-version-check --no-input --no-deps --only-binary=:all: \
  -r "$req" >&2 || { rm -rf "$env_dir"; fail "step 3/4 (pip install -r $req): failed (is PyPI reachable?)"; }
"$env_dir/bin/python" -c 'import tokenizers, gurobipy, coptpy, numpy, safetensors' \
  || { rm -rf "$env_dir"; fail "step 4/4 (import check): a pinned package does not import"; }
"$env_dir/bin/python" -m pip check >&2 \
  || { rm -rf "$env_dir"; fail "step 4/4 (pip check): the pinned set is not consistent; update $req"; }
touch "$env_dir/.complete"
venv_write_wrapper
echo "$env_dir"
