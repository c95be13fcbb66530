// Whether this process can use an NVIDIA GPU, and why not: trex::cuda::availability() is the one question every
// caller asks before touching the device (the CLI's --device, the gpu tests, scripts/gpu-check.sh). It never
// throws: a build without CUDA, a machine without a driver (cudaGetDeviceCount: "CUDA driver version is
// insufficient", MACHINE.md §8) or without a device all answer ok = false with the reason in words.
// Compiled in every build: device_cuda.cpp with CUDA, device_none.cpp without.
#pragma once
#include <string>

namespace trex::cuda {

struct Availability {
  bool ok = false;
  std::string reason;  // why not (empty when ok)
  int devices = 0;     // visible devices
  std::string name;    // device 0's name and compute capability, e.g. "NVIDIA H200 (sm_90, 139.8 GiB)", when ok
};

// Asked once per process (the answer is cached; the CUDA runtime's own answer does not change either).
const Availability& availability();
inline bool available(std::string* reason = nullptr) {
  const Availability& a = availability();
  if (reason) *reason = a.reason;
  return a.ok;
}

// True when this trex was compiled with the CUDA backend (nvcc found at configure time and TREX_CUDA on).
bool built_with_cuda();

}  // namespace trex::cuda
