// The built-in benchmarks: every file the shared folder's README lists loads under its key with the README's item
// count and `benchmark` name (the seven further public sets as Chat-template objective targets), `all` selects
// every one, and a gold that is null, not a number or not finite is refused naming file:line.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>

#include "oreval/benchmarks.hpp"
#include "temp_dir.hpp"
#include "util/atomic_file.hpp"
#include "util/error.hpp"
#include "benchmarks_dir.hpp"

namespace fs = std::filesystem;
using namespace trex::oreval;

namespace {

using trex::testing::benchmarks_dir;

struct ReadmeRow {
  int items = 0;
  std::string benchmark;  // the `benchmark` column where the table has one
};

// The README's tables: "| `file.jsonl` | items | ..." (Layout) and "| `file.jsonl` | items | `Name` | from |"
// (More public benchmarks).
std::map<std::string, ReadmeRow> readme_rows(const fs::path& readme) {
  std::map<std::string, ReadmeRow> rows;
  std::ifstream in(readme);
  std::string line;
  const std::regex row(R"(^\| `([a-z0-9_]+\.jsonl)` \| (\d+) \|(?: `([^`]+)` \|)?)");
  while (std::getline(in, line)) {
    std::smatch m;
    if (std::regex_search(line, m, row)) rows[m[1]] = {std::stoi(m[2]), m[3]};
  }
  return rows;
}

std::string load_error(const std::string& record) {
  fs::path dir = trex::testing::fresh_temp_dir("trex_registry_bad");
  trex::write_file_atomic(dir / "bad.jsonl",
                          R"({"id":"ok","problem":"p","answer":1})" "\n" + record + "\n");
  std::string what;
  try {
    load_benchmark((dir / "bad.jsonl").string(), dir);
  } catch (const trex::Error& e) {
    what = e.what();
  }
  fs::remove_all(dir);
  return what;
}

}  // namespace

TEST(BenchmarkRegistry, EveryReadmeFileLoadsWithItsCountAndName) {
  const fs::path dir = benchmarks_dir();
  ASSERT_TRUE(fs::exists(dir / "README.md")) << "benchmark data missing in " << dir << " (set TREX_BENCHMARKS)";
  auto rows = readme_rows(dir / "README.md");
  ASSERT_EQ(rows.size(), 11u) << "the README's tables list 11 benchmark files";
  std::set<std::string> files_seen;
  for (const auto& builtin : builtin_benchmark_table()) {
    SCOPED_TRACE(builtin.key);
    ASSERT_TRUE(rows.count(builtin.file)) << builtin.file << " is not in the README";
    files_seen.insert(builtin.file);
    const ReadmeRow& want = rows[builtin.file];
    Benchmark b = load_benchmark(builtin.key, dir);
    EXPECT_EQ(b.key, builtin.key);
    EXPECT_EQ(int(b.items.size()), want.items);
    if (!want.benchmark.empty()) {
      // The seven further sets: statement with its data, objective value as target, the Chat template.
      EXPECT_EQ(b.display, want.benchmark);
      EXPECT_EQ(b.kind, TargetKind::Objective);
      EXPECT_EQ(b.prompt, PromptKind::Chat);
      for (const auto& it : b.items) {
        ASSERT_TRUE(it.answer.has_value()) << it.id;
        EXPECT_TRUE(std::isfinite(*it.answer)) << it.id;
        EXPECT_FALSE(it.problem.empty()) << it.id;
        EXPECT_TRUE(it.data.is_null()) << it.id;
        EXPECT_TRUE(it.lp_file.empty()) << it.id;
      }
    }
  }
  EXPECT_EQ(files_seen.size(), rows.size()) << "a README file has no built-in key";
}

TEST(BenchmarkRegistry, AllSelectsEveryBenchmarkOnce) {
  const std::vector<std::string> want = {"nl4opt",     "optibench",    "b4o_feasible", "b4o_orgeval",
                                         "industryor", "mamo_easy",    "mamo_complex", "complexor",
                                         "logior",     "nlp4lp",       "optmath_bench"};
  EXPECT_EQ(builtin_benchmarks(), want);
  EXPECT_EQ(expand_benchmark_selection({"all"}), want);
  EXPECT_EQ(expand_benchmark_selection({"nlp4lp", "all", "nlp4lp"}).size(), 11u);
  EXPECT_EQ(expand_benchmark_selection({"nlp4lp", "all"}).front(), "nlp4lp");
  EXPECT_EQ(expand_benchmark_selection({"report"}),
            (std::vector<std::string>{"nl4opt", "optibench", "b4o_feasible", "b4o_orgeval"}));
  EXPECT_EQ(expand_benchmark_selection({"logior", "x.jsonl"}), (std::vector<std::string>{"logior", "x.jsonl"}));
  try {
    load_benchmark("industry_or", benchmarks_dir());
    ADD_FAILURE() << "an unknown key must be refused";
  } catch (const trex::Error& e) {
    EXPECT_NE(std::string(e.what()).find("optmath_bench"), std::string::npos) << e.what();
  }
}

TEST(BenchmarkRegistry, UngradableGoldsAreRefusedNamingFileAndLine) {
  for (const char* rec : {R"({"id":"x","problem":"p","answer":null})", R"({"id":"x","problem":"p"})",
                          R"({"id":"x","problem":"p","answer":"about 12"})", R"({"id":"x","problem":"p","answer":"nan"})",
                          R"({"id":"x","problem":"p","answer":"inf"})", R"({"id":"x","problem":"p","answer":true})",
                          R"({"id":"x","problem":"p","answer":[1]})"}) {
    const std::string what = load_error(rec);
    EXPECT_NE(what.find("bad.jsonl:2"), std::string::npos) << rec << " -> '" << what << "'";
    EXPECT_NE(what.find("answer"), std::string::npos) << rec << " -> '" << what << "'";
  }
  EXPECT_EQ(load_error(R"({"id":"x","problem":"p","answer":"-12.5"})"), "");
}
