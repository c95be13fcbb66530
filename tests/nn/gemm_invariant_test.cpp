// The batch-invariant NT GEMM (decoding's kernel): agrees with the reference loop, and a row's result is bitwise
// the same whether it is computed alone or with other rows (what OpenBLAS does not guarantee).
#include <gtest/gtest.h>

#include <vector>

#include "nn/gemm.hpp"
#include "util/rng.hpp"

using namespace trex::nn;

TEST(GemmInvariant, MatchesReference) {
  trex::Rng rng(3);
  for (int64_t k : {1, 15, 16, 17, 64, 259}) {
    const int64_t m = 7, n = 33;
    std::vector<float> a(size_t(m * k)), b(size_t(n * k)), c(size_t(m * n)), r(size_t(m * n));
    for (auto& v : a) v = float(rng.normal());
    for (auto& v : b) v = float(rng.normal());
    for (float beta : {0.0f, 0.5f}) {
      for (size_t i = 0; i < c.size(); ++i) c[i] = r[i] = float(rng.normal());
      gemm_nt_invariant(m, n, k, 1.5f, a.data(), k, b.data(), k, beta, c.data(), n);
      gemm_reference(false, true, m, n, k, 1.5f, a.data(), k, b.data(), k, beta, r.data(), n);
      for (size_t i = 0; i < c.size(); ++i) ASSERT_NEAR(c[i], r[i], 2e-4f) << "k " << k << " beta " << beta;
    }
  }
}

TEST(GemmInvariant, RowsDoNotDependOnTheBatch) {
  trex::Rng rng(4);
  const int64_t k = 256, n = 1024, m = 40;
  std::vector<float> a(size_t(m * k)), b(size_t(n * k)), all(size_t(m * n)), one(static_cast<size_t>(n));
  for (auto& v : a) v = float(rng.normal());
  for (auto& v : b) v = float(rng.normal());
  BatchInvariantScope scope;
  ASSERT_TRUE(batch_invariant_active());
  linear(a.data(), b.data(), all.data(), m, n, k);  // through gemm(): dispatched to the invariant kernel
  for (int64_t i : {0, 1, 17, 39}) {
    linear(a.data() + i * k, b.data(), one.data(), 1, n, k);
    for (int64_t j = 0; j < n; ++j) ASSERT_EQ(one[size_t(j)], all[size_t(i * n + j)]) << "row " << i << " col " << j;
  }
}

TEST(GemmInvariant, ScopeEndsTheMode) {
  { BatchInvariantScope s; EXPECT_TRUE(batch_invariant_active()); }
  EXPECT_FALSE(batch_invariant_active());
}
