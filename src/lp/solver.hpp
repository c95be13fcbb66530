// Solver backends behind one call: COIN-OR CLP (LP) / CBC (MILP), and GLPK as an independent second
// opinion; quadratic models (objective or rows) go to Ipopt (continuous) or Bonmin (mixed integer) whatever
// the backend asked, and their optimum is "proven" when the model is convex (convexity.hpp) or when spatial
// branch and bound closes the gap (global_qp.hpp), else "local" (SolveStatus::LocalOptimal). SOS sets and semi-continuous variables are refused with Unsupported,
// never solved to a number.
#pragma once
#include <string>
#include <vector>

#include "lp/model.hpp"

namespace trex::lp {

// LocalOptimal: a nonconvex quadratic model's local optimum (Ipopt / Bonmin), not proven global; it carries
// a point and its objective like Optimal. Optimal always means proven.
enum class SolveStatus { Optimal, Infeasible, Unbounded, InfeasibleOrUnbounded, TimeLimit, Unsupported, Error,
                         LocalOptimal };
enum class Backend { Cbc, Glpk };

struct SolveOptions {
  double time_limit = 0.0;  // seconds; <= 0 means none
  int threads = 1;
  bool verbose = false;  // solver log to stderr
  bool cbc_preprocess = true;   // CBC: CglPreProcess before branch and bound
  // CBC's verdict on a MILP is checked by a re-solve without preprocessing (CBC 2.10.8's preprocessing declares
  // some feasible MILPs infeasible and cuts the optimum off others): "infeasible" / "unbounded" by two of three
  // with GLPK, "optimal" by the better of the two points that satisfy the model (GLPK when neither does).
  bool confirm_verdicts = true;
  // A nonconvex quadratic model's local optimum is then checked by spatial branch and bound (global_qp.hpp)
  // with this many nodes at most; proven global, it is Optimal. 0: no global search (LocalOptimal stays).
  int global_node_limit = 20000;
};

// One re-solve that checked a verdict.
struct VerdictCheck {
  std::string solver;  // "cbc_without_preprocessing" | "glpk"
  SolveStatus status = SolveStatus::Error;
};

struct SolveResult {
  SolveStatus status = SolveStatus::Error;
  double objective = 0.0;  // meaningful only when Optimal / LocalOptimal (includes the objective constant)
  std::vector<double> x;   // primal values when Optimal / LocalOptimal
  std::string message;     // why, for Unsupported / Error; how a verdict was overruled or disputed
  double seconds = 0.0;
  std::vector<VerdictCheck> checks;  // the confirmations of an infeasible / unbounded MILP verdict
  bool overruled = false;            // the first solve's verdict lost two to one
  std::string solver;                // who solved it: "cbc" (CLP/CBC), "glpk", "ipopt", "bonmin"
  bool quadratic = false;            // quadratic model: `convex` and `convexity` below apply
  bool convex = true;                // the convexity test's verdict (quadratic models)
  std::string convexity;             // why not convex (the first part that is not), empty when convex
  // What proves a quadratic model's optimum (or infeasibility): "convex" (a local optimum of a convex model),
  // "spatial_branch_and_bound" (global_qp.hpp); empty when nothing does (LocalOptimal) and for linear models.
  std::string proof;
};

// The result has a point: Optimal or LocalOptimal.
inline bool has_solution(const SolveResult& r) {
  return r.status == SolveStatus::Optimal || r.status == SolveStatus::LocalOptimal;
}

SolveResult solve(const Model& model, Backend backend, const SolveOptions& options = {});

const char* to_string(SolveStatus s);  // "optimal", "infeasible", "unbounded", "infeasible_or_unbounded", ...
                                       // "local_optimal"
const char* to_string(Backend b);      // "cbc", "glpk"
Backend parse_backend(const std::string& name);  // throws trex::Error on unknown names

}  // namespace trex::lp
