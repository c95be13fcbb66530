// Benchmark registry and loaders: the report's four targets (NL4OPT, OptiBench, B4O-Feasible,
// B4O-ORGEval) and seven more public sets (IndustryOR, MAMO EasyLP/ComplexLP, ComplexOR, LogiOR, NLP4LP,
// OptMATH-Bench; statements with their data, objective targets) read from the shared benchmark folder, plus a
// generic JSONL format for users' own sets (`id`, `problem`, `answer`, optional `lp_file`, `data`).
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
  std::string key;      // a built-in key (builtin_benchmarks()), or the generic file's stem
  std::string display;  // the summary's column name: NL4OPT, OptiBench, B4O-Feasible, B4O-ORGEval, IndustryOR, ...
  TargetKind kind = TargetKind::Objective;
  PromptKind prompt = PromptKind::Chat;
  std::vector<BenchItem> items;
};

// The benchmark folder: explicit path, else $TREX_BENCHMARKS, else ../shared/benchmarks next to the
// source tree. Throws trex::Error naming what was tried when none exists.
std::filesystem::path resolve_benchmarks_dir(const std::string& explicit_dir);

// One built-in benchmark: its key, column name, file in the benchmark folder, target and prompt.
struct BuiltinBenchmark {
  const char* key;
  const char* display;
  const char* file;
  TargetKind kind;
  PromptKind prompt;
};

// The built-in benchmarks: the report's four in its column order, then the seven further public sets.
const std::vector<BuiltinBenchmark>& builtin_benchmark_table();

// Their keys, in that order.
const std::vector<std::string>& builtin_benchmarks();

// The report's four keys (nl4opt, optibench, b4o_feasible, b4o_orgeval): `trex eval`'s default.
const std::vector<std::string>& report_benchmarks();

// Expands a --benchmarks list: `all` is every built-in benchmark, `report` the report's four; other entries
// (keys, .jsonl paths) are kept; a repeated entry is kept once, at its first place.
std::vector<std::string> expand_benchmark_selection(const std::vector<std::string>& names);

// Loads a built-in benchmark by key (from `dir`), or a generic JSONL file when `key_or_path` names a
// file. Errors name file:line.
Benchmark load_benchmark(const std::string& key_or_path, const std::filesystem::path& dir);

// Keeps items [start, end) and, when ids is non-empty, only those ids.
void slice_items(Benchmark& b, std::size_t start, std::size_t end, const std::vector<std::string>& ids);

}  // namespace trex::oreval
