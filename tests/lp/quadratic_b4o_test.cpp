// The 8 quadratic B4O-Feasible reference LPs (benchmark README, issue 4): all nonconvex (a bilinear objective
// maximised in model_32/33/364/365, bilinear rows `[ x * y ] <= c` in 374/375 and `[ x * y ] = 0` in 56/57), so
// Ipopt's optimum alone is only local; spatial branch and bound proves each global (56/57: Ipopt refuses 43
// equalities on 10 variables, the search starts without a point). Against the gold under the oracle's 1e-6
// absolute rule: 32/33, 56/57 and 374/375 within it; 364/365 3.7e-6 off at 7.8e8 (5e-15 relative, a few ulps
// of summation order; Gurobi 13.0.3 itself ends 4.4e-5 off).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "lp/lp_format.hpp"
#include "lp/solver.hpp"
#include "lp_test_support.hpp"

namespace trex::lp {
namespace {

// lp_file -> gold objective of bench4opt_feasible.jsonl
std::map<std::string, double> golds() {
  std::map<std::string, double> out;
  std::ifstream in(testing::benchmarks_dir() / "bench4opt_feasible.jsonl");
  std::string line;
  while (std::getline(in, line)) {
    const auto j = nlohmann::json::parse(line);
    if (j["answer"].is_number()) out[j["lp_file"].get<std::string>()] = j["answer"].get<double>();
  }
  return out;
}

TEST(QuadraticB4o, EightNonconvexItemsAreProvenGlobal) {
  const auto files = testing::reference_lp_files("bench4opt_feasible");
  ASSERT_EQ(files.size(), 344u) << "B4O-Feasible reference LPs missing under " << testing::benchmarks_dir();
  const auto gold = golds();
  ASSERT_EQ(gold.size(), 344u);
  int quadratic = 0, within_rule = 0;
  for (const auto& f : files) {
    const Model m = read_lp_file(f);
    if (!m.has_quadratic()) continue;
    ++quadratic;
    const std::string stem = f.stem().string();
    const std::string key = "bench4opt_feasible/lp_code/" + f.filename().string();
    ASSERT_TRUE(gold.count(key)) << key;
    const double g = gold.at(key);
    const SolveResult r = solve(m, Backend::Cbc);
    ASSERT_EQ(r.status, SolveStatus::Optimal) << stem << ": " << to_string(r.status) << " " << r.message;
    EXPECT_EQ(r.solver, "ipopt") << stem;
    EXPECT_FALSE(r.convex) << stem;
    EXPECT_EQ(r.proof, "spatial_branch_and_bound") << stem << ": " << r.message;
    const double diff = std::abs(r.objective - g);
    EXPECT_LE(diff, 1e-6 * std::abs(g)) << stem << ": " << r.objective << " vs gold " << g;  // the proven gap
    within_rule += diff <= 1e-6;
    const bool big = stem.rfind("model_364_", 0) == 0 || stem.rfind("model_365_", 0) == 0;
    if (big) {
      EXPECT_LE(diff, 1e-14 * std::abs(g)) << stem;  // ulps apart
    } else {
      EXPECT_LE(diff, 1e-6) << stem << ": " << r.objective << " vs gold " << g;
    }
    std::printf("%s: %.17g (gold %.17g, |diff| %.3g) %s\n", stem.c_str(), r.objective, g, diff, r.message.c_str());
  }
  EXPECT_EQ(quadratic, 8);
  EXPECT_EQ(within_rule, 6);  // all but 364/365
}

TEST(QuadraticB4o, SameInputSameBits) {
  const auto files = testing::reference_lp_files("bench4opt_feasible");
  ASSERT_FALSE(files.empty()) << "no B4O-Feasible reference LPs under " << testing::benchmarks_dir();
  for (const char* prefix : {"model_32_", "model_56_", "model_374_"}) {
    const auto it = std::find_if(files.begin(), files.end(),
                                 [&](const auto& f) { return f.filename().string().rfind(prefix, 0) == 0; });
    ASSERT_NE(it, files.end()) << prefix;
    const Model m = read_lp_file(*it);
    const SolveResult a = solve(m, Backend::Cbc), b = solve(m, Backend::Cbc);
    ASSERT_EQ(a.status, SolveStatus::Optimal);
    EXPECT_EQ(a.x, b.x) << prefix;
    EXPECT_EQ(a.objective, b.objective) << prefix;
    EXPECT_EQ(a.message, b.message) << prefix;
  }
}

TEST(QuadraticB4o, TimeLimitStopsTheSearch) {
  const auto files = testing::reference_lp_files("bench4opt_feasible");
  const auto it = std::find_if(files.begin(), files.end(),
                               [](const auto& f) { return f.filename().string().rfind("model_364_", 0) == 0; });
  ASSERT_NE(it, files.end()) << "model_364 missing under " << testing::benchmarks_dir();
  SolveOptions o;
  o.time_limit = 0.5;  // the search needs ~10 s and 11,583 nodes here
  const SolveResult r = solve(read_lp_file(*it), Backend::Cbc, o);
  ASSERT_EQ(r.status, SolveStatus::LocalOptimal) << r.message;  // Ipopt's point, not proven
  EXPECT_NE(r.message.find("(the time limit)"), std::string::npos) << r.message;
  EXPECT_LT(r.seconds, 3.0);
}

}  // namespace
}  // namespace trex::lp
