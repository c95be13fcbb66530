"""coptpy oracle, live subset (issue #25 point 4): the same coptpy programs through the real coptpy 8.0.7 (the
reference environment's python, $TREX_REFERENCE_PYTHON) and through trex's coptpy layer must agree — status,
objective (1e-6 relative), Cols, the exception raised and what each program records in RESULT. The full sweep
(every B4O reference program rewritten to coptpy) is bench/coptpy_oracle.bench.sh.

The subset: every ORLM-style program (coptpy_oracle_programs.py), every 25th B4O-Feasible and B4O-ORGEval
reference program in its coptpy rewriting (to_coptpy), and the gurobipy oracle's committed `trex synth` subset
(data/gurobipy_oracle_synth.jsonl: one code answer per family x variant) rewritten the same way."""
import os
import unittest

import coptpy_oracle as co

# What the full sweep measured for these (docs/coptpy-layer.md, "Checked against coptpy 8.0.7"): (category,
# documented difference or None). Every other program of the subset agrees.
EXPECTED = {
    ("orlm", "chained_comparison_error"): ("differ", "chained comparison"),
    ("orlm", "undefined_name_error"): ("both raise", None),
    # COPT adds auxiliary columns for these general constraints (Cols differ; status and objective agree)
    ("orlm", "genconstr_max_min"): ("differ", "general constraints: COPT's auxiliary columns"),
    ("orlm", "genconstr_abs_deviation"): ("differ", "general constraints: COPT's auxiliary columns"),
    ("orlm", "genconstr_pwl_cost"): ("differ", "general constraints: COPT's auxiliary columns"),
    # addConstr(quadratic <= ...): coptpy takes quadratic rows through addQConstr only; both raise its TypeError
    ("b4o_feasible", "BENCH4OPT_56"): ("both raise", None),
    ("b4o_orgeval", "BENCH4OPT_375"): ("both raise", None),
}


def reference_python():
    p = os.environ.get("TREX_REFERENCE_PYTHON")
    if not p or not os.path.exists(p):
        raise RuntimeError(f"TREX_REFERENCE_PYTHON must name the reference environment's python (got {p!r}); "
                           "ctest sets it through the reference_env fixture")
    return p


HERE = os.path.dirname(os.path.abspath(__file__))


def subset():
    synth = [dict(p, code=co.to_coptpy(p["code"]))
             for p in co.load_jsonl(os.path.join(HERE, "data", "gurobipy_oracle_synth.jsonl"))]
    return (co.orlm_programs() + co.b4o_programs("feasible")[::25] + co.b4o_programs("orgeval")[::25] + synth)


class Translation(unittest.TestCase):
    """to_coptpy() itself: the gurobipy forms B4O's programs use become coptpy's."""

    def test_rewrites(self):
        src = ("import gurobipy as gp\nfrom gurobipy import GRB\nm = gp.Model('t')\n"
               "x = m.addVars(3, lb=0, name='x')\nc = m.addConstrs((x[i] <= 1 for i in range(3)), name='cap')\n"
               "m.setObjective(gp.quicksum(x[i] for i in range(3)), GRB.MAXIMIZE)\nm.optimize()\n"
               "if m.Status == GRB.OPTIMAL:\n    print(m.ObjVal, x[0].X, x[0].VarName)\n")
        out = co.to_coptpy(src)
        self.assertNotIn("gurobipy", out)
        self.assertIn("m = _copt_env.createModel('t')", out)
        self.assertIn("addVars(3, lb=0, nameprefix='x')", out)
        self.assertIn("for i in range(3)), nameprefix='cap')", out)
        self.assertIn("cp.quicksum(", out)
        self.assertIn("COPT.MAXIMIZE", out)
        self.assertIn("m.solve()", out)
        self.assertIn("if m.status == COPT.OPTIMAL:", out)
        self.assertIn("print(m.objval, x[0].x, x[0].name)", out)
        # name= inside nested calls or as part of another keyword is left alone
        out = co.to_coptpy("x = m.addVars(f(name='a'), vtype=GRB.BINARY, varname=1, name=n)\n")
        self.assertIn("addVars(f(name='a'), vtype=COPT.BINARY, varname=1, nameprefix=n)", out)


class CompareTest(unittest.TestCase):
    """compare() itself: a difference in any compared quantity is reported."""

    def base(self):
        return {"error": None, "model": True, "Status": 1, "objval": 10.0, "Cols": 3}

    def test_detects_each_kind(self):
        self.assertEqual(co.compare(self.base(), self.base())[0], "agree")
        for key, value in (("Status", 2), ("objval", 10.0001), ("Cols", 4), ("model", False),
                           ("error", {"type": "KeyError", "retcode": None, "message": "'a'"})):
            l = self.base()
            l[key] = value
            cat, reasons = co.compare(self.base(), l)
            self.assertEqual(cat, "differ", key)
            self.assertIsNone(co.documented(self.base(), l, reasons), key)
        l = self.base()
        l["objval"] = 10.0 + 5e-6  # within 1e-6 relative
        self.assertEqual(co.compare(self.base(), l)[0], "agree")
        c2, l2 = dict(self.base(), result={"a": [1, "x"]}), dict(self.base(), result={"a": [1, "y"]})
        self.assertEqual(co.compare(c2, l2)[0], "differ")
        lic = dict(self.base(), error={"type": "CoptError", "retcode": 4, "message": "(LICENSE) Fail"})
        self.assertEqual(co.compare(lic, self.base())[0], "over the size limit")
        uns = dict(self.base(), error={"type": "CoptError", "retcode": 10024, "message": "unsupported: x"})
        self.assertEqual(co.compare(self.base(), uns)[0], "layer unsupported")


class LiveOracle(unittest.TestCase):
    def test_subset_agrees(self):
        programs = subset()
        self.assertEqual(sum(p["set"] == "orlm" for p in programs), len(co.orlm_programs()))
        self.assertEqual(sum(p["set"] == "synth" for p in programs), 28)
        self.assertGreater(len(programs), 90)
        counts, report = co.sweep(programs, reference_python(), "/usr/bin/python3", co.default_trex())
        co.print_report(counts, report)
        wrong = []
        for item in report:
            key = (item["set"], item["id"])
            want = EXPECTED.get(key, ("agree", None))
            if (item["category"], item["documented"]) != want:
                wrong.append((key, item["category"], item["documented"], item["reasons"]))
        self.assertEqual(wrong, [])


if __name__ == "__main__":
    unittest.main()
