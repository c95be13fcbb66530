// trex model info: parameter counts and FLOPs per token reproduce the published DeepSeek-V4 sizes, the
// spec's own counts (DEEPSEEK_V4.md §1 "Size check") and its §10 FLOPs table; the checkpoint inventory
// matches the official Flash tensor count; the CLI prints JSON with total/active keys.
#include "model/model_info.hpp"

#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "model/checkpoint_layout.hpp"
#include "run_command.hpp"
#include "util/error.hpp"

using namespace trex::model;
namespace fs = std::filesystem;

namespace {

const fs::path kFlash = fs::path(TREX_SOURCE_DIR) / "configs/deepseek-v4-flash.json";
const fs::path kPro = fs::path(TREX_SOURCE_DIR) / "configs/deepseek-v4-pro.json";

using trex::testing::run_command;

// Published figures are rounded; a count reproduces one if it rounds to it at the published precision
// (half a unit of the last published digit).
void expect_rounds_to(double count, double published, double unit, const char* what) {
  EXPECT_LE(std::abs(count - published), unit / 2) << what << ": " << count << " vs published " << published;
}

}  // namespace

TEST(ModelInfo, FlashReproducesPublishedSizes) {
  ASSERT_TRUE(fs::exists(kFlash)) << "missing " << kFlash;
  const ParamCounts pc = count_parameters(ModelConfig::from_hf_json(kFlash));
  expect_rounds_to(double(pc.total), 284e9, 1e9, "Flash total (published 284B)");
  expect_rounds_to(double(pc.active), 13e9, 1e9, "Flash active (published 13B)");
  EXPECT_NEAR(double(pc.total) / 284e9, 1.0, 0.01);  // within 1% of 284B
  // The spec's independent count (agrees with hebo1221/nano-deepseek-v4), to its printed precision.
  expect_rounds_to(double(pc.total), 284.3e9, 0.1e9, "Flash total without MTP (spec 284.3B)");
  expect_rounds_to(double(pc.total_with_mtp), 290.9e9, 0.1e9, "Flash total with MTP (spec 290.9B)");
  expect_rounds_to(double(pc.active), 13.3e9, 0.1e9, "Flash active (spec 13.3B)");
  EXPECT_EQ(pc.swa_layers, 2);
  EXPECT_EQ(pc.csa_layers, 21);
  EXPECT_EQ(pc.hca_layers, 20);
}

TEST(ModelInfo, ProReproducesPublishedSizes) {
  ASSERT_TRUE(fs::exists(kPro)) << "missing " << kPro;
  const ParamCounts pc = count_parameters(ModelConfig::from_hf_json(kPro));
  expect_rounds_to(double(pc.total), 1.6e12, 0.1e12, "Pro total (published 1.6T)");
  expect_rounds_to(double(pc.total_with_mtp), 1.6e12, 0.1e12, "Pro total with MTP (published 1.6T)");
  expect_rounds_to(double(pc.active), 49e9, 1e9, "Pro active (published 49B)");
  EXPECT_NEAR(double(pc.active) / 49e9, 1.0, 0.01);
  EXPECT_NEAR(double(pc.total_with_mtp) / 1.6e12, 1.0, 0.01);
  expect_rounds_to(double(pc.total), 1573e9, 1e9, "Pro total without MTP (spec 1573B)");
  expect_rounds_to(double(pc.total_with_mtp), 1598.8e9, 0.1e9, "Pro total with MTP (spec 1598.8B)");
  expect_rounds_to(double(pc.active), 48.9e9, 0.1e9, "Pro active (spec 48.9B)");
  EXPECT_EQ(pc.swa_layers, 0);
  EXPECT_EQ(pc.csa_layers, 30);
  EXPECT_EQ(pc.hca_layers, 31);
}

TEST(ModelInfo, FlopsReproduceSpecTable) {
  const ModelConfig flash = ModelConfig::from_hf_json(kFlash), pro = ModelConfig::from_hf_json(kPro);
  expect_rounds_to(double(matmul_params_per_token(flash, true)), 14.12e9, 0.01e9, "Flash N_mm");
  expect_rounds_to(double(matmul_params_per_token(pro, true)), 50.64e9, 0.01e9, "Pro N_mm");
  struct Row {
    int64_t seq;
    double attn, idx, fwd, train;
  };
  // §10 table, GFLOP per token (printed to 0.01 / 0.1).
  const Row flash_rows[] = {{4096, 1.82, 0.18, 30.2, 90.7}, {32768, 2.44, 1.41, 32.1, 96.2}, {131072, 3.48, 5.64, 37.3, 112.0}};
  const Row pro_rows[] = {{4096, 6.20, 0.25, 107.7, 323.2}, {32768, 10.66, 2.01, 114.0, 341.9}, {131072, 14.16, 8.05, 123.5, 370.5}};
  for (auto [cfg, rows] : {std::pair{&flash, flash_rows}, std::pair{&pro, pro_rows}}) {
    for (int i = 0; i < 3; ++i) {
      const Row& r = rows[i];
      FlopsPerToken f = flops_per_token(*cfg, r.seq);
      expect_rounds_to(f.attention, r.attn * 1e9, 0.01e9, "attention");
      expect_rounds_to(f.indexer, r.idx * 1e9, 0.01e9, "indexer");
      // 0.1 GFLOP printed precision; one value (Flash 131072 forward 37.35) sits on the rounding edge.
      EXPECT_NEAR(f.forward, r.fwd * 1e9, 0.051e9) << "forward at " << r.seq;
      EXPECT_NEAR(f.train, r.train * 1e9, 0.051e9) << "train at " << r.seq;
      EXPECT_DOUBLE_EQ(f.train, 3 * f.forward);
    }
  }
}

TEST(ModelInfo, FlashInventoryMatchesOfficialCheckpoint) {
  const ModelConfig flash = ModelConfig::from_hf_json(kFlash);
  const ParamCounts pc = count_parameters(flash);
  EXPECT_EQ(pc.stored_tensors, 69187);  // official: 46 shards, 69,187 tensors
  // Official shards total 148.66 GiB including their JSON headers; our figure counts tensor data only.
  const double gib = double(pc.stored_bytes) / double(1ull << 30);
  EXPECT_GT(gib, 148.60);
  EXPECT_LE(gib, 148.66);
  // Spot-check shapes and formats of §11.
  auto layout = checkpoint_layout(flash);
  auto find = [&](const std::string& n) -> const LayoutTensor& {
    for (const auto& t : layout)
      if (t.name == n) return t;
    ADD_FAILURE() << "missing " << n;
    return layout.front();
  };
  EXPECT_EQ(find("layers.2.attn.wo_a.weight").shape, (std::vector<int64_t>{8192, 4096}));
  EXPECT_EQ(find("layers.2.attn.compressor.wkv.weight").shape, (std::vector<int64_t>{1024, 4096}));
  EXPECT_EQ(find("layers.3.attn.compressor.ape").shape, (std::vector<int64_t>{128, 512}));
  EXPECT_EQ(find("layers.0.ffn.gate.tid2eid").shape, (std::vector<int64_t>{129280, 6}));
  const auto& w1 = find("layers.5.ffn.experts.7.w1.weight");
  EXPECT_EQ(w1.stored, StoredAs::FP4Packed);
  EXPECT_EQ(w1.stored_shape(), (std::vector<int64_t>{2048, 2048}));
  EXPECT_EQ(w1.scale_name(), "layers.5.ffn.experts.7.w1.scale");
  EXPECT_EQ(w1.scale_shape(), (std::vector<int64_t>{2048, 128}));
  const auto& wq = find("layers.0.attn.wq_a.weight");
  EXPECT_EQ(wq.stored, StoredAs::FP8Block);
  EXPECT_EQ(wq.scale_shape(), (std::vector<int64_t>{8, 32}));
  EXPECT_TRUE(find("mtp.0.ffn.gate.bias").mtp);
  EXPECT_EQ(find("mtp.0.e_proj.weight").shape, (std::vector<int64_t>{4096, 4096}));
}

TEST(ModelInfo, PresetsCountAndRoughlyMatchSpecSuggestion) {
  for (const auto& name : ModelConfig::preset_names()) {
    const ModelConfig cfg = ModelConfig::preset(name);
    const ParamCounts pc = count_parameters(cfg);
    int64_t sum = 0;
    for (const auto& t : checkpoint_layout(cfg))
      if (t.is_parameter()) sum += t.numel();
    EXPECT_EQ(sum, pc.total_with_mtp) << name;
    EXPECT_LT(pc.active, pc.total) << name;
  }
  // §15: tiny has about 17M parameters (19M with MTP) and about 65 MFLOP per trained token.
  const ParamCounts tiny = count_parameters(ModelConfig::preset("tiny"));
  EXPECT_NEAR(double(tiny.total), 17e6, 1e6);
  EXPECT_NEAR(double(tiny.total_with_mtp), 19e6, 1e6);
  EXPECT_NEAR(flops_per_token(ModelConfig::preset("tiny"), 128).train, 65e6, 5e6);
}

TEST(ModelInfo, CliPrintsJsonWithTotalAndActive) {
  int rc = -1;
  std::string out = run_command(std::string(TREX_BIN_PATH) + " model info " + kFlash.string() + " --json --seq-len 4096", rc);
  ASSERT_EQ(rc, 0) << out;
  auto j = nlohmann::json::parse(out);
  EXPECT_EQ(j.at("total_params").get<int64_t>(), count_parameters(ModelConfig::from_hf_json(kFlash)).total);
  EXPECT_GT(j.at("active_params").get<int64_t>(), 13'000'000'000);
  EXPECT_TRUE(j.at("params_by_component").contains("routed_experts"));
  EXPECT_EQ(j.at("flops_per_token").at("per_seq_len").size(), 1u);
  out = run_command(std::string(TREX_BIN_PATH) + " model info tiny", rc);
  EXPECT_EQ(rc, 0) << out;
  EXPECT_NE(out.find("total params"), std::string::npos);
  out = run_command(std::string(TREX_BIN_PATH) + " model info /nonexistent/config.json", rc);
  EXPECT_EQ(rc, 2);
  EXPECT_NE(out.find("error:"), std::string::npos);
  // A config.json with an inconsistent field is an error naming the file.
  fs::path bad = fs::temp_directory_path() / ("trex_bad_config_" + std::to_string(::getpid()) + ".json");
  {
    auto j2 = nlohmann::json::parse(std::ifstream(kFlash));
    j2["compress_ratios"] = {0, 4};
    std::ofstream(bad) << j2.dump(1);
  }
  out = run_command(std::string(TREX_BIN_PATH) + " model info " + bad.string(), rc);
  EXPECT_EQ(rc, 2);
  EXPECT_NE(out.find(bad.filename().string()), std::string::npos) << out;
  fs::remove(bad);
}

TEST(ModelInfo, ClosedFormKeySumsMatchPerPositionLoop) {
  for (int64_t S : {1, 2, 3, 4, 5, 7, 8, 31, 32, 33, 127, 128, 129, 500, 2047, 2048, 2049, 4096, 5000})
    for (int64_t window : {1, 8, 128})
      for (int64_t ratio : {0, 4, 8, 16, 128})
        for (int64_t topk : {1, 4, 512}) {
          const KeySums a = key_sums(S, window, ratio, topk), b = key_sums_ref(S, window, ratio, topk);
          ASSERT_EQ(a.window, b.window) << S << " " << window << " " << ratio << " " << topk;
          ASSERT_EQ(a.compressed, b.compressed) << S << " " << window << " " << ratio << " " << topk;
          ASSERT_EQ(a.indexer, b.indexer) << S << " " << window << " " << ratio << " " << topk;
        }
}

TEST(ModelInfo, AbsurdInputsAreErrorsNotHangs) {
  ModelConfig c = ModelConfig::preset("tiny");
  c.n_routed_experts = 2'000'000'000;  // would list billions of tensors
  EXPECT_THROW(count_parameters(c), trex::Error);
  c = ModelConfig::preset("tiny");
  c.vocab_size = int64_t(1) << 50;  // embedding over 2^48 elements
  EXPECT_THROW(count_parameters(c), trex::Error);
  // A trillion-token sequence length is O(1) work.
  const FlopsPerToken f = flops_per_token(ModelConfig::from_hf_json(kFlash), int64_t(1) << 40);
  EXPECT_GT(f.attention, 0);
  EXPECT_THROW(flops_per_token(ModelConfig::preset("tiny"), 0), trex::Error);
}
