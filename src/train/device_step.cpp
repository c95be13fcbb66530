// Helpers of the trainer's device interface (device_step.hpp) shared by its CPU and CUDA implementations.
#include "train/device_step.hpp"

#include <string>

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

}  // namespace trex::train
