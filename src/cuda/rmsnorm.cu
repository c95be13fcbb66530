// RMSNorm forward and backward on the device (ops.hpp). Forward and dx: one 256-thread block per row (sum of
// squares / of dy*w*x reduced in the block). dw: a grid of (256-column slice, 64-row chunk) blocks, each column
// summing its chunk's rows in order into a partial; a second kernel adds the partials to dw in chunk order.
#include <cuda_runtime.h>

#include <cstdint>

#include "cuda/check.hpp"
#include "cuda/ops.hpp"
#include "cuda/reduce.cuh"

namespace trex::cuda {

namespace {
constexpr int kThreads = 256;
constexpr int64_t kChunkRows = 64;

__global__ void rms_fwd_kernel(const float* __restrict__ x, const float* __restrict__ w, float* __restrict__ y,
                               float* __restrict__ rstd, int64_t dim, float eps) {
  const int64_t row = blockIdx.x;
  const float* xi = x + row * dim;
  float ss = 0;
  for (int64_t j = threadIdx.x; j < dim; j += blockDim.x) ss += xi[j] * xi[j];
  ss = detail::block_reduce(ss, detail::Sum{}, 0.0f);
  const float r = rsqrtf(ss / float(dim) + eps);
  if (threadIdx.x == 0 && rstd) rstd[row] = r;
  float* yi = y + row * dim;
  for (int64_t j = threadIdx.x; j < dim; j += blockDim.x) yi[j] = xi[j] * r * (w ? w[j] : 1.0f);
}

__global__ void rms_dx_kernel(const float* __restrict__ x, const float* __restrict__ w,
                              const float* __restrict__ rstd, const float* __restrict__ dy, float* __restrict__ dx,
                              int64_t dim, bool accumulate) {
  const int64_t row = blockIdx.x;
  const float* xi = x + row * dim;
  const float* gi = dy + row * dim;
  float* dxi = dx + row * dim;
  float dot = 0;
  for (int64_t j = threadIdx.x; j < dim; j += blockDim.x) dot += gi[j] * (w ? w[j] : 1.0f) * xi[j];
  dot = detail::block_reduce(dot, detail::Sum{}, 0.0f);
  const float r = rstd[row], c = dot * r * r / float(dim);
  for (int64_t j = threadIdx.x; j < dim; j += blockDim.x) {
    const float v = r * (gi[j] * (w ? w[j] : 1.0f) - xi[j] * c);
    dxi[j] = accumulate ? dxi[j] + v : v;
  }
}

__global__ void rms_dw_partial_kernel(const float* __restrict__ x, const float* __restrict__ rstd,
                                      const float* __restrict__ dy, float* __restrict__ part, int64_t rows,
                                      int64_t dim) {
  const int64_t j = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  if (j >= dim) return;
  const int64_t r0 = blockIdx.y * kChunkRows, r1 = r0 + kChunkRows < rows ? r0 + kChunkRows : rows;
  float acc = 0;
  for (int64_t i = r0; i < r1; ++i) acc += dy[i * dim + j] * x[i * dim + j] * rstd[i];
  part[blockIdx.y * dim + j] = acc;
}

__global__ void rms_dw_sum_kernel(const float* __restrict__ part, float* __restrict__ dw, int64_t chunks,
                                  int64_t dim) {
  const int64_t j = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  if (j >= dim) return;
  float acc = 0;
  for (int64_t c = 0; c < chunks; ++c) acc += part[c * dim + j];
  dw[j] += acc;
}
}  // namespace

void rmsnorm_forward(const float* x, const float* w, float* y, float* rstd, int64_t rows, int64_t dim, float eps,
                     cudaStream_t s) {
  if (rows <= 0) return;
  rms_fwd_kernel<<<unsigned(rows), kThreads, 0, s>>>(x, w, y, rstd, dim, eps);
  TREX_CUDA_CHECK_LAUNCH();
}

void rmsnorm_backward(const float* x, const float* w, const float* rstd, const float* dy, float* dx, float* dw,
                      int64_t rows, int64_t dim, bool accumulate, DeviceArena& scratch, cudaStream_t s) {
  if (rows <= 0) return;
  rms_dx_kernel<<<unsigned(rows), kThreads, 0, s>>>(x, w, rstd, dy, dx, dim, accumulate);
  TREX_CUDA_CHECK_LAUNCH();
  if (!w || !dw) return;
  const int64_t chunks = (rows + kChunkRows - 1) / kChunkRows;
  const DeviceArena::Mark m = scratch.mark();
  float* part = scratch.floats(chunks * dim);
  const unsigned cols = unsigned((dim + kThreads - 1) / kThreads);
  rms_dw_partial_kernel<<<dim3(cols, unsigned(chunks)), kThreads, 0, s>>>(x, rstd, dy, part, rows, dim);
  TREX_CUDA_CHECK_LAUNCH();
  rms_dw_sum_kernel<<<cols, kThreads, 0, s>>>(part, dw, chunks, dim);
  TREX_CUDA_CHECK_LAUNCH();
  scratch.release(m);  // stream-ordered: a later allocation's kernels queue after these on the same stream
}

}  // namespace trex::cuda
