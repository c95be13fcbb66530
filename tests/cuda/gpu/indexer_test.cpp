// The device lightning indexer (cuda/indexer.hpp, with cuda::topk_rows between the scores and the KL) against
// nn::indexer_scores_ref / indexer_kl_ref (indexer_cases.hpp): packed batches of several documents (the entry grid
// restarting per document, rows without entries), top-k below and above the rows' visible counts, the dense
// warm-up's lists, ReLU-dead heads and negative head weights, tied scores, and sizes that are not multiples of the
// tiles (16 entries, 32 lanes, head groups). gpu-labelled: skipped with the reason without a device.
#include <gtest/gtest.h>

#include "gpu_test.hpp"
#include "indexer_cases.hpp"

using namespace trex::cuda::check;

TEST(CudaIndexer, TopkBelowAndAboveVisibleCounts) {
  TREX_REQUIRE_GPU();
  Harness h;
  // nvis up to 24 / 17 / 9: topk 5 truncates most rows, 40 none
  expect_ok(check_indexer(h, {3, 97, 70, 37}, 4, 32, 3, 32, 5, false));
  expect_ok(check_indexer(h, {3, 97, 70, 37}, 4, 32, 3, 32, 40, false));
  expect_ok(check_indexer(h, {130, 1, 66}, 2, 16, 2, 16, 7, false));
  expect_ok(check_indexer(h, {257, 51}, 8, 64, 4, 64, 16, false));
}

TEST(CudaIndexer, OddSizes) {
  TREX_REQUIRE_GPU();
  Harness h;
  expect_ok(check_indexer(h, {45, 2, 83}, 3, 24, 3, 40, 6, false));  // cI, hd not multiples of 32
  expect_ok(check_indexer(h, {201}, 5, 48, 2, 56, 33, false));
  expect_ok(check_indexer(h, {300, 77}, 8, 17, 4, 16, 3, false));
}

TEST(CudaIndexer, DenseWarmupLists) {
  TREX_REQUIRE_GPU();
  Harness h;
  expect_ok(check_indexer(h, {3, 97, 70, 37}, 4, 32, 3, 32, 0, true));
  expect_ok(check_indexer(h, {190, 2, 61}, 6, 64, 2, 64, 0, true));
}

TEST(CudaIndexer, DeadHeadsAndTies) {
  TREX_REQUIRE_GPU();
  Harness h;
  expect_ok(check_indexer(h, {120, 3, 77}, 4, 32, 2, 32, 6, false, IndexerInputs::dead_heads));
  expect_ok(check_indexer(h, {120, 3, 77}, 4, 32, 2, 32, 0, true, IndexerInputs::dead_heads));
  expect_ok(check_indexer(h, {120, 3, 77}, 4, 32, 2, 32, 5, false, IndexerInputs::ties));
  expect_ok(check_indexer(h, {64, 64}, 2, 16, 2, 16, 4, false, IndexerInputs::ties));
}

TEST(CudaIndexer, NoEntries) {
  TREX_REQUIRE_GPU();
  Harness h;
  // every document shorter than the ratio: no entries, no loss, zero gradients
  expect_ok(check_indexer(h, {3, 2, 1, 3}, 2, 16, 2, 16, 4, false));
}
