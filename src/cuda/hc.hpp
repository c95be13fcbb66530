// mHC on the device (DEEPSEEK_V4.md §6, §13), the CUDA twin of nn/hc.hpp: the arithmetic around the mix GEMM and
// the Sinkhorn. The caller (cuda::Model) runs the products with cuda::Blas and the comb with cuda::sinkhorn_*:
//   forward (hc_pre):  hc_mix_rho (rho, the bf16 copy of X) -> raw = X fnᵀ (GEMM) -> hc_pre_forward (mix, pre,
//                      post, A, y) -> sinkhorn_forward(A -> M);  hc_head: hc_mix_rho -> GEMM -> hc_head_forward
//   hc_post:           hc_post_forward / hc_post_backward
//   backward (hc_pre): hc_pre_backward_gates (dz's pre and post columns, dX += pre gy) -> sinkhorn_backward (dz's
//                      comb columns: da = dz + 2n, da_stride nout) -> hc_gate_backward (draw, coef, gbase, gsc)
//                      -> dfn += drawᵀ X, dX += draw fn (GEMMs) -> hc_mix_backward_add (dX += coef X);
//                      hc_head: hc_head_backward_gates -> hc_gate_backward (nout = n) -> the GEMMs -> the add.
// nn::hc_*_ref are the oracle (tests/cuda/gpu/hc_cases.hpp). n <= kMaxHcMult streams; device pointers (the gate
// parameters base and scale too), one stream. Deterministic without atomics: one block per token for every per-token
// sum (a fixed strided order and block tree), the token sums of gbase / gsc by chunks of nn::kHcGradChunk tokens
// summed in chunk order (hc.cu states the orders). CUDA builds only.
#pragma once
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "cuda/arena.hpp"

namespace trex::cuda {

constexpr int kMaxHcMult = 8;

// rho [N] = 1 / sqrt(Σ_i X_t,i² / nd + eps) from X [N, nd]; X16 (null: none) = X rounded to bf16 in the same pass
// (nn::float_to_bf16's bits).
void hc_mix_rho(const float* X, int64_t N, int64_t nd, float eps, float* rho, uint16_t* X16, cudaStream_t s);

// From raw [N, (2 + n) n] (the GEMM X fnᵀ) and rho: mix [N, nout], pre, post [N, n], A [N, n, n], y [N, d]
// (all overwritten) from X [N, n, d].
void hc_pre_forward(const float* X, const float* raw, const float* rho, int64_t N, int n, int64_t d,
                    const float* base, const float* scale, float heps, float* mix, float* pre, float* post, float* A,
                    float* y, cudaStream_t s);
// hc_head from raw [N, n] and rho: mix, pre [N, n], h [N, d].
void hc_head_forward(const float* X, const float* raw, const float* rho, int64_t N, int n, int64_t d,
                     const float* base, const float* scale, float heps, float* mix, float* pre, float* h,
                     cudaStream_t s);

// Xout [N, n, d] = post_k F + Σ_j M_jk X_j (overwritten; F [N, d], post [N, n], M [N, n, n]).
void hc_post_forward(const float* F, const float* X, const float* post, const float* M, int64_t N, int n, int64_t d,
                     float* Xout, cudaStream_t s);
// From dXout [N, n, d]: dF [N, d], dpost [N, n], dM [N, n, n] overwritten; dX [N, n, d] +=.
void hc_post_backward(const float* F, const float* X, const float* post, const float* M, const float* dXout,
                      int64_t N, int n, int64_t d, float* dF, float* dpost, float* dM, float* dX, cudaStream_t s);

// From dy [N, d], dpost [N, n] and the forward's mix, pre: dz [N, (2 + n) n] columns [0, 2n) overwritten (the comb's
// are the Sinkhorn backward's), dX += pre_k dy.
void hc_pre_backward_gates(const float* X, const float* mix, const float* pre, const float* dy, const float* dpost,
                           int64_t N, int n, int64_t d, const float* base, const float* scale, float heps, float* dz,
                           float* dX, cudaStream_t s);
// hc_head: dz [N, n] overwritten from dh [N, d]; dX += pre_k dh.
void hc_head_backward_gates(const float* X, const float* pre, const float* dh, int64_t N, int n, int64_t d,
                            float heps, float* dz, float* dX, cudaStream_t s);

// Device memory hc_gate_backward takes from `scratch` (released before it returns).
size_t hc_gate_backward_scratch_bytes(int64_t N, int nout);
// From dz [N, nout] (nout (2 + n) n, or n for hc_head): draw = dz sc[group] rho [N, nout] and coef [N] =
// -rho³ Σ_k dz_k sc[group] raw_k / nd overwritten; gbase [nout] += Σ_t dz, gsc [3] (hc_head: [1]) += Σ_t dz mix
// per group, in nn::hc_gate_param_grads_chunked's order.
void hc_gate_backward(const float* dz, const float* mix, const float* raw, const float* rho, int64_t N, int n,
                      int nout, int64_t nd, const float* scale, float* draw, float* coef, float* gbase, float* gsc,
                      DeviceArena& scratch, cudaStream_t s);
// dX [N, nd] += coef[t] X[t].
void hc_mix_backward_add(const float* coef, const float* X, int64_t N, int64_t nd, float* dX, cudaStream_t s);

}  // namespace trex::cuda
