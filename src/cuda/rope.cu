// RoPE on the device (ops.hpp): one thread per rotated pair (token, head, k), reading the uploaded cos/sin table
// of nn::RopeTable (the CPU fast path's floats, so the same products).
#include <cuda_runtime.h>

#include <cstdint>

#include "cuda/check.hpp"
#include "cuda/launch.cuh"
#include "cuda/ops.hpp"

namespace trex::cuda {

namespace {
__global__ void rope_kernel(float* __restrict__ x, int64_t n, int64_t heads, int64_t head_dim,
                            const int32_t* __restrict__ pos, const float* __restrict__ cs,
                            const float* __restrict__ sn, int64_t half, float sgn) {
  const int64_t total = n * heads * half;
  for (int64_t t = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; t < total; t += int64_t(gridDim.x) * blockDim.x) {
    const int64_t k = t % half, ih = t / half, i = ih / heads;
    float* v = x + ih * head_dim + (head_dim - 2 * half) + 2 * k;
    const float c = cs[int64_t(pos[i]) * half + k], s = sgn * sn[int64_t(pos[i]) * half + k];
    const float a = v[0], b = v[1];
    v[0] = a * c - b * s;
    v[1] = a * s + b * c;
  }
}
}  // namespace

void rope_apply(float* x, int64_t n, int64_t heads, int64_t head_dim, const int32_t* pos, const float* cos,
                const float* sin, int64_t r, bool inverse, cudaStream_t s) {
  const int64_t total = n * heads * (r / 2);
  if (total <= 0) return;
  rope_kernel<<<detail::grid_stride_blocks(total, 256), 256, 0, s>>>(x, n, heads, head_dim, pos, cos, sin, r / 2,
                                                                     inverse ? -1.0f : 1.0f);
  TREX_CUDA_CHECK_LAUNCH();
}

}  // namespace trex::cuda
