#!/usr/bin/env bash
# `make run`: the main job, `trex run`, on its embedded default (the tiny preset); writes runs/default/report.md.
set -euo pipefail
BUILD_DIR=${1:-build}
"$BUILD_DIR/trex" run --out runs/default
