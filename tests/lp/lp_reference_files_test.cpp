// Every reference LP file of bench4opt (394) and bench4opt_feasible (344) is read, and the counts
// that can be checked against the benchmark README / OR_BENCHMARKS.md §8 match.
#include <gtest/gtest.h>

#include <set>

#include "lp/lp_format.hpp"
#include "lp_test_support.hpp"
#include "util/error.hpp"

namespace trex::lp {
namespace {

struct Counts {
  int files = 0, quadratic = 0, constant = 0, maximize = 0, with_free = 0, empty_rows = 0, binaries = 0,
      generals = 0;
  std::set<std::string> quadratic_models;
};

Counts read_all(const std::string& folder) {
  Counts c;
  auto files = testing::reference_lp_files(folder);
  for (const auto& f : files) {
    Model m;
    try {
      m = read_lp_file(f);
    } catch (const Error& e) {
      ADD_FAILURE() << e.what();
      continue;
    }
    ++c.files;
    if (m.has_quadratic()) {
      ++c.quadratic;
      std::string stem = f.stem().string();
      c.quadratic_models.insert(stem.substr(0, stem.find("_problem")));
    }
    c.constant += m.find_var("Constant") >= 0;
    c.maximize += m.objective.sense == ObjSense::Maximize;
    bool free = false, bin = false, gen = false;
    for (const auto& v : m.vars) {
      free |= v.lb == -kInf && v.ub == kInf;
      bin |= v.type == VarType::Binary;
      gen |= v.type == VarType::Integer;
    }
    c.with_free += free;
    c.binaries += bin;
    c.generals += gen;
    bool empty = false;
    for (const auto& r : m.rows) empty |= r.terms.empty() && r.quad.empty();
    c.empty_rows += empty;
    EXPECT_FALSE(m.has_special()) << f;
    for (const auto& r : m.rows) EXPECT_FALSE(r.name.empty()) << f;
  }
  return c;
}

const std::set<std::string> kQuadratic = {"model_32", "model_33", "model_56", "model_57",
                                          "model_364", "model_365", "model_374", "model_375"};

TEST(LpReferenceFiles, Bench4OptAllRead) {
  auto files = testing::reference_lp_files("bench4opt");
  ASSERT_EQ(files.size(), 394u) << "reference LP files missing under " << testing::benchmarks_dir();
  Counts c = read_all("bench4opt");
  EXPECT_EQ(c.files, 394);
  EXPECT_EQ(c.quadratic, 8);
  EXPECT_EQ(c.quadratic_models, kQuadratic);
  EXPECT_EQ(c.constant, 20);
  EXPECT_EQ(c.maximize, 98);
  EXPECT_EQ(c.with_free, 2);
  EXPECT_EQ(c.empty_rows, 6);
  // Files declaring a Binaries / Generals section (OR_BENCHMARKS.md §8: 100 / 38) hold at least
  // as many models with such variables; models whose sections list no variable count 0 here.
  EXPECT_LE(c.binaries, 100);
  EXPECT_LE(c.generals, 38);
  EXPECT_GT(c.binaries, 0);
  EXPECT_GT(c.generals, 0);
}

TEST(LpReferenceFiles, Bench4OptFeasibleAllRead) {
  auto files = testing::reference_lp_files("bench4opt_feasible");
  ASSERT_EQ(files.size(), 344u) << "reference LP files missing under " << testing::benchmarks_dir();
  Counts c = read_all("bench4opt_feasible");
  EXPECT_EQ(c.files, 344);
  EXPECT_EQ(c.quadratic, 8);
  EXPECT_EQ(c.quadratic_models, kQuadratic);
  EXPECT_EQ(c.constant, 18);
  EXPECT_EQ(c.empty_rows, 20);
  EXPECT_LE(c.binaries, 88);
  EXPECT_LE(c.generals, 18);
}

}  // namespace
}  // namespace trex::lp
