// The bounds of the MoE routing op checks (tests/cuda/gpu/moe_route_cases.hpp), tested without a device: the CUDA
// kernels' arithmetic replayed on the CPU in the device's orders (a warp's 32 lane partials and butterfly for the
// affinity sums, the balance loss's 64-token chunk partials, counts times E / (k T) instead of a running sum, FMA
// in the dot product) and with every exp and log1p moved by 2 and 1 ulp (the CUDA math functions' documented
// error) stays inside each bound against the nn oracle; a wrong balance coefficient (alpha 0.1 % off) or a count
// off by one falls outside. CUDA builds only (the bounds live in the gpu harness library); runs without a GPU.
#include <gtest/gtest.h>

#if TREX_HAVE_CUDA
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <vector>

#include "moe_route_cases.hpp"
#include "nn/moe_route.hpp"
#include "nn/ops.hpp"
#include "op_check.hpp"
#include "util/rng.hpp"
#include "float_vectors.hpp"

using namespace trex;
using namespace trex::cuda::check;

namespace {

using trex::testing::move_ulps;

// A warp's sum: lane l adds elements l, l + 32, ... in order, then the xor butterfly.
double warp_order_sum(const std::vector<double>& v) {
  double p[32] = {}, q[32];
  for (size_t e = 0; e < v.size(); ++e) p[e % 32] += v[e];
  for (int o = 16; o > 0; o >>= 1) {
    for (int l = 0; l < 32; ++l) q[l] = p[l] + p[l ^ o];
    std::copy(q, q + 32, p);
  }
  return p[0];
}

// The device router backward's arithmetic (moe_route.cu, route_backward_kernel); exp moved by `exp_ulps` with an
// alternating sign; alpha_scale != 1 is the wrong variant.
std::vector<float> device_order_backward(const std::vector<float>& s, const std::vector<float>& a,
                                         const std::vector<int32_t>& sel, const std::vector<float>& dw, int64_t N,
                                         int64_t E, int64_t k, float R, bool balance, int64_t B, int64_t T,
                                         double alpha, int exp_ulps, double alpha_scale = 1.0) {
  std::vector<int32_t> cnt(size_t(B * E), 0);
  for (int64_t i = 0; i < N; ++i)
    for (int64_t j = 0; j < k; ++j) ++cnt[size_t((i / T) * E + sel[size_t(i * k + j)])];
  const double per_count = double(E) / double(k * T);
  std::vector<float> ds(size_t(N * E));
  std::vector<double> terms(static_cast<size_t>(E));
  for (int64_t i = 0; i < N; ++i) {
    const float* ai = a.data() + i * E;
    float S = 0, dot = 0;
    for (int64_t j = 0; j < k; ++j) {
      const float av = ai[sel[size_t(i * k + j)]];
      S += av;
      dot = std::fma(dw[size_t(i * k + j)], av, dot);
    }
    double fp = 0, coef = 0;
    const int32_t* c = cnt.data() + (i / T) * E;
    if (balance) {
      for (int64_t e = 0; e < E; ++e) terms[size_t(e)] = ai[e];
      const double A = warp_order_sum(terms);
      for (int64_t e = 0; e < E; ++e) terms[size_t(e)] = double(c[e]) * per_count * ai[e] / A;
      fp = warp_order_sum(terms);
      coef = alpha * alpha_scale / (double(B) * double(T) * A);
    }
    for (int64_t e = 0; e < E; ++e) {
      float v = 0;
      for (int64_t j = 0; j < k; ++j)
        if (sel[size_t(i * k + j)] == e) v += R / S * (dw[size_t(i * k + j)] - dot / S);
      if (balance) v += float(coef * (double(c[e]) * per_count - fp));
      const float ex = move_ulps(std::exp(-s[size_t(i * E + e)]), (i + e) % 2 ? exp_ulps : -exp_ulps);
      const float g = ai[e] > 0 ? (1.0f / (1.0f + ex)) / (2.0f * ai[e]) : 0.0f;
      ds[size_t(i * E + e)] = v * g;
    }
  }
  return ds;
}

// The device balance loss's order (moe_route.cu, balance_partial_kernel / balance_row_kernel); count_error adds
// one to expert 0's count of sequence 0 (the wrong variant).
double device_order_balance(const std::vector<float>& a, const std::vector<int32_t>& sel, int64_t B, int64_t T,
                            int64_t E, int64_t k, double alpha, int count_error = 0) {
  double loss = 0;
  std::vector<double> terms(static_cast<size_t>(E));
  for (int64_t b = 0; b < B; ++b) {
    std::vector<double> P(size_t(E), 0.0);
    std::vector<int64_t> cnt(size_t(E), 0);
    for (int64_t c0 = 0; c0 < T; c0 += 64) {
      std::vector<double> part(size_t(E), 0.0);
      for (int64_t t = c0; t < std::min(T, c0 + 64); ++t) {
        const int64_t i = b * T + t;
        for (int64_t e = 0; e < E; ++e) terms[size_t(e)] = a[size_t(i * E + e)];
        const double A = warp_order_sum(terms);
        for (int64_t e = 0; e < E; ++e) part[size_t(e)] += a[size_t(i * E + e)] / A / double(T);
        for (int64_t j = 0; j < k; ++j) ++cnt[size_t(sel[size_t(i * k + j)])];
      }
      for (int64_t e = 0; e < E; ++e) P[size_t(e)] += part[size_t(e)];
    }
    if (b == 0) cnt[0] += count_error;
    double row[256] = {};  // thread t's experts t, t + 256, ...; then a pairwise tree (the block reduction's shape)
    for (int64_t e = 0; e < E; ++e) row[e % 256] += double(E) / double(k * T) * double(cnt[size_t(e)]) * P[size_t(e)];
    for (int w = 128; w > 0; w >>= 1)
      for (int t = 0; t < w; ++t) row[t] += row[t + w];
    loss += alpha * row[0] / double(B);
  }
  return loss;
}

struct Routed {
  std::vector<float> scores, a, w, dw;
  std::vector<int32_t> sel;
};

Routed draw(uint64_t seed, int64_t N, int64_t E, int64_t k, float R) {
  Rng rng(seed);
  Routed r;
  r.scores = randn(rng, size_t(N * E), 2.0);
  const std::vector<float> bias = randn(rng, size_t(E), 0.1);
  r.dw = randn(rng, size_t(N * k), 1.0);
  r.a.resize(size_t(N * E));
  r.w.resize(size_t(N * k));
  r.sel.resize(size_t(N * k));
  nn::moe_route_forward(r.scores.data(), bias.data(), nullptr, nullptr, N, E, k, R, r.a.data(), r.sel.data(),
                        r.w.data());
  return r;
}

}  // namespace

TEST(CudaMoeRouteRef, AffinityBoundHoldsWithExpAndLog1pMovedByTheirCudaErrors) {
  Rng rng(3);
  std::vector<float> s;
  for (int n = -3000; n <= 3000; ++n) s.push_back(float(n) * 0.01f);  // both branches, the switch at 20
  for (int n = 0; n < 100000; ++n) s.push_back(float(4 * rng.normal()));
  double worst = 0;
  for (float v : s) {
    const float ref = nn::sqrt_softplus(v);
    for (int de : {-2, 2})
      for (int dl : {-1, 1}) {
        const float got = std::sqrt(v > 20.0f ? v : move_ulps(std::log1p(move_ulps(std::exp(v), de)), dl));
        worst = std::max(worst, std::fabs(double(got) - double(ref)) / (kMoeAffinityRtol * double(ref)));
      }
  }
  std::printf("affinity: worst |a - a_cpu| / bound %.3f\n", worst);
  EXPECT_LE(worst, 1.0);
  EXPECT_GT(worst, 0.05);  // the moved functions do show in the affinities: the bound is not vacuous
}

TEST(CudaMoeRouteRef, BalanceLossBoundHoldsForTheDeviceOrderAndNotForAWrongCount) {
  for (auto [B, T, E, k] : std::vector<std::array<int64_t, 4>>{{2, 37, 8, 2}, {1, 257, 256, 6}, {3, 130, 16, 4}}) {
    const Routed r = draw(uint64_t(B * 1000 + T + E), B * T, E, k, 2.5f);
    const double alpha = 0.01;
    const double ref = nn::moe_balance_loss(r.a.data(), r.sel.data(), B, T, E, k, alpha);
    const double bound = moe_balance_loss_bound(B, T, E, ref);
    const double got = device_order_balance(r.a, r.sel, B, T, E, k, alpha);
    EXPECT_LE(std::fabs(got - ref), bound) << "B " << B << " T " << T << " E " << E;
    std::printf("balance loss B=%lld T=%lld E=%lld: |device order - cpu| / bound %.3g\n", (long long)B,
                (long long)T, (long long)E, std::fabs(got - ref) / bound);
    EXPECT_GT(std::fabs(device_order_balance(r.a, r.sel, B, T, E, k, alpha, 1) - ref), 1e3 * bound);
  }
}

TEST(CudaMoeRouteRef, RouterBackwardBoundHoldsForTheDeviceOrderAndNotForAWrongCoefficient) {
  struct Shape {
    int64_t B, T, E, k;
    bool balance;
  };
  for (const Shape& sh : {Shape{2, 37, 8, 2, true}, Shape{1, 200, 256, 6, true}, Shape{1, 33, 1024, 8, true},
                          Shape{1, 11, 8, 1, true}, Shape{2, 45, 256, 6, false}}) {
    const int64_t N = sh.B * sh.T;
    const float R = 2.5f;
    const double alpha = 0.5;
    const Routed r = draw(uint64_t(N * 7 + sh.E), N, sh.E, sh.k, R);
    std::vector<float> ref(size_t(N * sh.E));
    nn::moe_route_backward(r.scores.data(), r.a.data(), r.sel.data(), r.dw.data(), N, sh.E, sh.k, R, sh.balance, sh.B,
                           sh.T, alpha, ref.data());
    const std::vector<double> bound = moe_route_backward_bound(r.scores.data(), r.a.data(), r.sel.data(), r.dw.data(),
                                                               ref.data(), N, sh.E, sh.k, R, sh.balance, sh.B, sh.T,
                                                               alpha);
    for (int exp_ulps : {0, 2}) {
      const Compare c = compare_bound("ds, device order", device_order_backward(r.scores, r.a, r.sel, r.dw, N, sh.E,
                                      sh.k, R, sh.balance, sh.B, sh.T, alpha, exp_ulps), ref, bound);
      EXPECT_TRUE(c.ok()) << c.str();
      std::printf("E=%lld k=%lld balance %d exp moved %d ulp: %s\n", (long long)sh.E, (long long)sh.k,
                  int(sh.balance), exp_ulps, c.str().c_str());
    }
    if (sh.balance) {
      const Compare wrong = compare_bound("ds, alpha 0.1 % off", device_order_backward(r.scores, r.a, r.sel, r.dw, N,
                                          sh.E, sh.k, R, true, sh.B, sh.T, alpha, 0, 1.001), ref, bound);
      EXPECT_FALSE(wrong.ok()) << wrong.str();
    }
  }
}

#endif  // TREX_HAVE_CUDA
