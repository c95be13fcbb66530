// Internal interface between the solver dispatch (solver.cpp) and the two backends. The dispatch has
// already refused quadratic/SOS/semi-continuous models and checked the data (finite coefficients,
// variable indices in range, consistent bounds), so a backend only maps the IR and the statuses.
#pragma once
#include <vector>

#include "lp/solver.hpp"

namespace trex::lp::detail {

SolveResult solve_coin(const Model& model, const SolveOptions& options);  // CLP for LPs, CBC for MILPs
SolveResult solve_glpk(const Model& model, const SolveOptions& options);  // glp_simplex / glp_intopt

// Bounds a backend hands to its solver for variable j: binaries clipped to [0, 1], everything else as
// given (±kInf kept; each backend maps infinity to its own representation).
inline void effective_bounds(const Variable& v, double& lb, double& ub) {
  lb = v.lb;
  ub = v.ub;
  if (v.type == VarType::Binary) {
    if (lb < 0.0) lb = 0.0;
    if (ub > 1.0) ub = 1.0;
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
