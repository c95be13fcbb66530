// Canonical names of the ordata vocabularies.
#include "ordata/vocab.hpp"

namespace trex::ordata {

namespace {
constexpr std::array<const char*, kNumStructures> kStructureNames = {
    "assignment", "scheduling", "routing", "transportation", "blending",
    "capacity_planning", "facility_location", "production_planning", "portfolio", "generic_lp_mip",
    "knapsack", "set_cover", "network_flow", "diet", "unit_commitment", "revenue_management", "bin_packing",
    "job_shop", "dispersion", "supply_chain", "marketing",
    "agriculture", "deployment", "rostering",
    "routing_flow", "network_design", "location_allocation"};
constexpr std::array<const char*, kNumModes> kModeNames = {"DP", "DT", "DPS"};
constexpr std::array<const char*, kNumDifficulties> kDifficultyNames = {"small", "medium", "large", "industrial"};
constexpr std::array<const char*, kNumTasks> kTaskNames = {"full_model", "code_only", "lp_structure", "repair"};

template <typename E, size_t N>
bool parse_name(std::string_view name, const std::array<const char*, N>& names, E& out) {
  for (size_t i = 0; i < N; ++i)
    if (name == names[i]) {
      out = E(i);
      return true;
    }
  return false;
}
}  // namespace

const char* to_string(Structure s) { return kStructureNames[size_t(s)]; }
const char* to_string(Mode m) { return kModeNames[size_t(m)]; }
const char* to_string(Difficulty d) { return kDifficultyNames[size_t(d)]; }
const char* to_string(Task t) { return kTaskNames[size_t(t)]; }

const char* data_interface(Mode m) {
  switch (m) {
    case Mode::DP: return "inline_text";
    case Mode::DT: return "markdown_table";
    case Mode::DPS: return "attached_files";
  }
  return "inline_text";
}

const char* answer_style(Task t) {
  switch (t) {
    case Task::FullModel: return "math_model_with_code";
    case Task::CodeOnly: return "code_only";
    case Task::LpStructure: return "lp";
    case Task::Repair: return "diagnosis_with_lp";
  }
  return "lp";
}

bool parse(std::string_view name, Structure& out) { return parse_name(name, kStructureNames, out); }
bool parse(std::string_view name, Mode& out) { return parse_name(name, kModeNames, out); }
bool parse(std::string_view name, Difficulty& out) { return parse_name(name, kDifficultyNames, out); }
bool parse(std::string_view name, Task& out) { return parse_name(name, kTaskNames, out); }

}  // namespace trex::ordata
