// The MoE routing kernels against their CPU oracle (moe_route_cases.hpp) at small and odd shapes: expert counts of
// 8, 16 and 256 (and 1024, the largest), k from 1 to 8, hash and biased top-k layers, exact ties, token counts
// that are not multiples of the 64-token chunks or of the warps per block, row widths with and without the
// vectorised path. gpu-labelled: skipped with the reason without a device.
#include <gtest/gtest.h>

#include "gpu_test.hpp"
#include "moe_route_cases.hpp"

using namespace trex::cuda::check;

TEST(CudaMoeRoute, ForwardGroupingAndBalanceLoss) {
  TREX_REQUIRE_GPU();
  Harness h;
  expect_ok(check_moe_route(h, 2, 37, 8, 2, false, false));    // the tiny preset's E and k; one partial chunk
  expect_ok(check_moe_route(h, 3, 130, 16, 4, false, false));  // chunks across sequences
  expect_ok(check_moe_route(h, 1, 257, 256, 6, false, false));  // the Flash preset's E and k
  expect_ok(check_moe_route(h, 2, 65, 256, 8, false, false));
  expect_ok(check_moe_route(h, 1, 9, 8, 1, false, false));     // k 1: w = R
  expect_ok(check_moe_route(h, 1, 70, 1024, 5, false, false));  // the largest E: 32 selection bits per lane
  expect_ok(check_moe_route(h, 1, 41, 33, 3, false, false));   // E not a multiple of the warp
}

TEST(CudaMoeRoute, TiesGoToTheLowerIndex) {
  TREX_REQUIRE_GPU();
  Harness h;
  expect_ok(check_moe_route(h, 2, 50, 8, 2, false, true));
  expect_ok(check_moe_route(h, 1, 99, 16, 7, false, true));
  expect_ok(check_moe_route(h, 1, 64, 256, 6, false, true));
  expect_ok(check_moe_route(h, 1, 20, 8, 8, false, true));  // k = E: every expert, in tie order
}

TEST(CudaMoeRoute, HashLayers) {
  TREX_REQUIRE_GPU();
  Harness h;
  expect_ok(check_moe_route(h, 1, 77, 8, 2, true, false));
  expect_ok(check_moe_route(h, 2, 100, 256, 6, true, false));
  expect_ok(check_moe_route(h, 1, 5, 16, 1, true, false));
}

TEST(CudaMoeRoute, GatherAndCombine) {
  TREX_REQUIRE_GPU();
  Harness h;
  expect_ok(check_moe_dispatch(h, 37, 8, 2, 64));     // vectorised rows
  expect_ok(check_moe_dispatch(h, 130, 16, 4, 13));   // odd width: the scalar path
  expect_ok(check_moe_dispatch(h, 300, 256, 6, 96));  // many empty experts
  expect_ok(check_moe_dispatch(h, 5, 8, 1, 1030));    // rows longer than a block
  expect_ok(check_moe_dispatch(h, 65, 16, 8, 4));
}

TEST(CudaMoeRoute, RouterBackward) {
  TREX_REQUIRE_GPU();
  Harness h;
  expect_ok(check_moe_route_backward(h, 2, 37, 8, 2, false));
  expect_ok(check_moe_route_backward(h, 3, 50, 16, 4, false));
  expect_ok(check_moe_route_backward(h, 1, 200, 256, 6, false));
  expect_ok(check_moe_route_backward(h, 1, 11, 8, 1, false));
  expect_ok(check_moe_route_backward(h, 1, 33, 1024, 8, false));
  expect_ok(check_moe_route_backward(h, 2, 45, 256, 6, true));  // hash: no balance term
  expect_ok(check_moe_route_backward(h, 1, 17, 8, 3, true));
}
