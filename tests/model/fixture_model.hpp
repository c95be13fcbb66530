// Loads the committed twin fixture into a Model (weights, hash tables, packed inputs). Test-only.
#pragma once
#include <gtest/gtest.h>

#include <memory>

#include "fixture_reader.hpp"
#include "model/model.hpp"

namespace trex::testing {

using namespace trex::model;

inline const char* kFixture = TREX_SOURCE_DIR "/tests/model/fixtures/model_fixture.safetensors";
// Chained MTP of depth 2 (2 layers + 2 MTP modules): gen_fixture.py - mtp2
inline const char* kFixtureMtp2 = TREX_SOURCE_DIR "/tests/model/fixtures/model_fixture_mtp2.safetensors";
// Dense indexer warm-up (3 layers, CSA at layer 1): gen_fixture.py - dense
inline const char* kFixtureDense = TREX_SOURCE_DIR "/tests/model/fixtures/model_fixture_dense.safetensors";

struct Loaded {
  trex::testing::Fixture fx;
  ModelConfig cfg;
  std::unique_ptr<Model> model;
  std::vector<int32_t> tok, doc;
  std::vector<uint8_t> mask;
  Batch batch;
};

inline std::unique_ptr<Loaded> load_fixture_model(const char* path = kFixture) {
  auto L = std::make_unique<Loaded>();
  L->fx = trex::testing::read_fixture(path);
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


}  // namespace trex::testing
