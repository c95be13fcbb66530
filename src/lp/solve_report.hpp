// The JSON record of one solve, as `trex solve --json` prints it and the eval harness's solve channel answers:
// file, solver, status, objective (null unless optimal), model size, times, message, and optionally the values.
#pragma once
#include <string>

#include <nlohmann/json.hpp>

#include "lp/model.hpp"
#include "lp/solver.hpp"

namespace trex::lp {

nlohmann::ordered_json solve_report_json(const std::string& file, const Model& model, Backend backend,
                                         const SolveResult& r, double read_seconds, bool with_values);

}  // namespace trex::lp
