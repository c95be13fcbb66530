#!/usr/bin/env bash
# Scoring throughput of `trex eval --benchmarks all --responses FILE` over every item of every built-in benchmark
# (2,883: the report's four, 1,627, and the seven further public sets, 1,256). Responses (bench/eval_responses_all.py):
# the B4O reference programs (B4O-Feasible with optimize() appended) and, for the statement benchmarks, a small
# gurobipy program per item whose optimum is the gold, some off by 2e-5 relative, some wrong, some raising — real
# programs through the sandbox and the gurobipy layer. For the statement benchmarks the counts the programs must
# reach under the absolute and the relative rule are printed beside what trex eval measured. No external peer:
# the report's harness needs a Gurobi licence. Printed beside trex's default (answers forked from the pre-imported
# fork server, solves over its channel) is trex's reference path (--no-forkserver: python3 started per answer,
# `trex solve` per solve; skipped with EVAL_SCORING_REFERENCE=0), with wall time, CPU time of the evaluator and
# everything it started, and the load average (the machine is shared: wall time on a loaded machine overstates what
# 2 idle cores take; CPU time / 2 bounds that from below).
set -euo pipefail
BIN="$TREX_BUILD_DIR/trex"
DATA="$TREX_BENCHMARKS"
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
/usr/bin/python3 "$(dirname "$0")/eval_responses_all.py" "$DATA" "$WORK/responses.jsonl" "$WORK/expected.json"
/usr/bin/python3 - "$BIN" "$DATA" "$WORK" "${EVAL_SCORING_REFERENCE:-1}" <<'PY'
import json, os, resource, subprocess, sys, time
binary, data, work, with_reference = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4] != "0"
expected = json.load(open(os.path.join(work, "expected.json")))

def run(label, extra):
    out = os.path.join(work, label.split()[0])
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    load = os.getloadavg()[0]
    t0 = time.monotonic()
    proc = subprocess.run([binary, "eval", "--benchmarks", "all", "--responses", os.path.join(work, "responses.jsonl"),
                           "--data", data, "--out", out, "--concurrency", "2", "--json"] + extra,
                          capture_output=True, text=True, check=True)
    secs = time.monotonic() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    s = json.loads(proc.stdout)
    n = sum(b["n"] for b in s["benchmarks"])
    mismatches = 0
    for b in s["benchmarks"]:
        want = expected.get(b["key"])
        note = ""
        if want:
            ok = (want["n"], want["absolute"], want["relative"]) == (b["n"], b["successes"], b["successes_relative"])
            mismatches += not ok
            note = (f" expected abs {want['absolute']} rel {want['relative']}" + ("" if ok else "  MISMATCH"))
        print(f"  {b['name']:<15} n={b['n']:<4} abs={b['successes']:<4} rel={b['successes_relative']:<4}{note} "
              f"outcomes={b['outcomes']}")
    print(f"{label}: scored {n} items of {len(s['benchmarks'])} benchmarks in {secs:.1f} s on 2 workers: "
          f"{n / secs:.1f} items/s; CPU {cpu:.1f} s (CPU / 2 = {cpu / 2:.1f} s); load average {load:.1f} -> "
          f"{os.getloadavg()[0]:.1f}; {mismatches} benchmark(s) off the expected counts")
    return secs, cpu, {b["name"]: b["outcomes"] for b in s["benchmarks"]}

fast = run("fork server", [])
if with_reference:
    ref = run("reference path (--no-forkserver)", ["--no-forkserver"])
    same = "identical" if fast[2] == ref[2] else "DIFFERENT"
    print(f"fork server vs reference path: wall {ref[0] / fast[0]:.2f}x, CPU {ref[1] / fast[1]:.2f}x faster; "
          f"outcome counts {same}")
PY
