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


class _KeyList(tuplelist):
    """tupledict.keys(): a tuplelist whose `in` is a hash lookup (keys are hashable)."""

    def __contains__(self, key):
        keys = getattr(self, "_set", None)
        if keys is None:
            keys = self._set = set(self)
        return key in keys


class tupledict(dict):
    """A dict keyed by tuples with select/sum/prod over wildcard patterns (insertion order kept).

    Patterns made of '*' and plain values use an index per set of fixed positions, built on first use and
    dropped whenever the dict changes (like gurobipy), so x.sum(i, '*') in a loop is not a scan per call.
    _scan_select is the readable reference the index is tested against.
    """
    __slots__ = ("_index",)

    def __init__(self, *args, **kwargs):
        dict.__init__(self, *args, **kwargs)
        self._index = {}

    def _changed(self):
        self._index = {}

    def __setitem__(self, key, value):
        self._changed()
        dict.__setitem__(self, key, value)

    def __delitem__(self, key):
        self._changed()
        dict.__delitem__(self, key)

    def update(self, *args, **kwargs):
        self._changed()
        dict.update(self, *args, **kwargs)

    def pop(self, *args):
        self._changed()
        return dict.pop(self, *args)

    def popitem(self):
        self._changed()
        return dict.popitem(self)

    def setdefault(self, key, default=None):
        self._changed()
        return dict.setdefault(self, key, default)

    def clear(self):
        self._changed()
        dict.clear(self)

    def _matching_keys(self, pattern):
        fixed = tuple(i for i, p in enumerate(pattern) if not (isinstance(p, str) and p == "*"))
        if any(isinstance(pattern[i], (list, set, frozenset)) for i in fixed):
            return [k for k in dict.keys(self) if _matches(k, pattern)]
        n = len(pattern)
        if not hasattr(self, "_index"):  # built without __init__ (copy/pickle protocols)
            self._index = {}
        ix = self._index.get((n, fixed))
        if ix is None:
            ix = {}
            for k in dict.keys(self):
                t = _as_tuple(k)
                if len(t) == n:
                    ix.setdefault(tuple(t[i] for i in fixed), []).append(k)
            self._index[(n, fixed)] = ix
        try:
            return ix.get(tuple(pattern[i] for i in fixed), [])
        except TypeError:  # unhashable pattern value
            return [k for k in dict.keys(self) if _matches(k, pattern)]

    def _scan_select(self, *pattern):
        return [v for k, v in self.items() if _matches(k, pattern)]

    def select(self, *pattern):
        if not pattern:
            return list(self.values())
        return [dict.__getitem__(self, k) for k in self._matching_keys(pattern)]

    def keys(self):
        return _KeyList(dict.keys(self))

    def sum(self, *pattern):
        r = LinExpr()
        for v in (self.values() if not pattern else self.select(*pattern)):
            if isinstance(v, QuadExpr) and isinstance(r, LinExpr):
                r = QuadExpr(r)
            r._iadd(v, 1.0)
        return r

    def prod(self, coeff, *pattern):
        r = LinExpr()
        keys = dict.keys(self) if not pattern else self._matching_keys(pattern)
        for k in keys:
            if k not in coeff:
                continue
            c = coeff[k]
            v = dict.__getitem__(self, k)
            if is_number(c) and isinstance(v, (Var, LinExpr)):
                r._iadd(v, float(c))
            else:
                term = c * v
                if isinstance(term, QuadExpr) and isinstance(r, LinExpr):
                    r = QuadExpr(r)
                r._iadd(term, 1.0)
        return r

    def clean(self):
        self._index = {}

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
