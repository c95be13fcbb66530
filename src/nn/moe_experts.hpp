// Routed experts of an MoE layer on rows already grouped by expert (DEEPSEEK_V4.md §7): for expert e's rows
// x[o_e .. o_{e+1}), g = x W1_e^T, u = x W3_e^T, h = limited-SwiGLU(g, u), y = (w_row * h) W2_e^T, forward and
// backward. The fast path runs the experts as one grouped batch on the OpenMP threads: forward and the input
// gradients as (expert, block of rows) tasks that keep each block's GEMM -> SwiGLU -> GEMM chain in cache, the
// weight gradients as one GEMM per (expert, matrix); OpenBLAS single-threaded inside each task. The reference
// runs the experts one after another through full-size GEMMs and the separate element-wise kernels.
#pragma once
#include <cstdint>
#include <span>

#include "nn/arena.hpp"

namespace trex::nn {

struct ExpertWeights {
  const float *w1 = nullptr, *w3 = nullptr, *w2 = nullptr;  // [f,d], [f,d], [d,f]
  float *g1 = nullptr, *g3 = nullptr, *g2 = nullptr;        // their gradients (accumulated); may be null in forward
};

struct ExpertShape {
  int64_t d = 0, f = 0;
  float limit = 0;  // SwiGLU clamp (<= 0: none)
};

// offsets: [experts.size() + 1] row ranges, offsets[0] = 0; x [rows, d]; w [rows] routing weights. Writes g, u, h [rows, f]
// (saved for backward) and y [rows, d].
void experts_forward(std::span<const ExpertWeights> experts, const int64_t* offsets, const ExpertShape& s,
                     const float* x, const float* w, float* g, float* u, float* h, float* y, Arena& scratch);
void experts_forward_reference(std::span<const ExpertWeights> experts, const int64_t* offsets, const ExpertShape& s,
                               const float* x, const float* w, float* g, float* u, float* h, float* y,
                               Arena& scratch);

// From dy [rows, d]: dx [rows, d] (overwritten), dw [rows] (overwritten: gradient of each row's routing
// weight), and the experts' weight gradients (accumulated). Scratch comes from `scratch` (released after).
void experts_backward(std::span<const ExpertWeights> experts, const int64_t* offsets, const ExpertShape& s,
                      const float* x, const float* w, const float* g, const float* u, const float* h, const float* dy,
                      float* dx, float* dw, Arena& scratch);
void experts_backward_reference(std::span<const ExpertWeights> experts, const int64_t* offsets,
                                const ExpertShape& s, const float* x, const float* w, const float* g, const float* u,
                                const float* h, const float* dy, float* dx, float* dw, Arena& scratch);

}  // namespace trex::nn
