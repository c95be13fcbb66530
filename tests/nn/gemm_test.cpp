// gemm (cblas) against the reference loop, all transpose combinations and accumulate.
#include "nn/gemm.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "util/rng.hpp"

TEST(Gemm, MatchesReference) {
  trex::Rng rng(7);
  const int64_t m = 13, n = 9, k = 21;
  for (int ta = 0; ta < 2; ++ta)
    for (int tb = 0; tb < 2; ++tb)
      for (float beta : {0.0f, 0.5f}) {
        std::vector<float> a(m * k), b(k * n), c(m * n), r(m * n);
        for (auto& v : a) v = float(rng.normal());
        for (auto& v : b) v = float(rng.normal());
        for (size_t i = 0; i < c.size(); ++i) c[i] = r[i] = float(rng.normal());
        int64_t lda = ta ? m : k, ldb = tb ? k : n;
        trex::nn::gemm(ta, tb, m, n, k, 1.5f, a.data(), lda, b.data(), ldb, beta, c.data(), n);
        trex::nn::gemm_reference(ta, tb, m, n, k, 1.5f, a.data(), lda, b.data(), ldb, beta, r.data(), n);
        for (size_t i = 0; i < c.size(); ++i) ASSERT_NEAR(c[i], r[i], 1e-4f) << ta << tb << beta;
      }
}

// gemm_batch (OpenMP over calls, calls cut into row / column blocks) against the reference, for batches smaller
// and larger than the thread count, with and without transposes.
TEST(Gemm, BatchMatchesReference) {
  trex::Rng rng(11);
  for (int count : {1, 2, 5}) {
    std::vector<std::vector<float>> as, bs, cs, rs;
    std::vector<trex::nn::GemmCall> calls;
    for (int i = 0; i < count; ++i) {
      const int64_t m = 37 + 60 * i, n = 150 - 20 * i, k = 70 + 3 * i;  // above the split threshold
      const bool ta = i % 2 == 1, tb = i % 3 != 1;
      as.emplace_back(size_t(m * k));
      bs.emplace_back(size_t(k * n));
      cs.emplace_back(size_t(m * n));
      for (auto& v : as.back()) v = float(rng.normal());
      for (auto& v : bs.back()) v = float(rng.normal());
      for (auto& v : cs.back()) v = float(rng.normal());
      rs.push_back(cs.back());
      calls.push_back({ta, tb, m, n, k, 0.75f, as.back().data(), ta ? m : k, bs.back().data(), tb ? k : n,
                       i == 0 ? 0.0f : 1.0f, cs.back().data(), n});
    }
    std::vector<trex::nn::GemmCall> ref = calls;
    for (int i = 0; i < count; ++i) ref[size_t(i)].c = rs[size_t(i)].data();
    trex::nn::gemm_batch(calls);
    trex::nn::gemm_batch_reference(ref);
    for (int i = 0; i < count; ++i)
      for (size_t j = 0; j < cs[size_t(i)].size(); ++j)
        ASSERT_NEAR(cs[size_t(i)][j], rs[size_t(i)][j], 2e-4f * (1 + std::fabs(rs[size_t(i)][j])))
            << "count " << count << " call " << i << " element " << j;
  }
}
