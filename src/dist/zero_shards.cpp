// ZeRO-1 shard planning (see zero_shards.hpp).
#include "dist/zero_shards.hpp"

#include <algorithm>

#include "util/error.hpp"

namespace trex::dist {

ShardPlan plan_zero_shards(const std::vector<model::ParamInfo>& table, int64_t total, int ranks) {
  if (ranks < 1) throw Error("plan_zero_shards: ranks must be >= 1");
  std::vector<int64_t> cuts;  // tensor start offsets (candidate cut points)
  for (const auto& p : table) cuts.push_back(p.offset);
  cuts.push_back(total);
  std::sort(cuts.begin(), cuts.end());
  ShardPlan plan;
  int64_t start = 0;
  for (int r = 0; r < ranks; ++r) {
    int64_t end = total;
    if (r + 1 < ranks) {
      const int64_t target = total * (r + 1) / ranks;
      auto it = std::lower_bound(cuts.begin(), cuts.end(), target);  // first cut >= target
      end = *it;
      if (it != cuts.begin() && target - *(it - 1) < *it - target) end = *(it - 1);  // nearer cut
      end = std::max(end, start);
    }
    plan.begin.push_back(start);
    plan.count.push_back(end - start);
    start = end;
  }
  return plan;
}

}  // namespace trex::dist
