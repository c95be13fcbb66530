"""trex_gurobipy: a pure-Python, gurobipy-compatible modelling layer that writes Gurobi-style LP files and
solves linear models with `trex solve` (see docs/gurobipy-layer.md). Import it as `gurobipy` through the shim
package in python/shim."""
from .grb import GRB, GurobiError
from .expr import Var, LinExpr, QuadExpr, TempConstr, quicksum, max_, min_, abs_, and_, or_, norm
from .tuples import tupledict, tuplelist, multidict
from .model import Model, Constr, QConstr, Env, Params
from .genconstr import GenConstr
from .expr import GenExpr
from . import model as _model

__version__ = "12.0.0"
TREX_LAYER = True


def read(filename, env=None):
    raise GurobiError(10024, "unsupported: gurobipy.read (reading model files) is not available in trex's layer")


def setParam(name, value):
    """Global parameter default: models created afterwards start with it (checked like Model.setParam)."""
    _model.GLOBAL_PARAMS[str(name).lower()] = _model._check_param(name, value)


def disposeDefaultEnv():
    pass


def gurobi():
    return None


__all__ = ["GRB", "GurobiError", "Var", "LinExpr", "QuadExpr", "TempConstr", "quicksum", "max_", "min_",
           "abs_", "and_", "or_", "norm", "tupledict", "tuplelist", "multidict", "Model", "Constr", "QConstr",
           "Env", "Params", "read", "setParam", "disposeDefaultEnv", "GenConstr", "GenExpr"]
