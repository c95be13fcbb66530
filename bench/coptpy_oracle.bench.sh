#!/usr/bin/env bash
# coptpy oracle, full sweep (issue #25 point 4): the ORLM-style coptpy programs (tests/python/coptpy_oracle_programs.py),
# every B4O-Feasible and B4O-ORGEval reference program and one `trex synth` code answer of every family x variant x
# representation (x data-file layout x task), rewritten from gurobipy to coptpy (tests/python/coptpy_oracle.py,
# to_coptpy) with their data, each run through the real coptpy 8.0.7 (the reference environment,
# scripts/reference-env.sh; its size-limited licence) and through trex's coptpy layer (python/trex_coptpy).
# Prints the counts per set: agree / both raise / differ / layer unsupported / over the size limit, the
# documented differences (docs/coptpy-layer.md, "Checked against coptpy 8.0.7") and every difference with its
# reason. The peer is coptpy itself. Exit status 1 when an undocumented difference appears.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BIN="$TREX_BUILD_DIR/trex"
export TREX_BENCHMARKS=${TREX_BENCHMARKS:-$ROOT/../shared/benchmarks}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
bash "$ROOT/scripts/reference-env.sh" --wrapper "$WORK/refpy" > /dev/null
echo "coptpy oracle: coptpy $("$WORK/refpy" -c 'import coptpy; print(coptpy.COPT.VERSION_MAJOR, coptpy.COPT.VERSION_MINOR, coptpy.COPT.VERSION_TECHNICAL, sep=".")' 2>/dev/null | tail -1) vs trex's coptpy layer; load average $(cut -d' ' -f1-3 /proc/loadavg)"
# The same synth programs as bench/gurobipy_oracle.bench.sh (5,000 samples hold every kind of code answer).
"$BIN" synth --count 5000 --seed 11 --test-count 10 --threads 1 --mix task=full_model:1,code_only:1 \
  --no-progress --out "$WORK/synth" > /dev/null
start=$(date +%s.%N)
status=0
/usr/bin/python3 "$ROOT/tests/python/coptpy_oracle.py" run --reference-python "$WORK/refpy" --trex "$BIN" \
  --sets orlm,b4o_feasible,b4o_orgeval,synth --synth-dir "$WORK/synth" --quiet --json "$WORK/oracle.json" || status=$?
echo "coptpy oracle: $(printf '%.1f' "$(echo "$(date +%s.%N) - $start" | bc)") s for both executors"
exit $status
