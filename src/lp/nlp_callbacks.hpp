// NlpCallbacks<Base>: the callbacks Ipopt's TNLP and Bonmin's TMINLP declare alike (sizes, bounds, start,
// linearity, f, g and their derivatives), each answered by the NlpProblem. The Ipopt and Bonmin adapters
// (solver_ipopt.cpp, solver_bonmin.cpp) derive from it and add only what their solver asks for on top.
// Include after the solver's own headers (IpTNLP.hpp or BonTMINLP.hpp).
#pragma once
#include "lp/nlp_problem.hpp"

namespace trex::lp::detail {

template <class Base>
class NlpCallbacks : public Base {
 public:
  using Index = Ipopt::Index;
  using Number = Ipopt::Number;
  explicit NlpCallbacks(const NlpProblem& p) : p_(p) {}

  bool get_nlp_info(Index& n, Index& m, Index& nnz_jac_g, Index& nnz_h_lag,
                    Ipopt::TNLP::IndexStyleEnum& style) override {
    n = p_.n();
    m = p_.m();
    nnz_jac_g = p_.nnz_jac();
    nnz_h_lag = p_.nnz_hess();
    style = Ipopt::TNLP::C_STYLE;
    return true;
  }
  bool get_variables_linearity(Index n, Ipopt::TNLP::LinearityType* t) override {
    for (Index j = 0; j < n; ++j) t[j] = p_.var_is_linear(j) ? Ipopt::TNLP::LINEAR : Ipopt::TNLP::NON_LINEAR;
    return true;
  }
  bool get_constraints_linearity(Index m, Ipopt::TNLP::LinearityType* t) override {
    for (Index r = 0; r < m; ++r) t[r] = p_.row_is_linear(r) ? Ipopt::TNLP::LINEAR : Ipopt::TNLP::NON_LINEAR;
    return true;
  }
  bool get_bounds_info(Index, Number* x_l, Number* x_u, Index, Number* g_l, Number* g_u) override {
    p_.bounds(x_l, x_u, g_l, g_u);
    return true;
  }
  bool get_starting_point(Index, bool init_x, Number* x, bool init_z, Number*, Number*, Index, bool init_lambda,
                          Number*) override {
    if (!init_x || init_z || init_lambda) return false;
    p_.start(x);
    return true;
  }
  bool eval_f(Index, const Number* x, bool, Number& v) override {
    v = p_.f(x);
    return true;
  }
  bool eval_grad_f(Index, const Number* x, bool, Number* g) override {
    p_.grad_f(x, g);
    return true;
  }
  bool eval_g(Index, const Number* x, bool, Index, Number* g) override {
    p_.g(x, g);
    return true;
  }
  bool eval_jac_g(Index, const Number* x, bool, Index, Index, Index* row, Index* col, Number* values) override {
    if (values == nullptr)
      p_.jac_structure(row, col);
    else
      p_.jac_values(x, values);
    return true;
  }
  bool eval_h(Index, const Number*, bool, Number obj_factor, Index, const Number* lambda, bool, Index, Index* row,
              Index* col, Number* values) override {
    if (values == nullptr)
      p_.hess_structure(row, col);
    else
      p_.hess_values(obj_factor, lambda, values);
    return true;
  }

 protected:
  const NlpProblem& p_;
};

}  // namespace trex::lp::detail
