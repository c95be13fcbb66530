// Element-wise and row-wise kernels of the DeepSeek-V4 model, forward and backward side by side:
// RMSNorm (weighted and weightless), RoPE (partial, interleaved, YaRN), limited SwiGLU, the mHC Sinkhorn
// projection, sqrt-softplus, and softmax cross-entropy. Each fast kernel (OpenMP over rows, fused) has a
// readable reference (`*_ref`, double accumulation, one row at a time) that the tests compare against.
#pragma once
#include <cstdint>
#include <vector>

namespace trex::nn {

// ---------------- RMSNorm: y = x * rstd * w, rstd = (mean(x^2) + eps)^-1/2; w == nullptr: weightless ----
void rmsnorm_forward(const float* x, const float* w, float* y, float* rstd, int64_t rows, int64_t dim, float eps);
// dx = (accumulate ? dx : 0) + d/dx; dw += d/dw (if w and dw).
void rmsnorm_backward(const float* x, const float* w, const float* rstd, const float* dy, float* dx, float* dw,
                      int64_t rows, int64_t dim, bool accumulate);
void rmsnorm_forward_ref(const float* x, const float* w, float* y, float* rstd, int64_t rows, int64_t dim, float eps);
void rmsnorm_backward_ref(const float* x, const float* w, const float* rstd, const float* dy, float* dx, float* dw,
                          int64_t rows, int64_t dim, bool accumulate);

// ---------------- RoPE (interleaved pairs on the last r dims of each head) ----------------
struct RopeTable {
  int64_t r = 0;          // rotary dims
  int64_t max_pos = 0;    // positions 0..max_pos-1
  std::vector<double> omega;  // r/2 frequencies (after YaRN)
  std::vector<float> cos, sin;  // [max_pos, r/2], computed in double, cast to float (§16.9)
};
// base: rope theta; yarn: apply YaRN with (factor, original_max_pos, beta_fast, beta_slow).
RopeTable make_rope_table(int64_t r, int64_t max_pos, double base, bool yarn, double factor, int64_t original_max_pos,
                          double beta_fast, double beta_slow);
// x: [n, heads, head_dim]; rotates x[i, h, head_dim-r : head_dim] by pos[i] * omega (inverse: by -pos * omega).
// The backward of a rotation is the opposite rotation of the gradient (call with !inverse).
void rope_apply(float* x, int64_t n, int64_t heads, int64_t head_dim, const int32_t* pos, const RopeTable& t,
                bool inverse);
void rope_apply_ref(float* x, int64_t n, int64_t heads, int64_t head_dim, const int32_t* pos, const RopeTable& t,
                    bool inverse);

// ---------------- limited SwiGLU: h = silu(min(g, L)) * clamp(u, -L, L) (limit <= 0: no clamp) ----------
void swiglu_forward(const float* g, const float* u, float* h, int64_t n, float limit);
// dg, du overwritten. Gradient is 0 where a clamp is active (g > L, |u| > L).
void swiglu_backward(const float* g, const float* u, const float* dh, float* dg, float* du, int64_t n, float limit);
void swiglu_forward_ref(const float* g, const float* u, float* h, int64_t n, float limit);
void swiglu_backward_ref(const float* g, const float* u, const float* dh, float* dg, float* du, int64_t n, float limit);

// ---------------- mHC Sinkhorn on an n x n matrix (n <= 8) ----------------
// M = softmax_row(A) + eps, column-normalise, then (iters-1) x (row-normalise, column-normalise); each
// normalisation divides by (sum + eps). Backward recomputes the unrolled iterates (cheap) and returns dA.
void sinkhorn_forward(const float* a, float* m, int n, int iters, float eps);
void sinkhorn_backward(const float* a, const float* dm, float* da, int n, int iters, float eps);
// The same for `count` matrices (matrix t of a at a + t * a_stride, likewise dm, m, da), eight at a time in
// vector lanes, split over the OpenMP threads: each lane does the scalar functions' operations in their order
// (tests/nn/ops_test.cpp: the forward's bits equal, the backward's to float rounding, FMA contraction aside).
void sinkhorn_forward_batch(const float* a, int64_t a_stride, float* m, int64_t m_stride, int64_t count, int n,
                            int iters, float eps);
void sinkhorn_backward_batch(const float* a, int64_t a_stride, const float* dm, int64_t dm_stride, float* da,
                             int64_t da_stride, int64_t count, int n, int iters, float eps);

// ---------------- sqrt-softplus router affinity: a = sqrt(softplus(s)) ----------------
float sqrt_softplus(float s);
float sqrt_softplus_grad(float s, float a);  // sigmoid(s) / (2a)

// ---------------- softmax cross-entropy ----------------
// logits [rows, vocab]; target[i] < 0: ignored row (dlogits row = 0). loss = scale * sum_i -log p_i[target_i];
// dlogits = scale * (softmax - onehot) (written, may alias logits). Returns the loss (double accumulation).
// With dlogits_bf16 the gradient is written there instead, rounded by float_to_bf16 (gemm_bf16.hpp) — the
// operand the bf16 matrix products would have made of the fp32 gradient, in half the bytes — and dlogits is
// not used (may be null).
double softmax_xent(const float* logits, const int32_t* target, float* dlogits, int64_t rows, int64_t vocab,
                    float scale, uint16_t* dlogits_bf16 = nullptr);
double softmax_xent_ref(const float* logits, const int32_t* target, float* dlogits, int64_t rows, int64_t vocab,
                        float scale);

// Top-k of scores[0..n) with ties going to the lower index (§16.4); writes k indices in selection order.
void topk_lower_index(const float* scores, int64_t n, int64_t k, int32_t* out);

}  // namespace trex::nn
