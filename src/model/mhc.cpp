// mHC (DEEPSEEK_V4.md §6, §13): the mix (fn · vec(X) times the weightless RMS factor), the pre/post gates and
// Sinkhorn comb, the residual update X' = Mᵀ X + post ⊗ F, and the final collapse head; forward and backward.
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "model/model_impl.hpp"
#include "nn/gemm.hpp"
#include "nn/gemm_bf16.hpp"

namespace trex::model::detail {

namespace {
inline float sigm(float x) { return 1.0f / (1.0f + std::exp(-x)); }
}  // namespace

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
#pragma omp parallel for schedule(static)
  for (int64_t t = 0; t < N; ++t) {
    const float* x = X + t * nd;
    float ss = 0;
    #pragma omp simd reduction(+ : ss)
    for (int64_t i = 0; i < nd; ++i) ss += x[i] * x[i];
    s.rho[t] = 1.0f / std::sqrt(ss / float(nd) + eps);
    if (X16) nn::round_to_bf16(x, X16 + t * nd, nd);
  }
  nn::linear(X, c.p(fn), s.raw, N, nout, nd, false, X16);
#pragma omp parallel for schedule(static)
  for (int64_t t = 0; t < N; ++t)
    for (int k = 0; k < nout; ++k) s.mix[t * nout + k] = s.raw[t * nout + k] * s.rho[t];
}

void hc_mix_backward(Ctx& c, int64_t N, int64_t fn, int nout, const HcSaved& s, const float* dmix, float* dX) {
  const int64_t nd = c.cfg.hc_mult * c.cfg.hidden_size;
  float* draw = c.arena.floats(N * nout);
  float* coef = c.arena.floats(N);
#pragma omp parallel for schedule(static)
  for (int64_t t = 0; t < N; ++t) {
    float drho = 0;
    for (int k = 0; k < nout; ++k) {
      draw[t * nout + k] = dmix[t * nout + k] * s.rho[t];
      drho += dmix[t * nout + k] * s.raw[t * nout + k];
    }
    const float r = s.rho[t];
    coef[t] = -drho * r * r * r / float(nd);  // d rho / d x_i = -rho^3 x_i / nd
  }
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
    for (int64_t t = t0; t < t0 + rows; ++t) {
      const float* x = s.X + t * nd;
      float* dx = dX + t * nd;
      for (int64_t i = 0; i < nd; ++i) dx[i] += coef[t] * x[i];
    }
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
  const float* base = c.p(off.base);
  const float* sc = c.p(off.scale);
#pragma omp parallel for schedule(static)
  for (int64_t t = 0; t < N; ++t) {
    const float* mix = s.mix + t * nout;
    for (int k = 0; k < n; ++k) {
      s.pre[t * n + k] = sigm(sc[0] * mix[k] + base[k]) + heps;
      s.post[t * n + k] = 2.0f * sigm(sc[1] * mix[n + k] + base[n + k]);
    }
    for (int k = 0; k < n * n; ++k) s.A[t * n * n + k] = sc[2] * mix[2 * n + k] + base[2 * n + k];
    float* yt = y + t * d;
    const float* xt = X + t * n * d;
    for (int64_t i = 0; i < d; ++i) yt[i] = 0;
    for (int k = 0; k < n; ++k) {
      const float pk = s.pre[t * n + k];
      for (int64_t i = 0; i < d; ++i) yt[i] += pk * xt[k * d + i];
    }
  }
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
#pragma omp parallel for schedule(static)
  for (int64_t t = 0; t < N; ++t) {
    const float* xt = s.X + t * n * d;
    const float* gy = dy + t * d;
    float* dxt = dX + t * n * d;
    const float* mix = s.mix + t * nout;
    for (int k = 0; k < n; ++k) {
      float dpre = 0;
      const float pk = s.pre[t * n + k];
#pragma omp simd reduction(+ : dpre)
      for (int64_t i = 0; i < d; ++i) {
        dpre += gy[i] * xt[k * d + i];
        dxt[k * d + i] += pk * gy[i];
      }
      const float sp = pk - heps;  // sigmoid value
      dz[t * nout + k] = dpre * sp * (1 - sp);
      const float so = sigm(sc[1] * mix[n + k] + base[n + k]);
      dz[t * nout + n + k] = dpost[t * n + k] * 2.0f * so * (1 - so);
    }
  }
  nn::sinkhorn_backward_batch(s.A, n * n, dM, n * n, dz + 2 * n, nout, N, n, int(c.cfg.hc_sinkhorn_iters), heps);
#pragma omp parallel for schedule(static)
  for (int64_t t = 0; t < N; ++t)
    for (int k = 0; k < nout; ++k) dmix[t * nout + k] = dz[t * nout + k] * sc[k < n ? 0 : (k < 2 * n ? 1 : 2)];
  float* gbase = c.g(off.base);
  float* gsc = c.g(off.scale);
  for (int64_t t = 0; t < N; ++t)
    for (int k = 0; k < nout; ++k) {
      const float v = dz[t * nout + k];
      gbase[k] += v;
      gsc[k < n ? 0 : (k < 2 * n ? 1 : 2)] += v * s.mix[t * nout + k];
    }
  hc_mix_backward(c, N, off.fn, nout, s, dmix, dX);
}

void hc_post_forward(Ctx& c, const float* F, const float* X, const HcSaved& s, int64_t N, float* Xout) {
  const int n = int(c.cfg.hc_mult);
  const int64_t d = c.cfg.hidden_size;
#pragma omp parallel for schedule(static)
  for (int64_t t = 0; t < N; ++t) {
    const float* M = s.M + t * n * n;
    const float* xt = X + t * n * d;
    const float* ft = F + t * d;
    float* o = Xout + t * n * d;
    for (int k = 0; k < n; ++k) {
      const float pk = s.post[t * n + k];
      float* ok = o + k * d;
      for (int64_t i = 0; i < d; ++i) ok[i] = pk * ft[i];
      for (int j = 0; j < n; ++j) {  // X'_k += M_jk X_j (transpose convention)
        const float m = M[j * n + k];
        const float* xj = xt + j * d;
        for (int64_t i = 0; i < d; ++i) ok[i] += m * xj[i];
      }
    }
  }
}

void hc_post_backward(Ctx& c, const float* F, const float* X, const HcSaved& s, int64_t N, const float* dXout,
                      float* dF, float* dpost, float* dM, float* dX) {
  const int n = int(c.cfg.hc_mult);
  const int64_t d = c.cfg.hidden_size;
#pragma omp parallel for schedule(static)
  for (int64_t t = 0; t < N; ++t) {
    const float* M = s.M + t * n * n;
    const float* xt = X + t * n * d;
    const float* ft = F + t * d;
    const float* g = dXout + t * n * d;
    float* df = dF + t * d;
    float* dxt = dX + t * n * d;
    for (int64_t i = 0; i < d; ++i) df[i] = 0;
    for (int k = 0; k < n; ++k) {
      const float* gk = g + k * d;
      const float pk = s.post[t * n + k];
      float dp = 0;
#pragma omp simd reduction(+ : dp)
      for (int64_t i = 0; i < d; ++i) {
        df[i] += pk * gk[i];
        dp += gk[i] * ft[i];
      }
      dpost[t * n + k] = dp;
      for (int j = 0; j < n; ++j) {
        const float* xj = xt + j * d;
        const float m = M[j * n + k];
        float dm = 0;
        float* dxj = dxt + j * d;
#pragma omp simd reduction(+ : dm)
        for (int64_t i = 0; i < d; ++i) {
          dm += gk[i] * xj[i];
          dxj[i] += m * gk[i];
        }
        dM[t * n * n + j * n + k] = dm;
      }
    }
  }
}

void hc_head_forward(Ctx& c, const float* X, int64_t N, const HcOff& off, HcSaved& s, float* h) {
  const int n = int(c.cfg.hc_mult);
  const int64_t d = c.cfg.hidden_size;
  const float heps = float(c.cfg.hc_eps);
  hc_mix_forward(c, X, N, off.fn, n, s);
  s.pre = c.arena.floats(N * n);
  const float* base = c.p(off.base);
  const float a = c.p(off.scale)[0];
#pragma omp parallel for schedule(static)
  for (int64_t t = 0; t < N; ++t) {
    float* ht = h + t * d;
    const float* xt = X + t * n * d;
    for (int64_t i = 0; i < d; ++i) ht[i] = 0;
    for (int k = 0; k < n; ++k) {
      const float pk = s.pre[t * n + k] = sigm(a * s.mix[t * n + k] + base[k]) + heps;
      for (int64_t i = 0; i < d; ++i) ht[i] += pk * xt[k * d + i];
    }
  }
}

void hc_head_backward(Ctx& c, int64_t N, const HcOff& off, const HcSaved& s, const float* dh, float* dX) {
  const int n = int(c.cfg.hc_mult);
  const int64_t d = c.cfg.hidden_size;
  const float heps = float(c.cfg.hc_eps);
  const float a = c.p(off.scale)[0];
  float* dz = c.arena.floats(N * n);
  float* dmix = c.arena.floats(N * n);
#pragma omp parallel for schedule(static)
  for (int64_t t = 0; t < N; ++t) {
    const float* xt = s.X + t * n * d;
    const float* g = dh + t * d;
    float* dxt = dX + t * n * d;
    for (int k = 0; k < n; ++k) {
      const float pk = s.pre[t * n + k];
      float dp = 0;
      for (int64_t i = 0; i < d; ++i) {
        dp += g[i] * xt[k * d + i];
        dxt[k * d + i] += pk * g[i];
      }
      const float sp = pk - heps;
      dz[t * n + k] = dp * sp * (1 - sp);
      dmix[t * n + k] = dz[t * n + k] * a;
    }
  }
  float* gbase = c.g(off.base);
  float* gsc = c.g(off.scale);
  for (int64_t t = 0; t < N; ++t)
    for (int k = 0; k < n; ++k) {
      gbase[k] += dz[t * n + k];
      gsc[0] += dz[t * n + k] * s.mix[t * n + k];
    }
  hc_mix_backward(c, N, off.fn, n, s, dmix, dX);
}

}  // namespace trex::model::detail
