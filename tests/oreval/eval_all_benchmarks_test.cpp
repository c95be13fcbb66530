// `trex eval --benchmarks all --responses FILE` scores every built-in benchmark through the real harness (the
// sandbox and the gurobipy-compatible layer) and summary.md gets a column each, the absolute and the relative
// row side by side. Two items per benchmark: a program whose optimum is the gold (both rules), and one whose
// optimum is off by 2e-5 relative (the relative rule only); ORGEval gets its reference programs.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>

#include "oreval/benchmarks.hpp"
#include "run_command.hpp"
#include "temp_dir.hpp"
#include "util/atomic_file.hpp"
#include "util/jsonl.hpp"
#include "benchmarks_dir.hpp"

namespace fs = std::filesystem;
using namespace trex::oreval;
using trex::Json;

namespace {

// min x + 2y s.t. x + y >= value, x free, y >= 0: the optimum is `value` (x = value, y = 0).
std::string program_with_optimum(double value) {
  char num[40];
  std::snprintf(num, sizeof num, "%.17g", value);
  return std::string("```python\nimport gurobipy as gp\nfrom gurobipy import GRB\nm = gp.Model('t')\n"
                     "x = m.addVar(lb=-GRB.INFINITY, name='x')\ny = m.addVar(lb=0, name='y')\n"
                     "m.addConstr(x + y >= ") +
         num + ", name='c')\nm.setObjective(x + 2 * y, GRB.MINIMIZE)\nm.optimize()\n```\n";
}

}  // namespace

TEST(EvalAllBenchmarks, EveryBenchmarkIsScoredAndHasItsColumn) {
  const fs::path data = trex::testing::benchmarks_dir();
  ASSERT_TRUE(fs::exists(data / "industryor.jsonl")) << "benchmark data missing in " << data << " (set TREX_BENCHMARKS)";
  fs::path dir = trex::testing::fresh_temp_dir("trex_eval_all");
  std::string responses, ids;
  std::map<std::string, std::string> display;  // key -> column name
  for (const auto& bb : builtin_benchmark_table()) {
    display[bb.key] = bb.display;
    if (std::string(bb.key) == "b4o_orgeval") continue;  // below: the feasible items' ids
    Benchmark b = load_benchmark(bb.key, data);
    const BenchItem* exact = &b.items.at(0);
    const BenchItem* off = nullptr;
    for (const auto& it : b.items)
      if (&it != exact && std::fabs(*it.answer) >= 1.0) {
        off = &it;
        break;
      }
    ASSERT_NE(off, nullptr) << bb.key;
    responses += Json{{"id", exact->id}, {"benchmark", bb.key}, {"response", program_with_optimum(*exact->answer)}}
                     .dump() + "\n";
    responses += Json{{"id", off->id}, {"benchmark", bb.key},
                      {"response", program_with_optimum(*off->answer * (1.0 + 2e-5))}}.dump() + "\n";
    ids += (ids.empty() ? "" : ",") + exact->id + "," + off->id;
    if (std::string(bb.key) == "b4o_feasible") {
      Benchmark org = load_benchmark("b4o_orgeval", data);
      for (const auto& it : org.items)
        if (it.id == exact->id || it.id == off->id)
          responses += Json{{"id", it.id}, {"benchmark", "b4o_orgeval"},
                            {"response", "```python\n" + it.reference_code + "\n```"}}.dump() + "\n";
    }
  }
  trex::write_file_atomic(dir / "responses.jsonl", responses);
  int rc = 0;
  const std::string log = trex::testing::run_command(
      std::string(TREX_BIN_PATH) + " eval --benchmarks all --responses " + (dir / "responses.jsonl").string() +
          " --data " + data.string() + " --ids " + ids + " --concurrency 2 --json --out " + (dir / "out").string(),
      rc);
  ASSERT_EQ(rc, 0) << log;
  Json s = trex::parse_json_file(dir / "out" / "summary.json");
  ASSERT_EQ(s["benchmarks"].size(), builtin_benchmarks().size()) << s.dump();
  std::string header = "| Pass@1 (%) |";
  for (std::size_t i = 0; i < builtin_benchmarks().size(); ++i) {
    const Json& b = s["benchmarks"][i];
    const std::string key = builtin_benchmarks()[i];
    SCOPED_TRACE(key);
    header += " " + display[key] + " |";
    EXPECT_EQ(b["key"], key);
    EXPECT_EQ(b["name"], display[key]);
    EXPECT_EQ(b["n"], 2) << b.dump();
    if (key == "b4o_orgeval") continue;  // structure target: the relative rule is its success
    EXPECT_EQ(b["successes"], 1) << b.dump();
    EXPECT_EQ(b["successes_relative"], 2) << b.dump();
    EXPECT_EQ(b["outcomes"]["wrong_objective"], 1) << b.dump();
  }
  const std::string md = trex::read_file(dir / "out" / "summary.md");
  EXPECT_NE(md.find(header + " Avg |"), std::string::npos) << md;
  EXPECT_NE(md.find("| trex, abs. 1e-6 | 50.00 | 50.00 | 50.00 |"), std::string::npos) << md;
  EXPECT_NE(md.find("| trex, rel. 1e-4 | 100.00 | 100.00 | 100.00 |"), std::string::npos) << md;
  fs::remove_all(dir);
}
