// `trex run --quick`: a shortened pipeline end to end. Every stage finishes, a rerun reuses them all, and
// every number in report.md is traceable: listed in report_numbers.json with a source file that exists,
// and the Pass@1 figures recomputed here from the results files agree; a rerun with another window is refused.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <regex>
#include <set>

#include "pipeline/report.hpp"
#include "util/atomic_file.hpp"
#include "util/jsonl.hpp"

namespace fs = std::filesystem;

namespace {

int run_trex(const std::vector<std::string>& args, const fs::path& log) {
  pid_t pid = ::fork();
  if (pid == 0) {
    std::vector<std::string> copy = args;
    std::string bin = TREX_BIN_PATH;
    std::vector<char*> argv = {bin.data()};
    for (auto& a : copy) argv.push_back(a.data());
    argv.push_back(nullptr);
    FILE* f = std::fopen(log.c_str(), "w");
    ::dup2(fileno(f), 1);
    ::dup2(fileno(f), 2);
    ::execv(bin.c_str(), argv.data());
    ::_exit(127);
  }
  int st = 0;
  ::waitpid(pid, &st, 0);
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

}  // namespace

TEST(TrexRun, QuickPipelineReportIsTraceableAndRerunReusesStages) {
  fs::path dir = fs::temp_directory_path() / ("trex_run_test_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  fs::path out = dir / "run";
  ASSERT_EQ(run_trex({"run", "--quick", "--out", out.string()}, dir / "first.log"), 0) << trex::read_file(dir / "first.log");
  ASSERT_TRUE(fs::exists(out / "report.md"));
  ASSERT_TRUE(fs::exists(out / "report.html"));
  ASSERT_TRUE(fs::exists(out / "figures" / "loss.svg"));
  trex::Json run = trex::parse_json_file(out / "run.json");
  ASSERT_GE(run["stages"].size(), 10u);
  for (const auto& s : run["stages"]) EXPECT_EQ(s["status"], "done") << s.dump();

  // Every number printed in the report is listed with an existing source.
  std::string md = trex::read_file(out / "report.md");
  trex::Json numbers = trex::parse_json_file(out / "report_numbers.json");
  std::set<std::string> listed;
  for (const auto& e : numbers) {
    listed.insert(e["text"].get<std::string>());
    std::string src = e["source"];
    EXPECT_TRUE(fs::exists(out / src) || fs::exists(fs::path(TREX_SOURCE_DIR) / src)) << src;
  }
  std::string body = std::regex_replace(md, std::regex(R"(\]\([^)]*\))"), "]");  // figure paths
  body = std::regex_replace(body, std::regex(R"(`[^`]*`)"), "");                 // code spans (file names, presets)
  body = std::regex_replace(body, std::regex(R"(Pass@1|1e-6)"), "");            // the protocol's names
  std::regex num(R"((^|[^A-Za-z0-9_.])(\d+(\.\d+)?)(?![A-Za-z0-9_]))");
  for (auto it = std::sregex_iterator(body.begin(), body.end(), num); it != std::sregex_iterator(); ++it) {
    std::string n = (*it)[2];
    EXPECT_TRUE(listed.count(n)) << "number '" << n << "' in report.md is not traced";
  }

  // Pass@1 recomputed from the per-item results agrees with the report's entries.
  for (const char* route : {"base", "sft_only", "cpt_sft"}) {
    auto scores = trex::pipeline::bucket_scores(out / "eval" / route / "test" / "results.jsonl", out / "data" / "test.jsonl");
    ASSERT_FALSE(scores.empty());
    for (auto& [bucket, s] : scores) {
      bool found = false;
      for (const auto& e : numbers)
        if (e["what"] == std::string(route) + " pass@1 bucket " + bucket) {
          found = true;
          EXPECT_NEAR(e["value"].get<double>(), s.pass1(), 1e-9);
        }
      EXPECT_TRUE(found) << route << " " << bucket;
    }
  }

  // A rerun reuses every finished stage.
  ASSERT_EQ(run_trex({"run", "--quick", "--out", out.string()}, dir / "second.log"), 0) << trex::read_file(dir / "second.log");
  trex::Json again = trex::parse_json_file(out / "run.json");
  for (const auto& s : again["stages"]) EXPECT_TRUE(s["skipped"].get<bool>()) << s["name"];

  // A rerun asking for another attention window does not reuse the folder's base model silently.
  EXPECT_NE(run_trex({"run", "--quick", "--out", out.string(), "--sliding-window", "64"}, dir / "third.log"), 0);
  std::string third = trex::read_file(dir / "third.log");
  EXPECT_NE(third.find("ckpt-base/config.json: this run folder's base model has sliding_window 256"), std::string::npos)
      << third;
  fs::remove_all(dir);
}
