// Problem rendering in the three representations (report §8): DP (all data in the prose), DT (data
// in Markdown tables with header separator rows) and DPS (data in attached files shown as fenced
// `### data.json` blocks). Phrasing varies per draw; numbers are formatted for prose.
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "ordata/instance.hpp"
#include "util/rng.hpp"

namespace trex::ordata {

struct RenderedProblem {
  std::string text;  // the problem statement (story, data, rules, goal)
  Json data;         // data.json of the instance
  std::vector<std::pair<std::string, std::string>> files;  // DPS attachments: name -> content
};

RenderedProblem render_problem(const Instance& inst, Mode mode, Rng& rng);

// data.json text with one top-level key per line (compact values), as shown and written for DPS.
std::string data_json_text(const Json& data);

// "- `key`: description (unit)" for every set and parameter: the data dictionary of data.json.
std::string data_key_list(const Instance& inst);

}  // namespace trex::ordata
