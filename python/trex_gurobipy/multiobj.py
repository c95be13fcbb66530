"""Multiple objectives (Model.setObjectiveN): storage, the ObjN* attributes, the LP text and the solve.

Objective 0 is the model's ordinary objective (setObjective / Obj); setObjectiveN(expr, 0, ...) replaces it.
Gurobi's semantics, pinned against gurobipy 13.0.3 (tests/python/gurobipy_oracle_genconstr.py):
- objectives of the same priority are blended (sum of weight * objective), priority levels are solved from the
  highest down, each in the model's sense;
- after a level of a MIP (integer variables or general constraints) the next levels keep it within
  max(ObjNAbsTol, ObjNRelTol * |z|) of its optimum z; in an LP the level keeps its optimum (Gurobi does not
  apply the tolerances to LPs; it fixes the variables whose reduced cost exceeds ObjNAbsTol, which the layer,
  without duals, cannot do: with a large AbsTol an LP level may degrade under Gurobi and not here);
- Status is the last level's (TimeLimit bounds the whole solve; a level left without time ends it with
  TIME_LIMIT; a later level that is unbounded or infeasible gives its status and keeps the earlier level's
  point, as Gurobi does), ObjVal the value of objective 0 at the final solution, ObjNVal (with
  Params.ObjNumber) each objective's unweighted value; an infeasible first level leaves no solution.
"""
import time

from .expr import LinExpr, QuadExpr, Var, is_number
from .grb import GRB, GurobiError
from . import lpwriter

MODEL_ATTRS = ("numobj", "ismultiobj", "objnval", "objnname", "objnpriority", "objnweight", "objnreltol",
               "objnabstol", "objncon")


class ObjN:
    __slots__ = ("terms", "const", "priority", "weight", "abstol", "reltol", "name")

    def __init__(self, terms, const, priority=0, weight=1.0, abstol=1e-6, reltol=0.0, name=""):
        self.terms = terms      # [(coef, Var)] merged; None for objective 0 (the model's own objective)
        self.const = const
        self.priority = int(priority)
        self.weight = float(weight)
        self.abstol = float(abstol)
        self.reltol = float(reltol)
        self.name = str(name or "")


def set_objective_n(model, expr, index, priority, weight, abstol, reltol, name):
    if isinstance(expr, QuadExpr) or not (is_number(expr) or isinstance(expr, (Var, LinExpr))):
        raise GurobiError(10003, "setObjectiveN: the objective must be linear")
    index = int(index)
    if index < 0:
        raise GurobiError(10006, "setObjectiveN: negative objective index")
    if index == 0:
        model.setObjective(expr)
        terms, const = None, 0.0
    else:
        from .genconstr import merge_terms
        lin = LinExpr(expr) if not isinstance(expr, LinExpr) else expr
        terms, const = merge_terms(lin._coeffs, lin._vars), float(lin._const)
    model._m_objn[index] = ObjN(terms, const, priority, weight, abstol, reltol, name)
    model._invalidate_solution()


SETTABLE = ("objnname", "objnpriority", "objnweight", "objnreltol", "objnabstol", "objncon")


def set_attr(model, key, value):
    """model.ObjNPriority = 2 (and ObjNName/Weight/RelTol/AbsTol/Con) for objective Params.ObjNumber."""
    i = int(model._m_params._get("ObjNumber"))
    if i >= num_obj(model):
        raise GurobiError(10006, f"Index out of range for attribute '{key}'")
    o = model._m_objn.get(i)
    if o is None:
        o = model._m_objn[i] = ObjN(None if i == 0 else [], 0.0)
    if key == "objnname":
        o.name = str(value)
    elif key == "objnpriority":
        o.priority = int(value)
    elif key == "objncon":
        if i == 0:
            object.__setattr__(model, "_m_objcon", float(value))
        else:
            o.const = float(value)
    else:
        setattr(o, key[4:], float(value))


def objective_expr(model, i):
    if i >= num_obj(model):
        raise GurobiError(10006, "Index out of range for objective")
    terms, const = objective(model, i)
    e = LinExpr([c for c, _ in terms], [v for _, v in terms])
    e.addConstant(const)
    return e


def num_obj(model):
    return max(model._m_objn) + 1 if model._m_objn else 1


def is_multi(model):
    return num_obj(model) > 1


def objective(model, i):
    """(terms [(coef, Var)], constant) of objective i (objective 0: the Obj attributes and ObjCon)."""
    if i == 0:
        return [(v._obj, v) for v in model._m_vars if v._obj != 0.0], model._m_objcon
    o = model._m_objn.get(i)
    return (list(o.terms), o.const) if o is not None else ([], 0.0)


def info(model, i):
    o = model._m_objn.get(i)
    return o if o is not None else ObjN(None, 0.0)


def value(model, i):
    terms, const = objective(model, i)
    v = const + sum(c * var._x for c, var in terms)
    if i == 0:
        from .genconstr import pwl_value
        v += sum(pwl_value(xs, ys, var._x) for var, xs, ys in model._m_pwlobj.values())
    return v


def model_attr(model, key, name):
    if key == "numobj":
        return num_obj(model)
    if key == "ismultiobj":
        return int(is_multi(model))
    i = int(model._m_params._get("ObjNumber"))
    if i >= num_obj(model):
        raise GurobiError(10006, f"Index out of range for attribute '{name}'")
    o = info(model, i)
    if key == "objnval":
        if model._m_solcount == 0:
            raise AttributeError(f"Unable to retrieve attribute '{name}'")
        if model._m_objnval is not None:
            return model._m_objnval[i]
        return value(model, i)
    return {"objnname": o.name, "objnpriority": o.priority, "objnweight": o.weight, "objnreltol": o.reltol,
            "objnabstol": o.abstol, "objncon": objective(model, i)[1]}[key]


# ---------------------------------------------------------------------------------------------------------------
# solve: one trex solve per priority level

def apply_stage(model, snap):
    """Model._snapshot(canonical=True) during a level: that level's blended objective and the earlier levels'
    rows."""
    st = model._m_stage
    snap["obj"] = sorted(st["obj"].items())
    snap["objcon"] = st["objcon"]
    snap["qobj"] = []
    for k, (terms, sense, rhs, _) in enumerate(st["rows"]):
        snap["rows"].append((f"M{k}", sorted(terms.items()), sense, rhs))


def optimize(model, solve_model):
    if model._m_qobj:
        raise GurobiError(10003, "setObjectiveN: a multi-objective model cannot have a quadratic objective")
    if model._m_pwlobj:
        raise GurobiError(10024, "unsupported: piecewise-linear objectives (setPWLObj) in a multi-objective model "
                                 "(trex's gurobipy layer solves them in single-objective models only)")
    n = num_obj(model)
    mip = any(v._vtype != "C" for v in model._m_vars) or bool(model._m_genconstrs)
    levels = sorted({info(model, i).priority for i in range(n)}, reverse=True)
    rows = []
    sense = model._m_sense
    params = model._m_params._values
    had_limit = "timelimit" in params
    limit = float(model._m_params._get("TimeLimit"))
    start = time.monotonic()
    kept = None
    try:
        for lvl, pr in enumerate(levels):
            if limit < 1e100:  # TimeLimit bounds the whole hierarchical solve, as in Gurobi
                left = limit - (time.monotonic() - start)
                if left <= 0 and lvl > 0:
                    object.__setattr__(model, "_m_status", GRB.TIME_LIMIT)
                    break
                params["timelimit"] = max(left, 0.0)
            members = [i for i in range(n) if info(model, i).priority == pr]
            coef, const = {}, 0.0
            for i in members:
                w = info(model, i).weight
                terms, c0 = objective(model, i)
                for c, v in terms:
                    coef[v._index] = coef.get(v._index, 0.0) + w * c
                const += w * c0
            coef = {k: c for k, c in coef.items() if c != 0.0}
            object.__setattr__(model, "_m_stage", {"obj": coef, "objcon": const, "rows": list(rows)})
            solve_model(model)
            if lvl > 0 and model._m_status != GRB.OPTIMAL and not mip and rows and rows[-1][3] is not None:
                # an LP level held exactly at the previous optimum may be refused by rounding: hold it within
                # 1e-9 (relative) instead and solve again
                coef_p, sense_p, rhs_p, z_p = rows[-1]
                rows[-1] = (coef_p, sense_p, rhs_p + (1 if sense_p == "<" else -1) * 1e-9 * max(1.0, abs(z_p)), 0)
                object.__setattr__(model, "_m_stage", {"obj": coef, "objcon": const, "rows": list(rows)})
                solve_model(model)
            if model._m_status not in (GRB.OPTIMAL,) or model._m_solcount == 0:
                if kept is not None:  # a later level failed: Gurobi keeps the earlier level's point (its status
                    for v, val in zip(model._m_vars, kept):  # is the failing level's, e.g. UNBOUNDED)
                        object.__setattr__(v, "_x", val)
                    object.__setattr__(model, "_m_solcount", 1)
                break
            kept = [v._x for v in model._m_vars]
            z = model._m_objval
            # MIP: the next levels may degrade this one by max(AbsTol, RelTol |z|); LP: it keeps its optimum
            tol = max(max(info(model, i).abstol, info(model, i).reltol * abs(z)) for i in members) if mip else 0.0
            if sense == GRB.MINIMIZE:
                rows.append((coef, "<", z - const + tol, z if not mip else None))
            else:
                rows.append((coef, ">", z - const - tol, z if not mip else None))
    finally:
        object.__setattr__(model, "_m_stage", None)
        if had_limit:
            params["timelimit"] = limit
        else:
            params.pop("timelimit", None)
    if model._m_solcount:
        object.__setattr__(model, "_m_objnval", [value(model, i) for i in range(n)])
        object.__setattr__(model, "_m_objval", model._m_objnval[0])


# ---------------------------------------------------------------------------------------------------------------
# LP text: `Minimize multi-objectives` and one block per objective (gurobipy 13.0.3)

def render_lp(model, snap):
    n = num_obj(model)
    base = dict(snap)
    base["objcon"] = 0.0
    text = lpwriter.render_lp(base)
    lines = text.rstrip("\n").split("\n")
    names = snap["var_names"]
    head = next(k for k, l in enumerate(lines) if l in ("Minimize", "Maximize"))
    sub = lines.index("Subject To")
    used = [False] * len(names)
    for row in snap["rows"]:
        for i, _ in row[1]:
            used[i] = True
        for _, i, j in (row[4] if len(row) > 4 and row[4] else ()):
            used[i] = used[j] = True
    block = [lines[head] + " multi-objectives"]
    consts = []
    for i in range(n):
        terms, const = objective(model, i)
        for _, v in terms:
            used[v._index] = True
    for i in range(n):
        o = info(model, i)
        terms, const = objective(model, i)
        block.append(f"  {lpwriter.lp_name(o.name) if o.name else f'OBJ{i}'}: Priority={o.priority} "
                     f"Weight={lpwriter.fmt_num(o.weight)} AbsTol={lpwriter.fmt_num(o.abstol)} "
                     f"RelTol={lpwriter.fmt_num(o.reltol)}")
        coef = {}
        for c, v in terms:
            coef[v._index] = coef.get(v._index, 0.0) + c
        if i == 0:
            for k in range(len(names)):
                if not used[k]:
                    coef.setdefault(k, 0.0)
        out = []
        lw = lpwriter._Lines(out)
        lw.start("  ", lpwriter.LIMIT + 2)  # one more than the single objective's first line (gurobipy 13.0.3)
        first = True
        for k in sorted(coef):
            lw.add(lpwriter._term(coef[k], names[k], first))
            first = False
        if const != 0.0:
            lw.add(lpwriter._term(const, f"Constant{i}", False))
            consts.append(f" Constant{i} = 1")
        lw.finish()
        block += out
    lines[head:sub] = block
    if consts:
        end_bounds = next(k for k in range(lines.index("Bounds") + 1, len(lines))
                          if not lines[k].startswith(" "))
        lines[end_bounds:end_bounds] = consts
    return "\n".join(lines) + "\n"
