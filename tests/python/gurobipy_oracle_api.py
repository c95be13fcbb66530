"""The layer's own test programs for the gurobipy oracle (tests/python/gurobipy_oracle.py, set `api`).

Each program is the scenario of a test in test_gurobipy_api.py / test_gurobipy_solve_client.py written as a plain
gurobipy program: it builds `model`, may solve it, and stores what it observes (names, coefficients, counts,
attribute values, which calls raise) in the global dict RESULT. The oracle runs each one through the real
gurobipy and through the layer and compares RESULT, status, objective, counts and the LP file `model.write()`
produces. Programs use only the modelling API (no TREX_LAYER checks): what the real gurobipy does is the answer.
"""

PROGRAMS = []


def program(name):
    def add(code):
        PROGRAMS.append((name, code))
    return add


program("addvars_index_forms")("""
import gurobipy as gp
from gurobipy import GRB
model = gp.Model("t")
a = model.addVars(3, name="a")
b = model.addVars(2, 3, name="b")
c = model.addVars(["x", "y"], range(2), name="c")
arcs = gp.tuplelist([(1, 2), (2, 3)])
f = model.addVars(arcs, name="flow")
g = model.addVars(arcs, ["k"], name="g")
model.update()
RESULT = {"a": list(a.keys()), "b4": list(b.keys())[4], "b12": b[1, 2].VarName, "cy1": c["y", 1].VarName,
          "f23": f[2, 3].VarName, "g": sorted(map(str, g.keys())), "n": len(model.getVars()),
          "names": [v.VarName for v in model.getVars()]}
""")

program("addvars_per_key_arguments")("""
import gurobipy as gp
from gurobipy import GRB
model = gp.Model()
x = model.addVars(3, lb=[1, 2, 3], ub={0: 5, 1: 6, 2: 7}, obj=2.5, vtype=[GRB.INTEGER, GRB.BINARY, GRB.CONTINUOUS],
                  name=["p", "q", "r"])
model.update()
RESULT = {"lb": [v.LB for v in x.values()], "ub2": x[2].ub, "vt1": x[1].VType, "n0": x[0].VarName, "obj1": x[1].Obj}
model.optimize()
RESULT["x"] = [v.X for v in x.values()]
""")

program("default_names")("""
import gurobipy as gp
model = gp.Model()
x = model.addVars(2)
y = model.addVar()
c = model.addConstr(x[0] + y <= 1)
model.update()
RESULT = {"names": [x[0].VarName, x[1].VarName, y.VarName], "row": c.ConstrName}
""")

program("setattr_and_case_insensitive")("""
import gurobipy as gp
from gurobipy import GRB
model = gp.Model()
v = model.addVar(name="v")
v.setAttr(GRB.Attr.UB, 4)
v.lb = -2
model.update()
RESULT = {"b": [v.LB, v.UB, v.lb, v.ub]}
v.VType = "I"
model.update()
RESULT["vt"] = v.vtype
RESULT["hasX"] = hasattr(v, "X")
model.setObjective(v, GRB.MAXIMIZE)
model.optimize()
RESULT["X"] = v.X
RESULT["hasX2"] = hasattr(v, "X")
""")

program("linear_arithmetic")("""
import gurobipy as gp
from gurobipy import GRB, quicksum
model = gp.Model()
x = model.addVars(3, name="x")
e = 2 * x[0] + x[1] * 3 - x[2] / 4 + 5 - (x[0] - 1)
s = sum(x[i] for i in range(3))
q = quicksum(i * x[i] for i in range(3))
RESULT = {"type": type(e).__name__, "size": e.size(), "const": e.getConstant(),
          "coeffs": [e.getCoeff(i) for i in range(4)], "neg": (-e).getConstant(), "s": s.size(),
          "q": [q.getCoeff(i) for i in range(q.size())]}
model.addConstr(e <= 10, "e")
model.addConstr(s >= 1, "s")
model.setObjective(q, GRB.MINIMIZE)
""")

program("numpy_scalars")("""
import numpy as np
import gurobipy as gp
from gurobipy import GRB
model = gp.Model("np")
x = model.addVars(3, name="x")
e = np.float64(2.5) * x[0] + np.int64(3) * x[1]
tc = np.float64(4.0) <= x[0]
e2 = x[0] * np.float64(2.0) + np.float64(1.0)
RESULT = {"type": type(e).__name__, "c": [e.getCoeff(0), e.getCoeff(1)], "tc": type(tc).__name__,
          "const": e2.getConstant()}
model.addConstr(e >= np.float64(7.5), "a")
model.addConstr(tc, "b")
model.setObjective(e2 + x[2], GRB.MINIMIZE)
""")

program("inplace_and_linexpr_constructors")("""
import gurobipy as gp
model = gp.Model()
x = model.addVars(3, name="x")
e = gp.LinExpr()
e += x[0]
e += 2 * x[1]
e -= 1
e.addTerms([1.0, 2.0], [x[1], x[2]])
e.add(x[0], 3)
RESULT = {"size": e.size(), "const": e.getConstant(), "ctor": [gp.LinExpr([1, 2], [x[0], x[1]]).size(),
          gp.LinExpr(2.0, x[0]).getCoeff(0), gp.LinExpr([(3, x[2])]).getCoeff(0)]}
model.addConstr(e <= 8, "e")
model.setObjective(-e)
""")

program("quadratic_expressions")("""
import gurobipy as gp
model = gp.Model("q")
x = model.addVars(3, name="x")
q = x[0] * x[1] + 2 * x[2] ** 2 + x[0]
q2 = (x[0] + 1) * (x[1] - 2)
RESULT = {"type": type(q).__name__, "size": q.size(), "q2": [q2.size(), q2.getLinExpr().getConstant(), q2.getLinExpr().size()],
          "has_getConstant": hasattr(q2, "getConstant")}
model.setObjective(q + q2)
model.addConstr(x[0] + x[1] + x[2] <= 4, "cap")
""")

program("tempconstr_truth_value")("""
import gurobipy as gp
model = gp.Model()
x = model.addVar(name="x")
try:
    bool(x <= 1)
    RESULT = {"bool": "ok"}
except gp.GurobiError:
    RESULT = {"bool": "GurobiError"}
""")

program("tupledict_select_sum_prod")("""
import gurobipy as gp
model = gp.Model()
x = model.addVars(2, 3, name="x")
coeff = {(0, 0): 2.0, (1, 2): 3.0}
RESULT = {"sel1": len(x.select(1, "*")), "sel2": len(x.select("*", 2)), "sum0": x.sum(0, "*").size(),
          "sum": x.sum().size(), "prod": x.prod(coeff).size(), "prod1": x.prod(coeff, 1, "*").size(),
          "sum5": x.sum(5, "*").size()}
model.addConstr(x.sum(0, "*") <= 3, "row0")
model.addConstr(x.prod(coeff) >= 1, "prod")
model.setObjective(x.sum())
""")

program("tuplelist_and_multidict")("""
import gurobipy as gp
tl = gp.tuplelist([(1, "a"), (2, "a"), (1, "b")])
keys, cost, cap = gp.multidict({"p": [1, 10], "q": [2, 20]})
RESULT = {"s1": list(map(list, tl.select(1, "*"))), "sa": list(map(list, tl.select("*", "a"))), "keys": list(keys),
          "v": [cost["q"], cap["p"]]}
model = gp.Model("md")
y = model.addVars(keys, ub=cap, obj=cost, name="y")
model.addConstr(y.sum() >= 15, "need")
model.optimize()
""")

program("constraint_forms")("""
import gurobipy as gp
from gurobipy import GRB
model = gp.Model("c")
x = model.addVars(3, name="x")
model.addConstr(x[0] + x[1] <= 4, "a")
model.addConstr(3 >= x[1], name="b")
model.addConstr(x[0] * 0.5 <= x[0], "c")
model.addConstr(x[2] == x[1] + 1, "d")
model.addLConstr(x[0], GRB.GREATER_EQUAL, 1, "e")
model.addLConstr(x[0] + x[2], "<", 7, "f")
model.addConstr(x[0] - x[0] + x[1] <= 2, "g")
model.addConstr(1 <= 2, "h")
model.addConstr(2 <= 1, "i")
cs = model.addConstrs((x[i] <= i for i in range(3)), name="ub")
pairs = model.addConstrs((x[i] + x[j] <= 1 for i in range(2) for j in range(2) if i != j), "p")
model.update()
RESULT = {"ub2": cs[2].ConstrName, "rhs": cs[1].RHS, "pairs": sorted(map(list, pairs.keys())),
          "n": model.NumConstrs}
""")

program("legacy_addconstr")("""
import gurobipy as gp
from gurobipy import GRB
model = gp.Model("legacy")
x = model.addVar(name="x")
y = model.addVar(name="y")
model.addConstr(x + y, GRB.LESS_EQUAL, 10, "c0")
model.addConstr(x - y, GRB.GREATER_EQUAL, -2, "c1")
model.addConstr(2 * x, GRB.EQUAL, y + 1, "c2")
model.setObjective(x + 2 * y, GRB.MAXIMIZE)
model.optimize()
RESULT = {"x": x.X, "y": y.X}
""")

program("params_and_attrs")("""
import gurobipy as gp
from gurobipy import GRB
model = gp.Model("p")
model.setParam("OutputFlag", 0)
model.Params.TimeLimit = 30
model.params.mipgap = 1e-6
model.setParam(GRB.Param.Threads, 1)
RESULT = {"tl": model.Params.timelimit, "status": model.Status, "status2": model.status,
          "hasObj": hasattr(model, "ObjVal")}
x = model.addVar(ub=4, vtype=GRB.INTEGER, name="x")
y = model.addVar(ub=2.5, name="y")
model.addConstr(x + y <= 5.5, "cap")
model.setObjective(3 * x + y + 1, GRB.MAXIMIZE)
model.optimize()
RESULT.update({"obj": model.ObjVal, "objval": model.objval, "objcon": model.ObjCon, "sense": model.ModelSense,
               "nv": model.NumVars, "nc": model.NumConstrs, "ni": model.NumIntVars, "nb": model.NumBinVars,
               "ismip": model.IsMIP, "solcount": model.SolCount, "x": [x.X, y.X]})
""")

program("numbers_in_lp")("""
import gurobipy as gp
model = gp.Model("num")
x = model.addVars(6, name="x")
vals = [0.1, 1e-7, 123456789.0, 9.119999999999999, 1.0 / 3.0, 2.5e-3]
model.addConstr(gp.quicksum(v * x[i] for i, v in enumerate(vals)) <= 1e7 / 3.0, "r")
model.addConstr(0.3 * x[0] - 1e6 * x[1] >= -4.4e-5, "s")
model.setObjective(gp.quicksum((i + 0.7) * x[i] for i in range(6)) + 0.1 + 0.2)
""")

program("layout_long_rows")("""
import gurobipy as gp
from gurobipy import GRB
model = gp.Model("long layout")
x = model.addVars(40, name="quite_long_variable_name")
model.addConstr(gp.quicksum((i + 1.25) * x[i] for i in range(40)) <= 1000, "long_row")
model.addConstr(gp.quicksum(x[i] for i in range(0, 40, 3)) >= 2, "every_third")
model.setObjective(gp.quicksum((3 * i % 7 + 0.5) * x[i] for i in range(40)), GRB.MAXIMIZE)
for i in range(0, 40, 5):
    x[i].UB = 10 + i
""")

program("bounds_forms")("""
import gurobipy as gp
from gurobipy import GRB
model = gp.Model("bounds")
a = model.addVar(lb=-GRB.INFINITY, name="free")
b = model.addVar(lb=2, name="lower")
c = model.addVar(ub=7, name="upper")
d = model.addVar(lb=-3, ub=4, name="both")
e = model.addVar(lb=5, ub=5, name="fixed")
f = model.addVar(lb=-2, name="neglb")
g = model.addVar(vtype=GRB.BINARY, name="bin")
h = model.addVar(lb=1, ub=9, vtype=GRB.INTEGER, name="int")
i = model.addVar(lb=-GRB.INFINITY, ub=3, name="freeub")
model.addConstr(a + b + c + d + e + f + g + h + i >= 1, "all")
model.addConstr(a >= -10, "afloor")
model.addConstr(f + i >= -20, "fifloor")
model.setObjective(a + b + c + d + e + f + g + h + i, GRB.MINIMIZE)
model.optimize()
""")

program("quadratic_sections")("""
import gurobipy as gp
model = gp.Model("qs")
x = model.addVars(3, name="x")
model.setObjective(x[0] * x[0] + 3 * x[0] * x[1] + x[2] + 4)
model.addQConstr(x[0] * x[2] + x[1] * x[1] <= 5, "qc")
model.addConstr(x[0] + x[1] >= 1, "lin")
model.update()
RESULT = {"nq": model.NumQConstrs, "isqp": model.IsQP, "isqcp": model.IsQCP}
""")

program("objective_constant_only")("""
import gurobipy as gp
from gurobipy import GRB
model = gp.Model("const")
x = model.addVar(ub=3, name="x")
model.addConstr(x >= 1, "c")
model.setObjective(gp.LinExpr(12.5), GRB.MINIMIZE)
model.optimize()
RESULT = {"obj": model.ObjVal}
""")

program("infeasible_lp")("""
import gurobipy as gp
from gurobipy import GRB
model = gp.Model("inf")
x = model.addVar(name="x")
y = model.addVar(name="y")
model.addConstr(x + y <= 1, "a")
model.addConstr(x + y >= 2, "b")
model.setObjective(x + y)
model.optimize()
RESULT = {"status": model.Status, "hasObj": hasattr(model, "ObjVal"), "solcount": model.SolCount}
""")

program("unbounded_lp")("""
import gurobipy as gp
from gurobipy import GRB
model = gp.Model("unb")
x = model.addVar(name="x")
y = model.addVar(name="y")
model.addConstr(x - y <= 1, "a")
model.setObjective(x + y, GRB.MAXIMIZE)
model.optimize()
RESULT = {"status": model.Status}
""")

program("infeasible_mip")("""
import gurobipy as gp
from gurobipy import GRB
model = gp.Model("infmip")
x = model.addVars(3, vtype=GRB.INTEGER, ub=5, name="x")
model.addConstr(2 * x[0] + 2 * x[1] + 2 * x[2] == 7, "odd")
model.setObjective(x.sum(), GRB.MAXIMIZE)
model.optimize()
RESULT = {"status": model.Status}
""")

program("knapsack_mip")("""
import gurobipy as gp
from gurobipy import GRB
w = [12, 7, 11, 8, 9, 6, 5, 14]
v = [24, 13, 23, 15, 16, 11, 8, 27]
model = gp.Model("knap")
x = model.addVars(len(w), vtype=GRB.BINARY, name="take")
model.addConstr(gp.quicksum(w[i] * x[i] for i in range(len(w))) <= 40, "cap")
model.setObjective(gp.quicksum(v[i] * x[i] for i in range(len(w))), GRB.MAXIMIZE)
model.optimize()
RESULT = {"obj": model.ObjVal, "ismip": model.IsMIP, "nb": model.NumBinVars}
""")

program("transport_lp")("""
import gurobipy as gp
from gurobipy import GRB
supply = {"A": 30, "B": 25}
demand = {"x": 20, "y": 15, "z": 10}
cost = {("A", "x"): 4, ("A", "y"): 6, ("A", "z"): 9, ("B", "x"): 5, ("B", "y"): 3, ("B", "z"): 8}
model = gp.Model("transport")
f = model.addVars(cost.keys(), obj=cost, name="ship")
model.addConstrs((f.sum(s, "*") <= supply[s] for s in supply), "supply")
model.addConstrs((f.sum("*", d) >= demand[d] for d in demand), "demand")
model.optimize()
RESULT = {"obj": model.ObjVal, "rows": [c.ConstrName for c in model.getConstrs()],
          "sl": [round(c.Slack, 9) for c in model.getConstrs()]}
""")

program("getrow_chgcoeff_remove")("""
import gurobipy as gp
from gurobipy import GRB
model = gp.Model("edit")
x = model.addVars(3, name="x")
c0 = model.addConstr(x[0] + 2 * x[1] + 3 * x[2] <= 10, "c0")
c1 = model.addConstr(x[0] - x[2] >= -1, "c1")
model.setObjective(x[0] + x[1] + x[2], GRB.MAXIMIZE)
model.update()
row = model.getRow(c0)
RESULT = {"row": [row.size(), [row.getCoeff(i) for i in range(row.size())]], "coeff": model.getCoeff(c0, x[1])}
model.chgCoeff(c0, x[1], 5)
model.remove(c1)
model.update()
RESULT["coeff2"] = model.getCoeff(c0, x[1])
RESULT["n"] = model.NumConstrs
RESULT["byname"] = model.getVarByName("x[2]").VarName
RESULT["cbyname"] = model.getConstrByName("c0").ConstrName
model.optimize()
RESULT["obj"] = model.ObjVal
""")

program("getattr_lists")("""
import gurobipy as gp
from gurobipy import GRB
model = gp.Model("attrs")
x = model.addVars(4, ub=[1, 2, 3, 4], name="x")
model.addConstr(x.sum() <= 6, "cap")
model.setObjective(gp.quicksum((i + 1) * x[i] for i in range(4)), GRB.MAXIMIZE)
model.optimize()
RESULT = {"ub": model.getAttr("UB", model.getVars()), "x": model.getAttr("X", model.getVars()),
          "xd": sorted(model.getAttr("X", x).items()), "names": model.getAttr("VarName", model.getVars()),
          "rhs": model.getAttr("RHS", model.getConstrs())}
model.setAttr("UB", model.getVars(), [2, 2, 2, 2])
model.optimize()
RESULT["obj2"] = model.ObjVal
""")

program("objective_change_and_resolve")("""
import gurobipy as gp
from gurobipy import GRB
model = gp.Model("resolve")
x = model.addVar(ub=10, name="x")
y = model.addVar(ub=10, name="y")
model.addConstr(x + 2 * y <= 14, "c")
model.setObjective(x + y, GRB.MAXIMIZE)
model.optimize()
RESULT = {"first": model.ObjVal}
model.setObjective(x - y, GRB.MINIMIZE)
model.optimize()
RESULT["second"] = model.ObjVal
y.LB = 3
model.optimize()
RESULT["third"] = model.ObjVal
""")

program("names_with_spaces_and_duplicates")("""
import gurobipy as gp
from gurobipy import GRB
model = gp.Model("names")
a = model.addVar(name="dup")
b = model.addVar(name="dup")
model.addConstr(a + b >= 2, "row")
model.addConstr(a - b <= 1, "row")
model.setObjective(a + 3 * b)
model.optimize()
RESULT = {"obj": model.ObjVal}
""")

program("addvars_generator_keys")("""
import gurobipy as gp
from gurobipy import GRB
items = ["bolt", "nut", "gear"]
periods = range(1, 4)
model = gp.Model("plan")
make = model.addVars(items, periods, vtype=GRB.INTEGER, name="make")
inv = model.addVars(items, periods, name="inv")
dem = {(i, t): 3 + len(i) + t for i in items for t in periods}
for i in items:
    for t in periods:
        prev = inv[i, t - 1] if t > 1 else 0
        model.addConstr(prev + make[i, t] - inv[i, t] == dem[i, t], name=f"bal[{i},{t}]")
model.addConstrs((make.sum("*", t) <= 30 for t in periods), name="cap")
model.setObjective(gp.quicksum(2 * make[i, t] + 0.5 * inv[i, t] for i in items for t in periods))
model.optimize()
RESULT = {"obj": model.ObjVal, "ni": model.NumIntVars}
""")

program("linexpr_getvalue_and_slack")("""
import gurobipy as gp
from gurobipy import GRB
model = gp.Model("val")
x = model.addVars(2, name="x")
e = 3 * x[0] + 2 * x[1] + 1
c = model.addConstr(x[0] + x[1] <= 4, "cap")
model.addConstr(x[0] <= 3, "x0")
model.setObjective(e, GRB.MAXIMIZE)
model.optimize()
RESULT = {"val": e.getValue(), "slack": c.Slack, "obj": model.getObjective().getValue()}
""")

program("mixed_vtypes_and_generals")("""
import gurobipy as gp
from gurobipy import GRB
model = gp.Model("mixed")
x = model.addVars(3, vtype=GRB.INTEGER, ub=10, name="n")
y = model.addVars(2, vtype=GRB.BINARY, name="open")
z = model.addVar(name="z")
model.addConstr(x[0] + x[1] + x[2] <= 10 * y[0] + 5 * y[1], "link")
model.addConstr(z >= 0.5 * x[0] - 1, "z")
model.addConstr(x.sum() >= 7, "need")
model.setObjective(3 * y[0] + 2 * y[1] + x.sum() + z)
model.optimize()
RESULT = {"obj": model.ObjVal}
""")

program("addconstr_true_false_and_empty")("""
import gurobipy as gp
model = gp.Model("consts")
x = model.addVar(name="x")
model.addConstr(x <= 5, "a")
model.addConstr(gp.LinExpr() <= 3, "empty")
model.addConstr(x - x >= 0, "cancel")
model.setObjective(-x)
model.optimize()
RESULT = {"obj": model.ObjVal, "n": model.NumConstrs}
""")

program("maximize_with_constant")("""
import gurobipy as gp
from gurobipy import GRB
model = gp.Model("maxc")
x = model.addVars(3, ub=4, name="x")
model.addConstr(x[0] + x[1] + x[2] <= 7.5, "c")
model.setObjective(2 * x[0] + x[1] - x[2] + 100, GRB.MAXIMIZE)
model.optimize()
RESULT = {"obj": model.ObjVal, "objcon": model.ObjCon}
""")

program("setobjective_sense_attribute")("""
import gurobipy as gp
from gurobipy import GRB
model = gp.Model("sense")
x = model.addVar(ub=4, name="x")
model.setObjective(x)
model.ModelSense = GRB.MAXIMIZE
model.optimize()
RESULT = {"obj": model.ObjVal, "sense": model.ModelSense}
""")

program("strict_senses_and_truth_value")("""
import gurobipy as gp
model = gp.Model("strict")
x = model.addVar(ub=3, name="x")
RESULT = {}
for key, f in (("lt", lambda: x < 1), ("gt", lambda: 2 > x), ("bool", lambda: bool(x <= 1))):
    try:
        f()
        RESULT[key] = "ok"
    except Exception as e:
        RESULT[key] = [type(e).__name__, getattr(e, "errno", None), str(e)]
model.setObjective(-x)
model.optimize()
""")

program("cubic_product")("""
import gurobipy as gp
model = gp.Model("cubic")
x = model.addVars(3, ub=2, name="x")
model.addConstr(x.sum() <= 4, "cap")
e = (x[0] * x[1]) * x[2]
model.setObjective(x.sum())
""")

program("unused_variables_in_lp")("""
import gurobipy as gp
from gurobipy import GRB
model = gp.Model("unused")
a = model.addVars(6, name="a")
a[3].UB = 5
a[4].VType = GRB.BINARY
b = model.addVar(lb=-3, name="b")
model.addConstr(a[0] + a[1] >= 1, "c")
model.setObjective(a[2] + 0 * a[5])
model.optimize()
""")

program("unnamed_model")("""
import gurobipy as gp
model = gp.Model()
x = model.addVars(2, ub=4)
model.addConstr(x[0] + 2 * x[1] <= 5)
model.setObjective(x[0] + x[1], -1)
model.optimize()
""")

program("unavailable_attribute_errors")("""
import gurobipy as gp
model = gp.Model("unavail")
x = model.addVar(name="x")
model.addConstr(x >= 1, "c")
RESULT = {}
for key, f in (("X", lambda: x.X), ("ObjVal", lambda: model.ObjVal)):
    try:
        f()
        RESULT[key] = "ok"
    except gp.GurobiError as e:
        RESULT[key] = ["GurobiError", e.errno]
    except AttributeError:  # messages differ before update(): "Index out of range for attribute 'X'"
        RESULT[key] = "AttributeError"
model.setObjective(x)
model.optimize()
RESULT["after"] = [x.X, model.ObjVal]
""")

program("named_second_argument_forms")("""
import gurobipy as gp
from gurobipy import GRB
model = gp.Model("forms")
x = model.addVars(2, name="x")
model.addLConstr(x[0] + x[1] <= 3, "l1")
model.addLConstr(x[0], GRB.LESS_EQUAL, 2, "l2")
model.addQConstr(x[0] * x[1] <= 2, "q1")
model.addQConstr(x[0] * x[0], GRB.LESS_EQUAL, 4, "q2")
model.setObjective(x[0] + x[1], GRB.MAXIMIZE)
model.update()
RESULT = {"rows": [c.ConstrName for c in model.getConstrs()], "q": [c.QCName for c in model.getQConstrs()]}
""")

program("layout_every_section")("""
import gurobipy as gp
from gurobipy import GRB, quicksum
model = gp.Model("layout")
x = model.addVars(12, name="x")
y = model.addVar(vtype=GRB.BINARY, name="y")
z = model.addVar(lb=-GRB.INFINITY, vtype=GRB.INTEGER, name="z")
w = model.addVar(lb=2, ub=5, name="w")
u = model.addVar(lb=3, name="u")
v = model.addVar(ub=7, name="v")
f = model.addVar(lb=4, ub=4, name="f")
model.setObjective(quicksum(1.5 * x[i] for i in range(12)) - y + 10, GRB.MAXIMIZE)
model.addConstr(quicksum(123.456789 * x[i] for i in range(12)) <= 1000, "long")
model.addConstr(z + w + u + v + f >= -3)
""")

program("lazy_updates")("""
import gurobipy as gp
from gurobipy import GRB
model = gp.Model("lazy")
x = model.addVar(ub=4, name="x")
c = model.addConstr(x <= 3, "c")
RESULT = {}
def probe(key, f):
    try:
        RESULT[key] = f()
    except Exception as e:
        RESULT[key] = type(e).__name__
probe("name", lambda: x.VarName)
probe("ub", lambda: x.UB)
probe("cname", lambda: c.ConstrName)
probe("rhs", lambda: c.RHS)
probe("counts", lambda: [len(model.getVars()), len(model.getConstrs()), model.NumVars, model.NumConstrs])
probe("repr", lambda: repr(x))
model.setObjective(x, GRB.MAXIMIZE)
probe("sense", lambda: model.ModelSense)
probe("objsize", lambda: model.getObjective().size())
model.update()
probe("after", lambda: [model.ModelSense, model.getObjective().size(), model.NumVars, x.VarName])
x.UB = 2
x.VType = GRB.INTEGER
probe("pending", lambda: [x.UB, x.VType, model.NumIntVars])
y = model.addVar(name="y")
probe("vars", lambda: [v.VarName for v in model.getVars()])
model.ModelSense = -model.ModelSense
for v in model.getVars():
    v.Obj = 2
model.optimize()
probe("solved", lambda: [x.UB, x.VType, model.NumIntVars, len(model.getVars()), model.ModelSense, model.ObjVal])
""")

program("modify_before_update")("""
import gurobipy as gp
from gurobipy import GRB
model = gp.Model("pending")
x = model.addVars(3, ub=5, vtype=GRB.INTEGER, name="x")
model.addConstr(x.sum() <= 7, "cap")
model.setObjective(x[0] + 2 * x[1] + 3 * x[2], GRB.MAXIMIZE)
model.ModelSense = -model.ModelSense      # reads the default sense (1) before any update: sets -1 again
for v in model.getVars():                 # empty before any update: nothing relaxed
    v.VType = GRB.CONTINUOUS
model.addConstr(gp.quicksum(model.getVars()) >= 1, "extra")   # 0 >= 1 before any update: infeasible
model.optimize()
RESULT = {"status": model.Status, "n": model.NumConstrs}
""")
