// The GPU decoder's list moves (decode_rows.hpp): a block per row, threads over its columns.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "cuda/check.hpp"
#include "cuda/decode_rows.hpp"

namespace trex::cuda {

namespace {
constexpr int kThreads = 128;
constexpr int64_t kMaxGrid = 65535;

__global__ void copy_rows_kernel(const float* __restrict__ src, const int32_t* __restrict__ src_rows,
                                 float* __restrict__ dst, const int32_t* __restrict__ dst_rows, int64_t n,
                                 int64_t width) {
  for (int64_t i = blockIdx.x; i < n; i += gridDim.x) {
    const float* a = src + int64_t(src_rows ? src_rows[i] : i) * width;
    float* b = dst + int64_t(dst_rows ? dst_rows[i] : i) * width;
    for (int64_t j = threadIdx.x; j < width; j += blockDim.x) b[j] = a[j];
  }
}

__global__ void append_selection_kernel(int32_t* __restrict__ comp, int64_t cmax, const int32_t* __restrict__ nold,
                                        const int32_t* __restrict__ sel, int64_t k, const int32_t* __restrict__ nvis,
                                        int64_t rows) {
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const int64_t count = min(k, int64_t(nvis[r]));
    int32_t* out = comp + r * cmax + nold[r];
    for (int64_t j = threadIdx.x; j < count; j += blockDim.x) out[j] = sel[r * k + j];
  }
}
}  // namespace

void copy_rows(const float* src, const int32_t* src_rows, float* dst, const int32_t* dst_rows, int64_t n,
               int64_t width, cudaStream_t s) {
  if (n <= 0 || width <= 0) return;
  copy_rows_kernel<<<unsigned(std::min(n, kMaxGrid)), kThreads, 0, s>>>(src, src_rows, dst, dst_rows, n, width);
  TREX_CUDA_CHECK_LAUNCH();
}

void append_selection(int32_t* comp, int64_t cmax, const int32_t* nold, const int32_t* sel, int64_t k,
                      const int32_t* nvis, int64_t rows, cudaStream_t s) {
  if (rows <= 0 || k <= 0) return;
  append_selection_kernel<<<unsigned(std::min(rows, kMaxGrid)), kThreads, 0, s>>>(comp, cmax, nold, sel, k, nvis,
                                                                                   rows);
  TREX_CUDA_CHECK_LAUNCH();
}

}  // namespace trex::cuda
