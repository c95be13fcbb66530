#!/usr/bin/env bash
# Scoring throughput of `trex eval --responses` over all 1,627 benchmark items (target: <= 60 s on 2 cores).
# Responses: the B4O reference programs for B4O-Feasible and B4O-ORGEval, and for NL4OPT/OptiBench (which ship
# no reference solutions) a small gurobipy program per item. No peer: the report's harness needs a Gurobi
# licence, so only trex's figures are printed.
set -euo pipefail
BIN="$TREX_BUILD_DIR/trex"
DATA="$TREX_BENCHMARKS"
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
/usr/bin/python3 - "$DATA" "$WORK/responses.jsonl" <<'PY'
import json, sys
data, out = sys.argv[1], sys.argv[2]
with open(out, "w") as f:
    for name, bench in (("nl4opt.jsonl", "nl4opt"), ("optibench.jsonl", "optibench")):
        for line in open(f"{data}/{name}"):
            r = json.loads(line)
            code = ("import gurobipy as gp\nfrom gurobipy import GRB\nm = gp.Model('bench')\n"
                    f"x = m.addVar(lb=0, ub=1e9, name='x')\ny = m.addVar(lb=0, ub=1e9, name='y')\n"
                    f"m.addConstr(x + y >= {float(r['answer'])!r}, name='c')\n"
                    "m.setObjective(x + 2 * y, GRB.MINIMIZE)\nm.optimize()\n")
            f.write(json.dumps({"id": r["id"], "benchmark": bench, "response": "```python\n" + code + "```"}) + "\n")
    for name, bench in (("bench4opt_feasible.jsonl", "b4o_feasible"), ("bench4opt_orgeval.jsonl", "b4o_orgeval")):
        for line in open(f"{data}/{name}"):
            r = json.loads(line)
            f.write(json.dumps({"id": r["id"], "benchmark": bench,
                                "response": "```python\n" + r["reference_code"] + "\n```"}) + "\n")
PY
start=$(date +%s.%N)
"$BIN" eval --responses "$WORK/responses.jsonl" --data "$DATA" --out "$WORK/out" --concurrency 2 --json > "$WORK/summary.json"
end=$(date +%s.%N)
/usr/bin/python3 - "$WORK/summary.json" "$start" "$end" <<'PY'
import json, sys
s = json.load(open(sys.argv[1])); secs = float(sys.argv[3]) - float(sys.argv[2])
n = sum(b["n"] for b in s["benchmarks"])
for b in s["benchmarks"]:
    print(f"  {b['name']:<14} n={b['n']:<4} success={b['successes']:<4} outcomes={b['outcomes']}")
print(f"scored {n} items in {secs:.1f} s on 2 workers: {n / secs:.1f} items/s (target: 1627 items in <= 60 s)")
PY
