// `trex synth --list-families` and the opt-in families end to end: the listing names every structure,
// generator, task family and per-bucket measurements (JSON and text); a run over the later structures only
// exports items of those structures whose answers were all re-verified; --seed/--count/--out stay required
// for a run.
#include <set>

#include "ordata/vocab.hpp"
#include "synth_support.hpp"

using namespace synth_test;
using trex::Json;

TEST(SynthFamiliesCli, ListFamiliesPrintsEveryGeneratorAndBucket) {
  int rc = 0;
  std::string out = run(std::string(TREX_BIN_PATH) + " synth --list-families --json --list-draws 3", rc);
  ASSERT_EQ(rc, 0) << out;
  Json j = Json::parse(out.substr(out.find('{')));
  ASSERT_EQ(j["structures"].size(), size_t(trex::ordata::kNumStructures));
  int generators = 0;
  std::set<std::string> names;
  for (const auto& f : j["structures"]) {
    names.insert(f["structure"].get<std::string>());
    ASSERT_FALSE(f["generators"].empty());
    for (const auto& g : f["generators"]) {
      EXPECT_FALSE(g["task_family"].get<std::string>().empty());
      EXPECT_FALSE(g["formulation"].get<std::string>().empty());
      ++generators;
    }
    ASSERT_EQ(f["buckets"].size(), 4u);
    for (const char* b : {"small", "medium", "large", "industrial"}) {
      const Json& k = f["buckets"][b];
      EXPECT_EQ(k["draws"], 3);
      EXPECT_LE(k["verified"].get<int>(), 3);
      EXPECT_GE(k["vars"][0].get<int>(), 1) << f["structure"] << " " << b;
      EXPECT_LE(k["vars"][0].get<int>(), k["vars"][1].get<int>());
      EXPECT_LE(k["rows"][0].get<int>(), k["rows"][1].get<int>());
      int drawn = 0;
      for (const auto& [v, n] : k["variants"].items()) drawn += n.get<int>();
      EXPECT_EQ(drawn, 3);
    }
    EXPECT_EQ(f["default_mix"].get<bool>(), names.size() <= size_t(trex::ordata::kNumClassicStructures));
  }
  EXPECT_EQ(j["generators"].get<int>(), generators);
  for (const char* s : {"assignment", "generic_lp_mip", "knapsack", "set_cover", "network_flow", "diet", "unit_commitment",
                        "revenue_management", "bin_packing", "job_shop", "dispersion", "supply_chain", "marketing",
                        "agriculture", "deployment", "rostering", "routing_flow", "network_design", "location_allocation"}) EXPECT_TRUE(names.count(s)) << s;
  std::set<std::string> tf;
  for (const auto& t : j["task_families"]) tf.insert(t.get<std::string>());
  for (const char* t : {"packing", "covering", "network flow", "diet", "lot sizing", "energy", "revenue management",
                        "contract allocation", "cutting stock", "dispersion", "supply chain", "network design", "marketing",
                        "agriculture", "deployment", "workforce planning"}) EXPECT_TRUE(tf.count(t)) << t;

  std::string text = run(std::string(TREX_BIN_PATH) + " synth --list-families --list-draws 2", rc);
  ASSERT_EQ(rc, 0) << text;
  EXPECT_NE(text.find("knapsack (opt-in: --mix structure=knapsack:W)"), std::string::npos) << text;
  EXPECT_NE(text.find(std::to_string(trex::ordata::kNumStructures) + " structures, " + std::to_string(generators) + " generators"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("industrial"), std::string::npos);
}

TEST(SynthFamiliesCli, RunsNeedSeedCountAndOut) {
  int rc = 0;
  fs::path d = fresh_dir("families_required");
  std::string out = run(synth_cmd(d, "--count 5"), rc);
  EXPECT_NE(rc, 0);
  EXPECT_NE(out.find("--seed is required"), std::string::npos) << out;
  out = run(std::string(TREX_BIN_PATH) + " synth --seed 1 --count 5", rc);
  EXPECT_NE(rc, 0);
  EXPECT_NE(out.find("required"), std::string::npos) << out;
  EXPECT_FALSE(fs::exists(d));
}

TEST(SynthFamiliesCli, LaterStructuresRunEndToEnd) {
  int rc = 0;
  fs::path d = fresh_dir("families_run");
  std::string out = run(synth_cmd(d, "--count 120 --seed 9 --test-count 8 --mix structure=all:1,classic:0"), rc);
  ASSERT_EQ(rc, 0) << out;
  std::set<std::string> seen;
  for (const auto& r : read_jsonl(d / "sft.jsonl")) seen.insert(r["metadata"]["structure"].get<std::string>());
  std::set<std::string> later;
  for (int s = trex::ordata::kNumClassicStructures; s < trex::ordata::kNumStructures; ++s) later.insert(to_string(trex::ordata::Structure(s)));
  EXPECT_EQ(seen, later);
  for (const auto& r : read_jsonl(d / "test.jsonl")) EXPECT_TRUE(seen.count(r["metadata"]["structure"].get<std::string>()));
  Json m = Json::parse(trex::read_file(d / "manifest.json"));
  EXPECT_EQ(m["counts"]["sft"], 120);  // enough draws that every later structure appears
  EXPECT_EQ(m["verification"]["lp_answers"], m["verification"]["lp_answers_resolved"]);
  EXPECT_EQ(m["verification"]["code_answers"], m["verification"]["code_answers_run"]);
  EXPECT_GT(m["verification"]["code_answers"].get<int>(), 0);
  EXPECT_NE(m["options"]["mix"].get<std::string>().find("generic_lp_mip:0,knapsack:1,set_cover:1,network_flow:1,diet:1"), std::string::npos);
  fs::remove_all(d);
}
