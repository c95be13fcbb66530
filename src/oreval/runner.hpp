// `trex eval` driver: for each benchmark item, get a response (model server, a responses file, or the
// benchmark's own reference solution), score it, append the result to results.jsonl (resumable: an
// interrupted run continues where it stopped, no item lost or scored twice), then write summary.json
// and summary.md laid out like the report's table.
#pragma once
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "oreval/client.hpp"
#include "oreval/score.hpp"

namespace trex::oreval {

enum class ResponseSource { Model, ResponsesFile, Oracle };

struct EvalOptions {
  std::vector<std::string> benchmarks;  // keys or generic .jsonl paths
  std::filesystem::path data_dir;       // resolved benchmark folder
  std::filesystem::path out_dir;
  AnswerStyle style = AnswerStyle::Report;
  ResponseSource source = ResponseSource::Model;
  std::optional<ClientConfig> client;   // source == Model
  SamplingParams sampling;
  std::filesystem::path responses_file; // source == ResponsesFile
  int attempts = 1;                     // acc@k: k attempts with seeds seed, seed+1, ...
  int concurrency = 16;                 // parallel items (model requests and scoring)
  std::size_t start = 0, end = SIZE_MAX;
  std::vector<std::string> ids;
  ExecConfig exec;
  bool progress = true;
};

struct BenchmarkSummary {
  std::string key, display;
  int n = 0, successes = 0, successes_relative = 0, code_pass = 0;
  double accuracy = 0.0, accuracy_relative = 0.0, code_pass_rate = 0.0;
  std::map<std::string, int> outcomes;  // kind -> count
};

struct EvalSummary {
  std::vector<BenchmarkSummary> benchmarks;
  double average = 0.0;  // mean accuracy over benchmarks (the report's Avg column)
  int attempts = 1;
  double seconds = 0.0;
  double items_per_second = 0.0;
};

// Runs everything; throws trex::Error on bad options or unreadable inputs (nothing half-written).
EvalSummary run_eval(const EvalOptions& options);

// Reads results.jsonl files in out_dir and recomputes the summary (also used after run_eval).
EvalSummary summarize(const std::vector<std::string>& benchmark_keys, const std::filesystem::path& out_dir,
                      int attempts);

std::string summary_markdown(const EvalSummary& s);
Json summary_json(const EvalSummary& s);

}  // namespace trex::oreval
