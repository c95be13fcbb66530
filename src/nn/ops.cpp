// Kernels of ops.hpp: fast (OpenMP over rows) and reference versions.
#include "nn/ops.hpp"

#include "nn/gemm_bf16.hpp"
#include "nn/vec8.hpp"
#include "nn/vec_math.hpp"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <span>
#include <vector>

#include <fmt/format.h>

#include "util/error.hpp"

namespace trex::nn {

// ============================== RMSNorm ==============================
void rmsnorm_forward(const float* x, const float* w, float* y, float* rstd, int64_t rows, int64_t dim, float eps) {
#pragma omp parallel for schedule(static) if (rows * dim > 32768)
  for (int64_t i = 0; i < rows; ++i) {
    const float* xi = x + i * dim;
    float* yi = y + i * dim;
    float ss = 0;
    #pragma omp simd reduction(+ : ss)
    for (int64_t j = 0; j < dim; ++j) ss += xi[j] * xi[j];
    float r = 1.0f / std::sqrt(ss / float(dim) + eps);
    if (rstd) rstd[i] = r;
    if (w)
      for (int64_t j = 0; j < dim; ++j) yi[j] = xi[j] * r * w[j];
    else
      for (int64_t j = 0; j < dim; ++j) yi[j] = xi[j] * r;
  }
}

void rmsnorm_backward(const float* x, const float* w, const float* rstd, const float* dy, float* dx, float* dw,
                      int64_t rows, int64_t dim, bool accumulate) {
  const bool par = rows * dim > 32768;
  const int threads = par ? omp_get_max_threads() : 1;
  // dw: per-thread partials over a static split, added in thread order (same bits every run)
  std::vector<float> dw_parts(dw && w ? size_t(threads) * size_t(dim) : 0, 0.0f);
#pragma omp parallel num_threads(threads)
  {
    std::span<float> dw_local;
    if (!dw_parts.empty()) dw_local = {dw_parts.data() + size_t(omp_get_thread_num()) * size_t(dim), size_t(dim)};
#pragma omp for schedule(static)
    for (int64_t i = 0; i < rows; ++i) {
      const float* xi = x + i * dim;
      const float* gi = dy + i * dim;
      float* dxi = dx + i * dim;
      const float r = rstd[i];
      float dot = 0;  // mean(g*w*x)
      #pragma omp simd reduction(+ : dot)
      for (int64_t j = 0; j < dim; ++j) dot += gi[j] * (w ? w[j] : 1.0f) * xi[j];
      const float c = dot * r * r / float(dim);
      for (int64_t j = 0; j < dim; ++j) {
        float v = r * (gi[j] * (w ? w[j] : 1.0f) - xi[j] * c);
        dxi[j] = accumulate ? dxi[j] + v : v;
      }
      if (!dw_local.empty())
        for (int64_t j = 0; j < dim; ++j) dw_local[size_t(j)] += gi[j] * xi[j] * r;
    }
  }
  for (int t = 0; t < threads && !dw_parts.empty(); ++t)
    for (int64_t j = 0; j < dim; ++j) dw[j] += dw_parts[size_t(t) * size_t(dim) + size_t(j)];
}

void rmsnorm_forward_ref(const float* x, const float* w, float* y, float* rstd, int64_t rows, int64_t dim, float eps) {
  for (int64_t i = 0; i < rows; ++i) {
    double ss = 0;
    for (int64_t j = 0; j < dim; ++j) ss += double(x[i * dim + j]) * x[i * dim + j];
    double r = 1.0 / std::sqrt(ss / double(dim) + eps);
    if (rstd) rstd[i] = float(r);
    for (int64_t j = 0; j < dim; ++j) y[i * dim + j] = float(x[i * dim + j] * r * (w ? w[j] : 1.0f));
  }
}

void rmsnorm_backward_ref(const float* x, const float* w, const float* rstd, const float* dy, float* dx, float* dw,
                          int64_t rows, int64_t dim, bool accumulate) {
  for (int64_t i = 0; i < rows; ++i) {
    double r = rstd[i];
    // y_j = x_j r w_j; dr/dx_k = -r^3 x_k / dim
    double s = 0;
    for (int64_t j = 0; j < dim; ++j) s += double(dy[i * dim + j]) * (w ? w[j] : 1.0) * x[i * dim + j];
    for (int64_t k = 0; k < dim; ++k) {
      double v = dy[i * dim + k] * (w ? w[k] : 1.0) * r - s * r * r * r * x[i * dim + k] / double(dim);
      dx[i * dim + k] = float(accumulate ? dx[i * dim + k] + v : v);
      if (w && dw) dw[k] += float(double(dy[i * dim + k]) * x[i * dim + k] * r);
    }
  }
}

// ============================== RoPE ==============================
RopeTable make_rope_table(int64_t r, int64_t max_pos, double base, bool yarn, double factor, int64_t original_max_pos,
                          double beta_fast, double beta_slow) {
  RopeTable t;
  t.r = r;
  t.max_pos = max_pos;
  const int64_t half = r / 2;
  t.omega.resize(size_t(half));
  for (int64_t i = 0; i < half; ++i) t.omega[size_t(i)] = std::pow(base, -2.0 * double(i) / double(r));
  if (yarn) {
    const double pi = 3.14159265358979323846;
    auto corr = [&](double beta) {
      return double(r) * std::log(double(original_max_pos) / (2 * pi * beta)) / (2 * std::log(base));
    };
    double lo = std::max(0.0, std::floor(corr(beta_fast)));
    double hi = std::min(double(r - 1), std::ceil(corr(beta_slow)));
    if (lo == hi) hi += 0.001;
    for (int64_t i = 0; i < half; ++i) {
      double g = std::clamp((double(i) - lo) / (hi - lo), 0.0, 1.0);
      double w = t.omega[size_t(i)];
      t.omega[size_t(i)] = w * (1 - g) + (w / factor) * g;
    }
  }
  t.cos.resize(size_t(max_pos * half));
  t.sin.resize(size_t(max_pos * half));
  for (int64_t p = 0; p < max_pos; ++p)
    for (int64_t i = 0; i < half; ++i) {
      double ang = double(p) * t.omega[size_t(i)];
      t.cos[size_t(p * half + i)] = float(std::cos(ang));
      t.sin[size_t(p * half + i)] = float(std::sin(ang));
    }
  return t;
}

void rope_apply(float* x, int64_t n, int64_t heads, int64_t head_dim, const int32_t* pos, const RopeTable& t,
                bool inverse) {
  const int64_t half = t.r / 2, off = head_dim - t.r;
  const float sgn = inverse ? -1.0f : 1.0f;
#pragma omp parallel for schedule(static) if (n * heads * t.r > 32768)
  for (int64_t i = 0; i < n; ++i) {
    const float* cs = t.cos.data() + int64_t(pos[i]) * half;
    const float* sn = t.sin.data() + int64_t(pos[i]) * half;
    for (int64_t h = 0; h < heads; ++h) {
      float* v = x + (i * heads + h) * head_dim + off;
      for (int64_t k = 0; k < half; ++k) {
        float a = v[2 * k], b = v[2 * k + 1], c = cs[k], s = sgn * sn[k];
        v[2 * k] = a * c - b * s;
        v[2 * k + 1] = a * s + b * c;
      }
    }
  }
}

void rope_apply_ref(float* x, int64_t n, int64_t heads, int64_t head_dim, const int32_t* pos, const RopeTable& t,
                    bool inverse) {
  for (int64_t i = 0; i < n; ++i)
    for (int64_t h = 0; h < heads; ++h)
      for (int64_t k = 0; k < t.r / 2; ++k) {
        double ang = double(pos[i]) * t.omega[size_t(k)] * (inverse ? -1.0 : 1.0);
        float c = float(std::cos(ang)), s = float(std::sin(ang));
        float* v = x + (i * heads + h) * head_dim + (head_dim - t.r) + 2 * k;
        float a = v[0], b = v[1];
        v[0] = a * c - b * s;
        v[1] = a * s + b * c;
      }
}

// ============================== limited SwiGLU ==============================
static inline float sigmoidf(float x) { return fast_sigmoidf(x); }

// Branch-free bodies (limit <= 0 becomes an infinite limit) so the inner loops vectorise with fast_sigmoidf;
// OpenMP splits the range into blocks of kSwiBlock elements.
namespace {
constexpr int64_t kSwiBlock = 4096;

void swiglu_forward_span(const float* __restrict g, const float* __restrict u, float* __restrict h, int64_t n,
                         float L) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) {
    const float gv = g[i] < L ? g[i] : L;
    const float uc = u[i] < L ? u[i] : L;
    const float uv = uc > -L ? uc : -L;
    h[i] = gv * sigmoidf(gv) * uv;
  }
}

void swiglu_backward_span(const float* __restrict g, const float* __restrict u, const float* __restrict dh,
                          float* __restrict dg, float* __restrict du, int64_t n, float L) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) {
    const float gv = g[i] < L ? g[i] : L;
    const float uc = u[i] < L ? u[i] : L;
    const float uv = uc > -L ? uc : -L;
    const float s = sigmoidf(gv);
    const float silu = gv * s;
    const float dsilu = s * (1.0f + gv * (1.0f - s));
    const float mg = g[i] > L ? 0.0f : 1.0f;
    const float mu = std::fabs(u[i]) > L ? 0.0f : 1.0f;
    dg[i] = mg * dh[i] * uv * dsilu;
    du[i] = mu * dh[i] * silu;
  }
}
}  // namespace

void swiglu_forward(const float* g, const float* u, float* h, int64_t n, float limit) {
  const float L = limit > 0 ? limit : std::numeric_limits<float>::infinity();
  const int64_t nb = (n + kSwiBlock - 1) / kSwiBlock;
#pragma omp parallel for schedule(static) if (n > 65536)
  for (int64_t b = 0; b < nb; ++b) {
    const int64_t o = b * kSwiBlock;
    swiglu_forward_span(g + o, u + o, h + o, std::min(kSwiBlock, n - o), L);
  }
}

void swiglu_backward(const float* g, const float* u, const float* dh, float* dg, float* du, int64_t n, float limit) {
  const float L = limit > 0 ? limit : std::numeric_limits<float>::infinity();
  const int64_t nb = (n + kSwiBlock - 1) / kSwiBlock;
#pragma omp parallel for schedule(static) if (n > 65536)
  for (int64_t b = 0; b < nb; ++b) {
    const int64_t o = b * kSwiBlock;
    swiglu_backward_span(g + o, u + o, dh + o, dg + o, du + o, std::min(kSwiBlock, n - o), L);
  }
}

void swiglu_forward_ref(const float* g, const float* u, float* h, int64_t n, float limit) {
  for (int64_t i = 0; i < n; ++i) {
    double gv = g[i], uv = u[i];
    if (limit > 0) {
      gv = std::min(gv, double(limit));
      uv = std::max(-double(limit), std::min(uv, double(limit)));
    }
    h[i] = float(gv / (1 + std::exp(-gv)) * uv);
  }
}

void swiglu_backward_ref(const float* g, const float* u, const float* dh, float* dg, float* du, int64_t n,
                         float limit) {
  for (int64_t i = 0; i < n; ++i) {
    bool g_cl = limit > 0 && g[i] > limit;
    bool u_cl = limit > 0 && std::fabs(u[i]) > limit;
    double gv = g_cl ? limit : g[i];
    double uv = limit > 0 ? std::max(-double(limit), std::min(double(u[i]), double(limit))) : u[i];
    double s = 1 / (1 + std::exp(-gv));
    dg[i] = g_cl ? 0.0f : float(dh[i] * uv * (s + gv * s * (1 - s)));
    du[i] = u_cl ? 0.0f : float(dh[i] * gv * s);
  }
}

// ============================== Sinkhorn ==============================
// The normalisations, the iterations and the backward sweep are written once for T = float (one matrix: the
// scalar functions) and T = Vec8 (lane l = matrix l: the batched ones), so both do the same operations in order.
namespace {
constexpr int kMaxN = 8;
// y = x / (rowsum + eps) (by_row) or / (colsum + eps)
template <class T>
void normalise(const T* x, T* y, int n, float eps, bool by_row) {
  for (int a = 0; a < n; ++a) {
    T s{};
    for (int b = 0; b < n; ++b) s += by_row ? x[a * n + b] : x[b * n + a];
    const T inv = 1.0f / (s + eps);
    for (int b = 0; b < n; ++b) {
      int idx = by_row ? a * n + b : b * n + a;
      y[idx] = x[idx] * inv;
    }
  }
}
// dx from dy for y = normalise(x)
template <class T>
void normalise_backward(const T* x, const T* dy, T* dx, int n, float eps, bool by_row) {
  for (int a = 0; a < n; ++a) {
    T s{}, dot{};
    for (int b = 0; b < n; ++b) {
      int idx = by_row ? a * n + b : b * n + a;
      s += x[idx];
      dot += dy[idx] * x[idx];
    }
    const T inv = 1.0f / (s + eps);
    for (int b = 0; b < n; ++b) {
      int idx = by_row ? a * n + b : b * n + a;
      dx[idx] = dy[idx] * inv - dot * inv * inv;
    }
  }
}
// m = the Sinkhorn result from t = softmax + eps (t is overwritten)
template <class T>
void sinkhorn_iterate(T* t, T* m, int n, int iters, float eps) {
  normalise(t, m, n, eps, false);
  for (int it = 1; it < iters; ++it) {
    normalise(m, t, n, eps, true);
    normalise(t, m, n, eps, false);
  }
}
// da from g = dm (overwritten). st: room for 2 * iters + 1 iterates, st[0] = softmax + eps; sm = the softmax.
template <class T>
void sinkhorn_backward_sweep(T* st, const T* sm, T* g, T* da, int n, int iters, float eps) {
  // st[i+1] = normalise(st[i]) with direction: i == 0 col; then row for odd i, col for even i.
  const int steps = 2 * iters, nn2 = n * n;
  for (int i = 0; i < steps - 1; ++i) normalise(st + i * nn2, st + (i + 1) * nn2, n, eps, i % 2 == 1);
  T gx[kMaxN * kMaxN];
  for (int i = steps - 2; i >= 0; --i) {
    normalise_backward(st + i * nn2, g, gx, n, eps, i % 2 == 1);
    std::copy(gx, gx + nn2, g);
  }
  // softmax rows backward
  for (int j = 0; j < n; ++j) {
    T dot{};
    for (int k = 0; k < n; ++k) dot += g[j * n + k] * sm[j * n + k];
    for (int k = 0; k < n; ++k) da[j * n + k] = sm[j * n + k] * (g[j * n + k] - dot);
  }
}
}  // namespace

void sinkhorn_forward(const float* a, float* m, int n, int iters, float eps) {
  float t[kMaxN * kMaxN];
  for (int j = 0; j < n; ++j) {
    float mx = a[j * n];
    for (int k = 1; k < n; ++k) mx = std::max(mx, a[j * n + k]);
    float s = 0;
    for (int k = 0; k < n; ++k) s += (t[j * n + k] = std::exp(a[j * n + k] - mx));
    for (int k = 0; k < n; ++k) t[j * n + k] = t[j * n + k] / s + eps;
  }
  sinkhorn_iterate(t, m, n, iters, eps);
}

void sinkhorn_backward(const float* a, const float* dm, float* da, int n, int iters, float eps) {
  std::vector<float> st(size_t((2 * iters + 1) * n * n));  // the iterates, s[0] = softmax + eps
  float* s0 = st.data();
  float sm[kMaxN * kMaxN];
  for (int j = 0; j < n; ++j) {
    float mx = a[j * n];
    for (int k = 1; k < n; ++k) mx = std::max(mx, a[j * n + k]);
    float s = 0;
    for (int k = 0; k < n; ++k) s += (sm[j * n + k] = std::exp(a[j * n + k] - mx));
    for (int k = 0; k < n; ++k) {
      sm[j * n + k] /= s;
      s0[j * n + k] = sm[j * n + k] + eps;
    }
  }
  float g[kMaxN * kMaxN];
  std::copy(dm, dm + n * n, g);
  sinkhorn_backward_sweep(st.data(), sm, g, da, n, iters, eps);
}

// Batched: lane l of every Vec8 is matrix t0 + l; the tail block repeats its last matrix in the unused lanes
// (their results are dropped), so every matrix goes through the same code.
namespace {
constexpr int64_t kLanes = 8;

void gather_block(const float* a, int64_t stride, int64_t t0, int64_t count, int nn2, Vec8* x) {
  for (int l = 0; l < kLanes; ++l) {
    const float* src = a + std::min(t0 + l, count - 1) * stride;
    for (int i = 0; i < nn2; ++i) x[i][l] = src[i];
  }
}
void scatter_block(const Vec8* x, int64_t t0, int64_t count, int nn2, float* out, int64_t stride) {
  for (int l = 0; l < kLanes && t0 + l < count; ++l) {
    float* dst = out + (t0 + l) * stride;
    for (int i = 0; i < nn2; ++i) dst[i] = x[i][l];
  }
}
// row softmax + eps of each lane's matrix with std::exp (as the scalar path); sm (may be null) gets the softmax
void softmax_eps_lanes(const Vec8* a, Vec8* t, Vec8* sm, int n, float eps) {
  for (int l = 0; l < kLanes; ++l)
    for (int j = 0; j < n; ++j) {
      float mx = a[j * n][l];
      for (int k = 1; k < n; ++k) mx = std::max(mx, a[j * n + k][l]);
      float e[kMaxN], s = 0;
      for (int k = 0; k < n; ++k) s += (e[k] = std::exp(a[j * n + k][l] - mx));
      for (int k = 0; k < n; ++k) {
        const float v = e[k] / s;
        if (sm) sm[j * n + k][l] = v;
        t[j * n + k][l] = v + eps;
      }
    }
}
}  // namespace

void sinkhorn_forward_batch(const float* a, int64_t a_stride, float* m, int64_t m_stride, int64_t count, int n,
                            int iters, float eps) {
  if (n > kMaxN) throw Error(fmt::format("sinkhorn: n = {} > {}", n, kMaxN));
  const int nn2 = n * n;
  const int64_t blocks = (count + kLanes - 1) / kLanes;
#pragma omp parallel for schedule(static) if (blocks > 1)
  for (int64_t blk = 0; blk < blocks; ++blk) {
    Vec8 x[kMaxN * kMaxN], t[kMaxN * kMaxN], y[kMaxN * kMaxN];
    gather_block(a, a_stride, blk * kLanes, count, nn2, x);
    softmax_eps_lanes(x, t, nullptr, n, eps);
    sinkhorn_iterate(t, y, n, iters, eps);
    scatter_block(y, blk * kLanes, count, nn2, m, m_stride);
  }
}

void sinkhorn_backward_batch(const float* a, int64_t a_stride, const float* dm, int64_t dm_stride, float* da,
                             int64_t da_stride, int64_t count, int n, int iters, float eps) {
  if (n > kMaxN) throw Error(fmt::format("sinkhorn: n = {} > {}", n, kMaxN));
  const int nn2 = n * n;
  const int64_t blocks = (count + kLanes - 1) / kLanes;
#pragma omp parallel if (blocks > 1)
  {
    thread_local std::vector<Vec8> st;  // the iterates: grown once per thread, reused every call
    if (st.size() < size_t((2 * iters + 1) * nn2)) st.resize(size_t((2 * iters + 1) * nn2));
#pragma omp for schedule(static)
    for (int64_t blk = 0; blk < blocks; ++blk) {
      Vec8 x[kMaxN * kMaxN], sm[kMaxN * kMaxN], g[kMaxN * kMaxN], d[kMaxN * kMaxN];
      gather_block(a, a_stride, blk * kLanes, count, nn2, x);
      softmax_eps_lanes(x, st.data(), sm, n, eps);
      gather_block(dm, dm_stride, blk * kLanes, count, nn2, g);
      sinkhorn_backward_sweep(st.data(), sm, g, d, n, iters, eps);
      scatter_block(d, blk * kLanes, count, nn2, da, da_stride);
    }
  }
}

// ============================== router affinity ==============================
float sqrt_softplus(float s) {
  float sp = s > 20.0f ? s : std::log1p(std::exp(s));
  return std::sqrt(sp);
}
float sqrt_softplus_grad(float s, float a) { return a > 0 ? sigmoidf(s) / (2.0f * a) : 0.0f; }

// ============================== cross-entropy ==============================
double softmax_xent(const float* logits, const int32_t* target, float* dlogits, int64_t rows, int64_t vocab,
                    float scale, uint16_t* dlogits_bf16) {
  // per-row losses summed in row order afterwards: the same bits whatever the thread count
  std::vector<double> row_loss(static_cast<size_t>(rows), 0.0);
#pragma omp parallel
  {
    // a bf16 gradient is formed in an fp32 row first (per thread, grown once) and rounded as a whole
    thread_local std::vector<float> scratch;
    if (dlogits_bf16 && scratch.size() < size_t(vocab)) scratch.resize(size_t(vocab));
#pragma omp for schedule(static)
    for (int64_t i = 0; i < rows; ++i) {
      const float* li = logits + i * vocab;
      float* di = dlogits_bf16 ? scratch.data() : dlogits + i * vocab;
      if (target[i] < 0) {
        for (int64_t j = 0; j < vocab; ++j) di[j] = 0.0f;
      } else {
        float mx = li[0];
#pragma omp simd reduction(max : mx)
        for (int64_t j = 1; j < vocab; ++j) mx = std::max(mx, li[j]);
        const float lt = li[target[i]];  // read before di (which may alias li) is written
        float s = 0;
#pragma omp simd reduction(+ : s)
        for (int64_t j = 0; j < vocab; ++j) s += (di[j] = fast_expf(li[j] - mx));  // one exp pass
        const float lse = mx + std::log(s);
        row_loss[size_t(i)] = double(lse - lt) * scale;
        const float f = scale / s;
#pragma omp simd
        for (int64_t j = 0; j < vocab; ++j) di[j] *= f;
        di[target[i]] -= scale;
      }
      if (dlogits_bf16) round_to_bf16(di, dlogits_bf16 + i * vocab, vocab);
    }
  }
  double total = 0;
  for (double v : row_loss) total += v;
  return total;
}

double softmax_xent_ref(const float* logits, const int32_t* target, float* dlogits, int64_t rows, int64_t vocab,
                        float scale) {
  double total = 0;
  for (int64_t i = 0; i < rows; ++i) {
    if (target[i] < 0) {
      for (int64_t j = 0; j < vocab; ++j) dlogits[i * vocab + j] = 0;
      continue;
    }
    double mx = -1e300;
    for (int64_t j = 0; j < vocab; ++j) mx = std::max(mx, double(logits[i * vocab + j]));
    double s = 0;
    for (int64_t j = 0; j < vocab; ++j) s += std::exp(logits[i * vocab + j] - mx);
    total += (mx + std::log(s) - logits[i * vocab + target[i]]) * scale;
    std::vector<double> p(static_cast<size_t>(vocab));
    for (int64_t j = 0; j < vocab; ++j) p[size_t(j)] = std::exp(logits[i * vocab + j] - mx) / s;
    for (int64_t j = 0; j < vocab; ++j)
      dlogits[i * vocab + j] = float(scale * (p[size_t(j)] - (j == target[i] ? 1.0 : 0.0)));
  }
  return total;
}

void topk_lower_index(const float* scores, int64_t n, int64_t k, int32_t* out) {
  // selection by (score desc, index asc); n is small (experts, compressed entries)
  k = std::min(k, n);
  std::vector<int32_t> idx(static_cast<size_t>(n));
  std::iota(idx.begin(), idx.end(), 0);
  std::partial_sort(idx.begin(), idx.begin() + k, idx.end(), [&](int32_t a, int32_t b) {
    if (scores[a] != scores[b]) return scores[a] > scores[b];
    return a < b;
  });
  std::copy(idx.begin(), idx.begin() + k, out);
}

}  // namespace trex::nn
