// Grid size of the grid-stride kernels (every thread loops t += gridDim.x * blockDim.x): enough blocks to cover n
// items at `threads` per block, at least one, at most 65535 * 8 (beyond that the loop takes the rest). Shared by the
// element-wise, optimizer, RoPE and expert kernels.
#pragma once
#include <cstdint>

namespace trex::cuda::detail {

constexpr int64_t kMaxGridStrideBlocks = 65535 * 8;

inline unsigned grid_stride_blocks(int64_t n, int threads) {
  const int64_t b = (n + threads - 1) / threads;
  return unsigned(b < 1 ? 1 : b < kMaxGridStrideBlocks ? b : kMaxGridStrideBlocks);
}

}  // namespace trex::cuda::detail
