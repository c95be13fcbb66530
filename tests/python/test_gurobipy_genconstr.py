"""Unit tests of the gurobipy layer's general constraints, piecewise-linear objectives, multiple objectives and
parameter checks (issue #25 point 3; python/trex_gurobipy/genconstr.py, multiobj.py). What real gurobipy does
is pinned by the oracle set tests/python/gurobipy_oracle_genconstr.py; these tests hold the layer's own
mechanics: the LP text, the reformulation handed to trex, the errors, and solves through $TREX_BIN."""
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                                "python", "shim"))

import gurobipy as gp  # noqa: E402
from gurobipy import GRB  # noqa: E402
from trex_gurobipy import lpwriter  # noqa: E402


def lp_text(model):
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "m.lp")
        model.write(path)
        with open(path) as f:
            return f.read()


# gurobipy 13.0.3's own file for the model of build_all() (written with the reference environment)
GUROBI_ALL = r"""\ Model g
\ LP format - for model browsing. Use MPS format to capture full model detail.
Minimize
  0 x[0] + 0 x[1] + 0 x[2] + y + z + a + 0 b[0] + 0 b[1] + 0 b[2] + 0 r
Subject To
 gind: b[0] = 1 -> x[0] + 2 x[1] <= 4
 GC6: b[1] = 0 -> x[2] >= 1.5
 GC9: b[2] = 1 -> x[0] + x[1] = 3
Bounds
 -5 <= x[0] <= 10
 -5 <= x[1] <= 10
 -5 <= x[2] <= 10
 -20 <= y <= 20
 -20 <= z <= 20
 a <= 30
Binaries
 b[0] b[1] b[2] r
General Constraints
 gmax: y = MAX ( x[0] , x[1] , 3 )
 gmin: z = MIN ( x[0] , x[2] )
 gabs: a = ABS ( x[1] )
 gand: r = AND ( b[0] , b[1] )
 gor: b[2] = OR ( b[0] , b[1] )
 h: y = MAX ( x[2] , 2 )
 GC8: a = ABS ( x[2] )
 pwl: z = PWL ( x[0] ) : (-5, 1) (0, 0) (5, 2) (10, 2)
End
"""


def build_all():
    m = gp.Model("g")
    x = m.addVars(3, lb=-5, ub=10, name="x")
    y = m.addVar(lb=-20, ub=20, name="y")
    z = m.addVar(lb=-20, ub=20, name="z")
    a = m.addVar(name="a", ub=30)
    b = m.addVars(3, vtype=GRB.BINARY, name="b")
    r = m.addVar(vtype=GRB.BINARY, name="r")
    m.addGenConstrMax(y, [x[0], x[1]], constant=3, name="gmax")
    m.addGenConstrMin(z, [x[0], x[2]], name="gmin")
    m.addGenConstrAbs(a, x[1], name="gabs")
    m.addGenConstrAnd(r, [b[0], b[1]], "gand")
    m.addGenConstrOr(b[2], [b[0], b[1]], "gor")
    m.addGenConstrIndicator(b[0], True, x[0] + 2 * x[1] <= 4, name="gind")
    m.addGenConstrIndicator(b[1], 0, x[2], GRB.GREATER_EQUAL, 1.5)
    m.addConstr(y == gp.max_(x[2], 2, constant=1), "h")
    m.addConstr(a == gp.abs_(x[2]))
    m.addConstr((b[2] == 1) >> (x[0] + x[1] == 3))
    m.addGenConstrPWL(x[0], z, [-5, 0, 5, 10], [1, 0, 2, 2], "pwl")
    m.setObjective(y + z + a)
    return m


class WriteAndCount(unittest.TestCase):
    def test_lp_text_is_gurobis(self):
        m = build_all()
        self.assertEqual(lp_text(m), GUROBI_ALL)
        self.assertEqual((m.NumVars, m.NumConstrs, m.NumGenConstrs), (10, 0, 11))
        self.assertEqual([g.GenConstrType for g in m.getGenConstrs()],
                         [0, 1, 2, 3, 4, 7, 7, 0, 2, 7, 8])
        self.assertEqual(m.getGenConstrs()[6].GenConstrName, "GC6")

    def test_multi_objective_and_pwl_objective_text(self):
        # both texts as gurobipy 13.0.3 writes them (reference environment, 2026-12-02)
        m = gp.Model("mo")
        x = m.addVars(3, ub=5, name="x")
        m.addConstr(x[0] + x[1] <= 4)
        m.setObjective(x[0] + 1.5)
        m.setObjectiveN(x[1] - 2, 2, priority=3, weight=-1, abstol=0.5, reltol=0.01, name="second")
        self.assertEqual(lp_text(m).split("\n", 2)[2], (
            "Minimize multi-objectives\n"
            "  OBJ0: Priority=0 Weight=1 AbsTol=1e-06 RelTol=0\n"
            "   x[0] + 0 x[2] + 1.5 Constant0\n"
            "  OBJ1: Priority=0 Weight=1 AbsTol=1e-06 RelTol=0\n"
            "  \n"
            "  second: Priority=3 Weight=-1 AbsTol=0.5 RelTol=0.01\n"
            "   x[1] - 2 Constant2\n"
            "Subject To\n R0: x[0] + x[1] <= 4\nBounds\n x[0] <= 5\n x[1] <= 5\n x[2] <= 5\n"
            " Constant0 = 1\n Constant2 = 1\nEnd\n"))
        self.assertEqual((m.NumObj, m.IsMultiObj), (3, 1))
        p = gp.Model("po")
        x = p.addVar(lb=-1, ub=5, name="x")
        y = p.addVar(ub=5, name="y")
        p.addConstr(x + y >= 3)
        p.setObjective(y + 0)
        p.setPWLObj(x, [0, 2, 4], [0, 1, 5])
        self.assertEqual(lp_text(p).split("\n", 2)[2], (
            "Minimize\n  __pwl(x) + y\nSubject To\n R0: x + y >= 3\nBounds\n -1 <= x <= 5\n y <= 5\n"
            "PWLObj\n x: (0, 0) (2, 1) (4, 5)\nEnd\n"))

    def test_reformulation_only_in_the_solved_text(self):
        m = build_all()
        m.update()
        snap = m._snapshot(canonical=True)
        self.assertGreater(len(snap["var_names"]), 10)            # binaries / weights were added
        self.assertTrue(any(r[0].startswith("G") for r in snap["rows"]))
        self.assertEqual(m.NumVars, 10)                           # ... but not to the user's model
        text = lpwriter.render_lp(snap)
        self.assertNotIn("General Constraints", text)
        self.assertNotIn("->", text)

    def test_missing_bound_names_the_variable(self):
        m = gp.Model()
        x = m.addVar(name="flow")   # ub = infinity
        b = m.addVar(vtype=GRB.BINARY, name="on")
        m.addGenConstrIndicator(b, 1, x <= 5, name="cap")
        with self.assertRaises(gp.GurobiError) as ctx:
            m._snapshot(canonical=True)
        self.assertEqual(ctx.exception.errno, 10024)
        self.assertIn("'flow'", str(ctx.exception))
        self.assertIn("upper bound", str(ctx.exception))
        m2 = gp.Model()
        x = m2.addVar(lb=-GRB.INFINITY, ub=3, name="free_below")
        y = m2.addVar(lb=-10, ub=10, name="y")
        m2.addGenConstrPWL(x, y, [0, 1], [0, 1])
        with self.assertRaises(gp.GurobiError) as ctx:
            m2._snapshot(canonical=True)
        self.assertIn("'free_below'", str(ctx.exception))
        self.assertIn("lower bound", str(ctx.exception))

    def test_implied_bounds_serve_big_m_only(self):
        m = gp.Model()
        x = m.addVars(2, name="x")                # ub = infinity, but x0 + x1 <= 7 implies x_i <= 7
        b = m.addVar(vtype=GRB.BINARY, name="b")
        m.addConstr(x[0] + x[1] <= 7, "cap")
        m.addGenConstrIndicator(b, 0, x[0] + x[1] <= 0)
        m.update()
        snap = m._snapshot(canonical=True)
        self.assertEqual(snap["bounds"][0][1], GRB.INFINITY)   # not written as a bound
        row = next(r for r in snap["rows"] if r[0].startswith("G"))
        self.assertEqual(row[2], "<")
        self.assertAlmostEqual(dict(row[1])[2], -14.0, places=6)  # x0 + x1 - M b <= 0, M = 7 + 7 (box bounds)

    def test_two_norm_refused_at_solve(self):
        m = gp.Model()
        x = m.addVars(2, lb=-1, ub=1, name="x")
        y = m.addVar(name="y")
        m.addConstr(y == gp.norm([x[0], x[1]], 2))      # accepted and written, as in gurobipy
        self.assertIn(" GC0: y = NORM ( 2 ) ( x[0] , x[1] )\n", lp_text(m))
        with self.assertRaises(gp.GurobiError) as ctx:
            m._snapshot(canonical=True)
        self.assertEqual(ctx.exception.errno, 10024)
        with self.assertRaises(gp.GurobiError) as ctx:
            m.addGenConstrNorm(y, [x[0]], 3)
        self.assertEqual(ctx.exception.errno, 10008)

    def test_helper_misuse(self):
        m = gp.Model()
        x = m.addVars(2, lb=-1, ub=1, name="x")
        y = m.addVar(name="y")
        with self.assertRaises(gp.GurobiError):
            m.addConstr(y <= gp.max_(x[0], x[1]))
        with self.assertRaises(gp.GurobiError):
            gp.max_(x[0], x[1]) == y
        with self.assertRaises(TypeError):
            m.addConstr(y == gp.abs_(2 * x[0]))
        with self.assertRaises(TypeError):
            x[0] >> (x[1] <= 1)
        with self.assertRaises(gp.GurobiError) as ctx:
            m.addGenConstrPWL(x[0], y, [2, 1], [0, 1])
        self.assertEqual(ctx.exception.errno, 10003)
        with self.assertRaises(gp.GurobiError) as ctx:
            m.addGenConstrIndicator(x[0], 2, x[1] <= 1)
        self.assertEqual(ctx.exception.errno, 10008)

    def test_addconstrs_keys_with_captured_loop_variable(self):
        # `m` is a cell variable of the generator (the inner quicksum captures it): it still names the rows
        md = gp.Model()
        a = md.addVars(2, 3, name="a")
        cs = md.addConstrs((gp.quicksum(a[j, m] for j in range(2)) <= 1 for m in range(3)), name="load")
        md.update()
        self.assertEqual([c.ConstrName for c in cs.values()], ["load[0]", "load[1]", "load[2]"])


class Params(unittest.TestCase):
    def test_checks_and_global_defaults(self):
        gp.setParam("MIPGap", 0.05)
        try:
            m = gp.Model()
        finally:
            gp.setParam("MIPGap", 1e-4)
        self.assertEqual(m.Params.MIPGap, 0.05)
        self.assertEqual(gp.Model().Params.MIPGap, 1e-4)
        m.Params.Threads = 1.0
        self.assertEqual((m.Params.Threads, type(m.Params.Threads)), (1, int))
        with self.assertRaises(gp.GurobiError) as ctx:
            m.setParam("MIPGap", -1)
        self.assertEqual((ctx.exception.errno, str(ctx.exception)),
                         (10008, "Unable to set parameter MIPGap to value -1 (minimum is 0)"))
        with self.assertRaises(gp.GurobiError) as ctx:
            m.Params.NonConvex = 5
        self.assertEqual(str(ctx.exception), "Unable to set parameter NonConvex to value 5 (maximum is 2)")
        with self.assertRaises(TypeError):
            m.setParam("Threads", "a")
        with self.assertRaises(TypeError):
            m.setParam("TimeLimit", "10")
        m.setParam("Seed", 3)
        m.setParam("OutputFlag", 0)
        self.assertEqual((m.Params.seed, m.Params.outputflag), (3, 0))


@unittest.skipUnless(os.environ.get("TREX_BIN"), "needs the trex binary (ctest sets TREX_BIN)")
class Solves(unittest.TestCase):
    def test_every_constructor(self):
        m = build_all()
        m.optimize()
        self.assertEqual(m.Status, GRB.OPTIMAL)
        self.assertAlmostEqual(m.ObjVal, 6.0, places=6)   # gurobipy 13.0.3: 6.0
        xs = {v.VarName: v.X for v in m.getVars()}
        self.assertAlmostEqual(xs["y"], max(xs["x[0]"], xs["x[1]"], 3, xs["x[2]"], 2), places=6)
        self.assertAlmostEqual(xs["a"], abs(xs["x[1]"]), places=6)
        self.assertAlmostEqual(xs["r"], min(xs["b[0]"], xs["b[1]"]), places=6)

    def test_indicator_big_m_both_values(self):
        for val, want in ((1, 4.0), (0, 13.0)):
            m = gp.Model()
            x = m.addVar(ub=10, name="x")
            b = m.addVar(vtype=GRB.BINARY, name="b")
            m.addGenConstrIndicator(b, val, x <= 4)
            m.addConstr(b == 1)
            m.setObjective(x + 3 * b, GRB.MAXIMIZE)
            m.optimize()
            self.assertAlmostEqual(m.ObjVal, want + 3 if val == 1 else want, places=6)

    def test_pwl_objective_and_extrapolation(self):
        m = gp.Model()
        x = m.addVar(lb=-1, ub=5, name="x")
        y = m.addVar(ub=5, name="y")
        m.addConstr(x + y >= 3)
        m.setObjective(y + 0)
        m.setPWLObj(x, [0, 2, 4], [0, 1, 5])
        m.optimize()
        self.assertAlmostEqual(m.ObjVal, 2.0, places=6)   # gurobipy: x = 2, y = 1
        m2 = gp.Model()
        x = m2.addVar(lb=-10, ub=10, name="x")
        y = m2.addVar(lb=-100, ub=100, name="y")
        m2.addGenConstrPWL(x, y, [0, 1, 2], [0, 1, 3])
        m2.setObjective(y, GRB.MAXIMIZE)
        m2.optimize()
        self.assertAlmostEqual(m2.ObjVal, 19.0, places=6)  # last segment extended to x = 10

    def test_hierarchical_and_blended(self):
        m = gp.Model()
        x = m.addVar(ub=10, vtype=GRB.INTEGER, name="x")
        y = m.addVar(ub=10, vtype=GRB.INTEGER, name="y")
        m.addConstr(x + y <= 12)
        m.ModelSense = GRB.MAXIMIZE
        m.setObjectiveN(x, 0, priority=2, reltol=0.1)
        m.setObjectiveN(y, 1, priority=1)
        m.optimize()
        self.assertEqual((m.Status, round(m.ObjVal, 6), round(x.X), round(y.X)), (GRB.OPTIMAL, 9.0, 9, 3))
        m.Params.ObjNumber = 1
        self.assertAlmostEqual(m.ObjNVal, 3.0, places=6)
        b = gp.Model()
        x = b.addVar(ub=10, name="x")
        y = b.addVar(ub=10, name="y")
        b.addConstr(x + y <= 12)
        b.setObjectiveN(-x, 0, weight=2)
        b.setObjectiveN(-y + 3, 1, weight=1)
        b.optimize()
        self.assertEqual((round(b.ObjVal, 6), round(x.X, 6), round(y.X, 6)), (-10.0, 10.0, 2.0))


if __name__ == "__main__":
    unittest.main()
