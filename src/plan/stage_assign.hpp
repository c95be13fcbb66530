// Stage assignment (PLANNER_AND_TUNER.md §A7): cut the layers of one parallel configuration into pp contiguous
// stages so that the slowest stage is as fast as possible while every stage fits in device memory. The MILP
// (staircase binaries u[s][l] = layer l on stage s or later, epigraph T ≥ each stage's time, a memory row per
// stage) is solved with CBC through trex's LP core; the dynamic programme over cut points is its readable reference (exact for this objective), used to
// screen every candidate and by the tests to check the MILP.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "plan/cost_model.hpp"

namespace trex::plan {

struct StageProblem {
  std::vector<double> seconds, static_gb, activation_gb;  // per layer
  std::vector<double> inflight;                           // per stage: micro-batches whose activations it holds
  double first_gb = 0;        // stage 0 only (embedding)
  double last_gb = 0;         // last stage only (head, MTP, logits)
  double last_seconds = 0;    // last stage only (head, MTP)
  double fixed_gb = 0;        // every stage (one recomputed layer's working set, swap buffers)
  double cap_gb = 0;
  int stages() const { return int(inflight.size()); }
};
StageProblem stage_problem(const LayerCosts& lc, const Cluster& c, const Candidate& k);

struct StageSolution {
  bool feasible = false;
  std::vector<int64_t> first;  // [stages + 1]
  double max_seconds = 0;      // slowest stage (without the pipeline sends, equal for every stage)
  std::string status;          // "optimal", "infeasible", or the solver's status
  double solve_seconds = 0;
};

StageSolution assign_stages_dp(const StageProblem& p);
StageSolution assign_stages_milp(const StageProblem& p, double time_limit_s = 30.0);
// A stage's time and memory under a cut (what both methods optimise; tests use it to check solutions).
double stage_seconds(const StageProblem& p, int stage, int64_t begin, int64_t end);
double stage_memory_gb(const StageProblem& p, int stage, int64_t begin, int64_t end);

}  // namespace trex::plan
