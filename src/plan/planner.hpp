// plan::Planner — the facade of the parallelism planner (PLANNER_AND_TUNER.md §A7): enumerate the parallel
// configurations of a DeepSeek-V4 model on a cluster (TP, PP, VPP, EP, ETP, micro-batch size, recompute policy,
// optimizer placement), reject those that break an integer rule (each rejection counted by reason), cut each
// valid one's layers into stages with the dynamic programme, estimate its step (cost_model.hpp), rank the ones
// that fit in memory, and re-solve the stage assignment of the top ones as a MILP on CBC (which must agree).
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "plan/cost_model.hpp"
#include "plan/stage_assign.hpp"

namespace trex::plan {

struct SearchSpace {
  std::vector<int> tp = {1, 2, 4, 8}, vpp = {1, 2, 4}, etp = {1, 2, 4, 8}, mbs = {1, 2, 4};
  std::vector<int> pp;  // empty: every divisor of the rank count up to the layer count
  std::vector<int> ep;  // empty: every power of two dividing the routed-expert count
  std::vector<Recompute> recompute = {Recompute::None, Recompute::Selective, Recompute::Full};
  std::vector<OptimizerPlacement> optimizer = {OptimizerPlacement::Replicated, OptimizerPlacement::Sharded,
                                               OptimizerPlacement::HostSwap};
};

struct PlanRequest {
  ModelProfile model;
  Cluster cluster;
  Workload workload;
  SearchSpace space;
  int top = 10;               // candidates listed
  int milp_top = 1;           // of those, how many get their stages re-solved by the MILP (0: none)
  double milp_time_limit = 20.0;
};

struct RankedPlan {
  Estimate estimate;
  StageSolution dp;                     // the screening cut
  std::optional<StageSolution> milp;    // for the first milp_top
};

struct PlanResult {
  int64_t tuples = 0, valid = 0, fit = 0;
  std::map<std::string, int64_t> rejected;  // reason -> count
  std::vector<RankedPlan> ranked;           // the `top` fastest that fit, fastest first
  std::optional<RankedPlan> fastest_unfit;  // the fastest configuration that does not fit (what memory costs)
  double seconds = 0;
};

PlanResult run_plan(const PlanRequest& req);

// Why a candidate breaks an integer rule ("" when it is valid).
std::string rule_violation(const Candidate& k, const ModelProfile& m, const Cluster& c, const Workload& w);
// Fills dp, edp and micro_batches from the rank count and GBS (false when they do not divide).
bool complete_candidate(Candidate& k, const Workload& w);
// Estimate of one given candidate with the DP's stage cut (what `trex plan --explain` prints); nullopt when no
// cut fits in memory — then `unfit` (if given) receives the estimate with layers spread evenly.
std::optional<RankedPlan> plan_candidate(const PlanRequest& req, const Candidate& k, Estimate* unfit = nullptr);

nlohmann::ordered_json plan_to_json(const PlanRequest& req, const PlanResult& r);
std::string plan_to_text(const PlanRequest& req, const PlanResult& r);
std::string estimate_breakdown(const Estimate& e);  // the per-stage table and the step's parts

}  // namespace trex::plan
