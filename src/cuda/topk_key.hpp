// The sort key of the device top-k (topk.cu): one 64-bit integer per (score, index) whose ascending order is
// nn::topk_lower_index's order — score descending, ties to the lower index. A top-k is then the k smallest keys,
// all distinct (the index is part of the key), so a radix select needs no tie rule of its own. Plain C++ that nvcc
// also compiles for the device: the CPU test (tests/cuda/topk_key_test.cpp) checks the order against the CPU's.
#pragma once
#include <cstdint>
#include <cstring>

#if defined(__CUDACC__)
#define TREX_HOST_DEVICE __host__ __device__
#else
#define TREX_HOST_DEVICE
#endif

namespace trex::cuda::detail {

// Scores must not be NaN (the CPU comparator has no order for them either). -0 and +0 compare equal on the CPU, so
// both map to +0's key: their tie goes to the lower index there too.
TREX_HOST_DEVICE inline uint64_t topk_key(float score, uint32_t index) {
  if (score == 0.0f) score = 0.0f;
  uint32_t u;
  std::memcpy(&u, &score, sizeof u);
  const uint32_t ascending = (u & 0x80000000u) ? ~u : (u | 0x80000000u);  // float order as unsigned order
  return (uint64_t(~ascending) << 32) | index;                            // descending score, then index
}

TREX_HOST_DEVICE inline uint32_t topk_key_index(uint64_t key) { return uint32_t(key & 0xffffffffu); }

}  // namespace trex::cuda::detail
