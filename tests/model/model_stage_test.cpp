// Pipeline stages of the model (Model::stage_forward / stage_backward): a model cut into layer ranges, with
// several micro-batches in flight in separate activation slots (the 1F1B order), gives bit for bit the losses
// and gradients of forward_backward over the same micro-batches — the stages run the same code.
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "fixture_model.hpp"
#include "util/error.hpp"

using namespace trex::model;
using trex::testing::load_fixture_model;

namespace {

// Two micro-batches: the fixture batch and a copy with shifted tokens.
std::vector<int32_t> shifted_tokens(const trex::testing::Loaded& L) {
  std::vector<int32_t> t = L.tok;
  for (auto& v : t) v = (v + 5) % int32_t(L.cfg.vocab_size);
  return t;
}

void expect_stages_match_whole(const char* fixture) {
  auto ref = load_fixture_model(fixture);
  auto cut = load_fixture_model(fixture);
  const int64_t Lm = ref->cfg.num_hidden_layers;
  ASSERT_GE(Lm, 2);
  const int64_t k = Lm / 2;  // stage 0: [0, k), stage 1: [k, L) + head + MTP
  const auto tok1 = shifted_tokens(*ref);
  Batch b0 = ref->batch, b1 = ref->batch;
  b1.tokens = tok1.data();

  ref->model->zero_grad();
  const Losses r0 = ref->model->forward_backward(b0);
  const Losses r1 = ref->model->forward_backward(b1);

  Model& m = *cut->model;
  m.zero_grad();
  // Two micro-batches in flight on stage 0 (slots 0 and 1) while stage 1 (slots 2 and 3) runs; backwards in the
  // order that adds every gradient in the reference's order (micro-batch 0 completely, then 1).
  const Losses a0 = m.stage_forward(0, b0, 0, k, nullptr);
  const Losses a1 = m.stage_forward(1, b1, 0, k, nullptr);
  const std::vector<float> x0(m.stage_output(0).begin(), m.stage_output(0).end());
  const std::vector<float> x1(m.stage_output(1).begin(), m.stage_output(1).end());
  const Losses c0 = m.stage_forward(2, b0, k, Lm, x0.data());
  auto d0 = m.stage_backward(2, nullptr);
  ASSERT_EQ(d0.size(), x0.size());
  const std::vector<float> dx0(d0.begin(), d0.end());
  EXPECT_TRUE(m.stage_backward(0, dx0.data()).empty()) << "stage 0's input gradient goes into the embedding";
  const Losses c1 = m.stage_forward(3, b1, k, Lm, x1.data());
  auto d1 = m.stage_backward(3, nullptr);
  const std::vector<float> dx1(d1.begin(), d1.end());
  EXPECT_TRUE(m.stage_backward(1, dx1.data()).empty());

  EXPECT_EQ(a0.ce, 0.0);  // the first stage has no head
  EXPECT_EQ(c0.ce, r0.ce);
  EXPECT_EQ(c1.ce, r1.ce);
  EXPECT_EQ(c0.mtp, r0.mtp);
  EXPECT_DOUBLE_EQ(a0.balance + c0.balance, r0.balance);  // summed per stage: double rounding only
  EXPECT_DOUBLE_EQ(a1.indexer + c1.indexer, r1.indexer);
  EXPECT_DOUBLE_EQ(a0.total + c0.total, r0.total);
  const auto gr = ref->model->grads(), gc = m.grads();
  ASSERT_EQ(gr.size(), gc.size());
  size_t differ = 0, nonzero = 0;
  for (size_t i = 0; i < gr.size(); ++i) {
    differ += gr[i] != gc[i];
    nonzero += gr[i] != 0.0f;
  }
  EXPECT_EQ(differ, 0u) << "gradients differ from forward_backward";
  EXPECT_GT(nonzero, gr.size() / 2) << "vacuous: most gradients are zero";
  for (int64_t blk = 0; blk < m.n_moe_blocks(); ++blk) {
    const auto lr = ref->model->expert_load(blk), lc = m.expert_load(blk);
    EXPECT_TRUE(std::equal(lr.begin(), lr.end(), lc.begin(), lc.end())) << "expert loads of block " << blk;
  }
}

}  // namespace

TEST(ModelStages, TwoStagesWithMicroBatchesInFlightMatchForwardBackwardBitwise) {
  expect_stages_match_whole(trex::testing::kFixture);
}

TEST(ModelStages, ChainedMtpOnTheLastStageMatchesBitwise) {
  expect_stages_match_whole(trex::testing::kFixtureMtp2);
}

TEST(ModelStages, BadRangesAndMissingInputsAreClearErrors) {
  auto L = load_fixture_model();
  Model& m = *L->model;
  const int64_t Lm = L->cfg.num_hidden_layers;
  EXPECT_THROW(m.stage_forward(0, L->batch, 1, 1, nullptr), trex::Error);
  EXPECT_THROW(m.stage_forward(0, L->batch, 0, Lm + 1, nullptr), trex::Error);
  EXPECT_THROW(m.stage_forward(0, L->batch, 1, Lm, nullptr), trex::Error);  // no input streams
  EXPECT_THROW(m.stage_backward(5, nullptr), trex::Error);                  // no forward in that slot
  m.stage_forward(0, L->batch, 0, 1, nullptr);
  EXPECT_THROW(m.stage_backward(0, nullptr), trex::Error);  // not the last stage: needs the output gradient
}
