// plan::Cluster: presets are valid, JSON files override a base preset, bad fields are refused naming the file.
#include "plan/cluster.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>

#include "temp_dir.hpp"
#include "util/error.hpp"

namespace {

using trex::plan::Cluster;

TEST(PlanCluster, PresetsAreValidAndTiersGrow) {
  for (const auto& name : trex::plan::cluster_preset_names()) {
    const Cluster c = trex::plan::cluster_preset(name);
    EXPECT_NO_THROW(c.validate()) << name;
    EXPECT_EQ(c.name, name);
  }
  const Cluster cm = trex::plan::cluster_preset("cm384");
  EXPECT_EQ(cm.tier_for(2).name, "ub");
  EXPECT_EQ(cm.tier_for(768).name, "ub");
  EXPECT_EQ(cm.tier_for(769).name, "roce");
  EXPECT_EQ(trex::plan::cluster_preset("h100").tier_for(8).name, "nvlink");
  EXPECT_EQ(trex::plan::cluster_preset("h100").tier_for(16).name, "ib");
  EXPECT_THROW(trex::plan::cluster_preset("tpu"), trex::Error);
}

TEST(PlanCluster, JsonFileOverridesItsBase) {
  const auto dir = trex::testing::fresh_temp_dir("plan_cluster");
  const auto path = dir / "mine.json";
  std::ofstream(path) << R"({"base": "h100", "name": "h100-slow-ib", "hbm_gb": 94,
                             "tiers": [{"name": "nvlink", "ranks": 8, "gbps": 300},
                                       {"name": "ib", "gbps": 12.5, "latency_us": 20}]})";
  const Cluster c = trex::plan::load_cluster(path.string());
  EXPECT_EQ(c.name, "h100-slow-ib");
  EXPECT_EQ(c.hbm_gb, 94);
  EXPECT_EQ(c.peak_tflops, 989);  // from the base
  ASSERT_EQ(c.tiers.size(), 2u);
  EXPECT_EQ(c.tiers[0].a2a_gbps, 300);  // defaults to gbps
  EXPECT_EQ(c.tier_for(1000).gbps, 12.5);
  // Round trip through the JSON the planner prints.
  const Cluster again = trex::plan::cluster_from_json(nlohmann::json::parse(trex::plan::cluster_to_json(c).dump()), "x");
  EXPECT_EQ(again.tier_for(1000).latency_us, 20);
  EXPECT_EQ(again.hbm_gb, 94);
}

TEST(PlanCluster, BadFilesAreRefusedNamingTheFileAndField) {
  const auto dir = trex::testing::fresh_temp_dir("plan_cluster_bad");
  struct Case {
    const char* text;
    const char* expect;
  } cases[] = {
      {R"({"base": "h100", "hbm_gbps": -1})", "hbm_gbps"},
      {R"({"base": "h100", "peak_tflops": "fast"})", "peak_tflops"},
      {R"({"base": "h100", "tiers": [{"name": "a", "ranks": 8, "gbps": 1}, {"name": "b", "ranks": 4, "gbps": 1}, {"name": "c", "gbps": 1}]})",
       "tier 'b'"},
      {R"({"base": "h100", "tiers": [{"ranks": 8}]})", "tiers[0]"},
      {R"({"base": "h100", "eff_dense": 1.5})", "efficiencies"},
      {R"({"base": "nope"})", "unknown cluster"},
      {R"([1, 2])", "JSON object"},
      {R"({"base": "h100", )", "mine.json"},
  };
  for (const auto& c : cases) {
    const auto path = dir / "mine.json";
    std::ofstream(path) << c.text;
    EXPECT_THAT([&] { trex::plan::load_cluster(path.string()); },
                ::testing::ThrowsMessage<trex::Error>(::testing::HasSubstr(c.expect)))
        << c.text;
  }
  EXPECT_THROW(trex::plan::load_cluster((dir / "missing.json").string()), trex::Error);
}

}  // namespace
