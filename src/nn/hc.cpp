// mHC's arithmetic around its GEMMs and Sinkhorn (nn/hc.hpp): the fast path model/mhc.cpp runs (its loops, moved
// here unchanged), the device's token-reduction order replayed in fp32, and the readable double references.
#include "nn/hc.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include "nn/gemm_bf16.hpp"

namespace trex::nn {

namespace {
inline float sigm(float x) { return 1.0f / (1.0f + std::exp(-x)); }
inline double sigm_d(double x) { return 1.0 / (1.0 + std::exp(-x)); }
}  // namespace

// ------------------------------------------------------------------ fast path
void hc_mix_rho(const float* X, int64_t N, int64_t nd, float eps, float* rho, uint16_t* X16) {
#pragma omp parallel for schedule(static)
  for (int64_t t = 0; t < N; ++t) {
    const float* x = X + t * nd;
    float ss = 0;
    #pragma omp simd reduction(+ : ss)
    for (int64_t i = 0; i < nd; ++i) ss += x[i] * x[i];
    rho[t] = 1.0f / std::sqrt(ss / float(nd) + eps);
    if (X16) round_to_bf16(x, X16 + t * nd, nd);
  }
}

void hc_mix_scale(const float* raw, const float* rho, int64_t N, int nout, float* mix) {
#pragma omp parallel for schedule(static)
  for (int64_t t = 0; t < N; ++t)
    for (int k = 0; k < nout; ++k) mix[t * nout + k] = raw[t * nout + k] * rho[t];
}

void hc_mix_backward_coef(const float* dmix, const float* raw, const float* rho, int64_t N, int nout, int64_t nd,
                          float* draw, float* coef) {
#pragma omp parallel for schedule(static)
  for (int64_t t = 0; t < N; ++t) {
    float drho = 0;
    for (int k = 0; k < nout; ++k) {
      draw[t * nout + k] = dmix[t * nout + k] * rho[t];
      drho += dmix[t * nout + k] * raw[t * nout + k];
    }
    const float r = rho[t];
    coef[t] = -drho * r * r * r / float(nd);  // d rho / d x_i = -rho^3 x_i / nd
  }
}

void hc_mix_backward_add_rows(const float* coef, const float* X, int64_t rows, int64_t nd, float* dX) {
  for (int64_t t = 0; t < rows; ++t) {
    const float* x = X + t * nd;
    float* dx = dX + t * nd;
    for (int64_t i = 0; i < nd; ++i) dx[i] += coef[t] * x[i];
  }
}

void hc_pre_gates_forward(const float* X, const float* mix_all, int64_t N, int n, int64_t d, const float* base,
                          const float* sc, float heps, float* pre, float* post, float* A, float* y) {
  const int nout = (2 + n) * n;
#pragma omp parallel for schedule(static)
  for (int64_t t = 0; t < N; ++t) {
    const float* mix = mix_all + t * nout;
    for (int k = 0; k < n; ++k) {
      pre[t * n + k] = sigm(sc[0] * mix[k] + base[k]) + heps;
      post[t * n + k] = 2.0f * sigm(sc[1] * mix[n + k] + base[n + k]);
    }
    for (int k = 0; k < n * n; ++k) A[t * n * n + k] = sc[2] * mix[2 * n + k] + base[2 * n + k];
    float* yt = y + t * d;
    const float* xt = X + t * n * d;
    for (int64_t i = 0; i < d; ++i) yt[i] = 0;
    for (int k = 0; k < n; ++k) {
      const float pk = pre[t * n + k];
      for (int64_t i = 0; i < d; ++i) yt[i] += pk * xt[k * d + i];
    }
  }
}

void hc_pre_gates_backward(const float* X, const float* mix_all, const float* pre, const float* dy, const float* dpost,
                           int64_t N, int n, int64_t d, const float* base, const float* sc, float heps, float* dz,
                           float* dX) {
  const int nout = (2 + n) * n;
#pragma omp parallel for schedule(static)
  for (int64_t t = 0; t < N; ++t) {
    const float* xt = X + t * n * d;
    const float* gy = dy + t * d;
    float* dxt = dX + t * n * d;
    const float* mix = mix_all + t * nout;
    for (int k = 0; k < n; ++k) {
      float dpre = 0;
      const float pk = pre[t * n + k];
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
}

void hc_gate_dmix(const float* dz, int64_t N, int n, int nout, const float* sc, float* dmix) {
#pragma omp parallel for schedule(static)
  for (int64_t t = 0; t < N; ++t)
    for (int k = 0; k < nout; ++k) dmix[t * nout + k] = dz[t * nout + k] * sc[k < n ? 0 : (k < 2 * n ? 1 : 2)];
}

void hc_gate_param_grads(const float* dz, const float* mix, int64_t N, int n, int nout, float* gbase, float* gsc) {
  for (int64_t t = 0; t < N; ++t)
    for (int k = 0; k < nout; ++k) {
      const float v = dz[t * nout + k];
      gbase[k] += v;
      gsc[k < n ? 0 : (k < 2 * n ? 1 : 2)] += v * mix[t * nout + k];
    }
}

void hc_post_forward(const float* F, const float* X, const float* post, const float* M_all, int64_t N, int n,
                     int64_t d, float* Xout) {
#pragma omp parallel for schedule(static)
  for (int64_t t = 0; t < N; ++t) {
    const float* M = M_all + t * n * n;
    const float* xt = X + t * n * d;
    const float* ft = F + t * d;
    float* o = Xout + t * n * d;
    for (int k = 0; k < n; ++k) {
      const float pk = post[t * n + k];
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

void hc_post_backward(const float* F, const float* X, const float* post, const float* M_all, const float* dXout,
                      int64_t N, int n, int64_t d, float* dF, float* dpost, float* dM, float* dX) {
#pragma omp parallel for schedule(static)
  for (int64_t t = 0; t < N; ++t) {
    const float* M = M_all + t * n * n;
    const float* xt = X + t * n * d;
    const float* ft = F + t * d;
    const float* g = dXout + t * n * d;
    float* df = dF + t * d;
    float* dxt = dX + t * n * d;
    for (int64_t i = 0; i < d; ++i) df[i] = 0;
    for (int k = 0; k < n; ++k) {
      const float* gk = g + k * d;
      const float pk = post[t * n + k];
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

void hc_head_forward(const float* X, const float* mix, int64_t N, int n, int64_t d, const float* base,
                     const float* scale, float heps, float* pre, float* h) {
  const float a = scale[0];
#pragma omp parallel for schedule(static)
  for (int64_t t = 0; t < N; ++t) {
    float* ht = h + t * d;
    const float* xt = X + t * n * d;
    for (int64_t i = 0; i < d; ++i) ht[i] = 0;
    for (int k = 0; k < n; ++k) {
      const float pk = pre[t * n + k] = sigm(a * mix[t * n + k] + base[k]) + heps;
      for (int64_t i = 0; i < d; ++i) ht[i] += pk * xt[k * d + i];
    }
  }
}

void hc_head_backward_gates(const float* X, const float* pre, const float* dh, int64_t N, int n, int64_t d,
                            const float* scale, float heps, float* dz, float* dmix, float* dX) {
  const float a = scale[0];
#pragma omp parallel for schedule(static)
  for (int64_t t = 0; t < N; ++t) {
    const float* xt = X + t * n * d;
    const float* g = dh + t * d;
    float* dxt = dX + t * n * d;
    for (int k = 0; k < n; ++k) {
      const float pk = pre[t * n + k];
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
}

// ------------------------------------------------------------------ the device's token order
void hc_gate_param_grads_chunked(const float* dz, const float* mix, int64_t N, int n, int nout, float* gbase,
                                 float* gsc) {
  const int64_t chunks = (N + kHcGradChunk - 1) / kHcGradChunk;
  std::vector<float> pb(size_t(chunks * nout)), ps(size_t(chunks * nout));
  for (int64_t c = 0; c < chunks; ++c)
    for (int k = 0; k < nout; ++k) {
      float b = 0, s = 0;
      for (int64_t t = c * kHcGradChunk; t < std::min(N, (c + 1) * kHcGradChunk); ++t) {
        b += dz[t * nout + k];
        s += dz[t * nout + k] * mix[t * nout + k];
      }
      pb[size_t(c * nout + k)] = b;
      ps[size_t(c * nout + k)] = s;
    }
  for (int k = 0; k < nout; ++k) {
    float b = 0;
    for (int64_t c = 0; c < chunks; ++c) b += pb[size_t(c * nout + k)];
    gbase[k] += b;
  }
  const int groups = nout == n ? 1 : 3;
  for (int j = 0; j < groups; ++j) {
    float s = 0;
    for (int64_t c = 0; c < chunks; ++c) {
      float cs = 0;
      for (int k = 0; k < nout; ++k)
        if (hc_gate_group(k, n) == j) cs += ps[size_t(c * nout + k)];
      s += cs;
    }
    gsc[j] += s;
  }
}

HcGateSums hc_gate_param_sums(const float* dz, const float* mix, int64_t N, int n, int nout, const float* gbase,
                              const float* gsc) {
  constexpr double u = 1.0 / 16777216.0;  // 2^-24
  const int groups = nout == n ? 1 : 3;
  const double m = double(std::min<int64_t>(N, kHcGradChunk)), C = double((N + kHcGradChunk - 1) / kHcGradChunk);
  HcGateSums r;
  r.base.assign(size_t(nout), 0.0), r.base_bound.assign(size_t(nout), 0.0);
  r.sc.assign(size_t(groups), 0.0), r.sc_bound.assign(size_t(groups), 0.0);
  std::vector<double> ab(size_t(nout), 0.0), as(size_t(groups), 0.0);  // Σ|dz|, Σ|dz mix|
  for (int64_t t = 0; t < N; ++t)
    for (int k = 0; k < nout; ++k) {
      const double v = dz[t * nout + k], p = v * double(mix[t * nout + k]);  // exact in double
      r.base[size_t(k)] += v, ab[size_t(k)] += std::fabs(v);
      r.sc[size_t(hc_gate_group(k, n))] += p, as[size_t(hc_gate_group(k, n))] += std::fabs(p);
    }
  for (int k = 0; k < nout; ++k) {
    r.base[size_t(k)] += double(gbase[k]);
    r.base_bound[size_t(k)] = 2.0 * u * ((m + C) * ab[size_t(k)] + std::fabs(r.base[size_t(k)]));
  }
  for (int j = 0; j < groups; ++j) {
    const double G = j == 2 ? double(n) * n : double(n);
    r.sc[size_t(j)] += double(gsc[j]);
    r.sc_bound[size_t(j)] = 2.0 * u * ((m + G + C) * as[size_t(j)] + std::fabs(r.sc[size_t(j)]));
  }
  return r;
}

// ------------------------------------------------------------------ references
template <class T>
void hc_mix_rho_ref(const T* X, int64_t N, int64_t nd, double eps, T* rho) {
  for (int64_t t = 0; t < N; ++t) {
    double ss = 0;
    for (int64_t i = 0; i < nd; ++i) ss += double(X[t * nd + i]) * double(X[t * nd + i]);
    rho[t] = T(1.0 / std::sqrt(ss / double(nd) + eps));
  }
}

template <class T>
void hc_pre_forward_ref(const T* X, const T* raw, const T* rho, int64_t N, int n, int64_t d, const T* base,
                        const T* scale, double heps, T* mix, T* pre, T* post, T* A, T* y) {
  const int nout = (2 + n) * n;
  std::vector<double> m(static_cast<size_t>(nout)), p(static_cast<size_t>(n));
  for (int64_t t = 0; t < N; ++t) {
    for (int k = 0; k < nout; ++k) {
      m[size_t(k)] = double(raw[t * nout + k]) * double(rho[t]);
      mix[t * nout + k] = T(m[size_t(k)]);
    }
    for (int k = 0; k < n; ++k) {
      p[size_t(k)] = sigm_d(double(scale[0]) * m[size_t(k)] + double(base[k])) + heps;
      pre[t * n + k] = T(p[size_t(k)]);
      post[t * n + k] = T(2.0 * sigm_d(double(scale[1]) * m[size_t(n + k)] + double(base[n + k])));
    }
    for (int k = 0; k < n * n; ++k)
      A[t * n * n + k] = T(double(scale[2]) * m[size_t(2 * n + k)] + double(base[2 * n + k]));
    for (int64_t i = 0; i < d; ++i) {
      double s = 0;
      for (int k = 0; k < n; ++k) s += p[size_t(k)] * double(X[(t * n + k) * d + i]);
      y[t * d + i] = T(s);
    }
  }
}

namespace {
// The shared tail of the pre and head backward references, per token: from dz (double), draw, coef and dX +=
// pre_k g + coef X; the token sums of dz and dz mix accumulate into sb, ss.
template <class T>
void gate_backward_tail(const T* X, const T* raw, const T* rho, const T* mix, const T* pre, const T* g, int64_t t,
                        int n, int64_t d, int nout, const T* scale, const std::vector<double>& dzt, T* draw, T* coef,
                        T* dX, std::vector<double>& sb, std::vector<double>& ss) {
  const int64_t nd = int64_t(n) * d;
  double drho = 0;
  for (int k = 0; k < nout; ++k) {
    const double dmix = dzt[size_t(k)] * double(scale[hc_gate_group(k, n)]);
    draw[t * nout + k] = T(dmix * double(rho[t]));
    drho += dmix * double(raw[t * nout + k]);
    sb[size_t(k)] += dzt[size_t(k)];
    ss[size_t(hc_gate_group(k, n))] += dzt[size_t(k)] * double(mix[t * nout + k]);
  }
  const double r = rho[t], c = -drho * r * r * r / double(nd);
  coef[t] = T(c);
  for (int k = 0; k < n; ++k)
    for (int64_t i = 0; i < d; ++i) {
      T& dx = dX[(t * n + k) * d + i];
      dx = T(double(dx) + double(pre[t * n + k]) * double(g[t * d + i]) + c * double(X[(t * n + k) * d + i]));
    }
}
}  // namespace

template <class T>
void hc_pre_backward_ref(const T* X, const T* raw, const T* rho, const T* mix, const T* pre, const T* dy,
                         const T* dpost, const T* dA, int64_t N, int n, int64_t d, const T* base, const T* scale,
                         double heps, T* dz, T* draw, T* coef, T* dX, T* gbase, T* gsc) {
  const int nout = (2 + n) * n;
  std::vector<double> dzt(static_cast<size_t>(nout)), sb(static_cast<size_t>(nout), 0.0), ss(3, 0.0);
  for (int64_t t = 0; t < N; ++t) {
    for (int k = 0; k < n; ++k) {
      double dpre = 0;
      for (int64_t i = 0; i < d; ++i) dpre += double(dy[t * d + i]) * double(X[(t * n + k) * d + i]);
      const double sp = double(pre[t * n + k]) - heps;
      dzt[size_t(k)] = dpre * sp * (1 - sp);
      const double so = sigm_d(double(scale[1]) * double(mix[t * nout + n + k]) + double(base[n + k]));
      dzt[size_t(n + k)] = double(dpost[t * n + k]) * 2.0 * so * (1 - so);
    }
    for (int k = 0; k < n * n; ++k) dzt[size_t(2 * n + k)] = double(dA[t * n * n + k]);
    for (int k = 0; k < nout; ++k) dz[t * nout + k] = T(dzt[size_t(k)]);
    gate_backward_tail(X, raw, rho, mix, pre, dy, t, n, d, nout, scale, dzt, draw, coef, dX, sb, ss);
  }
  for (int k = 0; k < nout; ++k) gbase[k] = T(double(gbase[k]) + sb[size_t(k)]);
  for (int j = 0; j < 3; ++j) gsc[j] = T(double(gsc[j]) + ss[size_t(j)]);
}

template <class T>
void hc_post_forward_ref(const T* F, const T* X, const T* post, const T* M, int64_t N, int n, int64_t d, T* Xout) {
  for (int64_t t = 0; t < N; ++t)
    for (int k = 0; k < n; ++k)
      for (int64_t i = 0; i < d; ++i) {
        double s = double(post[t * n + k]) * double(F[t * d + i]);
        for (int j = 0; j < n; ++j) s += double(M[(t * n + j) * n + k]) * double(X[(t * n + j) * d + i]);
        Xout[(t * n + k) * d + i] = T(s);
      }
}

template <class T>
void hc_post_backward_ref(const T* F, const T* X, const T* post, const T* M, const T* dXout, int64_t N, int n,
                          int64_t d, T* dF, T* dpost, T* dM, T* dX) {
  for (int64_t t = 0; t < N; ++t) {
    const T* g = dXout + t * n * d;
    for (int64_t i = 0; i < d; ++i) {
      double s = 0;
      for (int k = 0; k < n; ++k) s += double(post[t * n + k]) * double(g[k * d + i]);
      dF[t * d + i] = T(s);
    }
    for (int k = 0; k < n; ++k) {
      double s = 0;
      for (int64_t i = 0; i < d; ++i) s += double(g[k * d + i]) * double(F[t * d + i]);
      dpost[t * n + k] = T(s);
    }
    for (int j = 0; j < n; ++j) {
      for (int k = 0; k < n; ++k) {
        double s = 0;
        for (int64_t i = 0; i < d; ++i) s += double(g[k * d + i]) * double(X[(t * n + j) * d + i]);
        dM[(t * n + j) * n + k] = T(s);
      }
      for (int64_t i = 0; i < d; ++i) {
        double s = double(dX[(t * n + j) * d + i]);
        for (int k = 0; k < n; ++k) s += double(M[(t * n + j) * n + k]) * double(g[k * d + i]);
        dX[(t * n + j) * d + i] = T(s);
      }
    }
  }
}

template <class T>
void hc_head_forward_ref(const T* X, const T* raw, const T* rho, int64_t N, int n, int64_t d, const T* base,
                         const T* scale, double heps, T* mix, T* pre, T* h) {
  std::vector<double> p(static_cast<size_t>(n));
  for (int64_t t = 0; t < N; ++t) {
    for (int k = 0; k < n; ++k) {
      const double m = double(raw[t * n + k]) * double(rho[t]);
      mix[t * n + k] = T(m);
      p[size_t(k)] = sigm_d(double(scale[0]) * m + double(base[k])) + heps;
      pre[t * n + k] = T(p[size_t(k)]);
    }
    for (int64_t i = 0; i < d; ++i) {
      double s = 0;
      for (int k = 0; k < n; ++k) s += p[size_t(k)] * double(X[(t * n + k) * d + i]);
      h[t * d + i] = T(s);
    }
  }
}

template <class T>
void hc_head_backward_ref(const T* X, const T* raw, const T* rho, const T* mix, const T* pre, const T* dh, int64_t N,
                          int n, int64_t d, const T* scale, double heps, T* dz, T* draw, T* coef, T* dX, T* gbase,
                          T* gsc) {
  std::vector<double> dzt(static_cast<size_t>(n)), sb(static_cast<size_t>(n), 0.0), ss(1, 0.0);
  for (int64_t t = 0; t < N; ++t) {
    for (int k = 0; k < n; ++k) {
      double dp = 0;
      for (int64_t i = 0; i < d; ++i) dp += double(dh[t * d + i]) * double(X[(t * n + k) * d + i]);
      const double sp = double(pre[t * n + k]) - heps;
      dzt[size_t(k)] = dp * sp * (1 - sp);
      dz[t * n + k] = T(dzt[size_t(k)]);
    }
    gate_backward_tail(X, raw, rho, mix, pre, dh, t, n, d, n, scale, dzt, draw, coef, dX, sb, ss);
  }
  for (int k = 0; k < n; ++k) gbase[k] = T(double(gbase[k]) + sb[size_t(k)]);
  gsc[0] = T(double(gsc[0]) + ss[0]);
}

#define TREX_HC_REF(T)                                                                                              \
  template void hc_mix_rho_ref<T>(const T*, int64_t, int64_t, double, T*);                                         \
  template void hc_pre_forward_ref<T>(const T*, const T*, const T*, int64_t, int, int64_t, const T*, const T*,      \
                                      double, T*, T*, T*, T*, T*);                                                  \
  template void hc_pre_backward_ref<T>(const T*, const T*, const T*, const T*, const T*, const T*, const T*,        \
                                       const T*, int64_t, int, int64_t, const T*, const T*, double, T*, T*, T*, T*, \
                                       T*, T*);                                                                     \
  template void hc_post_forward_ref<T>(const T*, const T*, const T*, const T*, int64_t, int, int64_t, T*);          \
  template void hc_post_backward_ref<T>(const T*, const T*, const T*, const T*, const T*, int64_t, int, int64_t,    \
                                        T*, T*, T*, T*);                                                            \
  template void hc_head_forward_ref<T>(const T*, const T*, const T*, int64_t, int, int64_t, const T*, const T*,     \
                                       double, T*, T*, T*);                                                         \
  template void hc_head_backward_ref<T>(const T*, const T*, const T*, const T*, const T*, const T*, int64_t, int,   \
                                        int64_t, const T*, double, T*, T*, T*, T*, T*, T*);
TREX_HC_REF(float)
TREX_HC_REF(double)
#undef TREX_HC_REF

}  // namespace trex::nn
