// The report's answer-progress counts: each trex eval outcome lands in the right columns (answer found,
// reached a solve, optimal, within 1 % of the gold, the 1e-6 rule), a repeated id counts once, and a missing
// results file counts nothing.
#include <gtest/gtest.h>

#include "pipeline/report.hpp"
#include "temp_dir.hpp"
#include "util/atomic_file.hpp"

namespace fs = std::filesystem;

TEST(AnswerFunnel, EveryOutcomeLandsInItsColumns) {
  fs::path dir = trex::testing::fresh_temp_dir("trex_answer_funnel");
  fs::path results = dir / "results.jsonl";
  trex::write_file_atomic(results,
                          R"({"id":"a","kind":"no_code","code_pass":false,"success":false,"status":""}
{"id":"b","kind":"lp_parse_error","code_pass":false,"success":false,"status":""}
{"id":"c","kind":"exec_error","code_pass":false,"success":false,"status":""}
{"id":"d","kind":"timeout","code_pass":false,"success":false,"status":""}
{"id":"e","kind":"timeout","code_pass":false,"success":false,"status":"time_limit"}
{"id":"f","kind":"not_optimal","code_pass":false,"success":false,"status":"infeasible"}
{"id":"g","kind":"wrong_objective","code_pass":true,"success":false,"status":"optimal","predicted":0.0,"gold":17833.3}
{"id":"h","kind":"wrong_objective","code_pass":true,"success":false,"status":"optimal","predicted":100.9,"gold":100.0}
{"id":"i","kind":"wrong_objective","code_pass":true,"success":false,"status":"optimal","predicted":101.1,"gold":100.0}
{"id":"j","kind":"wrong_objective","code_pass":true,"success":false,"status":"optimal","predicted":0.005,"gold":0.0}
{"id":"k","kind":"success","code_pass":true,"success":true,"status":"optimal","predicted":42.0,"gold":42.0}
{"id":"k","kind":"no_code","code_pass":false,"success":false,"status":""}
)");
  trex::pipeline::AnswerFunnel f = trex::pipeline::answer_funnel(results);
  EXPECT_EQ(f.n, 11);
  EXPECT_EQ(f.answered, 10);  // all but a
  EXPECT_EQ(f.solved, 7);     // e (a solver's time limit), f, g, h, i, j, k
  EXPECT_EQ(f.optimal, 5);    // g, h, i, j, k
  EXPECT_EQ(f.near, 3);       // h (0.9 % off), j (0.005 off a gold of 0: within 1 % of at least 1), k
  EXPECT_EQ(f.successes, 1);  // k, counted once

  trex::pipeline::AnswerFunnel none = trex::pipeline::answer_funnel(dir / "missing.jsonl");
  EXPECT_EQ(none.n, 0);
  EXPECT_EQ(none.answered, 0);
  fs::remove_all(dir);
}
