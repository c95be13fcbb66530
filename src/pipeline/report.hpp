// The `trex run` report: report.md and a self-contained report.html with the route x test-bucket Pass@1
// table (the report's numbers quoted beside ours as context), how far each route's answers got, loss
// curves, per-stage throughput and MFU, expert-load balance, and the data manifest summary. Every number
// printed is computed from a results file and listed in report_numbers.json with its source, so a test can
// trace each one.
#pragma once
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "util/jsonl.hpp"

namespace trex::pipeline {

struct RouteResults {
  std::string key;                      // base, sft_only, cpt_sft
  std::string label;                    // "Base (random init)", ...
  std::filesystem::path results_jsonl;  // trex eval's per-item results
  std::vector<std::filesystem::path> metrics_jsonl;  // training logs (stages in order), may be empty
  std::filesystem::path responses_jsonl = {};        // the answers as the model wrote them (id, response)
  std::filesystem::path b4o_results_jsonl = {};      // the B4O-Feasible slice's results (empty: not scored)
};

struct ReportInputs {
  std::filesystem::path run_dir;
  std::filesystem::path test_jsonl;     // synth's held-out set (metadata.difficulty per id)
  std::filesystem::path manifest_json;  // synth's manifest
  std::filesystem::path run_json;       // stage records
  std::vector<RouteResults> routes;
  std::string preset;
  std::string answer_style = "lp";  // "lp" or "code" (RunOptions::answer_style)
  std::string matmul = "fp32";       // the trainers' matrix products as run: "fp32" or "bf16"
  // The B4O-Feasible slice: how many items (the benchmark file's first, in file order) and, when it was not
  // scored, why (e.g. no benchmark folder).
  int b4o_items = 0;
  std::string b4o_skipped;
};

struct BucketScore {
  int n = 0, successes = 0;
  double pass1() const { return n ? 100.0 * successes / n : 0.0; }
};

// Pass@1 per bucket ("small", "medium", ..., "all") from results.jsonl joined with test.jsonl. By difficulty, or
// with by_family = true by whether the item's structure was held out of training ("held-out families", "trained
// families"; synth --test-mix marks them metadata.held_out_structure).
std::vector<std::pair<std::string, BucketScore>> bucket_scores(const std::filesystem::path& results_jsonl,
                                                               const std::filesystem::path& test_jsonl, bool by_family = false);

// How far a route's answers got (results.jsonl, one record per item): an answer block was extracted; it reached a
// solve (the LP reader accepted it, or the program ran to the solver's status); the solve was optimal; its value
// lies within 1 % of the gold; and the 1e-6 rule that Pass@1 counts. Each count includes the next.
struct AnswerFunnel {
  int n = 0, answered = 0, solved = 0, optimal = 0, near = 0, successes = 0;
};
AnswerFunnel answer_funnel(const std::filesystem::path& results_jsonl);

// CPT -> SFT minus SFT only, paired over the same items: the items both results files scored (ids in `a`'s
// order), the Pass@1 difference in points, a paired bootstrap percentile interval (resample the items with
// replacement `resamples` times from a fixed seed; the 2.5th and 97.5th percentiles of the difference) and the
// exact two-sided McNemar test on the items where the routes disagree.
struct PairedDifference {
  int n = 0, a_successes = 0, b_successes = 0;
  int only_a = 0, only_b = 0;  // discordant items: a right and b wrong, and the other way round
  double diff = 0.0;           // 100 * (a_successes - b_successes) / n
  double lo = 0.0, hi = 0.0;   // the 95 % interval, points
  double mcnemar_p = 1.0;      // exact binomial, two-sided, on only_a vs only_b
  int resamples = 0;
  uint64_t seed = 0;
};
PairedDifference paired_difference(const std::filesystem::path& a_results_jsonl,
                                   const std::filesystem::path& b_results_jsonl, int resamples = 10000,
                                   uint64_t seed = 1234);
double mcnemar_exact_p(int only_a, int only_b);

// One answer as the model wrote it: the first item of `order_jsonl` (test.jsonl) whose result has the
// wanted success, with its result record and the response text from `responses_jsonl`.
struct AnswerExample {
  std::string id, response;
  Json result;
};
std::optional<AnswerExample> pick_example(const std::filesystem::path& results_jsonl,
                                          const std::filesystem::path& responses_jsonl,
                                          const std::filesystem::path& order_jsonl, bool success);
// An answer as the report prints it: its first lines, at most `max_lines` of them and `max_chars` characters
// (a prefix of the response), and how much was left out.
struct ShownText {
  std::string text;
  std::size_t omitted_chars = 0;
  int64_t omitted_lines = 0;  // lines after the cut (a partial last line counts)
};
ShownText truncate_for_report(const std::string& response, int max_lines = 60, std::size_t max_chars = 2400);

// Writes report.md, report.html, report_numbers.json and the SVG figures into run_dir.
void write_report(const ReportInputs& in);

}  // namespace trex::pipeline
