// Answer extraction, replicating the report's harness (OR_BENCHMARKS.md §3) rule for rule, plus the
// native `lp` answer style (an LP-file block).
#pragma once
#include <optional>
#include <string>
#include <string_view>

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

std::string trim(std::string_view s);  // Python str.strip() on ASCII whitespace

}  // namespace trex::oreval
