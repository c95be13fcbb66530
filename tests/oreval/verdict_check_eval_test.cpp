// `trex eval` on LP answers records the re-solves that checked CBC's infeasible / unbounded verdict
// (lp/solver.hpp, confirm_verdicts): issue #25's MILP, which CBC's preprocessing alone calls infeasible, scores as
// the correct answer with verdict_checks 2 and verdict_overruled; a truly infeasible answer keeps its verdict
// with one confirmation; an LP carries no such fields. A gurobipy answer whose MILP CBC's preprocessing solves to
// a wrong optimum (an L1 fit with big-M abs rows: 20.5 for 19.4333) scores as correct, with the overruling
// re-solve counted.
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

TEST(VerdictCheckEval, CodeAnswersCountTheConfirmationsToo) {
  const fs::path dir = trex::testing::fresh_temp_dir("trex_verdict_eval_code");
  const std::string program = R"PY(import gurobipy as gp
from gurobipy import GRB

xs, ys = [0, 1, 2, 3, 4, 5], [1, 2.9, 5.2, 7.1, 8.8, 30]
m = gp.Model("l1_fit")
a = m.addVar(lb=-50, ub=50, name="a")
b = m.addVar(lb=-50, ub=50, name="b")
r = [m.addVar(lb=-60, ub=60, name=f"r{i}") for i in range(6)]
t = [m.addVar(ub=500, name=f"t{i}") for i in range(6)]
d = [m.addVar(vtype=GRB.BINARY, name=f"d{i}") for i in range(6)]
for i in range(6):
    m.addConstr(a * xs[i] + b + r[i] == ys[i])
for i in range(6):  # t_i = |r_i| by big-M (M = 120)
    m.addConstr(t[i] >= r[i])
    m.addConstr(t[i] >= -r[i])
    m.addConstr(t[i] <= r[i] + 120 * (1 - d[i]))
    m.addConstr(t[i] <= -r[i] + 120 * d[i])
m.setObjective(gp.quicksum(t), GRB.MINIMIZE)

m.optimize()
print(m.ObjVal)
)PY";
  trex::write_file_atomic(dir / "items.jsonl", R"({"id":"l1fit","problem":"p","answer":19.433333333333334}
)");
  trex::write_file_atomic(dir / "responses.jsonl",
                          trex::Json{{"id", "l1fit"}, {"response", "```python\n" + program + "```\n"}}.dump() + "\n");
  const std::string cmd = std::string(TREX_BIN_PATH) + " eval --responses " + (dir / "responses.jsonl").string() +
                          " --benchmarks " + (dir / "items.jsonl").string() + " --out " + (dir / "out").string() +
                          " > " + (dir / "log").string() + " 2>&1";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << trex::read_file(dir / "log");
  trex::JsonlReader rd(dir / "out" / "items" / "results.jsonl");
  const auto j = rd.next();
  ASSERT_TRUE(j.has_value());
  EXPECT_EQ((*j)["kind"], "success") << j->dump();
  EXPECT_EQ((*j)["verdict_checks"], 1) << j->dump();
  EXPECT_EQ((*j)["verdict_overruled"], true) << j->dump();
  fs::remove_all(dir);
}
