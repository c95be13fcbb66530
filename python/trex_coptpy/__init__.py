"""trex_coptpy: a pure-Python, coptpy-compatible modelling layer on the same core as trex's gurobipy layer
(python/trex_gurobipy: expressions, model storage, LP writer, solve through `trex solve`); see
docs/coptpy-layer.md. Import it as `coptpy` through the shim package in python/shim."""
from trex_gurobipy.expr import QuadExpr, quicksum
from trex_gurobipy.tuples import multidict, tupledict, tuplelist

from .consts import COPT, CoptError
from .model import Constraint, Envr, EnvrConfig, LinExpr, Model, Var

__version__ = "8.0.7"
TREX_LAYER = True

__all__ = ["COPT", "CoptError", "Envr", "EnvrConfig", "Model", "Var", "Constraint", "LinExpr", "QuadExpr",
           "quicksum", "tupledict", "tuplelist", "multidict"]
