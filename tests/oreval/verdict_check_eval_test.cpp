// `trex eval` on LP answers records the re-solves that checked CBC's infeasible / unbounded verdict
// (lp/solver.hpp, confirm_verdicts): issue #25's MILP, which CBC's preprocessing alone calls infeasible, scores as
// the correct answer with verdict_checks 2 and verdict_overruled; a truly infeasible answer keeps its verdict
// with one confirmation; an optimal one carries no such fields.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <map>

#include "temp_dir.hpp"
#include "util/atomic_file.hpp"
#include "util/jsonl.hpp"

namespace fs = std::filesystem;

TEST(VerdictCheckEval, ResultsCountTheConfirmations) {
  const fs::path dir = trex::testing::fresh_temp_dir("trex_verdict_eval");
  const std::string victim =
      "```lp\nMinimize\n obj: - 1.25 qty0 + 0.5 flow1 - 2 qty2 + 1.25 y3 + 2 y4 - 1.25 qty5 - 12 z6 - 12 x7\n"
      "Subject To\n c0: 10 qty0 - 2.25 y3 >= 287.25\n c1: 1.5 qty0 - 3 flow1 - 10 qty2 - 4 qty5 + 10 z6 <= -248\n"
      "Bounds\n qty0 <= 56\n 0 <= flow1 <= 36\n 3 <= qty2 <= 51\n 0 <= y3 <= 6\n y4 <= 24\n -17 <= qty5 <= 43\n"
      " z6 <= 20\n 0 <= x7 <= 2\nGeneral\n y4 x7\nEnd\n```\n";
  const std::string odd = "```lp\nMinimize\n obj: x\nSubject To\n odd: 2 x = 1\nBounds\n x <= 10\nGeneral\n x\nEnd\n```\n";
  const std::string plain = "```lp\nMaximize\n obj: 2 x\nSubject To\n cap: x <= 4\nEnd\n```\n";
  trex::write_file_atomic(dir / "items.jsonl", R"({"id":"victim","problem":"p","answer":-489.75}
{"id":"odd","problem":"p","answer":1}
{"id":"plain","problem":"p","answer":8}
)");
  trex::write_file_atomic(dir / "responses.jsonl", trex::Json{{"id", "victim"}, {"response", victim}}.dump() + "\n" +
                                                       trex::Json{{"id", "odd"}, {"response", odd}}.dump() + "\n" +
                                                       trex::Json{{"id", "plain"}, {"response", plain}}.dump() + "\n");
  const std::string cmd = std::string(TREX_BIN_PATH) + " eval --responses " + (dir / "responses.jsonl").string() +
                          " --benchmarks " + (dir / "items.jsonl").string() + " --style lp --out " +
                          (dir / "out").string() + " > " + (dir / "log").string() + " 2>&1";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << trex::read_file(dir / "log");
  std::map<std::string, trex::Json> by_id;
  trex::JsonlReader rd(dir / "out" / "items" / "results.jsonl");
  while (auto j = rd.next()) by_id[(*j)["id"]] = *j;
  ASSERT_EQ(by_id.size(), 3u);
  EXPECT_EQ(by_id["victim"]["kind"], "success");
  EXPECT_EQ(by_id["victim"]["verdict_checks"], 2);
  EXPECT_EQ(by_id["victim"]["verdict_overruled"], true);
  EXPECT_EQ(by_id["odd"]["status"], "infeasible");
  EXPECT_EQ(by_id["odd"]["verdict_checks"], 1);
  EXPECT_EQ(by_id["odd"]["verdict_overruled"], false);
  EXPECT_EQ(by_id["plain"]["kind"], "success");
  EXPECT_FALSE(by_id["plain"].contains("verdict_checks"));
  fs::remove_all(dir);
}
