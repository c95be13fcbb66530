// Answer extraction, replicating the report's harness (OR_BENCHMARKS.md §3) rule for rule, plus the
// native `lp` answer style (an LP-file block) and the modelling API a code answer uses (which executor runs it).
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace trex::oreval {

// Solver targets (NL4OPT, OptiBench, B4O-Feasible): ```python fences, else bare fences (> 50 chars
// preferred), else <python> tags, else the text after the last </think>, else the whole response.
std::string extract_code_solver(std::string_view response);

// B4O-ORGEval: prefers the text after the last </think> / </redacted_reasoning>; applied twice like upstream.
std::string extract_code_orgeval(std::string_view response);

// `lp` answer style: the longest ```lp block; else the longest fenced block that contains an objective
// section (Minimize/Maximize) ; else the span from the last objective keyword to `End` in the text
// after the last </think>. nullopt when nothing LP-like is found.
std::optional<std::string> extract_lp_block(std::string_view response);

// The modelling API of a Python answer, from its import statements (`import M`, `import M.sub as a, N`,
// `from M[.sub] import ...`, at any indentation, `;`-separated, comments ignored): the first of gurobipy, coptpy
// and pulp that it imports picks the executor (gurobipy: trex's gurobipy layer; coptpy: the coptpy layer; pulp:
// Debian's PuLP on CBC). An answer importing none of them but a modelling package trex does not run (pyomo,
// ortools, cvxpy, ...) is `unsupported` with that module; one importing neither is a gurobipy answer, as the
// report's harness makes it (it prepends `import gurobipy as gp`).
struct AnswerApi {
  std::string api;          // "gurobipy", "coptpy" or "pulp"; empty when `unsupported` is set
  std::string unsupported;  // the top-level module of an API trex does not run ("pyomo", "ortools", ...)
  bool explicit_import = false;  // `api` was imported (not the gurobipy default)
  const std::string& name() const { return api.empty() ? unsupported : api; }  // results.jsonl's "api"
};
AnswerApi detect_api(std::string_view code);

// The top-level modules a Python program imports, in order of first appearance (what detect_api reads).
std::vector<std::string> imported_modules(std::string_view code);

// Modelling packages trex recognises but does not run (detect_api's `unsupported`).
const std::vector<std::string>& unsupported_modelling_modules();

std::string trim(std::string_view s);  // Python str.strip() on ASCII whitespace

}  // namespace trex::oreval
