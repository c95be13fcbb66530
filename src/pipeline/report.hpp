// The `trex run` report: report.md and a self-contained report.html with the route x test-bucket Pass@1
// table (the report's numbers quoted beside ours as context), how far each route's answers got, loss
// curves, per-stage throughput and MFU, expert-load balance, and the data manifest summary. Every number
// printed is computed from a results file and listed in report_numbers.json with its source, so a test can
// trace each one.
#pragma once
#include <filesystem>
#include <string>
#include <vector>

#include "util/jsonl.hpp"

namespace trex::pipeline {

struct RouteResults {
  std::string key;                      // base, sft_only, cpt_sft
  std::string label;                    // "Base (random init)", ...
  std::filesystem::path results_jsonl;  // trex eval's per-item results
  std::vector<std::filesystem::path> metrics_jsonl;  // training logs (stages in order), may be empty
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
};

struct BucketScore {
  int n = 0, successes = 0;
  double pass1() const { return n ? 100.0 * successes / n : 0.0; }
};

// Pass@1 per bucket ("small", "medium", ..., "all") from results.jsonl joined with test.jsonl.
std::vector<std::pair<std::string, BucketScore>> bucket_scores(const std::filesystem::path& results_jsonl,
                                                               const std::filesystem::path& test_jsonl);

// How far a route's answers got (results.jsonl, one record per item): an answer block was extracted; it reached a
// solve (the LP reader accepted it, or the program ran to the solver's status); the solve was optimal; its value
// lies within 1 % of the gold; and the 1e-6 rule that Pass@1 counts. Each count includes the next.
struct AnswerFunnel {
  int n = 0, answered = 0, solved = 0, optimal = 0, near = 0, successes = 0;
};
AnswerFunnel answer_funnel(const std::filesystem::path& results_jsonl);

// Writes report.md, report.html, report_numbers.json and the SVG figures into run_dir.
void write_report(const ReportInputs& in);

}  // namespace trex::pipeline
