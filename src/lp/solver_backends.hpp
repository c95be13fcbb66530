// Internal interface between the solver dispatch (solver.cpp) and the backends. The dispatch has
// already refused SOS/semi-continuous models and checked the data (finite coefficients, variable indices
// in range, consistent bounds), so a backend only maps the IR and the statuses. Linear models go to
// CLP/CBC or GLPK, quadratic ones to Ipopt (continuous) or Bonmin (mixed integer).
#pragma once
#include <cmath>
#include <string>
#include <vector>

#include "lp/solver.hpp"

namespace trex::lp::detail {

SolveResult solve_coin(const Model& model, const SolveOptions& options);  // CLP for LPs, CBC for MILPs
SolveResult solve_glpk(const Model& model, const SolveOptions& options);  // glp_simplex / glp_intopt
// Quadratic models. `convex` (check_convexity) decides what a successful solve is: Optimal (proven) or
// LocalOptimal. Both print nothing unless options.verbose (then their log goes to stderr).
SolveResult solve_ipopt(const Model& model, const SolveOptions& options, bool convex);
SolveResult solve_bonmin(const Model& model, const SolveOptions& options, bool convex);

// Makes GLPK raise an internal error (glp_add_cols with 0 columns, the call the cover-cut bug makes)
// inside the same guard solve_glpk uses; returns the caught message. For the test that proves GLPK
// cannot abort the process.
std::string glpk_provoke_internal_error();

// Budget of the integer feasibility check that splits "infeasible or unbounded". Integer feasibility
// over an unbounded region need not end (2x - 2y = 1 in integers: CBC branches forever, GLPK loops at
// the root), so the check gets a node budget (CBC) and a time budget (both); past them the answer
// stays infeasible_or_unbounded. Models with an integer point find it at once (root heuristics).
constexpr int kFeasibilityCheckNodes = 500;
constexpr double kFeasibilityCheckSeconds = 2.0;

// Bounds a backend hands to its solver for a variable: binaries clipped to [0, 1]; integer bounds
// rounded inward (x >= -4.5 is x >= -4; GLPK refuses fractional bounds on integer columns), with 1e-9
// of slack so that 2.0000000001 still means 2; ±kInf kept (each backend maps it to its own infinity).
inline void effective_bounds(const Variable& v, double& lb, double& ub) {
  lb = v.lb;
  ub = v.ub;
  if (v.type == VarType::Binary) {
    if (lb < 0.0) lb = 0.0;
    if (ub > 1.0) ub = 1.0;
  }
  if (v.type == VarType::Binary || v.type == VarType::Integer) {
    if (std::isfinite(lb)) lb = std::ceil(lb - 1e-9);
    if (std::isfinite(ub)) ub = std::floor(ub + 1e-9);
  }
}

// Row activity bounds [lo, hi] for a row (±kInf for the open side).
inline void row_bounds(const Row& r, double& lo, double& hi) {
  lo = -kInf;
  hi = kInf;
  switch (r.sense) {
    case RowSense::LE: lo = -kInf; hi = r.rhs; break;
    case RowSense::GE: lo = r.rhs; hi = kInf; break;
    case RowSense::EQ: lo = hi = r.rhs; break;
    case RowSense::Range: lo = r.rhs; hi = r.range_upper; break;
  }
}

// The constraint matrix row by row (CSR) with duplicate (row, var) entries summed and exact zeros left
// out; nothing is dropped by a tolerance. Backends load it directly.
struct RowMatrix {
  std::vector<int> start;  // size rows + 1
  std::vector<int> index;
  std::vector<double> value;
};
RowMatrix build_row_matrix(const Model& model);

inline bool is_integral_type(VarType t) { return t == VarType::Integer || t == VarType::Binary; }

}  // namespace trex::lp::detail
