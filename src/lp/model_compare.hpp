// Exact comparison of two LP models: the first difference in names, types, bounds, objective
// (sense, name, terms, constant, quadratic terms), rows (name, terms, quadratic terms, sense, rhs,
// range) and SOS sets, in IR order. Doubles are compared bit for bit (so -0 differs from +0);
// used by the LP round-trip tests and reusable by other checks.
#pragma once
#include <string>

#include "lp/model.hpp"

namespace trex::lp {

// Empty when the models are identical; otherwise one line naming the first difference,
// e.g. "rows[3] 'c1': rhs 5 vs 5.000000000000001".
std::string first_difference(const Model& a, const Model& b);

}  // namespace trex::lp
