// The device attention core (cuda/sparse_attention.hpp) against nn::sparse_attention_*_ref (attention_cases.hpp):
// sliding window only, HCA-like (every visible entry), CSA-like (top-k subsets with the -1 padding skipped),
// document boundaries, and sizes that are not multiples of the tiles (16 keys, 128 columns, head groups).
// gpu-labelled: skipped with the reason without a device.
#include <gtest/gtest.h>

#include "attention_cases.hpp"
#include "gpu_test.hpp"

using namespace trex::cuda::check;

TEST(CudaSparseAttention, SlidingWindowOnly) {
  TREX_REQUIRE_GPU();
  Harness h;
  expect_ok(check_sparse_attention(h, 96, 4, 64, 16, AttnLists::none, 0, 0, {0}));
  expect_ok(check_sparse_attention(h, 200, 3, 128, 32, AttnLists::none, 0, 0, {0, 57, 60, 131}));  // short docs
}

TEST(CudaSparseAttention, HcaLikeEveryVisibleEntry) {
  TREX_REQUIRE_GPU();
  Harness h;
  expect_ok(check_sparse_attention(h, 160, 4, 64, 16, AttnLists::all_visible, 8, 0, {0}));
  expect_ok(check_sparse_attention(h, 300, 2, 96, 24, AttnLists::all_visible, 4, 0, {0, 111, 250}));
}

TEST(CudaSparseAttention, CsaLikeSelectedSubsets) {
  TREX_REQUIRE_GPU();
  Harness h;
  expect_ok(check_sparse_attention(h, 256, 4, 64, 32, AttnLists::subsets, 4, 16, {0}));
  // topk past the visible entries early in each document: -1 padding skipped, short and empty lists
  expect_ok(check_sparse_attention(h, 190, 3, 128, 16, AttnLists::subsets, 4, 40, {0, 33, 100}));
}

TEST(CudaSparseAttention, DocumentBoundariesCutTheWindow) {
  TREX_REQUIRE_GPU();
  Harness h;
  // documents shorter than the window and than one entry, single-token documents
  expect_ok(check_sparse_attention(h, 80, 2, 32, 32, AttnLists::subsets, 4, 3, {0, 1, 2, 9, 10, 41, 44}));
  expect_ok(check_sparse_attention(h, 80, 2, 32, 32, AttnLists::all_visible, 4, 0, {0, 1, 2, 9, 10, 41, 44}));
}

TEST(CudaSparseAttention, OddSizes) {
  TREX_REQUIRE_GPU();
  Harness h;
  // head_dim not a multiple of 32 or 128, heads not a multiple of the head group, a window of 1, N not a
  // multiple of 16, the largest head_dim (two column blocks of 128 short of full, one head per 8-head group)
  expect_ok(check_sparse_attention(h, 37, 5, 20, 7, AttnLists::subsets, 3, 5, {0, 20}));
  expect_ok(check_sparse_attention(h, 45, 3, 72, 1, AttnLists::all_visible, 5, 0, {0}));
  expect_ok(check_sparse_attention(h, 61, 17, 48, 9, AttnLists::subsets, 2, 7, {0, 30}));
  expect_ok(check_sparse_attention(h, 70, 9, 512, 20, AttnLists::subsets, 4, 6, {0, 33}));
  expect_ok(check_sparse_attention(h, 33, 2, 500, 5, AttnLists::none, 0, 0, {0}));
}
