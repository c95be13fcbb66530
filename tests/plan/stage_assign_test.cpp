// Stage assignment: the DP and the MILP (CBC) both find the best cut that an exhaustive search over every cut
// finds, with and without binding memory limits, and agree on infeasibility.
#include "plan/stage_assign.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <limits>
#include <random>

namespace {

using namespace trex::plan;

// The readable reference: every way of cutting L layers into S non-empty contiguous stages.
double exhaustive_best(const StageProblem& p, bool& feasible) {
  const int S = p.stages();
  const int64_t L = int64_t(p.seconds.size());
  double best = std::numeric_limits<double>::infinity();
  std::vector<int64_t> first(size_t(S) + 1, 0);
  first[size_t(S)] = L;
  std::function<void(int)> place = [&](int s) {  // choose the start of stage s, then the next
    if (s == S) {
      double worst = 0;
      for (int t = 0; t < S; ++t) {
        if (stage_memory_gb(p, t, first[size_t(t)], first[size_t(t) + 1]) > p.cap_gb) return;
        worst = std::max(worst, stage_seconds(p, t, first[size_t(t)], first[size_t(t) + 1]));
      }
      best = std::min(best, worst);
      return;
    }
    for (int64_t cut = first[size_t(s) - 1] + 1; cut <= L - (S - s); ++cut) {
      first[size_t(s)] = cut;
      place(s + 1);
    }
  };
  place(1);
  feasible = best < std::numeric_limits<double>::infinity();
  return best;
}

StageProblem random_problem(std::mt19937& rng, int64_t L, int S, double cap_scale) {
  std::uniform_real_distribution<double> u(0.5, 2.0);
  StageProblem p;
  for (int64_t l = 0; l < L; ++l) {
    p.seconds.push_back(u(rng));
    p.static_gb.push_back(u(rng));
    p.activation_gb.push_back(0.3 * u(rng));
  }
  for (int s = 0; s < S; ++s) p.inflight.push_back(double(S - s));
  p.first_gb = u(rng);
  p.last_gb = 2 * u(rng);
  p.last_seconds = u(rng);
  p.fixed_gb = 0.1;
  double total = p.first_gb + p.last_gb;
  for (int64_t l = 0; l < L; ++l) total += p.static_gb[size_t(l)] + S * p.activation_gb[size_t(l)];
  p.cap_gb = cap_scale * total / S;
  return p;
}

void expect_valid_cut(const StageProblem& p, const StageSolution& s) {
  ASSERT_EQ(s.first.size(), size_t(p.stages()) + 1);
  EXPECT_EQ(s.first.front(), 0);
  EXPECT_EQ(s.first.back(), int64_t(p.seconds.size()));
  double worst = 0;
  for (int t = 0; t < p.stages(); ++t) {
    EXPECT_LT(s.first[size_t(t)], s.first[size_t(t) + 1]);
    EXPECT_LE(stage_memory_gb(p, t, s.first[size_t(t)], s.first[size_t(t) + 1]), p.cap_gb + 1e-9);
    worst = std::max(worst, stage_seconds(p, t, s.first[size_t(t)], s.first[size_t(t) + 1]));
  }
  EXPECT_NEAR(worst, s.max_seconds, 1e-12);
}

TEST(PlanStageAssign, DpAndMilpMatchTheExhaustiveSearch) {
  std::mt19937 rng(7);
  int feasible_cases = 0, infeasible_cases = 0, memory_bound = 0;
  for (int trial = 0; trial < 36; ++trial) {
    const int64_t L = 4 + trial % 8;
    const int S = 1 + trial % 4;
    if (L < S) continue;
    // Generous, tight and impossible memory limits.
    const double cap_scale = trial % 3 == 0 ? 10.0 : trial % 3 == 1 ? 1.15 : 0.3;
    const StageProblem p = random_problem(rng, L, S, cap_scale);
    bool feasible = false;
    const double best = exhaustive_best(p, feasible);
    const StageSolution dp = assign_stages_dp(p);
    const StageSolution milp = assign_stages_milp(p, 30.0);
    ASSERT_EQ(dp.feasible, feasible) << "trial " << trial;
    ASSERT_EQ(milp.feasible, feasible) << "trial " << trial << " status " << milp.status;
    if (!feasible) {
      EXPECT_EQ(dp.status, "infeasible");
      EXPECT_EQ(milp.status, "infeasible");
      ++infeasible_cases;
      continue;
    }
    ++feasible_cases;
    EXPECT_NEAR(dp.max_seconds, best, 1e-12) << "trial " << trial;
    EXPECT_NEAR(milp.max_seconds, best, 1e-6 * best) << "trial " << trial;
    expect_valid_cut(p, dp);
    expect_valid_cut(p, milp);
    // Did memory change the answer? (the unconstrained optimum is faster)
    StageProblem loose = p;
    loose.cap_gb = 1e12;
    if (assign_stages_dp(loose).max_seconds < dp.max_seconds - 1e-12) ++memory_bound;
  }
  EXPECT_GE(feasible_cases, 15);
  EXPECT_GE(infeasible_cases, 5);
  EXPECT_GE(memory_bound, 2);  // some cases where memory, not time, decides the cut
}

TEST(PlanStageAssign, MoreStagesThanLayersIsInfeasible) {
  std::mt19937 rng(1);
  StageProblem p = random_problem(rng, 3, 3, 10.0);
  p.inflight.push_back(1.0);  // 4 stages, 3 layers
  EXPECT_FALSE(assign_stages_dp(p).feasible);
  EXPECT_FALSE(assign_stages_milp(p).feasible);
}

}  // namespace
