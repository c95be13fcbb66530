"""Shim: with python/shim on PYTHONPATH, `import coptpy` gives trex's coptpy-compatible layer."""
import os as _os
import sys as _sys

_here = _os.path.dirname(_os.path.dirname(_os.path.dirname(_os.path.abspath(__file__))))
if _here not in _sys.path:
    _sys.path.insert(0, _here)

from trex_coptpy import *  # noqa: E402,F401,F403
from trex_coptpy import COPT, CoptError, Envr, EnvrConfig, Model, Var, Constraint, LinExpr, QuadExpr  # noqa: E402,F401
from trex_coptpy import quicksum, tupledict, tuplelist, multidict, __version__, TREX_LAYER  # noqa: E402,F401
