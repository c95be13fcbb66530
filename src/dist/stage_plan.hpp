// Pipeline stage balance: the layers are cut into `stages` contiguous ranges so that the most expensive stage
// (per-token forward FLOPs of its layers, plus the head and the MTP modules on the last stage — the report's
// load-balanced stages) is as cheap as possible; every stage gets at least one layer. The costs come from
// model::block_forward_flops (the pieces of flops_per_token), so every rank computes the same split.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "model/config.hpp"

namespace trex::dist {

struct StagePlan {
  std::vector<int64_t> first;  // [stages + 1]: stage s runs layers [first[s], first[s+1])
  std::vector<double> cost;    // [stages]: forward FLOPs per token of each stage
  int stages() const { return int(cost.size()); }
  double max_cost() const;
  std::string str() const;  // "layers 0-4 | 5 + head (cost 12.3 | 11.9 MFLOP/token)"
};

// Minimises the maximum stage cost (dynamic programme over cut points; ties: the earliest cuts).
StagePlan plan_stages(const std::vector<double>& layer_cost, double last_stage_extra, int stages);
// The readable reference: tries every way of cutting (tests compare the two).
StagePlan plan_stages_exhaustive(const std::vector<double>& layer_cost, double last_stage_extra, int stages);
// From the model's per-layer FLOPs at this sequence length.
StagePlan plan_stages(const model::ModelConfig& cfg, int64_t seq_len, int stages);

}  // namespace trex::dist
