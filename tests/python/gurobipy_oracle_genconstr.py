"""General-constraint programs for the gurobipy oracle (tests/python/gurobipy_oracle.py, set `genconstr`;
issue #25 point 3).

One program per constructor (addGenConstrMax/Min/Abs/And/Or/Indicator/PWL, the max_/min_/abs_ helpers,
`(b == 1) >> constraint`, setPWLObj, setObjectiveN), one per subtle case where real gurobipy decides what the
layer must do (non-binary indicator and AND/OR operands, PWL outside its points and at a jump, constants of
max_, hierarchical tolerances on LP and MIP, blended weights, the status and ObjVal/ObjNVal of a
hierarchical solve, parameter checks), and realistic OR models that use them (fixed charge with indicators,
minimax with max_, L1 regression with abs_, piecewise transport cost, a two-objective schedule, a blended
portfolio, logical facility rules). Each builds `model`, may solve it, and stores what it observes in RESULT;
the oracle compares RESULT, status, objective, counts and the LP file `write()` produces.

A program may carry `DOCUMENTED = (name, [reason prefixes])`: a difference from gurobipy that is known and
explained in docs/gurobipy-layer.md; it counts as documented only if every reason starts with a listed prefix.
"""

PROGRAMS = []
DOCUMENTED = {}


def program(name, documented=None):
    def add(code):
        PROGRAMS.append((name, code))
        if documented:
            DOCUMENTED[name] = documented
    return add


# --- one per constructor --------------------------------------------------------------------------------------

program("gc_max_constant")("""
import gurobipy as gp
from gurobipy import GRB
model = gp.Model("gmax")
x = model.addVars(3, lb=-4, ub=6, name="x")
y = model.addVar(lb=-10, ub=10, name="y")
model.addConstr(x[0] == 2, "f0")
model.addConstr(x[1] + x[2] == 1, "f1")
g = model.addGenConstrMax(y, [x[0], x[1], x[2]], constant=2.5, name="ymax")
model.setObjective(y + 0.1 * x[2])
model.optimize()
RESULT = {"y": y.X, "x": [v.X for v in x.values()], "n": model.NumGenConstrs, "name": g.GenConstrName,
          "type": g.GenConstrType}
""")

program("gc_min_maximized")("""
import gurobipy as gp
from gurobipy import GRB
model = gp.Model("gmin")
x = model.addVars(3, ub=8, name="x")
z = model.addVar(lb=-5, ub=20, name="z")
model.addConstr(x.sum() <= 12, "budget")
model.addGenConstrMin(z, x, name="zmin")
model.setObjective(z, GRB.MAXIMIZE)
model.optimize()
RESULT = {"z": z.X, "x": sorted(v.X for v in x.values()), "ismip": model.IsMIP, "hasgap": hasattr(model, "MIPGap")}
""")

program("gc_abs")("""
import gurobipy as gp
from gurobipy import GRB
model = gp.Model("gabs")
x = model.addVar(lb=-7, ub=3, name="x")
a = model.addVar(ub=100, name="a")
model.addGenConstrAbs(a, x, "ax")
model.setObjective(a, GRB.MAXIMIZE)
model.optimize()
RESULT = {"max": model.ObjVal, "x": x.X}
x.UB = -2
model.setObjective(a - 0.5 * x, GRB.MINIMIZE)
model.optimize()
RESULT["min"] = model.ObjVal
RESULT["x2"] = x.X
""")

program("gc_and_or")("""
import gurobipy as gp
from gurobipy import GRB
model = gp.Model("logic")
b = model.addVars(4, vtype=GRB.BINARY, name="b")
r_and = model.addVar(vtype=GRB.BINARY, name="r_and")
r_or = model.addVar(vtype=GRB.BINARY, name="r_or")
model.addGenConstrAnd(r_and, [b[0], b[1], b[2]], "all3")
model.addGenConstrOr(r_or, [b[2], b[3]], "any2")
model.addConstr(b[0] + b[1] + b[2] + b[3] <= 3, "atmost3")
model.setObjective(5 * r_and + 3 * r_or - b[3] - 0.5 * b.sum(), GRB.MAXIMIZE)
model.optimize()
RESULT = {"r": [r_and.X, r_or.X], "b": [b[i].X for i in range(4)]}
""")

program("gc_indicator_forms")("""
import gurobipy as gp
from gurobipy import GRB
model = gp.Model("ind")
x = model.addVars(3, ub=10, name="x")
u = model.addVars(3, vtype=GRB.BINARY, name="u")
model.addGenConstrIndicator(u[0], True, x[0] + 2 * x[1] <= 4, name="i_le")
model.addGenConstrIndicator(u[1], 0, x[2], GRB.GREATER_EQUAL, 6.5)
model.addGenConstrIndicator(u[2], 1, x[0] - x[2], GRB.EQUAL, 1, "i_eq")
model.addConstr(u.sum() >= 2, "two")
model.setObjective(x[0] + x[1] + x[2] + 3 * u[1], GRB.MAXIMIZE)
model.optimize()
RESULT = {"obj": model.ObjVal, "u": [u[i].X for i in range(3)]}
""")

program("gc_indicator_operator_and_addconstrs")("""
import gurobipy as gp
from gurobipy import GRB
model = gp.Model("ind_op")
open_ = model.addVars(3, vtype=GRB.BINARY, name="open")
ship = model.addVars(3, ub=50, name="ship")
model.addConstrs(((open_[i] == 0) >> (ship[i] <= 0) for i in range(3)), name="closed")
c = model.addConstr((open_[0] == 1) >> (ship[0] + ship[1] >= 20), name="pair")
model.addConstr(ship.sum() >= 60, "demand")
model.setObjective(gp.quicksum((10 + 5 * i) * open_[i] + (1 + i) * ship[i] for i in range(3)))
model.optimize()
model.update()
RESULT = {"obj": model.ObjVal, "open": [open_[i].X for i in range(3)], "n": model.NumGenConstrs,
          "names": [g.GenConstrName for g in model.getGenConstrs()], "type": c.GenConstrType}
""")

program("gc_helpers_max_min_abs")("""
import gurobipy as gp
from gurobipy import GRB, max_, min_, abs_
model = gp.Model("helpers")
x = model.addVars(3, lb=-5, ub=5, name="x")
hi = model.addVar(lb=-10, ub=10, name="hi")
lo = model.addVar(lb=-10, ub=10, name="lo")
ab = model.addVar(ub=10, name="ab")
model.addConstr(hi == max_(x[0], x[1], constant=3), "h")
model.addConstr(lo == min_([x[1], x[2]], -1, constant=0), "l")
model.addConstr(ab == abs_(x[2]), "a")
model.addConstr(x[0] + x[1] + x[2] == 2, "s")
model.setObjective(hi - lo + ab)
model.optimize()
RESULT = {"obj": model.ObjVal, "hi": hi.X, "lo": lo.X, "ab": ab.X, "types": [g.GenConstrType for g in model.getGenConstrs()]}
""")

program("gc_helper_constants_combine")("""
import gurobipy as gp
model = gp.Model("consts")
x = model.addVar(lb=-3, ub=3, name="x")
y = model.addVar(lb=-9, ub=9, name="y")
z = model.addVar(lb=-9, ub=9, name="z")
model.addConstr(y == gp.max_(x, 2, constant=1))
model.addConstr(z == gp.min_(x, constant=-1))
model.setObjective(y + z)
model.optimize()
RESULT = {"y": y.X, "z": z.X, "x": x.X}
""")

program("gc_helper_errors")("""
import gurobipy as gp
model = gp.Model("errs")
x = model.addVars(2, lb=-3, ub=3, name="x")
y = model.addVar(lb=-9, name="y")
model.update()  # gurobipy drops pending (not yet updated) changes when a general constraint call fails
def err(f):
    try:
        f()
        return "ok"
    except gp.GurobiError as e:
        return ["GurobiError", e.errno]
    except TypeError:
        return ["TypeError"]
RESULT = {
    "max_expr": err(lambda: model.addConstr(y == gp.max_(x[0] + 1, x[1]))),
    "abs_expr": err(lambda: gp.abs_(2 * x[0])),
    "abs_expr_added": err(lambda: model.addConstr(y == gp.abs_(2 * x[0]))),
    "le": err(lambda: model.addConstr(y <= gp.max_(x[0], x[1]))),
    "reversed": err(lambda: model.addConstr(gp.max_(x[0], x[1]) == y)),
    "var_shift": err(lambda: model.addConstr(x[0] >> (x[1] <= 2))),
    "abs_res_expr": err(lambda: model.addGenConstrAbs(y + 1, x[0])),
    "ind_val2": err(lambda: model.addGenConstrIndicator(x[0], 2, x[1] >= 1)),
    "ind_val_half": err(lambda: model.addGenConstrIndicator(x[0], 0.5, x[1] >= 1)),
}
model.update()
RESULT["n"] = model.NumGenConstrs
""")

program("gc_norm_one_and_inf")("""
import gurobipy as gp
from gurobipy import GRB
model = gp.Model("norms")
x = model.addVars(3, lb=-2, ub=[1, 3, 2], name="x")
y = model.addVar(name="y")
z = model.addVar(name="z")
w = model.addVar(name="w")
model.addGenConstrNorm(y, [x[0], x[1], x[2]], 1.0, "n1")
model.addGenConstrNorm(z, [x[0], x[1], x[2]], GRB.INFINITY, "ninf")
model.addConstr(w == gp.norm([x[0], x[2]], 1))
model.addConstr(x[0] + x[1] + x[2] == 1, "s")
model.setObjective(y + z + 0.5 * w)
model.optimize()
g = model.getGenConstrNorm(model.getGenConstrs()[1])
RESULT = {"obj": model.ObjVal, "which": g[2], "n": len(g[1]), "types": [c.GenConstrType for c in model.getGenConstrs()]}
try:
    model.addGenConstrNorm(y, [x[0]], 3)
    RESULT["norm3"] = "ok"
except gp.GurobiError as e:
    RESULT["norm3"] = [e.errno, str(e)]
""")

program("gc_norm_two_written")("""
import gurobipy as gp
model = gp.Model("norm2")
x = model.addVars(2, lb=-1, ub=1, name="x")
y = model.addVar(name="y")
model.addConstr(y == gp.norm([x[0], x[1]], 2))
model.addConstr(x[0] + x[1] >= 1)
model.setObjective(y)
""")

program("gc_pwl_unsorted")("""
import gurobipy as gp
model = gp.Model("unsorted")
x = model.addVar(ub=3, name="x")
y = model.addVar(name="y")
model.update()  # gurobipy drops pending changes when the call fails
try:
    model.addGenConstrPWL(x, y, [2, 1], [0, 1])
    RESULT = {"err": "ok"}
except gp.GurobiError as e:
    RESULT = {"err": ["GurobiError", e.errno, str(e)]}
model.update()
RESULT["n"] = model.NumGenConstrs
model.setObjective(x + y)
""")

program("gc_pwl_basic")("""
import gurobipy as gp
from gurobipy import GRB
model = gp.Model("pwl")
x = model.addVar(ub=10, name="x")
cost = model.addVar(lb=-100, ub=100, name="cost")
model.addGenConstrPWL(x, cost, [0, 2, 5, 10], [0, 4, 5.5, 15], "tariff")
model.addConstr(x >= 3.5, "need")
model.setObjective(cost)
model.optimize()
RESULT = {"x": x.X, "cost": cost.X, "ismip": model.IsMIP}
""")

# --- subtle cases: real gurobipy decides -------------------------------------------------------------------

program("gc_indicator_nonbinary")("""
import gurobipy as gp
from gurobipy import GRB
RESULT = {}
for label, lb, ub, vt, val, sense in (("cont01", 0, 1, "C", 1, GRB.MAXIMIZE), ("int05", 0, 5, "I", 1, GRB.MAXIMIZE),
                                      ("wide", -2, 5, "C", 1, GRB.MAXIMIZE), ("int_val0", 0, 5, "I", 0, GRB.MINIMIZE)):
    model = gp.Model(label)
    x = model.addVar(ub=3, name="x")
    w = model.addVar(lb=lb, ub=ub, vtype=vt, name="w")
    model.addGenConstrIndicator(w, val, x <= 1)
    model.addConstr(x >= 2, "c")
    model.setObjective(w + x, sense)
    model.optimize()
    RESULT[label] = [model.Status, model.ObjVal, w.X, w.VType]
""")

program("gc_and_or_nonbinary")("""
import gurobipy as gp
from gurobipy import GRB
model = gp.Model("andnb")
x = model.addVar(ub=3, name="x")
r = model.addVar(ub=3, name="r")
b = model.addVar(vtype=GRB.BINARY, name="b")
s = model.addVar(lb=-1, ub=4, vtype=GRB.INTEGER, name="s")
model.addGenConstrAnd(r, [x, b], "a")
model.addGenConstrOr(s, [x, b], "o")
model.setObjective(r + s + 0.5 * x, GRB.MAXIMIZE)
model.optimize()
RESULT = {"obj": model.ObjVal, "vals": [x.X, r.X, b.X, s.X], "vt": [x.VType, r.VType, s.VType]}
""")

program("gc_pwl_outside_points")("""
import gurobipy as gp
from gurobipy import GRB
model = gp.Model("pwlout")
x = model.addVar(lb=-10, ub=10, name="x")
y = model.addVar(lb=-100, ub=100, name="y")
model.addGenConstrPWL(x, y, [0, 1, 2], [0, 1, 3], "f")
model.setObjective(y, GRB.MAXIMIZE)
model.optimize()
RESULT = {"max": [model.ObjVal, x.X]}
model.setObjective(y, GRB.MINIMIZE)
model.optimize()
RESULT["min"] = [model.ObjVal, x.X]
""")

program("gc_pwl_jump")("""
import gurobipy as gp
from gurobipy import GRB
model = gp.Model("pwljump")
x = model.addVar(ub=4, name="x")
y = model.addVar(lb=-100, ub=100, name="y")
model.addGenConstrPWL(x, y, [0, 1, 1, 2], [0, 1, 3, 4], "step")
model.addConstr(x == 1, "at")
model.setObjective(y, GRB.MAXIMIZE)
model.optimize()
RESULT = {"max": model.ObjVal}
model.setObjective(y, GRB.MINIMIZE)
model.optimize()
RESULT["min"] = model.ObjVal
""")

program("gc_pwl_objective")("""
import gurobipy as gp
from gurobipy import GRB
model = gp.Model("pwlobj")
x = model.addVar(lb=-1, ub=5, name="x")
y = model.addVar(ub=5, name="y")
model.addConstr(x + y >= 3, "c")
model.setPWLObj(x, [0, 2, 4], [0, 1, 5])
model.setObjective(y + 0)          # setObjective drops the piecewise-linear term
model.optimize()
RESULT = {"cleared": model.ObjVal}
model.setPWLObj(x, [0, 2, 4], [0, 1, 5])
model.update()
RESULT["obj_attr"] = [x.Obj, model.IsMIP]
model.optimize()
RESULT["pwl"] = [model.ObjVal, x.X, y.X, model.NumGenConstrs]
x.Obj = 1                          # and so does a linear coefficient
model.optimize()
RESULT["linear"] = model.ObjVal
model.setPWLObj(x, [0, 2, 4], [0, 1, 5])
""")

program("mo_hierarchical_lp")("""
import gurobipy as gp
from gurobipy import GRB
model = gp.Model("mo")
x = model.addVar(ub=10, name="x")
y = model.addVar(ub=10, name="y")
model.addConstr(x + y <= 12, "c")
model.ModelSense = GRB.MAXIMIZE
model.setObjectiveN(x, 0, priority=2, reltol=0.1, name="o1")   # RelTol is not applied to an LP
model.setObjectiveN(y, 1, priority=1, name="o2")
model.optimize()
RESULT = {"status": model.Status, "obj": model.ObjVal, "x": [x.X, y.X], "numobj": model.NumObj,
          "multi": model.IsMultiObj}
for i in range(model.NumObj):
    model.Params.ObjNumber = i
    RESULT[f"o{i}"] = [model.ObjNVal, model.ObjNName, model.ObjNPriority, model.ObjNWeight, model.ObjNRelTol,
                       model.ObjNAbsTol]
""")

program("mo_hierarchical_mip_tolerances")("""
import gurobipy as gp
from gurobipy import GRB
RESULT = {}
for label, kw, sense, s in (("reltol", {"reltol": 0.1}, GRB.MAXIMIZE, 1), ("abstol", {"abstol": 2.5}, GRB.MINIMIZE, -1)):
    model = gp.Model(label)
    x = model.addVar(ub=10, vtype=GRB.INTEGER, name="x")
    y = model.addVar(ub=10, vtype=GRB.INTEGER, name="y")
    model.addConstr(x + y <= 12, "c")
    model.ModelSense = sense
    model.setObjectiveN(s * x, 0, priority=2, name="first", **kw)
    model.setObjectiveN(s * y, 1, priority=1, name="second")
    model.optimize()
    model.Params.ObjNumber = 1
    RESULT[label] = [model.Status, model.ObjVal, x.X, y.X, model.ObjNVal]
""")

program("mo_blended")("""
import gurobipy as gp
from gurobipy import GRB
model = gp.Model("blend")
x = model.addVar(ub=10, name="x")
y = model.addVar(ub=10, name="y")
model.addConstr(x + y <= 12, "c")
model.setObjectiveN(-x, 0, weight=2)
model.setObjectiveN(-y + 3, 1, weight=1)
model.optimize()
model.Params.ObjNumber = 1
RESULT = {"status": model.Status, "obj": model.ObjVal, "x": [x.X, y.X], "objn1": model.ObjNVal,
          "con": model.ObjNCon}
""")

program("mo_objective_zero_from_setobjective")("""
import gurobipy as gp
from gurobipy import GRB
model = gp.Model("mo0")
x = model.addVars(3, ub=5, name="x")
model.addConstr(x[0] + x[1] <= 4, "r")
model.setObjective(x[0] + 1.5)
model.setObjectiveN(x[1] - 2, 2, priority=3, weight=-1, abstol=0.5, reltol=0.01, name="second")
model.optimize()
RESULT = {"status": model.Status, "obj": model.ObjVal, "x": [x[0].X, x[1].X], "numobj": model.NumObj}
for i in range(model.NumObj):
    model.Params.ObjNumber = i
    RESULT[f"o{i}"] = [model.ObjNVal, model.ObjNName, model.ObjNPriority, model.ObjNWeight, model.ObjNCon]
""")

program("mo_mixed_priorities_and_weights")("""
import gurobipy as gp
from gurobipy import GRB
model = gp.Model("momix")
x = model.addVars(4, ub=6, vtype=GRB.INTEGER, name="x")
model.addConstr(x.sum() <= 13, "total")
model.addConstr(x[0] + 2 * x[1] <= 12, "mix")
model.ModelSense = GRB.MAXIMIZE
model.setObjectiveN(x[0] + x[1], 0, priority=5, abstol=1, name="main")
model.setObjectiveN(x[2], 1, priority=3, weight=2, name="b1")
model.setObjectiveN(x[3] - x[1], 2, priority=3, weight=1, name="b2")
model.setObjectiveN(-x[0], 3, priority=0, name="last")
RESULT = {"has_before": hasattr(model, "ObjNVal")}
model.optimize()
RESULT.update({"status": model.Status, "obj": model.ObjVal, "x": [v.X for v in x.values()]})
for i in range(4):
    model.Params.ObjNumber = i
    RESULT[f"o{i}"] = model.ObjNVal
""")

program("mo_attributes_set_by_objnumber")("""
import gurobipy as gp
from gurobipy import GRB
model = gp.Model("moattr")
x = model.addVar(ub=10, vtype=GRB.INTEGER, name="x")
y = model.addVar(ub=10, vtype=GRB.INTEGER, name="y")
model.addConstr(x + y <= 12, "c")
model.ModelSense = GRB.MAXIMIZE
model.setObjectiveN(x, 0)
model.setObjectiveN(y, 1)
model.Params.ObjNumber = 0
model.ObjNPriority = 4
model.ObjNRelTol = 0.2
model.ObjNName = "first"
model.Params.ObjNumber = 1
model.ObjNPriority = 1
model.update()
e = model.getObjective(1)
RESULT = {"obj1": [e.size(), e.getConstant()], "names": []}
model.optimize()
RESULT.update({"status": model.Status, "obj": model.ObjVal, "x": [x.X, y.X]})
for i in range(2):
    model.Params.ObjNumber = i
    RESULT["names"].append([model.ObjNName, model.ObjNPriority, model.ObjNRelTol, model.ObjNVal])
""")

program("mo_later_level_unbounded")("""
import gurobipy as gp
from gurobipy import GRB
model = gp.Model("mounb")
x = model.addVar(ub=4, name="x")
y = model.addVar(name="y")             # no upper bound: the second level is unbounded
model.addConstr(x <= 3, "c")
model.ModelSense = GRB.MAXIMIZE
model.setObjectiveN(x, 0, priority=2)
model.setObjectiveN(y, 1, priority=1)
model.optimize()
RESULT = {"status": model.Status, "sol": model.SolCount, "obj": model.ObjVal, "x": x.X}
first = gp.Model("mounb1")
u = first.addVar(ub=4, name="u")
w = first.addVar(name="w")
first.setObjectiveN(-w, 0, priority=2)
first.setObjectiveN(u, 1, priority=1)
first.optimize()
RESULT["first"] = [first.Status, first.SolCount]
""")

program("mo_infeasible")("""
import gurobipy as gp
model = gp.Model("moinf")
x = model.addVar(ub=1, name="x")
model.addConstr(x >= 2, "c")
model.setObjectiveN(x, 0, priority=1)
model.setObjectiveN(-x, 1)
model.optimize()
RESULT = {"status": model.Status, "sol": model.SolCount, "has": hasattr(model, "ObjNVal")}
""")

program("mo_lp_large_abstol", documented=("LP_OBJN_ABSTOL", ["RESULT['x']", "ObjVal", "RESULT['obj']"]))("""
import gurobipy as gp
model = gp.Model("molpabs")
x = model.addVar(ub=10, name="x")
y = model.addVar(ub=10, name="y")
model.addConstr(x + y <= 12, "c")
model.setObjectiveN(-x, 0, priority=2, abstol=2.5, name="o1")
model.setObjectiveN(-y, 1, priority=1, name="o2")
model.optimize()
RESULT = {"status": model.Status, "obj": model.ObjVal, "x": [x.X, y.X]}
""")

program("params_common")("""
import gurobipy as gp
from gurobipy import GRB
gp.setParam("MIPGap", 0.05)
model = gp.Model("params")
gp.setParam("MIPGap", 1e-4)
model.setParam("TimeLimit", 60)
model.Params.OutputFlag = 0
model.setParam(GRB.Param.NonConvex, 2)
model.Params.seed = 7
model.Params.Threads = 1.0
def err(f):
    try:
        f()
        return "ok"
    except gp.GurobiError as e:
        return ["GurobiError", e.errno, str(e)]
    except TypeError:
        return ["TypeError"]
RESULT = {"vals": [model.Params.MIPGap, model.Params.TimeLimit, model.Params.OutputFlag, model.Params.NonConvex,
                   model.Params.Seed, model.Params.Threads, type(model.Params.Threads).__name__],
          "gap_neg": err(lambda: model.setParam("MIPGap", -1)),
          "tl_neg": err(lambda: setattr(model.Params, "TimeLimit", -1)),
          "nonconvex5": err(lambda: model.setParam("NonConvex", 5)),
          "output2": err(lambda: model.setParam("OutputFlag", 2)),
          "threads_str": err(lambda: model.setParam("Threads", "a")),
          "gap_str": err(lambda: model.setParam("MIPGap", "0.1"))}
RESULT["info"] = [[i[0], i[1].__name__, i[2], i[3], i[5]] for i in map(model.getParamInfo, (
    "MIPGap", "Threads", "NonConvex", "Seed", "OutputFlag", "TimeLimit"))]
x = model.addVar(ub=3, vtype=GRB.INTEGER, name="x")
model.setObjective(x, GRB.MAXIMIZE)
model.optimize()
RESULT["obj"] = model.ObjVal
""")

program("gc_lazy_counts")("""
import gurobipy as gp
model = gp.Model("lazy")
x = model.addVar(ub=1, name="x")
y = model.addVar(name="y")
model.update()
model.addGenConstrMax(y, [x], name="g")
model.setObjectiveN(x, 1)
RESULT = {"before": [model.NumGenConstrs, len(model.getGenConstrs()), model.NumObj, model.IsMultiObj]}
model.update()
RESULT["after"] = [model.NumGenConstrs, len(model.getGenConstrs()), model.NumObj, model.IsMultiObj,
                   model.getGenConstrs()[0].GenConstrName]
""")

program("gc_write_names_and_counts")("""
import gurobipy as gp
from gurobipy import GRB
model = gp.Model("g")
x = model.addVars(3, lb=-5, ub=10, name="x")
y = model.addVar(lb=-20, ub=20, name="y")
z = model.addVar(lb=-20, ub=20, name="z")
a = model.addVar(name="a", ub=30)
b = model.addVars(3, vtype=GRB.BINARY, name="b")
r = model.addVar(vtype=GRB.BINARY, name="r")
model.addGenConstrMax(y, [x[0], x[1]], constant=3, name="gmax")
model.addGenConstrMin(z, [x[0], x[2]], name="gmin")
model.addGenConstrAbs(a, x[1], name="gabs")
model.addGenConstrAnd(r, [b[0], b[1]], "gand")
model.addGenConstrOr(b[2], [b[0], b[1]], "gor")
model.addGenConstrIndicator(b[0], True, x[0] + 2 * x[1] <= 4, name="gind")
model.addGenConstrIndicator(b[1], 0, x[2], GRB.GREATER_EQUAL, 1.5)
model.addConstr(y == gp.max_(x[2], 2, constant=1), "h")
model.addConstr(a == gp.abs_(x[2]))
model.addConstr((b[2] == 1) >> (x[0] + x[1] == 3))
model.addGenConstrPWL(x[0], z, [-5, 0, 5, 10], [1, 0, 2, 2], "pwl")
model.setObjective(y + z + a)
model.update()
RESULT = {"counts": [model.NumVars, model.NumConstrs, model.NumGenConstrs, model.NumIntVars, model.NumBinVars],
          "names": [g.GenConstrName for g in model.getGenConstrs()],
          "types": [g.GenConstrType for g in model.getGenConstrs()]}
model.optimize()
RESULT["obj"] = model.ObjVal
""")

program("gc_layout_long")("""
import gurobipy as gp
from gurobipy import GRB
model = gp.Model("ord")
x = model.addVars(12, ub=7, name="longername_x")
b = model.addVar(vtype="B", name="b")
k = model.addVar(vtype="I", ub=4, name="k")
model.addConstr(x[0] + x[1] <= 3, "lin")
model.addGenConstrIndicator(b, 1, gp.quicksum((i + 1.5) * x[i] for i in range(12)) >= 2.25, name="longind")
model.addGenConstrPWL(x[2], x[3], [0.1, 1 / 3, 1, 2], [1 / 7, 0, 5, 1e-5], "p")
model.addGenConstrMax(x[4], [x[5], x[6], x[7], x[8], x[9], x[10], x[11], x[0], x[1], x[2], x[3]], constant=1 / 3,
                      name="mx")
model.setObjective(x[0] + 2.5, GRB.MAXIMIZE)
model.setPWLObj(k, [0, 1, 4], [0, 2, 3])
model.optimize()
RESULT = {"obj": model.ObjVal}
""")

program("gc_bigm_needs_bounds")("""
import gurobipy as gp
from gurobipy import GRB
model = gp.Model("nobound")
x = model.addVar(name="x")                 # no upper bound: Gurobi does not need one, big-M does
b = model.addVar(vtype=GRB.BINARY, name="b")
model.addGenConstrIndicator(b, 1, x <= 5, name="cap")
model.addConstr(x >= 3 * b, "link")
model.setObjective(x - 4 * b)
""")

program("gc_bigm_implied_bounds")("""
import gurobipy as gp
from gurobipy import GRB
model = gp.Model("implied")
make = model.addVars(3, name="make")           # no upper bounds: the rows imply them (make[i] <= 40, ...)
on = model.addVars(3, vtype=GRB.BINARY, name="on")
model.addConstr(make[0] + make[1] + make[2] <= 40, "capacity")
model.addConstr(make.sum() >= 25, "demand")
model.addConstrs(((on[i] == 0) >> (make[i] <= 0) for i in range(3)), name="off")
c2 = model.addVar(lb=-100, ub=1000, name="c2")  # make[2] beyond the last point needs its implied bound
model.addGenConstrPWL(make[2], c2, [0, 10, 20], [0, 30, 45], "curve")
model.setObjective(gp.quicksum((20 + 7 * i) * on[i] + (3 - i) * make[i] for i in range(3)) + c2)
model.optimize()
RESULT = {"obj": model.ObjVal, "on": [on[i].X for i in range(3)]}
""")

# --- realistic OR models -------------------------------------------------------------------------------------

program("or_fixed_charge_indicator")("""
import gurobipy as gp
from gurobipy import GRB
plants = ["P1", "P2", "P3"]
customers = ["C1", "C2", "C3", "C4"]
fixed = {"P1": 120, "P2": 90, "P3": 150}
cap = {"P1": 60, "P2": 45, "P3": 80}
demand = {"C1": 20, "C2": 25, "C3": 30, "C4": 15}
cost = {(p, c): 2 + ((i * 3 + j * 5) % 7) for i, p in enumerate(plants) for j, c in enumerate(customers)}
model = gp.Model("fixed_charge")
open_ = model.addVars(plants, vtype=GRB.BINARY, name="open")
ship = model.addVars(plants, customers, ub=80, name="ship")
model.addConstrs((ship.sum("*", c) == demand[c] for c in customers), name="demand")
model.addConstrs((ship.sum(p, "*") <= cap[p] for p in plants), name="cap")
model.addConstrs(((open_[p] == 0) >> (ship.sum(p, "*") == 0) for p in plants), name="closed")
model.setObjective(open_.prod(fixed) + ship.prod(cost), GRB.MINIMIZE)
model.optimize()
RESULT = {"obj": model.ObjVal, "open": {p: open_[p].X for p in plants}}
""")

program("or_minimax_max")("""
import gurobipy as gp
from gurobipy import GRB
jobs = [7, 5, 4, 4, 3, 3, 2]
machines = 3
model = gp.Model("makespan")
assign = model.addVars(len(jobs), machines, vtype=GRB.BINARY, name="assign")
load = model.addVars(machines, ub=sum(jobs), name="load")
makespan = model.addVar(ub=sum(jobs), name="makespan")
model.addConstrs((assign.sum(j, "*") == 1 for j in range(len(jobs))), name="once")
model.addConstrs((load[m] == gp.quicksum(jobs[j] * assign[j, m] for j in range(len(jobs))) for m in range(machines)),
                 name="load")
model.addConstr(makespan == gp.max_(load[m] for m in range(machines)), name="span")
model.setObjective(makespan, GRB.MINIMIZE)
model.optimize()
RESULT = {"makespan": model.ObjVal}
""")

program("or_l1_fit_abs")("""
import gurobipy as gp
from gurobipy import GRB
pts = [(0, 1.0), (1, 2.9), (2, 5.2), (3, 7.1), (4, 8.8), (5, 30.0)]
model = gp.Model("l1fit")
a = model.addVar(lb=-50, ub=50, name="slope")
b = model.addVar(lb=-50, ub=50, name="intercept")
r = model.addVars(len(pts), lb=-500, ub=500, name="res")
e = model.addVars(len(pts), ub=500, name="absres")
for i, (t, v) in enumerate(pts):
    model.addConstr(r[i] == v - a * t - b, name=f"fit{i}")
    model.addGenConstrAbs(e[i], r[i], name=f"abs{i}")
model.setObjective(e.sum(), GRB.MINIMIZE)
model.optimize()
RESULT = {"obj": model.ObjVal}
""")

program("or_piecewise_transport_cost")("""
import gurobipy as gp
from gurobipy import GRB
lanes = ["A", "B", "C"]
demand = 95
model = gp.Model("pwl_transport")
q = model.addVars(lanes, ub=60, name="q")
c = model.addVars(lanes, lb=0, ub=1000, name="cost")
breaks = {"A": ([0, 20, 40, 60], [0, 60, 100, 130]),   # volume discounts (concave)
          "B": ([0, 30, 60], [0, 75, 200]),             # congestion (convex)
          "C": ([0, 10, 10, 60], [0, 0, 40, 190])}      # a fixed charge at 10 (a jump)
for l in lanes:
    model.addGenConstrPWL(q[l], c[l], breaks[l][0], breaks[l][1], name=f"tariff_{l}")
model.addConstr(q.sum() == demand, "demand")
model.setObjective(c.sum(), GRB.MINIMIZE)
model.optimize()
RESULT = {"obj": model.ObjVal}
""")

program("or_two_objective_schedule")("""
import gurobipy as gp
from gurobipy import GRB
shifts = ["early", "day", "late", "night"]
need = {"early": 3, "day": 5, "late": 4, "night": 2}
workers = ["w%d" % i for i in range(6)]
pref = {(w, s): (i + 2 * j) % 4 for i, w in enumerate(workers) for j, s in enumerate(shifts)}
model = gp.Model("schedule")
x = model.addVars(workers, shifts, vtype=GRB.BINARY, name="x")
extra = model.addVars(shifts, ub=3, vtype=GRB.INTEGER, name="extra")
model.addConstrs((x.sum("*", s) + extra[s] >= need[s] for s in shifts), name="cover")
model.addConstrs((x.sum(w, "*") <= 2 for w in workers), name="max2")
model.ModelSense = GRB.MINIMIZE
model.setObjectiveN(extra.sum(), 0, priority=2, name="outsourced")
model.setObjectiveN(x.prod(pref), 1, priority=1, name="dislike")
model.optimize()
model.Params.ObjNumber = 1
RESULT = {"status": model.Status, "obj": model.ObjVal, "dislike": model.ObjNVal}
""")

program("or_blended_portfolio")("""
import gurobipy as gp
from gurobipy import GRB
ret = [0.08, 0.12, 0.05, 0.10]
risk = [0.3, 0.6, 0.1, 0.4]
model = gp.Model("portfolio")
w = model.addVars(4, ub=0.5, name="w")
model.addConstr(w.sum() == 1, "budget")
model.ModelSense = GRB.MAXIMIZE
model.setObjectiveN(gp.quicksum(ret[i] * w[i] for i in range(4)), 0, weight=1.0, name="return")
model.setObjectiveN(gp.quicksum(risk[i] * w[i] for i in range(4)), 1, weight=-0.1, name="risk")
model.optimize()
model.Params.ObjNumber = 1
RESULT = {"obj": model.ObjVal, "risk": model.ObjNVal}
""")

program("or_logical_facility_rules")("""
import gurobipy as gp
from gurobipy import GRB
sites = range(5)
value = [9, 7, 6, 5, 8]
model = gp.Model("rules")
y = model.addVars(sites, vtype=GRB.BINARY, name="y")
both = model.addVar(vtype=GRB.BINARY, name="both01")
either = model.addVar(vtype=GRB.BINARY, name="either34")
model.addGenConstrAnd(both, [y[0], y[1]], "and01")
model.addGenConstrOr(either, [y[3], y[4]], "or34")
model.addConstr(y.sum() <= 3, "atmost3")
model.addConstr(both + either <= 1, "exclusive")
model.addConstr((either == 1) >> (y[2] == 1), "needs2")
model.setObjective(y.prod(dict(enumerate(value))) + 2 * both, GRB.MAXIMIZE)
model.optimize()
RESULT = {"obj": model.ObjVal, "y": [y[i].X for i in sites]}
""")


# --- layer details found while writing this set ----------------------------------------------------------------

program("var_integer_bounds_rounded")("""
import gurobipy as gp
from gurobipy import GRB
model = gp.Model("intbounds")
x = model.addVar(lb=0.5, ub=7.5, vtype=GRB.INTEGER, name="x")
b = model.addVar(lb=-0.5, ub=0.7, vtype=GRB.BINARY, name="b")
c = model.addVar(vtype=GRB.BINARY, name="c")
t = model.addVars(4, lb=[6.00001, 13 - 6.99995, 0, -2.5], ub=[6.99999, 6.99995, 2, -0.5], vtype=GRB.INTEGER, name="t")
y = model.addVar(lb=0.5, ub=7.5, name="y")
model.addConstr(x + y + b + c + t.sum() <= 100, "r")
model.update()
RESULT = {"before": [[v.LB, v.UB] for v in model.getVars()]}
x.UB = 6.5                      # set later: kept as given
model.update()
RESULT["x"] = [x.LB, x.UB]
model.setObjective(x + y + c, GRB.MAXIMIZE)
""")


# --- answer-style programs (the forms model answers write: numpy points, Env params, keyword index, own write()) --

program("gc_abs_max_pwl_numpy_points")("""
import gurobipy as gp
from gurobipy import GRB
import numpy as np
m = gp.Model("a1")
I = range(4)
x = m.addVars(I, lb=-3, ub=[4, 5, 6, 7], name="x")
d = m.addVars(I, lb=-20, ub=20, name="d")
z = m.addVars(I, ub=20, name="z")
mx = m.addVar(lb=-50, ub=50, name="mx")
m.addConstrs((d[i] == x[i] - 2 * i for i in I), name="dev")
m.addConstrs((z[i] == gp.abs_(d[i]) for i in I), name="absd")
m.addConstr(mx == gp.max_([x[i] for i in I]), name="mx")
m.addConstr(x.sum() >= 10, "tot")
m.addGenConstrPWL(x[0], m.addVar(lb=-100, ub=100, name="c0"), np.array([-3, 0, 4]), np.array([9.0, 0, 8]), "pw")
m.update()
c0 = m.getVarByName("c0")
m.setObjective(z.sum() + 0.5 * mx + c0, GRB.MINIMIZE)
m.optimize()
RESULT = {"obj": m.ObjVal}
""")

program("gc_and_or_helpers_with_indicators")("""
import gurobipy as gp
from gurobipy import GRB
m = gp.Model("a2")
b = m.addVars(3, vtype=GRB.BINARY, name="b")
z1 = m.addVar(vtype=GRB.BINARY, name="z1")
z2 = m.addVar(vtype=GRB.BINARY, name="z2")
m.addConstr(z1 == gp.and_(b[0], b[1]), "and")
m.addConstr(z2 == gp.or_([b[1], b[2]]), "or")
x = m.addVar(ub=100, name="x")
m.addGenConstrIndicator(z1, True, x, GRB.LESS_EQUAL, 30, name="ind1")
m.addGenConstrIndicator(z2, False, x + b[0], GRB.GREATER_EQUAL, 50.5)
m.setObjective(x + 10 * b.sum() - 15 * z1, GRB.MAXIMIZE)
m.optimize()
RESULT = {"obj": m.ObjVal, "status": m.Status}
""")

program("mo_keyword_index_and_setparam_objnumber")("""
import gurobipy as gp
from gurobipy import GRB
m = gp.Model("a3")
x = m.addVars(3, vtype=GRB.INTEGER, ub=10, name="x")
m.addConstr(x[0] + x[1] + x[2] <= 15)
m.addConstr(2 * x[0] + x[1] <= 14)
m.setObjectiveN(x[0] + x[1], index=0, priority=2, weight=1, name="profit")
m.setObjectiveN(-x[2], index=1, priority=1, name="waste")
m.ModelSense = GRB.MAXIMIZE
m.optimize()
vals = []
for k in range(m.NumObj):
    m.setParam(GRB.Param.ObjNumber, k)
    vals.append(m.ObjNVal)
RESULT = {"obj": m.ObjVal, "vals": vals, "status": m.Status}
""")

program("params_through_env_and_abs")("""
import gurobipy as gp
from gurobipy import GRB
env = gp.Env(empty=True)
env.setParam("OutputFlag", 0)
env.start()
m = gp.Model("a4", env=env)
m.Params.MIPGap = 0.0
m.Params.TimeLimit = 100
m.Params.Threads = 2
m.Params.Seed = 42
m.Params.NonConvex = 2
x = m.addVar(ub=7.5, vtype=GRB.INTEGER, name="x")
y = m.addVar(lb=-4, ub=4, name="y")
a = m.addVar(name="a")
m.addGenConstrAbs(a, y)
m.addConstr(x + a <= 9)
m.setObjective(x + a, GRB.MAXIMIZE)
m.optimize()
RESULT = {"obj": m.ObjVal, "gap": m.Params.MIPGap, "st": m.status == GRB.OPTIMAL}
""")

program("or_capacity_with_redundant_indicators")("""
import gurobipy as gp
from gurobipy import GRB
m = gp.Model("a5")
y = m.addVars(3, vtype=GRB.BINARY, name="open")
x = m.addVars(3, lb=0, name="prod")
cap = [40, 30, 50]
for i in range(3):
    m.addConstr(x[i] <= cap[i] * y[i], name=f"cap{i}")
    m.addConstr((y[i] == 0) >> (x[i] == 0), name=f"ind{i}")
m.addConstr(x.sum() >= 60, "dem")
m.setObjective(gp.quicksum([100, 80, 120][i] * y[i] + [2, 3, 1][i] * x[i] for i in range(3)))
m.optimize()
if m.status == GRB.OPTIMAL:
    print("Optimal", m.objVal)
RESULT = {"obj": m.ObjVal}
""")

program("gc_positional_constant_and_bool_indicator_with_own_write")("""
import gurobipy as gp
from gurobipy import GRB
m = gp.Model("b1")
m.Params.LogToConsole = 0
x = m.addVars(3, lb=-2, ub=6, vtype=GRB.INTEGER, name="x")
z = m.addVar(lb=-10, ub=10, name="z")
w = m.addVar(lb=-10, ub=10, name="w")
m.addGenConstrMax(z, [x[0], x[1]], 0, "m")
m.addGenConstrMin(w, x.values(), name="n")
b = m.addVar(vtype=GRB.BINARY, name="b")
m.addConstr((b == True) >> (gp.quicksum(x[i] for i in range(3)) >= 5), "i1")
m.addGenConstrIndicator(b, 0, gp.quicksum(x.values()) <= -3)
m.setObjective(z - w + 3 * b, GRB.MINIMIZE)
m.write("model.lp")
m.optimize()
RESULT = {"obj": m.ObjVal, "gc": len(m.getGenConstrs())}
""")

program("or_separable_pwl_objective")("""
import gurobipy as gp
from gurobipy import GRB
m = gp.Model("b2")
x = m.addVar(ub=10, name="x")
y = m.addVar(ub=10, name="y")
m.addConstr(x + y >= 8, "need")
m.setPWLObj(x, [0, 5, 10], [0, 10, 40])
m.setPWLObj(y, [0, 4, 10], [0, 4, 40])
m.write("pwl.lp")
m.optimize()
RESULT = {"obj": m.ObjVal, "x": x.X, "y": y.X}
""")

program("or_single_machine_disjunctive_schedule")("""
import gurobipy as gp
from gurobipy import GRB
m = gp.Model("b3")
t = m.addVars(4, ub=24, name="start")
dur = [3, 5, 2, 4]
end = m.addVar(ub=100, name="end")
late = m.addVars(4, ub=100, name="late")
due = [4, 6, 8, 9]
order = m.addVars(4, 4, vtype=GRB.BINARY, name="before")
for i in range(4):
    for j in range(i + 1, 4):
        m.addConstr((order[i, j] == 1) >> (t[i] + dur[i] <= t[j]))
        m.addConstr((order[i, j] == 0) >> (t[j] + dur[j] <= t[i]))
for i in range(4):
    m.addConstr(late[i] == gp.max_(m.addVar(lb=-100, ub=100, name=f"lat{i}"), constant=0))
m.update()
for i in range(4):
    m.addConstr(m.getVarByName(f"lat{i}") == t[i] + dur[i] - due[i])
m.addConstr(end == gp.max_([t[i] for i in range(4)]))
m.setObjectiveN(late.sum(), 0, priority=2)
m.setObjectiveN(end, 1, priority=1)
m.optimize()
m.Params.ObjNumber = 1
RESULT = {"obj": m.ObjVal, "end": m.ObjNVal, "status": m.Status}
""")


# --- generated programs (set `genconstr_fuzz`) ------------------------------------------------------------------

def fuzz_program(seed):
    """A random small model (same seed, same text): 3-6 bounded variables (continuous or integer), 1-3 binaries,
    2-5 general constraints drawn from max_/addGenConstrMin/abs_/norm 1/norm inf/indicator/PWL/AND/OR, one
    linear row, a random objective, and in about a third of them a second objective (hierarchical with a random
    RelTol/AbsTol, or blended). The models are MIPs (general constraints), so Gurobi's MIP degradation applies;
    MIPGap is 0 so that Gurobi, like trex, proves each optimum."""
    import random
    r = random.Random(seed)
    n = r.randint(3, 6)
    lines = ["import gurobipy as gp", "from gurobipy import GRB", f"model = gp.Model('f{seed}')"]
    vt = [r.choice(["C", "C", "I"]) for _ in range(n)]
    bds = []
    for i in range(n):
        lo = r.randint(-6, 2)
        hi = lo + r.randint(1, 9)
        bds.append((lo, hi))
        lines.append(f"x{i} = model.addVar(lb={lo}, ub={hi}, vtype='{vt[i]}', name='x{i}')")
    nb = r.randint(1, 3)
    for j in range(nb):
        lines.append(f"b{j} = model.addVar(vtype=GRB.BINARY, name='b{j}')")
    ys = []
    for k in range(r.randint(2, 5)):
        kind = r.choice(["max", "min", "abs", "ind", "pwl", "and", "or", "norm1", "norminf"])
        res = f"y{k}"
        ys.append(res)
        if kind in ("and", "or"):
            lines.append(f"{res} = model.addVar(vtype=GRB.BINARY, name='{res}')")
            args = ", ".join(f"b{j}" for j in range(nb))
            lines.append(f"model.addGenConstr{'And' if kind == 'and' else 'Or'}({res}, [{args}])")
            continue
        lines.append(f"{res} = model.addVar(lb=-100, ub=100, name='{res}')")
        a, c = r.sample(range(n), 2)
        if kind == "max":
            lines.append(f"model.addConstr({res} == gp.max_(x{a}, x{c}, constant={r.randint(-3, 3)}))")
        elif kind == "min":
            lines.append(f"model.addGenConstrMin({res}, [x{a}, x{c}], {r.randint(-3, 3)})")
        elif kind == "abs":
            lines.append(f"model.addConstr({res} == gp.abs_(x{a}))")
        elif kind == "norm1":
            lines.append(f"model.addConstr({res} == gp.norm([x{a}, x{c}], 1))")
        elif kind == "norminf":
            lines.append(f"model.addGenConstrNorm({res}, [x{a}, x{c}], GRB.INFINITY)")
        elif kind == "ind":
            j = r.randrange(nb)
            sense = r.choice(["<=", ">=", "=="])
            lines.append(f"model.addConstr((b{j} == {r.randint(0, 1)}) >> ({r.randint(1, 3)} * x{a} - x{c} {sense} "
                         f"{r.randint(-2, 4)}))")
            lines.append(f"model.addConstr({res} == x{a})")
        else:
            lo, hi = bds[a]
            pts = sorted(r.sample(range(lo - 2, hi + 3), 3))
            lines.append(f"model.addGenConstrPWL(x{a}, {res}, {pts}, {[r.randint(-5, 5) for _ in pts]})")
    lines.append(f"model.addConstr(x0 + x1 {r.choice(['<=', '>='])} {r.randint(-2, 6)})")
    obj = " + ".join([f"{r.randint(-3, 3)} * {y}" for y in ys] + [f"{r.randint(-2, 2)} * x{i}" for i in range(n)]
                     + [f"{r.randint(-2, 2)} * b{j}" for j in range(nb)])
    sense = r.choice(["GRB.MINIMIZE", "GRB.MAXIMIZE"])
    lines.append("model.Params.MIPGap = 0")  # Gurobi's default 1e-4 gap would make its values differ by up to 1e-4
    if r.random() < 0.35:
        # What the oracle compares must be unique: ObjVal is objective 0's value, so objective 0 is the last
        # hierarchical level (the first level may degrade by its tolerances), and a blended model compares the
        # blend (objective 0 is the constant 0 there).
        second = " + ".join(f"{r.randint(-3, 3)} * {v}" for v in r.sample(ys + [f"x{i}" for i in range(n)], 3))
        lines.append(f"model.ModelSense = {sense}")
        if r.random() < 0.5:
            lines.append(f"model.setObjectiveN({obj}, 1, priority=2, reltol={r.choice([0, 0.05, 0.2])}, "
                         f"abstol={r.choice([1e-6, 0.5, 2])})")
            lines.append(f"model.setObjectiveN({second}, 0, priority={r.choice([0, 1])})")
            lines.append("model.optimize()")
        else:
            w1, w2 = r.choice([1, 2]), r.choice([-1, 0.5])
            lines.append("model.setObjectiveN(0, 0)")
            lines.append(f"model.setObjectiveN({obj}, 1, weight={w1})")
            lines.append(f"model.setObjectiveN({second}, 2, weight={w2})")
            lines.append("model.optimize()")
            lines.append("RESULT = {'blend': None if model.SolCount == 0 else sum(w * (setattr(model.Params, "
                         f"'ObjNumber', i), model.ObjNVal)[1] for i, w in ((1, {w1}), (2, {w2})))}}")
    else:
        lines.append(f"model.setObjective({obj}, {sense})")
        lines.append("model.optimize()")
    return "\n".join(lines) + "\n"


def fuzz_programs(start, stop):
    return [(f"fuzz_{seed}", fuzz_program(seed)) for seed in range(start, stop)]
