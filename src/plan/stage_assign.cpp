// Stage assignment: the MILP on CBC and the dynamic-programme reference (see stage_assign.hpp).
#include "plan/stage_assign.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>

#include "lp/model.hpp"
#include "lp/solver.hpp"
#include "util/error.hpp"
#include "util/timer.hpp"

namespace trex::plan {

namespace {
constexpr double kInfinity = std::numeric_limits<double>::infinity();
}  // namespace

StageSolution assign_stages_dp(const StageProblem& p) {
  Timer timer;
  const int S = p.stages();
  const int64_t L = int64_t(p.seconds.size());
  StageSolution sol;
  if (S < 1 || L < S) {
    sol.status = "infeasible";
    return sol;
  }
  // Prefix sums make a segment's time and memory O(1) (the planner runs this for every candidate); the same
  // quantities as stage_seconds / stage_memory_gb.
  std::vector<double> t(size_t(L) + 1, 0.0), st(size_t(L) + 1, 0.0), ac(size_t(L) + 1, 0.0);
  for (int64_t l = 0; l < L; ++l) {
    t[size_t(l) + 1] = t[size_t(l)] + p.seconds[size_t(l)];
    st[size_t(l) + 1] = st[size_t(l)] + p.static_gb[size_t(l)];
    ac[size_t(l) + 1] = ac[size_t(l)] + p.activation_gb[size_t(l)];
  }
  // best[s][j]: smallest slowest-stage time placing layers [0, j) on stages 0..s-1; from[s][j]: the cut.
  std::vector<std::vector<double>> best(size_t(S) + 1, std::vector<double>(size_t(L) + 1, kInfinity));
  std::vector<std::vector<int64_t>> from(size_t(S) + 1, std::vector<int64_t>(size_t(L) + 1, -1));
  best[0][0] = 0;
  for (int s = 1; s <= S; ++s)
    for (int64_t j = s; j <= L - (S - s); ++j)
      for (int64_t i = s - 1; i < j; ++i) {
        if (best[size_t(s) - 1][size_t(i)] == kInfinity) continue;
        const bool first = s == 1, last = s == S;
        const double mem = p.fixed_gb + (first ? p.first_gb : 0.0) + (last ? p.last_gb : 0.0) +
                           (st[size_t(j)] - st[size_t(i)]) + p.inflight[size_t(s) - 1] * (ac[size_t(j)] - ac[size_t(i)]);
        if (mem > p.cap_gb) continue;
        const double secs = (t[size_t(j)] - t[size_t(i)]) + (last ? p.last_seconds : 0.0);
        const double v = std::max(best[size_t(s) - 1][size_t(i)], secs);
        if (v < best[size_t(s)][size_t(j)]) {  // strict: ties keep the earliest cut
          best[size_t(s)][size_t(j)] = v;
          from[size_t(s)][size_t(j)] = i;
        }
      }
  sol.solve_seconds = timer.seconds();
  if (best[size_t(S)][size_t(L)] == kInfinity) {
    sol.status = "infeasible";
    return sol;
  }
  sol.feasible = true;
  sol.status = "optimal";
  sol.max_seconds = best[size_t(S)][size_t(L)];
  sol.first.assign(size_t(S) + 1, 0);
  sol.first[size_t(S)] = L;
  for (int s = S; s > 0; --s) sol.first[size_t(s) - 1] = from[size_t(s)][size_t(sol.first[size_t(s)])];
  return sol;
}

StageSolution assign_stages_milp(const StageProblem& p, double time_limit_s) {
  const int S = p.stages();
  const int64_t L = int64_t(p.seconds.size());
  StageSolution sol;
  if (S < 1 || L < S) {
    sol.status = "infeasible";
    return sol;
  }
  // Staircase formulation: u[s][l] = 1 when layer l sits on stage s or later (s = 1..S-1; stage >= 0 always,
  // stage >= S never). Monotone along l (later layers never on earlier stages) and nested along s: difference
  // constraints, whose relaxation is much tighter than one binary per (layer, stage) with contiguity rows
  // (the T-Rex Pro cut: 1.8 s instead of 25 s). Layer l is on stage s exactly when u[s][l] - u[s+1][l] = 1.
  // Times in milliseconds keep the coefficients well inside the solver's tolerances.
  constexpr double kMs = 1e3;
  lp::Model m;
  m.name = "stage_assignment";
  auto u = [&](int s, int64_t l) { return int(int64_t(s - 1) * L + l); };
  for (int s = 1; s < S; ++s)
    for (int64_t l = 0; l < L; ++l) m.add_var(fmt::format("u_{}_{}", s, l), lp::VarType::Binary, 0.0, 1.0);
  const int T = m.add_var("T", lp::VarType::Continuous, 0.0, lp::kInf);
  m.objective.sense = lp::ObjSense::Minimize;
  m.objective.terms = {{T, 1.0}};
  for (int s = 1; s < S; ++s)
    for (int64_t l = 0; l + 1 < L; ++l)
      m.rows.push_back({fmt::format("monotone_{}_{}", s, l), {{u(s, l), 1.0}, {u(s, l + 1), -1.0}}, {}, lp::RowSense::LE, 0.0, 0.0});
  for (int s = 1; s + 1 < S; ++s)
    for (int64_t l = 0; l < L; ++l)
      m.rows.push_back({fmt::format("nested_{}_{}", s, l), {{u(s + 1, l), 1.0}, {u(s, l), -1.0}}, {}, lp::RowSense::LE, 0.0, 0.0});
  if (S > 1) {
    m.rows.push_back({"first_layer", {{u(1, 0), 1.0}}, {}, lp::RowSense::EQ, 0.0, 0.0});
    m.rows.push_back({"last_layer", {{u(S - 1, L - 1), 1.0}}, {}, lp::RowSense::EQ, 1.0, 0.0});
  }
  // Per stage: T >= its time, at least one layer, memory within the cap. Stage s's indicator of layer l is
  // u[s][l] - u[s+1][l] with u[0][l] = 1 and u[S][l] = 0 folded into the right-hand sides.
  for (int s = 0; s < S; ++s) {
    lp::Row t{fmt::format("time_{}", s), {{T, 1.0}}, {}, lp::RowSense::GE, s == S - 1 ? p.last_seconds * kMs : 0.0, 0.0};
    lp::Row nonempty{fmt::format("nonempty_{}", s), {}, {}, lp::RowSense::GE, 1.0, 0.0};
    lp::Row mem{fmt::format("memory_{}", s), {}, {}, lp::RowSense::LE,
                p.cap_gb - p.fixed_gb - (s == 0 ? p.first_gb : 0.0) - (s == S - 1 ? p.last_gb : 0.0), 0.0};
    for (int64_t l = 0; l < L; ++l) {
      const double secs = p.seconds[size_t(l)] * kMs;
      const double gb = p.static_gb[size_t(l)] + p.inflight[size_t(s)] * p.activation_gb[size_t(l)];
      if (s == 0) {  // the constant u[0][l] = 1
        t.rhs += secs;
        nonempty.rhs -= 1.0;
        mem.rhs -= gb;
      } else {
        t.terms.push_back({u(s, l), -secs});
        nonempty.terms.push_back({u(s, l), 1.0});
        mem.terms.push_back({u(s, l), gb});
      }
      if (s + 1 < S) {
        t.terms.push_back({u(s + 1, l), secs});
        nonempty.terms.push_back({u(s + 1, l), -1.0});
        mem.terms.push_back({u(s + 1, l), -gb});
      }
    }
    m.rows.push_back(std::move(t));
    if (!nonempty.terms.empty()) m.rows.push_back(std::move(nonempty));
    if (!mem.terms.empty()) {
      m.rows.push_back(std::move(mem));
    } else if (mem.rhs < 0) {  // one stage holding every layer, over the cap
      sol.status = "infeasible";
      return sol;
    }
  }
  m.rebuild_index();
  lp::SolveOptions opt;
  opt.time_limit = time_limit_s;
  const auto r = lp::solve(m, lp::Backend::Cbc, opt);
  sol.solve_seconds = r.seconds;
  sol.status = lp::to_string(r.status);
  if (r.status != lp::SolveStatus::Optimal) return sol;
  sol.feasible = true;
  sol.first.assign(size_t(S) + 1, 0);
  sol.first[size_t(S)] = L;
  for (int s = 1; s < S; ++s) {
    int64_t l = 0;
    while (l < L && r.x[size_t(u(s, l))] < 0.5) ++l;
    sol.first[size_t(s)] = l;
  }
  sol.max_seconds = 0;
  for (int s = 0; s < S; ++s)
    sol.max_seconds = std::max(sol.max_seconds, stage_seconds(p, s, sol.first[size_t(s)], sol.first[size_t(s) + 1]));
  return sol;
}

}  // namespace trex::plan
