// summary.hpp: the unbiased pass@k estimator and the Wilson interval against hand-computed values, the absolute
// and relative rules side by side on crafted results (known predicted/gold pairs, any --rel-tol), Pass@k from
// `samples` arrays, and `trex eval --samples` end to end on LP answers.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <tuple>
#include <filesystem>

#include "oreval/summary.hpp"
#include "run_command.hpp"
#include "temp_dir.hpp"
#include "util/atomic_file.hpp"
#include "util/error.hpp"
#include "util/jsonl.hpp"

namespace fs = std::filesystem;
using namespace trex::oreval;
using trex::Json;

TEST(SummaryMetrics, PassAtKIsTheUnbiasedEstimator) {
  // 1 − C(n−c, k)/C(n, k), by hand.
  EXPECT_DOUBLE_EQ(pass_at_k(1, 1, 1), 1.0);
  EXPECT_DOUBLE_EQ(pass_at_k(1, 0, 1), 0.0);
  EXPECT_DOUBLE_EQ(pass_at_k(5, 2, 1), 0.4);                 // c/n
  EXPECT_NEAR(pass_at_k(5, 2, 2), 1.0 - 3.0 / 10.0, 1e-15);  // C(3,2)/C(5,2)
  EXPECT_NEAR(pass_at_k(10, 3, 5), 1.0 - 21.0 / 252.0, 1e-15);  // C(7,5)/C(10,5)
  EXPECT_NEAR(pass_at_k(20, 1, 10), 0.5, 1e-15);                // C(19,10)/C(20,10) = 10/20
  EXPECT_DOUBLE_EQ(pass_at_k(4, 2, 3), 1.0);                    // n − c < k
  EXPECT_DOUBLE_EQ(pass_at_k(4, 0, 4), 0.0);
  EXPECT_DOUBLE_EQ(pass_at_k(4, 1, 4), 1.0);  // n = k: acc@k (any of the k)
  EXPECT_THROW(pass_at_k(3, 1, 4), trex::Error);
  EXPECT_THROW(pass_at_k(3, 4, 1), trex::Error);
  EXPECT_EQ(default_pass_k(1), (std::vector<int>{1}));
  EXPECT_EQ(default_pass_k(8), (std::vector<int>{1, 8}));
}

TEST(SummaryMetrics, WilsonIntervalMatchesHandValues) {
  // 8/10 at z = 1.96: center (0.8 + z²/20)/(1 + z²/10), half z/(1 + z²/10)·sqrt(0.016 + z²/400).
  Interval a = wilson_interval(8, 10);
  EXPECT_NEAR(a.lo, 0.4901625, 1e-6);
  EXPECT_NEAR(a.hi, 0.9433178, 1e-6);
  Interval z = wilson_interval(0, 10);  // 0/10: [0, z²/(n + z²)]
  EXPECT_NEAR(z.lo, 0.0, 1e-12);
  EXPECT_NEAR(z.hi, 3.8414588 / 13.8414588, 1e-6);
  Interval full = wilson_interval(10, 10);
  EXPECT_NEAR(full.lo, 10.0 / 13.8414588, 1e-6);
  EXPECT_NEAR(full.hi, 1.0, 1e-12);
  Interval half = wilson_interval(50, 100);  // symmetric: 0.5 ± 1.96/(1 + 0.0384146)·0.0509606
  EXPECT_NEAR(half.lo, 0.4038315, 1e-6);
  EXPECT_NEAR(half.hi, 0.5961685, 1e-6);
  Interval none = wilson_interval(0, 0);
  EXPECT_EQ(none.lo, 0.0);
  EXPECT_EQ(none.hi, 1.0);
}

namespace {

Json result(const std::string& id, bool success, Json predicted, Json gold, const std::string& kind) {
  return {{"id", id},           {"benchmark", "Toy"}, {"success", success},           {"kind", kind},
          {"predicted", predicted}, {"gold", gold},     {"code_pass", !predicted.is_null()}};
}

void write_results(const fs::path& out, const std::string& key, const std::vector<Json>& lines) {
  std::string text;
  for (const auto& j : lines) text += j.dump() + "\n";
  fs::create_directories(out / key);
  trex::write_file_atomic(out / key / "results.jsonl", text);
}

}  // namespace

TEST(SummaryMetrics, AbsoluteAndRelativeRulesSideBySide) {
  fs::path out = trex::testing::fresh_temp_dir("trex_summary_rules");
  // gold 1000: pred 1000 (both rules), 1000.05 (rel 5e-5: relative only), 1000.2 (rel 2e-4: neither at 1e-4,
  // relative at 1e-3); gold 0: pred 5e-7 (both: the relative rule keeps the absolute floor), 1e-5 (neither);
  // an ORGEval-like line without gold counts only by its success; a failed run has no prediction.
  write_results(out, "toy",
                {result("a", true, 1000.0, 1000.0, "success"), result("b", false, 1000.05, 1000.0, "wrong_objective"),
                 result("c", false, 1000.2, 1000.0, "wrong_objective"), result("d", true, 5e-7, 0.0, "success"),
                 result("e", false, 1e-5, 0.0, "wrong_objective"), result("f", true, Json(), Json(), "success"),
                 result("g", false, Json(), 3.0, "name_error"), result("a", false, Json(), 1.0, "duplicate_ignored")});
  SummaryOptions o;
  EvalSummary s = summarize({"toy"}, out, o);
  ASSERT_EQ(s.benchmarks.size(), 1u);
  const BenchmarkSummary& b = s.benchmarks[0];
  EXPECT_EQ(b.display, "Toy");
  EXPECT_EQ(b.n, 7);
  EXPECT_EQ(b.successes, 3);
  EXPECT_EQ(b.successes_relative, 4);
  EXPECT_DOUBLE_EQ(b.accuracy, 3.0 / 7.0);
  EXPECT_DOUBLE_EQ(b.accuracy_relative, 4.0 / 7.0);
  EXPECT_EQ(b.code_pass, 5);
  EXPECT_EQ(b.outcomes.at("wrong_objective"), 3);
  EXPECT_EQ(b.outcomes.count("duplicate_ignored"), 0u);
  Interval w = wilson_interval(3, 7);
  EXPECT_DOUBLE_EQ(b.interval.lo, w.lo);
  EXPECT_DOUBLE_EQ(b.interval.hi, w.hi);
  EXPECT_TRUE(b.pass_at_k.empty());

  o.rel_tol = 1e-3;  // recomputed from predicted/gold: c now passes too
  EXPECT_EQ(summarize({"toy"}, out, o).benchmarks[0].successes_relative, 5);
  o.rel_tol = 1e-6;  // never stricter than the absolute rule
  EXPECT_EQ(summarize({"toy"}, out, o).benchmarks[0].successes_relative, 3);

  // summary.md: one column per benchmark, the absolute and the relative row, intervals.
  Json other = result("z", true, 2.0, 2.0, "success");
  other["benchmark"] = "Other";
  write_results(out, "other", {other});
  o.rel_tol = 1e-4;
  EvalSummary two = summarize({"toy", "other"}, out, o);
  const std::string md = summary_markdown(two);
  EXPECT_NE(md.find("| Pass@1 (%) | Toy | Other | Avg |"), std::string::npos) << md;
  EXPECT_NE(md.find("| trex, abs. 1e-6 | 42.86 | 100.00 | 71.43 |"), std::string::npos) << md;
  EXPECT_NE(md.find("| trex, rel. 1e-4 | 57.14 | 100.00 | 78.57 |"), std::string::npos) << md;
  char interval[64];
  std::snprintf(interval, sizeof interval, "[%.1f, %.1f]", 100 * w.lo, 100 * w.hi);
  EXPECT_NE(md.find(interval), std::string::npos) << md;
  Json j = summary_json(two);
  EXPECT_DOUBLE_EQ(j["average_relative"].get<double>(), (4.0 / 7.0 + 1.0) / 2.0);
  // A built-in benchmark without results keeps its column name.
  EXPECT_EQ(summarize({"mamo_complex"}, out, o).benchmarks[0].display, "MAMO-ComplexLP");
  EXPECT_DOUBLE_EQ(j["benchmarks"][0]["interval_95"][0].get<double>(), w.lo);
  EXPECT_EQ(j["rel_tol"].get<double>(), 1e-4);
  fs::remove_all(out);
}

TEST(SummaryMetrics, PassAtKFromSamples) {
  fs::path out = trex::testing::fresh_temp_dir("trex_summary_samples");
  auto sample = [](bool ok, double pred) {
    return Json{{"success", ok}, {"kind", ok ? "success" : "wrong_objective"}, {"predicted", pred}, {"code_pass", true}};
  };
  // item p: 2 of 4 correct, one more within 1e-4 relative; item q: 0 of 4; item r: 4 of 4.
  Json p = result("p", true, 10.0, 10.0, "success");
  p["samples"] = {sample(true, 10.0), sample(false, 10.0005), sample(true, 10.0), sample(false, 11.0)};
  Json q = result("q", false, 1.0, 5.0, "wrong_objective");
  q["samples"] = {sample(false, 1.0), sample(false, 1.0), sample(false, 1.0), sample(false, 1.0)};
  Json r = result("r", true, 7.0, 7.0, "success");
  r["samples"] = {sample(true, 7.0), sample(true, 7.0), sample(true, 7.0), sample(true, 7.0)};
  write_results(out, "toy", {p, q, r});
  SummaryOptions o;
  o.samples = 4;
  o.pass_k = {1, 2, 4};
  EvalSummary s = summarize({"toy"}, out, o);
  const BenchmarkSummary& b = s.benchmarks[0];
  EXPECT_EQ(b.n, 3);
  EXPECT_EQ(b.samples_scored, 12);
  EXPECT_EQ(b.successes, 6);
  EXPECT_DOUBLE_EQ(b.accuracy, (0.5 + 0.0 + 1.0) / 3.0);
  EXPECT_DOUBLE_EQ(b.accuracy_relative, (0.75 + 0.0 + 1.0) / 3.0);
  EXPECT_EQ(b.outcomes.at("wrong_objective"), 6);
  ASSERT_EQ(b.pass_at_k.size(), 3u);
  EXPECT_DOUBLE_EQ(b.pass_at_k[0].value, b.accuracy);
  // pass@2 for p: 1 − C(2,2)/C(4,2) = 5/6; relative (c = 3): 1
  EXPECT_NEAR(b.pass_at_k[1].value, (5.0 / 6.0 + 0.0 + 1.0) / 3.0, 1e-15);
  EXPECT_NEAR(b.pass_at_k[1].value_relative, (1.0 + 0.0 + 1.0) / 3.0, 1e-15);
  EXPECT_NEAR(b.pass_at_k[2].value, 2.0 / 3.0, 1e-15);
  Interval w = wilson_interval(5.0 / 6.0 + 1.0, 3);
  EXPECT_DOUBLE_EQ(b.pass_at_k[1].interval.lo, w.lo);
  const std::string md = summary_markdown(s);
  EXPECT_NE(md.find("Pass@1, 4 samples"), std::string::npos) << md;
  EXPECT_NE(md.find("| Pass@2, abs. 1e-6 | 61.11 | 61.11 |"), std::string::npos) << md;
  EXPECT_NE(md.find("| Pass@4, rel. 1e-4 | 66.67 | 66.67 |"), std::string::npos) << md;
  // A k beyond the samples a result holds names the file and line.
  o.pass_k = {5};
  try {
    summarize({"toy"}, out, o);
    ADD_FAILURE() << "k = 5 > 4 samples must be refused";
  } catch (const trex::Error& e) {
    EXPECT_NE(std::string(e.what()).find("results.jsonl:1"), std::string::npos) << e.what();
  }
  fs::remove_all(out);
}

TEST(SummaryMetrics, EvalSamplesEndToEnd) {
  fs::path dir = trex::testing::fresh_temp_dir("trex_eval_samples");
  trex::write_file_atomic(dir / "caps.jsonl", R"({"id":"a","problem":"Maximise 2x, x <= 4.","answer":8}
{"id":"b","problem":"Maximise 2x, x <= 5000.","answer":10000}
)");
  auto lp = [](double cap) {
    char num[32];
    std::snprintf(num, sizeof num, "%g", cap);
    return "```lp\nMaximize\n obj: 2 x\nSubject To\n cap: x <= " + std::string(num) + "\nEnd\n```\n";
  };
  // a: attempts 0 and 2 right, 1 wrong; b: only attempt 1 exact, attempt 0 within 1e-4 relative (10000.5).
  std::string text;
  for (auto [id, attempt, cap] : std::vector<std::tuple<std::string, int, double>>{
           {"a", 0, 4}, {"a", 1, 3}, {"a", 2, 4}, {"b", 0, 5000.25}, {"b", 1, 5000}, {"b", 2, 4000}})
    text += Json{{"id", id}, {"attempt", attempt}, {"response", lp(cap)}}.dump() + "\n";
  trex::write_file_atomic(dir / "responses.jsonl", text);
  auto eval = [&](const std::string& extra, const std::string& out, int& rc) {
    return trex::testing::run_command(std::string(TREX_BIN_PATH) + " eval --responses " +
                                          (dir / "responses.jsonl").string() + " --benchmarks " +
                                          (dir / "caps.jsonl").string() + " --style lp --json --out " +
                                          (dir / out).string() + " " + extra,
                                      rc);
  };
  int rc = 0;
  std::string log = eval("--samples 3 --pass-k 1,2,3", "out", rc);
  ASSERT_EQ(rc, 0) << log;
  Json s = trex::parse_json_file(dir / "out" / "summary.json");
  const Json& b = s["benchmarks"][0];
  EXPECT_EQ(b["n"], 2);
  EXPECT_EQ(b["samples_scored"], 6);
  EXPECT_EQ(b["successes"], 3);
  EXPECT_NEAR(b["accuracy"].get<double>(), (2.0 / 3.0 + 1.0 / 3.0) / 2.0, 1e-12);
  EXPECT_NEAR(b["accuracy_relative"].get<double>(), (2.0 / 3.0 + 2.0 / 3.0) / 2.0, 1e-12);
  EXPECT_NEAR(b["pass_at_k"]["2"]["absolute"].get<double>(), (1.0 + 2.0 / 3.0) / 2.0, 1e-12);
  EXPECT_NEAR(b["pass_at_k"]["3"]["absolute"].get<double>(), 1.0, 1e-12);
  trex::JsonlReader rd(dir / "out" / "caps" / "results.jsonl");
  int lines = 0;
  while (auto j = rd.next()) {
    ++lines;
    EXPECT_EQ((*j)["samples"].size(), 3u) << j->dump();
  }
  EXPECT_EQ(lines, 2);
  // Resuming with another sample count is refused; --samples with --attempts too.
  log = eval("--samples 2", "out", rc);
  EXPECT_NE(rc, 0);
  EXPECT_NE(log.find("--samples 3"), std::string::npos) << log;
  log = eval("--samples 2 --attempts 2", "out2", rc);
  EXPECT_NE(rc, 0);
  log = eval("--samples 2 --pass-k 3", "out3", rc);
  EXPECT_NE(rc, 0);
  EXPECT_NE(log.find("--pass-k 3"), std::string::npos) << log;
  fs::remove_all(dir);
}
