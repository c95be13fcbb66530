// Solver backends behind one call: COIN-OR CLP (LP) / CBC (MILP), and GLPK as an independent second
// opinion. Quadratic models, SOS sets and semi-continuous variables are refused with Unsupported,
// never solved to a number.
#pragma once
#include <string>
#include <vector>

#include "lp/model.hpp"

namespace trex::lp {

enum class SolveStatus { Optimal, Infeasible, Unbounded, InfeasibleOrUnbounded, TimeLimit, Unsupported, Error };
enum class Backend { Cbc, Glpk };

struct SolveOptions {
  double time_limit = 0.0;  // seconds; <= 0 means none
  int threads = 1;
  bool verbose = false;  // solver log to stderr
  bool cbc_preprocess = true;   // CBC: CglPreProcess before branch and bound
  // CBC's "infeasible" / "unbounded" on a MILP is re-solved without preprocessing, and by GLPK where the two
  // disagree; two of three decide (CBC 2.10.8's preprocessing declares some feasible MILPs infeasible).
  bool confirm_verdicts = true;
};

// One re-solve that checked a verdict.
struct VerdictCheck {
  std::string solver;  // "cbc_without_preprocessing" | "glpk"
  SolveStatus status = SolveStatus::Error;
};

struct SolveResult {
  SolveStatus status = SolveStatus::Error;
  double objective = 0.0;  // meaningful only when Optimal (includes the objective constant)
  std::vector<double> x;   // primal values when Optimal
  std::string message;     // why, for Unsupported / Error; how a verdict was overruled or disputed
  double seconds = 0.0;
  std::vector<VerdictCheck> checks;  // the confirmations of an infeasible / unbounded MILP verdict
  bool overruled = false;            // the first solve's verdict lost two to one
};

SolveResult solve(const Model& model, Backend backend, const SolveOptions& options = {});

const char* to_string(SolveStatus s);  // "optimal", "infeasible", "unbounded", "infeasible_or_unbounded", ...
const char* to_string(Backend b);      // "cbc", "glpk"
Backend parse_backend(const std::string& name);  // throws trex::Error on unknown names

}  // namespace trex::lp
