// The GPU model's glue kernels (model_glue.hpp): model/model.cpp's small loops between the components, on the
// device. Row kernels take one block per row of d floats (grid-stride over the rows), threads over its columns;
// flat ones a grid-stride loop. Where every pointer is 16-byte aligned and the widths are multiples of 4, the
// columns go four at a time (float4): the same operation per element, so the same bits. No kernel here multiplies
// and adds in one expression (nothing to contract into an FMA); every sum runs in the CPU loop's order.
#include <cuda_runtime.h>

#include <cstdint>
#include <string>

#include "cuda/check.hpp"
#include "cuda/launch.cuh"
#include "cuda/model_glue.hpp"
#include "util/error.hpp"

namespace trex::cuda {

namespace {

constexpr int kThreads = 256;

__device__ __forceinline__ float add(float a, float b) { return a + b; }
__device__ __forceinline__ float4 add(float4 a, float4 b) {
  return make_float4(a.x + b.x, a.y + b.y, a.z + b.z, a.w + b.w);
}
__device__ __forceinline__ float mul(float a, float b) { return a * b; }
__device__ __forceinline__ float4 mul(float4 a, float b) { return make_float4(a.x * b, a.y * b, a.z * b, a.w * b); }
template <class T>
__device__ __forceinline__ T zero();
template <>
__device__ __forceinline__ float zero<float>() {
  return 0.0f;
}
template <>
__device__ __forceinline__ float4 zero<float4>() {
  return make_float4(0.0f, 0.0f, 0.0f, 0.0f);
}

bool aligned16(const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; }

// Threads of a row kernel: the row's columns (in units of T) rounded up to a warp, at most kThreads.
int row_threads(int64_t cols) {
  const int64_t t = (cols + 31) / 32 * 32;
  return int(t < 32 ? 32 : t > kThreads ? kThreads : t);
}
unsigned row_grid(int64_t rows) {
  return unsigned(rows < detail::kMaxGridStrideBlocks ? rows : detail::kMaxGridStrideBlocks);
}

void check_sizes(const char* what, int64_t rows, int64_t n, int64_t d) {
  if (rows < 0 || n < 0 || d < 0)
    throw Error(std::string(what) + ": negative size (rows " + std::to_string(rows) + ", streams " +
                std::to_string(n) + ", width " + std::to_string(d) + ")");
}

// ---------------------------------------------------------------- embedding forward
// X[(i n + k) dv + j] = embed[tok[i] dv + j]: the token's row read once, written to its n streams.
template <class T>
__global__ void embedding_forward_kernel(const T* __restrict__ embed, const int32_t* __restrict__ tok, int64_t rows,
                                         int64_t n, int64_t dv, T* __restrict__ X) {
  for (int64_t i = blockIdx.x; i < rows; i += gridDim.x) {
    const T* src = embed + int64_t(tok[i]) * dv;
    T* dst = X + i * n * dv;
    for (int64_t j = threadIdx.x; j < dv; j += blockDim.x) {
      const T v = src[j];
      for (int64_t k = 0; k < n; ++k) dst[k * dv + j] = v;
    }
  }
}

// ---------------------------------------------------------------- embedding backward
// One thread per (distinct id u = blockIdx.x, column j): acc starts as gE's value and takes, one addition at a time,
// dX[(p n + k) dv + j] for the id's positions p in list order and k < n: the CPU's sequence of additions. NS > 0: n
// known at compile time, and the loads of 16 / NS positions (16 values) issued before their additions (independent
// loads in flight for a frequent id's long list; the additions keep their order). NS == 0: any n, one at a time.
template <class T, int NS>
__global__ void embedding_backward_kernel(const int32_t* __restrict__ ids, const int32_t* __restrict__ offsets,
                                          const int32_t* __restrict__ positions, const T* __restrict__ dX, int64_t n,
                                          int64_t dv, T* __restrict__ gE) {
  const int64_t u = blockIdx.x;
  const int64_t j = int64_t(blockIdx.y) * blockDim.x + threadIdx.x;
  if (j >= dv) return;
  const int64_t beg = offsets[u], end = offsets[u + 1];
  T* g = gE + int64_t(ids[u]) * dv + j;
  T acc = *g;
  const int64_t row = (NS > 0 ? NS : n) * dv;  // floats (units of T) per position
  int64_t q = beg;
  if constexpr (NS > 0) {
    constexpr int kAhead = NS < 16 ? 16 / NS : 1;
    for (; q + kAhead <= end; q += kAhead) {
      T v[kAhead][NS];
#pragma unroll
      for (int a = 0; a < kAhead; ++a) {
        const T* x = dX + int64_t(positions[q + a]) * row + j;
#pragma unroll
        for (int k = 0; k < NS; ++k) v[a][k] = x[k * dv];
      }
#pragma unroll
      for (int a = 0; a < kAhead; ++a)
#pragma unroll
        for (int k = 0; k < NS; ++k) acc = add(acc, v[a][k]);
    }
  }
  for (; q < end; ++q) {
    const T* x = dX + int64_t(positions[q]) * row + j;
    for (int64_t k = 0; k < (NS > 0 ? NS : n); ++k) acc = add(acc, x[k * dv]);
  }
  *g = acc;
}

template <class T>
void launch_embedding_backward(const int32_t* ids, const int32_t* offsets, const int32_t* positions,
                               int64_t distinct, const T* dX, int64_t n, int64_t dv, T* gE, cudaStream_t s) {
  const int threads = row_threads(dv);
  const dim3 grid(unsigned(distinct), unsigned((dv + threads - 1) / threads));
  switch (n) {
    case 1: embedding_backward_kernel<T, 1><<<grid, threads, 0, s>>>(ids, offsets, positions, dX, n, dv, gE); break;
    case 2: embedding_backward_kernel<T, 2><<<grid, threads, 0, s>>>(ids, offsets, positions, dX, n, dv, gE); break;
    case 4: embedding_backward_kernel<T, 4><<<grid, threads, 0, s>>>(ids, offsets, positions, dX, n, dv, gE); break;
    case 8: embedding_backward_kernel<T, 8><<<grid, threads, 0, s>>>(ids, offsets, positions, dX, n, dv, gE); break;
    default: embedding_backward_kernel<T, 0><<<grid, threads, 0, s>>>(ids, offsets, positions, dX, n, dv, gE);
  }
  TREX_CUDA_CHECK_LAUNCH();
}

// ---------------------------------------------------------------- streams
// X[(r n + k) dv + j] += e[r dv + j]
template <class T>
__global__ void add_to_streams_kernel(T* __restrict__ X, const T* __restrict__ e, int64_t rows, int64_t n,
                                      int64_t dv) {
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    T* x = X + r * n * dv;
    for (int64_t j = threadIdx.x; j < dv; j += blockDim.x) {
      const T v = e[r * dv + j];
      for (int64_t k = 0; k < n; ++k) x[k * dv + j] = add(x[k * dv + j], v);
    }
  }
}

// out[r dv + j] = ((0 + dX[k=0]) + dX[k=1]) + ...
template <class T>
__global__ void sum_streams_kernel(const T* __restrict__ dX, int64_t rows, int64_t n, int64_t dv,
                                   T* __restrict__ out) {
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const T* x = dX + r * n * dv;
    for (int64_t j = threadIdx.x; j < dv; j += blockDim.x) {
      T acc = zero<T>();
      for (int64_t k = 0; k < n; ++k) acc = add(acc, x[k * dv + j]);
      out[r * dv + j] = acc;
    }
  }
}

// ---------------------------------------------------------------- row blocks and flat ops
// dst[b ds + j] (+)= src[b ss + j]: rows over gridDim.y (looping past 65535), columns grid-stride over x.
template <class T, bool kAdd>
__global__ void row_blocks_kernel(const T* __restrict__ src, int64_t ss, T* __restrict__ dst, int64_t ds,
                                  int64_t width, int64_t rows) {
  for (int64_t b = blockIdx.y; b < rows; b += gridDim.y) {
    const T* x = src + b * ss;
    T* y = dst + b * ds;
    for (int64_t j = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; j < width; j += int64_t(gridDim.x) * blockDim.x)
      y[j] = kAdd ? add(y[j], x[j]) : x[j];
  }
}

template <class T>
__global__ void scale_kernel(T* __restrict__ x, int64_t count, float a) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < count; i += int64_t(gridDim.x) * blockDim.x)
    x[i] = mul(x[i], a);
}

template <class T>
__global__ void add_kernel(T* __restrict__ y, const T* __restrict__ x, int64_t count) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < count; i += int64_t(gridDim.x) * blockDim.x)
    y[i] = add(y[i], x[i]);
}

template <bool kAdd>
void row_blocks(const char* what, const float* src, int64_t ss, float* dst, int64_t ds, int64_t width, int64_t rows,
                cudaStream_t s) {
  if (width < 0 || rows < 0 || width > ss || width > ds)
    throw Error(std::string(what) + ": width " + std::to_string(width) + " with strides " + std::to_string(ss) +
                " and " + std::to_string(ds) + " over " + std::to_string(rows) + " rows");
  if (width == 0 || rows == 0) return;
  const bool vec = width % 4 == 0 && ss % 4 == 0 && ds % 4 == 0 && aligned16(src) && aligned16(dst);
  const int64_t w = vec ? width / 4 : width;
  // about 8 blocks' worth of columns per row in flight at most per pass; the grid-stride loop takes the rest
  const int64_t xb = (w + kThreads - 1) / kThreads;
  const dim3 grid(unsigned(xb < 4096 ? xb : 4096), unsigned(rows < 65535 ? rows : 65535));
  if (vec)
    row_blocks_kernel<float4, kAdd><<<grid, kThreads, 0, s>>>(reinterpret_cast<const float4*>(src), ss / 4,
                                                              reinterpret_cast<float4*>(dst), ds / 4, w, rows);
  else
    row_blocks_kernel<float, kAdd><<<grid, kThreads, 0, s>>>(src, ss, dst, ds, w, rows);
  TREX_CUDA_CHECK_LAUNCH();
}

}  // namespace

void embedding_forward(const float* embed, const int32_t* tokens, int64_t rows, int64_t n, int64_t d, float* X,
                       cudaStream_t s) {
  check_sizes("embedding_forward", rows, n, d);
  if (rows == 0 || n == 0 || d == 0) return;
  if (d % 4 == 0 && aligned16(embed) && aligned16(X)) {
    const int64_t dv = d / 4;
    embedding_forward_kernel<float4><<<row_grid(rows), row_threads(dv), 0, s>>>(
        reinterpret_cast<const float4*>(embed), tokens, rows, n, dv, reinterpret_cast<float4*>(X));
  } else {
    embedding_forward_kernel<float><<<row_grid(rows), row_threads(d), 0, s>>>(embed, tokens, rows, n, d, X);
  }
  TREX_CUDA_CHECK_LAUNCH();
}

EmbeddingLists build_embedding_lists(const int32_t* tokens, int64_t rows, int64_t V) {
  if (rows < 0 || V <= 0)
    throw Error("embedding lists: " + std::to_string(rows) + " tokens over a vocabulary of " + std::to_string(V));
  if (rows > INT32_MAX)
    throw Error("embedding lists: " + std::to_string(rows) + " tokens do not fit int32 positions");
  // counting sort by id, stable: each id's positions come out in increasing order
  std::vector<int32_t> count(size_t(V), 0);
  for (int64_t i = 0; i < rows; ++i) {
    const int32_t t = tokens[i];
    if (t < 0 || t >= V)
      throw Error("embedding lists: token id " + std::to_string(t) + " at position " + std::to_string(i) +
                  " outside the vocabulary [0, " + std::to_string(V) + ")");
    ++count[size_t(t)];
  }
  EmbeddingLists L;
  L.offsets.push_back(0);
  std::vector<int32_t> start(size_t(V), 0);  // next free slot of each id in positions
  for (int64_t v = 0; v < V; ++v)
    if (count[size_t(v)] > 0) {
      start[size_t(v)] = L.offsets.back();
      L.ids.push_back(int32_t(v));
      L.offsets.push_back(L.offsets.back() + count[size_t(v)]);
    }
  L.positions.resize(size_t(rows));
  for (int64_t i = 0; i < rows; ++i) L.positions[size_t(start[size_t(tokens[i])]++)] = int32_t(i);
  return L;
}

void embedding_backward(const int32_t* ids, const int32_t* offsets, const int32_t* positions, int64_t distinct,
                        const float* dX, int64_t n, int64_t d, float* gE, cudaStream_t s) {
  check_sizes("embedding_backward", distinct, n, d);
  if (distinct == 0 || n == 0 || d == 0) return;
  if (distinct > INT32_MAX) throw Error("embedding_backward: " + std::to_string(distinct) + " distinct ids");
  if (d % 4 == 0 && aligned16(dX) && aligned16(gE))
    launch_embedding_backward(ids, offsets, positions, distinct, reinterpret_cast<const float4*>(dX), n, d / 4,
                              reinterpret_cast<float4*>(gE), s);
  else
    launch_embedding_backward(ids, offsets, positions, distinct, dX, n, d, gE, s);
}

void add_to_streams(float* X, const float* e, int64_t rows, int64_t n, int64_t d, cudaStream_t s) {
  check_sizes("add_to_streams", rows, n, d);
  if (rows == 0 || n == 0 || d == 0) return;
  if (d % 4 == 0 && aligned16(X) && aligned16(e)) {
    const int64_t dv = d / 4;
    add_to_streams_kernel<float4><<<row_grid(rows), row_threads(dv), 0, s>>>(
        reinterpret_cast<float4*>(X), reinterpret_cast<const float4*>(e), rows, n, dv);
  } else {
    add_to_streams_kernel<float><<<row_grid(rows), row_threads(d), 0, s>>>(X, e, rows, n, d);
  }
  TREX_CUDA_CHECK_LAUNCH();
}

void sum_streams(const float* dX, int64_t rows, int64_t n, int64_t d, float* out, cudaStream_t s) {
  check_sizes("sum_streams", rows, n, d);
  if (rows == 0 || d == 0) return;  // n == 0 still writes zeros
  if (d % 4 == 0 && aligned16(dX) && aligned16(out)) {
    const int64_t dv = d / 4;
    sum_streams_kernel<float4><<<row_grid(rows), row_threads(dv), 0, s>>>(
        reinterpret_cast<const float4*>(dX), rows, n, dv, reinterpret_cast<float4*>(out));
  } else {
    sum_streams_kernel<float><<<row_grid(rows), row_threads(d), 0, s>>>(dX, rows, n, d, out);
  }
  TREX_CUDA_CHECK_LAUNCH();
}

void copy_row_blocks(const float* src, int64_t src_stride, float* dst, int64_t dst_stride, int64_t width,
                     int64_t rows, cudaStream_t s) {
  row_blocks<false>("copy_row_blocks", src, src_stride, dst, dst_stride, width, rows, s);
}

void add_row_blocks(const float* src, int64_t src_stride, float* dst, int64_t dst_stride, int64_t width,
                    int64_t rows, cudaStream_t s) {
  row_blocks<true>("add_row_blocks", src, src_stride, dst, dst_stride, width, rows, s);
}

void scale_in_place(float* x, int64_t count, float a, cudaStream_t s) {
  if (count < 0) throw Error("scale_in_place: count " + std::to_string(count));
  if (count == 0) return;
  if (count % 4 == 0 && aligned16(x))
    scale_kernel<float4><<<detail::grid_stride_blocks(count / 4, kThreads), kThreads, 0, s>>>(
        reinterpret_cast<float4*>(x), count / 4, a);
  else
    scale_kernel<float><<<detail::grid_stride_blocks(count, kThreads), kThreads, 0, s>>>(x, count, a);
  TREX_CUDA_CHECK_LAUNCH();
}

void add_in_place(float* y, const float* x, int64_t count, cudaStream_t s) {
  if (count < 0) throw Error("add_in_place: count " + std::to_string(count));
  if (count == 0) return;
  if (count % 4 == 0 && aligned16(x) && aligned16(y))
    add_kernel<float4><<<detail::grid_stride_blocks(count / 4, kThreads), kThreads, 0, s>>>(
        reinterpret_cast<float4*>(y), reinterpret_cast<const float4*>(x), count / 4);
  else
    add_kernel<float><<<detail::grid_stride_blocks(count, kThreads), kThreads, 0, s>>>(y, x, count);
  TREX_CUDA_CHECK_LAUNCH();
}

}  // namespace trex::cuda
