#!/usr/bin/env bash
# trex synth: 10,000 verified SFT samples + CPT documents on 2 threads vs the 2-minute target; every answer LP
# re-solved and every code answer executed through the gurobipy layer. Wall and CPU (user+sys, Python workers
# included) are printed with the load average: the development machine is shared, CPU time is the steadier figure.
set -euo pipefail
echo "synth bench: load average at start: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores"
if [ -x /usr/bin/time ]; then
  /usr/bin/time -f "synth bench process: %e s wall, %U s user + %S s sys (children included)" "$TREX_BUILD_DIR/bench/bench_synth" 10000 2
else
  "$TREX_BUILD_DIR/bench/bench_synth" 10000 2
fi
echo "synth bench: load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
