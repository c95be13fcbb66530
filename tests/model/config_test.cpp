// ModelConfig: presets keep the layer pattern, config.json parsing (required fields, file:line errors,
// unknown fields ignored), round trip.
#include "model/config.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "util/error.hpp"

using trex::model::AttnKind;
using trex::model::ModelConfig;

namespace {
std::filesystem::path write_tmp(const std::string& name, const std::string& text) {
  auto p = std::filesystem::temp_directory_path() / ("trex_cfg_" + std::to_string(::getpid()) + "_" + name);
  std::ofstream(p) << text;
  return p;
}

// The message of the trex::Error that loading `p` throws ("" and a failure when it loads); removes the file.
std::string load_error(const std::filesystem::path& p) {
  std::string what;
  try {
    ModelConfig::from_hf_json(p);
    ADD_FAILURE() << p << " loaded; expected an error";
  } catch (const trex::Error& e) {
    what = e.what();
  }
  std::filesystem::remove(p);
  return what;
}
}  // namespace

TEST(ModelConfig, PresetsKeepLayerPattern) {
  for (const auto& name : ModelConfig::preset_names()) {
    ModelConfig c = ModelConfig::preset(name);
    ASSERT_EQ(int64_t(c.compress_ratios.size()), c.num_hidden_layers + 1) << name;
    EXPECT_EQ(c.kind(0), AttnKind::SWA) << name;
    EXPECT_EQ(c.kind(1), AttnKind::SWA) << name;
    for (int64_t l = 2; l < c.num_hidden_layers; ++l)
      EXPECT_EQ(c.kind(l), (l % 2 == 0) ? AttnKind::CSA : AttnKind::HCA) << name << " layer " << l;
    EXPECT_EQ(c.kind(c.num_hidden_layers), AttnKind::SWA) << name << " MTP";
    EXPECT_TRUE(c.is_hash_layer(0));
    EXPECT_FALSE(c.is_hash_layer(c.num_hidden_layers));
  }
  EXPECT_THROW(ModelConfig::preset("huge"), trex::Error);
}

TEST(ModelConfig, FlashPatternFromSpec) {
  auto r = trex::model::layer_pattern(43, 2, 0, 128, 1);
  ASSERT_EQ(r.size(), 44u);
  EXPECT_EQ(r[0], 0);
  EXPECT_EQ(r[2], 4);
  EXPECT_EQ(r[3], 128);
  EXPECT_EQ(r[42], 4);
  EXPECT_EQ(r[43], 0);
}

TEST(ModelConfig, JsonRoundTripAndUnknownFieldsIgnored) {
  ModelConfig a = ModelConfig::preset("tiny");
  auto j = a.to_hf_json();
  j["some_future_field"] = {1, 2, 3};
  auto p = write_tmp("rt.json", j.dump(2));
  ModelConfig b = ModelConfig::from_hf_json(p);
  EXPECT_EQ(b.to_hf_json(), a.to_hf_json());
  std::filesystem::remove(p);
}

TEST(ModelConfig, MissingRequiredFieldIsError) {
  auto j = ModelConfig::preset("tiny").to_hf_json();
  j.erase("head_dim");
  auto p = write_tmp("missing.json", j.dump(2));
  const std::string what = load_error(p);
  EXPECT_NE(what.find("head_dim"), std::string::npos) << what;
  EXPECT_NE(what.find(p.string()), std::string::npos) << what;
}

TEST(ModelConfig, WrongTypeNamesLine) {
  auto j = ModelConfig::preset("tiny").to_hf_json();
  j["hidden_size"] = "big";
  std::string text = j.dump(2);
  auto p = write_tmp("type.json", text);
  long line = 1;
  for (size_t i = 0; i < text.find("\"hidden_size\""); ++i) line += text[i] == '\n';
  const std::string what = load_error(p);
  EXPECT_NE(what.find(p.string() + ":" + std::to_string(line)), std::string::npos) << what;
}

TEST(ModelConfig, InvalidJsonNamesLine) {
  auto p = write_tmp("bad.json", "{\n  \"vocab_size\": 10,\n  oops\n}\n");
  const std::string what = load_error(p);
  EXPECT_NE(what.find(":3"), std::string::npos) << what;
}

TEST(ModelConfig, InconsistentRatiosRejected) {
  auto j = ModelConfig::preset("tiny").to_hf_json();
  j["compress_ratios"] = {0, 0, 4};
  auto p = write_tmp("ratios.json", j.dump(2));
  EXPECT_THROW(ModelConfig::from_hf_json(p), trex::Error);
  std::filesystem::remove(p);
}

// mHC's Sinkhorn kernels hold n x n matrices of at most 8 x 8: a wider hc_mult is refused with the field named.
TEST(ModelConfig, HcMultAboveEightRejected) {
  auto j = ModelConfig::preset("tiny").to_hf_json();
  j["hc_mult"] = 9;
  auto p = write_tmp("hc_mult.json", j.dump(2));
  const std::string what = load_error(p);
  EXPECT_NE(what.find("hc_mult"), std::string::npos) << what;
}
