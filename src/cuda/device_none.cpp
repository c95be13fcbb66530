// availability() of a trex built without the CUDA backend (no nvcc at configure time, or -DTREX_CUDA=OFF):
// always "no", with that reason (device.hpp).
#include "cuda/device.hpp"

namespace trex::cuda {

bool built_with_cuda() { return false; }

const Availability& availability() {
  static const Availability a{false,
                              "this trex was built without the CUDA backend (no nvcc at configure time, or "
                              "-DTREX_CUDA=OFF; docs/cuda.md)",
                              0, ""};
  return a;
}

}  // namespace trex::cuda
