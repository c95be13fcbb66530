// MoE routing arithmetic (nn/moe_route.hpp), the model's routing and the CUDA routing kernels' oracle: the router
// backward against central differences of a double twin of the forward loss (a random linear functional of the
// routing weights plus the sequence-balance loss, the selection held fixed), with and without the balance term,
// hash and biased top-k selection; ties resolved to the lower index; the grouping stable in (token, slot) order;
// the gather and the combine against their serial definitions, bit for bit.
#include "nn/moe_route.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "util/rng.hpp"
#include "float_vectors.hpp"

namespace {

using trex::nn::moe_balance_loss;
using trex::nn::moe_group_rows;
using trex::nn::moe_route_backward;
using trex::nn::moe_route_forward;

using trex::testing::randn;

// The forward loss in double with the selection held fixed: sum_ij c_ij w_ij + (balance) the balance loss.
struct Twin {
  int64_t B, T, E, k;
  double R, alpha;
  const std::vector<int32_t>& sel;
  const std::vector<float>& c;  // the functional's coefficients [N, k] (= dL/dw)
  bool balance;

  static double affinity(double s) { return std::sqrt(s > 20 ? s : std::log1p(std::exp(s))); }
  double loss(const std::vector<double>& s) const {
    const int64_t N = B * T;
    std::vector<double> a(size_t(N * E));
    for (size_t i = 0; i < a.size(); ++i) a[i] = affinity(s[i]);
    double L = 0;
    for (int64_t i = 0; i < N; ++i) {
      double S = 0;
      for (int64_t j = 0; j < k; ++j) S += a[size_t(i * E + sel[size_t(i * k + j)])];
      for (int64_t j = 0; j < k; ++j) L += double(c[size_t(i * k + j)]) * R * a[size_t(i * E + sel[size_t(i * k + j)])] / S;
    }
    if (!balance) return L;
    for (int64_t b = 0; b < B; ++b) {
      std::vector<double> cnt(size_t(E), 0), P(size_t(E), 0);
      for (int64_t t = 0; t < T; ++t) {
        const int64_t i = b * T + t;
        for (int64_t j = 0; j < k; ++j) cnt[size_t(sel[size_t(i * k + j)])] += 1;
        double A = 0;
        for (int64_t e = 0; e < E; ++e) A += a[size_t(i * E + e)];
        for (int64_t e = 0; e < E; ++e) P[size_t(e)] += a[size_t(i * E + e)] / A / double(T);
      }
      for (int64_t e = 0; e < E; ++e) L += alpha / double(B) * double(E) / double(k * T) * cnt[size_t(e)] * P[size_t(e)];
    }
    return L;
  }
  // central differences of loss in every score
  std::vector<double> grad(const std::vector<float>& scores, double h = 1e-5) const {
    std::vector<double> s(scores.begin(), scores.end()), g(scores.size());
    for (size_t i = 0; i < s.size(); ++i) {
      const double s0 = s[i];
      s[i] = s0 + h;
      const double lp = loss(s);
      s[i] = s0 - h;
      const double lm = loss(s);
      s[i] = s0;
      g[i] = (lp - lm) / (2 * h);
    }
    return g;
  }
};

struct Routed {
  std::vector<float> a, w;
  std::vector<int32_t> sel;
};

Routed route(const std::vector<float>& scores, const float* bias, const int64_t* tid2eid, const int32_t* tokens,
             int64_t N, int64_t E, int64_t k, float R) {
  Routed r{std::vector<float>(size_t(N * E)), std::vector<float>(size_t(N * k)), std::vector<int32_t>(size_t(N * k))};
  moe_route_forward(scores.data(), bias, tid2eid, tokens, N, E, k, R, r.a.data(), r.sel.data(), r.w.data());
  return r;
}

// The backward against the twin's central differences; returns max |fd| (the gradient's scale).
double expect_backward_matches(const std::vector<float>& scores, const Routed& r, const std::vector<float>& dw,
                               int64_t B, int64_t T, int64_t E, int64_t k, float R, bool balance, double alpha) {
  const int64_t N = B * T;
  std::vector<float> ds(size_t(N * E), -7.0f);  // overwritten
  moe_route_backward(scores.data(), r.a.data(), r.sel.data(), dw.data(), N, E, k, R, balance, B, T, alpha, ds.data());
  const Twin tw{B, T, E, k, double(R), alpha, r.sel, dw, balance};
  const std::vector<double> fd = tw.grad(scores);
  double scale = 0;
  for (double v : fd) scale = std::max(scale, std::fabs(v));
  for (size_t i = 0; i < fd.size(); ++i)
    EXPECT_NEAR(ds[i], fd[i], 2e-5 * scale + 1e-5 * std::fabs(fd[i])) << "ds element " << i << " balance " << balance;
  return scale;
}

TEST(MoeRoute, BiasedTopkForwardMatchesTwinAndBackwardMatchesCentralDifferences) {
  trex::Rng rng(17);
  const int64_t B = 3, T = 5, N = B * T, E = 12, k = 3;
  const float R = 2.5f;
  const double alpha = 0.3;  // large, so that the balance term is a visible part of the gradient
  const auto scores = randn(rng, size_t(N * E), 1.5), bias = randn(rng, size_t(E), 0.3);
  const auto dw = randn(rng, size_t(N * k), 1.0);
  const Routed r = route(scores, bias.data(), nullptr, nullptr, N, E, k, R);
  // selection: the top-k of a + bias in descending order; weights renormalised over the selection
  for (int64_t i = 0; i < N; ++i) {
    std::vector<float> biased(static_cast<size_t>(E));
    for (int64_t e = 0; e < E; ++e) {
      ASSERT_FLOAT_EQ(r.a[size_t(i * E + e)], float(Twin::affinity(scores[size_t(i * E + e)])));
      biased[size_t(e)] = r.a[size_t(i * E + e)] + bias[size_t(e)];
    }
    double S = 0;
    for (int64_t j = 0; j < k; ++j) {
      const int32_t e = r.sel[size_t(i * k + j)];
      if (j > 0) {
        EXPECT_GT(biased[size_t(r.sel[size_t(i * k + j - 1)])], biased[size_t(e)]);
      }
      int64_t above = 0;
      for (int64_t f = 0; f < E; ++f) above += biased[size_t(f)] > biased[size_t(e)];
      EXPECT_EQ(above, j) << "token " << i << " slot " << j;
      S += r.a[size_t(i * E + e)];
    }
    for (int64_t j = 0; j < k; ++j)
      EXPECT_NEAR(r.w[size_t(i * k + j)], R * r.a[size_t(i * E + r.sel[size_t(i * k + j)])] / S, 1e-6);
  }
  // the balance loss against the twin's (the functional's coefficients zero)
  const std::vector<float> zero(size_t(N * k), 0.0f);
  const Twin bal{B, T, E, k, double(R), alpha, r.sel, zero, true};
  std::vector<double> sd(scores.begin(), scores.end());
  EXPECT_NEAR(moe_balance_loss(r.a.data(), r.sel.data(), B, T, E, k, alpha), bal.loss(sd), 1e-7 * bal.loss(sd));
  // moe_route_select from the forward's affinities: the same selection and weights, bit for bit
  Routed again{r.a, std::vector<float>(size_t(N * k)), std::vector<int32_t>(size_t(N * k))};
  trex::nn::moe_route_select(r.a.data(), bias.data(), nullptr, nullptr, N, E, k, R, again.sel.data(), again.w.data());
  EXPECT_EQ(again.sel, r.sel);
  EXPECT_EQ(again.w, r.w);

  const double with = expect_backward_matches(scores, r, dw, B, T, E, k, R, true, alpha);
  expect_backward_matches(scores, r, dw, B, T, E, k, R, false, alpha);
  // the balance term is a visible part of the gradient (so the first comparison could tell it missing)
  const Twin t1{B, T, E, k, double(R), alpha, r.sel, dw, true}, t0{B, T, E, k, double(R), alpha, r.sel, dw, false};
  const auto g1 = t1.grad(scores), g0 = t0.grad(scores);
  double diff = 0;
  for (size_t i = 0; i < g1.size(); ++i) diff = std::max(diff, std::fabs(g1[i] - g0[i]));
  EXPECT_GT(diff, 100 * 2e-5 * with);
}

TEST(MoeRoute, HashLayerSelectsTheTableRowAndBackwardMatchesCentralDifferences) {
  trex::Rng rng(23);
  const int64_t B = 2, T = 6, N = B * T, E = 8, k = 3, V = 5;
  const float R = 1.5f;
  std::vector<int64_t> table(size_t(V * k));
  for (int64_t v = 0; v < V; ++v)
    for (int64_t j = 0; j < k; ++j) table[size_t(v * k + j)] = (v * 3 + j * 5) % E;  // distinct per row
  std::vector<int32_t> tokens(static_cast<size_t>(N));
  for (auto& t : tokens) t = int32_t(rng.uniform_int(0, V - 1));
  const auto scores = randn(rng, size_t(N * E), 1.0), dw = randn(rng, size_t(N * k), 1.0);
  const auto bias = randn(rng, size_t(E), 5.0);  // ignored by a hash layer
  const Routed r = route(scores, bias.data(), table.data(), tokens.data(), N, E, k, R);
  for (int64_t i = 0; i < N; ++i) {
    float S = 0;
    for (int64_t j = 0; j < k; ++j) {
      EXPECT_EQ(r.sel[size_t(i * k + j)], table[size_t(tokens[size_t(i)] * k + j)]);
      S += r.a[size_t(i * E + r.sel[size_t(i * k + j)])];
    }
    for (int64_t j = 0; j < k; ++j)
      EXPECT_EQ(r.w[size_t(i * k + j)], R * r.a[size_t(i * E + r.sel[size_t(i * k + j)])] / S);
  }
  expect_backward_matches(scores, r, dw, B, T, E, k, R, false, 0.0);
}

TEST(MoeRoute, TiesGoToTheLowerIndex) {
  const int64_t E = 9, k = 4;
  // all scores equal: experts 0..k-1; a bias lifting 6 and 2 equally: 2, 6, then 0, 1
  const std::vector<float> scores(size_t(2 * E), 0.25f);
  std::vector<float> bias(size_t(E), 0.0f);
  const Routed flat = route(scores, bias.data(), nullptr, nullptr, 2, E, k, 1.0f);
  EXPECT_EQ(std::vector<int32_t>(flat.sel.begin(), flat.sel.begin() + k), (std::vector<int32_t>{0, 1, 2, 3}));
  bias[6] = bias[2] = 0.5f;
  const Routed lifted = route(scores, bias.data(), nullptr, nullptr, 2, E, k, 1.0f);
  EXPECT_EQ(std::vector<int32_t>(lifted.sel.begin() + k, lifted.sel.end()), (std::vector<int32_t>{2, 6, 0, 1}));
  for (float w : lifted.w) EXPECT_FLOAT_EQ(w, 0.25f);  // equal affinities: equal weights summing to R
}

TEST(MoeRoute, GroupingIsStableInTokenOrderAndInvertsRowOf) {
  trex::Rng rng(5);
  const int64_t N = 37, E = 9, k = 4;
  std::vector<int32_t> sel(size_t(N * k));
  for (auto& e : sel) e = int32_t(rng.uniform_int(0, E - 3));  // experts E-2, E-1 empty
  sel[7] = int32_t(E - 3);  // and repeats of one expert within a token (a hash table may hold them)
  sel[6] = int32_t(E - 3);
  std::vector<int64_t> counts(size_t(E), -1), offsets(size_t(E) + 1, -1);
  std::vector<int32_t> tok(size_t(N * k), -1), slot(size_t(N * k), -1), row_of(size_t(N * k), -1);
  moe_group_rows(sel.data(), N, E, k, counts.data(), offsets.data(), tok.data(), slot.data(), row_of.data());
  // the definition: entries i k + j sorted stably by expert
  std::vector<int32_t> order(size_t(N * k));
  for (size_t i = 0; i < order.size(); ++i) order[i] = int32_t(i);
  std::stable_sort(order.begin(), order.end(), [&](int32_t x, int32_t y) { return sel[size_t(x)] < sel[size_t(y)]; });
  for (size_t r = 0; r < order.size(); ++r) {
    EXPECT_EQ(tok[r], order[r] / k) << r;
    EXPECT_EQ(slot[r], order[r] % k) << r;
    EXPECT_EQ(row_of[size_t(order[r])], int32_t(r));
  }
  EXPECT_EQ(offsets[0], 0);
  for (int64_t e = 0; e < E; ++e) {
    EXPECT_EQ(counts[size_t(e)], std::count(sel.begin(), sel.end(), int32_t(e)));
    EXPECT_EQ(offsets[size_t(e) + 1], offsets[size_t(e)] + counts[size_t(e)]);
  }
  EXPECT_EQ(counts[size_t(E - 1)], 0);
}

TEST(MoeRoute, GatherAndCombineEqualTheirSerialLoops) {
  trex::Rng rng(9);
  const int64_t N = 23, E = 6, k = 3, d = 13;
  std::vector<int32_t> sel(size_t(N * k));
  for (auto& e : sel) e = int32_t(rng.uniform_int(0, E - 1));
  std::vector<int64_t> counts(static_cast<size_t>(E)), offsets(size_t(E) + 1);
  std::vector<int32_t> tok(size_t(N * k)), slot(size_t(N * k)), row_of(size_t(N * k));
  moe_group_rows(sel.data(), N, E, k, counts.data(), offsets.data(), tok.data(), slot.data(), row_of.data());
  const auto x = randn(rng, size_t(N * d), 1.0), w = randn(rng, size_t(N * k), 1.0);
  std::vector<float> xg(size_t(N * k * d)), wl(size_t(N * k));
  trex::nn::moe_gather_rows(x.data(), w.data(), tok.data(), slot.data(), N * k, k, d, xg.data(), wl.data());
  for (int64_t r = 0; r < N * k; ++r) {
    EXPECT_EQ(wl[size_t(r)], w[size_t(tok[size_t(r)] * k + slot[size_t(r)])]);
    for (int64_t j = 0; j < d; ++j) EXPECT_EQ(xg[size_t(r * d + j)], x[size_t(tok[size_t(r)] * d + j)]);
  }
  // the combine: bitwise the serial loop over the dispatched rows in increasing order
  const auto rows = randn(rng, size_t(N * k * d), 1e3);  // magnitudes far apart: the order shows in the bits
  auto out = randn(rng, size_t(N * d), 1e-3), serial = out;
  trex::nn::moe_scatter_add_rows(row_of.data(), N, k, d, rows.data(), out.data());
  for (int64_t r = 0; r < N * k; ++r)
    for (int64_t j = 0; j < d; ++j) serial[size_t(tok[size_t(r)] * d + j)] += rows[size_t(r * d + j)];
  EXPECT_EQ(out, serial);
}

}  // namespace
