// solve(): the one entry point to the backends. Refuses what no backend solves (SOS sets,
// semi-continuous/semi-integer variables) with Unsupported, checks the data, then hands a linear model to
// CLP/CBC or GLPK and a quadratic one, after the convexity test, to Ipopt or Bonmin. Also status/backend names.
#include <algorithm>
#include <cmath>
#include <exception>
#include <string>

#include <fmt/format.h>

#include "lp/convexity.hpp"
#include "lp/global_qp.hpp"
#include "lp/solver.hpp"
#include "lp/solver_backends.hpp"
#include "util/error.hpp"
#include "util/timer.hpp"

namespace trex::lp {
namespace detail {

RowMatrix build_row_matrix(const Model& model) {
  RowMatrix m;
  const int n = model.num_vars();
  m.start.reserve(size_t(model.num_rows()) + 1);
  m.index.reserve(size_t(model.num_nonzeros()));
  m.value.reserve(size_t(model.num_nonzeros()));
  std::vector<int> slot(size_t(n), -1);  // position of var in the current row, to merge duplicates
  m.start.push_back(0);
  for (const Row& r : model.rows) {
    const int row_begin = int(m.index.size());
    for (const Term& t : r.terms) {
      int& s = slot[size_t(t.var)];
      if (s >= row_begin) {
        m.value[size_t(s)] += t.coef;
      } else {
        s = int(m.index.size());
        m.index.push_back(t.var);
        m.value.push_back(t.coef);
      }
    }
    for (const Term& t : r.terms) slot[size_t(t.var)] = -1;  // positions move below; forget them
    // Leave out exact zeros (an explicit "0 x" or terms that cancelled); never a tolerance.
    int out = row_begin;
    for (int k = row_begin; k < int(m.index.size()); ++k) {
      if (m.value[size_t(k)] != 0.0) {
        m.index[size_t(out)] = m.index[size_t(k)];
        m.value[size_t(out)] = m.value[size_t(k)];
        ++out;
      }
    }
    m.index.resize(size_t(out));
    m.value.resize(size_t(out));
    m.start.push_back(out);
  }
  return m;
}

}  // namespace detail

namespace {

// Returns a non-empty message when no backend can be given the model.
std::string unsupported_reason(const Model& model) {
  if (!model.sos.empty())
    return fmt::format("{} SOS set(s) (first '{}'): not supported by the solver backends",
                       model.sos.size(), model.sos.front().name);
  for (const Variable& v : model.vars)
    if (v.type == VarType::SemiContinuous || v.type == VarType::SemiInteger)
      return fmt::format("{} variable '{}': not supported by the solver backends", to_string(v.type), v.name);
  return {};
}

// Data errors no solver should see (NaN, infinite coefficients, bad indices) -> Error; bounds that
// exclude every value -> Infeasible. Returns false and fills `out` when the model is decided here.
bool check_data(const Model& model, SolveResult& out) {
  const int n = model.num_vars();
  auto error = [&](std::string msg) {
    out.status = SolveStatus::Error;
    out.message = std::move(msg);
    return false;
  };
  auto check_terms = [&](const std::vector<Term>& terms, const std::string& where) -> bool {
    for (const Term& t : terms) {
      if (t.var < 0 || t.var >= n) return error(fmt::format("{}: variable index {} out of range", where, t.var));
      if (!std::isfinite(t.coef))
        return error(fmt::format("{}: coefficient {} of '{}' is not finite", where, t.coef,
                                 model.vars[size_t(t.var)].name));
    }
    return true;
  };
  auto check_quad = [&](const std::vector<QuadTerm>& quad, const std::string& where) -> bool {
    for (const QuadTerm& q : quad) {
      if (q.var1 < 0 || q.var1 >= n || q.var2 < 0 || q.var2 >= n)
        return error(fmt::format("{}: quadratic term's variable index out of range", where));
      if (!std::isfinite(q.coef))
        return error(fmt::format("{}: coefficient {} of '{} * {}' is not finite", where, q.coef,
                                 model.vars[size_t(q.var1)].name, model.vars[size_t(q.var2)].name));
    }
    return true;
  };
  if (!std::isfinite(model.objective.constant)) return error("objective constant is not finite");
  if (!check_terms(model.objective.terms, "objective")) return false;
  if (!check_quad(model.objective.quad, "objective")) return false;
  for (const Row& r : model.rows) {
    if (!check_terms(r.terms, fmt::format("row '{}'", r.name))) return false;
    if (!check_quad(r.quad, fmt::format("row '{}'", r.name))) return false;
    if (std::isnan(r.rhs) || (r.sense == RowSense::Range && std::isnan(r.range_upper)))
      return error(fmt::format("row '{}': right-hand side is NaN", r.name));
  }
  for (const Variable& v : model.vars)
    if (std::isnan(v.lb) || std::isnan(v.ub)) return error(fmt::format("variable '{}': NaN bound", v.name));

  // Empty domains: decided without a solver, identically for both backends.
  for (const Variable& v : model.vars) {
    double lb, ub;
    detail::effective_bounds(v, lb, ub);
    if (lb > ub || lb == kInf || ub == -kInf) {
      out.status = SolveStatus::Infeasible;
      out.message = fmt::format("variable '{}' has an empty domain [{}, {}]", v.name, lb, ub);
      return false;
    }
  }
  for (const Row& r : model.rows) {
    double lo, hi;
    detail::row_bounds(r, lo, hi);
    if (lo > hi || lo == kInf || hi == -kInf) {
      out.status = SolveStatus::Infeasible;
      out.message = fmt::format("row '{}' has an empty range [{}, {}]", r.name, lo, hi);
      return false;
    }
  }
  return true;
}

// The linear objective a point attains (sense as written, constant included).
double objective_at(const Model& model, const std::vector<double>& x) {
  double z = model.objective.constant;
  for (const Term& t : model.objective.terms) z += t.coef * x[size_t(t.var)];
  return z;
}

// The largest violation of the model's bounds, integrality and rows at `x`, each relative to max(1, |bound|).
double max_violation(const Model& model, const std::vector<double>& x) {
  double worst = 0.0;
  auto over = [&](double v, double bound) { worst = std::max(worst, v / std::max(1.0, std::fabs(bound))); };
  for (size_t j = 0; j < model.vars.size(); ++j) {
    double lb, ub;
    detail::effective_bounds(model.vars[j], lb, ub);
    if (x[j] < lb) over(lb - x[j], lb);
    if (x[j] > ub) over(x[j] - ub, ub);
    if (detail::is_integral_type(model.vars[j].type)) over(std::fabs(x[j] - std::round(x[j])), 1.0);
  }
  for (const Row& r : model.rows) {
    double lo, hi, a = 0.0;
    detail::row_bounds(r, lo, hi);
    for (const Term& t : r.terms) a += t.coef * x[size_t(t.var)];
    if (a < lo) over(lo - a, lo);
    if (a > hi) over(a - hi, hi);
  }
  return worst;
}

// CBC's verdict on a MILP is never its preprocessing's word alone (CBC 2.10.8's CglPreProcess declares some
// feasible MILPs infeasible, and cuts the optimum off others: an L1 fit with the textbook big-M abs rows came out
// "optimal" 20.5 against 19.4333). The MILP is solved again without preprocessing:
// - infeasible / unbounded: where the re-solve disagrees, GLPK decides (two of three);
// - optimal: where the two optima differ (beyond 1e-9 relative), the better of the points that satisfy the
//   model (bounds, integrality, rows within 1e-6) wins; GLPK is asked when neither does.
// The re-solves are recorded in result.checks; result.overruled says the first verdict lost. The re-solve of an
// optimum gets twice the first solve's time (at least 1 s; without preprocessing some MILPs take 5x longer, B4O
// model_266: 14 s against 2.9 s); one that runs out leaves the optimum standing, its check says time_limit.
void confirm_verdict(const Model& model, const SolveOptions& options, double first_seconds, SolveResult& result) {
  if (model.num_integer_vars() == 0 || !options.cbc_preprocess) return;
  const bool optimal = result.status == SolveStatus::Optimal;
  if (!optimal && result.status != SolveStatus::Infeasible && result.status != SolveStatus::Unbounded) return;
  SolveOptions plain = options;
  plain.cbc_preprocess = false;
  plain.confirm_verdicts = false;
  if (optimal) {
    const double budget = std::max(1.0, 2.0 * first_seconds);
    const double left = options.time_limit > 0.0 ? options.time_limit - first_seconds : budget;
    if (left <= 0.0) return;  // the caller's time is spent: nothing to confirm with
    plain.time_limit = std::min(budget, left);
  }
  SolveResult again = detail::solve_coin(model, plain);
  result.checks.push_back({"cbc_without_preprocessing", again.status});
  auto take = [&](SolveResult&& winner, const std::string& why) {
    auto checks = std::move(result.checks);
    result = std::move(winner);
    result.checks = std::move(checks);
    result.overruled = true;
    result.message = why;
  };
  if (optimal) {
    if (again.status != SolveStatus::Optimal) return;  // (a time limit or error of the re-solve decides nothing)
    const double z1 = objective_at(model, result.x), z2 = objective_at(model, again.x);
    if (std::fabs(z1 - z2) <= 1e-9 * std::max(1.0, std::fabs(z1))) return;
    const bool max = model.objective.sense == ObjSense::Maximize;
    const bool ok1 = max_violation(model, result.x) <= 1e-6, ok2 = max_violation(model, again.x) <= 1e-6;
    const bool second_better = max ? z2 > z1 : z2 < z1;
    if (ok2 && (second_better || !ok1)) {
      take(std::move(again), fmt::format("CBC with preprocessing said optimal {}; without it CBC found {} at a point "
                                         "that satisfies the model", z1, z2));
      return;
    }
    if (ok1) {
      result.message = fmt::format("CBC without preprocessing said optimal {}; the preprocessed optimum {} is better "
                                   "and satisfies the model", z2, z1);
      return;
    }
    SolveResult glpk = detail::solve_glpk(model, plain);
    result.checks.push_back({"glpk", glpk.status});
    if (glpk.status == SolveStatus::Optimal && max_violation(model, glpk.x) <= 1e-6)
      take(std::move(glpk), fmt::format("neither CBC optimum ({} with preprocessing, {} without) satisfies the model; "
                                        "GLPK's does", z1, z2));
    else
      result.message = fmt::format("disputed: CBC optima {} (with preprocessing) and {} (without) both violate the "
                                   "model; GLPK {}", z1, z2, to_string(glpk.status));
    return;
  }
  if (again.status == result.status) return;
  SolveResult glpk = detail::solve_glpk(model, plain);
  result.checks.push_back({"glpk", glpk.status});
  if (glpk.status == result.status) {
    result.message = fmt::format("CBC without preprocessing said {}; GLPK agrees with CBC's {}",
                                 to_string(again.status), to_string(result.status));
    return;
  }
  const std::string first = to_string(result.status);
  if (glpk.status == again.status) {
    take(std::move(again), fmt::format("CBC with preprocessing said {}; without it CBC and GLPK say {}", first,
                                       to_string(glpk.status)));  // its point, when optimal
    return;
  }
  result.message = fmt::format("disputed: CBC with preprocessing {}, without {}, GLPK {}", first,
                               to_string(again.status), to_string(glpk.status));
}

// A nonconvex model's local result, checked (and improved) by spatial branch and bound within the node limit
// and what is left of the time limit.
void prove_global(const Model& model, const SolveOptions& options, const Timer& timer, SolveResult& result) {
  // (an Ipopt error counts too: e.g. more equalities than variables, which Ipopt refuses outright)
  if (result.status != SolveStatus::LocalOptimal && result.status != SolveStatus::Infeasible &&
      result.status != SolveStatus::Error)
    return;
  GlobalOptions g;
  g.node_limit = options.global_node_limit;
  if (options.time_limit > 0.0) {
    g.time_limit = options.time_limit - timer.seconds();
    if (g.time_limit <= 0.0) return;
  }
  const GlobalResult gr = global_branch_and_bound(model, has_solution(result) ? &result.x : nullptr, g);
  const std::string local = result.message;
  if (gr.proven && gr.infeasible) {
    result.status = SolveStatus::Infeasible;
    result.x.clear();
    result.proof = "spatial_branch_and_bound";
  } else if (!gr.x.empty()) {
    // (a point of the search that only satisfies the model's rows is local too: nothing proves it)
    result.status = gr.proven ? SolveStatus::Optimal : SolveStatus::LocalOptimal;
    result.x = gr.x;  // the local optimum, or a better point the search found
    if (gr.proven) result.proof = "spatial_branch_and_bound";
  }
  result.message = local.empty() ? gr.message : local + "; " + gr.message;
}

}  // namespace

SolveResult solve(const Model& model, Backend backend, const SolveOptions& options) {
  Timer timer;
  SolveResult result;
  if (std::string why = unsupported_reason(model); !why.empty()) {
    result.status = SolveStatus::Unsupported;
    result.message = std::move(why);
  } else if (check_data(model, result)) {
    const bool quadratic = model.has_quadratic();
    const char* solver = quadratic ? (model.has_integers() ? "bonmin" : "ipopt") : to_string(backend);
    try {
      if (quadratic) {
        // Ipopt / Bonmin whatever the backend asked: the linear solvers cannot solve quadratic models.
        const ConvexityVerdict convexity = check_convexity(model);
        result = model.has_integers() ? detail::solve_bonmin(model, options, convexity.convex)
                                      : detail::solve_ipopt(model, options, convexity.convex);
        result.convex = convexity.convex;
        result.convexity = convexity.reason;
        if (convexity.convex && (has_solution(result) || result.status == SolveStatus::Infeasible))
          result.proof = "convex";
        if (!convexity.convex && options.global_node_limit > 0) prove_global(model, options, timer, result);
      } else {
        result = backend == Backend::Cbc ? detail::solve_coin(model, options) : detail::solve_glpk(model, options);
        if (backend == Backend::Cbc && options.confirm_verdicts) confirm_verdict(model, options, timer.seconds(), result);
      }
    } catch (const std::exception& e) {
      result = SolveResult{};
      result.status = SolveStatus::Error;
      result.message = fmt::format("{} backend failed: {}", solver, e.what());
    } catch (...) {  // COIN throws CoinError, which is not a std::exception
      result = SolveResult{};
      result.status = SolveStatus::Error;
      result.message = fmt::format("{} backend failed with an exception", solver);
    }
    result.solver = solver;
  }
  result.quadratic = model.has_quadratic();
  if (result.solver.empty())  // decided before any backend ran (unsupported, an empty domain, bad data)
    result.solver = model.has_quadratic() ? (model.has_integers() ? "bonmin" : "ipopt") : to_string(backend);
  if (has_solution(result)) {
    // The value the returned point attains in the IR's own objective (sense and constant as written).
    double z = model.objective.constant;
    for (const Term& t : model.objective.terms) z += t.coef * result.x[size_t(t.var)];
    for (const QuadTerm& q : model.objective.quad) z += q.coef * result.x[size_t(q.var1)] * result.x[size_t(q.var2)];
    result.objective = z;
  } else {
    result.objective = 0.0;
    result.x.clear();
  }
  result.seconds = timer.seconds();
  return result;
}

const char* to_string(SolveStatus s) {
  switch (s) {
    case SolveStatus::Optimal: return "optimal";
    case SolveStatus::Infeasible: return "infeasible";
    case SolveStatus::Unbounded: return "unbounded";
    case SolveStatus::InfeasibleOrUnbounded: return "infeasible_or_unbounded";
    case SolveStatus::TimeLimit: return "time_limit";
    case SolveStatus::Unsupported: return "unsupported";
    case SolveStatus::Error: return "error";
    case SolveStatus::LocalOptimal: return "local_optimal";
  }
  return "error";
}

const char* to_string(Backend b) { return b == Backend::Cbc ? "cbc" : "glpk"; }

Backend parse_backend(const std::string& name) {
  if (name == "cbc") return Backend::Cbc;
  if (name == "glpk") return Backend::Glpk;
  throw Error(fmt::format("unknown solver '{}' (expected cbc or glpk)", name));
}

}  // namespace trex::lp
