// Model-level properties: causality (through the window, compressed entries and the indexer), packed documents
// behave as separate sequences, finite-difference checks of every parameter tensor, arena reuse (no growth after
// the first step), determinism, hash tables, gate-bias rule, input validation, and bf16 operand copies.
#include <gtest/gtest.h>

#include "cpu_features.hpp"

#include <cmath>
#include <cstring>
#include <set>
#include <utility>
#include <vector>

#include "fixture_model.hpp"
#include "nn/gemm_bf16.hpp"
#include "util/error.hpp"

using namespace trex::model;
using trex::testing::load_fixture_model;

TEST(ModelCausality, FutureTokensNeverChangeEarlierOutputs) {
  auto L = load_fixture_model();
  const int64_t T = L->batch.T, V = L->cfg.vocab_size;
  // row 0 is one 32-token document: CSA (m=4, top-3 of up to 8 entries) and HCA (m=8) are both active
  auto base = std::vector<float>(L->model->forward(L->batch).begin(), L->model->forward(L->batch).end());
  auto base_mtp = std::vector<float>(L->model->mtp_logits().begin(), L->model->mtp_logits().end());
  for (int64_t t0 : {9, 17, 26}) {
    auto tok = L->tok;
    tok[size_t(t0)] = (tok[size_t(t0)] + 7) % int32_t(V);
    Batch b = L->batch;
    b.tokens = tok.data();
    auto lg = L->model->forward(b);
    for (int64_t t = 0; t < t0; ++t)
      for (int64_t v = 0; v < V; ++v)
        ASSERT_EQ(lg[size_t(t * V + v)], base[size_t(t * V + v)]) << "position " << t << " changed by token " << t0;
    double later = 0;
    for (int64_t t = t0; t < T; ++t)
      for (int64_t v = 0; v < V; ++v) later = std::max(later, double(std::fabs(lg[size_t(t * V + v)] - base[size_t(t * V + v)])));
    EXPECT_GT(later, 1e-4) << "changing token " << t0 << " changed nothing (test would be vacuous)";
    // MTP position t reads token t+1: positions < t0-1 must be unchanged
    auto ml = L->model->mtp_logits();
    const int64_t Tm = T - 1;
    for (int64_t t = 0; t + 1 < t0; ++t)
      for (int64_t v = 0; v < V; ++v) ASSERT_EQ(ml[size_t(t * V + v)], base_mtp[size_t(t * V + v)]) << "MTP " << t;
    (void)Tm;
  }
}

TEST(ModelCausality, IndexerSelectsOnlyVisibleCompleteBlocks) {
  auto L = load_fixture_model();
  L->model->forward(L->batch);
  const int64_t T = L->batch.T, topk = L->cfg.index_topk;
  int64_t csa = -1;
  for (int64_t l = 0; l < L->cfg.num_hidden_layers; ++l)
    if (L->cfg.kind(l) == AttnKind::CSA) csa = l;
  ASSERT_GE(csa, 0);
  auto sel = L->model->indexer_selection(csa);
  ASSERT_EQ(int64_t(sel.size()), L->batch.B * T * topk);
  // row 0: a single document, entries 0..7 (block s covers tokens 4s..4s+3)
  int64_t sparse_rows = 0;
  for (int64_t t = 0; t < T; ++t) {
    const int64_t nvis = (t + 1) / 4, kt = std::min(topk, nvis);
    std::set<int32_t> seen;
    for (int64_t j = 0; j < topk; ++j) {
      const int32_t e = sel[size_t(t * topk + j)];
      if (j >= kt) {
        EXPECT_EQ(e, -1);
        continue;
      }
      EXPECT_GE(e, 0);
      EXPECT_LT(e, nvis) << "query " << t << " selected a block that is not complete";
      EXPECT_TRUE(seen.insert(e).second);
    }
    sparse_rows += nvis > topk;
  }
  EXPECT_GT(sparse_rows, 0) << "top-k never sparse in the fixture";
}

TEST(ModelPacking, DocumentsInARowBehaveAsSeparateSequences) {
  auto L = load_fixture_model();
  const int64_t T = L->batch.T, V = L->cfg.vocab_size;
  // row 1 holds documents [0, 13) and [13, 32); run the second one alone as row 0 of a 19-token batch
  auto packed = std::vector<float>(L->model->forward(L->batch).begin(), L->model->forward(L->batch).end());
  const int64_t s0 = 13, len = T - s0;
  std::vector<int32_t> tok(L->tok.begin() + T + s0, L->tok.begin() + 2 * T);
  Batch b{1, len, tok.data(), nullptr, nullptr};
  auto alone = L->model->forward(b);
  double err = 0;
  for (int64_t t = 0; t < len; ++t)
    for (int64_t v = 0; v < V; ++v)
      err = std::max(err, double(std::fabs(alone[size_t(t * V + v)] - packed[size_t((T + s0 + t) * V + v)])));
  EXPECT_LT(err, 1e-5);
}

// Central differences of every trainable tensor at its largest-gradient coordinate. LM-side parameters are
// checked against ce + w*mtp + balance, indexer parameters against the indexer loss (the two are detached).
TEST(ModelGradients, FiniteDifferencesEveryTensor) {
  auto L = load_fixture_model();
  auto& m = *L->model;
  m.zero_grad();
  m.forward_backward(L->batch);
  std::vector<float> grads(m.grads().begin(), m.grads().end());
  const double wm = L->cfg.mtp_loss_weight;
  int checked = 0, bad = 0;
  for (const auto& p : m.param_table()) {
    if (!p.trainable) continue;
    const bool idx = p.name.find(".indexer.") != std::string::npos;
    int64_t best = 0;
    for (int64_t i = 0; i < p.numel; ++i)
      if (std::fabs(grads[size_t(p.offset + i)]) > std::fabs(grads[size_t(p.offset + best)])) best = i;
    const double g = grads[size_t(p.offset + best)];
    float& w = m.params()[size_t(p.offset + best)];
    const float keep = w;
    auto eval = [&] {
      Losses l;
      m.forward(L->batch, &l);
      return idx ? l.indexer : l.ce + wm * l.mtp + l.balance;
    };
    auto numeric = [&](float eps) {
      w = keep + eps;
      const double lp = eval();
      w = keep - eps;
      const double lm = eval();
      w = keep;
      return (lp - lm) / (2.0 * double(eps));
    };
    // A step can flip a discrete routing/top-k decision (the loss is only piecewise smooth): a coordinate
    // passes if one of two step sizes agrees.
    double num = numeric(1e-3f);
    bool ok = std::fabs(num - g) <= 0.05 * std::fabs(g) + 2e-4;
    if (!ok) {
      num = numeric(2.5e-4f);
      ok = std::fabs(num - g) <= 0.05 * std::fabs(g) + 4e-4;
    }
    if (!ok) {
      ++bad;
      ADD_FAILURE() << p.name << "[" << best << "] analytic " << g << " numeric " << num;
    }
    ++checked;
  }
  EXPECT_EQ(bad, 0);
  EXPECT_GT(checked, 100);
}

TEST(ModelMemory, ArenaDoesNotGrowAfterTheFirstStep) {
  // The second step is the one that used to re-allocate (and re-fault) the whole arena: every step after the
  // first must reuse the first one's memory.
  auto L = load_fixture_model();
  L->model->forward_backward(L->batch);
  const auto bytes = L->model->arena_bytes();
  ASSERT_GT(bytes, 0u);
  for (int i = 0; i < 4; ++i) L->model->forward_backward(L->batch);
  EXPECT_EQ(L->model->arena_regrowths(), 0);
  EXPECT_EQ(L->model->arena_bytes(), bytes);
}

TEST(ModelInit, DeterministicAndTrainable) {
  auto L = load_fixture_model();  // small config: this test trains a few steps
  ModelConfig c = L->cfg;
  Model a(c), b(c);
  a.init(42);
  b.init(42);
  ASSERT_TRUE(std::equal(a.params().begin(), a.params().end(), b.params().begin()));
  b.init(43);
  EXPECT_FALSE(std::equal(a.params().begin(), a.params().end(), b.params().begin()));
  // a few SGD steps on one batch lower the loss
  const int64_t V = c.vocab_size;
  std::vector<int32_t> tok(2 * 64);
  for (size_t i = 0; i < tok.size(); ++i) tok[i] = int32_t((i * 37 + i / 5) % size_t(V));
  Batch bt{2, 64, tok.data(), nullptr, nullptr};
  a.zero_grad();
  const double l0 = a.forward_backward(bt).total;
  EXPECT_TRUE(std::isfinite(l0));
  EXPECT_NEAR(a.forward_backward(bt).ce, std::log(double(V)), 0.5);  // near-uniform at init
  for (int s = 0; s < 5; ++s) {
    a.zero_grad();
    a.forward_backward(bt);
    for (const auto& p : a.param_table())
      if (p.trainable)
        for (int64_t i = 0; i < p.numel; ++i) a.params()[size_t(p.offset + i)] -= 0.5f * a.grads()[size_t(p.offset + i)];
  }
  Losses l;
  a.forward(bt, &l);
  EXPECT_LT(l.ce, std::log(double(V)) - 0.3);
}

TEST(ModelRouting, HashTablesBalancedAndDistinct) {
  ModelConfig c = ModelConfig::preset("tiny");
  for (int64_t k : {2, 3}) {
    c.num_experts_per_tok = k;
    auto t = make_hash_table(c, 0);
    ASSERT_EQ(int64_t(t.size()), c.vocab_size * k);
    std::vector<int64_t> load(size_t(c.n_routed_experts), 0);
    for (int64_t v = 0; v < c.vocab_size; ++v) {
      std::set<int64_t> s;
      for (int64_t j = 0; j < k; ++j) {
        ++load[size_t(t[size_t(v * k + j)])];
        s.insert(t[size_t(v * k + j)]);
      }
      EXPECT_EQ(int64_t(s.size()), k) << "token " << v;
    }
    auto [mn, mx] = std::minmax_element(load.begin(), load.end());
    EXPECT_LE(*mx - *mn, 1);
    EXPECT_EQ(make_hash_table(c, 0), t);
    EXPECT_NE(make_hash_table(c, 1), t);
  }
}

TEST(ModelRouting, GateBiasRuleMovesTowardsBalance) {
  auto L = load_fixture_model();
  L->model->forward(L->batch);
  const int64_t blk = 1;  // first non-hash layer
  auto load = std::vector<int64_t>(L->model->expert_load(blk).begin(), L->model->expert_load(blk).end());
  float* bias = L->model->store().param("layers.1.ffn.gate.bias");
  std::vector<float> before(bias, bias + load.size());
  L->model->update_gate_bias(0.01);
  double mean = 0;
  for (auto v : load) mean += double(v) / double(load.size());
  for (size_t e = 0; e < load.size(); ++e) {
    const double want = double(load[e]) < mean ? 0.01 : (double(load[e]) > mean ? -0.01 : 0.0);
    EXPECT_NEAR(bias[e] - before[e], want, 1e-7) << e;
  }
}

TEST(ModelInput, RejectsOutOfVocabularyTokens) {
  auto L = load_fixture_model();
  auto tok = L->tok;
  tok[5] = int32_t(L->cfg.vocab_size);
  Batch b = L->batch;
  b.tokens = tok.data();
  EXPECT_THROW(L->model->forward(b), trex::Error);
}

TEST(ModelInput, EdgeShapesRunAndStayFinite) {
  auto L = load_fixture_model();
  for (int64_t T : {1, 2, 5}) {
    std::vector<int32_t> tok(size_t(3 * T)), doc(size_t(3 * T));
    for (size_t i = 0; i < tok.size(); ++i) {
      tok[i] = int32_t(i * 11 % size_t(L->cfg.vocab_size));
      doc[i] = int32_t(i % 2);  // every token its own document in rows with T > 1
    }
    Batch b{3, T, tok.data(), doc.data(), nullptr};
    L->model->zero_grad();
    Losses l = L->model->forward_backward(b);
    EXPECT_TRUE(std::isfinite(l.total)) << T;
    EXPECT_EQ(l.ce_count, 0) << "no pair stays inside one document";
    for (float g : L->model->grads()) ASSERT_TRUE(std::isfinite(g));
  }
}

// Under bf16 products the producers' bf16 operand copies (the logits' gradients, attention and shared-expert
// inputs, the grouped experts' operands; nn::bf16_operand_copies) give exactly the step that rounding inside each
// product gives: the loss and every gradient, bit for bit.
TEST(ModelBf16, OperandCopiesGiveTheSameBitsAsRoundingInEachProduct) {
  TREX_REQUIRE_BF16();
  auto L = load_fixture_model();
  auto step = [&] {
    L->model->zero_grad();
    const double loss = L->model->forward_backward(L->batch).total;
    auto g = L->model->grads();
    return std::make_pair(loss, std::vector<float>(g.begin(), g.end()));
  };
  const auto fp32 = step();
  std::pair<double, std::vector<float>> with, without;
  {
    trex::nn::Bf16MatmulScope bf16;
    struct Restore {
      ~Restore() { trex::nn::set_bf16_operand_copies(true); }
    } restore;
    with = step();
    trex::nn::set_bf16_operand_copies(false);
    without = step();
  }
  EXPECT_NE(with.first, fp32.first) << "the bf16 scope changed nothing (test would be vacuous)";
  EXPECT_EQ(with.first, without.first);
  ASSERT_EQ(with.second.size(), without.second.size());
  EXPECT_EQ(std::memcmp(with.second.data(), without.second.data(), with.second.size() * sizeof(float)), 0)
      << "gradients differ with and without the bf16 operand copies";
}
