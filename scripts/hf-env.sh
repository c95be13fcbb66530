#!/usr/bin/env bash
# Builds the transformers environment: a Python virtual environment, outside the repository, holding Hugging Face
# transformers (the oracle of trex's Hugging Face export/import and of the parity fixtures in tests/reference/hf/),
# every package at the exact version of scripts/hf-requirements.txt, layered on the current-PyTorch environment of
# scripts/torch-env.sh (built first if missing; its site-packages are appended to this one's path by a .pth file,
# so torch is not downloaded twice). Heavy (torch); `make test` never builds it. Idempotent: a complete environment
# for the same requirements, torch environment and interpreter is reused at once; a half-built one is rebuilt.
#
#   scripts/hf-env.sh [--wrapper FILE]
#     prints the environment's folder on its last line; --wrapper writes FILE, an executable that runs the
#     environment's python with its arguments.
# Where: $TREX_HF_ENV_CACHE (default ${XDG_CACHE_HOME:-$HOME/.cache}/trex), one folder per requirements hash.
# Interpreter: Debian's /usr/bin/python3 (python3-venv), or $TREX_TORCH_PYTHON_BASE (shared with torch-env.sh).
set -euo pipefail
src=$(cd "$(dirname "$0")" && pwd)
req="$src/hf-requirements.txt"
NAME=hf-env
DESC="The transformers environment"
# shellcheck source=venv-common.sh
source "$src/venv-common.sh"
venv_parse_args "$@"
fail() { echo "error: transformers environment: $*" >&2; exit 1; }

base=${TREX_TORCH_PYTHON_BASE:-/usr/bin/python3}
[[ -x "$base" ]] || fail "step 1/5 (interpreter): $base not found (Debian's python3; scripts/install-deps.sh installs it)"
[[ -r "$req" ]] || fail "step 1/5: $req is missing"
torch_env=$("$src/torch-env.sh" | tail -n 1) || fail "step 2/5 (torch environment): scripts/torch-env.sh failed"
torch_site=$("$torch_env/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])') \
  || fail "step 2/5 (torch environment): $torch_env/bin/python does not run"

key=$( (cat "$req" "$src/torch-requirements.txt"; echo "$torch_env"; "$base" -c 'import sys; print(sys.version)') \
  | sha256sum | cut -c1-12)
cache=${TREX_HF_ENV_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/trex}
env_dir="$cache/hf-env-$key"
mkdir -p "$cache" || fail "step 3/5 (cache folder): cannot create $cache"

venv_lock_or_reuse
echo "hf-env: building $env_dir from $(basename "$req") on $torch_env (first time only)" >&2
"$base" -m venv "$env_dir" || fail "step 3/5 (venv): '$base -m venv $env_dir' failed"
site=$("$env_dir/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
echo "$torch_site" > "$site/trex-torch-env.pth"
"$env_dir/bin/python" -m pip install --quiet --disable-pip-version-check --no-input --no-deps --only-binary=:all: \
  -r "$req" >&2 || { rm -rf "$env_dir"; fail "step 4/5 (pip install -r $req): failed (is PyPI reachable?)"; }
"$env_dir/bin/python" - <<'PY' || { rm -rf "$env_dir"; fail "step 5/5 (import check): transformers' DeepSeek-V4 does not import"; }
import torch, transformers
from transformers import DeepseekV4Config, DeepseekV4ForCausalLM  # noqa: F401
print("hf-env: transformers", transformers.__version__, "on torch", torch.__version__)
PY
"$env_dir/bin/python" -m pip check >&2 \
  || { rm -rf "$env_dir"; fail "step 5/5 (pip check): the pinned set is not consistent; update $req"; }
touch "$env_dir/.complete"
venv_write_wrapper
echo "$env_dir"
