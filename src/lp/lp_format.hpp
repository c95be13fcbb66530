// LP-file (CPLEX/Gurobi dialect) reader and writer. The reader is our own: it accepts everything
// Gurobi writes (see docs/lp-format.md) and refuses what it does not support with file:line:col.
// The writer emits Gurobi-style LP that reads back to the same model.
#pragma once
#include <filesystem>
#include <string>
#include <string_view>

#include "lp/model.hpp"

namespace trex::lp {

// Throws trex::Error naming source:line:column on any syntax or semantic error.
Model read_lp_file(const std::filesystem::path& path);
Model read_lp_string(std::string_view text, const std::string& source_name = "<string>");

std::string write_lp_string(const Model& model);
void write_lp_file(const Model& model, const std::filesystem::path& path);  // atomic

}  // namespace trex::lp
