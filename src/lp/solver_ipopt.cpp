// Ipopt backend for continuous quadratic models (objective and/or rows): the NlpProblem behind Ipopt's TNLP,
// solved by the interior-point method with MUMPS. Silent (no console journal; the log goes to stderr only
// when verbose), reads no ipopt.opt, and is deterministic (one thread, the same start: 0 clipped into the
// bounds). The time limit is wall-clock, checked at every iteration by the intermediate callback (Ipopt 3.11's
// max_cpu_time counts the whole process's CPU, other threads' included).
#include <chrono>
#include <mutex>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include <IpIpoptApplication.hpp>
#include <IpTNLP.hpp>

#include "lp/nlp_callbacks.hpp"
#include "lp/nlp_problem.hpp"
#include "lp/solver_backends.hpp"

namespace trex::lp::detail {
namespace {

using Ipopt::Index;
using Ipopt::Number;

class IpoptAdapter : public NlpCallbacks<Ipopt::TNLP> {
 public:
  using Clock = std::chrono::steady_clock;
  IpoptAdapter(const NlpProblem& p, double time_limit) : NlpCallbacks(p), limited_(time_limit > 0.0) {
    if (limited_)
      deadline_ = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(time_limit));
  }
  bool intermediate_callback(Ipopt::AlgorithmMode, Index, Number, Number, Number, Number, Number, Number, Number,
                             Number, Index, const Ipopt::IpoptData*, Ipopt::IpoptCalculatedQuantities*) override {
    if (limited_ && Clock::now() >= deadline_) {
      timed_out = true;
      return false;  // Ipopt stops with User_Requested_Stop
    }
    return true;
  }

  void finalize_solution(Ipopt::SolverReturn status, Index n, const Number* x, const Number*, const Number*, Index,
                         const Number*, const Number*, Number, const Ipopt::IpoptData*,
                         Ipopt::IpoptCalculatedQuantities*) override {
    final_status = status;
    if (x != nullptr) solution.assign(x, x + n);
  }

  Ipopt::SolverReturn final_status = Ipopt::UNASSIGNED;
  std::vector<double> solution;
  bool timed_out = false;

 private:
  bool limited_;
  Clock::time_point deadline_{};
};

}  // namespace

SolveResult solve_ipopt(const Model& model, const SolveOptions& options, bool convex) {
  SolveResult out;
  out.solver = "ipopt";
  const NlpProblem problem(model);
  std::lock_guard<std::mutex> one_at_a_time(nlp_solver_mutex());
  Ipopt::SmartPtr<IpoptAdapter> nlp = new IpoptAdapter(problem, options.time_limit);
  Ipopt::SmartPtr<Ipopt::IpoptApplication> app = new Ipopt::IpoptApplication(/*create_console_out=*/false);
  if (options.verbose) app->Jnlst()->AddFileJournal("trex_stderr", "stderr", Ipopt::J_ITERSUMMARY);
  auto& o = *app->Options();
  o.SetIntegerValue("print_level", options.verbose ? 5 : 0);
  o.SetStringValue("sb", "yes");  // no banner
  o.SetNumericValue("tol", 1e-10);
  o.SetNumericValue("constr_viol_tol", 1e-9);
  o.SetNumericValue("bound_relax_factor", 0.0);  // the point stays inside the bounds as written
  o.SetStringValue("mu_strategy", "adaptive");
  o.SetIntegerValue("max_iter", 10000);
  std::istringstream no_options_file;  // never reads ./ipopt.opt
  if (app->Initialize(no_options_file) != Ipopt::Solve_Succeeded) {
    out.status = SolveStatus::Error;
    out.message = "Ipopt failed to initialise";
    return out;
  }
  const Ipopt::ApplicationReturnStatus rc = app->OptimizeTNLP(nlp);
  const bool have_point = int(nlp->solution.size()) == problem.n();
  switch (rc) {
    case Ipopt::Solve_Succeeded:
    case Ipopt::Solved_To_Acceptable_Level:
      if (!have_point) break;
      out.status = convex ? SolveStatus::Optimal : SolveStatus::LocalOptimal;
      out.x = nlp->solution;
      if (rc == Ipopt::Solved_To_Acceptable_Level)
        out.message = "Ipopt stopped at its acceptable tolerance (1e-6), not the requested 1e-10";
      return out;
    case Ipopt::Infeasible_Problem_Detected:
      out.status = SolveStatus::Infeasible;
      if (!convex) out.message = "Ipopt converged to a point of local infeasibility (nonconvex model: not proven)";
      return out;
    case Ipopt::Diverging_Iterates:
      out.status = SolveStatus::Unbounded;
      out.message = "Ipopt's iterates diverged (objective unbounded or no finite optimum)";
      return out;
    case Ipopt::User_Requested_Stop:
      if (!nlp->timed_out) break;
      out.status = SolveStatus::TimeLimit;
      return out;
    default: break;
  }
  out.status = SolveStatus::Error;
  out.message = fmt::format("Ipopt ended with return status {}", int(rc));
  return out;
}

}  // namespace trex::lp::detail
