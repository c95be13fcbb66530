"""coptpy programs for the coptpy oracle (tests/python/coptpy_oracle.py), in the shape ORLM-style models answer
(ORLM, Huang et al. 2024: `import coptpy as cp; from coptpy import COPT; env = cp.Envr(); model =
env.createModel(...); ...; model.solve(); if model.status == COPT.OPTIMAL: print(model.objval)`), covering
the modelling surface such answers use: addVar/addVars (index forms, nameprefix, per-key bounds), addConstr in
its three forms, addConstrs over generators, tupledict sum/prod/select, quicksum, LinExpr, COPT constants,
status/objval/getAttr/getInfo, setObjective / setObjSense, solve() / solveLP(), Var.x, setParam, and the
infeasible / unbounded outcomes.

Each program builds `model`, usually solves it, and may store observations in the global dict RESULT (only
values that do not depend on which optimal vertex a solver returns). The oracle runs each one through the real
coptpy and through trex's layer and compares status, objective, the error raised and RESULT.
"""

PROGRAMS = []


def program(name):
    def add(code):
        PROGRAMS.append((name, code))
    return add


program("production_lp")("""
import coptpy as cp
from coptpy import COPT

env = cp.Envr()
model = env.createModel("ProductionPlanning")
x = model.addVar(lb=0, name="x")
y = model.addVar(lb=0, name="y")
model.addConstr(2 * x + 3 * y <= 100, name="Labor")
model.addConstr(4 * x + 2 * y <= 120, name="Material")
model.setObjective(30 * x + 40 * y, sense=COPT.MAXIMIZE)
model.solve()
if model.status == COPT.OPTIMAL:
    print("Maximum profit: {:.2f}".format(model.objval))
    print(f"x = {x.x}, y = {y.x}")
RESULT = {"x": round(x.x, 6), "y": round(y.x, 6), "names": [v.name for v in model.getVars()]}
""")

program("integer_production")("""
import coptpy as cp
from coptpy import COPT

env = cp.Envr()
model = env.createModel("IntegerProduction")
x = model.addVar(lb=0, vtype=COPT.INTEGER, name="chairs")
y = model.addVar(lb=0, vtype=COPT.INTEGER, name="tables")
model.addConstr(3 * x + 5 * y <= 47, name="wood")
model.addConstr(x + 2 * y <= 17, name="hours")
model.addConstr(x >= 2)
model.setObjective(20 * x + 45 * y, sense=COPT.MAXIMIZE)
model.solve()
if model.status == COPT.OPTIMAL:
    print("Optimal objective value:", model.objval)
    for v in model.getVars():
        print(v.name, "=", v.x)
""")

program("diet_min_cost")("""
import coptpy as cp
from coptpy import COPT

foods = ["bread", "milk", "cheese", "potato", "fish", "yogurt"]
cost = {"bread": 2.0, "milk": 3.5, "cheese": 8.0, "potato": 1.5, "fish": 11.0, "yogurt": 1.0}
protein = {"bread": 4.0, "milk": 8.0, "cheese": 7.0, "potato": 1.3, "fish": 8.0, "yogurt": 9.2}
calories = {"bread": 65, "milk": 150, "cheese": 110, "potato": 80, "fish": 300, "yogurt": 70}

env = cp.Envr()
model = env.createModel("Diet")
buy = model.addVars(foods, lb=0, ub=10, nameprefix="buy")
model.addConstr(cp.quicksum(protein[f] * buy[f] for f in foods) >= 40, name="protein")
model.addConstr(cp.quicksum(calories[f] * buy[f] for f in foods) >= 1800, name="calories_min")
model.addConstr(cp.quicksum(calories[f] * buy[f] for f in foods) <= 2400, name="calories_max")
model.setObjective(cp.quicksum(cost[f] * buy[f] for f in foods), COPT.MINIMIZE)
model.solve()
if model.status == COPT.OPTIMAL:
    print("Minimum cost:", round(model.objval, 2))
RESULT = {"names": [buy[f].name for f in foods], "keys": list(buy.keys())}
""")

program("transportation")("""
import coptpy as cp
from coptpy import COPT

supply = {"W1": 120, "W2": 80, "W3": 150}
demand = {"C1": 90, "C2": 110, "C3": 60, "C4": 70}
cost = {("W1", "C1"): 4, ("W1", "C2"): 6, ("W1", "C3"): 9, ("W1", "C4"): 5,
        ("W2", "C1"): 5, ("W2", "C2"): 3, ("W2", "C3"): 7, ("W2", "C4"): 8,
        ("W3", "C1"): 6, ("W3", "C2"): 5, ("W3", "C3"): 4, ("W3", "C4"): 6}

env = cp.Envr()
model = env.createModel("Transportation")
x = model.addVars(supply.keys(), demand.keys(), lb=0, nameprefix="ship")
model.addConstrs((x.sum(w, "*") <= supply[w] for w in supply), nameprefix="supply")
model.addConstrs((x.sum("*", c) >= demand[c] for c in demand), nameprefix="demand")
model.setObjective(x.prod(cost), sense=COPT.MINIMIZE)
model.solve()
if model.status == COPT.OPTIMAL:
    print("Total transportation cost:", model.objval)
RESULT = {"n": len(x), "first": x["W1", "C1"].name, "rows": [c.name for c in model.getConstrs()]}
""")

program("assignment_binary")("""
import coptpy as cp
from coptpy import COPT

workers = range(4)
jobs = range(4)
c = [[9, 2, 7, 8], [6, 4, 3, 7], [5, 8, 1, 8], [7, 6, 9, 4]]
env = cp.Envr()
model = env.createModel("Assignment")
x = model.addVars(workers, jobs, vtype=COPT.BINARY, nameprefix="x")
for i in workers:
    model.addConstr(cp.quicksum(x[i, j] for j in jobs) == 1, name=f"worker_{i}")
for j in jobs:
    model.addConstr(cp.quicksum(x[i, j] for i in workers) == 1, name=f"job_{j}")
model.setObjective(cp.quicksum(c[i][j] * x[i, j] for i in workers for j in jobs), sense=COPT.MINIMIZE)
model.solve()
if model.status == COPT.OPTIMAL:
    print("Minimum total cost:", model.objval)
    for i in workers:
        for j in jobs:
            if x[i, j].x > 0.5:
                print(f"worker {i} -> job {j}")
RESULT = {"assignment": sorted((i, j) for i in workers for j in jobs if x[i, j].x > 0.5)}
""")

program("knapsack")("""
import coptpy as cp
from coptpy import COPT

values = [60, 100, 120, 80, 30, 70]
weights = [10, 20, 30, 15, 5, 12]
capacity = 50
n = len(values)
env = cp.Envr()
model = env.createModel("Knapsack")
x = model.addVars(n, vtype=COPT.BINARY, nameprefix="item")
model.addConstr(cp.quicksum(weights[i] * x[i] for i in range(n)) <= capacity, name="capacity")
model.setObjective(cp.quicksum(values[i] * x[i] for i in range(n)), COPT.MAXIMIZE)
model.solve()
if model.status == COPT.OPTIMAL:
    print("Best value:", model.objval)
RESULT = {"chosen": [i for i in range(n) if x[i].x > 0.5], "name2": x[2].name, "vtype": x[0].vtype}
""")

program("facility_location")("""
import coptpy as cp
from coptpy import COPT

facilities = ["F1", "F2", "F3"]
customers = ["A", "B", "C", "D"]
fixed = {"F1": 1000, "F2": 1200, "F3": 900}
cap = {"F1": 80, "F2": 100, "F3": 70}
dem = {"A": 30, "B": 40, "C": 25, "D": 35}
cost = {("F1", "A"): 4, ("F1", "B"): 5, ("F1", "C"): 6, ("F1", "D"): 8,
        ("F2", "A"): 6, ("F2", "B"): 4, ("F2", "C"): 3, ("F2", "D"): 5,
        ("F3", "A"): 9, ("F3", "B"): 7, ("F3", "C"): 4, ("F3", "D"): 3}
env = cp.Envr()
model = env.createModel("FacilityLocation")
y = model.addVars(facilities, vtype=COPT.BINARY, nameprefix="open")
x = model.addVars(facilities, customers, lb=0, nameprefix="flow")
model.addConstrs((x.sum("*", c) == dem[c] for c in customers), nameprefix="demand")
model.addConstrs((x.sum(f, "*") <= cap[f] * y[f] for f in facilities), nameprefix="capacity")
model.setObjective(cp.quicksum(fixed[f] * y[f] for f in facilities) + x.prod(cost), sense=COPT.MINIMIZE)
model.solve()
if model.status == COPT.OPTIMAL:
    print("Total cost:", model.objval)
""")

program("addconstr_sense_form")("""
import coptpy as cp
from coptpy import COPT

env = cp.Envr()
model = env.createModel("SenseForm")
x = model.addVar(lb=0, ub=10, name="x")
y = model.addVar(lb=0, ub=10, name="y")
model.addConstr(x + y, COPT.LESS_EQUAL, 12, "total")
model.addConstr(x - y, COPT.GREATER_EQUAL, -2, "diff")
model.addConstr(x + 2 * y, COPT.EQUAL, 14, "link")
model.setObjective(3 * x + 2 * y, sense=COPT.MAXIMIZE)
model.solve()
if model.status == COPT.OPTIMAL:
    print(model.objval)
RESULT = {"x": round(x.x, 6), "y": round(y.x, 6)}
""")

program("infeasible_lp")("""
import coptpy as cp
from coptpy import COPT

env = cp.Envr()
model = env.createModel("Infeasible")
x = model.addVar(lb=0, name="x")
y = model.addVar(lb=0, name="y")
model.addConstr(x + y >= 10)
model.addConstr(x + y <= 5)
model.setObjective(x + y, COPT.MINIMIZE)
model.solve()
if model.status == COPT.OPTIMAL:
    print(model.objval)
elif model.status == COPT.INFEASIBLE:
    print("The model is infeasible")
RESULT = {"status": model.status}
""")

program("infeasible_mip")("""
import coptpy as cp
from coptpy import COPT

env = cp.Envr()
model = env.createModel("InfeasibleMIP")
n = model.addVar(lb=0, ub=10, vtype=COPT.INTEGER, name="n")
model.addConstr(2 * n == 7)
model.setObjective(n, COPT.MAXIMIZE)
model.solve()
print("status", model.status)
""")

program("unbounded_lp")("""
import coptpy as cp
from coptpy import COPT

env = cp.Envr()
model = env.createModel("Unbounded")
x = model.addVar(lb=0, name="x")
y = model.addVar(lb=0, name="y")
model.addConstr(x - y <= 4)
model.setObjective(x + y, sense=COPT.MAXIMIZE)
model.solve()
if model.status == COPT.UNBOUNDED:
    print("unbounded")
""")

program("unbounded_mip")("""
import coptpy as cp
from coptpy import COPT

env = cp.Envr()
model = env.createModel("UnboundedMIP")
x = model.addVar(lb=0, vtype=COPT.INTEGER, name="x")
y = model.addVar(lb=0, name="y")
model.addConstr(x - y <= 4)
model.setObjective(x + y, sense=COPT.MAXIMIZE)
model.solve()
print("status", model.status)
""")

program("free_and_negative_bounds")("""
import coptpy as cp
from coptpy import COPT

env = cp.Envr()
model = env.createModel("Bounds")
x = model.addVar(lb=-COPT.INFINITY, ub=COPT.INFINITY, name="free")
y = model.addVar(lb=-5, ub=5, name="y")
model.addConstr(x >= 2 * y - 3)
model.addConstr(x <= 7 - y)
model.setObjective(x + 3 * y, sense=COPT.MAXIMIZE)
model.solve()
if model.status == COPT.OPTIMAL:
    print(model.objval)
RESULT = {"lb": x.lb, "ub": x.ub, "ylb": y.lb, "inf": COPT.INFINITY}
""")

program("objective_constant_and_minimize_default")("""
import coptpy as cp
from coptpy import COPT

env = cp.Envr()
model = env.createModel("Const")
x = model.addVar(lb=1, ub=4, name="x")
y = model.addVar(lb=0, ub=3, name="y")
model.addConstr(x + y >= 3)
model.setObjective(2 * x + y + 10)
model.solve()
RESULT = {"sense": model.ObjSense, "obj": model.objval}
""")

program("setobjsense_and_attributes")("""
import coptpy as cp
from coptpy import COPT

env = cp.Envr()
model = env.createModel("Attrs")
x = model.addVars(3, lb=0, ub=[4, 5, 6], nameprefix="x")
model.addConstr(x[0] + x[1] + x[2] <= 12)
model.addConstr(x[0] - x[2] >= -1)
model.setObjective(x[0] + 2 * x[1] + 3 * x[2])
model.setObjSense(COPT.MAXIMIZE)
model.solve()
RESULT = {"cols": model.getAttr(COPT.Attr.Cols), "rows": model.getAttr("Rows"), "sense": model.getAttr("ObjSense"),
          "ismip": model.getAttr(COPT.Attr.IsMIP), "ub": [x[i].ub for i in range(3)],
          "lpobj": model.getAttr(COPT.Attr.LpObjVal), "status_attr": model.getAttr(COPT.Attr.LpStatus)}
""")

program("getinfo_and_values")("""
import coptpy as cp
from coptpy import COPT

env = cp.Envr()
model = env.createModel("Info")
x = model.addVar(lb=0, ub=3, name="x")
y = model.addVar(lb=0, ub=2, name="y")
c = model.addConstr(x + y <= 4, name="cap")
model.setObjective(2 * x + y, COPT.MAXIMIZE)
model.solve()
vals = model.getInfo(COPT.Info.Value, [x, y])
RESULT = {"vals": [round(v, 6) for v in vals], "x": x.getInfo(COPT.Info.Value), "all": model.getValues(),
          "obj": model.getObjective().getValue(), "cname": c.name, "slack": round(c.getInfo(COPT.Info.Slack), 6)}
""")

program("mip_bestobj")("""
import coptpy as cp
from coptpy import COPT

env = cp.Envr()
model = env.createModel("MIPAttrs")
a = model.addVar(vtype=COPT.INTEGER, lb=0, ub=20, name="a")
b = model.addVar(vtype=COPT.INTEGER, lb=0, ub=20, name="b")
model.addConstr(7 * a + 4 * b <= 50)
model.addConstr(a + 3 * b <= 21)
model.setObjective(5 * a + 4 * b, COPT.MAXIMIZE)
model.solve()
RESULT = {"best": model.getAttr(COPT.Attr.BestObj), "mipstatus": model.getAttr(COPT.Attr.MipStatus),
          "objval": model.objval, "ints": model.getAttr(COPT.Attr.Ints), "hasmip": model.getAttr(COPT.Attr.HasMipSol)}
""")

program("solvelp_relaxation")("""
import coptpy as cp
from coptpy import COPT

env = cp.Envr()
model = env.createModel("Relax")
a = model.addVar(vtype=COPT.INTEGER, lb=0, ub=20, name="a")
b = model.addVar(vtype=COPT.BINARY, name="b")
model.addConstr(2 * a + 3 * b <= 9.5)
model.setObjective(3 * a + 5 * b, COPT.MAXIMIZE)
model.solveLP()
RESULT = {"lp": round(model.objval, 6), "status": model.status}
""")

program("timelimit_and_params")("""
import coptpy as cp
from coptpy import COPT

env = cp.Envr()
model = env.createModel("Params")
model.setParam(COPT.Param.TimeLimit, 60)
model.setParam(COPT.Param.RelGap, 0.0)
model.setParam(COPT.Param.Logging, 0)
x = model.addVars(5, vtype=COPT.INTEGER, lb=0, ub=10, nameprefix="x")
model.addConstr(cp.quicksum((i + 1) * x[i] for i in range(5)) <= 23)
model.setObjective(cp.quicksum((i % 3 + 1) * x[i] for i in range(5)), COPT.MAXIMIZE)
model.solve()
RESULT = {"tl": model.getParam(COPT.Param.TimeLimit), "gap": model.getParam("RelGap")}
""")

program("linexpr_building")("""
import coptpy as cp
from coptpy import COPT

env = cp.Envr()
model = env.createModel("LinExpr")
x = model.addVars(4, lb=0, ub=3, nameprefix="x")
expr = cp.LinExpr()
for i in range(4):
    expr += (i + 1) * x[i]
e2 = cp.LinExpr(x[0], 2.0)
e2.addTerms([x[1], x[2]], [1.0, -1.0])
e2.addConstant(1.5)
model.addConstr(expr <= 10, name="weighted")
model.addConstr(e2 >= 2, name="mixed")
model.setObjective(x.sum(), COPT.MAXIMIZE)
model.solve()
RESULT = {"obj": model.objval, "const": e2.getConstant(), "size": e2.size}
""")

program("addconstrs_named_and_select")("""
import coptpy as cp
from coptpy import COPT

arcs = cp.tuplelist([(1, 2), (1, 3), (2, 3), (2, 4), (3, 4)])
cap = {(1, 2): 10, (1, 3): 8, (2, 3): 5, (2, 4): 7, (3, 4): 10}
env = cp.Envr()
model = env.createModel("MaxFlow")
f = model.addVars(arcs, lb=0, ub=cap, nameprefix="f")
nodes = [2, 3]
model.addConstrs((f.sum("*", j) == f.sum(j, "*") for j in nodes), nameprefix="balance")
model.setObjective(f.sum(1, "*"), COPT.MAXIMIZE)
model.solve()
if model.status == COPT.OPTIMAL:
    print("Max flow:", model.objval)
RESULT = {"out1": [a for a in arcs.select(1, "*")], "name": f[2, 4].name, "ub": f[1, 3].ub,
          "rows": [c.name for c in model.getConstrs()]}
""")

program("multidict_data")("""
import coptpy as cp
from coptpy import COPT

products, profit, hours = cp.multidict({"A": [30, 2], "B": [25, 1.5], "C": [40, 3]})
env = cp.Envr()
model = env.createModel("Multidict")
x = model.addVars(products, lb=0, ub=30, vtype=COPT.INTEGER, nameprefix="make")
model.addConstr(x.prod(hours) <= 70, name="hours")
model.addConstr(x["A"] + x["B"] >= 10)
model.setObjective(x.prod(profit), COPT.MAXIMIZE)
model.solve()
print(model.objval)
RESULT = {"products": list(products), "profit": dict(profit)}
""")

program("blending_equality")("""
import coptpy as cp
from coptpy import COPT

env = cp.Envr()
model = env.createModel("Blending")
ores = ["o1", "o2", "o3"]
cost = [27, 25, 32]
grade = [0.40, 0.28, 0.55]
x = model.addVars(ores, lb=0, nameprefix="t")
model.addConstr(x.sum() == 100, name="total")
model.addConstr(cp.quicksum(grade[i] * x[o] for i, o in enumerate(ores)) >= 0.45 * 100, name="grade")
model.addConstr(x["o3"] <= 50)
model.setObjective(cp.quicksum(cost[i] * x[o] for i, o in enumerate(ores)), COPT.MINIMIZE)
model.solve()
if model.status == COPT.OPTIMAL:
    print("cost", model.objval)
""")

program("scheduling_big_m")("""
import coptpy as cp
from coptpy import COPT

p = [3, 2, 4]
due = [4, 6, 9]
M = 100
env = cp.Envr()
model = env.createModel("Scheduling")
s = model.addVars(3, lb=0, nameprefix="start")
late = model.addVars(3, lb=0, nameprefix="late")
y = model.addVars([(i, j) for i in range(3) for j in range(3) if i < j], vtype=COPT.BINARY, nameprefix="order")
for (i, j) in y.keys():
    model.addConstr(s[i] + p[i] <= s[j] + M * (1 - y[i, j]))
    model.addConstr(s[j] + p[j] <= s[i] + M * y[i, j])
for i in range(3):
    model.addConstr(late[i] >= s[i] + p[i] - due[i])
model.setObjective(late.sum(), COPT.MINIMIZE)
model.solve()
print("total lateness", model.objval)
""")

program("no_solve_call")("""
import coptpy as cp
from coptpy import COPT

env = cp.Envr()
model = env.createModel("Unsolved")
x = model.addVar(lb=0, ub=8, name="x")
y = model.addVar(lb=0, ub=8, name="y")
model.addConstr(x + y <= 10)
model.setObjective(x + 2 * y, COPT.MAXIMIZE)
RESULT = {"status": model.status, "objval": model.objval}
""")

program("value_before_solve_raises")("""
import coptpy as cp
from coptpy import COPT

env = cp.Envr()
model = env.createModel("Early")
x = model.addVar(lb=0, ub=8, name="x")
model.setObjective(x, COPT.MAXIMIZE)
RESULT = {}
try:
    RESULT["x"] = x.x
except cp.CoptError as e:
    RESULT["error"] = type(e).__name__
model.solve()
RESULT["after"] = x.x
""")

program("values_after_infeasible_raise")("""
import coptpy as cp
from coptpy import COPT

env = cp.Envr()
model = env.createModel("InfeasibleValues")
x = model.addVar(lb=0, ub=1, name="x")
model.addConstr(x >= 2)
model.setObjective(x, COPT.MINIMIZE)
model.solve()
RESULT = {"status": model.status, "objval_inf": model.objval >= 1e30}
try:
    RESULT["x"] = x.x
except cp.CoptError:
    RESULT["x"] = "CoptError"
""")

program("status_constants")("""
import coptpy as cp
from coptpy import COPT

RESULT = {"codes": [COPT.UNSTARTED, COPT.OPTIMAL, COPT.INFEASIBLE, COPT.UNBOUNDED, COPT.INF_OR_UNB, COPT.TIMEOUT,
                    COPT.INTERRUPTED],
          "types": [COPT.CONTINUOUS, COPT.INTEGER, COPT.BINARY], "senses": [COPT.MINIMIZE, COPT.MAXIMIZE],
          "rows": [COPT.LESS_EQUAL, COPT.GREATER_EQUAL, COPT.EQUAL], "inf": COPT.INFINITY}
env = cp.Envr()
model = env.createModel("Empty")
""")

program("cutting_stock_patterns")("""
import coptpy as cp
from coptpy import COPT

patterns = [[3, 0, 0], [0, 2, 0], [0, 0, 2], [1, 1, 0], [1, 0, 1], [0, 1, 1], [2, 0, 1]]
demand = [30, 20, 25]
env = cp.Envr()
model = env.createModel("CuttingStock")
x = model.addVars(len(patterns), lb=0, vtype=COPT.INTEGER, nameprefix="pattern")
for k in range(3):
    model.addConstr(cp.quicksum(patterns[p][k] * x[p] for p in range(len(patterns))) >= demand[k],
                    name=f"demand_{k}")
model.setObjective(x.sum(), COPT.MINIMIZE)
model.solve()
if model.status == COPT.OPTIMAL:
    print("Rolls used:", model.objval)
""")

program("workforce_shifts")("""
import coptpy as cp
from coptpy import COPT

need = [4, 8, 10, 7, 12, 4]
env = cp.Envr()
model = env.createModel("Shifts")
x = model.addVars(6, vtype=COPT.INTEGER, lb=0, nameprefix="staff")
for t in range(6):
    model.addConstr(x[t] + x[(t - 1) % 6] >= need[t], name=f"period_{t}")
model.setObjective(x.sum("*"), sense=COPT.MINIMIZE)
model.solve()
if model.status == COPT.OPTIMAL:
    print("Minimum staff:", int(model.objval))
""")

program("sum_builtin_and_division")("""
import coptpy as cp
from coptpy import COPT

env = cp.Envr()
model = env.createModel("PySum")
x = [model.addVar(lb=0, ub=5, name=f"x{i}") for i in range(5)]
model.addConstr(sum(x) <= 12)
model.addConstr(sum(x[i] / (i + 1) for i in range(5)) >= 2)
model.addConstr(x[0] - x[1] / 2 <= 1)
model.setObjective(sum((i + 1) * x[i] for i in range(5)) - 0.5 * x[0], COPT.MAXIMIZE)
model.solve()
print(model.objval)
""")

program("portfolio_lp")("""
import coptpy as cp
from coptpy import COPT

assets = ["bonds", "stocks", "realty", "cash"]
ret = {"bonds": 0.05, "stocks": 0.11, "realty": 0.08, "cash": 0.02}
risk = {"bonds": 2, "stocks": 9, "realty": 6, "cash": 0}
budget = 100000
env = cp.Envr()
model = env.createModel("Portfolio")
w = model.addVars(assets, lb=0, nameprefix="w")
model.addConstr(w.sum() == budget)
model.addConstr(cp.quicksum(risk[a] * w[a] for a in assets) <= 5 * budget)
model.addConstr(w["cash"] >= 0.05 * budget)
model.addConstr(w["stocks"] <= 0.5 * budget)
model.setObjective(cp.quicksum(ret[a] * w[a] for a in assets), COPT.MAXIMIZE)
model.solve()
if model.status == COPT.OPTIMAL:
    print("Expected return: %.2f" % model.objval)
""")

program("set_cover")("""
import coptpy as cp
from coptpy import COPT

sets = {"S1": [1, 2, 3], "S2": [2, 4], "S3": [3, 4, 5], "S4": [1, 5, 6], "S5": [6, 7], "S6": [5, 7, 8]}
cost = {"S1": 3, "S2": 2, "S3": 4, "S4": 3, "S5": 2, "S6": 3}
elements = range(1, 9)
env = cp.Envr()
model = env.createModel("SetCover")
x = model.addVars(sets.keys(), vtype=COPT.BINARY, nameprefix="use")
for e in elements:
    model.addConstr(cp.quicksum(x[s] for s in sets if e in sets[s]) >= 1, name=f"cover_{e}")
model.setObjective(x.prod(cost), COPT.MINIMIZE)
model.solve()
print(model.objval)
""")

program("addvar_obj_coefficients")("""
import coptpy as cp
from coptpy import COPT

env = cp.Envr()
model = env.createModel("ObjCoef")
x = model.addVar(lb=0, ub=4, obj=3.0, name="x")
y = model.addVar(lb=0, ub=4, obj=2.0, name="y")
model.addConstr(x + y <= 5)
model.setObjSense(COPT.MAXIMIZE)
model.solve()
RESULT = {"obj": model.objval, "xo": x.obj}
""")

program("equality_infeasible_integer_lb")("""
import coptpy as cp
from coptpy import COPT

env = cp.Envr()
model = env.createModel("Lots")
q = model.addVars(3, vtype=COPT.INTEGER, lb=1, ub=6, nameprefix="q")
model.addConstr(3 * q[0] + 6 * q[1] + 9 * q[2] == 40)
model.setObjective(q.sum(), COPT.MINIMIZE)
model.solve()
print(model.status)
""")

program("chained_comparison_error")("""
import coptpy as cp
from coptpy import COPT

env = cp.Envr()
model = env.createModel("Chained")
x = model.addVar(lb=0, ub=10, name="x")
model.addConstr(2 <= x <= 5)
""")

program("undefined_name_error")("""
import coptpy as cp
from coptpy import COPT

env = cp.Envr()
model = env.createModel("Typo")
x = model.addVar(lb=0, ub=10, name="x")
model.addConstr(x <= capacity)
""")

program("genconstr_max_min")("""
import coptpy as cp
from coptpy import COPT

env = cp.Envr()
model = env.createModel("MaxMin")
x = model.addVars(3, lb=0, ub=10, nameprefix="x")
peak = model.addVar(lb=0, ub=100, name="peak")
low = model.addVar(lb=0, ub=100, name="low")
model.addGenConstrMax(peak, [x[0], x[1], x[2]])
model.addGenConstrMin(low, [x[0], x[1], x[2]], constant=4)
model.addConstr(x.sum() == 18)
model.setObjective(peak - 2 * low, COPT.MINIMIZE)
model.solve()
print(model.objval)
""")

program("genconstr_abs_deviation")("""
import coptpy as cp
from coptpy import COPT

target = [3, 8, 5]
env = cp.Envr()
model = env.createModel("Abs")
x = model.addVars(3, lb=0, ub=10, nameprefix="x")
d = model.addVars(3, lb=-10, ub=10, nameprefix="d")
a = model.addVars(3, lb=0, ub=10, nameprefix="a")
for i in range(3):
    model.addConstr(d[i] == x[i] - target[i])
    model.addGenConstrAbs(a[i], d[i])
model.addConstr(x.sum() == 12)
model.setObjective(a.sum(), COPT.MINIMIZE)
model.solve()
print(model.objval)
""")

program("genconstr_and_or")("""
import coptpy as cp
from coptpy import COPT

env = cp.Envr()
model = env.createModel("Logic")
b = model.addVars(4, vtype=COPT.BINARY, nameprefix="b")
both = model.addVar(vtype=COPT.BINARY, name="both")
either = model.addVar(vtype=COPT.BINARY, name="either")
model.addGenConstrAnd(both, [b[0], b[1]])
model.addGenConstrOr(either, [b[2], b[3]])
model.addConstr(b.sum() <= 3)
model.setObjective(5 * both + 3 * either + b[0] + b[2], COPT.MAXIMIZE)
model.solve()
print(model.objval)
""")

program("genconstr_indicator_fixed_charge")("""
import coptpy as cp
from coptpy import COPT

demand = [40, 25, 35]
fixed = [100, 80, 120]
unit = [2.0, 3.5, 1.5]
env = cp.Envr()
model = env.createModel("FixedCharge")
q = model.addVars(3, lb=0, ub=60, nameprefix="q")
y = model.addVars(3, vtype=COPT.BINARY, nameprefix="open")
for i in range(3):
    model.addGenConstrIndicator(y[i], 0, q[i] <= 0)
model.addConstr(q.sum() >= sum(demand))
model.setObjective(cp.quicksum(fixed[i] * y[i] + unit[i] * q[i] for i in range(3)), COPT.MINIMIZE)
model.solve()
if model.status == COPT.OPTIMAL:
    print(model.objval)
""")

program("genconstr_indicator_sense_form")("""
import coptpy as cp
from coptpy import COPT

env = cp.Envr()
model = env.createModel("IndicatorSense")
x = model.addVar(lb=0, ub=20, name="x")
z = model.addVar(vtype=COPT.BINARY, name="z")
model.addGenConstrIndicator(z, 1, x, COPT.GREATER_EQUAL, 12)
model.addConstr(x <= 15)
model.setObjective(3 * z - 0.2 * x, COPT.MAXIMIZE)
model.solve()
print(model.objval)
""")

program("genconstr_pwl_cost")("""
import coptpy as cp
from coptpy import COPT

env = cp.Envr()
model = env.createModel("PWL")
x = model.addVar(lb=0, ub=30, name="x")
cost = model.addVar(lb=0, ub=1000, name="cost")
model.addGenConstrPWL(x, cost, [0, 10, 20, 30], [0, 50, 80, 140])
model.addConstr(x >= 14)
model.setObjective(cost - 2 * x, COPT.MINIMIZE)
model.solve()
print(model.objval)
""")

program("param_setting_attribute")("""
import coptpy as cp
from coptpy import COPT

env = cp.Envr()
model = env.createModel("ParamSetting")
RESULT = {"default": model.param.TimeLimit}
model.param.TimeLimit = 30
model.param.Logging = 0
RESULT["set"] = [model.param.TimeLimit, model.getParam(COPT.Param.TimeLimit), model.param.Logging]
try:
    model.param.NoSuchParameter
except AttributeError:
    RESULT["unknown"] = "AttributeError"
x = model.addVar(lb=0, ub=4, vtype=COPT.INTEGER, name="x")
model.setObjective(x, COPT.MAXIMIZE)
model.solve()
""")
