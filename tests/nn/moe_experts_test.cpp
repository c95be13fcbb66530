// Grouped routed experts (nn/moe_experts.hpp): the fast path (OpenMP over (expert, row block) tasks, fused
// SwiGLU and routing-weight scaling, weight gradients as one batch) against the expert-by-expert reference,
// forward and backward, with uneven and empty experts and the SwiGLU clamp active.
#include "nn/moe_experts.hpp"

#include <gtest/gtest.h>

#include "cpu_features.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include "nn/gemm_bf16.hpp"
#include "util/rng.hpp"

namespace {

using trex::nn::ExpertWeights;

void expect_close(const std::vector<float>& a, const std::vector<float>& b, float tol, const char* what) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i)
    ASSERT_NEAR(a[i], b[i], tol * (1 + std::fabs(b[i]))) << what << " element " << i;
}

// exact: every output but the routing-weight gradient (a dot product summed in another order) must have the
// reference's bits (the bf16 products' results depend only on k, not on how the rows are cut).
void grouped_matches_reference(const std::vector<int64_t>& offsets, bool exact = false) {
  trex::Rng rng(5);
  const int64_t d = 48, f = 80, E = 5;
  const int64_t rows = offsets.back();
  auto rnd = [&](int64_t n, double scale) {
    std::vector<float> v(static_cast<size_t>(n));
    for (auto& x : v) x = float(scale * rng.normal());
    return v;
  };
  auto x = rnd(rows * d, 1.0), dy = rnd(rows * d, 1.0);
  std::vector<float> w(static_cast<size_t>(rows));
  for (auto& v : w) v = float(0.2 + rng.uniform());
  std::vector<std::vector<float>> W;  // w1, w3, w2 per expert
  for (int64_t e = 0; e < E; ++e)
    for (int m = 0; m < 3; ++m) W.push_back(rnd(f * d, 0.3));  // 0.3: some g > limit and |u| > limit
  std::vector<std::vector<float>> G1(W.size(), std::vector<float>(size_t(f * d), 0.0f)), G2 = G1;
  std::vector<ExpertWeights> fast(static_cast<size_t>(E)), ref(static_cast<size_t>(E));
  for (int64_t e = 0; e < E; ++e) {
    const size_t i = size_t(3 * e);
    fast[size_t(e)] = {W[i].data(), W[i + 1].data(), W[i + 2].data(), G1[i].data(), G1[i + 1].data(), G1[i + 2].data()};
    ref[size_t(e)] = {W[i].data(), W[i + 1].data(), W[i + 2].data(), G2[i].data(), G2[i + 1].data(), G2[i + 2].data()};
  }
  const trex::nn::ExpertShape shape{d, f, 1.5f};
  trex::nn::Arena arena;
  std::vector<float> g1(static_cast<size_t>(rows * f)), u1 = g1, h1 = g1, y1(static_cast<size_t>(rows * d));
  std::vector<float> g2 = g1, u2 = g1, h2 = g1, y2 = y1;
  trex::nn::experts_forward(fast, offsets.data(), shape, x.data(), w.data(), g1.data(), u1.data(), h1.data(),
                            y1.data(), arena);
  trex::nn::experts_forward_reference(ref, offsets.data(), shape, x.data(), w.data(), g2.data(), u2.data(),
                                      h2.data(), y2.data(), arena);
  int clamped = 0;
  for (float v : g2) clamped += v > 1.5f;
  EXPECT_GT(clamped, 0) << "the test must exercise the SwiGLU clamp";
  const float tol = exact ? 0.0f : 1e-4f;
  expect_close(g1, g2, std::min(tol, 1e-5f), "g");
  expect_close(h1, h2, std::min(tol, 1e-5f), "h");
  expect_close(y1, y2, tol, "y");
  std::vector<float> dx1(static_cast<size_t>(rows * d)), dx2 = dx1, dw1(static_cast<size_t>(rows)), dw2 = dw1;
  trex::nn::experts_backward(fast, offsets.data(), shape, x.data(), w.data(), g1.data(), u1.data(), h1.data(),
                             dy.data(), dx1.data(), dw1.data(), arena);
  trex::nn::experts_backward_reference(ref, offsets.data(), shape, x.data(), w.data(), g2.data(), u2.data(),
                                       h2.data(), dy.data(), dx2.data(), dw2.data(), arena);
  expect_close(dx1, dx2, tol, "dx");
  expect_close(dw1, dw2, 1e-4f, "dw");
  for (size_t i = 0; i < G1.size(); ++i) expect_close(G1[i], G2[i], tol, "weight gradient");
  double gsum = 0;
  for (float v : G1[3]) gsum += std::fabs(v);  // expert 1 has no rows: its gradients stay 0
  EXPECT_EQ(gsum, 0.0);
}

TEST(MoeExperts, GroupedMatchesReference) {
  grouped_matches_reference({0, 300, 300, 317, 590, 601});  // expert 1 empty; blocks of 128 + tails
}

// Under bf16 matrix products (nn/gemm_bf16.hpp) the tasks take blocks of 512 rows and keep their operands in bf16
// (rounded once, read in place); the reference rounds fp32 operands inside the products: the same bits.
TEST(MoeExperts, GroupedMatchesReferenceWithBf16Matmul) {
  TREX_REQUIRE_BF16();
  trex::nn::Bf16MatmulScope bf16;
  grouped_matches_reference({0, 1100, 1100, 1117, 1390, 1401}, true);  // blocks of 512 + tails, an empty expert
}

}  // namespace
