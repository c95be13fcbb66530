// Parity with the PyTorch twin (tests/reference/model/twin.py): the committed fixture holds random weights,
// packed inputs (two documents in row 1, a loss mask), the twin's float64 logits, every loss term and every
// parameter gradient. The C++ model (fp32) must match within the stated tolerances.
#include <gtest/gtest.h>

#include <cmath>

#include "fixture_reader.hpp"
#include "model/model.hpp"

using namespace trex::model;

namespace {

const char* kFixture = TREX_SOURCE_DIR "/tests/model/fixtures/model_fixture.safetensors";

struct Loaded {
  trex::testing::Fixture fx;
  ModelConfig cfg;
  std::unique_ptr<Model> model;
  std::vector<int32_t> tok, doc;
  std::vector<uint8_t> mask;
  Batch batch;
};

std::unique_ptr<Loaded> load() {
  auto L = std::make_unique<Loaded>();
  L->fx = trex::testing::read_fixture(kFixture);
  L->cfg = ModelConfig::from_json(nlohmann::json::parse(L->fx.metadata["config"].get<std::string>()), "fixture");
  L->model = std::make_unique<Model>(L->cfg);
  auto& st = L->model->store();
  for (const auto& p : st.table()) {
    const auto& t = L->fx.at("param/" + p.name);
    EXPECT_EQ(t.shape, p.shape) << p.name;
    std::copy(t.f32.begin(), t.f32.end(), st.params().data() + p.offset);
  }
  for (const auto& p : st.int_table()) {
    const auto& t = L->fx.at("param/" + p.name);
    EXPECT_EQ(t.shape, p.shape) << p.name;
    std::copy(t.i64.begin(), t.i64.end(), st.int_params().data() + p.offset);
  }
  size_t n_params = 0;
  for (const auto& [name, t] : L->fx.tensors) n_params += name.rfind("param/", 0) == 0;
  EXPECT_EQ(n_params, st.table().size() + st.int_table().size()) << "fixture and model tensor sets differ";
  const auto& tk = L->fx.at("input/tokens");
  const int64_t B = tk.shape[0], T = tk.shape[1];
  for (auto v : tk.i64) L->tok.push_back(int32_t(v));
  for (auto v : L->fx.at("input/doc_ids").i64) L->doc.push_back(int32_t(v));
  for (auto v : L->fx.at("input/loss_mask").i64) L->mask.push_back(uint8_t(v));
  L->batch = Batch{B, T, L->tok.data(), L->doc.data(), L->mask.data()};
  return L;
}

double max_abs(const std::vector<float>& v) {
  double m = 0;
  for (float x : v) m = std::max(m, double(std::fabs(x)));
  return m;
}

}  // namespace

TEST(TwinParity, LogitsAndLosses) {
  auto L = load();
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
    const std::string p = b < L->cfg.num_hidden_layers ? "layers." + std::to_string(b) + "." : "mtp.0.";
    const auto& ref_load = L->fx.at("load/" + p).i64;
    auto load = L->model->expert_load(b);
    ASSERT_EQ(load.size(), ref_load.size());
    for (size_t e = 0; e < load.size(); ++e) EXPECT_EQ(load[e], ref_load[e]) << p << " expert " << e;
  }
}

TEST(TwinParity, EveryParameterGradient) {
  auto L = load();
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
