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
#include "oreval/summary.hpp"

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
  int samples = 1;                      // Pass@k: n responses scored per item, every one (seeds seed, seed+1, ...)
  std::vector<int> pass_k;              // the k reported with samples > 1 (default 1 and samples)
  double rel_tol = 1e-4;                // the relative rule beside the report's absolute 1e-6
  int concurrency = 16;                 // parallel items (model requests and scoring)
  std::size_t start = 0, end = SIZE_MAX;
  std::vector<std::string> ids;
  ExecConfig exec;
  bool progress = true;
};

// Runs everything; throws trex::Error on bad options or unreadable inputs (nothing half-written).
EvalSummary run_eval(const EvalOptions& options);

// summarize, summary_markdown, summary_json: oreval/summary.hpp.

}  // namespace trex::oreval
