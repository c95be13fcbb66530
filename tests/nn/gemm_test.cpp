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
