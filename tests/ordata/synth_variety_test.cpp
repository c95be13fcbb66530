// The manifest's per-family section (issue 26, points 3 and the held-out check): expand() reports the
// phrasing it drew without changing the text or the draws; the variety counter counts templates,
// phrasings, narratives and n-gram diversity; a run's "families" section adds up to its totals; and
// --test-mix draws held-out families for the test items only, marked as such.
#include <set>

#include "ordata/families.hpp"
#include "ordata/phrasing.hpp"
#include "ordata/variety.hpp"
#include "synth_support.hpp"

using namespace synth_test;
using trex::Json;
using namespace trex::ordata;

TEST(SynthVariety, TracedExpandDrawsAndWritesTheSameAsExpand) {
  const std::string tmpl = "The {plant|factory|mill} ships {at most|no more than} 5 tons to Lyon.";
  std::set<uint64_t> groups, choices;
  for (uint64_t seed = 1; seed <= 40; ++seed) {
    trex::Rng a(seed), b(seed);
    PhraseUse use;
    EXPECT_EQ(expand(a, tmpl, use), expand(b, tmpl));
    EXPECT_EQ(a.next_u64(), b.next_u64());  // the same number of draws
    groups.insert(use.groups);
    choices.insert(use.choice);
  }
  EXPECT_EQ(groups.size(), 1u);    // one template, whatever was drawn
  EXPECT_EQ(choices.size(), 6u);   // 3 x 2 alternatives, all seen in 40 draws
  trex::Rng r(3);
  PhraseUse plain;
  EXPECT_EQ(expand(r, "no groups here", plain), "no groups here");
  EXPECT_EQ(plain.groups, 0u);
  // The text between groups (names, numbers) does not make another template.
  PhraseUse u1, u2;
  trex::Rng r1(9), r2(9);
  expand(r1, "Lyon {ships|sends} 5", u1);
  expand(r2, "Porto {ships|sends} 7", u2);
  EXPECT_EQ(u1.groups, u2.groups);
  EXPECT_EQ(u1.choice, u2.choice);
  // Nor do numbers inside a group; other words do.
  PhraseUse n1, n2, w;
  trex::Rng q1(4), q2(4), q3(4);
  EXPECT_EQ(expand(q1, "{at most 5 units|no more than 5}", n1).find('5') != std::string::npos, true);
  expand(q2, "{at most 12 units|no more than 12}", n2);
  expand(q3, "{at most a few units|no more than 5}", w);
  EXPECT_EQ(n1.groups, n2.groups);
  EXPECT_NE(n1.groups, w.groups);
}

TEST(SynthVariety, MaskedTokensHideNumbers) {
  EXPECT_EQ(masked_tokens("Plant A ships 1,250 tons (x2) at $3.5!"),
            (std::vector<std::string>{"plant", "a", "ships", "#", "#", "tons", "#", "at", "#", "#"}));
}

TEST(SynthVariety, CounterCountsTemplatesPhrasingsNarrativesAndNgrams) {
  VarietyCounter v;
  Json md = {{"variant", "basic"}, {"domain", "energy"}};
  Json item1 = {{"narrative", 0}, {"phrasing", Json::array({Json::array({1u, 10u}), Json::array({2u, 20u})})}};
  Json item2 = {{"narrative", 2}, {"phrasing", Json::array({Json::array({1u, 11u})})}};
  v.add("diet", md, item1, "a b c d e");
  v.add("diet", Json{{"variant", "integer_servings"}, {"domain", "energy"}}, item2, "a b c d e");
  v.add("knapsack", md, Json{{"narrative", -1}}, "x y");
  Json j = v.to_json();
  EXPECT_EQ(j["diet"]["samples"], 2);
  EXPECT_EQ(j["diet"]["variants"], 2);
  EXPECT_EQ(j["diet"]["domains"], 1);
  EXPECT_EQ(j["diet"]["narratives"], 2);
  EXPECT_EQ(j["diet"]["sentence_templates"], 2);
  EXPECT_EQ(j["diet"]["phrasings"], 3);
  EXPECT_DOUBLE_EQ(j["diet"]["distinct_2"].get<double>(), 0.5);  // 4 distinct of 8 bigrams: the two texts are equal
  EXPECT_DOUBLE_EQ(j["diet"]["distinct_4"].get<double>(), 0.5);
  EXPECT_EQ(j["knapsack"]["narratives"], 1);  // one narrative (-1) counts as one scenario
  EXPECT_DOUBLE_EQ(j["knapsack"]["distinct_4"].get<double>(), 0.0);  // too short for a 4-gram
}

TEST(SynthVariety, GeneratorsRecordNarrativesAndPhrasings) {
  std::set<int> narratives;
  std::set<uint64_t> templates;
  for (uint64_t seed = 1; seed <= 30; ++seed) {
    Instance in = generate(Structure::Diet, Difficulty::Small, int(seed % 5), seed);
    narratives.insert(in.narrative);
    for (const auto& u : in.phrasing) templates.insert(u.groups);
  }
  EXPECT_EQ(narratives, (std::set<int>{0, 1, 2}));
  EXPECT_GE(templates.size(), 3u);
  // A classic family draws phrasings but has one narrative.
  Instance t = generate(Structure::Transportation, Difficulty::Small, 0, 5);
  EXPECT_EQ(t.narrative, -1);
  EXPECT_FALSE(t.phrasing.empty());
}

TEST(SynthVariety, ManifestFamiliesAddUpToTheTotals) {
  fs::path dir = fresh_dir("variety");
  int rc = 0;
  std::string out = run(synth_cmd(dir, "--count 60 --test-count 6 --seed 11 --mix structure=transportation:1,diet:1,knapsack:1"), rc);
  ASSERT_EQ(rc, 0) << out;
  Json man = trex::parse_json_file(dir / "manifest.json");
  const Json& fam = man["families"];
  ASSERT_EQ(fam.size(), 3u) << fam.dump(2);
  int64_t samples = 0, tests = 0, cands = 0, rejected = 0, all_rejected = 0;
  for (const auto& [name, f] : fam.items()) {
    samples += f["samples"].get<int64_t>();
    tests += f.value("test", int64_t(0));
    cands += f["candidates"].get<int64_t>();
    for (const auto& [reason, n] : f["rejections"].items()) rejected += n.get<int64_t>();
    EXPECT_GE(f["phrasings"].get<int64_t>(), f["sentence_templates"].get<int64_t>()) << name;
    EXPECT_GT(f["distinct_4"].get<double>(), 0.0) << name;
    EXPECT_LE(f["distinct_4"].get<double>(), 1.0) << name;
    EXPECT_EQ(f["samples"], man["buckets"]["structure"][name]) << name;
  }
  for (const auto& [reason, n] : man["rejections"].items()) all_rejected += n.get<int64_t>();
  EXPECT_EQ(samples, 60);
  EXPECT_EQ(tests, 6);
  EXPECT_EQ(cands, man["counts"]["candidates"].get<int64_t>());
  EXPECT_EQ(rejected, all_rejected);
  EXPECT_GE(fam["diet"]["narratives"].get<int64_t>(), 2);
  EXPECT_EQ(fam["transportation"]["narratives"], 1);
  fs::remove_all(dir);
}

TEST(SynthVariety, TestMixDrawsAHeldOutFamilyForTheTestItemsOnly) {
  fs::path dir = fresh_dir("heldout");
  int rc = 0;
  std::string out = run(synth_cmd(dir, "--count 30 --test-count 8 --seed 5 --mix structure=all:1,knapsack:0,job_shop:0,dispersion:0 "
                                       "--test-mix structure=knapsack:1"),
                        rc);
  ASSERT_EQ(rc, 0) << out;
  for (const auto& r : read_jsonl(dir / "sft.jsonl")) {
    EXPECT_NE(r["metadata"]["structure"], "knapsack");
    EXPECT_FALSE(r["metadata"].contains("held_out_structure"));
  }
  auto test = read_jsonl(dir / "test.jsonl");
  ASSERT_EQ(test.size(), 8u);
  for (const auto& t : test) {
    EXPECT_EQ(t["metadata"]["structure"], "knapsack");
    EXPECT_EQ(t["metadata"]["held_out_structure"], true);
    EXPECT_TRUE(t["answer"].is_number());  // a verified test item in the generic format
  }
  Json man = trex::parse_json_file(dir / "manifest.json");
  EXPECT_NE(man["options"]["test_mix"].get<std::string>().find("knapsack:1"), std::string::npos);
  EXPECT_EQ(man["families"]["knapsack"]["test"], 8);
  EXPECT_EQ(man["families"]["knapsack"]["samples"], 0);
  fs::remove_all(dir);

  // Without --test-mix the test items follow the training mix and none is marked held out.
  fs::path plain = fresh_dir("heldout_plain");
  out = run(synth_cmd(plain, "--count 20 --test-count 5 --seed 5"), rc);
  ASSERT_EQ(rc, 0) << out;
  for (const auto& t : read_jsonl(plain / "test.jsonl")) EXPECT_FALSE(t["metadata"].contains("held_out_structure"));
  EXPECT_FALSE(trex::parse_json_file(plain / "manifest.json")["options"].contains("test_mix"));
  fs::remove_all(plain);

  // The test items' task is --test-task's; a bad group is refused before anything is written.
  fs::path bad = fresh_dir("heldout_bad");
  out = run(synth_cmd(bad, "--count 5 --seed 1 --test-mix task=repair:1"), rc);
  EXPECT_EQ(rc, 2) << out;
  EXPECT_NE(out.find("--test-task"), std::string::npos) << out;
  out = run(synth_cmd(bad, "--count 5 --seed 1 --test-mix structure=nope:1"), rc);
  EXPECT_EQ(rc, 2) << out;
  EXPECT_NE(out.find("unknown structure 'nope'"), std::string::npos) << out;
  EXPECT_FALSE(fs::exists(bad));
}
