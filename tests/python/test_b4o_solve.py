"""Oracle, objective: every B4O-Feasible reference program, run through the layer and solved with
`trex solve`, is OPTIMAL with |ObjVal - answer| <= 1e-6 (OR_BENCHMARKS.md §4), except the items listed below.

Sharded (ctest runs test_shard_<k> as separate tests so they run in parallel)."""
import os
import tempfile
import unittest

import b4o_oracle
import gurobipy as gp
from gurobipy import GRB

SHARDS = 4
# Quadratic objective or constraints (README issue 4): the layer refuses to solve them (errno 10024).
QUADRATIC = {f"BENCH4OPT_{n}" for n in (32, 33, 56, 57, 364, 365, 374, 375)}
# Items whose outcome is allowed to differ, with the reason; filled from measured runs.
EXPECTED_OTHER = {}


def solve_item(record):
    """Returns ('optimal', objval) / ('status', code) / ('unsupported', message) / ('error', text)."""
    with tempfile.TemporaryDirectory() as d:
        model, _, err = b4o_oracle.run_reference(record, d)
        if err is not None or model is None:
            return ("error", err or "no model")
        model.Params.OutputFlag = 0
        try:
            if model.Status == GRB.LOADED:
                model.optimize()
        except gp.GurobiError as e:
            if e.errno == GRB.Error.NOT_SUPPORTED:
                return ("unsupported", str(e))
            return ("error", str(e))
        if model.Status != GRB.OPTIMAL:
            return ("status", model.Status)
        return ("optimal", model.ObjVal)


class SolveOracle(unittest.TestCase):
    def run_shard(self, k):
        records = b4o_oracle.load_records("bench4opt_feasible.jsonl")[k::SHARDS]
        wrong = []
        passed = 0
        for r in records:
            outcome = solve_item(r)
            if r["id"] in QUADRATIC:
                if outcome[0] != "unsupported" or "quadratic" not in outcome[1]:
                    wrong.append((r["id"], "quadratic item not refused", outcome))
                continue
            if r["id"] in EXPECTED_OTHER:
                continue
            if outcome[0] == "optimal" and abs(outcome[1] - r["answer"]) <= 1e-6:
                passed += 1
            else:
                wrong.append((r["id"], r["answer"], outcome))
        print(f"\nshard {k}: {passed} optimal within 1e-6 of the answer out of {len(records)}")
        self.assertEqual(wrong, [])


for _k in range(SHARDS):
    setattr(SolveOracle, f"test_shard_{_k}", lambda self, k=_k: self.run_shard(k))

if __name__ == "__main__":
    unittest.main()
