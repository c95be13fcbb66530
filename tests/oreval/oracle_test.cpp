// `trex eval --oracle` on the B4O items that do not reach 100%: each fails for its documented reason
// (docs/eval.md, "Oracle"), and their neighbours succeed. The full sweeps are tests/python/test_b4o_*.py.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <map>

#include "util/jsonl.hpp"
#include "benchmarks_dir.hpp"

namespace fs = std::filesystem;

namespace {

std::map<std::string, trex::Json> read_results(const fs::path& file) {
  std::map<std::string, trex::Json> out;
  trex::JsonlReader r(file);
  while (auto j = r.next()) out[(*j)["id"].get<std::string>()] = *j;
  return out;
}

}  // namespace

TEST(Oracle, KnownFailuresHaveTheirDocumentedCauses) {
  const std::string data = trex::testing::benchmarks_dir().string();
  ASSERT_TRUE(fs::exists(fs::path(data) / "bench4opt_feasible.jsonl")) << "benchmark data missing in " << data;
  fs::path out = fs::temp_directory_path() / ("trex_oracle_test_" + std::to_string(::getpid()));
  fs::remove_all(out);
  std::string ids = "BENCH4OPT_2,BENCH4OPT_3,BENCH4OPT_32,BENCH4OPT_33,BENCH4OPT_56,BENCH4OPT_144,BENCH4OPT_145,"
                    "BENCH4OPT_206,BENCH4OPT_207,BENCH4OPT_286,BENCH4OPT_374,BENCH4OPT_380,BENCH4OPT_381";
  std::string cmd = std::string(TREX_BIN_PATH) + " eval --oracle --benchmarks b4o_feasible,b4o_orgeval --data '" +
                    data + "' --ids " + ids + " --concurrency 2 --json --out '" + out.string() + "' > /dev/null 2>&1";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  auto feasible = read_results(out / "b4o_feasible" / "results.jsonl");
  auto orgeval = read_results(out / "b4o_orgeval" / "results.jsonl");
  fs::remove_all(out);

  // B4O-Feasible: the quadratic (nonconvex) models are solved by Ipopt and proven global by spatial branch and
  // bound: 32/33, 56 and 374 reach the gold within 1e-6 (364/365, 3.7e-6 off at 7.8e8, are left to the sweeps:
  // 10 s each); 380/381's gold (30) belongs to another program ("CuttingStock", integer x and y), while this
  // reference code's own model solves to 0.14447987...
  std::map<std::string, std::string> want_feasible = {
      {"BENCH4OPT_2", "success"},        {"BENCH4OPT_3", "success"},         {"BENCH4OPT_32", "success"},
      {"BENCH4OPT_33", "success"},       {"BENCH4OPT_56", "success"}, {"BENCH4OPT_206", "success"},
      {"BENCH4OPT_207", "success"},      {"BENCH4OPT_374", "success"},       {"BENCH4OPT_380", "wrong_objective"},
      {"BENCH4OPT_381", "wrong_objective"}};
  for (auto& [id, kind] : want_feasible) {
    ASSERT_TRUE(feasible.count(id)) << id;
    EXPECT_EQ(feasible[id]["kind"], kind) << id << ": " << feasible[id].dump();
  }
  EXPECT_NEAR(feasible["BENCH4OPT_380"]["predicted"].get<double>(), 0.1444798710354011, 1e-9);
  // B4O-ORGEval: 32/206 reference LPs were written from the twin's data (33/207, which succeed), 144/145's
  // have free X variables the code does not create, 380/381's come from another program, 286 fails the
  // sufficiency test against itself.
  std::map<std::string, std::string> want_orgeval = {
      {"BENCH4OPT_2", "success"},
      {"BENCH4OPT_3", "success"},
      {"BENCH4OPT_32", "var_count_mismatch"},
      {"BENCH4OPT_33", "success"},
      {"BENCH4OPT_144", "wl_graph_mismatch"},
      {"BENCH4OPT_145", "wl_graph_mismatch"},
      {"BENCH4OPT_206", "var_count_mismatch"},
      {"BENCH4OPT_207", "success"},
      {"BENCH4OPT_286", "structure_mismatch:sufficient_check"},
      {"BENCH4OPT_380", "var_count_mismatch"},
      {"BENCH4OPT_381", "var_count_mismatch"}};
  for (auto& [id, kind] : want_orgeval) {
    ASSERT_TRUE(orgeval.count(id)) << id;
    EXPECT_EQ(orgeval[id]["kind"], kind) << id << ": " << orgeval[id].dump();
  }
}
