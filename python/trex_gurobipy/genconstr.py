"""General constraints (max, min, abs, and, or, norm, indicator, piecewise-linear) and piecewise-linear objectives:
how they are stored, written in Gurobi's LP dialect, and reformulated into linear rows plus binaries for the
solve (docs/gurobipy-layer.md, "General constraints").

The user's model keeps them as GenConstr objects, so NumVars / NumConstrs / NumGenConstrs and `write()` are
gurobipy's (an LP file with Gurobi's indicator rows, `General Constraints` and `PWLObj` sections). Only the LP
text handed to `trex solve` (Model._snapshot(canonical=True)) holds the exact MILP reformulation: extra columns
(binaries and weights, named after the user's C<i>) and rows (G<k>_<j>). Big-M values come from variable bounds,
tightened by what the linear rows imply when a declared bound is missing (_Builder.propagate); a bound the
reformulation needs that neither gives raises GurobiError 10024 naming the variable.

Semantics pinned against gurobipy 13.0.3 (tests/python/gurobipy_oracle_genconstr.py):
- the indicator variable of an indicator constraint and the operands / resultant of AND / OR are forced into
  {0, 1} even when declared continuous or integer (their VType stays as declared);
- a piecewise-linear function is extended beyond its first and last points by its first and last segments;
  at a jump (two points with the same x) y may take either value;
- constants of max_/min_ combine (max_(x, 2, constant=1) is MAX(x, 2));
- NORM: the 1-norm and the infinity norm are reformulated; the 0- and 2-norms are accepted and written but
  refused at solve (errno 10024).
"""
import math

from .expr import LinExpr, Var, _AttrObject, is_number
from .grb import GRB, GurobiError, ERROR_UNSUPPORTED
from . import lpwriter

INF = 1e100
MAX, MIN, ABS, AND, OR, NORM, INDICATOR, PWL = (GRB.GENCONSTR_MAX, GRB.GENCONSTR_MIN, GRB.GENCONSTR_ABS,
                                                 GRB.GENCONSTR_AND, GRB.GENCONSTR_OR, GRB.GENCONSTR_NORM,
                                                 GRB.GENCONSTR_INDICATOR, GRB.GENCONSTR_PWL)


class GenConstr(_AttrObject):
    """A general constraint. _data by type: MAX/MIN (res, [vars], constant or None), ABS (res, arg),
    AND/OR (res, [vars]), INDICATOR (binvar, binval, [(coef, var)], sense, rhs), PWL (x, y, xs, ys)."""
    __slots__ = ("_model", "_index", "_name", "_type", "_data", "_u", "__weakref__")

    def __init__(self, model, index, name, gtype, data):
        object.__setattr__(self, "_u", None)  # GenConstrName as of the last update(), like Constr._u
        object.__setattr__(self, "_model", model)
        object.__setattr__(self, "_index", index)
        object.__setattr__(self, "_name", name)
        object.__setattr__(self, "_type", gtype)
        object.__setattr__(self, "_data", data)

    def _display_name(self):
        return self._name if self._name else f"GC{self._index}"

    def getAttr(self, name):
        key = str(name).lower()
        if key == "genconstrname":
            if self._u is None:
                raise AttributeError(f"Index out of range for attribute '{name}'")
            return self._u
        if key == "genconstrtype":
            return self._type
        if key == "index":
            return self._index
        raise AttributeError(f"'GenConstr' object has no attribute '{name}'")

    def setAttr(self, name, value):
        if str(name).lower() != "genconstrname":
            raise AttributeError(f"'GenConstr' object has no attribute '{name}'")
        object.__setattr__(self, "_name", str(value))

    def __repr__(self):
        return "<gurobi.GenConstr *Awaiting Model Update*>" if self._u is None else f"<gurobi.GenConstr {self._index}>"


# ---------------------------------------------------------------------------------------------------------------
# building (argument checks as gurobipy 13.0.3 makes them)

def _var(v, what="variable"):
    if not isinstance(v, Var):
        raise TypeError(f"{v!r} is not a variable")
    return v


def flatten_members(args):
    """max_/min_/addGenConstrMax arguments: Vars, numbers, and lists / tuples / dicts (tupledict) of them."""
    out = []
    for a in args:
        if isinstance(a, dict):
            out.extend(flatten_members(list(a.values())))
        elif isinstance(a, (list, tuple)) or type(a).__name__ in ("tuplelist", "ndarray"):
            out.extend(flatten_members(list(a)))
        elif isinstance(a, Var) or is_number(a):
            out.append(a)
        elif hasattr(a, "__iter__") and not isinstance(a, (str, LinExpr)) and type(a).__name__ != "QuadExpr":
            out.extend(flatten_members(list(a)))  # generators
        else:
            raise GurobiError(10003, "Invalid data in vars array")
    return out


def max_min_data(kind, res, members, constant):
    vars_ = [m for m in members if isinstance(m, Var)]
    consts = [float(m) for m in members if not isinstance(m, Var)]
    if constant is not None:
        consts.append(float(constant))
    c = None
    if consts:
        c = max(consts) if kind == MAX else min(consts)
    return (_var(res), vars_, c)


def indicator_data(binvar, binval, lhs, sense=None, rhs=None):
    from .expr import TempConstr, _combine
    _var(binvar)
    if isinstance(binval, bool):
        binval = int(binval)
    if not is_number(binval):
        raise TypeError("an integer is required")
    binval = int(binval)  # gurobipy 13.0.3 truncates (0.5 -> 0); 0 and 1 are valid
    if binval not in (0, 1):
        raise GurobiError(10008, "Problem adding general constraint")
    if sense is None and rhs is None:
        if not isinstance(lhs, TempConstr):
            raise GurobiError(10003, "Invalid argument to addGenConstrIndicator: a linear constraint is expected")
        lhs, sense, rhs = lhs._lhs, lhs._sense, lhs._rhs
    sense = {"<=": "<", ">=": ">", "==": "="}.get(sense, sense)
    if sense not in ("<", ">", "="):
        raise GurobiError(10003, f"Invalid constraint sense '{sense}'")
    expr = _combine(lhs, rhs, -1.0)
    if expr is NotImplemented or not isinstance(expr, LinExpr):
        raise GurobiError(10003, "Invalid argument to addGenConstrIndicator: the constraint must be linear")
    return (binvar, int(binval), merge_terms(expr._coeffs, expr._vars), sense, -expr._const)


def norm_data(res, members, which):
    which = float(which)
    if which not in (0.0, 1.0, 2.0) and which < INF:
        raise GurobiError(10008, "Only 0, 1, 2, and INF norms supported")
    return (_var(res), [_var(v) for v in flatten_members([members])], INF if which >= INF else which)


def pwl_points(xpts, ypts):
    xs = [float(v) for v in xpts]
    ys = [float(v) for v in ypts]
    if len(xs) != len(ys):
        raise GurobiError(10003, "x and y point lists of the PWL function differ in length")
    if not xs:
        raise GurobiError(10003, "PWL function without points")
    if any(b < a for a, b in zip(xs, xs[1:])):
        raise GurobiError(10003, "x values for PWL constraint aren't sorted")
    return xs, ys


def merge_terms(coeffs, vars_):
    acc, order = {}, []
    for c, v in zip(coeffs, vars_):
        if id(v) in acc:
            acc[id(v)][0] += c
        else:
            acc[id(v)] = [float(c), v]
            order.append(id(v))
    return [(acc[k][0], acc[k][1]) for k in order if acc[k][0] != 0.0]


def from_genexpr(model, res, gexpr, name):
    """`model.addConstr(y == max_(...))`: the general constraint the helper expression stands for."""
    if not isinstance(res, Var):
        raise GurobiError(10003, "General expressions can only be the right hand side part of an assignment to "
                                 "a single variable")
    k = gexpr._kind
    if k in (MAX, MIN):
        return model._add_genconstr(k, max_min_data(k, res, gexpr._args, gexpr._constant), name)
    if k == ABS:
        return model._add_genconstr(ABS, (res, _var(gexpr._args[0])), name)
    if k == NORM:
        return model._add_genconstr(NORM, norm_data(res, gexpr._args, gexpr._constant), name)
    return model._add_genconstr(k, (res, [_var(v) for v in gexpr._args]), name)


# ---------------------------------------------------------------------------------------------------------------
# LP text (Gurobi 13.0.3's layout, measured with tests/python/gurobipy_oracle_genconstr.py)

def _pwl_wrapped(prefix, xs, ys):
    """`prefix (x, y) (x, y) ...`; a line that would pass 75 characters ends with a space and the next one
    starts with two spaces (Gurobi 13.0.3)."""
    out, line, has = [], prefix, False
    for a, b in zip(xs, ys):
        t = f"({lpwriter.fmt_num(a)}, {lpwriter.fmt_num(b)})"
        if has and len(line) + 1 + len(t) > lpwriter.LIMIT:
            out.append(line + " ")
            line = "  " + t
        else:
            line += " " + t
        has = True
    out.append(line)
    return out


def indicator_lines(model, names):
    """` name: b = 1 -> terms <= rhs` rows, written in Subject To after the linear and quadratic rows."""
    out = []
    lines = lpwriter._Lines(out)
    for g in model._m_genconstrs:
        if g._type != INDICATOR:
            continue
        b, val, terms, sense, rhs = g._data
        lines.start(f" {lpwriter.lp_name(g._display_name())}: {names[b._index]} = {val} ->")
        first = True
        for c, v in sorted(terms, key=lambda t: t[1]._index):
            lines.add(lpwriter._term(c, names[v._index], first))
            first = False
        op = {"<": "<=", ">": ">=", "=": "="}[sense]
        if lines.has_token:
            lines.add(f" {op} {lpwriter.fmt_num(rhs)}", -1)
        else:
            lines.line += f" {op} {lpwriter.fmt_num(rhs)}"
        lines.finish()
    return out


def general_section(model, names):
    """The `General Constraints` section (MAX / MIN / ABS / AND / OR / PWL), None when there is nothing."""
    out = []
    lines = lpwriter._Lines(out)
    for g in model._m_genconstrs:
        if g._type == INDICATOR:
            continue
        nm = lpwriter.lp_name(g._display_name())
        if g._type == PWL:
            x, y, xs, ys = g._data
            out.extend(_pwl_wrapped(f" {nm}: {names[y._index]} = PWL ( {names[x._index]} ) :", xs, ys))
            continue
        res = g._data[0]
        word = {MAX: "MAX", MIN: "MIN", ABS: "ABS", AND: "AND", OR: "OR", NORM: "NORM"}[g._type]
        if g._type == NORM:
            w = g._data[2]
            word += " ( Inf )" if w >= INF else f" ( {lpwriter.fmt_num(w)} )"
        members = [names[v._index] for v in ([g._data[1]] if g._type == ABS else g._data[1])]
        if g._type in (MAX, MIN) and g._data[2] is not None:
            members.append(lpwriter.fmt_num(g._data[2]))
        lines.start(f" {nm}: {names[res._index]} = {word} (", cont="  ")
        for k, m in enumerate(members):
            lines.add(f" {m}" + (" ," if k < len(members) - 1 else ""))
        lines.add(" )")
        lines.finish()
    if not out:
        return None
    return ["General Constraints"] + out


def pwlobj_section(model, names):
    if not model._m_pwlobj:
        return None
    out = ["PWLObj"]
    for v, xs, ys in sorted(model._m_pwlobj.values(), key=lambda t: t[0]._index):
        out.extend(_pwl_wrapped(f" {names[v._index]}:", xs, ys))
    return out


def decorate_lp(model, text, names):
    """Adds indicator rows, PWLObj and General Constraints to the LP text the linear writer produced."""
    if not model._m_genconstrs and not model._m_pwlobj:
        return text
    lines = text.rstrip("\n").split("\n")
    ind = indicator_lines(model, names)
    if ind:
        at = lines.index("Bounds")
        lines[at:at] = ind
    end = len(lines) - 1  # "End"
    extra = []
    for sec in (pwlobj_section(model, names), general_section(model, names)):
        if sec:
            extra += sec
    lines[end:end] = extra
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------------------------------------------------------
# MILP reformulation for the solve

def _need(v, side, what, bound):
    if bound >= INF or bound <= -INF:
        raise GurobiError(ERROR_UNSUPPORTED,
                          f"unsupported: {what}: the big-M reformulation needs a finite {side} bound on variable "
                          f"'{v.VarName_()}' and neither its bounds nor the linear constraints give one (trex's "
                          f"gurobipy layer solves general constraints as mixed-integer linear rows; give "
                          f"'{v.VarName_()}' a finite {side} bound)")
    return bound


class _Builder:
    """Appends columns and rows to a canonical snapshot (Model._snapshot(canonical=True))."""

    def __init__(self, snap, model):
        self.snap = snap
        self.model = model
        # a binary is 0/1 whatever its bounds say (addVar's default ub is GRB.INFINITY)
        self.bounds = snap["bounds"]
        for i, (lb, ub, vt) in enumerate(self.bounds):
            if vt == "B":
                self.bounds[i] = (max(lb, 0.0), min(ub, 1.0), vt)
        self.names = snap["var_names"]
        self.rows = snap["rows"]
        self.obj = dict(snap["obj"])
        self.k = 0
        self.user_columns = len(self.bounds)
        self.user_rows = len(self.rows)
        self.implied = None  # bounds implied by the rows, computed on the first missing declared bound

    def lb(self, v):
        if self.implied is None and self.bounds[v._index][0] <= -INF:
            self.propagate()  # only when a declared bound is missing: propagation costs rows x terms x passes
        if self.implied is None:
            return self.bounds[v._index][0]
        return max(self.bounds[v._index][0], self.implied[v._index][0])

    def ub(self, v):
        if self.implied is None and self.bounds[v._index][1] >= INF:
            self.propagate()
        if self.implied is None:
            return self.bounds[v._index][1]
        return min(self.bounds[v._index][1], self.implied[v._index][1])

    def propagate(self, passes=20):
        """Bounds implied by the linear rows (activity-based bound propagation), used only for big-M values and
        PWL end points, never written as bounds: e.g. `ship <= cap` gives `ship` the upper bound a fixed-charge
        indicator needs. Valid for every feasible point, so the reformulation stays exact; a relative margin of
        1e-9 keeps rounding on the loose side."""
        n = self.user_columns
        lo = [b[0] for b in self.bounds[:n]]
        hi = [b[1] for b in self.bounds[:n]]
        rows = [(r[1], r[2], r[3]) for r in self.rows[:self.user_rows] if not (len(r) > 4 and r[4])]
        for _ in range(passes):
            changed = False
            for terms, sense, rhs in rows:
                for upper_side in ((True,) if sense == "<" else (False,) if sense == ">" else (True, False)):
                    # upper_side: sum a x <= rhs -> each term's bound from the others' minimum activity
                    fin, ninf, inf_j = 0.0, 0, None
                    for j, a in terms:
                        bd = (lo[j] if a > 0 else hi[j]) if upper_side else (hi[j] if a > 0 else lo[j])
                        if bd >= INF or bd <= -INF:
                            ninf += 1
                            inf_j = j
                        else:
                            fin += a * bd
                    if ninf > 1:
                        continue
                    for j, a in terms:
                        if ninf == 1 and j != inf_j:
                            continue
                        bd = (lo[j] if a > 0 else hi[j]) if upper_side else (hi[j] if a > 0 else lo[j])
                        rest = fin if ninf == 1 else fin - a * bd
                        val = (rhs - rest) / a
                        val += 1e-9 * max(1.0, abs(val)) * (1 if (a > 0) == upper_side else -1)
                        if (a > 0) == upper_side:   # an upper bound on x_j
                            if val < hi[j] - 1e-9 * max(1.0, abs(val)):
                                hi[j] = val
                                changed = True
                        elif val > lo[j] + 1e-9 * max(1.0, abs(val)):
                            lo[j] = val
                            changed = True
            if not changed:
                break
        self.implied = list(zip(lo, hi))

    def col(self, lb, ub, vtype="C", obj=0.0):
        i = len(self.names)
        self.names.append(f"C{i}")
        self.bounds.append((lb, ub, vtype))
        if obj:
            self.obj[i] = obj
        return i

    def binary(self):
        return self.col(0.0, 1.0, "B")

    def row(self, tag, terms, sense, rhs):
        acc = {}
        for i, c in terms:
            acc[i] = acc.get(i, 0.0) + c
        self.k += 1
        self.rows.append((f"G{tag}_{self.k}", sorted((i, c) for i, c in acc.items() if c != 0.0), sense, rhs))

    def force_binary(self, v):
        lb, ub, vt = self.bounds[v._index]
        if vt == "B":
            return
        self.bounds[v._index] = (float(math.ceil(max(lb, 0.0) - 1e-9)), float(math.floor(min(ub, 1.0) + 1e-9)), "I")

    def finish(self):
        self.snap["obj"] = sorted(self.obj.items())


def _max_min(b, tag, g):
    res, vars_, c = g._data
    what = f"general constraint '{g._display_name()}' ({'MAX' if g._type == MAX else 'MIN'})"
    r = res._index
    members = [(v._index, v) for v in vars_]
    if len(members) + (c is not None) == 1:
        if members:
            b.row(tag, [(r, 1.0), (members[0][0], -1.0)], "=", 0.0)
        else:
            b.row(tag, [(r, 1.0)], "=", c)
        return
    sign = 1.0 if g._type == MAX else -1.0  # MIN is MAX of the negations
    # y >= each member (MAX) / y <= each member (MIN)
    for i, _ in members:
        b.row(tag, [(r, sign), (i, -sign)], ">", 0.0)
    if c is not None:
        b.row(tag, [(r, sign)], ">", sign * c)
    # y <= member_i + M_i (1 - d_i) with sum d_i = 1; M_i = (largest member's ub) - member_i's lb (MAX)
    if g._type == MAX:
        top = max([_need(v, "upper", what, b.ub(v)) for _, v in members] + ([c] if c is not None else []))
    else:
        top = min([_need(v, "lower", what, b.lb(v)) for _, v in members] + ([c] if c is not None else []))
    ds = []
    for i, v in members:
        low = _need(v, "lower", what, b.lb(v)) if g._type == MAX else _need(v, "upper", what, b.ub(v))
        m = sign * (top - low)
        d = b.binary()
        ds.append(d)
        # sign*y <= sign*x_i + m (1 - d)  ->  sign*y - sign*x_i + m d <= m
        b.row(tag, [(r, sign), (i, -sign), (d, m)], "<", m)
    if c is not None:
        m = sign * (top - c)
        d = b.binary()
        ds.append(d)
        b.row(tag, [(r, sign), (d, m)], "<", m + sign * c)
    b.row(tag, [(d, 1.0) for d in ds], "=", 1.0)


def _abs_parts(b, tag, x, what):
    """Terms [(column, coef)] equal to |x| (x = p - n, 0 <= p <= ub d, 0 <= n <= -lb (1 - d)), and |x|'s upper
    bound."""
    i, lo, hi = x._index, b.lb(x), b.ub(x)
    if lo >= 0.0:
        return [(i, 1.0)], hi
    if hi <= 0.0:
        return [(i, -1.0)], -lo
    lo = _need(x, "lower", what, lo)
    hi = _need(x, "upper", what, hi)
    p = b.col(0.0, hi)
    n = b.col(0.0, -lo)
    d = b.binary()
    b.row(tag, [(i, 1.0), (p, -1.0), (n, 1.0)], "=", 0.0)
    b.row(tag, [(p, 1.0), (d, -hi)], "<", 0.0)
    b.row(tag, [(n, 1.0), (d, -lo)], "<", -lo)
    return [(p, 1.0), (n, 1.0)], max(hi, -lo)


def _abs(b, tag, g):
    # x split into its positive and negative parts (docs: the y <= x + M (1 - d) form met a CBC fault)
    res, x = g._data
    parts, _ = _abs_parts(b, tag, x, f"general constraint '{g._display_name()}' (ABS)")
    b.row(tag, [(res._index, 1.0)] + [(c, -k) for c, k in parts], "=", 0.0)


def _norm(b, tag, g):
    res, vars_, which = g._data
    what = f"general constraint '{g._display_name()}' (NORM)"
    if which not in (1.0,) and which < INF:
        raise GurobiError(ERROR_UNSUPPORTED, f"unsupported: {what}: the {which:g}-norm is not linear (trex's "
                                             "gurobipy layer reformulates the 1-norm and the infinity norm)")
    r = res._index
    absval = [_abs_parts(b, tag, v, what) for v in vars_]
    if which == 1.0:
        b.row(tag, [(r, 1.0)] + [(c, -k) for parts, _ in absval for c, k in parts], "=", 0.0)
        return
    if not absval:
        b.row(tag, [(r, 1.0)], "=", 0.0)
        return
    # y = max_i |x_i|: y >= a_i, y <= a_i + U (1 - d_i), sum d = 1 (a_i >= 0, U = the largest |x_i| bound)
    top = max(u for _, u in absval)
    ds = []
    for parts, _ in absval:
        b.row(tag, [(r, 1.0)] + [(c, -k) for c, k in parts], ">", 0.0)
        d = b.binary()
        ds.append(d)
        b.row(tag, [(r, 1.0)] + [(c, -k) for c, k in parts] + [(d, top)], "<", top)
    b.row(tag, [(d, 1.0) for d in ds], "=", 1.0)


def _and_or(b, tag, g):
    res, vars_ = g._data
    b.force_binary(res)
    for v in vars_:
        b.force_binary(v)
    r = res._index
    idx = [v._index for v in vars_]
    if not idx:
        b.row(tag, [(r, 1.0)], "=", 1.0 if g._type == AND else 0.0)
        return
    if g._type == AND:
        for i in idx:
            b.row(tag, [(r, 1.0), (i, -1.0)], "<", 0.0)
        b.row(tag, [(r, 1.0)] + [(i, -1.0) for i in idx], ">", 1.0 - len(idx))
    else:
        for i in idx:
            b.row(tag, [(r, 1.0), (i, -1.0)], ">", 0.0)
        b.row(tag, [(r, 1.0)] + [(i, -1.0) for i in idx], "<", 0.0)


def _indicator(b, tag, g):
    bv, val, terms, sense, rhs = g._data
    what = f"indicator constraint '{g._display_name()}'"
    b.force_binary(bv)
    z = bv._index
    lin = [(v._index, c) for c, v in terms]

    def side(upper):
        # the largest (upper) / smallest value of the expression over the variables' bounds
        tot = 0.0
        for c, v in terms:
            want_ub = (c > 0) == upper
            bd = _need(v, "upper" if want_ub else "lower", what, b.ub(v) if want_ub else b.lb(v))
            tot += c * bd
        return tot

    # active when z == val. (expr <= rhs): expr - rhs <= M * (1 - active)
    if sense in ("<", "="):
        m = side(True) - rhs
        if m > 0:
            if val == 1:   # expr + M z <= rhs + M
                b.row(tag, lin + [(z, m)], "<", rhs + m)
            else:          # expr - M z <= rhs
                b.row(tag, lin + [(z, -m)], "<", rhs)
    if sense in (">", "="):
        m = rhs - side(False)
        if m > 0:
            if val == 1:   # expr - M z >= rhs - M
                b.row(tag, lin + [(z, -m)], ">", rhs - m)
            else:          # expr + M z >= rhs
                b.row(tag, lin + [(z, m)], ">", rhs)


def pwl_extended(xs, ys, lo, hi, x, what):
    """The points of the function over [lo, hi]: the first and last segments extended to the bounds."""
    pts = list(zip(xs, ys))
    if lo < xs[0]:
        lo = _need(x, "lower", what, lo)
        s = (ys[1] - ys[0]) / (xs[1] - xs[0]) if len(xs) > 1 and xs[1] > xs[0] else 0.0
        pts.insert(0, (lo, ys[0] + s * (lo - xs[0])))
    if hi > xs[-1]:
        hi = _need(x, "upper", what, hi)
        s = (ys[-1] - ys[-2]) / (xs[-1] - xs[-2]) if len(xs) > 1 and xs[-1] > xs[-2] else 0.0
        pts.append((hi, ys[-1] + s * (hi - xs[-1])))
    return pts


def _pwl_rows(b, tag, xi, yi, pts):
    """x = sum l_k x_k, y = sum l_k y_k, sum l_k = 1, l adjacent-nonzero through segment binaries (SOS2)."""
    if len(pts) == 1:
        b.row(tag, [(xi, 1.0)], "=", pts[0][0])
        b.row(tag, [(yi, 1.0)], "=", pts[0][1])
        return
    lam = [b.col(0.0, 1.0) for _ in pts]
    b.row(tag, [(xi, 1.0)] + [(l, -p[0]) for l, p in zip(lam, pts)], "=", 0.0)
    b.row(tag, [(yi, 1.0)] + [(l, -p[1]) for l, p in zip(lam, pts)], "=", 0.0)
    b.row(tag, [(l, 1.0) for l in lam], "=", 1.0)
    if len(pts) == 2:
        return
    seg = [b.binary() for _ in range(len(pts) - 1)]
    b.row(tag, [(s, 1.0) for s in seg], "=", 1.0)
    for k, l in enumerate(lam):
        near = [s for s in (k - 1, k) if 0 <= s < len(seg)]
        b.row(tag, [(l, 1.0)] + [(seg[s], -1.0) for s in near], "<", 0.0)


def _pwl(b, tag, g):
    x, y, xs, ys = g._data
    what = f"general constraint '{g._display_name()}' (PWL)"
    _pwl_rows(b, tag, x._index, y._index, pwl_extended(xs, ys, b.lb(x), b.ub(x), x, what))


def reformulate(model, snap):
    """Appends the MILP reformulation of every general constraint and PWL objective to a canonical snapshot."""
    if not model._m_genconstrs and not model._m_pwlobj:
        return snap
    b = _Builder(snap, model)
    # domains first (an indicator or AND/OR variable is 0/1), so that big-M values use the forced bounds
    for g in model._m_genconstrs:
        if g._type in (AND, OR):
            b.force_binary(g._data[0])
            for v in g._data[1]:
                b.force_binary(v)
        elif g._type == INDICATOR:
            b.force_binary(g._data[0])
    for n, g in enumerate(model._m_genconstrs):
        {MAX: _max_min, MIN: _max_min, ABS: _abs, AND: _and_or, OR: _and_or, INDICATOR: _indicator,
         PWL: _pwl, NORM: _norm}[g._type](b, n, g)
    for v, xs, ys in model._m_pwlobj.values():
        what = f"the piecewise-linear objective of '{v.VarName_()}'"
        t = b.col(-INF, INF, "C", obj=1.0)
        _pwl_rows(b, f"P{v._index}", v._index, t, pwl_extended(xs, ys, b.lb(v), b.ub(v), v, what))
    b.finish()
    return snap


def render_with_pwl_terms(model, snap):
    """The linear LP text with each piecewise-linear objective written as a `__pwl(x)` objective term right
    after x's column (gurobipy 13.0.3): a named pseudo-column with objective 1 and no bounds line."""
    pwl = {v._index for v, _, _ in model._m_pwlobj.values()}
    new_index, names, bounds = {}, [], []
    for i, name in enumerate(snap["var_names"]):
        new_index[i] = len(names)
        names.append(name)
        bounds.append(snap["bounds"][i])
        if i in pwl:
            names.append(f"__pwl({name})")
            bounds.append((0.0, INF, "C"))
    obj = [(new_index[i], c) for i, c in snap["obj"]]
    obj += [(new_index[i] + 1, 1.0) for i in pwl]
    s = dict(snap)
    s["var_names"] = names
    s["bounds"] = bounds
    s["obj"] = sorted(obj)
    s["rows"] = [tuple([r[0], [(new_index[i], c) for i, c in r[1]], r[2], r[3]] +
                       ([[(c, new_index[i], new_index[j]) for c, i, j in r[4]]] if len(r) > 4 else []))
                 for r in snap["rows"]]
    s["qobj"] = [(c, new_index[i], new_index[j]) for c, i, j in snap["qobj"]]
    text = lpwriter.render_lp(s)
    # lpwriter writes `0 x` for a column used nowhere else; gurobipy counts the PWL objective as a use of x
    lines = text.split("\n")
    head = next(k for k, l in enumerate(lines) if l in ("Minimize", "Maximize"))
    sub = lines.index("Subject To")
    used = [False] * len(names)
    for row in s["rows"]:
        for i, _ in row[1]:
            used[i] = True
        for _, i, j in (row[4] if len(row) > 4 and row[4] else ()):
            used[i] = used[j] = True
    for _, i, j in s["qobj"]:
        used[i] = used[j] = True
    for i in pwl:
        used[new_index[i]] = True
    objc = dict(s["obj"])
    out = []
    lw = lpwriter._Lines(out)
    lw.start(" ", lpwriter.LIMIT + 1)
    first = True
    for i in range(len(names)):
        if i in objc or not used[i]:
            lw.add(lpwriter._term(objc.get(i, 0.0), names[i], first))
            first = False
    if s["objcon"] != 0.0:
        lw.add(lpwriter._term(s["objcon"], "Constant", False))
    if s["qobj"]:
        lpwriter._write_quadratic(lw, [(2.0 * c, i, j) for c, i, j in s["qobj"]], names, first)
        lw.add(" ] / 2")
        lw.finish(" ")
    else:
        lw.finish()
    lines[head + 1:sub] = out
    return "\n".join(lines)


def pwl_value(xs, ys, x):
    """f(x) of a piecewise-linear function extended by its first and last segments."""
    if len(xs) == 1:
        return ys[0]
    if x <= xs[0]:
        s = (ys[1] - ys[0]) / (xs[1] - xs[0]) if xs[1] > xs[0] else 0.0
        return ys[0] + s * (x - xs[0])
    if x >= xs[-1]:
        s = (ys[-1] - ys[-2]) / (xs[-1] - xs[-2]) if xs[-1] > xs[-2] else 0.0
        return ys[-1] + s * (x - xs[-1])
    for k in range(len(xs) - 1):
        if xs[k] <= x <= xs[k + 1] and xs[k + 1] > xs[k]:
            return ys[k] + (ys[k + 1] - ys[k]) * (x - xs[k]) / (xs[k + 1] - xs[k])
    return ys[-1]
