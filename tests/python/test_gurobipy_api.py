"""Unit tests of trex's gurobipy-compatible layer: modelling API, expressions, tupledict/tuplelist, LP writer."""
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                                "python", "shim"))

import numpy as np  # noqa: E402

import gurobipy as gp  # noqa: E402
from gurobipy import GRB, quicksum  # noqa: E402
from trex_gurobipy.lpwriter import fmt_num  # noqa: E402


def lp_text(model):
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "m.lp")
        model.write(path)
        with open(path) as f:
            return f.read()


def body(model):
    """LP text without the two header comment lines."""
    return lp_text(model).split("\n", 2)[2]


class ShimTest(unittest.TestCase):
    def test_shim_is_trex_layer(self):
        self.assertTrue(getattr(gp, "TREX_LAYER", False))
        self.assertIs(gp.Model, __import__("trex_gurobipy").Model)

    def test_grb_constants(self):
        self.assertEqual((GRB.OPTIMAL, GRB.INFEASIBLE, GRB.INF_OR_UNBD, GRB.UNBOUNDED, GRB.TIME_LIMIT),
                         (2, 3, 4, 5, 9))
        self.assertEqual(GRB.Status.OPTIMAL, 2)
        self.assertEqual((GRB.MINIMIZE, GRB.MAXIMIZE), (1, -1))
        self.assertEqual((GRB.CONTINUOUS, GRB.BINARY, GRB.INTEGER), ("C", "B", "I"))
        self.assertEqual(GRB.INFINITY, 1e100)
        self.assertEqual(GRB.Attr.ObjVal, "ObjVal")
        self.assertEqual(GRB.Param.TimeLimit, "TimeLimit")
        self.assertTrue(issubclass(gp.GurobiError, Exception))


class AddVarsTest(unittest.TestCase):
    def test_index_forms_and_names(self):
        m = gp.Model("t")
        a = m.addVars(3, name="a")
        self.assertEqual(list(a.keys()), [0, 1, 2])
        b = m.addVars(2, 3, name="b")
        self.assertEqual(list(b.keys())[4], (1, 1))
        c = m.addVars(["x", "y"], range(2), name="c")
        arcs = gp.tuplelist([(1, 2), (2, 3)])
        f = m.addVars(arcs, name="flow")
        g = m.addVars(arcs, ["k"], name="g")  # tuple members are flattened into the key
        self.assertIn((1, 2, "k"), g)
        m.update()  # attributes are read from the updated model (gurobipy's lazy updates)
        self.assertEqual(a[2].VarName, "a[2]")
        self.assertEqual(b[1, 2].VarName, "b[1,2]")
        self.assertEqual(c["y", 1].VarName, "c[y,1]")
        self.assertEqual(f[2, 3].VarName, "flow[2,3]")
        self.assertEqual(len(m.getVars()), 3 + 6 + 4 + 2 + 2)

    def test_per_key_arguments(self):
        m = gp.Model()
        x = m.addVars(3, lb=[1, 2, 3], ub={0: 5, 1: 6, 2: 7}, obj=2.5, vtype=[GRB.INTEGER, GRB.BINARY,
                                                                              GRB.CONTINUOUS],
                      name=["p", "q", "r"])
        m.update()
        self.assertEqual([v.LB for v in x.values()], [1, 2, 3])
        self.assertEqual(x[2].ub, 7)
        self.assertEqual(x[1].VType, GRB.BINARY)
        self.assertEqual(x[0].VarName, "p")
        self.assertEqual(x[1].Obj, 2.5)

    def test_default_names(self):
        m = gp.Model()
        x = m.addVars(2)
        y = m.addVar()
        c = m.addConstr(x[0] + y <= 1)
        m.update()
        self.assertEqual([x[0].VarName, x[1].VarName, y.VarName], ["C0", "C1", "C2"])
        self.assertEqual(c.ConstrName, "R0")

    def test_lazy_updates(self):
        """As in gurobipy 13.0.3 (checked by tests/python/gurobipy_oracle.py): reads see the model as of the
        last update(), optimize() or write(); the changes themselves are kept in order."""
        m = gp.Model("lazy")
        x = m.addVar(ub=4, name="x")
        c = m.addConstr(x <= 3, "c")
        for read in (lambda: x.VarName, lambda: x.UB, lambda: c.ConstrName, lambda: c.RHS):
            with self.assertRaisesRegex(AttributeError, "Index out of range for attribute"):
                read()
        self.assertEqual((len(m.getVars()), len(m.getConstrs()), m.NumVars, m.NumConstrs), (0, 0, 0, 0))
        self.assertEqual(repr(x), "<gurobi.Var *Awaiting Model Update*>")
        m.setObjective(x, GRB.MAXIMIZE)
        self.assertEqual(m.ModelSense, GRB.MINIMIZE)
        self.assertEqual(m.getObjective().size(), 0)
        m.update()
        self.assertEqual((m.ModelSense, m.getObjective().size(), m.NumVars, x.VarName), (-1, 1, 1, "x"))
        x.UB = 2
        x.VType = GRB.INTEGER
        self.assertEqual((x.UB, x.VType, m.NumIntVars), (4.0, "C", 0))  # until the next update
        y = m.addVar(name="y")
        self.assertEqual([v.VarName for v in m.getVars()], ["x"])
        lp_text(m)  # write() updates first
        self.assertEqual((x.UB, x.VType, m.NumIntVars, len(m.getVars())), (2.0, "I", 1, 2))
        self.assertIs(m.getVarByName("y"), y)

    def test_setattr_and_case_insensitive_attributes(self):
        m = gp.Model()
        v = m.addVar(name="v")
        v.setAttr(GRB.Attr.UB, 4)
        v.lb = -2
        m.update()
        self.assertEqual((v.LB, v.UB, v.lb, v.ub), (-2, 4, -2, 4))
        v.VType = "I"
        m.update()
        self.assertEqual(v.vtype, "I")
        with self.assertRaises(AttributeError):
            v.X  # no solution yet
        self.assertFalse(hasattr(v, "X"))


class ExprTest(unittest.TestCase):
    def setUp(self):
        self.m = gp.Model()
        self.x = self.m.addVars(3, name="x")

    def test_linear_arithmetic(self):
        x = self.x
        e = 2 * x[0] + x[1] * 3 - x[2] / 4 + 5 - (x[0] - 1)
        self.assertIsInstance(e, gp.LinExpr)
        self.assertEqual(e.size(), 4)
        self.assertEqual(e.getConstant(), 6.0)
        self.assertEqual([e.getCoeff(i) for i in range(4)], [2.0, 3.0, -0.25, -1.0])
        e2 = -e
        self.assertEqual(e2.getConstant(), -6.0)
        s = sum(x[i] for i in range(3))
        self.assertEqual(s.size(), 3)
        q = quicksum(i * x[i] for i in range(3))
        self.assertEqual([q.getCoeff(i) for i in range(3)], [0.0, 1.0, 2.0])

    def test_numpy_scalars(self):
        x = self.x
        e = np.float64(2.5) * x[0] + np.int64(3) * x[1]
        self.assertIsInstance(e, gp.LinExpr)
        self.assertEqual([e.getCoeff(0), e.getCoeff(1)], [2.5, 3.0])
        tc = np.float64(4.0) <= x[0]
        self.assertIsInstance(tc, gp.TempConstr)
        e = x[0] * np.float64(2.0) + np.float64(1.0)
        self.assertEqual(e.getConstant(), 1.0)

    def test_inplace_and_linexpr_constructors(self):
        x = self.x
        e = gp.LinExpr()
        e += x[0]
        e += 2 * x[1]
        e -= 1
        e.addTerms([1.0, 2.0], [x[1], x[2]])
        e.add(x[0], 3)
        self.assertEqual(e.size(), 5)
        self.assertEqual(e.getConstant(), -1.0)
        self.assertEqual(gp.LinExpr([1, 2], [x[0], x[1]]).size(), 2)
        self.assertEqual(gp.LinExpr(2.0, x[0]).getCoeff(0), 2.0)
        self.assertEqual(gp.LinExpr([(3, x[2])]).getCoeff(0), 3.0)

    def test_quadratic(self):
        x = self.x
        q = x[0] * x[1] + 2 * x[2] ** 2 + x[0]
        self.assertIsInstance(q, gp.QuadExpr)
        self.assertEqual(q.size(), 2)
        q2 = (x[0] + 1) * (x[1] - 2)
        self.assertEqual(q2.size(), 1)
        self.assertEqual(q2.getLinExpr().getConstant(), -2.0)
        self.assertFalse(hasattr(q2, "getConstant"))  # as in gurobipy 13: QuadExpr has no getConstant
        self.assertEqual(q2.getLinExpr().size(), 2)
        with self.assertRaises(gp.GurobiError):
            (x[0] * x[1]) * x[2]

    def test_tempconstr_has_no_truth_value(self):
        with self.assertRaises(gp.GurobiError):
            bool(self.x[0] <= 1)


class TupleTest(unittest.TestCase):
    def test_tupledict_select_sum_prod(self):
        m = gp.Model()
        x = m.addVars(2, 3, name="x")
        self.assertEqual(len(x.select(1, "*")), 3)
        self.assertEqual(len(x.select("*", 2)), 2)
        self.assertEqual(x.sum(0, "*").size(), 3)
        self.assertEqual(x.sum().size(), 6)
        coeff = {(0, 0): 2.0, (1, 2): 3.0}
        p = x.prod(coeff)
        self.assertEqual(p.size(), 2)
        self.assertEqual(x.prod(coeff, 1, "*").size(), 1)
        self.assertEqual(x.sum(5, "*").size(), 0)

    def test_tuplelist_and_multidict(self):
        tl = gp.tuplelist([(1, "a"), (2, "a"), (1, "b")])
        self.assertEqual(tl.select(1, "*"), [(1, "a"), (1, "b")])
        self.assertEqual(tl.select("*", "a"), [(1, "a"), (2, "a")])
        keys, cost, cap = gp.multidict({"p": [1, 10], "q": [2, 20]})
        self.assertEqual(list(keys), ["p", "q"])
        self.assertEqual((cost["q"], cap["p"]), (2, 10))


class ConstraintTest(unittest.TestCase):
    def test_constraint_forms(self):
        m = gp.Model("c")
        x = m.addVars(3, name="x")
        m.addConstr(x[0] + x[1] <= 4, "a")
        m.addConstr(3 >= x[1], name="b")          # reflected: x[1] <= 3
        m.addConstr(x[0] * 0.5 <= x[0], "c")      # merged: -0.5 x[0] <= 0
        m.addConstr(x[2] == x[1] + 1, "d")
        m.addLConstr(x[0], GRB.GREATER_EQUAL, 1, "e")
        m.addLConstr(x[0] + x[2], "<", 7, "f")
        m.addConstr(x[0] - x[0] + x[1] <= 2, "g")  # cancelling terms disappear
        m.addConstr(1 <= 2, "h")                    # Gurobi: empty row 0 <= 0
        m.addConstr(2 <= 1, "i")                    # Gurobi: empty row 0 <= -1
        cs = m.addConstrs((x[i] <= i for i in range(3)), name="ub")
        m.update()
        self.assertEqual(cs[2].ConstrName, "ub[2]")
        self.assertEqual(cs[1].RHS, 1.0)
        pairs = m.addConstrs((x[i] + x[j] <= 1 for i in range(2) for j in range(2) if i != j), "p")
        self.assertEqual(sorted(pairs.keys()), [(0, 1), (1, 0)])
        m.update()
        self.assertEqual(m.NumConstrs, 9 + 3 + 2)
        text = body(m)
        for line in (" a: x[0] + x[1] <= 4", " b: x[1] <= 3", " c: - 0.5 x[0] <= 0", " d: - x[1] + x[2] = 1",
                     " e: x[0] >= 1", " f: x[0] + x[2] <= 7", " g: x[1] <= 2", " h: <= 0", " i: <= -1",
                     " ub[0]: x[0] <= 0", " p[1,0]: x[0] + x[1] <= 1"):
            self.assertIn(line + "\n", text)

    def test_refused_general_constraints(self):
        # max_/abs_/addGenConstrMax/Indicator are reformulated now (test_gurobipy_genconstr.py); these are not
        m = gp.Model()
        x = m.addVars(2, name="x")
        for call in (lambda: m.addGenConstrExp(x[0], x[1]), lambda: m.addGenConstrPow(x[0], x[1], 2.5),
                     lambda: m.addSOS(GRB.SOS_TYPE1, [x[0], x[1]])):
            with self.assertRaises(gp.GurobiError) as ctx:
                call()
            self.assertEqual(ctx.exception.errno, 10024)
            self.assertIn("unsupported", str(ctx.exception))


class ModelAttrTest(unittest.TestCase):
    def test_params_and_attrs(self):
        m = gp.Model("p")
        m.setParam("OutputFlag", 0)
        m.Params.TimeLimit = 30
        m.params.mipgap = 1e-6
        m.setParam(GRB.Param.Threads, 1)
        self.assertEqual(m.Params.timelimit, 30.0)
        self.assertEqual(m.getParamInfo("MIPGap")[2], 1e-6)
        self.assertEqual(m.Status, GRB.LOADED)
        self.assertEqual(m.status, GRB.LOADED)
        self.assertFalse(hasattr(m, "ObjVal"))
        with self.assertRaises(AttributeError):
            m.objVal
        m.ModelSense = GRB.MAXIMIZE
        m.update()
        self.assertEqual(m.ModelSense, -1)
        x = m.addVar(name="x")
        m.setObjective(2 * x + 3)
        m.update()
        self.assertEqual(m.ModelSense, -1)  # setObjective without a sense keeps it
        self.assertEqual(m.ObjCon, 3.0)
        self.assertEqual(m.getObjective().size(), 1)
        self.assertIs(m.getVarByName("x"), x)
        self.assertEqual(m.NumVars, 1)
        self.assertEqual(m.getAttr("VarName", [x]), ["x"])


class FormatTest(unittest.TestCase):
    def test_numbers(self):
        cases = {0.0: "0", -0.0: "0", 1.0: "1", 9.12: "9.12", 8.3: "8.3", 77.080444561: "77.08044456099999",
                 0.08196034613999315: "0.0819603461399931", 1e6: "1e+06", 438943207.16857004:
                 "4.3894320716857004e+08", 1.5664279467186848e-04: "1.5664279467186848e-04",
                 21.665071255856645: "21.66507125585665", -2.5: "-2.5", 0.06000000000000005: "0.06"}
        for v, s in cases.items():
            self.assertEqual(fmt_num(v), s, repr(v))


class LpWriterTest(unittest.TestCase):
    def test_layout(self):
        m = gp.Model("layout")
        x = m.addVars(12, name="x")
        y = m.addVar(vtype=GRB.BINARY, name="y")
        z = m.addVar(lb=-GRB.INFINITY, vtype=GRB.INTEGER, name="z")
        w = m.addVar(lb=2, ub=5, name="w")
        u = m.addVar(lb=3, name="u")
        v = m.addVar(ub=7, name="v")
        f = m.addVar(lb=4, ub=4, name="f")
        m.setObjective(quicksum(1.5 * x[i] for i in range(12)) - y + 10, GRB.MAXIMIZE)
        m.addConstr(quicksum(123.456789 * x[i] for i in range(12)) <= 1000, "long")
        m.addConstr(z + w + u + v + f >= -3)
        # byte for byte what gurobipy 13.0.3 writes for this model (Constant = 1 after the other bounds)
        expected = """Maximize
  1.5 x[0] + 1.5 x[1] + 1.5 x[2] + 1.5 x[3] + 1.5 x[4] + 1.5 x[5] + 1.5 x[6]
   + 1.5 x[7] + 1.5 x[8] + 1.5 x[9] + 1.5 x[10] + 1.5 x[11] - y
   + 10 Constant
Subject To
 long: 123.456789 x[0] + 123.456789 x[1] + 123.456789 x[2]
   + 123.456789 x[3] + 123.456789 x[4] + 123.456789 x[5] + 123.456789 x[6]
   + 123.456789 x[7] + 123.456789 x[8] + 123.456789 x[9] + 123.456789 x[10]
   + 123.456789 x[11] <= 1000
 R1: z + w + u + v + f >= -3
Bounds
 z free
 2 <= w <= 5
 u >= 3
 v <= 7
 f = 4
 Constant = 1
Binaries
 y
Generals
 z
End
"""
        text = lp_text(m)
        self.maxDiff = None
        self.assertTrue(text.startswith("\\ Model layout\n\\ LP format - for model browsing. Use MPS format "
                                        "to capture full model detail.\n"))
        self.assertEqual(text.split("\n", 2)[2], expected)

    def test_quadratic_sections(self):
        m = gp.Model("q")
        x = m.addVars(2, name="x")
        m.setObjective(x[0] + 3 * x[0] * x[1] + x[1] * x[1], GRB.MINIMIZE)
        m.addConstr(x[1] * x[0] <= 4, "qc")
        m.addConstr(x[0] + x[1] >= 1, "lin")
        text = body(m)
        self.assertIn("  x[0] + [ 6 x[0] * x[1] + 2 x[1] ^2 ] / 2 \n", text)  # gurobipy 13 writes `x ^2`
        # linear rows first, then quadratic ones
        self.assertIn(" lin: x[0] + x[1] >= 1\n qc: [ x[0] * x[1] ] <= 4\n", text)
        self.assertEqual(m.NumQConstrs, 1)

    def test_write_refuses_unknown_formats(self):
        m = gp.Model()
        m.addVar()
        with tempfile.TemporaryDirectory() as d:
            with self.assertRaises(gp.GurobiError):
                m.write(os.path.join(d, "m.mps"))


if __name__ == "__main__":
    unittest.main()


class FastPathTest(unittest.TestCase):
    """The in-place `+` on temporaries and the tupledict select index against their reference paths."""

    def build(self, m, x):
        exprs = [sum(3 * x[i, j] for i in range(4) for j in range(3)),
                 sum((x[i, 0] - 2 for i in range(4)), 5) - x[0, 1] + 7,
                 (x[0, 0] + x[0, 1]) + (x[1, 1] - x[2, 2]) - 4]
        base = x[0, 0] + x[1, 0]
        exprs += [base + x[2, 0], base - x[3, 0], base + 1, base]  # a named expression is never modified
        return [([c for c in e._coeffs], [v.index for v in e._vars], e._const) for e in exprs]

    def test_in_place_add_matches_reference(self):
        from trex_gurobipy import expr
        m = gp.Model()
        x = m.addVars(4, 3, name="x")
        fast = self.build(m, x)
        saved = expr._TEMP_RC
        try:
            expr._TEMP_RC = 0
            reference = self.build(m, x)
        finally:
            expr._TEMP_RC = saved
        self.assertEqual(fast, reference)
        self.assertEqual(fast[-1][1], [0, 3])  # base still holds its two terms

    def test_select_index_matches_scan(self):
        m = gp.Model()
        x = m.addVars(5, ["a", "b"], 3, name="x")
        for pattern in [(1, "*", "*"), ("*", "b", 2), ("*", "*", "*"), (4, "a", 0), (9, "*", "*"),
                        ([1, 2], "*", 0)]:
            self.assertEqual(x.select(*pattern), x._scan_select(*pattern), pattern)
        x[9, "a", 0] = m.addVar(name="late")  # the index is rebuilt after a change
        self.assertEqual(x.select(9, "*", "*"), x._scan_select(9, "*", "*"))
        self.assertEqual(len(x.select(9, "*", "*")), 1)
        self.assertIn((9, "a", 0), x.keys())
