// Convexity of a quadratic model, decided from the Hessians of its quadratic parts: the objective's must be
// positive semidefinite for a minimisation (negative semidefinite for a maximisation), a `<=` row's PSD, a
// `>=` row's NSD; an `=` or range row with quadratic terms is never convex. Each Hessian is tested on the
// variables its terms touch, by LAPACK's symmetric eigenvalues (dsyev, OpenBLAS). When the model is convex a
// local optimum found by Ipopt / Bonmin is the global one ("proven"); otherwise it is only "local".
#pragma once
#include <string>
#include <vector>

#include "lp/model.hpp"

namespace trex::lp {

struct ConvexityVerdict {
  bool convex = true;
  std::string reason;  // when not convex: the first part that is not, and why (names the row)
};

// Relative tolerance on the smallest (largest) eigenvalue against the largest magnitude: -1e-9 * max|λ| still
// counts as 0 (sums of squares written out, e.g. x^2 - 2xy + y^2, have an exact 0 the arithmetic blurs).
constexpr double kConvexityTolerance = 1e-9;

ConvexityVerdict check_convexity(const Model& model);

// The extreme eigenvalues of the symmetric matrix whose lower/upper entries come from `quad` (coef * xi * xj:
// Hessian 2*coef on the diagonal, coef off it). Empty quad gives {0, 0}. Exposed for tests.
struct EigenRange {
  double min = 0.0, max = 0.0;
};
EigenRange hessian_eigen_range(const std::vector<QuadTerm>& quad);

}  // namespace trex::lp
