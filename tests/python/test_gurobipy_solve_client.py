"""The layer's `trex solve` client against a scripted stand-in (fake_trex_solve.py): status mapping, values,
time limit, refusals and malformed answers. The real solver is exercised by test_b4o_solve.py."""
import json
import os
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(HERE)), "python", "shim"))

import gurobipy as gp  # noqa: E402
from gurobipy import GRB  # noqa: E402


class SolveClientTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.log = os.path.join(self.tmp.name, "log.json")
        self.saved = {k: os.environ.get(k) for k in ("TREX_BIN", "FAKE_TREX_SCENARIO", "FAKE_TREX_LOG")}
        os.environ["TREX_BIN"] = os.path.join(HERE, "fake_trex_solve.py")
        os.environ["FAKE_TREX_LOG"] = self.log

    def tearDown(self):
        for k, v in self.saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        self.tmp.cleanup()

    def model(self):
        m = gp.Model("client")
        x = m.addVar(name="my x")  # a name with a space: the solver only sees canonical names
        y = m.addVar(vtype=GRB.INTEGER, name="Constant")
        m.addConstr(x + y >= 3, "c")
        m.setObjective(x + 3 * y + 1, GRB.MINIMIZE)
        return m, x, y

    def solve(self, scenario, **params):
        os.environ["FAKE_TREX_SCENARIO"] = scenario
        m, x, y = self.model()
        for k, v in params.items():
            m.setParam(k, v)
        m.optimize()
        return m, x, y

    def test_optimal(self):
        for scenario in ("optimal", "optimal_list"):
            m, x, y = self.solve(scenario)
            self.assertEqual(m.Status, GRB.OPTIMAL)
            self.assertEqual((m.ObjVal, m.objVal, m.objval), (7.5, 7.5, 7.5))
            self.assertEqual((x.X, y.x), (1.5, 2.0))
            self.assertEqual(m.SolCount, 1)
            self.assertAlmostEqual(m.getConstrByName("c").Slack, -0.5)
        with open(self.log) as f:
            sent = json.load(f)
        self.assertEqual(sent["argv"][0], "solve")
        self.assertEqual(sent["argv"][2:], ["--json", "--values"])
        self.assertIn(" R0: C0 + C1 >= 3\n", sent["lp"])
        self.assertIn("  C0 + 3 C1 + Constant\n", sent["lp"])

    def test_time_limit_is_passed_and_mapped(self):
        m, x, _ = self.solve("time_limit", TimeLimit=12.5)
        with open(self.log) as f:
            argv = json.load(f)["argv"]
        self.assertEqual(argv[-2:], ["--time-limit", "12.5"])
        self.assertEqual(m.Status, GRB.TIME_LIMIT)
        self.assertEqual((m.ObjVal, x.X), (9.0, 3.0))

    def test_no_solution_statuses(self):
        for scenario, code in (("infeasible", GRB.INFEASIBLE), ("unbounded", GRB.UNBOUNDED),
                               ("infeasible_or_unbounded", GRB.INF_OR_UNBD)):
            m, x, _ = self.solve(scenario)
            self.assertEqual(m.status, code)
            self.assertFalse(hasattr(m, "ObjVal"))
            with self.assertRaises(AttributeError):
                x.X
            self.assertEqual(m.SolCount, 0)

    def test_refusals_and_failures(self):
        with self.assertRaises(gp.GurobiError) as ctx:
            self.solve("unsupported")
        self.assertEqual(ctx.exception.errno, GRB.Error.NOT_SUPPORTED)
        with self.assertRaises(gp.GurobiError) as ctx:
            self.solve("garbage")
        self.assertIn("trex solve failed", str(ctx.exception))

    def test_quadratic_model_is_sent_with_its_quadratic_parts(self):
        os.environ["FAKE_TREX_SCENARIO"] = "local_optimal"
        m, x, y = self.model()
        m.setObjective(x * y)
        m.addQConstr(x * x + y <= 9, "q")
        m.optimize()
        with open(self.log) as f:
            sent = json.load(f)["lp"]
        self.assertIn("[ 2 C0 * C1 ] / 2", sent)
        self.assertIn(" QC0: C1 + [ C0 ^2 ] <= 9\n", sent)
        # a local optimum (nonconvex, not proven) is SUBOPTIMAL with its point and objective
        self.assertEqual(m.Status, GRB.SUBOPTIMAL)
        self.assertEqual((m.ObjVal, x.X, y.X), (6.0, 2.0, 3.0))
        self.assertEqual(m.SolCount, 1)

    def test_changes_discard_the_solution(self):
        m, x, _ = self.solve("optimal")
        x.UB = 10
        self.assertEqual(m.Status, GRB.LOADED)
        self.assertFalse(hasattr(x, "X"))


if __name__ == "__main__":
    unittest.main()
