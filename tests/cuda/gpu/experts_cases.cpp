// The routed-expert op check and its CPU side (experts_cases.hpp).
#include "experts_cases.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <string>

#include <cuda_runtime_api.h>

#include "cuda/check.hpp"
#include "cuda/experts.hpp"
#include "cuda/ops.hpp"
#include "nn/gemm.hpp"
#include "nn/gemm_bf16.hpp"
#include "nn/moe_experts.hpp"
#include "util/error.hpp"
#include "util/rng.hpp"

namespace trex::cuda::check {

namespace {
constexpr double kU = 1.0 / 16777216.0;  // 2^-24, fp32 unit roundoff
constexpr double kGemm = 3;              // accumulation error between two fp32 implementations, in k u sum|a||b|
constexpr double kElem = 32;             // two element-wise SwiGLU implementations (about 15 u worst case), in u
constexpr double kSlack = 1.01;          // the magnitudes' own fp32 products
constexpr double kTiny = 1e-30;          // flushed denormal products (vdpbf16ps flushes them)

float rd16(float v) { return nn::bf16_to_float(nn::float_to_bf16(v)); }
float op(float v, bool bf16) { return bf16 ? rd16(v) : v; }

// |operand| as a product sees it (bf16: after rounding), for n values
std::vector<float> abs_operand(const float* v, int64_t n, bool bf16) {
  std::vector<float> a(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) a[size_t(i)] = std::fabs(op(v[i], bf16));
  return a;
}
std::vector<float> signed_operand(const float* v, int64_t n, bool bf16) {
  std::vector<float> a(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) a[size_t(i)] = op(v[i], bf16);
  return a;
}

// Host products of magnitudes (fp32, plain: never under the bf16 scope). C[m,n] = A B^T, A B, A^T B.
std::vector<float> mm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const float* a, const float* b) {
  std::vector<float> c(static_cast<size_t>(m * n), 0.0f);
  if (m > 0 && n > 0 && k > 0) nn::gemm(ta, tb, m, n, k, 1.0f, a, ta ? m : k, b, tb ? k : n, 0.0f, c.data(), n);
  return c;
}

// What two implementations can feed a product from a value each computed within b of the centre c: the largest
// difference of their operands (centre_is_ref: one of them is c itself) and the largest operand magnitude.
struct OperandRange {
  double dev, mag;
};
OperandRange operand_range(double c, double b, bool bf16, bool centre_is_ref) {
  if (!bf16) return {centre_is_ref ? b : 2 * b, std::fabs(c) + b};
  // rounding is monotone: values in [c - b, c + b] round into [rd(lo), rd(hi)]
  const float lo = rd16(std::nextafter(float(c - b), -std::numeric_limits<float>::infinity()));
  const float hi = rd16(std::nextafter(float(c + b), std::numeric_limits<float>::infinity()));
  const double mag = std::max(std::fabs(double(lo)), std::fabs(double(hi)));
  if (!centre_is_ref) return {double(hi) - double(lo), mag};
  const double r = rd16(float(c));
  return {std::max(double(hi) - r, r - double(lo)), mag};
}

void require_fp32_products(const char* who) {
  if (nn::bf16_matmul_active())
    throw Error(std::string(who) + ": called under a Bf16MatmulScope (the bounds' magnitude products must be fp32)");
}

double limit_of(float limit) { return limit > 0 ? double(limit) : std::numeric_limits<double>::infinity(); }

// A pool of seeded uniform values in [-scale, scale] long enough for windows of `window` values at many starts.
std::vector<float> make_pool(Rng& rng, int64_t window, int64_t spread, double scale) {
  std::vector<float> v(static_cast<size_t>(window + spread));
  for (float& x : v) x = float(rng.uniform(-scale, scale));
  return v;
}

std::string dims(std::initializer_list<std::pair<const char*, int64_t>> d) {
  std::string s;
  for (const auto& [k, v] : d) s += (s.empty() ? "" : " ") + std::string(k) + "=" + std::to_string(v);
  return s;
}

template <class T>
void cat(std::vector<T>& a, const std::vector<T>& b) {
  a.insert(a.end(), b.begin(), b.end());
}
}  // namespace

ExpertsProblem make_experts_problem(int64_t experts, int64_t d, int64_t f, const std::vector<int64_t>& counts,
                                    float limit, uint64_t seed) {
  if (int64_t(counts.size()) != experts) throw Error("make_experts_problem: one count per expert");
  ExpertsProblem p;
  p.experts = experts, p.d = d, p.f = f, p.limit = limit;
  p.offsets.assign(1, 0);
  for (int64_t c : counts) {
    if (c < 0) throw Error("make_experts_problem: negative count");
    p.offsets.push_back(p.offsets.back() + c);
  }
  const int64_t rows = p.rows(), fd = f * d;
  Rng rng(seed);
  const double s3 = std::sqrt(3.0);  // uniform(-s3, s3) has unit variance
  // g = x W1^T with standard deviation about 2.5 (the clamp at 4 or 10 is reached); y of order 1
  const int64_t wspread = std::min<int64_t>(fd, int64_t(1) << 20);
  p.pool_w13 = make_pool(rng, fd, wspread, 2.5 * s3 / std::sqrt(double(d)));
  p.pool_w2 = make_pool(rng, fd, wspread, s3 / std::sqrt(double(f)));
  p.pool_grad = make_pool(rng, fd, wspread, 0.01);
  for (auto* at : {&p.at_w1, &p.at_w3, &p.at_w2, &p.at_g1, &p.at_g3, &p.at_g2})
    for (int64_t e = 0; e < experts; ++e) at->push_back(rng.uniform_int(0, wspread));
  const int64_t rspread = std::min<int64_t>(rows * d, int64_t(1) << 22);
  const std::vector<float> pool_x = make_pool(rng, d, rspread, s3), pool_dy = make_pool(rng, d, rspread, s3);
  p.x.resize(size_t(rows * d));
  p.dy.resize(size_t(rows * d));
  p.w.resize(size_t(rows));
  for (int64_t r = 0; r < rows; ++r) {
    std::memcpy(p.x.data() + r * d, pool_x.data() + rng.uniform_int(0, rspread), size_t(d) * sizeof(float));
    std::memcpy(p.dy.data() + r * d, pool_dy.data() + rng.uniform_int(0, rspread), size_t(d) * sizeof(float));
    p.w[size_t(r)] = float(rng.uniform(0.05, 1.0));
  }
  return p;
}

std::vector<int64_t> uneven_counts(int64_t experts, int64_t rows, int64_t empty, uint64_t seed) {
  if (experts <= 0 || empty < 0 || empty > experts) throw Error("uneven_counts: bad expert or empty count");
  Rng rng(seed);
  std::vector<double> load(static_cast<size_t>(experts));
  for (double& l : load) l = std::exp(0.3 * rng.normal());
  for (int64_t k = 0; k < empty; ++k) load[size_t((2 * k + 1) * experts / (2 * empty))] = 0;
  double total = 0;
  for (double l : load) total += l;
  std::vector<int64_t> counts(static_cast<size_t>(experts), 0);
  if (total == 0) {
    if (rows != 0) throw Error("uneven_counts: rows but every expert empty");
    return counts;
  }
  // largest remainders (ties to the lower index), so the counts sum to rows
  std::vector<std::pair<double, int64_t>> rest;
  int64_t given = 0;
  for (int64_t e = 0; e < experts; ++e) {
    const double q = double(rows) * load[size_t(e)] / total;
    counts[size_t(e)] = int64_t(std::floor(q));
    given += counts[size_t(e)];
    if (load[size_t(e)] > 0) rest.push_back({q - std::floor(q), e});
  }
  std::stable_sort(rest.begin(), rest.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  for (size_t i = 0; given < rows; ++i, ++given) ++counts[size_t(rest[i % rest.size()].second)];
  return counts;
}

void append(ExpertValues& all, const ExpertValues& one) {
  cat(all.g, one.g), cat(all.u, one.u), cat(all.h, one.h), cat(all.y, one.y), cat(all.dx, one.dx);
  cat(all.dw, one.dw), cat(all.g1, one.g1), cat(all.g3, one.g3), cat(all.g2, one.g2);
}
void append(ExpertBounds& all, const ExpertBounds& one) {
  cat(all.g, one.g), cat(all.u, one.u), cat(all.h, one.h), cat(all.y, one.y), cat(all.dx, one.dx);
  cat(all.dw, one.dw), cat(all.g1, one.g1), cat(all.g3, one.g3), cat(all.g2, one.g2);
}

void cpu_experts_forward(const ExpertsProblem& p, int64_t e, bool reference, bool bf16, ExpertValues& out) {
  const int64_t n = p.rows_of(e), o = p.offsets[size_t(e)], d = p.d, f = p.f;
  out.g.assign(size_t(n * f), 0.0f), out.u = out.g, out.h = out.g, out.y.assign(size_t(n * d), 0.0f);
  if (n == 0) return;
  const nn::ExpertWeights ew{p.w1(e), p.w3(e), p.w2(e)};
  const int64_t offsets[2] = {0, n};
  const nn::ExpertShape s{d, f, p.limit};
  nn::Arena arena;
  std::optional<nn::Bf16MatmulScope> scope;
  if (bf16) scope.emplace();
  (reference ? nn::experts_forward_reference : nn::experts_forward)(
      {&ew, 1}, offsets, s, p.x.data() + o * d, p.w.data() + o, out.g.data(), out.u.data(), out.h.data(),
      out.y.data(), arena);
}

void cpu_experts_backward(const ExpertsProblem& p, int64_t e, bool reference, bool bf16, ExpertValues& io) {
  const int64_t n = p.rows_of(e), o = p.offsets[size_t(e)], d = p.d, f = p.f;
  io.g1.assign(p.g1_start(e), p.g1_start(e) + f * d);
  io.g3.assign(p.g3_start(e), p.g3_start(e) + f * d);
  io.g2.assign(p.g2_start(e), p.g2_start(e) + f * d);
  io.dx.assign(size_t(n * d), 0.0f), io.dw.assign(size_t(n), 0.0f);
  if (n == 0) return;
  if (int64_t(io.g.size()) != n * f || io.u.size() != io.g.size() || io.h.size() != io.g.size())
    throw Error("cpu_experts_backward: the saved g, u, h must have the expert's rows");
  const nn::ExpertWeights ew{p.w1(e), p.w3(e), p.w2(e), io.g1.data(), io.g3.data(), io.g2.data()};
  const int64_t offsets[2] = {0, n};
  const nn::ExpertShape s{d, f, p.limit};
  nn::Arena arena;
  std::optional<nn::Bf16MatmulScope> scope;
  if (bf16) scope.emplace();
  (reference ? nn::experts_backward_reference : nn::experts_backward)(
      {&ew, 1}, offsets, s, p.x.data() + o * d, p.w.data() + o, io.g.data(), io.u.data(), io.h.data(),
      p.dy.data() + o * d, io.dx.data(), io.dw.data(), arena);
}

ExpertBounds experts_forward_bounds(const ExpertsProblem& p, int64_t e, const ExpertValues& ref, bool bf16) {
  require_fp32_products("experts_forward_bounds");
  const int64_t n = p.rows_of(e), o = p.offsets[size_t(e)], d = p.d, f = p.f, nf = n * f;
  const double L = limit_of(p.limit);
  ExpertBounds b;
  const std::vector<float> ax = abs_operand(p.x.data() + o * d, n * d, bf16), aw1 = abs_operand(p.w1(e), f * d, bf16),
                           aw3 = abs_operand(p.w3(e), f * d, bf16), aw2 = abs_operand(p.w2(e), f * d, bf16);
  // g, u: products of identical operands
  const std::vector<float> mg = mm(false, true, n, f, d, ax.data(), aw1.data()),
                           mu = mm(false, true, n, f, d, ax.data(), aw3.data());
  b.g.resize(size_t(nf)), b.u.resize(size_t(nf)), b.h.resize(size_t(nf));
  std::vector<float> dev(static_cast<size_t>(nf)), mag(static_cast<size_t>(nf));
  for (int64_t i = 0; i < nf; ++i) {
    const size_t k = size_t(i);
    const double bg = kGemm * double(d) * kU * mg[k] * kSlack + kTiny;
    const double bu = kGemm * double(d) * kU * mu[k] * kSlack + kTiny;
    b.g[k] = bg, b.u[k] = bu;
    // h through the SwiGLU (first order, with silu's second-order term), plus the kernels' own rounding
    const double gv = std::min(double(ref.g[k]), L), uv = std::clamp(double(ref.u[k]), -L, L);
    const double s = 1 / (1 + std::exp(-gv)), silu = gv * s, dsilu = s * (1 + gv * (1 - s));
    b.h[k] = std::fabs(uv) * (std::fabs(dsilu) * bg + 0.25 * bg * bg) + (std::fabs(silu) + 1.1 * bg) * bu +
             kElem * kU * std::fabs(double(ref.h[k])) + kTiny;
    // w * h: the reference's own product (the same float multiply) is the centre
    const double wr = p.w[size_t(o + i / f)];
    const float hwc = ref.h[k] * p.w[size_t(o + i / f)];
    const double bhw = std::fabs(wr) * b.h[k] * (1 + kU) + 2 * kU * std::fabs(double(hwc));
    const OperandRange r = operand_range(hwc, bhw, bf16, /*centre_is_ref=*/true);
    dev[k] = float(r.dev), mag[k] = float(r.mag);
  }
  // y = (w h) W2^T: the operands' difference through |W2| plus the accumulation over f
  const std::vector<float> p1 = mm(false, true, n, d, f, dev.data(), aw2.data()),
                           p2 = mm(false, true, n, d, f, mag.data(), aw2.data());
  b.y.resize(size_t(n * d));
  for (size_t k = 0; k < b.y.size(); ++k) b.y[k] = (p1[k] + kGemm * double(f) * kU * p2[k]) * kSlack + kTiny;
  return b;
}

ExpertBounds experts_backward_bounds(const ExpertsProblem& p, int64_t e, const ExpertValues& ref, bool bf16) {
  require_fp32_products("experts_backward_bounds");
  const int64_t n = p.rows_of(e), o = p.offsets[size_t(e)], d = p.d, f = p.f, nf = n * f;
  const double L = limit_of(p.limit);
  ExpertBounds b;
  const float *x = p.x.data() + o * d, *dy = p.dy.data() + o * d, *w = p.w.data() + o;
  const std::vector<float> ax = abs_operand(x, n * d, bf16), ady = abs_operand(dy, n * d, bf16),
                           aw1 = abs_operand(p.w1(e), f * d, bf16), aw3 = abs_operand(p.w3(e), f * d, bf16),
                           aw2 = abs_operand(p.w2(e), f * d, bf16);
  // W2 gradient += dy^T (w h): both operands identical on both sides (w * h the same float multiply)
  std::vector<float> ahw(static_cast<size_t>(nf));
  for (int64_t i = 0; i < nf; ++i) ahw[size_t(i)] = std::fabs(op(ref.h[size_t(i)] * w[i / f], bf16));
  const std::vector<float> m2 = mm(true, false, d, f, n, ady.data(), ahw.data());
  b.g2.resize(m2.size());
  for (size_t k = 0; k < m2.size(); ++k)
    b.g2[k] = kGemm * double(n + 1) * kU * (m2[k] + std::fabs(p.g2_start(e)[k])) * kSlack + kTiny;
  // dhw = dy W2 (identical operands) and a centre for it (a third fp32 evaluation: within the same bound of both)
  const std::vector<float> mdhw = mm(false, false, n, f, d, ady.data(), aw2.data());
  const std::vector<float> sdy = signed_operand(dy, n * d, bf16), sw2 = signed_operand(p.w2(e), f * d, bf16);
  const std::vector<float> dhw_c = mm(false, false, n, f, d, sdy.data(), sw2.data());
  b.dw.assign(size_t(n), kTiny);
  std::vector<float> dev_g(static_cast<size_t>(nf)), mag_g(static_cast<size_t>(nf)), dev_u(static_cast<size_t>(nf)),
      mag_u(static_cast<size_t>(nf));
  for (int64_t i = 0; i < nf; ++i) {
    const size_t k = size_t(i);
    const int64_t r = i / f;
    const double bdhw = kGemm * double(d) * kU * mdhw[k] * kSlack;
    const double ah = std::fabs(double(ref.h[k]));
    b.dw[size_t(r)] += ah * (bdhw + kGemm * double(f + 1) * kU * (mdhw[k] + bdhw)) * kSlack;
    const double wr = std::fabs(double(w[r]));
    const double bdh = wr * bdhw * (1 + kU) + 2 * kU * wr * mdhw[k], adh = wr * mdhw[k] + bdh;
    const double dh_c = double(w[r]) * double(dhw_c[k]);
    // the SwiGLU's backward: the same g, u on both sides, so the same clamps and factors
    const bool g_on = !(p.limit > 0 && ref.g[k] > p.limit), u_on = !(p.limit > 0 && std::fabs(ref.u[k]) > p.limit);
    const double gv = std::min(double(ref.g[k]), L), uv = std::clamp(double(ref.u[k]), -L, L);
    const double s = 1 / (1 + std::exp(-gv)), dsilu = s * (1 + gv * (1 - s));
    const double bdg =
        g_on ? std::fabs(uv * dsilu) * bdh + kElem * kU * adh * std::fabs(uv) * s * (1 + std::fabs(gv)) : 0;
    const double bdu = u_on ? std::fabs(gv * s) * bdh + kElem * kU * adh * std::fabs(gv * s) : 0;
    const OperandRange rg = operand_range(g_on ? dh_c * uv * dsilu : 0.0, bdg, bf16, false),
                       ru = operand_range(u_on ? dh_c * gv * s : 0.0, bdu, bf16, false);
    dev_g[k] = float(rg.dev), mag_g[k] = float(rg.mag), dev_u[k] = float(ru.dev), mag_u[k] = float(ru.mag);
  }
  // dx = dg W1 + du W3 (the second accumulating onto the first: f + 1 terms)
  const std::vector<float> pg = mm(false, false, n, d, f, dev_g.data(), aw1.data()),
                           pu = mm(false, false, n, d, f, dev_u.data(), aw3.data()),
                           qg = mm(false, false, n, d, f, mag_g.data(), aw1.data()),
                           qu = mm(false, false, n, d, f, mag_u.data(), aw3.data());
  b.dx.resize(size_t(n * d));
  for (size_t k = 0; k < b.dx.size(); ++k)
    b.dx[k] = (pg[k] + pu[k] + kGemm * double(f + 1) * kU * (qg[k] + qu[k])) * kSlack + kTiny;
  // W1, W3 gradients += dg^T x, du^T x
  auto wgrad = [&](const std::vector<float>& dev, const std::vector<float>& mag, const float* start) {
    const std::vector<float> pd = mm(true, false, f, d, n, dev.data(), ax.data()),
                             pm = mm(true, false, f, d, n, mag.data(), ax.data());
    std::vector<double> out(pd.size());
    for (size_t k = 0; k < out.size(); ++k)
      out[k] = (pd[k] + kGemm * double(n + 1) * kU * (pm[k] + std::fabs(start[k]))) * kSlack + kTiny;
    return out;
  };
  b.g1 = wgrad(dev_g, mag_g, p.g1_start(e));
  b.g3 = wgrad(dev_u, mag_u, p.g3_start(e));
  return b;
}

std::vector<Compare> compare_experts(const ExpertValues& got, const ExpertValues& ref, const ExpertBounds& b,
                                     bool forward, bool backward, const std::string& prefix) {
  std::vector<Compare> c;
  if (forward) {
    c.push_back(compare_bound(prefix + "g", got.g, ref.g, b.g));
    c.push_back(compare_bound(prefix + "u", got.u, ref.u, b.u));
    c.push_back(compare_bound(prefix + "h", got.h, ref.h, b.h));
    c.push_back(compare_bound(prefix + "y", got.y, ref.y, b.y));
  }
  if (backward) {
    c.push_back(compare_bound(prefix + "dx", got.dx, ref.dx, b.dx));
    c.push_back(compare_bound(prefix + "dw", got.dw, ref.dw, b.dw));
    c.push_back(compare_bound(prefix + "dW1", got.g1, ref.g1, b.g1));
    c.push_back(compare_bound(prefix + "dW3", got.g3, ref.g3, b.g3));
    c.push_back(compare_bound(prefix + "dW2", got.g2, ref.g2, b.g2));
  }
  return c;
}

namespace {

// The problem on the device: inputs, every expert's matrices and gradients (one buffer per kind, expert after
// expert), the outputs, and the bf16 copies of the weights.
struct DeviceProblem {
  DeviceBuffer x, w, dy, w1, w3, w2, g1, g3, g2, w1_16, w3_16, w2_16, g, u, h, y, dx, dw;
};

Compare same_bits(const std::string& what, const ExpertValues& a, const ExpertValues& b) {
  ExpertValues fa, fb;  // everything, flattened
  for (const auto* v : {&a.g, &a.u, &a.h, &a.y, &a.dx, &a.dw, &a.g1, &a.g3, &a.g2}) cat(fa.g, *v);
  for (const auto* v : {&b.g, &b.u, &b.h, &b.y, &b.dx, &b.dw, &b.g1, &b.g3, &b.g2}) cat(fb.g, *v);
  Compare c;
  c.what = what + " (bitwise)";
  c.n = int64_t(fa.g.size());
  if (fa.g.size() != fb.g.size()) {
    c.bad = c.n > 0 ? c.n : 1;
    return c;
  }
  for (size_t i = 0; i < fa.g.size(); ++i)
    if (std::memcmp(&fa.g[i], &fb.g[i], 4) != 0) {
      if (c.worst < 0) c.worst = int64_t(i);
      ++c.bad;
    }
  c.worst_ratio = c.bad ? INFINITY : 0;
  return c;
}

// Expert e's part of the device's results (rows, and its weight gradients).
ExpertValues download_expert(const ExpertsProblem& p, const DeviceProblem& dp, int64_t e) {
  const int64_t n = p.rows_of(e), o = p.offsets[size_t(e)], d = p.d, f = p.f, fd = f * d;
  ExpertValues v;
  auto get = [](const DeviceBuffer& b, std::vector<float>& out, int64_t count, int64_t at) {
    out.resize(size_t(count));
    if (count > 0) b.download(out.data(), size_t(count) * 4, size_t(at) * 4);
  };
  get(dp.g, v.g, n * f, o * f), get(dp.u, v.u, n * f, o * f), get(dp.h, v.h, n * f, o * f);
  get(dp.y, v.y, n * d, o * d), get(dp.dx, v.dx, n * d, o * d), get(dp.dw, v.dw, n, o);
  get(dp.g1, v.g1, fd, e * fd), get(dp.g3, v.g3, fd, e * fd), get(dp.g2, v.g2, fd, e * fd);
  return v;
}

}  // namespace

OpReport check_experts(Harness& hs, Blas& blas, GemmType type, int64_t experts, int64_t d, int64_t f,
                       const std::vector<int64_t>& counts, float limit, int64_t sample_experts) {
  const bool bf16 = type == GemmType::bf16;
  const ExpertsProblem p = make_experts_problem(experts, d, f, counts, limit, 77 + uint64_t(experts * 31 + d + f));
  const int64_t rows = p.rows(), fd = f * d;
  int64_t busiest = 0, empty = 0;
  for (int64_t c : counts) busiest = std::max(busiest, c), empty += c == 0;
  OpReport rep;
  rep.op = bf16 ? "experts_bf16" : "experts_fp32";
  rep.shape = dims({{"experts", experts}, {"rows", rows}, {"busiest", busiest}, {"empty", empty}, {"d", d}, {"f", f}}) +
              " limit=" + std::to_string(limit);
  cudaStream_t st = hs.stream().get();

  DeviceProblem dp;
  dp.x = hs.upload(p.x), dp.w = hs.upload(p.w), dp.dy = hs.upload(p.dy);
  for (auto* b : {&dp.w1, &dp.w3, &dp.w2, &dp.g1, &dp.g3, &dp.g2}) *b = DeviceBuffer(size_t(experts * fd) * 4);
  for (int64_t e = 0; e < experts; ++e) {
    dp.w1.upload(p.w1(e), size_t(fd) * 4, size_t(e * fd) * 4);
    dp.w3.upload(p.w3(e), size_t(fd) * 4, size_t(e * fd) * 4);
    dp.w2.upload(p.w2(e), size_t(fd) * 4, size_t(e * fd) * 4);
  }
  for (auto* b : {&dp.g, &dp.u, &dp.h}) *b = DeviceBuffer(size_t(std::max<int64_t>(rows * f, 1)) * 4);
  for (auto* b : {&dp.y, &dp.dx}) *b = DeviceBuffer(size_t(std::max<int64_t>(rows * d, 1)) * 4);
  dp.dw = DeviceBuffer(size_t(std::max<int64_t>(rows, 1)) * 4);
  std::vector<DeviceExpertWeights> plain(static_cast<size_t>(experts)), copies;
  for (int64_t e = 0; e < experts; ++e) {
    const size_t at = size_t(e * fd);
    plain[size_t(e)] = {dp.w1.as<float>() + at, dp.w3.as<float>() + at, dp.w2.as<float>() + at, nullptr, nullptr,
                        nullptr, dp.g1.as<float>() + at, dp.g3.as<float>() + at, dp.g2.as<float>() + at};
  }
  if (bf16) {  // the GPU model's layout: a bf16 copy of every matrix, made once
    for (auto* b : {&dp.w1_16, &dp.w3_16, &dp.w2_16}) *b = DeviceBuffer(size_t(experts * fd) * 2);
    round_to_bf16(dp.w1.as<float>(), dp.w1_16.as<uint16_t>(), experts * fd, st);
    round_to_bf16(dp.w3.as<float>(), dp.w3_16.as<uint16_t>(), experts * fd, st);
    round_to_bf16(dp.w2.as<float>(), dp.w2_16.as<uint16_t>(), experts * fd, st);
    copies = plain;
    for (int64_t e = 0; e < experts; ++e) {
      const size_t at = size_t(e * fd);
      copies[size_t(e)].w1_bf16 = dp.w1_16.as<uint16_t>() + at;
      copies[size_t(e)].w3_bf16 = dp.w3_16.as<uint16_t>() + at;
      copies[size_t(e)].w2_bf16 = dp.w2_16.as<uint16_t>() + at;
    }
  }
  const DeviceExpertShape shape{d, f, limit};
  // each variant in an arena of exactly the size experts_scratch_bytes promises (an overrun throws)
  DeviceArena scratch_plain(std::max<size_t>(experts_scratch_bytes(type, p.offsets.data(), experts, shape, true), 1),
                            "experts scratch (weights rounded here)");
  DeviceArena scratch_copies(
      std::max<size_t>(experts_scratch_bytes(type, p.offsets.data(), experts, shape, false), 1),
      "experts scratch (bf16 copies given)");
  auto step = [&](const std::vector<DeviceExpertWeights>& ew, DeviceArena& scratch) {
    experts_forward(blas, type, ew.data(), experts, p.offsets.data(), shape, dp.x.as<float>(), dp.w.as<float>(),
                    dp.g.as<float>(), dp.u.as<float>(), dp.h.as<float>(), dp.y.as<float>(), scratch, st);
    experts_backward(blas, type, ew.data(), experts, p.offsets.data(), shape, dp.x.as<float>(), dp.w.as<float>(),
                     dp.g.as<float>(), dp.u.as<float>(), dp.h.as<float>(), dp.dy.as<float>(), dp.dx.as<float>(),
                     dp.dw.as<float>(), scratch, st);
  };
  // one fresh run: outputs filled with NaN (every element must be written), gradients at their starting values
  auto run = [&](const std::vector<DeviceExpertWeights>& ew, DeviceArena& scratch) {
    hs.stream().synchronize();
    for (auto* b : {&dp.g, &dp.u, &dp.h, &dp.y, &dp.dx, &dp.dw})
      TREX_CUDA_CHECK(cudaMemsetAsync(b->as<void>(), 0xff, b->bytes(), st));
    hs.stream().synchronize();
    for (int64_t e = 0; e < experts; ++e) {
      dp.g1.upload(p.g1_start(e), size_t(fd) * 4, size_t(e * fd) * 4);
      dp.g3.upload(p.g3_start(e), size_t(fd) * 4, size_t(e * fd) * 4);
      dp.g2.upload(p.g2_start(e), size_t(fd) * 4, size_t(e * fd) * 4);
    }
    step(ew, scratch);
    hs.stream().synchronize();
  };

  // the experts compared: all, or the busiest, the least busy non-empty one and evenly spread others
  std::vector<int64_t> order;
  for (int64_t e = 0; e < experts; ++e)
    if (counts[size_t(e)] > 0) order.push_back(e);
  std::vector<int64_t> sampled = order;
  if (sample_experts > 0 && int64_t(order.size()) > sample_experts) {
    std::stable_sort(order.begin(), order.end(),
                     [&](int64_t a, int64_t b) { return counts[size_t(a)] > counts[size_t(b)]; });
    sampled.clear();
    for (int64_t k = 0; k < sample_experts; ++k)
      sampled.push_back(order[size_t(k * (int64_t(order.size()) - 1) / std::max<int64_t>(sample_experts - 1, 1))]);
    std::sort(sampled.begin(), sampled.end());
    sampled.erase(std::unique(sampled.begin(), sampled.end()), sampled.end());
  }
  auto collect = [&](std::vector<ExpertValues>& per_expert) {
    per_expert.clear();
    for (int64_t e : sampled) per_expert.push_back(download_expert(p, dp, e));
  };
  auto flat = [](const std::vector<ExpertValues>& v) {
    ExpertValues all;
    for (const ExpertValues& one : v) append(all, one);
    return all;
  };

  std::vector<ExpertValues> got, again;
  run(plain, scratch_plain);
  collect(got);
  // experts without rows: their gradients exactly as they started
  ExpertValues untouched, start;
  for (int64_t e = 0; e < experts; ++e) {
    if (counts[size_t(e)] != 0) continue;
    const ExpertValues v = download_expert(p, dp, e);
    cat(untouched.g1, v.g1), cat(untouched.g1, v.g3), cat(untouched.g1, v.g2);
    cat(start.g1, std::vector<float>(p.g1_start(e), p.g1_start(e) + fd));
    cat(start.g1, std::vector<float>(p.g3_start(e), p.g3_start(e) + fd));
    cat(start.g1, std::vector<float>(p.g2_start(e), p.g2_start(e) + fd));
  }
  run(plain, scratch_plain);
  collect(again);
  const Compare same = same_bits("the same call again", flat(got), flat(again));
  std::optional<Compare> same_copies;
  if (bf16) {
    run(copies, scratch_copies);
    collect(again);
    same_copies = same_bits("with the weights' bf16 copies given", flat(got), flat(again));
  }

  // the CPU reference of the same recipe on the sampled experts; the backward's from the device's saved g, u, h.
  // (The bf16 recipe needs AVX512_BF16 on the host: without it the check reports a failure, never a pass.)
  const bool oracle = !bf16 || nn::bf16_matmul_supported();
  ExpertValues ref, gpu;
  ExpertBounds bound;
  for (size_t i = 0; oracle && i < sampled.size(); ++i) {
    const int64_t e = sampled[i];
    ExpertValues r, rb;
    cpu_experts_forward(p, e, /*reference=*/true, bf16, r);
    rb.g = got[i].g, rb.u = got[i].u, rb.h = got[i].h;
    cpu_experts_backward(p, e, /*reference=*/true, bf16, rb);
    ExpertBounds fb = experts_forward_bounds(p, e, r, bf16);
    const ExpertBounds bb = experts_backward_bounds(p, e, rb, bf16);
    r.dx = rb.dx, r.dw = rb.dw, r.g1 = rb.g1, r.g3 = rb.g3, r.g2 = rb.g2;
    fb.dx = bb.dx, fb.dw = bb.dw, fb.g1 = bb.g1, fb.g3 = bb.g3, fb.g2 = bb.g2;
    append(ref, r), append(bound, fb), append(gpu, got[i]);
  }
  if (oracle) {
    rep.checks = compare_experts(gpu, ref, bound, true, true);
  } else {
    Compare none;
    none.what = "CPU reference (this host lacks AVX512_BF16: no bf16 oracle)";
    none.n = none.bad = 1;
    rep.checks.push_back(none);
  }
  if (!untouched.g1.empty())
    rep.checks.push_back(compare("empty experts' gradients untouched (exactly)", untouched.g1, start.g1, 0, 0));
  rep.checks.push_back(same);
  if (same_copies) rep.checks.push_back(*same_copies);
  if (sampled.size() != size_t(std::count_if(counts.begin(), counts.end(), [](int64_t c) { return c > 0; })))
    rep.shape += " (CPU side on " + std::to_string(sampled.size()) + " experts)";

  if (hs.perf()) {
    const std::vector<DeviceExpertWeights>& ew = bf16 ? copies : plain;  // as the GPU model will call it
    DeviceArena& scratch = bf16 ? scratch_copies : scratch_plain;
    rep.ms = hs.time_ms([&] { step(ew, scratch); });
    const double used = double(experts - empty), eb = bf16 ? 2 : 4;
    // weights read by both passes, gradients read and written; x, w, dy, g, u, h read, g, u, h, y, dx, dw written
    rep.bytes = used * double(fd) * (6 * eb + 24) + 4.0 * double(rows) * double(4 * d + 6 * f);
    rep.flops = 18.0 * double(rows) * double(d) * double(f);
  }
  return rep;
}

}  // namespace trex::cuda::check
