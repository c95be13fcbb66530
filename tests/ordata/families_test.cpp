// Problem families: every structure x difficulty builds a well-formed model whose LP text reads back
// identically, generation is deterministic, every variant is reachable and most draws verify.
#include <gtest/gtest.h>

#include <regex>
#include <set>

#include "lp/lp_format.hpp"
#include "lp/model_compare.hpp"
#include "ordata/families.hpp"
#include "ordata/verify.hpp"

using namespace trex::ordata;

class FamilyTest : public ::testing::TestWithParam<int> {};

TEST_P(FamilyTest, ModelsAreWellFormedAndRoundTrip) {
  Structure st = Structure(GetParam());
  const std::regex name_re("[A-Za-z][A-Za-z0-9_]*");
  std::set<std::string> variants;
  for (int d = 0; d < kNumDifficulties; ++d)
    for (uint64_t seed = 1; seed <= 8; ++seed) {
      Instance in = generate(st, Difficulty(d), int(seed % 10), seed * 7919 + uint64_t(d));
      variants.insert(in.variant);
      const auto& m = in.model;
      ASSERT_GT(m.num_vars(), 0);
      ASSERT_GT(m.num_rows(), 0);
      std::set<std::string> names;
      for (const auto& v : m.vars) {
        EXPECT_TRUE(std::regex_match(v.name, name_re)) << v.name;
        EXPECT_TRUE(names.insert(v.name).second) << "duplicate variable " << v.name;
      }
      for (const auto& r : m.rows) {
        EXPECT_TRUE(std::regex_match(r.name, name_re)) << r.name;
        EXPECT_TRUE(names.insert(r.name).second) << "duplicate name " << r.name;
        for (const auto& t : r.terms) ASSERT_TRUE(t.var >= 0 && t.var < m.num_vars());
      }
      auto data = data_json(in);
      for (const auto& s : in.sets) EXPECT_TRUE(data.contains(s.key)) << s.key;
      for (const auto& p : in.params) {
        EXPECT_TRUE(data.contains(p.key)) << p.key;
        EXPECT_NE(in.python_body.find(p.key), std::string::npos) << "code never uses " << p.key << " in " << to_string(st);
      }
      EXPECT_FALSE(in.intro.empty());
      EXPECT_FALSE(in.rules.empty());
      EXPECT_FALSE(in.goal.empty());
      EXPECT_EQ(in.intro.find('{'), std::string::npos) << in.intro;
      for (const auto& r : in.rules) EXPECT_EQ(r.find('{'), std::string::npos) << r;
      std::string lp = trex::lp::write_lp_string(m);
      auto back = trex::lp::read_lp_string(lp);
      EXPECT_EQ(trex::lp::first_difference(m, back), "") << lp;
      // Same seed, same instance.
      Instance again = generate(st, Difficulty(d), int(seed % 10), seed * 7919 + uint64_t(d));
      EXPECT_EQ(trex::lp::write_lp_string(again.model), lp);
      EXPECT_EQ(again.intro, in.intro);
    }
  for (const auto& v : family_variants(st)) EXPECT_TRUE(variants.count(v)) << to_string(st) << " never drew variant " << v;
}

TEST_P(FamilyTest, MostDrawsVerify) {
  Structure st = Structure(GetParam());
  int accepted = 0, total = 0;
  for (int d = 0; d < kNumDifficulties; ++d)
    for (uint64_t seed = 100; seed < 105; ++seed, ++total) {
      Instance in = generate(st, Difficulty(d), 3, seed * 31 + uint64_t(d));
      Verification v = verify_instance(in);
      if (v.accepted) {
        ++accepted;
        EXPECT_EQ(degeneracy_reason(in.model, v.x), "");
        EXPECT_EQ(v.objective, round_objective(v.objective));
      }
    }
  EXPECT_GE(accepted * 2, total) << to_string(st) << ": " << accepted << " of " << total << " draws verified";
}

INSTANTIATE_TEST_SUITE_P(AllStructures, FamilyTest, ::testing::Range(0, kNumStructures),
                         [](const auto& info) { return std::string(to_string(Structure(info.param))); });

TEST(Verify, DegeneracyRules) {
  trex::lp::Model m;
  m.add_var("x");
  m.add_var("y", trex::lp::VarType::Continuous, 0, 5);
  trex::lp::Row r;
  r.name = "c";
  r.terms = {{0, 1.0}, {1, 1.0}};
  r.sense = trex::lp::RowSense::LE;
  r.rhs = 8;
  m.rows.push_back(r);
  EXPECT_EQ(degeneracy_reason(m, {0, 0}), "all_zero");
  EXPECT_EQ(degeneracy_reason(m, {0, 5}), "all_at_bound");
  EXPECT_EQ(degeneracy_reason(m, {1, 2}), "no_binding_row");
  EXPECT_EQ(degeneracy_reason(m, {3, 5}), "");
  EXPECT_TRUE(objectives_match(1.0000000001, 1.0));
  EXPECT_FALSE(objectives_match(1.00001, 1.0));
  EXPECT_EQ(round_objective(1233.9999999998), 1234.0);
}

TEST(Verify, BinaryModelsNeedANontrivialPattern) {
  trex::lp::Model m;
  m.add_var("y1", trex::lp::VarType::Binary, 0, 1);
  m.add_var("y2", trex::lp::VarType::Binary, 0, 1);
  m.add_var("u", trex::lp::VarType::Continuous, 1, 3);
  trex::lp::Row r;
  r.name = "c";
  r.terms = {{0, 1.0}, {1, 1.0}};
  r.sense = trex::lp::RowSense::EQ;
  r.rhs = 1;
  m.rows.push_back(r);
  EXPECT_EQ(degeneracy_reason(m, {1, 0, 3}), "");  // auxiliary u at a bound is fine
  EXPECT_EQ(degeneracy_reason(m, {1, 1, 2}), "all_at_bound");
  EXPECT_EQ(degeneracy_reason(m, {0, 0, 1}), "all_at_bound");
}
