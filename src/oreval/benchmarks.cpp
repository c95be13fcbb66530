// Loaders for the shared benchmark files (see shared/benchmarks/README.md for the schema).
#include "oreval/benchmarks.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <set>

#include "util/error.hpp"

namespace trex::oreval {
namespace fs = std::filesystem;

#ifndef TREX_SOURCE_DIR
#define TREX_SOURCE_DIR "."
#endif

fs::path resolve_benchmarks_dir(const std::string& explicit_dir) {
  std::vector<fs::path> tried;
  if (!explicit_dir.empty()) {
    if (fs::is_directory(explicit_dir)) return fs::absolute(explicit_dir);
    throw Error("benchmark folder not found: " + explicit_dir);
  }
  if (const char* env = std::getenv("TREX_BENCHMARKS"); env && *env) {
    if (fs::is_directory(env)) return fs::absolute(env);
    tried.emplace_back(env);
  }
  fs::path beside = fs::path(TREX_SOURCE_DIR) / ".." / "shared" / "benchmarks";
  if (fs::is_directory(beside)) return fs::canonical(beside);
  tried.push_back(beside);
  std::string msg = "no benchmark folder: pass --data DIR or set TREX_BENCHMARKS (tried";
  for (auto& t : tried) msg += " " + t.string();
  throw Error(msg + ")");
}

const std::vector<BuiltinBenchmark>& builtin_benchmark_table() {
  using K = TargetKind;
  using P = PromptKind;
  // The seven further sets hold their data in the statement, like NL4OPT/OptiBench: the Chat template.
  static const std::vector<BuiltinBenchmark> table = {
      {"nl4opt", "NL4OPT", "nl4opt.jsonl", K::Objective, P::Chat},
      {"optibench", "OptiBench", "optibench.jsonl", K::Objective, P::Chat},
      {"b4o_feasible", "B4O-Feasible", "bench4opt_feasible.jsonl", K::Objective, P::B4oData},
      {"b4o_orgeval", "B4O-ORGEval", "bench4opt_orgeval.jsonl", K::Structure, P::B4oLp},
      {"industryor", "IndustryOR", "industryor.jsonl", K::Objective, P::Chat},
      {"mamo_easy", "MAMO-EasyLP", "mamo_easy.jsonl", K::Objective, P::Chat},
      {"mamo_complex", "MAMO-ComplexLP", "mamo_complex.jsonl", K::Objective, P::Chat},
      {"complexor", "ComplexOR", "complexor.jsonl", K::Objective, P::Chat},
      {"logior", "LogiOR", "logior.jsonl", K::Objective, P::Chat},
      {"nlp4lp", "NLP4LP", "nlp4lp.jsonl", K::Objective, P::Chat},
      {"optmath_bench", "OptMATH-Bench", "optmath_bench.jsonl", K::Objective, P::Chat},
  };
  return table;
}

const std::vector<std::string>& builtin_benchmarks() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v;
    for (const auto& b : builtin_benchmark_table()) v.emplace_back(b.key);
    return v;
  }();
  return names;
}

const std::vector<std::string>& report_benchmarks() {
  static const std::vector<std::string> names = {"nl4opt", "optibench", "b4o_feasible", "b4o_orgeval"};
  return names;
}

std::vector<std::string> expand_benchmark_selection(const std::vector<std::string>& names) {
  std::vector<std::string> out;
  std::set<std::string> seen;
  auto add = [&](const std::string& n) {
    if (seen.insert(n).second) out.push_back(n);
  };
  for (const auto& n : names) {
    if (n == "all")
      for (const auto& k : builtin_benchmarks()) add(k);
    else if (n == "report")
      for (const auto& k : report_benchmarks()) add(k);
    else
      add(n);
  }
  return out;
}

namespace {

std::optional<double> read_answer(const Json& rec, const SourceLocation& where, bool required) {
  auto it = rec.find("answer");
  if (it == rec.end() || it->is_null()) {
    if (required) throw Error(where, "field 'answer' missing or null");
    return std::nullopt;
  }
  if (it->is_boolean()) throw Error(where, "field 'answer' must be a number, not " + it->dump());
  double v = 0.0;
  if (it->is_number()) {
    v = it->get<double>();
  } else if (it->is_string()) {
    const std::string& s = it->get_ref<const std::string&>();
    char* end = nullptr;
    v = std::strtod(s.c_str(), &end);
    if (end == s.c_str() || *end != '\0') throw Error(where, "field 'answer' is not a number: " + s);
  } else {
    throw Error(where, "field 'answer' must be a number, not " + it->dump());
  }
  // A gold of nan or inf would make every answer fail (or succeed) for no reason of its own.
  if (!std::isfinite(v)) throw Error(where, "field 'answer' is not a finite number: " + it->dump());
  return v;
}

Benchmark load_jsonl(const fs::path& file, const fs::path& base, Benchmark b) {
  if (!fs::exists(file)) throw Error("benchmark file not found: " + file.string());
  JsonlReader reader(file);
  std::set<std::string> seen;
  while (auto rec = reader.next()) {
    SourceLocation where = reader.where();
    BenchItem item;
    item.id = require_string(*rec, "id", where);
    if (!seen.insert(item.id).second) throw Error(where, "duplicate id '" + item.id + "'");
    item.problem = require_string(*rec, "problem", where);
    item.answer = read_answer(*rec, where, b.kind == TargetKind::Objective);
    if (auto it = rec->find("lp_file"); it != rec->end() && it->is_string()) {
      fs::path p = it->get<std::string>();
      item.lp_file = p.is_absolute() ? p : base / p;
    }
    if (b.kind == TargetKind::Structure && item.lp_file.empty())
      throw Error(where, "field 'lp_file' is required for a structure benchmark");
    if (auto it = rec->find("data"); it != rec->end()) item.data = *it;
    if (auto it = rec->find("data_path"); it != rec->end() && it->is_string()) item.data_path = it->get<std::string>();
    if (auto it = rec->find("reference_code"); it != rec->end() && it->is_string()) item.reference_code = it->get<std::string>();
    if (auto it = rec->find("wp_type"); it != rec->end() && it->is_string()) item.wp_type = it->get<std::string>();
    item.index = b.items.size();
    b.items.push_back(std::move(item));
  }
  return b;
}

}  // namespace

Benchmark load_benchmark(const std::string& key_or_path, const fs::path& dir) {
  Benchmark b;
  b.key = key_or_path;
  for (const auto& builtin : builtin_benchmark_table()) {
    if (key_or_path != builtin.key) continue;
    b.display = builtin.display;
    b.kind = builtin.kind;
    b.prompt = builtin.prompt;
    return load_jsonl(dir / builtin.file, dir, b);
  }
  fs::path file = key_or_path;
  if (file.extension() != ".jsonl" && !fs::exists(file)) {
    std::string known;
    for (const auto& k : builtin_benchmarks()) known += (known.empty() ? "" : ", ") + k;
    throw Error("unknown benchmark '" + key_or_path + "' (built-in: " + known +
                "; `all` for every one, `report` for the report's four; or a .jsonl file)");
  }
  b.key = file.stem().string();
  b.display = b.key;
  b = load_jsonl(file, fs::absolute(file).parent_path(), b);
  // A generic file whose every item carries its instance data follows the data-file protocol (B4O-Feasible's):
  // the data is the answer's data.json. Otherwise data.json holds the question (the NL4OPT/OptiBench protocol).
  const bool all_data = !b.items.empty() && std::all_of(b.items.begin(), b.items.end(),
                                                        [](const BenchItem& it) { return !it.data.is_null(); });
  if (all_data && b.kind == TargetKind::Objective) b.prompt = PromptKind::B4oData;
  return b;
}

void slice_items(Benchmark& b, std::size_t start, std::size_t end, const std::vector<std::string>& ids) {
  std::vector<BenchItem> kept;
  std::set<std::string> want(ids.begin(), ids.end());
  for (std::size_t i = start; i < std::min(end, b.items.size()); ++i)
    if (want.empty() || want.count(b.items[i].id)) kept.push_back(std::move(b.items[i]));
  b.items = std::move(kept);
}

}  // namespace trex::oreval
