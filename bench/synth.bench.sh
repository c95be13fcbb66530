#!/usr/bin/env bash
# trex synth: 10,000 verified SFT samples + CPT documents on 2 threads vs the 2-minute target; every answer LP
# re-solved and every code answer executed through the gurobipy layer. Twice: the default mix (the ten classic
# structures, what `trex run` trains on) and the broad mix of every family (structure=all:1), each with per-family
# counts, rejection reasons and variety. Wall and CPU (user+sys, Python workers included) are printed with the load
# average: the development machine is shared, CPU time is the steadier figure.
set -euo pipefail
echo "synth bench: load average at start: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores"
for mix in "" "structure=all:1"; do
  if [ -x /usr/bin/time ]; then
    /usr/bin/time -f "synth bench process: %e s wall, %U s user + %S s sys (children included)" "$TREX_BUILD_DIR/bench/bench_synth" 10000 2 $mix
  else
    "$TREX_BUILD_DIR/bench/bench_synth" 10000 2 $mix
  fi
done
echo "synth bench: load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
