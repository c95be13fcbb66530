// Summaries of `trex eval` results: per benchmark, accuracy under the report's absolute rule (|pred − gold| ≤
// 1e-6) and under a relative tolerance side by side, Pass@k from n samples per item (the unbiased estimator of
// Chen et al. 2021), 95 % Wilson score intervals, code-pass rate and outcome counts; written as summary.json and
// summary.md (laid out like the report's table).
#pragma once
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "util/jsonl.hpp"

namespace trex::oreval {

// Unbiased pass@k from n samples of which c are correct: 1 − C(n−c, k) / C(n, k) (Chen et al. 2021, "Evaluating
// Large Language Models Trained on Code", computed as their stable product). Requires 0 ≤ c ≤ n and 1 ≤ k ≤ n.
double pass_at_k(int n, int c, int k);

struct Interval {
  double lo = 0.0, hi = 0.0;
};

// Wilson score interval for a proportion: `successes` (may be fractional: a sum of per-item estimates) out of n
// units, at the two-sided normal quantile z (1.959963984540054 for 95 %). n = 0 gives [0, 1].
Interval wilson_interval(double successes, int n, double z = 1.959963984540054);

struct RateAtK {
  int k = 1;
  double value = 0.0, value_relative = 0.0;  // mean over items of the per-item estimate (absolute, relative rule)
  Interval interval, interval_relative;      // 95 % Wilson on the items
};

struct BenchmarkSummary {
  std::string key, display;
  int n = 0;                 // items
  int samples_scored = 0;    // scored responses (n × samples)
  int successes = 0, successes_relative = 0, code_pass = 0;  // correct / code-pass responses (all samples)
  double accuracy = 0.0, accuracy_relative = 0.0, code_pass_rate = 0.0;  // Pass@1 (or acc@k) and rates
  Interval interval, interval_relative;  // 95 % Wilson intervals of accuracy and accuracy_relative
  std::vector<RateAtK> pass_at_k;        // --samples: one entry per k of SummaryOptions::pass_k
  std::map<std::string, int> outcomes;   // kind -> count (over all samples)
};

struct SummaryOptions {
  int attempts = 1;         // acc@k with sequential attempts (the item succeeds if any attempt does)
  int samples = 1;          // responses scored per item (Pass@k)
  std::vector<int> pass_k;  // the k reported with samples > 1 (each ≤ samples)
  double rel_tol = 1e-4;    // relative rule: |pred − gold| ≤ max(1e-6, rel_tol·|gold|)
};

struct EvalSummary {
  std::vector<BenchmarkSummary> benchmarks;
  double average = 0.0;           // mean accuracy over benchmarks (the report's Avg column)
  double average_relative = 0.0;  // the same under the relative rule
  std::map<int, std::pair<double, double>> average_at_k;  // k -> (absolute, relative) means of pass@k
  SummaryOptions options;
  double seconds = 0.0;
  double items_per_second = 0.0;
};

// The k list reported for `samples` samples when none is given: 1 and samples.
std::vector<int> default_pass_k(int samples);

// Reads out_dir/<key>/results.jsonl for every key and computes the summary. The relative rule is recomputed from
// each result's predicted and gold values, so any --rel-tol applies to results already on disk. Throws
// trex::Error naming file:line for a result that holds fewer samples than a requested k.
EvalSummary summarize(const std::vector<std::string>& benchmark_keys, const std::filesystem::path& out_dir,
                      const SummaryOptions& options);

std::string summary_markdown(const EvalSummary& s);
Json summary_json(const EvalSummary& s);

}  // namespace trex::oreval
