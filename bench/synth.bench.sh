#!/usr/bin/env bash
# trex synth: 10,000 verified SFT samples + CPT documents on 2 threads vs the 2-minute target.
set -euo pipefail
"$TREX_BUILD_DIR/bench/bench_synth" 10000 2
