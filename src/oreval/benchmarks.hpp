// Benchmark registry and loaders: the report's four targets (NL4OPT, OptiBench, B4O-Feasible,
// B4O-ORGEval) read from the shared benchmark folder, plus a generic JSONL format for users' own
// sets (`id`, `problem`, `answer`, optional `lp_file`, `data`).
#pragma once
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "util/jsonl.hpp"

namespace trex::oreval {

enum class TargetKind {
  Objective,  // solve the answer's model, compare the optimal objective with the gold value
  Structure,  // write an LP file, compare its structure with the reference LP (ORGEval)
};

enum class PromptKind {
  Chat,       // NL4OPT/OptiBench template: <think>/<model>/<python> answer
  B4oData,    // B4O-Feasible template: code reading data.json
  B4oLp,      // B4O-ORGEval template: code writing an .lp file (one user message)
};

struct BenchItem {
  std::string id;
  std::string problem;
  std::optional<double> answer;        // gold objective (Objective targets)
  std::filesystem::path lp_file;       // reference LP (absolute), empty if none
  Json data;                           // instance data (data.json), null if none
  std::string data_path;               // the path string the B4O prompt shows
  std::string wp_type;                 // "" or "_concise" (B4O)
  std::string reference_code;          // the benchmark's own gurobipy solution, when it ships one
  std::size_t index = 0;               // position in the file
};

struct Benchmark {
  std::string key;      // nl4opt, optibench, b4o_feasible, b4o_orgeval, or the generic file's stem
  std::string display;  // the report's column name: NL4OPT, OptiBench, B4O-Feasible, B4O-ORGEval
  TargetKind kind = TargetKind::Objective;
  PromptKind prompt = PromptKind::Chat;
  std::vector<BenchItem> items;
};

// The benchmark folder: explicit path, else $TREX_BENCHMARKS, else ../shared/benchmarks next to the
// source tree. Throws trex::Error naming what was tried when none exists.
std::filesystem::path resolve_benchmarks_dir(const std::string& explicit_dir);

// Names of the built-in benchmarks, in the report's column order.
const std::vector<std::string>& builtin_benchmarks();

// Loads a built-in benchmark by key (from `dir`), or a generic JSONL file when `key_or_path` names a
// file. Errors name file:line.
Benchmark load_benchmark(const std::string& key_or_path, const std::filesystem::path& dir);

// Keeps items [start, end) and, when ids is non-empty, only those ids.
void slice_items(Benchmark& b, std::size_t start, std::size_t end, const std::vector<std::string>& ids);

}  // namespace trex::oreval
