// availability() of a trex built with the CUDA backend: asks the CUDA runtime for devices once (device.hpp).
// Without a driver the runtime answers cudaErrorInsufficientDriver ("CUDA driver version is insufficient for
// CUDA runtime version"), without a GPU cudaErrorNoDevice: both become ok = false with the runtime's words.
#include <cuda_runtime_api.h>

#include <cstdio>
#include <string>

#include "cuda/device.hpp"

namespace trex::cuda {

bool built_with_cuda() { return true; }

namespace {
Availability probe() {
  Availability a;
  int n = 0;
  const cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess) {
    a.reason = std::string("no usable CUDA device: cudaGetDeviceCount failed with ") + cudaGetErrorName(e) + " (" +
               cudaGetErrorString(e) + ")";
    cudaGetLastError();  // the runtime keeps no sticky state for this error; clear it for later calls anyway
    return a;
  }
  if (n == 0) {
    a.reason = "no usable CUDA device: the CUDA runtime sees 0 devices";
    return a;
  }
  cudaDeviceProp p{};
  const cudaError_t pe = cudaGetDeviceProperties(&p, 0);
  if (pe != cudaSuccess) {
    a.reason = std::string("no usable CUDA device: cudaGetDeviceProperties(0) failed with ") + cudaGetErrorName(pe) +
               " (" + cudaGetErrorString(pe) + ")";
    return a;
  }
  a.ok = true;
  a.devices = n;
  char mem[32];
  std::snprintf(mem, sizeof mem, "%.1f GiB", double(p.totalGlobalMem) / double(1ull << 30));
  a.name = std::string(p.name) + " (sm_" + std::to_string(p.major) + std::to_string(p.minor) + ", " + mem + ")";
  return a;
}
}  // namespace

const Availability& availability() {
  static const Availability a = probe();
  return a;
}

}  // namespace trex::cuda
