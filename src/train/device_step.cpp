// Helpers of the trainer's device interface (device_step.hpp) shared by its CPU and CUDA implementations.
#include "train/device_step.hpp"

#include <string>

#include "dist/zero_shards.hpp"
#include "util/error.hpp"

namespace trex::train {

std::vector<TensorRanges> ranges_by_region(const TensorRanges& ranges, std::span<const GradientRegion> regions) {
  std::vector<TensorRanges> out(regions.size());
  for (const auto& [off, n] : ranges) {
    size_t in = regions.size();
    for (size_t r = 0; r < regions.size(); ++r)
      if (off >= regions[r].begin && off + n <= regions[r].end) in = r;
    // regions are unions of whole tensors and cover the table: a range outside every region is a layout bug
    if (in == regions.size())
      throw Error("internal: the tensor at offset " + std::to_string(off) + " lies in no gradient region");
    out[in].emplace_back(off, n);
  }
  return out;
}

StepRegions::StepRegions(const DeviceStepConfig& cfg, const model::ParamStore& store) {
  const int64_t total = int64_t(store.params().size());
  std::vector<GradientRegion> gradient =
      cfg.gradient_regions ? cfg.gradient_regions(store)
                           : std::vector<GradientRegion>{{0, total, cfg.data_group && cfg.data_group->size() > 1
                                                                        ? cfg.data_group
                                                                        : nullptr}};
  for (const GradientRegion& g : gradient) {
    Region r;
    r.region = g;
    if (cfg.zero && g.holders() > 1) {
      std::vector<model::ParamInfo> sub;  // the region's tensors, offsets from its start
      for (const model::ParamInfo& t : store.table())
        if (t.offset >= g.begin && t.offset < g.end) {
          sub.push_back(t);
          sub.back().offset -= g.begin;
        }
      const dist::ShardPlan plan = dist::plan_zero_shards(sub, g.end - g.begin, g.holders());
      for (size_t k = 0; k < plan.begin.size(); ++k) {
        r.begin.push_back(g.begin + plan.begin[k]);
        r.count.push_back(plan.count[k]);
      }
      r.mine = g.replicas->rank();
    } else {
      r.begin = {g.begin};
      r.count = {g.end - g.begin};
    }
    for (int64_t b : r.begin) r.offset.push_back(b - g.begin);
    regions_.push_back(std::move(r));
  }
}

std::vector<TensorSlot> StepRegions::owned(const std::vector<TensorSlot>& slots) const {
  std::vector<TensorSlot> out;
  for (const TensorSlot& s : slots)
    for (const Region& r : regions_) {
      const int64_t b = r.begin[size_t(r.mine)], e = b + r.count[size_t(r.mine)];
      if (s.offset >= b && s.offset < e) {
        out.push_back(s);
        break;
      }
    }
  return out;
}

TensorRanges StepRegions::checkpoint_ranges() const {
  TensorRanges out;
  for (const Region& r : regions_)
    if (r.sharded() || !r.region.replicas || r.region.replicas->rank() == 0)
      out.emplace_back(r.begin[size_t(r.mine)], r.count[size_t(r.mine)]);
  return out;
}

}  // namespace trex::train
