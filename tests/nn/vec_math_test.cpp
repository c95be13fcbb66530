// fast_expf / fast_sigmoidf (nn/vec_math.hpp) against std::exp in double: relative error, the underflow and
// saturation ends, NaN propagation, and fast_sigmoidf inside a `#pragma omp simd` loop.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "nn/vec_math.hpp"

using trex::nn::fast_expf;
using trex::nn::fast_sigmoidf;

TEST(VecMath, FastExpMatchesStdExp) {
  double worst = 0;
  for (float x = -87.0f; x <= 88.0f; x += 0.00731f) {
    const double ref = std::exp(double(x));
    const double rel = std::fabs(double(fast_expf(x)) - ref) / ref;
    worst = std::max(worst, rel);
    ASSERT_LT(rel, 3e-7) << "x=" << x;
  }
  EXPECT_GT(worst, 0.0);  // a different function from std::exp, yet within ~2 ulp
  EXPECT_EQ(fast_expf(0.0f), 1.0f);
  EXPECT_EQ(fast_expf(-100.0f), 0.0f);
  EXPECT_EQ(fast_expf(-std::numeric_limits<float>::infinity()), 0.0f);
  EXPECT_TRUE(std::isfinite(fast_expf(1000.0f)));
  EXPECT_NEAR(fast_expf(88.3f) / std::exp(double(88.3f)), 1.0, 1e-6);
  EXPECT_TRUE(std::isnan(fast_expf(std::numeric_limits<float>::quiet_NaN())));
}

TEST(VecMath, SigmoidInAVectorisedLoop) {
  std::vector<float> x(1003), y(x.size());
  for (size_t i = 0; i < x.size(); ++i) x[i] = -40.0f + 80.0f * float(i) / float(x.size());
#pragma omp simd
  for (size_t i = 0; i < x.size(); ++i) y[i] = fast_sigmoidf(x[i]);
  for (size_t i = 0; i < x.size(); ++i) {
    const double ref = 1.0 / (1.0 + std::exp(-double(x[i])));
    ASSERT_NEAR(y[i], ref, 1e-7 + 3e-7 * ref) << x[i];
  }
}
