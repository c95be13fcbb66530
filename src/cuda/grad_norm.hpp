// The squared L2 norm of a device buffer over a fixed set of (offset, numel) ranges — the gradient norm the
// trainer clips by, the CUDA twin of train::grad_sq_sum (train/train_step.hpp): the same chunks of 64K elements,
// each chunk's squares summed in double by one block in a fixed order, the chunk sums added on the host in chunk
// order. Deterministic (no atomics; the bits depend on the ranges only); not the CPU's bits (its eight running
// sums per chunk), within a relative 1e-12 of them (tests/cuda/gpu/optimizer_test.cpp). The chunk list and the
// partial sums are allocated once, at construction. CUDA builds only (included by .cu files: C++17, no std::span).
#pragma once
#include <cuda_runtime_api.h>

#include <cstdint>
#include <utility>
#include <vector>

#include "cuda/arena.hpp"

namespace trex::cuda {

class SquareSum {
 public:
  static constexpr int64_t kChunk = int64_t(1) << 16;  // train::grad_sq_sum's
  explicit SquareSum(const std::vector<std::pair<int64_t, int64_t>>& ranges);
  // sum of x[i]^2 over the ranges; waits for `s`.
  double operator()(const float* x, cudaStream_t s);
  int64_t chunks() const { return int64_t(partial_host_.size()); }

 private:
  DeviceBuffer chunks_;   // int64 (offset, length) per chunk
  DeviceBuffer partial_;  // double per chunk
  std::vector<double> partial_host_;
};

}  // namespace trex::cuda
