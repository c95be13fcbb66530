// Wrapper programs for coptpy and PuLP answers (see api_wrappers.hpp).
#include "oreval/api_wrappers.hpp"

namespace trex::oreval {
namespace {

// Shared head of every wrapper (gurobipy's in score.cpp too): run answer.py, keep its exception (printed as the
// interpreter would); _trex_find and _trex_layer_verdict for the API parts.
const char* const kHead = R"PY(import json, sys, traceback
_trex_ns = {"__name__": "__main__", "__builtins__": __builtins__}
_trex_err = None
try:
    with open("answer.py", encoding="utf-8") as _trex_f:
        _trex_src = _trex_f.read()
    exec(compile(_trex_src, "answer.py", "exec"), _trex_ns)
except Exception as _trex_e:
    _trex_err = _trex_e
    traceback.print_exc()
_trex_out = {"status": None, "optimal_value": None, "status_name": None}
if _trex_err is not None:
    _trex_out["error_type"] = type(_trex_err).__name__
    _trex_out["error"] = str(_trex_err)[:500]


def _trex_find(names, is_model):
    for name in names:
        obj = _trex_ns.get(name)
        if obj is not None and is_model(obj):
            return obj
    for obj in list(_trex_ns.values()):
        if is_model(obj):
            return obj
    return None


def _trex_layer_verdict(model):
    # trex's layers: the re-solves that checked the last solve's MILP verdict (real gurobipy / coptpy have none)
    try:
        v = object.__getattribute__(model, "_trex_verdict")
        if v[0] > 0:
            _trex_out["verdict_checks"], _trex_out["verdict_overruled"] = v
    except Exception:
        pass
)PY";

const char* const kTail = R"PY(
sys.stdout.flush()
print(json.dumps(_trex_out))
)PY";

const char* kCoptpy = R"PY(
# COPT status -> Gurobi's numbering (what the scorer reads); the COPT code is kept in api_status.
_TREX_STATUS = {0: (1, "LOADED"), 1: (2, "OPTIMAL"), 2: (3, "INFEASIBLE"), 3: (5, "UNBOUNDED"), 4: (4, "INF_OR_UNBD"),
                8: (9, "TIME_LIMIT"), 20: (13, "SUBOPTIMAL")}  # 20: LOCAL_OPTIMAL, not proven
try:
    import coptpy as _trex_cp
    _trex_model_type = _trex_cp.Model
except Exception:
    _trex_model_type = None
_trex_model = None
if _trex_model_type is not None:
    _trex_model = _trex_find(("model", "m"), lambda o: isinstance(o, _trex_model_type))
if _trex_model is None:
    _trex_out["status_name"] = "MODEL_NOT_FOUND"
else:
    try:
        try:
            _trex_model.setParam("Logging", 0)
        except Exception:
            pass
        if _trex_model.status == 0:
            _trex_model.solve()
        _trex_st = int(_trex_model.status)
        _trex_out["api_status"] = _trex_st
        _trex_out["status"], _trex_out["status_name"] = _TREX_STATUS.get(_trex_st, (100 + _trex_st, "COPT_%d" % _trex_st))
        if _trex_st == 1:
            _trex_out["optimal_value"] = float(_trex_model.objval)
    except Exception as _trex_e:
        _trex_out["error_type"] = type(_trex_e).__name__
        _trex_out["error"] = str(_trex_e)[:500]
    _trex_layer_verdict(_trex_model)
)PY";

const char* kPulp = R"PY(
try:
    import pulp as _trex_pulp
    _trex_problem_type = _trex_pulp.LpProblem
except Exception:
    _trex_pulp = None
    _trex_problem_type = None
_trex_model = None
if _trex_problem_type is not None:
    _trex_model = _trex_find(("model", "m", "prob", "problem", "lp", "lp_problem"),
                             lambda o: isinstance(o, _trex_problem_type))
if _trex_model is None:
    _trex_out["status_name"] = "MODEL_NOT_FOUND"
else:
    try:
        from trex_pulp import confirm as _trex_confirm
    except ImportError:
        _trex_confirm = None
    try:
        if _trex_model.status == _trex_pulp.LpStatusNotSolved:
            _trex_model.solve(_trex_pulp.PULP_CBC_CMD(msg=0))
        _trex_st = int(_trex_model.status)
        _trex_sol = int(getattr(_trex_model, "sol_status", _trex_pulp.LpSolutionOptimal))
        _trex_out["api_status"] = _trex_pulp.LpStatus.get(_trex_st, str(_trex_st))
        if _trex_st == _trex_pulp.LpStatusOptimal and _trex_sol == _trex_pulp.LpSolutionOptimal:
            _trex_out["status"], _trex_out["status_name"] = 2, "OPTIMAL"
            _trex_obj = _trex_model.objective
            _trex_v = _trex_pulp.value(_trex_obj) if _trex_obj is not None else 0.0
            _trex_out["optimal_value"] = float(_trex_v if _trex_v is not None else 0.0)
        elif _trex_st == _trex_pulp.LpStatusOptimal:  # a feasible, not proven optimal, solution (time limit)
            _trex_out["status"], _trex_out["status_name"] = 9, "TIME_LIMIT"
        else:
            _trex_out["status"], _trex_out["status_name"] = {
                _trex_pulp.LpStatusInfeasible: (3, "INFEASIBLE"), _trex_pulp.LpStatusUnbounded: (5, "UNBOUNDED"),
                _trex_pulp.LpStatusNotSolved: (1, "LOADED")}.get(_trex_st, (100 + _trex_st, "PULP_UNDEFINED"))
            if _trex_st in (_trex_pulp.LpStatusInfeasible, _trex_pulp.LpStatusUnbounded) and _trex_confirm is not None:
                # CBC's infeasible / unbounded verdict is checked by trex (issue #25 point 5)
                try:
                    _trex_c = _trex_confirm(_trex_model)
                except Exception as _trex_e:  # the check failed: CBC's verdict stands, the reason is kept
                    _trex_c = {"status": None, "objective": None, "checks": [], "overruled": False}
                    _trex_out["verdict_error"] = ("%s: %s" % (type(_trex_e).__name__, _trex_e))[:300]
                _trex_out["verdict_checks"] = 1 + len(_trex_c["checks"])
                if _trex_c["status"] == "optimal" and _trex_c["objective"] is not None:
                    _trex_out["verdict_overruled"] = True
                    _trex_out["status"], _trex_out["status_name"] = 2, "OPTIMAL"
                    _trex_out["optimal_value"] = float(_trex_c["objective"])
                    _trex_out["verdict_detail"] = ("CBC (PuLP) said %s; trex: optimal %s" % (
                        _trex_pulp.LpStatus[_trex_st].lower(), _trex_c["message"] or ""))[:300]
                else:
                    _trex_out["verdict_overruled"] = False
    except Exception as _trex_e:
        _trex_out["error_type"] = type(_trex_e).__name__
        _trex_out["error"] = str(_trex_e)[:500]
)PY";

std::string python_string_literal(const std::string& s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\\' || c == '\'') out += '\\';
    out += c;
  }
  return out + "'";
}

}  // namespace

std::string wrapper_head() { return kHead; }
std::string wrapper_tail() { return kTail; }

std::optional<std::string> api_solver_wrapper(const std::string& api, const std::filesystem::path& python_dir) {
  if (api == "coptpy") return std::string(kHead) + kCoptpy + kTail;
  if (api == "pulp") {
    // Debian's PuLP is pointed at /usr/bin/cbc before the answer runs (python/trex_pulp).
    std::string setup = "import os as _trex_os, sys as _trex_sys\n_trex_dir = " +
                        python_string_literal(python_dir.string()) +
                        "\nif _trex_dir and _trex_dir not in _trex_sys.path:\n    _trex_sys.path.append(_trex_dir)\n"
                        "try:\n    import trex_pulp as _trex_pulp_setup\n    _trex_pulp_setup.install()\n"
                        "except ImportError:\n    pass\n";
    return setup + kHead + kPulp + kTail;
  }
  return std::nullopt;
}

std::optional<std::filesystem::path> api_interpreter(const std::string& api) {
  if (api == "pulp") return std::filesystem::path("/usr/bin/python3");
  return std::nullopt;
}

std::string unsupported_api_detail(const std::string& module) {
  return "the answer models with " + module +
         ", which trex does not run (code answers run on gurobipy, coptpy or pulp; docs/eval.md)";
}

}  // namespace trex::oreval
