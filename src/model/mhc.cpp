// mHC (DEEPSEEK_V4.md §6, §13): the mix (fn · vec(X) times the weightless RMS factor), the pre/post gates and
// Sinkhorn comb, the residual update X' = Mᵀ X + post ⊗ F, and the final collapse head; forward and backward.
// The arithmetic between the GEMMs and the Sinkhorn is nn/hc.hpp's (the CUDA twin's oracle); here are the
// products, the arena allocations and the Sinkhorn calls.
#include <algorithm>

#include "model/model_impl.hpp"
#include "nn/gemm.hpp"
#include "nn/gemm_bf16.hpp"
#include "nn/hc.hpp"

namespace trex::model::detail {

void hc_mix_forward(Ctx& c, const float* X, int64_t N, int64_t fn, int nout, HcSaved& s) {
  const int64_t nd = c.cfg.hc_mult * c.cfg.hidden_size;
  const float eps = float(c.cfg.rms_norm_eps);
  s.X = X;
  s.raw = c.arena.floats(N * nout);
  s.rho = c.arena.floats(N);
  s.mix = c.arena.floats(N * nout);
  // Under bf16 operand copies the streams are rounded in the same pass as their RMS (X read once; the mix
  // product and its weight gradient read the copy).
  uint16_t* X16 = nn::bf16_operand_copies() ? c.arena.bf16s(N * nd) : nullptr;
  s.X16 = X16;
  nn::hc_mix_rho(X, N, nd, eps, s.rho, X16);
  nn::linear(X, c.p(fn), s.raw, N, nout, nd, false, X16);
  nn::hc_mix_scale(s.raw, s.rho, N, nout, s.mix);
}

void hc_mix_backward(Ctx& c, int64_t N, int64_t fn, int nout, const HcSaved& s, const float* dmix, float* dX) {
  const int64_t nd = c.cfg.hc_mult * c.cfg.hidden_size;
  float* draw = c.arena.floats(N * nout);
  float* coef = c.arena.floats(N);
  nn::hc_mix_backward_coef(dmix, s.raw, s.rho, N, nout, nd, draw, coef);
  const nn::GemmCall dfn{true, false, nout, nd, N, 1.0f, draw, nout, s.X, nd, 1.0f, c.g(fn), nd, nullptr, s.X16};
  nn::gemm_batch({&dfn, 1});  // dfn += drawᵀ X
  // dX += draw fn + coef X, a block of rows at a time: the k = nout product is too thin to pay for a pass of
  // its own over dX (n_hc x d floats per token), so each block's rows get both terms while in cache. Each
  // block's product packs all of fn: under bf16 operand copies it is rounded once here.
  const uint16_t* fn16 = s.X16 ? bf16_copy(c, c.p(fn), nout * nd) : nullptr;
  constexpr int64_t kRows = 64;
  const int64_t blocks = (N + kRows - 1) / kRows;
#pragma omp parallel for schedule(static)
  for (int64_t blk = 0; blk < blocks; ++blk) {
    const int64_t t0 = blk * kRows, rows = std::min(kRows, N - t0);
    const nn::GemmCall part{false, false, rows, nd, nout, 1.0f, draw + t0 * nout, nout, c.p(fn), nd, 1.0f,
                            dX + t0 * nd, nd, nullptr, fn16};
    nn::gemm_batch({&part, 1});
    nn::hc_mix_backward_add_rows(coef + t0, s.X + t0 * nd, rows, nd, dX + t0 * nd);
  }
}

void hc_pre_forward(Ctx& c, const float* X, int64_t N, const HcOff& off, HcSaved& s, float* y) {
  const int n = int(c.cfg.hc_mult);
  const int64_t d = c.cfg.hidden_size;
  const int nout = (2 + n) * n;
  const float heps = float(c.cfg.hc_eps);
  hc_mix_forward(c, X, N, off.fn, nout, s);
  s.pre = c.arena.floats(N * n);
  s.post = c.arena.floats(N * n);
  s.A = c.arena.floats(N * n * n);
  s.M = c.arena.floats(N * n * n);
  nn::hc_pre_gates_forward(X, s.mix, N, n, d, c.p(off.base), c.p(off.scale), heps, s.pre, s.post, s.A, y);
  nn::sinkhorn_forward_batch(s.A, n * n, s.M, n * n, N, n, int(c.cfg.hc_sinkhorn_iters), heps);
}

void hc_pre_backward(Ctx& c, int64_t N, const HcOff& off, const HcSaved& s, const float* dy, const float* dpost,
                     const float* dM, float* dX) {
  const int n = int(c.cfg.hc_mult);
  const int64_t d = c.cfg.hidden_size;
  const int nout = (2 + n) * n;
  const float heps = float(c.cfg.hc_eps);
  const float* base = c.p(off.base);
  const float* sc = c.p(off.scale);
  float* dz = c.arena.floats(N * nout);  // gradient wrt the gate pre-activations
  float* dmix = c.arena.floats(N * nout);
  nn::hc_pre_gates_backward(s.X, s.mix, s.pre, dy, dpost, N, n, d, base, sc, heps, dz, dX);
  nn::sinkhorn_backward_batch(s.A, n * n, dM, n * n, dz + 2 * n, nout, N, n, int(c.cfg.hc_sinkhorn_iters), heps);
  nn::hc_gate_dmix(dz, N, n, nout, sc, dmix);
  nn::hc_gate_param_grads(dz, s.mix, N, n, nout, c.g(off.base), c.g(off.scale));
  hc_mix_backward(c, N, off.fn, nout, s, dmix, dX);
}

void hc_post_forward(Ctx& c, const float* F, const float* X, const HcSaved& s, int64_t N, float* Xout) {
  nn::hc_post_forward(F, X, s.post, s.M, N, int(c.cfg.hc_mult), c.cfg.hidden_size, Xout);
}

void hc_post_backward(Ctx& c, const float* F, const float* X, const HcSaved& s, int64_t N, const float* dXout,
                      float* dF, float* dpost, float* dM, float* dX) {
  nn::hc_post_backward(F, X, s.post, s.M, dXout, N, int(c.cfg.hc_mult), c.cfg.hidden_size, dF, dpost, dM, dX);
}

void hc_head_forward(Ctx& c, const float* X, int64_t N, const HcOff& off, HcSaved& s, float* h) {
  const int n = int(c.cfg.hc_mult);
  const int64_t d = c.cfg.hidden_size;
  const float heps = float(c.cfg.hc_eps);
  hc_mix_forward(c, X, N, off.fn, n, s);
  s.pre = c.arena.floats(N * n);
  nn::hc_head_forward(X, s.mix, N, n, d, c.p(off.base), c.p(off.scale), heps, s.pre, h);
}

void hc_head_backward(Ctx& c, int64_t N, const HcOff& off, const HcSaved& s, const float* dh, float* dX) {
  const int n = int(c.cfg.hc_mult);
  const int64_t d = c.cfg.hidden_size;
  const float heps = float(c.cfg.hc_eps);
  float* dz = c.arena.floats(N * n);
  float* dmix = c.arena.floats(N * n);
  nn::hc_head_backward_gates(s.X, s.pre, dh, N, n, d, c.p(off.scale), heps, dz, dmix, dX);
  nn::hc_gate_param_grads(dz, s.mix, N, n, n, c.g(off.base), c.g(off.scale));
  hc_mix_backward(c, N, off.fn, n, s, dmix, dX);
}

}  // namespace trex::model::detail
