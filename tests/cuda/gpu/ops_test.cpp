// Every CUDA op against its CPU reference on the same inputs (op_cases.hpp), forward and backward, at small and
// odd shapes (rows and columns that are not multiples of the block or tile sizes). gpu-labelled: skipped with
// the reason without a device.
#include <gtest/gtest.h>

#include "gpu_test.hpp"
#include "op_cases.hpp"

using namespace trex::cuda;
using namespace trex::cuda::check;

TEST(CudaOps, GemmFp32AllTransposes) {
  TREX_REQUIRE_GPU();
  Harness h;
  Blas blas;
  for (bool ta : {false, true})
    for (bool tb : {false, true}) {
      expect_ok(check_gemm(h, blas, GemmType::fp32, ta, tb, 64, 96, 128, 0.0f));
      expect_ok(check_gemm(h, blas, GemmType::fp32, ta, tb, 37, 50, 70, 0.5f));  // odd sizes, beta
    }
}

TEST(CudaOps, GemmBf16AllTransposes) {
  TREX_REQUIRE_GPU();
  Harness h;
  Blas blas;
  for (bool ta : {false, true})
    for (bool tb : {false, true}) {
      expect_ok(check_gemm(h, blas, GemmType::bf16, ta, tb, 128, 256, 512, 0.0f));
      expect_ok(check_gemm(h, blas, GemmType::bf16, ta, tb, 40, 56, 72, 1.0f));  // multiples of 8, accumulate
    }
}

TEST(CudaOps, GemmBf16LinearShapes) {  // the model's three products of a linear (nn::linear_*_call)
  TREX_REQUIRE_GPU();
  Harness h;
  Blas blas;
  const int64_t m = 256, n = 384, k = 512;
  expect_ok(check_gemm(h, blas, GemmType::bf16, false, true, m, n, k, 0.0f));  // y = x W^T
  expect_ok(check_gemm(h, blas, GemmType::bf16, false, false, m, k, n, 0.0f)); // dx = dy W
  expect_ok(check_gemm(h, blas, GemmType::bf16, true, false, n, k, m, 1.0f));  // dW += dy^T x
  EXPECT_EQ(blas.cached_plans(), 3u);  // three shapes, each planned once (the bitwise rerun reuses its plan)
}

TEST(CudaOps, RoundToBf16MatchesCpuBits) {
  TREX_REQUIRE_GPU();
  Harness h;
  expect_ok(check_bf16_round(h, 100003));
}

TEST(CudaOps, RmsNorm) {
  TREX_REQUIRE_GPU();
  Harness h;
  expect_ok(check_rmsnorm(h, 67, 1000, true));   // rows across dw chunks, dim not a multiple of 256
  expect_ok(check_rmsnorm(h, 130, 512, false));  // weightless (the mHC's and the KV norms)
  expect_ok(check_rmsnorm(h, 3, 7, true));
}

TEST(CudaOps, Rope) {
  TREX_REQUIRE_GPU();
  Harness h;
  expect_ok(check_rope(h, 50, 3, 96, 64));  // partial rotary dims
  expect_ok(check_rope(h, 17, 1, 64, 64));  // whole head
}

TEST(CudaOps, SwiGlu) {
  TREX_REQUIRE_GPU();
  Harness h;
  expect_ok(check_swiglu(h, 100001, 10.0f));
  expect_ok(check_swiglu(h, 4097, 0.0f));  // no limit
}

TEST(CudaOps, SinkhornForwardBackward) {
  TREX_REQUIRE_GPU();
  Harness h;
  expect_ok(check_sinkhorn(h, 300, 4, 20));  // the model's hc_mult and iterations, count not a multiple of 128
  expect_ok(check_sinkhorn(h, 37, 8, 20));   // the largest n (matrices spill out of registers)
  expect_ok(check_sinkhorn(h, 5, 2, 1));     // one iteration: the column normalisation alone
  expect_ok(check_sinkhorn(h, 129, 3, 7));   // odd n
}

TEST(CudaOps, CrossEntropy) {
  TREX_REQUIRE_GPU();
  Harness h;
  expect_ok(check_xent(h, 37, 4096, 1.0f / 30));
  expect_ok(check_xent(h, 5, 1000, 1.0f));
}

TEST(CudaOps, TopkRowsMatchesCpuOrder) {
  TREX_REQUIRE_GPU();
  Harness h;
  expect_ok(check_topk(h, 50, 1000, 64, 7));    // many ties: the lower index first
  expect_ok(check_topk(h, 33, 300, 6, 0));      // the MoE router's k
  expect_ok(check_topk(h, 9, 5000, 512, 40));   // the indexer's top-k over long rows
  expect_ok(check_topk(h, 4, 3000, 2048, 0));   // the largest k
  expect_ok(check_topk(h, 7, 1, 1, 0));         // one column
}
