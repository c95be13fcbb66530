// Helpers of the trainer's device interface (device_step.hpp) shared by its CPU and CUDA implementations.
#include "train/device_step.hpp"

#include <string>

#include "util/error.hpp"

namespace trex::train {

TensorRanges ranges_in_regions(const TensorRanges& ranges, std::span<const GradientRegion> regions, bool expert_shard) {
  TensorRanges out;
  for (const auto& [off, n] : ranges) {
    const GradientRegion* in = nullptr;
    for (const GradientRegion& r : regions)
      if (off >= r.begin && off + n <= r.end) in = &r;
    // regions are unions of whole tensors and cover the table: a range outside every region is a layout bug
    if (!in) throw Error("internal: the tensor at offset " + std::to_string(off) + " lies in no gradient region");
    if (in->expert_shard == expert_shard) out.emplace_back(off, n);
  }
  return out;
}

}  // namespace trex::train
