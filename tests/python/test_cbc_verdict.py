"""Issue #25's MILP, which CBC 2.10.8's preprocessing calls infeasible: `trex solve --json` reports the two
re-solves that overrule it and the optimum -489.75, and the gurobipy layer (through `trex solve`) gets the same."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(HERE)), "python", "shim"))

import gurobipy as gp  # noqa: E402
from gurobipy import GRB  # noqa: E402

LP = """Minimize
 obj: - 1.25 qty0 + 0.5 flow1 - 2 qty2 + 1.25 y3 + 2 y4 - 1.25 qty5 - 12 z6 - 12 x7
Subject To
 c0: 10 qty0 - 2.25 y3 >= 287.25
 c1: 1.5 qty0 - 3 flow1 - 10 qty2 - 4 qty5 + 10 z6 <= -248
Bounds
 qty0 <= 56
 0 <= flow1 <= 36
 3 <= qty2 <= 51
 0 <= y3 <= 6
 y4 <= 24
 -17 <= qty5 <= 43
 z6 <= 20
 0 <= x7 <= 2
General
 y4 x7
End
"""


class CbcVerdictTest(unittest.TestCase):
    def test_trex_solve_json_reports_the_overruling_checks(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "victim.lp")
            with open(path, "w") as f:
                f.write(LP)
            out = subprocess.run([os.environ["TREX_BIN"], "solve", path, "--json"], capture_output=True, text=True,
                                 check=True).stdout
        j = json.loads(out)
        self.assertEqual(j["status"], "optimal")
        self.assertAlmostEqual(j["objective"], -489.75, places=9)
        self.assertTrue(j["overruled"])
        self.assertEqual([c["solver"] for c in j["verdict_checks"]], ["cbc_without_preprocessing", "glpk"])
        self.assertEqual([c["status"] for c in j["verdict_checks"]], ["optimal", "optimal"])

    def test_gurobipy_layer_solves_it(self):
        m = gp.Model("victim")
        lb = {"qty0": 0, "flow1": 0, "qty2": 3, "y3": 0, "y4": 0, "qty5": -17, "z6": 0, "x7": 0}
        ub = {"qty0": 56, "flow1": 36, "qty2": 51, "y3": 6, "y4": 24, "qty5": 43, "z6": 20, "x7": 2}
        v = {n: m.addVar(lb=lb[n], ub=ub[n], vtype=GRB.INTEGER if n in ("y4", "x7") else GRB.CONTINUOUS, name=n)
             for n in lb}
        m.setObjective(-1.25 * v["qty0"] + 0.5 * v["flow1"] - 2 * v["qty2"] + 1.25 * v["y3"] + 2 * v["y4"]
                       - 1.25 * v["qty5"] - 12 * v["z6"] - 12 * v["x7"], GRB.MINIMIZE)
        m.addConstr(10 * v["qty0"] - 2.25 * v["y3"] >= 287.25, "c0")
        m.addConstr(1.5 * v["qty0"] - 3 * v["flow1"] - 10 * v["qty2"] - 4 * v["qty5"] + 10 * v["z6"] <= -248, "c1")
        m.optimize()
        self.assertEqual(m.Status, GRB.OPTIMAL)
        self.assertAlmostEqual(m.ObjVal, -489.75, places=9)


if __name__ == "__main__":
    unittest.main()
