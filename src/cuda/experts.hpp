// Routed experts of an MoE layer on the device, the CUDA twin of nn::experts_forward / experts_backward
// (nn/moe_experts.hpp; DEEPSEEK_V4.md §7): the rows are already grouped by expert, expert e owning rows
// [offsets[e], offsets[e+1]) of x, and for them g = x W1_e^T, u = x W3_e^T, h = limited-SwiGLU(g, u),
// y = (w_row * h) W2_e^T; the backward gives dx, the routing-weight gradient of each row dw, and accumulates the
// experts' weight gradients. One Blas::gemm per product and expert on the caller's stream (experts.cpp says why
// not one grouped call yet), the element-wise work in experts.cu and ops.hpp's SwiGLU.
//
// Operands: GemmType::fp32 (fp32 products) or GemmType::bf16 (every product's operands rounded to bf16 with
// nn::float_to_bf16's bits, fp32 accumulation): the CPU's --matmul bf16 recipe, rounding the same values the CPU
// rounds (x, the weights, w * h; dy, dg, du in the backward). The offsets live on the host (the per-expert counts
// reach the host before this call: the GEMMs are sized by them). Deterministic: no atomics, the same bits on
// every run for the same counts. CUDA builds only. Header kept C++17 (experts.cu includes it; nvcc is C++17).
#pragma once
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "cuda/arena.hpp"
#include "cuda/blas.hpp"

namespace trex::cuda {

// One expert's matrices on the device (nn::ExpertWeights' layout): w1, w3 [f, d], w2 [d, f], fp32 master weights.
// The bf16 copies are optional (GemmType::bf16 only): given, the products read them (the GPU model keeps a bf16
// copy of every matrix, refreshed after each optimizer step); null, the matrix is rounded into scratch before its
// products, with the same bits. g1, g3, g2: the gradients, accumulated by the backward (unused by the forward).
struct DeviceExpertWeights {
  const float *w1 = nullptr, *w3 = nullptr, *w2 = nullptr;
  const uint16_t *w1_bf16 = nullptr, *w3_bf16 = nullptr, *w2_bf16 = nullptr;
  float *g1 = nullptr, *g3 = nullptr, *g2 = nullptr;
};

struct DeviceExpertShape {  // nn::ExpertShape's fields
  int64_t d = 0, f = 0;
  float limit = 0;  // SwiGLU clamp (<= 0: none)
};

// offsets: host array of count + 1 row offsets, offsets[0] = 0, non-decreasing (an expert may have no rows: it is
// skipped). Device arrays: x [rows, d], w [rows] (routing weights); writes g, u, h [rows, f] (kept for the
// backward) and y [rows, d]. Temporaries from `scratch` (experts_scratch_bytes), released before returning.
// Throws trex::Error for bad offsets or a missing bf16 operand, and what Blas::gemm throws.
void experts_forward(Blas& blas, GemmType type, const DeviceExpertWeights* experts, int64_t count,
                     const int64_t* offsets, const DeviceExpertShape& s, const float* x, const float* w, float* g,
                     float* u, float* h, float* y, DeviceArena& scratch, cudaStream_t stream);

// From dy [rows, d]: dx [rows, d] and dw [rows] overwritten, experts[e].g1/g3/g2 accumulated (+=). x, w, g, u, h:
// the forward's inputs and saved values.
void experts_backward(Blas& blas, GemmType type, const DeviceExpertWeights* experts, int64_t count,
                      const int64_t* offsets, const DeviceExpertShape& s, const float* x, const float* w,
                      const float* g, const float* u, const float* h, const float* dy, float* dx, float* dw,
                      DeviceArena& scratch, cudaStream_t stream);

// The scratch either call takes at most, for these offsets (it grows with the busiest expert's rows: the
// temporaries are per expert, reused from one expert to the next) and whether the weights' bf16 copies are missing
// (then three rounded matrices, 6 f d bytes).
size_t experts_scratch_bytes(GemmType type, const int64_t* offsets, int64_t count, const DeviceExpertShape& s,
                             bool rounds_weights);

// The element-wise kernels of the two calls (experts.cu), usable on their own.
// out[r, j] = h[r, j] * w[r] into out_fp32 (if given) and/or, rounded as nn::float_to_bf16, out_bf16 (if given).
void scale_rows(const float* h, const float* w, float* out_fp32, uint16_t* out_bf16, int64_t rows, int64_t f,
                cudaStream_t s);
// Per row r: dw[r] = sum_j dhw[r, j] h[r, j] (one block per row, summed in a fixed order: no atomics), then
// dhw[r, j] *= w[r] in place (it becomes dh, the SwiGLU output's gradient).
void row_dot_then_scale(float* dhw, const float* h, const float* w, float* dw, int64_t rows, int64_t f,
                        cudaStream_t s);

}  // namespace trex::cuda
