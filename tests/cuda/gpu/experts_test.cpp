// The routed experts on the device (cuda/experts.hpp) against the CPU reference of the same recipe
// (experts_cases.hpp), forward and backward, fp32 and bf16 operands: small and odd shapes, an expert with no
// rows, an expert with one row, every row on one expert, the SwiGLU clamp on and off. gpu-labelled: skipped with
// the reason without a device.
#include <gtest/gtest.h>

#include "experts_cases.hpp"
#include "gpu_test.hpp"
#include "nn/gemm_bf16.hpp"

using namespace trex::cuda;
using namespace trex::cuda::check;

// The bf16 oracle is the CPU's bf16 recipe (nn::Bf16MatmulScope), which needs AVX512_BF16 on the host.
#define REQUIRE_BF16_ORACLE()                                                                            \
  do {                                                                                                   \
    if (!::trex::nn::bf16_matmul_supported()) GTEST_SKIP() << "this CPU lacks AVX512_BF16: no bf16 oracle"; \
  } while (0)

TEST(CudaExperts, Fp32UnevenWithEmptyAndOneRowExperts) {
  TREX_REQUIRE_GPU();
  Harness h;
  Blas blas;
  expect_ok(check_experts(h, blas, GemmType::fp32, 5, 48, 80, {37, 0, 1, 130, 64}, 4.0f));
  expect_ok(check_experts(h, blas, GemmType::fp32, 4, 33, 70, {5, 19, 0, 0}, 4.0f));  // odd d, f
}

TEST(CudaExperts, Fp32AllRowsOnOneExpertNoClamp) {
  TREX_REQUIRE_GPU();
  Harness h;
  Blas blas;
  expect_ok(check_experts(h, blas, GemmType::fp32, 4, 64, 96, {0, 0, 200, 0}, 0.0f));
}

TEST(CudaExperts, Bf16UnevenWithEmptyAndOneRowExperts) {
  TREX_REQUIRE_GPU();
  REQUIRE_BF16_ORACLE();
  Harness h;
  Blas blas;
  // bf16 rows of 2-byte operands: d and f multiples of 8 (16-byte rows), the row counts odd
  expect_ok(check_experts(h, blas, GemmType::bf16, 6, 64, 96, {100, 0, 3, 257, 64, 1}, 4.0f));
  expect_ok(check_experts(h, blas, GemmType::bf16, 3, 40, 56, {9, 0, 31}, 4.0f));
}

TEST(CudaExperts, Bf16AllRowsOnOneExpert) {
  TREX_REQUIRE_GPU();
  REQUIRE_BF16_ORACLE();
  Harness h;
  Blas blas;
  expect_ok(check_experts(h, blas, GemmType::bf16, 4, 64, 96, {0, 0, 0, 300}, 10.0f));
}

// A tiny model's shape: several waves per product, routed (uneven) loads, one empty expert.
TEST(CudaExperts, Fp32RoutedLoadsAtATinyModelShape) {
  TREX_REQUIRE_GPU();
  Harness h;
  Blas blas;
  expect_ok(check_experts(h, blas, GemmType::fp32, 8, 256, 512, uneven_counts(8, 2048, 1, 3), 10.0f));
}

TEST(CudaExperts, Bf16RoutedLoadsAtATinyModelShape) {
  TREX_REQUIRE_GPU();
  REQUIRE_BF16_ORACLE();
  Harness h;
  Blas blas;
  expect_ok(check_experts(h, blas, GemmType::bf16, 8, 256, 512, uneven_counts(8, 2048, 1, 3), 10.0f));
}
