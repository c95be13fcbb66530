// The GPU model's glue (cuda/model_glue.hpp) against model/model.cpp's loops, bitwise (glue_cases.hpp): the tiny
// preset's streams and width (n 4, d 256, V 8192) and odd ones (d not a multiple of 4: the scalar path; pointers
// off the 16-byte boundary: the scalar path at a width that would take the vector one), skewed tokens (one id with
// ~40 % of the positions: a list longer than the 16 / n positions the kernel loads ahead, and a tail), a single
// row, a single stream. gpu-labelled: skipped with the reason without a device.
#include <gtest/gtest.h>

#include "glue_cases.hpp"
#include "gpu_test.hpp"

using namespace trex::cuda::check;

TEST(CudaGlue, EmbeddingForwardAndBackward) {
  TREX_REQUIRE_GPU();
  Harness h;
  expect_ok(check_embedding(h, 2, 64, 4, 256, 8192, false, false));  // the tiny preset's n, d, V
  expect_ok(check_embedding(h, 3, 41, 4, 256, 8192, true, false));
  expect_ok(check_embedding(h, 2, 37, 4, 64, 50, true, true));       // few ids, long lists, misaligned
  expect_ok(check_embedding(h, 1, 29, 1, 33, 17, true, false));      // one stream, odd width
  expect_ok(check_embedding(h, 4, 17, 3, 130, 1000, false, false));  // n = 3: the generic stream loop
  expect_ok(check_embedding(h, 2, 19, 8, 1028, 11, true, false));    // n = 8, 257 float4 columns
  expect_ok(check_embedding(h, 5, 1, 2, 48, 9, true, false));        // T = 1: no MTP rows
}

TEST(CudaGlue, StreamBroadcastAndSum) {
  TREX_REQUIRE_GPU();
  Harness h;
  expect_ok(check_streams(h, 126, 4, 256, false));  // the tiny preset's MTP rows (B 2, Tm 63)
  expect_ok(check_streams(h, 37, 4, 256, true));
  expect_ok(check_streams(h, 19, 2, 1001, false));
  expect_ok(check_streams(h, 1, 8, 4100, false));   // wider than a block of float4 columns
  expect_ok(check_streams(h, 23, 1, 7, false));
}

TEST(CudaGlue, MtpRowBlocks) {
  TREX_REQUIRE_GPU();
  Harness h;
  expect_ok(check_row_blocks(h, 2, 64, 63, 4, 256, false));  // module 0 of the tiny preset
  expect_ok(check_row_blocks(h, 2, 63, 62, 4, 256, true));   // module 1 reads module 0's rows
  expect_ok(check_row_blocks(h, 3, 17, 16, 3, 33, false));   // odd widths: the scalar path
  expect_ok(check_row_blocks(h, 1, 2, 1, 4, 64, false));
}

TEST(CudaGlue, ScaleAndAccumulate) {
  TREX_REQUIRE_GPU();
  Harness h;
  expect_ok(check_flat(h, 1 << 20, false));
  expect_ok(check_flat(h, 4097, false));
  expect_ok(check_flat(h, 4096, true));
  expect_ok(check_flat(h, 1, false));
}
