// mHC, manifold-constrained hyper-connections (DEEPSEEK_V4.md §6, §13): the arithmetic around its two GEMMs (the
// mix product raw = X fnᵀ and, backward, dfn += drawᵀ X, dX += draw fn) and its Sinkhorn comb. Per token t, with
// n streams of width d (X_t is n x d, nd = n d), nout gate logits (hc_pre: (2 + n) n, hc_head: n):
//   rho_t = 1 / sqrt(mean_i X_t,i² + eps)  (over nd),   mix_t = raw_t rho_t
//   pre_k = sigmoid(sc0 mix_k + base_k) + heps,   post_k = 2 sigmoid(sc1 mix_{n+k} + base_{n+k}),
//   A_jk = sc2 mix_{2n+jn+k} + base_{2n+jn+k}  (the Sinkhorn's input; its M comes back for hc_post),
//   y = Σ_k pre_k X_k  (hc_pre)  /  h = Σ_k pre_k X_k with pre_k = sigmoid(sc0 mix_k + base_k) + heps  (hc_head)
//   hc_post:  X'_k = post_k F + Σ_j M_jk X_j
// Backward: dz = dL/d(gate pre-activation) (pre: dpre s(1 - s) with dpre_k = gy · X_k, post: dpost 2 s(1 - s), A:
// the Sinkhorn's dA), dmix = dz sc, draw = dmix rho, drho = Σ_k dmix_k raw_k, coef_t = -drho rho³ / nd and
// dX += pre_k gy + coef X (+ the GEMM's draw fn); gbase += Σ_t dz, gsc_j += Σ_t Σ_{k of group j} dz mix.
// Two implementations: the fast path, model/mhc.cpp's loops moved here verbatim (OpenMP over tokens, fp32; the
// model calls them between its GEMMs, arena allocations and Sinkhorn calls), and readable references (`*_ref`:
// every value computed in double from the inputs and rounded once into T; the oracle of the fast path and of
// cuda/hc.hpp). The references are instantiated for float (the oracle) and double (the finite-difference tests).
#pragma once
#include <cstdint>
#include <vector>

namespace trex::nn {

// The gate group of logit k: 0 pre (k < n), 1 post (k < 2n), 2 comb; hc_head's n logits are all group 0.
inline int hc_gate_group(int k, int n) { return k < n ? 0 : (k < 2 * n ? 1 : 2); }

// ------------------------------------------------------------------ fast path (model/mhc.cpp's loops)
// rho [N] from X [N, nd]; X16 (null: none) = X rounded to bf16 in the same pass (nn::round_to_bf16's bits).
void hc_mix_rho(const float* X, int64_t N, int64_t nd, float eps, float* rho, uint16_t* X16);
// mix [N, nout] = raw [N, nout] * rho [N].
void hc_mix_scale(const float* raw, const float* rho, int64_t N, int nout, float* mix);
// From dmix [N, nout]: draw = dmix rho [N, nout], coef [N] = -rho³ Σ_k dmix_k raw_k / nd.
void hc_mix_backward_coef(const float* dmix, const float* raw, const float* rho, int64_t N, int nout, int64_t nd,
                          float* draw, float* coef);
// dX [rows, nd] += coef[t] X[t] for `rows` tokens; serial (the model calls it inside its OpenMP loop over row
// blocks, right after the block's dX += draw fn product).
void hc_mix_backward_add_rows(const float* coef, const float* X, int64_t rows, int64_t nd, float* dX);

// hc_pre's gates from mix [N, (2 + n) n]: pre, post [N, n], A [N, n n], y [N, d] (overwritten) from X [N, n, d].
void hc_pre_gates_forward(const float* X, const float* mix, int64_t N, int n, int64_t d, const float* base,
                          const float* scale, float heps, float* pre, float* post, float* A, float* y);
// From dy [N, d] and dpost [N, n]: dz [N, nout] columns [0, 2n) (the comb's columns are the Sinkhorn backward's),
// dX [N, n, d] += pre_k gy.
void hc_pre_gates_backward(const float* X, const float* mix, const float* pre, const float* dy, const float* dpost,
                           int64_t N, int n, int64_t d, const float* base, const float* scale, float heps, float* dz,
                           float* dX);
// dmix [N, nout] = dz sc[group].
void hc_gate_dmix(const float* dz, int64_t N, int n, int nout, const float* scale, float* dmix);
// gbase [nout] += Σ_t dz, gsc [3] (hc_head: [1]) += Σ_t dz mix per group: serial, tokens in increasing order, each
// token's value added straight into the gradient (the CPU's order).
void hc_gate_param_grads(const float* dz, const float* mix, int64_t N, int n, int nout, float* gbase, float* gsc);

// hc_post: Xout [N, n, d] (overwritten) from F [N, d], X [N, n, d], post [N, n], M [N, n, n].
void hc_post_forward(const float* F, const float* X, const float* post, const float* M, int64_t N, int n, int64_t d,
                     float* Xout);
// From dXout [N, n, d]: dF [N, d], dpost [N, n], dM [N, n, n] overwritten; dX [N, n, d] +=.
void hc_post_backward(const float* F, const float* X, const float* post, const float* M, const float* dXout,
                      int64_t N, int n, int64_t d, float* dF, float* dpost, float* dM, float* dX);

// hc_head from mix [N, n]: pre [N, n], h [N, d] (overwritten).
void hc_head_forward(const float* X, const float* mix, int64_t N, int n, int64_t d, const float* base,
                     const float* scale, float heps, float* pre, float* h);
// From dh [N, d]: dz, dmix [N, n] overwritten, dX += pre_k dh.
void hc_head_backward_gates(const float* X, const float* pre, const float* dh, int64_t N, int n, int64_t d,
                            const float* scale, float heps, float* dz, float* dmix, float* dX);

// ------------------------------------------------------------------ the device's token order, replayed
// Tokens per chunk of cuda/hc's gbase / gsc reduction.
constexpr int64_t kHcGradChunk = 64;
// gbase, gsc += the sums of hc_gate_param_grads in cuda/hc's order, in fp32: per chunk of kHcGradChunk tokens and
// logit k, pb = Σ_t dz, ps = Σ_t dz mix (tokens in order, each product rounded); then gbase[k] += Σ_c pb (chunks
// in order) and gsc[j] += Σ_c (Σ_{k of group j, in order} ps) (chunks in order). hc_test replays it against the
// bound that the gpu check applies.
void hc_gate_param_grads_chunked(const float* dz, const float* mix, int64_t N, int n, int nout, float* gbase,
                                 float* gsc);
// The exact results of hc_gate_param_grads on these fp32 dz, mix and starting gbase, gsc (double sums of the
// exact products) and the bound that order keeps to, per value: each pb / ps is m = min(N, kHcGradChunk) terms
// deep (with the product's rounding), the comb group's sum G (n or n²) and the chunks' C, plus the add into the
// gradient, so |fp32 - exact| <= (m + G + C) u Σ|terms| + u |exact| (Higham's γ, any association of that depth,
// FMA or not); the bound is twice that (base: G = 0). gsc has 3 groups, hc_head's (nout == n) 1.
struct HcGateSums {
  std::vector<double> base, sc, base_bound, sc_bound;
};
HcGateSums hc_gate_param_sums(const float* dz, const float* mix, int64_t N, int n, int nout, const float* gbase,
                              const float* gsc);

// ------------------------------------------------------------------ references (double, one rounding into T)
template <class T>
void hc_mix_rho_ref(const T* X, int64_t N, int64_t nd, double eps, T* rho);
// hc_pre from raw [N, (2 + n) n] and rho: mix, pre, post, A, y.
template <class T>
void hc_pre_forward_ref(const T* X, const T* raw, const T* rho, int64_t N, int n, int64_t d, const T* base,
                        const T* scale, double heps, T* mix, T* pre, T* post, T* A, T* y);
// hc_pre's backward from the forward's mix, pre and dy, dpost, dA [N, n n] (the Sinkhorn backward's): dz [N, nout],
// draw [N, nout], coef [N] overwritten; dX += pre_k gy + coef X (not the GEMM's draw fn); gbase [nout], gsc [3] +=
// the token sums.
template <class T>
void hc_pre_backward_ref(const T* X, const T* raw, const T* rho, const T* mix, const T* pre, const T* dy,
                         const T* dpost, const T* dA, int64_t N, int n, int64_t d, const T* base, const T* scale,
                         double heps, T* dz, T* draw, T* coef, T* dX, T* gbase, T* gsc);
template <class T>
void hc_post_forward_ref(const T* F, const T* X, const T* post, const T* M, int64_t N, int n, int64_t d, T* Xout);
// dF, dpost, dM overwritten, dX +=.
template <class T>
void hc_post_backward_ref(const T* F, const T* X, const T* post, const T* M, const T* dXout, int64_t N, int n,
                          int64_t d, T* dF, T* dpost, T* dM, T* dX);
// hc_head from raw [N, n] and rho: mix, pre, h.
template <class T>
void hc_head_forward_ref(const T* X, const T* raw, const T* rho, int64_t N, int n, int64_t d, const T* base,
                         const T* scale, double heps, T* mix, T* pre, T* h);
// hc_head's backward: dz, draw [N, n], coef [N] overwritten; dX += pre_k dh + coef X; gbase [n], gsc [1] +=.
template <class T>
void hc_head_backward_ref(const T* X, const T* raw, const T* rho, const T* mix, const T* pre, const T* dh, int64_t N,
                          int n, int64_t d, const T* scale, double heps, T* dz, T* draw, T* coef, T* dX, T* gbase,
                          T* gsc);

}  // namespace trex::nn
