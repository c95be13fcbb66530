// Bonmin backend for mixed-integer quadratic models: the NlpProblem behind Bonmin's TMINLP, solved by Bonmin's
// NLP-based branch and bound (B-BB, Ipopt at every node), which is exact for convex models and a heuristic
// (its optimum only local) for nonconvex ones. Silent: the journalist's console journal is removed, Ipopt's log
// goes to stderr only when verbose, and Bonmin's own B&B log (COIN writes it to stdout) is never on. Reads no
// bonmin.opt / ipopt.opt, deterministic; the time limit is Bonmin's time_limit (CPU seconds, as CBC counts them).
#include <mutex>
#include <string>
#include <vector>

#include <fmt/format.h>

#include <BonBonminSetup.hpp>
#include <BonCbc.hpp>
#include <BonTMINLP.hpp>
#include <CoinError.hpp>

#include "lp/nlp_callbacks.hpp"
#include "lp/nlp_problem.hpp"
#include "lp/solver_backends.hpp"

namespace trex::lp::detail {
namespace {

using Ipopt::Index;
using Ipopt::Number;

class BonminAdapter : public NlpCallbacks<Bonmin::TMINLP> {
 public:
  explicit BonminAdapter(const NlpProblem& p) : NlpCallbacks(p) {}

  // Binaries are integers in [0, 1] (their bounds are already clipped), so a fixed binary is no special case.
  bool get_variables_types(Index n, VariableType* t) override {
    for (Index j = 0; j < n; ++j) t[j] = p_.is_integer(j) ? INTEGER : CONTINUOUS;
    return true;
  }
  void finalize_solution(Bonmin::TMINLP::SolverReturn status, Index n, const Number* x, Number) override {
    final_status = status;
    if (x != nullptr) solution.assign(x, x + n);
  }
  const BranchingInfo* branchingInfo() const override { return nullptr; }
  const SosInfo* sosConstraints() const override { return nullptr; }

  Bonmin::TMINLP::SolverReturn final_status = Bonmin::TMINLP::MINLP_ERROR;
  std::vector<double> solution;
};

}  // namespace

SolveResult solve_bonmin(const Model& model, const SolveOptions& options, bool convex) {
  SolveResult out;
  out.solver = "bonmin";
  const NlpProblem problem(model);
  std::lock_guard<std::mutex> one_at_a_time(nlp_solver_mutex());
  Ipopt::SmartPtr<BonminAdapter> minlp = new BonminAdapter(problem);
  try {
    Bonmin::BonminSetup setup;
    setup.initializeOptionsAndJournalist();
    setup.journalist()->DeleteAllJournals();  // no console output
    if (options.verbose) setup.journalist()->AddFileJournal("trex_stderr", "stderr", Ipopt::J_ITERSUMMARY);
    setup.readOptionsString("");  // options come from here only: never ./bonmin.opt
    auto& o = *setup.options();
    o.SetStringValue("bonmin.algorithm", "B-BB");
    // Bonmin's own B&B / NLP logs go through COIN message handlers to stdout: always off (verbose shows Ipopt's
    // journal on stderr only)
    o.SetIntegerValue("bonmin.bb_log_level", 0);
    o.SetIntegerValue("bonmin.nlp_log_level", 0);
    o.SetIntegerValue("bonmin.lp_log_level", 0);
    o.SetIntegerValue("print_level", options.verbose ? 5 : 0);
    o.SetStringValue("sb", "yes");
    if (options.time_limit > 0.0) o.SetNumericValue("bonmin.time_limit", options.time_limit);
    setup.initialize(Ipopt::GetRawPtr(minlp));
    Bonmin::Bab bb;
    bb(setup);
    const bool have_point = bb.bestSolution() != nullptr;
    switch (bb.mipStatus()) {
      case Bonmin::Bab::FeasibleOptimal:
        if (!have_point) break;
        out.status = convex ? SolveStatus::Optimal : SolveStatus::LocalOptimal;
        out.x.assign(bb.bestSolution(), bb.bestSolution() + problem.n());
        return out;
      case Bonmin::Bab::ProvenInfeasible:
        out.status = SolveStatus::Infeasible;
        if (!convex) out.message = "Bonmin found no feasible point (nonconvex model: not proven)";
        return out;
      case Bonmin::Bab::UnboundedOrInfeasible:
        out.status = SolveStatus::InfeasibleOrUnbounded;
        return out;
      case Bonmin::Bab::Feasible:  // a limit ended the search with an incumbent
      case Bonmin::Bab::NoSolutionKnown:
        if (options.time_limit <= 0.0) break;
        out.status = SolveStatus::TimeLimit;
        out.message = have_point ? "Bonmin stopped at the time limit with an incumbent (not returned)"
                                 : "Bonmin stopped at the time limit without a solution";
        return out;
      default: break;
    }
    out.status = SolveStatus::Error;
    out.message = fmt::format("Bonmin ended with status {}", int(bb.mipStatus()));
  } catch (const CoinError& e) {
    out.status = SolveStatus::Error;
    out.message = fmt::format("Bonmin: {}::{}: {}", e.className(), e.methodName(), e.message());
  }
  return out;
}

}  // namespace trex::lp::detail
