// Stage assignment (PLANNER_AND_TUNER.md §A7): cut the layers of one parallel configuration into pp contiguous
// stages so that the slowest stage is as fast as possible while every stage fits in device memory. The MILP
// (staircase binaries u[s][l] = layer l on stage s or later, epigraph T ≥ each stage's time, a memory row per
// stage) is solved with CBC through trex's LP core; the dynamic programme over cut points is its readable reference (exact for this objective), used to
// screen every candidate and by the tests to check the MILP. What a stage costs under a cut (StageProblem,
// stage_seconds, stage_memory_gb) is the cost model's (cost_model.hpp).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "plan/cost_model.hpp"

namespace trex::plan {

struct StageSolution {
  bool feasible = false;
  std::vector<int64_t> first;  // [stages + 1]
  double max_seconds = 0;      // slowest stage (without the pipeline sends, equal for every stage)
  std::string status;          // "optimal", "infeasible", or the solver's status
  double solve_seconds = 0;
};

StageSolution assign_stages_dp(const StageProblem& p);
StageSolution assign_stages_milp(const StageProblem& p, double time_limit_s = 30.0);

}  // namespace trex::plan
