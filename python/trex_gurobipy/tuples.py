"""tuplelist, tupledict and multidict with gurobipy's wildcard selection ('*' matches any key component)."""
from .expr import LinExpr, QuadExpr, Var, is_number, GurobiError


def _as_tuple(key):
    return key if isinstance(key, tuple) else (key,)


def _matches(key, pattern):
    k = _as_tuple(key)
    if len(k) != len(pattern):
        return False
    for a, p in zip(k, pattern):
        if isinstance(p, str) and p == "*":
            continue
        if isinstance(p, (list, set, frozenset)) and not isinstance(a, (list, set)):
            if a not in p:
                return False
            continue
        if a != p:
            return False
    return True


class tuplelist(list):
    """A list of tuples (or scalars) with select(pattern...)."""

    def select(self, *pattern):
        if not pattern:
            return tuplelist(self)
        return tuplelist(t for t in self if _matches(t, pattern))

    def __add__(self, other):
        return tuplelist(list.__add__(self, list(other)))

    def __getitem__(self, index):
        r = list.__getitem__(self, index)
        return tuplelist(r) if isinstance(index, slice) else r

    def __repr__(self):
        return "<gurobi.tuplelist (%d tuples, %d values each):\n %s\n>" % (
            len(self), len(_as_tuple(self[0])) if self else 0, "\n ".join(repr(t) for t in self))


class tupledict(dict):
    """A dict keyed by tuples with select/sum/prod over wildcard patterns (insertion order kept)."""

    def select(self, *pattern):
        if not pattern:
            return list(self.values())
        return [v for k, v in self.items() if _matches(k, pattern)]

    def keys(self):
        return tuplelist(dict.keys(self))

    def sum(self, *pattern):
        r = LinExpr()
        for v in (self.values() if not pattern else self.select(*pattern)):
            if isinstance(v, QuadExpr) and isinstance(r, LinExpr):
                r = QuadExpr(r)
            r._iadd(v, 1.0)
        return r

    def prod(self, coeff, *pattern):
        r = LinExpr()
        items = self.items() if not pattern else ((k, v) for k, v in self.items() if _matches(k, pattern))
        for k, v in items:
            if k not in coeff:
                continue
            c = coeff[k]
            if is_number(c) and isinstance(v, (Var, LinExpr)):
                r._iadd(v, float(c))
            else:
                term = c * v
                if isinstance(term, QuadExpr) and isinstance(r, LinExpr):
                    r = QuadExpr(r)
                r._iadd(term, 1.0)
        return r

    def clean(self):
        pass

    def copy(self):
        return tupledict(self)


def multidict(data):
    """multidict({key: [v1, v2, ...]}) -> [keys, tupledict1, tupledict2, ...]."""
    if not isinstance(data, dict):
        raise GurobiError(10003, "multidict: argument must be a dict")
    keys = tuplelist(data.keys())
    first = next(iter(data.values()), None)
    if first is None:
        return [keys]
    if isinstance(first, (list, tuple)):
        n = len(first)
        out = [tupledict() for _ in range(n)]
        for k, vals in data.items():
            if not isinstance(vals, (list, tuple)) or len(vals) != n:
                raise GurobiError(10003, "multidict: all values must have the same length")
            for i, v in enumerate(vals):
                out[i][k] = v
        return [keys] + out
    return [keys, tupledict(data)]
