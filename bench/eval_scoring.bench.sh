#!/usr/bin/env bash
# Scoring throughput of `trex eval --responses` over all 1,627 benchmark items (target: <= 60 s on 2 cores).
# Responses: the B4O reference programs for B4O-Feasible and B4O-ORGEval, and for NL4OPT/OptiBench (which ship
# no reference solutions) a small gurobipy program per item. No external peer: the report's harness needs a
# Gurobi licence. Printed beside trex's default (answers forked from the pre-imported fork server, solves over
# its channel) is trex's reference path (--no-forkserver: python3 started per answer, `trex solve` per solve),
# with wall time, CPU time of the evaluator and everything it started, and the load average (the machine is
# shared: wall time on a loaded machine overstates what 2 idle cores take; CPU time / 2 bounds that from below).
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
/usr/bin/python3 - "$BIN" "$DATA" "$WORK" <<'PY'
import json, os, resource, subprocess, sys, time
binary, data, work = sys.argv[1:4]

def run(label, extra):
    out = os.path.join(work, label)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    load = os.getloadavg()[0]
    t0 = time.monotonic()
    proc = subprocess.run([binary, "eval", "--responses", os.path.join(work, "responses.jsonl"), "--data", data,
                           "--out", out, "--concurrency", "2", "--json"] + extra,
                          capture_output=True, text=True, check=True)
    secs = time.monotonic() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    s = json.loads(proc.stdout)
    n = sum(b["n"] for b in s["benchmarks"])
    for b in s["benchmarks"]:
        print(f"  {b['name']:<14} n={b['n']:<4} success={b['successes']:<4} outcomes={b['outcomes']}")
    print(f"{label}: scored {n} items in {secs:.1f} s on 2 workers: {n / secs:.1f} items/s; CPU {cpu:.1f} s "
          f"(CPU / 2 = {cpu / 2:.1f} s); load average {load:.1f} -> {os.getloadavg()[0]:.1f}")
    return secs, cpu, {b["name"]: b["outcomes"] for b in s["benchmarks"]}

fast = run("fork server", [])
ref = run("reference path (--no-forkserver)", ["--no-forkserver"])
same = "identical" if fast[2] == ref[2] else "DIFFERENT"
print(f"fork server vs reference path: wall {ref[0] / fast[0]:.2f}x, CPU {ref[1] / fast[1]:.2f}x faster; "
      f"outcome counts {same} (target: 1627 items in <= 60 s on 2 cores)")
PY
