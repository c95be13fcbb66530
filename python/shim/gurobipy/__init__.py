"""Shim: with python/shim on PYTHONPATH, `import gurobipy` gives trex's gurobipy-compatible layer."""
import os as _os
import sys as _sys

_here = _os.path.dirname(_os.path.dirname(_os.path.dirname(_os.path.abspath(__file__))))
if _here not in _sys.path:
    _sys.path.insert(0, _here)

from trex_gurobipy import *  # noqa: E402,F401,F403
from trex_gurobipy import GRB, GurobiError, Model, quicksum, tupledict, tuplelist, multidict  # noqa: E402,F401
from trex_gurobipy import Env, LinExpr, QuadExpr, Var, Constr, QConstr, TempConstr, __version__, TREX_LAYER  # noqa: E402,F401,E501
from trex_gurobipy import read, setParam, disposeDefaultEnv, max_, min_, abs_, and_, or_, norm  # noqa: E402,F401
