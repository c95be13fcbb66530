// Element-wise kernels (ops.hpp): bf16 rounding of GEMM operands and the limited SwiGLU, forward and backward.
// One thread per element, grid-stride loops.
#include <cuda_runtime.h>

#include <cstdint>

#include "cuda/bf16.cuh"
#include "cuda/check.hpp"
#include "cuda/launch.cuh"
#include "cuda/ops.hpp"

namespace trex::cuda {

namespace {
constexpr int kThreads = 256;

unsigned blocks_for(int64_t n) { return detail::grid_stride_blocks(n, kThreads); }

__global__ void round_kernel(const float* __restrict__ x, uint16_t* __restrict__ out, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    out[i] = detail::to_bf16(x[i]);
}

__global__ void swiglu_fwd_kernel(const float* __restrict__ g, const float* __restrict__ u, float* __restrict__ h,
                                  int64_t n, float L) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    const float gv = fminf(g[i], L), uv = fmaxf(fminf(u[i], L), -L);
    h[i] = gv / (1.0f + expf(-gv)) * uv;
  }
}

__global__ void swiglu_bwd_kernel(const float* __restrict__ g, const float* __restrict__ u,
                                  const float* __restrict__ dh, float* __restrict__ dg, float* __restrict__ du,
                                  int64_t n, float L) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    const float gv = fminf(g[i], L), uv = fmaxf(fminf(u[i], L), -L);
    const float s = 1.0f / (1.0f + expf(-gv));
    dg[i] = g[i] > L ? 0.0f : dh[i] * uv * (s * (1.0f + gv * (1.0f - s)));
    du[i] = fabsf(u[i]) > L ? 0.0f : dh[i] * gv * s;
  }
}
}  // namespace

void round_to_bf16(const float* x, uint16_t* out, int64_t n, cudaStream_t s) {
  if (n <= 0) return;
  round_kernel<<<blocks_for(n), kThreads, 0, s>>>(x, out, n);
  TREX_CUDA_CHECK_LAUNCH();
}

void swiglu_forward(const float* g, const float* u, float* h, int64_t n, float limit, cudaStream_t s) {
  if (n <= 0) return;
  swiglu_fwd_kernel<<<blocks_for(n), kThreads, 0, s>>>(g, u, h, n, limit > 0 ? limit : __builtin_huge_valf());
  TREX_CUDA_CHECK_LAUNCH();
}

void swiglu_backward(const float* g, const float* u, const float* dh, float* dg, float* du, int64_t n, float limit,
                     cudaStream_t s) {
  if (n <= 0) return;
  swiglu_bwd_kernel<<<blocks_for(n), kThreads, 0, s>>>(g, u, dh, dg, du, n,
                                                       limit > 0 ? limit : __builtin_huge_valf());
  TREX_CUDA_CHECK_LAUNCH();
}

}  // namespace trex::cuda
