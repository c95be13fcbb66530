// Solver verification of generated instances (report §7 step 04/04b): solve with CBC, keep only
// optimal, non-degenerate instances (not all-zero, not all at a bound (see degeneracy_reason), at
// least one binding row) and compute the parameter and solution signatures used to drop duplicates.
#pragma once
#include <string>
#include <vector>

#include "lp/solver.hpp"
#include "ordata/instance.hpp"

namespace trex::ordata {

struct Verification {
  bool accepted = false;
  std::string reject_reason;  // "infeasible", "unbounded", "not_optimal", "all_zero", "all_at_bound", "no_binding_row"
  lp::SolveStatus status = lp::SolveStatus::Error;
  double objective = 0.0;     // rounded to 1e-6 (the gold value)
  std::vector<double> x;
  double seconds = 0.0;
};

// Gold objective rounding: the nearest multiple of 1e-6 (removes solver noise such as 1233.9999999998).
double round_objective(double v);
bool objectives_match(double a, double b);  // |a - b| <= 1e-6 * max(1, |b|)

Verification verify_instance(const Instance& inst, double time_limit = 20.0);

// Reject reason for a solution of `model` (empty when the solution is acceptable).
std::string degeneracy_reason(const lp::Model& model, const std::vector<double>& x);
// "slack_constraint_family" when a constraint family of the instance (its rows: named `<family>` or
// `<family>_...`) has inequality rows only and none of them binds at x (within 1e-6, or, for a row over integer
// variables only, with a slack below its smallest coefficient); else "".
// Not a rejection: an inactive family (a diet's upper limits, a second budget) is a real restriction that happens
// not to bind, and rejecting it discarded 49-91 % of some families' draws; the manifest counts such samples per
// family (families.*.slack_family_samples) and the breadth test requires every family of every later generator to
// bind in some draw.
std::string slack_family_reason(const Instance& inst, const std::vector<double>& x);

// md5 over structure, variant and every parameter value; md5 over structure, gold objective and the
// solution vector rounded to 1e-6.
std::string parameter_signature(const Instance& inst);
std::string solution_signature(const Instance& inst, const Verification& v);

}  // namespace trex::ordata
