// Global optimality for nonconvex quadratic models: spatial branch and bound on McCormick relaxations.
// Every product x_i x_j (and square x_i^2) of the objective and the rows becomes a variable w bounded by its
// McCormick envelope (secant and tangents for a square) over the node's box; the relaxation is linear (a MILP
// when the model has integers) and solved by CLP / CBC. Its optimum bounds the model's from below (in the
// minimisation sense); a relaxation point that satisfies the model is an incumbent; nodes are split on the
// variable of the most violated product, at the relaxation's value (or the middle), best bound first. Boxes
// come from the variables' bounds, tightened at the root by LP bound tightening (min/max of each product
// variable over the root relaxation with the incumbent's cutoff); a product variable without finite bounds
// leaves the model without a certificate. The search is deterministic: a node limit, not the clock, ends it
// (the time limit only stops it early, and then nothing is proven). The point returned is polished: where the
// optimum is a vertex, its face is solved exactly as an LP.
#pragma once
#include <string>
#include <vector>

#include "lp/model.hpp"

namespace trex::lp {

struct GlobalOptions {
  int node_limit = 20000;
  double time_limit = 0.0;  // seconds; <= 0: none
  // proven when incumbent - bound <= max(abs_gap, rel_gap * |incumbent|) (minimisation sense). Tighter gaps
  // are not reachable: the LP relaxations' own tolerance (CLP's primal tolerance 1e-7 on the scaled rows) moves
  // their bound by ~1e-8 relative (B4O 374: 3.2e-6 at 235.4).
  double rel_gap = 1e-6;
  double abs_gap = 1e-6;
  // a point counts when no row misses its side by more than this times max(1, |rhs|) (and no bound by this
  // times max(1, |x|)): an interior-point answer's near-vertex (Ipopt stops within its own tolerances) does not,
  // the relaxations' vertices do
  double feasibility_tol = 1e-9;
};

struct GlobalResult {
  bool proven = false;      // the point is optimal within the gap (or, with no point, the model is infeasible)
  bool infeasible = false;  // proven infeasible: every relaxation infeasible and no point known
  std::vector<double> x;    // the best point known (empty: none)
  double objective = 0.0;   // its objective, as the model writes it (sense and constant)
  double bound = 0.0;       // the proven bound on the optimum, in the model's sense
  int nodes = 0;
  std::string message;      // how it ended
};

// `start`: a point to begin with (a local solver's optimum), or nullptr. It counts only if it satisfies the model.
GlobalResult global_branch_and_bound(const Model& model, const std::vector<double>* start, const GlobalOptions& options);

}  // namespace trex::lp
