// Instance verification with CBC and the degeneracy / duplicate signatures.
#include "ordata/verify.hpp"

#include <cmath>
#include <fmt/format.h>

#include "util/hash.hpp"

namespace trex::ordata {

double round_objective(double v) {
  double r = std::round(v * 1e6) / 1e6;
  return r == 0.0 ? 0.0 : r;
}

bool objectives_match(double a, double b) { return std::fabs(a - b) <= 1e-6 * std::max(1.0, std::fabs(b)); }

std::string degeneracy_reason(const lp::Model& model, const std::vector<double>& x) {
  const double tol = 1e-7;
  bool all_zero = true;
  for (double v : x) all_zero &= std::fabs(v) <= tol;
  if (all_zero) return "all_zero";
  // All at a bound. With 0/1 variables (which always sit at a bound) the test is that they are not all
  // equal (a trivial pattern); the continuous/integer variables of such models are then auxiliary (MTZ
  // orders, flows) and may sit at bounds. Without 0/1 variables: not every variable at one of its bounds.
  int non_binary = 0, at_bound = 0, ones = 0, binaries = 0;
  for (size_t j = 0; j < model.vars.size(); ++j) {
    const auto& v = model.vars[j];
    if (v.type == lp::VarType::Binary || (v.type == lp::VarType::Integer && v.lb == 0.0 && v.ub == 1.0)) {
      ++binaries;
      ones += x[j] > 0.5;
      continue;
    }
    ++non_binary;
    bool lb = std::isfinite(v.lb) && std::fabs(x[j] - v.lb) <= tol * std::max(1.0, std::fabs(v.lb));
    bool ub = std::isfinite(v.ub) && std::fabs(x[j] - v.ub) <= tol * std::max(1.0, std::fabs(v.ub));
    at_bound += lb || ub;
  }
  if (binaries > 0) {
    if (ones == 0 || ones == binaries) return "all_at_bound";
  } else if (non_binary > 0 && at_bound == non_binary) {
    return "all_at_bound";
  }
  for (const auto& r : model.rows) {
    if (r.sense == lp::RowSense::EQ) return "";
    double act = 0;
    for (const auto& t : r.terms) act += t.coef * x[size_t(t.var)];
    double slack_tol = 1e-6 * std::max(1.0, std::fabs(r.rhs));
    if (std::fabs(act - r.rhs) <= slack_tol) return "";
    if (r.sense == lp::RowSense::Range && std::fabs(act - r.range_upper) <= slack_tol) return "";
  }
  return "no_binding_row";
}

std::string slack_family_reason(const Instance& inst, const std::vector<double>& x) {
  for (const auto& fam : inst.constraints) {
    const std::string prefix = fam.name + "_";
    int rows = 0;
    bool binding = false;
    for (const auto& r : inst.model.rows) {
      if (r.name != fam.name && r.name.rfind(prefix, 0) != 0) continue;
      ++rows;
      if (r.sense == lp::RowSense::EQ) binding = true;
      double act = 0;
      for (const auto& t : r.terms) act += t.coef * x[size_t(t.var)];
      double slack_tol = 1e-6 * std::max(1.0, std::fabs(r.rhs));
      // A row over integer variables only is tight when its slack is below its smallest coefficient: no variable
      // can move by one unit into it (a budget of whole units priced at 600 rarely ends at exactly 0 left).
      bool integral = !r.terms.empty();
      double step = 1e300;
      for (const auto& t : r.terms) {
        integral &= inst.model.vars[size_t(t.var)].type != lp::VarType::Continuous;
        step = std::min(step, std::fabs(t.coef));
      }
      double tight = std::max(slack_tol, integral ? step - slack_tol : 0.0);
      binding |= std::fabs(act - r.rhs) < tight || (r.sense == lp::RowSense::Range && std::fabs(act - r.range_upper) < tight) ||
                 std::fabs(act - r.rhs) <= slack_tol;
      if (binding) break;
    }
    if (rows > 0 && !binding) return "slack_constraint_family";
  }
  return "";
}

Verification verify_instance(const Instance& inst, double time_limit) {
  Verification v;
  lp::SolveOptions opt;
  opt.time_limit = time_limit;
  opt.threads = 1;
  lp::SolveResult r = lp::solve(inst.model, lp::Backend::Cbc, opt);
  v.status = r.status;
  v.seconds = r.seconds;
  if (r.status != lp::SolveStatus::Optimal) {
    switch (r.status) {
      case lp::SolveStatus::Infeasible: v.reject_reason = "infeasible"; break;
      case lp::SolveStatus::Unbounded:
      case lp::SolveStatus::InfeasibleOrUnbounded: v.reject_reason = "unbounded"; break;
      case lp::SolveStatus::TimeLimit: v.reject_reason = "time_limit"; break;
      default: v.reject_reason = "solver_error"; break;
    }
    return v;
  }
  v.objective = round_objective(r.objective);
  v.x = std::move(r.x);
  v.reject_reason = degeneracy_reason(inst.model, v.x);
  v.accepted = v.reject_reason.empty();
  return v;
}

std::string parameter_signature(const Instance& inst) {
  std::string s = fmt::format("{}|{}|", to_string(inst.structure), inst.variant);
  for (const auto& p : inst.params) {
    s += p.key + ":";
    for (double v : p.values) s += fmt::format("{:.9g},", v);
  }
  return md5_hex(s);
}

std::string solution_signature(const Instance& inst, const Verification& v) {
  std::string s = fmt::format("{}|{:.6f}|", to_string(inst.structure), v.objective);
  for (double x : v.x) s += fmt::format("{:.6f},", std::round(x * 1e6) / 1e6 + 0.0);
  return md5_hex(s);
}

}  // namespace trex::ordata
