// The categorical vocabularies of the OR data engine (report §8): problem structures, problem
// representations (modes), difficulties, task categories, answer styles and data interfaces, with
// their canonical names as they appear in the exported metadata.
#pragma once
#include <array>
#include <string>
#include <string_view>

namespace trex::ordata {

enum class Structure {
  Assignment, Scheduling, Routing, Transportation, Blending,
  CapacityPlanning, FacilityLocation, ProductionPlanning, Portfolio, GenericLpMip,
  // Added with issue 26 (breadth); not in the default mix, selected with --mix structure=NAME:W or all:W.
  Knapsack, SetCover, NetworkFlow, Diet, UnitCommitment, RevenueManagement, BinPacking, JobShop, Dispersion,
  SupplyChain, Marketing,
  Agriculture, Deployment, Rostering,
  RoutingFlow, NetworkDesign, LocationAllocation
};
constexpr int kNumStructures = 27;
// The first ten structures (report §7/§8) form the default mix of `trex synth` and hence `trex run`'s data.
constexpr int kNumClassicStructures = 10;

enum class Mode { DP, DT, DPS };  // data in prose / Markdown tables / attached files
constexpr int kNumModes = 3;

enum class Difficulty { Small, Medium, Large, Industrial };
constexpr int kNumDifficulties = 4;

// The four task categories: full modelling, code only, LP structure (no solve), repair.
enum class Task { FullModel, CodeOnly, LpStructure, Repair };
constexpr int kNumTasks = 4;

const char* to_string(Structure s);
const char* to_string(Mode m);
const char* to_string(Difficulty d);
const char* to_string(Task t);
const char* data_interface(Mode m);  // inline_text / markdown_table / attached_files
const char* answer_style(Task t);    // math_model_with_code / code_only / lp / diagnosis_with_lp

// Parsing of the canonical names; false when the name is unknown.
bool parse(std::string_view name, Structure& out);
bool parse(std::string_view name, Mode& out);
bool parse(std::string_view name, Difficulty& out);
bool parse(std::string_view name, Task& out);

}  // namespace trex::ordata
