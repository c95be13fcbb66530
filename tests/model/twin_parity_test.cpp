// Parity with the PyTorch twin (tests/reference/model/twin.py): the committed fixture holds random weights,
// packed inputs (two documents in row 1, a loss mask), the twin's float64 logits, every loss term and every
// parameter gradient; more fixtures cover chained MTP of depth 2 and the dense indexer warm-up. The C++ model (fp32) must match within the stated tolerances.
#include <gtest/gtest.h>

#include <cmath>

#include "fixture_model.hpp"
#include "model/model.hpp"
#include "float_vectors.hpp"

using namespace trex::model;

namespace {

using trex::testing::max_abs;

}  // namespace

class TwinParity : public ::testing::TestWithParam<const char*> {};

TEST_P(TwinParity, LogitsAndLosses) {
  auto L = trex::testing::load_fixture_model(GetParam());
  Losses loss;
  auto logits = L->model->forward(L->batch, &loss);
  const auto& ref = L->fx.at("out/logits").f32;
  ASSERT_EQ(logits.size(), ref.size());
  double err = 0;
  for (size_t i = 0; i < ref.size(); ++i) err = std::max(err, double(std::fabs(logits[i] - ref[i])));
  EXPECT_LT(err, 2e-4) << "main logits (max |ref| " << max_abs(ref) << ")";
  const auto& mref = L->fx.at("out/mtp_logits").f32;
  auto ml = L->model->mtp_logits();
  ASSERT_EQ(ml.size(), mref.size());
  err = 0;
  for (size_t i = 0; i < mref.size(); ++i) err = std::max(err, double(std::fabs(ml[i] - mref[i])));
  EXPECT_LT(err, 2e-4) << "MTP logits";
  auto lv = [&](const char* n) { return double(L->fx.at(std::string("loss/") + n).f32[0]); };
  EXPECT_NEAR(loss.ce, lv("ce"), 1e-5);
  EXPECT_NEAR(loss.mtp, lv("mtp"), 1e-5);
  EXPECT_NEAR(loss.balance, lv("balance"), 1e-6);
  EXPECT_NEAR(loss.indexer, lv("indexer"), 1e-5);
  EXPECT_NEAR(loss.total, lv("total"), 2e-5);
  // per-expert loads of every MoE block
  for (int64_t b = 0; b < L->model->n_moe_blocks(); ++b) {
    const int64_t Lm = L->cfg.num_hidden_layers;
    const std::string p = b < Lm ? "layers." + std::to_string(b) + "." : "mtp." + std::to_string(b - Lm) + ".";
    const auto& ref_load = L->fx.at("load/" + p).i64;
    auto load = L->model->expert_load(b);
    ASSERT_EQ(load.size(), ref_load.size());
    for (size_t e = 0; e < load.size(); ++e) EXPECT_EQ(load[e], ref_load[e]) << p << " expert " << e;
  }
}

TEST_P(TwinParity, EveryParameterGradient) {
  auto L = trex::testing::load_fixture_model(GetParam());
  L->model->zero_grad();
  Losses loss = L->model->forward_backward(L->batch);
  EXPECT_NEAR(loss.total, double(L->fx.at("loss/total").f32[0]), 2e-5);
  auto& st = L->model->store();
  int checked = 0;
  for (const auto& p : st.table()) {
    const auto& ref = L->fx.at("grad/" + p.name).f32;
    const float* g = st.grads().data() + p.offset;
    const double scale = max_abs(ref);
    double err = 0;
    for (int64_t i = 0; i < p.numel; ++i) err = std::max(err, double(std::fabs(g[i] - ref[size_t(i)])));
    // fp32 vs the twin's float64: 1e-3 of the tensor's largest gradient, plus a small absolute floor
    EXPECT_LE(err, 1e-3 * scale + 1e-6) << p.name << " max|ref| " << scale;
    if (p.trainable) {
      EXPECT_GT(scale, 0.0) << p.name << " gets no gradient in the fixture";
    }
    ++checked;
  }
  EXPECT_EQ(checked, int(st.table().size()));
}

// The main fixture (4 layers + 1 MTP), the chained-MTP fixture (2 layers + 2 MTP modules: module 1 reads
// module 0's output, so its gradients flow back through module 0 into the trunk) and the dense indexer
// warm-up (CSA attends to every visible compressed entry; the indexer's KL runs over all of them).
std::string fixture_name(const ::testing::TestParamInfo<const char*>& i) {
  static const char* const names[] = {"Main", "ChainedMtp2", "DenseIndexerWarmup"};
  return names[i.index];
}
INSTANTIATE_TEST_SUITE_P(Fixtures, TwinParity,
                         ::testing::Values(trex::testing::kFixture, trex::testing::kFixtureMtp2,
                                           trex::testing::kFixtureDense),
                         fixture_name);
