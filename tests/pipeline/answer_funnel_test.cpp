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

// The report's paired difference: only the items both routes scored count (the first record of an id), the
// discordant items feed the exact McNemar test, and the bootstrap interval is reproducible from its seed and
// brackets the difference.
TEST(PairedDifference, PairsTheSameItemsAndBracketsTheDifference) {
  fs::path dir = trex::testing::fresh_temp_dir("trex_paired_difference");
  auto write = [&](const char* name, const std::vector<std::pair<std::string, bool>>& rows) {
    std::string text;
    for (auto& [id, ok] : rows) text += R"({"id":")" + id + R"(","success":)" + (ok ? "true" : "false") + "}\n";
    trex::write_file_atomic(dir / name, text);
    return dir / name;
  };
  // a solves 1..7 and 9; b solves 1..3, 8 and 10; item 11 only in a, item 1 repeated in b (first record counts).
  std::vector<std::pair<std::string, bool>> a, b;
  for (int i = 1; i <= 10; ++i) {
    a.emplace_back(std::to_string(i), i <= 7 || i == 9);
    b.emplace_back(std::to_string(i), i <= 3 || i == 8 || i == 10);
  }
  a.emplace_back("11", true);
  b.emplace_back("1", false);
  auto d = trex::pipeline::paired_difference(write("a.jsonl", a), write("b.jsonl", b), 10000, 7);
  EXPECT_EQ(d.n, 10);
  EXPECT_EQ(d.a_successes, 8);
  EXPECT_EQ(d.b_successes, 5);
  EXPECT_EQ(d.only_a, 5);  // 4, 5, 6, 7, 9
  EXPECT_EQ(d.only_b, 2);  // 8, 10
  EXPECT_DOUBLE_EQ(d.diff, 30.0);
  EXPECT_NEAR(d.mcnemar_p, 2.0 * (1 + 7 + 21) / 128.0, 1e-12);  // 2 P(X <= 2), X ~ Bin(7, 1/2)
  EXPECT_LT(d.lo, d.diff);
  EXPECT_GT(d.hi, d.diff);
  EXPECT_GE(d.lo, -100.0);
  EXPECT_LE(d.hi, 100.0);
  auto again = trex::pipeline::paired_difference(dir / "a.jsonl", dir / "b.jsonl", 10000, 7);
  EXPECT_EQ(again.lo, d.lo);
  EXPECT_EQ(again.hi, d.hi);
  // Identical routes: no difference and no spread; one route right everywhere the other is wrong: +100 exactly.
  auto same = trex::pipeline::paired_difference(dir / "a.jsonl", dir / "a.jsonl");
  EXPECT_EQ(same.diff, 0.0);
  EXPECT_EQ(same.lo, 0.0);
  EXPECT_EQ(same.hi, 0.0);
  EXPECT_EQ(same.mcnemar_p, 1.0);
  auto all = trex::pipeline::paired_difference(write("ok.jsonl", {{"x", true}, {"y", true}}),
                                               write("bad.jsonl", {{"x", false}, {"y", false}}));
  EXPECT_EQ(all.diff, 100.0);
  EXPECT_EQ(all.lo, 100.0);
  EXPECT_EQ(all.hi, 100.0);
  EXPECT_NEAR(all.mcnemar_p, 0.5, 1e-12);
  EXPECT_EQ(trex::pipeline::mcnemar_exact_p(5, 5), 1.0);
  fs::remove_all(dir);
}

// The report's example answers: the first item in test order with the wanted outcome, its text as written; a
// long answer is cut at a line end, never inside a UTF-8 character, and says how much was left out.
TEST(AnswerExamples, FirstInTestOrderAndCutAtLineEnds) {
  fs::path dir = trex::testing::fresh_temp_dir("trex_answer_examples");
  trex::write_file_atomic(dir / "test.jsonl", "{\"id\":\"q3\"}\n{\"id\":\"q1\"}\n{\"id\":\"q2\"}\n");
  trex::write_file_atomic(dir / "results.jsonl", R"({"id":"q1","success":true,"kind":"success"}
{"id":"q2","success":false,"kind":"key_error"}
{"id":"q3","success":true,"kind":"success"}
)");
  trex::write_file_atomic(dir / "responses.jsonl", R"({"id":"q1","response":"one"}
{"id":"q2","response":"two"}
{"id":"q3","response":"three"}
)");
  auto ok = trex::pipeline::pick_example(dir / "results.jsonl", dir / "responses.jsonl", dir / "test.jsonl", true);
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok->id, "q3");
  EXPECT_EQ(ok->response, "three");
  auto bad = trex::pipeline::pick_example(dir / "results.jsonl", dir / "responses.jsonl", dir / "test.jsonl", false);
  ASSERT_TRUE(bad);
  EXPECT_EQ(bad->id, "q2");
  EXPECT_EQ(bad->result["kind"], "key_error");

  auto whole = trex::pipeline::truncate_for_report("a\nb\n", 60, 2400);
  EXPECT_EQ(whole.text, "a\nb\n");
  EXPECT_EQ(whole.omitted_chars, 0u);
  auto lines = trex::pipeline::truncate_for_report("l1\nl2\nl3\nl4", 2, 2400);
  EXPECT_EQ(lines.text, "l1\nl2\n");
  EXPECT_EQ(lines.omitted_chars, 5u);
  EXPECT_EQ(lines.omitted_lines, 2);
  auto chars = trex::pipeline::truncate_for_report("abc\ndefgh\n", 60, 6);
  EXPECT_EQ(chars.text, "abc\n");
  EXPECT_EQ(chars.omitted_lines, 1);
  auto utf8 = trex::pipeline::truncate_for_report("ab\xc3\xa9", 60, 3);  // "abé": one long first line
  EXPECT_EQ(utf8.text, "ab");
  EXPECT_EQ(utf8.omitted_chars, 2u);
  fs::remove_all(dir);
}

// The report's Pass@1 buckets: by difficulty, or by whether the item's structure was held out of training.
TEST(BucketScores, ByDifficultyAndByHeldOutFamily) {
  fs::path dir = trex::testing::fresh_temp_dir("trex_bucket_scores");
  trex::write_file_atomic(dir / "test.jsonl",
                          R"({"id":"a","metadata":{"difficulty":"small","held_out_structure":true}}
{"id":"b","metadata":{"difficulty":"small"}}
{"id":"c","metadata":{"difficulty":"large","held_out_structure":true}}
)");
  trex::write_file_atomic(dir / "results.jsonl", R"({"id":"a","success":true}
{"id":"b","success":false}
{"id":"c","success":false}
)");
  auto find = [](const auto& v, const std::string& k) {
    for (const auto& [name, s] : v)
      if (name == k) return s;
    return trex::pipeline::BucketScore{-1, -1};
  };
  auto diff = trex::pipeline::bucket_scores(dir / "results.jsonl", dir / "test.jsonl");
  EXPECT_EQ(find(diff, "small").n, 2);
  EXPECT_EQ(find(diff, "large").n, 1);
  auto fam = trex::pipeline::bucket_scores(dir / "results.jsonl", dir / "test.jsonl", true);
  EXPECT_EQ(find(fam, "held-out families").n, 2);
  EXPECT_EQ(find(fam, "held-out families").successes, 1);
  EXPECT_EQ(find(fam, "trained families").n, 1);
  EXPECT_EQ(find(fam, "all").n, 3);
  fs::remove_all(dir);
}
