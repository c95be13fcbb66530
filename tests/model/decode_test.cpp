// Incremental decoding (model/decode.hpp) against its oracle, the full-sequence forward: every position's logits
// agree for any chunking of the sequence (prefill at once, token by token, ragged chunks), for several sequences
// stepped together, after clear(), and on sequences longer than the sliding window and spanning many
// compression blocks of the CSA (m = 4, indexer top-k active) and HCA (m = 16) layers of the tiny preset.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "model/decode.hpp"
#include "util/error.hpp"
#include "util/rng.hpp"

using namespace trex::model;

namespace {

struct TinyModel {
  ModelConfig cfg = ModelConfig::preset("tiny");
  std::unique_ptr<Model> model;
  explicit TinyModel(uint64_t seed = 7) {
    model = std::make_unique<Model>(cfg);
    model->init(seed);
    // Random init leaves the sinks, mHC bases and gate biases at zero; perturb them so every path is exercised.
    trex::Rng r(seed + 1);
    for (const auto& p : model->param_table()) {
      const bool perturb = p.name.find("attn_sink") != std::string::npos || p.name.find("_base") != std::string::npos ||
                           p.name.find("gate.bias") != std::string::npos;
      if (!perturb) continue;
      float* w = model->params().data() + p.offset;
      for (int64_t i = 0; i < p.numel; ++i) w[i] = float(0.3 * r.normal());
    }
  }
};

std::vector<int32_t> random_tokens(int64_t T, int64_t V, uint64_t seed) {
  trex::Rng r(seed);
  std::vector<int32_t> t(static_cast<size_t>(T));
  for (auto& x : t) x = int32_t(r.uniform_int(0, V - 1));
  return t;
}

std::vector<float> full_logits(Model& m, const std::vector<int32_t>& tok) {
  Batch b;
  b.B = 1;
  b.T = int64_t(tok.size());
  b.tokens = tok.data();
  auto lg = m.forward(b);
  return {lg.begin(), lg.end()};
}

// Max |a - b| over one position's logits, relative to the position's logit scale.
double pos_error(const float* a, const float* b, int64_t V) {
  double err = 0, scale = 1e-3;
  for (int64_t v = 0; v < V; ++v) {
    err = std::max(err, double(std::fabs(a[v] - b[v])));
    scale = std::max(scale, double(std::fabs(b[v])));
  }
  return err / scale;
}

constexpr double kTol = 2e-5;  // fp32: the same operations, GEMMs over different row counts

// Feeds `tok` in chunks of the given sizes (cycled) and checks every position against `ref`.
void check_chunking(Model& m, Decoder& dec, const std::vector<int32_t>& tok, const std::vector<float>& ref,
                    const std::vector<int64_t>& chunks) {
  const int64_t V = m.config().vocab_size, T = int64_t(tok.size());
  DecodeState st = dec.new_state(T);
  int64_t at = 0;
  size_t ci = 0;
  while (at < T) {
    const int64_t n = std::min(chunks[ci++ % chunks.size()], T - at);
    auto lg = dec.step(st, std::span<const int32_t>(tok.data() + at, size_t(n)), true);
    ASSERT_EQ(int64_t(lg.size()), n * V);
    for (int64_t j = 0; j < n; ++j)
      ASSERT_LT(pos_error(lg.data() + j * V, ref.data() + (at + j) * V, V), kTol)
          << "position " << at + j << " (chunk of " << n << ")";
    at += n;
    ASSERT_EQ(st.length(), at);
  }
}

}  // namespace

TEST(Decode, TinyPresetHasWhatTheTestNeeds) {
  ModelConfig cfg = ModelConfig::preset("tiny");
  bool csa = false, hca = false;
  for (int64_t l = 0; l < cfg.num_hidden_layers; ++l) {
    csa |= cfg.kind(l) == AttnKind::CSA;
    hca |= cfg.kind(l) == AttnKind::HCA;
  }
  EXPECT_TRUE(csa && hca);
  EXPECT_LT(cfg.sliding_window, 160);
  EXPECT_LT(cfg.index_topk, 160 / 4);  // the indexer really selects
}

// A tiny model (init seed), a random sequence of T tokens, fed to the decoder in the given chunks.
static void check_against_full_forward(uint64_t model_seed, int64_t T, uint64_t token_seed,
                                       const std::vector<int64_t>& chunks) {
  TinyModel t(model_seed);
  Decoder dec(*t.model);
  auto tok = random_tokens(T, t.cfg.vocab_size, token_seed);
  check_chunking(*t.model, dec, tok, full_logits(*t.model, tok), chunks);
}

TEST(Decode, PrefillAtOnceMatchesFullForward) { check_against_full_forward(7, 160, 1, {160}); }

TEST(Decode, TokenByTokenMatchesFullForward) { check_against_full_forward(7, 160, 2, {1}); }

TEST(Decode, RaggedChunksMatchFullForward) { check_against_full_forward(11, 150, 3, {5, 1, 13, 2, 31, 1, 1, 16, 3}); }

TEST(Decode, LastPositionLogitsAreTheLastRow) {
  TinyModel t;
  Decoder dec(*t.model);
  const int64_t V = t.cfg.vocab_size;
  auto tok = random_tokens(40, V, 4);
  auto ref = full_logits(*t.model, tok);
  DecodeState st = dec.new_state();
  auto lg = dec.step(st, std::span<const int32_t>(tok.data(), 37));
  ASSERT_EQ(int64_t(lg.size()), V);
  EXPECT_LT(pos_error(lg.data(), ref.data() + 36 * V, V), kTol);
  lg = dec.step(st, std::span<const int32_t>(tok.data() + 37, 3));
  EXPECT_LT(pos_error(lg.data(), ref.data() + 39 * V, V), kTol);
}

TEST(Decode, BatchOfIndependentSequences) {
  TinyModel t;
  Decoder dec(*t.model);
  const int64_t V = t.cfg.vocab_size;
  const std::vector<int64_t> lens = {70, 23, 101};
  std::vector<std::vector<int32_t>> toks;
  std::vector<std::vector<float>> refs;
  for (size_t i = 0; i < lens.size(); ++i) {
    toks.push_back(random_tokens(lens[i], V, 10 + i));
    refs.push_back(full_logits(*t.model, toks.back()));
  }
  std::vector<DecodeState> st;
  for (size_t i = 0; i < lens.size(); ++i) st.push_back(dec.new_state());
  // Prefill different lengths together, then decode one token each per step while tokens remain.
  std::vector<int64_t> at = {9, 17, 4};
  {
    std::vector<DecodeState*> sp;
    std::vector<std::span<const int32_t>> tp;
    for (size_t i = 0; i < lens.size(); ++i) {
      sp.push_back(&st[i]);
      tp.emplace_back(toks[i].data(), size_t(at[i]));
    }
    auto lg = dec.step(sp, tp, true);
    int64_t row = 0;
    for (size_t i = 0; i < lens.size(); ++i)
      for (int64_t j = 0; j < at[i]; ++j, ++row)
        ASSERT_LT(pos_error(lg.data() + row * V, refs[i].data() + j * V, V), kTol) << "seq " << i << " pos " << j;
  }
  for (;;) {
    std::vector<DecodeState*> sp;
    std::vector<std::span<const int32_t>> tp;
    std::vector<size_t> who;
    for (size_t i = 0; i < lens.size(); ++i)
      if (at[i] < lens[i]) {
        sp.push_back(&st[i]);
        tp.emplace_back(toks[i].data() + at[i], 1);
        who.push_back(i);
      }
    if (sp.empty()) break;
    auto lg = dec.step(sp, tp);
    ASSERT_EQ(lg.size(), who.size() * size_t(V));
    for (size_t k = 0; k < who.size(); ++k) {
      const size_t i = who[k];
      ASSERT_LT(pos_error(lg.data() + k * V, refs[i].data() + at[i] * V, V), kTol) << "seq " << i << " pos " << at[i];
      ++at[i];
    }
  }
}

TEST(Decode, ClearStartsAFreshSequence) {
  TinyModel t;
  Decoder dec(*t.model);
  const int64_t V = t.cfg.vocab_size;
  auto a = random_tokens(50, V, 20), b = random_tokens(45, V, 21);
  auto ref = full_logits(*t.model, b);
  DecodeState st = dec.new_state();
  dec.step(st, a);
  st.clear();
  EXPECT_EQ(st.length(), 0);
  auto lg = dec.step(st, b, true);
  for (int64_t j = 0; j < 45; ++j) ASSERT_LT(pos_error(lg.data() + j * V, ref.data() + j * V, V), kTol) << j;
}

TEST(Decode, CacheIsBoundedByTheWindowAndTheEntries) {
  TinyModel t;
  Decoder dec(*t.model);
  DecodeState st = dec.new_state(512);
  const size_t before = st.cache_bytes();
  dec.step(st, random_tokens(512, t.cfg.vocab_size, 5));
  // Only compressed entries grow (reserved up front): the window ring and compressor tails are fixed.
  EXPECT_EQ(st.cache_bytes(), before);
}

TEST(Decode, BadInputIsAnErrorAndLeavesTheStateUnchanged) {
  TinyModel t;
  Decoder dec(*t.model);
  const int64_t V = t.cfg.vocab_size;
  auto tok = random_tokens(30, V, 6);
  auto ref = full_logits(*t.model, tok);
  DecodeState st = dec.new_state();
  dec.step(st, std::span<const int32_t>(tok.data(), 20));
  std::vector<int32_t> bad = {1, int32_t(V)};
  EXPECT_THROW(dec.step(st, bad), trex::Error);
  std::vector<int32_t> neg = {-1};
  EXPECT_THROW(dec.step(st, neg), trex::Error);
  EXPECT_THROW(dec.step(st, std::span<const int32_t>()), trex::Error);
  DecodeState* twice[2] = {&st, &st};
  std::span<const int32_t> tt[2] = {std::span<const int32_t>(tok.data(), 1), std::span<const int32_t>(tok.data(), 1)};
  EXPECT_THROW(dec.step(std::span<DecodeState* const>(twice, 2), std::span<const std::span<const int32_t>>(tt, 2)),
               trex::Error);
  EXPECT_EQ(st.length(), 20);
  auto lg = dec.step(st, std::span<const int32_t>(tok.data() + 20, 10), true);
  for (int64_t j = 0; j < 10; ++j)
    ASSERT_LT(pos_error(lg.data() + j * V, ref.data() + (20 + j) * V, V), kTol) << j;
}

// What makes greedy generation independent of which requests happen to be batched together (serve vs
// generate): a sequence's logits are bitwise the same whether it is stepped alone or with others.
TEST(Decode, BatchedStepsAreBitwiseTheSameAsSoloSteps) {
  TinyModel t;
  Decoder dec(*t.model);
  const int64_t V = t.cfg.vocab_size;
  std::vector<std::vector<int32_t>> toks;
  for (int i = 0; i < 3; ++i) toks.push_back(random_tokens(48 + 7 * i, V, 30 + uint64_t(i)));
  std::vector<DecodeState> solo, batch;
  for (int i = 0; i < 3; ++i) {
    solo.push_back(dec.new_state());
    batch.push_back(dec.new_state());
    dec.step(solo.back(), std::span<const int32_t>(toks[size_t(i)].data(), 40));
    dec.step(batch.back(), std::span<const int32_t>(toks[size_t(i)].data(), 40));
  }
  for (int64_t at = 40; at < 48; ++at) {
    std::vector<std::vector<float>> want;
    for (int i = 0; i < 3; ++i) {
      auto lg = dec.step(solo[size_t(i)], std::span<const int32_t>(toks[size_t(i)].data() + at, 1));
      want.emplace_back(lg.begin(), lg.end());
    }
    DecodeState* sp[3] = {&batch[0], &batch[1], &batch[2]};
    std::span<const int32_t> tp[3];
    for (int i = 0; i < 3; ++i) tp[i] = std::span<const int32_t>(toks[size_t(i)].data() + at, 1);
    auto lg = dec.step(std::span<DecodeState* const>(sp, 3), std::span<const std::span<const int32_t>>(tp, 3));
    for (int i = 0; i < 3; ++i)
      for (int64_t v = 0; v < V; ++v)
        ASSERT_EQ(lg[size_t(i * V + v)], want[size_t(i)][size_t(v)]) << "seq " << i << " pos " << at << " id " << v;
  }
}

TEST(Decode, DenseWarmupConfigIsRefused) {
  ModelConfig cfg = ModelConfig::preset("tiny");
  cfg.indexer_dense_warmup = true;
  Model m(cfg);
  EXPECT_THROW(Decoder{m}, trex::Error);
}
