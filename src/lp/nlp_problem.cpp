// NlpProblem (nlp_problem.hpp): sparsity from the IR, evaluation of the quadratic functions.
#include "lp/nlp_problem.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <utility>

#include "lp/solver_backends.hpp"

namespace trex::lp::detail {

std::mutex& nlp_solver_mutex() {
  static std::mutex m;
  return m;
}

NlpProblem::NlpProblem(const Model& model) {
  n_ = model.num_vars();
  m_ = model.num_rows();
  sign_ = model.objective.sense == ObjSense::Maximize ? -1.0 : 1.0;
  c0_ = sign_ * model.objective.constant;
  c_.assign(size_t(n_), 0.0);
  for (const Term& t : model.objective.terms) c_[size_t(t.var)] += sign_ * t.coef;
  in_quad_.assign(size_t(n_), false);
  integer_.assign(size_t(n_), false);
  x_lo_.resize(size_t(n_));
  x_hi_.resize(size_t(n_));
  for (int j = 0; j < n_; ++j) {
    const Variable& v = model.vars[size_t(j)];
    double lb, ub;
    effective_bounds(v, lb, ub);
    x_lo_[size_t(j)] = std::isfinite(lb) ? lb : -kNlpInf;
    x_hi_[size_t(j)] = std::isfinite(ub) ? ub : kNlpInf;
    integer_[size_t(j)] = is_integral_type(v.type);
  }

  // Hessian slots: one per (max, min) pair over the objective and every row, in first-seen order.
  std::map<std::pair<int, int>, int> hess_index;
  auto hess_slot = [&](int a, int b) {
    const std::pair<int, int> key{std::max(a, b), std::min(a, b)};
    auto [it, fresh] = hess_index.emplace(key, int(hess_row_.size()));
    if (fresh) {
      hess_row_.push_back(key.first);
      hess_col_.push_back(key.second);
    }
    return it->second;
  };
  for (const QuadTerm& q : model.objective.quad) {
    obj_.quad.push_back({q.var1, q.var2, sign_ * q.coef});
    obj_.hess_slot.push_back(hess_slot(q.var1, q.var2));
    in_quad_[size_t(q.var1)] = in_quad_[size_t(q.var2)] = true;
  }

  // Jacobian: per row, one slot per distinct variable (linear or quadratic), in first-mention order.
  rows_.resize(size_t(m_));
  g_lo_.resize(size_t(m_));
  g_hi_.resize(size_t(m_));
  std::vector<int> slot(size_t(n_), -1);
  for (int r = 0; r < m_; ++r) {
    const Row& row = model.rows[size_t(r)];
    Part& p = rows_[size_t(r)];
    p.lin = row.terms;
    p.quad = row.quad;
    std::vector<int> touched;
    auto jac_slot = [&](int v) {
      if (slot[size_t(v)] < 0) {
        slot[size_t(v)] = int(jac_row_.size());
        jac_row_.push_back(r);
        jac_col_.push_back(v);
        touched.push_back(v);
      }
      return slot[size_t(v)];
    };
    for (const Term& t : p.lin) p.lin_slot.push_back(jac_slot(t.var));
    for (const QuadTerm& q : p.quad) {
      p.quad_slot1.push_back(jac_slot(q.var1));
      p.quad_slot2.push_back(jac_slot(q.var2));
      p.hess_slot.push_back(hess_slot(q.var1, q.var2));
      in_quad_[size_t(q.var1)] = in_quad_[size_t(q.var2)] = true;
    }
    for (int v : touched) slot[size_t(v)] = -1;
    double lo, hi;
    row_bounds(row, lo, hi);
    g_lo_[size_t(r)] = std::isfinite(lo) ? lo : -kNlpInf;
    g_hi_[size_t(r)] = std::isfinite(hi) ? hi : kNlpInf;
  }
}

void NlpProblem::bounds(double* x_lo, double* x_hi, double* g_lo, double* g_hi) const {
  std::copy(x_lo_.begin(), x_lo_.end(), x_lo);
  std::copy(x_hi_.begin(), x_hi_.end(), x_hi);
  std::copy(g_lo_.begin(), g_lo_.end(), g_lo);
  std::copy(g_hi_.begin(), g_hi_.end(), g_hi);
}

void NlpProblem::start(double* x) const {
  for (int j = 0; j < n_; ++j) x[j] = std::clamp(0.0, x_lo_[size_t(j)], x_hi_[size_t(j)]);
}

double NlpProblem::f(const double* x) const {
  double z = c0_;
  for (int j = 0; j < n_; ++j) z += c_[size_t(j)] * x[j];
  for (const QuadTerm& q : obj_.quad) z += q.coef * x[q.var1] * x[q.var2];
  return z;
}

void NlpProblem::grad_f(const double* x, double* g) const {
  std::copy(c_.begin(), c_.end(), g);
  for (const QuadTerm& q : obj_.quad) {
    g[q.var1] += q.coef * x[q.var2];
    g[q.var2] += q.coef * x[q.var1];
  }
}

void NlpProblem::g(const double* x, double* out) const {
  for (int r = 0; r < m_; ++r) {
    const Part& p = rows_[size_t(r)];
    double s = 0.0;
    for (const Term& t : p.lin) s += t.coef * x[t.var];
    for (const QuadTerm& q : p.quad) s += q.coef * x[q.var1] * x[q.var2];
    out[r] = s;
  }
}

void NlpProblem::jac_structure(int* row, int* col) const {
  std::copy(jac_row_.begin(), jac_row_.end(), row);
  std::copy(jac_col_.begin(), jac_col_.end(), col);
}

void NlpProblem::jac_values(const double* x, double* values) const {
  std::fill(values, values + jac_row_.size(), 0.0);
  for (const Part& p : rows_) {
    for (size_t k = 0; k < p.lin.size(); ++k) values[p.lin_slot[k]] += p.lin[k].coef;
    for (size_t k = 0; k < p.quad.size(); ++k) {
      const QuadTerm& q = p.quad[k];
      values[p.quad_slot1[k]] += q.coef * x[q.var2];  // for a square both add: 2 coef x
      values[p.quad_slot2[k]] += q.coef * x[q.var1];
    }
  }
}

void NlpProblem::hess_structure(int* row, int* col) const {
  std::copy(hess_row_.begin(), hess_row_.end(), row);
  std::copy(hess_col_.begin(), hess_col_.end(), col);
}

void NlpProblem::hess_values(double obj_factor, const double* lambda, double* values) const {
  std::fill(values, values + hess_row_.size(), 0.0);
  // d2/dxi dxj of coef*xi*xj is coef (lower triangle entry); of coef*xi^2 it is 2 coef.
  auto add = [&](const Part& p, double factor) {
    for (size_t k = 0; k < p.quad.size(); ++k) {
      const QuadTerm& q = p.quad[k];
      values[p.hess_slot[k]] += factor * (q.var1 == q.var2 ? 2.0 * q.coef : q.coef);
    }
  };
  add(obj_, obj_factor);
  if (lambda != nullptr)
    for (int r = 0; r < m_; ++r) add(rows_[size_t(r)], lambda[r]);
}

}  // namespace trex::lp::detail
