// MoE routing kernels (moe_route.hpp). The router forward and backward run one warp per token; the grouping is
// three passes over chunks of 64 tokens (per-chunk counts of each expert by a scan of the chunk's entries in
// order, a per-expert scan over the chunks and an exclusive scan over the experts, then each chunk places its
// entries at the rows so found) — no atomics, so the rows and their order are the CPU's; the balance loss sums
// per-chunk partials in chunk order.
#include <cuda_runtime.h>

#include <cstdint>
#include <string>

#include "cuda/check.hpp"
#include "cuda/moe_route.hpp"
#include "cuda/reduce.cuh"
#include "util/error.hpp"

namespace trex::cuda {

namespace {
constexpr unsigned kFull = 0xffffffffu;
constexpr int kRouteWarps = 4;       // tokens per block of the router kernels
constexpr int kBackwardWarps = 8;
constexpr int kChunk = 64;           // tokens per chunk of the grouping and of the balance loss's partials
constexpr int kChunkThreads = 256;
constexpr int kRowThreads = 256;     // gather, combine

__device__ float affinity(float s) {  // nn::sqrt_softplus's formula
  const float sp = s > 20.0f ? s : log1pf(expf(s));
  return sqrtf(sp);
}

template <class T>
__device__ T warp_sum(T v) {  // butterfly: every lane ends with the same value (IEEE addition commutes)
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(kFull, v, o);
  return v;
}

// (value, index) a beats (value, index) b: larger value, ties to the lower index; index < 0 is "none".
__device__ bool beats(float av, int ai, float bv, int bi) {
  if (ai < 0) return false;
  if (bi < 0) return true;
  return av > bv || (av == bv && ai < bi);
}

// One warp per token. Shared: per warp E affinities then E biased scores.
__global__ void route_forward_kernel(const float* __restrict__ scores, const float* __restrict__ bias,
                                     const int64_t* __restrict__ tid2eid, const int32_t* __restrict__ tokens,
                                     int64_t N, int E, int k, float R, float* __restrict__ a,
                                     int32_t* __restrict__ sel, float* __restrict__ w) {
  extern __shared__ float route_sh[];
  const int lane = int(threadIdx.x & 31), wid = int(threadIdx.x >> 5);
  const int64_t i = int64_t(blockIdx.x) * kRouteWarps + wid;
  if (i >= N) return;  // the whole warp
  float* ash = route_sh + size_t(wid) * 2 * size_t(E);
  float* bsh = ash + E;
  for (int e = lane; e < E; e += 32) {
    const float av = affinity(scores[i * E + e]);
    ash[e] = av;
    a[i * E + e] = av;
    if (!tid2eid) bsh[e] = bias ? av + bias[e] : av;  // bias: selection only
  }
  __syncwarp();
  int my_sel = -1;  // lane j < k: the j-th selected expert
  if (tid2eid) {
    if (lane < k) my_sel = int(tid2eid[int64_t(tokens[i]) * k + lane]);
  } else {
    uint32_t taken = 0;  // bit q: expert lane + 32 q already selected
    for (int j = 0; j < k; ++j) {
      float bv = 0.0f;
      int bi = -1;
      for (int q = 0, e = lane; e < E; ++q, e += 32)  // ascending e: a tie keeps the lower index
        if (!((taken >> q) & 1u) && beats(bsh[e], e, bv, bi)) bv = bsh[e], bi = e;
      for (int o = 16; o > 0; o >>= 1) {  // the maximum of a total order: every lane ends with the winner
        const float ov = __shfl_xor_sync(kFull, bv, o);
        const int oi = __shfl_xor_sync(kFull, bi, o);
        if (beats(ov, oi, bv, bi)) bv = ov, bi = oi;
      }
      if (lane == j) my_sel = bi;
      if ((bi & 31) == lane) taken |= 1u << (bi >> 5);
    }
  }
  float sum = 0;  // in slot order, as the CPU
  for (int j = 0; j < k; ++j) sum += ash[__shfl_sync(kFull, my_sel, j)];
  if (lane < k) {
    sel[i * k + lane] = my_sel;
    w[i * k + lane] = R * ash[my_sel] / sum;
  }
}

// The selections of this block's chunk of tokens (token-major, slot-minor) into es; returns their number. Ends
// with a barrier: es is ready for every thread.
__device__ int load_chunk(const int32_t* __restrict__ sel, int64_t N, int k, int32_t* es) {
  const int64_t t0 = int64_t(blockIdx.x) * kChunk;
  const int n = int(min(int64_t(kChunk), N - t0)) * k;
  for (int q = int(threadIdx.x); q < n; q += int(blockDim.x)) es[q] = sel[t0 * k + q];
  __syncthreads();
  return n;
}

// Grouping pass 1: the chunk's entries (token-major, slot-minor) into shared memory; each thread counts its
// experts' entries.
__global__ void group_count_kernel(const int32_t* __restrict__ sel, int64_t N, int E, int k,
                                   int32_t* __restrict__ chunk_counts) {
  __shared__ int32_t es[kChunk * kMaxRouteK];
  const int n = load_chunk(sel, N, k, es);
  for (int e = int(threadIdx.x); e < E; e += int(blockDim.x)) {
    int c = 0;
    for (int q = 0; q < n; ++q) c += es[q] == e;
    chunk_counts[int64_t(blockIdx.x) * E + e] = c;
  }
}

// Pass 2 (one block of 1024 threads, thread e = expert e): chunk_counts becomes each chunk's first row inside its
// expert (exclusive scan over the chunks, in chunk order); counts; offsets by an inclusive scan over the experts.
__global__ void group_scan_kernel(int32_t* __restrict__ chunk_counts, int64_t chunks, int E,
                                  int64_t* __restrict__ counts, int64_t* __restrict__ offsets) {
  __shared__ int64_t sc[kMaxRouteExperts];
  const int e = int(threadIdx.x);
  int64_t run = 0;
  if (e < E)
    for (int64_t c = 0; c < chunks; ++c) {
      const int32_t v = chunk_counts[c * E + e];
      chunk_counts[c * E + e] = int32_t(run);
      run += v;
    }
  if (e < E) counts[e] = run;
  sc[e] = e < E ? run : 0;
  __syncthreads();
  for (int off = 1; off < int(kMaxRouteExperts); off <<= 1) {
    const int64_t v = e >= off ? sc[e - off] : 0;
    __syncthreads();
    sc[e] += v;
    __syncthreads();
  }
  if (e < E) offsets[e + 1] = sc[e];
  if (e == 0) offsets[0] = 0;
}

// Pass 3: each thread walks the chunk's entries in order and places those of its experts.
__global__ void group_place_kernel(const int32_t* __restrict__ sel, int64_t N, int E, int k,
                                   const int32_t* __restrict__ chunk_first, const int64_t* __restrict__ offsets,
                                   int32_t* __restrict__ order_tok, int32_t* __restrict__ order_slot,
                                   int32_t* __restrict__ row_of) {
  __shared__ int32_t es[kChunk * kMaxRouteK];
  const int n = load_chunk(sel, N, k, es);
  for (int e = int(threadIdx.x); e < E; e += int(blockDim.x)) {
    int64_t r = offsets[e] + chunk_first[int64_t(blockIdx.x) * E + e];
    for (int q = 0; q < n; ++q)
      if (es[q] == e) {
        const int64_t entry = int64_t(blockIdx.x) * kChunk * k + q;
        order_tok[r] = int32_t(entry / k);
        order_slot[r] = int32_t(entry % k);
        row_of[entry] = int32_t(r);
        ++r;
      }
  }
}

__global__ void gather_kernel(const float* __restrict__ x, const float* __restrict__ w,
                              const int32_t* __restrict__ order_tok, const int32_t* __restrict__ order_slot, int k,
                              int64_t d, float* __restrict__ xg, float* __restrict__ wl, bool vec4) {
  const int64_t r = blockIdx.x, tok = order_tok[r];
  if (threadIdx.x == 0 && wl) wl[r] = w[tok * k + order_slot[r]];
  if (vec4) {
    const float4* src = reinterpret_cast<const float4*>(x + tok * d);
    float4* dst = reinterpret_cast<float4*>(xg + r * d);
    for (int64_t j = threadIdx.x; j < d / 4; j += blockDim.x) dst[j] = src[j];
  } else {
    for (int64_t j = threadIdx.x; j < d; j += blockDim.x) xg[r * d + j] = x[tok * d + j];
  }
}

__global__ void combine_kernel(const int32_t* __restrict__ row_of, int k, int64_t d, const float* __restrict__ rows,
                               float* __restrict__ out, bool vec4) {
  __shared__ int32_t rs[kMaxRouteK];
  const int64_t i = blockIdx.x;
  if (threadIdx.x == 0) {  // the token's rows in increasing order (insertion sort of k distinct rows)
    for (int j = 0; j < k; ++j) {
      const int32_t r = row_of[i * k + j];
      int p = j;
      for (; p > 0 && rs[p - 1] > r; --p) rs[p] = rs[p - 1];
      rs[p] = r;
    }
  }
  __syncthreads();
  if (vec4) {
    float4* o = reinterpret_cast<float4*>(out + i * d);
    for (int64_t j = threadIdx.x; j < d / 4; j += blockDim.x) {
      float4 v = o[j];
      for (int n = 0; n < k; ++n) {
        const float4 y = reinterpret_cast<const float4*>(rows + int64_t(rs[n]) * d)[j];
        v.x += y.x, v.y += y.y, v.z += y.z, v.w += y.w;
      }
      o[j] = v;
    }
  } else {
    for (int64_t j = threadIdx.x; j < d; j += blockDim.x) {
      float v = out[i * d + j];
      for (int n = 0; n < k; ++n) v += rows[int64_t(rs[n]) * d + j];
      out[i * d + j] = v;
    }
  }
}

// Balance pass 1, block (chunk c, sequence b): each token's affinity sum (a warp each, fixed order), then per
// expert the chunk's share of P_b[e] (tokens in order, a / A / T as the CPU) and of cnt_b[e].
__global__ void balance_partial_kernel(const float* __restrict__ a, const int32_t* __restrict__ sel, int64_t T,
                                       int E, int k, double* __restrict__ part_p, int32_t* __restrict__ part_c) {
  __shared__ double asum[kChunk];
  __shared__ int32_t es[kChunk * kMaxRouteK];
  const int64_t chunks = gridDim.x, c = blockIdx.x, b = blockIdx.y;
  const int64_t i0 = b * T + c * kChunk;
  const int nt = int(min(int64_t(kChunk), T - c * kChunk));
  const int lane = int(threadIdx.x & 31), wid = int(threadIdx.x >> 5), warps = int(blockDim.x >> 5);
  for (int t = wid; t < nt; t += warps) {
    double p = 0;
    for (int e = lane; e < E; e += 32) p += a[(i0 + t) * E + e];
    p = warp_sum(p);
    if (lane == 0) asum[t] = p;
  }
  for (int q = int(threadIdx.x); q < nt * k; q += int(blockDim.x)) es[q] = sel[i0 * k + q];
  __syncthreads();
  for (int e = int(threadIdx.x); e < E; e += int(blockDim.x)) {
    double p = 0;
    for (int t = 0; t < nt; ++t) p += a[(i0 + t) * E + e] / asum[t] / double(T);
    int cnt = 0;
    for (int q = 0; q < nt * k; ++q) cnt += es[q] == e;
    part_p[(b * chunks + c) * E + e] = p;
    part_c[(b * chunks + c) * E + e] = cnt;
  }
}

// Balance pass 2, block b: the chunks summed in order, the sequence's term summed over the experts.
__global__ void balance_row_kernel(const double* __restrict__ part_p, const int32_t* __restrict__ part_c,
                                   int64_t chunks, int64_t B, int64_t T, int E, int k, double alpha,
                                   double* __restrict__ row_loss, int32_t* __restrict__ seq_counts) {
  const int64_t b = blockIdx.x;
  double row = 0;
  for (int e = int(threadIdx.x); e < E; e += int(blockDim.x)) {
    double P = 0;
    int32_t cnt = 0;
    for (int64_t c = 0; c < chunks; ++c) {
      P += part_p[(b * chunks + c) * E + e];
      cnt += part_c[(b * chunks + c) * E + e];
    }
    seq_counts[b * E + e] = cnt;
    row += double(E) / double(int64_t(k) * T) * double(cnt) * P;
  }
  row = detail::block_reduce(row, detail::Sum{}, 0.0);
  if (threadIdx.x == 0) row_loss[b] = alpha * row / double(B);
}

// One warp per token: lane j < k holds slot j's expert, weight gradient and da term; lanes then cover the experts.
__global__ void route_backward_kernel(const float* __restrict__ scores, const float* __restrict__ a,
                                      const int32_t* __restrict__ sel, const float* __restrict__ dw,
                                      const int32_t* __restrict__ dw_row_of, const int32_t* __restrict__ seq_counts,
                                      int64_t N, int E, int k, float R, int64_t B, int64_t T, double alpha,
                                      float* __restrict__ ds) {
  const int lane = int(threadIdx.x & 31);
  const int64_t i = int64_t(blockIdx.x) * kBackwardWarps + (threadIdx.x >> 5);
  if (i >= N) return;  // the whole warp
  const float* ai = a + i * E;
  int sj = -1;
  float dwj = 0.0f;
  if (lane < k) {
    sj = sel[i * k + lane];
    dwj = dw_row_of ? dw[dw_row_of[i * k + lane]] : dw[i * k + lane];
  }
  float S = 0, dot = 0;  // in slot order, as the CPU
  for (int j = 0; j < k; ++j) {
    const float av = ai[__shfl_sync(kFull, sj, j)];
    S += av;
    dot += __shfl_sync(kFull, dwj, j) * av;
  }
  const float tj = lane < k ? R / S * (dwj - dot / S) : 0.0f;  // d w / d a of slot j, times dw
  const int32_t* cnt = seq_counts ? seq_counts + (i / T) * E : nullptr;
  const double per_count = double(E) / double(int64_t(k) * T);
  double A = 0, fp = 0, coef = 0;
  if (cnt) {
    for (int e = lane; e < E; e += 32) A += ai[e];
    A = warp_sum(A);
    for (int e = lane; e < E; e += 32) fp += double(cnt[e]) * per_count * ai[e] / A;
    fp = warp_sum(fp);
    coef = alpha / (double(B) * double(T) * A);
  }
  for (int base = 0; base < E; base += 32) {
    const int e = base + lane;
    float v = 0.0f;
    for (int j = 0; j < k; ++j) {  // slots in order (a hash row may repeat an expert)
      const int ej = __shfl_sync(kFull, sj, j);
      const float t = __shfl_sync(kFull, tj, j);
      if (ej == e) v += t;
    }
    if (e < E) {
      if (cnt) v += float(coef * (double(cnt[e]) * per_count - fp));
      const float av = ai[e], s = scores[i * E + e];
      const float g = av > 0 ? (1.0f / (1.0f + expf(-s))) / (2.0f * av) : 0.0f;  // nn::sqrt_softplus_grad
      ds[i * E + e] = v * g;
    }
  }
}

void check_route_shape(const char* what, int64_t N, int64_t E, int64_t k) {
  if (N < 0 || E < 1 || E > kMaxRouteExperts || k < 1 || k > kMaxRouteK || k > E)
    throw Error(std::string("cuda::") + what + ": shape N " + std::to_string(N) + ", E " + std::to_string(E) +
                ", k " + std::to_string(k) + " outside N >= 0, 1 <= E <= " + std::to_string(kMaxRouteExperts) +
                ", 1 <= k <= min(E, " + std::to_string(kMaxRouteK) + ")");
}
}  // namespace

void moe_route_forward(const float* scores, const float* bias, const int64_t* tid2eid, const int32_t* tokens,
                       int64_t N, int64_t E, int64_t k, float R, float* a, int32_t* sel, float* w, cudaStream_t s) {
  check_route_shape("moe_route_forward", N, E, k);
  if (N == 0) return;
  const size_t smem = size_t(kRouteWarps) * 2 * size_t(E) * sizeof(float);
  route_forward_kernel<<<unsigned((N + kRouteWarps - 1) / kRouteWarps), kRouteWarps * 32, smem, s>>>(
      scores, bias, tid2eid, tokens, N, int(E), int(k), R, a, sel, w);
  TREX_CUDA_CHECK_LAUNCH();
}

void moe_group_rows(const int32_t* sel, int64_t N, int64_t E, int64_t k, int64_t* counts, int64_t* offsets,
                    int32_t* order_tok, int32_t* order_slot, int32_t* row_of, DeviceArena& scratch, cudaStream_t s) {
  check_route_shape("moe_group_rows", N, E, k);
  const int64_t chunks = (N + kChunk - 1) / kChunk;
  const DeviceArena::Mark m = scratch.mark();
  int32_t* chunk_counts = scratch.ints(chunks * E > 0 ? chunks * E : 1);
  if (chunks > 0) {
    group_count_kernel<<<unsigned(chunks), kChunkThreads, 0, s>>>(sel, N, int(E), int(k), chunk_counts);
    TREX_CUDA_CHECK_LAUNCH();
  }
  group_scan_kernel<<<1, unsigned(kMaxRouteExperts), 0, s>>>(chunk_counts, chunks, int(E), counts, offsets);
  TREX_CUDA_CHECK_LAUNCH();
  if (chunks > 0) {
    group_place_kernel<<<unsigned(chunks), kChunkThreads, 0, s>>>(sel, N, int(E), int(k), chunk_counts, offsets,
                                                                   order_tok, order_slot, row_of);
    TREX_CUDA_CHECK_LAUNCH();
  }
  scratch.release(m);  // stream-ordered: a later allocation's kernels queue after these on the same stream
}

void moe_counts_to_host(const int64_t* counts, int64_t E, int64_t* host_counts, cudaStream_t s) {
  if (E > 0)
    TREX_CUDA_CHECK(cudaMemcpyAsync(host_counts, counts, size_t(E) * sizeof(int64_t), cudaMemcpyDeviceToHost, s));
  TREX_CUDA_CHECK(cudaStreamSynchronize(s));
}

void moe_gather_rows(const float* x, const float* w, const int32_t* order_tok, const int32_t* order_slot,
                     int64_t rows, int64_t k, int64_t d, float* xg, float* wl, cudaStream_t s) {
  if (rows <= 0) return;
  const bool vec4 = d % 4 == 0 && reinterpret_cast<uintptr_t>(x) % 16 == 0 && reinterpret_cast<uintptr_t>(xg) % 16 == 0;
  const bool weights = w && wl;
  gather_kernel<<<unsigned(rows), kRowThreads, 0, s>>>(x, weights ? w : nullptr, order_tok, order_slot, int(k), d, xg,
                                                       weights ? wl : nullptr, vec4);
  TREX_CUDA_CHECK_LAUNCH();
}

void moe_scatter_add_rows(const int32_t* row_of, int64_t N, int64_t k, int64_t d, const float* rows, float* out,
                          cudaStream_t s) {
  if (N <= 0) return;
  if (k < 1 || k > kMaxRouteK) throw Error("cuda::moe_scatter_add_rows: k " + std::to_string(k) + " outside [1, 32]");
  const bool vec4 =
      d % 4 == 0 && reinterpret_cast<uintptr_t>(rows) % 16 == 0 && reinterpret_cast<uintptr_t>(out) % 16 == 0;
  combine_kernel<<<unsigned(N), kRowThreads, 0, s>>>(row_of, int(k), d, rows, out, vec4);
  TREX_CUDA_CHECK_LAUNCH();
}

void moe_balance_loss(const float* a, const int32_t* sel, int64_t B, int64_t T, int64_t E, int64_t k, double alpha,
                      double* row_loss, int32_t* seq_counts, DeviceArena& scratch, cudaStream_t s) {
  check_route_shape("moe_balance_loss", B * T, E, k);
  if (B <= 0 || T <= 0) return;
  const int64_t chunks = (T + kChunk - 1) / kChunk;
  const DeviceArena::Mark m = scratch.mark();
  double* part_p = scratch.doubles(B * chunks * E);
  int32_t* part_c = scratch.ints(B * chunks * E);
  balance_partial_kernel<<<dim3(unsigned(chunks), unsigned(B)), kChunkThreads, 0, s>>>(a, sel, T, int(E), int(k),
                                                                                      part_p, part_c);
  TREX_CUDA_CHECK_LAUNCH();
  balance_row_kernel<<<unsigned(B), kChunkThreads, 0, s>>>(part_p, part_c, chunks, B, T, int(E), int(k), alpha,
                                                           row_loss, seq_counts);
  TREX_CUDA_CHECK_LAUNCH();
  scratch.release(m);
}

void moe_route_backward(const float* scores, const float* a, const int32_t* sel, const float* dw,
                        const int32_t* dw_row_of, const int32_t* seq_counts, int64_t N, int64_t E, int64_t k, float R,
                        int64_t B, int64_t T, double alpha, float* ds, cudaStream_t s) {
  check_route_shape("moe_route_backward", N, E, k);
  if (N == 0) return;
  if (seq_counts && (T <= 0 || B * T != N))
    throw Error("cuda::moe_route_backward: the balance term needs N = B T (N " + std::to_string(N) + ", B " +
                std::to_string(B) + ", T " + std::to_string(T) + ")");
  route_backward_kernel<<<unsigned((N + kBackwardWarps - 1) / kBackwardWarps), kBackwardWarps * 32, 0, s>>>(
      scores, a, sel, dw, dw_row_of, seq_counts, N, int(E), int(k), R, B, T, alpha, ds);
  TREX_CUDA_CHECK_LAUNCH();
}

}  // namespace trex::cuda
