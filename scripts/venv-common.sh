# Shared by the environment builders (reference-env.sh, torch-env.sh, hf-env.sh), sourced after each sets
# NAME (e.g. reference-env) and DESC (how the wrapper names it): the --wrapper argument, the wrapper file, and
# the one-builder-at-a-time reuse of a complete environment.

# venv_parse_args "$@": sets `wrapper` (empty without --wrapper); exits 2 on anything else.
venv_parse_args() {
  wrapper=""
  while (($#)); do
    case "$1" in
      --wrapper) wrapper=${2:?--wrapper needs a file}; shift 2 ;;
      *) echo "$NAME: unknown argument '$1' (usage: $NAME.sh [--wrapper FILE])" >&2; exit 2 ;;
    esac
  done
}

# venv_write_wrapper: writes $wrapper (if given), an executable running $env_dir's python, atomically.
venv_write_wrapper() {
  [[ -n "$wrapper" ]] || return 0
  mkdir -p "$(dirname "$wrapper")"
  printf '#!/bin/sh\n# %s'"'"'s python (scripts/%s.sh).\nexec "%s/bin/python" "$@"\n' "$DESC" "$NAME" "$env_dir" \
    > "$wrapper.tmp"
  chmod +x "$wrapper.tmp"
  mv "$wrapper.tmp" "$wrapper"
}

# venv_lock_or_reuse: one builder at a time (the others wait on $cache/$NAME.lock, fd 9, held until exit); a
# complete $env_dir is reused at once (wrapper written, folder printed, exit 0); a half-built one is removed.
venv_lock_or_reuse() {
  exec 9>"$cache/$NAME.lock"
  flock 9
  if [[ -f "$env_dir/.complete" ]]; then
    venv_write_wrapper
    echo "$env_dir"
    exit 0
  fi
  rm -rf "$env_dir"
}
