// The device optimizer updates (cuda/optimizer.hpp) against the CPU trainer's on the same inputs
// (optimizer_cases.hpp): AdamW and Muon for one step and for several, Newton–Schulz with fp32 and bf16 products,
// at wide, tall, square and odd shapes. gpu-labelled: skipped with the reason without a device.
#include <gtest/gtest.h>

#include "gpu_test.hpp"
#include "optimizer_cases.hpp"

using namespace trex::cuda;
using namespace trex::cuda::check;

TEST(CudaOptimizer, AdamWOneStep) {
  TREX_REQUIRE_GPU();
  Harness h;
  expect_ok(check_adamw(h, 37, 70, 1, false));  // sizes that are not multiples of the block
  expect_ok(check_adamw(h, 64, 128, 1, true));  // with the bf16 parameter copy
}

TEST(CudaOptimizer, AdamWSeveralSteps) {
  TREX_REQUIRE_GPU();
  Harness h;
  expect_ok(check_adamw(h, 37, 70, 5, true));  // warm-up and decay of the learning rate, bias corrections
}

TEST(CudaOptimizer, NewtonSchulzFp32) {
  TREX_REQUIRE_GPU();
  Harness h;
  Blas blas;
  expect_ok(check_newton_schulz(h, blas, GemmType::fp32, 64, 160));   // wide
  expect_ok(check_newton_schulz(h, blas, GemmType::fp32, 160, 64));   // tall: the transposed products
  expect_ok(check_newton_schulz(h, blas, GemmType::fp32, 96, 96));    // square
  expect_ok(check_newton_schulz(h, blas, GemmType::fp32, 33, 70));    // odd
  expect_ok(check_newton_schulz(h, blas, GemmType::fp32, 256, 1024)); // against the dgemm twin
}

TEST(CudaOptimizer, NewtonSchulzBf16) {
  TREX_REQUIRE_GPU();
  Harness h;
  Blas blas;
  expect_ok(check_newton_schulz(h, blas, GemmType::bf16, 64, 160));
  expect_ok(check_newton_schulz(h, blas, GemmType::bf16, 160, 64));
  expect_ok(check_newton_schulz(h, blas, GemmType::bf16, 128, 128));
}

TEST(CudaOptimizer, MuonOneStep) {
  TREX_REQUIRE_GPU();
  Harness h;
  Blas blas;
  expect_ok(check_muon(h, blas, 64, 160, 1));
  expect_ok(check_muon(h, blas, 160, 64, 1));
}

TEST(CudaOptimizer, MuonSeveralSteps) {
  TREX_REQUIRE_GPU();
  Harness h;
  Blas blas;
  expect_ok(check_muon(h, blas, 96, 200, 4));
  expect_ok(check_muon(h, blas, 70, 33, 3));  // tall and odd
}
