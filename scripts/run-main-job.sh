#!/usr/bin/env bash
# `make run`: the main job on its embedded default (see README).
set -euo pipefail
BUILD_DIR=${1:-build}
exec "$BUILD_DIR/trex" run
