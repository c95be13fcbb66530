#!/usr/bin/env bash
# gurobipy oracle, full sweep (issue #21 point 3): every B4O-Feasible and B4O-ORGEval reference program with its
# data, one `trex synth` code answer of every family x variant x representation (x data-file layout x task), and
# the layer's own test programs, the general-constraint set (max/min/abs/and/or/norm/indicator/PWL, setPWLObj,
# setObjectiveN, parameters: tests/python/gurobipy_oracle_genconstr.py) and 400 generated models of it
# (genconstr_fuzz), each run through the real gurobipy 13.0.3 (the reference environment,
# scripts/reference-env.sh) and through trex's layer (python/). Prints the counts per set: agree / differ / layer
# unsupported / over the size limit (the pip licence's 2,000 variables or constraints), the differences that are
# documented (docs/gurobipy-layer.md, "Checked against gurobipy 13.0.3") and every difference with its reason.
# The peer is gurobipy itself. Exit status 1 when an undocumented difference appears.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BIN="$TREX_BUILD_DIR/trex"
export TREX_BENCHMARKS=${TREX_BENCHMARKS:-$ROOT/../shared/benchmarks}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
bash "$ROOT/scripts/reference-env.sh" --wrapper "$WORK/refpy" > /dev/null
echo "gurobipy oracle: $("$WORK/refpy" -c 'import gurobipy; print("gurobipy %d.%d.%d" % gurobipy.gurobi.version())' 2>/dev/null | tail -1) vs trex's layer; load average $(cut -d' ' -f1-3 /proc/loadavg)"
# Code answers: the four task mixes of synth give full_model and code_only programs in DP / DT / DPS (json and
# json_csv); 5,000 samples hold every (family, variant, representation, layout, task) of the generators.
"$BIN" synth --count 5000 --seed 11 --test-count 10 --threads 1 --mix task=full_model:1,code_only:1 \
  --no-progress --out "$WORK/synth" > /dev/null
start=$(date +%s.%N)
status=0
/usr/bin/python3 "$ROOT/tests/python/gurobipy_oracle.py" run --reference-python "$WORK/refpy" --trex "$BIN" \
  --sets b4o_feasible,b4o_orgeval,synth,api,genconstr,genconstr_fuzz --synth-dir "$WORK/synth" --quiet --json "$WORK/oracle.json" || status=$?
/usr/bin/python3 - "$WORK/oracle.json" <<'PY'
import json, sys
items = json.load(open(sys.argv[1]))["items"]
synth = [i for i in items if i["set"] == "synth"]
kinds = {tuple(i["id"].split(":", 1)[1].split("/")) for i in synth}
print(f"synth programs: {len(synth)} (families x variants {len({k[:2] for k in kinds})}, "
      f"representation/layout/task kinds {len({k[2:] for k in kinds})})")
PY
echo "gurobipy oracle: $(printf '%.1f' "$(echo "$(date +%s.%N) - $start" | bc)") s for both executors"
exit $status
