// AdamW on the device (optimizer.hpp): one thread per element, grid-stride, the CPU's expression for each value in
// the same order (train::Optimizer::adamw_tensor), fp32 master weights and an optional bf16 copy of the result.
#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>

#include "cuda/bf16.cuh"
#include "cuda/check.hpp"
#include "cuda/launch.cuh"
#include "cuda/optimizer.hpp"

namespace trex::cuda {

namespace {
constexpr int kThreads = 256;

__global__ void adamw_kernel(float* __restrict__ p, const float* __restrict__ g, float* __restrict__ m,
                             float* __restrict__ v, int64_t n, float gs, AdamWConstants c,
                             uint16_t* __restrict__ p_bf16) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    const float gi = g[i] * gs;
    const float mi = c.beta1 * m[i] + (1.0f - c.beta1) * gi;
    const float vi = c.beta2 * v[i] + (1.0f - c.beta2) * gi * gi;
    m[i] = mi;
    v[i] = vi;
    const float denom = sqrtf(vi) * c.inv_sqrt_bc2 + c.eps;
    const float pi = p[i] * c.decay - c.step * mi / denom;
    p[i] = pi;
    if (p_bf16) p_bf16[i] = detail::to_bf16(pi);
  }
}
}  // namespace

AdamWConstants adamw_constants(double lr, int64_t t, double beta1, double beta2, double eps, double weight_decay) {
  const double bc1 = 1.0 - std::pow(beta1, double(t)), bc2 = 1.0 - std::pow(beta2, double(t));
  AdamWConstants c;
  c.decay = float(1.0 - lr * weight_decay);
  c.beta1 = float(beta1);
  c.beta2 = float(beta2);
  c.step = float(lr / bc1);
  c.inv_sqrt_bc2 = float(1.0 / std::sqrt(bc2));
  c.eps = float(eps);
  return c;
}

void adamw_update(float* p, const float* g, float* m, float* v, int64_t n, float grad_scale, const AdamWConstants& c,
                  uint16_t* p_bf16, cudaStream_t s) {
  if (n <= 0) return;
  adamw_kernel<<<detail::grid_stride_blocks(n, kThreads), kThreads, 0, s>>>(p, g, m, v, n, grad_scale, c, p_bf16);
  TREX_CUDA_CHECK_LAUNCH();
}

}  // namespace trex::cuda
