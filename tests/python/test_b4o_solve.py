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
# Quadratic objective or constraints (README issue 4), all nonconvex: solved by Ipopt and proven global by spatial
# branch and bound (docs/solve.md). 32/33, 56/57 and 374/375 reach their answers within 1e-6 (counted below);
# 364/365 are proven optimal 3.7e-6 (a few ulps at 7.8e8) from the answer, outside the 1e-6 absolute rule
# (Gurobi 13.0.3 ends 4.4e-5 from it). Checked to stay at that value.
QUADRATIC_OFF_RULE = {"BENCH4OPT_364": 776738904.7901682, "BENCH4OPT_365": 776738904.7901682}
# One equality row with 3 general integers: CBC needs from seconds to minutes (README: 2.5-7.3 s, sometimes
# > 25 s; 157 s with the cbc command line). Solved with this time limit; TIME_LIMIT (9) is accepted, any other
# status or a wrong objective is not.
TIME_LIMITED = {"BENCH4OPT_132": 20.0, "BENCH4OPT_133": 20.0}
# Items whose reference program cannot reproduce the answer: the reference LP (and answer 30) come from another
# program ("CuttingStock"); this reference_code's model solves to 0.14447987... (checked to stay so).
EXPECTED_OTHER = {"BENCH4OPT_380": 0.1444798710354011, "BENCH4OPT_381": 0.1444798710354011}


def solve_item(record, time_limit=None):
    """Returns ('optimal', objval) / ('status', code) / ('unsupported', message) / ('error', text)."""
    with tempfile.TemporaryDirectory() as d:
        model, _, err = b4o_oracle.run_reference(record, d)
        if err is not None or model is None:
            return ("error", err or "no model")
        model.Params.OutputFlag = 0
        if time_limit is not None:
            model.Params.TimeLimit = time_limit
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
            outcome = solve_item(r, TIME_LIMITED.get(r["id"]))
            if r["id"] in TIME_LIMITED and outcome == ("status", GRB.TIME_LIMIT):
                print(f"\n{r['id']}: time limit ({TIME_LIMITED[r['id']]} s) reached")
                continue
            if r["id"] in QUADRATIC_OFF_RULE:
                want = QUADRATIC_OFF_RULE[r["id"]]
                if outcome[0] != "optimal" or abs(outcome[1] - want) > 1e-9 * abs(want):
                    wrong.append((r["id"], "expected the proven quadratic optimum", want, outcome))
                continue
            if r["id"] in EXPECTED_OTHER:
                if outcome[0] != "optimal" or abs(outcome[1] - EXPECTED_OTHER[r["id"]]) > 1e-6:
                    wrong.append((r["id"], "expected the other program's optimum", outcome))
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
