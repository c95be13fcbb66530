// mHC's arithmetic around the mix GEMM and the Sinkhorn on the device (hc.hpp).
//
// Every per-token kernel is one 256-thread block per token (n <= 8 streams of d floats: up to 57 K floats a token
// at the largest preset), the stream count a template parameter so that each thread keeps its n (and hc_post's
// backward its n + n²) running sums in registers. Thread i walks the columns i, i + 256, ... of the token's rows
// (coalesced); a sum over columns is each thread's sum in that order, then the warps' xor-shuffle trees, then the 8
// warp values added in warp order by one thread: a fixed order for a given d (rho's over nd: columns in groups of 4,
// group g by thread g mod 256, the same order whether the loads are float4 or scalar). Sums over streams run k (or
// j) in increasing order, as the CPU's loops.
//
// The gate-parameter gradients, gbase[k] += Σ_t dz and gsc[group] += Σ_t dz mix over all N tokens, without atomics:
// one block per chunk of nn::kHcGradChunk tokens, thread k summing its logit's chunk in token order (pb, ps), one
// thread per group then summing that chunk's ps over the group's logits in order; a last single block sums the chunk
// partials in chunk order and adds them into the gradients (nn::hc_gate_param_grads_chunked is this order on the
// CPU). Everything else is per token. expf / sqrtf / division are CUDA's IEEE ones (no fast math), so the sigmoids
// are within 2 ulp of the CPU's and not its bits; hc_cases.cpp states the bounds.
#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

#include <fmt/format.h>

#include "cuda/bf16.cuh"
#include "cuda/check.hpp"
#include "cuda/hc.hpp"
#include "nn/hc.hpp"
#include "util/error.hpp"

namespace trex::cuda {

namespace {
constexpr int kThreads = 256;  // per-token kernels: 8 warps
constexpr int kWarps = kThreads / 32;
constexpr int kChunkThreads = 128;  // chunk and final kernels: one thread per logit (nout <= 80) and group
static_assert((2 + kMaxHcMult) * kMaxHcMult + 3 <= kChunkThreads, "one thread per logit and per gate group");

size_t aligned(size_t b) { return (b + DeviceArena::kAlign - 1) / DeviceArena::kAlign * DeviceArena::kAlign; }
int64_t chunks_of(int64_t N) { return (N + nn::kHcGradChunk - 1) / nn::kHcGradChunk; }

void validate(const char* what, int64_t N, int n, int64_t d) {
  if (N < 0 || n < 1 || n > kMaxHcMult || d < 1)
    throw Error(fmt::format("{}: unsupported shape N {} n {} (1 .. {}) d {}", what, N, n, kMaxHcMult, d));
}

// f(std::integral_constant<int, n>) for the runtime n (1 .. kMaxHcMult, validated).
template <class F>
void with_streams(int n, F&& f) {
  switch (n) {
    case 1: f(std::integral_constant<int, 1>{}); break;
    case 2: f(std::integral_constant<int, 2>{}); break;
    case 3: f(std::integral_constant<int, 3>{}); break;
    case 4: f(std::integral_constant<int, 4>{}); break;
    case 5: f(std::integral_constant<int, 5>{}); break;
    case 6: f(std::integral_constant<int, 6>{}); break;
    case 7: f(std::integral_constant<int, 7>{}); break;
    default: f(std::integral_constant<int, 8>{}); break;
  }
}

__device__ __forceinline__ float sigm(float x) { return 1.0f / (1.0f + expf(-x)); }
__device__ __forceinline__ int gate_group(int k, int n) { return k < n ? 0 : (k < 2 * n ? 1 : 2); }

__device__ __forceinline__ float warp_sum(float v) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

// The V per-thread sums v[] reduced over the block: each warp's xor tree, then the warp values in warp order;
// thread j < V returns total j (the others return 0). part: shared [kWarps * V]. Ends with the block synchronised
// after its last read of part.
template <int V>
__device__ float block_sums(const float (&v)[V], float* part) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
#pragma unroll
  for (int j = 0; j < V; ++j) {
    const float w = warp_sum(v[j]);
    if (lane == 0) part[warp * V + j] = w;
  }
  __syncthreads();
  float r = 0;
  if (int(threadIdx.x) < V)
    for (int w = 0; w < kWarps; ++w) r += part[w * V + threadIdx.x];
  __syncthreads();
  return r;
}

// ------------------------------------------------------------------ rho (+ the bf16 copy)
__global__ void mix_rho_kernel(const float* X, int64_t nd, float eps, float* rho, uint16_t* X16, bool vec) {
  __shared__ float part[kWarps];
  const int64_t t = blockIdx.x;
  const float* x = X + t * nd;
  uint16_t* x16 = X16 ? X16 + t * nd : nullptr;
  float ss = 0;
  for (int64_t g = threadIdx.x; g * 4 < nd; g += kThreads) {  // column group g: columns 4g .. 4g + 3
    float v[4];
    if (vec) {
      const float4 q = reinterpret_cast<const float4*>(x)[g];
      v[0] = q.x, v[1] = q.y, v[2] = q.z, v[3] = q.w;
    } else {
#pragma unroll
      for (int e = 0; e < 4; ++e) v[e] = 4 * g + e < nd ? x[4 * g + e] : 0.0f;
    }
#pragma unroll
    for (int e = 0; e < 4; ++e) ss += v[e] * v[e];
    if (x16) {
      if (vec) {
        ushort4 b;
        b.x = detail::to_bf16(v[0]), b.y = detail::to_bf16(v[1]), b.z = detail::to_bf16(v[2]), b.w = detail::to_bf16(v[3]);
        reinterpret_cast<ushort4*>(x16)[g] = b;
      } else {
        for (int e = 0; e < 4; ++e)
          if (4 * g + e < nd) x16[4 * g + e] = detail::to_bf16(v[e]);
      }
    }
  }
  const float tot[1] = {ss};
  const float s = block_sums<1>(tot, part);
  if (threadIdx.x == 0) rho[t] = 1.0f / sqrtf(s / float(nd) + eps);
}

// ------------------------------------------------------------------ gates forward (hc_pre, hc_head)
// nout = (2 + NH) NH with post and A (hc_pre), or NH without (hc_head); y = Σ_k pre_k X_k.
template <int NH>
__global__ void gates_forward_kernel(const float* X, const float* raw, const float* rho, int nout, int64_t d,
                                     const float* base, const float* sc, float heps, float* mix, float* pre,
                                     float* post, float* A, float* y) {
  __shared__ float p[NH];
  const int64_t t = blockIdx.x;
  const int k = threadIdx.x;
  if (k < nout) {
    const float m = raw[t * nout + k] * rho[t];
    mix[t * nout + k] = m;
    const int g = gate_group(k, NH);
    if (g == 0) {
      const float v = sigm(sc[0] * m + base[k]) + heps;
      pre[t * NH + k] = v;
      p[k] = v;
    } else if (g == 1) {
      post[t * NH + k - NH] = 2.0f * sigm(sc[1] * m + base[k]);
    } else {
      A[t * NH * NH + k - 2 * NH] = sc[2] * m + base[k];
    }
  }
  __syncthreads();
  const float* xt = X + t * NH * d;
  for (int64_t i = threadIdx.x; i < d; i += kThreads) {
    float s = 0;
#pragma unroll
    for (int j = 0; j < NH; ++j) s += p[j] * xt[j * d + i];
    y[t * d + i] = s;
  }
}

// ------------------------------------------------------------------ hc_post
template <int NH>
__global__ void post_forward_kernel(const float* F, const float* X, const float* post, const float* M, int64_t d,
                                    float* Xout) {
  __shared__ float m[NH * NH], pk[NH];
  const int64_t t = blockIdx.x;
  if (threadIdx.x < NH * NH) m[threadIdx.x] = M[t * NH * NH + threadIdx.x];
  if (threadIdx.x < NH) pk[threadIdx.x] = post[t * NH + threadIdx.x];
  __syncthreads();
  const float* xt = X + t * NH * d;
  float* o = Xout + t * NH * d;
  for (int64_t i = threadIdx.x; i < d; i += kThreads) {
    float x[NH];
#pragma unroll
    for (int j = 0; j < NH; ++j) x[j] = xt[j * d + i];
    const float f = F[t * d + i];
#pragma unroll
    for (int k = 0; k < NH; ++k) {
      float v = pk[k] * f;
#pragma unroll
      for (int j = 0; j < NH; ++j) v += m[j * NH + k] * x[j];  // X'_k += M_jk X_j
      o[k * d + i] = v;
    }
  }
}

// dF, dX per column; dpost_k = Σ_i g_k F and dM_jk = Σ_i g_k X_j as NH + NH² block sums.
template <int NH>
__global__ void post_backward_kernel(const float* F, const float* X, const float* post, const float* M,
                                     const float* dXout, int64_t d, float* dF, float* dpost, float* dM, float* dX) {
  constexpr int V = NH + NH * NH;
  __shared__ float m[NH * NH], pk[NH], part[kWarps * V];
  const int64_t t = blockIdx.x;
  if (threadIdx.x < NH * NH) m[threadIdx.x] = M[t * NH * NH + threadIdx.x];
  if (threadIdx.x < NH) pk[threadIdx.x] = post[t * NH + threadIdx.x];
  __syncthreads();
  const float* xt = X + t * NH * d;
  const float* gt = dXout + t * NH * d;
  float* dxt = dX + t * NH * d;
  float acc[V];  // [0, NH): dpost_k; NH + j NH + k: dM_jk
#pragma unroll
  for (int v = 0; v < V; ++v) acc[v] = 0;
  for (int64_t i = threadIdx.x; i < d; i += kThreads) {
    float g[NH], x[NH];
#pragma unroll
    for (int k = 0; k < NH; ++k) g[k] = gt[k * d + i], x[k] = xt[k * d + i];
    const float f = F[t * d + i];
    float df = 0;
#pragma unroll
    for (int k = 0; k < NH; ++k) {
      df += pk[k] * g[k];
      acc[k] += g[k] * f;
    }
    dF[t * d + i] = df;
#pragma unroll
    for (int j = 0; j < NH; ++j) {
      float dx = dxt[j * d + i];
#pragma unroll
      for (int k = 0; k < NH; ++k) {
        acc[NH + j * NH + k] += g[k] * x[j];
        dx += m[j * NH + k] * g[k];
      }
      dxt[j * d + i] = dx;
    }
  }
  const float r = block_sums<V>(acc, part);
  if (int(threadIdx.x) < NH) dpost[t * NH + threadIdx.x] = r;
  else if (int(threadIdx.x) < V) dM[t * NH * NH + threadIdx.x - NH] = r;
}

// ------------------------------------------------------------------ gates backward (hc_pre with dpost, hc_head without)
template <int NH>
__global__ void gates_backward_kernel(const float* X, const float* mix, const float* pre, const float* dy,
                                      const float* dpost, int nout, int64_t d, const float* base, const float* sc,
                                      float heps, float* dz, float* dX) {
  __shared__ float pk[NH], part[kWarps * NH];
  const int64_t t = blockIdx.x;
  if (threadIdx.x < NH) pk[threadIdx.x] = pre[t * NH + threadIdx.x];
  __syncthreads();
  const float* xt = X + t * NH * d;
  const float* gy = dy + t * d;
  float* dxt = dX + t * NH * d;
  float acc[NH];
#pragma unroll
  for (int k = 0; k < NH; ++k) acc[k] = 0;
  for (int64_t i = threadIdx.x; i < d; i += kThreads) {
    const float g = gy[i];
#pragma unroll
    for (int k = 0; k < NH; ++k) {
      acc[k] += g * xt[k * d + i];
      dxt[k * d + i] += pk[k] * g;
    }
  }
  const float dpre = block_sums<NH>(acc, part);
  const int k = threadIdx.x;
  if (k < NH) {
    const float sp = pk[k] - heps;  // the sigmoid value
    dz[t * nout + k] = dpre * sp * (1 - sp);
    if (dpost) {
      const float so = sigm(sc[1] * mix[t * nout + NH + k] + base[NH + k]);
      dz[t * nout + NH + k] = dpost[t * NH + k] * 2.0f * so * (1 - so);
    }
  }
}

// ------------------------------------------------------------------ gate backward: draw, coef, token sums
// A warp per token: dmix = dz sc, draw = dmix rho, drho = Σ_k dmix raw (lanes' strided sums, the xor tree).
__global__ void gate_draw_kernel(const float* dz, const float* raw, const float* rho, int64_t N, int n, int nout,
                                 int64_t nd, const float* sc, float* draw, float* coef) {
  const int64_t t = int64_t(blockIdx.x) * kWarps + (threadIdx.x >> 5);
  const int lane = threadIdx.x & 31;
  if (t >= N) return;  // a whole warp leaves together
  const float r = rho[t];
  float drho = 0;
  for (int k = lane; k < nout; k += 32) {
    const float dmix = dz[t * nout + k] * sc[gate_group(k, n)];
    draw[t * nout + k] = dmix * r;
    drho += dmix * raw[t * nout + k];
  }
  drho = warp_sum(drho);
  if (lane == 0) coef[t] = -drho * r * r * r / float(nd);  // d rho / d x_i = -rho^3 x_i / nd
}

// Block c: pb[c][k] = Σ_t dz, and the group sums Σ_{k of g} (Σ_t dz mix) into pg[c][g], tokens in order.
__global__ void gate_chunk_kernel(const float* dz, const float* mix, int64_t N, int n, int nout, int groups,
                                  float* pb, float* pg) {
  __shared__ float ps[kChunkThreads];
  const int64_t c = blockIdx.x, t0 = c * nn::kHcGradChunk;
  const int64_t t1 = t0 + nn::kHcGradChunk < N ? t0 + nn::kHcGradChunk : N;
  const int k = threadIdx.x;
  if (k < nout) {
    float b = 0, s = 0;
    for (int64_t t = t0; t < t1; ++t) {
      const float v = dz[t * nout + k];
      b += v;
      s += v * mix[t * nout + k];
    }
    pb[c * nout + k] = b;
    ps[k] = s;
  }
  __syncthreads();
  if (k < groups) {
    float s = 0;
    for (int j = 0; j < nout; ++j)
      if (gate_group(j, n) == k) s += ps[j];
    pg[c * groups + k] = s;
  }
}

// One block: the chunk partials in chunk order, added into the gradients (threads [0, nout) gbase,
// [nout, nout + groups) gsc).
__global__ void gate_final_kernel(const float* pb, const float* pg, int64_t chunks, int nout, int groups,
                                  float* gbase, float* gsc) {
  const int k = threadIdx.x;
  if (k < nout) {
    float b = 0;
    for (int64_t c = 0; c < chunks; ++c) b += pb[c * nout + k];
    gbase[k] += b;
  } else if (k < nout + groups) {
    const int g = k - nout;
    float s = 0;
    for (int64_t c = 0; c < chunks; ++c) s += pg[c * groups + g];
    gsc[g] += s;
  }
}

__global__ void mix_add_kernel(const float* coef, const float* X, int64_t nd, float* dX) {
  const int64_t t = blockIdx.x;
  const float c = coef[t];
  for (int64_t i = threadIdx.x; i < nd; i += kThreads) dX[t * nd + i] += c * X[t * nd + i];
}

bool aligned_to(const void* p, uintptr_t a) { return reinterpret_cast<uintptr_t>(p) % a == 0; }
}  // namespace

void hc_mix_rho(const float* X, int64_t N, int64_t nd, float eps, float* rho, uint16_t* X16, cudaStream_t s) {
  if (N < 0 || nd < 1) throw Error(fmt::format("hc_mix_rho: unsupported shape N {} nd {}", N, nd));
  if (N == 0) return;
  const bool vec = nd % 4 == 0 && aligned_to(X, 16) && (!X16 || aligned_to(X16, 8));
  mix_rho_kernel<<<unsigned(N), kThreads, 0, s>>>(X, nd, eps, rho, X16, vec);
  TREX_CUDA_CHECK_LAUNCH();
}

void hc_pre_forward(const float* X, const float* raw, const float* rho, int64_t N, int n, int64_t d,
                    const float* base, const float* scale, float heps, float* mix, float* pre, float* post, float* A,
                    float* y, cudaStream_t s) {
  validate("hc_pre_forward", N, n, d);
  if (N == 0) return;
  with_streams(n, [&](auto nh) {
    constexpr int NH = decltype(nh)::value;
    gates_forward_kernel<NH><<<unsigned(N), kThreads, 0, s>>>(X, raw, rho, (2 + NH) * NH, d, base, scale, heps, mix,
                                                              pre, post, A, y);
  });
  TREX_CUDA_CHECK_LAUNCH();
}

void hc_head_forward(const float* X, const float* raw, const float* rho, int64_t N, int n, int64_t d,
                     const float* base, const float* scale, float heps, float* mix, float* pre, float* h,
                     cudaStream_t s) {
  validate("hc_head_forward", N, n, d);
  if (N == 0) return;
  with_streams(n, [&](auto nh) {
    constexpr int NH = decltype(nh)::value;
    gates_forward_kernel<NH><<<unsigned(N), kThreads, 0, s>>>(X, raw, rho, NH, d, base, scale, heps, mix, pre,
                                                              nullptr, nullptr, h);
  });
  TREX_CUDA_CHECK_LAUNCH();
}

void hc_post_forward(const float* F, const float* X, const float* post, const float* M, int64_t N, int n, int64_t d,
                     float* Xout, cudaStream_t s) {
  validate("hc_post_forward", N, n, d);
  if (N == 0) return;
  with_streams(n, [&](auto nh) {
    constexpr int NH = decltype(nh)::value;
    post_forward_kernel<NH><<<unsigned(N), kThreads, 0, s>>>(F, X, post, M, d, Xout);
  });
  TREX_CUDA_CHECK_LAUNCH();
}

void hc_post_backward(const float* F, const float* X, const float* post, const float* M, const float* dXout,
                      int64_t N, int n, int64_t d, float* dF, float* dpost, float* dM, float* dX, cudaStream_t s) {
  validate("hc_post_backward", N, n, d);
  if (N == 0) return;
  with_streams(n, [&](auto nh) {
    constexpr int NH = decltype(nh)::value;
    post_backward_kernel<NH><<<unsigned(N), kThreads, 0, s>>>(F, X, post, M, dXout, d, dF, dpost, dM, dX);
  });
  TREX_CUDA_CHECK_LAUNCH();
}

void hc_pre_backward_gates(const float* X, const float* mix, const float* pre, const float* dy, const float* dpost,
                           int64_t N, int n, int64_t d, const float* base, const float* scale, float heps, float* dz,
                           float* dX, cudaStream_t s) {
  validate("hc_pre_backward_gates", N, n, d);
  if (!dpost) throw Error("hc_pre_backward_gates: dpost is required (hc_head_backward_gates has none)");
  if (N == 0) return;
  with_streams(n, [&](auto nh) {
    constexpr int NH = decltype(nh)::value;
    gates_backward_kernel<NH><<<unsigned(N), kThreads, 0, s>>>(X, mix, pre, dy, dpost, (2 + NH) * NH, d, base, scale,
                                                               heps, dz, dX);
  });
  TREX_CUDA_CHECK_LAUNCH();
}

void hc_head_backward_gates(const float* X, const float* pre, const float* dh, int64_t N, int n, int64_t d,
                            float heps, float* dz, float* dX, cudaStream_t s) {
  validate("hc_head_backward_gates", N, n, d);
  if (N == 0) return;
  with_streams(n, [&](auto nh) {
    constexpr int NH = decltype(nh)::value;
    gates_backward_kernel<NH><<<unsigned(N), kThreads, 0, s>>>(X, nullptr, pre, dh, nullptr, NH, d, nullptr, nullptr,
                                                               heps, dz, dX);
  });
  TREX_CUDA_CHECK_LAUNCH();
}

size_t hc_gate_backward_scratch_bytes(int64_t N, int nout) {
  const int64_t chunks = chunks_of(N);
  return aligned(size_t(chunks * nout) * sizeof(float)) + aligned(size_t(chunks * 3) * sizeof(float));
}

void hc_gate_backward(const float* dz, const float* mix, const float* raw, const float* rho, int64_t N, int n,
                      int nout, int64_t nd, const float* scale, float* draw, float* coef, float* gbase, float* gsc,
                      DeviceArena& scratch, cudaStream_t s) {
  validate("hc_gate_backward", N, n, 1);
  if (nout != n && nout != (2 + n) * n)
    throw Error(fmt::format("hc_gate_backward: nout {} is neither n {} (hc_head) nor (2 + n) n", nout, n));
  if (N == 0) return;
  const int groups = nout == n ? 1 : 3;
  const int64_t chunks = chunks_of(N);
  const DeviceArena::Mark mark = scratch.mark();
  float* pb = scratch.floats(chunks * nout);
  float* pg = scratch.floats(chunks * groups);
  gate_draw_kernel<<<unsigned((N + kWarps - 1) / kWarps), kThreads, 0, s>>>(dz, raw, rho, N, n, nout, nd, scale,
                                                                             draw, coef);
  TREX_CUDA_CHECK_LAUNCH();
  gate_chunk_kernel<<<unsigned(chunks), kChunkThreads, 0, s>>>(dz, mix, N, n, nout, groups, pb, pg);
  TREX_CUDA_CHECK_LAUNCH();
  gate_final_kernel<<<1, kChunkThreads, 0, s>>>(pb, pg, chunks, nout, groups, gbase, gsc);
  TREX_CUDA_CHECK_LAUNCH();
  scratch.release(mark);  // stream order keeps the kernels' reads before any later use of this memory
}

void hc_mix_backward_add(const float* coef, const float* X, int64_t N, int64_t nd, float* dX, cudaStream_t s) {
  if (N < 0 || nd < 1) throw Error(fmt::format("hc_mix_backward_add: unsupported shape N {} nd {}", N, nd));
  if (N == 0) return;
  mix_add_kernel<<<unsigned(N), kThreads, 0, s>>>(coef, X, nd, dX);
  TREX_CUDA_CHECK_LAUNCH();
}

}  // namespace trex::cuda
