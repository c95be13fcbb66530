// The bf16 GEMM blocking tuner: the MILP on CBC picks a blocking as good (by the model) as the exhaustive search
// over the space, always within the capacity rules; shapes parse and derive from a model; `trex tune` prints it.
#include "tune/gemm_tuner.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "model/model_info.hpp"
#include "run_command.hpp"
#include "util/error.hpp"
#include "util/rng.hpp"

namespace {

using namespace trex::tune;

TEST(TuneGemm, ShapesParseAndBadOnesAreNamed) {
  const auto s = parse_shapes("64x128x256,8x32x16*3.5");
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s[0].m, 64);
  EXPECT_EQ(s[0].n, 128);
  EXPECT_EQ(s[0].k, 256);
  EXPECT_EQ(s[0].weight, 1.0);
  EXPECT_EQ(s[1].weight, 3.5);
  for (const char* bad : {"", "64x128", "64x128x0", "64x128x256*", "64x128x256*-1", "axbxc", "64x128x256,", "1x2x3x4"}) {
    EXPECT_THAT([&] { parse_shapes(bad); }, ::testing::ThrowsMessage<trex::Error>(::testing::HasSubstr("--shapes")))
        << "'" << bad << "'";
  }
  const auto m = model_gemm_shapes(trex::model::ModelConfig::preset("bench"), 1024);
  EXPECT_EQ(m.size(), 21u);  // 7 products x (forward, input gradient, weight gradient)
  for (const auto& x : m) EXPECT_GT(x.weight, 0);
}

TEST(TuneGemm, MilpMatchesTheExhaustiveModelMinimum) {
  trex::Rng rng(5);
  const std::vector<CpuModel> cpus = {cpu_preset("zen5"), cpu_preset("zen4")};
  int bound_by_rules = 0;
  for (int trial = 0; trial < 16; ++trial) {
    const CpuModel& cpu = cpus[size_t(trial % 2)];
    std::vector<GemmShape> shapes;
    for (int i = 0; i < 3; ++i)
      shapes.push_back({int64_t(8 + rng.uniform() * 2000), int64_t(32 + rng.uniform() * 4000), int64_t(16 + rng.uniform() * 3000),
                        1.0 + double(i), ""});
    TuneSpace space;
    if (trial % 3 == 1) space.kc = {128, 512, 1024, 2048};  // large kc values the L1 rule removes
    if (trial % 3 == 2) space.nc = {1024, 8192, 16384};     // B blocks the L3 rule removes
    TuneCostParams params;
    params.blis_l1_rule = trial % 4 < 2;
    const auto ranked = rank_by_model(cpu, shapes, space, params);
    ASSERT_FALSE(ranked.empty());
    const MilpChoice milp = choose_blocking_milp(cpu, shapes, space, params);
    ASSERT_TRUE(milp.solved) << milp.status;
    EXPECT_NEAR(milp.best.predicted_s, ranked.front().predicted_s, 1e-9 * ranked.front().predicted_s) << "trial " << trial;
    EXPECT_NEAR(milp.objective_s, milp.best.predicted_s, 1e-6 * milp.best.predicted_s);
    EXPECT_EQ(capacity_violation(cpu, milp.best.blocking, params), "");
    // The unconstrained model minimum lies outside the rules in some trials: the rules decide those.
    double free_best = 1e300;
    for (int64_t kc : space.kc)
      for (int64_t mc : space.mc)
        for (int64_t nc : space.nc)
          free_best = std::min(free_best, predict_seconds(cpu, shapes, trex::nn::Bf16Blocking{kc, mc, nc}, params));
    if (free_best < ranked.front().predicted_s * (1 - 1e-12)) ++bound_by_rules;
  }
  EXPECT_GE(bound_by_rules, 4);
}

TEST(TuneGemm, CapacityRulesNameTheLevel) {
  const CpuModel z4 = cpu_preset("zen4");  // L1 32 KiB 8-way: 28 KiB for kc x (8 + 32) x 2 B
  TuneCostParams blis;
  blis.blis_l1_rule = true;
  EXPECT_EQ(capacity_violation(z4, {320, 128, 512}, blis), "");
  EXPECT_NE(capacity_violation(z4, {512, 128, 512}, blis).find("L1"), std::string::npos);
  EXPECT_NE(capacity_violation(z4, {256, 2048, 512}, blis).find("L2"), std::string::npos);
  EXPECT_NE(capacity_violation(z4, {256, 128, 65536}, blis).find("L3"), std::string::npos);
  // The stream rule: a call on Zen 4 (64 bf16 FLOP/cycle at 90 %) reads 16·kc B of A from L2, plus 64·kc B of B
  // once the micro-panels overflow L1: ≈ 9 B/cycle, within 32 B/cycle; at 8 B/cycle only L1-resident kc pass.
  TuneCostParams stream;
  EXPECT_EQ(capacity_violation(z4, {512, 128, 512}, stream), "");
  stream.l2_bytes_per_cycle = 8;
  EXPECT_EQ(capacity_violation(z4, {320, 128, 512}, stream), "");
  EXPECT_NE(capacity_violation(z4, {512, 128, 512}, stream).find("B/cycle from L2"), std::string::npos);
  // More calls cost more: a smaller kc never predicts faster, all else equal.
  const GemmShape s{512, 1024, 2048, 1.0, ""};
  EXPECT_GT(predict_seconds(z4, s, {64, 128, 512}, TuneCostParams{}), predict_seconds(z4, s, {256, 128, 512}, TuneCostParams{}));
}

TEST(TuneCli, CpuAndGemmReportsAndBadInput) {
  const std::string trex = TREX_BIN_PATH;
  int rc = 0;
  std::string out = trex::testing::run_command(trex + " tune cpu --cpu zen5 --json", rc);
  ASSERT_EQ(rc, 0) << out;
  auto j = nlohmann::json::parse(out);
  EXPECT_EQ(j["blis_fp32"]["kc"], 384);
  EXPECT_EQ(j["blis_fp32"]["mc"], 592);
  EXPECT_EQ(j["blis_bf16"]["kc"], 768);
  out = trex::testing::run_command(trex + " tune gemm --cpu zen4 --shapes 256x512x1024,64x2048x256*2 --json", rc);
  ASSERT_EQ(rc, 0) << out;
  j = nlohmann::json::parse(out);
  EXPECT_EQ(j["milp"]["status"], "optimal");
  EXPECT_NEAR(j["milp"]["predicted_s"].get<double>(), j["model_best_predicted_s"].get<double>(), 1e-12);
  EXPECT_EQ(j["shapes"].size(), 2u);
  out = trex::testing::run_command(trex + " tune gemm --cpu zen4 --shapes 256x512", rc);
  EXPECT_EQ(rc, 2);
  EXPECT_NE(out.find("--shapes"), std::string::npos) << out;
  out = trex::testing::run_command(trex + " tune gemm --cpu zen4 --shapes 8x8x8 --mc 12", rc);
  EXPECT_EQ(rc, 2);
  EXPECT_NE(out.find("multiple of 8"), std::string::npos) << out;
  out = trex::testing::run_command(trex + " tune cpu --cpu zen9", rc);
  EXPECT_EQ(rc, 2);
  EXPECT_NE(out.find("zen9"), std::string::npos) << out;
}

}  // namespace
