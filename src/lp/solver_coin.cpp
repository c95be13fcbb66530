// COIN-OR backend: CLP (dual simplex with presolve) for pure LPs, CBC branch-and-cut for MILPs. The
// matrix is built directly from the IR (no LP-file round trip, so no CoinLpIO epsilon drops a
// coefficient). The solver always minimizes: a Maximize objective is negated here. The objective value
// is computed by solve() from the returned point, constant included.
//
// Unbounded vs infeasible: a relaxation without a dual-feasible solution means "unbounded or
// infeasible"; it is decided by solving the same constraints with a zero objective (feasible ->
// unbounded, for a MILP too since the data are rational; infeasible -> infeasible). Only when that
// check itself cannot finish does the result stay infeasible_or_unbounded.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <vector>

#include <memory>

#include <coin/CbcModel.hpp>
#include <coin/CbcStrategy.hpp>
#include <coin/CglPreProcess.hpp>
#include <coin/ClpSimplex.hpp>
#include <coin/ClpSolve.hpp>
#include <coin/CoinFinite.hpp>
#include <coin/CoinPackedMatrix.hpp>
#include <coin/OsiClpSolverInterface.hpp>

#include "lp/solver_backends.hpp"

namespace trex::lp::detail {
namespace {

using Clock = std::chrono::steady_clock;

// Remaining seconds of the caller's time limit (or a huge number when there is none).
struct Deadline {
  bool limited = false;
  Clock::time_point end;
  explicit Deadline(double seconds) : limited(seconds > 0.0) {
    if (limited) end = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
  }
  double left() const {
    if (!limited) return 1e30;
    return std::max(0.0, std::chrono::duration<double>(end - Clock::now()).count());
  }
  bool expired() const { return limited && Clock::now() >= end; }
};

double to_coin(double v) {
  if (v == kInf) return COIN_DBL_MAX;
  if (v == -kInf) return -COIN_DBL_MAX;
  return v;
}

// The model in COIN's arrays, minimization form.
struct CoinArrays {
  CoinPackedMatrix matrix;  // row-ordered
  std::vector<double> col_lb, col_ub, obj, row_lo, row_hi;
  std::vector<int> integers;
  double sign = 1.0;  // -1 when the IR maximizes
};

CoinArrays build_arrays(const Model& model) {
  CoinArrays a;
  const int n = model.num_vars(), m = model.num_rows();
  a.sign = model.objective.sense == ObjSense::Maximize ? -1.0 : 1.0;
  a.col_lb.resize(size_t(n));
  a.col_ub.resize(size_t(n));
  for (int j = 0; j < n; ++j) {
    double lb, ub;
    effective_bounds(model.vars[size_t(j)], lb, ub);
    a.col_lb[size_t(j)] = to_coin(lb);
    a.col_ub[size_t(j)] = to_coin(ub);
    if (is_integral_type(model.vars[size_t(j)].type)) a.integers.push_back(j);
  }
  a.obj = model.objective_dense();
  for (double& c : a.obj) c *= a.sign;
  a.row_lo.resize(size_t(m));
  a.row_hi.resize(size_t(m));
  for (int i = 0; i < m; ++i) {
    double lo, hi;
    row_bounds(model.rows[size_t(i)], lo, hi);
    a.row_lo[size_t(i)] = to_coin(lo);
    a.row_hi[size_t(i)] = to_coin(hi);
  }
  RowMatrix rows = build_row_matrix(model);
  std::vector<int> lengths(static_cast<size_t>(m));
  for (int i = 0; i < m; ++i) lengths[size_t(i)] = rows.start[size_t(i) + 1] - rows.start[size_t(i)];
  // Row-ordered: major dimension = rows, minor = columns. No tolerance is applied by this constructor.
  std::vector<CoinBigIndex> starts(rows.start.begin(), rows.start.end());
  a.matrix = CoinPackedMatrix(false, n, m, CoinBigIndex(rows.index.size()), rows.value.data(), rows.index.data(),
                              starts.data(), lengths.data());
  return a;
}

void load(OsiClpSolverInterface& si, const CoinArrays& a, bool with_objective) {
  std::vector<double> zero;
  if (!with_objective) zero.assign(a.obj.size(), 0.0);
  si.loadProblem(a.matrix, a.col_lb.data(), a.col_ub.data(), with_objective ? a.obj.data() : zero.data(),
                 a.row_lo.data(), a.row_hi.data());
  for (int j : a.integers) si.setInteger(j);
}

void quiet(OsiClpSolverInterface& si, bool verbose) {
  si.messageHandler()->setLogLevel(verbose ? 1 : 0);
  si.getModelPtr()->messageHandler()->setLogLevel(verbose ? 1 : 0);
}

// Solves the LP in `si` with CLP: dual simplex after presolve. Returns CLP's status (0 optimal,
// 1 primal infeasible, 2 dual infeasible, 3 stopped on a limit, 4 numerical trouble).
int clp_solve(OsiClpSolverInterface& si, const Deadline& deadline) {
  ClpSimplex* clp = si.getModelPtr();
  if (deadline.limited) clp->setMaximumWallSeconds(deadline.left());
  ClpSolve how;
  how.setSolveType(ClpSolve::useDual);
  how.setPresolveType(ClpSolve::presolveOn);
  clp->initialSolve(how);
  return clp->status();
}

// The root relaxation of a MILP, solved the way CBC expects to find it (OsiClp's initialSolve).
int root_solve(OsiClpSolverInterface& si, const Deadline& deadline) {
  if (deadline.limited) si.getModelPtr()->setMaximumWallSeconds(deadline.left());
  si.initialSolve();
  return si.getModelPtr()->status();
}

enum class Feasibility { Feasible, Infeasible, Unknown };

// Are the constraints (and integrality) satisfiable at all? Used to split "unbounded or infeasible".
Feasibility check_feasible(const CoinArrays& a, const SolveOptions& options, const Deadline& deadline) {
  OsiClpSolverInterface si;
  quiet(si, options.verbose);
  load(si, a, /*with_objective=*/false);
  int st = clp_solve(si, deadline);
  if (st == 1) return Feasibility::Infeasible;
  if (st != 0) return Feasibility::Unknown;
  if (a.integers.empty()) return Feasibility::Feasible;
  CbcModel cbc(si);
  cbc.setLogLevel(options.verbose ? 1 : 0);
  cbc.setUseElapsedTime(true);
  cbc.setMaximumSolutions(1);  // any integer point decides it
  cbc.setMaximumNodes(kFeasibilityCheckNodes);  // see kFeasibilityCheckSeconds
  cbc.setMaximumSeconds(std::min(kFeasibilityCheckSeconds, deadline.left()));
  CbcStrategyDefault strategy(1, 5, 0, 0);
  cbc.setStrategy(strategy);
  cbc.branchAndBound();
  if (cbc.bestSolution() != nullptr) return Feasibility::Feasible;
  if (cbc.isProvenInfeasible()) return Feasibility::Infeasible;
  return Feasibility::Unknown;
}

SolveStatus decide_unbounded(const CoinArrays& a, const SolveOptions& options, const Deadline& deadline,
                             std::string& message) {
  switch (check_feasible(a, options, deadline)) {
    case Feasibility::Feasible: return SolveStatus::Unbounded;
    case Feasibility::Infeasible: return SolveStatus::Infeasible;
    case Feasibility::Unknown: break;
  }
  message = "the relaxation has no dual-feasible solution and the integer feasibility check did not finish";
  return deadline.expired() ? SolveStatus::TimeLimit : SolveStatus::InfeasibleOrUnbounded;
}

SolveResult solve_lp(const CoinArrays& a, const Model& model, const SolveOptions& options, const Deadline& deadline) {
  SolveResult r;
  OsiClpSolverInterface si;
  quiet(si, options.verbose);
  load(si, a, true);
  const int st = clp_solve(si, deadline);
  ClpSimplex* clp = si.getModelPtr();
  switch (st) {
    case 0:
      r.status = SolveStatus::Optimal;
      r.x.assign(clp->primalColumnSolution(), clp->primalColumnSolution() + model.num_vars());
      break;
    case 1: r.status = SolveStatus::Infeasible; break;
    case 2: r.status = decide_unbounded(a, options, deadline, r.message); break;
    case 3:
      r.status = deadline.expired() ? SolveStatus::TimeLimit : SolveStatus::Error;
      if (r.status == SolveStatus::Error) r.message = "CLP stopped on an iteration limit";
      break;
    default:
      r.status = SolveStatus::Error;
      r.message = "CLP reported numerical difficulties (status " + std::to_string(st) + ")";
  }
  return r;
}

SolveResult solve_mip(const CoinArrays& a, const Model& model, const SolveOptions& options, const Deadline& deadline) {
  SolveResult r;
  OsiClpSolverInterface si;
  quiet(si, options.verbose);
  load(si, a, true);
  // The root relaxation first: an infeasible or unbounded relaxation decides the MILP's status class.
  const int st = root_solve(si, deadline);
  if (st == 1) {
    r.status = SolveStatus::Infeasible;
    return r;
  }
  if (st == 2) {
    r.status = decide_unbounded(a, options, deadline, r.message);
    return r;
  }
  if (st != 0) {
    r.status = deadline.expired() ? SolveStatus::TimeLimit : SolveStatus::Error;
    if (r.status == SolveStatus::Error) r.message = "CLP failed on the root relaxation (status " + std::to_string(st) + ")";
    return r;
  }

  // CglPreProcess by hand (CbcStrategyDefault's built-in preprocessing returned wrong optima, e.g.
  // the relaxation's value, on 20 of the 100 B4O-Feasible MILPs), then map the solution back. Without
  // preprocessing (the re-solve that checks an infeasible verdict) CBC works on the model itself.
  std::unique_ptr<CglPreProcess> process;
  OsiSolverInterface* work = &si;
  if (options.cbc_preprocess) {
    process = std::make_unique<CglPreProcess>();
    process->messageHandler()->setLogLevel(options.verbose ? 1 : 0);
    work = process->preProcess(si, false, 5);
    if (work == nullptr) {
      r.status = SolveStatus::Infeasible;
      r.message = "CBC's preprocessing found the model infeasible";
      return r;
    }
    work->messageHandler()->setLogLevel(options.verbose ? 1 : 0);
    work->resolve();
  }

  CbcModel cbc(*work);
  cbc.setLogLevel(options.verbose ? 1 : 0);
  cbc.messageHandler()->setLogLevel(options.verbose ? 1 : 0);
  cbc.setUseElapsedTime(true);
  if (deadline.limited) cbc.setMaximumSeconds(deadline.left());
  if (options.threads > 1) cbc.setNumberThreads(options.threads);
  // Prove optimality exactly: no relative gap.
  cbc.setAllowableFractionGap(0.0);
  cbc.setAllowableGap(1e-10);
  // Cuts at the root, 5 strong-branching candidates, pseudo-costs trusted at once: on the slow
  // references this takes model_132/133 from 2-3 s (and the CLI's 2.5-25 s) to under 1 s CPU.
  CbcStrategyDefault strategy(/*cutsOnlyAtRoot=*/1, /*numberStrong=*/5, /*numberBeforeTrust=*/0, /*printLevel=*/0);
  strategy.setupPreProcessing(0);  // never the strategy's own preprocessing (above)
  cbc.setStrategy(strategy);
  cbc.branchAndBound();

  if (cbc.isProvenOptimal() && cbc.bestSolution() != nullptr) {
    r.status = SolveStatus::Optimal;
    if (process) {
      process->postProcess(*cbc.solver());  // writes the solution back into `si`, in the original columns
      r.x.assign(si.getColSolution(), si.getColSolution() + model.num_vars());
    } else {
      r.x.assign(cbc.bestSolution(), cbc.bestSolution() + model.num_vars());
    }
  } else if (cbc.isProvenInfeasible()) {
    r.status = SolveStatus::Infeasible;
  } else if (cbc.isContinuousUnbounded() || cbc.isProvenDualInfeasible()) {
    r.status = decide_unbounded(a, options, deadline, r.message);
  } else if (cbc.isSecondsLimitReached()) {
    r.status = SolveStatus::TimeLimit;
    r.message = cbc.bestSolution() != nullptr ? "time limit reached with a feasible, unproven solution"
                                              : "time limit reached without a feasible solution";
  } else {
    r.status = SolveStatus::Error;
    r.message = "CBC stopped without a proof (status " + std::to_string(cbc.status()) + ", secondary " +
                std::to_string(cbc.secondaryStatus()) + ")";
  }
  return r;
}

}  // namespace

SolveResult solve_coin(const Model& model, const SolveOptions& options) {
  const Deadline deadline(options.time_limit);
  const CoinArrays a = build_arrays(model);
  return a.integers.empty() ? solve_lp(a, model, options, deadline) : solve_mip(a, model, options, deadline);
}

}  // namespace trex::lp::detail
