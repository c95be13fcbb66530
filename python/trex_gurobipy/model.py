"""Model, Constr, QConstr, Params and Env: the gurobipy modelling surface, solved through `trex solve`.

Rows are stored merged (duplicate variables summed in order of appearance, like Gurobi's C API) and written
in column order. Attribute and parameter names are case-insensitive, as in gurobipy.
"""
import dis
import inspect
import os

from . import genconstr, lpwriter, multiobj
from .expr import (AttrUnavailable, GenExpr, IndicatorConstr, LinExpr, QuadExpr, TempConstr, Var, _AttrObject,
                   _combine, is_number, unsupported)
from .grb import GRB, GurobiError, STATUS_NAMES
from .tuples import tupledict, tuplelist

INF = 1e100


def _to_bound(v):
    v = float(v)
    if v >= INF:
        return INF
    if v <= -INF:
        return -INF
    return v


def _integral_bounds(lb, ub, vtype):
    """gurobipy 13.0.3 rounds the bounds given to addVar for integer variables (within 1e-5: 6.99999 -> 7,
    6.99995 -> 6, lb 6.00001 -> 6) and limits binaries to [0, 1]; bounds set later through LB/UB are kept.
    Only the gurobipy layer's own Model does this (trex_coptpy subclasses it)."""
    import math
    if lb > -INF:
        lb = float(math.ceil(lb - 1e-5 - 1e-12))
    if ub < INF:
        ub = float(math.floor(ub + 1e-5 + 1e-12))
    if vtype == "B":
        lb, ub = max(lb, 0.0), min(ub, 1.0)
    return lb, ub


def _merge(coeffs, vars_):
    """Sum duplicate variables (first-occurrence order); returns (index->coef dict, var list)."""
    acc = {}
    order = []
    for c, v in zip(coeffs, vars_):
        k = id(v)
        if k in acc:
            acc[k][0] += c
        else:
            acc[k] = [c, v]
            order.append(k)
    # Gurobi keeps no explicit zeros: merged or literal zero coefficients leave the row.
    return [(acc[k][0], acc[k][1]) for k in order if acc[k][0] != 0.0]


def _merge_quad(qc, qv1, qv2):
    acc = {}
    order = []
    for c, a, b in zip(qc, qv1, qv2):
        if a._index > b._index:
            a, b = b, a
        k = (id(a), id(b))
        if k in acc:
            acc[k][0] += c
        else:
            acc[k] = [c, a, b]
            order.append(k)
    return [tuple(acc[k]) for k in order if acc[k][0] != 0.0]


class Constr(_AttrObject):
    """A linear constraint: merged terms [(coef, Var)], sense '<' '>' '=', rhs."""
    __slots__ = ("_model", "_index", "_name", "_terms", "_sense", "_rhs", "_u", "__weakref__")

    def __init__(self, model, index, name, terms, sense, rhs):
        object.__setattr__(self, "_u", None)  # (ConstrName, Sense, RHS) as of the last update(), like Var._u
        object.__setattr__(self, "_model", model)
        object.__setattr__(self, "_index", index)
        object.__setattr__(self, "_name", name)
        object.__setattr__(self, "_terms", terms)
        object.__setattr__(self, "_sense", sense)
        object.__setattr__(self, "_rhs", rhs)

    def _display_name(self):
        return self._name if self._name else f"R{self._index}"

    def getAttr(self, name):
        key = str(name).lower()
        pos = {"constrname": 0, "sense": 1, "rhs": 2}.get(key)
        if pos is not None:
            if self._u is None:
                raise AttributeError(f"Index out of range for attribute '{name}'")
            return self._u[pos]
        if key == "index":
            return self._index
        if key == "slack":
            act = sum(c * v.getAttr("X") for c, v in self._terms)
            return self._rhs - act
        if key in ("pi", "cbasis", "farkasdual", "sarhsup", "sarhslow"):
            raise AttrUnavailable(f"Unable to retrieve attribute '{name}' (not provided by trex's solvers)")
        raise AttributeError(f"'Constr' object has no attribute '{name}'")

    def setAttr(self, name, value):
        key = str(name).lower()
        if key == "constrname":
            object.__setattr__(self, "_name", str(value))
        elif key == "rhs":
            object.__setattr__(self, "_rhs", float(value))
        elif key == "sense":
            if value not in ("<", ">", "="):
                raise GurobiError(10003, f"Invalid constraint sense '{value}'")
            object.__setattr__(self, "_sense", value)
        elif key == "lazy":
            pass
        else:
            raise AttributeError(f"'Constr' object has no attribute '{name}'")
        self._model._invalidate_solution()

    def __repr__(self):
        return "<gurobi.Constr *Awaiting Model Update*>" if self._u is None else f"<gurobi.Constr {self._u[0]}>"


class QConstr(Constr):
    """A quadratic constraint: linear terms plus merged products [(coef, Var, Var)]."""
    __slots__ = ("_qterms",)

    def __init__(self, model, index, name, terms, qterms, sense, rhs):
        Constr.__init__(self, model, index, name, terms, sense, rhs)
        object.__setattr__(self, "_qterms", qterms)

    def _display_name(self):
        return self._name if self._name else f"QC{self._index}"

    def getAttr(self, name):
        key = str(name).lower()
        mapped = {"qcname": "constrname", "qcsense": "sense", "qcrhs": "rhs"}.get(key, key)
        if mapped == "slack":
            act = sum(c * v.getAttr("X") for c, v in self._terms)
            act += sum(c * a.getAttr("X") * b.getAttr("X") for c, a, b in self._qterms)
            return self._rhs - act
        return Constr.getAttr(self, mapped)

    def setAttr(self, name, value):
        key = str(name).lower()
        Constr.setAttr(self, {"qcname": "constrname", "qcsense": "sense", "qcrhs": "rhs"}.get(key, key), value)

    def __repr__(self):
        return "<gurobi.QConstr *Awaiting Model Update*>" if self._u is None else f"<gurobi.QConstr {self._u[0]}>"


_PARAM_DEFAULTS = {
    "outputflag": 1, "logtoconsole": 1, "logfile": "", "timelimit": INF, "mipgap": 1e-4, "mipgapabs": 1e-10,
    "threads": 0, "seed": 0, "method": -1, "presolve": -1, "nonconvex": -1, "feasibilitytol": 1e-6,
    "optimalitytol": 1e-6, "intfeastol": 1e-5, "nodelimit": INF, "solutionlimit": GRB.MAXINT,
    "iterationlimit": INF, "mipfocus": 0, "heuristics": 0.05, "cuts": -1, "dualreductions": 1,
    "infunbdinfo": 0, "numericfocus": 0, "bestobjstop": -INF, "cutoff": INF, "poolsolutions": 10,
    "poolsearchmode": 0, "objnumber": 0,
}


# --- parameters: the commonly set ones are checked as gurobipy 13.0.3 checks them (type, range, message) -------
# name -> (type, minimum, maximum); int parameters take floats with integral values (Seed 1.0 -> 1)
_PARAM_RANGES = {
    "timelimit": (float, 0.0, INF), "mipgap": (float, 0.0, INF), "mipgapabs": (float, 0.0, INF),
    "outputflag": (int, 0, 1), "logtoconsole": (int, 0, 1), "nonconvex": (int, -1, 2), "seed": (int, 0, GRB.MAXINT),
    "threads": (int, -1, 1024), "objnumber": (int, 0, GRB.MAXINT), "dualreductions": (int, 0, 1),
    "presolve": (int, -1, 2), "method": (int, -1, 6), "mipfocus": (int, 0, 3),
}
GLOBAL_PARAMS = {}  # gurobipy.setParam: the defaults of models created afterwards


def _check_param(name, value):
    key = str(name).lower()
    spec = _PARAM_RANGES.get(key)
    if spec is None:
        return value
    typ, lo, hi = spec
    if typ is float:
        if isinstance(value, str) or not is_number(value):
            raise TypeError(f"must be real number, not {type(value).__name__}")
        value = float(value)
    else:
        if isinstance(value, str) or not is_number(value) or float(value) != int(value):
            raise TypeError("an integer is required")
        value = int(value)
    pretty = _PARAM_NAMES.get(key, name)
    if value < lo:
        raise GurobiError(10008, f"Unable to set parameter {pretty} to value {value:g} (minimum is {lo:g})")
    if value > hi:
        raise GurobiError(10008, f"Unable to set parameter {pretty} to value {value:g} (maximum is {hi:g})")
    return value


_PARAM_NAMES = {k.lower(): k for k in ("TimeLimit", "MIPGap", "MIPGapAbs", "OutputFlag", "LogToConsole", "NonConvex",
                                       "Seed", "Threads", "ObjNumber", "DualReductions", "Presolve", "Method",
                                       "MIPFocus")}


class Params:
    """model.Params / env params: any parameter name is accepted (case-insensitive); the common ones are checked
    (_PARAM_RANGES); TimeLimit changes how trex solves, ObjNumber selects the objective ObjN* attributes read."""

    def __init__(self, values=None):
        object.__setattr__(self, "_values", dict(values or {}))

    def _get(self, name):
        key = str(name).lower()
        if key in self._values:
            return self._values[key]
        if key in _PARAM_DEFAULTS:
            return _PARAM_DEFAULTS[key]
        raise GurobiError(10007, f"Unknown parameter: '{name}'")

    def _set(self, name, value):
        key = str(name).lower()
        self._values[key] = _check_param(name, value)

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return self._get(name)

    def __setattr__(self, name, value):
        self._set(name, value)


class Env:
    """Accepted for compatibility: Env(), Env(empty=True) + setParam + start(); parameters flow to models."""

    def __init__(self, logfilename="", empty=False, params=None):
        self.params = Params()
        self.Params = self.params
        for k, v in (params or {}).items():
            self.params._set(k, v)

    def setParam(self, name, value):
        self.params._set(name, value)

    def getParam(self, name):
        return self.params._get(name)

    def start(self):
        return self

    def dispose(self):
        pass

    def close(self):
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


# Internal fields carry an `_m_` prefix: user code often stores its own data as model._vars, model._data, ...
_MODEL_FIELDS = {"_m_name", "_m_vars", "_m_constrs", "_m_qconstrs", "_m_sense", "_m_objcon", "_m_qobj",
                 "_m_params", "_m_status", "_m_objval", "_m_objbound", "_m_runtime", "_m_solcount",
                 "_m_solver_detail", "_m_mipgap", "_m_genconstrs", "_m_pwlobj", "_m_objn", "_m_stage", "_m_objnval"}


# Model attributes whose reads see the model as of the last update() (their values when nothing was updated yet).
_LAZY_ATTRS = ("modelsense", "objcon", "numvars", "numconstrs", "numqconstrs", "numgenconstrs", "numintvars",
               "numbinvars", "numnzs", "numqnzs", "ismip", "isqp", "isqcp", "numobj", "ismultiobj")
_LAZY_DEFAULTS = {"modelsense": GRB.MINIMIZE, "objcon": 0.0, "numobj": 1}


class Model:
    def __init__(self, name="", env=None):
        object.__setattr__(self, "_m_name", str(name) if name is not None else "")
        object.__setattr__(self, "_m_vars", [])
        object.__setattr__(self, "_m_constrs", [])
        object.__setattr__(self, "_m_qconstrs", [])
        object.__setattr__(self, "_m_sense", GRB.MINIMIZE)
        object.__setattr__(self, "_m_objcon", 0.0)
        object.__setattr__(self, "_m_qobj", [])
        base = dict(GLOBAL_PARAMS)
        if isinstance(env, Env):
            base.update(env.params._values)
        object.__setattr__(self, "_m_params", Params(base))
        # general constraints (genconstr.py) and objectives (multiobj.py): kept as written, reformulated at solve
        object.__setattr__(self, "_m_genconstrs", [])
        object.__setattr__(self, "_m_pwlobj", {})    # id(var) -> (var, xs, ys)
        object.__setattr__(self, "_m_objn", {})      # objective number -> multiobj.ObjN
        object.__setattr__(self, "_m_stage", None)   # a hierarchical level being solved (multiobj.optimize)
        object.__setattr__(self, "_m_objnval", None)
        object.__setattr__(self, "_m_status", GRB.LOADED)
        object.__setattr__(self, "_m_objval", None)
        object.__setattr__(self, "_m_objbound", None)
        object.__setattr__(self, "_m_runtime", 0.0)
        object.__setattr__(self, "_m_solcount", 0)
        object.__setattr__(self, "_m_solver_detail", "")
        object.__setattr__(self, "_m_mipgap", None)
        # gurobipy's lazy updates: what reads see (getVars, getConstrs, NumVars, ModelSense, getObjective, the
        # objects' attributes) is the model as of the last update(), optimize() or write(); changes apply to
        # the model at once, so the model that is solved or written is the same.
        object.__setattr__(self, "_m_upd", {"vars": [], "constrs": [], "qconstrs": [], "obj": LinExpr(),
                                            "attrs": {}, "genconstrs": []})

    # --- variables ------------------------------------------------------------------------------------------
    def addVar(self, lb=0.0, ub=GRB.INFINITY, obj=0.0, vtype=GRB.CONTINUOUS, name="", column=None):
        if column is not None:
            raise unsupported("addVar(column=...)")
        vt = str(vtype).upper()
        if vt not in ("C", "B", "I", "S", "N"):
            raise GurobiError(10003, f"Invalid variable type '{vtype}'")
        lb, ub = _to_bound(lb), _to_bound(ub)
        if vt in ("B", "I") and type(self).__module__ == __name__:
            lb, ub = _integral_bounds(lb, ub, vt)
        v = Var(self, len(self._m_vars), lb, ub, float(obj), vt, "" if name is None else str(name))
        self._m_vars.append(v)
        self._invalidate_solution()
        return v

    def addVars(self, *indices, lb=0.0, ub=GRB.INFINITY, obj=0.0, vtype=GRB.CONTINUOUS, name=""):
        keys = _expand_keys(indices)
        get = {argname: _per_key_getter(arg, keys, argname)
               for argname, arg in (("lb", lb), ("ub", ub), ("obj", obj), ("vtype", vtype), ("name", name))}
        out = tupledict()
        for pos, key in enumerate(keys):
            if name is None or isinstance(name, str):
                nm = f"{name}[{_key_text(key)}]" if name else ""
            else:
                nm = get["name"](pos, key)
            out[key] = self.addVar(get["lb"](pos, key), get["ub"](pos, key), get["obj"](pos, key),
                                   get["vtype"](pos, key), "" if nm is None else str(nm))
        return out

    def getVars(self):
        return list(self._m_upd["vars"])

    def getVarByName(self, name):
        if not self._m_upd["vars"]:
            raise GurobiError(10003, "No variable names available to index")
        for v in self._m_upd["vars"]:
            if v._u and v._u[0] == name:
                return v
        return None

    # --- constraints ----------------------------------------------------------------------------------------
    def _add_temp(self, tc, name):
        if isinstance(tc, bool) or type(tc).__name__ == "bool_":
            # Gurobi 12 turns a comparison of constants into an empty row: True -> 0 <= 0, False -> 0 <= -1.
            return self._add_row(LinExpr(), "<", 0.0 if tc else -1.0, name)
        if is_number(tc):
            raise GurobiError(10003, f"Invalid argument to Model.addConstr: the number {tc!r} is not a constraint")
        if not isinstance(tc, TempConstr):
            raise GurobiError(10003, f"Invalid argument to Model.addConstr: {type(tc).__name__}")
        if isinstance(tc, IndicatorConstr):
            return self.addGenConstrIndicator(tc._binvar, tc._binval, tc._constr, name=name)
        if isinstance(tc._rhs, GenExpr) or isinstance(tc._lhs, GenExpr):
            if tc._sense != GRB.EQUAL:
                raise GurobiError(10003, "General expressions can only be equal to a single var")
            return genconstr.from_genexpr(self, tc._lhs, tc._rhs, name)
        return self._add_row(tc._lhs, tc._sense, tc._rhs, name)

    def _add_row(self, lhs, sense, rhs, name):
        sense = {"<=": "<", ">=": ">", "==": "="}.get(sense, sense)
        if sense not in ("<", ">", "="):
            raise GurobiError(10003, f"Invalid constraint sense '{sense}'")
        expr = _combine(lhs, rhs, -1.0)
        if expr is NotImplemented:
            raise GurobiError(10003, f"Invalid argument to Model.addConstr: {type(lhs).__name__} "
                                     f"{sense} {type(rhs).__name__}")
        name = "" if name is None else str(name)
        if isinstance(expr, QuadExpr):
            lin = expr._lin
            terms = _merge(lin._coeffs, lin._vars)
            qterms = _merge_quad(expr._qc, expr._qv1, expr._qv2)
            if qterms:
                c = QConstr(self, len(self._m_qconstrs), name, terms, qterms, sense, 0.0 - lin._const)
                self._m_qconstrs.append(c)
                self._invalidate_solution()
                return c
            expr = lin
        terms = _merge(expr._coeffs, expr._vars)
        c = Constr(self, len(self._m_constrs), name, terms, sense, 0.0 - expr._const)
        self._m_constrs.append(c)
        self._invalidate_solution()
        return c

    def addConstr(self, constr, name="", *args):
        if args:  # the legacy form addConstr(lhs, sense, rhs, name) is gone from gurobipy (13.0.3 raises this)
            raise TypeError(f"addConstr() takes at most 3 positional arguments ({3 + len(args)} given)")
        return self._add_temp(constr, name)

    def addLConstr(self, lhs, sense=None, rhs=None, name=""):
        if isinstance(lhs, TempConstr) and rhs is None and sense is not None:
            sense, name = None, sense  # addLConstr(x <= 1, "name"), as gurobipy takes it
        if sense is None and rhs is None:
            c = self._add_temp(lhs, name)
        else:
            c = self._add_row(lhs, sense, rhs, name)
        if isinstance(c, QConstr):
            raise GurobiError(10003, "addLConstr: the expression is quadratic (use addQConstr)")
        return c

    def addQConstr(self, lhs, sense=None, rhs=None, name=""):
        if isinstance(lhs, TempConstr) and rhs is None and sense is not None:
            sense, name = None, sense  # addQConstr(x * y <= 1, "name"), as gurobipy takes it
        if sense is None and rhs is None:
            return self._add_temp(lhs, name)
        return self._add_row(lhs, sense, rhs, name)

    def addConstrs(self, generator, name=""):
        out = tupledict()
        frame_vars = None
        code = getattr(generator, "gi_code", None)
        if code is not None:
            frame_vars = _loop_names(code)
        for pos, tc in enumerate(generator):
            if frame_vars is not None and generator.gi_frame is not None:
                loc = generator.gi_frame.f_locals
                vals = [loc[v] for v in frame_vars if v in loc]
                key = vals[0] if len(vals) == 1 else tuple(vals)
            else:
                key = pos
            nm = f"{name}[{_key_text(key)}]" if name else ""
            out[key] = self._add_temp(tc, nm)
        return out

    def addMConstr(self, *args, **kwargs):
        raise unsupported("addMConstr (matrix API)")

    def addMVar(self, *args, **kwargs):
        raise unsupported("addMVar (matrix API)")

    def addSOS(self, *args, **kwargs):
        raise unsupported("SOS constraints (addSOS)")

    def addRange(self, expr, lower, upper, name=""):
        raise unsupported("range constraints (addRange)")

    # --- general constraints (genconstr.py) ------------------------------------------------------------------
    def _add_genconstr(self, gtype, data, name):
        g = genconstr.GenConstr(self, len(self._m_genconstrs), "" if name is None else str(name), gtype, data)
        self._m_genconstrs.append(g)
        self._invalidate_solution()
        return g

    def addGenConstrMax(self, resvar, vars, constant=None, name=""):
        members = genconstr.flatten_members([vars])
        return self._add_genconstr(GRB.GENCONSTR_MAX, genconstr.max_min_data(GRB.GENCONSTR_MAX, resvar, members,
                                                                            constant), name)

    def addGenConstrMin(self, resvar, vars, constant=None, name=""):
        members = genconstr.flatten_members([vars])
        return self._add_genconstr(GRB.GENCONSTR_MIN, genconstr.max_min_data(GRB.GENCONSTR_MIN, resvar, members,
                                                                            constant), name)

    def addGenConstrAbs(self, resvar, argvar, name=""):
        return self._add_genconstr(GRB.GENCONSTR_ABS, (genconstr._var(resvar), genconstr._var(argvar)), name)

    def addGenConstrAnd(self, resvar, vars, name=""):
        members = [genconstr._var(v) for v in genconstr.flatten_members([vars])]
        return self._add_genconstr(GRB.GENCONSTR_AND, (genconstr._var(resvar), members), name)

    def addGenConstrOr(self, resvar, vars, name=""):
        members = [genconstr._var(v) for v in genconstr.flatten_members([vars])]
        return self._add_genconstr(GRB.GENCONSTR_OR, (genconstr._var(resvar), members), name)

    def addGenConstrNorm(self, resvar, vars, which, name=""):
        return self._add_genconstr(GRB.GENCONSTR_NORM, genconstr.norm_data(resvar, vars, which), name)

    def getGenConstrNorm(self, g):
        r, v, w = self._gen_of(g, GRB.GENCONSTR_NORM)
        return r, list(v), float("inf") if w >= INF else w

    def addGenConstrIndicator(self, binvar, binval, lhs, sense=None, rhs=None, name=""):
        return self._add_genconstr(GRB.GENCONSTR_INDICATOR,
                                   genconstr.indicator_data(binvar, binval, lhs, sense, rhs), name)

    def addGenConstrPWL(self, xvar, yvar, xpts, ypts, name=""):
        xs, ys = genconstr.pwl_points(xpts, ypts)
        return self._add_genconstr(GRB.GENCONSTR_PWL, (genconstr._var(xvar), genconstr._var(yvar), xs, ys), name)

    def getGenConstrs(self):
        return list(self._m_upd["genconstrs"])

    def _gen_of(self, g, gtype):
        if not isinstance(g, genconstr.GenConstr) or g._type != gtype:
            raise GurobiError(10003, "Invalid general constraint type")
        return g._data

    def getGenConstrMax(self, g):
        r, v, c = self._gen_of(g, GRB.GENCONSTR_MAX)
        return r, list(v), -1e30 if c is None else c

    def getGenConstrMin(self, g):
        r, v, c = self._gen_of(g, GRB.GENCONSTR_MIN)
        return r, list(v), 1e30 if c is None else c

    def getGenConstrAbs(self, g):
        return self._gen_of(g, GRB.GENCONSTR_ABS)

    def getGenConstrAnd(self, g):
        r, v = self._gen_of(g, GRB.GENCONSTR_AND)
        return r, list(v)

    def getGenConstrOr(self, g):
        r, v = self._gen_of(g, GRB.GENCONSTR_OR)
        return r, list(v)

    def getGenConstrIndicator(self, g):
        b, val, terms, sense, rhs = self._gen_of(g, GRB.GENCONSTR_INDICATOR)
        return b, val, LinExpr([c for c, _ in terms], [v for _, v in terms]), sense, rhs

    def getGenConstrPWL(self, g):
        x, y, xs, ys = self._gen_of(g, GRB.GENCONSTR_PWL)
        return x, y, len(xs), list(xs), list(ys)

    def _refuse_gen(self, what):
        def f(*args, **kwargs):
            raise unsupported(f"general constraints ({what})")
        return f

    def getConstrs(self):
        return list(self._m_upd["constrs"])

    def getQConstrs(self):
        return list(self._m_upd["qconstrs"])

    def getSOSs(self):
        return []

    def getConstrByName(self, name):
        if not self._m_upd["vars"]:
            raise GurobiError(10003, "No variable names available to index")
        for c in self._m_upd["constrs"]:
            if c._u and c._u[0] == name:
                return c
        return None

    def getRow(self, constr):
        return LinExpr([c for c, _ in constr._terms], [v for _, v in constr._terms])

    def getCoeff(self, constr, var):
        return sum(c for c, v in constr._terms if v is var)

    def chgCoeff(self, constr, var, newvalue):
        terms = [(c, v) for c, v in constr._terms if v is not var]
        terms.append((float(newvalue), var))
        object.__setattr__(constr, "_terms", terms)
        self._invalidate_solution()

    def remove(self, items):
        if isinstance(items, (dict,)):
            items = list(items.values())
        elif isinstance(items, (Var, Constr, genconstr.GenConstr)):
            items = [items]
        gone = {id(x) for x in items}
        self._m_genconstrs[:] = [g for g in self._m_genconstrs if id(g) not in gone]
        for i, g in enumerate(self._m_genconstrs):
            object.__setattr__(g, "_index", i)
        removed_vars = [v for v in self._m_vars if id(v) in gone]
        self._m_vars[:] = [v for v in self._m_vars if id(v) not in gone]
        self._m_constrs[:] = [c for c in self._m_constrs if id(c) not in gone]
        self._m_qconstrs[:] = [c for c in self._m_qconstrs if id(c) not in gone]
        if removed_vars:
            dead = {id(v) for v in removed_vars}
            for c in self._m_constrs + self._m_qconstrs:
                object.__setattr__(c, "_terms", [(k, v) for k, v in c._terms if id(v) not in dead])
            for c in self._m_qconstrs:
                object.__setattr__(c, "_qterms", [t for t in c._qterms if id(t[1]) not in dead
                                                   and id(t[2]) not in dead])
            self._m_qobj[:] = [t for t in self._m_qobj if id(t[1]) not in dead and id(t[2]) not in dead]
        for i, v in enumerate(self._m_vars):
            object.__setattr__(v, "_index", i)
        for i, c in enumerate(self._m_constrs):
            object.__setattr__(c, "_index", i)
        for i, c in enumerate(self._m_qconstrs):
            object.__setattr__(c, "_index", i)
        self._invalidate_solution()

    # --- objective ------------------------------------------------------------------------------------------
    def setObjective(self, expr, sense=None):
        if isinstance(expr, TempConstr):
            raise GurobiError(10003, "setObjective: the objective is a constraint, not an expression")
        if not (is_number(expr) or isinstance(expr, (Var, LinExpr, QuadExpr))):
            raise GurobiError(10003, f"setObjective: unsupported objective type {type(expr).__name__}")
        for v in self._m_vars:
            object.__setattr__(v, "_obj", 0.0)
        self._m_pwlobj.clear()  # setObjective replaces piecewise-linear objectives too (gurobipy 13.0.3)
        if isinstance(expr, QuadExpr):
            lin = expr._lin
            self._m_qobj[:] = _merge_quad(expr._qc, expr._qv1, expr._qv2)
        else:
            lin = LinExpr(expr) if not isinstance(expr, LinExpr) else expr
            self._m_qobj[:] = []
        for c, v in zip(lin._coeffs, lin._vars):
            object.__setattr__(v, "_obj", v._obj + c)
        object.__setattr__(self, "_m_objcon", float(lin._const))
        if sense is not None:
            self._set_sense(sense)
        self._invalidate_solution()

    def setObjectiveN(self, expr, index, priority=0, weight=1.0, abstol=1e-6, reltol=0.0, name=""):
        multiobj.set_objective_n(self, expr, index, priority, weight, abstol, reltol, name)

    def setPWLObj(self, var, x, y):
        """A piecewise-linear objective term f(var) (replaces var's Obj coefficient, as in gurobipy)."""
        genconstr._var(var)
        xs, ys = genconstr.pwl_points(x, y)
        object.__setattr__(var, "_obj", 0.0)
        self._m_pwlobj[id(var)] = (var, xs, ys)
        self._invalidate_solution()

    def _set_sense(self, sense):
        if isinstance(sense, str):
            s = sense.lower()
            sense = GRB.MAXIMIZE if s in ("max", "maximize") else GRB.MINIMIZE if s in ("min", "minimize") \
                else sense
        if sense not in (GRB.MINIMIZE, GRB.MAXIMIZE):
            raise GurobiError(10003, f"Invalid objective sense {sense!r}")
        object.__setattr__(self, "_m_sense", int(sense))

    def getObjective(self, index=None):
        if index is not None and int(index) != 0:  # objective `index` of a multi-objective model
            return multiobj.objective_expr(self, int(index))
        o = self._m_upd["obj"]
        return o.copy() if hasattr(o, "copy") else o

    def _live_objective(self):
        lin = LinExpr()
        for v in self._m_vars:
            if v._obj != 0.0:
                lin._coeffs.append(v._obj)
                lin._vars.append(v)
        lin._const = self._m_objcon
        if self._m_qobj:
            q = QuadExpr(lin)
            for c, a, b in self._m_qobj:
                q._qc.append(c)
                q._qv1.append(a)
                q._qv2.append(b)
            return q
        return lin

    # --- parameters and attributes --------------------------------------------------------------------------
    @property
    def Params(self):
        return self._m_params

    @property
    def params(self):
        return self._m_params

    def setParam(self, name, value):
        self._m_params._set(name, value)

    def getParamInfo(self, name):
        """(name, type, value, minimum, maximum, default) as gurobipy returns it (ranges of _PARAM_RANGES)."""
        v = self._m_params._get(name)
        key = str(name).lower()
        spec = _PARAM_RANGES.get(key)
        default = _PARAM_DEFAULTS.get(key, v)
        if spec is None:
            return (name, type(v), v, v, v, default)
        typ, lo, hi = spec
        conv = (lambda t: float("inf") if t >= INF else float("-inf") if t <= -INF else float(t)) if typ is float \
            else int
        return (name, typ, conv(v), conv(lo), conv(hi), conv(default))

    def resetParams(self):
        self._m_params._values.clear()

    def getAttr(self, name, objs=None):
        if objs is None:
            return self._model_attr(name)
        if isinstance(objs, dict):
            return {k: o.getAttr(name) for k, o in objs.items()}
        return [o.getAttr(name) for o in objs]

    def setAttr(self, name, objs, values=None):
        if values is None:
            self._set_model_attr(name, objs)
            return
        if isinstance(objs, dict):
            for k, o in objs.items():
                o.setAttr(name, values[k] if isinstance(values, dict) else values)
        else:
            objs = list(objs)
            vals = values if isinstance(values, (list, tuple)) else [values] * len(objs)
            for o, v in zip(objs, vals):
                o.setAttr(name, v)

    def _model_attr(self, name):
        key = str(name).lower()
        if key in _LAZY_ATTRS:
            return self._m_upd["attrs"].get(key, _LAZY_DEFAULTS.get(key, 0))
        return self._live_attr(key, name)

    def _live_attr(self, key, name):
        if key == "status":
            return self._m_status
        if key == "modelname":
            return self._m_name
        if key == "modelsense":
            return self._m_sense
        if key == "objcon":
            return self._m_objcon
        if key == "numvars":
            return len(self._m_vars)
        if key == "numconstrs":
            return len(self._m_constrs)
        if key == "numqconstrs":
            return len(self._m_qconstrs)
        if key == "numgenconstrs":
            return len(self._m_genconstrs)
        if key == "numsos":
            return 0
        if key in multiobj.MODEL_ATTRS:
            return multiobj.model_attr(self, key, name)
        if key == "numintvars":
            return sum(1 for v in self._m_vars if v._vtype in ("B", "I", "N"))
        if key == "numbinvars":
            return sum(1 for v in self._m_vars if v._vtype == "B")
        if key == "numnzs":
            return sum(len(c._terms) for c in self._m_constrs)
        if key == "numqnzs":
            return len(self._m_qobj)
        if key == "ismip":
            return int(any(v._vtype != "C" for v in self._m_vars) or bool(self._m_genconstrs))
        if key == "isqp":  # gurobipy: a quadratic objective and no quadratic constraints (else IsQCP)
            return int(bool(self._m_qobj) and not self._m_qconstrs)
        if key == "isqcp":
            return int(bool(self._m_qconstrs))
        if key == "solcount":
            return self._m_solcount
        if key == "runtime":
            return self._m_runtime
        if key in ("itercount", "baritercount", "nodecount"):  # not reported by trex solve
            return 0.0
        if key in ("objval", "objbound", "objboundc", "mipgap"):
            if self._m_solcount == 0 or self._m_objval is None:
                raise AttrUnavailable(f"Unable to retrieve attribute '{name}'")
            if key == "objval":
                return self._m_objval
            if key == "mipgap":
                if not (any(v._vtype != "C" for v in self._m_vars) or self._m_genconstrs):
                    raise AttrUnavailable(f"Unable to retrieve attribute '{name}'")
                return self._m_mipgap if self._m_mipgap is not None else 0.0
            return self._m_objbound if self._m_objbound is not None else self._m_objval
        if key == "fingerprint":
            return 0
        raise AttributeError(f"'Model' object has no attribute '{name}'")

    def _set_model_attr(self, name, value):
        key = str(name).lower()
        if key == "modelsense":
            self._set_sense(value)
        elif key == "objcon":
            object.__setattr__(self, "_m_objcon", float(value))
        elif key == "modelname":
            object.__setattr__(self, "_m_name", str(value))
        elif key in multiobj.SETTABLE:  # ObjNPriority ... of the objective Params.ObjNumber selects
            multiobj.set_attr(self, key, value)
        else:
            raise GurobiError(10003, f"Model attribute '{name}' cannot be set")
        self._invalidate_solution()

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        if name.startswith("addGenConstr"):  # Norm, Exp, Log, Pow, Sin, NL, ...: not reformulated
            return self._refuse_gen(name)
        return self._model_attr(name)

    def __setattr__(self, name, value):
        if name in _MODEL_FIELDS or name.startswith("_"):  # gurobipy lets users keep data in model._<name>
            object.__setattr__(self, name, value)
        elif name.lower() == "params":
            raise GurobiError(10003, "Model.Params cannot be replaced")
        else:
            self._set_model_attr(name, value)

    # --- lifecycle ------------------------------------------------------------------------------------------
    def update(self):
        for v in self._m_vars:
            object.__setattr__(v, "_u", (v.VarName_(), v._lb, v._ub, v._obj, v._vtype))
        for c in self._m_constrs:
            object.__setattr__(c, "_u", (c._display_name(), c._sense, c._rhs))
        for c in self._m_qconstrs:
            object.__setattr__(c, "_u", (c._display_name(), c._sense, c._rhs))
        for g in self._m_genconstrs:
            object.__setattr__(g, "_u", g._display_name())
        object.__setattr__(self, "_m_upd", {
            "vars": list(self._m_vars), "constrs": list(self._m_constrs), "qconstrs": list(self._m_qconstrs),
            "obj": self._live_objective(), "attrs": {k: self._live_attr(k, k) for k in _LAZY_ATTRS},
            "genconstrs": list(self._m_genconstrs)})

    def reset(self, clearall=0):
        self._invalidate_solution()

    def dispose(self):
        pass

    def close(self):
        pass

    def terminate(self):
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def copy(self):
        raise unsupported("Model.copy")

    def computeIIS(self):
        raise unsupported("computeIIS (irreducible infeasible subsystems)")

    def feasRelaxS(self, *args, **kwargs):
        raise unsupported("feasRelaxS")

    def feasRelax(self, *args, **kwargs):
        raise unsupported("feasRelax")

    def relax(self):
        raise unsupported("Model.relax")

    def tune(self):
        raise unsupported("Model.tune")

    def _invalidate_solution(self):
        if self._m_status != GRB.LOADED or self._m_solcount:
            object.__setattr__(self, "_m_status", GRB.LOADED)
            object.__setattr__(self, "_m_objval", None)
            object.__setattr__(self, "_m_solcount", 0)
            object.__setattr__(self, "_m_objnval", None)
            for v in self._m_vars:
                object.__setattr__(v, "_x", None)

    def __repr__(self):
        return (f"<gurobi.Model {'MIP' if self._model_attr('ismip') else 'Continuous'} instance {self._m_name}: "
                f"{len(self._m_constrs)} constrs, {len(self._m_vars)} vars, Parameter changes: none>")

    # --- output ---------------------------------------------------------------------------------------------
    def _snapshot(self, canonical=False):
        """Everything the LP writer needs. canonical=True names columns C<i> and rows R<i>/QC<i> so the
        solver's answer maps back by index whatever the user's names are."""
        if canonical:
            var_names = [f"C{i}" for i in range(len(self._m_vars))]
        else:
            var_names = [lpwriter.lp_name(v.VarName_()) for v in self._m_vars]
        rows = []
        for i, c in enumerate(self._m_constrs):
            nm = f"R{i}" if canonical else lpwriter.lp_name(c._display_name())
            terms = sorted(((v._index, k) for k, v in c._terms), key=lambda t: t[0])
            rows.append((nm, terms, c._sense, c._rhs))
        for i, c in enumerate(self._m_qconstrs):
            nm = f"QC{i}" if canonical else lpwriter.lp_name(c._display_name())
            terms = sorted(((v._index, k) for k, v in c._terms), key=lambda t: t[0])
            q = sorted(((k, a._index, b._index) for k, a, b in c._qterms), key=lambda t: (t[1], t[2]))
            rows.append((nm, terms, c._sense, c._rhs, q))
        snap = {
            "model_name": self._m_name,
            "sense": self._m_sense,
            "var_names": var_names,
            "obj": [(i, v._obj) for i, v in enumerate(self._m_vars) if v._obj != 0.0],
            "objcon": self._m_objcon,
            "qobj": sorted(((k, a._index, b._index) for k, a, b in self._m_qobj), key=lambda t: (t[1], t[2])),
            "rows": rows,
            "bounds": [(v._lb, v._ub, v._vtype) for v in self._m_vars],
        }
        if canonical:  # what trex solves: general constraints as MILP rows, a hierarchical level's objective
            if self._m_stage is not None:
                multiobj.apply_stage(self, snap)
            genconstr.reformulate(self, snap)
        return snap

    def _check_writable(self):
        for v in self._m_vars:
            if v._vtype in ("S", "N"):
                raise unsupported("semi-continuous / semi-integer variables")

    def write(self, filename):
        filename = os.fspath(filename)
        lower = filename.lower()
        self.update()  # gurobipy's write() processes pending changes first
        if lower.endswith(".lp"):
            self._check_writable()
            text = self._lp_text()
            with open(filename, "w", encoding="utf-8") as f:
                f.write(text)
        elif lower.endswith(".sol"):
            if self._m_solcount == 0:
                raise GurobiError(10005, "Unable to write solution: no solution available")
            with open(filename, "w", encoding="utf-8") as f:
                f.write(f"# Solution for model {self._m_name}\n# Objective value = {self._m_objval!r}\n")
                for v in self._m_vars:
                    f.write(f"{v.VarName_()} {v._x!r}\n")
        elif lower.endswith((".prm", ".json", ".ilp", ".mst", ".attr")):
            pass  # parameter/solution side files: nothing the evaluation reads
        else:
            raise unsupported(f"writing '{os.path.basename(filename)}' (only .lp and .sol files are written)")

    def _lp_text(self):
        """The LP file as gurobipy 13.0.3 writes it: linear/quadratic parts from lpwriter, then the general
        constraints (indicator rows, PWLObj, General Constraints) and multiple objectives added around them."""
        snap = self._snapshot()
        names = list(snap["var_names"])
        if multiobj.is_multi(self):
            return genconstr.decorate_lp(self, multiobj.render_lp(self, snap), names)
        if self._m_pwlobj:
            return genconstr.decorate_lp(self, genconstr.render_with_pwl_terms(self, snap), names)
        return genconstr.decorate_lp(self, lpwriter.render_lp(snap), names)

    def printStats(self):
        print(f"Statistics for model {self._m_name}:\n  Linear constraint matrix    : "
              f"{len(self._m_constrs)} Constrs, {len(self._m_vars)} Vars, {self._model_attr('numnzs')} NZs")

    def printAttr(self, attrs, filter="*"):
        names = [attrs] if isinstance(attrs, str) else list(attrs)
        for n in names:
            for v in self._m_vars:
                try:
                    val = v.getAttr(n)
                except (GurobiError, AttributeError):
                    continue
                if val != 0:
                    print(f"{v.VarName_():>20} {val}")

    # --- solving --------------------------------------------------------------------------------------------
    def optimize(self, callback=None):
        if callback is not None:
            raise unsupported("optimize(callback)")
        from .solve import solve_model
        self.update()
        if multiobj.is_multi(self):
            multiobj.optimize(self, solve_model)
        else:
            solve_model(self)

    def status_name(self):
        return STATUS_NAMES.get(self._m_status, str(self._m_status))


def _expand_keys(indices):
    """gurobipy's addVars index rules: ints become range(n), iterables give their members, several
    arguments form the cross product and tuple members are flattened into the key."""
    lists = []
    for idx in indices:
        if is_number(idx) and float(idx) == int(idx) and not isinstance(idx, bool):
            lists.append(list(range(int(idx))))
        elif isinstance(idx, str):
            lists.append([idx])
        else:
            try:
                lists.append(list(idx))
            except TypeError:
                raise GurobiError(10003, f"addVars: invalid index argument {idx!r}") from None
    if not lists:
        raise GurobiError(10003, "addVars: at least one index argument is required")
    keys = [()]
    for members in lists:
        keys = [k + (m if isinstance(m, tuple) else (m,)) for k in keys for m in members]
    return [k[0] if len(k) == 1 else k for k in keys]


_LOOP_NAMES = {}


def _loop_names(code):
    """The generator's loop variables in the order they are bound: its locals and, when an inner generator
    captures one (`for m in ...: quicksum(a[j, m] for j in ...)`), its cell variables too (cached per code)."""
    names = _LOOP_NAMES.get(code)
    if names is None:
        names = []
        for ins in dis.get_instructions(code):
            if ins.opname in ("STORE_FAST", "STORE_DEREF") and not str(ins.argval).startswith(".") \
                    and ins.argval not in names:
                names.append(ins.argval)
        if len(_LOOP_NAMES) < 4096:
            _LOOP_NAMES[code] = names
    return names


def _key_text(key):
    if isinstance(key, tuple):
        return ",".join(str(k) for k in key)
    return str(key)


def _per_key_getter(arg, keys, argname):
    if isinstance(arg, dict):
        return lambda pos, key: arg[key]
    if isinstance(arg, (list, tuple)) or type(arg).__name__ in ("ndarray", "Series"):
        seq = list(arg)
        if len(seq) != len(keys):
            raise GurobiError(10003, f"addVars: '{argname}' has {len(seq)} entries for {len(keys)} variables")
        return lambda pos, key: seq[pos]
    return lambda pos, key: arg
