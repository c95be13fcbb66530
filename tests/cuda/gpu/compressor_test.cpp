// The device compressor pooling (cuda/compressor.hpp) against nn::compressor_pool_* (compressor_cases.hpp): HCA and
// CSA layouts, packed batches whose entry grid restarts at every document (documents shorter than a block, lengths
// not multiples of m, trailing tokens in no entry), channels not a multiple of the 128-channel block or the
// 32-column ape tile, N across several 256-token ape chunks. gpu-labelled: skipped with the reason without a device.
#include <gtest/gtest.h>

#include "compressor_cases.hpp"
#include "gpu_test.hpp"

using namespace trex::cuda::check;

TEST(CudaCompressorPool, HcaSingleDocument) {
  TREX_REQUIRE_GPU();
  Harness h;
  expect_ok(check_compressor_pool(h, 64, 4, 16, false, {0}));
  expect_ok(check_compressor_pool(h, 67, 8, 32, false, {0}));  // 3 trailing tokens in no entry
}

TEST(CudaCompressorPool, CsaSingleDocument) {
  TREX_REQUIRE_GPU();
  Harness h;
  expect_ok(check_compressor_pool(h, 64, 4, 16, true, {0}));
  expect_ok(check_compressor_pool(h, 77, 8, 48, true, {0}));
}

TEST(CudaCompressorPool, PackedDocumentsRestartTheGrid) {
  TREX_REQUIRE_GPU();
  Harness h;
  // document lengths 13, 2, 30, 1, 51: not multiples of m, one shorter than a block, one a single token
  const std::vector<int64_t> docs{0, 13, 15, 45, 46};
  for (int64_t m : {4, 8})
    for (bool overlap : {false, true}) expect_ok(check_compressor_pool(h, 97, m, 24, overlap, docs));
}

TEST(CudaCompressorPool, OddSizesAndManyApeChunks) {
  TREX_REQUIRE_GPU();
  Harness h;
  // cdim 64 (W 128 under CSA: four ape column tiles), cdim 130 (two channel blocks, the second 2 wide), N over
  // three 256-token ape chunks with document starts off the chunk grid
  expect_ok(check_compressor_pool(h, 601, 4, 64, true, {0, 100, 255, 257, 513}));
  expect_ok(check_compressor_pool(h, 601, 8, 64, false, {0, 100, 255, 257, 513}));
  expect_ok(check_compressor_pool(h, 301, 4, 130, true, {0, 150}));
  expect_ok(check_compressor_pool(h, 35, 8, 17, true, {0, 3, 5}));  // a document with no complete block
}
