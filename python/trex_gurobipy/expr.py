"""Expressions: Var, LinExpr, QuadExpr, TempConstr, quicksum, and the general-constraint helpers (max_, min_, abs_,
and_, or_ build GenExpr objects; `(b == 1) >> (expr <= c)` builds an indicator; genconstr.py solves them).

Like gurobipy, expressions keep their terms as written (duplicates included); terms are merged only when a
constraint or objective is handed to the Model. Numbers are anything numbers.Real accepts (int, float, bool,
numpy scalars); `__array_ufunc__ = None` makes numpy scalars and arrays defer to our reflected operators.
"""
import numbers
import sys

from .grb import GRB, GurobiError, ERROR_UNSUPPORTED


def AttrUnavailable(message):
    """Gurobi's 'Unable to retrieve attribute' error. gurobipy 13 raises a plain AttributeError (no GurobiError,
    no errno; checked with tests/python/gurobipy_oracle.py), so hasattr() answers False and `except
    gp.GurobiError` does not catch it."""
    return AttributeError(message)


_VAR_UPDATED = {"varname": 0, "lb": 1, "ub": 2, "obj": 3, "vtype": 4}


def is_number(v):
    return isinstance(v, numbers.Real) and not isinstance(v, (Var, LinExpr, QuadExpr))


def unsupported(what):
    return GurobiError(ERROR_UNSUPPORTED, f"unsupported: {what} (not available in trex's gurobipy layer; see "
                                          "docs/gurobipy-layer.md)")


class _ExprOps:
    """Operators shared by Var, LinExpr and QuadExpr (all built on _as_expr and the expression classes)."""
    __slots__ = ()
    __array_ufunc__ = None
    __array_priority__ = 100

    def __add__(self, other):
        # Fast path: `self` is an unnamed temporary (e.g. the running total inside sum()), so it can grow in place
        # instead of being copied; this keeps sum() over n terms linear. See _temporary_refcount.
        if _TEMP_RC and type(self) is LinExpr and sys.getrefcount(self) == _TEMP_RC and type(other) is not QuadExpr \
                and (type(other) is Var or type(other) is LinExpr or is_number(other)):
            self._iadd(other, 1.0)
            return self
        return _combine(self, other, 1.0)

    def __radd__(self, other):
        return _combine(self, other, 1.0)

    def __sub__(self, other):
        if _TEMP_RC and type(self) is LinExpr and sys.getrefcount(self) == _TEMP_RC and type(other) is not QuadExpr \
                and (type(other) is Var or type(other) is LinExpr or is_number(other)):
            self._iadd(other, -1.0)
            return self
        return _combine(self, other, -1.0)

    def __rsub__(self, other):
        r = _combine(self, 0.0, 1.0)
        if r is NotImplemented or not (is_number(other) or isinstance(other, (Var, LinExpr, QuadExpr))):
            return NotImplemented
        r._scale(-1.0)
        return _combine(r, other, 1.0)

    def __neg__(self):
        r = _as_expr(self, copy=True)
        r._scale(-1.0)
        return r

    def __pos__(self):
        return _as_expr(self, copy=True)

    def __mul__(self, other):
        if is_number(other):
            r = _as_expr(self, copy=True)
            r._scale(float(other))
            return r
        if isinstance(other, (Var, LinExpr, QuadExpr)):
            return _multiply(_as_expr(self), _as_expr(other))
        return NotImplemented

    def __rmul__(self, other):
        if is_number(other):
            return self.__mul__(other)
        return NotImplemented

    def __truediv__(self, other):
        if is_number(other):
            return self.__mul__(1.0 / float(other))
        if isinstance(other, (Var, LinExpr, QuadExpr)):
            raise unsupported("nonlinear expression (division by an expression; gurobipy 13 builds an NLExpr, for addGenConstrNL only)")
        return NotImplemented

    def __pow__(self, exponent):
        if is_number(exponent) and float(exponent) == 2.0:
            return self.__mul__(self)
        if is_number(exponent) and float(exponent) == 1.0:
            return _as_expr(self, copy=True)
        if is_number(exponent) and float(exponent) == 0.0:
            return LinExpr(1.0)
        raise unsupported("nonlinear expression (an exponent other than 0, 1 or 2; gurobipy 13 builds an NLExpr, for addGenConstrNL only)")

    def __le__(self, other):
        return TempConstr(self, GRB.LESS_EQUAL, other)

    def __ge__(self, other):
        return TempConstr(self, GRB.GREATER_EQUAL, other)

    def __eq__(self, other):
        return TempConstr(self, GRB.EQUAL, other)

    # gurobipy has no < and >: Python raises its own TypeError ("'<' not supported between instances of
    # 'Var' and 'int'"), as with gurobipy 13.
    def __lt__(self, other):
        return NotImplemented

    def __gt__(self, other):
        return NotImplemented

    __hash__ = object.__hash__


class _AttrObject:
    """Attribute access through getAttr/setAttr (case-insensitive names), shared by Var and Constr."""
    __slots__ = ()

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return self.getAttr(name)

    def __setattr__(self, name, value):
        self.setAttr(name, value)

    @property
    def index(self):
        return self._index

    def sameAs(self, other):
        return self is other


class Var(_AttrObject, _ExprOps):
    """A decision variable. Attributes are case-insensitive like gurobipy's (X, x, LB, lb, VarName, ...)."""
    __slots__ = ("_model", "_index", "_name", "_lb", "_ub", "_obj", "_vtype", "_x", "_start", "_u", "__weakref__")

    def __init__(self, model, index, lb, ub, obj, vtype, name):
        # _u: (VarName, LB, UB, Obj, VType) as of the model's last update(); None until then. Reads see it
        # (gurobipy's lazy updates), writes change the model at once (the same model once updated).
        object.__setattr__(self, "_u", None if model is not None else ())
        object.__setattr__(self, "_model", model)
        object.__setattr__(self, "_index", index)
        object.__setattr__(self, "_name", name)
        object.__setattr__(self, "_lb", lb)
        object.__setattr__(self, "_ub", ub)
        object.__setattr__(self, "_obj", obj)
        object.__setattr__(self, "_vtype", vtype)
        object.__setattr__(self, "_x", None)
        object.__setattr__(self, "_start", None)

    # --- attributes -------------------------------------------------------------------------------------
    def getAttr(self, name):
        key = str(name).lower()
        pos = _VAR_UPDATED.get(key)
        if pos is not None:
            u = self._u
            if u is None:  # added since the last update(): gurobipy 13 raises exactly this
                raise AttributeError(f"Index out of range for attribute '{name}'")
            if u:
                return u[pos]
            return (self.VarName_(), self._lb, self._ub, self._obj, self._vtype)[pos]
        if key in ("x", "xn"):
            if self._x is None:
                raise AttrUnavailable(f"Unable to retrieve attribute '{name}'")
            return self._x
        if key == "start":
            return GRB.UNDEFINED if self._start is None else self._start
        if key == "index":
            return self._index
        if key in ("rc", "vbasis", "sanlbup", "sanlblow", "saobjup", "saobjlow"):
            raise AttrUnavailable(f"Unable to retrieve attribute '{name}' (not provided by trex's solvers)")
        raise AttributeError(f"'Var' object has no attribute '{name}'")

    def setAttr(self, name, value):
        key = str(name).lower()
        if key == "lb":
            object.__setattr__(self, "_lb", float(value))
        elif key == "ub":
            object.__setattr__(self, "_ub", float(value))
        elif key == "obj":
            object.__setattr__(self, "_obj", float(value))
            if self._model is not None:  # a linear objective coefficient replaces a piecewise-linear one
                self._model._m_pwlobj.pop(id(self), None)
        elif key == "vtype":
            vt = str(value).upper()
            if vt not in ("C", "B", "I", "S", "N"):
                raise GurobiError(10003, f"Invalid variable type '{value}'")
            object.__setattr__(self, "_vtype", vt)
        elif key == "varname":
            object.__setattr__(self, "_name", str(value))
        elif key == "start":
            object.__setattr__(self, "_start", float(value))
        elif key in ("x", "xn", "rc", "index"):
            raise GurobiError(10003, f"Attribute '{name}' cannot be set")
        elif key in ("varhintval", "varhintpri", "branchpriority", "partition", "poolignore"):
            pass  # hints that only guide Gurobi's search
        else:
            raise AttributeError(f"'Var' object has no attribute '{name}'")
        if self._model is not None:
            self._model._invalidate_solution()

    def VarName_(self):
        return self._name if self._name else f"C{self._index}"

    def getValue(self):
        return self.getAttr("X")

    def __repr__(self):
        if self._u is None:
            return "<gurobi.Var *Awaiting Model Update*>"
        name = self._u[0] if self._u else self.VarName_()
        return f"<gurobi.Var {name}>" if self._x is None else f"<gurobi.Var {name} (value {self._x})>"

    def __bool__(self):
        return True


class LinExpr(_ExprOps):
    """Linear expression: parallel lists of coefficients and variables plus a constant (duplicates kept)."""
    __slots__ = ("_coeffs", "_vars", "_const")

    def __init__(self, arg1=None, arg2=None):
        self._coeffs = []
        self._vars = []
        self._const = 0.0
        if arg1 is None:
            return
        if arg2 is not None:
            if isinstance(arg2, Var):
                self._coeffs.append(float(arg1))
                self._vars.append(arg2)
            else:
                c, v = list(arg1), list(arg2)
                if len(c) != len(v):
                    raise GurobiError(10003, "LinExpr: coefficient and variable lists differ in length")
                for ci, vi in zip(c, v):
                    self._coeffs.append(float(ci))
                    self._vars.append(_check_var(vi))
        elif is_number(arg1):
            self._const = float(arg1)
        elif isinstance(arg1, (Var, LinExpr)):
            self._iadd(arg1, 1.0)
        elif isinstance(arg1, QuadExpr):
            raise GurobiError(10003, "LinExpr: cannot build a linear expression from a QuadExpr")
        else:
            for item in arg1:  # list of (coeff, var) pairs
                c, v = item
                self._coeffs.append(float(c))
                self._vars.append(_check_var(v))

    # --- in-place building blocks ------------------------------------------------------------------------
    def _scale(self, k):
        self._coeffs = [c * k for c in self._coeffs]
        self._const *= k

    def _iadd(self, other, mult):
        if is_number(other):
            self._const += mult * float(other)
        elif isinstance(other, Var):
            self._coeffs.append(mult)
            self._vars.append(other)
        elif isinstance(other, LinExpr):
            if mult == 1.0:
                self._coeffs.extend(other._coeffs)
            else:
                self._coeffs.extend([c * mult for c in other._coeffs])
            self._vars.extend(other._vars)
            self._const += mult * other._const
        else:
            raise _BadOperand(other)

    def __iadd__(self, other):
        if isinstance(other, QuadExpr):
            return self.__add__(other)
        try:
            self._iadd(other, 1.0)
        except _BadOperand:
            return NotImplemented
        return self

    def __isub__(self, other):
        if isinstance(other, QuadExpr):
            return self.__sub__(other)
        try:
            self._iadd(other, -1.0)
        except _BadOperand:
            return NotImplemented
        return self

    def __imul__(self, other):
        if is_number(other):
            self._scale(float(other))
            return self
        return self.__mul__(other)

    # --- gurobipy methods ---------------------------------------------------------------------------------
    def add(self, expr, mult=1.0):
        if isinstance(expr, QuadExpr):
            raise GurobiError(10003, "LinExpr.add: cannot add a QuadExpr to a LinExpr")
        self._iadd(expr, float(mult))

    def addTerms(self, coeffs, vars):
        if isinstance(vars, Var):
            self._coeffs.append(float(coeffs))
            self._vars.append(vars)
            return
        coeffs, vars = list(coeffs), list(vars)
        if len(coeffs) != len(vars):
            raise GurobiError(10003, "addTerms: coefficient and variable lists differ in length")
        for c, v in zip(coeffs, vars):
            self._coeffs.append(float(c))
            self._vars.append(_check_var(v))

    def addConstant(self, c):
        self._const += float(c)

    def clear(self):
        self._coeffs, self._vars, self._const = [], [], 0.0

    def copy(self):
        r = LinExpr()
        r._coeffs = list(self._coeffs)
        r._vars = list(self._vars)
        r._const = self._const
        return r

    def size(self):
        return len(self._vars)

    def getVar(self, i):
        return self._vars[i]

    def getCoeff(self, i):
        return self._coeffs[i]

    def getConstant(self):
        return self._const

    def remove(self, item):
        if isinstance(item, Var):
            keep = [(c, v) for c, v in zip(self._coeffs, self._vars) if v is not item]
        else:
            keep = [(c, v) for i, (c, v) in enumerate(zip(self._coeffs, self._vars)) if i != item]
        self._coeffs = [c for c, _ in keep]
        self._vars = [v for _, v in keep]

    def getValue(self):
        return self._const + sum(c * v.getAttr("X") for c, v in zip(self._coeffs, self._vars))

    def __repr__(self):
        parts = [f"{c:+g} {v.VarName_()}" for c, v in zip(self._coeffs, self._vars)]
        if self._const or not parts:
            parts.append(f"{self._const:+g}")
        return "<gurobi.LinExpr: " + " ".join(parts) + ">"

    def __bool__(self):
        return True


class QuadExpr(_ExprOps):
    """Quadratic expression: a LinExpr plus parallel lists (coeff, var1, var2) of products."""
    __slots__ = ("_lin", "_qc", "_qv1", "_qv2")

    def __init__(self, expr=None):
        self._lin = LinExpr()
        self._qc, self._qv1, self._qv2 = [], [], []
        if expr is not None:
            self._iadd(expr, 1.0)

    def _scale(self, k):
        self._lin._scale(k)
        self._qc = [c * k for c in self._qc]

    def _iadd(self, other, mult):
        if isinstance(other, QuadExpr):
            self._lin._iadd(other._lin, mult)
            self._qc.extend([c * mult for c in other._qc])
            self._qv1.extend(other._qv1)
            self._qv2.extend(other._qv2)
        else:
            self._lin._iadd(other, mult)

    def __iadd__(self, other):
        try:
            self._iadd(other, 1.0)
        except _BadOperand:
            return NotImplemented
        return self

    def __isub__(self, other):
        try:
            self._iadd(other, -1.0)
        except _BadOperand:
            return NotImplemented
        return self

    def __imul__(self, other):
        if is_number(other):
            self._scale(float(other))
            return self
        return self.__mul__(other)

    def add(self, expr, mult=1.0):
        self._iadd(expr, float(mult))

    def addTerms(self, coeffs, vars, vars2=None):
        if vars2 is None:
            self._lin.addTerms(coeffs, vars)
            return
        if isinstance(vars, Var):
            coeffs, vars, vars2 = [coeffs], [vars], [vars2]
        for c, a, b in zip(coeffs, vars, vars2):
            self._qc.append(float(c))
            self._qv1.append(_check_var(a))
            self._qv2.append(_check_var(b))

    def addConstant(self, c):
        self._lin.addConstant(c)

    def copy(self):
        r = QuadExpr()
        r._lin = self._lin.copy()
        r._qc, r._qv1, r._qv2 = list(self._qc), list(self._qv1), list(self._qv2)
        return r

    def clear(self):
        self._lin.clear()
        self._qc, self._qv1, self._qv2 = [], [], []

    def size(self):
        return len(self._qc)

    def getVar1(self, i):
        return self._qv1[i]

    def getVar2(self, i):
        return self._qv2[i]

    def getCoeff(self, i):
        return self._qc[i]

    def getLinExpr(self):
        return self._lin.copy()

    # No getConstant(): gurobipy's QuadExpr has none (the constant is getLinExpr().getConstant()).

    def getValue(self):
        return self._lin.getValue() + sum(c * a.getAttr("X") * b.getAttr("X")
                                          for c, a, b in zip(self._qc, self._qv1, self._qv2))

    def __repr__(self):
        q = " ".join(f"{c:+g} {a.VarName_()}*{b.VarName_()}" for c, a, b in zip(self._qc, self._qv1, self._qv2))
        return f"<gurobi.QuadExpr: {repr(self._lin)[15:-1]} + [ {q} ]>"

    def __bool__(self):
        return True


class _BadOperand(TypeError):
    def __init__(self, operand):
        super().__init__(f"unsupported operand type for expressions: {type(operand).__name__}")


def _check_var(v):
    if not isinstance(v, Var):
        raise GurobiError(10003, f"Expected a Var, got {type(v).__name__}")
    return v


def _combine(a, b, mult):
    """a + mult * b as a new expression (QuadExpr if either side is quadratic)."""
    if not (is_number(b) or isinstance(b, (Var, LinExpr, QuadExpr))):
        return NotImplemented
    if isinstance(a, QuadExpr) or isinstance(b, QuadExpr):
        r = QuadExpr(a)
    else:
        r = _as_expr(a, copy=True)
    r._iadd(b, mult)
    return r


def _as_expr(x, copy=False):
    if isinstance(x, Var):
        e = LinExpr()
        e._coeffs.append(1.0)
        e._vars.append(x)
        return e
    if isinstance(x, (LinExpr, QuadExpr)):
        return x.copy() if copy else x
    if is_number(x):
        return LinExpr(float(x))
    raise _BadOperand(x)


def _multiply(a, b):
    """Product of two expressions; the result is a QuadExpr when both carry variables."""
    if isinstance(a, QuadExpr) or isinstance(b, QuadExpr):
        qa = a if isinstance(a, QuadExpr) else None
        qb = b if isinstance(b, QuadExpr) else None
        if qa is not None and qb is not None:
            if qa._qc and (qb._qc or qb._lin._vars) or qb._qc and qa._lin._vars:
                raise unsupported("nonlinear expression (a product of degree above 2; gurobipy 13 builds an NLExpr, for addGenConstrNL only)")
        if qa is not None and qb is None:
            qa, lb = qa, b
        elif qb is not None and qa is None:
            qa, lb = qb, a
        else:  # both quadratic: one of them is a pure linear/constant QuadExpr
            if not qa._qc:
                qa, lb = qb, qa._lin
            else:
                lb = qb._lin
        if qa._qc and lb._vars:
            raise unsupported("nonlinear expression (a product of degree above 2; gurobipy 13 builds an NLExpr, for addGenConstrNL only)")
        k = lb._const
        r = _multiply(qa._lin, lb)
        r = r if isinstance(r, QuadExpr) else QuadExpr(r)
        r._qc.extend([c * k for c in qa._qc])
        r._qv1.extend(qa._qv1)
        r._qv2.extend(qa._qv2)
        return r
    if not a._vars:
        r = b.copy()
        r._scale(a._const)
        return r
    if not b._vars:
        r = a.copy()
        r._scale(b._const)
        return r
    r = QuadExpr()
    for ca, va in zip(a._coeffs, a._vars):
        for cb, vb in zip(b._coeffs, b._vars):
            r._qc.append(ca * cb)
            r._qv1.append(va)
            r._qv2.append(vb)
    if b._const:
        r._lin._iadd(a, b._const)
    if a._const:
        r._lin._iadd(LinExpr(list(b._coeffs), list(b._vars)), a._const)
    r._lin._const = a._const * b._const
    return r


class TempConstr:
    """The result of `expr <= expr`, `expr >= expr`, `expr == expr`; consumed by Model.addConstr."""
    __slots__ = ("_lhs", "_sense", "_rhs")

    def __init__(self, lhs, sense, rhs):
        self._lhs = lhs
        self._sense = sense
        self._rhs = rhs

    def __bool__(self):
        raise GurobiError(0, "Constraint has no bool value (are you trying \"lb <= expr <= ub\"?)")

    def __rshift__(self, other):
        """`(b == 1) >> (x + y <= 3)`: an indicator constraint for Model.addConstr."""
        if not isinstance(other, TempConstr) or isinstance(other, IndicatorConstr):
            return NotImplemented
        lhs, rhs = self._lhs, self._rhs
        if self._sense != GRB.EQUAL or not isinstance(lhs, Var) or not is_number(rhs):
            raise GurobiError(10003, "Invalid indicator: the left side must be (variable == 0 or 1)")
        return IndicatorConstr(lhs, rhs, other)

    def __repr__(self):
        return f"<gurobi.TempConstr: {self._lhs!r} {self._sense} {self._rhs!r}>"


class IndicatorConstr(TempConstr):
    """`(binvar == value) >> constraint`, consumed by Model.addConstr as addGenConstrIndicator."""
    __slots__ = ("_binvar", "_binval", "_constr")

    def __init__(self, binvar, binval, constr):
        TempConstr.__init__(self, constr._lhs, constr._sense, constr._rhs)
        self._binvar = binvar
        self._binval = binval
        self._constr = constr

    def __rshift__(self, other):
        return NotImplemented


class GenExpr:
    """What max_ / min_ / abs_ / and_ / or_ return: only `var == genexpr` in Model.addConstr uses it."""
    __slots__ = ("_kind", "_args", "_constant")
    __array_ufunc__ = None

    def __init__(self, kind, args, constant=None):
        self._kind = kind
        self._args = args
        self._constant = constant

    def __eq__(self, other):  # `y == max_(...)` reaches Var.__eq__ first; this side only sees the reversed form
        raise GurobiError(10003, "General expressions can only be the right hand side part of an assignment to a "
                                 "single variable")

    def __le__(self, other):
        raise GurobiError(10003, "General expressions can only be equal to a single var")

    __ge__ = __le__
    __hash__ = object.__hash__

    def __repr__(self):
        return f"<gurobi.GenExpr{['Max', 'Min', 'Abs', 'And', 'Or', 'Norm'][self._kind]}>"


def _temporary_refcount():
    """The reference count sys.getrefcount() reports inside __add__ for an operand nobody else holds.

    Calibrated at import on this interpreter: a temporary (the result of `(a + b)` or sum()'s running total)
    must report fewer references than a named expression, in a module, a function, a list and an attribute.
    Only CPython before 3.12 is trusted (later versions borrow stack references); elsewhere the fast path is
    off (0) and every `+` copies, which is the readable reference behaviour the fast path is tested against.
    """
    if sys.implementation.name != "cpython" or sys.version_info >= (3, 12):
        return 0
    seen = {}

    class Probe:
        def __add__(self, other):
            seen.setdefault(other, sys.getrefcount(self))
            return Probe()

    def named():
        a = Probe()
        holder = [Probe()]
        a + "named"
        holder[0] + "list"
        (Probe() + "inner") + "temp"
    named()
    temp = seen.get("temp")
    if temp is None or any(seen.get(k, 0) <= temp for k in ("named", "list")):
        return 0
    return temp


_TEMP_RC = _temporary_refcount()


def quicksum(iterable):
    """Sum expressions in place (linear time), like gurobipy.quicksum; promotes to QuadExpr when needed."""
    r = LinExpr()
    for item in iterable:
        if isinstance(item, QuadExpr) and isinstance(r, LinExpr):
            r = QuadExpr(r)
        if isinstance(item, (Var, LinExpr, QuadExpr)) or is_number(item):
            r._iadd(item, 1.0)
        else:
            raise GurobiError(10003, f"quicksum: unsupported element type {type(item).__name__}")
    return r


def _gen_members(args, who):
    from .genconstr import flatten_members
    return flatten_members(args)


def max_(*args, constant=None):
    """y == max_(x1, x2, [x3, x4], 5, constant=3): Vars, lists of Vars and numbers (constants combine)."""
    return GenExpr(GRB.GENCONSTR_MAX, _gen_members(args, "max_"), constant)


def min_(*args, constant=None):
    return GenExpr(GRB.GENCONSTR_MIN, _gen_members(args, "min_"), constant)


def abs_(arg):
    return GenExpr(GRB.GENCONSTR_ABS, [arg])  # a non-variable argument fails in addConstr, as in gurobipy


def and_(*args):
    return GenExpr(GRB.GENCONSTR_AND, [v for v in _gen_members(args, "and_")])


def or_(*args):
    return GenExpr(GRB.GENCONSTR_OR, [v for v in _gen_members(args, "or_")])


def norm(vars, which):
    """y == norm([x1, x2], 1) (1 and GRB.INFINITY are reformulated; 0 and 2 are refused at solve)."""
    return GenExpr(GRB.GENCONSTR_NORM, _gen_members([vars], "norm"), which)
