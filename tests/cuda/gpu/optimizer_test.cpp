// The device optimizer updates (cuda/optimizer.hpp) against the CPU trainer's on the same inputs
// (optimizer_cases.hpp): AdamW and Muon for one step and for several, Newton–Schulz with fp32 and bf16 products,
// at wide, tall, square and odd shapes; the gradient norm (cuda/grad_norm.hpp) against train::grad_sq_sum. gpu-labelled: skipped with the reason without a device.
#include <gtest/gtest.h>

#include <cmath>
#include <utility>
#include <vector>

#include "cuda/arena.hpp"
#include "cuda/grad_norm.hpp"
#include "cuda/stream.hpp"
#include "gpu_test.hpp"
#include "optimizer_cases.hpp"
#include "train/train_step.hpp"
#include "util/rng.hpp"

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

// Ranges of several chunks with a tail, a one-element range and a gap: the CPU's chunking, within 1e-12 of its sum
// (double accumulation both sides, different orders), the same bits on a second call.
TEST(CudaOptimizer, GradientSquareSumMatchesTheCpu) {
  TREX_REQUIRE_GPU();
  std::vector<float> x(300000);
  trex::Rng r(5);
  for (float& v : x) v = float(r.normal());
  const std::vector<std::pair<int64_t, int64_t>> ranges{{0, 70000}, {100000, 1}, {150000, 140000}};
  DeviceBuffer d(sizeof(float) * x.size());
  d.upload(x.data(), sizeof(float) * x.size());
  Stream s;
  SquareSum sq(ranges);
  EXPECT_EQ(sq.chunks(), 2 + 1 + 3);
  const double got = sq(d.as<float>(), s), again = sq(d.as<float>(), s);
  const double want = trex::train::grad_sq_sum(x, ranges);
  EXPECT_LE(std::fabs(got - want), 1e-12 * want) << got << " vs " << want;
  EXPECT_EQ(got, again);
  std::printf("square sum over %lld chunks: %.17g (cpu %.17g)\n", (long long)sq.chunks(), got, want);
}
