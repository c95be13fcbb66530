// A quadratic model as the smooth problem Ipopt (TNLP) and Bonmin (TMINLP) solve:
//   minimise f(x) = sign * (c'x + x'Qx + c0)   subject to   g_lo <= g(x) <= g_hi,   x_lo <= x <= x_hi
// with one g per row (linear plus quadratic part) and sign = -1 for a maximisation. Holds the sparsity of the
// Jacobian and of the Lagrangian's Hessian (lower triangle), and evaluates f, grad f, g, its Jacobian and the
// Hessian; both adapters (solver_ipopt.cpp, solver_bonmin.cpp) only forward to it.
#pragma once
#include <mutex>
#include <vector>

#include "lp/model.hpp"

namespace trex::lp::detail {

constexpr double kNlpInf = 1e19;  // Ipopt's default nlp_{lower,upper}_bound_inf

// Held for the whole of an Ipopt or Bonmin solve: Debian's Ipopt 3.11 drives the sequential MUMPS, whose MPI stub
// keeps global state, so two solves must not overlap (the eval fork server solves from several threads).
std::mutex& nlp_solver_mutex();

class NlpProblem {
 public:
  explicit NlpProblem(const Model& model);

  int n() const { return n_; }
  int m() const { return m_; }
  int nnz_jac() const { return int(jac_row_.size()); }
  int nnz_hess() const { return int(hess_row_.size()); }
  double sign() const { return sign_; }

  void bounds(double* x_lo, double* x_hi, double* g_lo, double* g_hi) const;
  // A start inside the bounds: 0 clipped into [lb, ub] (deterministic).
  void start(double* x) const;
  bool row_is_linear(int r) const { return rows_[size_t(r)].quad.empty(); }
  bool var_is_linear(int j) const { return !in_quad_[size_t(j)]; }
  bool is_integer(int j) const { return integer_[size_t(j)]; }

  double f(const double* x) const;
  void grad_f(const double* x, double* g) const;
  void g(const double* x, double* out) const;
  void jac_structure(int* row, int* col) const;
  void jac_values(const double* x, double* values) const;
  void hess_structure(int* row, int* col) const;
  void hess_values(double obj_factor, const double* lambda, double* values) const;

  // The model's own objective (sense as written, constant included) at x.
  double objective(const double* x) const { return sign_ * f(x); }

 private:
  struct Part {
    std::vector<Term> lin;
    std::vector<QuadTerm> quad;
    std::vector<int> lin_slot;              // Jacobian slot of each linear term
    std::vector<int> quad_slot1, quad_slot2;  // Jacobian slots of d/dvar1, d/dvar2 of each quadratic term
    std::vector<int> hess_slot;             // Hessian slot of each quadratic term
  };
  int n_ = 0, m_ = 0;
  double sign_ = 1.0;
  double c0_ = 0.0;
  std::vector<double> c_;  // dense, sign applied
  Part obj_;               // quad part of the objective (sign applied) with its Hessian slots
  std::vector<Part> rows_;
  std::vector<double> x_lo_, x_hi_, g_lo_, g_hi_;
  std::vector<bool> in_quad_, integer_;
  std::vector<int> jac_row_, jac_col_, hess_row_, hess_col_;
};

}  // namespace trex::lp::detail
