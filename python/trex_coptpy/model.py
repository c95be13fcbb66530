"""Envr, Model, Var, Constraint and LinExpr of the coptpy-compatible layer: thin adaptations of trex's gurobipy
layer (python/trex_gurobipy), which holds the expressions, the model, the LP writer and the solve path.

What differs from gurobipy, as coptpy 8.0.7 behaves (docs/coptpy-layer.md; tests/python/coptpy_oracle.py):
no lazy updates (reads see the model at once); COPT's status codes (UNSTARTED 0, OPTIMAL 1, INFEASIBLE 2,
UNBOUNDED 3, INF_OR_UNB 4, TIMEOUT 8; an unbounded MIP reports INF_OR_UNB); COPT.INFINITY = 1e30; names
`prefix(key)` from addVars/addConstrs(nameprefix=...); lower-case model attributes (status, objval, ...) and
getInfo(COPT.Info.Value, ...); CoptError (retcode 3) where a value is not available; objval 0.0 before a solve
and COPT.INFINITY after one that found no solution.
"""
import numbers

from trex_gurobipy import expr as _gexpr
from trex_gurobipy import model as _gmodel
from trex_gurobipy.grb import GRB, GurobiError
from trex_gurobipy.tuples import tupledict

from .consts import COPT, PARAM_DEFAULTS, RETCODE_INVALID, RETCODE_UNSUPPORTED, CoptError

_INF = _gmodel.INF          # the gurobipy layer's infinity (1e100)
_COPT_INF = COPT.INFINITY   # 1e30: COPT treats anything beyond it as infinite


def _bound_in(v):
    v = float(v)
    if v >= _COPT_INF:
        return _INF
    if v <= -_COPT_INF:
        return -_INF
    return v


def _bound_out(v):
    if v >= _INF:
        return _COPT_INF
    if v <= -_INF:
        return -_COPT_INF
    return v


def _copt_error(e):
    """A GurobiError of the shared layer as the CoptError a coptpy answer expects (text kept)."""
    text = str(e).replace("trex's gurobipy layer", "trex's coptpy layer")
    code = RETCODE_UNSUPPORTED if "unsupported" in text.lower() else RETCODE_INVALID
    return CoptError(code, text)


def _not_available(what):
    return CoptError(RETCODE_INVALID, f"(INVALID) Fail to get {what} information")


_SENSES = {COPT.LESS_EQUAL: "<", COPT.GREATER_EQUAL: ">", COPT.EQUAL: "=", "<": "<", ">": ">", "=": "=",
           "<=": "<", ">=": ">", "==": "="}

# GRB status of the shared solve path -> COPT status.
_STATUS = {GRB.LOADED: COPT.UNSTARTED, GRB.OPTIMAL: COPT.OPTIMAL, GRB.INFEASIBLE: COPT.INFEASIBLE,
           GRB.UNBOUNDED: COPT.UNBOUNDED, GRB.INF_OR_UNBD: COPT.INF_OR_UNB, GRB.TIME_LIMIT: COPT.TIMEOUT,
           GRB.NODE_LIMIT: COPT.NODELIMIT, GRB.NUMERIC: COPT.NUMERICAL, GRB.INTERRUPTED: COPT.INTERRUPTED,
           GRB.ITERATION_LIMIT: COPT.ITERLIMIT,
           GRB.SUBOPTIMAL: COPT.LOCAL_OPTIMAL}  # the shared solve path's unproven local optimum (nonconvex)


class Var(_gexpr.Var):
    """coptpy's Var: x / name / lb / ub / vtype / obj / index, getInfo / setInfo, getName / getType."""
    __slots__ = ()

    def getAttr(self, name):
        key = str(name).lower()
        if key in ("x", "value"):
            if self._x is None:
                raise _not_available("variable")
            return self._x
        if key in ("name", "varname"):
            return self._name
        if key == "lb":
            return _bound_out(self._lb)
        if key == "ub":
            return _bound_out(self._ub)
        if key in ("obj", "cost"):
            return self._obj
        if key == "vtype":
            return self._vtype
        if key in ("index", "idx"):
            return self._index
        if key in ("redcost", "basis"):
            raise CoptError(RETCODE_UNSUPPORTED, f"unsupported: '{name}' (not provided by trex's solvers)")
        raise AttributeError(f"Invalid attribute name '{name}'")

    def setAttr(self, name, value):
        key = str(name).lower()
        if key == "name":
            key = "varname"
        if key in ("lb", "ub"):
            value = _bound_in(value)
        try:
            _gexpr.Var.setAttr(self, key, value)
        except GurobiError as e:
            raise _copt_error(e) from None

    def getInfo(self, infoname):
        return self.getAttr(infoname)

    def setInfo(self, infoname, value):
        self.setAttr(infoname, value)

    def getName(self):
        return self._name

    def setName(self, name):
        self.setAttr("name", name)

    def getType(self):
        return self._vtype

    def setType(self, vtype):
        self.setAttr("vtype", vtype)

    def getIdx(self):
        return self._index

    def remove(self):
        self._model.remove(self)

    def VarName_(self):
        return self._name if self._name else f"C{self._index}"

    def __repr__(self):
        return f"<coptpy.Var: {self._name}>"


class Constraint(_gmodel.Constr):
    """coptpy's Constraint: name / index, getInfo(COPT.Info.Slack / LB / UB), getName."""
    __slots__ = ()

    def getAttr(self, name):
        key = str(name).lower()
        if key == "name":
            return self._name
        if key in ("index", "idx"):
            return self._index
        if key == "slack":
            if any(v._x is None for _, v in self._terms):
                raise _not_available("a constraint")
            return sum(c * v._x for c, v in self._terms)
        if key in ("lb", "ub"):
            low = self._rhs if self._sense in (">", "=") else -_COPT_INF
            up = self._rhs if self._sense in ("<", "=") else _COPT_INF
            return low if key == "lb" else up
        if key in ("dual", "pi", "basis"):
            raise CoptError(RETCODE_UNSUPPORTED, f"unsupported: '{name}' (not provided by trex's solvers)")
        raise AttributeError(f"Invalid attribute name '{name}'")

    def setAttr(self, name, value):
        key = str(name).lower()
        try:
            _gmodel.Constr.setAttr(self, "constrname" if key == "name" else key, value)
        except GurobiError as e:
            raise _copt_error(e) from None

    def getInfo(self, infoname):
        return self.getAttr(infoname)

    def getName(self):
        return self._name

    def setName(self, name):
        self.setAttr("name", name)

    def getIdx(self):
        return self._index

    def remove(self):
        self._model.remove(self)

    def _display_name(self):
        return self._name if self._name else f"R{self._index}"

    def __repr__(self):
        return f"<coptpy.Constraint: {self._name}>"


class LinExpr(_gexpr.LinExpr):
    """coptpy's LinExpr constructor and term methods take the variable first: LinExpr(x, 2.0), addTerms(vars,
    coeffs), addTerm(var, coeff). Sums of it are the shared layer's expressions."""
    __slots__ = ()

    def __init__(self, arg1=0.0, arg2=None):
        _gexpr.LinExpr.__init__(self)
        if isinstance(arg1, _gexpr.Var):
            self.addTerm(arg1, 1.0 if arg2 is None else arg2)
        elif isinstance(arg1, (list, tuple)) and arg2 is not None:
            self.addTerms(arg1, arg2)
        elif arg1 is not None:
            self._iadd(arg1, 1.0)

    def addTerm(self, var, coeff=1.0):
        self._coeffs.append(float(coeff))
        self._vars.append(_gexpr._check_var(var))

    def addTerms(self, vars, coeffs=1.0):
        if isinstance(vars, _gexpr.Var):
            self.addTerm(vars, coeffs)
            return
        vars = list(vars.values()) if isinstance(vars, dict) else list(vars)
        if isinstance(coeffs, numbers.Real):
            coeffs = [coeffs] * len(vars)
        coeffs = list(coeffs.values()) if isinstance(coeffs, dict) else list(coeffs)
        if len(coeffs) != len(vars):
            raise CoptError(RETCODE_INVALID, "addTerms: variable and coefficient lists differ in length")
        for v, c in zip(vars, coeffs):
            self.addTerm(v, c)

    def addExpr(self, expr, mult=1.0):
        self._iadd(expr, float(mult))

    def setConstant(self, c):
        self._const = float(c)

    def getValue(self):
        return self._const + sum(c * v.getAttr("x") for c, v in zip(self._coeffs, self._vars))

    @property
    def size(self):
        """The number of terms (a property in coptpy, a method in gurobipy)."""
        return len(self._vars)


def _key_text(key):
    return ",".join(str(k) for k in key) if isinstance(key, tuple) else str(key)


class Model(_gmodel.Model):
    """coptpy's Model on the shared gurobipy-layer Model (storage, LP writer, solve through trex)."""

    def __init__(self, env=None, name=""):
        _gmodel.Model.__init__(self, name)

    # --- variables -------------------------------------------------------------------------------------------
    def addVar(self, lb=0.0, ub=COPT.INFINITY, obj=0.0, vtype=COPT.CONTINUOUS, name="", column=None):
        if column is not None:
            raise CoptError(RETCODE_UNSUPPORTED, "unsupported: addVar(column=...) in trex's coptpy layer")
        try:
            v = _gmodel.Model.addVar(self, _bound_in(lb), _bound_in(ub), obj, vtype, name)
        except GurobiError as e:
            raise _copt_error(e) from None
        object.__setattr__(v, "__class__", Var)  # same slots: the shared Var with coptpy's attribute names
        object.__setattr__(v, "_u", ())  # no lazy updates in COPT: reads see the live values
        return v

    def addVars(self, *indices, lb=0.0, ub=COPT.INFINITY, obj=0.0, vtype=COPT.CONTINUOUS, nameprefix="C"):
        try:
            keys = _gmodel._expand_keys(indices)
        except GurobiError as e:
            raise _copt_error(e) from None
        get = {argname: _gmodel._per_key_getter(arg, keys, argname)
               for argname, arg in (("lb", lb), ("ub", ub), ("obj", obj), ("vtype", vtype))}
        out = tupledict()
        for pos, key in enumerate(keys):
            out[key] = self.addVar(get["lb"](pos, key), get["ub"](pos, key), get["obj"](pos, key),
                                   get["vtype"](pos, key), f"{nameprefix}({_key_text(key)})")
        return out

    # --- constraints ----------------------------------------------------------------------------------------
    def _add_row(self, lhs, sense, rhs, name):
        if not getattr(self, "_copt_quadratic_ok", False) and \
                (isinstance(lhs, _gexpr.QuadExpr) or isinstance(rhs, _gexpr.QuadExpr)):
            # coptpy takes quadratic constraints through addQConstr only (8.0.7's own message)
            raise TypeError("'QConstrBuilder' or 'MQConstrBuilder' is not valid for argument 'lhs'")
        try:
            c = _gmodel.Model._add_row(self, lhs, sense, rhs, name)
        except GurobiError as e:
            raise _copt_error(e) from None
        if type(c) is _gmodel.Constr:
            object.__setattr__(c, "__class__", Constraint)
            object.__setattr__(c, "_u", (c._name, c._sense, c._rhs))
        return c

    def addConstr(self, lhs, sense=None, rhs=None, name=""):
        try:
            if isinstance(lhs, _gexpr.TempConstr) or rhs is None:
                if isinstance(sense, str) and sense not in _SENSES and not name:
                    name = sense  # addConstr(x <= 1, "name")
                return self._add_temp(lhs, name)
            s = _SENSES.get(sense)
            if s is None:
                raise CoptError(RETCODE_INVALID, f"Invalid constraint sense {sense!r}")
            return self._add_row(lhs, s, rhs, name)
        except GurobiError as e:
            raise _copt_error(e) from None

    def addQConstr(self, lhs, sense=None, rhs=None, name=""):
        if rhs is not None:
            sense = _SENSES.get(sense, sense)
        object.__setattr__(self, "_copt_quadratic_ok", True)
        try:
            return _gmodel.Model.addQConstr(self, lhs, sense, rhs, name)
        except GurobiError as e:
            raise _copt_error(e) from None
        finally:
            object.__setattr__(self, "_copt_quadratic_ok", False)

    def addGenConstrIndicator(self, binvar, binval, lhs, sense=None, rhs=None, type=1, name=""):
        """binvar == binval implies the row (COPT.INDICATOR_IF, the default); the shared layer reformulates it
        exactly (big-M from the row's variable bounds)."""
        if type != COPT.INDICATOR_IF:
            raise CoptError(RETCODE_UNSUPPORTED, "unsupported: indicator constraints of type ONLYIF / IFANDONLYIF in "
                                                 "trex's coptpy layer (only COPT.INDICATOR_IF)")
        if rhs is not None:
            sense = _SENSES.get(sense, sense)
        try:
            return _gmodel.Model.addGenConstrIndicator(self, binvar, binval, lhs, sense, rhs, name)
        except GurobiError as e:
            raise _copt_error(e) from None

    def setObjectiveN(self, *args, **kwargs):
        raise CoptError(RETCODE_UNSUPPORTED, "unsupported: multi-objective models (setObjectiveN) in trex's coptpy layer")

    def addConstrs(self, generator, nameprefix="R"):
        if isinstance(generator, (list, tuple)):
            out = tupledict()
            for pos, tc in enumerate(generator):
                out[pos] = self._add_temp(tc, f"{nameprefix}({pos})")
            return out
        out = _gmodel.Model.addConstrs(self, generator)
        for key, c in out.items():
            object.__setattr__(c, "_name", f"{nameprefix}({_key_text(key)})")
        return out

    def addBoundConstr(self, expr, lb=-COPT.INFINITY, ub=COPT.INFINITY, name=""):
        """lb <= expr <= ub, as one row in COPT; here the finite sides become one row each (status and objective
        are the same; Rows counts them separately)."""
        lo, up = _bound_in(lb), _bound_in(ub)
        rows = []
        if lo == up:
            return self._add_row(expr, "=", lo, name)
        if lo > -_INF:
            rows.append(self._add_row(expr, ">", lo, name))
        if up < _INF:
            rows.append(self._add_row(expr, "<", up, name + "_ub" if name and rows else name))
        return rows[0] if rows else None

    def getConstrs(self):
        return list(self._m_constrs)

    def getConstrByName(self, name):
        return next((c for c in self._m_constrs if c._name == name), None)

    def getVars(self):
        return list(self._m_vars)

    def getVarByName(self, name):
        return next((v for v in self._m_vars if v._name == name), None)

    def getVar(self, idx):
        return self._m_vars[idx]

    def getConstr(self, idx):
        return self._m_constrs[idx]

    # --- objective ------------------------------------------------------------------------------------------
    def setObjective(self, expr, sense=None):
        try:
            _gmodel.Model.setObjective(self, expr, sense)
        except GurobiError as e:
            raise _copt_error(e) from None

    def setObjSense(self, sense):
        self._set_sense(sense)
        self._invalidate_solution()

    def setObjConst(self, constant):
        object.__setattr__(self, "_m_objcon", float(constant))
        self._invalidate_solution()

    def getObjective(self):
        return self._live_objective()

    # --- parameters, attributes and information -------------------------------------------------------------
    def setParam(self, name, value):
        key = str(name).lower()
        if key == "timelimit" and float(value) >= 1e20:
            self._m_params._values.pop("timelimit", None)  # COPT's default: no limit
            return
        self._m_params._set(name, value)

    def getParam(self, name):
        key = str(name).lower()
        if key in self._m_params._values:
            return self._m_params._values[key]
        if key in PARAM_DEFAULTS:
            return PARAM_DEFAULTS[key]
        raise CoptError(RETCODE_INVALID, f"Unknown parameter: '{name}'")

    @property
    def param(self):
        """model.param.TimeLimit (read or set), as coptpy's ParamSetting."""
        return _ParamSetting(self)

    def getParamInfo(self, name):
        key = str(name).lower()
        if key not in PARAM_DEFAULTS and key not in self._m_params._values:
            raise CoptError(RETCODE_INVALID, f"Unknown parameter: '{name}'")
        default = PARAM_DEFAULTS.get(key, self._m_params._values.get(key))
        return (name, self.getParam(name), default)

    def resetParam(self):
        self._m_params._values.clear()

    def _copt_status(self):
        st = _STATUS.get(self._m_status, self._m_status)
        if st == COPT.UNBOUNDED and self._is_mip():
            return COPT.INF_OR_UNB  # coptpy 8.0.7 reports an unbounded MIP so (checked by the oracle)
        return st

    def _is_mip(self):
        return any(v._vtype != "C" for v in self._m_vars)

    def _model_attr(self, name):
        key = str(name).lower()
        if key in ("status", "lpstatus", "mipstatus"):
            st = self._copt_status()
            if key == "lpstatus" and self._is_mip() or key == "mipstatus" and not self._is_mip():
                return COPT.UNSTARTED
            return st
        if key in ("objval", "lpobjval", "bestobj"):
            if key == "bestobj" and not self._is_mip() or key == "lpobjval" and self._is_mip():
                return 0.0
            if self._m_solcount:
                return self._m_objval
            return 0.0 if self._m_status == GRB.LOADED else _COPT_INF
        if key == "bestbnd":
            return self._m_objval if self._m_solcount and self._is_mip() else (0.0 if not self._is_mip() else _COPT_INF)
        if key == "bestgap":
            return 0.0
        if key == "cols":
            return len(self._m_vars)
        if key == "rows":
            return len(self._m_constrs)
        if key == "qconstrs":
            return len(self._m_qconstrs)
        if key == "elems":
            return sum(len(c._terms) for c in self._m_constrs)
        if key == "ints":
            return sum(1 for v in self._m_vars if v._vtype == "I")
        if key == "bins":
            return sum(1 for v in self._m_vars if v._vtype == "B")
        if key == "ismip":
            return int(self._is_mip())
        if key == "hasqobj":
            return int(bool(self._m_qobj))
        if key == "objsense":
            return self._m_sense
        if key == "objconst":
            return self._m_objcon
        if key == "haslpsol":
            return int(bool(self._m_solcount) and not self._is_mip())
        if key == "hasmipsol":
            return int(bool(self._m_solcount) and self._is_mip())
        if key == "solvingtime":
            return float(self._m_runtime)
        if key in ("simplexiter", "barrieriter", "nodecnt", "soss", "cones", "indicators", "poolsols",
                   "psdcols", "hasbasis"):
            return 0
        raise AttributeError(f"Invalid attribute name '{name}'")

    def _set_model_attr(self, name, value):
        key = str(name).lower()
        if key == "objsense":
            self.setObjSense(value)
        elif key == "objconst":
            self.setObjConst(value)
        else:
            raise CoptError(RETCODE_INVALID, f"Model attribute '{name}' cannot be set")

    def getAttr(self, attrname):
        return self._model_attr(attrname)

    def getInfo(self, infoname, objs):
        if isinstance(objs, dict):
            return tupledict((k, o.getInfo(infoname)) for k, o in objs.items())
        if isinstance(objs, (Var, Constraint)):
            return objs.getInfo(infoname)
        return [o.getInfo(infoname) for o in objs]

    def getValues(self):
        return [v.getAttr("x") for v in self._m_vars]

    def getSlacks(self):
        return [c.getAttr("slack") for c in self._m_constrs]

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        if name.startswith("addGenConstr") or name in ("addCone", "addCones", "addLazyConstr", "addUserCut"):
            def refuse(*args, **kwargs):
                raise CoptError(RETCODE_UNSUPPORTED, f"unsupported: {name} in trex's coptpy layer")
            return refuse
        return self._model_attr(name)

    # --- solving and output ---------------------------------------------------------------------------------
    def solve(self):
        try:
            _gmodel.Model.optimize(self)
        except GurobiError as e:
            raise _copt_error(e) from None

    def solveLP(self):
        """The LP relaxation (integrality dropped, binaries kept within [0, 1]), as COPT's solveLP()."""
        saved = [(v, v._vtype, v._lb, v._ub) for v in self._m_vars if v._vtype != "C"]
        for v, vt, lb, ub in saved:
            object.__setattr__(v, "_vtype", "C")
            if vt == "B":
                object.__setattr__(v, "_lb", max(lb, 0.0))
                object.__setattr__(v, "_ub", min(ub, 1.0))
        try:
            self.solve()
        finally:
            for v, vt, lb, ub in saved:
                object.__setattr__(v, "_vtype", vt)
                object.__setattr__(v, "_lb", lb)
                object.__setattr__(v, "_ub", ub)

    def write(self, filename):
        try:
            _gmodel.Model.write(self, filename)
        except GurobiError as e:
            raise _copt_error(e) from None

    def writeLp(self, filename):
        self.write(filename)

    def writeSol(self, filename):
        self.write(filename)

    def update(self):
        _gmodel.Model.update(self)
        for v in self._m_vars:  # keep reads live (COPT has no pending changes)
            object.__setattr__(v, "_u", ())

    def clear(self):
        _gmodel.Model.__init__(self, self._m_name)

    def reset(self, clearall=0):
        self._invalidate_solution()

    def __repr__(self):
        return f"<coptpy.Model: {self._m_name}>"


class _ParamSetting:
    """coptpy's model.param: attribute reads are getParam, writes setParam (known names; others are an
    AttributeError, as coptpy raises for a name it does not know)."""
    __slots__ = ("_model",)

    def __init__(self, model):
        object.__setattr__(self, "_model", model)

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        try:
            return self._model.getParam(name)
        except CoptError:
            raise AttributeError(f"Invalid parameter name '{name}'") from None

    def __setattr__(self, name, value):
        if str(name).lower() not in PARAM_DEFAULTS:
            raise AttributeError(f"Invalid parameter name '{name}'")
        self._model.setParam(name, value)


def _copt_errors(method):
    """The shared layer's method with its GurobiError raised as coptpy's CoptError (same signatures in coptpy)."""
    def call(self, *args, **kwargs):
        try:
            return method(self, *args, **kwargs)
        except GurobiError as e:
            raise _copt_error(e) from None
    call.__name__ = method.__name__
    call.__doc__ = method.__doc__
    return call


# General constraints with coptpy's signatures (resvar, vars, constant, name) = gurobipy's: the shared layer's exact
# MILP reformulations.
for _name in ("addGenConstrMax", "addGenConstrMin", "addGenConstrAbs", "addGenConstrAnd", "addGenConstrOr",
              "addGenConstrPWL"):
    setattr(Model, _name, _copt_errors(getattr(_gmodel.Model, _name)))


class EnvrConfig:
    """Accepted for compatibility (client / licence settings mean nothing to trex)."""

    def __init__(self):
        self._values = {}

    def set(self, name, value):
        self._values[str(name)] = value


class Envr:
    """coptpy's environment: createModel(name) gives a Model; close() is accepted."""

    def __init__(self, arg=None):
        self._closed = False

    def createModel(self, name=""):
        return Model(self, name)

    def close(self):
        self._closed = True

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False
