// Optimisers: AdamW and Muon match their PyTorch twins step by step (committed fixture), the fast
// Newton-Schulz matches its reference, Muon leaves the V4 AdamW set to AdamW, and the LR schedule.
#include <gtest/gtest.h>

#include <cmath>

#include "train/optimizer.hpp"
#include "util/jsonl.hpp"
#include "util/rng.hpp"

using namespace trex::train;

namespace {

struct Setup {
  std::vector<TensorSlot> slots;
  std::vector<float> params;
  trex::Json fx;
};

Setup load() {
  Setup s;
  s.fx = trex::parse_json_file(std::string(TREX_SOURCE_DIR) + "/tests/train/fixtures/optimizer_steps.json");
  int64_t off = 0;
  for (auto& [name, shape] : s.fx["shapes"].items()) {
    TensorSlot t;
    t.name = name;
    t.ndim = int(shape.size());
    t.rows = shape[0];
    t.cols = shape.size() > 1 ? shape[1].get<int64_t>() : 1;
    t.numel = t.rows * t.cols;
    t.offset = off;
    off += t.numel;
    s.slots.push_back(t);
    for (float v : s.fx["init"][name].get<std::vector<float>>()) s.params.push_back(v);
  }
  return s;
}

void run_and_compare(OptimizerKind kind, const char* key, double tol) {
  Setup s = load();
  OptimizerConfig cfg;
  cfg.kind = kind;
  Optimizer opt(s.slots, int64_t(s.params.size()), cfg);
  for (std::size_t step = 0; step < s.fx["lrs"].size(); ++step) {
    std::vector<float> g;
    for (auto& t : s.slots)
      for (float v : s.fx["grads"][step][t.name].get<std::vector<float>>()) g.push_back(v);
    opt.step(s.params, g, s.fx["lrs"][step].get<double>());
    for (auto& t : s.slots) {
      auto want = s.fx[key][step][t.name].get<std::vector<float>>();
      for (int64_t i = 0; i < t.numel; ++i)
        ASSERT_NEAR(s.params[std::size_t(t.offset + i)], want[std::size_t(i)], tol) << key << " step " << step << " " << t.name << "[" << i << "]";
    }
  }
}

}  // namespace

TEST(Optimizer, AdamWMatchesTorch) { run_and_compare(OptimizerKind::AdamW, "adamw", 2e-6); }

TEST(Optimizer, MuonMatchesTwin) { run_and_compare(OptimizerKind::Muon, "muon", 5e-5); }

TEST(Optimizer, FastNewtonSchulzMatchesReference) {
  for (auto [r, c] : {std::pair<int64_t, int64_t>{16, 48}, {40, 12}, {32, 32}}) {
    trex::Rng rng(uint64_t(r * 100 + c));
    std::vector<float> g(std::size_t(r * c));
    for (auto& v : g) v = float(rng.normal());
    // Muon with lr 1, no momentum history, no decay: p_after = -scale * NS(g) starting from p = 0.
    TensorSlot t{"layers.0.ffn.w2.weight", 0, r * c, r, c, 2, true};
    OptimizerConfig cfg;
    cfg.kind = OptimizerKind::Muon;
    cfg.muon_weight_decay = 0;
    cfg.muon_nesterov = false;
    Optimizer opt({t}, r * c, cfg);
    std::vector<float> p(g.size(), 0.0f);
    opt.step(p, g, 1.0);
    std::vector<float> ref = g;
    newton_schulz_reference(ref, r, c, 10);
    float scale = float(std::sqrt(double(std::max(r, c))) * 0.18);
    for (std::size_t i = 0; i < g.size(); ++i) ASSERT_NEAR(-p[i] / scale, ref[i], 2e-4) << r << "x" << c << " at " << i;
  }
}

TEST(Optimizer, NewtonSchulzOrthogonalises) {
  int64_t r = 8, c = 24;
  trex::Rng rng(5);
  std::vector<float> x(std::size_t(r * c));
  for (auto& v : x) v = float(rng.normal());
  newton_schulz_reference(x, r, c, 10);
  // X X^T ~ I: the hybrid schedule lands singular values near 1.
  for (int64_t i = 0; i < r; ++i)
    for (int64_t j = 0; j < r; ++j) {
      double d = 0;
      for (int64_t l = 0; l < c; ++l) d += double(x[std::size_t(i * c + l)]) * x[std::size_t(j * c + l)];
      EXPECT_NEAR(d, i == j ? 1.0 : 0.0, i == j ? 0.3 : 0.15);
    }
}

TEST(Optimizer, MuonKeepsTheV4AdamWSet) {
  auto slot = [](const char* name, int ndim) { return TensorSlot{name, 0, 4, 2, 2, ndim, true}; };
  EXPECT_TRUE(uses_adamw_under_muon(slot("embed.weight", 2)));
  EXPECT_TRUE(uses_adamw_under_muon(slot("head.weight", 2)));
  EXPECT_TRUE(uses_adamw_under_muon(slot("mtp.0.head.weight", 2)));
  EXPECT_TRUE(uses_adamw_under_muon(slot("layers.0.hc_attn_base", 1)));
  EXPECT_TRUE(uses_adamw_under_muon(slot("layers.0.hc_attn_scale", 1)));
  EXPECT_TRUE(uses_adamw_under_muon(slot("layers.0.attn_norm.weight", 1)));
  EXPECT_TRUE(uses_adamw_under_muon(slot("layers.0.attn.attn_sink", 1)));
  EXPECT_FALSE(uses_adamw_under_muon(slot("layers.0.hc_attn_fn", 2)));
  EXPECT_FALSE(uses_adamw_under_muon(slot("layers.0.attn.wq_a.weight", 2)));
}

TEST(LrSchedule, WarmupThenCosineToMin) {
  EXPECT_DOUBLE_EQ(lr_at(0, 10, 100, 1.0, 0.1), 0.1);
  EXPECT_DOUBLE_EQ(lr_at(9, 10, 100, 1.0, 0.1), 1.0);
  EXPECT_DOUBLE_EQ(lr_at(10, 10, 100, 1.0, 0.1), 1.0);
  EXPECT_NEAR(lr_at(55, 10, 100, 1.0, 0.1), 0.55, 1e-12);
  EXPECT_DOUBLE_EQ(lr_at(100, 10, 100, 1.0, 0.1), 0.1);
  EXPECT_DOUBLE_EQ(lr_at(500, 10, 100, 1.0, 0.1), 0.1);
}
