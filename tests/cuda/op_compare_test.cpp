// The op-check harness's comparisons themselves (tests/cuda/gpu/op_check.hpp), which need no device: a value
// outside the bound, a NaN, a size mismatch or a flipped bit must fail, so a gpu test cannot pass by accident.
// CUDA builds only (the harness links the CUDA runtime); it runs on machines without a GPU too.
#include <gtest/gtest.h>

#if TREX_HAVE_CUDA
#include <cmath>
#include <vector>

#include "op_check.hpp"

using namespace trex::cuda::check;

TEST(CudaOpCompare, BoundsNansAndSizes) {
  const std::vector<float> ref{1.0f, -2.0f, 100.0f};
  EXPECT_TRUE(compare("x", {1.0f, -2.0f, 100.0f}, ref, 0, 0).ok());
  EXPECT_TRUE(compare("x", {1.0f + 1e-7f, -2.0f, 100.001f}, ref, 1e-6, 1e-5).ok());
  const Compare far = compare("x", {1.0f, -2.0f, 100.01f}, ref, 1e-6, 1e-5);
  EXPECT_FALSE(far.ok());
  EXPECT_EQ(far.bad, 1);
  EXPECT_EQ(far.worst, 2);
  EXPECT_NE(far.str().find("FAIL"), std::string::npos) << far.str();
  const Compare nan = compare("x", {1.0f, NAN, 100.0f}, ref, 1, 1);
  EXPECT_FALSE(nan.ok());
  EXPECT_EQ(nan.worst, 1);
  EXPECT_FALSE(compare("x", {1.0f, -2.0f}, ref, 1, 1).ok());
  EXPECT_FALSE(compare("x", {}, {}, 1, 1).ok());  // nothing compared is not a pass
  EXPECT_TRUE(compare_bound("x", {1.5f, -2.0f, 100.0f}, ref, {0.5, 0, 0}).ok());
  EXPECT_FALSE(compare_bound("x", {1.5f, -2.0f, 100.0f}, ref, {0.4, 0, 0}).ok());
  EXPECT_FALSE(compare_bound("x", ref, ref, {0.0}).ok());
}

TEST(CudaOpCompare, BitsAndReports) {
  EXPECT_TRUE(compare_bits("b", {1, 2, 3}, {1, 2, 3}).ok());
  const Compare c = compare_bits("b", {1, 2, 4}, {1, 2, 3});
  EXPECT_FALSE(c.ok());
  EXPECT_EQ(c.worst, 2);
  OpReport r;
  EXPECT_FALSE(r.ok());  // a report without checks never passes
  r.checks.push_back(compare_bits("b", {1}, {1}));
  EXPECT_TRUE(r.ok());
  r.checks.push_back(c);
  EXPECT_FALSE(r.ok());
  r.ms = 2.0;
  r.bytes = 4e9;
  r.flops = 2e12;
  EXPECT_NE(r.str().find("2000.0 GB/s, 1000.0 TFLOP/s (101.1 % of 989, 126.6 % of 790)"), std::string::npos) << r.str();
}
#endif
