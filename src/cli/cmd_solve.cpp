// `trex solve FILE.lp [--solver cbc|glpk] [--time-limit S] [--threads N] [--json]`: reads an LP file
// with our reader and solves it with CLP/CBC or GLPK; a quadratic model (objective or rows) with Ipopt, or
// Bonmin when it has integers, whatever --solver says, and its optimum is proven when the model is convex,
// else local (status local_optimal) (docs/solve.md). Exit 0 when a solve ran (any status but error:
// optimal, local_optimal, infeasible, unbounded, infeasible_or_unbounded, time_limit, unsupported), 2 on bad
// input (unreadable file, parse error naming file:line:col) or a solver error.
#include <cstdio>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "cli/command.hpp"
#include "lp/lp_format.hpp"
#include "lp/solve_report.hpp"
#include "lp/solver.hpp"
#include "util/error.hpp"
#include "util/timer.hpp"

namespace cmd_solve {  // this file's own names (the unity build joins cli files)

struct Opts {
  std::string file;
  std::string solver = "cbc";
  double time_limit = 0.0;
  int threads = 1;
  bool json = false;
  bool solver_log = false;
  bool values = false;
  int global_nodes = trex::lp::SolveOptions{}.global_node_limit;
};

int run(const Opts& o) {
  const trex::lp::Backend backend = trex::lp::parse_backend(o.solver);  // throws on unknown names -> exit 2
  trex::Timer read_timer;
  const trex::lp::Model model = trex::lp::read_lp_file(o.file);  // throws file:line:col -> exit 2
  const double read_seconds = read_timer.seconds();

  trex::lp::SolveOptions options;
  options.time_limit = o.time_limit;
  options.threads = o.threads;
  options.verbose = o.solver_log;
  options.global_node_limit = o.global_nodes;
  const trex::lp::SolveResult r = trex::lp::solve(model, backend, options);
  const bool solved = trex::lp::has_solution(r);

  if (o.json) {
    const auto j = trex::lp::solve_report_json(o.file, model, backend, r, read_seconds, o.values);
    std::printf("%s\n", j.dump().c_str());
  } else {
    std::printf("%s: %s", o.file.c_str(), trex::lp::to_string(r.status));
    if (solved)
      std::printf(", objective %.12g (%s)", r.objective,
                  r.status == trex::lp::SolveStatus::Optimal ? "proven optimal" : "local optimum, not proven");
    std::printf("\n  solver %s, %.3f s (read %.3f s)\n", r.solver.c_str(), r.seconds, read_seconds);
    std::printf("  %s, %d vars (%d integer), %d rows, %lld nonzeros%s\n", trex::lp::to_string(model.objective.sense),
                model.num_vars(), model.num_integer_vars(), model.num_rows(), static_cast<long long>(model.num_nonzeros()),
                model.has_quadratic() ? ", quadratic terms" : "");
    if (r.quadratic)
      std::printf("  %s\n", r.convex ? "convex" : ("nonconvex: " + r.convexity).c_str());
    if (!r.proof.empty()) std::printf("  proof: %s\n", r.proof.c_str());
    if (!r.message.empty()) std::printf("  %s\n", r.message.c_str());
    if (o.values && solved)
      for (int i = 0; i < model.num_vars(); ++i)
        std::printf("  %s = %.12g\n", model.vars[size_t(i)].name.c_str(), r.x[size_t(i)]);
  }
  if (r.status == trex::lp::SolveStatus::Error) {
    std::fprintf(stderr, "error: %s: solver %s failed: %s\n", o.file.c_str(), r.solver.c_str(), r.message.c_str());
    return 2;
  }
  return 0;
}

trex::cli::CommandRegistrar reg(
    "solve",
    "Solve an LP/MILP file with CLP/CBC or GLPK, a quadratic one with Ipopt / Bonmin (exit 0 when the solve ran, 2 on "
    "bad input or error)",
    [](CLI::App& sub) -> trex::cli::Action {
      auto o = std::make_shared<Opts>();
      sub.add_option("file", o->file, "LP file (CPLEX/Gurobi LP format)")->required();
      sub.add_option("--solver", o->solver, "Backend: cbc (CLP for LPs, CBC for MILPs) or glpk; quadratic models always go to Ipopt "
                     "(continuous) or Bonmin (integers)")
          ->check(CLI::IsMember({"cbc", "glpk"}))
          ->capture_default_str();
      sub.add_option("--time-limit", o->time_limit, "Wall-clock limit in seconds (0 = none)")
          ->check(CLI::NonNegativeNumber)
          ->capture_default_str();
      sub.add_option("--threads", o->threads, "Threads for CBC's branch and bound (GLPK is single-threaded)")
          ->check(CLI::Range(1, 256))
          ->capture_default_str();
      sub.add_option("--global-nodes", o->global_nodes,
                     "Nonconvex quadratic models: nodes of the spatial branch and bound that tries to prove the local "
                     "optimum global (0 = none: the result stays local_optimal)")
          ->check(CLI::NonNegativeNumber)
          ->capture_default_str();
      sub.add_flag("--json", o->json, "Print one JSON object");
      sub.add_flag("--values", o->values, "Also print the variable values of an optimal (or local optimal) solution");
      sub.add_flag("--solver-log", o->solver_log, "Show the solver's own log on stderr");
      return [o] { return run(*o); };
    });

}  // namespace cmd_solve
