// ZeRO-1 sharding of the optimizer: the flat parameter buffer is cut at tensor boundaries into one contiguous
// range per data-parallel rank, balanced by element count. Each rank keeps optimizer state for, and updates,
// its own range only; an all-gather of the ranges then gives every rank the full updated parameters. Cutting at
// tensor boundaries keeps per-tensor updates (Muon's Newton-Schulz on a whole matrix) identical to one process.
#pragma once
#include <cstdint>
#include <vector>

#include "model/params.hpp"

namespace trex::dist {

struct ShardPlan {
  std::vector<int64_t> begin, count;  // per rank: [begin, begin + count) of the flat buffer
};

ShardPlan plan_zero_shards(const std::vector<model::ParamInfo>& table, int64_t total, int ranks);

}  // namespace trex::dist
