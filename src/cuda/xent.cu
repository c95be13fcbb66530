// Softmax cross-entropy on the device (ops.hpp): one 256-thread block per row — max, sum of exp, then the
// gradient written in a third pass (fp32 or rounded to bf16), the row's loss in double.
#include <cuda_runtime.h>

#include <cstdint>
#include <vector>

#include "cuda/bf16.cuh"
#include "cuda/check.hpp"
#include "cuda/ops.hpp"
#include "cuda/reduce.cuh"

namespace trex::cuda {

namespace {
__global__ void xent_kernel(const float* logits, const int32_t* __restrict__ target, float* dlogits,
                            double* __restrict__ row_loss, int64_t vocab, float scale, uint16_t* dlogits_bf16) {
  const int64_t row = blockIdx.x;
  const float* li = logits + row * vocab;
  const int32_t t = target[row];
  if (t < 0) {
    for (int64_t j = threadIdx.x; j < vocab; j += blockDim.x) {
      if (dlogits_bf16) dlogits_bf16[row * vocab + j] = 0;
      else dlogits[row * vocab + j] = 0.0f;
    }
    if (threadIdx.x == 0) row_loss[row] = 0.0;
    return;
  }
  float mx = -__builtin_huge_valf();
  for (int64_t j = threadIdx.x; j < vocab; j += blockDim.x) mx = fmaxf(mx, li[j]);
  mx = detail::block_reduce(mx, detail::Max{}, -__builtin_huge_valf());
  float s = 0;
  for (int64_t j = threadIdx.x; j < vocab; j += blockDim.x) s += expf(li[j] - mx);
  s = detail::block_reduce(s, detail::Sum{}, 0.0f);  // ends with __syncthreads-ordered reads of every li[j]
  const float lt = li[t];
  const float lse = mx + logf(s);
  __syncthreads();  // every thread has read li[t] before any writes dlogits (which may alias logits)
  if (threadIdx.x == 0) row_loss[row] = double(lse - lt) * scale;
  const float f = scale / s;
  for (int64_t j = threadIdx.x; j < vocab; j += blockDim.x) {
    float v = expf(li[j] - mx) * f;
    if (j == t) v -= scale;
    if (dlogits_bf16) dlogits_bf16[row * vocab + j] = detail::to_bf16(v);
    else dlogits[row * vocab + j] = v;
  }
}
}  // namespace

void softmax_xent(const float* logits, const int32_t* target, float* dlogits, double* row_loss, int64_t rows,
                  int64_t vocab, float scale, uint16_t* dlogits_bf16, cudaStream_t s) {
  if (rows <= 0) return;
  xent_kernel<<<unsigned(rows), 256, 0, s>>>(logits, target, dlogits, row_loss, vocab, scale, dlogits_bf16);
  TREX_CUDA_CHECK_LAUNCH();
}

double sum_row_losses(const double* row_loss, int64_t rows, cudaStream_t s) {
  std::vector<double> h(size_t(rows > 0 ? rows : 0));
  if (rows > 0)
    TREX_CUDA_CHECK(cudaMemcpyAsync(h.data(), row_loss, size_t(rows) * sizeof(double), cudaMemcpyDeviceToHost, s));
  TREX_CUDA_CHECK(cudaStreamSynchronize(s));
  double total = 0;
  for (double v : h) total += v;
  return total;
}

}  // namespace trex::cuda
