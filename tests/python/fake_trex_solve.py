#!/usr/bin/python3
"""Test double for `trex solve FILE --json --values`: answers per FAKE_TREX_SCENARIO and records its arguments
and the LP it was given in FAKE_TREX_LOG (tests of the layer's solver client only)."""
import json
import os
import sys

scenario = os.environ.get("FAKE_TREX_SCENARIO", "optimal")
log = os.environ.get("FAKE_TREX_LOG")
if log:
    with open(log, "w") as f:
        json.dump({"argv": sys.argv[1:], "lp": open(sys.argv[2]).read()}, f)
if scenario == "optimal":
    print(json.dumps({"status": "optimal", "objective": 7.5, "values": {"C0": 1.5, "C1": 2.0, "Constant": 1}}))
elif scenario == "optimal_list":
    print("log line before the answer")
    print(json.dumps({"status": "optimal", "objective": 7.5, "values": [1.5, 2.0]}))
elif scenario == "local_optimal":
    print(json.dumps({"status": "local_optimal", "optimality": "local", "objective": 6.0,
                      "values": {"C0": 2.0, "C1": 3.0}}))
elif scenario == "time_limit":
    print(json.dumps({"status": "time_limit", "objective": 9.0, "values": {"C0": 3, "C1": 0}}))
elif scenario in ("infeasible", "unbounded", "infeasible_or_unbounded"):
    print(json.dumps({"status": scenario}))
elif scenario == "unsupported":
    print(json.dumps({"status": "unsupported", "message": "semi-continuous variables"}))
elif scenario == "garbage":
    print("Segmentation fault")
    sys.exit(139)
