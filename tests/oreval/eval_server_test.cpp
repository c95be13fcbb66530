// `trex eval` end to end against a scripted OpenAI-compatible server: every scripted behaviour gets
// exactly the expected outcome, and a run killed midway and restarted loses and duplicates nothing.
#include <gtest/gtest.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>

#include "scripted_server.hpp"
#include "temp_dir.hpp"
#include "util/atomic_file.hpp"
#include "util/jsonl.hpp"

namespace fs = std::filesystem;
using trex::testing::ScriptedReply;
using trex::testing::ScriptedServer;

namespace {

// max 5x + 4y  s.t. 6x + 4y <= 24, x + 2y <= 6, -x + y <= 1, y <= 2  ->  x = 3, y = 1.5, z = 21.
const std::string kCorrect =
    "<think>two products</think>\n```lp\nMaximize\n obj: 5 x + 4 y\nSubject To\n c1: 6 x + 4 y <= 24\n"
    " c2: x + 2 y <= 6\n c3: - x + y <= 1\nBounds\n y <= 2\nEnd\n```";
std::string variant(const std::string& from, const std::string& to) {
  std::string s = kCorrect;
  s.replace(s.find(from), from.size(), to);
  return s;
}

void write_bench(const fs::path& file, const std::vector<std::string>& markers) {
  std::string text;
  for (const auto& m : markers)
    text += trex::Json{{"id", m.substr(1, m.size() - 2)}, {"problem", "Plan production " + m + "."}, {"answer", 21.0}}.dump() + "\n";
  trex::write_file_atomic(file, text);
}

int run_trex(const std::vector<std::string>& args, pid_t* out_pid = nullptr, double kill_after_s = 0) {
  pid_t pid = ::fork();
  if (pid == 0) {
    std::vector<char*> argv;
    std::string bin = TREX_BIN_PATH;
    argv.push_back(bin.data());
    std::vector<std::string> copy = args;
    for (auto& a : copy) argv.push_back(a.data());
    argv.push_back(nullptr);
    int devnull = ::open("/dev/null", O_WRONLY);
    ::dup2(devnull, 1);
    ::execv(bin.c_str(), argv.data());
    ::_exit(127);
  }
  if (out_pid) *out_pid = pid;
  if (kill_after_s > 0) {
    ::usleep(useconds_t(kill_after_s * 1e6));
    ::kill(pid, SIGKILL);
  }
  int st = 0;
  ::waitpid(pid, &st, 0);
  return WIFEXITED(st) ? WEXITSTATUS(st) : -WTERMSIG(st);
}

std::map<std::string, trex::Json> read_results(const fs::path& file) {
  std::map<std::string, trex::Json> out;
  trex::JsonlReader r(file);
  while (auto j = r.next()) {
    std::string id = (*j)["id"];
    EXPECT_FALSE(out.count(id)) << "duplicate result for " << id;
    out[id] = *j;
  }
  return out;
}

}  // namespace

TEST(EvalServer, ScriptedBehavioursGiveExactOutcomes) {
  std::map<std::string, ScriptedReply> script = {
      {"[correct]", {ScriptedReply::Content, kCorrect}},
      {"[coef]", {ScriptedReply::Content, variant("6 x + 4 y <= 24", "5 x + 4 y <= 24")}},
      {"[sense]", {ScriptedReply::Content, variant("Maximize", "Minimize")}},
      {"[missing]", {ScriptedReply::Content, variant(" c1: 6 x + 4 y <= 24\n", "")}},
      {"[vartype]", {ScriptedReply::Content, variant("End", "Generals\n x y\nEnd")}},
      {"[malformed]", {ScriptedReply::Content, "```lp\nMaximize\n obj: 5 x +* 4 y\nEnd\n```"}},
      {"[empty]", {ScriptedReply::Content, ""}},
      {"[slow]", {ScriptedReply::Slow, kCorrect, 5.0}},
      {"[http500]", {ScriptedReply::Http500, ""}},
      {"[drop]", {ScriptedReply::Drop, ""}},
      {"[badjson]", {ScriptedReply::MalformedJson, ""}},
  };
  std::map<std::string, std::string> expected = {
      {"correct", "success"},      {"coef", "wrong_objective"},   {"sense", "wrong_objective"},
      {"missing", "wrong_objective"}, {"vartype", "wrong_objective"}, {"malformed", "lp_parse_error"},
      {"empty", "no_code"},        {"slow", "api_error"},         {"http500", "api_error"},
      {"drop", "api_error"},       {"badjson", "api_error"}};
  ScriptedServer server(script);
  fs::path dir = trex::testing::fresh_temp_dir("trex_eval_server");
  std::vector<std::string> markers;
  for (auto& [m, r] : script) markers.push_back(m);
  write_bench(dir / "toy.jsonl", markers);
  int rc = run_trex({"eval", "--benchmarks", (dir / "toy.jsonl").string(), "--data", dir.string(), "--out",
                     (dir / "out").string(), "--base-url", server.base_url(), "--model", "trex", "--style", "lp",
                     "--timeout", "0.5", "--retries", "2", "--concurrency", "4", "--json"});
  ASSERT_EQ(rc, 0);
  auto results = read_results(dir / "out" / "toy" / "results.jsonl");
  ASSERT_EQ(results.size(), expected.size());
  for (auto& [id, kind] : expected) EXPECT_EQ(results[id]["kind"], kind) << id << ": " << results[id].dump();
  auto summary = trex::parse_json_file(dir / "out" / "summary.json");
  EXPECT_EQ(summary["benchmarks"][0]["n"], 11);
  EXPECT_EQ(summary["benchmarks"][0]["successes"], 1);
  EXPECT_DOUBLE_EQ(summary["benchmarks"][0]["accuracy"].get<double>(), 1.0 / 11.0);
  EXPECT_TRUE(fs::exists(dir / "out" / "summary.md"));
  fs::remove_all(dir);
}

TEST(EvalServer, KilledRunResumesWithoutLossOrDuplicates) {
  std::map<std::string, ScriptedReply> script;
  std::vector<std::string> markers;
  for (int i = 0; i < 24; ++i) {
    std::string m = "[item" + std::to_string(i) + "]";
    script[m] = {ScriptedReply::Slow, kCorrect, 0.15};
    markers.push_back(m);
  }
  ScriptedServer server(script);
  fs::path dir = trex::testing::fresh_temp_dir("trex_eval_resume");
  write_bench(dir / "toy.jsonl", markers);
  std::vector<std::string> args = {"eval", "--benchmarks", (dir / "toy.jsonl").string(), "--data", dir.string(),
                                   "--out", (dir / "out").string(), "--base-url", server.base_url(), "--model", "trex",
                                   "--style", "lp", "--concurrency", "2", "--json"};
  int rc = run_trex(args, nullptr, 0.9);
  EXPECT_EQ(rc, -SIGKILL);
  std::size_t partial = 0;
  if (fs::exists(dir / "out" / "toy" / "results.jsonl")) partial = read_results(dir / "out" / "toy" / "results.jsonl").size();
  EXPECT_LT(partial, 24u);
  ASSERT_EQ(run_trex(args), 0);
  auto results = read_results(dir / "out" / "toy" / "results.jsonl");
  EXPECT_EQ(results.size(), 24u);
  for (auto& [id, j] : results) EXPECT_EQ(j["kind"], "success") << id;
  auto summary = trex::parse_json_file(dir / "out" / "summary.json");
  EXPECT_EQ(summary["benchmarks"][0]["n"], 24);
  EXPECT_EQ(summary["benchmarks"][0]["successes"], 24);
  fs::remove_all(dir);
}
