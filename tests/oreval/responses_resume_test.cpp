// `trex eval --responses F --out D` resumes D's results only where they were scored from the responses F holds
// now: the same file resumes with nothing redone; a changed answer is refused (naming the results file and the
// item) with D left as it was, instead of reporting the earlier answer's result.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <map>

#include "temp_dir.hpp"
#include "util/atomic_file.hpp"
#include "util/jsonl.hpp"

namespace fs = std::filesystem;

namespace {

std::string lp_answer(int bound) {
  return "```lp\nMaximize\n obj: 2 x\nSubject To\n cap: x <= " + std::to_string(bound) + "\nEnd\n```\n";
}

void write_responses(const fs::path& file, int bound_b) {
  trex::write_file_atomic(file, trex::Json{{"id", "a"}, {"response", lp_answer(4)}}.dump() + "\n" +
                                    trex::Json{{"id", "b"}, {"response", lp_answer(bound_b)}}.dump() + "\n");
}

int eval(const fs::path& dir, const fs::path& out, const std::string& log) {
  const std::string cmd = std::string(TREX_BIN_PATH) + " eval --responses " + (dir / "responses.jsonl").string() +
                          " --benchmarks " + (dir / "caps.jsonl").string() + " --style lp --out " + out.string() +
                          " > " + (dir / log).string() + " 2>&1";
  return std::system(cmd.c_str());
}

std::map<std::string, std::string> kinds(const fs::path& results, int* lines) {
  std::map<std::string, std::string> k;
  *lines = 0;
  trex::JsonlReader rd(results);
  while (auto j = rd.next()) {
    ++*lines;
    k[(*j)["id"]] = (*j)["kind"];
  }
  return k;
}

}  // namespace

TEST(ResponsesResume, OnlyResultsOfTheSameResponsesAreKept) {
  fs::path dir = trex::testing::fresh_temp_dir("trex_responses_resume");
  trex::write_file_atomic(dir / "caps.jsonl", R"({"id":"a","problem":"Maximise 2x, x <= 4.","answer":8}
{"id":"b","problem":"Maximise 2x, x <= 5.","answer":10}
)");
  write_responses(dir / "responses.jsonl", 5);
  const fs::path out = dir / "out", results = out / "caps" / "results.jsonl";
  ASSERT_EQ(eval(dir, out, "first.log"), 0) << trex::read_file(dir / "first.log");
  int lines = 0;
  EXPECT_EQ(kinds(results, &lines), (std::map<std::string, std::string>{{"a", "success"}, {"b", "success"}}));
  EXPECT_EQ(lines, 2);

  // The same responses: resumed, nothing scored twice.
  ASSERT_EQ(eval(dir, out, "same.log"), 0) << trex::read_file(dir / "same.log");
  kinds(results, &lines);
  EXPECT_EQ(lines, 2);

  // b's answer changed: refused, the results file untouched.
  const std::string before = trex::read_file(results);
  write_responses(dir / "responses.jsonl", 6);
  EXPECT_NE(eval(dir, out, "changed.log"), 0);
  const std::string log = trex::read_file(dir / "changed.log");
  EXPECT_NE(log.find(results.string()), std::string::npos) << log;
  EXPECT_NE(log.find("item 'b' was scored from another response"), std::string::npos) << log;
  EXPECT_EQ(trex::read_file(results), before);

  // In a new folder the changed answer is scored as what it is.
  ASSERT_EQ(eval(dir, dir / "out2", "new.log"), 0) << trex::read_file(dir / "new.log");
  EXPECT_EQ(kinds(dir / "out2" / "caps" / "results.jsonl", &lines),
            (std::map<std::string, std::string>{{"a", "success"}, {"b", "wrong_objective"}}));
  fs::remove_all(dir);
}
