// mHC's device arithmetic around its GEMMs and Sinkhorn (cuda/hc.hpp) against nn::hc_*_ref (hc_cases.hpp): the
// presets' 4 streams and 2 and 8, widths from 64 to 1024 that are not multiples of the 256-thread column stride (nor
// of 4, for rho's scalar loads), odd token counts around the 64-token chunks of the gate-parameter sums.
// gpu-labelled: skipped with the reason without a device.
#include <gtest/gtest.h>

#include "gpu_test.hpp"
#include "hc_cases.hpp"

using namespace trex::cuda::check;

TEST(CudaHc, PreForwardAndBackward) {
  TREX_REQUIRE_GPU();
  Harness h;
  expect_ok(check_hc_pre(h, 37, 4, 64, false));
  expect_ok(check_hc_pre(h, 129, 4, 257, true));   // chunks of 64, 64 and 1 token
  expect_ok(check_hc_pre(h, 65, 2, 1023, true));   // nd = 2046: rho's scalar path
  expect_ok(check_hc_pre(h, 31, 8, 96, false));
  expect_ok(check_hc_pre(h, 1, 4, 1024, true));    // one token, one chunk
}

TEST(CudaHc, PostForwardAndBackward) {
  TREX_REQUIRE_GPU();
  Harness h;
  expect_ok(check_hc_post(h, 37, 4, 64));
  expect_ok(check_hc_post(h, 63, 4, 777));
  expect_ok(check_hc_post(h, 19, 2, 1001));
  expect_ok(check_hc_post(h, 23, 8, 300));
}

TEST(CudaHc, HeadForwardAndBackward) {
  TREX_REQUIRE_GPU();
  Harness h;
  expect_ok(check_hc_head(h, 37, 4, 64));
  expect_ok(check_hc_head(h, 131, 4, 513));
  expect_ok(check_hc_head(h, 45, 2, 999));
  expect_ok(check_hc_head(h, 17, 8, 128));
}
