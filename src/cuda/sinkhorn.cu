// mHC Sinkhorn on the device (ops.hpp), the twin of nn::sinkhorn_forward_batch / sinkhorn_backward_batch: one
// thread per n x n matrix (n <= 8, a compile-time size so the matrices live in registers), the CPU's operations in
// its order (row softmax + eps, column normalisation, then (iters - 1) x (row, column); each normalisation divides
// by sum + eps). The backward recomputes the iterates as the CPU does and keeps them in the scratch arena, laid
// out [iterate][element][matrix] so that neighbouring threads touch neighbouring words. exp is CUDA's expf (within
// 2 ulp; the CPU's std::exp is glibc's), so the results are close to the CPU's, not its bits.
#include <cuda_runtime.h>

#include <cstdint>
#include <string>

#include "cuda/check.hpp"
#include "cuda/ops.hpp"
#include "util/error.hpp"

namespace trex::cuda {

namespace {
constexpr int kThreads = 128;

// y = x / (rowsum + eps) (by_row) or / (colsum + eps), nn/ops.cpp's normalise
template <int N, bool by_row>
__device__ __forceinline__ void normalise(const float* x, float* y, float eps) {
#pragma unroll
  for (int a = 0; a < N; ++a) {
    float s = 0;
#pragma unroll
    for (int b = 0; b < N; ++b) s += by_row ? x[a * N + b] : x[b * N + a];
    const float inv = 1.0f / (s + eps);
#pragma unroll
    for (int b = 0; b < N; ++b) {
      const int idx = by_row ? a * N + b : b * N + a;
      y[idx] = x[idx] * inv;
    }
  }
}

// dx from dy for y = normalise(x), nn/ops.cpp's normalise_backward
template <int N, bool by_row>
__device__ __forceinline__ void normalise_backward(const float* x, const float* dy, float* dx, float eps) {
#pragma unroll
  for (int a = 0; a < N; ++a) {
    float s = 0, dot = 0;
#pragma unroll
    for (int b = 0; b < N; ++b) {
      const int idx = by_row ? a * N + b : b * N + a;
      s += x[idx];
      dot += dy[idx] * x[idx];
    }
    const float inv = 1.0f / (s + eps);
#pragma unroll
    for (int b = 0; b < N; ++b) {
      const int idx = by_row ? a * N + b : b * N + a;
      dx[idx] = dy[idx] * inv - dot * inv * inv;
    }
  }
}

// t = row softmax of a + eps; sm (if given) = the softmax
template <int N>
__device__ __forceinline__ void softmax_eps(const float* __restrict__ a, float* t, float* sm, float eps) {
#pragma unroll
  for (int j = 0; j < N; ++j) {
    float mx = a[j * N];
#pragma unroll
    for (int k = 1; k < N; ++k) mx = fmaxf(mx, a[j * N + k]);
    float e[N], s = 0;
#pragma unroll
    for (int k = 0; k < N; ++k) s += (e[k] = expf(a[j * N + k] - mx));
#pragma unroll
    for (int k = 0; k < N; ++k) {
      const float v = e[k] / s;
      if (sm) sm[j * N + k] = v;
      t[j * N + k] = v + eps;
    }
  }
}

template <int N>
__global__ void sinkhorn_fwd_kernel(const float* __restrict__ a, int64_t as, float* __restrict__ m, int64_t ms,
                                    int64_t count, int iters, float eps) {
  const int64_t t = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  if (t >= count) return;
  float x[N * N], y[N * N];
  softmax_eps<N>(a + t * as, x, nullptr, eps);
  normalise<N, false>(x, y, eps);
  for (int it = 1; it < iters; ++it) {
    normalise<N, true>(y, x, eps);
    normalise<N, false>(x, y, eps);
  }
  float* mt = m + t * ms;
#pragma unroll
  for (int i = 0; i < N * N; ++i) mt[i] = y[i];
}

// st: (2 iters - 1) iterates of every matrix, st[(i * N*N + e) * count + t]
template <int N>
__global__ void sinkhorn_bwd_kernel(const float* __restrict__ a, int64_t as, const float* __restrict__ dm,
                                    int64_t dms, float* __restrict__ da, int64_t das, int64_t count, int iters,
                                    float eps, float* __restrict__ st) {
  const int64_t t = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  if (t >= count) return;
  constexpr int nn2 = N * N;
  const int steps = 2 * iters;
  float sm[nn2], cur[nn2], nxt[nn2];
  softmax_eps<N>(a + t * as, cur, sm, eps);
  auto store = [&](int i, const float* v) {
#pragma unroll
    for (int e = 0; e < nn2; ++e) st[(int64_t(i) * nn2 + e) * count + t] = v[e];
  };
  auto load = [&](int i, float* v) {
#pragma unroll
    for (int e = 0; e < nn2; ++e) v[e] = st[(int64_t(i) * nn2 + e) * count + t];
  };
  // st[i + 1] = normalise(st[i]): column for i = 0, then row for odd i, column for even i (the CPU's sweep)
  store(0, cur);
  for (int i = 0; i + 1 <= steps - 2; ++i) {
    if (i % 2 == 1)
      normalise<N, true>(cur, nxt, eps);
    else
      normalise<N, false>(cur, nxt, eps);
    store(i + 1, nxt);
#pragma unroll
    for (int e = 0; e < nn2; ++e) cur[e] = nxt[e];
  }
  float* g = nxt;  // the gradient wrt the current iterate
  const float* dmt = dm + t * dms;
#pragma unroll
  for (int e = 0; e < nn2; ++e) g[e] = dmt[e];
  for (int i = steps - 2; i >= 0; --i) {
    load(i, cur);
    float gx[nn2];
    if (i % 2 == 1)
      normalise_backward<N, true>(cur, g, gx, eps);
    else
      normalise_backward<N, false>(cur, g, gx, eps);
#pragma unroll
    for (int e = 0; e < nn2; ++e) g[e] = gx[e];
  }
  float* dat = da + t * das;
#pragma unroll
  for (int j = 0; j < N; ++j) {
    float dot = 0;
#pragma unroll
    for (int k = 0; k < N; ++k) dot += g[j * N + k] * sm[j * N + k];
#pragma unroll
    for (int k = 0; k < N; ++k) dat[j * N + k] = sm[j * N + k] * (g[j * N + k] - dot);
  }
}

void check_args(const char* what, int64_t count, int n, int iters) {
  if (n < 1 || n > 8 || iters < 1 || count < 0)
    throw Error(std::string(what) + ": n = " + std::to_string(n) + " (1..8), iters = " + std::to_string(iters) +
                " (>= 1), count = " + std::to_string(count));
}

unsigned blocks_for(int64_t count) { return unsigned((count + kThreads - 1) / kThreads); }

template <int N>
void launch_fwd(const float* a, int64_t as, float* m, int64_t ms, int64_t count, int iters, float eps,
                cudaStream_t s) {
  sinkhorn_fwd_kernel<N><<<blocks_for(count), kThreads, 0, s>>>(a, as, m, ms, count, iters, eps);
}
template <int N>
void launch_bwd(const float* a, int64_t as, const float* dm, int64_t dms, float* da, int64_t das, int64_t count,
                int iters, float eps, float* st, cudaStream_t s) {
  sinkhorn_bwd_kernel<N><<<blocks_for(count), kThreads, 0, s>>>(a, as, dm, dms, da, das, count, iters, eps, st);
}
}  // namespace

void sinkhorn_forward(const float* a, int64_t a_stride, float* m, int64_t m_stride, int64_t count, int n, int iters,
                      float eps, cudaStream_t s) {
  check_args("cuda sinkhorn_forward", count, n, iters);
  if (count == 0) return;
  switch (n) {
    case 1: launch_fwd<1>(a, a_stride, m, m_stride, count, iters, eps, s); break;
    case 2: launch_fwd<2>(a, a_stride, m, m_stride, count, iters, eps, s); break;
    case 3: launch_fwd<3>(a, a_stride, m, m_stride, count, iters, eps, s); break;
    case 4: launch_fwd<4>(a, a_stride, m, m_stride, count, iters, eps, s); break;
    case 5: launch_fwd<5>(a, a_stride, m, m_stride, count, iters, eps, s); break;
    case 6: launch_fwd<6>(a, a_stride, m, m_stride, count, iters, eps, s); break;
    case 7: launch_fwd<7>(a, a_stride, m, m_stride, count, iters, eps, s); break;
    default: launch_fwd<8>(a, a_stride, m, m_stride, count, iters, eps, s); break;
  }
  TREX_CUDA_CHECK_LAUNCH();
}

size_t sinkhorn_backward_scratch_bytes(int64_t count, int n, int iters) {
  return size_t(2 * iters - 1) * size_t(n * n) * size_t(count) * sizeof(float) + DeviceArena::kAlign;
}

void sinkhorn_backward(const float* a, int64_t a_stride, const float* dm, int64_t dm_stride, float* da,
                       int64_t da_stride, int64_t count, int n, int iters, float eps, DeviceArena& scratch,
                       cudaStream_t s) {
  check_args("cuda sinkhorn_backward", count, n, iters);
  if (count == 0) return;
  const DeviceArena::Mark mark = scratch.mark();
  float* st = scratch.floats(int64_t(2 * iters - 1) * n * n * count);
  switch (n) {
    case 1: launch_bwd<1>(a, a_stride, dm, dm_stride, da, da_stride, count, iters, eps, st, s); break;
    case 2: launch_bwd<2>(a, a_stride, dm, dm_stride, da, da_stride, count, iters, eps, st, s); break;
    case 3: launch_bwd<3>(a, a_stride, dm, dm_stride, da, da_stride, count, iters, eps, st, s); break;
    case 4: launch_bwd<4>(a, a_stride, dm, dm_stride, da, da_stride, count, iters, eps, st, s); break;
    case 5: launch_bwd<5>(a, a_stride, dm, dm_stride, da, da_stride, count, iters, eps, st, s); break;
    case 6: launch_bwd<6>(a, a_stride, dm, dm_stride, da, da_stride, count, iters, eps, st, s); break;
    case 7: launch_bwd<7>(a, a_stride, dm, dm_stride, da, da_stride, count, iters, eps, st, s); break;
    default: launch_bwd<8>(a, a_stride, dm, dm_stride, da, da_stride, count, iters, eps, st, s); break;
  }
  TREX_CUDA_CHECK_LAUNCH();
  scratch.release(mark);  // stream-ordered: later allocations' kernels queue after this one on the same stream
}

}  // namespace trex::cuda
