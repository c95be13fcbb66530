"""The gurobipy layer's quadratic path through the real `trex solve` (Ipopt / Bonmin): a QuadExpr objective and
addQConstr rows are written in Gurobi's LP syntax, solved, and read back; a convex model's optimum is OPTIMAL, so is
a nonconvex one's when spatial branch and bound proves it, else the local optimum is SUBOPTIMAL with its point and
ObjVal."""
import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                                "python", "shim"))

import gurobipy as gp  # noqa: E402
from gurobipy import GRB  # noqa: E402


class QuadraticSolveTest(unittest.TestCase):
    def setUp(self):
        if not os.environ.get("TREX_BIN"):
            self.fail("TREX_BIN is not set: this test needs the trex executable (ctest sets it)")

    def test_convex_qp_objective(self):
        m = gp.Model("qp")
        x = m.addVar(lb=-GRB.INFINITY, name="x")
        y = m.addVar(lb=-GRB.INFINITY, name="y")
        m.setObjective((x - 1) * (x - 1) + (y - 2) * (y - 2), GRB.MINIMIZE)  # projection of (1, 2) on x + y <= 1
        m.addConstr(x + y <= 1, "c")
        m.optimize()
        self.assertEqual(m.Status, GRB.OPTIMAL)
        self.assertAlmostEqual(m.ObjVal, 2.0, places=7)  # the QuadExpr's constant 5 included
        self.assertAlmostEqual(x.X, 0.0, places=6)
        self.assertAlmostEqual(y.X, 1.0, places=6)

    def test_convex_qconstr(self):
        m = gp.Model("qcp")
        x = m.addVar(lb=-GRB.INFINITY, name="x")
        y = m.addVar(lb=-GRB.INFINITY, name="y")
        m.setObjective(x + y, GRB.MAXIMIZE)
        m.addQConstr(x * x + y * y <= 2, "disk")
        m.optimize()
        self.assertEqual(m.Status, GRB.OPTIMAL)
        self.assertAlmostEqual(m.ObjVal, 2.0, places=7)
        self.assertAlmostEqual(x.X, 1.0, places=6)

    def test_miqp(self):
        m = gp.Model("miqp")
        x = m.addVar(ub=5, vtype=GRB.INTEGER, name="x")
        y = m.addVar(ub=5, vtype=GRB.INTEGER, name="y")
        m.setObjective((x - 2.6) * (x - 2.6) + (y - 1.3) * (y - 1.3))
        m.addConstr(x + y <= 3.5)
        m.optimize()
        self.assertEqual(m.Status, GRB.OPTIMAL)
        self.assertAlmostEqual(m.ObjVal, 0.45, places=6)  # (2, 1)
        self.assertAlmostEqual(x.X, 2.0, places=6)
        self.assertAlmostEqual(y.X, 1.0, places=6)

    def test_nonconvex_proven_by_branch_and_bound(self):
        m = gp.Model("bilinear")
        x = m.addVar(ub=3, name="x")
        y = m.addVar(ub=3, name="y")
        m.setObjective(x * y, GRB.MAXIMIZE)
        m.addConstr(x + y <= 4)
        m.optimize()
        self.assertEqual(m.Status, GRB.OPTIMAL)  # nonconvex, proven global by spatial branch and bound
        self.assertAlmostEqual(m.ObjVal, 4.0, places=5)
        self.assertAlmostEqual(m.ObjVal, x.X * y.X, places=9)

    def test_unproven_local_optimum_is_suboptimal_with_a_point(self):
        m = gp.Model("free product")
        x = m.addVar(lb=-GRB.INFINITY, name="x")  # free, and nothing bounds them: no box, the optimum stays local
        y = m.addVar(lb=-GRB.INFINITY, name="y")
        m.setObjective(x * y, GRB.MINIMIZE)
        m.addConstr(x == y)
        m.optimize()
        self.assertEqual(m.Status, GRB.SUBOPTIMAL)
        self.assertEqual(m.SolCount, 1)
        self.assertAlmostEqual(m.ObjVal, 0.0, places=6)
        self.assertAlmostEqual(m.ObjVal, x.X * y.X, places=9)


if __name__ == "__main__":
    unittest.main()
