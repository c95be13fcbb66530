// The element-wise kernels of the routed experts (experts.hpp): the routing-weight scaling of h (optionally fused
// with the bf16 rounding of the product's operand) and the per-row routing-weight gradient. The SwiGLU itself is
// elementwise.cu's (ops.hpp).
#include <cuda_runtime.h>

#include <cstdint>

#include "cuda/bf16.cuh"
#include "cuda/check.hpp"
#include "cuda/launch.cuh"
#include "cuda/experts.hpp"
#include "cuda/reduce.cuh"

namespace trex::cuda {

namespace {
constexpr int kThreads = 256;

unsigned blocks_for(int64_t n) { return detail::grid_stride_blocks(n, kThreads); }

// One multiply per element, never contracted with anything: the same bits as the CPU's scale_rows.
__global__ void scale_rows_kernel(const float* __restrict__ h, const float* __restrict__ w, float* __restrict__ o32,
                                  uint16_t* __restrict__ o16, int64_t rows, int64_t f) {
  const int64_t n = rows * f;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    const float v = h[i] * w[i / f];
    if (o32) o32[i] = v;
    if (o16) o16[i] = detail::to_bf16(v);
  }
}

// One block per row (grid-stride over rows): each thread sums its columns j = t, t + 256, ... in order, then the
// block's fixed-order reduction (reduce.cuh). Each thread scales only the elements it read, after the reduction:
// in place is safe (no __restrict__ on dhw).
__global__ void row_dot_scale_kernel(float* dhw, const float* __restrict__ h, const float* __restrict__ w,
                                     float* __restrict__ dw, int64_t rows, int64_t f) {
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    float* q = dhw + r * f;
    const float* hr = h + r * f;
    float acc = 0;
    for (int64_t j = threadIdx.x; j < f; j += blockDim.x) acc += q[j] * hr[j];
    acc = detail::block_reduce(acc, detail::Sum{}, 0.0f);
    if (threadIdx.x == 0) dw[r] = acc;
    const float wr = w[r];
    for (int64_t j = threadIdx.x; j < f; j += blockDim.x) q[j] *= wr;
  }
}
}  // namespace

void scale_rows(const float* h, const float* w, float* out_fp32, uint16_t* out_bf16, int64_t rows, int64_t f,
                cudaStream_t s) {
  if (rows <= 0 || f <= 0 || (!out_fp32 && !out_bf16)) return;
  scale_rows_kernel<<<blocks_for(rows * f), kThreads, 0, s>>>(h, w, out_fp32, out_bf16, rows, f);
  TREX_CUDA_CHECK_LAUNCH();
}

void row_dot_then_scale(float* dhw, const float* h, const float* w, float* dw, int64_t rows, int64_t f,
                        cudaStream_t s) {
  if (rows <= 0 || f <= 0) return;
  row_dot_scale_kernel<<<detail::grid_stride_blocks(rows, 1), kThreads, 0, s>>>(dhw, h, w, dw, rows, f);
  TREX_CUDA_CHECK_LAUNCH();
}

}  // namespace trex::cuda
