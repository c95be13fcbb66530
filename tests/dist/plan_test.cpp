// Gradient bucket and ZeRO-1 shard planning on the tiny preset's real parameter table, and layout arithmetic.
#include <gtest/gtest.h>

#include <algorithm>

#include "dist/grad_sync.hpp"
#include "dist/layout.hpp"
#include "dist/zero_shards.hpp"
#include "model/config.hpp"
#include "model/params.hpp"
#include "util/error.hpp"

namespace {

using namespace trex::dist;

TEST(GradBuckets, CoverEveryFloatOnceWithinCapInReadyOrder) {
  const auto cfg = trex::model::ModelConfig::preset("tiny");
  trex::model::ParamStore st(cfg);
  const int64_t total = int64_t(st.params().size());
  for (int64_t cap : {kMaxMessageFloats, int64_t(100000), int64_t(4096)}) {
    auto b = plan_grad_buckets(st.table(), cfg.num_hidden_layers, total, cap);
    std::vector<int> hits(size_t(total), 0);
    for (size_t i = 0; i < b.size(); ++i) {
      EXPECT_LE(b[i].end - b[i].begin, cap);
      EXPECT_LT(b[i].begin, b[i].end);
      if (i) {
        EXPECT_LE(b[i - 1].event, b[i].event);
      }
      for (int64_t k = b[i].begin; k < b[i].end; ++k) hits[size_t(k)]++;
    }
    EXPECT_TRUE(std::all_of(hits.begin(), hits.end(), [](int h) { return h == 1; })) << "cap " << cap;
  }
  // A layer's tensors become ready when that layer's backward is done; the embedding only at the very end.
  auto b = plan_grad_buckets(st.table(), cfg.num_hidden_layers, total);
  const auto& emb = st.info("embed.weight");
  const auto& l0 = st.info("layers.0.attn_norm.weight");
  const auto& l5 = st.info("layers.5.attn_norm.weight");
  for (const auto& x : b) {
    if (x.begin <= emb.offset && emb.offset < x.end) {
      EXPECT_EQ(x.event, cfg.num_hidden_layers);
    }
    if (x.begin <= l0.offset && l0.offset < x.end) {
      EXPECT_EQ(x.event, cfg.num_hidden_layers - 1);
    }
    if (x.begin <= l5.offset && l5.offset < x.end) {
      EXPECT_EQ(x.event, 0);
    }
  }
}

TEST(ZeroShards, TensorAlignedContiguousBalanced) {
  const auto cfg = trex::model::ModelConfig::preset("tiny");
  trex::model::ParamStore st(cfg);
  const int64_t total = int64_t(st.params().size());
  for (int ranks : {1, 2, 3, 4}) {
    auto p = plan_zero_shards(st.table(), total, ranks);
    ASSERT_EQ(p.begin.size(), size_t(ranks));
    int64_t at = 0;
    for (int r = 0; r < ranks; ++r) {
      EXPECT_EQ(p.begin[size_t(r)], at);
      at += p.count[size_t(r)];
      bool aligned = p.begin[size_t(r)] == 0;
      for (const auto& t : st.table()) aligned = aligned || t.offset == p.begin[size_t(r)];
      EXPECT_TRUE(aligned) << "shard " << r << " of " << ranks << " starts inside a tensor";
      // Balanced up to the largest tensor (the embedding or head).
      EXPECT_LT(std::abs(p.count[size_t(r)] - total / ranks), int64_t(cfg.vocab_size * cfg.hidden_size) + 1);
    }
    EXPECT_EQ(at, total);
  }
}

TEST(Layout, CoordinatesRoundTripAndValidation) {
  Layout l{2, 2, 2};
  for (int r = 0; r < 8; ++r) EXPECT_EQ(rank_of(l, coords_of(l, r)), r);
  EXPECT_EQ(coords_of(l, 1).ep, 1);
  EXPECT_EQ(coords_of(l, 2).dp, 1);
  EXPECT_EQ(coords_of(l, 4).pp, 1);
  EXPECT_NO_THROW(validate_layout(l, 8));
  EXPECT_THROW(validate_layout(l, 4), trex::Error);
  EXPECT_THROW(validate_layout({0, 1, 1}, 0), trex::Error);
}

}  // namespace
