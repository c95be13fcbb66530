// check_convexity: the Hessian eigenvalue test of convexity.hpp (LAPACK dsyev from OpenBLAS).
#include "lp/convexity.hpp"

#include <algorithm>
#include <cmath>
#include <unordered_map>

#include <fmt/format.h>

#include "util/error.hpp"

extern "C" void dsyev_(const char* jobz, const char* uplo, const int* n, double* a, const int* lda, double* w,
                       double* work, const int* lwork, int* info);

namespace trex::lp {

EigenRange hessian_eigen_range(const std::vector<QuadTerm>& quad) {
  // Dense Hessian over the variables the terms touch (in first-mention order).
  std::unordered_map<int, int> local;
  std::vector<int> order;
  for (const QuadTerm& q : quad)
    for (int v : {q.var1, q.var2})
      if (local.emplace(v, int(order.size())).second) order.push_back(v);
  const int n = int(order.size());
  if (n == 0) return {};
  std::vector<double> h(size_t(n) * size_t(n), 0.0);  // column-major, symmetric
  for (const QuadTerm& q : quad) {
    const int i = local[q.var1], j = local[q.var2];
    if (i == j) {
      h[size_t(i) * size_t(n) + size_t(i)] += 2.0 * q.coef;
    } else {
      h[size_t(i) * size_t(n) + size_t(j)] += q.coef;
      h[size_t(j) * size_t(n) + size_t(i)] += q.coef;
    }
  }
  std::vector<double> w(static_cast<size_t>(n));
  int info = 0, lwork = -1;
  double query = 0.0;
  dsyev_("N", "L", &n, h.data(), &n, w.data(), &query, &lwork, &info);
  lwork = std::max(1, int(query));
  std::vector<double> work(static_cast<size_t>(lwork));
  dsyev_("N", "L", &n, h.data(), &n, w.data(), work.data(), &lwork, &info);
  if (info != 0) throw Error(fmt::format("convexity test: LAPACK dsyev failed (info {}) on a {}x{} Hessian", info, n, n));
  return {w.front(), w.back()};  // ascending
}

namespace {

// +1: needs PSD (convex), -1: needs NSD (concave). Returns an empty string when it holds.
std::string definiteness_failure(const std::vector<QuadTerm>& quad, int need) {
  const EigenRange e = hessian_eigen_range(quad);
  const double scale = std::max(std::abs(e.min), std::abs(e.max));
  const double tol = kConvexityTolerance * scale;
  if (need > 0 && e.min < -tol)
    return fmt::format("its Hessian has a negative eigenvalue ({:.6g}; largest {:.6g})", e.min, e.max);
  if (need < 0 && e.max > tol)
    return fmt::format("its Hessian has a positive eigenvalue ({:.6g}; smallest {:.6g})", e.max, e.min);
  return {};
}

bool all_zero(const std::vector<QuadTerm>& quad) {
  return std::all_of(quad.begin(), quad.end(), [](const QuadTerm& q) { return q.coef == 0.0; });
}

}  // namespace

ConvexityVerdict check_convexity(const Model& model) {
  ConvexityVerdict v;
  if (!model.objective.quad.empty()) {
    const bool minimize = model.objective.sense == ObjSense::Minimize;
    std::string why = definiteness_failure(model.objective.quad, minimize ? +1 : -1);
    if (!why.empty()) {
      v.convex = false;
      v.reason = fmt::format("the quadratic objective is not {} ({} it): {}", minimize ? "convex" : "concave",
                             minimize ? "minimising" : "maximising", why);
      return v;
    }
  }
  for (const Row& r : model.rows) {
    if (r.quad.empty() || all_zero(r.quad)) continue;
    if (r.sense == RowSense::EQ || r.sense == RowSense::Range) {
      v.convex = false;
      v.reason = fmt::format("row '{}' is a quadratic {}: its feasible set is not convex", r.name,
                             r.sense == RowSense::EQ ? "equality" : "range");
      return v;
    }
    const int need = r.sense == RowSense::LE ? +1 : -1;
    std::string why = definiteness_failure(r.quad, need);
    if (!why.empty()) {
      v.convex = false;
      v.reason = fmt::format("row '{}' ({} with quadratic terms) is not {}: {}", r.name, to_string(r.sense),
                             need > 0 ? "convex" : "concave", why);
      return v;
    }
  }
  return v;
}

}  // namespace trex::lp
