// The families added for breadth (issue 26) and the family registry: every generator of every later
// structure builds, verifies, renders in every representation and answers every task in every difficulty
// bucket, with the answer LP re-solved and the code answer run through the gurobipy layer to the verified
// objective; the registry lists every structure with task families; the default mix stays the classic ten
// (so `trex run`'s data do not change) and `--mix structure=all|classic:W` selects groups.
#include <gtest/gtest.h>

#include <set>

#include "ordata/answers.hpp"
#include "ordata/code_check.hpp"
#include "ordata/families.hpp"
#include "ordata/render.hpp"
#include "ordata/synth.hpp"
#include "ordata/verify.hpp"

using namespace trex::ordata;

TEST(FamilyRegistry, EveryStructureHasGeneratorsAndTaskFamilies) {
  std::set<std::string> task_families;
  int generators = 0;
  for (int s = 0; s < kNumStructures; ++s) {
    const FamilyInfo& info = family_info(Structure(s));
    EXPECT_EQ(info.structure, Structure(s));
    EXPECT_EQ(info.classic, s < kNumClassicStructures) << to_string(Structure(s));
    ASSERT_FALSE(info.generators.empty()) << to_string(Structure(s));
    std::set<std::string> names;
    for (const auto& g : info.generators) {
      EXPECT_TRUE(names.insert(g.variant).second) << "duplicate variant " << g.variant;
      EXPECT_FALSE(g.task_family.empty());
      EXPECT_FALSE(g.formulation.empty());
      task_families.insert(g.task_family);
      ++generators;
    }
    EXPECT_EQ(family_variants(Structure(s)).size(), info.generators.size());
    if (!info.classic) {
      EXPECT_GE(info.pitfalls.size(), 2u) << to_string(Structure(s));
    }
  }
  for (const char* f : {"packing", "covering", "network flow", "diet", "energy", "revenue management", "contract allocation", "cutting stock", "dispersion", "supply chain", "network design", "marketing",
                        "agriculture", "deployment", "workforce planning"})
    EXPECT_TRUE(task_families.count(f)) << f;
  EXPECT_GE(generators, 68);
}

TEST(FamilyRegistry, DefaultMixIsTheClassicTenAndGroupsSelect) {
  Mix m = default_mix();
  for (int s = 0; s < kNumStructures; ++s) EXPECT_EQ(m.structure[size_t(s)], s < kNumClassicStructures ? 1.0 : 0.0);
  // The default mix reads as it did before the later structures existed (it is part of the options
  // fingerprint and of manifest.json).
  std::string str = mix_to_string(m);
  EXPECT_EQ(str.substr(0, str.find(';')),
            "structure=assignment:1,scheduling:1,routing:1,transportation:1,blending:1,capacity_planning:1,"
            "facility_location:1,production_planning:1,portfolio:1,generic_lp_mip:1");
  apply_mix("structure=all:1,knapsack:0,diet:3", m);
  for (int s = 0; s < kNumStructures; ++s) {
    double want = Structure(s) == Structure::Knapsack ? 0.0 : (Structure(s) == Structure::Diet ? 3.0 : 1.0);
    EXPECT_EQ(m.structure[size_t(s)], want) << to_string(Structure(s));
  }
  EXPECT_NE(mix_to_string(m).find("generic_lp_mip:1,set_cover:1,network_flow:1,diet:3,"), std::string::npos) << mix_to_string(m);
  EXPECT_EQ(mix_to_string(m).find("knapsack"), std::string::npos);  // unselected later structures are not listed
  apply_mix("structure=classic:2", m);
  for (int s = 0; s < kNumStructures; ++s) EXPECT_EQ(m.structure[size_t(s)], s < kNumClassicStructures ? 2.0 : 0.0);
  EXPECT_THROW(apply_mix("structure=classic:0", m), trex::Error);
  EXPECT_THROW(apply_mix("structure=knapsak:1", m), trex::Error);
}

class BreadthFamilyTest : public ::testing::TestWithParam<int> {};

// Every bucket of the structure: a verified instance (one of the first 40 seeds), rendered in DP, DT and
// DPS, answered in all four tasks; every answer LP re-solved, every program run through the layer, every
// attachment read back; across the buckets every variant and a repair flaw of each drawn.
TEST_P(BreadthFamilyTest, EveryBucketBuildsSolvesRendersAndAnswers) {
  Structure st = Structure(GetParam());
  CodeRunnerConfig cfg = default_code_runner_config();
  cfg.time_limit_s = 30;
  CodeRunner runner(cfg);
  trex::Rng rng(uint64_t(GetParam()) * 17 + 1);
  std::set<std::string> variants;
  int repairs = 0;
  for (int d = 0; d < kNumDifficulties; ++d) {
    int found = 0, last_vars = 0;
    for (uint64_t seed = 1; seed <= 40 && found < 3; ++seed) {
      Instance in = generate(st, Difficulty(d), int(seed) % num_domains(), seed * 7907 + uint64_t(d));
      Verification v = verify_instance(in);
      if (!v.accepted) continue;
      ++found;
      variants.insert(in.variant);
      last_vars = in.model.num_vars();
      EXPECT_EQ(degeneracy_reason(in.model, v.x), "");
      for (int mo = 0; mo < kNumModes; ++mo) {
        RenderedProblem p = render_problem(in, Mode(mo), rng);
        EXPECT_EQ((p.intro + p.rules + p.goal).find('{'), std::string::npos) << p.text;  // no unexpanded template
        for (int t = 0; t < kNumTasks; ++t) {
          std::optional<Flaw> flaw;
          if (Task(t) == Task::Repair) {
            flaw = make_flaw(in, v, rng);
            if (!flaw) continue;  // the pipeline rejects it as repair_unobservable
            ++repairs;
          }
          TaskSample s = build_task(in, v, p, Task(t), flaw, rng);
          ASSERT_EQ(check_answer(s, v.objective), "") << to_string(st) << " " << to_string(Task(t)) << "\n" << s.assistant;
          if (Task(t) != Task::CodeOnly) {
            EXPECT_FALSE(s.answer_lp.empty());
          }
          if (s.answer_code.empty()) continue;
          std::vector<DataFile> files;
          if (Mode(mo) == Mode::DPS || Task(t) == Task::CodeOnly) {
            files = answer_files(in, p);
            EXPECT_EQ(check_data_files(files, p.data), "") << to_string(st);
          }
          CodeRun run;
          EXPECT_EQ(check_code_answer(runner, s.answer_code, Task(t) == Task::CodeOnly ? files : std::vector<DataFile>{}, v.objective, &run), "")
              << to_string(st) << " " << to_string(Task(t)) << ": " << run.detail << run.stdout_text;
        }
      }
    }
    EXPECT_GE(found, 1) << to_string(st) << " " << to_string(Difficulty(d)) << ": no verified instance in 40 seeds";
    EXPECT_GT(last_vars, 0);
  }
  for (const auto& v : family_variants(st)) EXPECT_TRUE(variants.count(v)) << to_string(st) << " never verified variant " << v;
  EXPECT_GT(repairs, 0) << to_string(st);
}

// Buckets grow: the largest model of a bucket is not smaller than the largest of the bucket below.
TEST_P(BreadthFamilyTest, BucketsGrow) {
  Structure st = Structure(GetParam());
  int prev = 0;
  for (int d = 0; d < kNumDifficulties; ++d) {
    int most = 0;
    for (uint64_t seed = 1; seed <= 12; ++seed) most = std::max(most, generate(st, Difficulty(d), 0, seed).model.num_vars());
    EXPECT_GE(most, prev) << to_string(st) << " " << to_string(Difficulty(d));
    prev = most;
  }
  EXPECT_LE(prev, 200);  // T-Rex's CPT engine default: at most 200 variables per instance
}

INSTANTIATE_TEST_SUITE_P(LaterStructures, BreadthFamilyTest, ::testing::Range(kNumClassicStructures, kNumStructures),
                         [](const auto& info) { return std::string(to_string(Structure(info.param))); });
