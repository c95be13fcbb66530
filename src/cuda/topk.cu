// Row-wise top-k on the device (ops.hpp topk_rows): the lightning indexer's selection of compressed entries and
// any other nn::topk_lower_index over rows. One 512-thread block per row:
//  1. every (score, index) becomes topk_key (topk_key.hpp): unique 64-bit keys whose ascending order is the CPU's
//     (score descending, ties to the lower index), so the top k are exactly the k smallest keys;
//  2. a radix select finds the k-th smallest key 8 bits at a time from the top (a 256-bin histogram in shared
//     memory per pass: integer counts, so the same result in any order of the shared-memory atomics), stopping
//     early once the keys under the found prefix are exactly the ones still needed;
//  3. the selected keys are gathered into shared memory (in any order) and bitonic-sorted, which puts them in the
//     CPU's order whatever order the gather left; out[j] = base + index, -1 past min(k, n).
// Deterministic: the output depends only on the keys. Rows are read once per radix pass (at most 8 passes).
#include <cuda_runtime.h>

#include <cstdint>

#include <fmt/format.h>

#include "cuda/check.hpp"
#include "cuda/ops.hpp"
#include "cuda/topk_key.hpp"
#include "util/error.hpp"

namespace trex::cuda {

namespace {
constexpr int kThreads = 512;

__device__ uint64_t key_at(const float* row, int64_t i) { return detail::topk_key(row[i], uint32_t(i)); }

__global__ void topk_rows_kernel(const float* __restrict__ scores, int64_t cols, int64_t stride,
                                 const int32_t* __restrict__ n_of, const int32_t* __restrict__ base_of, int64_t k,
                                 int32_t* __restrict__ out) {
  __shared__ uint32_t hist[256];
  __shared__ uint64_t sel[kMaxTopk];
  __shared__ uint64_t prefix_s, mask_s;
  __shared__ int64_t need_s;
  __shared__ uint32_t count_s;
  __shared__ int done_s;
  const int64_t row = blockIdx.x;
  const float* r = scores + row * stride;
  const int64_t n = n_of ? int64_t(n_of[row]) : cols;
  const int64_t kk = k < n ? k : n;
  if (threadIdx.x == 0) {
    prefix_s = 0;
    mask_s = 0;
    need_s = kk;
    count_s = 0;
    done_s = kk == n;  // every entry is selected: no select needed
  }
  __syncthreads();
  // 2. radix select of the kk-th smallest key, 8 bits per pass from the top
  for (int shift = 56; shift >= 0 && !done_s; shift -= 8) {
    for (int b = threadIdx.x; b < 256; b += blockDim.x) hist[b] = 0;
    __syncthreads();
    const uint64_t prefix = prefix_s, mask = mask_s;
    for (int64_t i = threadIdx.x; i < n; i += blockDim.x) {
      const uint64_t key = key_at(r, i);
      if ((key & mask) == prefix) atomicAdd(&hist[(key >> shift) & 0xffu], 1u);
    }
    __syncthreads();
    if (threadIdx.x == 0) {
      int64_t need = need_s, below = 0;
      int d = 0;
      while (below + int64_t(hist[d]) < need) below += hist[d++];
      need_s = need - below;
      prefix_s = prefix | (uint64_t(d) << shift);
      mask_s = mask | (uint64_t(0xffu) << shift);
      done_s = int64_t(hist[d]) == need - below;  // every key under the new prefix is needed
    }
    __syncthreads();
  }
  // 3. gather the selected keys: those whose masked high bits are at most the prefix
  const uint64_t prefix = prefix_s, mask = mask_s;
  for (int64_t i = threadIdx.x; i < n; i += blockDim.x) {
    const uint64_t key = key_at(r, i);
    if ((key & mask) <= prefix) sel[atomicAdd(&count_s, 1u)] = key;
  }
  __syncthreads();
  int p2 = 1;
  while (p2 < kk) p2 <<= 1;
  for (int64_t j = kk + threadIdx.x; j < p2; j += blockDim.x) sel[j] = ~uint64_t(0);
  __syncthreads();
  for (int size = 2; size <= p2; size <<= 1)  // bitonic sort, ascending
    for (int stride2 = size >> 1; stride2 > 0; stride2 >>= 1) {
      for (int j = threadIdx.x; j < p2; j += blockDim.x) {
        const int partner = j ^ stride2;
        if (partner > j) {
          const bool up = (j & size) == 0;
          const uint64_t a = sel[j], b = sel[partner];
          if ((a > b) == up) {
            sel[j] = b;
            sel[partner] = a;
          }
        }
      }
      __syncthreads();
    }
  const int32_t base = base_of ? base_of[row] : 0;
  int32_t* o = out + row * k;
  for (int64_t j = threadIdx.x; j < k; j += blockDim.x)
    o[j] = j < kk ? base + int32_t(detail::topk_key_index(sel[j])) : -1;
}
}  // namespace

void topk_rows(const float* scores, int64_t rows, int64_t cols, int64_t stride, const int32_t* n, const int32_t* base,
               int64_t k, int32_t* out, cudaStream_t s) {
  if (k < 1 || k > kMaxTopk)
    throw Error(fmt::format("cuda::topk_rows: k = {} outside [1, {}] (the selected keys are sorted in shared memory)",
                            k, kMaxTopk));
  if (cols < 0 || stride < cols || cols > int64_t(UINT32_MAX))
    throw Error(fmt::format("cuda::topk_rows: bad row shape (cols {}, stride {})", cols, stride));
  if (rows == 0) return;
  topk_rows_kernel<<<unsigned(rows), kThreads, 0, s>>>(scores, cols, stride, n, base, k, out);
  TREX_CUDA_CHECK_LAUNCH();
}

}  // namespace trex::cuda
