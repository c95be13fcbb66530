// Element-wise and row-wise kernels on the device, the CUDA twins of nn/ops.hpp (same arguments and semantics,
// device pointers, queued on a stream): bf16 rounding of GEMM operands, RMSNorm, RoPE, limited SwiGLU, the mHC
// Sinkhorn, softmax cross-entropy and the row-wise top-k, forward and backward. The CPU's readable references
// (nn::*_ref; for the Sinkhorn nn::sinkhorn_*_batch and a double twin; nn::topk_lower_index) are the oracle:
// tests/cuda/ compares every one of these against them on the same inputs. Deterministic: no floating-point
// atomics; every sum has a fixed order for a given shape (the same bits on every run); the top-k counts with
// integer atomics, whose result does not depend on their order. CUDA builds only (the kernels are the .cu files).
#pragma once
#include <cuda_runtime_api.h>

#include <cstdint>

#include "cuda/arena.hpp"

namespace trex::cuda {

// out[i] = nn::float_to_bf16(x[i]): round to nearest even, NaN stays a quiet NaN, denormals become a signed zero.
void round_to_bf16(const float* x, uint16_t* out, int64_t n, cudaStream_t s);

// RMSNorm, y = x * rstd * w (w null: weightless), rstd = (mean(x^2) + eps)^-1/2, one block per row.
void rmsnorm_forward(const float* x, const float* w, float* y, float* rstd, int64_t rows, int64_t dim, float eps,
                     cudaStream_t s);
// dx = (accumulate ? dx : 0) + d/dx; dw += d/dw (if w and dw): per-chunk column partials in `scratch` (released
// before returning), summed in chunk order.
void rmsnorm_backward(const float* x, const float* w, const float* rstd, const float* dy, float* dx, float* dw,
                      int64_t rows, int64_t dim, bool accumulate, DeviceArena& scratch, cudaStream_t s);

// RoPE on x [n, heads, head_dim]: the interleaved pairs of the last r dims rotated by the table row pos[i]
// (cos, sin: [max_pos, r/2], nn::RopeTable's floats uploaded); inverse rotates by -angle (the backward).
void rope_apply(float* x, int64_t n, int64_t heads, int64_t head_dim, const int32_t* pos, const float* cos,
                const float* sin, int64_t r, bool inverse, cudaStream_t s);

// Limited SwiGLU h = silu(min(g, L)) * clamp(u, -L, L) (limit <= 0: no clamp), and its backward (dg, du
// overwritten; 0 where a clamp is active).
void swiglu_forward(const float* g, const float* u, float* h, int64_t n, float limit, cudaStream_t s);
void swiglu_backward(const float* g, const float* u, const float* dh, float* dg, float* du, int64_t n, float limit,
                     cudaStream_t s);

// mHC Sinkhorn, nn::sinkhorn_forward_batch / sinkhorn_backward_batch's contract: `count` n x n matrices (n <= 8;
// matrix t of a at a + t * a_stride, likewise m, dm, da), M = the Sinkhorn iteration of softmax_row(A) + eps;
// the backward recomputes the iterates (in `scratch`, sinkhorn_backward_scratch_bytes, released before returning)
// and overwrites dA. One thread per matrix; iters >= 1.
void sinkhorn_forward(const float* a, int64_t a_stride, float* m, int64_t m_stride, int64_t count, int n, int iters,
                      float eps, cudaStream_t s);
void sinkhorn_backward(const float* a, int64_t a_stride, const float* dm, int64_t dm_stride, float* da,
                       int64_t da_stride, int64_t count, int n, int iters, float eps, DeviceArena& scratch,
                       cudaStream_t s);
size_t sinkhorn_backward_scratch_bytes(int64_t count, int n, int iters);

// Softmax cross-entropy, nn::softmax_xent's contract: row i's loss scale * (lse - logit[target]) into
// row_loss[i] (double; 0 for target < 0), dlogits = scale * (softmax - onehot) (may alias logits) or, when
// dlogits_bf16 is given, that gradient rounded to bf16 there instead (dlogits unused). One block per row.
void softmax_xent(const float* logits, const int32_t* target, float* dlogits, double* row_loss, int64_t rows,
                  int64_t vocab, float scale, uint16_t* dlogits_bf16, cudaStream_t s);
// Top-k per row, nn::topk_lower_index's selection and order (score descending, ties to the lower index): row i's
// scores at scores + i * stride, its first n[i] entries (n null: `cols` each) considered; out[i * k + j] = base[i]
// (null: 0) + the j-th selected index, -1 for j >= min(k, n[i]). Scores must not be NaN; -0 equals +0 as on the
// CPU. k <= kMaxTopk (2048; trex::Error otherwise). One block per row (topk.cu).
constexpr int64_t kMaxTopk = 2048;
void topk_rows(const float* scores, int64_t rows, int64_t cols, int64_t stride, const int32_t* n, const int32_t* base,
               int64_t k, int32_t* out, cudaStream_t s);

// The loss: row_loss copied to the host (waits for the stream) and summed in row order, as the CPU does.
double sum_row_losses(const double* row_loss, int64_t rows, cudaStream_t s);

}  // namespace trex::cuda
