// cuda::Model's mHC (DEEPSEEK_V4.md §6, §13), model/mhc.cpp on the device: the mix (the weightless RMS factor of
// the streams, X fnᵀ through cuBLASLt), the pre/post gates and the Sinkhorn comb (cuda/hc.hpp, cuda::sinkhorn_*),
// the residual update X' = Mᵀ X + post ⊗ F, the collapse head, and their backward (the mix's two weight and input
// products through cuBLASLt around hc.hpp's gate backward).
#include "cuda/gpu_model_impl.hpp"
#include "cuda/hc.hpp"
#include "cuda/ops.hpp"

namespace trex::cuda::gm {

namespace {

// rho and raw = X fnᵀ; X's bf16 copy made in rho's pass under bf16 products (the product and its dW read it).
void hc_mix_forward(Ctx& c, const float* X, int64_t N, int64_t fn, int nout, HcSaved& s) {
  const int64_t nd = c.cfg.hc_mult * c.cfg.hidden_size;
  s.X = X;
  s.raw = c.arena.floats(N * nout);
  s.rho = c.arena.floats(N);
  s.mix = c.arena.floats(N * nout);
  uint16_t* X16 = c.bf16() ? c.arena.bf16s(N * nd) : nullptr;
  hc_mix_rho(X, N, nd, float(c.cfg.rms_norm_eps), s.rho, X16, c.s);
  s.X16 = X16;
  linear(c, X, X16, fn, s.raw, N, nout, nd);
}

// From dz (the gate pre-activations' gradient): the gate parameters' gradients, dfn += drawᵀ X, dX += draw fn +
// coef X.
void hc_mix_backward(Ctx& c, int64_t N, const HcOff& off, int nout, const HcSaved& s, const float* dz, float* dX) {
  const int n = int(c.cfg.hc_mult);
  const int64_t nd = c.cfg.hc_mult * c.cfg.hidden_size;
  float* draw = c.arena.floats(N * nout);
  float* coef = c.arena.floats(N);
  hc_gate_backward(dz, s.mix, s.raw, s.rho, N, n, nout, nd, c.p(off.scale), draw, coef, c.g(off.base),
                   c.g(off.scale), c.arena, c.s);
  const uint16_t* draw16 = bf16_copy(c, draw, N * nout);
  gemm(c, true, false, nout, nd, N, draw, draw16, nout, s.X, s.X16, nd, 1.0f, c.g(off.fn), nd);
  gemm(c, false, false, N, nd, nout, draw, draw16, nout, c.p(off.fn), c.p16(off.fn), nd, 1.0f, dX, nd);
  hc_mix_backward_add(coef, s.X, N, nd, dX, c.s);
}

}  // namespace

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
  cuda::hc_pre_forward(X, s.raw, s.rho, N, n, d, c.p(off.base), c.p(off.scale), heps, s.mix, s.pre, s.post, s.A, y,
                       c.s);
  sinkhorn_forward(s.A, n * n, s.M, n * n, N, n, int(c.cfg.hc_sinkhorn_iters), heps, c.s);
}

void hc_pre_backward(Ctx& c, int64_t N, const HcOff& off, const HcSaved& s, const float* dy, const float* dpost,
                     const float* dM, float* dX) {
  const int n = int(c.cfg.hc_mult);
  const int64_t d = c.cfg.hidden_size;
  const int nout = (2 + n) * n;
  const float heps = float(c.cfg.hc_eps);
  float* dz = c.arena.floats(N * nout);
  hc_pre_backward_gates(s.X, s.mix, s.pre, dy, dpost, N, n, d, c.p(off.base), c.p(off.scale), heps, dz, dX, c.s);
  sinkhorn_backward(s.A, n * n, dM, n * n, dz + 2 * n, nout, N, n, int(c.cfg.hc_sinkhorn_iters), heps, c.arena, c.s);
  hc_mix_backward(c, N, off, nout, s, dz, dX);
}

void hc_post_forward(Ctx& c, const float* F, const float* X, const HcSaved& s, int64_t N, float* Xout) {
  cuda::hc_post_forward(F, X, s.post, s.M, N, int(c.cfg.hc_mult), c.cfg.hidden_size, Xout, c.s);
}

void hc_post_backward(Ctx& c, const float* F, const float* X, const HcSaved& s, int64_t N, const float* dXout,
                      float* dF, float* dpost, float* dM, float* dX) {
  cuda::hc_post_backward(F, X, s.post, s.M, dXout, N, int(c.cfg.hc_mult), c.cfg.hidden_size, dF, dpost, dM, dX, c.s);
}

void hc_head_forward(Ctx& c, const float* X, int64_t N, const HcOff& off, HcSaved& s, float* h) {
  const int n = int(c.cfg.hc_mult);
  hc_mix_forward(c, X, N, off.fn, n, s);
  s.pre = c.arena.floats(N * n);
  cuda::hc_head_forward(X, s.raw, s.rho, N, n, c.cfg.hidden_size, c.p(off.base), c.p(off.scale),
                        float(c.cfg.hc_eps), s.mix, s.pre, h, c.s);
}

void hc_head_backward(Ctx& c, int64_t N, const HcOff& off, const HcSaved& s, const float* dh, float* dX) {
  const int n = int(c.cfg.hc_mult);
  float* dz = c.arena.floats(N * n);
  hc_head_backward_gates(s.X, s.pre, dh, N, n, c.cfg.hidden_size, float(c.cfg.hc_eps), dz, dX, c.s);
  hc_mix_backward(c, N, off, n, s, dz, dX);
}

}  // namespace trex::cuda::gm
