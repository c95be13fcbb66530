// GLPK backend, an independent second opinion next to CLP/CBC: glp_simplex (with the LP presolver) for
// LPs, glp_intopt (MIP presolver, MIR cuts, cover cuts OFF) for MILPs.
//
// GLPK reports internal errors (bad arguments, failed assertions, e.g. the cover-cut bug that hits
// `glp_add_cols: ncs = 0`) by calling abort(). An error hook longjmps out instead, then glp_free_env()
// discards the broken environment, so GLPK can never kill the process. Because of the longjmp, the
// guarded function below holds only plain data: every C++ container is built before it runs.
#include <algorithm>
#include <climits>
#include <csetjmp>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include <glpk.h>

#include "lp/solver_backends.hpp"
#include "util/timer.hpp"

namespace trex::lp::detail {
namespace {

// The model as plain arrays (1-based where GLPK wants it), owned by the caller.
struct GlpkInput {
  int n = 0, m = 0;
  int nnz = 0;
  const int* ia = nullptr;      // [1..nnz] row indices (1-based)
  const int* ja = nullptr;      // [1..nnz] column indices (1-based)
  const double* ar = nullptr;   // [1..nnz]
  const double* col_lb = nullptr;  // [0..n) with ±kInf
  const double* col_ub = nullptr;
  const unsigned char* col_int = nullptr;  // [0..n) 1 = integer
  const double* obj = nullptr;  // [0..n)
  const double* row_lo = nullptr;  // [0..m)
  const double* row_hi = nullptr;
  bool maximize = false;
  bool mip = false;
  bool zero_objective = false;  // feasibility check: same constraints, objective 0
  bool verbose = false;
  int node_limit = 0;          // > 0: stop branch and bound after this many nodes (feasibility check)
  bool provoke_error = false;  // test only: make GLPK fail internally after building the problem
  int tm_lim_ms = INT_MAX;
};

struct GlpkOutput {
  int ret = 0;          // glp_simplex / glp_intopt return code
  int status = 0;       // glp_get_status / glp_mip_status (when ret == 0)
  double* x = nullptr;  // caller-owned [0..n), filled when status is optimal
  bool crashed = false; // GLPK raised an internal error (caught by the hook)
  char log_tail[512] = {0};  // last GLPK output, for the error message
};

struct HookState {
  std::jmp_buf env;
  GlpkOutput* out;
  bool verbose;
};

// Keeps the tail of everything GLPK prints (its error text included) and forwards it to stderr when
// verbose; returning 1 stops GLPK from writing to stdout itself.
int term_hook(void* info, const char* s) {
  auto* hs = static_cast<HookState*>(info);
  if (hs->verbose) std::fputs(s, stderr);
  char* tail = hs->out->log_tail;
  const size_t cap = sizeof(hs->out->log_tail) - 1;
  size_t have = std::strlen(tail), add = std::strlen(s);
  if (add >= cap) {
    std::memcpy(tail, s + (add - cap), cap);
    tail[cap] = '\0';
  } else {
    if (have + add > cap) {
      const size_t drop = have + add - cap;
      std::memmove(tail, tail + drop, have - drop);
      have -= drop;
    }
    std::memcpy(tail + have, s, add + 1);
  }
  return 1;
}

// Branch-and-bound callback: enforces GlpkInput::node_limit (glp_intopt then returns GLP_ESTOP).
void node_limit_callback(glp_tree* tree, void* info) {
  if (glp_ios_reason(tree) != GLP_ISELECT) return;
  int active = 0, current = 0, total = 0;
  glp_ios_tree_size(tree, &active, &current, &total);
  if (total >= *static_cast<const int*>(info)) glp_ios_terminate(tree);
}

[[noreturn]] void error_hook(void* info) { std::longjmp(static_cast<HookState*>(info)->env, 1); }

void set_bounds(glp_prob* P, bool column, int k, double lo, double hi) {
  int type;
  if (lo == -kInf && hi == kInf) type = GLP_FR;
  else if (hi == kInf) type = GLP_LO;
  else if (lo == -kInf) type = GLP_UP;
  else if (lo == hi) type = GLP_FX;
  else type = GLP_DB;
  const double l = lo == -kInf ? 0.0 : lo, u = hi == kInf ? 0.0 : hi;
  if (column) glp_set_col_bnds(P, k, type, l, u);
  else glp_set_row_bnds(P, k, type, l, u);
}

// Runs GLPK on `in`. Only plain data lives in this frame and below (a GLPK error longjmps back here).
void run_glpk(const GlpkInput& in, GlpkOutput& out) {
  HookState hs;
  hs.out = &out;
  hs.verbose = in.verbose;
  glp_prob* volatile P = nullptr;
  if (setjmp(hs.env) != 0) {
    out.crashed = true;
    glp_error_hook(nullptr, nullptr);
    glp_term_hook(nullptr, nullptr);
    glp_free_env();  // the environment is unusable after an error; this also frees P
    return;
  }
  glp_term_hook(term_hook, &hs);
  glp_error_hook(error_hook, &hs);
  glp_term_out(in.verbose ? GLP_ON : GLP_OFF);

  P = glp_create_prob();
  glp_set_obj_dir(P, in.maximize ? GLP_MAX : GLP_MIN);
  if (in.m > 0) glp_add_rows(P, in.m);
  if (in.n > 0) glp_add_cols(P, in.n);
  for (int i = 0; i < in.m; ++i) set_bounds(P, false, i + 1, in.row_lo[i], in.row_hi[i]);
  for (int j = 0; j < in.n; ++j) {
    set_bounds(P, true, j + 1, in.col_lb[j], in.col_ub[j]);
    glp_set_obj_coef(P, j + 1, in.zero_objective ? 0.0 : in.obj[j]);
    if (in.mip && in.col_int[j]) glp_set_col_kind(P, j + 1, GLP_IV);
  }
  if (in.nnz > 0) glp_load_matrix(P, in.nnz, in.ia, in.ja, in.ar);
  if (in.provoke_error) glp_add_cols(P, 0);  // GLPK: "glp_add_cols: ncs = 0; invalid number of columns"

  glp_smcp smcp;
  glp_init_smcp(&smcp);
  smcp.msg_lev = in.verbose ? GLP_MSG_ON : GLP_MSG_OFF;
  smcp.presolve = GLP_ON;
  smcp.tm_lim = in.tm_lim_ms;
  if (!in.mip) {
    out.ret = glp_simplex(P, &smcp);
    if (out.ret == 0) {
      out.status = glp_get_status(P);
      if (out.status == GLP_OPT) {
        for (int j = 0; j < in.n; ++j) out.x[j] = glp_get_col_prim(P, j + 1);
      }
    }
  } else {
    glp_iocp iocp;
    glp_init_iocp(&iocp);
    iocp.msg_lev = in.verbose ? GLP_MSG_ON : GLP_MSG_OFF;
    iocp.presolve = GLP_ON;   // MIP presolver; it also solves the root relaxation
    iocp.cov_cuts = GLP_OFF;  // cover cuts abort() on some models (glp_add_cols: ncs = 0)
    iocp.mir_cuts = GLP_ON;   // fixed-charge models (model_44/45) need them: > 60 s without, ~1 s with
    // GLPK's default integrality tolerance (1e-5) takes a big-M indicator y = x / 1e6 ~ 2e-6 for 0 and
    // returns the relaxation's value (model_100/280/316/342 and twins); CBC uses 1e-6, we use 1e-7.
    iocp.tol_int = 1e-7;
    iocp.tm_lim = in.tm_lim_ms;
    if (in.zero_objective) iocp.mip_gap = 1.0;  // any integer point decides feasibility
    if (in.node_limit > 0) {
      iocp.cb_func = node_limit_callback;
      iocp.cb_info = const_cast<int*>(&in.node_limit);
    }
    out.ret = glp_intopt(P, &iocp);
    if (out.ret == 0 || out.ret == GLP_ETMLIM || out.ret == GLP_EMIPGAP) {
      out.status = glp_mip_status(P);
      if (out.status == GLP_OPT || out.status == GLP_FEAS) {
        for (int j = 0; j < in.n; ++j) out.x[j] = glp_mip_col_val(P, j + 1);
      }
    }
  }
  glp_delete_prob(P);
  glp_error_hook(nullptr, nullptr);
  glp_term_hook(nullptr, nullptr);
}

std::string crash_message(const GlpkOutput& out) {
  std::string tail = out.log_tail;
  while (!tail.empty() && (tail.back() == '\n' || tail.back() == ' ')) tail.pop_back();
  if (auto nl = tail.rfind('\n'); nl != std::string::npos && tail.size() - nl < 40) {
    // keep the error text, not only GLPK's "Error detected in file ..." trailer
    if (auto prev = tail.rfind('\n', nl - 1); prev != std::string::npos) tail = tail.substr(prev + 1);
  }
  return "GLPK internal error (caught, process not aborted): " + tail;
}

enum class Outcome { Optimal, Infeasible, DualInfeasible, TimeLimit, Error };

Outcome classify(const GlpkInput& in, const GlpkOutput& out) {
  if (out.crashed) return Outcome::Error;
  if (!in.mip) {
    switch (out.ret) {
      case 0:
        switch (out.status) {
          case GLP_OPT: return Outcome::Optimal;
          case GLP_NOFEAS: return Outcome::Infeasible;
          case GLP_UNBND: return Outcome::DualInfeasible;
          default: return Outcome::Error;
        }
      case GLP_ENOPFS: return Outcome::Infeasible;
      case GLP_ENODFS: return Outcome::DualInfeasible;
      case GLP_ETMLIM: return Outcome::TimeLimit;
      default: return Outcome::Error;
    }
  }
  switch (out.ret) {
    case 0:
      switch (out.status) {
        case GLP_OPT: return Outcome::Optimal;
        case GLP_NOFEAS: return Outcome::Infeasible;
        default: return Outcome::Error;
      }
    case GLP_ENOPFS: return Outcome::Infeasible;
    case GLP_ENODFS: return Outcome::DualInfeasible;
    case GLP_ETMLIM: return Outcome::TimeLimit;
    default: return Outcome::Error;
  }
}

}  // namespace

std::string glpk_provoke_internal_error() {
  GlpkInput in;
  in.provoke_error = true;
  GlpkOutput out;
  run_glpk(in, out);
  return out.crashed ? crash_message(out) : std::string();
}

SolveResult solve_glpk(const Model& model, const SolveOptions& options) {
  const Timer timer;
  const int n = model.num_vars(), m = model.num_rows();
  const RowMatrix rows = build_row_matrix(model);
  const int nnz = int(rows.index.size());
  std::vector<int> ia(size_t(nnz) + 1), ja(size_t(nnz) + 1);
  std::vector<double> ar(size_t(nnz) + 1);
  for (int i = 0, k = 0; i < m; ++i)
    for (int p = rows.start[size_t(i)]; p < rows.start[size_t(i) + 1]; ++p, ++k) {
      ia[size_t(k) + 1] = i + 1;
      ja[size_t(k) + 1] = rows.index[size_t(p)] + 1;
      ar[size_t(k) + 1] = rows.value[size_t(p)];
    }
  std::vector<double> col_lb(static_cast<size_t>(n)), col_ub(static_cast<size_t>(n));
  std::vector<double> row_lo(static_cast<size_t>(m)), row_hi(static_cast<size_t>(m));
  std::vector<unsigned char> col_int(size_t(n), 0);
  bool mip = false;
  for (int j = 0; j < n; ++j) {
    effective_bounds(model.vars[size_t(j)], col_lb[size_t(j)], col_ub[size_t(j)]);
    if (is_integral_type(model.vars[size_t(j)].type)) col_int[size_t(j)] = 1, mip = true;
  }
  for (int i = 0; i < m; ++i) row_bounds(model.rows[size_t(i)], row_lo[size_t(i)], row_hi[size_t(i)]);
  const std::vector<double> obj = model.objective_dense();
  std::vector<double> x(size_t(n), 0.0);

  GlpkInput in;
  in.n = n;
  in.m = m;
  in.nnz = nnz;
  in.ia = ia.data();
  in.ja = ja.data();
  in.ar = ar.data();
  in.col_lb = col_lb.data();
  in.col_ub = col_ub.data();
  in.col_int = col_int.data();
  in.obj = obj.data();
  in.row_lo = row_lo.data();
  in.row_hi = row_hi.data();
  in.maximize = model.objective.sense == ObjSense::Maximize;
  in.mip = mip;
  in.verbose = options.verbose;
  if (options.time_limit > 0.0)
    in.tm_lim_ms = int(std::min(double(INT_MAX), std::max(1.0, options.time_limit * 1000.0)));

  SolveResult r;
  GlpkOutput out;
  out.x = x.data();
  run_glpk(in, out);
  switch (classify(in, out)) {
    case Outcome::Optimal:
      r.status = SolveStatus::Optimal;
      r.x = std::move(x);
      return r;
    case Outcome::Infeasible: r.status = SolveStatus::Infeasible; return r;
    case Outcome::TimeLimit: r.status = SolveStatus::TimeLimit; return r;
    case Outcome::Error:
      r.status = SolveStatus::Error;
      r.message = out.crashed ? crash_message(out)
                              : "GLPK failed (return code " + std::to_string(out.ret) + ", status " +
                                    std::to_string(out.status) + ")";
      return r;
    case Outcome::DualInfeasible: break;
  }
  // No dual-feasible relaxation: unbounded if the constraints admit any (integer) point at all.
  GlpkOutput feas;
  feas.x = x.data();
  in.zero_objective = true;
  in.node_limit = kFeasibilityCheckNodes;  // see kFeasibilityCheckSeconds
  double budget = kFeasibilityCheckSeconds;
  if (options.time_limit > 0.0) {
    const double left = options.time_limit - timer.seconds();
    if (left <= 0.0) {
      r.status = SolveStatus::TimeLimit;
      r.message = "time limit reached before unboundedness could be told from infeasibility";
      return r;
    }
    budget = std::min(budget, left);
  }
  in.tm_lim_ms = int(std::max(1.0, budget * 1000.0));
  run_glpk(in, feas);
  const Outcome f = classify(in, feas);
  const bool found_point = !feas.crashed && (feas.status == GLP_OPT || feas.status == GLP_FEAS) &&
                           (feas.ret == 0 || feas.ret == GLP_EMIPGAP || feas.ret == GLP_ETMLIM);
  if (found_point) {
    r.status = SolveStatus::Unbounded;
  } else if (f == Outcome::Infeasible) {
    r.status = SolveStatus::Infeasible;
  } else {
    const bool user_limit = options.time_limit > 0.0 && timer.seconds() >= options.time_limit;
    r.status = user_limit ? SolveStatus::TimeLimit : SolveStatus::InfeasibleOrUnbounded;
    r.message = "the relaxation has no dual-feasible solution and the integer feasibility check did not finish";
  }
  return r;
}

}  // namespace trex::lp::detail
